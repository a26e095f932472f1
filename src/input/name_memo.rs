//! Normalised names remembered across the inputs of one run (`report --each`, issue 24).
//!
//! A fleet's profiles name the same functions over and over: every profile of a service has
//! its binary's names. Normalising a Java, Go or C++ name ([`names::normalize_symbol`]) runs
//! each normaliser's checks, some 3,000 instructions a name; looking it up costs a hash and a
//! compare. The memo is shared by the workers of a run, read under one lock per input and
//! written once per input with what was new, and bounded: past [`NameMemo::CAPACITY`] names
//! new ones are normalised each time, so memory stays flat however many inputs a run reads.

use crate::names;
use compact_str::CompactString;
use rustc_hash::FxHashMap;
use std::sync::RwLock;

#[derive(Default)]
pub struct NameMemo {
    normalized: RwLock<FxHashMap<Box<str>, CompactString>>,
}

impl std::fmt::Debug for NameMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let len = self.normalized.read().map_or(0, |names| names.len());
        write!(f, "NameMemo({len} names)")
    }
}

impl NameMemo {
    /// Names remembered at most (some 100 bytes each with the table: about 25 MB).
    pub const CAPACITY: usize = 1 << 18;

    /// [`names::normalize_symbol`] of each of `raws`, in order: remembered names looked up,
    /// the others normalised and remembered while there is room.
    pub fn normalize_all(&self, raws: &[&str]) -> Vec<CompactString> {
        let mut new: Vec<usize> = Vec::new();
        let mut out: Vec<CompactString> = {
            // a poisoned lock only means another input's reader panicked while holding it;
            // the names in it are whole (inserts do not unwind midway), so they are used
            let known = self.normalized.read().unwrap_or_else(|e| e.into_inner());
            raws.iter()
                .enumerate()
                .map(|(i, raw)| match known.get(*raw) {
                    Some(name) => name.clone(),
                    None => {
                        new.push(i);
                        CompactString::default()
                    }
                })
                .collect()
        };
        for &i in &new {
            out[i] = names::normalize_symbol(raws[i]).into();
        }
        if !new.is_empty() {
            let mut known = self.normalized.write().unwrap_or_else(|e| e.into_inner());
            let room = Self::CAPACITY.saturating_sub(known.len());
            for &i in new.iter().take(room) {
                known.insert(raws[i].into(), out[i].clone());
            }
        }
        out
    }

    /// How many names are remembered.
    pub fn len(&self) -> usize {
        self.normalized.read().map_or(0, |names| names.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gives_what_normalize_symbol_gives_and_remembers_each_name_once() {
        let memo = NameMemo::default();
        let raws = [
            "_ZN3idx5Index3addEv",
            "example.com/svc/store.(*Cache).Get",
            "Lshop/Server;.handle",
            "plain_c_function",
            "_ZN3idx5Index3addEv",
        ];
        let want: Vec<String> = raws
            .iter()
            .map(|r| names::normalize_symbol(r).into_owned())
            .collect();
        for _ in 0..2 {
            let got: Vec<String> = memo
                .normalize_all(&raws)
                .into_iter()
                .map(String::from)
                .collect();
            assert_eq!(got, want);
        }
        // the repeated raw name is one entry
        assert_eq!(memo.len(), 4);
        assert_eq!(want[0], "idx::Index::add");
    }
}

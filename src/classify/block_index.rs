//! The owner blocks compiled for lookup: which block is the first to match a frame, in time
//! that does not grow with the number of rules for the common matchers.
//!
//! A preset set holds a few hundred prefixes and dozens of regexes; trying them block by block
//! cost about a microsecond per distinct frame, which a profile of a million distinct frames
//! pays a million times (issue 24). Here every block's prefixes become one anchored
//! leftmost-first automaton (its first-listed match is the lowest block's), the regexes one
//! [`RegexSet`], the crates one map and the kinds one table; module and file globs, few and
//! matched on short texts, are tried in block order only up to the best block found so far.
//! `all` entries are checked the same way. Which matcher of the winning block decided is
//! asked of that block alone ([`super::probe::Probe::block_match`]), for `explain`.

use super::glob::Glob;
use super::match_key;
use super::probe::Probe;
use super::rules::Matchers;
use crate::model::{Frame, FrameKind};
use aho_corasick::{AhoCorasick, Anchored, Input, MatchKind, StartKind};
use regex::RegexSet;
use rustc_hash::FxHashMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Lookups answered by trying blocks in order before the index is compiled: compiling the
/// presets' automaton and regex set costs about as much as trying them on a few thousand
/// frames, which is more than a small profile has (a 50 k-instruction report would take
/// 60 M more); past this, every further frame pays it back.
pub const LOOKUPS_BEFORE_INDEX: usize = 4096;

/// A [`BlockIndex`] compiled on the [`LOOKUPS_BEFORE_INDEX`]-th lookup, once, shared by the
/// threads and the clones of a rule set.
#[derive(Debug, Default)]
pub struct LazyBlockIndex {
    lookups: AtomicUsize,
    index: OnceLock<Option<BlockIndex>>,
}

impl LazyBlockIndex {
    /// The index, if enough lookups have asked for it; `compile` makes it.
    pub fn get(&self, compile: impl FnOnce() -> Option<BlockIndex>) -> Option<&BlockIndex> {
        if let Some(index) = self.index.get() {
            return index.as_ref();
        }
        if self.lookups.fetch_add(1, Ordering::Relaxed) < LOOKUPS_BEFORE_INDEX {
            return None;
        }
        self.index.get_or_init(compile).as_ref()
    }
}

/// Blocks compiled for [`BlockIndex::first`]; block `i` is the `i`-th `(any, all)` pair given.
#[derive(Debug, Clone)]
pub struct BlockIndex {
    prefixes: Option<AhoCorasick>,
    /// The block of each prefix pattern.
    prefix_block: Vec<usize>,
    regexes: Option<RegexSet>,
    regex_block: Vec<usize>,
    /// `module` globs in block order.
    modules: Vec<(usize, Glob)>,
    /// The first block whose `module` globs match a frame without one (`(none)`).
    no_module: Option<usize>,
    files: Vec<(usize, Glob)>,
    /// The first block naming each crate.
    crates: FxHashMap<String, usize>,
    /// The first block naming each kind, by [`FrameKind::ALL`] position.
    kinds: [Option<usize>; FrameKind::ALL.len()],
    /// Blocks with `all` entries, in order, with the entries.
    all: Vec<(usize, Vec<Matchers>)>,
}

impl BlockIndex {
    /// Compiles `blocks`, each as its `any` matchers and its `all` entries. The patterns were
    /// compiled one by one when the rules were read, so compiling them together cannot fail
    /// short of a size limit; then the index is `None` and callers try the blocks in order.
    pub fn new<'a>(
        blocks: impl IntoIterator<Item = (&'a Matchers, &'a [Matchers])>,
    ) -> Option<BlockIndex> {
        let mut index = BlockIndex {
            prefixes: None,
            prefix_block: Vec::new(),
            regexes: None,
            regex_block: Vec::new(),
            modules: Vec::new(),
            no_module: None,
            files: Vec::new(),
            crates: FxHashMap::default(),
            kinds: [None; FrameKind::ALL.len()],
            all: Vec::new(),
        };
        let mut prefixes: Vec<&str> = Vec::new();
        let mut regexes: Vec<&str> = Vec::new();
        for (block, (any, all)) in blocks.into_iter().enumerate() {
            for p in &any.prefix {
                prefixes.push(p);
                index.prefix_block.push(block);
            }
            for r in &any.regex {
                regexes.push(r.as_str());
                index.regex_block.push(block);
            }
            index
                .modules
                .extend(any.module.iter().map(|g| (block, g.clone())));
            if any.module.iter().any(Glob::is_no_module) {
                index.no_module.get_or_insert(block);
            }
            index
                .files
                .extend(any.file.iter().map(|g| (block, g.clone())));
            for c in &any.crates {
                index.crates.entry(c.clone()).or_insert(block);
            }
            for kind in &any.kind {
                index.kinds[kind_slot(*kind)].get_or_insert(block);
            }
            if !all.is_empty() {
                index.all.push((block, all.to_vec()));
            }
        }
        if !prefixes.is_empty() {
            let automaton = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostFirst)
                .start_kind(StartKind::Anchored)
                .build(&prefixes)
                .ok()?;
            index.prefixes = Some(automaton);
        }
        if !regexes.is_empty() {
            index.regexes = Some(RegexSet::new(&regexes).ok()?);
        }
        Some(index)
    }

    /// The first block that matches `frame`, whose match key is `key`.
    pub fn first(&self, frame: &Frame, key: &str) -> Option<usize> {
        let mut best = self.first_prefix(key);
        best = earlier(best, self.kinds[kind_slot(frame.kind)]);
        // (`is_match` stops at the first match and most frames match no regex; `matches`
        // runs every pattern to the end)
        if let Some(set) = &self.regexes
            && set.is_match(&frame.name)
        {
            let first = set.matches(&frame.name).iter().next();
            best = earlier(best, first.map(|i| self.regex_block[i]));
        }
        if !self.crates.is_empty()
            && let Some(krate) = match_key::rust_crate(key)
        {
            best = earlier(best, self.crates.get(krate).copied());
        }
        best = match frame.module_basename() {
            Some(module) => earlier(best, before(&self.modules, best, |g| g.matches(module))),
            None => earlier(best, self.no_module),
        };
        if let Some(file) = frame.file.as_deref() {
            best = earlier(best, before(&self.files, best, |g| g.matches(file)));
        }
        if !self.all.is_empty() {
            let probe = Probe::new(frame, key);
            let hit = |entries: &Vec<Matchers>| entries.iter().any(|e| probe.all_match(e));
            best = earlier(best, before(&self.all, best, hit));
        }
        best
    }

    fn first_prefix(&self, key: &str) -> Option<usize> {
        let automaton = self.prefixes.as_ref()?;
        let found = automaton.find(Input::new(key).anchored(Anchored::Yes))?;
        Some(self.prefix_block[found.pattern().as_usize()])
    }
}

/// The earlier of two blocks.
fn earlier(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        _ => a.or(b),
    }
}

/// The first of `matchers` (in block order) before block `best` that `hit` accepts.
fn before<T>(
    matchers: &[(usize, T)],
    best: Option<usize>,
    hit: impl Fn(&T) -> bool,
) -> Option<usize> {
    let limit = best.unwrap_or(usize::MAX);
    matchers
        .iter()
        .take_while(|(block, _)| *block < limit)
        .find(|(_, m)| hit(m))
        .map(|(block, _)| *block)
}

fn kind_slot(kind: FrameKind) -> usize {
    FrameKind::ALL
        .iter()
        .position(|k| *k == kind)
        .expect("ALL lists every kind")
}

#[cfg(test)]
mod tests {
    use super::super::{RuleOptions, RuleSet, first_block_in_order, presets};
    use super::*;
    use crate::model::{Frame, folded};

    /// Frames of every kind the presets know: the folded fixtures' frames (JVM, Kotlin, Node,
    /// Python, Rust) and, per matcher of every preset, a frame made to hit it.
    fn frames(rules: &RuleSet) -> Vec<Frame> {
        let texts = [
            include_str!("../../fixtures/folded/kotlin-orders.folded"),
            include_str!("../../fixtures/folded/node-modules.folded"),
            include_str!("../../fixtures/folded/py-app.folded"),
            include_str!("../../fixtures/folded/site-packages.folded"),
            include_str!("../../fixtures/folded/flame-mini.folded"),
            include_str!("../../fixtures/perf/rust-native.perf-fp.folded"),
        ];
        let mut frames: Vec<Frame> = texts
            .iter()
            .flat_map(|t| t.lines())
            .filter_map(|l| folded::split_count(l).map(|(stack, _)| stack))
            .flat_map(folded::frames)
            .map(|name| Frame::named(name, FrameKind::Native))
            .collect();
        for block in rules.blocks() {
            for p in &block.any.prefix {
                frames.push(Frame::named(format!("{p}x::y"), FrameKind::Jit));
            }
            for g in block.any.module.iter().chain(&block.any.file) {
                let text = g.as_string().replace(['*', '?'], "x");
                let mut frame = Frame::named("f", FrameKind::Native);
                frame.module = Some(format!("/lib/{text}").into());
                frame.file = Some(text.into());
                frames.push(frame);
            }
            for c in &block.any.crates {
                frames.push(Frame::named(format!("{c}::f"), FrameKind::Native));
            }
        }
        for kind in FrameKind::ALL {
            frames.push(Frame::named("[unknown]", kind));
        }
        frames
    }

    #[test]
    fn the_index_finds_the_block_trying_them_in_order_finds() {
        let options = RuleOptions {
            presets: presets::names().map(String::from).collect(),
            ..RuleOptions::default()
        };
        let rules = RuleSet::build(&options, &[]).unwrap();
        let index = BlockIndex::new(rules.blocks().map(|b| (&b.any, b.all.as_slice())))
            .expect("the presets compile together");
        let frames = frames(&rules);
        assert!(frames.len() > 1000, "{} frames", frames.len());
        let mut matched = 0;
        for frame in &frames {
            let key = match_key::match_key(&frame.name);
            let want = first_block_in_order(&rules.blocks, frame, &key);
            assert_eq!(index.first(frame, &key), want, "{frame:?}");
            matched += usize::from(want.is_some());
        }
        // most frames are claimed, by blocks of every kind of matcher
        assert!(matched * 2 > frames.len(), "{matched} of {}", frames.len());
    }

    #[test]
    fn the_first_block_wins_over_a_longer_or_earlier_kind_of_match() {
        let prefix = |p: &str| Matchers {
            prefix: vec![p.to_string()],
            ..Matchers::default()
        };
        let regex = |r: &str| Matchers {
            regex: vec![regex::Regex::new(r).unwrap()],
            ..Matchers::default()
        };
        let module = |g: &str| Matchers {
            module: vec![Glob::new(g)],
            ..Matchers::default()
        };
        let blocks = [
            (module("libz.so*"), vec![]),
            (prefix("a."), vec![]),
            (prefix("a.b."), vec![]),
            (regex("^b"), vec![]),
            (prefix("b"), vec![]),
            (
                Matchers::default(),
                vec![Matchers {
                    kind: vec![FrameKind::Jit],
                    ..prefix("c")
                }],
            ),
            (prefix("c"), vec![]),
        ];
        let index = BlockIndex::new(blocks.iter().map(|(a, all)| (a, all.as_slice()))).unwrap();
        let first = |name: &str, kind: FrameKind, module: Option<&str>| {
            let mut frame = Frame::named(name, kind);
            frame.module = module.map(Into::into);
            index.first(&frame, &match_key::match_key(name))
        };
        let native = FrameKind::Native;
        assert_eq!(first("a.b.c", native, None), Some(1));
        assert_eq!(first("a.b.c", native, Some("/usr/lib/libz.so.1")), Some(0));
        assert_eq!(first("bb", native, None), Some(3));
        assert_eq!(first("cc", FrameKind::Jit, None), Some(5));
        assert_eq!(first("cc", native, None), Some(6));
        assert_eq!(first("d", native, None), None);
    }
}

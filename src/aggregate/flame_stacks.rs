//! The data of folded lines for flame graphs: each distinct frame text once ([`FrameTexts`])
//! and each distinct stack as the ids of its texts ([`FlameStack`] in [`FlameLines`]). Below
//! both the lines' builder ([`super::flame_lines`]) and their order (`line_order`), which
//! read them, so neither needs the other's types.

use crate::model::{OwnerId, folded};
use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;
use std::hash::BuildHasher;

/// One distinct stack: its frame texts, weight and owner.
#[derive(Debug, Clone, Copy)]
pub struct FlameStack {
    /// Where its frame texts (ids into [`FlameLines::texts`], root first) start in
    /// [`FlameLines`]'s frame list, and how many there are (at least one).
    start: u64,
    pub(super) len: u32,
    /// The sample's owner (owner view).
    pub owner: OwnerId,
    /// The weight's low and high 64 bits: a `u128` would align the struct to 16 bytes and
    /// make it half again as large (5 M stacks: 240 MB instead of 160 MB).
    weight: [u64; 2],
}

impl FlameStack {
    pub fn weight(&self) -> u128 {
        u128::from(self.weight[0]) | (u128::from(self.weight[1]) << 64)
    }
}

/// Each distinct frame text once, back to back, with the owner whose colour it takes.
///
/// Equal texts get one id, so two lines share a frame exactly when they share its id: a
/// flame graph tool merges frames by text, and so can whose without writing the lines out.
///
/// Texts known to be distinct are pushed without a lookup ([`FrameTexts::push_distinct`]),
/// or handed out while another thread writes them (`TextWriter`, [`super::flame_lines`]):
/// the hash index is built on the first [`FrameTexts::intern`] only. On a million distinct frames a lookup in it is a
/// cache miss or two per text, more than half of building the lines (issue 24).
#[derive(Debug, Clone, Default)]
pub struct FrameTexts {
    arena: String,
    /// `ends[i]` is where text `i` ends in `arena`; it starts where text `i - 1` ends.
    ends: Vec<usize>,
    owners: Vec<OwnerId>,
    /// Every text by its hash, once `indexed`; empty before.
    index: HashTable<u32>,
    indexed: bool,
}

impl FrameTexts {
    /// How many distinct texts there are (written or being written).
    pub fn count(&self) -> usize {
        self.owners.len()
    }

    pub fn text(&self, id: u32) -> &str {
        text_at(&self.arena, &self.ends, id)
    }

    /// Room for `more` texts (and for the index, should one be built: building it again as
    /// it grows hashes every text again).
    pub(super) fn reserve(&mut self, more: usize) {
        self.ends.reserve(more);
        self.owners.reserve(more);
    }

    /// The owner whose colour text `id` takes.
    pub fn owner(&self, id: u32) -> OwnerId {
        self.owners[id as usize]
    }

    /// The id of `text`; a new text takes `owner`'s colour, a known one keeps its first.
    pub fn intern(&mut self, text: &str, owner: OwnerId) -> u32 {
        assert_eq!(
            self.ends.len(),
            self.owners.len(),
            "a lookup among unwritten texts"
        );
        self.build_index();
        let hash = FxBuildHasher.hash_one(text);
        let (arena, ends) = (&self.arena, &self.ends);
        let rehash = |&id: &u32| FxBuildHasher.hash_one(text_at(arena, ends, id));
        match (self.index).entry(hash, |&id| text_at(arena, ends, id) == text, rehash) {
            hashbrown::hash_table::Entry::Occupied(known) => *known.get(),
            hashbrown::hash_table::Entry::Vacant(slot) => {
                let id = u32::try_from(self.ends.len()).expect("more than 2^32 frame texts");
                slot.insert(id);
                self.push(text, owner);
                id
            }
        }
    }

    /// The id of the new text `write` appends to the string it is given, which no text pushed
    /// so far with this call equals (the caller knows: its texts are grouped by content). It
    /// is written straight into the store, so a text costs no buffer of its own; once
    /// anything was interned, it is interned, as an interned text might equal it.
    pub fn push_distinct(&mut self, owner: OwnerId, write: impl FnOnce(&mut String)) -> u32 {
        if self.indexed {
            let mut text = String::new();
            write(&mut text);
            return self.intern(&text, owner);
        }
        let id = u32::try_from(self.ends.len()).expect("more than 2^32 frame texts");
        write(&mut self.arena);
        self.ends.push(self.arena.len());
        self.owners.push(owner);
        id
    }

    /// The id of a new text that another thread writes (`TextWriter`, in
    /// [`super::flame_lines`]): its owner only.
    pub(super) fn hand_out(&mut self, owner: OwnerId) -> u32 {
        debug_assert!(!self.indexed);
        let id = u32::try_from(self.owners.len()).expect("more than 2^32 frame texts");
        self.owners.push(owner);
        id
    }

    /// The texts, for another thread to append to.
    pub(super) fn take_store(&mut self) -> TextStore {
        (
            std::mem::take(&mut self.arena),
            std::mem::take(&mut self.ends),
        )
    }

    pub(super) fn put_store(&mut self, (arena, ends): TextStore) {
        self.arena = arena;
        self.ends = ends;
        debug_assert_eq!(self.ends.len(), self.owners.len());
    }

    fn push(&mut self, text: &str, owner: OwnerId) {
        self.arena.push_str(text);
        self.ends.push(self.arena.len());
        self.owners.push(owner);
    }

    /// Indexes the texts pushed before the first lookup: they are distinct, so each is
    /// inserted without one.
    fn build_index(&mut self) {
        if self.indexed {
            return;
        }
        self.indexed = true;
        let (arena, ends) = (&self.arena, &self.ends);
        let hash = |id: u32| FxBuildHasher.hash_one(text_at(arena, ends, id));
        self.index.reserve(ends.capacity(), |&id| hash(id));
        for id in 0..ends.len() as u32 {
            self.index.insert_unique(hash(id), id, |&id| hash(id));
        }
    }
}

/// Text `id` of an arena of texts back to back, `ends[i]` where text `i` ends.
fn text_at<'a>(arena: &'a str, ends: &[usize], id: u32) -> &'a str {
    let i = id as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] };
    &arena[start..ends[i]]
}

/// A [`FrameTexts`]' texts, apart from their owners.
pub(super) type TextStore = (String, Vec<usize>);

/// Every distinct stack of one profile as folded lines (`root;…;leaf weight`), kept as frame
/// text ids rather than text.
///
/// A line is written out only when something reads it: a profile of 5 M distinct stacks
/// whose leaves are all too narrow to draw needs its lines' order and shape, not their text
/// (issue 23: the lines as text, and a palette entry per frame text, took 2.6 GB).
#[derive(Debug, Clone, Default)]
pub struct FlameLines {
    pub texts: FrameTexts,
    /// Every stack's frame texts, root first, back to back (ranges in [`FlameStack`]).
    pub(super) frames: Vec<u32>,
    /// In stack order of the profile (flame graph tools sort them themselves).
    pub stacks: Vec<FlameStack>,
    pub total: u128,
}

impl FlameLines {
    /// Folded lines read from text (`stack WEIGHT`, frames separated by `;`), each frame
    /// taking `owner`'s colour: lines from other tools, and tests of what reads lines.
    /// None for a line that is not `stack WEIGHT` or has no frame.
    #[cfg(test)]
    pub fn from_text<'a>(lines: impl IntoIterator<Item = &'a str>, owner: OwnerId) -> Option<Self> {
        let mut out = FlameLines::default();
        for line in lines {
            let (stack, weight) = folded::split_count(line)?;
            let weight: u128 = weight.parse().ok()?;
            if stack.is_empty() {
                return None;
            }
            let start = out.frames.len();
            for frame in folded::frames(stack) {
                let id = out.texts.intern(frame, owner);
                out.frames.push(id);
            }
            out.push_stack(start, owner, weight);
        }
        Some(out)
    }

    /// Adds the stack whose frame texts were pushed from `start` on.
    pub(super) fn push_stack(&mut self, start: usize, owner: OwnerId, weight: u128) {
        let len = u32::try_from(self.frames.len() - start).expect("a stack of 2^32 frames");
        self.stacks.push(FlameStack {
            start: start as u64,
            len,
            owner,
            weight: [weight as u64, (weight >> 64) as u64],
        });
        self.total = self.total.saturating_add(weight);
    }

    /// A stack's frame texts, root first.
    pub fn frames(&self, stack: &FlameStack) -> &[u32] {
        let start = stack.start as usize;
        &self.frames[start..start + stack.len as usize]
    }

    /// Writes the first `depth` frames of `stack`, separated by `;`.
    pub fn write_frames(&self, stack: &FlameStack, depth: usize, out: &mut String) {
        for (i, &t) in self.frames(stack)[..depth].iter().enumerate() {
            if i > 0 {
                out.push(folded::SEPARATOR);
            }
            out.push_str(self.texts.text(t));
        }
    }

    /// The folded line of one stack, `root;…;leaf weight`.
    pub fn line(&self, stack: &FlameStack) -> String {
        let mut line = String::new();
        self.write_frames(stack, stack.len as usize, &mut line);
        folded::push_count(&mut line, stack.weight());
        line
    }

    /// The indexes (into [`Self::stacks`]) of all lines, or of those of the samples `owner`
    /// owns (owner view).
    pub fn select(&self, owner: Option<OwnerId>) -> Vec<u32> {
        (0..self.stacks.len() as u32)
            .filter(|&i| owner.is_none_or(|o| self.stacks[i as usize].owner == o))
            .collect()
    }

    /// The lines, all or only those of samples `owner` owns (owner view), as text.
    #[cfg(test)]
    pub fn lines(&self, owner: Option<OwnerId>) -> impl Iterator<Item = String> + '_ {
        self.select(owner)
            .into_iter()
            .map(|i| self.line(&self.stacks[i as usize]))
    }

    /// The owners whose colours the lines of `owner` (or all lines) show: what a legend of
    /// that graph needs to list.
    pub fn color_owners(&self, owner: Option<OwnerId>) -> Vec<OwnerId> {
        let mut out: Vec<OwnerId> = Vec::new();
        if owner.is_none() {
            // every text was made for a line: all lines show the owners of all texts (read in
            // one pass over them, not a lookup per frame of a million lines)
            for t in 0..self.texts.count() as u32 {
                let o = self.texts.owner(t);
                if out.last() != Some(&o) && !out.contains(&o) {
                    out.push(o);
                }
            }
            out.sort();
            return out;
        }
        let mut seen = vec![false; self.texts.count()];
        for s in self
            .stacks
            .iter()
            .filter(|s| owner.is_none_or(|o| s.owner == o))
        {
            for &t in self.frames(s) {
                if !std::mem::replace(&mut seen[t as usize], true) {
                    let o = self.texts.owner(t);
                    if !out.contains(&o) {
                        out.push(o);
                    }
                }
            }
        }
        out.sort();
        out
    }

    /// Total weight of the samples `owner` owns (or of all).
    #[cfg(test)]
    pub fn total_of(&self, owner: Option<OwnerId>) -> u128 {
        self.stacks
            .iter()
            .filter(|s| owner.is_none_or(|o| s.owner == o))
            .map(|s| s.weight())
            .sum()
    }

    /// Appends the lines of another profile drawn with the same rules: `flame A B C` draws
    /// their sum (inferno adds up equal stacks). Frame texts carry their owner, so a text
    /// seen in both takes the same colour; it is kept once.
    pub fn append(&mut self, other: FlameLines) {
        if self.stacks.is_empty() && self.texts.count() == 0 {
            // the first profile: taken as it is, not copied text by text
            *self = other;
            return;
        }
        let ids: Vec<u32> = (0..other.texts.count() as u32)
            .map(|t| self.texts.intern(other.texts.text(t), other.texts.owner(t)))
            .collect();
        for s in &other.stacks {
            let start = self.frames.len();
            self.frames
                .extend(other.frames(s).iter().map(|&t| ids[t as usize]));
            self.push_stack(start, s.owner, s.weight());
        }
    }
}

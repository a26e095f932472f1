//! De-duplicating stores: each distinct value is kept once and named by a small `u32` index.
//!
//! Profiles repeat the same frames and stacks millions of times; interning turns "compare two
//! stacks" into "compare two integers" and keeps memory proportional to distinct values.
//!
//! Memory per distinct value is what bounds the inputs whose can read (issue 17: a folded file
//! of 5 M distinct stacks aborted under 2 GB at about 1 KB per distinct frame), so each store
//! holds a value exactly once: the hash index ([`HashIndex`]) holds only `u32` ids
//! and compares a probe against the stored value, instead of keying a map by a second owned
//! copy. Stacks are one flat vector of frame ids with an offset per stack, not a boxed slice
//! each.

use rustc_hash::FxBuildHasher;
use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash};

/// The id the next value gets; an id space of `u32` is part of the model (`FrameId`,
/// `StackId`), and 2^32 distinct values cannot fit in memory before it runs out.
fn next_id(len: usize) -> u32 {
    u32::try_from(len).expect("more than 2^32 distinct values")
}

/// A value's hash as the stores compute it (Fx: the inputs are adversarial only in size).
pub fn hash_of<Q: Hash + ?Sized>(value: &Q) -> u64 {
    FxBuildHasher.hash_one(value)
}

/// The hash index the stores share: ids of values kept elsewhere, each with 32 bits of its
/// hash, so that growing the table re-spreads the stored bits instead of hashing every value
/// again (a million distinct frames were hashed about three times each before).
///
/// Open addressing with linear probing over one array of 8-byte slots (the hash bits and the
/// id side by side): a lookup that finds no match and the insert that follows touch the same
/// cache line, one miss on a table of millions of values where a table of control bytes
/// beside separate slots (hashbrown's) took two, the second a store that held back every
/// later load of the reader (issue 24). At most three slots in four are used, so a probe
/// for a new value reads two or three slots on average, mostly within that line.
#[derive(Debug, Clone, Default)]
pub struct HashIndex {
    /// Power-of-two many slots (none until the first insert), [`EMPTY`] or
    /// `bits << 32 | id`.
    slots: Vec<u64>,
    len: usize,
}

/// A free slot: hash bits and id both `u32::MAX`, which no value has (its id would be the
/// 2^32-th; memory runs out long before).
const EMPTY: u64 = u64::MAX;

impl HashIndex {
    /// The 32 bits kept of a 64-bit hash.
    fn fold(hash: u64) -> u32 {
        (hash >> 32) as u32 ^ hash as u32
    }

    /// The first slot to look at for `bits`: the top bits of a multiplicative spread, which
    /// mix every kept bit into the position.
    fn home(&self, bits: u32) -> usize {
        let spread = u64::from(bits).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (spread >> (64 - self.slots.len().trailing_zeros())) as usize
    }

    /// The id of the value whose hash is `hash` and for which `is_match(id)` holds.
    pub fn find(&self, hash: u64, mut is_match: impl FnMut(u32) -> bool) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let bits = Self::fold(hash);
        let mask = self.slots.len() - 1;
        let mut at = self.home(bits);
        loop {
            let slot = self.slots[at];
            if slot == EMPTY {
                return None;
            }
            if (slot >> 32) as u32 == bits && is_match(slot as u32) {
                return Some(slot as u32);
            }
            at = (at + 1) & mask;
        }
    }

    /// Asks the processor to fetch the slot a lookup of `hash` reads first, so that a reader
    /// that knows its next values' hashes a few values ahead finds that slot in cache: on a
    /// million distinct frames the miss on it was three quarters of interning a frame.
    pub fn prefetch(&self, hash: u64) {
        if self.slots.is_empty() {
            return;
        }
        let slot = &self.slots[self.home(Self::fold(hash))];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is a hint that reads nothing and cannot fault; the address is
        // an element of a live vector besides.
        unsafe {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(slot).cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = slot;
    }

    /// Adds `id` of a value with hash `hash` (not in the index yet).
    pub fn insert(&mut self, hash: u64, id: u32) {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        self.put(Self::fold(hash), id);
        self.len += 1;
    }

    fn put(&mut self, bits: u32, id: u32) {
        let slot = u64::from(bits) << 32 | u64::from(id);
        debug_assert_ne!(slot, EMPTY, "the 2^32-th value");
        let mask = self.slots.len() - 1;
        let mut at = self.home(bits);
        while self.slots[at] != EMPTY {
            at = (at + 1) & mask;
        }
        self.slots[at] = slot;
    }

    /// Twice the slots (16 at first), every id put again by its kept bits.
    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(16);
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; size]);
        for slot in old.into_iter().filter(|&s| s != EMPTY) {
            self.put((slot >> 32) as u32, slot as u32);
        }
    }
}

/// Distinct values of `T`, each stored once.
#[derive(Debug, Clone)]
pub struct Interner<T: Hash + Eq> {
    values: Vec<T>,
    index: HashIndex,
    /// Whether `index` holds every value ([`Interner::release_index`] empties it).
    indexed: bool,
}

impl<T: Hash + Eq> Default for Interner<T> {
    fn default() -> Self {
        Interner {
            values: Vec::new(),
            index: HashIndex::default(),
            indexed: true,
        }
    }
}

impl<T: Hash + Eq> Interner<T> {
    /// The index of `value`, inserting it if it is new. Borrowed lookups (a `&str` for a
    /// `Box<str>`) allocate only when the value is new.
    pub fn intern<Q>(&mut self, value: &Q) -> u32
    where
        T: Borrow<Q>,
        Q: Hash + Eq + ToOwned + ?Sized,
        Q::Owned: Into<T>,
    {
        self.ensure_index();
        let hash = hash_of(value);
        let values = &self.values;
        if let Some(id) = self
            .index
            .find(hash, |id| values[id as usize].borrow() == value)
        {
            return id;
        }
        self.insert_new(hash, value.to_owned().into())
    }

    /// The index of an owned value whose [`hash_of`] is `hash`, inserting it if it is new.
    /// The caller computes the hash (on another thread, or ahead to [`Interner::prefetch`]
    /// its slot).
    pub fn intern_hashed(&mut self, hash: u64, value: T) -> u32 {
        debug_assert_eq!(hash, hash_of(&value));
        self.ensure_index();
        let values = &self.values;
        if let Some(id) = self.index.find(hash, |id| values[id as usize] == value) {
            return id;
        }
        self.insert_new(hash, value)
    }

    /// Frees the hash index; the next [`Interner::intern`] builds it again. Readers release
    /// it when they are done: from then on values are read by id, and on millions of distinct
    /// values the index is a tenth of the profile's memory.
    pub fn release_index(&mut self) {
        self.index = HashIndex::default();
        self.indexed = false;
    }

    fn ensure_index(&mut self) {
        if !self.indexed {
            for (id, value) in self.values.iter().enumerate() {
                self.index.insert(hash_of(value), id as u32);
            }
            self.indexed = true;
        }
    }

    fn insert_new(&mut self, hash: u64, value: T) -> u32 {
        let id = next_id(self.values.len());
        self.values.push(value);
        self.index.insert(hash, id);
        id
    }

    /// Fetches the index slot a value of hash `hash` is looked up in first
    /// ([`HashIndex::prefetch`]).
    pub fn prefetch(&self, hash: u64) {
        self.index.prefetch(hash);
    }

    pub fn get(&self, id: u32) -> &T {
        &self.values[id as usize]
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &T> {
        self.values.iter()
    }

    pub fn as_slice(&self) -> &[T] {
        &self.values
    }
}

/// Distinct slices of `T` (stacks of frame ids), stored back to back in one vector: a stack
/// costs its elements plus one offset, not a boxed slice and its allocator header.
#[derive(Debug, Clone)]
pub struct SliceInterner<T: Hash + Eq + Copy> {
    items: Vec<T>,
    /// Where each slice ends in `items` (it starts where the one before ends), as
    /// [`SliceEnds`] keeps it: 4 bytes a slice.
    ends: SliceEnds,
    index: HashIndex,
    /// `index` holds the slices with ids below this; the others are added when a lookup
    /// needs them ([`SliceInterner::push_new`], [`SliceInterner::release_index`]).
    indexed: u32,
}

impl<T: Hash + Eq + Copy> Default for SliceInterner<T> {
    fn default() -> Self {
        SliceInterner {
            items: Vec::new(),
            ends: SliceEnds::default(),
            index: HashIndex::default(),
            indexed: 0,
        }
    }
}

impl<T: Hash + Eq + Copy> SliceInterner<T> {
    /// The index of `slice`, inserting it if it is new.
    pub fn intern(&mut self, slice: &[T]) -> u32 {
        for id in self.indexed..self.ends.len() as u32 {
            self.index.insert(hash_of(self.get(id)), id);
        }
        self.indexed = self.ends.len() as u32;
        let hash = hash_of(slice);
        if let Some(id) = self
            .index
            .find(hash, |id| slice_at(&self.items, &self.ends, id) == slice)
        {
            return id;
        }
        let id = self.push_new(slice);
        self.index.insert(hash, id);
        self.indexed = id + 1;
        id
    }

    /// Adds a slice the caller knows is new (it holds a value no slice held before) without
    /// looking it up or indexing it: a folded file of a million distinct stacks, each with a
    /// frame of its own, then never builds the index (a cache miss per stack and 9 bytes per
    /// slot), unless a later lookup needs it.
    pub fn push_new(&mut self, slice: &[T]) -> u32 {
        let id = next_id(self.ends.len());
        self.items.extend_from_slice(slice);
        self.ends.push(self.items.len() as u64);
        id
    }

    pub fn get(&self, id: u32) -> &[T] {
        slice_at(&self.items, &self.ends, id)
    }

    /// Frees the hash index, as [`Interner::release_index`] does.
    pub fn release_index(&mut self) {
        self.index = HashIndex::default();
        self.indexed = 0;
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// How many items all the slices hold together.
    pub fn item_count(&self) -> usize {
        self.items.len()
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[T]> {
        (0..self.ends.len()).map(|i| self.get(i as u32))
    }
}

fn slice_at<'a, T>(items: &'a [T], ends: &SliceEnds, id: u32) -> &'a [T] {
    let start = if id == 0 { 0 } else { ends.get(id - 1) };
    &items[start as usize..ends.get(id) as usize]
}

/// Bits of an end offset [`SliceEnds`] stores per slice (fewer under test, so that the
/// tests' small profiles pass many wraps).
const END_BITS: u32 = if cfg!(test) { 4 } else { 32 };

/// The end offsets of a [`SliceInterner`]'s slices in 4 bytes each: the low [`END_BITS`] of
/// each, and the first slice past each multiple of 2^32 in `wraps` (none below 4 G items,
/// so the usual lookup is one load). The total length of all slices may pass 2^32 where
/// their count does not; a million distinct stacks save 4 MB (issue 24).
#[derive(Debug, Clone, Default)]
struct SliceEnds {
    low: Vec<u32>,
    /// `wraps[k]` is the first slice whose end is at least `(k + 1) << END_BITS`.
    wraps: Vec<u32>,
}

impl SliceEnds {
    const MASK: u64 = (1 << END_BITS) - 1;

    fn len(&self) -> usize {
        self.low.len()
    }

    /// Adds the next slice's end, never below the last one's.
    fn push(&mut self, end: u64) {
        let id = self.low.len() as u32;
        while (self.wraps.len() as u64) < end >> END_BITS {
            self.wraps.push(id);
        }
        self.low.push((end & Self::MASK) as u32);
    }

    fn get(&self, id: u32) -> u64 {
        let low = u64::from(self.low[id as usize]);
        if self.wraps.is_empty() {
            return low;
        }
        let high = self.wraps.partition_point(|&first| first <= id) as u64;
        low | high << END_BITS
    }
}

/// A map from byte strings to small `Copy` values, for readers' caches of text they have
/// already parsed (a folded stack line, a frame's raw name). Keys live back to back in one
/// arena, and the map refuses new keys once keys and values would pass `budget` bytes: a cache
/// only saves work, so past its budget the reader parses the text again rather than hold
/// memory for every distinct line of an input made of distinct lines.
#[derive(Debug, Clone)]
pub struct BoundedTextMap<V: Copy> {
    arena: Vec<u8>,
    /// `ends[i]` is where key `i` ends in `arena`; `u32` suffices below the budget.
    ends: Vec<u32>,
    values: Vec<V>,
    index: HashIndex,
    budget: usize,
}

/// A key of a [`BoundedTextMap`] with its hash, computed once for the lookup and the insert
/// that follows a miss.
#[derive(Clone, Copy)]
pub struct TextKey<'a> {
    text: &'a [u8],
    hash: u64,
}

impl<'a> TextKey<'a> {
    pub fn new(text: &'a [u8]) -> TextKey<'a> {
        TextKey {
            text,
            hash: hash_of(text),
        }
    }
}

impl<V: Copy> BoundedTextMap<V> {
    /// An empty map that holds at most about `budget` bytes of keys, values and index.
    pub fn with_budget(budget: usize) -> BoundedTextMap<V> {
        BoundedTextMap {
            arena: Vec::new(),
            ends: Vec::new(),
            values: Vec::new(),
            index: HashIndex::default(),
            budget: budget.min(u32::MAX as usize),
        }
    }

    /// Bytes a key of `len` bytes costs: the key, its end offset, its value and about two
    /// index slots (id, hash bits and control byte at the table's load factor).
    fn cost(len: usize) -> usize {
        len + std::mem::size_of::<u32>() + std::mem::size_of::<V>() + 18
    }

    fn used(&self) -> usize {
        self.arena.len() + self.ends.len() * Self::cost(0)
    }

    pub fn get(&self, key: TextKey) -> Option<V> {
        self.index
            .find(key.hash, |id| self.key(id) == key.text)
            .map(|id| self.values[id as usize])
    }

    /// Adds `key` (which must not be in the map yet); false when the budget is spent, and then
    /// nothing is stored.
    pub fn insert(&mut self, key: TextKey, value: V) -> bool {
        if self.used() + Self::cost(key.text.len()) > self.budget {
            return false;
        }
        let id = self.ends.len() as u32;
        self.arena.extend_from_slice(key.text);
        self.ends.push(self.arena.len() as u32);
        self.values.push(value);
        self.index.insert(key.hash, id);
        true
    }

    fn key(&self, id: u32) -> &[u8] {
        text_at(&self.arena, &self.ends, id)
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.ends.len()
    }
}

fn text_at<'a>(arena: &'a [u8], ends: &[u32], id: u32) -> &'a [u8] {
    let i = id as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] as usize };
    &arena[start..ends[i] as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ends keep their low bits (4 under test) and the slices where they wrapped: slices of
    /// every length, some longer than a wrap, come back whole, new or found again.
    #[test]
    fn slices_come_back_whole_across_many_wraps_of_their_ends() {
        let mut slices = SliceInterner::default();
        let made: Vec<Vec<u32>> = (0..200u32)
            .map(|i| (0..=(i * 7) % 45).map(|k| i * 1000 + k).collect())
            .collect();
        let ids: Vec<u32> = made.iter().map(|s| slices.intern(s)).collect();
        assert!(slices.ends.wraps.len() > 100, "{}", slices.ends.wraps.len());
        for (id, slice) in ids.iter().zip(&made) {
            assert_eq!(slices.get(*id), slice.as_slice());
            assert_eq!(slices.intern(slice), *id);
        }
        assert_eq!(slices.iter().count(), made.len());
    }

    #[test]
    fn values_and_slices_are_stored_once_and_found_again() {
        let mut names: Interner<Box<str>> = Interner::default();
        let a = names.intern::<str>("a");
        let b_value: Box<str> = "b".into();
        let b = names.intern_hashed(hash_of(&b_value), b_value);
        assert_eq!((names.intern::<str>("a"), names.intern::<str>("b")), (a, b));
        assert_eq!((names.get(a), names.len()), (&"a".into(), 2));

        let mut stacks: SliceInterner<u32> = SliceInterner::default();
        let s = stacks.intern(&[1, 2, 3]);
        let empty = stacks.intern(&[]);
        let t = stacks.intern(&[2, 3]);
        assert_eq!(stacks.intern(&[1, 2, 3]), s);
        assert_eq!(stacks.intern(&[]), empty);
        assert_eq!(
            stacks.iter().collect::<Vec<_>>(),
            vec![&[1, 2, 3][..], &[], &[2, 3]]
        );
        assert_eq!(stacks.get(t), &[2, 3]);
        // a thousand more force the index to grow and rehash from the stored slices
        for i in 0..1000u32 {
            stacks.intern(&[i, i + 1]);
        }
        assert_eq!(stacks.intern(&[2, 3]), t);
        assert_eq!(stacks.len(), 1002);
        // a released index is built again by the next lookup
        stacks.release_index();
        names.release_index();
        assert_eq!((stacks.intern(&[2, 3]), stacks.intern(&[7, 7])), (t, 1002));
        assert_eq!((names.intern::<str>("b"), names.intern::<str>("c")), (b, 2));
    }

    #[test]
    fn slices_pushed_as_new_are_found_by_a_later_lookup() {
        let mut stacks: SliceInterner<u32> = SliceInterner::default();
        let a = stacks.intern(&[1, 2]);
        let b = stacks.push_new(&[3, 2]);
        let c = stacks.push_new(&[4]);
        // the index catches up with the pushed slices before it looks
        assert_eq!(stacks.intern(&[3, 2]), b);
        assert_eq!(stacks.intern(&[4]), c);
        assert_eq!(stacks.intern(&[1, 2]), a);
        let d = stacks.push_new(&[5]);
        stacks.release_index();
        assert_eq!(stacks.intern(&[5]), d);
        assert_eq!(stacks.intern(&[6]), 4);
        assert_eq!(stacks.len(), 5);
    }

    #[test]
    fn the_index_finds_every_id_through_collisions_and_growth() {
        // 5,000 ids in a few hash groups: equal kept bits, so every probe runs past the
        // others of its group, across the table's growth from 16 slots
        let mut index = HashIndex::default();
        let hash = |id: u32| u64::from(id % 7) << 40;
        assert_eq!(index.find(hash(3), |_| true), None, "empty");
        for id in 0..5_000 {
            assert_eq!(
                index.find(hash(id), |other| other == id),
                None,
                "{id} not yet"
            );
            index.insert(hash(id), id);
        }
        for id in 0..5_000 {
            assert_eq!(index.find(hash(id), |other| other == id), Some(id));
        }
        // a value of a hash no id has is not found, however full the neighbourhood
        assert_eq!(index.find(99 << 40, |_| true), None);
        assert!(
            index.len * 4 <= index.slots.len() * 3,
            "at most three slots in four"
        );
    }

    #[test]
    fn text_map_refuses_keys_past_its_budget() {
        let per_key = BoundedTextMap::<u32>::cost(3);
        let mut map = BoundedTextMap::with_budget(2 * per_key);
        let key = |text: &'static [u8]| TextKey::new(text);
        assert!(map.insert(key(b"abc"), 1));
        assert!(map.insert(key(b"def"), 2));
        assert!(!map.insert(key(b"ghi"), 3));
        assert_eq!(
            (map.get(key(b"abc")), map.get(key(b"def"))),
            (Some(1), Some(2))
        );
        assert_eq!(
            (map.get(key(b"ghi")), map.get(key(b"ab")), map.len()),
            (None, None, 2)
        );
    }
}

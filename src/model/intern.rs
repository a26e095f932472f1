//! De-duplicating stores: each distinct value is kept once and named by a small `u32` index.
//!
//! Profiles repeat the same frames and stacks millions of times; interning turns "compare two
//! stacks" into "compare two integers" and keeps memory proportional to distinct values.
//!
//! Memory per distinct value is what bounds the inputs whose can read (issue 17: a folded file
//! of 5 M distinct stacks aborted under 2 GB at about 1 KB per distinct frame), so each store
//! holds a value exactly once: the hash index ([`hashbrown::HashTable`]) holds only `u32` ids
//! and compares a probe against the stored value, instead of keying a map by a second owned
//! copy. Stacks are one flat vector of frame ids with an offset per stack, not a boxed slice
//! each.

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;
use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash};

/// The id the next value gets; an id space of `u32` is part of the model (`FrameId`,
/// `StackId`), and 2^32 distinct values cannot fit in memory before it runs out.
fn next_id(len: usize) -> u32 {
    u32::try_from(len).expect("more than 2^32 distinct values")
}

/// Distinct values of `T`, each stored once.
#[derive(Debug, Clone)]
pub struct Interner<T: Hash + Eq> {
    values: Vec<T>,
    index: HashTable<u32>,
}

impl<T: Hash + Eq> Default for Interner<T> {
    fn default() -> Self {
        Interner {
            values: Vec::new(),
            index: HashTable::new(),
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
        let hash = FxBuildHasher.hash_one(value);
        let values = &self.values;
        if let Some(&id) = self
            .index
            .find(hash, |&id| values[id as usize].borrow() == value)
        {
            return id;
        }
        self.insert_new(hash, value.to_owned().into())
    }

    /// The index of an owned value, inserting it if it is new.
    pub fn intern_owned(&mut self, value: T) -> u32 {
        let hash = FxBuildHasher.hash_one(&value);
        let values = &self.values;
        if let Some(&id) = self.index.find(hash, |&id| values[id as usize] == value) {
            return id;
        }
        self.insert_new(hash, value)
    }

    fn insert_new(&mut self, hash: u64, value: T) -> u32 {
        let id = next_id(self.values.len());
        self.values.push(value);
        let values = &self.values;
        self.index
            .insert_unique(hash, id, |&id| FxBuildHasher.hash_one(&values[id as usize]));
        id
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
}

/// Distinct slices of `T` (stacks of frame ids), stored back to back in one vector: a stack
/// costs its elements plus one offset, not a boxed slice and its allocator header.
#[derive(Debug, Clone)]
pub struct SliceInterner<T: Hash + Eq + Copy> {
    items: Vec<T>,
    /// `ends[i]` is where slice `i` ends in `items`; it starts where slice `i - 1` ends.
    /// `u64` because the total length of all slices may pass 2^32 where their count does not.
    ends: Vec<u64>,
    index: HashTable<u32>,
}

impl<T: Hash + Eq + Copy> Default for SliceInterner<T> {
    fn default() -> Self {
        SliceInterner {
            items: Vec::new(),
            ends: Vec::new(),
            index: HashTable::new(),
        }
    }
}

impl<T: Hash + Eq + Copy> SliceInterner<T> {
    /// The index of `slice`, inserting it if it is new.
    pub fn intern(&mut self, slice: &[T]) -> u32 {
        let hash = FxBuildHasher.hash_one(slice);
        if let Some(&id) = self
            .index
            .find(hash, |&id| slice_at(&self.items, &self.ends, id) == slice)
        {
            return id;
        }
        let id = next_id(self.ends.len());
        self.items.extend_from_slice(slice);
        self.ends.push(self.items.len() as u64);
        let (items, ends) = (&self.items, &self.ends);
        self.index.insert_unique(hash, id, |&id| {
            FxBuildHasher.hash_one(slice_at(items, ends, id))
        });
        id
    }

    pub fn get(&self, id: u32) -> &[T] {
        slice_at(&self.items, &self.ends, id)
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[T]> {
        (0..self.ends.len()).map(|i| self.get(i as u32))
    }
}

fn slice_at<'a, T>(items: &'a [T], ends: &[u64], id: u32) -> &'a [T] {
    let i = id as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] as usize };
    &items[start..ends[i] as usize]
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
    index: HashTable<u32>,
    budget: usize,
}

impl<V: Copy> BoundedTextMap<V> {
    /// An empty map that holds at most about `budget` bytes of keys, values and index.
    pub fn with_budget(budget: usize) -> BoundedTextMap<V> {
        BoundedTextMap {
            arena: Vec::new(),
            ends: Vec::new(),
            values: Vec::new(),
            index: HashTable::new(),
            budget: budget.min(u32::MAX as usize),
        }
    }

    /// Bytes a key of `len` bytes costs: the key, its end offset, its value and about two
    /// index slots (id and control byte at the table's load factor).
    fn cost(len: usize) -> usize {
        len + std::mem::size_of::<u32>() + std::mem::size_of::<V>() + 10
    }

    fn used(&self) -> usize {
        self.arena.len() + self.ends.len() * Self::cost(0)
    }

    pub fn get(&self, key: &[u8]) -> Option<V> {
        let hash = FxBuildHasher.hash_one(key);
        self.index
            .find(hash, |&id| self.key(id) == key)
            .map(|&id| self.values[id as usize])
    }

    /// Adds `key` (which must not be in the map yet); false when the budget is spent, and then
    /// nothing is stored.
    pub fn insert(&mut self, key: &[u8], value: V) -> bool {
        if self.used() + Self::cost(key.len()) > self.budget {
            return false;
        }
        let hash = FxBuildHasher.hash_one(key);
        let id = self.ends.len() as u32;
        self.arena.extend_from_slice(key);
        self.ends.push(self.arena.len() as u32);
        self.values.push(value);
        let (arena, ends) = (&self.arena, &self.ends);
        self.index.insert_unique(hash, id, |&id| {
            FxBuildHasher.hash_one(text_at(arena, ends, id))
        });
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

    #[test]
    fn values_and_slices_are_stored_once_and_found_again() {
        let mut names: Interner<Box<str>> = Interner::default();
        let a = names.intern::<str>("a");
        let b = names.intern_owned("b".into());
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
    }

    #[test]
    fn text_map_refuses_keys_past_its_budget() {
        let per_key = BoundedTextMap::<u32>::cost(3);
        let mut map = BoundedTextMap::with_budget(2 * per_key);
        assert!(map.insert(b"abc", 1));
        assert!(map.insert(b"def", 2));
        assert!(!map.insert(b"ghi", 3));
        assert_eq!((map.get(b"abc"), map.get(b"def")), (Some(1), Some(2)));
        assert_eq!(
            (map.get(b"ghi"), map.get(b"ab"), map.len()),
            (None, None, 2)
        );
    }
}

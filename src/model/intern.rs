//! A de-duplicating store: each distinct value is kept once and named by a small `u32` index.
//!
//! Profiles repeat the same frames and stacks millions of times; interning turns "compare two
//! stacks" into "compare two integers" and keeps memory proportional to distinct values.

use rustc_hash::FxHashMap;
use std::borrow::Borrow;
use std::hash::Hash;

#[derive(Debug, Clone)]
pub struct Interner<T: Hash + Eq + Clone> {
    values: Vec<T>,
    index: FxHashMap<T, u32>,
}

impl<T: Hash + Eq + Clone> Default for Interner<T> {
    fn default() -> Self {
        Interner {
            values: Vec::new(),
            index: FxHashMap::default(),
        }
    }
}

impl<T: Hash + Eq + Clone> Interner<T> {
    /// The index of `value`, inserting it if it is new. Borrowed lookups (a `&[FrameId]` for a
    /// `Box<[FrameId]>`, a `&str` for a `Box<str>`) allocate only when the value is new.
    pub fn intern<Q>(&mut self, value: &Q) -> u32
    where
        T: Borrow<Q>,
        Q: Hash + Eq + ToOwned + ?Sized,
        Q::Owned: Into<T>,
    {
        if let Some(&id) = self.index.get(value) {
            return id;
        }
        self.insert_new(value.to_owned().into())
    }

    /// The index of an owned value, inserting it if it is new.
    pub fn intern_owned(&mut self, value: T) -> u32 {
        if let Some(&id) = self.index.get(&value) {
            return id;
        }
        self.insert_new(value)
    }

    fn insert_new(&mut self, value: T) -> u32 {
        let id = u32::try_from(self.values.len()).expect("more than 2^32 distinct values");
        self.index.insert(value.clone(), id);
        self.values.push(value);
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

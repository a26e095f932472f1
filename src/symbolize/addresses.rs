//! What symbolisation starts from: a profile whose frames are still addresses.
//!
//! The perf.data reader fills an [`AddressProfile`] while it folds the samples — the modules
//! it saw mapped, each distinct (module, address) once, the distinct stacks of those, and the
//! summed values per (stack, thread) — and hands it to [`super::to_profile`], which turns the
//! addresses into frames of a [`Profile`](crate::model::Profile). Plain data: the reader's
//! maps and caches stay with the reader.

use super::ModuleKind;
use crate::model::{Interner, SampleType, ThreadId};
use rustc_hash::FxHashMap;

/// A module of an [`AddressProfile`]: index into its `modules`.
pub type ModuleId = u32;

/// The module of addresses that were in no mapping: their frame is `[unknown]` without a
/// module.
pub const NO_MODULE: ModuleId = u32::MAX;

/// A distinct address to symbolise: absolute for the kernel and JIT code, a file offset for a
/// mapped file (see [`ModuleKind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RawFrame {
    pub module: ModuleId,
    pub address: u64,
}

/// A profile of addresses, before symbolisation.
#[derive(Default)]
pub struct AddressProfile {
    pub sample_types: Vec<SampleType>,
    pub modules: Vec<ModuleKind>,
    /// Distinct raw frames; a raw stack refers to them by index.
    pub frames: Vec<RawFrame>,
    pub stacks: RawStacks,
    /// Distinct (raw stack, thread); `values` has one entry per sample type for each.
    pub rows: Vec<(u32, Option<ThreadId>)>,
    pub values: Vec<u128>,
    /// Thread names, indexed by the rows' `ThreadId`.
    pub threads: Interner<Box<str>>,
    /// How many samples were folded.
    pub samples: u64,
    /// The sample type that says what a module costs when it has no symbols (`samples`).
    pub cost_type: usize,
    /// The samples over time keyed by row, when the reader kept them.
    pub timeline: Option<crate::model::Timeline>,
}

/// Distinct raw stacks (raw frame ids, leaf first), stored in one arena.
#[derive(Default)]
pub struct RawStacks {
    index: FxHashMap<u64, u32>,
    /// (offset in `frames`, length, next stack with the same hash)
    entries: Vec<(u32, u32, u32)>,
    frames: Vec<u32>,
}

impl RawStacks {
    /// The id of a stack, adding it if it is new.
    pub fn intern(&mut self, stack: &[u32]) -> u32 {
        use std::hash::Hasher;
        let mut h = rustc_hash::FxHasher::default();
        for &f in stack {
            h.write_u32(f);
        }
        let hash = h.finish();
        let first = self.index.get(&hash).copied();
        let mut i = first.unwrap_or(u32::MAX);
        while i != u32::MAX {
            if self.get(i) == stack {
                return i;
            }
            i = self.entries[i as usize].2;
        }
        let id = self.entries.len() as u32;
        self.entries.push((
            self.frames.len() as u32,
            stack.len() as u32,
            first.unwrap_or(u32::MAX),
        ));
        self.frames.extend_from_slice(stack);
        self.index.insert(hash, id);
        id
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn get(&self, id: u32) -> &[u32] {
        let (at, len, _) = self.entries[id as usize];
        &self.frames[at as usize..(at + len) as usize]
    }
}

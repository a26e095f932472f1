//! The caches that make a repeated sample cost one or two lookups: raw frames by (pid,
//! address), chains by their bytes, rows by (chain, thread). Valid for one generation of the
//! maps ([`super::maps::Maps`]).

use super::*;
use rustc_hash::FxHashSet;

/// What makes a repeated sample cost one or two lookups; only valid for one generation of
/// [`Maps`].
pub(super) struct Caches {
    /// (pid, address, kernel) → raw frame, direct-mapped.
    pub(super) frames: Vec<CacheEntry>,
    /// (pid, mode, callchain bytes) → chain id: each distinct chain resolved once, whichever
    /// threads run it (a thread pool runs the same code in all of them).
    pub(super) chains: ChainCache,
    /// Chain id → its raw stack.
    pub(super) chain_stacks: Vec<u32>,
    /// (chain id, tid) → row.
    pub(super) thread_rows: ThreadRows,
    /// The generation of the maps `chains` was filled under.
    pub(super) chain_generation: u32,
    /// The threads `thread_rows` holds rows of: their rows know their name, so renaming one of
    /// them makes `thread_rows` stale (a thread named before its first sample, as most are,
    /// does not).
    pub(super) row_tids: FxHashSet<i32>,
    /// A thread of `thread_rows` was renamed.
    pub(super) renamed: bool,
}
/// The hash a sample is looked up by in the chain cache, and the tid of its row, when it is
/// looked up (a callchain without a DWARF user stack).
pub(super) fn cached_hash(event: &Event) -> Option<(ChainHash, i32)> {
    match event {
        Event::Sample {
            sample,
            chain: Some(_),
            hash,
            user: None,
        } => Some((*hash, ThreadRows::tid(sample.tid))),
        _ => None,
    }
}

/// A hash map from callchain keys (pid, mode, callchain) to chain ids, each key known by its
/// 128-bit hash alone ([`ChainHash`], computed by the decoding thread): a lookup reads one
/// slot and no key bytes. Most lookups hit, and what a hit costs is waiting for its slot to
/// come from memory (the table is megabytes on a long recording): since the hashes of the
/// next samples of a batch are known before they are folded, slots are fetched ahead
/// ([`ChainCache::prefetch_slot`]).
#[derive(Default)]
pub(super) struct ChainCache {
    pub(super) table: SlotTable,
}

/// Open addressing with linear probing over slots that keep a 128-bit key (or hash) and
/// its value.
#[derive(Default)]
pub(super) struct SlotTable {
    /// A power of two long, or empty; at most half full.
    pub(super) slots: Vec<Slot>,
    pub(super) len: usize,
}

#[derive(Clone, Copy, Default)]
pub(super) struct Slot {
    /// Places the slot in the table.
    pub(super) home: u64,
    /// The rest of the key.
    pub(super) check: u64,
    pub(super) value: u32,
    /// An empty slot is not.
    pub(super) used: bool,
}

/// The size of a table after a clear, and when it is first used.
pub(super) const CHAIN_SLOTS_MIN: usize = 1 << 10;

impl SlotTable {
    pub(super) fn home(&self, home: u64) -> usize {
        // the high bits of a multiply spread any hash over the table
        let bits = self.slots.len().trailing_zeros();
        (home.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    }

    /// The value of the key (`home`, `check`).
    pub(super) fn find(&self, home: u64, check: u64) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(home);
        loop {
            let slot = &self.slots[i];
            if !slot.used {
                return None;
            }
            if slot.home == home && slot.check == check {
                return Some(slot.value);
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds a key the table does not hold.
    pub(super) fn insert(&mut self, home: u64, check: u64, value: u32) {
        if (self.len + 1) * 2 > self.slots.len() {
            let size = (self.slots.len() * 2).max(CHAIN_SLOTS_MIN);
            let old = std::mem::replace(&mut self.slots, vec![Slot::default(); size]);
            for slot in old.into_iter().filter(|s| s.used) {
                self.place(slot);
            }
        }
        self.place(Slot {
            home,
            check,
            value,
            used: true,
        });
        self.len += 1;
    }

    pub(super) fn place(&mut self, slot: Slot) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(slot.home);
        while self.slots[i].used {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
    }

    /// Forgets every key; the table shrinks back, so that clearing costs what was filled.
    pub(super) fn clear(&mut self) {
        self.slots = Vec::new();
        self.len = 0;
    }

    /// Starts fetching the slot a lookup of `home` reads first, if the table has any.
    pub(super) fn prefetch(&self, home: u64) {
        if !self.slots.is_empty() {
            prefetch(&self.slots[self.home(home)]);
        }
    }

    /// The value at the slot a lookup reads first, when it holds the key: most likely where
    /// the key is.
    pub(super) fn peek(&self, home: u64, check: u64) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let slot = &self.slots[self.home(home)];
        (slot.used && slot.home == home && slot.check == check).then_some(slot.value)
    }
}

impl ChainCache {
    /// The chain id of a key.
    pub(super) fn get(&self, hash: ChainHash) -> Option<u32> {
        self.table.find(hash.home, hash.check)
    }

    /// Adds a key the cache does not hold under a chain id.
    pub(super) fn insert(&mut self, hash: ChainHash, chain: u32) {
        self.table.insert(hash.home, hash.check, chain);
    }

    pub(super) fn clear(&mut self) {
        self.table.clear();
    }

    /// Starts fetching the slot a lookup of `hash` reads first.
    pub(super) fn prefetch_slot(&self, hash: ChainHash) {
        self.table.prefetch(hash.home);
    }

    /// The chain id at the slot a lookup of `hash` reads first (fetched by
    /// [`Self::prefetch_slot`] earlier), when it is the key's.
    pub(super) fn peek(&self, hash: ChainHash) -> Option<u32> {
        self.table.peek(hash.home, hash.check)
    }
}

/// (chain id, tid) → row, fetched ahead like the chains: a [`SlotTable`] whose key is the
/// chain and tid packed.
#[derive(Default)]
pub(super) struct ThreadRows {
    pub(super) table: SlotTable,
}

impl ThreadRows {
    /// The tid a sample's row is kept under: its own, or -1 without one.
    pub(super) fn tid(tid: Option<i32>) -> i32 {
        tid.unwrap_or(-1)
    }

    pub(super) fn key(chain: u32, tid: i32) -> u64 {
        (u64::from(chain) << 32) | u64::from(tid as u32)
    }

    pub(super) fn get(&self, chain: u32, tid: i32) -> Option<u32> {
        self.table.find(Self::key(chain, tid), 0)
    }

    pub(super) fn insert(&mut self, chain: u32, tid: i32, row: u32) {
        self.table.insert(Self::key(chain, tid), 0, row);
    }

    pub(super) fn clear(&mut self) {
        self.table.clear();
    }

    /// Starts fetching the slot a lookup reads first.
    pub(super) fn prefetch(&self, chain: u32, tid: i32) {
        self.table.prefetch(Self::key(chain, tid));
    }

    /// The row at the lookup's first slot, when it is the key's.
    pub(super) fn peek(&self, chain: u32, tid: i32) -> Option<u32> {
        self.table.peek(Self::key(chain, tid), 0)
    }
}

/// A hint to the processor to bring the line holding `p` into cache; never faults.
#[inline(always)]
pub(super) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing and faults on no address; SSE is in x86_64's baseline
    unsafe {
        std::arch::x86_64::_mm_prefetch(p.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct CacheEntry {
    pub(super) addr: u64,
    pub(super) pid: i32,
    pub(super) kernel: bool,
    pub(super) generation: u32,
    pub(super) raw: u32,
}

pub(super) const FRAME_CACHE_BITS: u32 = 14;

pub(super) fn cache_slot(pid: i32, addr: u64, kernel: bool) -> usize {
    let h = (addr ^ (u64::from(pid as u32) << 32) ^ u64::from(kernel))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> (64 - FRAME_CACHE_BITS)) as usize
}

impl Caches {
    /// Empties the callchain caches, to be filled under the maps of `generation`.
    pub(super) fn clear_chains(&mut self, generation: u32) {
        self.chains.clear();
        self.chain_stacks.clear();
        self.clear_rows();
        self.chain_generation = generation;
    }

    /// Empties the rows of the chains (a thread was renamed); the chains' stacks stay.
    pub(super) fn clear_rows(&mut self) {
        self.thread_rows.clear();
        self.row_tids.clear();
        self.renamed = false;
    }
}

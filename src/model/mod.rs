//! The one normalised profile model every reader produces and every later stage consumes.
//!
//! A profile is a set of *rows*: one per distinct (stack, thread), each holding the summed
//! values of every sample type. Readers fold samples into rows as they read, so memory grows
//! with the number of distinct stacks, never with the number of samples.

pub mod budget;
#[cfg(test)]
pub mod cases;
mod dump;
pub mod folded;
mod frame;
mod intern;
mod negative;
mod notice;
mod owner;
pub mod perf;
mod recording;
mod timeline;
mod units;
mod unresolved;

pub use frame::{Frame, FrameKind, NO_FRAMES, UNKNOWN};
pub use intern::{BoundedTextMap, Interner, SliceInterner, TextKey, hash_of};
pub use negative::NegativeWeights;
pub use notice::{InlineChoice, MissingSymbols, Notice, Utf8Place};
pub use owner::{Category, NO_STACK, Owner, OwnerId, UNCLASSIFIED, UNSYMBOLIZED};
pub use recording::{
    CallGraph, DepthCut, LOST_FIX, ModuleProblem, Recording, THROTTLE_FIX, TruncatedStacks,
    UnwindCause, UnwindFailure, larger_stack_copy,
};
pub use timeline::Timeline;
pub use units::{SampleType, Unit};
pub use unresolved::{JitMapWhy, KallsymsError, OtherWhy, Unresolved, UnresolvedModule};

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;
use std::hash::BuildHasher;

/// Index of a distinct frame within one profile; meaningless in any other profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FrameId(pub u32);

/// Index of a distinct stack (leaf first) within one profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StackId(pub u32);

/// Index of a distinct thread name within one profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadId(pub u32);

/// One folded row: a distinct (stack, thread) and its summed values.
#[derive(Debug, Clone, Copy)]
pub struct Row<'a> {
    pub stack: StackId,
    pub thread: Option<ThreadId>,
    pub values: &'a [u128],
}

/// Facts about the input that reports show but that are not samples.
#[derive(Debug, Clone, Default)]
pub struct ProfileMeta {
    /// Facts the report header carries (pprof comments, detected format...).
    pub notes: Vec<Notice>,
    /// Things that went wrong but did not stop reading (lossy UTF-8, lost records...).
    pub warnings: Vec<Notice>,
    /// Sampling period and its type, when the input declares them (pprof `period`).
    pub period: Option<(i64, SampleType)>,
    pub duration_nanos: Option<i64>,
    /// Per module whose addresses found no symbol, why (symbolisation of perf.data).
    pub unresolved: Vec<UnresolvedModule>,
    /// How the samples were recorded and what was lost doing it (perf.data only).
    pub recording: Recording,
    /// The samples over time, keyed by stack, when the reader was asked to keep them
    /// (`ReadOptions::timeline`) and the input stamps samples with a time.
    pub timeline: Option<Timeline>,
    /// The recorded program's command line, where the input names it: JFR's Java arguments
    /// (`jdk.JVMInformation`: `com.acme.Main --port 80`), perf.data's recorded command
    /// (`perf record -g -- java -cp app.jar com.acme.Main`). Strong evidence of the
    /// program's own code (issue 53).
    pub command: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Profile {
    sample_types: Vec<SampleType>,
    /// Index into `sample_types` used when the user names no metric.
    pub default_sample_type: usize,
    frames: Interner<Frame>,
    stacks: SliceInterner<FrameId>,
    threads: Interner<Box<str>>,
    /// The row of each stack without a thread past `row_keys`' identity rows, by `StackId`
    /// ([`NO_ROW`]: none yet): four bytes a stack and no hashing.
    stack_rows: Vec<u32>,
    /// Rows with a thread, found by hashing their key: the key is stored once, in
    /// `row_keys`.
    thread_rows: HashTable<u32>,
    row_keys: RowKeys,
    /// Row-major: `values[row * sample_types.len() + type]`.
    values: Vec<u128>,
    /// The negative part of signed values (pprof delta profiles); the rows hold the rest.
    pub negative: NegativeWeights,
    pub meta: ProfileMeta,
}

impl Profile {
    /// An empty profile with the given sample types; the default metric is the first type.
    pub fn new(sample_types: Vec<SampleType>) -> Profile {
        Profile {
            sample_types,
            default_sample_type: 0,
            frames: Interner::default(),
            stacks: SliceInterner::default(),
            threads: Interner::default(),
            stack_rows: Vec::new(),
            thread_rows: HashTable::new(),
            row_keys: RowKeys::default(),
            values: Vec::new(),
            negative: NegativeWeights::default(),
            meta: ProfileMeta::default(),
        }
    }

    pub fn sample_types(&self) -> &[SampleType] {
        &self.sample_types
    }

    pub fn intern_frame(&mut self, frame: Frame) -> FrameId {
        self.intern_frame_hashed(hash_of(&frame), frame)
    }

    /// [`Profile::intern_frame`] of a frame whose [`hash_of`] the caller computed, as a
    /// reader does that [`Profile::prefetch_frame`]s its frames ahead.
    pub fn intern_frame_hashed(&mut self, hash: u64, frame: Frame) -> FrameId {
        let before = self.frames.len();
        let size = std::mem::size_of::<Frame>()
            + frame.name.len()
            + frame.module.as_deref().map_or(0, str::len)
            + frame.file.as_deref().map_or(0, str::len);
        let id = self.frames.intern_hashed(hash, frame);
        if self.frames.len() > before {
            budget::charge(size);
        }
        FrameId(id)
    }

    /// Fetches where a frame of hash `hash` is looked up into cache, a few frames before it
    /// is interned ([`Interner::prefetch`]).
    pub fn prefetch_frame(&self, hash: u64) {
        self.frames.prefetch(hash);
    }

    pub fn intern_stack(&mut self, leaf_first: &[FrameId]) -> StackId {
        let before = self.stacks.len();
        let id = self.stacks.intern(leaf_first);
        if self.stacks.len() > before {
            // the frame ids, the slice's place and its hash-table slot
            budget::charge(leaf_first.len() * 4 + 16);
        }
        StackId(id)
    }

    /// Adds a stack the caller knows is new because it holds a frame interned for it just
    /// now, without looking it up: a reader of mostly distinct stacks then builds no index
    /// of them (see [`SliceInterner::push_new`]).
    pub fn push_new_stack(&mut self, leaf_first: &[FrameId]) -> StackId {
        budget::charge(leaf_first.len() * 4 + 16);
        StackId(self.stacks.push_new(leaf_first))
    }

    pub fn intern_thread(&mut self, name: &str) -> ThreadId {
        let before = self.threads.len();
        let id = self.threads.intern::<str>(name);
        if self.threads.len() > before {
            budget::charge(name.len() + 16);
        }
        ThreadId(id)
    }

    /// Adds one sample (or a pre-summed group) to its row. `values` has one entry per sample
    /// type. Sums saturate rather than wrap: u128 cannot overflow from u64 inputs in practice,
    /// and saturation keeps even an adversarial input from panicking.
    pub fn add_sample(&mut self, stack: StackId, thread: Option<ThreadId>, values: &[u128]) {
        debug_assert_eq!(values.len(), self.sample_types.len());
        let n = self.sample_types.len();
        let key = RowKey::new(stack, thread);
        let found = match thread {
            None => (self.row_keys.identity_row(stack)).or_else(|| {
                let row = self.stack_rows.get(stack.0 as usize).copied();
                row.filter(|&row| row != NO_ROW)
            }),
            Some(_) => {
                let keys = &self.row_keys;
                self.thread_rows
                    .find(FxBuildHasher.hash_one(key), |&row| keys.get(row) == key)
                    .copied()
            }
        };
        if let Some(row) = found {
            let slot = &mut self.values[row as usize * n..(row as usize + 1) * n];
            for (s, v) in slot.iter_mut().zip(values) {
                *s = s.saturating_add(*v);
            }
            return;
        }
        let row = self.row_keys.len() as u32;
        let by_identity = self.row_keys.push(key);
        match values {
            // one sample type, as folded, perf and most inputs have: no copy loop per row
            [value] => self.values.push(*value),
            _ => self.values.extend_from_slice(values),
        }
        budget::charge(n * 16 + std::mem::size_of::<RowKey>() + 4);
        match thread {
            None if by_identity => {}
            None => {
                let i = stack.0 as usize;
                if self.stack_rows.len() <= i {
                    self.stack_rows.resize(i + 1, NO_ROW);
                }
                self.stack_rows[i] = row;
            }
            Some(_) => {
                let keys = &self.row_keys;
                self.thread_rows
                    .insert_unique(FxBuildHasher.hash_one(key), row, |&row| {
                        FxBuildHasher.hash_one(keys.get(row))
                    });
            }
        }
    }

    pub fn frame(&self, id: FrameId) -> &Frame {
        self.frames.get(id.0)
    }

    pub fn frames(&self) -> impl ExactSizeIterator<Item = &Frame> {
        self.frames.iter()
    }

    /// Frees the indexes that find a frame or stack by value: a profile read is looked up by
    /// id ([`crate::input`] calls this when a reader is done); interning again rebuilds them.
    pub fn release_indexes(&mut self) {
        self.frames.release_index();
        self.stacks.release_index();
    }

    /// The distinct frames by `FrameId`, for work split between cores.
    pub fn frame_slice(&self) -> &[Frame] {
        self.frames.as_slice()
    }

    pub fn frame_count(&self) -> usize {
        self.frames.len()
    }

    pub fn stack(&self, id: StackId) -> &[FrameId] {
        self.stacks.get(id.0)
    }

    pub fn stack_count(&self) -> usize {
        self.stacks.len()
    }

    /// How many frames the distinct stacks hold together.
    pub fn stack_frame_count(&self) -> usize {
        self.stacks.item_count()
    }

    pub fn thread_name(&self, id: ThreadId) -> &str {
        self.threads.get(id.0)
    }

    pub fn rows(&self) -> impl Iterator<Item = Row<'_>> {
        let n = self.sample_types.len().max(1);
        self.row_keys
            .iter()
            .zip(self.values.chunks(n))
            .map(|(key, values)| Row {
                stack: key.stack,
                thread: key.thread(),
                values,
            })
    }

    #[cfg(test)]
    pub fn row_count(&self) -> usize {
        self.row_keys.len()
    }

    /// Every weight times `factor`, saturating as sums do: a reader that learns late that its
    /// weights need a finer scale (a folded count with more decimal places than those before
    /// it) rescales what it has read in place.
    pub fn scale_weights(&mut self, factor: u128) {
        for value in &mut self.values {
            *value = value.saturating_mul(factor);
        }
        self.negative.scale(factor);
    }

    /// The summed value of every sample type.
    pub fn totals(&self) -> Vec<u128> {
        let mut totals = vec![0u128; self.sample_types.len()];
        for row in self.rows() {
            for (t, v) in totals.iter_mut().zip(row.values) {
                *t = t.saturating_add(*v);
            }
        }
        totals
    }

    /// Index of the sample type called `name`, or given as a decimal index.
    pub fn sample_type_index(&self, name: &str) -> Option<usize> {
        self.sample_types
            .iter()
            .position(|t| t.name == name)
            .or_else(|| name.parse().ok().filter(|&i| i < self.sample_types.len()))
    }

    /// Checks the invariants every reader must leave behind; a failure is a reader bug.
    pub fn validate(&self) -> Result<(), Invalid> {
        if self.sample_types.is_empty() {
            return Err(Invalid::NoSampleTypes);
        }
        if self.default_sample_type >= self.sample_types.len() {
            return Err(Invalid::DefaultSampleType);
        }
        let n = self.sample_types.len();
        if self.values.len() != self.row_keys.len() * n {
            return Err(Invalid::ValueMatrix);
        }
        for key in self.row_keys.iter() {
            let (stack, thread) = (key.stack, key.thread());
            if stack.0 as usize >= self.stacks.len() {
                return Err(Invalid::MissingStack(stack.0));
            }
            if thread.is_some_and(|t| t.0 as usize >= self.threads.len()) {
                return Err(Invalid::MissingThread);
            }
        }
        for stack in self.stacks.iter() {
            if let Some(bad) = stack.iter().find(|f| f.0 as usize >= self.frames.len()) {
                return Err(Invalid::MissingFrame(bad.0));
            }
        }
        Ok(())
    }
}

/// The (stack, thread) of each row. Most inputs make rows in stack order, a stack's first
/// sample making its row, without a thread (folded, pprof, perf script without threads):
/// row `i` is then stack `i`, and those rows keep no key at all (`identity` counts them; on
/// a million distinct stacks, 12 MB of keys and `stack_rows`, issue 24). From the first row
/// that is not (a thread, a stack out of order) every row keeps its key.
#[derive(Debug, Clone, Default)]
struct RowKeys {
    identity: u32,
    /// Rows past the identity ones have begun: `identity` grows no more.
    ended: bool,
    keys: Vec<RowKey>,
}

impl RowKeys {
    fn len(&self) -> usize {
        self.identity as usize + self.keys.len()
    }

    fn get(&self, row: u32) -> RowKey {
        match row.checked_sub(self.identity) {
            None => RowKey::new(StackId(row), None),
            Some(i) => self.keys[i as usize],
        }
    }

    /// Adds row [`RowKeys::len`] with `key`; whether it is an identity row.
    fn push(&mut self, key: RowKey) -> bool {
        let identity =
            !self.ended && key.thread == RowKey::NO_THREAD && key.stack.0 == self.identity;
        if identity {
            self.identity += 1;
        } else {
            self.ended = true;
            self.keys.push(key);
        }
        identity
    }

    /// The row of `stack` without a thread, when it is an identity row.
    fn identity_row(&self, stack: StackId) -> Option<u32> {
        (stack.0 < self.identity).then_some(stack.0)
    }

    fn iter(&self) -> impl Iterator<Item = RowKey> + '_ {
        let identity = (0..self.identity).map(|s| RowKey::new(StackId(s), None));
        identity.chain(self.keys.iter().copied())
    }
}

/// No row yet, in [`Profile`]'s `stack_rows`.
const NO_ROW: u32 = u32::MAX;

/// A row's (stack, thread) in 8 bytes rather than the 12 of `(StackId, Option<ThreadId>)`: the
/// key is held once per distinct row (issue 17).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct RowKey {
    stack: StackId,
    /// The thread id, or [`RowKey::NO_THREAD`]; no profile has 2^32 - 1 threads.
    thread: u32,
}

impl RowKey {
    const NO_THREAD: u32 = u32::MAX;

    fn new(stack: StackId, thread: Option<ThreadId>) -> RowKey {
        RowKey {
            stack,
            thread: thread.map_or(RowKey::NO_THREAD, |t| t.0),
        }
    }

    fn thread(self) -> Option<ThreadId> {
        (self.thread != RowKey::NO_THREAD).then_some(ThreadId(self.thread))
    }
}

/// An invariant of a [`Profile`] that a reader broke ([`Profile::validate`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    #[error("profile has no sample types")]
    NoSampleTypes,
    #[error("default sample type out of range")]
    DefaultSampleType,
    #[error("value matrix does not match rows × sample types")]
    ValueMatrix,
    #[error("row refers to missing stack {0}")]
    MissingStack(u32),
    #[error("row refers to a missing thread")]
    MissingThread,
    #[error("stack refers to missing frame {0}")]
    MissingFrame(u32),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_equal_stacks_and_threads_into_one_row() {
        let mut p = Profile::new(vec![SampleType::samples()]);
        let a = p.intern_frame(Frame::named("a", FrameKind::Native));
        let b = p.intern_frame(Frame::named("b", FrameKind::Native));
        let s1 = p.intern_stack(&[a, b]);
        let s2 = p.intern_stack(&[a, b]);
        assert_eq!(s1, s2);
        let t = p.intern_thread("main");
        p.add_sample(s1, Some(t), &[2]);
        p.add_sample(s2, Some(t), &[3]);
        p.add_sample(s1, None, &[1]);
        assert_eq!(p.row_count(), 2);
        assert_eq!(p.totals(), vec![6]);
        p.validate().unwrap();
    }

    /// Rows in stack order without a thread keep no key; the first row out of that order and
    /// every later one do, and each row is still found again and listed once, in order.
    #[test]
    fn identity_rows_and_keyed_rows_fold_alike() {
        let mut p = Profile::new(vec![SampleType::samples()]);
        let stacks: Vec<StackId> = (0..4)
            .map(|i| {
                let f = p.intern_frame(Frame::named(format!("f{i}"), FrameKind::Native));
                p.intern_stack(&[f])
            })
            .collect();
        let t = p.intern_thread("main");
        p.add_sample(stacks[0], None, &[1]); // row 0: identity
        p.add_sample(stacks[1], None, &[2]); // row 1: identity
        p.add_sample(stacks[3], None, &[4]); // row 2: out of order, keyed
        p.add_sample(stacks[2], None, &[8]); // row 3: keyed (identity has ended)
        p.add_sample(stacks[1], Some(t), &[16]); // row 4: a thread
        for (stack, thread, w) in [(0, None, 32), (1, None, 64), (3, None, 128), (2, None, 256)] {
            p.add_sample(stacks[stack], thread, &[w]);
        }
        p.add_sample(stacks[1], Some(t), &[512]);
        let rows: Vec<(u32, Option<ThreadId>, u128)> = p
            .rows()
            .map(|r| (r.stack.0, r.thread, r.values[0]))
            .collect();
        let want = [
            (0, None, 33),
            (1, None, 66),
            (3, None, 132),
            (2, None, 264),
            (1, Some(t), 528),
        ];
        assert_eq!(rows, want);
        assert_eq!(p.row_keys.identity, 2);
        assert!(p.stack_rows.len() == 4 && p.stack_rows[..2] == [NO_ROW, NO_ROW]);
        p.validate().unwrap();
    }
}

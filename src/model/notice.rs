//! What reading an input has to tell besides its samples (issue 22): facts the report header
//! shows (the format, pprof's comments, the DWARF unwinding's share of truncated stacks) and
//! things that went wrong without stopping the read (lost records, lossy UTF-8, skipped
//! lines). Each is a value with its data, made where it is found (readers, symbolisation,
//! unwinding); `render::notices` alone makes the words, for the terminal, JSON, the flame
//! graph's title and the fleet's rows alike.

use super::{CallGraph, KallsymsError, ModuleProblem, Unresolved, UnwindCause};
use std::path::PathBuf;

/// One note or warning about an input, in data. A profile keeps two lists of them
/// (`ProfileMeta::notes`, `ProfileMeta::warnings`): which list a notice goes to is decided
/// where it is made, as for the stack copy that is a warning only above 1 % of the stacks.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// The input's format, by its name (`InputFormat::name`).
    Format(&'static str),
    /// Every stack's root frame is a process name (`stackcollapse-perf`'s convention):
    /// read as the thread unless `kept` (`--keep-process-root`); `names` sorted.
    ProcessRoots { names: Vec<String>, kept: bool },
    /// Lines of a text format that are not that format, skipped: what they are not (the
    /// reader's words, which its refusal uses too), how many, and the first (its line number
    /// and what it is, quoted, as the refusal would say it).
    SkippedLines {
        path: PathBuf,
        what: &'static str,
        count: u64,
        first_line: u64,
        first: String,
    },
    /// Folded counts with decimals: weights are the counts times `10^decimals`.
    DecimalCounts { decimals: u32 },
    /// Text of the input that is not UTF-8, read with U+FFFD in place of the bad bytes.
    NotUtf8 { path: PathBuf, place: Utf8Place },
    /// Frame names the demanglers could not read (perf script text).
    StillMangled {
        path: PathBuf,
        count: usize,
        first: String,
    },
    /// perf script text has no inline frames for a frame-pointer recording.
    NoInlineFramesInText,
    /// perf.data: whether inline frames are made, and why.
    InlineFrames { on: bool, why: InlineChoice },
    /// `--comm`/`--pid`/`--tid`/`--time` (`filter`, as given) kept `kept` of `total` samples.
    Filtered {
        filter: String,
        kept: u64,
        total: u64,
    },
    /// perf's LOST records: events the kernel's ring buffer had no room for.
    LostEvents { path: PathBuf, lost: u64 },
    /// perf's LOST_SAMPLES records: samples the kernel could not write, `lost_events` of them
    /// for want of buffer space (also counted by [`Notice::LostEvents`]).
    LostSamples {
        path: PathBuf,
        samples: u64,
        lost_events: u64,
    },
    /// A perf.data stream that ends inside the record at `record_at` (of `record_size`
    /// bytes, when its header was read) after `stream_len` bytes.
    StreamCut {
        path: PathBuf,
        record_at: u64,
        record_size: Option<u64>,
        stream_len: u64,
    },
    /// DWARF unwinding: `truncated` of `stacks` user stacks stopped early, and why (each
    /// cause with its count of stacks).
    DwarfTruncated {
        truncated: u64,
        stacks: u64,
        causes: Vec<(UnwindCause, u64)>,
    },
    /// `percent` of the user stacks were longer than the `size`-byte stack copy.
    StackCopyTooSmall { percent: f64, size: u64 },
    /// DWARF unwinding stopped in `module` for `percent` of the user stacks; `problem` is why
    /// the module could not be unwound through, when known.
    UnwindStopped {
        module: String,
        percent: f64,
        problem: Option<ModuleProblem>,
    },
    /// Samples without the user registers or stack copy DWARF unwinding needs.
    MissingRegisters { samples: u64 },
    /// Samples that declare more valid stack bytes than they copied.
    OversizedDynamicSize { samples: u64 },
    /// Samples that declare a user stack larger than their record.
    OversizedStackCopy { samples: u64 },
    /// Symbolisation: samples, distinct addresses and the modules they are in.
    Symbolized {
        samples: u64,
        addresses: usize,
        modules: usize,
    },
    /// Modules whose addresses found no symbol: each with why and its samples, heaviest first.
    NoSymbols {
        path: PathBuf,
        modules: Vec<MissingSymbols>,
    },
    /// A file found for `module` whose build id `found` is not the recording's `want`.
    BuildIdDiffers {
        file: PathBuf,
        found: String,
        want: String,
        module: String,
    },
    /// A module's DWARF could not be read: `lost` addresses (of `of`) or, with `None`, every
    /// address are shown without inlined frames.
    DwarfUnreadable {
        module: String,
        error: String,
        lost: Option<(u64, usize)>,
    },
    /// A JIT's perf map with lines that are not `START SIZE name`.
    JitMapBadLines {
        path: PathBuf,
        count: usize,
        first_line: u64,
    },
    /// `--kallsyms FILE` could not be read.
    KallsymsUnreadable { path: PathBuf, error: KallsymsError },
    /// The recording names no kernel build id: this machine's kallsyms are used.
    NoKernelBuildId,
    /// A cpuprofile weighed by its nodes' hit counts.
    HitCountWeights,
    /// cpuprofile time deltas out of order, each counted as zero time.
    NegativeIntervals { path: PathBuf, count: u64 },
    /// JFR: the number of chunks read.
    JfrChunks(usize),
    /// JFR: each event type read, with its count, sorted by name.
    JfrEvents(Vec<(String, u64)>),
    /// JFR: `jdk.ExecutionSample`'s periods from the recording's settings.
    JfrPeriods(Vec<String>),
    /// JFR events of a type id no metadata defines, skipped.
    UnknownEventTypes { path: PathBuf, count: u64 },
    /// JFR references that no constant pool holds, read as null.
    DanglingReferences { path: PathBuf, count: u64 },
    /// speedscope's `exporter` field.
    Exporter(String),
    /// speedscope's `name` field.
    ProfileName(String),
    /// speedscope weights or times that were not whole numbers, rounded.
    RoundedCounts { path: PathBuf, count: u64 },
    /// An evented speedscope profile (index `profile`, its `name`) with `open` frames never
    /// closed.
    FramesLeftOpen {
        path: PathBuf,
        profile: usize,
        name: String,
        open: usize,
    },
    /// pprof: a sample type without a name, chosen by index.
    UnnamedSampleType { index: usize, unit: String },
    /// pprof: `default_sample_type` names no sample type; the last one is used.
    UnknownDefaultType { path: PathBuf, name: String },
    /// pprof: the sampling period, its unit and type.
    Period {
        period: i64,
        unit: String,
        name: String,
    },
    /// pprof: the recording's duration.
    DurationNanos(i64),
    /// pprof: a comment.
    Comment(String),
    /// pprof: the first mapping, the main binary, with its build id when it has one.
    MainBinary {
        file: String,
        build_id: Option<String>,
    },
    /// pprof: `drop_frames`, applied as pprof does.
    DropFrames(String),
    /// pprof: `keep_frames`.
    KeepFrames(String),
    /// pprof samples without a stack.
    StacklessSamples(usize),
    /// pprof samples with negative values (a delta profile).
    NegativeSamples(usize),
    /// pprof numeric label keys, not attributed.
    NumericLabels(Vec<String>),
    /// The chosen metric's total is 0: there are no shares to show.
    NoWeight { metric: String },
}

impl Notice {
    /// Whether this is `--comm`/`--pid`/`--tid`/`--time`'s note, which a flame graph's title
    /// repeats.
    pub fn is_filter(&self) -> bool {
        matches!(self, Notice::Filtered { .. })
    }
}

/// Where an input's text was not UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Utf8Place {
    /// Folded lines' frame names: how many lines, the first.
    FoldedLines { lines: u64, first_line: u64 },
    /// perf script lines.
    ScriptLines { lines: u64 },
    /// A JSON file, from byte `offset` on.
    File { offset: usize },
    /// pprof string-table entries, the first at byte `first_offset`.
    StringTable { count: usize, first_offset: usize },
}

/// Why inline frames are on or off for a perf.data recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InlineChoice {
    /// `--inline` or `--no-inline`.
    Asked,
    /// The default for the recording's call-graph mode.
    Default(CallGraph),
}

/// A module without symbols: its name, why, and the samples it is in.
#[derive(Debug, Clone, PartialEq)]
pub struct MissingSymbols {
    pub module: String,
    pub reason: Unresolved,
    pub samples: u64,
}

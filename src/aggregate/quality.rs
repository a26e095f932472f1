//! How far a recording can support the views (issue 14): call chains present, stacks cut
//! short, addresses nobody could name. Measured on every input while it is aggregated, so the
//! report, `explain`, JSON and the gate's guards all read the same figures.
//!
//! - **Ownerless**: a stack whose every frame is transparent (runtime, libc, allocator,
//!   kernel ...) and resolved, although it reaches no thread or process root (`_start`, `start_thread`,
//!   `runtime.goexit` ...). The owner view hands such a stack to its leaf's owner, which is
//!   right for a runtime's own threads (they reach a root) and wrong for a stack that
//!   frame-pointer unwinding cut inside code built without frame pointers (glibc, most -O2
//!   C/C++, Rust's std): the caller that asked for the work is lost.
//! - **Unresolved**: an address without a symbol that nothing places: JIT memory whose perf
//!   map is missing, anonymous memory, or a file no rule claims by module (owner
//!   `unsymbolized`). An address without a symbol in a file a rule claims by module has a
//!   known owner: it is counted as "classified by module only", not as unresolved. Per module,
//!   the unresolved weight carries why ([`why_unresolved`]: what symbolisation found, else
//!   what the module's name tells), so each finding names the cause and the fix.

use super::views::Attribution;
use super::walk::StackFacts;
use crate::classify::ecosystem::Runtime;
use crate::model::StackId;
use crate::model::UNKNOWN;
use crate::model::{
    CallGraph, Frame, FrameKind, ModuleProblem, OwnerId, Profile, Recording, Unresolved,
    UnwindCause, perf,
};
use rustc_hash::FxHashMap;

/// The module a cut stack (`frames`, leaf first) stops in: that of its outermost frame in a
/// known mapping. A truncated DWARF stack and an address perf could not map end in
/// `[unknown]` without a module, so those are skipped: the frame below them is where the
/// unwinding gave up.
pub fn cut_in<'a>(frames: impl DoubleEndedIterator<Item = &'a Frame>) -> Option<&'a str> {
    frames
        .rev()
        .filter_map(|f| f.module.as_deref())
        .find(|m| *m != UNKNOWN)
}

/// Why `module`'s addresses in `profile` have no symbol: what symbolisation found (perf.data),
/// else what the module's name tells (a JIT map, no module, `perf script` text).
pub fn why_unresolved(profile: &Profile, module: Option<&str>) -> Unresolved {
    module
        .and_then(|m| profile.meta.unresolved.iter().find(|u| u.module == m))
        .map_or_else(
            || Unresolved::from_module_name(module),
            |u| u.reason.clone(),
        )
}

/// The recording-quality figures of one input, as weights in its metric.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Quality {
    /// The deepest weighted stack, in frames; 1 (or 0) means there are no call chains.
    pub max_depth: usize,
    /// Weight of stacks of only transparent frames that reach no root.
    pub ownerless: u128,
    /// Weight whose leaf frame is unresolved.
    pub unresolved_leaf: u128,
    /// Weight whose owner frame (the frame the owner view decides by) is unresolved.
    pub unresolved_owner: u128,
    /// Weight with some unresolved frame: what the anywhere view cannot place.
    pub unresolved_anywhere: u128,
    /// Weight whose leaf is an address without a symbol, owned through a module rule.
    pub module_only_leaf: u128,
    /// Unresolved leaf weight per module (`[unknown]` without one), heaviest first, and why.
    pub unresolved_by_module: Vec<UnresolvedWeight>,
    /// Ownerless weight per module its stacks stop in ([`cut_in`]; `[unknown]` when no frame
    /// has one), heaviest first: where frame-pointer or DWARF unwinding gave up.
    pub ownerless_by_module: Vec<(String, u128)>,
    /// Ownerless weight per owner the owner view gives it to (by `OwnerId`; shorter when the
    /// last owners have none): how far a share could be off by the callers the cut hides
    /// (the gate's bounds, issue 54).
    pub ownerless_by_owner: Vec<u128>,
    /// Ownerless weight the owner view gives to an owner of category `user`.
    pub ownerless_user: u128,
    /// How the input was recorded and what was lost doing it, in samples (perf.data only).
    pub recording: Recording,
    /// Weight of stacks through an interpreter's native code (CPython's, Ruby's, the BEAM
    /// emulator's) in which no function of its language appears: what perf records of a
    /// Python program unless Python 3.12+ runs with `-X perf` (issue 28), of a Ruby program
    /// without rbspy, of a BEAM's C code whose Erlang caller a stripped emulator without frame
    /// pointers loses (issue 57).
    pub interpreter_only: u128,
    /// The interpreter of the first such stack.
    pub interpreter: Option<Runtime>,
    /// Weight whose owner frame no rule, preset or guess names (`unclassified` in the owner
    /// view): what `--max-unclassified` guards there (issue 29).
    pub unclassified_owner: u128,
    /// Java methods were named by a perf map (`perf-PID.map`), which has one symbol per
    /// compiled method and no inlining: code the JIT inlined into its caller shows as the
    /// caller's ([`Finding::JitInlining`], issue 53).
    pub jvm_perf_map: bool,
}

/// The value of one scalar quality figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FigureValue {
    Flag(bool),
    /// A weight in the metric's unit, a depth in frames or a count of samples or records.
    Number(u128),
    /// One of a few names; none where the input does not say.
    Name(Option<&'static str>),
}

/// What a quality figure tells of: the stacks as read, or the recording as the recorder
/// described it (perf.data's own counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FigureSource {
    Stacks,
    Recording,
}

/// One scalar quality figure, declared once: the JSON `quality` object and the fleet rows'
/// columns (NDJSON, Parquet schema and builders) all read [`QUALITY_FIGURES`], so that a new
/// figure is one entry there. (The per-module lists and the findings are not scalars: JSON
/// writes them beside these.)
pub struct QualityFigure {
    pub name: &'static str,
    pub source: FigureSource,
    pub value: fn(&Quality) -> FigureValue,
}

impl QualityFigure {
    /// Its value in a quality without weight: which kind of value the figure has.
    pub fn kind(&self) -> FigureValue {
        (self.value)(&Quality::default())
    }
}

/// The scalar quality figures, in the order every output writes them.
pub const QUALITY_FIGURES: [QualityFigure; 13] = {
    use FigureSource::{Recording as R, Stacks as S};
    use FigureValue::{Flag, Name, Number};
    const fn figure(
        name: &'static str,
        source: FigureSource,
        value: fn(&Quality) -> FigureValue,
    ) -> QualityFigure {
        QualityFigure {
            name,
            source,
            value,
        }
    }
    [
        figure("callchains", S, |q| Flag(q.callchains())),
        figure("max_depth", S, |q| Number(q.max_depth as u128)),
        figure("ownerless", S, |q| Number(q.ownerless)),
        figure("unresolved_leaf", S, |q| Number(q.unresolved_leaf)),
        figure("unresolved_owner", S, |q| Number(q.unresolved_owner)),
        figure("unresolved_anywhere", S, |q| Number(q.unresolved_anywhere)),
        figure("module_only_leaf", S, |q| Number(q.module_only_leaf)),
        figure("unclassified_owner", S, |q| Number(q.unclassified_owner)),
        figure("call_graph", R, |q| {
            Name(q.recording.call_graph.map(|m| m.as_str()))
        }),
        figure("samples", R, |q| Number(q.recording.samples.into())),
        figure("lost_events", R, |q| Number(q.recording.lost_events.into())),
        figure("lost_samples", R, |q| {
            Number(q.recording.lost_samples.into())
        }),
        figure("throttles", R, |q| Number(q.recording.throttles.into())),
    ]
};

/// One module's unresolved leaf weight and why its addresses have no symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnresolvedWeight {
    pub module: String,
    pub weight: u128,
    pub reason: Unresolved,
}

impl Quality {
    /// Whether the input has call chains: without them the owner and anywhere views are the
    /// self view again.
    pub fn callchains(&self) -> bool {
        self.max_depth > 1
    }
}

/// The share (percent) of the weight above which a quality figure makes a view unfit: the
/// report warns, and the gate refuses a verdict by default.
pub const UNFIT_PERCENT: f64 = 5.0;

/// `part` as a percentage of `total` (0 for a total of 0).
pub fn percent(part: u128, total: u128) -> f64 {
    if total == 0 {
        0.0
    } else {
        part as f64 * 100.0 / total as f64
    }
}

impl Quality {
    pub fn ownerless_percent(&self, total: u128) -> f64 {
        percent(self.ownerless, total)
    }

    pub fn unresolved_leaf_percent(&self, total: u128) -> f64 {
        percent(self.unresolved_leaf, total)
    }

    pub fn unresolved_owner_percent(&self, total: u128) -> f64 {
        percent(self.unresolved_owner, total)
    }

    /// Adds the figures of another input (`--merge`); the deepest stack is the deeper one.
    pub fn merge(&mut self, other: &Quality) {
        fn merge_modules(into: &mut Vec<(String, u128)>, from: &[(String, u128)]) {
            for (m, w) in from {
                match into.iter_mut().find(|(x, _)| x == m) {
                    Some((_, v)) => *v += w,
                    None => into.push((m.clone(), *w)),
                }
            }
            into.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        }
        // a module unresolved in several inputs keeps the first input's reason
        fn merge_unresolved(into: &mut Vec<UnresolvedWeight>, from: &[UnresolvedWeight]) {
            for m in from {
                match into.iter_mut().find(|x| x.module == m.module) {
                    Some(x) => x.weight += m.weight,
                    None => into.push(m.clone()),
                }
            }
            into.sort_by(|a, b| {
                b.weight
                    .cmp(&a.weight)
                    .then_with(|| a.module.cmp(&b.module))
            });
        }
        self.max_depth = self.max_depth.max(other.max_depth);
        self.ownerless += other.ownerless;
        self.ownerless_user += other.ownerless_user;
        self.unresolved_leaf += other.unresolved_leaf;
        self.unresolved_owner += other.unresolved_owner;
        self.unresolved_anywhere += other.unresolved_anywhere;
        self.module_only_leaf += other.module_only_leaf;
        self.interpreter_only += other.interpreter_only;
        self.interpreter = self.interpreter.or(other.interpreter);
        self.unclassified_owner += other.unclassified_owner;
        self.jvm_perf_map |= other.jvm_perf_map;
        merge_unresolved(&mut self.unresolved_by_module, &other.unresolved_by_module);
        merge_modules(&mut self.ownerless_by_module, &other.ownerless_by_module);
        if self.ownerless_by_owner.len() < other.ownerless_by_owner.len() {
            self.ownerless_by_owner
                .resize(other.ownerless_by_owner.len(), 0);
        }
        for (a, b) in self
            .ownerless_by_owner
            .iter_mut()
            .zip(&other.ownerless_by_owner)
        {
            *a += b;
        }
        self.recording.merge(&other.recording);
    }

    /// How far the stacks cut short could move a share in the owner view, in weight: down
    /// by `mine` (the part of them the owner view gave to the share's owners, whose real
    /// callers could be others'), up by the rest (whose callers could be the share's). The
    /// one home of that rule: the gate's bounds and the report's user bounds both take it.
    pub fn cut_short_bounds(&self, mine: u128) -> (u128, u128) {
        let mine = mine.min(self.ownerless);
        (mine, self.ownerless - mine)
    }

    /// Why stacks stopped short of a root, and what to do; the report's finding and the
    /// gate's refusal say it alike (`render::findings::cut_short_advice`). Frame pointers (or
    /// an input that does not say) want DWARF; a DWARF recording whose unwinding stopped
    /// wants the module's unwind information or a larger stack copy, never the advice to
    /// record DWARF again.
    pub fn ownerless_advice(&self, total: u128) -> CutShortAdvice {
        // where the cut stacks stop, as far as a module says (0.1 % and more)
        let stops: Vec<(String, f64)> = self
            .ownerless_by_module
            .iter()
            .filter(|(m, w)| m != UNKNOWN && percent(*w, total) >= 0.05)
            .take(3)
            .map(|(m, w)| (m.clone(), percent(*w, total)))
            .collect();
        // the module the cut stacks stop in
        let top = self
            .ownerless_by_module
            .iter()
            .map(|(m, _)| m.as_str())
            .find(|m| *m != UNKNOWN);
        let cause = match (top, self.recording.call_graph) {
            // stacks that stop in JIT code: no unwinder goes on from there but the frame
            // pointers the JIT keeps when told to (perf cannot DWARF-unwind JIT code without
            // a jitdump)
            (Some(module), _)
                if perf::is_jit_module(module.rsplit('/').next().unwrap_or(module)) =>
            {
                CutShortCause::Jit {
                    module: module.to_string(),
                }
            }
            // text and pprof inputs do not say how they were recorded
            (_, None) => CutShortCause::Unrecorded,
            (_, Some(CallGraph::Lbr)) => CutShortCause::Lbr,
            (_, Some(CallGraph::Dwarf { copy_size })) => {
                let dwarf = self.recording.dwarf.clone().unwrap_or_default();
                // why the unwinder could not go on from the module the stacks stop in
                let no_info = dwarf
                    .no_unwind_info
                    .iter()
                    .find(|(m, _, _)| Some(m.as_str()) == top)
                    .or(dwarf.no_unwind_info.first())
                    .map(|(m, _, why)| (m.clone(), why.clone()));
                CutShortCause::Dwarf {
                    copy_size,
                    no_info,
                    copy_exhausted: dwarf.copy_exhausted > 0,
                    stopped_in: top.map(str::to_string),
                }
            }
            (_, Some(_)) => CutShortCause::FramePointers,
        };
        CutShortAdvice { stops, cause }
    }

    /// What the figures mean for the answer, each with its figures, cause and fix: empty when
    /// the recording supports every view. Decided here once; `render::findings` puts them
    /// into words for every command that shows a profile (report, explain, JSON, flame, the
    /// split index, diff, `--each` rows).
    pub fn findings(&self, total: u128) -> Vec<Finding> {
        let mut out = Vec::new();
        if total == 0 {
            return out;
        }
        if !self.callchains() {
            out.push(Finding::NoCallChains);
        }
        let ownerless = self.ownerless_percent(total);
        // without call chains every one-frame stack "reaches no root": said above already
        if ownerless > UNFIT_PERCENT && self.callchains() {
            out.push(Finding::CutShort {
                percent: ownerless,
                advice: self.ownerless_advice(total),
            });
        }
        let interpreter = percent(self.interpreter_only, total);
        if interpreter > UNFIT_PERCENT {
            out.push(Finding::InterpreterOnly {
                percent: interpreter,
                runtime: self.interpreter.unwrap_or(Runtime::CPython),
            });
        }
        let (leaf, owner) = (
            self.unresolved_leaf_percent(total),
            self.unresolved_owner_percent(total),
        );
        if leaf > UNFIT_PERCENT || owner > UNFIT_PERCENT {
            out.push(Finding::Unresolved {
                leaf,
                owner,
                modules: self
                    .unresolved_by_module
                    .iter()
                    .take(4)
                    .map(|m| (m.module.clone(), percent(m.weight, total)))
                    .collect(),
            });
            // each module that costs a visible share, with its own cause and fix
            out.extend(
                self.unresolved_by_module
                    .iter()
                    .take(4)
                    .filter(|m| percent(m.weight, total) >= 0.1)
                    .map(|m| Finding::UnresolvedModule {
                        module: m.module.clone(),
                        percent: percent(m.weight, total),
                        reason: m.reason.clone(),
                    }),
            );
        }
        out.extend(self.recording_findings());
        out
    }
}

/// One thing the quality figures say about the answer, with the figures behind it. Made by
/// Why stacks stopped short of a root: where they stop and the cause the recording points
/// at ([`Quality::ownerless_advice`]); `render::findings` words it.
#[derive(Debug, Clone, PartialEq)]
pub struct CutShortAdvice {
    /// Where the cut stacks stop, as far as a module says (0.05 % and more, at most three):
    /// the module and its percent of the weight.
    pub stops: Vec<(String, f64)>,
    pub cause: CutShortCause,
}

/// What cut the stacks short, by how the recording was made.
#[derive(Debug, Clone, PartialEq)]
pub enum CutShortCause {
    /// They stop in JIT-compiled code (`module`), which keeps no frame pointers unless told.
    Jit { module: String },
    /// The input does not say how it was recorded (text, pprof).
    Unrecorded,
    /// Last-branch records hold only the last calls.
    Lbr,
    /// Frame-pointer unwinding stopped in code built without them.
    FramePointers,
    /// DWARF unwinding stopped: in `no_info`'s module (and why) without usable unwind
    /// information, or at the end of a `copy_size`-byte stack copy, or in `stopped_in`.
    Dwarf {
        copy_size: u64,
        no_info: Option<(String, Option<ModuleProblem>)>,
        copy_exhausted: bool,
        stopped_in: Option<String>,
    },
}

/// [`Quality::findings`] (and the `--user` hint by [`suggest_user_prefix`]); `render`
/// alone puts them into words, so every output says the same.
#[derive(Debug, Clone, PartialEq)]
pub enum Finding {
    /// Every stack is one frame: the owner and anywhere views are the self view again.
    NoCallChains,
    /// `percent` of the weight is in stacks cut short; `advice` is why and what to do, as
    /// the gate's refusal says it ([`Quality::ownerless_advice`]).
    CutShort {
        percent: f64,
        advice: CutShortAdvice,
    },
    /// `percent` of the weight is in `runtime`'s native code with no function of its language
    /// in its stack: perf sees the interpreter's C functions, not the program's.
    InterpreterOnly { percent: f64, runtime: Runtime },
    /// Stacks cut short over the guard: user code's owner-view `share` lies in
    /// `[low, high]` whoever their `cut` percent belongs to (issue 54; the gate decides only
    /// where a requirement holds at both ends).
    UserBounds {
        share: f64,
        low: f64,
        high: f64,
        cut: f64,
    },
    /// A JVM recording symbolised by a perf map, where user code owns only `user` percent:
    /// the map has no inlining, so user code the JIT inlined into framework or generated
    /// code shows as theirs; JFR and async-profiler keep inlined frames (issue 53).
    JitInlining { user: f64 },
    /// Leaves and owner frames without a symbol, and the heaviest modules they are in.
    Unresolved {
        leaf: f64,
        owner: f64,
        modules: Vec<(String, f64)>,
    },
    /// One module's unresolved leaves, and why.
    UnresolvedModule {
        module: String,
        percent: f64,
        reason: Unresolved,
    },
    /// DWARF user stacks that stopped before their outermost frame, and the causes found
    /// (each with its percent of the DWARF stacks): the stack copy of `copy_exhausted.1`
    /// bytes running out, modules without usable unwind information (the first three; `more`
    /// when there are others), and the unwinder's other reasons.
    TruncatedDwarf {
        percent: f64,
        truncated: u64,
        stacks: u64,
        copy_exhausted: Option<(f64, u64)>,
        no_unwind_info: Vec<(String, f64)>,
        more_modules: bool,
        other: Vec<(UnwindCause, f64)>,
    },
    /// Samples perf lost (LOST and LOST_SAMPLES records).
    Lost {
        percent: f64,
        events: u64,
        samples: u64,
    },
    /// THROTTLE records.
    Throttled { times: u64 },
    /// `cut` of `stacks` stacks were cut at the recorder's depth limit of `depth` frames
    /// (JFR's default is 64): their callers above the cut are missing.
    DepthCut {
        percent: f64,
        cut: u64,
        stacks: u64,
        depth: usize,
    },
    /// The first `seconds` of the recording are a warm-up: the owner shares of its first time
    /// buckets differ from the settled rest beyond their sampling noise (`report --by time`,
    /// [`crate::aggregate::timeline`]); `owner`'s owner-view share is `during` percent in the
    /// warm-up and `after` percent after it, which starts at `from` (nanoseconds, the
    /// recording's clock: the `--time` slice that skips the warm-up).
    Warmup {
        seconds: f64,
        owner: String,
        during: f64,
        after: f64,
        from: u64,
    },
    /// `--user prefix` would move `owner` percent of the weight from `unclassified` to user
    /// code in the owner view, and `anywhere` percent passes through its frames.
    UserPrefix {
        prefix: String,
        owner: f64,
        anywhere: f64,
    },
}

impl Finding {
    /// Whether this says the answer is unreliable (a warning), not a next step (a hint).
    pub fn is_warning(&self) -> bool {
        !matches!(
            self,
            Finding::UserPrefix { .. } | Finding::UserBounds { .. }
        )
    }
}

/// Under this owner-view share of user code, a JVM recording named by a perf map says that
/// inlining may hide user code ([`Finding::JitInlining`]): where user code is a thin layer,
/// what C2 inlined of it into the framework is a large part of it.
pub const JIT_INLINING_PERCENT: f64 = 10.0;

/// Whether `frame` is a Java method named by a perf map (`perf-PID.map`): a JIT frame with a
/// dotted name (the map's VM stubs, `Interpreter`, have none).
pub fn is_perf_map_java(frame: &Frame) -> bool {
    frame.kind == FrameKind::Jit
        && frame.name.contains('.')
        && frame.module_basename().is_some_and(perf::is_jit_module)
}

impl Quality {
    /// Findings on what the recording says about itself: truncated DWARF stacks, lost
    /// samples and throttling, each with its cause and fix.
    fn recording_findings(&self) -> Vec<Finding> {
        let recording = &self.recording;
        let mut out = Vec::new();
        let truncated = recording.truncated_percent();
        if let (Some(d), true) = (&recording.dwarf, truncated > UNFIT_PERCENT) {
            let share = |n: u64| percent(n.into(), d.stacks.into());
            let copy_size = match recording.call_graph {
                Some(CallGraph::Dwarf { copy_size }) => copy_size,
                _ => 8192,
            };
            out.push(Finding::TruncatedDwarf {
                percent: truncated,
                truncated: d.truncated,
                stacks: d.stacks,
                copy_exhausted: (d.copy_exhausted > 0)
                    .then(|| (share(d.copy_exhausted), copy_size)),
                no_unwind_info: d
                    .no_unwind_info
                    .iter()
                    .take(3)
                    .map(|(module, n, _)| (module.clone(), share(*n)))
                    .collect(),
                more_modules: d.no_unwind_info.len() > 3,
                other: d
                    .other
                    .iter()
                    .map(|(cause, n)| (cause.clone(), share(*n)))
                    .collect(),
            });
        }
        let lost = recording.lost_percent();
        if lost > UNFIT_PERCENT {
            out.push(Finding::Lost {
                percent: lost,
                events: recording.lost_events,
                samples: recording.lost_samples,
            });
        }
        if recording.throttles > 0 {
            out.push(Finding::Throttled {
                times: recording.throttles,
            });
        }
        if let Some(d) = recording.depth_cut.as_ref().filter(|d| d.cut > 0) {
            // any cut stack matters: the callers lost are the ones that own the work
            out.push(Finding::DepthCut {
                percent: d.percent(),
                cut: d.cut,
                stacks: d.stacks,
                depth: d.depth,
            });
        }
        out
    }
}

/// The recording-quality figures of [`Quality`], and the modules the unresolved leaves and
/// the cut-short stacks are in.
#[derive(Default)]
pub(super) struct QualityAccumulator<'p> {
    quality: Quality,
    unresolved_modules: FxHashMap<Option<&'p str>, u128>,
    ownerless_modules: FxHashMap<Option<&'p str>, u128>,
}

impl<'p> QualityAccumulator<'p> {
    /// Adds a row of weight `w`; `user_owner` tells whether its owner-view owner is user
    /// code's (what the user's bounds take from, [`Finding::UserBounds`]).
    pub(super) fn add(
        &mut self,
        profile: &'p Profile,
        stack: StackId,
        facts: &StackFacts,
        w: u128,
        user_owner: bool,
    ) {
        let q = &mut self.quality;
        q.max_depth = q.max_depth.max(facts.depth);
        if facts.ownerless {
            q.ownerless += w;
            let owner = facts.owner.0 as usize;
            if q.ownerless_by_owner.len() <= owner {
                q.ownerless_by_owner.resize(owner + 1, 0);
            }
            q.ownerless_by_owner[owner] += w;
            if user_owner {
                q.ownerless_user += w;
            }
            let frames = profile.stack(stack).iter().map(|&f| profile.frame(f));
            *self.ownerless_modules.entry(cut_in(frames)).or_default() += w;
        }
        if facts.leaf_unresolved {
            q.unresolved_leaf += w;
            let module = facts
                .self_frame
                .and_then(|f| profile.frame(f).module.as_deref());
            *self.unresolved_modules.entry(module).or_default() += w;
        }
        let flags = [
            (facts.owner_unresolved, &mut q.unresolved_owner),
            (facts.any_unresolved, &mut q.unresolved_anywhere),
            (facts.leaf_module_only, &mut q.module_only_leaf),
            (facts.interpreter_only.is_some(), &mut q.interpreter_only),
        ];
        for (on, figure) in flags {
            if on {
                *figure += w;
            }
        }
        if let Some(runtime) = facts.interpreter_only {
            q.interpreter.get_or_insert(runtime);
        }
    }

    pub(super) fn finish(self, profile: &Profile, all: &Attribution) -> Quality {
        let mut quality = self.quality;
        let mut by_module: Vec<UnresolvedWeight> = self
            .unresolved_modules
            .into_iter()
            .map(|(module, weight)| UnresolvedWeight {
                module: module.unwrap_or(UNKNOWN).to_string(),
                weight,
                reason: why_unresolved(profile, module),
            })
            .collect();
        by_module.sort_by(|a, b| {
            b.weight
                .cmp(&a.weight)
                .then_with(|| a.module.cmp(&b.module))
        });
        quality.unresolved_by_module = by_module;
        let mut ownerless_by_module: Vec<(String, u128)> = self
            .ownerless_modules
            .into_iter()
            .map(|(m, w)| (m.unwrap_or(UNKNOWN).to_string(), w))
            .collect();
        ownerless_by_module.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        quality.ownerless_by_module = ownerless_by_module;
        quality.recording = profile.meta.recording.clone();
        quality.jvm_perf_map = profile.frames().any(is_perf_map_java);
        quality.unclassified_owner = all
            .owners
            .get(OwnerId::UNCLASSIFIED.0 as usize)
            .map_or(0, |w| w.owner);
        quality
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A quality with 60 of 100 weight ownerless, stopping in libc, recorded in `mode`.
    fn cut(mode: CallGraph) -> Quality {
        Quality {
            max_depth: 8,
            ownerless: 60,
            ownerless_by_module: vec![("/lib/libc.so.6".to_string(), 60)],
            recording: Recording {
                call_graph: Some(mode),
                samples: 100,
                ..Recording::default()
            },
            ..Quality::default()
        }
    }

    #[test]
    fn merged_inputs_sum_their_figures() {
        let mut a = cut(CallGraph::FramePointers);
        let b = cut(CallGraph::FramePointers);
        a.merge(&b);
        assert_eq!(a.ownerless, 120);
        assert_eq!(
            a.ownerless_by_module,
            vec![("/lib/libc.so.6".to_string(), 120)]
        );
        assert_eq!(a.recording.samples, 200);
        assert_eq!(a.recording.call_graph, Some(CallGraph::FramePointers));
    }
}

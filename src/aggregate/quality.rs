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

use crate::model::UNKNOWN;
use crate::model::{
    CallGraph, Frame, FrameKind, ModuleProblem, OwnerId, Profile, Recording, Unresolved,
    UnwindCause, perf,
};

/// Function names a complete stack ends in: process and thread entry points of C, the JVM,
/// Go, Python, V8 and the kernel. Compared without perf's `@GLIBC...` version suffixes.
const ROOTS: &[&str] = &[
    "_start",
    "__libc_start_main",
    "__libc_start_call_main",
    "start_thread",
    "clone",
    "clone3",
    "__clone",
    "__clone3",
    "thread_native_entry",
    "JavaMain",
    "java_start",
    "runtime.goexit",
    "runtime.main",
    "runtime.mstart",
    "runtime.rt0_go",
    "main",
    "ret_from_fork",
    "ret_from_fork_asm",
    "secondary_startup_64",
    "secondary_startup_64_no_verify",
    "x86_64_start_kernel",
    "<module>",
    // V8's pseudo-frames, which a .cpuprofile puts right under its root (issue 29)
    "(garbage collector)",
    "(program)",
    "(idle)",
];

/// Whether `frame` is a process or thread entry point (a stack that reaches it is whole).
fn is_root(frame: &Frame) -> bool {
    let name = frame.name.split('@').next().unwrap_or(&frame.name);
    ROOTS.contains(&name)
}

/// Whether a stack of only transparent frames (`frames` with their owners, leaf first) was
/// cut short: it reaches no root. Go's unwinder never cuts a stack, and pprof drops
/// `runtime.goexit`, so an outermost `runtime.` frame (a GC worker, a system stack) is a root
/// too. A stack holding an unresolved frame of a known mapping (a JIT map, a binary not
/// found) is not judged: the missing symbols are the cause to report there, and the unresolved
/// figures do. An address perf could not even map (`[unknown]` without a module) is what a
/// cut frame-pointer chain leaves behind, so it does not excuse the stack.
pub fn is_cut_short(frames: &[(&Frame, OwnerId)]) -> bool {
    let Some((outermost, _)) = frames.last() else {
        return false;
    };
    let mapped = |f: &Frame| f.module.as_deref().is_some_and(|m| m != UNKNOWN);
    !outermost.name.starts_with("runtime.")
        && !frames
            .iter()
            .any(|(f, o)| is_root(f) || (is_unresolved(f, *o) && mapped(f)))
}

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

/// Whether `frame`, owned by `owner`, is an address that nothing places (see the module doc).
pub fn is_unresolved(frame: &Frame, owner: OwnerId) -> bool {
    if frame.kind != FrameKind::Unknown {
        return false;
    }
    owner == OwnerId::UNSYMBOLIZED
        || frame.module.as_deref().is_none_or(|m| {
            let basename = m.rsplit('/').next().unwrap_or(m);
            perf::is_jit_module(basename) || m == "//anon" || m.starts_with("[anon")
        })
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
    /// Weight of stacks through CPython's interpreter ([`is_cpython_module`]) in which no
    /// Python function appears: what perf records of a Python program unless Python 3.12+
    /// runs with `-X perf` (issue 28).
    pub interpreter_only: u128,
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
    /// `percent` of the weight is in CPython's interpreter with no Python function in its
    /// stack: perf sees the interpreter's C functions, not the program's.
    InterpreterOnly { percent: f64 },
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

/// Whether `module` (a path or file name) is CPython's interpreter: the `python3.X` executable
/// or `libpython3.X.so`.
pub fn is_cpython_module(module: &str) -> bool {
    let base = module.rsplit('/').next().unwrap_or(module);
    let version = base
        .strip_prefix("libpython3")
        .or_else(|| base.strip_prefix("python3"));
    version.is_some_and(|v| {
        v.is_empty() || v.starts_with('.') && !v.contains("-config") && !v.ends_with(".py")
    })
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

/// Whether `frame` is a Python function: py-spy's and async-profiler-like `_[0]` frames, or
/// a Python 3.12+ `-X perf` trampoline (`py::work:/app/churn.py`).
pub fn is_python_frame(frame: &Frame) -> bool {
    frame.kind == FrameKind::Interpreted || frame.name.starts_with("py::")
}

/// What one frame tells about CPython's interpreter, judged once per distinct frame: a
/// stack's verdict ([`is_interpreter_only`]) then reads these instead of every frame's texts.
#[derive(Debug, Clone, Copy, Default)]
pub struct PythonRole {
    /// Code of CPython's interpreter ([`is_cpython_module`]).
    interpreter: bool,
    /// A Python function ([`is_python_frame`]).
    python: bool,
}

impl PythonRole {
    pub fn of(frame: &Frame) -> PythonRole {
        PythonRole {
            interpreter: frame.module.as_deref().is_some_and(is_cpython_module),
            python: is_python_frame(frame),
        }
    }
}

/// Whether a stack runs in CPython's interpreter with no Python function in it.
pub fn is_interpreter_only(roles: impl Iterator<Item = PythonRole>) -> bool {
    let (mut interpreter, mut python) = (false, false);
    for role in roles {
        interpreter |= role.interpreter;
        python |= role.python;
    }
    interpreter && !python
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

/// Package roots too broad to be one project's code on their own: a prefix starting with one
/// of them takes its second segment too (`io.ktor.`, `com.example.`).
const BROAD_ROOTS: &[&str] = &[
    "com", "org", "io", "net", "dev", "me", "edu", "uk", "de", "fr", "github", "gitlab",
];

/// The package or crate prefix of a function name (`bench.MainKt.main` → `bench.`,
/// `logcrunch::parse::line` → `logcrunch::`, `main.handle` → `main.`); `None` for a name
/// without one (a C function).
fn prefix_of(name: &str) -> Option<&str> {
    let name = name.trim_start_matches(['<', '&', '*']);
    // the first `::`, `.` or `/`: one pass over the bytes, which every distinct frame pays
    let first = |s: &str| {
        let bytes = s.as_bytes();
        bytes.iter().enumerate().find_map(|(at, b)| match b {
            b'.' => Some((at, ".")),
            b'/' => Some((at, "/")),
            b':' if bytes.get(at + 1) == Some(&b':') => Some((at, "::")),
            _ => None,
        })
    };
    let (at, sep) = first(name)?;
    let head = &name[..at];
    if head.is_empty()
        || !head
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
    {
        return None;
    }
    let prefix_end = at + sep.len();
    // GCC's and LLVM's clone suffixes (`table_round.constprop.0`) are no package
    const CLONE_SUFFIXES: [&str; 7] = [
        "constprop",
        "isra",
        "part",
        "cold",
        "lto_priv",
        "localalias",
        "llvm",
    ];
    if sep == "."
        && CLONE_SUFFIXES
            .iter()
            .any(|c| name[prefix_end..].starts_with(c))
    {
        return None;
    }
    if BROAD_ROOTS.contains(&head) {
        let rest = &name[prefix_end..];
        let (at2, sep2) = first(rest)?;
        return Some(&name[..prefix_end + at2 + sep2.len()]);
    }
    Some(&name[..prefix_end])
}

/// Who owns a frame, as the `--user` hint weighs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// No rule, guess or preset: `--user` would take it.
    Unclassified,
    /// User code already (a `--user`, a rule, or the guessed own code).
    User,
    /// A preset, a rule or a guess owns it as other than user code.
    Other,
}

/// The `--user PREFIX` hint: the prefix and what it would move to user code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserHint {
    pub prefix: String,
    /// Owner-view weight `--user PREFIX` moves from `unclassified` to user code.
    pub owner: u128,
    /// Weight of the stacks through a frame under the prefix: user code's anywhere weight
    /// gains it (filled in by `aggregate`, which walks the stacks once more for it).
    pub anywhere: u128,
}

/// A frame as the `--user` hint weighs it: its name, who owns it, the owner-view weight it
/// decides (as the owner frame) and its inclusive weight.
pub type HintFrame<'a> = (&'a str, Claim, u128, u128);

/// The `--user PREFIX` hint (issue 28): the package prefix of unclassified frames that would
/// move the most weight to user code in the owner view (then the heaviest frame's inclusive
/// weight decides), with that owner-view weight; `None` unless the prefix's heaviest frame
/// carries at least 1 % of `total`. `anywhere` is left 0 for the caller.
///
/// The owner-view weight is exactly what `--user PREFIX` moves: the prefix's frames are all
/// unclassified (hence not transparent), so a stack changes owner exactly when its owner
/// frame is one of them. A prefix under which a preset, a rule or a guess owns any frame as
/// non-user code is never proposed: `--user` comes first and would take that code from its
/// owner (a framework's `io.ktor.`, a dependency's crate once it is guessed as a library).
pub fn suggest_user_prefix(weights: PrefixWeights<'_>, total: u128) -> Option<UserHint> {
    weights
        .by_prefix
        .into_iter()
        .filter_map(|(p, w)| Some((p, w?)))
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
        .filter(|(_, (_, inclusive))| percent(*inclusive, total) >= 1.0)
        .map(|(p, (owner, _))| UserHint {
            prefix: p.to_string(),
            owner,
            anywhere: 0,
        })
}

/// What [`suggest_user_prefix`] weighs, per package prefix: the owner-view weight moved and
/// the heaviest inclusive frame; `None` once a frame under it is owned as non-user code.
/// Sums of disjoint sets of frames merge into the sum of their union, so the frames can be
/// weighed on every core.
#[derive(Debug, Default)]
pub struct PrefixWeights<'a> {
    // a map, not a list searched per frame: millions of distinct prefixes made that quadratic
    by_prefix: rustc_hash::FxHashMap<&'a str, Option<(u128, u128)>>,
}

impl<'a> PrefixWeights<'a> {
    pub fn of(frames: impl Iterator<Item = HintFrame<'a>>) -> PrefixWeights<'a> {
        let mut weights = PrefixWeights::default();
        frames.for_each(|frame| weights.add(frame));
        weights
    }

    pub fn add(&mut self, (name, claim, owner, inclusive): HintFrame<'a>) {
        let Some(prefix) = prefix_of(name) else {
            return;
        };
        let entry = self.by_prefix.entry(prefix).or_insert(Some((0, 0)));
        match claim {
            Claim::Unclassified => {
                *entry = entry.map(|(o, i)| (o + owner, i.max(inclusive)));
            }
            Claim::Other => *entry = None,
            Claim::User => {}
        }
    }

    /// The weights of both sets of frames.
    pub fn merge(mut self, other: PrefixWeights<'a>) -> PrefixWeights<'a> {
        if self.by_prefix.len() < other.by_prefix.len() {
            return other.merge(self);
        }
        for (prefix, theirs) in other.by_prefix {
            let ours = self.by_prefix.entry(prefix).or_insert(Some((0, 0)));
            *ours = ours
                .zip(theirs)
                .map(|((o, i), (o2, i2))| (o + o2, i.max(i2)));
        }
        self
    }
}

/// Whether `name` is under the package prefix `prefix` as [`prefix_of`] cuts it.
pub fn has_prefix(name: &str, prefix: &str) -> bool {
    prefix_of(name) == Some(prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_prefixes_of_each_ecosystem() {
        assert_eq!(prefix_of("bench.MainKt$main$1.invoke"), Some("bench."));
        assert_eq!(prefix_of("io.ktor.server.Foo.bar"), Some("io.ktor."));
        assert_eq!(prefix_of("logcrunch::parse::line"), Some("logcrunch::"));
        assert_eq!(prefix_of("main.handleOrders"), Some("main."));
        assert_eq!(
            prefix_of("<logcrunch::X as core::fmt::Display>::fmt"),
            Some("logcrunch::")
        );
        assert_eq!(prefix_of("table_put"), None);
        assert_eq!(prefix_of("table_round.constprop.0"), None);
        assert_eq!(prefix_of("sort_files.isra.0"), None);
        assert_eq!(prefix_of("[unknown]"), None);
    }

    #[test]
    fn the_hint_weighs_what_user_would_move_and_spares_owned_prefixes() {
        use Claim::*;
        let hint = |prefix: &str, owner| {
            Some(UserHint {
                prefix: prefix.into(),
                owner,
                anywhere: 0,
            })
        };
        // by hand: `app.` owns 60 + 30 of the owner view (two frames: the old hint said 60,
        // its heaviest frame); `lib.` would move 95 but a preset owns `lib.Z.z`, and `--user
        // lib.` would take that from it; `work` has no prefix
        let frames = [
            ("app.A.run", Unclassified, 60, 70),
            ("app.B.go", Unclassified, 30, 30),
            ("app.C.done", User, 40, 40),
            ("lib.X.y", Unclassified, 95, 95),
            ("lib.Z.z", Other, 0, 0),
            ("work", Unclassified, 99, 99),
        ];
        assert_eq!(
            suggest_user_prefix(PrefixWeights::of(frames.into_iter()), 1000),
            hint("app.", 90)
        );
        // frames that own nothing in the owner view (callers of a library that owns it all)
        // are still proposed by their inclusive weight: the anywhere view gains them
        let callers = [("bench.Main.run", Unclassified, 0, 500)];
        assert_eq!(
            suggest_user_prefix(PrefixWeights::of(callers.into_iter()), 1000),
            hint("bench.", 0)
        );
        // under 1 % of the total: no hint
        let tiny = [("app.A.run", Unclassified, 9, 9)];
        assert_eq!(
            suggest_user_prefix(PrefixWeights::of(tiny.into_iter()), 1000),
            None
        );
        // a prefix of user code only: nothing to move
        let user = [("app.A.run", User, 500, 500)];
        assert_eq!(
            suggest_user_prefix(PrefixWeights::of(user.into_iter()), 1000),
            None
        );
        assert!(has_prefix("<app::X as core::fmt::Display>::fmt", "app::"));
        assert!(!has_prefix("apple::x", "app::"));
        // weighed in two parts on two cores, merged: the same hint at every cut
        for cut in 0..=frames.len() {
            let (a, b) = frames.split_at(cut);
            let merged =
                PrefixWeights::of(a.iter().copied()).merge(PrefixWeights::of(b.iter().copied()));
            assert_eq!(
                suggest_user_prefix(merged, 1000),
                hint("app.", 90),
                "cut at {cut}"
            );
        }
    }

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
    fn cpython_interpreter_modules_and_python_frames() {
        for m in [
            "/usr/bin/python3.11",
            "python3",
            "/opt/lib/libpython3.12.so.1.0",
        ] {
            assert!(is_cpython_module(m), "{m}");
        }
        for m in [
            "/usr/bin/python3.11-config",
            "python3-foo",
            "/lib/libc.so.6",
        ] {
            assert!(!is_cpython_module(m), "{m}");
        }
        let native = |name: &str, module: &str| Frame {
            name: name.into(),
            module: Some(module.into()),
            ..Frame::default()
        };
        let eval = native("_PyEval_EvalFrameDefault", "/usr/bin/python3.11");
        let main = native("main", "/usr/bin/python3.11");
        let only =
            |frames: &[&Frame]| is_interpreter_only(frames.iter().map(|f| PythonRole::of(f)));
        assert!(only(&[&eval, &main]));
        // a Python 3.12 `-X perf` trampoline names the Python function
        let py = native("py::work:/app/churn.py", "/tmp/perf-1.map");
        assert!(!only(&[&eval, &py, &main]));
        let libc = native("memcpy", "/lib/libc.so.6");
        assert!(!only(&[&libc]));
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

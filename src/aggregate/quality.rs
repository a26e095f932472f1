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

use crate::model::{CallGraph, Frame, FrameKind, OwnerId, Profile, Recording, Unresolved, perf};

/// Function names a complete stack ends in: process and thread entry points of C, the JVM,
/// Go, Python and the kernel. Compared without perf's `@GLIBC...` version suffixes.
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
    let mapped = |f: &Frame| f.module.as_deref().is_some_and(|m| m != "[unknown]");
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
        .find(|m| *m != "[unknown]")
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
    /// How the input was recorded and what was lost doing it, in samples (perf.data only).
    pub recording: Recording,
}

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
        self.unresolved_leaf += other.unresolved_leaf;
        self.unresolved_owner += other.unresolved_owner;
        self.unresolved_anywhere += other.unresolved_anywhere;
        self.module_only_leaf += other.module_only_leaf;
        merge_unresolved(&mut self.unresolved_by_module, &other.unresolved_by_module);
        merge_modules(&mut self.ownerless_by_module, &other.ownerless_by_module);
        self.recording.merge(&other.recording);
    }

    /// One line of figures for a report header; what the recording says about itself (the
    /// call-graph mode, truncated DWARF stacks, loss, throttling) where it says anything.
    pub fn summary(&self, total: u128) -> String {
        let recording = &self.recording;
        let mode = match recording.call_graph {
            Some(CallGraph::Dwarf { copy_size }) => {
                format!(" (--call-graph dwarf, {copy_size}-byte stack copy)")
            }
            Some(mode @ (CallGraph::FramePointers | CallGraph::Lbr)) => {
                format!(" (--call-graph {})", mode.as_str())
            }
            Some(CallGraph::None) => " (recorded without -g)".to_string(),
            None => String::new(),
        };
        let chains = if self.callchains() {
            format!("call chains up to {} frames{mode}", self.max_depth)
        } else {
            format!("no call chains{mode}")
        };
        let mut line = format!(
            "quality: {chains}; ownerless {:.1}%; unresolved {:.1}% of leaves, {:.1}% of owner \
             frames; classified by module only {:.1}% of leaves",
            self.ownerless_percent(total),
            self.unresolved_leaf_percent(total),
            self.unresolved_owner_percent(total),
            percent(self.module_only_leaf, total)
        );
        if let Some(d) = &recording.dwarf {
            line.push_str(&format!(
                "; DWARF stacks truncated {:.1}% ({} of {})",
                recording.truncated_percent(),
                d.truncated,
                d.stacks
            ));
        }
        if recording.lost() > 0 {
            line.push_str(&format!(
                "; lost {:.1}% of samples",
                recording.lost_percent()
            ));
        }
        if recording.throttles > 0 {
            line.push_str(&format!("; throttled {} times", recording.throttles));
        }
        if let Some(d) = recording.depth_cut.as_ref().filter(|d| d.cut > 0) {
            line.push_str(&format!(
                "; stacks cut at {} frames {:.1}% ({} of {})",
                d.depth,
                d.percent(),
                d.cut,
                d.stacks
            ));
        }
        line
    }

    /// Why stacks stopped short of a root, and what to do; the report's finding and the
    /// gate's refusal say it alike. Frame pointers (or an input that does not say) want DWARF;
    /// a DWARF recording whose unwinding stopped wants the module's unwind information or a
    /// larger stack copy, never the advice to record DWARF again.
    pub fn ownerless_advice(&self, total: u128) -> String {
        // where the cut stacks stop, as far as a module says (0.1 % and more)
        let stops: Vec<String> = self
            .ownerless_by_module
            .iter()
            .filter(|(m, w)| m != "[unknown]" && percent(*w, total) >= 0.05)
            .take(3)
            .map(|(m, w)| format!("{m} {:.1}%", percent(*w, total)))
            .collect();
        let stops = if stops.is_empty() {
            String::new()
        } else {
            format!(", here in {}", stops.join(", "))
        };
        let copy_size = match self.recording.call_graph {
            Some(CallGraph::Dwarf { copy_size }) => copy_size,
            // text and pprof inputs do not say how they were recorded
            None => {
                return format!(
                    "frame-pointer unwinding stops in code built without frame pointers \
                     (glibc, -O2 C/C++, Rust's std), DWARF unwinding in a binary without unwind \
                     information or at the end of the stack copy{stops}; record with \
                     `--call-graph dwarf` (or `lbr`), or if it was, with the binaries' debug \
                     info installed and a larger `dwarf,SIZE`"
                );
            }
            Some(CallGraph::Lbr) => {
                return format!(
                    "the CPU's branch records hold only the last 16 to 32 calls{stops}; record \
                     with `--call-graph dwarf`"
                );
            }
            Some(_) => {
                return format!(
                    "frame-pointer unwinding stops in code built without frame pointers \
                     (glibc, -O2 C/C++, Rust's std){stops}; record with `--call-graph dwarf` \
                     (or `lbr`)"
                );
            }
        };
        let dwarf = self.recording.dwarf.clone().unwrap_or_default();
        let mut causes = Vec::new();
        // the module the cut stacks stop in, and why the unwinder could not go on from it
        let top = self
            .ownerless_by_module
            .iter()
            .map(|(m, _)| m.as_str())
            .find(|m| *m != "[unknown]");
        let no_info = dwarf
            .no_unwind_info
            .iter()
            .find(|(m, _, _)| Some(m.as_str()) == top)
            .or(dwarf.no_unwind_info.first());
        if let Some((module, _, why)) = no_info {
            causes.push(format!(
                "DWARF unwinding stopped in {module}{}, which has no usable unwind \
                 information: give whose the binary the program ran with (--binary-path) or \
                 install its debug info",
                why.as_deref().map_or(String::new(), |w| format!(" ({w})"))
            ));
        }
        if dwarf.copy_exhausted > 0 {
            causes.push(format!(
                "the {copy_size}-byte stack copy ran out: record with `--call-graph dwarf,{}`",
                crate::model::larger_stack_copy(copy_size)
            ));
        }
        if causes.is_empty() {
            causes.push(match top {
                Some(module) => format!(
                    "DWARF unwinding stopped in {module}, whose unwind information (`.eh_frame`) \
                     did not reach a caller: install its debug info, or give whose the binary \
                     the program ran with (--binary-path)"
                ),
                None => "DWARF unwinding stopped early (the DWARF unwinding note says why)".into(),
            });
        }
        format!(
            "the recording has DWARF call graphs, but they stop short{stops}: {}",
            causes.join("; or ")
        )
    }

    /// What the figures mean for the answer, with the cause and the fix: empty when the
    /// recording supports every view.
    pub fn findings(&self, total: u128) -> Vec<String> {
        let mut out = Vec::new();
        if total == 0 {
            return out;
        }
        if !self.callchains() {
            out.push(
                "no call chains (every stack is one frame): the owner and anywhere views are the \
                 self view again; record with `perf record -g` (or `--call-graph dwarf`)"
                    .to_string(),
            );
        }
        let ownerless = self.ownerless_percent(total);
        // without call chains every one-frame stack "reaches no root": said above already
        if ownerless > UNFIT_PERCENT && self.callchains() {
            out.push(format!(
                "{ownerless:.1}% of the weight is in stacks of only transparent frames that \
                 reach no thread root (_start, start_thread, ...): stacks cut short, whose \
                 weight the owner view gives to the leaf's owner; {}",
                self.ownerless_advice(total)
            ));
        }
        let (leaf, owner) = (
            self.unresolved_leaf_percent(total),
            self.unresolved_owner_percent(total),
        );
        if leaf > UNFIT_PERCENT || owner > UNFIT_PERCENT {
            let modules: Vec<String> = self
                .unresolved_by_module
                .iter()
                .take(4)
                .map(|m| format!("{} {:.1}%", m.module, percent(m.weight, total)))
                .collect();
            out.push(format!(
                "{leaf:.1}% of the leaves and {owner:.1}% of the owner frames are addresses \
                 without a symbol ({}); per module, the cause and the fix follow",
                modules.join(", ")
            ));
            // each module that costs a visible share, with its own cause and fix
            out.extend(
                self.unresolved_by_module
                    .iter()
                    .take(4)
                    .filter(|m| percent(m.weight, total) >= 0.1)
                    .map(|m| {
                        format!(
                            "{}: {:.1}% of the leaves unresolved: {}; fix: {}",
                            m.module,
                            percent(m.weight, total),
                            m.reason.cause(),
                            m.reason.fix()
                        )
                    }),
            );
        }
        out.extend(self.recording_findings());
        out
    }
}

impl Quality {
    /// Findings on what the recording says about itself: truncated DWARF stacks, lost
    /// samples and throttling, each with its cause and fix.
    fn recording_findings(&self) -> Vec<String> {
        let recording = &self.recording;
        let mut out = Vec::new();
        let truncated = recording.truncated_percent();
        if let (Some(d), true) = (&recording.dwarf, truncated > UNFIT_PERCENT) {
            let mut causes = Vec::new();
            if d.copy_exhausted > 0 {
                let size = match recording.call_graph {
                    Some(CallGraph::Dwarf { copy_size }) => copy_size,
                    _ => 8192,
                };
                causes.push(format!(
                    "{:.1}% ran out of the {size}-byte stack copy (record with `--call-graph \
                     dwarf,{}`)",
                    percent(d.copy_exhausted.into(), d.stacks.into()),
                    crate::model::larger_stack_copy(size)
                ));
            }
            let modules: Vec<String> = d
                .no_unwind_info
                .iter()
                .take(3)
                .map(|(module, n, _)| {
                    format!("{module} {:.1}%", percent((*n).into(), d.stacks.into()))
                })
                .collect();
            if !modules.is_empty() {
                causes.push(format!(
                    "stopped in a module without usable unwind information ({}{}): give whose \
                     the binaries the program ran with (--binary-path) or install their debug \
                     info",
                    modules.join(", "),
                    if d.no_unwind_info.len() > 3 {
                        ", ..."
                    } else {
                        ""
                    }
                ));
            }
            for (cause, n) in d.other.iter().take(3) {
                causes.push(format!(
                    "{cause} {:.1}%",
                    percent((*n).into(), d.stacks.into())
                ));
            }
            out.push(format!(
                "{truncated:.1}% of the DWARF user stacks ({} of {} samples) stopped before \
                 their outermost frame: the anywhere view misses the callers above the cut, \
                 and a cut that leaves only transparent frames counts as ownerless; causes: {}",
                d.truncated,
                d.stacks,
                causes.join("; ")
            ));
        }
        let lost = recording.lost_percent();
        if lost > UNFIT_PERCENT {
            out.push(format!(
                "{lost:.1}% of the samples were lost ({} in LOST records, {} counted in \
                 LOST_SAMPLES): the shares are of the samples kept, and the loss comes in bursts \
                 when perf falls behind, so it is not spread evenly over the code; {}",
                recording.lost_events,
                recording.lost_samples,
                crate::model::LOST_FIX
            ));
        }
        if recording.throttles > 0 {
            out.push(format!(
                "the kernel throttled sampling {} times (THROTTLE records): while throttled \
                 nothing is sampled, so the busiest moments are under-represented; {}",
                recording.throttles,
                crate::model::THROTTLE_FIX
            ));
        }
        if let Some(d) = recording.depth_cut.as_ref().filter(|d| d.cut > 0) {
            // any cut stack matters: the callers lost are the ones that own the work
            out.push(format!(
                "{:.1}% of the stacks ({} of {}) were cut at the recorder's depth limit of {} \
                 frames: their callers above the cut are missing, so the owner view may hand \
                 them to the framework or runtime frames below the cut and the anywhere view \
                 misses the cut owners; record with a deeper limit \
                 (`-XX:FlightRecorderOptions:stackdepth={}`, or async-profiler's `jstackdepth=`)",
                d.percent(),
                d.cut,
                d.stacks,
                d.depth,
                (d.depth * 4).clamp(256, 2048)
            ));
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
pub fn package_prefix(name: &str) -> Option<String> {
    let name = name.trim_start_matches(['<', '&', '*']);
    let separators = ["::", ".", "/"];
    let first = |s: &str| {
        separators
            .iter()
            .filter_map(|sep| s.find(sep).map(|at| (at, *sep)))
            .min()
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
        return Some(name[..prefix_end + at2 + sep2.len()].to_string());
    }
    Some(name[..prefix_end].to_string())
}

/// The `--user PREFIX` that would claim the heaviest unclassified frames, with the weight of
/// the heaviest frame it claims (a lower bound of what it would move): the prefix of the most
/// weight among `frames` (unclassified frames and their inclusive weights), when that weight is
/// at least 1 % of `total`.
pub fn suggest_user_prefix<'a>(
    frames: impl Iterator<Item = (&'a str, u128)>,
    total: u128,
) -> Option<(String, u128)> {
    // a map, not a list searched per frame: millions of distinct prefixes made that quadratic
    let mut by_prefix: rustc_hash::FxHashMap<String, u128> = Default::default();
    for (name, weight) in frames {
        let Some(prefix) = package_prefix(name) else {
            continue;
        };
        let w = by_prefix.entry(prefix).or_default();
        *w = (*w).max(weight);
    }
    by_prefix
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
        .filter(|(_, w)| percent(*w, total) >= 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_prefixes_of_each_ecosystem() {
        assert_eq!(
            package_prefix("bench.MainKt$main$1.invoke").as_deref(),
            Some("bench.")
        );
        assert_eq!(
            package_prefix("io.ktor.server.Foo.bar").as_deref(),
            Some("io.ktor.")
        );
        assert_eq!(
            package_prefix("logcrunch::parse::line").as_deref(),
            Some("logcrunch::")
        );
        assert_eq!(
            package_prefix("main.handleOrders").as_deref(),
            Some("main.")
        );
        assert_eq!(
            package_prefix("<logcrunch::X as core::fmt::Display>::fmt").as_deref(),
            Some("logcrunch::")
        );
        assert_eq!(package_prefix("table_put"), None);
        assert_eq!(package_prefix("table_round.constprop.0"), None);
        assert_eq!(package_prefix("sort_files.isra.0"), None);
        assert_eq!(package_prefix("[unknown]"), None);
    }

    #[test]
    fn the_heaviest_prefix_is_suggested_above_one_percent() {
        let frames = [
            ("app.A.run", 60),
            ("app.B.go", 30),
            ("lib.X.y", 50),
            ("work", 90),
        ];
        assert_eq!(
            suggest_user_prefix(frames.into_iter(), 100),
            Some(("app.".to_string(), 60))
        );
        assert_eq!(
            suggest_user_prefix([("app.A.run", 1)].into_iter(), 1000),
            None
        );
    }

    /// A quality with 60 of 100 weight ownerless, stopping in libc, recorded in `mode`.
    fn cut(mode: CallGraph, dwarf: Option<crate::model::TruncatedStacks>) -> Quality {
        Quality {
            max_depth: 8,
            ownerless: 60,
            ownerless_by_module: vec![("/lib/libc.so.6".to_string(), 60)],
            recording: Recording {
                call_graph: Some(mode),
                samples: 100,
                dwarf,
                ..Recording::default()
            },
            ..Quality::default()
        }
    }

    #[test]
    fn ownerless_advice_follows_the_recording_mode() {
        let fp = cut(CallGraph::FramePointers, None).findings(100).join("\n");
        assert!(fp.contains("60.0% of the weight"), "{fp}");
        assert!(fp.contains("here in /lib/libc.so.6 60.0%"), "{fp}");
        assert!(fp.contains("record with `--call-graph dwarf`"), "{fp}");

        let stopped = crate::model::TruncatedStacks {
            stacks: 100,
            truncated: 60,
            copy_exhausted: 0,
            no_unwind_info: vec![(
                "/lib/libc.so.6".to_string(),
                60,
                Some("no .eh_frame".to_string()),
            )],
            other: Vec::new(),
        };
        let dwarf = cut(CallGraph::Dwarf { copy_size: 4096 }, Some(stopped));
        let text = dwarf.findings(100).join("\n");
        // already DWARF: the cause is the module, never "record with DWARF" again
        assert!(!text.contains("record with `--call-graph dwarf`"), "{text}");
        assert!(
            text.contains("unwinding stopped in /lib/libc.so.6 (no .eh_frame)"),
            "{text}"
        );
        assert!(text.contains("install its debug info"), "{text}");
        // and the truncated stacks are a finding of their own
        assert!(
            text.contains("60.0% of the DWARF user stacks (60 of 100 samples)"),
            "{text}"
        );

        let exhausted = crate::model::TruncatedStacks {
            stacks: 100,
            truncated: 60,
            copy_exhausted: 60,
            no_unwind_info: Vec::new(),
            other: Vec::new(),
        };
        let text = cut(CallGraph::Dwarf { copy_size: 4096 }, Some(exhausted))
            .findings(100)
            .join("\n");
        assert!(text.contains("`--call-graph dwarf,16384`"), "{text}");
    }

    #[test]
    fn loss_and_throttling_are_findings_with_their_fix() {
        let mut q = Quality {
            max_depth: 3,
            ..Quality::default()
        };
        q.recording = Recording {
            call_graph: Some(CallGraph::FramePointers),
            samples: 940,
            lost_events: 60,
            ..Recording::default()
        };
        let text = q.findings(100).join("\n");
        assert!(text.contains("6.0% of the samples were lost"), "{text}");
        assert!(text.contains("-m 1024"), "{text}");
        assert!(q.summary(100).contains("lost 6.0% of samples"));
        // 1 % lost is below the unfit share: the reader's warning says it, no finding
        q.recording.lost_events = 9;
        q.recording.samples = 891;
        assert!(q.findings(100).is_empty(), "{:?}", q.findings(100));
        q.recording.throttles = 3;
        let text = q.findings(100).join("\n");
        assert!(text.contains("throttled sampling 3 times"), "{text}");
        assert!(text.contains("kernel.perf_event_max_sample_rate"), "{text}");
    }

    #[test]
    fn without_call_chains_only_that_is_said() {
        let q = Quality {
            max_depth: 1,
            ownerless: 80,
            recording: Recording {
                call_graph: Some(CallGraph::None),
                ..Recording::default()
            },
            ..Quality::default()
        };
        let findings = q.findings(100);
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(findings[0].contains("no call chains"));
        assert!(
            q.summary(100)
                .contains("no call chains (recorded without -g)")
        );
    }

    #[test]
    fn merged_inputs_sum_their_figures() {
        let mut a = cut(CallGraph::FramePointers, None);
        let b = cut(CallGraph::FramePointers, None);
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

//! The findings of [`crate::aggregate::quality`] in words (issue 28): what a recording unfit
//! for a view means for the answer, with its cause and fix, and the `--user` hint. Every
//! command that shows a profile renders them from here (the report's header, `explain`, JSON,
//! `flame` on stderr and in the SVG's subtitle, the split index, `diff`, `--each` rows), so
//! no output hides what another says.

use super::pct;
use crate::aggregate::quality::{CutShortAdvice, CutShortCause, Finding, Quality, percent};
use crate::classify::ecosystem::Runtime;
use crate::model::CallGraph;

/// One finding as a sentence, without its `warning:`/`hint:` tag (JSON's `findings` hold
/// these).
pub fn text(finding: &Finding) -> String {
    match finding {
        Finding::NoCallChains => "no call chains (every stack is one frame): the owner and \
             anywhere views are the self view again; record with `perf record -g` (or \
             `--call-graph dwarf`)"
            .to_string(),
        Finding::CutShort { percent, advice } => format!(
            "{percent:.1}% of the weight is in stacks of only transparent frames that reach no \
             thread root (_start, start_thread, ...): stacks cut short, whose weight the owner \
             view gives to the leaf's owner; {}",
            cut_short_advice(advice)
        ),
        Finding::UserBounds {
            share,
            low,
            high,
            cut,
        } => format!(
            "user code's owner-view share, {share:.1}%, lies between {low:.1}% and {high:.1}% \
             whoever the {cut:.1}% in stacks cut short belongs to (their callers are unseen); \
             `whose gate` decides a requirement only where it holds at both ends"
        ),
        Finding::JitInlining { user } => format!(
            "user code owns {user:.1}% by a JVM perf map, which names each compiled method but \
             not what the JIT inlined into it: where C2 inlined user code into framework or \
             generated code, its time shows as theirs, so user code may own more; JDK Flight \
             Recorder keeps inlined frames (`java -XX:StartFlightRecording=duration=60s,\
             filename=rec.jfr ...` or `jcmd PID JFR.start duration=60s filename=rec.jfr`, then \
             `whose report rec.jfr`), as does async-profiler (`asprof -d 60 -e cpu -o jfr -f \
             rec.jfr PID`); JFR's execution samples leave out native and kernel time, so its \
             share is of the Java threads' time"
        ),
        Finding::InterpreterOnly { percent, runtime } => interpreter_only(*percent, *runtime),
        Finding::Unresolved {
            leaf,
            owner,
            modules,
        } => format!(
            "{leaf:.1}% of the leaves and {owner:.1}% of the owner frames are addresses without \
             a symbol ({}); per module, the cause and the fix follow",
            modules
                .iter()
                .map(|(m, p)| format!("{m} {p:.1}%"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Finding::UnresolvedModule {
            module,
            percent,
            reason,
        } => format!(
            "{module}: {percent:.1}% of the leaves unresolved: {}; fix: {}",
            super::notices::unresolved_cause(reason),
            super::notices::unresolved_fix(reason)
        ),
        Finding::TruncatedDwarf {
            percent,
            truncated,
            stacks,
            ..
        } => format!(
            "{percent:.1}% of the DWARF user stacks ({truncated} of {stacks} samples) stopped \
             before their outermost frame: the anywhere view misses the callers above the cut, \
             and a cut that leaves only transparent frames counts as ownerless; causes: {}",
            truncation_causes(finding).join("; ")
        ),
        Finding::Lost {
            percent,
            events,
            samples,
        } => format!(
            "{percent:.1}% of the samples were lost ({events} in LOST records, {samples} counted \
             in LOST_SAMPLES): the shares are of the samples kept, and the loss comes in bursts \
             when perf falls behind, so it is not spread evenly over the code; {}",
            crate::model::LOST_FIX
        ),
        Finding::Throttled { times } => format!(
            "the kernel throttled sampling {times} times (THROTTLE records): while throttled \
             nothing is sampled, so the busiest moments are under-represented; {}",
            crate::model::THROTTLE_FIX
        ),
        Finding::DepthCut {
            percent,
            cut,
            stacks,
            depth,
        } => format!(
            "{percent:.1}% of the stacks ({cut} of {stacks}) were cut at the recorder's depth \
             limit of {depth} frames: their callers above the cut are missing, so the owner view \
             may hand them to the framework or runtime frames below the cut and the anywhere \
             view misses the cut owners; record with a deeper limit \
             (`-XX:FlightRecorderOptions:stackdepth={}`, or async-profiler's `jstackdepth=`)",
            (depth * 4).clamp(256, 2048)
        ),
        Finding::Warmup {
            seconds,
            owner,
            during,
            after,
            from,
        } => format!(
            "the first {seconds:.1} s are a warm-up: the owner shares of the first time buckets \
             differ from the rest beyond their sampling noise ({owner} owns {during:.1}% of the \
             owner view during it, {after:.1}% after), so shares over the whole recording mix \
             the two; skip it with `--time {},`",
            time_arg(*from)
        ),
        Finding::UserPrefix {
            prefix,
            owner,
            anywhere,
        } => format!(
            "the heaviest unclassified frames are under `{prefix}`: `--user {prefix}` would \
             claim them as user code, {}",
            user_moves(*owner, *anywhere)
        ),
    }
}

/// A time on the recording's clock as `--time` takes it (perf's seconds with six decimals),
/// rounded down so that a slice starting there keeps the whole bucket.
pub fn time_arg(nanos: u64) -> String {
    format!(
        "{}.{:06}",
        nanos / 1_000_000_000,
        nanos % 1_000_000_000 / 1000
    )
}

/// One line of figures for a report header; what the recording says about itself (the
/// call-graph mode, truncated DWARF stacks, loss, throttling) where it says anything.
pub fn quality_line(q: &Quality, total: u128) -> String {
    let recording = &q.recording;
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
    let chains = if q.callchains() {
        format!("call chains up to {} frames{mode}", q.max_depth)
    } else {
        format!("no call chains{mode}")
    };
    let mut line = format!(
        "quality: {chains}; ownerless {:.1}%; unresolved {:.1}% of leaves, {:.1}% of owner \
         frames; classified by module only {:.1}% of leaves; unclassified {:.1}% of owner \
         frames",
        q.ownerless_percent(total),
        q.unresolved_leaf_percent(total),
        q.unresolved_owner_percent(total),
        percent(q.module_only_leaf, total),
        percent(q.unclassified_owner, total)
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

/// The causes of a [`Finding::TruncatedDwarf`], each with its fix where there is one.
fn truncation_causes(finding: &Finding) -> Vec<String> {
    let Finding::TruncatedDwarf {
        copy_exhausted,
        no_unwind_info,
        more_modules,
        other,
        ..
    } = finding
    else {
        return Vec::new();
    };
    let mut causes = Vec::new();
    if let Some((share, size)) = copy_exhausted {
        causes.push(format!(
            "{share:.1}% ran out of the {size}-byte stack copy (record with `--call-graph \
             dwarf,{}`)",
            crate::model::larger_stack_copy(*size)
        ));
    }
    if !no_unwind_info.is_empty() {
        let modules: Vec<String> = no_unwind_info
            .iter()
            .map(|(module, share)| format!("{module} {share:.1}%"))
            .collect();
        causes.push(format!(
            "stopped in a module without usable unwind information ({}{}): give whose \
             the binaries the program ran with (--binary-path) or install their debug \
             info",
            modules.join(", "),
            if *more_modules { ", ..." } else { "" }
        ));
    }
    let other = super::notices::by_weight_then_words(other);
    causes.extend((other.iter().take(3)).map(|(cause, share)| format!("{cause} {share:.1}%")));
    causes
}

/// Why stacks were cut short and what to do, as the report's finding and the gate's refusal
/// say it.
pub fn cut_short_advice(advice: &CutShortAdvice) -> String {
    let stops = if advice.stops.is_empty() {
        String::new()
    } else {
        let each: Vec<String> = advice
            .stops
            .iter()
            .map(|(m, p)| format!("{m} {p:.1}%"))
            .collect();
        format!(", here in {}", each.join(", "))
    };
    match &advice.cause {
        CutShortCause::Jit { module } => format!(
            "the stacks stop in JIT-compiled code ({module}){stops}, which keeps no frame \
             pointers unless told to, and which perf cannot unwind with DWARF without a \
             jitdump: run the JVM with `-XX:+PreserveFramePointer` (Node: \
             `--perf-basic-prof --interpreted-frames-native-stack`) and record with `-g`"
        ),
        CutShortCause::Unrecorded => format!(
            "frame-pointer unwinding stops in code built without frame pointers \
             (glibc, -O2 C/C++, Rust's std), DWARF unwinding in a binary without unwind \
             information or at the end of the stack copy{stops}; record with \
             `--call-graph dwarf` (or `lbr`), or if it was, with the binaries' debug \
             info installed and a larger `dwarf,SIZE`"
        ),
        CutShortCause::Lbr => format!(
            "the CPU's branch records hold only the last 16 to 32 calls{stops}; record \
             with `--call-graph dwarf`"
        ),
        CutShortCause::FramePointers => format!(
            "frame-pointer unwinding stops in code built without frame pointers \
             (glibc, -O2 C/C++, Rust's std){stops}; record with `--call-graph dwarf` \
             (or `lbr`)"
        ),
        CutShortCause::Dwarf {
            copy_size,
            no_info,
            copy_exhausted,
            stopped_in,
        } => {
            let mut causes = Vec::new();
            if let Some((module, why)) = no_info {
                causes.push(format!(
                    "DWARF unwinding stopped in {module}{}, which has no usable unwind \
                     information: give whose the binary the program ran with (--binary-path) or \
                     install its debug info",
                    (why.as_ref()).map_or(String::new(), |w| format!(
                        " ({})",
                        super::notices::module_problem(w)
                    ))
                ));
            }
            if *copy_exhausted {
                causes.push(format!(
                    "the {copy_size}-byte stack copy ran out: record with `--call-graph dwarf,{}`",
                    crate::model::larger_stack_copy(*copy_size)
                ));
            }
            if causes.is_empty() {
                causes.push(match stopped_in {
                    Some(module) => format!(
                        "DWARF unwinding stopped in {module}, whose unwind information \
                         (`.eh_frame`) did not reach a caller: install its debug info, or give \
                         whose the binary the program ran with (--binary-path)"
                    ),
                    None => {
                        "DWARF unwinding stopped early (the DWARF unwinding note says why)".into()
                    }
                });
            }
            format!(
                "the recording has DWARF call graphs, but they stop short{stops}: {}",
                causes.join("; or ")
            )
        }
    }
}

/// What `--user PREFIX` moves, as the hint and `explain`'s next step say it.
pub fn user_moves(owner: f64, anywhere: f64) -> String {
    format!(
        "{} of the weight in the owner view ({} passes through them)",
        pct(owner),
        pct(anywhere)
    )
}

/// A warning in a few words, for a place with room for one line (a flame graph's subtitle);
/// `None` for what another headline covers (a module's unresolved leaves) and for hints.
/// What an interpreter is called and what its language's frames are, for
/// [`Finding::InterpreterOnly`].
fn interpreter_words(runtime: Runtime) -> (&'static str, &'static str) {
    match runtime {
        Runtime::CPython => ("CPython's interpreter", "Python function"),
        Runtime::Ruby => ("Ruby's interpreter", "Ruby method"),
        Runtime::Beam => ("the BEAM emulator's C code", "Erlang function"),
    }
}

/// Stacks in an interpreter's native code with no function of its language: what perf saw,
/// and how to record the language's frames.
fn interpreter_only(percent: f64, runtime: Runtime) -> String {
    let (interpreter, function) = interpreter_words(runtime);
    let fix = match runtime {
        Runtime::CPython => {
            "perf sees the interpreter's C functions (_PyEval_EvalFrameDefault ...), not the \
             program's, so no Python code can own a share; run the program with Python 3.12+ \
             and `-X perf` (perf then names each Python function), or record it with py-spy \
             (`py-spy record --format raw` or `--format speedscope`)"
        }
        Runtime::Ruby => {
            "perf sees the interpreter's C functions (vm_exec_core, rb_* ...), not the \
             program's methods; record it with rbspy (`rbspy record --format collapsed`), or \
             with Ruby 3.3+ `--yjit --yjit-perf` for YJIT's perf map"
        }
        Runtime::Beam => {
            "its BIFs, ETS, message copying, GC and NIFs' callers are not in the stack, so that \
             weight is the emulator's (`erts`), not the Erlang code's that called it: a \
             beam.smp stripped and built without frame pointers stops the walk there (most \
             distributions'); a BEAM built with `--enable-frame-pointer`, or `--call-graph \
             dwarf` with the emulator's debug symbols, gives the callers back, and without \
             `+JPperf true` no Erlang function is named at all"
        }
    };
    format!(
        "{percent:.1}% of the weight is in {interpreter} with no {function} in its stack: {fix}"
    )
}

pub fn headline(finding: &Finding) -> Option<String> {
    Some(match finding {
        Finding::NoCallChains => "no call chains, so the owner view is the self view".into(),
        Finding::CutShort { percent, .. } => format!("{percent:.1}% in stacks cut short"),
        Finding::InterpreterOnly { percent, runtime } => {
            let (interpreter, function) = interpreter_words(*runtime);
            format!("{percent:.1}% in {interpreter} with no {function}")
        }
        Finding::Unresolved { leaf, owner, .. } => {
            format!("{leaf:.1}% of leaves and {owner:.1}% of owner frames without a symbol")
        }
        Finding::TruncatedDwarf { percent, .. } => {
            format!("{percent:.1}% of DWARF stacks truncated")
        }
        Finding::Lost { percent, .. } => format!("{percent:.1}% of samples lost"),
        Finding::Throttled { times } => format!("sampling throttled {times} times"),
        Finding::DepthCut { percent, depth, .. } => {
            format!("{percent:.1}% of stacks cut at depth {depth}")
        }
        Finding::Warmup { seconds, .. } => format!("the first {seconds:.1} s are a warm-up"),
        Finding::JitInlining { user } => {
            format!("user {user:.1}% by a perf map, which hides inlined user code")
        }
        Finding::UnresolvedModule { .. }
        | Finding::UserPrefix { .. }
        | Finding::UserBounds { .. } => return None,
    })
}

/// One finding tagged as the report's header shows it: `warning: ...` or `hint: ...`.
pub fn line(finding: &Finding) -> String {
    let tag = match finding {
        Finding::UserBounds { .. } => "bounds",
        f if f.is_warning() => "warning",
        _ => "hint",
    };
    format!("{tag}: {}", text(finding))
}

/// Every finding tagged ([`line`]), in order.
pub fn lines(findings: &[Finding]) -> Vec<String> {
    findings.iter().map(line).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::quality::Quality;
    use crate::model::{CallGraph, Recording};

    /// The words of `q`'s findings out of a total of 100, one a line.
    fn said(q: &Quality) -> String {
        q.findings(100)
            .iter()
            .map(text)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A quality with 60 of 100 weight ownerless, stopping in `module`, recorded in `mode`.
    fn cut_in(
        module: &str,
        mode: CallGraph,
        dwarf: Option<crate::model::TruncatedStacks>,
    ) -> Quality {
        Quality {
            max_depth: 8,
            ownerless: 60,
            ownerless_by_module: vec![(module.to_string(), 60)],
            recording: Recording {
                call_graph: Some(mode),
                samples: 100,
                dwarf,
                ..Recording::default()
            },
            ..Quality::default()
        }
    }

    fn cut(mode: CallGraph, dwarf: Option<crate::model::TruncatedStacks>) -> Quality {
        cut_in("/lib/libc.so.6", mode, dwarf)
    }

    #[test]
    fn ownerless_advice_follows_the_recording_mode() {
        let fp = said(&cut(CallGraph::FramePointers, None));
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
                Some(crate::model::ModuleProblem::NoCfi),
            )],
            other: Vec::new(),
        };
        let text = said(&cut(CallGraph::Dwarf { copy_size: 4096 }, Some(stopped)));
        // already DWARF: the cause is the module, never "record with DWARF" again
        assert!(!text.contains("record with `--call-graph dwarf`"), "{text}");
        assert!(
            text.contains("unwinding stopped in /lib/libc.so.6 (no .eh_frame or .debug_frame)"),
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
        let text = said(&cut(CallGraph::Dwarf { copy_size: 4096 }, Some(exhausted)));
        assert!(text.contains("`--call-graph dwarf,16384`"), "{text}");
    }

    /// Issue 28 item 3: stacks that stop in JIT code want the JIT's frame pointers, in any
    /// recording mode, never DWARF (perf cannot DWARF-unwind JIT code without a jitdump).
    #[test]
    fn stacks_cut_in_jit_code_want_preserve_frame_pointer_not_dwarf() {
        for mode in [
            CallGraph::FramePointers,
            CallGraph::Dwarf { copy_size: 8192 },
        ] {
            let text = said(&cut_in("/tmp/perf-20602.map", mode, None));
            assert!(text.contains("-XX:+PreserveFramePointer"), "{text}");
            assert!(
                text.contains("JIT-compiled code (/tmp/perf-20602.map)"),
                "{text}"
            );
            assert!(!text.contains("record with `--call-graph dwarf`"), "{text}");
        }
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
        let text = said(&q);
        assert!(text.contains("6.0% of the samples were lost"), "{text}");
        assert!(text.contains("-m 1024"), "{text}");
        assert!(quality_line(&q, 100).contains("lost 6.0% of samples"));
        // 1 % lost is below the unfit share: the reader's warning says it, no finding
        q.recording.lost_events = 9;
        q.recording.samples = 891;
        assert!(q.findings(100).is_empty(), "{:?}", q.findings(100));
        q.recording.throttles = 3;
        let text = said(&q);
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
        assert_eq!(findings, vec![Finding::NoCallChains]);
        assert!(text(&findings[0]).contains("no call chains"));
        assert!(quality_line(&q, 100).contains("no call chains (recorded without -g)"));
    }

    #[test]
    fn hints_and_warnings_are_tagged_apart() {
        let hint = Finding::UserPrefix {
            prefix: "app.".into(),
            owner: 42.04,
            anywhere: 50.0,
        };
        assert_eq!(
            line(&hint),
            "hint: the heaviest unclassified frames are under `app.`: `--user app.` would \
             claim them as user code, 42.0% of the weight in the owner view (50.0% passes \
             through them)"
        );
        assert!(line(&Finding::NoCallChains).starts_with("warning: no call chains"));
    }
}

//! The notes and warnings of [`crate::model::Notice`] in words: the one place an input's
//! notices become sentences, for the report header, stderr, JSON's `notes`/`warnings`, the
//! flame graph's title and the fleet's rows alike.

use crate::model::{
    CallGraph, InlineChoice, JitMapWhy, KallsymsError, LOST_FIX, MissingSymbols, ModuleProblem,
    NO_STACK, Notice, OtherWhy, SampleType, Unit, Unresolved, UnwindCause, UnwindFailure,
    Utf8Place, larger_stack_copy,
};
use std::fmt;

/// Each of `notices` as a sentence, in order.
pub fn texts(notices: &[Notice]) -> Vec<String> {
    notices.iter().map(text).collect()
}

/// One notice as a sentence, without a `warning:` tag.
pub fn text(notice: &Notice) -> String {
    match notice {
        Notice::Format(name) => format!("format: {name}"),
        Notice::ProcessRoots { names, kept } => process_roots(names, *kept),
        Notice::SkippedLines {
            path,
            what,
            count,
            first_line,
            first,
        } => format!(
            "{}: skipped {count} line(s) that are {what} (first at line {first_line}: {first})",
            path.display()
        ),
        Notice::DecimalCounts { decimals } => format!(
            "counts have up to {decimals} decimal place(s): weights are the counts times {}, \
             summed exactly",
            10u64.pow(*decimals)
        ),
        Notice::NotUtf8 { path, place } => format!("{}: {}", path.display(), not_utf8(*place)),
        Notice::StillMangled { path, count, first } => format!(
            "{}: {count} frame name(s) are still mangled, the demanglers could not read them \
             (first: `{first}`); no name rule can match them",
            path.display()
        ),
        Notice::NoInlineFramesInText => "inline frames: none in this dump (perf script prints \
             none for frame-pointer call chains) and whose cannot add them to text: inlined \
             code counts as its caller's; give whose the perf.data (and its binaries) for \
             inline frames"
            .to_string(),
        Notice::InlineFrames { on, why } => {
            format!(
                "inline frames: {} ({})",
                if *on { "on" } else { "off" },
                inline_why(*on, *why)
            )
        }
        Notice::Filtered {
            filter,
            kept,
            total,
        } => format!(
            "filtered: {filter} kept {kept} of {total} samples, {} left out",
            total - kept
        ),
        Notice::LostEvents { path, lost } => format!(
            "{}: perf lost {lost} events (LOST records): the kernel's buffer overflowed; shares \
             are of the samples that were kept; {LOST_FIX}",
            path.display()
        ),
        Notice::LostSamples {
            path,
            samples,
            lost_events,
        } => format!(
            "{}: the kernel could not write {samples} samples (LOST_SAMPLES records){}; shares \
             are of the samples that were kept",
            path.display(),
            if *lost_events > 0 {
                format!(", {lost_events} of them for want of buffer space (LOST records)")
            } else {
                String::new()
            }
        ),
        Notice::StreamCut {
            path,
            record_at,
            record_size,
            stream_len,
        } => format!(
            "{}: the stream ends inside the record at byte offset {record_at} ({}), after \
             {stream_len} bytes: the recording was cut short, and the shares are of the samples \
             before the cut",
            path.display(),
            match record_size {
                Some(size) => format!(
                    "{} of its {size} bytes",
                    stream_len.saturating_sub(*record_at)
                ),
                None => "inside its header".to_string(),
            }
        ),
        Notice::DwarfTruncated {
            truncated,
            stacks,
            causes,
        } => dwarf_truncated(*truncated, *stacks, causes),
        Notice::StackCopyTooSmall { percent, size } => format!(
            "{} of user stacks were longer than the {size}-byte stack copy; record with a larger \
             copy, e.g. `perf record --call-graph dwarf,{}`",
            Pct(*percent),
            larger_stack_copy(*size)
        ),
        Notice::UnwindStopped {
            module,
            percent,
            problem,
        } => format!(
            "DWARF unwinding stopped in {module} for {} of user stacks{}; callers above it are \
             lost",
            Pct(*percent),
            (problem.as_ref()).map_or(String::new(), |p| format!(" ({})", module_problem(p)))
        ),
        Notice::MissingRegisters { samples } => format!(
            "{samples} samples lack the user registers or stack needed to unwind; kept with the \
             frames perf recorded"
        ),
        Notice::OversizedDynamicSize { samples } => format!(
            "{samples} samples declare more valid stack bytes than they copied; only the bytes \
             present were used"
        ),
        Notice::OversizedStackCopy { samples } => format!(
            "{samples} samples declare a user stack larger than their record; their user stacks \
             were dropped, kept with the frames perf recorded"
        ),
        Notice::Symbolized {
            samples,
            addresses,
            modules,
        } => format!("{samples} samples, {addresses} distinct addresses in {modules} modules"),
        Notice::NoSymbols { path, modules } => format!(
            "{}: no symbols for {} module(s), their frames are [unknown]: {}. Point whose at the \
             files with --binary-path DIR, --symfs DIR, --kallsyms FILE or --jit-map-dir DIR",
            path.display(),
            modules.len(),
            modules
                .iter()
                .map(missing_symbols)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Notice::BuildIdDiffers {
            file,
            found,
            want,
            module,
        } => format!(
            "{}: build id {found} differs from the recording's {want} for {module}; not used",
            file.display()
        ),
        Notice::DwarfUnreadable {
            module,
            error,
            lost,
        } => format!(
            "{module}: its DWARF could not be read ({error}); {} shown without inlined frames",
            match lost {
                None => "every address".to_string(),
                Some((lost, of)) => format!("{lost} of {of} addresses"),
            }
        ),
        Notice::JitMapBadLines {
            path,
            count,
            first_line,
        } => format!(
            "{}: {count} line(s) are not `START SIZE name` and were skipped (first: line \
             {first_line})",
            path.display()
        ),
        Notice::KallsymsUnreadable { path, error } => {
            format!("--kallsyms {}: {}", path.display(), kallsyms_error(error))
        }
        Notice::NoKernelBuildId => "the recording has no kernel build id: kernel symbols come \
             from this machine's /proc/kallsyms, which is right only if it recorded on this \
             kernel (else pass --kallsyms FILE)"
            .to_string(),
        Notice::HitCountWeights => {
            "weights: each node's hitCount (the file has no `samples` and `timeDeltas`)".into()
        }
        Notice::NegativeIntervals { path, count } => format!(
            "{}: {count} sample interval(s) were negative (timeDeltas out of order); each counts \
             as zero time",
            path.display()
        ),
        Notice::JfrChunks(chunks) => format!("JFR chunks: {chunks}"),
        Notice::JfrEvents(events) => format!(
            "events: {}",
            events
                .iter()
                .map(|(e, n)| format!("{e} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Notice::JfrPeriods(periods) => format!(
            "period: {} (jdk.ExecutionSample, from the recording's settings)",
            periods.join(", ")
        ),
        Notice::UnknownEventTypes { path, count } => format!(
            "{}: {count} event(s) of a type id the chunk's metadata does not define were skipped",
            path.display()
        ),
        Notice::DanglingReferences { path, count } => format!(
            "{}: {count} reference(s) to a thread, stack trace, method or class that no constant \
             pool of its chunk holds were read as null (no thread, no stack, `[unknown]`), as \
             the JDK's own reader reads them",
            path.display()
        ),
        Notice::Exporter(exporter) => format!("exporter: {exporter}"),
        Notice::ProfileName(name) => format!("name: {name}"),
        Notice::RoundedCounts { path, count } => format!(
            "{}: {count} weight(s) or time(s) were not whole numbers of their unit (samples, \
             nanoseconds or bytes); each was rounded to the nearest",
            path.display()
        ),
        Notice::FramesLeftOpen {
            path,
            profile,
            name,
            open,
        } => format!(
            "{}: profile {profile} ({name}): {open} frame(s) still open after the last event; closed at \
             endValue",
            path.display()
        ),
        Notice::UnnamedSampleType { index, unit } => format!(
            "sample type {index} ({unit}) has no name, as `go tool pprof` shows it: choose it \
             with `--metric {index}`"
        ),
        Notice::UnknownDefaultType { path, name } => format!(
            "{}: default_sample_type `{name}` is not one of the sample types; using the last one",
            path.display()
        ),
        Notice::Period { period, unit, name } => format!("period: {period} {unit} of {name}"),
        Notice::DurationNanos(nanos) => format!(
            "duration: {}",
            Unit::Nanoseconds.format((*nanos).max(0) as u128)
        ),
        Notice::Comment(text) => format!("comment: {text}"),
        Notice::MainBinary { file, build_id } => match build_id {
            Some(id) => format!("main binary: {file} (build id {id})"),
            None => format!("main binary: {file}"),
        },
        Notice::DropFrames(re) => format!("drop_frames: {re} (applied as pprof does)"),
        Notice::KeepFrames(re) => format!("keep_frames: {re}"),
        Notice::StacklessSamples(count) => format!(
            "{count} sample(s) without a stack (as Go's threadcreate profile records them): they \
             count in the total and in no owner, shown as `{NO_STACK}`"
        ),
        Notice::NegativeSamples(count) => format!(
            "{count} sample(s) with negative values (a delta profile): shares are of the \
             positive part, the negative part is shown beside them"
        ),
        Notice::NumericLabels(keys) => format!(
            "numeric labels ({}) are not attributed; `whose convert --to pprof` keeps them",
            crate::error::quote(keys.join(", ").as_bytes())
        ),
        Notice::NoWeight { metric } => {
            format!("no weight: the total of {metric} is 0, so there are no shares to show")
        }
    }
}

/// `convert --to folded`'s closing line: how many lines of which shape it wrote, in the
/// metric `metric`, and how to read them back in its unit.
pub fn wrote_folded(lines: usize, differential: bool, metric: &SampleType) -> String {
    let shape = if differential {
        "differential folded stacks (`stack BEFORE AFTER`: BEFORE the negative part, AFTER the \
         positive part, as inferno-diff-folded writes them)"
    } else {
        "folded stacks"
    };
    format!(
        "wrote {lines} {shape} of {} ({}){}",
        metric.name,
        metric.unit,
        match metric.unit {
            Unit::Bytes => "; read them back with --unit bytes",
            Unit::Nanoseconds => "; read them back with --unit nanoseconds",
            _ => "",
        }
    )
}

/// What was not UTF-8 and how it was read.
fn not_utf8(place: Utf8Place) -> String {
    match place {
        Utf8Place::FoldedLines { lines, first_line } => format!(
            "{lines} line(s) had frame names that are not valid UTF-8 (first at line \
             {first_line}); they were read with U+FFFD in place of the bad bytes"
        ),
        Utf8Place::ScriptLines { lines } => format!(
            "{lines} line(s) were not valid UTF-8 and were read with U+FFFD in place of the bad \
             bytes"
        ),
        Utf8Place::File { offset } => format!(
            "not valid UTF-8 (first bad byte at offset {offset}); read with U+FFFD in place of \
             the bad bytes"
        ),
        Utf8Place::StringTable {
            count,
            first_offset,
        } => format!(
            "{count} string(s) of the string table were not valid UTF-8 (the first at byte \
             offset {first_offset}) and were read with U+FFFD in place of the bad bytes"
        ),
    }
}

fn process_roots(names: &[String], kept: bool) -> String {
    let shown = names.iter().take(3).map(String::as_str).collect::<Vec<_>>();
    let shown = shown.join(", ");
    let more = if names.len() > 3 { ", ..." } else { "" };
    if kept {
        format!(
            "the root frame of every stack is a process name ({shown}{more}: {} name(s)); kept \
             as a frame (--keep-process-root)",
            names.len()
        )
    } else {
        format!(
            "the root frame of every stack is a process name as stackcollapse-perf and inferno \
             write it ({shown}{more}: {} name(s)): read as the thread, not a frame \
             (--keep-process-root keeps it)",
            names.len()
        )
    }
}

fn inline_why(on: bool, why: InlineChoice) -> String {
    match why {
        InlineChoice::Asked if on => "--inline".to_string(),
        InlineChoice::Asked => "--no-inline".to_string(),
        InlineChoice::Default(CallGraph::Dwarf { .. }) => "the default with call chains, as perf \
             report shows dwarf ones; --no-inline to change"
            .to_string(),
        InlineChoice::Default(mode) if on => format!(
            "the default with call chains; perf report shows none for {} ones: --no-inline for \
             its view",
            mode.as_str()
        ),
        InlineChoice::Default(_) => "the default without call chains; --inline to change".into(),
    }
}

fn dwarf_truncated(truncated: u64, stacks: u64, causes: &[(UnwindCause, u64)]) -> String {
    let pct = |n: u64| Pct(n as f64 * 100.0 / stacks as f64);
    let causes: Vec<String> = (causes.iter())
        .map(|(cause, n)| format!("{} {}", unwind_cause(cause), pct(*n)))
        .collect();
    let mut note = format!(
        "DWARF unwinding: {truncated} of {stacks} user stacks truncated ({})",
        pct(truncated)
    );
    if !causes.is_empty() {
        note.push_str(&format!(": {}", causes.join(", ")));
    }
    note
}

/// Why DWARF unwinding stopped, in a few words.
pub fn unwind_cause(cause: &UnwindCause) -> String {
    match cause {
        UnwindCause::CopyExhausted => "stack copy exhausted".into(),
        UnwindCause::RanPastCopy => "ran past the copied stack".into(),
        UnwindCause::NoUnwindInfo(m) => format!("no unwind info in {m}"),
        UnwindCause::Unmapped => "code outside any mapped file (JIT?)".into(),
        UnwindCause::MissingRegisters => "registers or stack missing".into(),
        UnwindCause::BadRecord => "stack size larger than its record".into(),
        UnwindCause::Failed(UnwindFailure::NotPrepared) => "unwinder not prepared".into(),
        UnwindCause::Failed(UnwindFailure::TooManyFrames(max)) => format!("more than {max} frames"),
        UnwindCause::Failed(UnwindFailure::BelowStackPointer) => {
            "read below the stack pointer".into()
        }
        UnwindCause::Failed(UnwindFailure::Unwinder(error)) => error.clone(),
    }
}

/// Unwinding causes in words, heaviest first and ties by their words: the order every
/// output lists them in.
pub fn by_weight_then_words<W: Copy + PartialOrd>(causes: &[(UnwindCause, W)]) -> Vec<(String, W)> {
    let mut worded: Vec<(String, W)> = (causes.iter())
        .map(|(cause, w)| (unwind_cause(cause), *w))
        .collect();
    worded.sort_by(|a, b| {
        (b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal)).then_with(|| a.0.cmp(&b.0))
    });
    worded
}

fn missing_symbols(m: &MissingSymbols) -> String {
    format!(
        "{} ({}; {} samples)",
        m.module,
        unresolved_short(&m.reason),
        m.samples
    )
}

/// The cause in a few words, for the symbolisation warning that lists every module without
/// symbols (the files and build ids are in its other warnings).
pub fn unresolved_short(reason: &Unresolved) -> String {
    match reason {
        Unresolved::JitMapMissing { why } => jit_map_why(why),
        Unresolved::Other { why } => other_why(why),
        Unresolved::BuildIdMismatch { .. } => {
            "only binaries with another build id were found".to_string()
        }
        other => unresolved_cause(other),
    }
}

/// Why a module's addresses found no symbol, in words.
pub fn unresolved_cause(reason: &Unresolved) -> String {
    match reason {
        Unresolved::JitMapMissing { why } => {
            format!("JIT code without its perf map: {}", jit_map_why(why))
        }
        Unresolved::Stripped {
            path, by_name_only, ..
        } => format!(
            "binary stripped: {path} has no .symtab and its .dynsym does not cover the \
             addresses{}",
            if *by_name_only {
                " (this machine's file of that name: the input names no build id)"
            } else {
                ""
            }
        ),
        Unresolved::BuildIdMismatch { found, want } => format!(
            "build id mismatch: {} has another build id than the recording's {want}",
            (found.iter())
                .map(|(file, id)| format!("{file} ({id})"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Unresolved::NotFound { .. } => "binary not found".to_string(),
        Unresolved::NoSymbol { path } => {
            format!("{path} has a symbol table, but no symbol covers the addresses")
        }
        Unresolved::Other { why } => other_why(why),
        Unresolved::Unmapped => {
            "addresses in no mapped file (anonymous memory, or a frame-pointer chain cut \
             short)"
                .to_string()
        }
        Unresolved::NotSymbolizedByPerf => {
            "the profiler's text names no symbol here (`[unknown]` from perf script, an \
             address from py-spy --native) and does not say why"
                .to_string()
        }
        Unresolved::NoModule => {
            "frames without a symbol or a module (the input does not say where or why)".to_string()
        }
    }
}

/// What to do about a module's addresses without a symbol.
pub fn unresolved_fix(reason: &Unresolved) -> String {
    let fetch = |build_id: &Option<String>| match build_id {
        Some(id) => format!(
            "or set DEBUGINFOD_URLS and run `debuginfod-find debuginfo {id}` (whose looks \
             in ~/.cache/debuginfod_client)"
        ),
        None => "or set DEBUGINFOD_URLS and fetch them with debuginfod-find".to_string(),
    };
    match reason {
        Unresolved::JitMapMissing { .. } => "give the JIT's perf-PID.map (--jit-map-dir DIR; \
             -XX:+DumpPerfMapAtExit, perf-map-agent, node --perf-basic-prof)"
            .to_string(),
        Unresolved::Stripped {
            path,
            build_id,
            package: Some(package),
            ..
        } => format!(
            "{path} is from package {package}: install {package}-dbgsym (Debian/Ubuntu \
             debug symbol archive), {}",
            fetch(build_id)
        ),
        Unresolved::Stripped {
            path,
            build_id,
            package: None,
            ..
        } => format!(
            "install the debug symbols for {path} (e.g. its -dbgsym/-debuginfo package), \
             {}, or --binary-path DIR with an unstripped build",
            fetch(build_id)
        ),
        Unresolved::BuildIdMismatch { .. } => {
            "point --binary-path DIR (or --symfs) at the binary that ran".to_string()
        }
        Unresolved::NotFound { build_id } => format!(
            "point --binary-path DIR or --symfs DIR at it ({})",
            build_id
                .as_ref()
                .map_or("searched by name".to_string(), |id| format!(
                    "searched by build id {id} and by name"
                ))
        ),
        Unresolved::NoSymbol { .. } | Unresolved::Other { .. } => {
            "--binary-path DIR with a build that has its symbols".to_string()
        }
        Unresolved::Unmapped => {
            "record with --call-graph dwarf if stacks are cut short; JIT code needs its perf \
             map"
            .to_string()
        }
        Unresolved::NotSymbolizedByPerf => {
            "symbolize where the binaries and their debug symbols are (perf script on the \
             recording machine; py-spy needs the libraries' symbols), or give whose the \
             perf.data (it says why per module)"
                .to_string()
        }
        Unresolved::NoModule => "give whose the recording itself (perf.data, pprof with \
             mappings), which says why per module"
            .to_string(),
    }
}

/// Why DWARF unwinding cannot go through a module, in a few words.
pub fn module_problem(problem: &ModuleProblem) -> String {
    match problem {
        ModuleProblem::NotFound => {
            "binary not found; point --binary-path or --symfs at it".to_string()
        }
        ModuleProblem::OtherBuildId { file, id } => format!("{file} has another build id ({id})"),
        ModuleProblem::Unreadable { path, error } => format!("{path}: {error}"),
        ModuleProblem::NotElf { path, error } => {
            format!("{path}: not a readable ELF file: {error}")
        }
        ModuleProblem::NoCfi => "no .eh_frame or .debug_frame".to_string(),
        ModuleProblem::CorruptCfi { section, error } => match error {
            Some((error, entry)) => format!("corrupt {section}: {error} (entry {entry})"),
            None => format!("corrupt {section}: empty"),
        },
    }
}

/// Why a JIT's perf map gave no symbol, in a few words.
fn jit_map_why(why: &JitMapWhy) -> String {
    match why {
        JitMapWhy::NotFound { dirs } => {
            format!("JIT map not found in {} (--jit-map-dir)", dirs.join(", "))
        }
        JitMapWhy::Unreadable { path, error } => format!("{path}: {error}"),
        JitMapWhy::Incomplete {
            path,
            unresolved,
            of,
        } => format!(
            "{path} has no entry for {unresolved} of {of} addresses: code compiled after the map \
             was written, or an incomplete map"
        ),
        JitMapWhy::NoEntry => "no entry for these addresses".to_string(),
    }
}

/// Why a module could not be used, in a few words.
fn other_why(why: &OtherWhy) -> String {
    match why {
        OtherWhy::KernelOtherBuild => "recorded on another kernel (build id differs from the \
             running one); pass --kallsyms FILE with that kernel's /proc/kallsyms"
            .to_string(),
        OtherWhy::NoKallsyms => "no kallsyms for the recorded kernel; pass --kallsyms FILE".into(),
        OtherWhy::KallsymsUnusable { path } => format!("--kallsyms {path} unusable"),
        OtherWhy::Kallsyms { path, error } => format!("{path}: {}", kallsyms_error(error)),
        OtherWhy::NoKernelSymbol => "no kernel symbol covers the addresses".to_string(),
        OtherWhy::NoSymbolFile => "no file with symbols was found".to_string(),
        OtherWhy::KindChanged => "module kind changed".to_string(),
        OtherWhy::Error(error) => error.clone(),
    }
}

/// Why a kallsyms file is of no use, in a few words.
fn kallsyms_error(error: &KallsymsError) -> String {
    match error {
        KallsymsError::Io(error) => error.clone(),
        KallsymsError::TooLarge => "larger than 4 GiB: not a kallsyms file".to_string(),
        KallsymsError::NoTextSymbols => "no kernel text symbols in it".to_string(),
        KallsymsError::AllZero => {
            "all addresses are 0 (kernel.kptr_restrict hides them; read it as root)".to_string()
        }
    }
}

/// A percentage of stacks as the unwinding notes show it: `<0.1%` for a trace.
struct Pct(f64);

impl fmt::Display for Pct {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 > 0.0 && self.0 < 0.05 {
            f.write_str("<0.1%")
        } else {
            write!(f, "{:.1}%", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 28: the note said "as perf report shows none call graphs"; issue 29 made inline
    /// frames the default with any call chains.
    #[test]
    fn the_inline_note_reads_for_every_call_graph_mode() {
        let note = |on, why| text(&Notice::InlineFrames { on, why });
        let default = InlineChoice::Default;
        assert_eq!(
            note(false, default(CallGraph::None)),
            "inline frames: off (the default without call chains; --inline to change)"
        );
        assert_eq!(
            note(true, default(CallGraph::FramePointers)),
            "inline frames: on (the default with call chains; perf report shows none for fp \
             ones: --no-inline for its view)"
        );
        assert_eq!(
            note(true, default(CallGraph::Dwarf { copy_size: 8192 })),
            "inline frames: on (the default with call chains, as perf report shows dwarf ones; \
             --no-inline to change)"
        );
        assert_eq!(
            note(false, InlineChoice::Asked),
            "inline frames: off (--no-inline)"
        );
        assert_eq!(
            note(true, InlineChoice::Asked),
            "inline frames: on (--inline)"
        );
    }

    /// The model keeps unwinding causes heaviest first with ties in any order; every output
    /// lists ties by their words, as when the unwinder worded them itself.
    #[test]
    fn unwinding_causes_are_listed_heaviest_first_then_by_their_words() {
        let causes = [
            (UnwindCause::MissingRegisters, 2),
            (
                UnwindCause::Failed(UnwindFailure::Unwinder("bad CFA".into())),
                5,
            ),
            (UnwindCause::Unmapped, 2),
            (UnwindCause::BadRecord, 1),
        ];
        let listed = by_weight_then_words(&causes);
        let words: Vec<&str> = listed.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(
            words,
            [
                "bad CFA",
                "code outside any mapped file (JIT?)",
                "registers or stack missing",
                "stack size larger than its record"
            ]
        );
    }
}

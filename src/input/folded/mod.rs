//! Folded ("collapsed") stacks: `root;...;leaf N` lines as inferno, FlameGraph and
//! async-profiler write them, and py-spy's `--format raw` (frames `func (file.py:line)`,
//! leading `process`/`thread` frames taken as the thread).
//!
//! The reader streams with one reused line buffer and caches each distinct stack text, so a
//! repeated line costs one hash lookup and one addition: the large inputs this tool is for
//! are mostly repeats of a few thousand distinct stacks. The caches are bounded
//! ([`STACK_CACHE_BYTES`], [`FRAME_CACHE_BYTES`]): an input of millions of distinct lines is
//! parsed line by line past them, and memory then grows only with the profile itself
//! (issue 17).

mod build;
mod split;

use super::bad_lines::BadLines;
use super::options::{InputFormat, Probe, ReadOptions};
use super::source::Source;
use crate::error::{Error, Position, Result};
use crate::model::{Frame, FrameKind, Profile, UNKNOWN, Unit, folded, perf};
use crate::names::{self, TypeSuffix};
use build::Builder;
use split::{Batch, Splitter, Tally};
use std::num::NonZeroU32;

/// Folded stacks are what text is when no other format claims it: the last row asked.
pub fn probe(_head: &[u8]) -> Probe {
    Probe::Yes
}

/// How many lines of the head [`probe_pyspy`] looks at.
const PYSPY_PROBE_LINES: usize = 16;

/// py-spy raw text: some frame of the first lines is a Python function with its source line
/// (`run (app.py:58)`). Not only the first frame: with `--native` the root frames are native
/// (`0x7fc4974c324a (libc.so.6)`), and with `--threads` a thread frame comes first.
pub fn probe_pyspy(head: &[u8]) -> Probe {
    let text = String::from_utf8_lossy(head);
    let python_frame_with_line = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .take(PYSPY_PROBE_LINES)
        // the count after the last space is not part of the stack
        .flat_map(|line| folded::frames(folded::stack_of(line)))
        .filter_map(names::pyspy_frame)
        .any(|f| f.kind == names::PyFrameKind::Python && f.line.is_some());
    if python_frame_with_line {
        Probe::Yes
    } else {
        Probe::No
    }
}

/// Reads a whole folded input into a profile with one sample type (named after `--unit`).
///
/// A large input is read on two cores: one thread reads and splits the lines and makes the
/// frames ([`split`]), this one interns them into the profile ([`build`]); on a million
/// distinct stacks each half is about half the work. A small input, or one read under
/// `--each`'s budget (whose inputs already share the cores), is read on this thread alone,
/// through the same two halves.
pub fn read(mut source: Source, format: InputFormat, options: &ReadOptions) -> Result<Profile> {
    source.cap_lines(options.max_line);
    let large = source.len_hint().is_none_or(|len| len >= TWO_THREADS_FROM);
    let threads = if large && crate::model::budget::current().is_none() {
        Threads::Two
    } else {
        Threads::One
    };
    read_on(source, format, options, threads)
}

/// Bytes from which a folded file is read on two threads (about 50 k lines): below it, the
/// thread costs more than it saves. A stream of unknown length (stdin, gzip) is read on two.
const TWO_THREADS_FROM: u64 = 1 << 20;

/// How [`read_on`] runs the two halves of the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Threads {
    One,
    Two,
}

fn read_on(
    mut source: Source,
    format: InputFormat,
    options: &ReadOptions,
    threads: Threads,
) -> Result<Profile> {
    let unit = options.unit.clone().unwrap_or(Unit::Count);
    let path = source.path.clone();
    let mut splitter = Splitter::new(path.clone(), format);
    let mut builder = Builder::new(path.clone(), format, unit, options.keep_process_root);
    if threads == Threads::One {
        let mut batch = Batch::default();
        loop {
            let more = splitter.fill(&mut source, &mut batch)?;
            builder.take(&mut batch);
            if !more {
                return builder.finish(splitter.tally);
            }
        }
    }
    // room for 16 batches (32 k lines, a few MB): the halves take turns being the slower one
    // (the splitting half during the caches' trial, the building half while its tables
    // grow); with room for four each waited about 30 ms on the other over a million distinct
    // lines, and reading took 0.16 s, with 16 0.15 s. The batches are freed before the
    // report's peak of memory, which comes later.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Batch>>(16);
    // emptied batches go back, so their memory is reused instead of freed across threads
    let (back_tx, back_rx) = std::sync::mpsc::channel::<Batch>();
    let tally = std::thread::scope(|scope| -> Result<Tally> {
        let splitting = std::thread::Builder::new()
            .name("whose-split".into())
            .spawn_scoped(scope, move || {
                loop {
                    let mut batch = back_rx.try_recv().unwrap_or_default();
                    let filled = splitter.fill(&mut source, &mut batch);
                    let more = matches!(filled, Ok(true));
                    // a closed channel: the building half stopped, and says why
                    if tx.send(filled.map(|_| batch)).is_err() || !more {
                        return splitter.tally;
                    }
                }
            })
            .map_err(|e| Error::io(&path, e))?;
        for batch in rx {
            let mut batch = batch?;
            builder.take(&mut batch);
            let _ = back_tx.send(batch);
        }
        splitting.join().map_err(|_| {
            Error::input(
                &path,
                Position::Whole,
                "internal reader error: the reading thread panicked",
            )
        })
    })?;
    builder.finish(tally)
}

/// One frame from its raw text in a file of `format`.
fn make_frame(format: InputFormat, raw: &str) -> Frame {
    // every form below needs punctuation (`_[j]`, `[module]`, ` (module)`, `tag:`, `func
    // (file)`) and a plain name normalises to itself: most frames of C, Go and synthetic
    // profiles, which on a million distinct frames then pay one byte scan each (issue 24)
    if names::is_plain_symbol(raw) {
        return Frame::named(raw, FrameKind::Native);
    }
    parse_frame(format, raw)
}

/// [`make_frame`] without its shortcut: every form tried in turn.
fn parse_frame(format: InputFormat, raw: &str) -> Frame {
    let pyspy = if format == InputFormat::PySpy {
        pyspy_model_frame(raw)
    } else {
        source_frame(raw)
    };
    if let Some(frame) = pyspy {
        return frame;
    }
    let (text, suffix) = names::split_type_suffix(raw);
    // `[libc.so.6]`: stackcollapse-perf's unnamed frame of a known module
    if let Some(module) = bracketed_module(text) {
        let mut frame = Frame::named(UNKNOWN, FrameKind::Unknown);
        frame.module = Some(module.into());
        return frame;
    }
    // `malloc (/usr/lib/libc.so.6)`, as perf script prints a frame's module
    if let Some((name, module)) = split_module_suffix(text) {
        let mut frame = folded_frame(&format!("{name}{}", &raw[text.len()..]));
        if suffix != Some(TypeSuffix::Kernel) {
            frame.module = Some(module.into());
        }
        return frame;
    }
    folded_frame(raw)
}

/// Bytes the cache of distinct stack texts may hold: about 350 k lines of 20 bytes or 3 k
/// JVM stacks of 5 KB, the few thousand distinct stacks of a real recording.
const STACK_CACHE_BYTES: usize = 16 << 20;

/// Bytes the cache of distinct raw frame texts may hold.
const FRAME_CACHE_BYTES: usize = 4 << 20;

/// How often a text cache found its text. Collapsers write each distinct stack once, so on
/// their output the line cache only costs a hash, an insert and memory per line, and on a
/// merge of millions of distinct frames so does the frame cache; a reader that sees mostly
/// new texts after [`CacheUse::TRIAL`] of them stops using that cache.
struct CacheUse {
    on: bool,
    hits: u64,
    misses: u64,
}

impl CacheUse {
    const TRIAL: u64 = 1 << 16;

    fn new() -> CacheUse {
        CacheUse {
            on: true,
            hits: 0,
            misses: 0,
        }
    }

    /// Counts a miss; whether the cache is now useless: after the trial, fewer than one
    /// text in eight was a repeat.
    fn missed(&mut self) -> bool {
        self.misses += 1;
        self.misses >= Self::TRIAL && self.hits * 8 < self.misses
    }
}

/// The most decimal places a count may have: weights are stored as integers times
/// 10^decimals, and nine places already exceed any profiler's precision.
const MAX_DECIMALS: u32 = 9;

/// A count as written: `12.5` is 125 with one decimal place (trailing zeros dropped, so
/// `31.000` is the integer 31).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Count {
    value: u64,
    decimals: u32,
}

/// The count at the end of a folded line: a non-negative integer, or a decimal as inferno
/// and speedscope accept it (`12.5`, `.5`, `31.000`). The error says why not.
fn parse_count(text: &[u8]) -> std::result::Result<Count, String> {
    let shown = || crate::error::quote(text);
    let digits = |d: &[u8]| !d.is_empty() && d.iter().all(u8::is_ascii_digit);
    let too_big = || format!("count `{}` does not fit in 64 bits", shown());
    if digits(text) {
        // the common case: one pass, no decimal point
        let mut value: u64 = 0;
        for &b in text {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(b - b'0')))
                .ok_or_else(too_big)?;
        }
        return Ok(Count { value, decimals: 0 });
    }
    if text.first() == Some(&b'-') {
        return Err(format!(
            "negative count `{}`: counts must be non-negative",
            shown()
        ));
    }
    let Some(dot) = text.iter().position(|&b| b == b'.') else {
        return Err(format!(
            "expected an integer or decimal count at the end of the line, found `{}`",
            shown()
        ));
    };
    let (whole, decimals) = (&text[..dot], &text[dot + 1..]);
    let part = |d: &[u8]| d.is_empty() || digits(d);
    if !part(whole) || !part(decimals) || whole.len() + decimals.len() == 0 {
        return Err(format!(
            "expected an integer or decimal count at the end of the line, found `{}`",
            shown()
        ));
    }
    let fraction = &decimals[..decimals
        .iter()
        .rposition(|&b| b != b'0')
        .map_or(0, |i| i + 1)];
    if fraction.len() > MAX_DECIMALS as usize {
        return Err(format!(
            "count `{}` has more than {MAX_DECIMALS} decimal places",
            shown()
        ));
    }
    let mut value: u64 = 0;
    for &b in whole.iter().chain(fraction) {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
            .ok_or_else(too_big)?;
    }
    Ok(Count {
        value,
        decimals: fraction.len() as u32,
    })
}

/// Whether a root frame's text is a process name as `stackcollapse-perf.pl` and inferno's
/// collapse-perf write it: `comm` (at most 15 bytes, the kernel's TASK_COMM_LEN, spaces
/// turned to `_`), or `comm-PID` / `comm-PID/TID` with `--pid` / `--tid`. No function name
/// form: no `(`, `::`, `[`, `<`, whitespace.
fn looks_like_process_name(raw: &str) -> bool {
    let is_number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let comm = match raw.rsplit_once('-') {
        Some((comm, ids))
            if ids
                .split_once('/')
                .map_or(is_number(ids), |(p, t)| is_number(p) && is_number(t)) =>
        {
            comm
        }
        _ => raw,
    };
    (1..=15).contains(&comm.len())
        && !comm.contains(['(', '[', '<', '{', ' ', '\t'])
        && !comm.contains("::")
}

/// Frames that start a process or thread, the callee of the process-name root in a collapsed
/// perf file: libc's and the dynamic loader's entry points, Go's goroutine and thread roots,
/// and `[unknown]` (a JIT or stripped root perf could not name). Kernel frames count too: a
/// kernel-only stack (`swapper;secondary_startup_64_[k]`) has no user root.
fn starts_a_process(frame: &Frame) -> bool {
    const ROOTS: &[&str] = &[
        "_start",
        "__libc_start_main",
        "__libc_start_call_main",
        "start_thread",
        "thread_start",
        "clone",
        "clone3",
        "__clone",
        "__clone3",
        "__GI___clone",
        "__GI___clone3",
        "_dl_start_user",
        UNKNOWN,
        "runtime.goexit",
        "runtime.goexit.abi0",
        "runtime.rt0_go",
        "runtime.rt0_go.abi0",
        "runtime.mstart",
        "runtime.mstart.abi0",
    ];
    frame.kind == FrameKind::Kernel || ROOTS.contains(&&*frame.name)
}

/// The module of `[libc.so.6]`, the form `stackcollapse-perf.pl` and inferno give a frame
/// perf could not name in a known module (and `convert --to folded` writes). `[unknown]` and
/// async-profiler's `[thread tid=1]` roots have none.
pub fn bracketed_module(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('[')?.strip_suffix(']')?;
    (inner != "unknown" && !inner.is_empty() && !inner.contains([' ', '[', ']', ';']))
        .then_some(inner)
}

/// `name (module)`, the module as perf script prints it after a frame: a path, a bracketed
/// pseudo-module (`[vdso]`) or a shared object name. py-spy's `func (file.py:12)` (a `:`) and
/// C++ parameter lists (no space before `(`, or spaces inside) are not modules.
pub fn split_module_suffix(text: &str) -> Option<(&str, &str)> {
    // (checked first: most frames end otherwise, and a reverse search for ` (` builds a
    // searcher per call, a third of a distinct frame's parse on a million of them)
    let inner = text.strip_suffix(')')?;
    let (name, module) = inner.rsplit_once(" (")?;
    // (`node`: the module a .cpuprofile's functions without a script get, V8's builtins and
    // node's C++ bindings, which `convert --to folded` writes so)
    let looks_like_module = module.starts_with('/')
        || (module.starts_with('[') && module.ends_with(']'))
        || module.contains(".so")
        || module == "node";
    (looks_like_module && !name.is_empty() && !module.contains([' ', '(', ')', ':']))
        .then_some((name, module))
}

/// A frame in py-spy's `func (FILE:LINE)` form in a folded file that is not py-spy's own
/// (`convert --to folded` writes Python frames and native frames with a source file this way,
/// so that rules matching on the file still match when read back): only where FILE is a
/// source file ([`names::is_source_file`]), so `name (module)` and C++ parameter lists keep
/// their meaning.
pub fn source_frame(raw: &str) -> Option<Frame> {
    pyspy_model_frame(raw).filter(|f| f.file.as_deref().is_some_and(names::is_source_file))
}

/// One frame of inferno/async-profiler folded text: type suffix → kind, allocated-class
/// leaves recognised, names normalised.
pub fn folded_frame(raw: &str) -> Frame {
    if names::is_alloc_type(raw) {
        let (base, _) = names::split_type_suffix(raw);
        return Frame::named(base, FrameKind::AllocType);
    }
    let (base, suffix) = names::split_type_suffix(raw);
    let kind = suffix.map_or(FrameKind::Native, suffix_kind);
    if base == UNKNOWN {
        return Frame::named(base, FrameKind::Unknown);
    }
    // rbspy's collapsed Ruby frames: the method with its file
    if let Some((name, file, line)) = names::rbspy_frame(base) {
        return Frame {
            name: name.into(),
            module: None,
            file: file.map(Into::into),
            line: line.and_then(NonZeroU32::new),
            kind: FrameKind::Interpreted,
        };
    }
    // node's and CPython's perf map names, as stackcollapse-perf and inferno keep them (and
    // `convert --to folded` writes JavaScript frames): the script's function with its file
    if let Some(entry) = names::perf_map_entry(base) {
        let kind = match entry.language {
            names::MapLanguage::JavaScript
            | names::MapLanguage::Erlang
            | names::MapLanguage::Ruby => Some(FrameKind::Jit),
            names::MapLanguage::Python => Some(FrameKind::Interpreted),
            names::MapLanguage::V8Stub => None,
        };
        if let Some(kind) = kind {
            return Frame {
                name: entry.name.into(),
                module: None,
                file: entry.file.map(Into::into),
                line: entry.line.and_then(NonZeroU32::new),
                kind,
            };
        }
    }
    let mut frame = Frame::named(names::normalize_symbol(base), kind);
    if kind == FrameKind::Kernel {
        frame.module = Some(perf::KERNEL_MODULE.into());
    }
    frame
}

/// The frame kind an async-profiler type suffix says (docs/design.md "Frame names"): C1 and C2 code
/// are both JIT-compiled.
fn suffix_kind(suffix: TypeSuffix) -> FrameKind {
    match suffix {
        TypeSuffix::Jit | TypeSuffix::C1 => FrameKind::Jit,
        TypeSuffix::Inlined => FrameKind::Inlined,
        TypeSuffix::Kernel => FrameKind::Kernel,
        TypeSuffix::Interpreted => FrameKind::Interpreted,
    }
}

/// One py-spy frame (raw text, or a speedscope frame written as raw text) as a whose frame:
/// Python code is interpreted, a `--native` frame is native with its library as module (or
/// its C source file as file), an address without a symbol is unresolved in its library.
pub fn pyspy_model_frame(raw: &str) -> Option<Frame> {
    let py = names::pyspy_frame(raw)?;
    Some(Frame {
        name: py.name.into(),
        file: py.file.map(Into::into),
        line: py.line.and_then(NonZeroU32::new),
        kind: match py.kind {
            names::PyFrameKind::Python => FrameKind::Interpreted,
            names::PyFrameKind::Native => FrameKind::Native,
            names::PyFrameKind::Unresolved => FrameKind::Unknown,
        },
        module: py.module.map(Into::into),
    })
}

/// py-spy puts `process 123:"cmd"` and `thread (0x7f..)` frames at the root with
/// `--subprocesses` / `--threads`.
fn is_pyspy_thread_frame(frame: &str) -> bool {
    frame.starts_with("thread (0x")
        || frame
            .strip_prefix("process ")
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// async-profiler `-t` puts the thread as a root frame: `[worker-1 tid=1234]`.
fn is_async_profiler_thread_frame(frame: &str) -> bool {
    frame.starts_with('[')
        && frame.ends_with(']')
        && frame
            .rsplit_once(" tid=")
            .is_some_and(|(_, id)| id.trim_end_matches(']').bytes().all(|b| b.is_ascii_digit()))
}

/// The readable part of a thread frame: `thread (0x7F12): MainThread (:0)` → `MainThread`,
/// `[worker-1 tid=1234]` → `worker-1`, `process 42:"python app.py"` kept as is.
fn thread_name(frame: &str) -> &str {
    let frame = match frame.rfind(" (") {
        Some(i) if frame.ends_with(')') && frame.starts_with("thread (") && i > 8 => &frame[..i],
        _ => frame,
    };
    if let Some((_, name)) = frame.split_once("): ") {
        return name;
    }
    if let Some(inner) = frame.strip_prefix('[').and_then(|f| f.strip_suffix(']'))
        && let Some((name, _)) = inner.rsplit_once(" tid=")
    {
        return name;
    }
    frame
}

fn trim_line_end(line: &[u8]) -> &[u8] {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\n' | b'\r' | b' ' | b'\t') {
        end -= 1;
    }
    &line[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(text: &str) -> std::result::Result<(u64, u32), String> {
        parse_count(text.as_bytes()).map(|c| (c.value, c.decimals))
    }

    /// The shortcut for plain names gives what parsing every form gives, in both formats;
    /// names that are not plain take the parse.
    #[test]
    fn a_plain_frame_is_made_as_its_parse_makes_it() {
        let plain = [
            "fn_0",
            "main",
            "java.lang.Thread.run",
            "x86_64_start",
            "a.b",
            "9lives",
        ];
        for raw in plain {
            assert!(names::is_plain_symbol(raw), "{raw}");
            for format in [InputFormat::Folded, InputFormat::PySpy] {
                assert_eq!(make_frame(format, raw), parse_frame(format, raw), "{raw}");
            }
        }
        let parsed = [
            "_ZN3foo3barEv",
            "libc.so.6",
            "[unknown]",
            "f_[j]",
            "py::f:/a.py",
        ];
        for raw in parsed {
            assert!(!names::is_plain_symbol(raw), "{raw}");
        }
    }

    #[test]
    fn counts_are_integers_or_exact_decimals() {
        assert_eq!(count("56"), Ok((56, 0)));
        assert_eq!(count("12.5"), Ok((125, 1)));
        assert_eq!(count("31.000"), Ok((31, 0)));
        assert_eq!(count(".25"), Ok((25, 2)));
        assert_eq!(count("7."), Ok((7, 0)));
        assert_eq!(count("18446744073709551615"), Ok((u64::MAX, 0)));
        assert!(
            count("18446744073709551616")
                .unwrap_err()
                .contains("64 bits")
        );
        assert!(count("-3").unwrap_err().contains("negative"));
        assert!(count(".").is_err());
        assert!(count("1.2.3").is_err());
        assert!(count("0x10").is_err());
        assert!(
            count("1.0000000001")
                .unwrap_err()
                .contains("decimal places")
        );
    }

    #[test]
    fn modules_as_collapsers_and_perf_write_them() {
        assert_eq!(bracketed_module("[libc.so.6]"), Some("libc.so.6"));
        assert_eq!(bracketed_module("[unknown]"), None);
        assert_eq!(bracketed_module("[worker tid=1]"), None);
        assert_eq!(
            split_module_suffix("malloc (/usr/lib/libc.so.6)"),
            Some(("malloc", "/usr/lib/libc.so.6"))
        );
        assert_eq!(split_module_suffix("f ([vdso])"), Some(("f", "[vdso]")));
        assert_eq!(split_module_suffix("run (app.py:12)"), None);
        assert_eq!(split_module_suffix("foo(int)"), None);
        assert_eq!(split_module_suffix("a (b c)"), None);
    }

    #[test]
    fn process_names_as_collapsers_write_them() {
        for name in [
            "java",
            "python3.11",
            "kworker/0:1",
            "java-1234",
            "java-1234/1240",
        ] {
            assert!(looks_like_process_name(name), "{name}");
        }
        for name in [
            "[unknown]",
            "std::rt::lang_start",
            "main(int)",
            "a_very_long_function_name",
            "thread 1",
            "",
        ] {
            assert!(!looks_like_process_name(name), "{name}");
        }
    }

    /// Every folded input in fixtures/ (py-spy's among them) and hand-made lines for each
    /// branch of the reader (threads, process roots, decimals that rescale, bad and non-UTF-8
    /// lines, empty stacks, caches past their trial) read on one thread and on two give the
    /// same profile to the last field, ids and order included; errors alike.
    #[test]
    fn one_thread_and_two_read_the_same_profile() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut paths: Vec<std::path::PathBuf> = Vec::new();
        let mut dirs = vec![root];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if super::super::open(&path, &ReadOptions::default())
                    .is_ok_and(|(_, f)| matches!(f, InputFormat::Folded | InputFormat::PySpy))
                {
                    paths.push(path);
                }
            }
        }
        assert!(paths.len() >= 10, "{paths:?}");
        let dir = tempfile::tempdir().unwrap();
        let mut many = String::new();
        // past both caches' trial, with lines repeated and frames shared
        for i in 0..(CacheUse::TRIAL as usize + 3000) {
            many.push_str(&format!("main;run;f{} {}\n", i % 70_000, i % 5 + 1));
        }
        let made = [
            (
                "threads",
                "[w-1 tid=5];a;b 3\n[w-2 tid=6];a;b 2\n[w-1 tid=5];a;c 1\n".to_string(),
            ),
            (
                "roots",
                "java;start_thread;foo 3\njava;start_thread;bar 2\n".to_string(),
            ),
            ("decimals", "a;b 1\na;c 2.5\nd 0.125\na;b 3\n".to_string()),
            (
                "bad",
                "a;b 1\nbad line\na;\u{fffd}c zz\na;c 2\n\n# x\n".to_string(),
            ),
            ("empty", "a;b 1\n 2\na;b 1\n".to_string()),
            ("differential", "a;b 1\nx;y 3 4\n".to_string()),
            ("many", many),
        ];
        for (name, text) in &made {
            let path = dir.path().join(format!("{name}.folded"));
            std::fs::write(&path, text).unwrap();
            paths.push(path);
        }
        let lossy = dir.path().join("lossy.folded");
        std::fs::write(&lossy, b"a;\xff\xfeb 1\na;c 2\na;\xff\xfeb 1\n").unwrap();
        paths.push(lossy);
        for path in &paths {
            let read = |threads| {
                let options = ReadOptions::default();
                let (source, format) = super::super::open(path, &options).unwrap();
                match read_on(source, format, &options, threads) {
                    Ok(profile) => format!("{profile:?}"),
                    Err(e) => format!("error: {e}"),
                }
            };
            let one = read(Threads::One);
            assert_eq!(one, read(Threads::Two), "{}", path.display());
        }
    }

    /// Lines that share whole frames, part of a frame, or nothing with the line before:
    /// only whole shared frames are taken from it.
    #[test]
    fn frames_shared_with_the_line_before_are_the_same_frames() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let text = "a;bc;d 1\na;bd;e 2\na;bd;e;f 3\nx 4\na;bc;d 5\na;bc;d; 6\na;b 7\n";
        std::fs::write(file.path(), text).unwrap();
        let source = Source::open(file.path()).unwrap();
        let profile = read(source, InputFormat::Folded, &ReadOptions::default()).unwrap();
        let rows: Vec<(String, u128)> = profile
            .rows()
            .map(|row| {
                let names: Vec<&str> = (profile.stack(row.stack).iter().rev())
                    .map(|&f| &*profile.frame(f).name)
                    .collect();
                (folded::join_frames(&names), row.values[0])
            })
            .collect();
        let want = [
            ("a;bc;d", 6),
            ("a;bd;e", 2),
            ("a;bd;e;f", 3),
            ("x", 4),
            ("a;bc;d;", 6),
            ("a;b", 7),
        ];
        let want: Vec<(String, u128)> = want.iter().map(|(s, w)| (s.to_string(), *w)).collect();
        assert_eq!(rows, want);
        // one frame per distinct text, `a` once
        assert_eq!(profile.frame_count(), 9);
    }
}

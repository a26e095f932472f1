//! Readers: one per input format, each turning its input into a [`Profile`].
//!
//! The format is detected from the content (perf.data magic, gzip/protobuf, the shape of the
//! first lines), never from the file name; `--format-in` overrides detection.

pub mod bad_lines;
pub mod cpuprofile;
pub mod filter;
pub mod folded;
pub mod jfr;
pub mod name_memo;
pub mod perf_data;
pub mod perf_script;
pub mod pprof;
pub mod progress;
pub mod source;
pub mod speedscope;

use crate::error::{Error, Position, Result};
use crate::model::{Notice, Profile, Unit};
use crate::names;
use crate::symbolize::SymbolOptions;
use source::Source;
use std::path::Path;

/// The input formats whose knows; also the values of `--format-in` (the variant docs stay
/// out of `--help`, which lists the names only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    /// `root;...;leaf N` (inferno, FlameGraph, async-profiler collapsed).
    Folded,
    /// py-spy `--format raw`: folded lines whose frames are `func (file.py:line)`.
    PySpy,
    PerfScript,
    Pprof,
    PerfData,
    /// speedscope JSON (py-spy, rbspy...): sampled and evented profiles, one thread each.
    Speedscope,
    /// JDK Flight Recorder (`.jfr`): the JDK's recorder and async-profiler's `-o jfr`.
    Jfr,
    /// V8 CPU profile (`.cpuprofile`): `node --cpu-prof`, Chrome DevTools.
    Cpuprofile,
}

impl InputFormat {
    pub fn name(self) -> &'static str {
        match self {
            InputFormat::Folded => "folded",
            InputFormat::PySpy => "py-spy raw",
            InputFormat::PerfScript => "perf script",
            InputFormat::Pprof => "pprof",
            InputFormat::PerfData => "perf.data",
            InputFormat::Speedscope => "speedscope",
            InputFormat::Jfr => "JFR",
            InputFormat::Cpuprofile => "cpuprofile",
        }
    }
}

/// What a reader needs to know beyond the bytes. Built once from the command line.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Overrides content detection.
    pub format: Option<InputFormat>,
    /// The unit of folded counts, which folded text does not say. Default is samples.
    pub unit: Option<Unit>,
    /// Symbolisation options for perf.data input.
    pub symbols: SymbolOptions,
    /// Cap on the decompressed size of a gzip input that a reader holds in memory (gzip
    /// bombs); see [`Source::read_capped`]. Default [`source::DEFAULT_MAX_DECOMPRESSED`].
    pub max_decompressed: Option<u64>,
    /// Folded: keep a process-name root frame (stackcollapse-perf's `java;...`) as a frame
    /// instead of reading it as the thread.
    pub keep_process_root: bool,
    /// `--comm`, `--pid`, `--tid`, `--time`: applied by the perf.data and perf script readers,
    /// refused for every other format.
    pub filter: filter::SampleFilter,
    /// Keep the samples over time as well (`report --by time`, the HTML page): readers of
    /// inputs that stamp each sample with a time fill `meta.timeline`; the rest leave it empty.
    pub timeline: bool,
    /// Normalised names shared by the inputs of a run (`report --each`); the pprof reader
    /// looks its functions' names up in it ([`name_memo`]).
    pub names: Option<std::sync::Arc<name_memo::NameMemo>>,
}

/// Reads one input into a validated profile.
pub fn read_profile(path: &Path, options: &ReadOptions) -> Result<Profile> {
    let (source, format) = open(path, options)?;
    let profile = match format {
        InputFormat::Folded | InputFormat::PySpy => folded::read(source, format, options)?,
        InputFormat::Pprof => pprof::read(source, options)?,
        InputFormat::PerfScript => perf_script::read(source, options)?,
        InputFormat::PerfData => perf_data::read(source, options)?,
        InputFormat::Speedscope => speedscope::read(source, options)?,
        InputFormat::Jfr => jfr::read(source, options)?,
        InputFormat::Cpuprofile => cpuprofile::read(source, options)?,
    };
    finish(path, format, profile)
}

/// A reader's profile as every reader's ends: the format noted first, the model checked.
fn finish(path: &Path, format: InputFormat, mut profile: Profile) -> Result<Profile> {
    profile.release_indexes();
    profile.meta.notes.insert(0, Notice::Format(format.name()));
    check_valid(path, &profile)?;
    Ok(profile)
}

/// [`read_profile`], and the value each of the pprof label `keys` has on the samples (`None`
/// where no sample has it, or the input is not pprof): a pprof input is then decoded keeping
/// its samples, whose labels the model does not hold (`report --each --pprof-label`).
pub fn read_profile_labelled(
    path: &Path,
    options: &ReadOptions,
    keys: &[String],
) -> Result<(Profile, Vec<Option<String>>)> {
    if keys.is_empty() {
        return Ok((read_profile(path, options)?, Vec::new()));
    }
    let (source, format) = open(path, options)?;
    if format != InputFormat::Pprof {
        return Ok((read_profile(path, options)?, vec![None; keys.len()]));
    }
    let (profile, decoded) = pprof::read_keeping_samples(source, options)?;
    let profile = finish(path, format, profile)?;
    let values = keys
        .iter()
        .map(|key| pprof_label(path, &decoded, key))
        .collect::<Result<Vec<_>>>()?;
    Ok((profile, values))
}

/// The one value string label `key` has on the profile's samples; `None` when no sample has
/// it. Several values in one profile would need a row per value, which is not built yet.
fn pprof_label(path: &Path, decoded: &pprof::Decoded, key: &str) -> Result<Option<String>> {
    let (proto, strings) = (&decoded.proto, &decoded.strings);
    let text = |i: i64| strings.get(i as usize).unwrap_or("");
    let mut values: Vec<&str> = Vec::new();
    for sample in &proto.sample {
        for label in &sample.label {
            if label.str != 0 && text(label.key) == key {
                let value = text(label.str);
                if !values.contains(&value) {
                    values.push(value);
                }
            }
        }
    }
    match values.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one.to_string())),
        many => Err(Error::Unsupported(format!(
            "{}: --pprof-label {key}: the samples have {} values of it ({}...); a row per \
             label value",
            path.display(),
            many.len(),
            many.iter().take(3).copied().collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// [`Profile::validate`] after a reader: a broken invariant is a reader bug, reported against
/// the input that triggered it.
pub fn check_valid(path: &Path, profile: &Profile) -> Result<()> {
    profile
        .validate()
        .map_err(|e| Error::input(path, Position::Whole, format!("internal reader error: {e}")))
}

/// Opens an input and decides its format, for commands that take a format-specific path
/// (`convert` keeps a pprof input's own fields). A sample filter on a format that records no
/// thread or time per sample is refused here, before any reading.
pub fn open(path: &Path, options: &ReadOptions) -> Result<(Source, InputFormat)> {
    let mut source = Source::open(path)?;
    let format = match options.format {
        Some(f) => f,
        None => detect(&mut source)?,
    };
    if !matches!(
        format,
        InputFormat::PerfData | InputFormat::PerfScript | InputFormat::Jfr
    ) {
        options.filter.refuse(path, format.name())?;
    }
    Ok((source, format))
}

/// Decides the format from the first bytes of the (decompressed) input.
fn detect(source: &mut Source) -> Result<InputFormat> {
    let path = source.path.clone();
    let head = source.peek(source::DETECT_PEEK)?;
    if head.is_empty() {
        return Err(Error::input(
            path,
            Position::Whole,
            "empty input: no samples",
        ));
    }
    if head.starts_with(b"PERFILE2") {
        return Ok(InputFormat::PerfData);
    }
    if head.starts_with(jfr::chunk::MAGIC) {
        return Ok(InputFormat::Jfr);
    }
    // a few bytes of a binary format are no text: say what they are the start of
    for (magic, format) in [
        (&b"PERFILE2"[..], "perf.data"),
        (&[0x1f, 0x8b][..], "gzip"),
        (&jfr::chunk::MAGIC[..], "JFR"),
    ] {
        if head.len() < magic.len() && magic.starts_with(head) {
            return Err(Error::input(
                path,
                Position::Offset(head.len() as u64),
                format!(
                    "the input ends after {} byte(s) of a {format} file's magic number: \
                     truncated",
                    head.len()
                ),
            ));
        }
    }
    if let Some(kind) = pprof::legacy_kind(head) {
        let name = path.display();
        return Err(Error::input(
            &path,
            Position::Whole,
            format!("{kind}: convert with `go tool pprof -proto {name} > {name}.pb.gz`"),
        ));
    }
    if looks_like_protobuf(head) {
        return Ok(InputFormat::Pprof);
    }
    if let Some(offset) = head.iter().position(|&b| b == 0 || (b < 0x09)) {
        return Err(Error::input(
            path,
            Position::Offset(offset as u64),
            "binary data that is not perf.data or pprof; expected a profile \
             (perf.data, pprof, perf script text or folded stacks)",
        ));
    }
    if cpuprofile::looks_like_cpuprofile(head) {
        return Ok(InputFormat::Cpuprofile);
    }
    if looks_like_speedscope(head) {
        return Ok(InputFormat::Speedscope);
    }
    Ok(detect_text(head))
}

/// A JSON object whose `$schema` names speedscope, or that has `profiles` and `shared` (py-spy
/// writes `shared` last, so a head cut before it with `profiles` in it counts too).
fn looks_like_speedscope(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    if !text.trim_start().starts_with('{') {
        return false;
    }
    let has = |key: &str| text.contains(&format!("\"{key}\""));
    let schema_names_speedscope = text.split_once("\"$schema\"").is_some_and(|(_, rest)| {
        rest.split(',')
            .next()
            .is_some_and(|v| v.contains("speedscope"))
    });
    schema_names_speedscope
        || (has("profiles") && (has("shared") || head.len() >= source::DETECT_PEEK))
}

/// pprof is a protobuf `Profile`; its fields come in any order (Go writes `time_nanos` or
/// `period_type` first), so the first fields are parsed against the schema.
fn looks_like_protobuf(head: &[u8]) -> bool {
    pprof::looks_like_pprof(head)
}

fn detect_text(head: &[u8]) -> InputFormat {
    let text = String::from_utf8_lossy(head);
    let mut lines = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty());
    let first = lines.next().unwrap_or("");
    let second = text
        .lines()
        .skip_while(|l| l.starts_with('#') || l.is_empty())
        .nth(1)
        .unwrap_or("");
    // (a line of only a count is a folded or py-spy sample with an empty stack, not a frame)
    let count_only = |l: &str| l.trim().bytes().all(|b| b.is_ascii_digit());
    if second.starts_with(['\t', ' ']) && !first.starts_with(['\t', ' ']) && !count_only(second) {
        return InputFormat::PerfScript;
    }
    // perf script without call chains: one header line per sample, the frame at its end
    if perf_script::parse_header(first.trim_start()).is_some_and(|h| h.event.is_some()) {
        return InputFormat::PerfScript;
    }
    if looks_like_pyspy(&text) {
        return InputFormat::PySpy;
    }
    InputFormat::Folded
}

/// How many lines of the head [`looks_like_pyspy`] looks at.
const PYSPY_PROBE_LINES: usize = 16;

/// py-spy raw text: some frame of the first lines is a Python function with its source line
/// (`run (app.py:58)`). Not only the first frame: with `--native` the root frames are native
/// (`0x7fc4974c324a (libc.so.6)`), and with `--threads` a thread frame comes first.
fn looks_like_pyspy(text: &str) -> bool {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .take(PYSPY_PROBE_LINES)
        .flat_map(|line| {
            // the count after the last space is not part of the stack
            let stack = line.rsplit_once(' ').map_or(line, |(stack, _)| stack);
            stack.split(';')
        })
        .filter_map(names::pyspy_frame)
        .any(|f| f.kind == names::PyFrameKind::Python && f.line.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_text_shapes() {
        assert_eq!(detect_text(b"a;b;c 1\n"), InputFormat::Folded);
        assert_eq!(
            detect_text(b"<module> (main.py:6);run (app.py:58) 93\n"),
            InputFormat::PySpy
        );
        // py-spy writes a sample with an empty stack as ` COUNT`
        assert_eq!(
            detect_text(b"<module> (main.py:6);run (app.py:58) 93\n 3\n"),
            InputFormat::PySpy
        );
        // py-spy --native: the root frame is a native address, Python frames come later
        assert_eq!(
            detect_text(
                b"0x7fc4974c324a (libc.so.6);<module> (native_mix.py:52);deflate (libz.so.1) 1\n"
            ),
            InputFormat::PySpy
        );
        assert_eq!(
            detect_text(b"0x7fc4974c324a (libc.so.6);deflate (libz.so.1) 1\nmain (x.py:3) 2\n"),
            InputFormat::PySpy
        );
        assert_eq!(
            detect_text(
                b"0x7fc4974c324a (libc.so.6);deflate (libz.so.1) 1\nencoder_call (_json.c:9) 1\n"
            ),
            InputFormat::Folded
        );
        assert_eq!(
            detect_text(b"java 1 2.0: 1 cpu-clock:\n\tffff f+0x1 (/x)\n"),
            InputFormat::PerfScript
        );
        assert_eq!(
            detect_text(b"# comment\nio/ktor/A.b;byte[]_[i] 10\n"),
            InputFormat::Folded
        );
    }

    #[test]
    fn detects_speedscope_json() {
        let schema =
            br#"{"$schema":"https://www.speedscope.app/file-format-schema.json","profiles":[]}"#;
        assert!(looks_like_speedscope(schema));
        assert!(looks_like_speedscope(
            b"\n {\"shared\":{\"frames\":[]},\"profiles\":[]}"
        ));
        assert!(!looks_like_speedscope(b"{\"profiles\": 1}"));
        assert!(!looks_like_speedscope(b"a;b;c 1\n"));
    }
}

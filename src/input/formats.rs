//! The input formats, one row each: its name, its probe of an input's first bytes, its reader,
//! and whether it can filter samples by thread and time. Detection asks the rows in order,
//! the way inferno's `collapse::guess` asks each collapser in turn; adding a format is a
//! reader and a row here.

use super::options::{InputFormat, Probe, ReadOptions};
use super::source::{self, Source};
use super::{cpuprofile, folded, jfr, perf_data, perf_script, pprof, speedscope};
use crate::error::{Error, Position, Result};
use crate::model::Profile;

/// What kind of bytes a format is: binary formats are asked first, and a head with control
/// bytes that none of them claims is refused before any text format sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Known by a magic number or a binary encoding; [`Probe::NeedMore`] is an input cut
    /// inside its magic number.
    Binary,
    /// Text (JSON included); [`Probe::NeedMore`] is the start of the format cut short, which
    /// its reader reads to say where.
    Text,
}

/// One input format.
pub struct Row {
    pub format: InputFormat,
    /// The name in messages and the format note (`InputFormat::name`).
    pub name: &'static str,
    pub kind: Kind,
    /// What the first bytes of an input ([`source::DETECT_PEEK`] of them, or the whole input
    /// when shorter) say about this format.
    pub probe: fn(&[u8]) -> Probe,
    pub read: fn(Source, &ReadOptions) -> Result<Profile>,
    /// Whether the format records the thread and time of each sample, so that `--comm`,
    /// `--pid`, `--tid` and `--time` apply; for the rest they are refused.
    pub filters_samples: bool,
}

/// The formats in the order detection asks them: binary ones first, then the text ones, the
/// JSON formats before the line formats and folded last (it takes any text).
pub const ROWS: &[Row] = &[
    Row {
        format: InputFormat::PerfData,
        name: "perf.data",
        kind: Kind::Binary,
        probe: perf_data::probe,
        read: perf_data::read,
        filters_samples: true,
    },
    Row {
        format: InputFormat::Jfr,
        name: "JFR",
        kind: Kind::Binary,
        probe: jfr::probe,
        read: jfr::read,
        filters_samples: true,
    },
    Row {
        format: InputFormat::Pprof,
        name: "pprof",
        kind: Kind::Binary,
        probe: pprof::probe,
        read: pprof::read,
        filters_samples: false,
    },
    Row {
        format: InputFormat::Cpuprofile,
        name: "cpuprofile",
        kind: Kind::Text,
        probe: cpuprofile::probe,
        read: cpuprofile::read,
        filters_samples: false,
    },
    Row {
        format: InputFormat::Speedscope,
        name: "speedscope",
        kind: Kind::Text,
        probe: speedscope::probe,
        read: speedscope::read,
        filters_samples: false,
    },
    Row {
        format: InputFormat::PerfScript,
        name: "perf script",
        kind: Kind::Text,
        probe: perf_script::probe,
        read: perf_script::read,
        filters_samples: true,
    },
    Row {
        format: InputFormat::PySpy,
        name: "py-spy raw",
        kind: Kind::Text,
        probe: folded::probe_pyspy,
        read: |source, options| folded::read(source, InputFormat::PySpy, options),
        filters_samples: false,
    },
    Row {
        format: InputFormat::Folded,
        name: "folded",
        kind: Kind::Text,
        probe: folded::probe,
        read: |source, options| folded::read(source, InputFormat::Folded, options),
        filters_samples: false,
    },
];

/// The row of `format`.
pub fn row(format: InputFormat) -> &'static Row {
    ROWS.iter()
        .find(|row| row.format == format)
        .expect("every input format has a row")
}

impl InputFormat {
    pub fn name(self) -> &'static str {
        row(self).name
    }
}

/// Decides the format from the first bytes of the (decompressed) input: the first row whose
/// probe does not say no.
pub fn detect(source: &mut Source) -> Result<InputFormat> {
    let path = source.path.clone();
    let head = source.peek(source::DETECT_PEEK)?;
    if head.is_empty() {
        return Err(Error::input(
            path,
            Position::Whole,
            "empty input: no samples",
        ));
    }
    refuse_unreadable(&path, head)?;
    let mut text_checked = false;
    for row in ROWS {
        if row.kind == Kind::Text && !text_checked {
            refuse_binary(&path, head)?;
            text_checked = true;
        }
        match ((row.probe)(head), row.kind) {
            (Probe::No, _) => {}
            (Probe::Yes, _) | (Probe::NeedMore, Kind::Text) => return Ok(row.format),
            (Probe::NeedMore, Kind::Binary) => return Err(cut_in_magic(&path, head, row.name)),
        }
    }
    unreachable!("the folded row takes any text")
}

/// The error for an input that ends inside the magic number of `what`.
fn cut_in_magic(path: &std::path::Path, head: &[u8], what: &str) -> Error {
    Error::input(
        path,
        Position::Offset(head.len() as u64),
        format!(
            "the input ends after {} byte(s) of a {what} file's magic number: truncated",
            head.len()
        ),
    )
}

/// Inputs no row reads, refused with what they are: a gzip stream cut inside its magic
/// number (gzip is undone by [`Source`], not a format), legacy pprof, with the command
/// that converts it, and the profilers' formats not read yet ([`not_read_yet`]).
fn refuse_unreadable(path: &std::path::Path, head: &[u8]) -> Result<()> {
    const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b];
    if Probe::of_magic(head, GZIP_MAGIC) == Probe::NeedMore {
        return Err(cut_in_magic(path, head, "gzip"));
    }
    if let Some(kind) = pprof::legacy_kind(head) {
        let name = path.display();
        return Err(Error::input(
            path,
            Position::Whole,
            format!("{kind}: convert with `go tool pprof -proto {name} > {name}.pb.gz`"),
        ));
    }
    if let Some(what) = not_read_yet(head) {
        return Err(Error::input(path, Position::Whole, what));
    }
    Ok(())
}

/// Profiles whose formats whose does not read yet, by their first bytes, with what reads
/// instead (issue 57): stackprof's dump (Ruby `Marshal` data: version 4.8, then a hash) and
/// the Firefox Profiler's JSON (vernier, samply, Gecko: an object whose first key is
/// `meta`).
fn not_read_yet(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(b"\x04\x08{") {
        return Some(
            "a stackprof dump (Ruby Marshal data): not supported yet; record with rbspy \
             (`rbspy record --format collapsed`), whose frames name their files, or read \
             `stackprof --stackcollapse DUMP` as folded text (method names only, so claim the \
             program's with --user)",
        );
    }
    let text = head.trim_ascii_start();
    let first_key = text.strip_prefix(b"{").map(<[u8]>::trim_ascii_start);
    if first_key.is_some_and(|k| k.starts_with(b"\"meta\"")) {
        return Some(
            "a Firefox Profiler profile (vernier, samply, Gecko): not supported yet; record \
             Ruby with rbspy (`--format speedscope` or `--format collapsed`), or read the \
             recording samply made it from (perf.data)",
        );
    }
    None
}

/// A head with control bytes that no binary row claimed is no text format either.
fn refuse_binary(path: &std::path::Path, head: &[u8]) -> Result<()> {
    match head.iter().position(|&b| b == 0 || (b < 0x09)) {
        Some(offset) => Err(Error::input(
            path,
            Position::Offset(offset as u64),
            "binary data that is not perf.data or pprof; expected a profile \
             (perf.data, pprof, perf script text or folded stacks)",
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The format the text rows give `head` (what detection gives a text input).
    fn detect_text(head: &[u8]) -> InputFormat {
        ROWS.iter()
            .filter(|row| row.kind == Kind::Text)
            .find(|row| (row.probe)(head) != Probe::No)
            .map(|row| row.format)
            .unwrap()
    }

    #[test]
    fn every_format_has_one_row() {
        use InputFormat::*;
        let all = [
            Folded, PySpy, PerfScript, Pprof, PerfData, Speedscope, Jfr, Cpuprofile,
        ];
        for format in all {
            // a new format fails to compile here until it is in `all` above
            match format {
                Folded | PySpy | PerfScript | Pprof | PerfData | Speedscope | Jfr | Cpuprofile => {}
            }
            assert_eq!(ROWS.iter().filter(|r| r.format == format).count(), 1);
        }
        assert_eq!(ROWS.last().unwrap().format, InputFormat::Folded);
    }

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
    fn json_cut_short_is_the_json_format_it_starts_like() {
        let cpuprofile = br#"{"nodes":[{"id":1,"callFrame":{"function"#;
        assert_eq!(detect_text(cpuprofile), InputFormat::Cpuprofile);
        let speedscope = br#"{"$schema":"https://www.speeds"#;
        assert_eq!(detect_text(speedscope), InputFormat::Speedscope);
        // whole JSON that no JSON format claims stays with folded, as before
        assert_eq!(detect_text(b"{\"nodes\": 1}\n"), InputFormat::Folded);
    }
}

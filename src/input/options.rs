//! What every reader is handed besides its bytes: the format it reads as, the options of the
//! run, and the answer a format's probe gives about a head. Readers take these from here, not
//! from the dispatcher (`input/mod.rs`), which sits above them all and calls them.

use super::filter::SampleFilter;
use super::name_memo::NameMemo;
use crate::model::Unit;
use crate::symbolize::SymbolOptions;
use std::sync::Arc;

/// The input formats whose knows; `cli` maps `--format-in`'s values onto them.
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
    /// bombs); see
    /// [`Source::read_capped`](super::source::Source::read_capped). Default
    /// [`DEFAULT_MAX_DECOMPRESSED`](super::source::DEFAULT_MAX_DECOMPRESSED).
    pub max_decompressed: Option<u64>,
    /// The longest line the line-based readers (folded, py-spy raw, perf script) take, in
    /// bytes (`--max-line`); `None`: [`DEFAULT_MAX_LINE`](super::source::DEFAULT_MAX_LINE).
    pub max_line: Option<u64>,
    /// Folded: keep a process-name root frame (stackcollapse-perf's `java;...`) as a frame
    /// instead of reading it as the thread.
    pub keep_process_root: bool,
    /// `--comm`, `--pid`, `--tid`, `--time`: applied by the perf.data and perf script readers,
    /// refused for every other format.
    pub filter: SampleFilter,
    /// Keep the samples over time as well (`report --by time`, the HTML page): readers of
    /// inputs that stamp each sample with a time fill `meta.timeline`; the rest leave it empty.
    pub timeline: bool,
    /// Normalised names shared by the inputs of a run (`report --each`); the pprof reader
    /// looks its functions' names up in it ([`NameMemo`]).
    pub names: Option<Arc<NameMemo>>,
}

/// A format's answer about the first bytes of an input ([`super::formats`] asks each format
/// in turn; the first answer that is not [`Probe::No`] decides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// The head is this format.
    Yes,
    /// The head is not this format.
    No,
    /// The head is the start of this format but ends before it shows enough to be sure: the
    /// input is cut short there (a head of the whole peek is long enough for every probe).
    NeedMore,
}

impl Probe {
    /// The answer for a format known by its first bytes `magic`: a head that is a shorter
    /// part of them is an input that ends inside the magic number.
    pub fn of_magic(head: &[u8], magic: &[u8]) -> Probe {
        if head.starts_with(magic) {
            Probe::Yes
        } else if !head.is_empty() && magic.starts_with(head) {
            Probe::NeedMore
        } else {
            Probe::No
        }
    }

    /// [`Probe::NeedMore`] for a head that is a JSON object cut short whose first key is one
    /// of `keys` (or, cut inside that key, the start of one): the start of a JSON format too
    /// short for its [`Probe::Yes`]. [`Probe::No`] otherwise, also for a whole JSON value (a
    /// complete object that said no is not cut short).
    pub fn of_json_start(head: &[u8], keys: &[&str]) -> Probe {
        let Some(rest) = head.trim_ascii_start().strip_prefix(b"{") else {
            return Probe::No;
        };
        let rest = rest.trim_ascii_start();
        let first_key_fits = match rest.strip_prefix(b"\"") {
            None => rest.is_empty(),
            Some(key) => match key.iter().position(|&b| b == b'"') {
                Some(end) => keys.iter().any(|k| k.as_bytes() == &key[..end]),
                None => keys.iter().any(|k| k.as_bytes().starts_with(key)),
            },
        };
        let cut_short = || {
            serde_json::from_slice::<serde::de::IgnoredAny>(head)
                .is_err_and(|e| e.classify() == serde_json::error::Category::Eof)
        };
        if first_key_fits && cut_short() {
            Probe::NeedMore
        } else {
            Probe::No
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_prefixes_need_more() {
        assert_eq!(Probe::of_magic(b"PERFILE2xx", b"PERFILE2"), Probe::Yes);
        assert_eq!(Probe::of_magic(b"PERF", b"PERFILE2"), Probe::NeedMore);
        assert_eq!(Probe::of_magic(b"PERX", b"PERFILE2"), Probe::No);
        assert_eq!(Probe::of_magic(b"", b"PERFILE2"), Probe::No);
    }

    #[test]
    fn json_cut_short_with_a_fitting_first_key_needs_more() {
        let keys = ["nodes"];
        for head in [
            &b"{"[..],
            b" {\n",
            b"{\"no",
            b"{\"nodes\":[{\"id\":1,\"callF",
        ] {
            assert_eq!(
                Probe::of_json_start(head, &keys),
                Probe::NeedMore,
                "{head:?}"
            );
        }
        for head in [
            &b"{\"nodes\": 1}"[..],
            b"{\"other\":[",
            b"a;b 1\n",
            b"[{\"nodes\"",
        ] {
            assert_eq!(Probe::of_json_start(head, &keys), Probe::No, "{head:?}");
        }
    }
}

//! `perf script` text: a header line per sample (`comm [pid/]tid [cpu] time: [period] event:`),
//! then one line per frame, leaf first (`addr sym+off (dso)`), and a blank line between
//! samples.
//!
//! perf versions and `-F` field lists move these pieces around, which is what breaks other
//! collapsers; this reader finds the fields by shape instead of by position: the pid token is
//! the first all-digit (`123` or `123/456`) token after the command name, the event is the
//! first later token ending in `:` that is not a timestamp, and a plain number right before the
//! event is the period. Frame lines may lack the address (`-F sym`), the offset (`-F -symoff`)
//! or the dso; `(inlined)` frames take the module of their physical frame; `[unknown]` stays an
//! unknown frame with its dso as module.
//!
//! Streaming: one reused line buffer, frames cached by (symbol, dso) text, so the cost per
//! frame line is one hash lookup.

use super::bad_lines::BadLines;
use super::filter::{FilterTally, SampleFilter, SampleKey, TimeSlice};
use super::options::{Probe, ReadOptions};
use super::progress::Progress;
use super::source::Source;
use crate::error::{Error, Position, Result};
use crate::model::perf::{event_type_name, event_unit};
use crate::model::{
    Frame, FrameId, FrameKind, Notice, Profile, SampleType, ThreadId, Timeline, UNKNOWN, Utf8Place,
    perf,
};
use crate::names;
use arcstr::ArcStr;
use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};

/// Reads a whole `perf script` dump into a profile: one sample type per event (weighted by
/// period) followed by `samples` (one per sample); the first event is the default metric.
/// perf script text: a sample's header line followed by its indented frames, or (without call
/// chains) a first line that is a sample header with an event, the frame at its end.
pub fn probe(head: &[u8]) -> Probe {
    let text = String::from_utf8_lossy(head);
    let mut lines = text
        .lines()
        .skip_while(|l| l.starts_with('#') || l.is_empty());
    let first = lines.next().unwrap_or("");
    let second = lines.next().unwrap_or("");
    // (a line of only a count is a folded or py-spy sample with an empty stack, not a frame)
    let count_only = |l: &str| l.trim().bytes().all(|b| b.is_ascii_digit());
    let frames_follow =
        second.starts_with(['\t', ' ']) && !first.starts_with(['\t', ' ']) && !count_only(second);
    if frames_follow || parse_header(first.trim_start()).is_some_and(|h| h.event.is_some()) {
        Probe::Yes
    } else {
        Probe::No
    }
}

pub fn read(mut source: Source, options: &ReadOptions) -> Result<Profile> {
    source.cap_lines(options.max_line);
    let mut filter = options.filter.clone();
    if let Some(time @ TimeSlice::Percent { .. }) = &filter.time {
        let (first, last) = time_range(&source.path)?;
        filter.time = Some(time.resolve(first, last));
    }
    // gzip: the file size says nothing about the text size, so a spinner instead of a bar
    let total = (!source.gzipped)
        .then(|| std::fs::metadata(&source.path).ok().map(|m| m.len()))
        .flatten();
    let mut reader = ScriptReader::new(source.path.clone(), filter);
    if options.timeline {
        reader.timeline = Some(Timeline::new(2));
    }
    let mut progress = Progress::new(total, "reading perf script");
    let mut line = Vec::with_capacity(4096);
    let mut read_bytes = 0u64;
    loop {
        let n = source.read_line(&mut line)?;
        if n == 0 {
            break;
        }
        read_bytes += n as u64;
        progress.set(read_bytes);
        reader.line_no += 1;
        reader.line(&line)?;
    }
    progress.finish();
    let mut profile = reader.finish()?;
    let why = crate::symbolize::diagnose_printed_unknowns(&profile, &options.symbols);
    profile.meta.unresolved.extend(why);
    Ok(profile)
}

/// The first and last sample times of a perf script file, for percent `--time` slices: the
/// text does not carry perf.data's SAMPLE_TIME header, so a first pass reads them from the
/// sample headers (perf records the same two times there). Standard input cannot be read
/// twice, and is refused.
fn time_range(path: &Path) -> Result<(u64, u64)> {
    let refuse = |why: &str| {
        Error::Usage(format!(
            "{}: a percent --time slice needs the first and last sample times, and {why}; give \
             START,END in seconds as the text prints them",
            path.display()
        ))
    };
    if !path.is_file() {
        return Err(refuse(
            "this input is not a regular file that can be read twice to find them",
        ));
    }
    let mut source = Source::open(path)?;
    let mut line = Vec::with_capacity(4096);
    let mut range: Option<(u64, u64)> = None;
    while source.read_line(&mut line)? > 0 {
        if matches!(line.first(), Some(b'\t' | b'#') | None) {
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let Some(time) = parse_header(text.trim())
            .filter(|h| h.event.is_some())
            .and_then(|h| h.time)
        else {
            continue;
        };
        range = Some(match range {
            None => (time, time),
            Some((first, last)) => (first.min(time), last.max(time)),
        });
    }
    range.ok_or_else(|| refuse("no sample header of this file has a time"))
}

/// One frame line, parsed.
#[derive(Debug, PartialEq, Eq)]
pub struct FrameLine<'a> {
    pub addr: Option<u64>,
    /// Symbol without `+0xOFF`.
    pub sym: &'a str,
    /// The text in the last parentheses, if any (`inlined` for inline frames).
    pub dso: Option<&'a str>,
}

/// Parses `\t  addr sym+0xoff (dso)` (every part but the symbol optional). Whether the line
/// is a frame at all is [`FrameLine::is_frame`]'s to say.
pub fn parse_frame_line(line: &str) -> Option<FrameLine<'_>> {
    let line = line.trim();
    if line.is_empty() {
        return None;
    }
    // a tab may separate address and symbol (`b3cea6c4\tLock::unlock() (/system/lib/libc.so)`)
    let (addr, rest) = match line.split_once([' ', '\t']) {
        Some((first, rest)) if is_hex(first) => (u64::from_str_radix(first, 16).ok(), rest.trim()),
        _ if is_hex(line) => return None,
        _ => (None, line),
    };
    let (sym, dso) = match rest.rfind(" (") {
        Some(i) if rest.ends_with(')') => (&rest[..i], Some(&rest[i + 2..rest.len() - 1])),
        _ => match rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
            // `-F ip,dso`: no symbol at all
            Some(dso) if addr.is_some() && !dso.contains(' ') => (UNKNOWN, Some(dso)),
            _ => (rest, None),
        },
    };
    Some(FrameLine {
        addr,
        sym: strip_offset(sym.trim_end()),
        dso,
    })
}

impl FrameLine<'_> {
    /// A frame line has an address or a `(dso)`, as every `perf script` field list that prints
    /// frames gives one of them; text with neither (`THIS_IS_A_WEIRD_LINE`) inside a stack is
    /// not a frame, as in stackcollapse-perf and inferno.
    pub fn is_frame(&self) -> bool {
        self.addr.is_some() || self.dso.is_some()
    }
}

/// A source-line line of `-F +srcline`: space-indented `file:line` (`??:0` when unknown).
fn is_srcline(line: &str) -> bool {
    if !line.starts_with(' ') {
        return false;
    }
    let t = line.trim();
    !t.contains(' ')
        && t.rsplit_once(':').is_some_and(|(file, n)| {
            !file.is_empty()
                && (n == "?" || (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())))
        })
}

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.len() <= 16 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `table_put+0x59` → `table_put`.
fn strip_offset(sym: &str) -> &str {
    if let Some(i) = sym.rfind("+0x")
        && i > 0
        && sym[i + 3..].bytes().all(|b| b.is_ascii_hexdigit())
        && sym.len() > i + 3
    {
        return &sym[..i];
    }
    sym
}

/// The parts of a sample header line the reader uses.
#[derive(Debug, PartialEq, Eq)]
pub struct Header<'a> {
    pub comm: &'a str,
    /// `pid/tid` as perf prints them with `-F pid,tid`; a lone number is the tid (perf
    /// script's default fields), and the pid is then unknown.
    pub pid: Option<i32>,
    pub tid: Option<i32>,
    /// The sample time in nanoseconds (`2863.902713:`).
    pub time: Option<u64>,
    /// Event name without the trailing `:` (`cpu-clock:ppp`).
    pub event: Option<&'a str>,
    pub period: Option<u64>,
    /// Text after the event: the sample's own frame when the recording had no call graph.
    pub rest: &'a str,
}

/// Parses a header line by shape (see the module docs).
pub fn parse_header(line: &str) -> Option<Header<'_>> {
    let tokens = tokens(line);
    let pid_index = tokens
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, (_, t))| is_pid_token(t))
        .map(|(i, _)| i)
        .or_else(|| is_pid_token(tokens.first()?.1).then_some(0))?;
    let comm = if pid_index == 0 {
        ""
    } else {
        line[..tokens[pid_index].0].trim()
    };
    let (pid, tid) = match tokens[pid_index].1.split_once('/') {
        Some((pid, tid)) => (pid.parse().ok(), tid.parse().ok()),
        None => (None, tokens[pid_index].1.parse().ok()),
    };
    let mut event = None;
    let mut period = None;
    let mut time = None;
    let mut rest = "";
    let mut previous: Option<&str> = None;
    for &(start, t) in &tokens[pid_index + 1..] {
        if let Some(name) = t.strip_suffix(':')
            && is_time(name)
        {
            time = time.or_else(|| super::filter::parse_seconds(name));
        } else if let Some(name) = t.strip_suffix(':') {
            event = Some(name);
            period = previous.and_then(|p| p.parse().ok());
            rest = line[start + t.len()..].trim();
            break;
        }
        previous = Some(t);
    }
    Some(Header {
        comm,
        pid,
        tid,
        time,
        event,
        period,
        rest,
    })
}

fn tokens(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                out.push((s, &line[s..i]));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push((s, &line[s..]));
    }
    out
}

fn is_pid_token(t: &str) -> bool {
    let mut parts = t.split('/');
    let digits =
        |s: Option<&str>| s.is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    let first = parts.next();
    match (parts.next(), parts.next()) {
        (None, _) => digits(first),
        (Some(second), None) => {
            (digits(first) || first == Some("-1")) && (digits(Some(second)) || second == "-1")
        }
        _ => false,
    }
}

fn is_time(s: &str) -> bool {
    s.split_once('.').is_some_and(|(a, b)| {
        !a.is_empty()
            && a.bytes().all(|c| c.is_ascii_digit())
            && b.bytes().all(|c| c.is_ascii_digit())
    })
}

/// The frame perf shows for a symbol and dso, named as whose names frames; its kind from
/// perf's module and address conventions (`model::perf`), which the perf.data reader's
/// symboliser follows too, so both inputs classify the same.
fn perf_frame(sym: &str, dso: Option<&str>, addr: Option<u64>) -> Frame {
    let module = dso.filter(|d| !d.is_empty() && *d != UNKNOWN && *d != "inlined");
    let kind = match module.map_or(FrameKind::Native, perf::module_kind) {
        FrameKind::Native if addr.is_some_and(perf::is_kernel_address) => FrameKind::Kernel,
        kind => kind,
    };
    if kind == FrameKind::Jit
        && let Some(module) = module
        && sym != UNKNOWN
        && !sym.is_empty()
    {
        return crate::symbolize::jit::map_frame(sym, module);
    }
    let (name, kind) = if sym == UNKNOWN || sym.is_empty() {
        (UNKNOWN.to_string(), FrameKind::Unknown)
    } else {
        match kind {
            FrameKind::Jit => (names::java_perf_map_name(sym), kind),
            FrameKind::Kernel => (sym.to_string(), kind),
            _ => (names::normalize_symbol(sym).into_owned(), kind),
        }
    };
    Frame {
        name: name.into(),
        module: module.map(Into::into),
        file: None,
        line: None,
        kind,
    }
}

/// The header note for a dump with call chains and not one inline frame (perf 6.1 prints
/// none for frame-pointer call chains, issue 29): its owner view charges inlined library code
/// to the caller, and whose cannot add the frames to text (no build ids, addresses only with
/// `-F ip`), while it can from the perf.data.
fn no_inline_frames_note(profile: &Profile) -> Option<Notice> {
    let callchains = profile.rows().any(|r| profile.stack(r.stack).len() > 1);
    let inlined = profile.frames().any(|f| f.kind == FrameKind::Inlined);
    (callchains && !inlined).then_some(Notice::NoInlineFramesInText)
}

/// A sample's frame as read, before `(inlined)` frames learn their module.
struct PendingFrame {
    addr: Option<u64>,
    key: FrameId,
    /// Set for `(inlined)` frames: the symbol, to look up the module later.
    inlined: Option<Box<str>>,
}

/// The frames of one frame line: one frame, or an inline chain `A->B->C` as a run
/// (start, length) of `ScriptReader::chain_frames`.
#[derive(Clone, Copy)]
enum LineFrames {
    One(FrameId),
    Chain(u32, u32),
}

/// A sample waiting for the end of the file: frames, thread, event index, period.
type HeldSample = (
    Vec<PendingFrame>,
    Option<ThreadId>,
    usize,
    Option<u64>,
    Option<u64>,
);

struct ScriptReader {
    path: PathBuf,
    line_no: u64,
    profile: Profile,
    /// Event type name → index of its sample type; `samples` is added last in `finish`.
    events: Vec<String>,
    /// (symbol, dso) text → frame.
    frames: FxHashMap<Box<str>, FrameId>,
    /// Symbol → module of a physical frame with that symbol (for `(inlined)` frames).
    known_module: FxHashMap<Box<str>, Option<ArcStr>>,
    key: String,
    /// Frame line text after the address (with a kernel-address flag byte) → its frames.
    text_frames: FxHashMap<Box<[u8]>, LineFrames>,
    /// The frames of inline-chain lines, leaf first, each chain a run of this list.
    chain_frames: Vec<FrameId>,
    text_key: Vec<u8>,
    in_sample: bool,
    current: Vec<PendingFrame>,
    current_thread: Option<ThreadId>,
    current_event: usize,
    current_period: Option<u64>,
    /// The sample's time (nanoseconds), for the timeline.
    current_time: Option<u64>,
    /// The samples over time ([`ReadOptions::timeline`]), keyed by `time_keys`' index of
    /// (stack, event), with two values: the sample count and the summed period.
    timeline: Option<Timeline>,
    time_keys: FxHashMap<(crate::model::StackId, usize), u32>,
    /// Whether the sample being read passes `--comm`/`--pid`/`--tid`/`--time`.
    current_kept: bool,
    filter: SampleFilter,
    tally: FilterTally,
    /// Samples whose inline frames could not be placed yet: (frames, thread, event, period).
    held: Vec<HeldSample>,
    /// Rows as read: stack, thread, event index, period (the value vector is built at the end,
    /// when every event is known).
    rows: FxHashMap<(crate::model::StackId, Option<ThreadId>, usize), (u64, u128)>,
    samples: u64,
    /// Lines the reader could not place: skipped and counted ([`BadLines`]).
    bad_lines: BadLines,
    lossy_lines: u64,
    stack_buf: Vec<FrameId>,
}

impl ScriptReader {
    fn new(path: PathBuf, filter: SampleFilter) -> ScriptReader {
        ScriptReader {
            path,
            line_no: 0,
            // sample types are fixed in `finish`; frames and stacks are interned meanwhile
            profile: Profile::new(vec![SampleType::samples()]),
            events: Vec::new(),
            frames: FxHashMap::default(),
            known_module: FxHashMap::default(),
            key: String::new(),
            text_frames: FxHashMap::default(),
            chain_frames: Vec::new(),
            text_key: Vec::new(),
            in_sample: false,
            current: Vec::new(),
            current_thread: None,
            current_event: 0,
            current_period: None,
            current_time: None,
            timeline: None,
            time_keys: FxHashMap::default(),
            current_kept: true,
            filter,
            tally: FilterTally::default(),
            held: Vec::new(),
            rows: FxHashMap::default(),
            samples: 0,
            bad_lines: BadLines::default(),
            lossy_lines: 0,
            stack_buf: Vec::new(),
        }
    }

    fn line(&mut self, raw: &[u8]) -> Result<()> {
        let mut end = raw.len();
        while end > 0 && matches!(raw[end - 1], b'\n' | b'\r') {
            end -= 1;
        }
        let raw = &raw[..end];
        // tab-indented only: a space-indented line may be a right-aligned header (`  cc1 15196
        // ...`) whose hex-looking command name the fast path would take for an address
        if self.in_sample && raw.first() == Some(&b'\t') && self.fast_frame(raw) {
            return Ok(());
        }
        let text = match std::str::from_utf8(raw) {
            Ok(t) => std::borrow::Cow::Borrowed(t),
            Err(_) => {
                self.lossy_lines += 1;
                String::from_utf8_lossy(raw)
            }
        };
        let text: &str = &text;
        if text.trim().is_empty() {
            self.end_sample();
            return Ok(());
        }
        if text.starts_with('#') && !self.in_sample {
            return Ok(());
        }
        // perf indents frame lines with a tab; a header is indented with spaces when perf
        // right-aligns the command name (output without call chains); some tools print frame
        // lines at column 0, so inside a sample any line that is not a header may be a frame
        let indented = text.starts_with(['\t', ' ']);
        let header_like = !text.starts_with('\t')
            && parse_header(text.trim_start()).is_some_and(|h| h.event.is_some());
        if !header_like && (indented || self.in_sample) {
            if !self.in_sample {
                self.bad_line(text);
                return Ok(());
            }
            // `-F +srcline` adds `  churn.c:42` under each frame: not a frame
            if is_srcline(text) {
                return Ok(());
            }
            match parse_frame_line(text) {
                Some(f) if f.is_frame() => self.frame(f),
                // neither header nor frame inside a stack: skipped and counted, the sample kept
                _ => self.bad_line(text),
            }
            return Ok(());
        }
        self.end_sample();
        match parse_header(text.trim_start()) {
            Some(h) => self.start_sample(h),
            None => self.bad_line(text),
        }
        Ok(())
    }

    fn bad_line(&mut self, text: &str) {
        self.bad_lines.record(self.line_no, || {
            format!("`{}`", crate::error::quote(text.as_bytes()))
        });
    }

    fn start_sample(&mut self, h: Header<'_>) {
        self.in_sample = true;
        self.current.clear();
        self.current_thread = (!h.comm.is_empty()).then(|| self.profile.intern_thread(h.comm));
        let event = h.event.map(event_type_name).unwrap_or("samples");
        self.current_event = match self.events.iter().position(|e| e == event) {
            Some(i) => i,
            None => {
                self.events.push(event.to_string());
                self.events.len() - 1
            }
        };
        self.current_period = h.period;
        self.current_time = h.time;
        if !self.filter.is_empty() {
            let key = SampleKey {
                comm: (!h.comm.is_empty()).then_some(h.comm),
                pid: h.pid,
                tid: h.tid,
                time: h.time,
            };
            let line = self.line_no;
            self.current_kept = self.tally.count(&self.filter, &key, |field| match field {
                // perf script's default fields print the tid alone
                "pid" => format!(
                    "at line {line} (one number is the tid; `perf script -F +pid` prints \
                         pid/tid)"
                ),
                _ => format!("at line {line}"),
            });
        }
        if !h.rest.is_empty()
            && let Some(f) = parse_frame_line(h.rest)
        {
            self.frame(f);
        }
    }

    /// The common case, on bytes: `addr text` where `text` (symbol, offset and dso as printed)
    /// was seen before. Repeated frame lines cost one hash lookup, no UTF-8 check and no
    /// parsing. Returns false for anything else (the general path handles it).
    fn fast_frame(&mut self, raw: &[u8]) -> bool {
        let line = raw.trim_ascii();
        let Some(space) = line.iter().position(|&b| b == b' ' || b == b'\t') else {
            return false;
        };
        let (hex, rest) = (&line[..space], line[space + 1..].trim_ascii_start());
        if hex.is_empty() || hex.len() > 16 || !hex.iter().all(u8::is_ascii_hexdigit) {
            return false;
        }
        if rest.ends_with(b"(inlined)") || rest.is_empty() {
            return false;
        }
        let addr = hex.iter().fold(0u64, |a, &b| {
            (a << 4) | u64::from((b as char).to_digit(16).unwrap_or(0))
        });
        self.text_key.clear();
        self.text_key.push(perf::is_kernel_address(addr) as u8);
        self.text_key.extend_from_slice(rest);
        let cached = match self.text_frames.get(self.text_key.as_slice()) {
            Some(&cached) => cached,
            None => {
                let Ok(text) = std::str::from_utf8(line) else {
                    return false;
                };
                let Some(f) = parse_frame_line(text) else {
                    return false;
                };
                let cached = self.line_frames(&f);
                self.text_frames
                    .insert(self.text_key.as_slice().into(), cached);
                cached
            }
        };
        self.push_frames(cached, Some(addr));
        true
    }

    /// The frames one frame line stands for: one, or a perf-map-agent inline chain (caller and
    /// its inlined callees), interned once per distinct line text.
    fn line_frames(&mut self, f: &FrameLine<'_>) -> LineFrames {
        let Some(parts) = names::split_inline_chain(f.sym) else {
            return LineFrames::One(self.physical_frame(f));
        };
        let start = self.chain_frames.len() as u32;
        // leaf first: the innermost inlined callee, ..., then the physical caller
        for (i, part) in parts.iter().enumerate().rev() {
            let part = FrameLine {
                addr: f.addr,
                sym: part,
                dso: f.dso,
            };
            let id = if i == 0 {
                self.physical_frame(&part)
            } else {
                let mut frame = perf_frame(part.sym, part.dso, part.addr);
                frame.kind = FrameKind::Inlined;
                self.profile.intern_frame(frame)
            };
            self.chain_frames.push(id);
        }
        LineFrames::Chain(start, parts.len() as u32)
    }

    fn push_frames(&mut self, frames: LineFrames, addr: Option<u64>) {
        match frames {
            LineFrames::One(key) => self.current.push(PendingFrame {
                addr,
                key,
                inlined: None,
            }),
            LineFrames::Chain(start, len) => {
                for &key in &self.chain_frames[start as usize..(start + len) as usize] {
                    self.current.push(PendingFrame {
                        addr,
                        key,
                        inlined: None,
                    });
                }
            }
        }
    }

    fn frame(&mut self, f: FrameLine<'_>) {
        if f.dso == Some("inlined") {
            self.current.push(PendingFrame {
                addr: f.addr,
                key: FrameId(u32::MAX),
                inlined: Some(f.sym.into()),
            });
            return;
        }
        let frames = self.line_frames(&f);
        self.push_frames(frames, f.addr);
    }

    /// The frame of a non-inlined line, by (symbol, dso).
    fn physical_frame(&mut self, f: &FrameLine<'_>) -> FrameId {
        self.key.clear();
        self.key.push_str(f.sym);
        self.key.push('\0');
        self.key.push_str(f.dso.unwrap_or(""));
        match self.frames.get(self.key.as_str()) {
            Some(&id) => id,
            None => {
                let frame = perf_frame(f.sym, f.dso, f.addr);
                if !self.known_module.contains_key(f.sym) {
                    self.known_module.insert(f.sym.into(), frame.module.clone());
                }
                let id = self.profile.intern_frame(frame);
                self.frames.insert(self.key.as_str().into(), id);
                id
            }
        }
    }

    fn end_sample(&mut self) {
        if !self.in_sample {
            return;
        }
        self.in_sample = false;
        self.samples += 1;
        if !self.current_kept {
            self.current.clear();
            return;
        }
        let mut frames = std::mem::take(&mut self.current);
        let placed = self.place_inlined(&mut frames, false);
        if placed {
            self.add(
                &frames,
                self.current_thread,
                self.current_event,
                self.current_period,
                self.current_time,
            );
            frames.clear();
            self.current = frames;
        } else {
            self.held.push((
                frames,
                self.current_thread,
                self.current_event,
                self.current_period,
                self.current_time,
            ));
        }
    }

    /// Gives `(inlined)` frames their module, as the oracle does: the physical frame at the
    /// same address that follows them; else the module the same symbol has as a physical frame
    /// anywhere in the file (perf 6.1 prints some physical frames of DWARF-unwound stacks as
    /// `(inlined)`); else the neighbouring physical frame with the closest address. Returns
    /// false when the symbol may still appear later (only `last` resolves by neighbours).
    fn place_inlined(&mut self, frames: &mut [PendingFrame], last: bool) -> bool {
        for i in 0..frames.len() {
            let Some(sym) = frames[i].inlined.clone() else {
                continue;
            };
            let same_addr = frames[i + 1..]
                .iter()
                .take_while(|f| f.addr == frames[i].addr)
                .find(|f| f.inlined.is_none())
                .map(|f| self.profile.frame(f.key).module.clone());
            let module = match same_addr {
                Some(m) => m,
                None => match self.known_module.get(&*sym) {
                    Some(m) => m.clone(),
                    None if !last => return false,
                    None => self.nearest_module(frames, i),
                },
            };
            let frame = Frame {
                name: names::normalize_symbol(&sym).into(),
                module,
                file: None,
                line: None,
                kind: FrameKind::Inlined,
            };
            frames[i].key = self.profile.intern_frame(frame);
            frames[i].inlined = None;
        }
        true
    }

    fn nearest_module(&self, frames: &[PendingFrame], i: usize) -> Option<ArcStr> {
        let a = frames[i].addr.unwrap_or(0);
        let before = frames[..i].iter().rev().find(|f| f.inlined.is_none());
        let after = frames[i + 1..].iter().find(|f| f.inlined.is_none());
        [before, after]
            .into_iter()
            .flatten()
            .min_by_key(|f| f.addr.unwrap_or(0).abs_diff(a))
            .and_then(|f| self.profile.frame(f.key).module.clone())
    }

    fn add(
        &mut self,
        frames: &[PendingFrame],
        thread: Option<ThreadId>,
        event: usize,
        period: Option<u64>,
        time: Option<u64>,
    ) {
        self.stack_buf.clear();
        self.stack_buf.extend(frames.iter().map(|f| f.key));
        let stack = self.profile.intern_stack(&self.stack_buf);
        let slot = self.rows.entry((stack, thread, event)).or_default();
        let weight = u128::from(period.unwrap_or(1));
        slot.0 += 1;
        slot.1 += weight;
        if let (Some(timeline), Some(time)) = (&mut self.timeline, time) {
            let next = self.time_keys.len() as u32;
            let key = *self.time_keys.entry((stack, event)).or_insert(next);
            timeline.add_values(time, key, &[1, weight]);
        }
    }

    fn finish(mut self) -> Result<Profile> {
        self.end_sample();
        for (mut frames, thread, event, period, time) in std::mem::take(&mut self.held) {
            self.place_inlined(&mut frames, true);
            self.add(&frames, thread, event, period, time);
        }
        if self.samples == 0 {
            return Err(Error::input(
                &self.path,
                Position::Whole,
                "no samples: expected `perf script` output (a header line per sample, then \
                 one indented line per frame)",
            ));
        }
        let skipped = self.bad_lines.verdict(
            &self.path,
            self.line_no,
            self.samples,
            "not perf script output",
            "sample header lines `comm pid time: period event:` and indented frame lines",
        )?;
        let filtered = self.tally.finish(&self.path, &self.filter)?;
        let mut profile = self.build_profile();
        profile.meta.notes.extend(filtered);
        if let Some(note) = no_inline_frames_note(&profile) {
            profile.meta.notes.push(note);
        }
        profile.meta.warnings.extend(skipped);
        let mangled: Vec<&str> = profile
            .frames()
            .filter(|f| names::is_still_mangled(&f.name))
            .map(|f| &*f.name)
            .collect();
        if let Some(first) = mangled.first() {
            let warning = Notice::StillMangled {
                path: self.path.clone(),
                count: mangled.len(),
                first: first.to_string(),
            };
            profile.meta.warnings.push(warning);
        }
        if self.lossy_lines > 0 {
            let place = Utf8Place::ScriptLines {
                lines: self.lossy_lines,
            };
            let path = self.path.clone();
            profile.meta.warnings.push(Notice::NotUtf8 { path, place });
        }
        Ok(profile)
    }

    /// Moves frames, stacks and threads into a profile whose sample types are every event and
    /// `samples`.
    fn build_profile(&mut self) -> Profile {
        let n_events = self.events.len();
        let mut types: Vec<SampleType> = self
            .events
            .iter()
            .map(|e| SampleType::new(e.clone(), event_unit(e)))
            .collect();
        let samples_index = match self.events.iter().position(|e| e == "samples") {
            Some(i) => i,
            None => {
                types.push(SampleType::samples());
                n_events
            }
        };
        let mut profile = Profile::new(types);
        let old = std::mem::replace(&mut self.profile, Profile::new(vec![SampleType::samples()]));
        let n_types = profile.sample_types().len();
        let mut rows: Vec<_> = self.rows.drain().collect();
        rows.sort_unstable_by_key(|((s, t, e), _)| (*s, *t, *e));
        let mut frame_map: FxHashMap<FrameId, FrameId> = FxHashMap::default();
        let mut stack_map: FxHashMap<crate::model::StackId, crate::model::StackId> =
            FxHashMap::default();
        let mut thread_map: FxHashMap<ThreadId, ThreadId> = FxHashMap::default();
        let mut values = vec![0u128; n_types];
        let mut buf = Vec::new();
        for ((stack, thread, event), (count, weight)) in rows {
            buf.clear();
            for &f in old.stack(stack) {
                let id = *frame_map
                    .entry(f)
                    .or_insert_with(|| profile.intern_frame(old.frame(f).clone()));
                buf.push(id);
            }
            let new_stack = profile.intern_stack(&buf);
            stack_map.insert(stack, new_stack);
            let new_thread = thread.map(|t| {
                *thread_map
                    .entry(t)
                    .or_insert_with(|| profile.intern_thread(old.thread_name(t)))
            });
            values.iter_mut().for_each(|v| *v = 0);
            values[samples_index] = u128::from(count);
            if event != samples_index {
                values[event] = weight;
            }
            profile.add_sample(new_stack, new_thread, &values);
        }
        if let Some(timeline) = self.timeline.take() {
            // (stack, event) keys as the profile's stacks, [count, period] as its types
            let mut by_key = vec![(crate::model::StackId(0), 0); self.time_keys.len()];
            for (&key, &i) in &self.time_keys {
                by_key[i as usize] = key;
            }
            profile.meta.timeline = Some(timeline.rekey(n_types, |key, v, out| {
                let (stack, event) = by_key[key as usize];
                out[samples_index] = v[0];
                if event != samples_index {
                    out[event] = v[1];
                }
                stack_map[&stack].0
            }));
        }
        profile
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cases::assert_cases;

    #[test]
    fn headers_are_found_by_shape() {
        let h =
            parse_header("C2 CompilerThre 22064  2863.902713:    1001001 cpu-clock:ppp: ").unwrap();
        assert_eq!(h.comm, "C2 CompilerThre");
        assert_eq!(h.event, Some("cpu-clock:ppp"));
        assert_eq!(h.period, Some(1001001));
        let h = parse_header("java 1234/1240 [001] 12.5: cycles:u:").unwrap();
        assert_eq!(h.comm, "java");
        assert_eq!(h.event, Some("cycles:u"));
        assert_eq!(h.period, None);
        let h =
            parse_header("pool-1-thread-2 22048/22071 2863.9: 1 task-clock:  7f01 foo+0x1 (/x)")
                .unwrap();
        assert_eq!(h.comm, "pool-1-thread-2");
        assert_eq!(h.rest, "7f01 foo+0x1 (/x)");
        assert!(parse_header("no numbers here").is_none());
        // `pid/tid` with `-F +pid`; one number is the tid (perf script's default fields)
        let h = parse_header("java 1234/1240 [001] 12.5: cycles:u:").unwrap();
        assert_eq!(
            (h.pid, h.tid, h.time),
            (Some(1234), Some(1240), Some(12_500_000_000))
        );
        let h = parse_header("C2 CompilerThre 22064  2863.902713: 1 cpu-clock:").unwrap();
        assert_eq!((h.pid, h.tid), (None, Some(22064)));
        assert_eq!(h.time, Some(2_863_902_713_000));
        let h = parse_header("java 1240 1 cycles:").unwrap();
        assert_eq!(h.time, None);
    }

    #[test]
    fn frame_lines_split_symbol_offset_and_dso() {
        let f = parse_frame_line("\t  16d9 table_put+0x59 (/tmp/c/churn)").unwrap();
        assert_eq!(
            (f.addr, f.sym, f.dso),
            (Some(0x16d9), "table_put", Some("/tmp/c/churn"))
        );
        let f = parse_frame_line("\t7f01 void shop.A.b(com.sun.X, int)+0x2cc (/tmp/perf-1.map)")
            .unwrap();
        assert_eq!(f.sym, "void shop.A.b(com.sun.X, int)");
        assert_eq!(f.dso, Some("/tmp/perf-1.map"));
        let f = parse_frame_line("\t 0 [unknown] ([unknown])").unwrap();
        assert_eq!((f.addr, f.sym), (Some(0), "[unknown]"));
        let f = parse_frame_line("\t135eac core::iter::next+0x59c (inlined)").unwrap();
        assert_eq!(f.dso, Some("inlined"));
        let f = parse_frame_line("\tmain (/bin/x)").unwrap();
        assert_eq!((f.addr, f.sym), (None, "main"));
        assert!(parse_frame_line("   ").is_none());
    }

    #[test]
    fn srcline_lines_are_not_frames() {
        assert_cases(
            is_srcline,
            &[
                ("  spin.c:9", true),
                ("  ??:0", true),
                ("\t  1167 whose_live_spin (/tmp/live/spin)", false),
                ("  main", false),
            ],
        );
    }

    #[test]
    fn frames_get_kinds_from_their_dso() {
        assert_eq!(
            perf_frame("x", Some("/tmp/perf-1.map"), None).kind,
            FrameKind::Jit
        );
        assert_eq!(
            perf_frame("x", Some("[kernel.kallsyms]"), None).kind,
            FrameKind::Kernel
        );
        let u = perf_frame("[unknown]", Some("[unknown]"), Some(0));
        assert_eq!((u.kind, u.module), (FrameKind::Unknown, None));
        assert_eq!(
            perf_frame("_ZN9logcrunch6worker17h0123456789abcdefE", Some("/x"), None)
                .name
                .as_str(),
            "logcrunch::worker"
        );
    }
}

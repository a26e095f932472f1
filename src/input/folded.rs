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

use super::bad_lines::BadLines;
use super::source::Source;
use super::{InputFormat, ReadOptions};
use crate::error::{Error, Position, Result};
use crate::model::{
    BoundedTextMap, Frame, FrameId, FrameKind, Profile, SampleType, StackId, TextKey, ThreadId,
    Unit, perf,
};
use crate::model::{NO_FRAMES, Notice, UNKNOWN, Utf8Place};
use crate::names::{self, TypeSuffix};
use rustc_hash::{FxHashMap, FxHashSet};
use std::num::NonZeroU32;
use std::path::PathBuf;

/// The text of a stack text's first (root) frame.
fn first_frame_text(stack_text: &str) -> &str {
    memchr::memchr(b';', stack_text.as_bytes()).map_or(stack_text, |end| &stack_text[..end])
}

/// Reads a whole folded input into a profile with one sample type (named after `--unit`).
pub fn read(mut source: Source, format: InputFormat, options: &ReadOptions) -> Result<Profile> {
    let unit = options.unit.clone().unwrap_or(Unit::Count);
    let mut folder = Folder::new(source.path.clone(), format, unit);
    folder.keep_process_root = options.keep_process_root;
    let mut line = Vec::with_capacity(4096);
    while source.read_line(&mut line)? != 0 {
        folder.line_no += 1;
        folder.fold_line(&line)?;
    }
    folder.finish()
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

/// The frames text of the line before (after its thread frames) and its frames, root first.
#[derive(Default)]
struct PreviousLine {
    text: Vec<u8>,
    ids: Vec<FrameId>,
}

struct Folder {
    path: PathBuf,
    format: InputFormat,
    profile: Profile,
    /// Distinct stack text (without the count) → its interned stack and thread.
    stacks: BoundedTextMap<(StackId, Option<ThreadId>)>,
    /// Distinct raw frame text → interned frame (frames repeat across stacks).
    frames: BoundedTextMap<FrameId>,
    /// Whether `stacks` still pays for itself.
    stack_cache: CacheUse,
    /// Whether `frames` does.
    frame_cache: CacheUse,
    /// The frames of the line before, for the ones the next line shares.
    previous: PreviousLine,
    frame_buf: Vec<FrameId>,
    line_no: u64,
    samples: u64,
    lossy_lines: u64,
    first_lossy_line: u64,
    /// Lines without a readable count: skipped and counted ([`BadLines`]).
    bad_lines: BadLines,
    /// Decimal places of the counts so far: every weight is stored times 10^this, so that
    /// fractional counts (`12.5`) are summed exactly.
    decimals: u32,
    /// The raw text of each root frame, for the process-name check at the end (the frame's
    /// name is normalised, the process name is wanted as written).
    root_texts: FxHashMap<FrameId, Box<str>>,
    /// `--keep-process-root`: a process-name root stays a frame.
    keep_process_root: bool,
}

impl Folder {
    fn new(path: PathBuf, format: InputFormat, unit: Unit) -> Folder {
        let type_name = match unit {
            Unit::Count => "samples".to_string(),
            ref u => u.name().to_string(),
        };
        Folder {
            path,
            format,
            profile: Profile::new(vec![SampleType::new(type_name, unit)]),
            stacks: BoundedTextMap::with_budget(STACK_CACHE_BYTES),
            frames: BoundedTextMap::with_budget(FRAME_CACHE_BYTES),
            stack_cache: CacheUse::new(),
            frame_cache: CacheUse::new(),
            previous: PreviousLine::default(),
            frame_buf: Vec::new(),
            line_no: 0,
            samples: 0,
            lossy_lines: 0,
            first_lossy_line: 0,
            bad_lines: BadLines::default(),
            decimals: 0,
            root_texts: FxHashMap::default(),
            keep_process_root: false,
        }
    }

    fn error(&self, message: impl Into<String>) -> Error {
        Error::input(&self.path, Position::Line(self.line_no), message)
    }

    fn fold_line(&mut self, raw: &[u8]) -> Result<()> {
        let line = trim_line_end(raw);
        if line.is_empty() || line[0] == b'#' {
            return Ok(());
        }
        let Some(space) = line.iter().rposition(|&b| b == b' ') else {
            self.bad_line(|| {
                let shown = crate::error::quote(line);
                format!("`{shown}`, a line without a count (expected `frame;frame;... COUNT`)")
            });
            return Ok(());
        };
        let (stack_text, count_text) = (&line[..space], &line[space + 1..]);
        let weight = match parse_count(count_text) {
            Ok(count) => self.scaled(count),
            Err(why) => {
                self.bad_line(|| why);
                return Ok(());
            }
        };
        let (stack, thread) = self.stack_of(trim_line_end(stack_text))?;
        self.profile.add_sample(stack, thread, &[weight]);
        self.samples += 1;
        Ok(())
    }

    /// The stack and thread of a line's stack text, through the line cache while it pays.
    fn stack_of(&mut self, text: &[u8]) -> Result<(StackId, Option<ThreadId>)> {
        if !self.stack_cache.on {
            self.refuse_differential(text)?;
            return Ok(self.intern_stack_text(text));
        }
        let key = TextKey::new(text);
        if let Some(hit) = self.stacks.get(key) {
            self.stack_cache.hits += 1;
            return Ok(hit);
        }
        self.refuse_differential(text)?;
        let hit = self.intern_stack_text(text);
        self.stacks.insert(key, hit);
        if self.stack_cache.missed() {
            self.stack_cache.on = false;
            self.stacks = BoundedTextMap::with_budget(0);
        }
        Ok(hit)
    }

    fn bad_line(&mut self, why: impl FnOnce() -> String) {
        self.bad_lines.record(self.line_no, why);
    }

    /// The weight of a count at the profile's scale; a count with more decimal places than
    /// any before rescales what was read so far (at most [`MAX_DECIMALS`] times a file).
    fn scaled(&mut self, count: Count) -> u128 {
        if count.decimals > self.decimals {
            let factor = 10u128.pow(count.decimals - self.decimals);
            self.decimals = count.decimals;
            self.rebuild(factor, &FxHashMap::default());
        }
        count.value as u128 * 10u128.pow(self.decimals - count.decimals)
    }

    /// `a;b;c 31 56` is a differential file (difffolded.pl, inferno-diff-folded): two counts,
    /// before and after. Read as one profile it would be frame `c 31` of weight 56; refuse it
    /// and say how to read it. Checked once per distinct stack text, off the hot path.
    fn refuse_differential(&self, stack_text: &[u8]) -> Result<()> {
        let Some(space) = stack_text.iter().rposition(|&b| b == b' ') else {
            return Ok(());
        };
        let tail = &stack_text[space + 1..];
        if tail.contains(&b';') || parse_count(tail).is_err() {
            return Ok(());
        }
        let name = self.path.display();
        Err(self.error(format!(
            "a differential folded file (two counts per line: `stack BEFORE AFTER`, as \
             difffolded.pl writes), but whose reads one profile per file; split it with \
             `awk '{{n=$(NF-1); NF-=2; print $0, n}}' {name} > before.folded` and \
             `awk '{{n=$NF; NF-=2; print $0, n}}' {name} > after.folded`, then \
             `whose diff before.folded after.folded` or `whose flame --diff ...`"
        )))
    }

    /// Splits a stack text into frames (root first in the text, leaf first in the model).
    fn intern_stack_text(&mut self, text: &[u8]) -> (StackId, Option<ThreadId>) {
        let text = match std::str::from_utf8(text) {
            Ok(t) => std::borrow::Cow::Borrowed(t),
            Err(_) => {
                self.lossy_lines += 1;
                if self.first_lossy_line == 0 {
                    self.first_lossy_line = self.line_no;
                }
                String::from_utf8_lossy(text)
            }
        };
        // whose's own stand-in for a sample without frames (see [`crate::model::NO_FRAMES`])
        let text: &str = if text == NO_FRAMES { "" } else { &text };
        let is_thread: fn(&str) -> bool = if self.format == InputFormat::PySpy {
            is_pyspy_thread_frame
        } else {
            is_async_profiler_thread_frame
        };
        let (thread, frames_text) = self.leading_thread(text, is_thread);
        let mut frame_buf = std::mem::take(&mut self.frame_buf);
        frame_buf.clear();
        let frames_before = self.profile.frame_count();
        let (root_first, root_is_new) = self.frames_root_first(frames_text);
        frame_buf.extend(root_first.iter().rev());
        self.previous.ids = root_first;
        // a root shared with the line before is recorded already
        if thread.is_none()
            && root_is_new
            && let Some(&root) = frame_buf.last()
        {
            let raw = first_frame_text(frames_text);
            self.root_texts.entry(root).or_insert_with(|| raw.into());
        }
        // a frame first seen on this line is in no stack before it
        let stack = if frame_buf.iter().any(|f| f.0 as usize >= frames_before) {
            self.profile.push_new_stack(&frame_buf)
        } else {
            self.profile.intern_stack(&frame_buf)
        };
        self.frame_buf = frame_buf;
        (stack, thread)
    }

    /// The frames of `text`, root first, and whether its root is not the line before's.
    /// Folded files are sorted, so a line mostly repeats the frames of the line before it:
    /// those are taken from it without looking each one up (frames are equal when their text
    /// up to and including the `;` after them is).
    fn frames_root_first(&mut self, text: &str) -> (Vec<FrameId>, bool) {
        let mut ids = std::mem::take(&mut self.previous.ids);
        if text.is_empty() {
            ids.clear();
            self.previous.text.clear();
            return (ids, true);
        }
        let same = (self.previous.text.iter())
            .zip(text.as_bytes())
            .take_while(|(a, b)| a == b)
            .count();
        let shared = &text.as_bytes()[..same];
        ids.truncate(memchr::memchr_iter(b';', shared).count());
        let start = memchr::memrchr(b';', shared).map_or(0, |i| i + 1);
        // the others are made leaf first, the order ids have always been given in
        let kept = ids.len();
        let mut end = text.len();
        for split in memchr::memrchr_iter(b';', &text.as_bytes()[start..]) {
            let at = start + split;
            ids.push(self.frame_of(&text[at + 1..end]));
            end = at;
        }
        ids.push(self.frame_of(&text[start..end]));
        ids[kept..].reverse();
        self.previous.text.clear();
        self.previous.text.extend_from_slice(text.as_bytes());
        (ids, kept == 0)
    }

    /// The row's thread named by the leading thread frames of `text`, if any, and the text
    /// of the frames after them.
    fn leading_thread<'t>(
        &mut self,
        text: &'t str,
        is_thread: fn(&str) -> bool,
    ) -> (Option<ThreadId>, &'t str) {
        if text.is_empty() || !is_thread(first_frame_text(text)) {
            return (None, text);
        }
        let names: Vec<&str> = text.split(';').take_while(|p| is_thread(p)).collect();
        let taken: usize = names.iter().map(|p| p.len() + 1).sum();
        let name: Vec<&str> = names.iter().map(|p| thread_name(p)).collect();
        let thread = self.profile.intern_thread(&name.join(";"));
        (Some(thread), text.get(taken..).unwrap_or_default())
    }

    /// The frame of one raw frame text, parsed once per distinct text while the cache has
    /// room.
    fn frame_of(&mut self, raw: &str) -> FrameId {
        if !self.frame_cache.on {
            return self.profile.intern_frame(self.make_frame(raw));
        }
        let key = TextKey::new(raw.as_bytes());
        if let Some(id) = self.frames.get(key) {
            self.frame_cache.hits += 1;
            return id;
        }
        let id = self.profile.intern_frame(self.make_frame(raw));
        self.frames.insert(key, id);
        if self.frame_cache.missed() {
            self.frame_cache.on = false;
            self.frames = BoundedTextMap::with_budget(0);
        }
        id
    }

    fn make_frame(&self, raw: &str) -> Frame {
        let pyspy = if self.format == InputFormat::PySpy {
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

    /// Copies the profile into a new one with every weight times `factor`, and each root
    /// frame in `roots` taken out of its stacks and made the row's thread. The text caches
    /// are emptied: the ids they hold belong to the old profile.
    fn rebuild(&mut self, factor: u128, roots: &FxHashMap<FrameId, Box<str>>) {
        let sample_types = self.profile.sample_types().to_vec();
        let old = std::mem::replace(&mut self.profile, Profile::new(sample_types));
        let new = &mut self.profile;
        new.default_sample_type = old.default_sample_type;
        new.meta = old.meta.clone();
        let frame_ids: Vec<Option<FrameId>> = (0..old.frame_count() as u32)
            .map(|i| {
                let id = FrameId(i);
                (!roots.contains_key(&id)).then(|| new.intern_frame(old.frame(id).clone()))
            })
            .collect();
        let mut frames = Vec::new();
        for row in old.rows() {
            let stack = old.stack(row.stack);
            let root_thread = stack.last().and_then(|root| roots.get(root));
            frames.clear();
            frames.extend(stack.iter().filter_map(|f| frame_ids[f.0 as usize]));
            let thread = match (root_thread, row.thread) {
                (Some(name), _) => Some(new.intern_thread(name)),
                (None, Some(t)) => Some(new.intern_thread(old.thread_name(t))),
                (None, None) => None,
            };
            let stack = new.intern_stack(&frames);
            let values: Vec<u128> = row
                .values
                .iter()
                .map(|v| v.saturating_mul(factor))
                .collect();
            new.add_sample(stack, thread, &values);
        }
        self.root_texts = std::mem::take(&mut self.root_texts)
            .into_iter()
            .filter_map(|(id, text)| Some((frame_ids[id.0 as usize]?, text)))
            .collect();
        self.stacks = BoundedTextMap::with_budget(STACK_CACHE_BYTES);
        self.frames = BoundedTextMap::with_budget(FRAME_CACHE_BYTES);
        self.previous = PreviousLine::default();
    }

    /// `stackcollapse-perf.pl` and inferno's collapse-perf put the process name at the root of
    /// every stack (`java;start_thread;...`). As a frame it would own every stack whose other
    /// frames are all transparent; it is the process, so it becomes the row's thread, as
    /// async-profiler's `-t` thread frames do. Decided once for the whole file, then applied
    /// to every stack alike (issue 28: `java;foo` kept `java` where `java;start_thread;foo`
    /// lost it, so a file with one truncated process's stacks kept every root): every root is
    /// a process-name text that starts no process itself, none appears anywhere but at a
    /// root, and some root is seen above a frame that starts a process or thread
    /// ([`starts_a_process`]), the mark of stackcollapse-perf's convention. The header says so;
    /// `--keep-process-root` keeps it a frame.
    fn take_process_roots(&mut self) {
        if self.format != InputFormat::Folded || self.root_texts.is_empty() {
            return;
        }
        let profile = &self.profile;
        // root frame → seen above a process or thread start
        let mut roots: FxHashMap<FrameId, bool> = FxHashMap::default();
        for row in profile.rows() {
            if row.thread.is_some() {
                return; // threads already given (async-profiler -t)
            }
            let stack = profile.stack(row.stack);
            let Some(&root) = stack.last() else { continue };
            let above_start =
                stack.len() >= 2 && starts_a_process(profile.frame(stack[stack.len() - 2]));
            *roots.entry(root).or_default() |= above_start;
        }
        let all_process_names = roots.keys().all(|root| {
            !starts_a_process(profile.frame(*root))
                && self
                    .root_texts
                    .get(root)
                    .is_some_and(|t| looks_like_process_name(t))
        });
        let convention = roots.values().any(|&above_start| above_start);
        if roots.is_empty() || !all_process_names || !convention {
            return;
        }
        let inside: FxHashSet<FrameId> = (0..profile.stack_count() as u32)
            .flat_map(|s| {
                let stack = profile.stack(StackId(s));
                &stack[..stack.len().saturating_sub(1)]
            })
            .copied()
            .filter(|f| roots.contains_key(f))
            .collect();
        if !inside.is_empty() {
            return;
        }
        let mut names: Vec<&str> = roots.keys().map(|r| &*self.root_texts[r]).collect();
        names.sort_unstable();
        let note = Notice::ProcessRoots {
            names: names.iter().map(|n| n.to_string()).collect(),
            kept: self.keep_process_root,
        };
        if !self.keep_process_root {
            let strip: FxHashMap<FrameId, Box<str>> = roots
                .keys()
                .map(|r| (*r, self.root_texts[r].clone()))
                .collect();
            self.rebuild(1, &strip);
        }
        self.profile.meta.notes.push(note);
    }

    fn finish(mut self) -> Result<Profile> {
        // before the no-samples check: a file of bad lines says which line and why
        let skipped = self.bad_lines.verdict(
            &self.path,
            self.line_no,
            self.samples,
            "not folded stacks",
            "lines of `frame;frame;... COUNT`",
        )?;
        if self.samples == 0 {
            return Err(Error::input(
                &self.path,
                Position::Whole,
                "no samples: expected lines of `frame;frame;... COUNT`",
            ));
        }
        self.profile.meta.warnings.extend(skipped);
        if self.decimals > 0 {
            self.profile.meta.notes.push(Notice::DecimalCounts {
                decimals: self.decimals,
            });
        }
        self.take_process_roots();
        if self.lossy_lines > 0 {
            let place = Utf8Place::FoldedLines {
                lines: self.lossy_lines,
                first_line: self.first_lossy_line,
            };
            let path = self.path.clone();
            self.profile
                .meta
                .warnings
                .push(Notice::NotUtf8 { path, place });
        }
        Ok(self.profile)
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
    // node's and CPython's perf map names, as stackcollapse-perf and inferno keep them (and
    // `convert --to folded` writes JavaScript frames): the script's function with its file
    if let Some(entry) = names::perf_map_entry(base) {
        let kind = match entry.language {
            names::MapLanguage::JavaScript => Some(FrameKind::Jit),
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

/// The frame kind an async-profiler type suffix says (DESIGN "Frame names"): C1 and C2 code
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
                (names.join(";"), row.values[0])
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

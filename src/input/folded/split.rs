//! The reading half of the folded reader: lines into counts, thread names and frames, with
//! nothing that needs the profile. It runs on its own thread for a large input
//! ([`super::read`]) and hands its work over in [`Batch`]es to the half that interns
//! ([`super::build`]); the two halves of a million-line input take about the same time.
//!
//! What this half has seen before it names by its own ids (the line cache's stack text ids,
//! the frame cache's frame text ids, given in the order the texts were first kept), which
//! the building half maps to the profile's ids; so the caches live here, where the text is.

use super::{
    BadLines, CacheUse, Count, FRAME_CACHE_BYTES, STACK_CACHE_BYTES,
    is_async_profiler_thread_frame, is_pyspy_thread_frame, make_frame, parse_count, thread_name,
    trim_line_end,
};
use crate::error::{Error, Position, Result};
use crate::input::options::InputFormat;
use crate::input::source::Source;
use crate::model::folded::{self, FRAME_SEPARATOR, first_frame};
use crate::model::{BoundedTextMap, Frame, NO_FRAMES, TextKey, hash_of};
use std::ops::Range;
use std::path::PathBuf;

/// Lines a batch holds at most: enough that handing one over costs nothing per line, few
/// enough that the building half starts at once.
const BATCH_LINES: usize = 2048;

/// New frames a batch holds at most, which bounds its memory when lines are deep and new
/// (a JVM's stacks of a hundred frames, past the frame cache).
const BATCH_FRAMES: usize = 16 * 1024;

/// Lines read, split and parsed, for the building half.
#[derive(Default)]
pub(super) struct Batch {
    pub lines: Vec<Line>,
    /// The frames the lines' [`ParsedStack`]s did not share with the line before, line after
    /// line, each line's leaf first.
    pub frames: Vec<NewFrame>,
    /// Thread names and root frame texts, back to back ([`ParsedStack`] holds their ranges).
    pub texts: String,
}

impl Batch {
    fn clear(&mut self) {
        self.lines.clear();
        self.frames.clear();
        self.texts.clear();
    }

    fn is_full(&self) -> bool {
        self.lines.len() >= BATCH_LINES || self.frames.len() >= BATCH_FRAMES
    }

    fn push_text(&mut self, text: &str) -> Range<u32> {
        let start = self.texts.len() as u32;
        self.texts.push_str(text);
        start..self.texts.len() as u32
    }
}

/// The text a range of [`Batch::push_text`] names in a batch's `texts`.
pub(super) fn text<'t>(texts: &'t str, range: &Range<u32>) -> &'t str {
    &texts[range.start as usize..range.end as usize]
}

/// One line with a count and a stack.
pub(super) struct Line {
    pub count: Count,
    pub stack: LineStack,
}

pub(super) enum LineStack {
    /// A stack text the line cache kept before, by its id there.
    Seen(u32),
    Parsed(ParsedStack),
}

/// A stack text parsed for the first time (or again, past the line cache).
pub(super) struct ParsedStack {
    /// The id the line cache gave the text, when it kept it.
    pub text_id: Option<u32>,
    /// The row's thread, named by the line's leading thread frames.
    pub thread: Option<Range<u32>>,
    /// Frames shared with the last parsed line before it, from the root: whole frames whose
    /// text, up to and including the `;` after them, is that line's.
    pub shared: u32,
    /// Frames after those, in [`Batch::frames`].
    pub new: u32,
    /// The root frame's raw text when the root is not the line before's and the row has no
    /// thread, for the process-name check at the end (`Builder::take_process_roots`).
    pub root_text: Option<Range<u32>>,
}

pub(super) enum NewFrame {
    /// A frame text the frame cache kept before, by its id there.
    Seen(u32),
    /// A frame made from its text with its [`hash_of`] (computed here, so that the building
    /// half can prefetch where it is interned), and the id the frame cache gave the text if
    /// it kept it.
    Made {
        frame: Frame,
        hash: u64,
        text_id: Option<u32>,
    },
}

/// What the splitting half counted, which the profile's notes and the file's verdict need.
#[derive(Default)]
pub(super) struct Tally {
    pub line_no: u64,
    pub samples: u64,
    pub lossy_lines: u64,
    pub first_lossy_line: u64,
    /// Lines without a readable count: skipped and counted ([`BadLines`]).
    pub bad_lines: BadLines,
}

pub(super) struct Splitter {
    path: PathBuf,
    format: InputFormat,
    /// Distinct stack text (without the count) → its id.
    stacks: BoundedTextMap<u32>,
    /// Distinct raw frame text → its id (frames repeat across stacks).
    frames: BoundedTextMap<u32>,
    /// Whether `stacks` still pays for itself.
    stack_cache: CacheUse,
    /// Whether `frames` does.
    frame_cache: CacheUse,
    next_stack_text: u32,
    next_frame_text: u32,
    /// The frames text (after its thread frames) of the last parsed line.
    previous: Vec<u8>,
    line: Vec<u8>,
    pub tally: Tally,
}

impl Splitter {
    pub fn new(path: PathBuf, format: InputFormat) -> Splitter {
        Splitter {
            path,
            format,
            stacks: BoundedTextMap::with_budget(STACK_CACHE_BYTES),
            frames: BoundedTextMap::with_budget(FRAME_CACHE_BYTES),
            stack_cache: CacheUse::new(),
            frame_cache: CacheUse::new(),
            next_stack_text: 0,
            next_frame_text: 0,
            previous: Vec::new(),
            line: Vec::with_capacity(4096),
            tally: Tally::default(),
        }
    }

    /// Reads lines into `batch` (emptied first) until it is full or the input ends; false
    /// when the input has ended.
    pub fn fill(&mut self, source: &mut Source, batch: &mut Batch) -> Result<bool> {
        batch.clear();
        let mut line = std::mem::take(&mut self.line);
        let more = loop {
            if batch.is_full() {
                break Ok(true);
            }
            match source.read_line(&mut line) {
                Ok(0) => break Ok(false),
                Ok(_) => {}
                Err(e) => break Err(e),
            }
            self.tally.line_no += 1;
            if let Err(e) = self.split_line(&line, batch) {
                break Err(e);
            }
        };
        self.line = line;
        more
    }

    fn error(&self, message: impl Into<String>) -> Error {
        Error::input(&self.path, Position::Line(self.tally.line_no), message)
    }

    fn split_line(&mut self, raw: &[u8], batch: &mut Batch) -> Result<()> {
        let line = trim_line_end(raw);
        if line.is_empty() || line[0] == b'#' {
            return Ok(());
        }
        let Some((stack_text, count_text)) = folded::split_count_bytes(line) else {
            self.bad_line(|| {
                let shown = crate::error::quote(line);
                format!("`{shown}`, a line without a count (expected `frame;frame;... COUNT`)")
            });
            return Ok(());
        };
        let count = match parse_count(count_text) {
            Ok(count) => count,
            Err(why) => {
                self.bad_line(|| why);
                return Ok(());
            }
        };
        let stack = self.stack_of(trim_line_end(stack_text), batch)?;
        batch.lines.push(Line { count, stack });
        self.tally.samples += 1;
        Ok(())
    }

    fn bad_line(&mut self, why: impl FnOnce() -> String) {
        self.tally.bad_lines.record(self.tally.line_no, why);
    }

    /// A line's stack text as the line cache knows it, or parsed.
    fn stack_of(&mut self, text: &[u8], batch: &mut Batch) -> Result<LineStack> {
        if !self.stack_cache.on {
            self.refuse_differential(text)?;
            return Ok(LineStack::Parsed(self.parse_stack(text, None, batch)));
        }
        let key = TextKey::new(text);
        if let Some(id) = self.stacks.get(key) {
            self.stack_cache.hits += 1;
            return Ok(LineStack::Seen(id));
        }
        self.refuse_differential(text)?;
        let id = self.next_stack_text;
        let kept = self.stacks.insert(key, id);
        self.next_stack_text += u32::from(kept);
        let parsed = self.parse_stack(text, kept.then_some(id), batch);
        if self.stack_cache.missed() {
            self.stack_cache.on = false;
            self.stacks = BoundedTextMap::with_budget(0);
        }
        Ok(LineStack::Parsed(parsed))
    }

    /// `a;b;c 31 56` is a differential file (difffolded.pl, inferno-diff-folded): two counts,
    /// before and after. Read as one profile it would be frame `c 31` of weight 56; refuse it
    /// and say how to read it. Checked once per distinct stack text, which on distinct-heavy
    /// input is every line: most are let go on their last byte.
    fn refuse_differential(&self, stack_text: &[u8]) -> Result<()> {
        // a count ends in a digit or a decimal point; most leaves end otherwise, and then a
        // long stack is not searched for its last space
        if !stack_text
            .last()
            .is_some_and(|&b| b.is_ascii_digit() || b == b'.')
        {
            return Ok(());
        }
        let Some((_, tail)) = folded::split_count_bytes(stack_text) else {
            return Ok(());
        };
        if tail.contains(&FRAME_SEPARATOR) || parse_count(tail).is_err() {
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

    /// Splits a stack text into its thread and frames (root first in the text).
    fn parse_stack(&mut self, text: &[u8], text_id: Option<u32>, batch: &mut Batch) -> ParsedStack {
        let text = match std::str::from_utf8(text) {
            Ok(t) => std::borrow::Cow::Borrowed(t),
            Err(_) => {
                self.tally.lossy_lines += 1;
                if self.tally.first_lossy_line == 0 {
                    self.tally.first_lossy_line = self.tally.line_no;
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
        let (thread, frames_text) = leading_thread(text, is_thread, batch);
        let (shared, new) = self.split_frames(frames_text, batch);
        // a root shared with the line before is recorded already
        let root_text = (thread.is_none() && shared == 0 && new > 0)
            .then(|| batch.push_text(first_frame(frames_text)));
        ParsedStack {
            text_id,
            thread,
            shared,
            new,
            root_text,
        }
    }

    /// How many frames of `text` the last parsed line had, and how many others it has
    /// (pushed to the batch, leaf first, the order frames have always been interned in).
    /// Folded files are sorted, so a line mostly repeats the frames of the line before it:
    /// those are taken from it without looking each one up.
    fn split_frames(&mut self, text: &str, batch: &mut Batch) -> (u32, u32) {
        if text.is_empty() {
            self.previous.clear();
            return (0, 0);
        }
        let same = (self.previous.iter())
            .zip(text.as_bytes())
            .take_while(|(a, b)| a == b)
            .count();
        let shared = &text.as_bytes()[..same];
        let kept = memchr::memchr_iter(FRAME_SEPARATOR, shared).count();
        let start = memchr::memrchr(FRAME_SEPARATOR, shared).map_or(0, |i| i + 1);
        let before = batch.frames.len();
        let mut end = text.len();
        for split in memchr::memrchr_iter(FRAME_SEPARATOR, &text.as_bytes()[start..]) {
            let at = start + split;
            self.frame_of(&text[at + 1..end], batch);
            end = at;
        }
        self.frame_of(&text[start..end], batch);
        self.previous.clear();
        self.previous.extend_from_slice(text.as_bytes());
        (kept as u32, (batch.frames.len() - before) as u32)
    }

    /// One raw frame text as the frame cache knows it, or made, while the cache has room.
    fn frame_of(&mut self, raw: &str, batch: &mut Batch) {
        if !self.frame_cache.on {
            batch.frames.push(made(make_frame(self.format, raw), None));
            return;
        }
        let key = TextKey::new(raw.as_bytes());
        if let Some(id) = self.frames.get(key) {
            self.frame_cache.hits += 1;
            batch.frames.push(NewFrame::Seen(id));
            return;
        }
        let id = self.next_frame_text;
        let kept = self.frames.insert(key, id);
        self.next_frame_text += u32::from(kept);
        batch
            .frames
            .push(made(make_frame(self.format, raw), kept.then_some(id)));
        if self.frame_cache.missed() {
            self.frame_cache.on = false;
            self.frames = BoundedTextMap::with_budget(0);
        }
    }
}

fn made(frame: Frame, text_id: Option<u32>) -> NewFrame {
    NewFrame::Made {
        hash: hash_of(&frame),
        frame,
        text_id,
    }
}

/// The row's thread named by the leading thread frames of `text`, if any (its name pushed to
/// the batch), and the text of the frames after them.
fn leading_thread<'t>(
    text: &'t str,
    is_thread: fn(&str) -> bool,
    batch: &mut Batch,
) -> (Option<Range<u32>>, &'t str) {
    if text.is_empty() || !is_thread(first_frame(text)) {
        return (None, text);
    }
    let names: Vec<&str> = folded::frames(text).take_while(|p| is_thread(p)).collect();
    let taken: usize = names.iter().map(|p| p.len() + 1).sum();
    let name: Vec<&str> = names.iter().map(|p| thread_name(p)).collect();
    let thread = batch.push_text(&folded::join_frames(&name));
    (Some(thread), text.get(taken..).unwrap_or_default())
}

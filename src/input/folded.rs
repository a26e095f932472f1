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

use super::source::Source;
use super::{InputFormat, ReadOptions};
use crate::error::{Error, Position, Result};
use crate::model::{
    BoundedTextMap, Frame, FrameId, FrameKind, Profile, SampleType, StackId, ThreadId, Unit, perf,
};
use crate::names::{self, TypeSuffix};
use std::path::PathBuf;

/// Reads a whole folded input into a profile with one sample type (named after `--unit`).
pub fn read(mut source: Source, format: InputFormat, options: &ReadOptions) -> Result<Profile> {
    let unit = options.unit.clone().unwrap_or(Unit::Count);
    let mut folder = Folder::new(source.path.clone(), format, unit);
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

struct Folder {
    path: PathBuf,
    format: InputFormat,
    profile: Profile,
    /// Distinct stack text (without the count) → its interned stack and thread.
    stacks: BoundedTextMap<(StackId, Option<ThreadId>)>,
    /// Distinct raw frame text → interned frame (frames repeat across stacks).
    frames: BoundedTextMap<FrameId>,
    frame_buf: Vec<FrameId>,
    line_no: u64,
    samples: u64,
    lossy_lines: u64,
    first_lossy_line: u64,
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
            frame_buf: Vec::new(),
            line_no: 0,
            samples: 0,
            lossy_lines: 0,
            first_lossy_line: 0,
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
            return Err(
                self.error("expected `frame;frame;... COUNT`, found a line without a count")
            );
        };
        let (stack_text, count_text) = (&line[..space], &line[space + 1..]);
        let count = self.parse_count(count_text)?;
        let key = trim_line_end(stack_text);
        let (stack, thread) = match self.stacks.get(key) {
            Some(hit) => hit,
            None => {
                let hit = self.intern_stack_text(key);
                self.stacks.insert(key, hit);
                hit
            }
        };
        self.profile.add_sample(stack, thread, &[count as u128]);
        self.samples += 1;
        Ok(())
    }

    fn parse_count(&self, text: &[u8]) -> Result<u64> {
        let shown = crate::error::quote(text);
        if text.is_empty() {
            return Err(self.error("expected a count after the last space, found nothing"));
        }
        if text[0] == b'-' {
            return Err(self.error(format!(
                "negative count `{shown}`: counts must be non-negative integers"
            )));
        }
        if !text.iter().all(u8::is_ascii_digit) {
            return Err(self.error(format!(
                "expected an integer count at the end of the line, found `{shown}`"
            )));
        }
        std::str::from_utf8(text)
            .ok()
            .and_then(|s| s.parse::<u64>().ok())
            .ok_or_else(|| {
                self.error(format!(
                    "count `{shown}` does not fit in 64 bits (largest is {})",
                    u64::MAX
                ))
            })
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
        let mut parts: Vec<&str> = if text.is_empty() {
            Vec::new()
        } else {
            text.split(';').collect()
        };
        let mut thread = None;
        let is_thread: fn(&str) -> bool = if self.format == InputFormat::PySpy {
            is_pyspy_thread_frame
        } else {
            is_async_profiler_thread_frame
        };
        let leading = parts.iter().take_while(|p| is_thread(p)).count();
        if leading > 0 {
            let name: Vec<&str> = parts[..leading].iter().map(|p| thread_name(p)).collect();
            thread = Some(self.profile.intern_thread(&name.join(";")));
            parts.drain(..leading);
        }
        let mut frame_buf = std::mem::take(&mut self.frame_buf);
        frame_buf.clear();
        for part in parts.iter().rev() {
            let id = match self.frames.get(part.as_bytes()) {
                Some(id) => id,
                None => {
                    let frame = self.make_frame(part);
                    let id = self.profile.intern_frame(frame);
                    self.frames.insert(part.as_bytes(), id);
                    id
                }
            };
            frame_buf.push(id);
        }
        let stack = self.profile.intern_stack(&frame_buf);
        self.frame_buf = frame_buf;
        (stack, thread)
    }

    fn make_frame(&self, raw: &str) -> Frame {
        if self.format == InputFormat::PySpy
            && let Some(frame) = pyspy_model_frame(raw)
        {
            return frame;
        }
        folded_frame(raw)
    }

    fn finish(mut self) -> Result<Profile> {
        if self.samples == 0 {
            return Err(Error::input(
                &self.path,
                Position::Whole,
                "no samples: expected lines of `frame;frame;... COUNT`",
            ));
        }
        if self.lossy_lines > 0 {
            self.profile.meta.warnings.push(format!(
                "{}: {} line(s) had frame names that are not valid UTF-8 (first at line {}); \
                 they were read with U+FFFD in place of the bad bytes",
                self.path.display(),
                self.lossy_lines,
                self.first_lossy_line
            ));
        }
        Ok(self.profile)
    }
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
    if base == "[unknown]" {
        return Frame::named(base, FrameKind::Unknown);
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
        line: py.line,
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

//! speedscope JSON (<https://www.speedscope.app/file-format-schema.json>): what py-spy, rbspy
//! and many other tools write, and what people share.
//!
//! A file holds `shared.frames` (`{name, file?, line?, col?}`) and `profiles`, each either
//! `sampled` (`samples`: stacks of frame indices, root first, with one `weights` entry each) or
//! `evented` (`events`: `O`pen / `C`lose of a frame `at` a time). Each profile becomes a thread
//! named by its `name`. Evented profiles give self time: the time between two events is charged
//! to the stack open during it, which is how speedscope's own "left heavy" view weighs them.
//!
//! Weights are floats in the profile's `unit`; they are converted to whose's integer units
//! (nanoseconds, bytes, samples) by rounding each *position* (sample weight or event time) once,
//! so an evented profile's intervals add up to exactly its span.

use super::folded::{folded_frame, pyspy_model_frame};
use super::options::{Probe, ReadOptions};
use super::source::{DETECT_PEEK, Source};
use crate::error::{Error, Position, Result, quote};
use crate::model::{Frame, FrameId, Notice, Profile, SampleType, ThreadId, Unit, Utf8Place};
use serde::Deserialize;
use std::cell::Cell;
use std::num::NonZeroU32;
use std::path::Path;

#[derive(Deserialize)]
struct FileJson {
    #[serde(default)]
    exporter: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    shared: Option<SharedJson>,
    profiles: Vec<ProfileJson>,
}

#[derive(Deserialize)]
struct SharedJson {
    frames: Vec<FrameJson>,
}

#[derive(Deserialize)]
struct FrameJson {
    name: String,
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    line: Option<f64>,
}

/// Both profile types in one struct (rather than a `type`-tagged enum) so that serde_json
/// reports errors inside a profile at their own line and column, not at the profile's end.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProfileJson {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    name: Option<String>,
    unit: String,
    #[serde(default)]
    end_value: Option<f64>,
    #[serde(default)]
    samples: Option<Vec<Vec<u64>>>,
    #[serde(default)]
    weights: Option<Vec<f64>>,
    #[serde(default)]
    events: Option<Vec<EventJson>>,
}

#[derive(Deserialize)]
struct EventJson {
    #[serde(rename = "type")]
    kind: String,
    at: f64,
    frame: u64,
}

/// What a speedscope unit becomes: the sample type and the factor from the file's numbers to
/// the sample type's integer unit.
fn sample_type(unit: &str) -> Option<(SampleType, f64)> {
    let time = |scale| Some((SampleType::new("time", Unit::Nanoseconds), scale));
    match unit {
        "nanoseconds" => time(1.0),
        "microseconds" => time(1e3),
        "milliseconds" => time(1e6),
        "seconds" => time(1e9),
        "bytes" => Some((SampleType::new("bytes", Unit::Bytes), 1.0)),
        "none" => Some((SampleType::samples(), 1.0)),
        _ => None,
    }
}

/// speedscope JSON ([`looks_like_speedscope`]), or the start of it cut short before the head
/// shows it: JSON whose first key is one of the file format's.
pub fn probe(head: &[u8]) -> Probe {
    if looks_like_speedscope(head) {
        Probe::Yes
    } else {
        Probe::of_json_start(head, TOP_LEVEL_KEYS)
    }
}

/// The keys of a speedscope file's object (`$schema` first as speedscope and py-spy write it).
const TOP_LEVEL_KEYS: &[&str] = &[
    "$schema",
    "shared",
    "profiles",
    "name",
    "activeProfileIndex",
    "exporter",
];

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
    schema_names_speedscope || (has("profiles") && (has("shared") || head.len() >= DETECT_PEEK))
}

pub fn read(mut source: Source, options: &ReadOptions) -> Result<Profile> {
    let path = source.path.clone();
    let bytes = source.read_capped(options.max_decompressed)?;
    let mut warnings = Vec::new();
    let lossy: String;
    let text: &str = match std::str::from_utf8(&bytes) {
        Ok(text) => text,
        Err(e) => {
            let place = Utf8Place::File {
                offset: e.valid_up_to(),
            };
            let path = path.clone();
            warnings.push(Notice::NotUtf8 { path, place });
            lossy = String::from_utf8_lossy(&bytes).into_owned();
            &lossy
        }
    };
    let parsed: FileJson =
        serde_json::from_str(text).map_err(|e| json_error(&path, text.as_bytes(), &e))?;
    let cap = options
        .max_decompressed
        .unwrap_or(super::source::DEFAULT_MAX_DECOMPRESSED);
    let mut profile = build(&path, text.as_bytes(), parsed, cap / EVENTED_SHARE)?;
    profile.meta.warnings.extend(warnings);
    Ok(profile)
}

/// serde_json's message without its own " at line L column C" (the position goes where every
/// whose error puts it), with the text around that column quoted.
fn json_error(path: &Path, bytes: &[u8], e: &serde_json::Error) -> Error {
    let message = e.to_string();
    let message = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(m, _)| m);
    let line_start = bytes
        .split(|&b| b == b'\n')
        .take(e.line().saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum::<usize>()
        .min(bytes.len());
    let line = bytes[line_start..]
        .split(|&b| b == b'\n')
        .next()
        .unwrap_or(&[]);
    let at = e.column().saturating_sub(1).min(line.len());
    let near = &line[at.saturating_sub(30)..(at + 30).min(line.len())];
    Error::input(
        path,
        Position::LineColumn(e.line() as u64, e.column() as u64),
        format!(
            "{message}, near {}: expected speedscope JSON ({{\"shared\": {{\"frames\": [...]}}, \
             \"profiles\": [...]}})",
            quote(near)
        ),
    )
}

/// The share of `--max-decompressed` that the distinct stacks of evented profiles may hold
/// (an eighth: 256 MiB of frame ids by default), as perf.data's compressed records get.
///
/// The model stores each distinct stack whole, and an evented profile nested `d` deep with
/// time between its opens makes `d` distinct stacks of 1 to `d` frames: `d²/2` frame ids
/// from `d` events, so a 3.2 MB file nested 40 k deep needed 3.2 GB and aborted (issue 23).
/// Past this share the input is refused, exit 2, naming the flag that raises it.
const EVENTED_SHARE: u64 = 8;

/// The profile being built: sample types in order of first use, frames interned once each.
struct Builder<'a> {
    path: &'a Path,
    /// The JSON text, for the line and column of what a message is about.
    text: &'a [u8],
    profile: Profile,
    frames: Vec<FrameId>,
    values: Vec<u128>,
    /// The `samples` type that counts the entries of sampled profiles.
    count: Option<usize>,
    leaf_first: Vec<FrameId>,
    rounded_counts: u64,
    /// Bytes of frame ids the distinct stacks of evented profiles hold, and their cap.
    evented_bytes: u64,
    evented_cap: u64,
}

fn build(path: &Path, text: &[u8], file: FileJson, evented_cap: u64) -> Result<Profile> {
    let shared_frames = file.shared.map(|s| s.frames).unwrap_or_default();
    let pyspy = file
        .exporter
        .as_deref()
        .is_some_and(|e| e.starts_with("py-spy"));
    let (mut types, scales) = sample_types(path, text, &file.profiles)?;
    if file.profiles.is_empty() {
        return Err(Error::input(
            path,
            Position::Whole,
            "no samples: `profiles` is empty",
        ));
    }
    // a sampled profile's entries are samples, whatever they weigh: counted, an interval
    // rests on them rather than on distinct stacks (issue 54)
    let count = file.profiles.iter().any(|p| p.kind == "sampled").then(|| {
        types
            .iter()
            .position(|t| *t == SampleType::samples())
            .unwrap_or_else(|| {
                types.push(SampleType::samples());
                types.len() - 1
            })
    });
    let mut b = Builder {
        path,
        text,
        profile: Profile::new(types.clone()),
        values: vec![0; types.len()],
        count,
        frames: Vec::with_capacity(shared_frames.len()),
        leaf_first: Vec::new(),
        rounded_counts: 0,
        evented_bytes: 0,
        evented_cap,
    };
    for f in &shared_frames {
        let frame = make_frame(f, pyspy);
        b.frames.push(b.profile.intern_frame(frame));
    }
    for (i, (p, (type_index, scale))) in file.profiles.iter().zip(scales).enumerate() {
        b.add_profile(i, p, type_index, scale)?;
    }
    if let Some(exporter) = file.exporter {
        b.profile.meta.notes.push(Notice::Exporter(exporter));
    }
    if let Some(name) = file.name.filter(|n| !n.is_empty()) {
        b.profile.meta.notes.push(Notice::ProfileName(name));
    }
    b.finish()
}

/// A profile's sample type (an index into the profile's types) and the scale of its unit.
type TypeScale = (usize, f64);

/// Every profile's sample type, in file order without repeats, and per profile the index of
/// its type and the scale of its unit to the type's.
fn sample_types(
    path: &Path,
    text: &[u8],
    profiles: &[ProfileJson],
) -> Result<(Vec<SampleType>, Vec<TypeScale>)> {
    let mut types: Vec<SampleType> = Vec::new();
    let mut scales = Vec::with_capacity(profiles.len());
    for (i, p) in profiles.iter().enumerate() {
        let Some((ty, scale)) = sample_type(&p.unit) else {
            return Err(Error::input(
                path,
                position(text, i, None),
                format!(
                    "profile {i} ({}): unit {} is not one of speedscope's units (none, \
                     nanoseconds, microseconds, milliseconds, seconds, bytes)",
                    profile_name(p),
                    quote(p.unit.as_bytes())
                ),
            ));
        };
        let index = types.iter().position(|t| *t == ty).unwrap_or_else(|| {
            types.push(ty);
            types.len() - 1
        });
        scales.push((index, scale));
    }
    Ok((types, scales))
}

impl Builder<'_> {
    /// Profile `i` of the file, its samples or events weighed in sample type `type_index`.
    fn add_profile(
        &mut self,
        i: usize,
        p: &ProfileJson,
        type_index: usize,
        scale: f64,
    ) -> Result<()> {
        let thread = p
            .name
            .as_deref()
            .filter(|n| !n.is_empty())
            .map(|n| self.profile.intern_thread(n));
        let at = Where {
            index: i,
            name: profile_name(p),
            item: Cell::new(None),
        };
        match p.kind.as_str() {
            "sampled" => self.sampled(&at, p, thread, type_index, scale),
            "evented" => self.evented(&at, p, thread, type_index, scale),
            other => Err(Error::input(
                self.path,
                position(self.text, i, None),
                format!(
                    "profile {at}: type {} is not `sampled` or `evented`",
                    quote(other.as_bytes())
                ),
            )),
        }
    }

    /// The profile, refused when no profile had a sample; warned of counts rounded.
    fn finish(mut self) -> Result<Profile> {
        if self.profile.rows().next().is_none() {
            return Err(Error::input(
                self.path,
                Position::Whole,
                "no samples: every profile is empty",
            ));
        }
        if self.rounded_counts > 0 {
            self.profile.meta.warnings.push(Notice::RoundedCounts {
                path: self.path.to_path_buf(),
                count: self.rounded_counts,
            });
        }
        Ok(self.profile)
    }
}

/// Which profile a message is about: its index and name, and the entry of one of its arrays
/// being read (`("events", 12)`), whose line and column the message gives.
struct Where {
    index: usize,
    name: String,
    item: Cell<Option<(&'static str, usize)>>,
}

impl std::fmt::Display for Where {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.index, self.name)
    }
}

fn profile_name(p: &ProfileJson) -> String {
    p.name
        .as_deref()
        .map_or_else(|| "unnamed".to_string(), |n| quote(n.as_bytes()))
}

/// py-spy's frames are Python functions with their file and line, the same as in its raw
/// output (`--native` frames too): both go through [`pyspy_model_frame`], so one program read
/// either way has the same frames. Other exporters' frames are read like folded frames, keeping file and line.
fn make_frame(f: &FrameJson, pyspy: bool) -> Frame {
    let line = f
        .line
        .filter(|l| l.is_finite() && *l >= 0.0 && *l <= f64::from(u32::MAX))
        .map(|l| l as u32);
    if pyspy && let Some(file) = &f.file {
        let raw = match line {
            Some(l) => format!("{} ({file}:{l})", f.name),
            None => format!("{} ({file})", f.name),
        };
        if let Some(frame) = pyspy_model_frame(&raw) {
            return frame;
        }
    }
    let mut frame = folded_frame(&f.name);
    frame.file = f.file.as_deref().map(Into::into);
    frame.line = line.and_then(NonZeroU32::new);
    frame
}

impl Builder<'_> {
    fn error(&self, at: &Where, message: String) -> Error {
        Error::input(
            self.path,
            position(self.text, at.index, at.item.get()),
            format!("profile {at}: {message}"),
        )
    }

    /// Refuses an evented profile whose distinct stacks, with the one about to be added
    /// (`depth` frames, open at event `e`), would hold more than [`EVENTED_SHARE`] of
    /// `--max-decompressed`.
    fn check_nesting(&self, at: &Where, e: usize, depth: usize) -> Result<()> {
        let next = (depth * std::mem::size_of::<FrameId>()) as u64;
        if self.evented_bytes.saturating_add(next) <= self.evented_cap {
            return Ok(());
        }
        Err(self.error(
            at,
            format!(
                "at event {e}, {depth} frames open: the distinct stacks its open/close events \
                 nest into hold more than {} bytes of frames (whose keeps each distinct stack \
                 whole, so nesting N deep costs N²/2 frames), an eighth of \
                 --max-decompressed; raise --max-decompressed to read it",
                self.evented_cap,
            ),
        ))
    }

    /// A position (weight or time) in the file's unit as a whole number of whose's unit.
    fn scaled(&mut self, at: &Where, what: &str, value: f64, scale: f64) -> Result<u128> {
        if !value.is_finite() || value < 0.0 {
            return Err(self.error(
                at,
                format!("{what} is {value}; expected a number of at least 0"),
            ));
        }
        let scaled = (value * scale).round();
        if scale == 1.0 && scaled != value {
            self.rounded_counts += 1;
        }
        Ok(scaled as u128)
    }

    fn frame(&self, at: &Where, index: u64, what: &str) -> Result<FrameId> {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.frames.get(i).copied())
            .ok_or_else(|| {
                self.error(
                    at,
                    format!(
                        "{what} names frame {index}, but shared.frames has {} frame(s)",
                        self.frames.len()
                    ),
                )
            })
    }

    /// Adds one sample (`sampled`: counted in the `samples` type too) or one interval of an
    /// evented profile.
    fn add(
        &mut self,
        stack_root_first: &[FrameId],
        thread: Option<ThreadId>,
        (ty, v): (usize, u128),
        sampled: bool,
    ) {
        self.leaf_first.clear();
        self.leaf_first.extend(stack_root_first.iter().rev());
        let known = self.profile.stack_count();
        let stack = self.profile.intern_stack(&self.leaf_first);
        if self.profile.stack_count() > known {
            let bytes = (self.leaf_first.len() * std::mem::size_of::<FrameId>()) as u64;
            self.evented_bytes = self.evented_bytes.saturating_add(bytes);
        }
        self.values.iter_mut().for_each(|x| *x = 0);
        self.values[ty] = v;
        if sampled && let Some(count) = self.count {
            self.values[count] = 1;
        }
        self.profile.add_sample(stack, thread, &self.values);
    }

    fn sampled(
        &mut self,
        at: &Where,
        p: &ProfileJson,
        thread: Option<ThreadId>,
        ty: usize,
        scale: f64,
    ) -> Result<()> {
        let samples = p.samples.as_deref().unwrap_or_default();
        let weights = p.weights.as_deref().unwrap_or_default();
        if samples.len() != weights.len() {
            return Err(self.error(
                at,
                format!(
                    "{} sample(s) but {} weight(s); a sampled profile has one weight per sample",
                    samples.len(),
                    weights.len()
                ),
            ));
        }
        let mut stack = Vec::new();
        for (s, (sample, &weight)) in samples.iter().zip(weights).enumerate() {
            stack.clear();
            at.item.set(Some(("samples", s)));
            for &index in sample {
                stack.push(self.frame(at, index, &format!("sample {s}"))?);
            }
            at.item.set(Some(("weights", s)));
            let value = self.scaled(at, &format!("the weight of sample {s}"), weight, scale)?;
            self.add(&stack, thread, (ty, value), true);
        }
        Ok(())
    }

    /// Replays the open/close events; each interval between two events is self time of the
    /// stack open during it. A close must match the innermost open frame (speedscope refuses
    /// such a file too); frames still open at the end are closed at `endValue`.
    fn evented(
        &mut self,
        at: &Where,
        p: &ProfileJson,
        thread: Option<ThreadId>,
        ty: usize,
        scale: f64,
    ) -> Result<()> {
        let events = p.events.as_deref().unwrap_or_default();
        let mut open: Vec<FrameId> = Vec::new();
        let mut open_index: Vec<u64> = Vec::new();
        let mut last: u128 = 0;
        for (e, event) in events.iter().enumerate() {
            at.item.set(Some(("events", e)));
            let now = self.scaled(at, &format!("`at` of event {e}"), event.at, scale)?;
            if now < last && e > 0 {
                return Err(self.error(
                    at,
                    format!(
                        "event {e} is at {}, before the event ahead of it; expected events \
                         in time order",
                        event.at
                    ),
                ));
            }
            if !open.is_empty() && now > last {
                self.check_nesting(at, e, open.len())?;
                let stack = std::mem::take(&mut open);
                self.add(&stack, thread, (ty, now - last), false);
                open = stack;
            }
            last = now;
            match event.kind.as_str() {
                "O" => {
                    open.push(self.frame(at, event.frame, &format!("event {e}"))?);
                    open_index.push(event.frame);
                }
                "C" => {
                    if open_index.last() != Some(&event.frame) {
                        return Err(self.error(
                            at,
                            format!(
                                "event {e} closes frame {} but the innermost open frame is {}",
                                event.frame,
                                open_index
                                    .last()
                                    .map_or_else(|| "none".to_string(), u64::to_string)
                            ),
                        ));
                    }
                    open.pop();
                    open_index.pop();
                }
                other => {
                    return Err(self.error(
                        at,
                        format!(
                            "event {e} has type {}; expected \"O\" or \"C\"",
                            quote(other.as_bytes())
                        ),
                    ));
                }
            }
        }
        at.item.set(None);
        if !open.is_empty() {
            let end = match p.end_value {
                Some(v) => self.scaled(at, "endValue", v, scale)?,
                None => last,
            };
            if end > last {
                self.check_nesting(at, events.len(), open.len())?;
                let stack = std::mem::take(&mut open);
                self.add(&stack, thread, (ty, end - last), false);
                open = stack;
            }
            self.profile.meta.warnings.push(Notice::FramesLeftOpen {
                path: self.path.to_path_buf(),
                profile: at.index,
                name: at.name.clone(),
                open: open.len(),
            });
        }
        Ok(())
    }
}

/// Where `profiles[profile]` (or with `item`, `profiles[profile].KEY[INDEX]`) starts in the
/// JSON text, as a line and column (1-based, columns in bytes) like serde_json's own errors;
/// the whole file when the text cannot be walked there (it parsed, so it can). The walk skips
/// values without recursion, so it costs one pass over the text at most, however deep.
fn position(text: &[u8], profile: usize, item: Option<(&str, usize)>) -> Position {
    let mut at = Walk { text, pos: 0 };
    let found = (|| {
        at.field("profiles")?;
        at.item(profile)?;
        if let Some((key, index)) = item {
            at.field(key)?;
            at.item(index)?;
        }
        Some(at.pos)
    })();
    let Some(offset) = found else {
        return Position::Whole;
    };
    let before = &text[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    let column = before.iter().rev().take_while(|&&b| b != b'\n').count() as u64 + 1;
    Position::LineColumn(line, column)
}

/// A cursor over JSON text that finds a field or array entry and skips values (the
/// cpuprofile reader's messages use it too).
pub(super) struct Walk<'a> {
    pub(super) text: &'a [u8],
    pub(super) pos: usize,
}

impl Walk<'_> {
    pub(super) fn peek(&mut self) -> Option<u8> {
        while let Some(&b) = self.text.get(self.pos) {
            if !b.is_ascii_whitespace() {
                return Some(b);
            }
            self.pos += 1;
        }
        None
    }

    fn eat(&mut self, want: u8) -> Option<()> {
        (self.peek()? == want).then(|| self.pos += 1)
    }

    /// Past a string whose opening quote is at `pos`; returns its raw contents.
    fn string(&mut self) -> Option<&[u8]> {
        self.eat(b'"')?;
        let start = self.pos;
        while let Some(&b) = self.text.get(self.pos) {
            self.pos += 1;
            match b {
                b'\\' => self.pos += 1,
                b'"' => return self.text.get(start..self.pos - 1),
                _ => {}
            }
        }
        None
    }

    /// Past the value at `pos`: nested objects and arrays by counting brackets.
    fn skip(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match *self.text.get(self.pos)? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth -= 1,
                        _ => {}
                    }
                    self.pos += 1;
                    if depth == 0 {
                        return Some(());
                    }
                }
            }
            _ => {
                while self
                    .text
                    .get(self.pos)
                    .is_some_and(|b| !b",]} \t\r\n".contains(b))
                {
                    self.pos += 1;
                }
                Some(())
            }
        }
    }

    /// Into the object at `pos`, to the value of its field `key`.
    pub(super) fn field(&mut self, key: &str) -> Option<()> {
        self.eat(b'{')?;
        loop {
            if self.string()? == key.as_bytes() {
                return self.eat(b':');
            }
            self.eat(b':')?;
            self.skip()?;
            self.eat(b',')?;
        }
    }

    /// Into the array at `pos`, to its entry `index`.
    pub(super) fn item(&mut self, index: usize) -> Option<()> {
        self.eat(b'[')?;
        for _ in 0..index {
            self.skip()?;
            self.eat(b',')?;
        }
        (self.peek()? != b']').then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn messages_find_the_line_and_column_of_a_profile_entry() {
        let text = br#"{"shared": {"frames": [{"name": "a]\"{"}]},
 "profiles": [{"type": "x", "events": [1]},
   {"name": "t", "events": [{"at": [0, {"k": "]"}]},
      {"at": 2}]}]}"#;
        assert_eq!(position(text, 0, None), Position::LineColumn(2, 15));
        assert_eq!(position(text, 1, None), Position::LineColumn(3, 4));
        assert_eq!(
            position(text, 1, Some(("events", 1))),
            Position::LineColumn(4, 7)
        );
        assert_eq!(position(text, 1, Some(("events", 2))), Position::Whole);
        assert_eq!(position(text, 2, None), Position::Whole);
    }

    #[test]
    fn units_scale_to_whose_units() {
        assert_eq!(sample_type("milliseconds").unwrap().1, 1e6);
        assert_eq!(sample_type("none").unwrap().0, SampleType::samples());
        assert_eq!(sample_type("bytes").unwrap().0.unit, Unit::Bytes);
        assert!(sample_type("furlongs").is_none());
    }
}

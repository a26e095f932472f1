//! pprof: the protobuf `Profile` of `src/pprof_wire/profile.proto` (Go's runtime, pprof-rs,
//! @datadog/pprof, async-profiler's converter, Pyroscope, Parca), gzip-compressed or raw.
//!
//! Mapping to the model, as `go tool pprof` reads the same file:
//! - every sample type is kept; the default is `default_sample_type`, else the last type;
//! - a `Location` with several `Line`s is a chain of inlined calls: `line[0]` is the innermost
//!   (the leaf), the last line the physical frame it was inlined into; all but the last are
//!   kind `inlined`. A location without lines is an unsymbolized address: `[unknown]`, kind
//!   `unknown`, with its mapping's module (DESIGN "Frame names");
//! - `Mapping` file → frame module; `Function` name (else system name), file name and the
//!   line's number → frame name, file, line;
//! - `drop_frames`/`keep_frames` prune stacks exactly like pprof's `Profile.Prune`;
//! - string labels naming a thread (`thread`, `thread_name`, `goroutine`...) become the
//!   thread dimension; other labels are not part of the model (`whose convert` keeps them
//!   when it writes pprof from pprof, see [`Decoded`]);
//! - `period`, `duration_nanos`, `comment`, the main binary and its build id go to the
//!   profile's notes.
//!
//! Everything the file refers to is checked (string indices, location, mapping and function
//! ids, value counts), so bad input is an error naming the file, the byte offset of the
//! top-level field at fault and the problem, never a panic.
//!
//! Samples are decoded one at a time as they are folded, never held as a decoded list: a
//! `Sample` costs about 150 bytes decoded against 10 to 20 encoded, so a 10 M-sample profile
//! (436 KB gzipped) that decoded whole took more than 2 GB. The tables are decoded first (a
//! `Profile`'s fields come in any order), then the samples in a second pass over the bytes.

use super::name_memo::NameMemo;
use super::options::{Probe, ReadOptions};
use super::source::Source;
use crate::error::{Error, Position, Result, quote};
use crate::model::{
    Frame, FrameId, FrameKind, Notice, Profile, SampleType, StackId, ThreadId, UNKNOWN, Unit,
    Utf8Place, perf,
};
use crate::pprof_wire as pb;
use arcstr::ArcStr;
use compact_str::CompactString;
use hashbrown::HashTable;
use prost::Message;
use rustc_hash::FxHashMap;
use std::cell::Cell;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};

/// String label keys whose value names the thread (or goroutine) a sample ran on.
const THREAD_LABELS: &[&str] = &[
    "thread",
    "thread_name",
    "thread.name",
    "threadname",
    "goroutine",
    "goroutine_name",
];

/// The decoded file beside the model, for writers that want to keep every field of the
/// input (numeric labels, addresses, mappings): `sample_stacks[i]` is the stack sample `i`
/// was folded into.
pub struct Decoded {
    /// Every field but the string table, which is in `strings`.
    pub proto: pb::Profile,
    pub strings: StringTable,
    pub sample_stacks: Vec<StackId>,
}

/// pprof's string table, held compactly: the texts back to back in one buffer and an end
/// offset each. As a `Vec<String>` each entry cost 24 bytes beside its text, so a profile of
/// 100 M empty strings (852 KB gzipped, 200 MB raw, under `--max-decompressed`) needed 2.4 GB
/// and aborted under a 2 GB limit (issue 23); here an entry costs 4 bytes.
#[derive(Debug, Clone, Default)]
pub struct StringTable {
    text: String,
    /// `ends[i]` is where string `i` ends in `text`.
    ends: Vec<u32>,
}

impl StringTable {
    /// Appends `s`; false (and nothing appended) when the texts would pass 4 GiB, which the
    /// `u32` offsets cannot name.
    pub fn push(&mut self, s: &str) -> bool {
        let Some(end) = u32::try_from(self.text.len() + s.len()).ok() else {
            return false;
        };
        self.text.push_str(s);
        self.ends.push(end);
        true
    }

    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)? as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        Some(&self.text[start..end])
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.len()).filter_map(|i| self.get(i))
    }
}

/// Whether `head` (the first decompressed bytes) starts like a pprof `Profile`: its first
/// fields (up to 8, or to the end of `head`) have the field numbers and wire types of the
/// schema, and there is a control byte early on, which text formats never have.
pub fn probe(head: &[u8]) -> Probe {
    if looks_like_pprof(head) {
        Probe::Yes
    } else {
        Probe::No
    }
}

/// Whether `head` (the first decompressed bytes) starts like a pprof `Profile` ([`probe`]).
pub fn looks_like_pprof(head: &[u8]) -> bool {
    if !head.iter().take(256).any(|&b| b < 0x09) {
        return false;
    }
    let mut pos = 0;
    let mut fields = 0;
    while pos < head.len() && fields < 8 {
        let Some(tag) = varint(head, &mut pos) else {
            break;
        };
        let (field, wire) = (tag >> 3, tag & 7);
        let expected: &[u64] = match field {
            1..=6 | 11 => &[2],
            13 => &[0, 2],
            7..=10 | 12 | 14 => &[0],
            _ => return false,
        };
        if !expected.contains(&wire) {
            return false;
        }
        fields += 1;
        let Some(value) = varint(head, &mut pos) else {
            break;
        };
        if wire == 2 {
            pos = pos.saturating_add(value as usize);
        }
    }
    fields > 0
}

/// What a profile in one of pprof's pre-protobuf formats is, from its first bytes, or `None`:
/// the text formats of gperftools/tcmalloc and Go's `debug=1` endpoints (`heap profile: …`,
/// `--- contention:`, `goroutine profile: total 4`, `--- threadz 1 ---`) and the binary CPU
/// profile of gperftools, whose header is the machine words 0, 3, 0, period, 0. They are told
/// apart here only to be refused with the conversion that reads them (`go tool pprof`
/// does): read as perf script or folded text they gave exit 0 and wrong numbers.
pub fn legacy_kind(head: &[u8]) -> Option<&'static str> {
    match legacy_cpu_header(head) {
        Some(0) => return Some("legacy pprof binary CPU profile (gperftools)"),
        // pprof's `javaCPUProfile` (google/pprof `legacy_java_profile.go`), issue 28
        Some(_) => return Some("legacy pprof Java CPU profile"),
        None => {}
    }
    let first = head.split(|&b| b == b'\n').next()?;
    let first = std::str::from_utf8(first).ok()?.trim();
    let count_profile = first
        .split_once(" profile: total ")
        .is_some_and(|(name, n)| {
            !name.is_empty()
                && !name.contains(char::is_whitespace)
                && !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
        });
    let text = first.starts_with("heap profile:")
        || count_profile
        || [
            "--- contention",
            "--- mutex",
            "--- threadz",
            "--- heapz",
            "--- growthz",
        ]
        .iter()
        .any(|p| first.starts_with(p));
    text.then_some("legacy pprof text format")
}

/// gperftools' binary CPU profile header: words 0 (header count), 3 (header words), the
/// version (0; 1 for the Java CPU profiles pprof also reads), the sampling period in µs
/// (non-zero), 0 (padding), as 32- or 64-bit words of either byte order, as pprof's
/// `legacy_profile.go` accepts them. The version, when the header is one.
fn legacy_cpu_header(head: &[u8]) -> Option<u64> {
    for size in [4usize, 8] {
        if head.len() < 5 * size {
            continue;
        }
        for big in [false, true] {
            let word = |i: usize| {
                let bytes = &head[i * size..(i + 1) * size];
                let fold = |acc: u64, &b: &u8| (acc << 8) | u64::from(b);
                if big {
                    bytes.iter().fold(0, fold)
                } else {
                    bytes.iter().rev().fold(0, fold)
                }
            };
            if (word(0), word(1), word(4)) == (0, 3, 0) && word(2) <= 1 && word(3) != 0 {
                return Some(word(2));
            }
        }
    }
    None
}

/// A protobuf varint at `*pos`, advancing it; `None` when `bytes` ends first.
fn varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

/// A varint as prost reads one, or `None` where prost would not (more than ten bytes, a
/// tenth byte above 1) or `bytes` ends first.
#[inline(always)]
fn strict_varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for i in 0..10 {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        if i == 9 && b > 1 {
            return None;
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

/// Decodes an encoded `Sample` into `s` (cleared first) as prost would, for the shapes
/// writers use: location ids and values packed or one by one, labels (decoded by prost).
/// `false` for anything else — another field, another wire type, a varint prost rejects, a
/// length past the end — which the caller hands to prost to decode and to word the error.
/// prost's generic merge cost ~1,500 instructions a sample, a fifth of `report --each` over
/// a fleet of small profiles (issue 24).
fn decode_sample(bytes: &[u8], s: &mut pb::Sample) -> bool {
    s.clear();
    let mut pos = 0;
    while pos < bytes.len() {
        let Some(key) = strict_varint(bytes, &mut pos) else {
            return false;
        };
        let ok = match key {
            // field 1 (location_id) and 2 (value), one varint each
            0x08 => strict_varint(bytes, &mut pos).map(|v| s.location_id.push(v)),
            0x10 => strict_varint(bytes, &mut pos).map(|v| s.value.push(v as i64)),
            // length-delimited: packed ids or values, or a label
            0x0a | 0x12 | 0x1a => {
                let Some(body) = delimited(bytes, &mut pos) else {
                    return false;
                };
                match key {
                    0x0a => packed(body, |v| s.location_id.push(v)),
                    0x12 => packed(body, |v| s.value.push(v as i64)),
                    _ => decode_label(body).map(|l| s.label.push(l)),
                }
            }
            _ => None,
        };
        if ok.is_none() {
            return false;
        }
    }
    true
}

/// A `Label` of four varint fields as prost decodes it; `None` for any other shape (prost
/// then decodes the whole sample).
fn decode_label(bytes: &[u8]) -> Option<pb::Label> {
    let mut label = pb::Label::default();
    varint_fields(bytes, |key, value| {
        let value = value as i64;
        match key {
            0x08 => label.key = value,
            0x10 => label.str = value,
            0x18 => label.num = value,
            0x20 => label.num_unit = value,
            _ => return false,
        }
        true
    })?;
    Some(label)
}

/// Each (key, value) of a message of varint fields only to `set`, which says whether it
/// knows the key; `None` if one is unknown or a varint is not whole.
fn varint_fields(bytes: &[u8], mut set: impl FnMut(u64, u64) -> bool) -> Option<()> {
    let mut pos = 0;
    while pos < bytes.len() {
        let key = strict_varint(bytes, &mut pos)?;
        let value = strict_varint(bytes, &mut pos)?;
        if !set(key, value) {
            return None;
        }
    }
    Some(())
}

/// A `Location` as prost decodes it, for the fields pprof defines (its lines by
/// [`decode_line`]); `None` for any other shape, which prost then decodes.
fn decode_location(bytes: &[u8]) -> Option<pb::Location> {
    let mut location = pb::Location::default();
    let mut pos = 0;
    while pos < bytes.len() {
        match strict_varint(bytes, &mut pos)? {
            0x08 => location.id = strict_varint(bytes, &mut pos)?,
            0x10 => location.mapping_id = strict_varint(bytes, &mut pos)?,
            0x18 => location.address = strict_varint(bytes, &mut pos)?,
            0x22 => location
                .line
                .push(decode_line(delimited(bytes, &mut pos)?)?),
            0x28 => location.is_folded = strict_varint(bytes, &mut pos)? != 0,
            _ => return None,
        }
    }
    Some(location)
}

/// A `Line` as prost decodes it; `None` for any other shape.
fn decode_line(bytes: &[u8]) -> Option<pb::Line> {
    let mut line = pb::Line::default();
    varint_fields(bytes, |key, value| {
        match key {
            0x08 => line.function_id = value,
            0x10 => line.line = value as i64,
            _ => return false,
        }
        true
    })?;
    Some(line)
}

/// A `Function` as prost decodes it; `None` for any other shape.
fn decode_function(bytes: &[u8]) -> Option<pb::Function> {
    let mut function = pb::Function::default();
    varint_fields(bytes, |key, value| {
        match key {
            0x08 => function.id = value,
            0x10 => function.name = value as i64,
            0x18 => function.system_name = value as i64,
            0x20 => function.filename = value as i64,
            0x28 => function.start_line = value as i64,
            _ => return false,
        }
        true
    })?;
    Some(function)
}

/// The bytes of a length-delimited value at `*pos` (its length read), advancing past them.
fn delimited<'b>(bytes: &'b [u8], pos: &mut usize) -> Option<&'b [u8]> {
    let len = usize::try_from(strict_varint(bytes, pos)?).ok()?;
    let end = pos.checked_add(len).filter(|&end| end <= bytes.len())?;
    let body = &bytes[*pos..end];
    *pos = end;
    Some(body)
}

/// Each varint of a packed field's `body` to `push`; `None` if one is not whole.
fn packed(body: &[u8], mut push: impl FnMut(u64)) -> Option<()> {
    let mut pos = 0;
    while pos < body.len() {
        push(strict_varint(body, &mut pos)?);
    }
    Some(())
}

/// Reads a pprof input into a profile; samples are folded as they are decoded.
pub fn read(mut source: Source, options: &ReadOptions) -> Result<Profile> {
    let bytes = read_capped(&mut source, options)?;
    decode(&source.path, &bytes, false, options.names.as_deref()).map(|(profile, _)| profile)
}

/// Reads a pprof input, returning the decoded file too (every sample held decoded: for
/// `convert`, which writes them back).
pub fn read_keeping_samples(
    mut source: Source,
    options: &ReadOptions,
) -> Result<(Profile, Decoded)> {
    let bytes = read_capped(&mut source, options)?;
    decode(&source.path, &bytes, true, options.names.as_deref())
}

/// The tables, then the samples (held in `Decoded` only when `keep_samples`); function names
/// looked up in `names` when the run shares one.
fn decode(
    path: &Path,
    bytes: &[u8],
    keep_samples: bool,
    names: Option<&NameMemo>,
) -> Result<(Profile, Decoded)> {
    let mut warnings = Vec::new();
    let (mut proto, strings, offsets) = decode_tables(path, bytes, &mut warnings)?;
    let (mut profile, sample_stacks, samples) =
        Builder::new(path, &proto, &strings, &offsets)?.build(bytes, keep_samples, names)?;
    profile.meta.warnings.splice(0..0, warnings);
    proto.sample = samples;
    Ok((
        profile,
        Decoded {
            proto,
            strings,
            sample_stacks,
        },
    ))
}

/// Where the top-level fields the tables came from start, so that an error in one names its
/// byte offset.
#[derive(Default)]
struct FieldOffsets {
    sample_type: Vec<usize>,
    mapping: Vec<usize>,
    location: Vec<usize>,
    function: Vec<usize>,
    /// The last occurrence of each singular field (protobuf: the last one wins), by number.
    singular: [Option<usize>; 16],
}

/// Every top-level field but the samples, merged into a `Profile` one field at a time
/// (protobuf defines a message's encoding as the merge of its fields, so this is the decode
/// of the whole minus `sample`).
fn decode_tables(
    path: &Path,
    bytes: &[u8],
    warnings: &mut Vec<Notice>,
) -> Result<(pb::Profile, StringTable, FieldOffsets)> {
    let mut proto = pb::Profile::default();
    let mut strings = StringTable::default();
    let mut offsets = FieldOffsets::default();
    // (how many strings were not UTF-8, the offset of the first)
    let mut lossy: (usize, Option<usize>) = (0, None);
    for field in Fields::new(path, bytes) {
        let field = field?;
        match field.number {
            SAMPLE_FIELD => continue,
            // a length-delimited string: read lossily, as every text reader is (prost would
            // reject the whole file for one bad byte in a symbol name)
            STRING_TABLE_FIELD if field.value > field.at => {
                let raw = &bytes[field.value..field.end];
                let text = String::from_utf8_lossy(raw);
                if let std::borrow::Cow::Owned(_) = text {
                    lossy.0 += 1;
                    lossy.1.get_or_insert(field.at);
                }
                if !strings.push(&text) {
                    return Err(field.error(
                        path,
                        "the string table holds more than 4 GiB of text, more than whose \
                         reads"
                            .into(),
                    ));
                }
                continue;
            }
            1 => offsets.sample_type.push(field.at),
            3 => offsets.mapping.push(field.at),
            4 => offsets.location.push(field.at),
            5 => offsets.function.push(field.at),
            n => {
                if let Some(slot) = offsets.singular.get_mut(n as usize) {
                    *slot = Some(field.at);
                }
            }
        }
        // the two tables as long as the samples, without prost's generic merge
        let body = &bytes[field.value..field.end];
        let taken = field.value > field.at
            && match field.number {
                4 => decode_location(body).map(|l| proto.location.push(l)),
                5 => decode_function(body).map(|f| proto.function.push(f)),
                _ => None,
            }
            .is_some();
        if !taken {
            proto
                .merge(&bytes[field.at..field.end])
                .map_err(|e| field.error(path, format!("not a valid pprof protobuf: {e}")))?;
        }
    }
    if let (n, Some(first)) = lossy {
        let place = Utf8Place::StringTable {
            count: n,
            first_offset: first,
        };
        let path = path.to_path_buf();
        warnings.push(Notice::NotUtf8 { path, place });
    }
    // an entry that reached prost (none does: each is length-delimited), in file order
    for text in std::mem::take(&mut proto.string_table) {
        strings.push(&text);
    }
    Ok((proto, strings, offsets))
}

/// `Profile.string_table`'s field number.
const STRING_TABLE_FIELD: u32 = 6;

/// `Profile.sample`'s field number.
const SAMPLE_FIELD: u32 = 2;

/// One top-level field of an encoded `Profile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Field {
    number: u32,
    /// Where its key starts: the offset messages give.
    at: usize,
    /// Where its value starts (after the length, for a length-delimited field).
    value: usize,
    end: usize,
}

impl Field {
    fn error(&self, path: &Path, message: String) -> Error {
        Error::input(
            path,
            Position::Offset(self.at as u64),
            format!("in field {} of the Profile message: {message}", self.number),
        )
    }
}

/// The top-level fields of an encoded `Profile`, in file order, each checked to lie inside
/// the input; the first malformed one is an error with its offset, and ends the iteration.
struct Fields<'b> {
    path: &'b Path,
    bytes: &'b [u8],
    pos: usize,
}

impl<'b> Fields<'b> {
    fn new(path: &'b Path, bytes: &'b [u8]) -> Fields<'b> {
        Fields {
            path,
            bytes,
            pos: 0,
        }
    }

    fn field(&mut self) -> std::result::Result<Field, String> {
        let at = self.pos;
        let len = self.bytes.len();
        let mut pos = at;
        let tag = varint(self.bytes, &mut pos).ok_or("the input ends inside a field's key")?;
        let number = u32::try_from(tag >> 3)
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("invalid field key {tag} (field number 0 or too large)"))?;
        let fixed = |size: usize, pos: usize| {
            pos.checked_add(size)
                .filter(|&end| end <= len)
                .ok_or_else(|| format!("the input ends inside field {number}"))
        };
        let (value, end) = match tag & 7 {
            0 => {
                varint(self.bytes, &mut pos)
                    .ok_or_else(|| format!("the input ends inside field {number}"))?;
                (at, pos)
            }
            1 => (at, fixed(8, pos)?),
            5 => (at, fixed(4, pos)?),
            2 => {
                let size = varint(self.bytes, &mut pos)
                    .ok_or_else(|| format!("the input ends inside field {number}'s length"))?;
                let end = usize::try_from(size)
                    .ok()
                    .and_then(|s| pos.checked_add(s))
                    .filter(|&end| end <= len)
                    .ok_or_else(|| {
                        format!(
                            "field {number} declares {size} bytes but only {} remain in the \
                             {len}-byte input (truncated?)",
                            len - pos
                        )
                    })?;
                (pos, end)
            }
            wire => {
                return Err(format!(
                    "field {number} has wire type {wire}, which pprof never uses (not a pprof \
                     protobuf, or corrupt)"
                ));
            }
        };
        Ok(Field {
            number,
            at,
            value,
            end,
        })
    }
}

impl Iterator for Fields<'_> {
    type Item = Result<Field>;

    fn next(&mut self) -> Option<Result<Field>> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        let at = self.pos;
        match self.field() {
            Ok(field) => {
                self.pos = field.end;
                Some(Ok(field))
            }
            Err(message) => {
                self.pos = self.bytes.len();
                Some(Err(Error::input(
                    self.path,
                    Position::Offset(at as u64),
                    format!("not a valid pprof protobuf: {message}"),
                )))
            }
        }
    }
}

/// The whole (decompressed) input, capped as every in-memory reader is; pprof has nothing to
/// say about an empty one.
fn read_capped(source: &mut Source, options: &ReadOptions) -> Result<Vec<u8>> {
    let bytes = source.read_capped(options.max_decompressed)?;
    if bytes.is_empty() {
        return Err(Error::input(
            &source.path,
            Position::Whole,
            "empty input: no samples",
        ));
    }
    Ok(bytes)
}

/// One location's frames (leaf first) as a range of `Builder::loc_frames`, and how
/// `drop_frames` prunes it.
#[derive(Clone, Copy)]
struct Loc {
    start: u32,
    end: u32,
    /// Every line matched `drop_frames`: the location and everything leafward go.
    prune: bool,
    /// Some inlined line matched: the location stays (with fewer frames), leafward goes.
    prune_beneath: bool,
}

struct Builder<'a> {
    path: PathBuf,
    proto: &'a pb::Profile,
    strings: &'a StringTable,
    offsets: &'a FieldOffsets,
    /// The offset of the field being read, for messages.
    at: Cell<Option<usize>>,
    profile: Profile,
    locations: LocationIndex,
    loc_frames: Vec<FrameId>,
}

impl<'a> Builder<'a> {
    fn new(
        path: &Path,
        proto: &'a pb::Profile,
        strings: &'a StringTable,
        offsets: &'a FieldOffsets,
    ) -> Result<Builder<'a>> {
        let mut b = Builder {
            path: path.to_path_buf(),
            proto,
            strings,
            offsets,
            at: Cell::new(offsets.singular[6]),
            profile: Profile::new(Vec::new()),
            locations: LocationIndex::default(),
            loc_frames: Vec::new(),
        };
        if let Some(first) = strings.get(0).filter(|s| !s.is_empty()) {
            return Err(b.error(format!(
                "string_table[0] must be the empty string, found `{}`",
                quote(first.as_bytes())
            )));
        }
        b.profile = Profile::new(b.sample_types()?);
        let unnamed: Vec<Notice> = (b.profile.sample_types().iter().enumerate())
            .filter(|(_, t)| t.name.is_empty())
            .map(|(index, t)| Notice::UnnamedSampleType {
                index,
                unit: t.unit.to_string(),
            })
            .collect();
        b.profile.meta.notes.extend(unnamed);
        b.profile.default_sample_type = b.default_sample_type()?;
        Ok(b)
    }

    /// An error at the field being read ([`Builder::at`]).
    fn error(&self, message: impl Into<String>) -> Error {
        let position = match self.at.get() {
            Some(at) => Position::Offset(at as u64),
            None => Position::Whole,
        };
        Error::input(&self.path, position, message)
    }

    /// Makes the `i`th field of a table (`offsets`) the one messages name.
    fn at_entry(&self, offsets: &[usize], i: usize) {
        self.at.set(offsets.get(i).copied());
    }

    /// Makes singular field `number` the one messages name.
    fn at_field(&self, number: usize) {
        self.at.set(self.offsets.singular[number]);
    }

    /// The string at `index`, or an error naming what referred to it.
    fn string(&self, index: i64, what: impl FnOnce() -> String) -> Result<&'a str> {
        let table = self.strings;
        usize::try_from(index)
            .ok()
            .and_then(|i| table.get(i))
            .ok_or_else(|| {
                self.error(format!(
                    "{} is string index {index}, out of range (the string table has {} entries)",
                    what(),
                    table.len()
                ))
            })
    }

    fn sample_types(&self) -> Result<Vec<SampleType>> {
        if self.proto.sample_type.is_empty() {
            self.at.set(None);
            return Err(self.error("no sample types: a pprof profile must declare at least one"));
        }
        self.proto
            .sample_type
            .iter()
            .enumerate()
            .map(|(i, t)| {
                self.at_entry(&self.offsets.sample_type, i);
                let name = self.string(t.r#type, || format!("sample_type[{i}].type"))?;
                let unit = self.string(t.unit, || format!("sample_type[{i}].unit"))?;
                // an empty name stays empty: `go tool pprof` shows it so (`-sample_index=0`)
                Ok(SampleType::new(name, Unit::parse(unit)))
            })
            .collect()
    }

    /// `default_sample_type` names a type; pprof falls back to the last type without it.
    fn default_sample_type(&mut self) -> Result<usize> {
        let last = self.proto.sample_type.len() - 1;
        self.at_field(14);
        let name = self.string(self.proto.default_sample_type, || {
            "default_sample_type".to_string()
        })?;
        if name.is_empty() {
            return Ok(last);
        }
        match self
            .profile
            .sample_types()
            .iter()
            .position(|t| t.name == name)
        {
            Some(i) => Ok(i),
            None => {
                self.profile.meta.warnings.push(Notice::UnknownDefaultType {
                    path: self.path.to_path_buf(),
                    name: quote(name.as_bytes()).to_string(),
                });
                Ok(last)
            }
        }
    }

    /// The profile from the tables and the samples of `bytes`; with `keep_samples`, each
    /// sample decoded and the stack it was folded into.
    fn build(
        mut self,
        bytes: &[u8],
        keep_samples: bool,
        names: Option<&NameMemo>,
    ) -> Result<(Profile, Vec<StackId>, Vec<pb::Sample>)> {
        self.meta()?;
        let mut prune = self.prune_rules()?;
        let mappings = self.mappings()?;
        let functions = self.functions(names)?;
        self.locations(&mappings, &functions, prune.as_mut())?;
        let (stacks, samples) = self.samples(bytes, prune.is_some(), keep_samples)?;
        Ok((self.profile, stacks, samples))
    }

    /// period, duration, comments, the main binary: facts the report header shows.
    fn meta(&mut self) -> Result<()> {
        let p = self.proto;
        let mut notes = Vec::new();
        if let Some(t) = &p.period_type
            && p.period != 0
        {
            self.at_field(11);
            let name = self.string(t.r#type, || "period_type.type".into())?;
            let unit = self.string(t.unit, || "period_type.unit".into())?;
            notes.push(Notice::Period {
                period: p.period,
                unit: unit.to_string(),
                name: name.to_string(),
            });
            self.profile.meta.period = Some((p.period, SampleType::new(name, Unit::parse(unit))));
        }
        if p.duration_nanos > 0 {
            notes.push(Notice::DurationNanos(p.duration_nanos));
            self.profile.meta.duration_nanos = Some(p.duration_nanos);
        }
        for (i, &c) in p.comment.iter().enumerate() {
            self.at_field(13);
            let text = self.string(c, || format!("comment[{i}]"))?;
            notes.push(Notice::Comment(text.to_string()));
        }
        if let Some(main) = p.mapping.first() {
            self.at_entry(&self.offsets.mapping, 0);
            let file = self.string(main.filename, || "mapping[0].filename".into())?;
            let build_id = self.string(main.build_id, || "mapping[0].build_id".into())?;
            if !file.is_empty() {
                notes.push(Notice::MainBinary {
                    file: file.to_string(),
                    build_id: (!build_id.is_empty()).then(|| build_id.to_string()),
                });
            }
        }
        self.profile.meta.notes.extend(notes);
        Ok(())
    }

    fn prune_rules(&mut self) -> Result<Option<Prune>> {
        self.at_field(7);
        let drop = self.string(self.proto.drop_frames, || "drop_frames".into())?;
        if drop.is_empty() {
            return Ok(None);
        }
        self.at_field(8);
        let keep = self.string(self.proto.keep_frames, || "keep_frames".into())?;
        let compile = |re: &str, what: &str, field: usize| {
            regex::Regex::new(&format!("^(?:{re})$")).map_err(|e| {
                self.at_field(field);
                // the regex crate's message quotes the pattern whole, over several lines:
                // its last line is the reason
                let text = e.to_string();
                let reason = text.lines().last().unwrap_or_default();
                self.error(format!(
                    "{what} `{}` is not a valid regular expression: {}",
                    quote(re.as_bytes()),
                    quote(reason.as_bytes())
                ))
            })
        };
        let prune = Prune {
            drop: compile(drop, "drop_frames", 7)?,
            keep: if keep.is_empty() {
                None
            } else {
                Some(compile(keep, "keep_frames", 8)?)
            },
            cache: FxHashMap::default(),
        };
        self.profile
            .meta
            .notes
            .push(Notice::DropFrames(drop.to_string()));
        if !keep.is_empty() {
            self.profile
                .meta
                .notes
                .push(Notice::KeepFrames(keep.to_string()));
        }
        Ok(Some(prune))
    }

    fn mappings(&self) -> Result<Mappings> {
        let mut out = FxHashMap::default();
        for (i, m) in self.proto.mapping.iter().enumerate() {
            self.at_entry(&self.offsets.mapping, i);
            if m.id == 0 {
                return Err(self.error(format!("mapping[{i}] has id 0 (ids start at 1)")));
            }
            let file = self.string(m.filename, || format!("mapping id {}'s filename", m.id))?;
            self.string(m.build_id, || format!("mapping id {}'s build_id", m.id))?;
            let module = (!file.is_empty()).then(|| ArcStr::from(file));
            if out
                .insert(m.id, (module, perf::module_kind(file)))
                .is_some()
            {
                return Err(self.error(format!("mapping id {} is defined twice", m.id)));
            }
        }
        Ok(out)
    }

    fn functions(&self, memo: Option<&NameMemo>) -> Result<FxHashMap<u64, Func<'a>>> {
        let mut out = FxHashMap::default();
        let node = self.proto.function.iter().any(|f| {
            usize::try_from(f.filename)
                .ok()
                .and_then(|i| self.strings.get(i))
                .is_some_and(|s| s.starts_with("node:"))
        });
        // names are normalised after the table is read, all at once: one look into the memo
        let (mut ids, mut raws) = (Vec::new(), Vec::with_capacity(self.proto.function.len()));
        for (i, f) in self.proto.function.iter().enumerate() {
            self.at_entry(&self.offsets.function, i);
            if f.id == 0 {
                return Err(self.error(format!("function[{i}] has id 0 (ids start at 1)")));
            }
            let name = self.string(f.name, || format!("function id {}'s name", f.id))?;
            let system = self.string(f.system_name, || {
                format!("function id {}'s system_name", f.id)
            })?;
            let file = self.string(f.filename, || format!("function id {}'s filename", f.id))?;
            let raw = if name.is_empty() { system } else { name };
            let func = Func {
                raw,
                name: UNKNOWN.into(),
                file: (!file.is_empty()).then(|| ArcStr::from(file)),
                node_native: node && file.is_empty() && !raw.is_empty(),
                node_js: node && !file.is_empty(),
            };
            if out.insert(f.id, func).is_some() {
                return Err(self.error(format!("function id {} is defined twice", f.id)));
            }
            if !raw.is_empty() {
                ids.push(f.id);
                raws.push(raw);
            }
        }
        let names: Vec<CompactString> = match memo {
            Some(memo) => memo.normalize_all(&raws),
            None => (raws.iter())
                .map(|raw| crate::names::normalize_symbol(raw).into())
                .collect(),
        };
        for (id, name) in ids.into_iter().zip(names) {
            if let Some(func) = out.get_mut(&id) {
                func.name = name;
            }
        }
        Ok(out)
    }

    fn locations(
        &mut self,
        mappings: &Mappings,
        functions: &FxHashMap<u64, Func<'a>>,
        mut prune: Option<&mut Prune>,
    ) -> Result<()> {
        self.locations = LocationIndex::for_count(self.proto.location.len());
        for (i, loc) in self.proto.location.iter().enumerate() {
            self.at_entry(&self.offsets.location, i);
            if loc.id == 0 {
                return Err(self.error(format!(
                    "location[{i}] has id 0, which pprof reserves (location ids start at 1)"
                )));
            }
            let (module, map_kind) = match loc.mapping_id {
                0 => (None, FrameKind::Native),
                id => mappings.get(&id).cloned().ok_or_else(|| {
                    self.error(format!(
                        "location id {} refers to mapping id {id}, which is not defined",
                        loc.id
                    ))
                })?,
            };
            // pprof's Prune: scan from the outermost line for the first dropped function
            let mut lines: &[pb::Line] = &loc.line;
            let (mut cut, mut whole) = (false, false);
            if let Some(p) = prune.as_deref_mut() {
                for j in (0..lines.len()).rev() {
                    let name = functions.get(&lines[j].function_id).map_or("", |f| f.raw);
                    if !name.is_empty() && p.drops(name) {
                        // a wholly dropped location keeps its lines: samples that reach it
                        // before any kept frame (from the root) still show it
                        cut = true;
                        whole = j == lines.len() - 1;
                        if !whole {
                            lines = &lines[j + 1..];
                        }
                        break;
                    }
                }
            }
            let start = self.loc_frames.len() as u32;
            if lines.is_empty() {
                let frame = Frame {
                    name: UNKNOWN.into(),
                    module: module.clone(),
                    file: None,
                    line: None,
                    kind: FrameKind::Unknown,
                };
                let id = self.profile.intern_frame(frame);
                self.loc_frames.push(id);
            }
            for (j, line) in lines.iter().enumerate() {
                let frame = self.line_frame(loc, line, functions, &module, map_kind)?;
                let frame = Frame {
                    kind: if j + 1 < lines.len() && frame.kind != FrameKind::Unknown {
                        FrameKind::Inlined
                    } else {
                        frame.kind
                    },
                    ..frame
                };
                let id = self.profile.intern_frame(frame);
                self.loc_frames.push(id);
            }
            let entry = Loc {
                start,
                end: self.loc_frames.len() as u32,
                prune: whole,
                prune_beneath: cut,
            };
            if !self.locations.insert(loc.id, entry) {
                return Err(self.error(format!("location id {} is defined twice", loc.id)));
            }
        }
        Ok(())
    }

    fn line_frame(
        &self,
        loc: &pb::Location,
        line: &pb::Line,
        functions: &FxHashMap<u64, Func<'a>>,
        module: &Option<ArcStr>,
        map_kind: FrameKind,
    ) -> Result<Frame> {
        if line.function_id == 0 {
            return Ok(Frame {
                name: UNKNOWN.into(),
                module: module.clone(),
                file: None,
                line: None,
                kind: FrameKind::Unknown,
            });
        }
        let Func {
            name,
            file,
            node_native,
            node_js,
            ..
        } = functions.get(&line.function_id).ok_or_else(|| {
            self.error(format!(
                "location id {} refers to function id {}, which is not defined",
                loc.id, line.function_id
            ))
        })?;
        let kind = if &**name == UNKNOWN {
            FrameKind::Unknown
        } else if *node_js {
            FrameKind::Jit
        } else {
            map_kind
        };
        let module = match module {
            None if *node_native => Some("node".into()),
            m => m.clone(),
        };
        Ok(Frame {
            name: name.clone(),
            module,
            file: file.clone(),
            line: u32::try_from(line.line).ok().and_then(NonZeroU32::new),
            kind,
        })
    }

    /// Decodes the samples of `bytes` one at a time into one reused `Sample` and folds each
    /// into the profile; with `keep`, also returns them and their stacks, samples of the same
    /// locations and labels merged into one (values summed, as `go tool pprof` merges them):
    /// a profile of 10 M samples over a few stacks is written back as a few samples, and the
    /// memory `convert --to pprof` needs grows with distinct samples, not with samples.
    fn samples(
        &mut self,
        bytes: &[u8],
        pruning: bool,
        keep: bool,
    ) -> Result<(Vec<StackId>, Vec<pb::Sample>)> {
        let n_types = self.proto.sample_type.len();
        let (mut stacks, mut kept_samples) = (Vec::new(), Vec::<pb::Sample>::new());
        let mut kept_index: HashTable<u32> = HashTable::new();
        let mut frames: Vec<FrameId> = Vec::new();
        let mut locs: Vec<Loc> = Vec::new();
        let mut values: Vec<u128> = vec![0; n_types];
        let mut negative: Vec<u128> = vec![0; n_types];
        let (mut stackless, mut negative_samples) = (0usize, 0usize);
        let mut thread_cache: FxHashMap<i64, ThreadId> = FxHashMap::default();
        let mut numeric_keys: Vec<i64> = Vec::new();
        let mut s = pb::Sample::default();
        let mut i = 0usize;
        let path = self.path.clone();
        for field in Fields::new(&path, bytes) {
            let field = field?;
            if field.number != SAMPLE_FIELD {
                continue;
            }
            self.at.set(Some(field.at));
            let message = &bytes[field.value..field.end];
            if !decode_sample(message, &mut s) {
                // prost decides what the fast path does not take, and words any error
                s.clear();
                s.merge(message).map_err(|e| {
                    self.error(format!(
                        "sample {i} is not a valid pprof Sample message: {e}"
                    ))
                })?;
            }
            if s.value.len() != n_types {
                return Err(self.error(format!(
                    "sample {i} has {} value(s) but the profile declares {n_types} sample \
                     type(s) ({})",
                    s.value.len(),
                    self.type_names()
                )));
            }
            // a negative value (a delta profile) goes to the side table, its magnitude there
            let mut has_negative = false;
            for ((slot, neg), &v) in values.iter_mut().zip(&mut negative).zip(&s.value) {
                (*slot, *neg) = if v < 0 {
                    has_negative = true;
                    (0, u128::from(v.unsigned_abs()))
                } else {
                    (v as u128, 0)
                };
            }
            if s.location_id.is_empty() {
                stackless += 1;
            }
            locs.clear();
            for &id in &s.location_id {
                locs.push(self.location(i, id)?);
            }
            let kept = if pruning {
                prune_sample(&locs)
            } else {
                &locs[..]
            };
            frames.clear();
            for loc in kept {
                frames.extend_from_slice(&self.loc_frames[loc.start as usize..loc.end as usize]);
            }
            let stack = self.profile.intern_stack(&frames);
            let thread = self.thread(i, &s, &mut thread_cache)?;
            for l in &s.label {
                if l.str == 0 && !numeric_keys.contains(&l.key) {
                    numeric_keys.push(l.key);
                }
            }
            self.profile.add_sample(stack, thread, &values);
            if has_negative {
                negative_samples += 1;
                self.profile.negative.add(stack, thread, &negative);
            }
            if keep {
                let hash = sample_key_hash(&s);
                let same = |&k: &u32| {
                    let o = &kept_samples[k as usize];
                    o.location_id == s.location_id && o.label == s.label
                };
                if let Some(&k) = kept_index.find(hash, same) {
                    let o = &mut kept_samples[k as usize];
                    for (sum, &v) in o.value.iter_mut().zip(&s.value) {
                        *sum = sum.saturating_add(v);
                    }
                } else {
                    let k = kept_samples.len() as u32;
                    stacks.push(stack);
                    kept_samples.push(s.clone());
                    let kept = &kept_samples;
                    kept_index.insert_unique(hash, k, |&k| sample_key_hash(&kept[k as usize]));
                }
            }
            i += 1;
        }
        if stackless > 0 {
            self.profile
                .meta
                .notes
                .push(Notice::StacklessSamples(stackless));
        }
        if negative_samples > 0 {
            self.profile
                .meta
                .notes
                .push(Notice::NegativeSamples(negative_samples));
        }
        if !numeric_keys.is_empty() {
            let keys: Vec<String> = numeric_keys
                .iter()
                .map(|&k| self.strings.get(k as usize).unwrap_or_default().to_string())
                .collect();
            self.profile.meta.notes.push(Notice::NumericLabels(keys));
        }
        Ok((stacks, kept_samples))
    }

    fn location(&self, sample: usize, id: u64) -> Result<Loc> {
        if id == 0 {
            return Err(self.error(format!(
                "sample {sample} refers to location id 0, which pprof reserves \
                 (location ids start at 1)"
            )));
        }
        self.locations.get(id).ok_or_else(|| {
            self.error(format!(
                "sample {sample} refers to location id {id}, which is not defined \
                 (the profile defines {} locations)",
                self.proto.location.len()
            ))
        })
    }

    /// The thread a sample's labels name, if any; every label's string indices are checked.
    fn thread(
        &mut self,
        sample: usize,
        s: &pb::Sample,
        cache: &mut FxHashMap<i64, ThreadId>,
    ) -> Result<Option<ThreadId>> {
        let mut thread = None;
        for label in &s.label {
            let key = self.string(label.key, || format!("sample {sample}'s label key"))?;
            self.string(label.str, || {
                format!("sample {sample}'s label `{}` value", quote(key.as_bytes()))
            })?;
            self.string(label.num_unit, || {
                format!("sample {sample}'s label `{}` unit", quote(key.as_bytes()))
            })?;
            if thread.is_none() && label.str != 0 && THREAD_LABELS.contains(&key) {
                let id = match cache.get(&label.str) {
                    Some(&t) => t,
                    None => {
                        let name = self.strings.get(label.str as usize).unwrap_or_default();
                        let t = self.profile.intern_thread(name);
                        cache.insert(label.str, t);
                        t
                    }
                };
                thread = Some(id);
            }
        }
        Ok(thread)
    }

    fn type_names(&self) -> String {
        self.profile
            .sample_types()
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Location id → its frames: a table indexed by id for the ids writers use (1, 2, 3...: every
/// sample looks up each of its locations, and a hash per lookup was a tenth of the samples'
/// decode), a map for ids past it (addresses, as some writers use).
#[derive(Default)]
struct LocationIndex {
    dense: Vec<Option<Loc>>,
    sparse: FxHashMap<u64, Loc>,
}

impl LocationIndex {
    /// An index for `count` locations: ids up to about twice the count go in the table.
    fn for_count(count: usize) -> LocationIndex {
        LocationIndex {
            dense: vec![None; count.saturating_mul(2).saturating_add(16)],
            sparse: FxHashMap::default(),
        }
    }

    /// Adds location `id`; `false` if it was there already.
    fn insert(&mut self, id: u64, loc: Loc) -> bool {
        match usize::try_from(id).ok().and_then(|i| self.dense.get_mut(i)) {
            Some(slot) => slot.replace(loc).is_none(),
            None => self.sparse.insert(id, loc).is_none(),
        }
    }

    fn get(&self, id: u64) -> Option<Loc> {
        match usize::try_from(id).ok().and_then(|i| self.dense.get(i)) {
            Some(slot) => *slot,
            None => self.sparse.get(&id).copied(),
        }
    }
}

/// Mapping id → (module, the kind its frames get).
type Mappings = FxHashMap<u64, (Option<ArcStr>, FrameKind)>;

/// A function as frames use it.
/// The hash of what makes two samples one: their locations and labels.
fn sample_key_hash(s: &pb::Sample) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = rustc_hash::FxBuildHasher.build_hasher();
    h.write_usize(s.location_id.len());
    for &id in &s.location_id {
        h.write_u64(id);
    }
    for l in &s.label {
        for v in [l.key, l.str, l.num, l.num_unit] {
            h.write_i64(v);
        }
    }
    h.finish()
}

struct Func<'a> {
    /// The name as the file has it: what pprof matches `drop_frames` against.
    raw: &'a str,
    /// Normalised (DESIGN "Frame names"); Go names are left as the runtime wrote them.
    name: CompactString,
    file: Option<ArcStr>,
    /// A function without a file in a Node.js profile (one that names node's own `node:`
    /// modules, as @datadog/pprof writes it): V8's builtins (`push`, `join`) and node's C++
    /// bindings, native code of the `node` executable, as the cpuprofile reader reads them.
    node_native: bool,
    /// A function with a file in a Node.js profile: JavaScript, kind `jit` as a
    /// `.cpuprofile`'s functions are.
    node_js: bool,
}

/// `drop_frames`/`keep_frames`, matched on function names simplified as pprof does.
struct Prune {
    drop: regex::Regex,
    keep: Option<regex::Regex>,
    cache: FxHashMap<String, bool>,
}

impl Prune {
    fn drops(&mut self, name: &str) -> bool {
        if let Some(&hit) = self.cache.get(name) {
            return hit;
        }
        let simple = simplify_func(name);
        let hit =
            self.drop.is_match(simple) && !self.keep.as_ref().is_some_and(|k| k.is_match(simple));
        self.cache.insert(name.to_string(), hit);
        hit
    }
}

/// pprof's `simplifyFunc`: drop a leading `.` (PPC ELF v1) and everything from the first `(`
/// that does not start `(anonymous namespace)` or `operator()`.
fn simplify_func(name: &str) -> &str {
    let name = name.strip_prefix('.').unwrap_or(name);
    let mut search = 0;
    while let Some(pos) = name[search..].find(['(', 'o']) {
        let at = search + pos;
        let rest = &name[at..];
        if rest.starts_with("(anonymous namespace)") {
            search = at + "(anonymous namespace)".len();
        } else if rest.starts_with("operator()") {
            search = at + "operator()".len();
        } else if rest.starts_with('(') {
            return &name[..at];
        } else {
            search = at + 1;
        }
    }
    name
}

/// pprof's `Prune` on one sample (locations leaf first): from the root, after the first
/// location not touched by `drop_frames`, the first dropped location cuts the stack there
/// (itself included), and the first partially dropped one cuts below it.
fn prune_sample(locs: &[Loc]) -> &[Loc] {
    let mut found_user = false;
    for i in (0..locs.len()).rev() {
        let loc = locs[i];
        if !loc.prune && !loc.prune_beneath {
            found_user = true;
            continue;
        }
        if !found_user {
            continue;
        }
        if loc.prune {
            return &locs[i + 1..];
        }
        return &locs[i..];
    }
    locs
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn recognises_pprof_whatever_its_first_field() {
        // Go's CPU profile starts with time_nanos, its heap profile with period_type
        assert!(looks_like_pprof(&[
            0x48, 0xb6, 0xb0, 0xed, 0x82, 0xeb, 0xc0, 0xa6, 0xf6, 0x18, 0x0a, 0x04, 0x08, 0x01
        ]));
        assert!(looks_like_pprof(&[
            0x5a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x60, 0x80
        ]));
        assert!(looks_like_pprof(&[0x0a, 0x04, 0x08, 0x01, 0x10, 0x02]));
        assert!(!looks_like_pprof(b"main;foo 3\n"));
        assert!(!looks_like_pprof(b"\nmain;foo 3\n"));
        assert!(!looks_like_pprof(&[0x00, 0x01, 0x02]));
        assert!(!looks_like_pprof(&[0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01]));
    }

    #[test]
    fn simplifies_function_names_like_pprof() {
        assert_eq!(simplify_func("net/http.(*conn).serve"), "net/http.");
        assert_eq!(simplify_func("foo(int)"), "foo");
        assert_eq!(
            simplify_func("(anonymous namespace)::f(int)"),
            "(anonymous namespace)::f"
        );
        assert_eq!(simplify_func("A::operator()(int)"), "A::operator()");
        assert_eq!(simplify_func(".ppc_func"), "ppc_func");
        assert_eq!(simplify_func("plain"), "plain");
    }

    /// Small profiles that are mostly well-formed, with any reference sometimes wrong: ids
    /// and string indices now and then 0, negative or past their tables.
    fn arb_profile() -> impl Strategy<Value = pb::Profile> {
        const STRINGS: [&str; 9] = [
            "",
            "cpu",
            "nanoseconds",
            "thread",
            "main.f",
            "a(b",
            "main\\..*",
            "t1",
            "[",
        ];
        let idx = || prop_oneof![9 => 0i64..9, 1 => -2i64..12];
        let id = || prop_oneof![9 => 1u64..5, 1 => 0u64..7];
        let value_type = (idx(), idx()).prop_map(|(t, u)| pb::ValueType { r#type: t, unit: u });
        let line = (id(), -1i64..3).prop_map(|(f, l)| pb::Line {
            function_id: f,
            line: l,
        });
        let location = (
            id(),
            prop_oneof![3 => Just(0u64), 1 => id()],
            prop::collection::vec(line, 0..3),
        )
            .prop_map(|(i, m, l)| pb::Location {
                id: i,
                mapping_id: m,
                line: l,
                ..Default::default()
            });
        let function = (id(), idx(), idx(), idx()).prop_map(|(i, n, s, f)| pb::Function {
            id: i,
            name: n,
            system_name: s,
            filename: f,
            start_line: 0,
        });
        let mapping = (id(), idx(), idx()).prop_map(|(i, f, b)| pb::Mapping {
            id: i,
            filename: f,
            build_id: b,
            ..Default::default()
        });
        let label = (idx(), idx(), -3i64..3).prop_map(|(k, s, n)| pb::Label {
            key: k,
            str: s,
            num: n,
            num_unit: 0,
        });
        let values = prop_oneof![
            9 => prop::collection::vec(0i64..100, 2..=2),
            1 => prop::collection::vec(-1i64..100, 0..4),
        ];
        let sample = (
            prop::collection::vec(id(), 0..5),
            values,
            prop::collection::vec(label, 0..2),
        )
            .prop_map(|(l, v, lb)| pb::Sample {
                location_id: l,
                value: v,
                label: lb,
            });
        let strings = prop_oneof![
            9 => Just(STRINGS.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
            1 => prop::collection::vec(prop::sample::select(STRINGS.to_vec()), 0..9)
                .prop_map(|v| v.into_iter().map(String::from).collect()),
        ];
        let rare_idx = || prop_oneof![6 => Just(0i64), 1 => idx()];
        // ids are 1..=n in order, and now and then one is replaced by an arbitrary one
        let renumber = |n: usize, broken: Option<(usize, u64)>| -> Vec<u64> {
            let mut ids: Vec<u64> = (1..=n as u64).collect();
            if let Some((i, id)) = broken {
                ids[i % n] = id;
            }
            ids
        };
        let broken = || prop::option::weighted(0.1, (0usize..4, 0u64..7));
        (
            prop::collection::vec(value_type, 2..=2),
            prop::collection::vec(sample, 1..5),
            prop::collection::vec(mapping, 1..=1),
            prop::collection::vec(location, 4..=4),
            prop::collection::vec(function, 4..=4),
            strings,
            (rare_idx(), rare_idx(), rare_idx()),
            (broken(), broken(), broken()),
        )
            .prop_map(
                move |(st, sa, mut ma, mut lo, mut fu, strings, (drop, keep, def), bad)| {
                    let ids = renumber(ma.len(), bad.0);
                    ma.iter_mut().zip(ids).for_each(|(m, id)| m.id = id);
                    let ids = renumber(lo.len(), bad.1);
                    lo.iter_mut().zip(ids).for_each(|(l, id)| l.id = id);
                    let ids = renumber(fu.len(), bad.2);
                    fu.iter_mut().zip(ids).for_each(|(f, id)| f.id = id);
                    pb::Profile {
                        sample_type: st,
                        sample: sa,
                        mapping: ma,
                        location: lo,
                        function: fu,
                        string_table: strings,
                        drop_frames: drop,
                        keep_frames: keep,
                        default_sample_type: def,
                        ..Default::default()
                    }
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Whatever the references, reading returns a valid profile or an error; never a
        /// panic.
        #[test]
        fn arbitrary_references_never_panic(p in arb_profile()) {
            let path = Path::new("arb.pb");
            if let Ok((profile, decoded)) = decode(path, &p.encode_to_vec(), true, None) {
                prop_assert!(profile.validate().is_ok());
                // samples of the same locations and labels are merged (issue 23): one stack
                // per kept sample, never more kept samples than the input has
                prop_assert_eq!(decoded.sample_stacks.len(), decoded.proto.sample.len());
                prop_assert!(decoded.proto.sample.len() <= p.sample.len());
            }
        }

        /// Arbitrary bytes are an error or a profile, never a panic.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            let _ = decode(Path::new("arb.pb"), &bytes, true, None);
        }

        /// The fast sample decode takes every sample a writer makes and gives what prost
        /// gives: ids and values of any size (negative values are ten-byte varints), labels.
        #[test]
        fn the_sample_decode_takes_real_samples_as_prost_does(
            location_id in prop::collection::vec(any::<u64>(), 0..40),
            value in prop::collection::vec(any::<i64>(), 0..4),
            label in prop::collection::vec((any::<i64>(), any::<i64>(), any::<i64>()), 0..3),
        ) {
            let label = label
                .into_iter()
                .map(|(key, str, num)| pb::Label { key, str, num, num_unit: 0 })
                .collect();
            let sample = pb::Sample { location_id, value, label };
            let mut fast = pb::Sample { location_id: vec![7], ..Default::default() };
            prop_assert!(decode_sample(&sample.encode_to_vec(), &mut fast));
            prop_assert_eq!(fast, sample);
        }

        /// On any bytes, the fast sample decode either declines or gives what prost gives.
        #[test]
        fn the_sample_decode_declines_or_agrees_with_prost(
            bytes in prop::collection::vec(any::<u8>(), 0..64),
        ) {
            let mut fast = pb::Sample::default();
            if decode_sample(&bytes, &mut fast) {
                prop_assert_eq!(pb::Sample::decode(&bytes[..]).ok(), Some(fast));
            }
        }
    }

    proptest! {
        /// The table decodes take every location and function a writer makes, as prost.
        #[test]
        fn the_table_decodes_take_real_entries_as_prost_does(
            ids in (any::<u64>(), any::<u64>(), any::<u64>(), any::<bool>()),
            lines in prop::collection::vec((any::<u64>(), any::<i64>()), 0..4),
            function in (any::<u64>(), any::<i64>(), any::<i64>(), any::<i64>(), any::<i64>()),
        ) {
            let line = lines
                .into_iter()
                .map(|(function_id, line)| pb::Line { function_id, line })
                .collect();
            let (id, mapping_id, address, is_folded) = ids;
            let location = pb::Location { id, mapping_id, address, line, is_folded };
            prop_assert_eq!(decode_location(&location.encode_to_vec()), Some(location));
            let (id, name, system_name, filename, start_line) = function;
            let function = pb::Function { id, name, system_name, filename, start_line };
            prop_assert_eq!(decode_function(&function.encode_to_vec()), Some(function));
        }

        /// On any bytes, the table decodes decline or give what prost gives.
        #[test]
        fn the_table_decodes_decline_or_agree_with_prost(
            bytes in prop::collection::vec(any::<u8>(), 0..48),
        ) {
            if let Some(location) = decode_location(&bytes) {
                prop_assert_eq!(pb::Location::decode(&bytes[..]).ok(), Some(location));
            }
            if let Some(function) = decode_function(&bytes) {
                prop_assert_eq!(pb::Function::decode(&bytes[..]).ok(), Some(function));
            }
        }
    }

    #[test]
    fn the_sample_decode_takes_unpacked_fields_and_declines_the_rest() {
        // location_id 3 and 4 one by one, value 5, as a writer without packing writes them
        let unpacked = [0x08, 3, 0x08, 4, 0x10, 5];
        let mut s = pb::Sample::default();
        assert!(decode_sample(&unpacked, &mut s));
        assert_eq!((s.location_id, s.value), (vec![3, 4], vec![5]));
        // field 4 (unknown to Sample), a fixed64 location id, an eleven-byte varint
        let eleven_bytes = [
            0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ];
        for other in [
            &[0x20, 1][..],
            &[0x09, 0, 0, 0, 0, 0, 0, 0, 0],
            &eleven_bytes,
        ] {
            assert!(!decode_sample(other, &mut pb::Sample::default()));
        }
    }

    fn loc(prune: bool, beneath: bool) -> Loc {
        Loc {
            start: 0,
            end: 0,
            prune,
            prune_beneath: beneath,
        }
    }

    #[test]
    fn prunes_samples_like_pprof() {
        // leaf first: [malloc (dropped), helper (partially dropped), main (user)]
        let s = [loc(true, true), loc(false, true), loc(false, false)];
        assert_eq!(prune_sample(&s).len(), 2);
        let s = [loc(false, false), loc(true, true), loc(false, false)];
        assert_eq!(prune_sample(&s).len(), 1);
        // a dropped root is kept: nothing user-like above it
        let s = [loc(false, false), loc(true, true)];
        assert_eq!(prune_sample(&s).len(), 2);
    }
}

//! pprof output: a profile (any input) as a gzipped pprof `Profile` whose samples carry the
//! string labels `owner`, `self_owner` and `category`, so `go tool pprof -tagfocus
//! owner=user`, Pyroscope and other pprof tools can slice by owner.
//!
//! A pprof input keeps every field of its own (addresses, mappings, numeric labels such as
//! Go's `bytes`, comments) and only gains the labels ([`add_owner_labels`]); other inputs are
//! written from the model ([`write_profile_gz`]), one location per distinct frame.

use crate::classify::RuleSet;
use crate::input::pprof::StringTable;
use crate::model::{FrameId, FrameKind, Profile, StackId};
use crate::pprof_wire as pb;
use flate2::Compression;
use flate2::write::GzEncoder;
use hashbrown::HashTable;
use prost::Message;
use rustc_hash::{FxBuildHasher, FxHashMap};
use std::hash::BuildHasher;
use std::io::Write;

/// Label keys the writer sets on every sample.
pub const OWNER_LABEL: &str = "owner";
pub const SELF_OWNER_LABEL: &str = "self_owner";
pub const CATEGORY_LABEL: &str = "category";

pub use crate::aggregate::StackOwners;

/// Owners per `StackId` and the rules that name them.
pub struct OwnerLabels<'a> {
    pub rules: &'a RuleSet,
    pub per_stack: Vec<StackOwners>,
}

/// A string table that hands out each string's index once.
#[derive(Default)]
struct Strings {
    /// The index of `table[0]` in the written table.
    first: i64,
    table: Vec<String>,
    index: FxHashMap<String, i64>,
}

impl Strings {
    /// New strings to be appended to a table of `first` entries: the index of `table[i]` is
    /// `first + i`.
    fn after(first: usize) -> Strings {
        Strings {
            first: first as i64,
            ..Strings::default()
        }
    }

    fn get(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.first + self.table.len() as i64;
        self.table.push(s.to_string());
        self.index.insert(s.to_string(), i);
        i
    }
}

/// Label values for one stack, as string-table indices: (owner, self_owner, category).
struct LabelIds {
    keys: [i64; 3],
    per_stack: Vec<[i64; 3]>,
}

impl LabelIds {
    fn new(labels: &OwnerLabels<'_>, strings: &mut Strings) -> LabelIds {
        let keys = [
            strings.get(OWNER_LABEL),
            strings.get(SELF_OWNER_LABEL),
            strings.get(CATEGORY_LABEL),
        ];
        let per_stack = labels
            .per_stack
            .iter()
            .map(|s| {
                let owner = labels.rules.owner(s.owner);
                [
                    strings.get(&owner.name),
                    strings.get(&labels.rules.owner(s.self_owner).name),
                    strings.get(owner.category.as_str()),
                ]
            })
            .collect();
        LabelIds { keys, per_stack }
    }

    fn labels(&self, stack: StackId) -> impl Iterator<Item = pb::Label> + '_ {
        let values = self.per_stack[stack.0 as usize];
        self.keys.iter().zip(values).map(|(&key, str)| pb::Label {
            key,
            str,
            ..Default::default()
        })
    }
}

/// Adds the owner labels to every sample of a decoded pprof input (replacing labels of the
/// same keys, so converting twice does not duplicate them). `sample_stacks[i]` is the
/// stack sample `i` was read into. The input's string table stays as it was read (compact,
/// [`StringTable`]); the labels' strings are appended to it, without an index of the
/// input's strings, so a table of 100 M entries costs no hash map of them.
pub fn add_owner_labels(
    proto: &mut pb::Profile,
    table: &mut StringTable,
    sample_stacks: &[StackId],
    labels: &OwnerLabels,
) {
    let mut strings = Strings::after(table.len());
    let ids = LabelIds::new(labels, &mut strings);
    let ours = |key: i64| {
        usize::try_from(key)
            .ok()
            .and_then(|k| table.get(k))
            .is_some_and(|k| [OWNER_LABEL, SELF_OWNER_LABEL, CATEGORY_LABEL].contains(&k))
    };
    for (sample, &stack) in proto.sample.iter_mut().zip(sample_stacks) {
        sample.label.retain(|l| !ours(l.key));
        sample.label.extend(ids.labels(stack));
    }
    proto.comment.push(strings.get(&comment(labels.rules)));
    for s in &strings.table {
        // the labels add a few hundred bytes at most: past 4 GiB the input was refused
        table.push(s);
    }
}

/// `Profile`'s field numbers (profile.proto).
mod field {
    pub const SAMPLE_TYPE: u32 = 1;
    pub const SAMPLE: u32 = 2;
    pub const MAPPING: u32 = 3;
    pub const LOCATION: u32 = 4;
    pub const FUNCTION: u32 = 5;
    pub const STRING_TABLE: u32 = 6;
    pub const DURATION_NANOS: u32 = 10;
    pub const PERIOD_TYPE: u32 = 11;
    pub const PERIOD: u32 = 12;
    pub const COMMENT: u32 = 13;
    pub const DEFAULT_SAMPLE_TYPE: u32 = 14;
}

/// Writes the model as a gzipped pprof `Profile`: sample types, one mapping per module, one
/// function per (name, file), one location per physical frame and the frames inlined into
/// it, one sample per (stack, thread) row.
///
/// Streamed (issue 23): a message's encoding is the concatenation of its fields and
/// repeated fields keep their order, so each string, mapping, function, location and sample
/// is encoded the moment it is first needed and written out; what stays in memory is the
/// index of each (a string's, a function's, a location's id), not a `pb::Profile` of the
/// whole profile, which for 5 M distinct stacks needed five times `report`'s memory.
pub fn write_profile_gz(
    profile: &Profile,
    labels: &OwnerLabels,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let gz = GzEncoder::new(std::io::BufWriter::new(out), Compression::default());
    // the fields are a few bytes each: handed to the encoder one by one, each write paid
    // deflate's per-call cost (a third of the run's time); buffered, it compresses 64 KiB at a
    // time
    let mut w = Streamed::new(std::io::BufWriter::with_capacity(1 << 16, gz));
    let default = write_sample_types(&mut w, profile)?;
    let frame_lines = write_frame_lines(&mut w, profile)?;
    write_samples(&mut w, profile, labels, &frame_lines)?;
    if let Some((period, t)) = &profile.meta.period {
        let vt = pb::ValueType {
            r#type: w.string(&t.name)?,
            unit: w.string(t.unit.name())?,
        };
        w.message(field::PERIOD_TYPE, &vt)?;
        w.int64(field::PERIOD, *period)?;
    }
    w.int64(
        field::DURATION_NANOS,
        profile.meta.duration_nanos.unwrap_or(0),
    )?;
    let comment = w.string(comment(labels.rules))?;
    w.int64(field::COMMENT, comment)?;
    w.int64(field::DEFAULT_SAMPLE_TYPE, default)?;
    w.out
        .into_inner()
        .map_err(std::io::IntoInnerError::into_error)?
        .finish()?
        .flush()
}

/// The sample types, first as pprof lists them; returns the string id of the default's
/// name, which is written last, as the field's number orders it.
fn write_sample_types<'a, W: Write>(
    w: &mut Streamed<'a, W>,
    profile: &'a Profile,
) -> std::io::Result<i64> {
    for t in profile.sample_types() {
        let vt = pb::ValueType {
            r#type: w.string(&t.name)?,
            unit: w.string(t.unit.name())?,
        };
        w.message(field::SAMPLE_TYPE, &vt)?;
    }
    let default = &profile.sample_types()[profile.default_sample_type].name;
    w.string(default)
}

/// Each frame's mapping, function and line, indexed by frame id: what the locations, made
/// per stack as the samples are written, are built from.
fn write_frame_lines<'a, W: Write>(
    w: &mut Streamed<'a, W>,
    profile: &'a Profile,
) -> std::io::Result<Vec<FrameLine>> {
    // pprof tools take the first mapping for the profile's main binary (`go tool pprof`'s
    // "File:" line): the recorded program's executable, not whichever module (often
    // `[kernel.kallsyms]`) the first frame read was in (issue 28)
    if let Some(main) = crate::classify::ecosystem::native_main_module(profile) {
        w.mapping(main)?;
    }
    let mut functions = Functions::new(profile);
    let mut frame_lines: Vec<FrameLine> = Vec::with_capacity(profile.frame_count());
    for (i, frame) in profile.frames().enumerate() {
        let mapping = match frame.module.as_deref() {
            None => 0,
            Some(m) => w.mapping(m)?,
        };
        let function = functions.id(FrameId(i as u32), w)?;
        frame_lines.push(FrameLine {
            mapping,
            function,
            line: frame.line.map_or(0, u32::from),
        });
    }
    Ok(frame_lines)
}

/// The first count of `profile` that pprof's int64 values cannot hold, as (its sample type's
/// index, the count): a folded or perf input sums into 128 bits, and a count past
/// `i64::MAX` written as pprof would be clamped, a silent wrong number (issue 61).
pub fn count_past_int64(profile: &Profile) -> Option<(usize, u128)> {
    let too_large = |values: &[u128]| {
        (values.iter().position(|&v| v > i64::MAX as u128)).map(|i| (i, values[i]))
    };
    (profile.rows().find_map(|row| too_large(row.values))).or_else(|| {
        profile
            .negative
            .rows()
            .find_map(|row| too_large(row.values))
    })
}

/// One sample per (stack, thread) row, with its stack's locations (written as first
/// needed) and the owner labels; one `pb::Sample` is reused, so a row costs no allocation.
fn write_samples<'a, W: Write>(
    w: &mut Streamed<'a, W>,
    profile: &'a Profile,
    labels: &'a OwnerLabels,
    frame_lines: &[FrameLine],
) -> std::io::Result<()> {
    let keys = [
        w.string(OWNER_LABEL)?,
        w.string(SELF_OWNER_LABEL)?,
        w.string(CATEGORY_LABEL)?,
    ];
    let thread_key = w.string("thread")?;
    let mut locations = Locations::default();
    let mut sample = pb::Sample::default();
    for row in profile.rows() {
        sample.location_id.clear();
        locations.of_stack(profile, row.stack, frame_lines, w, &mut sample.location_id)?;
        sample.value.clear();
        let values = row
            .values
            .iter()
            // refused before writing when one does not fit (`count_past_int64`)
            .map(|&v| i64::try_from(v).unwrap_or(i64::MAX));
        sample.value.extend(values);
        sample.label.clear();
        let s = labels.per_stack[row.stack.0 as usize];
        let owner = labels.rules.owner(s.owner);
        let strs = [
            w.string(&owner.name)?,
            w.string(&labels.rules.owner(s.self_owner).name)?,
            w.string(owner.category.as_str())?,
        ];
        for (key, str) in keys.into_iter().zip(strs) {
            sample.label.push(pb::Label {
                key,
                str,
                ..Default::default()
            });
        }
        if let Some(t) = row.thread {
            let str = w.string(profile.thread_name(t))?;
            sample.label.push(pb::Label {
                key: thread_key,
                str,
                ..Default::default()
            });
        }
        w.message(field::SAMPLE, &sample)?;
    }
    Ok(())
}

/// The stream of a [`write_profile_gz`]: the ids handed out so far, and the output.
struct Streamed<'a, W: Write> {
    out: W,
    /// The index of each string written through [`Streamed::string`] (`""` is 0, written
    /// first); function names are written once per function, unindexed.
    strings: FxHashMap<std::borrow::Cow<'a, str>, i64>,
    /// Entries in the written string table.
    string_count: i64,
    mappings: FxHashMap<&'a str, u32>,
    /// One field's encoding, reused.
    buf: Vec<u8>,
}

impl<'a, W: Write> Streamed<'a, W> {
    fn new(out: W) -> Streamed<'a, W> {
        let mut w = Streamed {
            out,
            strings: FxHashMap::default(),
            string_count: 0,
            mappings: FxHashMap::default(),
            buf: Vec::new(),
        };
        w.strings.insert("".into(), 0);
        w
    }

    /// The index of `s`, written to the string table when it is new.
    fn string(&mut self, s: impl Into<std::borrow::Cow<'a, str>>) -> std::io::Result<i64> {
        let s = s.into();
        if let Some(&i) = self.strings.get(&s) {
            return Ok(i);
        }
        let i = self.unindexed_string(&s)?;
        self.strings.insert(s, i);
        Ok(i)
    }

    /// Writes `s` as a new string-table entry and returns its index. A string written this
    /// way may repeat one in the table, which pprof readers allow; it is for function names,
    /// which [`Functions`] already makes distinct, so 5 M of them cost no map (issue 23).
    fn unindexed_string(&mut self, s: &str) -> std::io::Result<i64> {
        if self.string_count == 0 {
            // the table's first entry, "", precedes every other
            self.bytes(field::STRING_TABLE, b"")?;
            self.string_count = 1;
        }
        if s.is_empty() {
            return Ok(0);
        }
        let i = self.string_count;
        self.bytes(field::STRING_TABLE, s.as_bytes())?;
        self.string_count += 1;
        Ok(i)
    }

    fn mapping(&mut self, module: &'a str) -> std::io::Result<u32> {
        if let Some(&id) = self.mappings.get(module) {
            return Ok(id);
        }
        let id = self.mappings.len() as u32 + 1;
        let m = pb::Mapping {
            id: u64::from(id),
            filename: self.string(module)?,
            has_functions: true,
            has_inline_frames: true,
            ..Default::default()
        };
        self.message(field::MAPPING, &m)?;
        self.mappings.insert(module, id);
        Ok(id)
    }

    fn message(&mut self, tag: u32, m: &impl Message) -> std::io::Result<()> {
        self.buf.clear();
        prost::encoding::message::encode(tag, m, &mut self.buf);
        self.out.write_all(&self.buf)
    }

    fn bytes(&mut self, tag: u32, b: &[u8]) -> std::io::Result<()> {
        self.buf.clear();
        prost::encoding::encode_key(
            tag,
            prost::encoding::WireType::LengthDelimited,
            &mut self.buf,
        );
        prost::encoding::encode_varint(b.len() as u64, &mut self.buf);
        self.out.write_all(&self.buf)?;
        self.out.write_all(b)
    }

    fn int64(&mut self, tag: u32, v: i64) -> std::io::Result<()> {
        self.buf.clear();
        prost::encoding::int64::encode(tag, &v, &mut self.buf);
        self.out.write_all(&self.buf)
    }
}

/// A frame's mapping id and `Line`, twelve bytes a frame where a `(u64, pb::Line)` took 24.
struct FrameLine {
    mapping: u32,
    function: u32,
    line: u32,
}

impl FrameLine {
    fn line(&self) -> pb::Line {
        pb::Line {
            function_id: u64::from(self.function),
            line: i64::from(self.line),
        }
    }
}

/// The writer's functions, one per (name, file), each found through the first frame that
/// named it: a `u32` in a hash table and a `FrameId` a function, where a map keyed by the
/// two strings cost 41 bytes a slot (for 5 M distinct frames one 344 MB table, issue 23).
struct Functions<'a> {
    profile: &'a Profile,
    /// The frame that first named function `id`, at `id - 1`.
    first_frame: Vec<FrameId>,
    index: HashTable<u32>,
}

impl<'a> Functions<'a> {
    fn new(profile: &'a Profile) -> Functions<'a> {
        Functions {
            profile,
            first_frame: Vec::new(),
            index: HashTable::new(),
        }
    }

    fn key(&self, frame: FrameId) -> (&'a str, Option<&'a str>) {
        let f = self.profile.frame(frame);
        (&f.name, f.file.as_deref())
    }

    /// The id of `frame`'s function, written (with its name) when it is new.
    fn id<W: Write>(&mut self, frame: FrameId, w: &mut Streamed<'a, W>) -> std::io::Result<u32> {
        let key = self.key(frame);
        let hash = FxBuildHasher.hash_one(key);
        let known = self.index.find(hash, |&id| {
            self.key(self.first_frame[id as usize - 1]) == key
        });
        if let Some(&id) = known {
            return Ok(id);
        }
        let id = u32::try_from(self.first_frame.len() + 1).expect("fewer functions than frames");
        let (name, file) = key;
        let name = w.unindexed_string(name)?;
        let f = pb::Function {
            id: u64::from(id),
            name,
            system_name: name,
            filename: match file {
                Some(f) => w.string(f)?,
                None => 0,
            },
            start_line: 0,
        };
        w.message(field::FUNCTION, &f)?;
        self.first_frame.push(frame);
        let (profile, first_frame) = (self.profile, &self.first_frame);
        self.index.insert_unique(hash, id, |&id| {
            let f = profile.frame(first_frame[id as usize - 1]);
            FxBuildHasher.hash_one((&*f.name, f.file.as_deref()))
        });
        Ok(id)
    }
}

/// The writer's locations: a run of inlined frames and the physical frame they were inlined
/// into is one location with several lines (innermost first), as pprof writes inlining, so
/// reading the file back gives the same frames and kinds. A physical frame alone, the usual
/// case, is found by its frame id (four bytes a frame); only inline runs are hashed.
#[derive(Default)]
struct Locations {
    by_frame: Vec<u64>,
    runs: FxHashMap<Box<[FrameId]>, u64>,
    count: u64,
}

impl Locations {
    /// Appends the location ids of `stack` to `out`, writing the new locations.
    fn of_stack<W: Write>(
        &mut self,
        profile: &Profile,
        stack: StackId,
        frame_lines: &[FrameLine],
        w: &mut Streamed<'_, W>,
        out: &mut Vec<u64>,
    ) -> std::io::Result<()> {
        let frames = profile.stack(stack);
        let mut start = 0;
        for (i, &f) in frames.iter().enumerate() {
            let last = i + 1 == frames.len();
            if profile.frame(f).kind == FrameKind::Inlined && !last {
                continue;
            }
            out.push(self.id(&frames[start..=i], frame_lines, w)?);
            start = i + 1;
        }
        Ok(())
    }

    fn id<W: Write>(
        &mut self,
        group: &[FrameId],
        frame_lines: &[FrameLine],
        w: &mut Streamed<'_, W>,
    ) -> std::io::Result<u64> {
        let known = match group {
            [one] => self
                .by_frame
                .get(one.0 as usize)
                .copied()
                .filter(|&id| id != 0),
            _ => self.runs.get(group).copied(),
        };
        if let Some(id) = known {
            return Ok(id);
        }
        self.count += 1;
        let id = self.count;
        let physical = group[group.len() - 1];
        let location = pb::Location {
            id,
            mapping_id: u64::from(frame_lines[physical.0 as usize].mapping),
            line: group
                .iter()
                .map(|f| frame_lines[f.0 as usize].line())
                .collect(),
            ..Default::default()
        };
        w.message(field::LOCATION, &location)?;
        match group {
            [one] => {
                let i = one.0 as usize;
                if self.by_frame.len() <= i {
                    self.by_frame.resize(i + 1, 0);
                }
                self.by_frame[i] = id;
            }
            _ => {
                self.runs.insert(group.into(), id);
            }
        }
        Ok(id)
    }
}

fn comment(rules: &RuleSet) -> String {
    let presets = if rules.presets.is_empty() {
        "none".to_string()
    } else {
        rules.presets.join(", ")
    };
    format!(
        "whose convert: sample labels {OWNER_LABEL}, {SELF_OWNER_LABEL}, {CATEGORY_LABEL} \
         (presets: {presets})"
    )
}

/// Writes a decoded input back gzip-compressed: `proto` (whose own string table is empty)
/// and then `table`'s strings as `string_table` fields, in order. A message's encoding is the
/// concatenation of its fields, and repeated fields keep the order they come in, so this is
/// the encoding of `proto` with `table` as its string table, without building a `String` per
/// entry.
pub fn write_decoded_gz(
    proto: &pb::Profile,
    table: &StringTable,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    debug_assert!(proto.string_table.is_empty());
    let mut gz = GzEncoder::new(std::io::BufWriter::new(out), Compression::default());
    gz.write_all(&proto.encode_to_vec())?;
    let mut head = Vec::with_capacity(11);
    for s in table.iter() {
        head.clear();
        prost::encoding::encode_key(
            STRING_TABLE_FIELD,
            prost::encoding::WireType::LengthDelimited,
            &mut head,
        );
        prost::encoding::encode_varint(s.len() as u64, &mut head);
        gz.write_all(&head)?;
        gz.write_all(s.as_bytes())?;
    }
    gz.finish()?.flush()?;
    Ok(())
}

/// `Profile.string_table`'s field number.
const STRING_TABLE_FIELD: u32 = field::STRING_TABLE;

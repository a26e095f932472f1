//! pprof output: a profile (any input) as a gzipped pprof `Profile` whose samples carry the
//! string labels `owner`, `self_owner` and `category`, so `go tool pprof -tagfocus
//! owner=user`, Pyroscope and other pprof tools can slice by owner.
//!
//! A pprof input keeps every field of its own (addresses, mappings, numeric labels such as
//! Go's `bytes`, comments) and only gains the labels ([`add_owner_labels`]); other inputs are
//! written from the model ([`from_profile`]), one location per distinct frame.

use crate::classify::RuleSet;
use crate::input::pprof::StringTable;
use crate::model::{FrameId, FrameKind, Profile, StackId};
use crate::pprof_wire as pb;
use flate2::Compression;
use flate2::write::GzEncoder;
use prost::Message;
use rustc_hash::FxHashMap;
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
    fn new() -> Strings {
        let mut strings = Strings::default();
        strings.get("");
        strings
    }

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

/// A pprof `Profile` of the model: sample types, one mapping per module, one function per
/// (name, file), one location per physical frame and the frames inlined into it, one sample
/// per (stack, thread) row.
pub fn from_profile(profile: &Profile, labels: &OwnerLabels) -> pb::Profile {
    let mut strings = Strings::new();
    let mut out = pb::Profile {
        sample_type: profile
            .sample_types()
            .iter()
            .map(|t| pb::ValueType {
                r#type: strings.get(&t.name),
                unit: strings.get(t.unit.name()),
            })
            .collect(),
        ..Default::default()
    };
    out.default_sample_type =
        strings.get(&profile.sample_types()[profile.default_sample_type].name);
    let mut mappings: FxHashMap<&str, u64> = FxHashMap::default();
    let mut functions: FxHashMap<(&str, Option<&str>), u64> = FxHashMap::default();
    // each frame's mapping and line; locations are made per stack below
    let mut frame_lines: Vec<(u64, pb::Line)> = Vec::with_capacity(profile.frame_count());
    // pprof tools take the first mapping for the profile's main binary (`go tool pprof`'s
    // "File:" line): the recorded program's executable, not whichever module (often
    // `[kernel.kallsyms]`) the first frame read was in (issue 28)
    if let Some(main) = crate::classify::native_module::main_module(profile) {
        mappings.insert(main, 1);
        out.mapping.push(pb::Mapping {
            id: 1,
            filename: strings.get(main),
            has_functions: true,
            has_inline_frames: true,
            ..Default::default()
        });
    }
    for frame in profile.frames() {
        let mapping_id = match frame.module.as_deref() {
            None => 0,
            Some(m) => {
                let next = mappings.len() as u64 + 1;
                *mappings.entry(m).or_insert_with(|| {
                    out.mapping.push(pb::Mapping {
                        id: next,
                        filename: strings.get(m),
                        has_functions: true,
                        has_inline_frames: true,
                        ..Default::default()
                    });
                    next
                })
            }
        };
        let next = functions.len() as u64 + 1;
        let function_id = *functions
            .entry((&frame.name, frame.file.as_deref()))
            .or_insert_with(|| {
                let name = strings.get(&frame.name);
                out.function.push(pb::Function {
                    id: next,
                    name,
                    system_name: name,
                    filename: frame.file.as_deref().map_or(0, |f| strings.get(f)),
                    start_line: 0,
                });
                next
            });
        let line = pb::Line {
            function_id,
            line: frame.line.map_or(0, i64::from),
        };
        frame_lines.push((mapping_id, line));
    }
    let ids = LabelIds::new(labels, &mut strings);
    let thread_key = strings.get("thread");
    let mut locations = Locations::default();
    let mut stack_locations: Vec<Option<Vec<u64>>> = vec![None; profile.stack_count()];
    for row in profile.rows() {
        let mut label: Vec<pb::Label> = ids.labels(row.stack).collect();
        if let Some(t) = row.thread {
            label.push(pb::Label {
                key: thread_key,
                str: strings.get(profile.thread_name(t)),
                ..Default::default()
            });
        }
        let location_id = stack_locations[row.stack.0 as usize]
            .get_or_insert_with(|| locations.of_stack(profile, row.stack, &frame_lines))
            .clone();
        out.sample.push(pb::Sample {
            location_id,
            value: row
                .values
                .iter()
                .map(|&v| i64::try_from(v).unwrap_or(i64::MAX))
                .collect(),
            label,
        });
    }
    out.location = locations.list;
    if let Some((period, t)) = &profile.meta.period {
        out.period = *period;
        out.period_type = Some(pb::ValueType {
            r#type: strings.get(&t.name),
            unit: strings.get(t.unit.name()),
        });
    }
    out.duration_nanos = profile.meta.duration_nanos.unwrap_or(0);
    out.comment.push(strings.get(&comment(labels.rules)));
    out.string_table = strings.table;
    out
}

/// The writer's locations: a run of inlined frames and the physical frame they were inlined
/// into is one location with several lines (innermost first), as pprof writes inlining, so
/// reading the file back gives the same frames and kinds.
#[derive(Default)]
struct Locations {
    ids: FxHashMap<Box<[FrameId]>, u64>,
    list: Vec<pb::Location>,
}

impl Locations {
    fn of_stack(
        &mut self,
        profile: &Profile,
        stack: StackId,
        frame_lines: &[(u64, pb::Line)],
    ) -> Vec<u64> {
        let frames = profile.stack(stack);
        let mut out = Vec::new();
        let mut start = 0;
        for (i, &f) in frames.iter().enumerate() {
            let last = i + 1 == frames.len();
            if profile.frame(f).kind == FrameKind::Inlined && !last {
                continue;
            }
            out.push(self.id(&frames[start..=i], frame_lines));
            start = i + 1;
        }
        out
    }

    fn id(&mut self, group: &[FrameId], frame_lines: &[(u64, pb::Line)]) -> u64 {
        if let Some(&id) = self.ids.get(group) {
            return id;
        }
        let id = self.list.len() as u64 + 1;
        let physical = group[group.len() - 1];
        self.list.push(pb::Location {
            id,
            mapping_id: frame_lines[physical.0 as usize].0,
            line: group.iter().map(|f| frame_lines[f.0 as usize].1).collect(),
            ..Default::default()
        });
        self.ids.insert(group.into(), id);
        id
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

/// Writes the profile gzip-compressed, as pprof files are on disk.
pub fn write_gz(proto: &pb::Profile, out: &mut dyn Write) -> std::io::Result<()> {
    let mut gz = GzEncoder::new(out, Compression::default());
    gz.write_all(&proto.encode_to_vec())?;
    gz.finish()?;
    Ok(())
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
const STRING_TABLE_FIELD: u32 = 6;

//! pprof output: a profile (any input) as a gzipped pprof `Profile` whose samples carry the
//! string labels `owner`, `self_owner` and `category`, so `go tool pprof -tagfocus
//! owner=user`, Pyroscope and other pprof tools can slice by owner.
//!
//! A pprof input keeps every field of its own (addresses, mappings, numeric labels such as
//! Go's `bytes`, comments) and only gains the labels ([`add_owner_labels`]); other inputs are
//! written from the model ([`from_profile`]), one location per distinct frame.

use crate::classify::{OwnerId, RuleSet};
use crate::input::pprof_proto as pb;
use crate::model::{FrameId, Profile, StackId};
use flate2::Compression;
use flate2::write::GzEncoder;
use prost::Message;
use rustc_hash::FxHashMap;
use std::io::Write;

/// Label keys the writer sets on every sample.
pub const OWNER_LABEL: &str = "owner";
pub const SELF_OWNER_LABEL: &str = "self_owner";
pub const CATEGORY_LABEL: &str = "category";

/// The owners of one stack in the self and owner views.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackOwners {
    pub self_owner: OwnerId,
    pub owner: OwnerId,
}

/// Owners per `StackId` and the rules that name them.
pub struct OwnerLabels<'a> {
    pub rules: &'a RuleSet,
    pub per_stack: Vec<StackOwners>,
}

/// A string table that hands out each string's index once.
#[derive(Default)]
struct Strings {
    table: Vec<String>,
    index: FxHashMap<String, i64>,
}

impl Strings {
    fn new() -> Strings {
        Strings::from_table(vec![String::new()])
    }

    fn from_table(table: Vec<String>) -> Strings {
        let mut index = FxHashMap::default();
        for (i, s) in table.iter().enumerate() {
            index.entry(s.clone()).or_insert(i as i64);
        }
        Strings { table, index }
    }

    fn get(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.table.len() as i64;
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
/// stack sample `i` was read into.
pub fn add_owner_labels(proto: &mut pb::Profile, sample_stacks: &[StackId], labels: &OwnerLabels) {
    let mut strings = Strings::from_table(std::mem::take(&mut proto.string_table));
    let ids = LabelIds::new(labels, &mut strings);
    for (sample, &stack) in proto.sample.iter_mut().zip(sample_stacks) {
        sample.label.retain(|l| !ids.keys.contains(&l.key));
        sample.label.extend(ids.labels(stack));
    }
    proto.comment.push(strings.get(&comment(labels.rules)));
    proto.string_table = strings.table;
}

/// A pprof `Profile` of the model: sample types, one mapping per module, one function per
/// (name, file), one location per distinct frame, one sample per (stack, thread) row.
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
    for (i, frame) in profile.frames().enumerate() {
        let mapping_id = match frame.module.as_deref() {
            None => 0,
            Some(m) => {
                let next = mappings.len() as u64 + 1;
                *mappings.entry(m).or_insert_with(|| {
                    out.mapping.push(pb::Mapping {
                        id: next,
                        filename: strings.get(m),
                        has_functions: true,
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
        out.location.push(pb::Location {
            id: location_id(FrameId(i as u32)),
            mapping_id,
            line: vec![pb::Line {
                function_id,
                line: frame.line.map_or(0, i64::from),
            }],
            ..Default::default()
        });
    }
    let ids = LabelIds::new(labels, &mut strings);
    let thread_key = strings.get("thread");
    for row in profile.rows() {
        let mut label: Vec<pb::Label> = ids.labels(row.stack).collect();
        if let Some(t) = row.thread {
            label.push(pb::Label {
                key: thread_key,
                str: strings.get(profile.thread_name(t)),
                ..Default::default()
            });
        }
        out.sample.push(pb::Sample {
            location_id: profile
                .stack(row.stack)
                .iter()
                .map(|&f| location_id(f))
                .collect(),
            value: row
                .values
                .iter()
                .map(|&v| i64::try_from(v).unwrap_or(i64::MAX))
                .collect(),
            label,
        });
    }
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

/// Location ids start at 1: frame 0 is location 1.
fn location_id(frame: FrameId) -> u64 {
    u64::from(frame.0) + 1
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

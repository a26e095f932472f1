//! The `Builder`: a decoded pprof's tables and samples turned into the model, location by
//! location and sample by sample.

use super::prune::{Loc, Prune, prune_sample};
use super::wire::*;
use super::*;

pub(super) struct Builder<'a> {
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
    pub(super) fn new(
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
    pub(super) fn build(
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
        let mut kept = KeptSamples::default();
        let mut scratch = SampleScratch {
            values: vec![0; n_types],
            negative: vec![0; n_types],
            ..SampleScratch::default()
        };
        let mut tally = SampleTally::default();
        let mut thread_cache: FxHashMap<i64, ThreadId> = FxHashMap::default();
        let mut s = pb::Sample::default();
        let mut i = 0usize;
        let path = self.path.clone();
        for field in Fields::new(&path, bytes) {
            let field = field?;
            if field.number != SAMPLE_FIELD {
                continue;
            }
            self.at.set(Some(field.at));
            self.decode_sample(i, &bytes[field.value..field.end], &mut s)?;
            let has_negative = scratch.split_values(&s.value);
            if s.location_id.is_empty() {
                tally.stackless += 1;
            }
            let stack = self.sample_stack(i, &s, pruning, &mut scratch)?;
            let thread = self.thread(i, &s, &mut thread_cache)?;
            for l in &s.label {
                if l.str == 0 && !tally.numeric_keys.contains(&l.key) {
                    tally.numeric_keys.push(l.key);
                }
            }
            self.profile.add_sample(stack, thread, &scratch.values);
            if has_negative {
                tally.negative_samples += 1;
                self.profile.negative.add(stack, thread, &scratch.negative);
            }
            if keep {
                kept.add(&s, stack);
            }
            i += 1;
        }
        self.note_tally(tally);
        Ok((kept.stacks, kept.samples))
    }

    /// Sample `i`'s `message` into `s`: by hand when it can, else by prost (which decides
    /// what the fast path does not take, and words any error); its values must be one per
    /// sample type.
    fn decode_sample(&self, i: usize, message: &[u8], s: &mut pb::Sample) -> Result<()> {
        if !decode_sample(message, s) {
            s.clear();
            s.merge(message).map_err(|e| {
                self.error(format!(
                    "sample {i} is not a valid pprof Sample message: {e}"
                ))
            })?;
        }
        let n_types = self.proto.sample_type.len();
        if s.value.len() != n_types {
            return Err(self.error(format!(
                "sample {i} has {} value(s) but the profile declares {n_types} sample \
                 type(s) ({})",
                s.value.len(),
                self.type_names()
            )));
        }
        Ok(())
    }

    /// The stack of sample `i`: its locations' frames, leaf first, pruned by `drop_frames`
    /// when `pruning`.
    fn sample_stack(
        &mut self,
        i: usize,
        s: &pb::Sample,
        pruning: bool,
        scratch: &mut SampleScratch,
    ) -> Result<StackId> {
        scratch.locs.clear();
        for &id in &s.location_id {
            scratch.locs.push(self.location(i, id)?);
        }
        let kept = if pruning {
            prune_sample(&scratch.locs)
        } else {
            &scratch.locs[..]
        };
        scratch.frames.clear();
        for loc in kept {
            scratch
                .frames
                .extend_from_slice(&self.loc_frames[loc.start as usize..loc.end as usize]);
        }
        Ok(self.profile.intern_stack(&scratch.frames))
    }

    /// The notes of what the samples had that the model does not weigh.
    fn note_tally(&mut self, tally: SampleTally) {
        if tally.stackless > 0 {
            self.profile
                .meta
                .notes
                .push(Notice::StacklessSamples(tally.stackless));
        }
        if tally.negative_samples > 0 {
            self.profile
                .meta
                .notes
                .push(Notice::NegativeSamples(tally.negative_samples));
        }
        if !tally.numeric_keys.is_empty() {
            let keys: Vec<String> = tally
                .numeric_keys
                .iter()
                .map(|&k| self.strings.get(k as usize).unwrap_or_default().to_string())
                .collect();
            self.profile.meta.notes.push(Notice::NumericLabels(keys));
        }
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

/// Buffers [`Builder::samples`] reuses from sample to sample.
#[derive(Default)]
pub(super) struct SampleScratch {
    /// The sample's values, negative ones as 0.
    values: Vec<u128>,
    /// The magnitudes of its negative values (a delta profile), 0 for the rest.
    negative: Vec<u128>,
    locs: Vec<Loc>,
    frames: Vec<FrameId>,
}

impl SampleScratch {
    /// Splits `value` into [`Self::values`] and [`Self::negative`]; whether any was negative.
    fn split_values(&mut self, value: &[i64]) -> bool {
        let mut has_negative = false;
        for ((slot, neg), &v) in self.values.iter_mut().zip(&mut self.negative).zip(value) {
            (*slot, *neg) = if v < 0 {
                has_negative = true;
                (0, u128::from(v.unsigned_abs()))
            } else {
                (v as u128, 0)
            };
        }
        has_negative
    }
}

/// What the samples had that goes to the notes.
#[derive(Default)]
pub(super) struct SampleTally {
    stackless: usize,
    negative_samples: usize,
    /// The keys of numeric labels, in first-seen order.
    numeric_keys: Vec<i64>,
}

/// The samples kept for `convert`, merged by locations and labels, with their stacks.
#[derive(Default)]
pub(super) struct KeptSamples {
    stacks: Vec<StackId>,
    samples: Vec<pb::Sample>,
    /// Index into `samples` by [`sample_key_hash`].
    index: HashTable<u32>,
}

impl KeptSamples {
    /// Adds `s` (of `stack`), or its values to the kept sample of the same locations and
    /// labels.
    fn add(&mut self, s: &pb::Sample, stack: StackId) {
        let hash = sample_key_hash(s);
        let samples = &mut self.samples;
        let same = |&k: &u32| {
            let o = &samples[k as usize];
            o.location_id == s.location_id && o.label == s.label
        };
        if let Some(&k) = self.index.find(hash, same) {
            let o = &mut samples[k as usize];
            for (sum, &v) in o.value.iter_mut().zip(&s.value) {
                *sum = sum.saturating_add(v);
            }
        } else {
            let k = samples.len() as u32;
            self.stacks.push(stack);
            samples.push(s.clone());
            let kept = &*samples;
            self.index
                .insert_unique(hash, k, |&k| sample_key_hash(&kept[k as usize]));
        }
    }
}

/// Location id → its frames: a table indexed by id for the ids writers use (1, 2, 3...: every
/// sample looks up each of its locations, and a hash per lookup was a tenth of the samples'
/// decode), a map for ids past it (addresses, as some writers use).
#[derive(Default)]
pub(super) struct LocationIndex {
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
pub(super) type Mappings = FxHashMap<u64, (Option<ArcStr>, FrameKind)>;

/// A function as frames use it.
/// The hash of what makes two samples one: their locations and labels.
pub(super) fn sample_key_hash(s: &pb::Sample) -> u64 {
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

pub(super) struct Func<'a> {
    /// The name as the file has it: what pprof matches `drop_frames` against.
    raw: &'a str,
    /// Normalised (docs/design.md "Frame names"); Go names are left as the runtime wrote them.
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

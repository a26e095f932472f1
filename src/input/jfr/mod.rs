//! JDK Flight Recorder recordings (`.jfr`, issue 26): the JDK's own profiler
//! (`-XX:StartFlightRecording`, `jcmd PID JFR.start`), JDK 25's CPU-time sampler and
//! async-profiler's `-o jfr`.
//!
//! A recording is a sequence of self-contained chunks ([`chunk`]). Each is read whole (a
//! chunk is what the JVM wrote in one go, 12 MB by default; its metadata and constant pools
//! are at its end, so it cannot be decoded front to back), decoded, folded into the profile
//! and dropped before the next is read: memory holds one chunk plus the profile, whose frames
//! and stacks grow with the distinct ones, never with the events. Each chunk's stack traces,
//! frames and threads are resolved once per constant-pool key, not once per event.
//!
//! Why not the `jfrs` crate (0.2.5, Apache-2.0): it reads JDK 11-21 and async-profiler files,
//! but it allocates whatever an array count in the file claims before reading it (a corrupt
//! file aborts the process), builds a tree of boxed values for every event, and its errors
//! carry no offset. The format is small enough that a reader checking every count against
//! the bytes left is less code than guarding that one.
//!
//! Metrics are event types ([`METRICS`]); only those with events become sample types, and the
//! default is the first CPU one present. Allocation events end their stack with the allocated
//! class as an `alloc-type` frame, as async-profiler's collapsed allocation profiles do.

pub mod chunk;

use super::filter::{FilterTally, SampleFilter, SampleKey, TimeSlice};
use super::options::{Probe, ReadOptions};
use super::source::{DEFAULT_MAX_DECOMPRESSED, Source};
use crate::error::{Error, Position, Result};
use crate::model::{
    Frame, FrameId, FrameKind, Profile, SampleType, StackId, ThreadId, Timeline, Unit,
};
use crate::model::{Notice, UNKNOWN};
use chunk::{Bad, Cursor, HEADER_LEN, Header, Metadata, Pools, Str, Value};
use rustc_hash::FxHashMap;
use std::io::Read;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};

/// A JFR thread as the model keeps it: the interned thread, the OS thread id, the Java name.
type ThreadEntry = (Option<ThreadId>, Option<i32>, Option<Box<str>>);

/// How an event's weight is read.
#[derive(Debug, Clone, Copy)]
enum Weight {
    /// Each event counts one.
    One,
    /// A field's value (bytes), or one when the event type has no such field.
    Field(&'static str),
    /// A tick span field, in nanoseconds.
    Span(&'static str),
}

/// One metric: the sample type it becomes, the event types that feed it and how.
struct Metric {
    name: &'static str,
    unit: Unit,
    events: &'static [(&'static str, Weight)],
    /// Allocation metrics put the allocated class at the leaf.
    allocation: bool,
}

/// The metrics, in the order their sample types appear; the first present is the default
/// (CPU before allocation before wall and locks).
const METRICS: &[Metric] = &[
    Metric {
        name: "cpu-samples",
        unit: Unit::Count,
        events: &[("jdk.ExecutionSample", Weight::One)],
        allocation: false,
    },
    Metric {
        name: "cpu-time",
        unit: Unit::Nanoseconds,
        events: &[("jdk.CPUTimeSample", Weight::Span("samplingPeriod"))],
        allocation: false,
    },
    Metric {
        name: "native-samples",
        unit: Unit::Count,
        events: &[("jdk.NativeMethodSample", Weight::One)],
        allocation: false,
    },
    Metric {
        name: "alloc-bytes",
        unit: Unit::Bytes,
        events: &[
            ("jdk.ObjectAllocationInNewTLAB", Weight::Field("tlabSize")),
            (
                "jdk.ObjectAllocationOutsideTLAB",
                Weight::Field("allocationSize"),
            ),
        ],
        allocation: true,
    },
    Metric {
        name: "alloc-objects",
        unit: Unit::Count,
        events: &[
            ("jdk.ObjectAllocationInNewTLAB", Weight::One),
            ("jdk.ObjectAllocationOutsideTLAB", Weight::One),
        ],
        allocation: true,
    },
    Metric {
        name: "alloc-sample-bytes",
        unit: Unit::Bytes,
        events: &[("jdk.ObjectAllocationSample", Weight::Field("weight"))],
        allocation: true,
    },
    Metric {
        name: "alloc-sample-objects",
        unit: Unit::Count,
        events: &[("jdk.ObjectAllocationSample", Weight::One)],
        allocation: true,
    },
    Metric {
        name: "wall-samples",
        unit: Unit::Count,
        events: &[("profiler.WallClockSample", Weight::Field("samples"))],
        allocation: false,
    },
    Metric {
        name: "park-time",
        unit: Unit::Nanoseconds,
        events: &[("jdk.ThreadPark", Weight::Span("duration"))],
        allocation: false,
    },
    Metric {
        name: "monitor-enter-time",
        unit: Unit::Nanoseconds,
        events: &[("jdk.JavaMonitorEnter", Weight::Span("duration"))],
        allocation: false,
    },
    Metric {
        name: "monitor-wait-time",
        unit: Unit::Nanoseconds,
        events: &[("jdk.JavaMonitorWait", Weight::Span("duration"))],
        allocation: false,
    },
    Metric {
        name: "malloc-bytes",
        unit: Unit::Bytes,
        events: &[("profiler.Malloc", Weight::Field("size"))],
        allocation: false,
    },
    Metric {
        name: "live-bytes",
        unit: Unit::Bytes,
        events: &[("profiler.LiveObject", Weight::Field("allocationSize"))],
        allocation: true,
    },
];

/// A JFR chunk starts with the magic `FLR\0` (a head inside it is a file cut there).
pub fn probe(head: &[u8]) -> Probe {
    Probe::of_magic(head, chunk::MAGIC)
}

pub fn read(mut source: Source, options: &ReadOptions) -> Result<Profile> {
    let path = source.path.clone();
    let mut filter = options.filter.clone();
    if let Some(time @ TimeSlice::Percent { .. }) = &filter.time {
        let (first, last) = time_span(&path)?;
        filter.time = Some(time.resolve(first, last));
    }
    let cap = options.max_decompressed.unwrap_or(DEFAULT_MAX_DECOMPRESSED);
    let mut reader = Reader::new(path.clone(), filter);
    if options.timeline {
        reader.timeline = Some(Timeline::new(METRICS.len()));
    }
    let mut offset = 0u64;
    let mut index = 0usize;
    let mut buf = Vec::new();
    while let Some(header) = next_chunk(&mut source, &mut buf, offset, index, cap)? {
        reader
            .chunk(&buf, &header)
            .map_err(|b| chunk_error(&path, index, offset, &b))?;
        offset += header.size;
        index += 1;
    }
    if index == 0 {
        return Err(Error::input(
            path,
            Position::Whole,
            "empty input: no chunks",
        ));
    }
    reader.finish(index)
}

fn chunk_error(path: &Path, index: usize, chunk_offset: u64, b: &Bad) -> Error {
    Error::input(
        path,
        Position::Offset(chunk_offset + b.offset),
        format!("JFR chunk {index} (at byte {chunk_offset}): {}", b.what),
    )
}

/// Reads the next chunk whole into `buf`; `None` at the end of the input.
fn next_chunk(
    source: &mut Source,
    buf: &mut Vec<u8>,
    offset: u64,
    index: usize,
    cap: u64,
) -> Result<Option<Header>> {
    let path = source.path.clone();
    buf.clear();
    let got = (&mut source.reader)
        .take(HEADER_LEN as u64)
        .read_to_end(buf)
        .map_err(|e| source.read_error(e))?;
    if got == 0 {
        return Ok(None);
    }
    let header = Header::parse(buf).map_err(|b| chunk_error(&path, index, offset, &b))?;
    if header.size > cap {
        return Err(chunk_error(
            &path,
            index,
            offset,
            &Bad {
                offset: 8,
                what: format!(
                    "the chunk claims {} bytes, more than the {cap}-byte cap on what is held in \
                     memory (raise it with --max-decompressed BYTES if the recording is genuine)",
                    header.size
                ),
            },
        ));
    }
    let body = header.size - HEADER_LEN as u64;
    // read_to_end grows the buffer as bytes arrive: a size claimed but not there costs nothing
    let read = (&mut source.reader)
        .take(body)
        .read_to_end(buf)
        .map_err(|e| source.read_error(e))?;
    if (read as u64) < body {
        return Err(chunk_error(
            &path,
            index,
            offset,
            &Bad {
                offset: buf.len() as u64,
                what: format!(
                    "truncated chunk: its header says {} bytes and the input ends after {}",
                    header.size,
                    buf.len()
                ),
            },
        ));
    }
    Ok(Some(header))
}

/// The first and last time the recording covers (epoch nanoseconds), from the chunk headers
/// alone, for percent `--time` slices.
fn time_span(path: &Path) -> Result<(u64, u64)> {
    let mut source = Source::open(path)?;
    let (mut first, mut last) = (u64::MAX, 0u64);
    let mut offset = 0u64;
    let mut head = Vec::with_capacity(HEADER_LEN);
    for index in 0.. {
        head.clear();
        let got = (&mut source.reader)
            .take(HEADER_LEN as u64)
            .read_to_end(&mut head)
            .map_err(|e| source.read_error(e))?;
        if got == 0 {
            break;
        }
        let h = Header::parse(&head).map_err(|b| chunk_error(path, index, offset, &b))?;
        let start = h.start_nanos.max(0) as u64;
        first = first.min(start);
        last = last.max(start.saturating_add(h.duration_nanos.max(0) as u64));
        let body = h.size - HEADER_LEN as u64;
        std::io::copy(&mut (&mut source.reader).take(body), &mut std::io::sink())
            .map_err(|e| source.read_error(e))?;
        offset += h.size;
    }
    Ok((first.min(last), last))
}

/// The values one event adds: per sample type index, the weight.
type Weights = Vec<(usize, Weight)>;

/// What the profile is built from: the profile with every metric as a sample type (the
/// empty ones are dropped at the end) and the counts for the notes and quality.
struct Reader {
    path: PathBuf,
    profile: Profile,
    filter: SampleFilter,
    tally: FilterTally,
    /// Events read per metric-feeding event type, by name.
    events: FxHashMap<&'static str, u64>,
    /// Events whose type id the chunk's metadata does not define.
    unknown_types: u64,
    /// References to constants no pool holds, read as null.
    dangling: u64,
    /// Stacks JFR cut at its depth limit, of all stacks read (events with a stack).
    truncated: u64,
    stacks: u64,
    truncated_depth: usize,
    /// `period` settings of jdk.ExecutionSample, as the recording states them.
    periods: Vec<String>,
    values: Vec<u128>,
    leaf_first: Vec<FrameId>,
    /// The events over time, keyed by stack ([`ReadOptions::timeline`]).
    timeline: Option<Timeline>,
    /// `jdk.JVMInformation`'s `javaArguments`: the main class (or jar) and its arguments,
    /// the program's own-code evidence ([`crate::model::ProfileMeta::command`]).
    java_arguments: Option<String>,
}

/// One chunk's decoded tables and per-key caches.
struct ChunkView<'a> {
    header: &'a Header,
    meta: &'a Metadata,
    pools: &'a Pools,
    string_class: Option<u64>,
    frames: FxHashMap<(i64, i32, i64), FrameId>,
    stacks: FxHashMap<(i64, i64), (StackId, bool, usize)>,
    threads: FxHashMap<i64, ThreadEntry>,
    /// References to constants no pool of the chunk holds. The JDK writes some (a thread
    /// that ended as the recording stopped) and its own reader reads them as null; so does
    /// whose, counting them in a warning.
    dangling: std::cell::Cell<u64>,
}

impl Reader {
    fn new(path: PathBuf, filter: SampleFilter) -> Reader {
        let types = METRICS
            .iter()
            .map(|m| SampleType::new(m.name, m.unit.clone()))
            .collect();
        Reader {
            path,
            profile: Profile::new(types),
            filter,
            tally: FilterTally::default(),
            events: FxHashMap::default(),
            unknown_types: 0,
            dangling: 0,
            truncated: 0,
            stacks: 0,
            truncated_depth: 0,
            periods: Vec::new(),
            values: vec![0; METRICS.len()],
            leaf_first: Vec::new(),
            timeline: None,
            java_arguments: None,
        }
    }

    fn chunk(&mut self, b: &[u8], header: &Header) -> chunk::Parse<()> {
        let compressed = header.compressed_ints;
        let meta = chunk::read_metadata(b, header.meta_offset as usize, compressed)?;
        let pools = chunk::read_pools(b, header.cp_offset, &meta, compressed)?;
        // event type id → the weights it feeds
        let mut feeds: FxHashMap<u64, Weights> = FxHashMap::default();
        for (i, m) in METRICS.iter().enumerate() {
            for &(event, weight) in m.events {
                if let Some(id) = meta.class_named(event) {
                    feeds.entry(id).or_default().push((i, weight));
                }
            }
        }
        let setting = meta.class_named("jdk.ActiveSetting");
        let jvm_information = meta.class_named("jdk.JVMInformation");
        let sample_id = meta.class_named("jdk.ExecutionSample");
        let mut view = ChunkView {
            header,
            meta: &meta,
            pools: &pools,
            string_class: meta.class_named("java.lang.String"),
            frames: FxHashMap::default(),
            stacks: FxHashMap::default(),
            threads: FxHashMap::default(),
            dangling: std::cell::Cell::new(0),
        };
        let mut c = Cursor::new(b, HEADER_LEN, compressed);
        while c.remaining() > 0 {
            let start = c.pos;
            let size = c.int()?;
            let size = usize::try_from(size).unwrap_or(0);
            if size < 2 || size > b.len() - start {
                return Err(Bad {
                    offset: start as u64,
                    what: format!(
                        "event size {size} is smaller than an event header or larger than the \
                         {} bytes left in the chunk",
                        b.len() - start
                    ),
                });
            }
            let kind = c.long()? as u64;
            let end = start + size;
            if kind > 1 {
                if let Some(weights) = feeds.get(&kind) {
                    let mut ev = Cursor::new(&b[..end], c.pos, compressed);
                    let value = chunk::value(&mut ev, &meta, kind, 0)?;
                    self.event(&mut view, kind, &value, weights, start)?;
                } else if Some(kind) == setting {
                    let mut ev = Cursor::new(&b[..end], c.pos, compressed);
                    let value = chunk::value(&mut ev, &meta, kind, 0)?;
                    self.setting(&view, kind, &value, sample_id);
                } else if Some(kind) == jvm_information && self.java_arguments.is_none() {
                    let mut ev = Cursor::new(&b[..end], c.pos, compressed);
                    let value = chunk::value(&mut ev, &meta, kind, 0)?;
                    let cls = &meta.classes[&kind];
                    self.java_arguments = (cls.field("javaArguments"))
                        .and_then(|i| field(&value, i))
                        .and_then(|v| view.text(v))
                        .map(str::to_string);
                } else if !meta.classes.contains_key(&kind) {
                    self.unknown_types += 1;
                }
            }
            c.pos = end;
        }
        self.dangling += view.dangling.get();
        Ok(())
    }

    /// A jdk.ActiveSetting event: keeps the `period` of jdk.ExecutionSample.
    fn setting(&mut self, view: &ChunkView<'_>, kind: u64, value: &Value, sample: Option<u64>) {
        let cls = &view.meta.classes[&kind];
        let get = |name: &str| cls.field(name).and_then(|i| field(value, i));
        let id = get("id").and_then(Value::as_i64);
        let name = get("name").and_then(|v| view.text(v));
        let setting = get("value").and_then(|v| view.text(v));
        if let (Some(id), Some("period"), Some(setting)) = (id, name, setting)
            && Some(id as u64) == sample
            && !self.periods.iter().any(|p| p == setting)
        {
            self.periods.push(setting.to_string());
        }
    }

    fn event(
        &mut self,
        view: &mut ChunkView<'_>,
        kind: u64,
        value: &Value,
        weights: &Weights,
        offset: usize,
    ) -> chunk::Parse<()> {
        let meta = view.meta;
        let cls = &meta.classes[&kind];
        let get = |name: &str| cls.field(name).map(|i| (i, field(value, i)));
        let at = |what: String| Bad {
            offset: offset as u64,
            what: format!("event {} at byte {offset}: {what}", cls.name),
        };
        // the weights first: an event of weight 0 adds nothing
        self.values.iter_mut().for_each(|v| *v = 0);
        for &(i, w) in weights {
            self.values[i] = match w {
                Weight::One => 1,
                Weight::Field(name) => match get(name) {
                    Some((_, v)) => v.and_then(Value::as_i64).unwrap_or(0).max(0) as u128,
                    None => 1,
                },
                Weight::Span(name) => {
                    let Some((fi, Some(v))) = get(name) else {
                        continue;
                    };
                    let raw = v.as_i64().unwrap_or(0);
                    let nanos = if cls.fields[fi].ticks {
                        view.header.ticks_to_nanos(raw)
                    } else {
                        raw
                    };
                    nanos.max(0) as u128
                }
            };
        }
        *self.events.entry(event_name(&cls.name)).or_default() += 1;
        let thread_field = get("sampledThread").or_else(|| get("eventThread"));
        let thread_key = thread_field
            .and_then(|(_, v)| v)
            .and_then(|v| match v {
                Value::Ref(k) => Some(*k),
                _ => None,
            })
            .unwrap_or(0);
        let thread_class = thread_field.map(|(i, _)| cls.fields[i].class);
        let (mut thread, tid, name) = view.thread(thread_class, thread_key).map_err(at)?;
        if thread.is_none()
            && let Some(n) = &name
        {
            let id = self.profile.intern_thread(n);
            thread = Some(id);
            view.threads.insert(thread_key, (thread, tid, name.clone()));
        }
        let time = (!self.filter.is_empty() || self.timeline.is_some())
            .then(|| get("startTime"))
            .flatten()
            .and_then(|(_, v)| v)
            .and_then(Value::as_i64)
            .map(|t| view.header.ticks_to_epoch_nanos(t) as u64);
        if !self.filter.is_empty() {
            let key = SampleKey {
                comm: name.as_deref(),
                pid: None,
                tid,
                time,
            };
            let place = |_| format!("{} at byte {offset}", cls.name);
            if !self.tally.count(&self.filter, &key, place) {
                return Ok(());
            }
        }
        let stack_field = get("stackTrace");
        let stack_key = match stack_field.and_then(|(_, v)| v) {
            Some(Value::Ref(k)) => *k,
            _ => 0,
        };
        let stack_class = stack_field.map(|(i, _)| cls.fields[i].class);
        let allocation = weights.iter().any(|&(i, _)| METRICS[i].allocation);
        let type_key = if allocation {
            match get("objectClass").and_then(|(_, v)| v) {
                Some(Value::Ref(k)) => *k,
                _ => 0,
            }
        } else {
            -1
        };
        let class_class = get("objectClass").map(|(i, _)| cls.fields[i].class);
        let (stack, truncated, depth) = self
            .stack(view, stack_class, stack_key, class_class, type_key)
            .map_err(at)?;
        if stack_key != 0 {
            self.stacks += 1;
            if truncated {
                self.truncated += 1;
                self.truncated_depth = self.truncated_depth.max(depth);
            }
        }
        self.profile.add_sample(stack, thread, &self.values);
        if let (Some(timeline), Some(time)) = (&mut self.timeline, time) {
            timeline.add_values(time, stack.0, &self.values);
        }
        Ok(())
    }

    /// The stack of a stack-trace key (0: none), with the allocated class (`type_key` ≥ 0)
    /// at its leaf; whether JFR truncated it, and its depth.
    fn stack(
        &mut self,
        view: &mut ChunkView<'_>,
        stack_class: Option<u64>,
        key: i64,
        class_class: Option<u64>,
        type_key: i64,
    ) -> std::result::Result<(StackId, bool, usize), String> {
        if let Some(&found) = view.stacks.get(&(key, type_key)) {
            return Ok(found);
        }
        self.leaf_first.clear();
        // an event without a stack has no frame at all, not even its allocated class: it is
        // `(no stack)` in every view, as the JDK's reader shows it
        let stackless = key == 0 || stack_class.is_none_or(|sc| view.pooled(sc, key).is_none());
        if type_key >= 0 && !stackless {
            let name = match class_class {
                Some(cc) if type_key != 0 => view.class_name(cc, type_key)?,
                _ => "[unknown type]".to_string(),
            };
            let frame = Frame::named(type_name(&name), FrameKind::AllocType);
            self.leaf_first.push(self.profile.intern_frame(frame));
        }
        let mut truncated = false;
        let mut depth = 0;
        if let (Some(sc), true) = (stack_class, key != 0) {
            let Some(trace) = view.pooled(sc, key) else {
                // read as no stack trace, as the JDK's reader does
                view.missing();
                let found = (self.profile.intern_stack(&self.leaf_first), false, 0);
                view.stacks.insert((key, type_key), found);
                return Ok(found);
            };
            let meta: &Metadata = view.meta;
            let tcls = &meta.classes[&sc];
            truncated = tcls
                .field("truncated")
                .and_then(|i| field(trace, i))
                .and_then(Value::as_i64)
                .is_some_and(|t| t != 0);
            let frames_at = tcls.field("frames");
            if let Some(Value::Array(frames)) = frames_at.and_then(|i| field(trace, i)) {
                let frame_class = tcls.fields[frames_at.expect("found")].class;
                depth = frames.len();
                for f in frames.iter() {
                    let id = self.frame(view, frame_class, f)?;
                    self.leaf_first.push(id);
                }
            }
        }
        if depth == 0 {
            // a trace without frames is no stack either
            self.leaf_first.clear();
        }
        let stack = self.profile.intern_stack(&self.leaf_first);
        let found = (stack, truncated, depth);
        view.stacks.insert((key, type_key), found);
        Ok(found)
    }

    /// One stack frame (an inline `jdk.types.StackFrame`): method, line, frame type.
    fn frame(
        &mut self,
        view: &mut ChunkView<'_>,
        frame_class: u64,
        f: &Value,
    ) -> std::result::Result<FrameId, String> {
        let meta: &Metadata = view.meta;
        let fcls = &meta.classes[&frame_class];
        let get = |name: &str| {
            fcls.field(name)
                .map(|i| (fcls.fields[i].class, field(f, i)))
        };
        let key = |v: Option<&Value>| match v {
            Some(Value::Ref(k)) => *k,
            Some(v) => v.as_i64().unwrap_or(0),
            None => 0,
        };
        let method = get("method");
        let line = get("lineNumber")
            .and_then(|(_, v)| v)
            .and_then(Value::as_i64);
        let kind = get("type");
        let cache_key = (
            key(method.and_then(|(_, v)| v)),
            line.unwrap_or(-1) as i32,
            key(kind.and_then(|(_, v)| v)),
        );
        if let Some(&id) = view.frames.get(&cache_key) {
            return Ok(id);
        }
        let name = match method {
            Some((mc, Some(v))) => view.method_name(mc, v)?,
            _ => UNKNOWN.to_string(),
        };
        let kind = match kind {
            Some((kc, Some(v))) => frame_kind(view.object_text(kc, v, "description")),
            _ => FrameKind::Jit,
        };
        let frame = Frame {
            name: name.into(),
            line: line.and_then(|l| NonZeroU32::new(l as u32)),
            kind,
            ..Frame::default()
        };
        let id = self.profile.intern_frame(frame);
        view.frames.insert(cache_key, id);
        Ok(id)
    }

    fn finish(self, chunks: usize) -> Result<Profile> {
        let totals = self.profile.totals();
        let keep: Vec<usize> = (0..METRICS.len()).filter(|&i| totals[i] > 0).collect();
        if keep.is_empty() {
            let read: u64 = self.events.values().sum();
            return Err(Error::input(
                &self.path,
                Position::Whole,
                format!(
                    "no samples: {} event(s) of the profiling types and none with a weight; \
                     whose reads {}",
                    read,
                    METRICS
                        .iter()
                        .flat_map(|m| m.events.iter().map(|e| e.0))
                        .fold(Vec::<&str>::new(), |mut v, e| {
                            if !v.contains(&e) {
                                v.push(e);
                            }
                            v
                        })
                        .join(", ")
                ),
            ));
        }
        let filtered = self.tally.finish(&self.path, &self.filter)?;
        let mut profile = only_types(&self.profile, &keep);
        // only_types keeps the stacks' ids: the timeline keeps its keys, and the same types
        profile.meta.timeline = self.timeline.map(|t| {
            t.rekey(keep.len(), |stack, values, kept| {
                for (v, &i) in kept.iter_mut().zip(&keep) {
                    *v = values[i];
                }
                stack
            })
        });
        profile.meta.command = self.java_arguments;
        profile.meta.notes.push(Notice::JfrChunks(chunks));
        let mut events: Vec<(String, u64)> = (self.events.iter())
            .map(|(e, n)| (e.to_string(), *n))
            .collect();
        events.sort();
        profile.meta.notes.push(Notice::JfrEvents(events));
        if !self.periods.is_empty() {
            profile
                .meta
                .notes
                .push(Notice::JfrPeriods(self.periods.clone()));
            if let Some(nanos) = parse_period(&self.periods[0]) {
                profile.meta.period = Some((nanos, SampleType::new("cpu", Unit::Nanoseconds)));
            }
        }
        profile.meta.notes.extend(filtered);
        if self.unknown_types > 0 {
            profile.meta.warnings.push(Notice::UnknownEventTypes {
                path: self.path.clone(),
                count: self.unknown_types,
            });
        }
        if self.dangling > 0 {
            profile.meta.warnings.push(Notice::DanglingReferences {
                path: self.path.clone(),
                count: self.dangling,
            });
        }
        profile.meta.recording.samples = self.stacks;
        profile.meta.recording.whole_stacks = true;
        if self.stacks > 0 {
            profile.meta.recording.depth_cut = Some(crate::model::DepthCut {
                stacks: self.stacks,
                cut: self.truncated,
                depth: self.truncated_depth,
            });
        }
        Ok(profile)
    }
}

impl<'a> ChunkView<'a> {
    /// Counts a reference to a constant that no pool of the chunk holds.
    fn missing(&self) {
        self.dangling.set(self.dangling.get() + 1);
    }

    /// A constant's value.
    fn pooled(&self, class: u64, key: i64) -> Option<&'a Value> {
        self.pools.entries.get(&(class, key))
    }

    /// Resolves a value that may be a reference into `class`'s pool.
    fn resolve<'v>(&self, class: u64, v: &'v Value) -> Option<&'v Value>
    where
        'a: 'v,
    {
        match v {
            Value::Ref(k) => self.pooled(class, *k),
            v => Some(v),
        }
    }

    fn text<'v>(&self, v: &'v Value) -> Option<&'v str>
    where
        'a: 'v,
    {
        match v {
            Value::Str(Str::Text(s)) => Some(s),
            Value::Str(Str::Pool(k)) => match self.pooled(self.string_class?, *k)? {
                Value::Str(Str::Text(s)) => Some(s),
                _ => None,
            },
            _ => None,
        }
    }

    /// The text of `name` in an object of `class` (resolved through the pools), where the
    /// field is a string or a `jdk.types.Symbol`.
    fn object_text<'v>(&self, class: u64, v: &'v Value, name: &str) -> Option<&'v str>
    where
        'a: 'v,
    {
        let obj = self.resolve(class, v)?;
        let meta: &'a Metadata = self.meta;
        let cls = meta.classes.get(&class)?;
        let i = cls.field(name)?;
        let f = &cls.fields[i];
        let value = self.resolve(f.class, field(obj, i)?)?;
        if let Some(s) = self.text(value) {
            return Some(s);
        }
        // a Symbol: { string }
        self.object_text(f.class, value, "string")
    }

    /// `io.ktor.server.Foo` of a `java.lang.Class` key.
    fn class_name(&self, class: u64, key: i64) -> std::result::Result<String, String> {
        let Some(v) = self.pooled(class, key) else {
            self.missing();
            return Ok(UNKNOWN.to_string());
        };
        Ok(self
            .object_text(class, v, "name")
            .unwrap_or(UNKNOWN)
            .to_string())
    }

    /// `io.ktor.server.Foo.bar` of a `jdk.types.Method` value or key.
    fn method_name(&self, class: u64, v: &Value) -> std::result::Result<String, String> {
        let Some(m) = self.resolve(class, v) else {
            self.missing();
            return Ok(UNKNOWN.to_string());
        };
        let mcls = &self.meta.classes[&class];
        let name = self.object_text(class, m, "name").unwrap_or(UNKNOWN);
        let owner = match mcls
            .field("type")
            .map(|i| (mcls.fields[i].class, field(m, i)))
        {
            Some((cc, Some(Value::Ref(k)))) if *k != 0 => self.class_name(cc, *k)?,
            _ => String::new(),
        };
        Ok(if owner.is_empty() {
            name.to_string()
        } else {
            format!("{}.{name}", owner.replace('/', "."))
        })
    }

    /// The thread of a key: its id in the profile, OS thread id and name.
    fn thread(&mut self, class: Option<u64>, key: i64) -> std::result::Result<ThreadEntry, String> {
        let Some(class) = class.filter(|_| key != 0) else {
            return Ok((None, None, None));
        };
        if let Some(found) = self.threads.get(&key) {
            return Ok(found.clone());
        }
        let Some(v) = self.pooled(class, key) else {
            // read as no thread, as the JDK's reader does
            self.missing();
            return Ok((None, None, None));
        };
        let name = self
            .object_text(class, v, "javaName")
            .filter(|n| !n.is_empty())
            .or_else(|| self.object_text(class, v, "osName"))
            .map(Box::<str>::from);
        let cls = &self.meta.classes[&class];
        let tid = cls
            .field("osThreadId")
            .and_then(|i| field(v, i))
            .and_then(Value::as_i64)
            .map(|t| t as i32);
        // the thread id in the profile is interned by the reader (it owns the profile)
        let found = (None, tid, name);
        self.threads.insert(key, found.clone());
        Ok(found)
    }
}

fn field(v: &Value, i: usize) -> Option<&Value> {
    match v {
        Value::Object(fields) => fields.get(i),
        _ => None,
    }
}

/// `jdk.ObjectAllocationSample` as a `&'static str` for the tally (the names in [`METRICS`]).
fn event_name(name: &str) -> &'static str {
    METRICS
        .iter()
        .flat_map(|m| m.events.iter().map(|e| e.0))
        .find(|e| *e == name)
        .unwrap_or("other")
}

/// JFR's frame types (`jdk.types.FrameType`; async-profiler adds `C++`, `Kernel`, `C1 compiled`).
fn frame_kind(description: Option<&str>) -> FrameKind {
    match description {
        Some("Interpreted") => FrameKind::Interpreted,
        Some("Inlined") => FrameKind::Inlined,
        Some("Native" | "C++") => FrameKind::Native,
        Some("Kernel") => FrameKind::Kernel,
        _ => FrameKind::Jit,
    }
}

/// A JVM class name as Java writes it: `java/lang/String` → `java.lang.String`, `[B` →
/// `byte[]`, `[Ljava/lang/String;` → `java.lang.String[]`.
pub fn type_name(internal: &str) -> String {
    let dims = internal.bytes().take_while(|&b| b == b'[').count();
    let base = &internal[dims..];
    if dims == 0 {
        return base.replace('/', ".");
    }
    let element = match base {
        "B" => "byte".to_string(),
        "C" => "char".to_string(),
        "D" => "double".to_string(),
        "F" => "float".to_string(),
        "I" => "int".to_string(),
        "J" => "long".to_string(),
        "S" => "short".to_string(),
        "Z" => "boolean".to_string(),
        other => other
            .strip_prefix('L')
            .and_then(|o| o.strip_suffix(';'))
            .unwrap_or(other)
            .replace('/', "."),
    };
    format!("{element}{}", "[]".repeat(dims))
}

/// `10 ms`, `20 ms`, `1 s`, `999 us`, `100 ns` in nanoseconds.
fn parse_period(text: &str) -> Option<i64> {
    let (n, unit) = text.trim().split_once(' ')?;
    let n: f64 = n.parse().ok()?;
    let scale = match unit {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    };
    Some((n * scale) as i64)
}

/// A copy of `full` with only the sample types `keep` (frames and stacks keep their ids).
fn only_types(full: &Profile, keep: &[usize]) -> Profile {
    let types = keep
        .iter()
        .map(|&i| full.sample_types()[i].clone())
        .collect();
    let mut out = Profile::new(types);
    for frame in full.frames() {
        out.intern_frame(frame.clone());
    }
    for i in 0..full.stack_count() {
        out.intern_stack(full.stack(StackId(i as u32)));
    }
    let mut threads: FxHashMap<ThreadId, ThreadId> = FxHashMap::default();
    let mut values = vec![0u128; keep.len()];
    for row in full.rows() {
        let thread = row.thread.map(|t| {
            *threads
                .entry(t)
                .or_insert_with(|| out.intern_thread(full.thread_name(t)))
        });
        for (v, &i) in values.iter_mut().zip(keep) {
            *v = row.values[i];
        }
        if values.iter().any(|&v| v > 0) {
            out.add_sample(row.stack, thread, &values);
        }
    }
    out.meta = full.meta.clone();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_as_java_writes_them() {
        assert_eq!(type_name("java/lang/String"), "java.lang.String");
        assert_eq!(type_name("[B"), "byte[]");
        assert_eq!(type_name("[[I"), "int[][]");
        assert_eq!(type_name("[Ljava/lang/Object;"), "java.lang.Object[]");
    }

    #[test]
    fn periods_in_nanoseconds() {
        assert_eq!(parse_period("10 ms"), Some(10_000_000));
        assert_eq!(parse_period("20 ms"), Some(20_000_000));
        assert_eq!(parse_period("1 s"), Some(1_000_000_000));
        assert_eq!(parse_period("off"), None);
    }
}

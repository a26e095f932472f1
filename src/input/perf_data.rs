//! perf.data, read with `linux-perf-data` (file and pipe mode, zstd `-z` records) and
//! symbolised by whose itself.
//!
//! The record loop keeps, per process, the memory map over time (MMAP/MMAP2, FORK inherits,
//! exec replaces) and the thread names (COMM); each SAMPLE's callchain is turned into
//! (module, address) pairs against the map *at that moment*: `PERF_CONTEXT_*` markers switch
//! between kernel and user and are never frames, and every address after the first of a
//! context is a return address, looked up at `address - 1` so a call at the very end of a
//! function is not blamed on the next one. Samples fold into rows of distinct address stacks;
//! only after the whole file is read is each distinct (module, address) symbolised once
//! ([`crate::symbolize`]) and the rows turned into frames.
//!
//! Sample types: one per event, weighted by the sample period (so `cpu-clock` and
//! `task-clock` weigh nanoseconds, `cycles` cycles), then `samples`; the first event is the
//! default metric. LOST records are counted and reported.

use super::ReadOptions;
use super::perf_script::{event_type_name, event_unit, is_kernel_address};
use super::progress::Progress;
use super::source::Source;
use crate::error::{Error, Position, Result};
use crate::model::{Frame, FrameId, Profile, SampleType, ThreadId};
use crate::symbolize::{self, ModuleKind, ModuleRequest};
use linux_perf_data::linux_perf_event_reader::{
    CpuMode, EventRecord, Mmap2FileId, RecordType, SampleFormat,
};
use linux_perf_data::{DsoKey, PerfFileReader, PerfFileRecord, UserRecordType};
use rustc_hash::FxHashMap;
use std::io::{BufReader, Cursor, Read, Seek, SeekFrom};
use std::path::Path;

const PERF_CONTEXT_MAX: u64 = -4095i64 as u64;
const PERF_CONTEXT_KERNEL: u64 = -128i64 as u64;
const PERF_CONTEXT_USER: u64 = -512i64 as u64;
const PERF_CONTEXT_GUEST_KERNEL: u64 = -2176i64 as u64;
const PERF_CONTEXT_GUEST_USER: u64 = -2560i64 as u64;
const PERF_CONTEXT_HV: u64 = -32i64 as u64;
const PERF_RECORD_MISC_MMAP_BUILD_ID: u16 = 1 << 14;
/// The file header of file mode (`perf_file_header`): magic, size, attr_size, then the attrs,
/// data and event-types sections (offset, size each) and 256 feature bits.
const FILE_HEADER_SIZE: u64 = 104;

/// Reads a perf.data file (or pipe-mode stream) into a symbolised profile.
pub fn read(source: Source, options: &ReadOptions) -> Result<Profile> {
    let path = source.path.clone();
    let regular = !source.gzipped && path != Path::new("<stdin>") && path.is_file();
    if regular {
        let mut file = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
        let len = file.metadata().map_err(|e| Error::io(&path, e))?.len();
        let (pipe, records_at) = check_header(&mut file, len, &path)?;
        file.seek(SeekFrom::Start(0))
            .map_err(|e| Error::io(&path, e))?;
        let counting = Counting::new(
            BufReader::with_capacity(1 << 20, file),
            Some(len),
            records_at,
        );
        return if pipe {
            read_records(PerfFileReader::parse_pipe(counting), &path, options)
        } else {
            read_records(PerfFileReader::parse_file(counting), &path, options)
        };
    }
    // stdin or gzip: file mode needs to seek, so hold the (bounded) bytes in memory
    let cap = options.max_decompressed.unwrap_or(2 << 30);
    let mut bytes = Vec::new();
    let mut reader = source.reader;
    reader
        .by_ref()
        .take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::input(&path, Position::Whole, format!("cannot read: {e}")))?;
    if bytes.len() as u64 > cap {
        return Err(Error::input(
            &path,
            Position::Whole,
            format!("larger than {cap} bytes after decompression (--max-decompressed)"),
        ));
    }
    let len = bytes.len() as u64;
    let mut cursor = Cursor::new(bytes);
    let (pipe, records_at) = check_header(&mut cursor, len, &path)?;
    cursor.set_position(0);
    let counting = Counting::new(cursor, Some(len), records_at);
    if pipe {
        read_records(PerfFileReader::parse_pipe(counting), &path, options)
    } else {
        read_records(PerfFileReader::parse_file(counting), &path, options)
    }
}

/// Checks the header's declared sections against the real length before the parser
/// allocates or seeks by them. Returns whether the input is in pipe mode, and where its
/// records start.
fn check_header<R: Read + Seek>(r: &mut R, len: u64, path: &Path) -> Result<(bool, u64)> {
    let mut header = [0u8; FILE_HEADER_SIZE as usize];
    let got = read_up_to(r, &mut header).map_err(|e| Error::io(path, e))?;
    let truncated = |what: String| {
        Error::input(
            path,
            Position::Whole,
            format!("truncated perf.data: {what}"),
        )
    };
    if got < 16 {
        return Err(truncated(format!(
            "the header needs at least 16 bytes, the file has {got}"
        )));
    }
    if &header[..8] != b"PERFILE2" {
        return Err(Error::input(
            path,
            Position::Offset(0),
            "not a perf.data file (expected the magic `PERFILE2`)",
        ));
    }
    let u64_at = |i: usize| u64::from_le_bytes(header[i..i + 8].try_into().unwrap());
    let size = u64_at(8);
    if size == 16 {
        r.seek(SeekFrom::Start(16))
            .map_err(|e| Error::io(path, e))?;
        check_pipe_headers(r).map_err(|e| Error::input(path, Position::Whole, e))?;
        return Ok((true, 16));
    }
    if size != FILE_HEADER_SIZE {
        return Err(Error::input(
            path,
            Position::Offset(8),
            format!("unexpected perf.data header size {size} (expected 104, or 16 for pipe mode)"),
        ));
    }
    if (got as u64) < FILE_HEADER_SIZE {
        return Err(truncated(format!(
            "the header needs 104 bytes, the file has {got}"
        )));
    }
    let section = |i: usize| (u64_at(i), u64_at(i + 8));
    let (data_offset, data_size) = section(40);
    if data_size == 0 {
        return Err(Error::input(
            path,
            Position::Offset(48),
            "the header says the data section is empty: `perf record` did not finish writing \
             this file (killed?)",
        ));
    }
    for (name, (offset, size)) in [
        ("attributes", section(24)),
        ("data", (data_offset, data_size)),
    ] {
        let end = offset.saturating_add(size);
        if end > len {
            return Err(truncated(format!(
                "the {name} section ends at byte {end} but the file has {len} bytes"
            )));
        }
    }
    // one (offset, size) pair per feature bit follows the data section
    let features: u32 = header[72..104].iter().map(|b| b.count_ones()).sum();
    let table_end = data_offset
        .saturating_add(data_size)
        .saturating_add(u64::from(features) * 16);
    if table_end > len {
        return Err(truncated(format!(
            "the feature table ends at byte {table_end} but the file has {len} bytes"
        )));
    }
    let attr_size = u64_at(16);
    if !(64..=4096).contains(&attr_size) {
        return Err(Error::input(
            path,
            Position::Offset(16),
            format!("corrupt perf.data header: event attribute size {attr_size}"),
        ));
    }
    check_feature_sections(r, &header, data_offset + data_size, len)
        .map_err(|e| Error::input(path, Position::Whole, e))?;
    Ok((false, data_offset))
}

const FEATURE_EVENT_DESC: usize = 12;

/// Every feature section must lie inside the file, and the event descriptions (which the
/// parser reads at open time, sizing vectors by their counts) must be consistent.
fn check_feature_sections<R: Read + Seek>(
    r: &mut R,
    header: &[u8],
    table: u64,
    len: u64,
) -> std::result::Result<(), String> {
    let bits: Vec<usize> = (0..256)
        .filter(|&b| header[72 + b / 8] & (1 << (b % 8)) != 0)
        .collect();
    let mut entries = vec![0u8; bits.len() * 16];
    r.seek(SeekFrom::Start(table)).map_err(|e| e.to_string())?;
    r.read_exact(&mut entries).map_err(|e| e.to_string())?;
    for (i, &bit) in bits.iter().enumerate() {
        let u = |at: usize| u64::from_le_bytes(entries[at..at + 8].try_into().unwrap());
        let (offset, size) = (u(i * 16), u(i * 16 + 8));
        let end = offset.saturating_add(size);
        if end > len {
            return Err(format!(
                "truncated perf.data: feature section {bit} ends at byte {end} but the file has \
                 {len} bytes"
            ));
        }
        if bit == FEATURE_EVENT_DESC {
            let mut section = vec![0u8; size as usize];
            r.seek(SeekFrom::Start(offset)).map_err(|e| e.to_string())?;
            r.read_exact(&mut section).map_err(|e| e.to_string())?;
            check_event_desc(&section)?;
        }
    }
    Ok(())
}

/// `HEADER_EVENT_DESC`: nr, attr_size, then per event the attr, nr_ids, a length-prefixed
/// name and the ids. Counts and lengths must fit in the section.
fn check_event_desc(s: &[u8]) -> std::result::Result<(), String> {
    let bad = |what: &str| Err(format!("corrupt event description section: {what}"));
    let u32_at = |at: usize| {
        s.get(at..at + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()) as usize)
    };
    let (Some(nr), Some(attr_size)) = (u32_at(0), u32_at(4)) else {
        return bad("shorter than its counts");
    };
    if !(64..=4096).contains(&attr_size) {
        return bad("attribute size out of range");
    }
    let mut at = 8usize;
    for _ in 0..nr {
        at += attr_size;
        let Some(ids) = u32_at(at) else {
            return bad("event count larger than the section");
        };
        let Some(name_len) = u32_at(at + 4) else {
            return bad("event count larger than the section");
        };
        at = at + 8 + name_len + ids * 8;
        if at > s.len() {
            return bad("a name or id list runs past the section");
        }
    }
    Ok(())
}

/// Pipe mode: the attribute and feature records before the first event, checked the same way
/// (the parser reads them eagerly).
fn check_pipe_headers<R: Read>(r: &mut R) -> std::result::Result<(), String> {
    let mut head = [0u8; 8];
    loop {
        if read_up_to(r, &mut head).map_err(|e| e.to_string())? < 8 {
            return Ok(());
        }
        let kind = u32::from_le_bytes(head[0..4].try_into().unwrap());
        let size = u16::from_le_bytes(head[6..8].try_into().unwrap()) as usize;
        if size < 8 {
            return Err(format!("corrupt pipe-mode record header (size {size})"));
        }
        if kind != 64 && kind != 80 {
            return Ok(());
        }
        let mut body = vec![0u8; size - 8];
        if read_up_to(r, &mut body).map_err(|e| e.to_string())? < body.len() {
            return Err("truncated perf.data: ends inside a header record".into());
        }
        if kind == 80 && body.len() >= 8 {
            let feature = u64::from_le_bytes(body[0..8].try_into().unwrap());
            if feature == FEATURE_EVENT_DESC as u64 {
                check_event_desc(&body[8..])?;
            }
        }
    }
}

fn read_up_to<R: Read>(r: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// The reader under the parser: counts bytes for the progress bar, and follows the record
/// headers as they stream past to refuse what the parser would size an allocation by without
/// checking (an AUXTRACE record's payload length) — whose does not decode AUX data anyway.
struct Counting<R> {
    inner: R,
    pos: u64,
    progress: Progress,
    /// Offset of the next record header, while the stream is followed.
    next_header: Option<u64>,
    header: [u8; 8],
    header_fill: usize,
}

const PERF_RECORD_AUXTRACE: u32 = 71;

impl<R> Counting<R> {
    fn new(inner: R, len: Option<u64>, records_at: u64) -> Counting<R> {
        Counting {
            inner,
            pos: 0,
            progress: Progress::new(len, "reading perf.data"),
            next_header: Some(records_at),
            header: [0; 8],
            header_fill: 0,
        }
    }

    /// Walks the record headers inside `bytes` (which start at offset `start`).
    fn follow(&mut self, start: u64, bytes: &[u8]) -> std::io::Result<()> {
        let end = start + bytes.len() as u64;
        while let Some(at) = self.next_header {
            let want = at + self.header_fill as u64;
            if want < start || want >= end {
                // a read elsewhere (the header and feature sections are read first)
                break;
            }
            let i = (want - start) as usize;
            let take = (8 - self.header_fill).min(bytes.len() - i);
            self.header[self.header_fill..self.header_fill + take]
                .copy_from_slice(&bytes[i..i + take]);
            self.header_fill += take;
            if self.header_fill < 8 {
                break;
            }
            self.header_fill = 0;
            let kind = u32::from_le_bytes(self.header[0..4].try_into().unwrap());
            let size = u16::from_le_bytes(self.header[6..8].try_into().unwrap());
            if kind == PERF_RECORD_AUXTRACE {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "AUXTRACE record (Intel PT / CoreSight trace data) is not supported",
                ));
            }
            if size < 8 {
                // the parser reports this one itself
                self.next_header = None;
                break;
            }
            self.next_header = Some(at + u64::from(size));
        }
        Ok(())
    }
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let start = self.pos;
        self.pos += n as u64;
        self.progress.set(self.pos);
        if self.next_header.is_some() {
            self.follow(start, &buf[..n])?;
        }
        Ok(n)
    }
}

impl<R: Seek> Seek for Counting<R> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.pos = self.inner.seek(pos)?;
        Ok(self.pos)
    }
}

/// A module as the reader knows it; index into `Reader::modules`.
type ModuleId = u32;
/// Frames with no mapping at all: `[unknown]` without a module.
const NO_MODULE: ModuleId = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Mapping {
    start: u64,
    end: u64,
    pgoff: u64,
    module: ModuleId,
}

#[derive(Debug, Clone, Default)]
struct Process {
    /// Sorted by start, non-overlapping.
    maps: Vec<Mapping>,
}

impl Process {
    fn insert(&mut self, m: Mapping) {
        let mut kept = Vec::with_capacity(self.maps.len() + 2);
        for old in self.maps.drain(..) {
            if old.end <= m.start || old.start >= m.end {
                kept.push(old);
                continue;
            }
            if old.start < m.start {
                kept.push(Mapping {
                    end: m.start,
                    ..old
                });
            }
            if old.end > m.end {
                kept.push(Mapping {
                    start: m.end,
                    pgoff: old.pgoff + (m.end - old.start),
                    ..old
                });
            }
        }
        kept.push(m);
        kept.sort_by_key(|x| x.start);
        self.maps = kept;
    }

    fn find(&self, addr: u64) -> Option<&Mapping> {
        let i = self.maps.partition_point(|m| m.start <= addr);
        let m = self.maps.get(i.checked_sub(1)?)?;
        (addr < m.end).then_some(m)
    }
}

struct Reader<'p> {
    path: &'p Path,
    modules: Vec<ModuleKind>,
    module_index: FxHashMap<ModuleKind, ModuleId>,
    /// Build ids from the file's BUILD_ID section.
    build_ids: FxHashMap<DsoKey, Vec<u8>>,
    processes: FxHashMap<i32, Process>,
    kernel: Process,
    kernel_module: Option<ModuleId>,
    /// tid → thread name.
    comms: FxHashMap<i32, ThreadId>,
    threads: crate::model::Interner<Box<str>>,
    /// (module, lookup address) → raw frame id.
    raw_frames: FxHashMap<(ModuleId, u64), u32>,
    raw_frame_list: Vec<(ModuleId, u64)>,
    raw_stacks: StackStore,
    /// (raw stack, thread) → row; values are `n_types` per row.
    rows: FxHashMap<(u32, Option<ThreadId>), u32>,
    row_keys: Vec<(u32, Option<ThreadId>)>,
    values: Vec<u128>,
    /// attr index → sample type index.
    attr_type: Vec<usize>,
    n_types: usize,
    samples_type: usize,
    samples: u64,
    lost: u64,
    stack_buf: Vec<u32>,
    frame_cache: Vec<CacheEntry>,
    /// Bumped by every change to any memory map; cache entries of older generations are stale.
    generation: u32,
    /// (pid, tid, mode, callchain bytes) → row, for the current generation of maps and
    /// thread names.
    chain_cache: ChainCache,
    chain_generation: u32,
}

/// The sample fields the folding thread uses.
struct SampleEvent {
    attr: usize,
    pid: i32,
    tid: Option<i32>,
    period: Option<u64>,
    kernel: bool,
    ip: Option<u64>,
}

/// pid (4 bytes), tid (4), mode (1) before the callchain in a cache key.
const CHAIN_KEY_PREFIX: usize = 9;

/// A hash map from byte keys whose hash is computed elsewhere (by the decoding thread):
/// hash → first entry, entries chained on collision; keys are compared in full. Keys live
/// in one arena, not one allocation each.
#[derive(Default)]
struct ChainCache {
    index: FxHashMap<u64, u32>,
    /// (key offset in `keys`, key length, value, next entry with the same hash)
    entries: Vec<(usize, u32, u32, u32)>,
    keys: Vec<u8>,
}

impl ChainCache {
    const END: u32 = u32::MAX;

    fn get(&self, hash: u64, key: &[u8]) -> Option<u32> {
        let mut i = *self.index.get(&hash)?;
        while i != Self::END {
            let (at, len, value, next) = self.entries[i as usize];
            if self.keys[at..at + len as usize] == *key {
                return Some(value);
            }
            i = next;
        }
        None
    }

    fn insert(&mut self, hash: u64, key: &[u8], value: u32) {
        let id = self.entries.len() as u32;
        let next = self.index.insert(hash, id).unwrap_or(Self::END);
        self.entries
            .push((self.keys.len(), key.len() as u32, value, next));
        self.keys.extend_from_slice(key);
    }

    fn clear(&mut self) {
        self.index.clear();
        self.entries.clear();
        self.keys.clear();
    }
}

/// Distinct raw stacks (raw frame ids, leaf first), stored in one arena.
#[derive(Default)]
struct StackStore {
    index: FxHashMap<u64, u32>,
    /// (offset in `frames`, length, next stack with the same hash)
    entries: Vec<(u32, u32, u32)>,
    frames: Vec<u32>,
}

impl StackStore {
    fn intern(&mut self, stack: &[u32]) -> u32 {
        use std::hash::Hasher;
        let mut h = rustc_hash::FxHasher::default();
        for &f in stack {
            h.write_u32(f);
        }
        let hash = h.finish();
        let first = self.index.get(&hash).copied();
        let mut i = first.unwrap_or(u32::MAX);
        while i != u32::MAX {
            if self.get(i) == stack {
                return i;
            }
            i = self.entries[i as usize].2;
        }
        let id = self.entries.len() as u32;
        self.entries.push((
            self.frames.len() as u32,
            stack.len() as u32,
            first.unwrap_or(u32::MAX),
        ));
        self.frames.extend_from_slice(stack);
        self.index.insert(hash, id);
        id
    }

    fn len(&self) -> usize {
        self.entries.len()
    }

    fn get(&self, id: u32) -> &[u32] {
        let (at, len, _) = self.entries[id as usize];
        &self.frames[at as usize..(at + len) as usize]
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct CacheEntry {
    addr: u64,
    pid: i32,
    kernel: bool,
    generation: u32,
    raw: u32,
}

const FRAME_CACHE_BITS: u32 = 14;

fn cache_slot(pid: i32, addr: u64, kernel: bool) -> usize {
    let h = (addr ^ (u64::from(pid as u32) << 32) ^ u64::from(kernel))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> (64 - FRAME_CACHE_BITS)) as usize
}

fn read_records<R: Read + Send>(
    parsed: std::result::Result<PerfFileReader<R>, linux_perf_data::Error>,
    path: &Path,
    options: &ReadOptions,
) -> Result<Profile> {
    let PerfFileReader {
        perf_file,
        record_iter,
    } = parsed.map_err(|e| {
        Error::input(
            path,
            Position::Whole,
            format!("not readable as perf.data: {e}"),
        )
    })?;
    let attrs = perf_file.event_attributes().to_vec();
    if attrs.iter().any(|a| {
        a.attr.sample_format.contains(SampleFormat::STACK_USER)
            && a.attr.sample_format.contains(SampleFormat::REGS_USER)
    }) {
        return Err(Error::Unsupported(format!(
            "{}: recorded with --call-graph dwarf (user stacks to unwind), which whose cannot \
             unwind yet; its frame-pointer-only shares would be wrong. Record with -g, or read \
             `perf script` text of this file instead",
            path.display()
        )));
    }
    // one sample type per distinct event name, then `samples`
    let mut type_names: Vec<String> = Vec::new();
    let mut attr_type = Vec::new();
    for (i, a) in attrs.iter().enumerate() {
        let name = a
            .name()
            .map(|n| event_type_name(n).to_string())
            .unwrap_or_else(|| format!("event{i}"));
        let index = match type_names.iter().position(|t| *t == name) {
            Some(t) => t,
            None => {
                type_names.push(name);
                type_names.len() - 1
            }
        };
        attr_type.push(index);
    }
    let mut sample_types: Vec<SampleType> = type_names
        .iter()
        .map(|n| SampleType::new(n.clone(), event_unit(n)))
        .collect();
    let samples_type = sample_types.len();
    sample_types.push(SampleType::samples());
    let build_ids = perf_file
        .build_ids()
        .map(|m| m.into_iter().map(|(k, v)| (k, v.build_id)).collect())
        .unwrap_or_default();
    let mut reader = Reader {
        path,
        modules: Vec::new(),
        module_index: FxHashMap::default(),
        build_ids,
        processes: FxHashMap::default(),
        kernel: Process::default(),
        kernel_module: None,
        comms: FxHashMap::default(),
        threads: crate::model::Interner::default(),
        raw_frames: FxHashMap::default(),
        raw_frame_list: Vec::new(),
        raw_stacks: StackStore::default(),
        rows: FxHashMap::default(),
        row_keys: Vec::new(),
        values: Vec::new(),
        attr_type,
        n_types: sample_types.len(),
        samples_type,
        samples: 0,
        lost: 0,
        stack_buf: Vec::new(),
        // generation 0 is never current, so the zeroed entries never hit
        frame_cache: vec![CacheEntry::default(); 1 << FRAME_CACHE_BITS],
        generation: 1,
        chain_cache: ChainCache::default(),
        chain_generation: 0,
    };
    // Decoding the records (the library's parsing and time ordering) runs on its own thread
    // and hands owned batches to this one, which keeps all the state: two cores, two halves.
    let little = matches!(
        perf_file.endian(),
        linux_perf_data::Endianness::LittleEndian
    );
    let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Batch>>(4);
    // emptied batches go back, so their memory is reused instead of freed across threads
    let (back_tx, back_rx) = std::sync::mpsc::channel::<Batch>();
    std::thread::scope(|scope| -> Result<()> {
        scope.spawn(move || decode_all(perf_file, record_iter, path, tx, back_rx));
        for batch in rx {
            let mut batch = batch?;
            for event in &batch.events {
                reader.apply(event, &batch.chains, little);
            }
            batch.events.clear();
            batch.chains.clear();
            let _ = back_tx.send(batch);
        }
        Ok(())
    })?;
    reader.finish(sample_types, options)
}

impl Reader<'_> {
    fn apply(&mut self, event: &Event, chains: &[u8], little: bool) {
        match event {
            Event::Sample {
                attr,
                pid,
                tid,
                period,
                kernel,
                ip,
                chain,
                hash,
            } => {
                let key = chain.clone().map(|r| &chains[r]);
                let sample = SampleEvent {
                    attr: *attr,
                    pid: *pid,
                    tid: *tid,
                    period: *period,
                    kernel: *kernel,
                    ip: *ip,
                };
                self.sample(&sample, key, *hash, little);
            }
            Event::Mmap {
                pid,
                start,
                len,
                pgoff,
                mode,
                path,
                build_id,
                exec,
            } => self.mmap(
                *pid,
                *start,
                *len,
                *pgoff,
                *mode,
                path,
                build_id.clone(),
                *exec,
            ),
            Event::Comm {
                pid,
                tid,
                name,
                exec,
            } => {
                let id = ThreadId(self.threads.intern::<str>(name));
                self.comms.insert(*tid, id);
                // cached rows know their thread
                self.generation += 1;
                if *exec && pid == tid {
                    self.processes.remove(pid);
                    self.generation += 1;
                }
            }
            Event::Fork {
                pid,
                ppid,
                tid,
                ptid,
            } => {
                if pid != ppid {
                    let parent = self.processes.get(ppid).cloned().unwrap_or_default();
                    self.processes.insert(*pid, parent);
                    self.generation += 1;
                }
                if let Some(&name) = self.comms.get(ptid) {
                    self.comms.insert(*tid, name);
                }
            }
            Event::Lost(n) => self.lost += n,
            Event::BuildId(key, id) => {
                self.build_ids.insert(key.clone(), id.clone());
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn mmap(
        &mut self,
        pid: i32,
        start: u64,
        len: u64,
        pgoff: u64,
        mode: CpuMode,
        path: &str,
        build_id: Option<Vec<u8>>,
        exec: bool,
    ) {
        let end = start.saturating_add(len);
        if matches!(mode, CpuMode::Kernel | CpuMode::GuestKernel) || pid == -1 {
            let text = path.starts_with("[kernel.kallsyms]").then_some(pgoff);
            let module = self.kernel_module(text);
            self.generation += 1;
            self.kernel.insert(Mapping {
                start,
                end,
                pgoff,
                module,
            });
            return;
        }
        let module = if is_anon(path) {
            if !exec {
                return;
            }
            self.module(ModuleKind::Jit { pid })
        } else if is_pseudo(path) {
            return;
        } else {
            let build_id = build_id.or_else(|| {
                let key = DsoKey::detect(path.as_bytes(), mode)?;
                self.build_ids.get(&key).cloned()
            });
            let kind = ModuleKind::Elf {
                path: path.to_string(),
                build_id,
                exec_pgoff: exec.then_some(pgoff),
            };
            self.elf_module(kind)
        };
        self.generation += 1;
        self.processes.entry(pid).or_default().insert(Mapping {
            start,
            end,
            pgoff,
            module,
        });
    }

    /// The same file mapped twice (or first without, then with, its executable page offset)
    /// is one module.
    fn elf_module(&mut self, kind: ModuleKind) -> ModuleId {
        let ModuleKind::Elf {
            path,
            build_id,
            exec_pgoff,
        } = &kind
        else {
            return self.module(kind);
        };
        let base = ModuleKind::Elf {
            path: path.clone(),
            build_id: build_id.clone(),
            exec_pgoff: None,
        };
        if let Some(&id) = self.module_index.get(&base) {
            if exec_pgoff.is_some()
                && let ModuleKind::Elf {
                    exec_pgoff: slot, ..
                } = &mut self.modules[id as usize]
                && slot.is_none()
            {
                *slot = *exec_pgoff;
            }
            return id;
        }
        let id = self.module(kind);
        self.module_index.insert(base, id);
        id
    }

    fn module(&mut self, kind: ModuleKind) -> ModuleId {
        if let Some(&id) = self.module_index.get(&kind) {
            return id;
        }
        let id = self.modules.len() as ModuleId;
        self.modules.push(kind.clone());
        self.module_index.insert(kind, id);
        id
    }

    fn kernel_module(&mut self, text: Option<u64>) -> ModuleId {
        if let Some(id) = self.kernel_module {
            if text.is_some()
                && let ModuleKind::Kernel { text: slot, .. } = &mut self.modules[id as usize]
            {
                *slot = text;
            }
            return id;
        }
        let build_id = self.build_ids.get(&DsoKey::Kernel).cloned();
        let id = self.modules.len() as ModuleId;
        self.modules.push(ModuleKind::Kernel { build_id, text });
        self.kernel_module = Some(id);
        id
    }

    fn sample(&mut self, s: &SampleEvent, key: Option<&[u8]>, hash: u64, little: bool) {
        self.samples += 1;
        // most samples repeat a (thread, callchain) seen before under the same maps: one
        // lookup of the key (hashed by the decoding thread) finds its row
        let row = match key {
            Some(key) => {
                if self.chain_generation != self.generation {
                    self.chain_cache.clear();
                    self.chain_generation = self.generation;
                }
                match self.chain_cache.get(hash, key) {
                    Some(row) => row,
                    None => {
                        let chain = &key[CHAIN_KEY_PREFIX..];
                        let stack = self.raw_stack(s.pid, s.kernel, s.ip, Some(chain), little);
                        let row = self.row_for(stack, s.tid);
                        self.chain_cache.insert(hash, key, row);
                        row
                    }
                }
            }
            None => {
                let stack = self.raw_stack(s.pid, s.kernel, s.ip, None, little);
                self.row_for(stack, s.tid)
            }
        };
        let base = row as usize * self.n_types;
        let ty = self.attr_type.get(s.attr).copied().unwrap_or(0);
        let period = s.period.unwrap_or(1);
        self.values[base + ty] = self.values[base + ty].saturating_add(u128::from(period));
        self.values[base + self.samples_type] += 1;
    }

    /// Resolves a sample's addresses to raw frames and interns the stack they make.
    fn raw_stack(
        &mut self,
        pid: i32,
        kernel: bool,
        ip: Option<u64>,
        chain: Option<&[u8]>,
        little: bool,
    ) -> u32 {
        let mut kernel = kernel;
        self.stack_buf.clear();
        let mut first_in_context = true;
        match chain {
            Some(chain) => {
                for word in chain.chunks_exact(8) {
                    let word: [u8; 8] = word.try_into().unwrap_or_default();
                    let addr = if little {
                        u64::from_le_bytes(word)
                    } else {
                        u64::from_be_bytes(word)
                    };
                    if addr >= PERF_CONTEXT_MAX {
                        match addr {
                            PERF_CONTEXT_KERNEL | PERF_CONTEXT_GUEST_KERNEL | PERF_CONTEXT_HV => {
                                kernel = true
                            }
                            PERF_CONTEXT_USER | PERF_CONTEXT_GUEST_USER => kernel = false,
                            _ => {}
                        }
                        first_in_context = true;
                        continue;
                    }
                    let lookup = if first_in_context {
                        addr
                    } else {
                        addr.saturating_sub(1)
                    };
                    first_in_context = false;
                    let frame = self.raw_frame(pid, lookup, kernel);
                    self.stack_buf.push(frame);
                }
            }
            None => {
                if let Some(ip) = ip {
                    let frame = self.raw_frame(pid, ip, kernel || is_kernel_address(ip));
                    self.stack_buf.push(frame);
                }
            }
        }
        self.raw_stacks.intern(&self.stack_buf)
    }

    fn row_for(&mut self, stack: u32, tid: Option<i32>) -> u32 {
        let thread = tid.and_then(|t| self.comms.get(&t).copied());
        let next = self.row_keys.len() as u32;
        let row = *self.rows.entry((stack, thread)).or_insert(next);
        if row == next {
            self.row_keys.push((stack, thread));
            self.values.extend(std::iter::repeat_n(0, self.n_types));
        }
        row
    }

    /// The raw frame of an address, through a small direct-mapped cache: the same few
    /// thousand (pid, address) pairs recur in almost every sample, and the cache turns the map
    /// search and the hash lookup into one comparison. Any map change invalidates it.
    fn raw_frame(&mut self, pid: i32, addr: u64, kernel: bool) -> u32 {
        let slot = cache_slot(pid, addr, kernel);
        let e = self.frame_cache[slot];
        if e.addr == addr && e.pid == pid && e.kernel == kernel && e.generation == self.generation {
            return e.raw;
        }
        let raw = self.resolve_raw_frame(pid, addr, kernel);
        self.frame_cache[slot] = CacheEntry {
            addr,
            pid,
            kernel,
            generation: self.generation,
            raw,
        };
        raw
    }

    fn resolve_raw_frame(&mut self, pid: i32, addr: u64, kernel: bool) -> u32 {
        let (module, key) = if kernel || is_kernel_address(addr) {
            let module = self
                .kernel
                .find(addr)
                .map(|m| m.module)
                .or(self.kernel_module)
                .unwrap_or_else(|| self.kernel_module(None));
            (module, addr)
        } else {
            match self.processes.get(&pid).and_then(|p| p.find(addr)) {
                Some(m) => match self.modules[m.module as usize] {
                    ModuleKind::Jit { .. } => (m.module, addr),
                    _ => (m.module, addr - m.start + m.pgoff),
                },
                None => (NO_MODULE, 0),
            }
        };
        let next = self.raw_frame_list.len() as u32;
        let id = *self.raw_frames.entry((module, key)).or_insert(next);
        if id == next {
            self.raw_frame_list.push((module, key));
        }
        id
    }

    /// Symbolises every distinct (module, address) and builds the profile.
    fn finish(mut self, sample_types: Vec<SampleType>, options: &ReadOptions) -> Result<Profile> {
        self.late_build_ids();
        if self.samples == 0 {
            return Err(Error::input(
                self.path,
                Position::Whole,
                "no samples in this perf.data",
            ));
        }
        // per module: its distinct addresses, ascending
        let mut per_module: Vec<Vec<u64>> = vec![Vec::new(); self.modules.len()];
        for &(m, a) in &self.raw_frame_list {
            if m != NO_MODULE {
                per_module[m as usize].push(a);
            }
        }
        let requests: Vec<ModuleRequest> = self
            .modules
            .iter()
            .zip(per_module)
            .map(|(kind, mut addresses)| {
                addresses.sort_unstable();
                addresses.dedup();
                ModuleRequest {
                    kind: kind.clone(),
                    addresses,
                }
            })
            .collect();
        let mut results = symbolize::symbolize(&requests, &options.symbols);

        let mut profile = Profile::new(sample_types);
        // every module's frames, interned once, in one arena; each raw frame is a span of it
        let mut flat: Vec<FrameId> = Vec::new();
        let mut spans: Vec<Vec<(u32, u32)>> = Vec::with_capacity(results.len());
        for result in results.iter_mut() {
            let frames = std::mem::take(&mut result.frames);
            let mut module_spans = Vec::with_capacity(frames.len());
            for address_frames in frames {
                let start = flat.len() as u32;
                flat.extend(address_frames.into_iter().map(|f| profile.intern_frame(f)));
                module_spans.push((start, flat.len() as u32 - start));
            }
            spans.push(module_spans);
        }
        let unknown_span = (flat.len() as u32, 1);
        flat.push(
            profile.intern_frame(Frame::named("[unknown]", crate::model::FrameKind::Unknown)),
        );
        let raw_span: Vec<(u32, u32)> = self
            .raw_frame_list
            .iter()
            .map(|&(m, a)| {
                if m == NO_MODULE {
                    return unknown_span;
                }
                let i = requests[m as usize]
                    .addresses
                    .binary_search(&a)
                    .unwrap_or(0);
                spans[m as usize].get(i).copied().unwrap_or(unknown_span)
            })
            .collect();
        let mut thread_map: FxHashMap<ThreadId, ThreadId> = FxHashMap::default();
        let mut missing_cost: Vec<u64> = vec![0; self.modules.len()];
        let mut buf = Vec::new();
        let mut seen = Vec::new();
        // rows share raw stacks (one per thread): each raw stack becomes a stack once
        let mut stack_ids: Vec<Option<crate::model::StackId>> = vec![None; self.raw_stacks.len()];
        for (row, &(stack, thread)) in self.row_keys.iter().enumerate() {
            seen.clear();
            for &raw in self.raw_stacks.get(stack) {
                let m = self.raw_frame_list[raw as usize].0;
                if m != NO_MODULE && results[m as usize].missing.is_some() && !seen.contains(&m) {
                    seen.push(m);
                }
            }
            let values = &self.values[row * self.n_types..(row + 1) * self.n_types];
            for &m in &seen {
                missing_cost[m as usize] += values[self.samples_type] as u64;
            }
            let stack_id = match stack_ids[stack as usize] {
                Some(id) => id,
                None => {
                    buf.clear();
                    for &raw in self.raw_stacks.get(stack) {
                        let (start, len) = raw_span[raw as usize];
                        buf.extend_from_slice(&flat[start as usize..(start + len) as usize]);
                    }
                    let id = profile.intern_stack(&buf);
                    stack_ids[stack as usize] = Some(id);
                    id
                }
            };
            let thread_id = thread.map(|t| {
                *thread_map
                    .entry(t)
                    .or_insert_with(|| profile.intern_thread(self.threads.get(t.0)))
            });
            profile.add_sample(stack_id, thread_id, values);
        }
        self.report(&mut profile, &requests, &results, &missing_cost);
        Ok(profile)
    }

    fn report(
        &self,
        profile: &mut Profile,
        requests: &[ModuleRequest],
        results: &[symbolize::ModuleResult],
        missing_cost: &[u64],
    ) {
        let shown = self.path.display();
        profile.meta.notes.push(format!(
            "{} samples, {} distinct addresses in {} modules",
            self.samples,
            self.raw_frame_list.len(),
            requests.iter().filter(|r| !r.addresses.is_empty()).count()
        ));
        if self.lost > 0 {
            profile.meta.warnings.push(format!(
                "{shown}: perf lost {} events (LOST records): the kernel's buffer overflowed; \
                 shares are of the samples that were kept",
                self.lost
            ));
        }
        let mut missing: Vec<(u64, String)> = requests
            .iter()
            .zip(results)
            .zip(missing_cost)
            .filter_map(|((req, res), &cost)| {
                let reason = res.missing.as_ref()?;
                (!req.addresses.is_empty()).then(|| {
                    (
                        cost,
                        format!("{} ({reason}; {cost} samples)", req.kind.display_name()),
                    )
                })
            })
            .collect();
        missing.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        if !missing.is_empty() {
            let list: Vec<&str> = missing.iter().map(|(_, s)| s.as_str()).collect();
            profile.meta.warnings.push(format!(
                "{shown}: no symbols for {} module(s), their frames are [unknown]: {}. Point \
                 whose at the files with --binary-path DIR, --symfs DIR, --kallsyms FILE or \
                 --jit-map-dir DIR",
                missing.len(),
                list.join(", ")
            ));
        }
        for res in results {
            for w in &res.warnings {
                profile.meta.warnings.push(w.clone());
            }
        }
    }
}

/// A record as the reader uses it, owned, so that decoding can run on another thread.
enum Event {
    Sample {
        attr: usize,
        pid: i32,
        tid: Option<i32>,
        period: Option<u64>,
        kernel: bool,
        ip: Option<u64>,
        /// The cache key in the batch's `chains`: pid, tid, mode byte, then the callchain's
        /// raw bytes (file byte order).
        chain: Option<std::ops::Range<usize>>,
        /// FxHash of the key.
        hash: u64,
    },
    Mmap {
        pid: i32,
        start: u64,
        len: u64,
        pgoff: u64,
        mode: CpuMode,
        path: String,
        build_id: Option<Vec<u8>>,
        exec: bool,
    },
    Comm {
        pid: i32,
        tid: i32,
        name: String,
        exec: bool,
    },
    Fork {
        pid: i32,
        ppid: i32,
        tid: i32,
        ptid: i32,
    },
    Lost(u64),
    BuildId(DsoKey, Vec<u8>),
}

#[derive(Default)]
struct Batch {
    events: Vec<Event>,
    chains: Vec<u8>,
}

const BATCH_EVENTS: usize = 4096;

/// The decoding thread: records → batches of events, in time order; stops at the first error
/// (sent on) or when the consumer has gone.
fn decode_all<R: Read>(
    mut perf_file: linux_perf_data::PerfFile,
    mut iter: linux_perf_data::PerfRecordIter<R>,
    path: &Path,
    tx: std::sync::mpsc::SyncSender<Result<Batch>>,
    back: std::sync::mpsc::Receiver<Batch>,
) {
    let mut records = 0u64;
    let mut samples = 0u64;
    let mut batch = Batch::default();
    loop {
        let record = match iter.next_record(&mut perf_file) {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                let _ = tx.send(Err(Error::input(
                    path,
                    Position::Whole,
                    format!(
                        "truncated or corrupt perf.data after {records} records ({samples} \
                         samples): {e}"
                    ),
                )));
                return;
            }
        };
        records += 1;
        let decoded = match record {
            PerfFileRecord::EventRecord { attr_index, record } => {
                decode_event(attr_index, &record, &mut batch)
            }
            PerfFileRecord::UserRecord(r)
                if r.record_type == UserRecordType::PERF_HEADER_BUILD_ID =>
            {
                if let Some((key, id)) = parse_build_id_record(&r.data.as_slice(), r.misc) {
                    batch.events.push(Event::BuildId(key, id));
                }
                Ok(())
            }
            PerfFileRecord::UserRecord(_) => Ok(()),
        };
        if let Err((what, e)) = decoded {
            let _ = tx.send(Err(Error::input(
                path,
                Position::Whole,
                format!("corrupt {what} record (record #{records}): {e}"),
            )));
            return;
        }
        if matches!(batch.events.last(), Some(Event::Sample { .. })) {
            samples += 1;
        }
        if batch.events.len() >= BATCH_EVENTS {
            let next = back.try_recv().unwrap_or_default();
            if tx.send(Ok(std::mem::replace(&mut batch, next))).is_err() {
                return;
            }
        }
    }
    let _ = tx.send(Ok(batch));
}

/// One kernel record into the batch; `Err((record kind, reason))` when it is corrupt.
fn decode_event(
    attr: usize,
    record: &linux_perf_data::linux_perf_event_reader::RawEventRecord<'_>,
    batch: &mut Batch,
) -> std::result::Result<(), (&'static str, String)> {
    let data = record.data.as_slice();
    // checks the parser would otherwise turn into a panic
    if record.record_type == RecordType::MMAP2
        && record.misc & PERF_RECORD_MISC_MMAP_BUILD_ID != 0
        && data.get(32).is_some_and(|&n| n > 20)
    {
        return Err(("MMAP2", "build id longer than 20 bytes".into()));
    }
    if record.record_type == RecordType::SAMPLE {
        // decoded here rather than by the library: only the fields whose uses, and every
        // length checked
        let s = decode_sample(&data, &record.parse_info).map_err(|e| ("SAMPLE", e))?;
        let pid = s.pid.unwrap_or(-1);
        let kernel = matches!(
            CpuMode::from_misc(record.misc),
            CpuMode::Kernel | CpuMode::GuestKernel
        );
        // the cache key the folding thread looks the sample up by, hashed here where there
        // is time: pid, tid, mode, then the callchain itself
        let mut hash = 0;
        let chain = s.chain.map(|r| {
            let start = batch.chains.len();
            batch.chains.extend_from_slice(&pid.to_le_bytes());
            batch
                .chains
                .extend_from_slice(&s.tid.unwrap_or(-1).to_le_bytes());
            batch.chains.push(kernel as u8);
            batch.chains.extend_from_slice(&data[r]);
            let key = start..batch.chains.len();
            let mut h = rustc_hash::FxHasher::default();
            std::hash::Hasher::write(&mut h, &batch.chains[key.clone()]);
            hash = std::hash::Hasher::finish(&h);
            key
        });
        batch.events.push(Event::Sample {
            attr,
            pid,
            tid: s.tid,
            period: s.period,
            kernel,
            ip: s.ip,
            chain,
            hash,
        });
        return Ok(());
    }
    let parsed = record.parse().map_err(|e| ("event", e.to_string()))?;
    let event = match parsed {
        EventRecord::Mmap(m) => Event::Mmap {
            pid: m.pid,
            start: m.address,
            len: m.length,
            pgoff: m.page_offset,
            mode: m.cpu_mode,
            path: String::from_utf8_lossy(&m.path.as_slice()).into_owned(),
            build_id: None,
            exec: m.is_executable,
        },
        EventRecord::Mmap2(m) => Event::Mmap {
            pid: m.pid,
            start: m.address,
            len: m.length,
            pgoff: m.page_offset,
            mode: m.cpu_mode,
            path: String::from_utf8_lossy(&m.path.as_slice()).into_owned(),
            build_id: match &m.file_id {
                Mmap2FileId::BuildId(b) => Some(b.clone()),
                Mmap2FileId::InodeAndVersion(_) => None,
            },
            exec: m.protection & 4 != 0,
        },
        EventRecord::Comm(c) => Event::Comm {
            pid: c.pid,
            tid: c.tid,
            name: String::from_utf8_lossy(&c.name.as_slice()).into_owned(),
            exec: c.is_execve,
        },
        EventRecord::Fork(f) => Event::Fork {
            pid: f.pid,
            ppid: f.ppid,
            tid: f.tid,
            ptid: f.ptid,
        },
        EventRecord::Lost(l) => Event::Lost(l.count),
        EventRecord::Sample(_) => return Ok(()),
        _ => return Ok(()),
    };
    batch.events.push(event);
    Ok(())
}

impl Reader<'_> {
    /// Pipe-mode recordings send their build ids as records, usually after the mappings
    /// that need them: fill in what the mappings lacked.
    fn late_build_ids(&mut self) {
        for kind in &mut self.modules {
            match kind {
                ModuleKind::Elf { path, build_id, .. } if build_id.is_none() => {
                    *build_id = DsoKey::detect(path.as_bytes(), CpuMode::User)
                        .and_then(|k| self.build_ids.get(&k).cloned());
                }
                ModuleKind::Kernel { build_id, .. } if build_id.is_none() => {
                    *build_id = self.build_ids.get(&DsoKey::Kernel).cloned();
                }
                _ => {}
            }
        }
    }
}

/// `PERF_RECORD_HEADER_BUILD_ID`: pid, 24 build-id bytes (length in byte 20 when misc says
/// so, else trailing zero words dropped), then the path.
fn parse_build_id_record(data: &[u8], misc: u16) -> Option<(DsoKey, Vec<u8>)> {
    const PERF_RECORD_MISC_BUILD_ID_SIZE: u16 = 1 << 15;
    let raw = data.get(4..28)?;
    let len = if misc & PERF_RECORD_MISC_BUILD_ID_SIZE != 0 {
        usize::from(raw[20]).min(20)
    } else {
        let mut len = 20;
        while len >= 4 && raw[len - 4..len].iter().all(|&b| b == 0) {
            len -= 4;
        }
        len
    };
    let path = &data[28..];
    let path = &path[..path.iter().position(|&b| b == 0).unwrap_or(path.len())];
    let key = DsoKey::detect(path, CpuMode::from_misc(misc))?;
    (len > 0).then(|| (key, raw[..len].to_vec()))
}

/// Anonymous executable memory, where JIT compilers put their code.
fn is_anon(path: &str) -> bool {
    path == "//anon"
        || path.starts_with("[anon")
        || path.starts_with("/memfd:")
        || path.starts_with("/dev/zero")
        || path.starts_with("/anon_hugepage")
        || path.is_empty()
}

/// Mappings that are never code worth symbolising (`[heap]`, `[stack]`, `[vvar]`).
fn is_pseudo(path: &str) -> bool {
    matches!(path, "[heap]" | "[stack]" | "[vvar]" | "[vsyscall]")
}

/// The fields of a SAMPLE record whose uses.
#[derive(Debug, Default, PartialEq, Eq)]
struct SampleFields {
    ip: Option<u64>,
    pid: Option<i32>,
    tid: Option<i32>,
    period: Option<u64>,
    /// Where the callchain's entries are in the record.
    chain: Option<std::ops::Range<usize>>,
}

/// Reads a SAMPLE record's fields up to its callchain (the layout `perf_event_open(2)`
/// gives for the attribute's sample format), checking every length against the record, so
/// that no lying count reaches an allocation or a multiplication.
fn decode_sample(
    data: &[u8],
    info: &linux_perf_data::linux_perf_event_reader::RecordParseInfo,
) -> std::result::Result<SampleFields, String> {
    use linux_perf_data::linux_perf_event_reader::ReadFormat;
    let f = info.sample_format;
    let little = matches!(info.endian, linux_perf_data::Endianness::LittleEndian);
    let read_u64 = |at: usize| -> std::result::Result<u64, String> {
        let b: [u8; 8] = data
            .get(at..at + 8)
            .and_then(|s| s.try_into().ok())
            .ok_or("record ends inside its fixed fields")?;
        Ok(if little {
            u64::from_le_bytes(b)
        } else {
            u64::from_be_bytes(b)
        })
    };
    let mut out = SampleFields::default();
    let mut at = 0usize;
    let field = |flag: SampleFormat, at: &mut usize| -> std::result::Result<Option<u64>, String> {
        if !f.contains(flag) {
            return Ok(None);
        }
        let v = read_u64(*at)?;
        *at += 8;
        Ok(Some(v))
    };
    field(SampleFormat::IDENTIFIER, &mut at)?;
    out.ip = field(SampleFormat::IP, &mut at)?;
    if let Some(v) = field(SampleFormat::TID, &mut at)? {
        // two u32 in file order: pid then tid
        let (first, second) = (v as u32, (v >> 32) as u32);
        let (pid, tid) = if little {
            (first, second)
        } else {
            (second, first)
        };
        out.pid = Some(pid as i32);
        out.tid = Some(tid as i32);
    }
    for flag in [
        SampleFormat::TIME,
        SampleFormat::ADDR,
        SampleFormat::ID,
        SampleFormat::STREAM_ID,
        SampleFormat::CPU,
    ] {
        field(flag, &mut at)?;
    }
    out.period = field(SampleFormat::PERIOD, &mut at)?;
    if f.contains(SampleFormat::READ) {
        let rf = info.read_format;
        let times = rf.contains(ReadFormat::TOTAL_TIME_ENABLED) as u64
            + rf.contains(ReadFormat::TOTAL_TIME_RUNNING) as u64;
        let per_value = 1 + rf.contains(ReadFormat::ID) as u64;
        let words = if rf.contains(ReadFormat::GROUP) {
            // nr, times, nr × (value, id)
            let nr = read_u64(at)?;
            nr.checked_mul(per_value)
                .and_then(|n| n.checked_add(1 + times))
                .ok_or("read values overflow")?
        } else {
            per_value + times
        };
        let bytes = words.checked_mul(8).ok_or("read values overflow")?;
        if bytes > (data.len() - at.min(data.len())) as u64 {
            return Err("read values larger than the record".into());
        }
        at += bytes as usize;
    }
    if f.contains(SampleFormat::CALLCHAIN) {
        let nr = read_u64(at)?;
        let bytes = nr.checked_mul(8).ok_or("callchain length overflows")?;
        if bytes > (data.len() - at - 8) as u64 {
            return Err(format!(
                "callchain of {nr} entries does not fit in the {}-byte record (truncated callchain)",
                data.len()
            ));
        }
        out.chain = Some((at + 8)..(at + 8 + bytes as usize));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_mappings_replace_the_overlapped_part() {
        let mut p = Process::default();
        p.insert(Mapping {
            start: 0x1000,
            end: 0x5000,
            pgoff: 0,
            module: 1,
        });
        p.insert(Mapping {
            start: 0x2000,
            end: 0x3000,
            pgoff: 0,
            module: 2,
        });
        assert_eq!(p.find(0x1500).unwrap().module, 1);
        assert_eq!(p.find(0x2500).unwrap().module, 2);
        let tail = p.find(0x4000).unwrap();
        assert_eq!((tail.module, tail.pgoff, tail.start), (1, 0x2000, 0x3000));
        assert!(p.find(0x6000).is_none());
    }

    #[test]
    fn anonymous_memory_is_jit() {
        assert!(is_anon("//anon"));
        assert!(is_anon("[anon:v8]"));
        assert!(!is_anon("/usr/lib/libc.so.6"));
    }
}

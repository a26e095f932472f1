//! Checks before the parser sees the file: the header's sections against the real length,
//! the event descriptions it sizes vectors by, and the record stream as it passes.

use super::*;

/// The file header of file mode (`perf_file_header`): magic, size, attr_size, then the attrs,
/// data and event-types sections (offset, size each) and 256 feature bits.
const FILE_HEADER_SIZE: u64 = 104;

/// Where a recording's records are and how they can be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Layout {
    /// Pipe mode: the records follow the attribute and feature records, to the end.
    pub pipe: bool,
    /// Byte offsets of the records (a file's data section).
    pub records: std::ops::Range<u64>,
    /// File mode without compressed records (`-z`) or simpleperf's layout: readable in place
    /// ([`super::mapped`]).
    pub in_place: bool,
}

/// Checks the header's declared sections against the real length before the parser
/// allocates or seeks by them. Returns where the records are and how they can be read.
pub(super) fn check_header<R: Read + Seek>(r: &mut R, len: u64, path: &Path) -> Result<Layout> {
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
        return Ok(Layout {
            pipe: true,
            records: 16..len,
            in_place: false,
        });
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
    let event_types = section(56);
    for (name, (offset, size)) in [
        ("attributes", section(24)),
        ("data", (data_offset, data_size)),
        ("event types", event_types),
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
    // without event descriptions the parser takes the attributes from the event types
    // section (old perf) or, for simpleperf, the attribute section, whose entries each name
    // a section of event ids that it sizes a vector by
    let has = |bit: usize| header[72 + bit / 8] & (1 << (bit % 8)) != 0;
    if !has(FEATURE_EVENT_DESC) {
        let ids_of = if event_types.1 != 0 {
            Some(("event types", event_types))
        } else if has(FEATURE_SIMPLEPERF_META_INFO) {
            Some(("attributes", section(24)))
        } else {
            None
        };
        if let Some((name, entries)) = ids_of {
            check_id_sections(r, name, entries, attr_size, len)
                .map_err(|e| Error::input(path, Position::Whole, e))?;
        }
    }
    Ok(Layout {
        pipe: false,
        records: data_offset..data_offset + data_size,
        in_place: !has(FEATURE_COMPRESSED) && !has(FEATURE_SIMPLEPERF_META_INFO),
    })
}

const FEATURE_EVENT_DESC: usize = 12;
const FEATURE_COMPRESSED: usize = 27;
const FEATURE_SIMPLEPERF_META_INFO: usize = 129;

/// Each entry of an event types (or simpleperf attribute) section is an attribute followed
/// by the (offset, size) of its event ids, which must lie inside the file.
fn check_id_sections<R: Read + Seek>(
    r: &mut R,
    name: &str,
    (offset, size): (u64, u64),
    attr_size: u64,
    len: u64,
) -> std::result::Result<(), String> {
    let entry_size = attr_size + 16;
    for i in 0..size / entry_size {
        let at = offset + i * entry_size + attr_size;
        let mut ids = [0u8; 16];
        r.seek(SeekFrom::Start(at)).map_err(|e| e.to_string())?;
        r.read_exact(&mut ids).map_err(|e| e.to_string())?;
        let ids_offset = u64::from_le_bytes(ids[..8].try_into().unwrap());
        let ids_size = u64::from_le_bytes(ids[8..].try_into().unwrap());
        let end = ids_offset.saturating_add(ids_size);
        if end > len {
            return Err(format!(
                "truncated perf.data: the event ids of entry {i} of the {name} section (at \
                 byte offset {at}) end at byte {end} but the file has {len} bytes"
            ));
        }
    }
    Ok(())
}

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
            // the parser keeps the low 32 bits of the feature number, so must this check
            let feature = u64::from_le_bytes(body[0..8].try_into().unwrap()) as u32;
            if feature == FEATURE_EVENT_DESC as u32 {
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

/// Where a pipe-mode stream ended inside a record. A pipe has no length to check against (a
/// file's header says where its data ends), so the cut is seen only by following the record
/// headers to the end of input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Cut {
    /// Byte offset of the record that was cut.
    pub record_at: u64,
    /// Its size from its header; `None` when the stream ends inside the header itself.
    pub record_size: Option<u64>,
    /// How many bytes the stream had.
    pub stream_len: u64,
}

/// Shared with the decoding thread, which owns the [`Counting`] reader.
pub(super) type CutProbe = std::sync::Arc<std::sync::Mutex<Option<Cut>>>;

/// Why [`Counting`] failed a read, with the offset of the record at fault: the parser passes
/// on the error of a header read but replaces that of a body read with its own ("error
/// reading event data"), so the reason travels beside it.
pub(super) type Refusal = std::sync::Arc<ReadState>;

/// What [`Counting`] knows about the read that the parser's errors do not say: why it refused
/// one, and where the last record header began, so an error names a byte offset.
#[derive(Debug, Default)]
pub(super) struct ReadState {
    refused: std::sync::Mutex<Option<(u64, String)>>,
    last_record: std::sync::atomic::AtomicU64,
}

impl ReadState {
    /// The refused read's record offset and reason, once.
    pub(super) fn take_refused(&self) -> Option<(u64, String)> {
        self.refused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// Byte offset of the last record header read: a read that failed did so in that record
    /// or the next.
    pub(super) fn last_record(&self) -> u64 {
        self.last_record.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// A compressed record's body, gathered as it streams past.
struct CompressedBody {
    record_at: u64,
    kind: u32,
    len: usize,
    data: Vec<u8>,
}

/// The reader under the parser: counts bytes for the progress bar, and follows the record
/// headers as they stream past to refuse what the parser would size an allocation by without
/// checking: an AUXTRACE record's payload length (whose does not decode AUX data anyway), and
/// what a compressed record inflates to ([`InflationCheck`]).
pub(super) struct Counting<R> {
    inner: R,
    pos: u64,
    /// Set (pipe mode) to report a stream that ends inside a record.
    cut: Option<CutProbe>,
    /// Offset of the record whose header was read last.
    record_at: u64,
    progress: Progress,
    /// Offset of the next record header, while the stream is followed.
    next_header: Option<u64>,
    header: [u8; 8],
    header_fill: usize,
    /// Set to cap what compressed records inflate to.
    inflation: Option<InflationCheck>,
    compressed: Option<CompressedBody>,
    refusal: Refusal,
}

const PERF_RECORD_AUXTRACE: u32 = 71;

impl<R> Counting<R> {
    pub(super) fn new(inner: R, len: Option<u64>, records_at: u64) -> Counting<R> {
        Counting {
            inner,
            pos: 0,
            cut: None,
            record_at: records_at,
            progress: Progress::new(len, "reading perf.data"),
            next_header: Some(records_at),
            header: [0; 8],
            header_fill: 0,
            inflation: None,
            compressed: None,
            refusal: Refusal::default(),
        }
    }

    /// Caps what the compressed records inflate to at `cap` bytes in all (an eighth of that
    /// per record), checked before the parser inflates them.
    pub(super) fn cap_inflation(mut self, cap: u64) -> Counting<R> {
        self.inflation = Some(InflationCheck::new(cap));
        self
    }

    /// Where the reason for a refused read is left.
    pub(super) fn refusal(&self) -> Refusal {
        self.refusal.clone()
    }

    /// Fails the read: the reason goes to [`Refusal`] too.
    fn refuse(&self, record_at: u64, reason: String) -> std::io::Error {
        *self
            .refusal
            .refused
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some((record_at, reason.clone()));
        std::io::Error::new(std::io::ErrorKind::InvalidData, reason)
    }

    /// Reports into `probe` a stream that ends inside a record (for pipe mode, where nothing
    /// else knows where the records end).
    pub(super) fn watch_for_cut(mut self, probe: CutProbe) -> Counting<R> {
        self.cut = Some(probe);
        self
    }

    /// At the end of input: the record the stream stopped inside, if any.
    fn cut_at_end(&self) -> Option<Cut> {
        let next = self.next_header?;
        if self.header_fill > 0 {
            return Some(Cut {
                record_at: next,
                record_size: None,
                stream_len: self.pos,
            });
        }
        (next > self.pos).then_some(Cut {
            record_at: self.record_at,
            record_size: Some(next - self.record_at),
            stream_len: self.pos,
        })
    }

    /// Walks the record headers inside `bytes` (which start at offset `start`), and gathers
    /// and checks the bodies of compressed records.
    fn follow(&mut self, start: u64, bytes: &[u8]) -> std::io::Result<()> {
        let end = start + bytes.len() as u64;
        loop {
            if let Some(body) = &mut self.compressed {
                let want = body.record_at + 8 + body.data.len() as u64;
                if want < start || want >= end {
                    break;
                }
                let i = (want - start) as usize;
                let take = (body.len - body.data.len()).min(bytes.len() - i);
                body.data.extend_from_slice(&bytes[i..i + take]);
                if body.data.len() < body.len {
                    break;
                }
                let body = self.compressed.take().expect("checked above");
                if let Some(check) = &mut self.inflation
                    && let Err(reason) = check.check(body.kind, &body.data)
                {
                    return Err(self.refuse(body.record_at, reason));
                }
                continue;
            }
            let Some(at) = self.next_header else {
                break;
            };
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
            self.record_at = at;
            self.refusal
                .last_record
                .store(at, std::sync::atomic::Ordering::Relaxed);
            self.next_header = Some(at + u64::from(size));
            if (kind == PERF_RECORD_COMPRESSED || kind == PERF_RECORD_COMPRESSED2)
                && self.inflation.is_some()
                && size > 8
            {
                let len = usize::from(size) - 8;
                self.compressed = Some(CompressedBody {
                    record_at: at,
                    kind,
                    len,
                    data: Vec::with_capacity(len),
                });
            }
        }
        Ok(())
    }
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0
            && !buf.is_empty()
            && let Some(probe) = &self.cut
        {
            let cut = self.cut_at_end();
            *probe.lock().unwrap_or_else(|e| e.into_inner()) = cut;
        }
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

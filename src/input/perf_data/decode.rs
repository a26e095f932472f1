//! The decoding thread: records, as the library reads them in time order, into owned
//! batches of the events the folding thread needs.

use super::fold::{is_anon, is_pseudo};
use super::*;
use linux_perf_data::linux_perf_event_reader::RawEventRecord;

/// A record as the reader uses it, owned, so that decoding can run on another thread.
pub(super) enum Event {
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
        /// `--call-graph dwarf`: the user stack, unwound by the decoding thread.
        user: Option<crate::unwind::perf::UserStack>,
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
pub(super) struct Batch {
    pub(super) events: Vec<Event>,
    pub(super) chains: Vec<u8>,
}

const BATCH_EVENTS: usize = 4096;

/// The decoding thread: records → batches of events, in time order; stops at the first error
/// (sent on) or when the consumer has gone.
pub(super) fn decode_all<R: Read>(
    mut perf_file: linux_perf_data::PerfFile,
    mut iter: linux_perf_data::PerfRecordIter<R>,
    path: &Path,
    tx: std::sync::mpsc::SyncSender<Result<Batch>>,
    back: std::sync::mpsc::Receiver<Batch>,
    mut unwind: Option<crate::unwind::perf::PerfUnwind>,
) -> Option<crate::unwind::perf::PerfUnwind> {
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
                return unwind;
            }
        };
        records += 1;
        let decoded = match record {
            PerfFileRecord::EventRecord { attr_index, record } => {
                decode_event(attr_index, &record, &mut batch, unwind.as_mut())
            }
            PerfFileRecord::UserRecord(r)
                if r.record_type == UserRecordType::PERF_HEADER_BUILD_ID =>
            {
                if let Some((key, id)) = parse_build_id_record(&r.data.as_slice(), r.misc) {
                    if let Some(u) = unwind.as_mut() {
                        u.build_id(key.clone(), id.clone());
                    }
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
            return unwind;
        }
        if matches!(batch.events.last(), Some(Event::Sample { .. })) {
            samples += 1;
        }
        if batch.events.len() >= BATCH_EVENTS {
            let next = back.try_recv().unwrap_or_default();
            if tx.send(Ok(std::mem::replace(&mut batch, next))).is_err() {
                return unwind;
            }
        }
    }
    let _ = tx.send(Ok(batch));
    unwind
}

/// One kernel record into the batch; `Err((record kind, reason))` when it is corrupt.
fn decode_event(
    attr: usize,
    record: &linux_perf_data::linux_perf_event_reader::RawEventRecord<'_>,
    batch: &mut Batch,
    unwind: Option<&mut crate::unwind::perf::PerfUnwind>,
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
        return decode_sample_event(attr, record, batch, unwind);
    }
    let parsed = record.parse().map_err(|e| ("event", e.to_string()))?;
    if let Some(u) = unwind {
        unwind_hooks(u, &parsed);
    }
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

/// The cache key the folding thread looks a sample up by — pid, tid, mode byte, then the
/// callchain's raw bytes — appended to the batch, and its hash, computed here where there is
/// time.
fn push_chain_key(
    batch: &mut Batch,
    pid: i32,
    tid: Option<i32>,
    kernel: bool,
    chain: &[u8],
) -> (std::ops::Range<usize>, u64) {
    let start = batch.chains.len();
    batch.chains.extend_from_slice(&pid.to_le_bytes());
    batch
        .chains
        .extend_from_slice(&tid.unwrap_or(-1).to_le_bytes());
    batch.chains.push(kernel as u8);
    batch.chains.extend_from_slice(chain);
    let key = start..batch.chains.len();
    let mut h = rustc_hash::FxHasher::default();
    std::hash::Hasher::write(&mut h, &batch.chains[key.clone()]);
    (key, std::hash::Hasher::finish(&h))
}

/// A SAMPLE, decoded here rather than by the library: only the fields whose uses, and every
/// length checked. With `--call-graph dwarf` events the user stack is unwound here too, on the
/// decoding thread.
fn decode_sample_event(
    attr: usize,
    record: &linux_perf_data::linux_perf_event_reader::RawEventRecord<'_>,
    batch: &mut Batch,
    unwind: Option<&mut crate::unwind::perf::PerfUnwind>,
) -> std::result::Result<(), (&'static str, String)> {
    let data = record.data.as_slice();
    let s = decode_sample(&data, &record.parse_info).map_err(|e| ("SAMPLE", e))?;
    let user = match unwind {
        Some(u) => unwound_user_stack(record, u)?,
        None => None,
    };
    let pid = s.pid.unwrap_or(-1);
    let kernel = matches!(
        CpuMode::from_misc(record.misc),
        CpuMode::Kernel | CpuMode::GuestKernel
    );
    let (chain, hash) = match s.chain {
        Some(r) => {
            let (key, hash) = push_chain_key(batch, pid, s.tid, kernel, &data[r]);
            (Some(key), hash)
        }
        None => (None, 0),
    };
    batch.events.push(Event::Sample {
        attr,
        pid,
        tid: s.tid,
        period: s.period,
        kernel,
        ip: s.ip,
        chain,
        hash,
        user,
    });
    Ok(())
}

/// The unwound user stack of a sample: the library parses the registers and the stack copy
/// the unwinder needs. A user stack whose size field lies is re-read without it, so the rest
/// of the sample is kept (and counted as such).
fn unwound_user_stack(
    record: &linux_perf_data::linux_perf_event_reader::RawEventRecord<'_>,
    unwind: &mut crate::unwind::perf::PerfUnwind,
) -> std::result::Result<Option<crate::unwind::perf::UserStack>, (&'static str, String)> {
    let data = record.data.as_slice();
    let repaired = crate::unwind::record::repair_user_stack(&data, &record.parse_info);
    let fixed = repaired.as_deref().map(|bytes| RawEventRecord {
        data: bytes.into(),
        ..*record
    });
    let parsed = fixed
        .as_ref()
        .unwrap_or(record)
        .parse()
        .map_err(|e| ("event", e.to_string()))?;
    Ok(match parsed {
        EventRecord::Sample(s) => unwind.sample(&s, repaired.is_some()),
        _ => None,
    })
}

/// Keeps the unwinder's process maps in step with the records (decoding thread).
fn unwind_hooks(u: &mut crate::unwind::perf::PerfUnwind, parsed: &EventRecord<'_>) {
    match parsed {
        EventRecord::Mmap(m) => {
            let path = String::from_utf8_lossy(&m.path.as_slice()).into_owned();
            let file = !is_anon(&path) && !is_pseudo(&path);
            u.mmap(
                m.pid,
                m.address,
                m.length,
                m.page_offset,
                m.cpu_mode,
                &path,
                None,
                m.is_executable,
                file,
            );
        }
        EventRecord::Mmap2(m) => {
            let path = String::from_utf8_lossy(&m.path.as_slice()).into_owned();
            let file = !is_anon(&path) && !is_pseudo(&path);
            let build_id = match &m.file_id {
                Mmap2FileId::BuildId(b) => Some(b.as_slice()),
                Mmap2FileId::InodeAndVersion(_) => None,
            };
            u.mmap(
                m.pid,
                m.address,
                m.length,
                m.page_offset,
                m.cpu_mode,
                &path,
                build_id,
                m.protection & 4 != 0,
                file,
            );
        }
        EventRecord::Fork(f) if f.pid != f.ppid => u.fork(f.ppid, f.pid),
        EventRecord::Comm(c) if c.is_execve && c.pid == c.tid => u.exec(c.pid),
        _ => {}
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

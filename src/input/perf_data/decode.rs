//! The decoding thread: records, as the library reads them in time order, into owned
//! batches of the events the folding thread needs.

use super::fault::ReadFault;
use super::mapped::MappedRecords;
use super::*;
use linux_perf_data::linux_perf_event_reader::RawEventRecord;

/// The sample fields the folding thread uses.
#[derive(Debug, Clone, Copy)]
pub(super) struct SampleEvent {
    pub attr: usize,
    pub pid: i32,
    pub tid: Option<i32>,
    /// Nanoseconds, for `--time`.
    pub time: Option<u64>,
    pub period: Option<u64>,
    pub kernel: bool,
    pub ip: Option<u64>,
}

/// A record as the reader uses it, owned, so that decoding can run on another thread.
pub(super) enum Event {
    Sample {
        sample: SampleEvent,
        /// The callchain's raw bytes (file byte order).
        chain: Option<ChainBytes>,
        /// The identity of (pid, mode, callchain) in the folding thread's cache.
        hash: ChainHash,
        /// `--call-graph dwarf`: the user registers and stack copy, for the folding thread's
        /// unwinder.
        user: Option<UserCopy>,
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
    /// LOST: events dropped because the ring buffer was full.
    Lost(u64),
    /// LOST_SAMPLES: samples the kernel could not write.
    LostSamples(u64),
    /// THROTTLE: the kernel stopped sampling an event for the rest of a tick.
    Throttle,
    BuildId(DsoKey, Vec<u8>),
}

/// An [`Event::Mmap`] of an MMAP or MMAP2 record (two types with the same fields), with what
/// only MMAP2 records say: the build id, and whether the mapping is executable (a flag of
/// MMAP's, a protection bit of MMAP2's).
macro_rules! mmap_event {
    ($m:expr, $build_id:expr, $exec:expr) => {
        Event::Mmap {
            pid: $m.pid,
            start: $m.address,
            len: $m.length,
            pgoff: $m.page_offset,
            mode: $m.cpu_mode,
            path: String::from_utf8_lossy(&$m.path.as_slice()).into_owned(),
            build_id: $build_id,
            exec: $exec,
        }
    };
}

/// A DWARF sample's user registers and the valid part of its stack copy: only those bytes
/// cross to the folding thread (the kernel fills up to where the thread's stack ends, on the
/// benchmark 2.5 KiB of the 4 KiB copied).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct UserCopy {
    /// Sampled in user mode (the ip is a user address).
    pub(super) user_mode: bool,
    /// The record has user registers (ABI not `NONE`).
    pub(super) has_regs: bool,
    pub(super) regs: Option<crate::unwind::UserRegs>,
    /// The valid stack bytes, in the batch's `stacks`.
    pub(super) stack: std::ops::Range<usize>,
    /// The record's `size` (bytes copied) and `dyn_size` (bytes filled).
    pub(super) size: u64,
    pub(super) dynamic_size: u64,
    /// The stack size field was larger than the record: the stack was dropped.
    pub(super) bad_record: bool,
}

#[derive(Default)]
pub(super) struct Batch {
    pub(super) events: Vec<Event>,
    pub(super) chains: Vec<u8>,
    pub(super) stacks: Vec<u8>,
    /// Records read in place: every record before this offset of the source is in this
    /// batch or an earlier one, so once it is folded the pages before it can go.
    pub(super) handed_out: Option<usize>,
}

const BATCH_EVENTS: usize = 4096;
/// Stack bytes per batch: DWARF samples carry kilobytes each, and a batch the other core
/// reads while it is still in cache is worth more than fewer hand-overs.
const BATCH_STACK_BYTES: usize = 256 << 10;

/// The records in time order: read in place ([`MappedRecords`]), or through the library's
/// iterator (pipe mode, compressed records, simpleperf's layout).
pub(super) enum Records<'b> {
    InPlace(Box<MappedRecords<'b>>),
    Library(Box<LibraryRecords<'b>>),
}

/// The library's iterator over a reader that caps inflation, and what that reader refused.
pub(super) struct LibraryRecords<'b> {
    pub(super) file: linux_perf_data::PerfFile,
    pub(super) iter: linux_perf_data::PerfRecordIter<Counting<Cursor<&'b [u8]>>>,
    pub(super) refusal: Refusal,
}

impl Records<'_> {
    /// See [`Batch::handed_out`].
    fn handed_out(&self) -> Option<usize> {
        match self {
            Records::InPlace(records) => Some(records.handed_out()),
            Records::Library(_) => None,
        }
    }

    fn next_record(&mut self) -> std::result::Result<Option<PerfFileRecord<'_>>, ReadFault> {
        let library = match self {
            Records::InPlace(records) => return records.next_record(),
            Records::Library(library) => library,
        };
        let LibraryRecords {
            file,
            iter,
            refusal,
        } = &mut **library;
        iter.next_record(file)
            .map_err(|e| match refusal.take_refused() {
                Some((at, reason)) => ReadFault {
                    at,
                    reason,
                    refused: true,
                    exact: true,
                },
                None => ReadFault {
                    at: refusal.last_record(),
                    reason: e.to_string(),
                    refused: false,
                    exact: false,
                },
            })
    }
}

/// The decoding thread: records → batches of events, in time order; stops at the first error
/// (sent on) or when the consumer has gone. `source`: the bytes records are read in place
/// from, if they are (their callchains are not copied).
pub(super) fn decode_all(
    mut records: Records<'_>,
    source: &[u8],
    path: &Path,
    tx: std::sync::mpsc::SyncSender<Result<Batch>>,
    back: std::sync::mpsc::Receiver<Batch>,
) {
    let mut read = 0u64;
    let mut samples = 0u64;
    let mut batch = Batch::default();
    loop {
        let record = match records.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(fault) => {
                let _ = tx.send(Err(fault.into_error(path, read, samples)));
                return;
            }
        };
        read += 1;
        let decoded = match record {
            PerfFileRecord::EventRecord { attr_index, record } => {
                decode_event(attr_index, &record, source, &mut batch)
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
                format!("corrupt {what} record (record #{read}): {e}"),
            )));
            return;
        }
        if matches!(batch.events.last(), Some(Event::Sample { .. })) {
            samples += 1;
        }
        if batch.events.len() >= BATCH_EVENTS || batch.stacks.len() >= BATCH_STACK_BYTES {
            batch.handed_out = records.handed_out();
            let next = back.try_recv().unwrap_or_default();
            if tx.send(Ok(std::mem::replace(&mut batch, next))).is_err() {
                return;
            }
        }
    }
    batch.handed_out = records.handed_out();
    let _ = tx.send(Ok(batch));
}

/// What decoding one record into the batch gives: `Err((record kind, reason))` when the
/// record is corrupt.
type Decoded = std::result::Result<(), (&'static str, String)>;

/// One kernel record into the batch.
fn decode_event(
    attr: usize,
    record: &RawEventRecord<'_>,
    source: &[u8],
    batch: &mut Batch,
) -> Decoded {
    let data = record.data.as_slice();
    // checks the parser would otherwise turn into a panic
    if record.record_type == RecordType::MMAP2
        && record.misc & PERF_RECORD_MISC_MMAP_BUILD_ID != 0
        && data.get(32).is_some_and(|&n| n > 20)
    {
        return Err(("MMAP2", "build id longer than 20 bytes".into()));
    }
    if record.record_type == RecordType::SAMPLE {
        return decode_sample_event(attr, record, source, batch);
    }
    let parsed = record.parse().map_err(|e| ("event", e.to_string()))?;
    let event = match parsed {
        EventRecord::Mmap(m) => mmap_event!(m, None, m.is_executable),
        EventRecord::Mmap2(m) => {
            let build_id = match &m.file_id {
                Mmap2FileId::BuildId(b) => Some(b.clone()),
                Mmap2FileId::InodeAndVersion(_) => None,
            };
            mmap_event!(m, build_id, m.protection & 4 != 0)
        }
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
        EventRecord::Throttle(_) => Event::Throttle,
        // the library has no parser for it: the lost count is its first word
        EventRecord::Raw(r) if r.record_type == RecordType::LOST_SAMPLES => {
            let lost = r.data.as_slice().get(..8).map_or(0, |w| {
                let w: [u8; 8] = w.try_into().unwrap_or_default();
                match r.parse_info.endian {
                    linux_perf_data::Endianness::LittleEndian => u64::from_le_bytes(w),
                    linux_perf_data::Endianness::BigEndian => u64::from_be_bytes(w),
                }
            });
            Event::LostSamples(lost)
        }
        EventRecord::Sample(_) => return Ok(()),
        _ => return Ok(()),
    };
    batch.events.push(event);
    Ok(())
}

/// Where a sample's callchain bytes are: in the bytes the records are read in place from
/// (the file's map), or copied into the batch (records the library's iterator read into
/// buffers of its own). Read in place, the decoding thread copies nothing; only a chain new
/// to the folding thread's cache is read there again.
#[derive(Clone, Debug)]
pub(super) enum ChainBytes {
    Source(std::ops::Range<usize>),
    Batch(std::ops::Range<usize>),
}

/// A callchain key's identity: the 128-bit XXH3 of the callchain, seeded with its pid and
/// mode, in two halves (the first places it in the table, the second tells keys of one place
/// apart). The folding thread's cache keeps no key bytes and compares none: two distinct keys
/// of one recording share a hash with a probability of about n² / 2^129 — for a million
/// distinct chains about 10^-27, far below the odds of the memory holding them flipping a
/// bit — and the inputs are trusted to be adversarial only in size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct ChainHash {
    pub home: u64,
    pub check: u64,
}

impl ChainHash {
    pub(super) fn of(pid: i32, kernel: bool, chain: &[u8]) -> ChainHash {
        let seed = (u64::from(pid as u32) << 1) | u64::from(kernel);
        let hash = twox_hash::XxHash3_128::oneshot_with_seed(seed, chain);
        ChainHash {
            home: hash as u64,
            check: (hash >> 64) as u64,
        }
    }
}

/// Where `chain` is — in `source` when it is a part of it, else copied into the batch — and
/// the hash the folding thread looks it up by, computed here where there is time.
pub(super) fn chain_key(
    batch: &mut Batch,
    source: &[u8],
    pid: i32,
    kernel: bool,
    chain: &[u8],
) -> (ChainBytes, ChainHash) {
    let hash = ChainHash::of(pid, kernel, chain);
    let at = (chain.as_ptr() as usize).wrapping_sub(source.as_ptr() as usize);
    if at <= source.len() && chain.len() <= source.len() - at {
        return (ChainBytes::Source(at..at + chain.len()), hash);
    }
    let start = batch.chains.len();
    batch.chains.extend_from_slice(chain);
    (ChainBytes::Batch(start..batch.chains.len()), hash)
}

/// A SAMPLE, decoded here rather than by the library: only the fields whose uses, and every
/// length checked. With `--call-graph dwarf` events the valid part of the user stack copy is
/// handed on for unwinding.
fn decode_sample_event(
    attr: usize,
    record: &RawEventRecord<'_>,
    source: &[u8],
    batch: &mut Batch,
) -> Decoded {
    let data = record.data.as_slice();
    let s = decode_sample(&data, &record.parse_info).map_err(|e| ("SAMPLE", e))?;
    let pid = s.pid.unwrap_or(-1);
    let mode = CpuMode::from_misc(record.misc);
    let kernel = matches!(mode, CpuMode::Kernel | CpuMode::GuestKernel);
    let (chain, hash) = match s.chain {
        Some(r) => {
            let (bytes, hash) = chain_key(batch, source, pid, kernel, &data[r]);
            (Some(bytes), hash)
        }
        None => (None, ChainHash::default()),
    };
    let user = s.user.map(|u| {
        let start = batch.stacks.len();
        batch.stacks.extend_from_slice(&data[u.stack]);
        UserCopy {
            user_mode: matches!(mode, CpuMode::User | CpuMode::GuestUser),
            stack: start..batch.stacks.len(),
            ..u.copy
        }
    });
    batch.events.push(Event::Sample {
        sample: SampleEvent {
            attr,
            pid,
            tid: s.tid,
            time: s.time,
            period: s.period,
            kernel,
            ip: s.ip,
        },
        chain,
        hash,
        user,
    });
    Ok(())
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
    time: Option<u64>,
    period: Option<u64>,
    /// Where the callchain's entries are in the record.
    chain: Option<std::ops::Range<usize>>,
    /// `PERF_SAMPLE_STACK_USER` recordings: registers and where the valid stack bytes are.
    user: Option<UserFields>,
}

#[derive(Debug, Default, PartialEq, Eq)]
struct UserFields {
    /// Everything but the stack's place, which is `stack` in the record.
    copy: UserCopy,
    stack: std::ops::Range<usize>,
}

/// Reads a SAMPLE record's fields up to its callchain, and on to the user registers and
/// stack when it has a stack copy (the layout `perf_event_open(2)` gives for the attribute's
/// sample format), checking every length against the record, so that no lying count reaches
/// an allocation or a multiplication.
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
    out.time = field(SampleFormat::TIME, &mut at)?;
    for flag in [
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
        at += 8 + bytes as usize;
    }
    if f.contains(SampleFormat::STACK_USER) {
        out.user = Some(decode_user(data, info, at, read_u64)?);
    }
    Ok(out)
}

/// The fields after the callchain of a sample with a user stack copy: RAW and BRANCH_STACK
/// skipped, ip/sp/bp picked out of REGS_USER by the register mask, then STACK_USER — whose
/// size is checked against the record: a lying size drops the stack, not the sample.
fn decode_user(
    data: &[u8],
    info: &linux_perf_data::linux_perf_event_reader::RecordParseInfo,
    mut at: usize,
    read_u64: impl Fn(usize) -> std::result::Result<u64, String>,
) -> std::result::Result<UserFields, String> {
    use linux_perf_data::linux_perf_event_reader::BranchSampleFormat;
    let f = info.sample_format;
    let skip = |at: usize, bytes: u64, what: &str| -> std::result::Result<usize, String> {
        usize::try_from(bytes)
            .ok()
            .and_then(|b| at.checked_add(b))
            .filter(|&end| end <= data.len())
            .ok_or_else(|| format!("{what} larger than the record"))
    };
    if f.contains(SampleFormat::RAW) {
        // u32 size, then the bytes (padded so that the two end on a u64 boundary)
        let word = read_u64(at)?;
        let size = if matches!(info.endian, linux_perf_data::Endianness::LittleEndian) {
            word & 0xffff_ffff
        } else {
            word >> 32
        };
        at = skip(at, 4 + size, "raw data")?;
    }
    if f.contains(SampleFormat::BRANCH_STACK) {
        let nr = read_u64(at)?;
        at += 8;
        if info
            .branch_sample_format
            .contains(BranchSampleFormat::HW_INDEX)
        {
            at += 8;
        }
        let bytes = nr.checked_mul(24).ok_or("branch stack length overflows")?;
        at = skip(at, bytes, "branch stack")?;
    }
    let mut user = UserFields::default();
    if f.contains(SampleFormat::REGS_USER) {
        let abi = read_u64(at).map_err(|_| "record ends before its user registers")?;
        at += 8;
        if abi != 0 {
            let count = u64::from(info.user_regs_count);
            let regs_at = at;
            at = skip(at, count * 8, "user registers")?;
            let mask = info.sample_regs_user;
            let reg = |r: u64| -> Option<u64> {
                (mask & (1 << r) != 0).then_some(())?;
                let index = (mask & ((1 << r) - 1)).count_ones() as usize;
                read_u64(regs_at + 8 * index).ok()
            };
            user.copy.has_regs = true;
            user.copy.regs = (|| {
                Some(crate::unwind::UserRegs {
                    ip: reg(crate::unwind::PERF_REG_X86_IP)?,
                    sp: reg(crate::unwind::PERF_REG_X86_SP)?,
                    bp: reg(crate::unwind::PERF_REG_X86_BP)?,
                })
            })();
        }
    }
    let size = read_u64(at).map_err(|_| "record ends before its user stack")?;
    at += 8;
    let fits = size
        .checked_add(8)
        .is_some_and(|n| n <= (data.len() - at) as u64);
    if size > 0 && !fits {
        user.copy.bad_record = true;
        return Ok(user);
    }
    user.copy.size = size;
    if size > 0 {
        let dynamic_size = read_u64(at + size as usize)?;
        user.copy.dynamic_size = dynamic_size;
        // the filled bytes only: the rest is past the stack's end
        user.stack = at..at + crate::unwind::valid_stack_len(size, dynamic_size) as usize;
    }
    Ok(user)
}

#[cfg(test)]
mod tests {
    use super::*;
    use linux_perf_data::linux_perf_event_reader::{
        BranchSampleFormat, Endianness, ReadFormat, RecordIdParseInfo, RecordParseInfo,
    };

    /// IP|TID|PERIOD|CALLCHAIN|REGS_USER(bp, sp, ip)|STACK_USER, as `--call-graph dwarf`
    /// writes, plus `extra` formats.
    fn info(extra: SampleFormat, read_format: ReadFormat) -> RecordParseInfo {
        RecordParseInfo {
            endian: Endianness::LittleEndian,
            sample_format: SampleFormat::IP
                | SampleFormat::TID
                | SampleFormat::PERIOD
                | SampleFormat::CALLCHAIN
                | SampleFormat::REGS_USER
                | SampleFormat::STACK_USER
                | extra,
            branch_sample_format: BranchSampleFormat::empty(),
            read_format,
            common_data_offset_from_end: None,
            sample_regs_user: 0b111 << 6,
            user_regs_count: 3,
            sample_regs_intr: 0,
            intr_regs_count: 0,
            id_parse_info: RecordIdParseInfo {
                nonsample_record_id_offset_from_end: None,
                sample_record_id_offset_from_start: None,
            },
            nonsample_record_time_offset_from_end: None,
            sample_record_time_offset_from_start: None,
        }
    }

    /// A record whose stack copy is `stack` but whose size field says `stack_size`, and
    /// whose dyn_size is `dynamic_size`; `read` words go after the period.
    fn sample(read: &[u64], stack_size: u64, stack: &[u8], dynamic_size: u64) -> Vec<u8> {
        let mut w: Vec<u64> = vec![0x401000, (42u64 << 32) | 41, 1000];
        w.extend(read);
        w.extend([3, u64::MAX - 127, 0xffff_ffff_8100_0000, u64::MAX - 511]); // callchain
        w.extend([2, 0x7ff0, 0x7f00, 0x401000]); // abi 64, then bp, sp, ip (mask order)
        w.push(stack_size);
        let mut bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
        bytes.extend_from_slice(stack);
        bytes.extend_from_slice(&dynamic_size.to_le_bytes());
        bytes
    }

    fn plain() -> RecordParseInfo {
        info(SampleFormat::empty(), ReadFormat::empty())
    }

    #[test]
    fn a_dwarf_sample_gives_its_registers_and_only_the_filled_stack_bytes() {
        let stack: Vec<u8> = (0..64).collect();
        let bytes = sample(&[], 64, &stack, 40);
        let s = decode_sample(&bytes, &plain()).unwrap();
        assert_eq!((s.pid, s.tid, s.period), (Some(41), Some(42), Some(1000)));
        assert_eq!(s.chain.unwrap().len(), 24);
        let user = s.user.unwrap();
        let regs = user.copy.regs.unwrap();
        assert_eq!((regs.ip, regs.sp, regs.bp), (0x401000, 0x7f00, 0x7ff0));
        assert!(user.copy.has_regs && !user.copy.bad_record);
        assert_eq!((user.copy.size, user.copy.dynamic_size), (64, 40));
        assert_eq!(bytes[user.stack], stack[..40]);
    }

    #[test]
    fn a_lying_stack_size_drops_the_stack_and_keeps_the_sample() {
        let bytes = sample(&[], 1 << 20, &[7u8; 16], 16);
        let s = decode_sample(&bytes, &plain()).unwrap();
        assert_eq!(s.chain.unwrap().len(), 24);
        assert_eq!(s.period, Some(1000));
        let user = s.user.unwrap();
        assert!(user.copy.bad_record);
        assert!(user.stack.is_empty());
    }

    #[test]
    fn a_lying_dynamic_size_reads_no_more_than_was_copied() {
        let bytes = sample(&[], 16, &[7u8; 16], 1 << 40);
        let user = decode_sample(&bytes, &plain()).unwrap().user.unwrap();
        assert_eq!(user.stack.len(), 16);
        assert_eq!(user.copy.dynamic_size, 1 << 40);
    }

    #[test]
    fn a_record_cut_inside_its_fixed_fields_is_an_error() {
        let bytes = sample(&[], 16, &[7u8; 16], 16);
        assert!(decode_sample(&bytes[..40], &plain()).is_err());
        assert!(
            decode_sample(&bytes[..76], &plain()).is_err(),
            "cut inside the registers"
        );
    }

    #[test]
    fn read_values_are_skipped_in_both_layouts() {
        // one counter: value, id
        let single = info(SampleFormat::READ, ReadFormat::ID);
        let bytes = sample(&[5, 99], 8, &[1u8; 8], 8);
        let user = decode_sample(&bytes, &single).unwrap().user.unwrap();
        assert_eq!(user.copy.regs.unwrap().sp, 0x7f00);
        // a group: nr, time_enabled, then nr × (value, id)
        let group = info(
            SampleFormat::READ,
            ReadFormat::GROUP | ReadFormat::ID | ReadFormat::TOTAL_TIME_ENABLED,
        );
        let bytes = sample(&[2, 1234, 5, 99, 6, 100], 8, &[1u8; 8], 8);
        let user = decode_sample(&bytes, &group).unwrap().user.unwrap();
        assert_eq!(user.copy.regs.unwrap().sp, 0x7f00);
        assert_eq!(bytes[user.stack], [1u8; 8]);
    }

    #[test]
    fn a_kernel_thread_without_user_registers_has_none() {
        let mut w: Vec<u64> = vec![0xffff_ffff_8100_0000, (7u64 << 32) | 7, 1];
        w.extend([1, 0xffff_ffff_8100_0000]);
        w.extend([0, 0]); // abi NONE, stack size 0
        let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
        let user = decode_sample(&bytes, &plain()).unwrap().user.unwrap();
        assert!(!user.copy.has_regs && user.copy.regs.is_none());
        assert_eq!((user.copy.size, user.stack.len()), (0, 0));
    }
}

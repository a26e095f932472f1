//! A SAMPLE record whose user-stack size field is larger than the record itself.
//!
//! `linux-perf-event-reader` rejects such a record as a whole, which would cost the sample
//! its kernel frames and its weight. Instead the record is re-read with the stack cut off
//! (size 0), so everything before it is kept, and the sample is counted as one whose user
//! stack could not be unwound.

use linux_perf_data::linux_perf_event_reader::{
    BranchSampleFormat, Endianness, ReadFormat, RecordParseInfo, SampleFormat,
};

/// When the record's user-stack size does not fit, a copy of `data` with the size set to 0
/// (and zero bytes for any later fields); `None` when the record is fine or has no user
/// stack, or is broken before the stack (the reader reports that as it always does).
pub fn repair_user_stack(data: &[u8], info: &RecordParseInfo) -> Option<Vec<u8>> {
    let f = info.sample_format;
    if !f.contains(SampleFormat::STACK_USER) {
        return None;
    }
    let at = user_stack_offset(data, info)?;
    let size = read_u64(data, at, info.endian)?;
    let rest = (data.len() - at - 8) as u64;
    // the size, the bytes, then the dynamic size (only when size > 0)
    if size == 0 || size.checked_add(8).is_some_and(|n| n <= rest) {
        return None;
    }
    let mut fixed = data[..at].to_vec();
    fixed.extend_from_slice(&[0u8; 8]);
    // WEIGHT, DATA_SRC, TRANSACTION, REGS_INTR... may follow; their values are lost with the
    // stack, zeros keep the parser going
    fixed.extend(std::iter::repeat_n(
        0u8,
        64 + 8 * info.intr_regs_count as usize,
    ));
    Some(fixed)
}

fn read_u64(data: &[u8], at: usize, endian: Endianness) -> Option<u64> {
    let bytes: [u8; 8] = data.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(match endian {
        Endianness::LittleEndian => u64::from_le_bytes(bytes),
        Endianness::BigEndian => u64::from_be_bytes(bytes),
    })
}

/// Byte offset of the user-stack size field, walking the fields before it as
/// `SampleRecord::parse` does.
fn user_stack_offset(data: &[u8], info: &RecordParseInfo) -> Option<usize> {
    let f = info.sample_format;
    let e = info.endian;
    let mut at = 0usize;
    for flag in [
        SampleFormat::IDENTIFIER,
        SampleFormat::IP,
        SampleFormat::TID,
        SampleFormat::TIME,
        SampleFormat::ADDR,
        SampleFormat::ID,
        SampleFormat::STREAM_ID,
        SampleFormat::CPU,
        SampleFormat::PERIOD,
    ] {
        if f.contains(flag) {
            at += 8;
        }
    }
    let skip_u64s = |at: usize, n: u64| -> Option<usize> {
        let bytes = usize::try_from(n.checked_mul(8)?).ok()?;
        let end = at.checked_add(bytes)?;
        (end <= data.len()).then_some(end)
    };
    if f.contains(SampleFormat::READ) {
        let rf = info.read_format;
        let times = rf.contains(ReadFormat::TOTAL_TIME_ENABLED) as u64
            + rf.contains(ReadFormat::TOTAL_TIME_RUNNING) as u64;
        if rf.contains(ReadFormat::GROUP) {
            at = skip_u64s(at, 1 + times + rf.contains(ReadFormat::ID) as u64)?;
        } else {
            let nr = read_u64(data, at, e)?;
            let per = 1 + rf.contains(ReadFormat::ID) as u64;
            at = skip_u64s(at, 1 + times)?;
            at = skip_u64s(at, nr.checked_mul(per)?)?;
        }
    }
    if f.contains(SampleFormat::CALLCHAIN) {
        let nr = read_u64(data, at, e)?;
        at = skip_u64s(at + 8, nr)?;
    }
    if f.contains(SampleFormat::RAW) {
        let b: [u8; 4] = data.get(at..at + 4)?.try_into().ok()?;
        let size = match e {
            Endianness::LittleEndian => u32::from_le_bytes(b),
            Endianness::BigEndian => u32::from_be_bytes(b),
        };
        at = at.checked_add(4 + size as usize)?;
    }
    if f.contains(SampleFormat::BRANCH_STACK) {
        let nr = read_u64(data, at, e)?;
        at += 8;
        if info
            .branch_sample_format
            .contains(BranchSampleFormat::HW_INDEX)
        {
            at += 8;
        }
        at = skip_u64s(at, nr.checked_mul(3)?)?;
    }
    if f.contains(SampleFormat::REGS_USER) {
        let abi = read_u64(data, at, e)?;
        at += 8;
        if abi != 0 {
            at = skip_u64s(at, info.user_regs_count as u64)?;
        }
    }
    (at.checked_add(8)? <= data.len()).then_some(at)
}

//! The cap on what the zstd-compressed records of `perf record -z` inflate to.
//!
//! linux-perf-data inflates each `PERF_RECORD_COMPRESSED` (type 81) or `COMPRESSED2` (83)
//! record whole into one growing buffer, with no limit and no hook: a 64 KiB record of zstd
//! RLE blocks inflates to 2 GiB, and an 81 KB file aborted the process under a 2 GB memory
//! limit. The records' zstd data is one stream across records (perf flushes, never ends, its
//! frame per record), and a frame need not declare its content size, so the only honest
//! bound is to count: [`Counting`](super::header::Counting) hands each compressed record's
//! body here as it streams past, before the parser has it, and this inflates it with a
//! decoder of its own into a scratch buffer, counting the bytes and discarding them. Past a
//! cap the read fails, so the parser never inflates the record.
//!
//! Two caps: all records together at most `--max-decompressed` (as for gzip), and one record
//! at most an eighth of that (256 MiB by default), because the parser holds one record's
//! inflation about three times over (its doubling buffer, then the records copied out of it).
//! perf writes one record per flush of a ring buffer (512 KiB per CPU by default), so a
//! genuine record is far below either.

use zstd_safe::{DCtx, InBuffer, OutBuffer};

/// Type 81 (Linux 5.2) holds zstd data in its whole body; type 83 (Linux 6.16) starts with the
/// data's size, then the data, then padding to 8 bytes.
pub(super) const PERF_RECORD_COMPRESSED: u32 = 81;
pub(super) const PERF_RECORD_COMPRESSED2: u32 = 83;

/// A record may inflate to at most the cap divided by this.
const RECORD_SHARE: u64 = 8;

/// The same chunk size as linux-perf-data's decoder.
const SCRATCH: usize = 1 << 20;

pub(super) struct InflationCheck {
    cap: u64,
    total: u64,
    dctx: Option<DCtx<'static>>,
    scratch: Vec<u8>,
}

impl InflationCheck {
    pub(super) fn new(cap: u64) -> InflationCheck {
        InflationCheck {
            cap,
            total: 0,
            dctx: None,
            scratch: Vec::new(),
        }
    }

    /// The most one record may inflate to.
    pub(super) fn record_cap(&self) -> u64 {
        self.cap / RECORD_SHARE
    }

    /// Inflates the body of one compressed record of `kind` (continuing the stream of the
    /// ones before), counting; `Err` with the reason when it passes a cap or is corrupt.
    pub(super) fn check(&mut self, kind: u32, body: &[u8]) -> Result<u64, String> {
        let data = if kind == PERF_RECORD_COMPRESSED2 {
            // the parser refuses a size past the body itself
            let Some(size) = body.get(..8) else {
                return Ok(0);
            };
            let size = u64::from_le_bytes(size.try_into().unwrap_or_default());
            match usize::try_from(size)
                .ok()
                .and_then(|s| body.get(8..8usize.checked_add(s)?))
            {
                Some(data) => data,
                None => return Ok(0),
            }
        } else {
            body
        };
        let record_cap = self.record_cap();
        let dctx = self.dctx.get_or_insert_with(DCtx::create);
        if self.scratch.is_empty() {
            self.scratch = vec![0; SCRATCH];
        }
        let mut input = InBuffer::around(data);
        let mut inflated = 0u64;
        loop {
            let mut output = OutBuffer::around(&mut self.scratch[..]);
            if let Err(code) = dctx.decompress_stream(&mut output, &mut input) {
                return Err(format!(
                    "its zstd data is corrupt ({}) after {inflated} inflated bytes",
                    zstd_safe::get_error_name(code)
                ));
            }
            let produced = output.pos();
            inflated += produced as u64;
            self.total += produced as u64;
            if inflated > record_cap {
                return Err(format!(
                    "it inflates to more than {record_cap} bytes, the most one compressed \
                     record may (an eighth of --max-decompressed, {} bytes; perf writes one \
                     ring buffer's flush per record, 512 KiB by default): a zstd bomb? If the \
                     recording is genuine, raise the cap with --max-decompressed BYTES",
                    self.cap
                ));
            }
            if self.total > self.cap {
                return Err(format!(
                    "with it the compressed records inflate to more than {} bytes in all (a \
                     zstd bomb?); if the recording is genuine, raise the cap with \
                     --max-decompressed BYTES",
                    self.cap
                ));
            }
            if produced < self.scratch.len() && input.pos() == data.len() {
                return Ok(inflated);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zstd frame (no content size, 128 KiB window) of `blocks` RLE blocks of 128 KiB of
    /// `byte`: 4 bytes of input for each 128 KiB of output.
    pub(crate) fn rle_frame(blocks: usize, byte: u8) -> Vec<u8> {
        let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38];
        for i in 0..blocks {
            let last = u32::from(i + 1 == blocks);
            let header = (128u32 << 10) << 3 | 1 << 1 | last;
            frame.extend_from_slice(&header.to_le_bytes()[..3]);
            frame.push(byte);
        }
        frame
    }

    #[test]
    fn counts_what_a_record_inflates_to_across_records_of_one_stream() {
        let mut check = InflationCheck::new(1 << 30);
        let frame = rle_frame(3, 7);
        // perf splits one stream over records: the counts add up to the frame's content
        let (a, b) = frame.split_at(9);
        let first = check.check(PERF_RECORD_COMPRESSED, a).unwrap();
        let second = check.check(PERF_RECORD_COMPRESSED, b).unwrap();
        assert_eq!(first + second, 3 * (128 << 10));
        // COMPRESSED2: size, data, padding
        let mut body = (frame.len() as u64).to_le_bytes().to_vec();
        body.extend(&frame);
        body.extend([0; 5]);
        let mut check = InflationCheck::new(1 << 30);
        assert_eq!(
            check.check(PERF_RECORD_COMPRESSED2, &body),
            Ok(3 * (128 << 10))
        );
    }

    #[test]
    fn a_record_past_its_cap_or_all_records_past_the_cap_are_refused() {
        // cap 8 MiB: a record may inflate to 1 MiB
        let mut check = InflationCheck::new(8 << 20);
        let err = check
            .check(PERF_RECORD_COMPRESSED, &rle_frame(9, 0))
            .unwrap_err();
        assert!(err.contains("more than 1048576 bytes"), "{err}");
        let mut check = InflationCheck::new(8 << 20);
        for _ in 0..8 {
            check
                .check(PERF_RECORD_COMPRESSED, &rle_frame(8, 0))
                .unwrap();
        }
        let err = check
            .check(PERF_RECORD_COMPRESSED, &rle_frame(1, 0))
            .unwrap_err();
        assert!(err.contains("more than 8388608 bytes in all"), "{err}");
    }

    #[test]
    fn corrupt_zstd_data_is_an_error() {
        let mut check = InflationCheck::new(1 << 30);
        let err = check
            .check(PERF_RECORD_COMPRESSED, b"not zstd at all")
            .unwrap_err();
        assert!(err.contains("zstd data is corrupt"), "{err}");
    }
}

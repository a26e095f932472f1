//! Why perf.data records could not be read on: what the in-place reader ([`super::mapped`])
//! and the decoding thread ([`super::decode`]) both report, kept below both of them.

use crate::error::{Error, Position};
use std::path::Path;

/// Why the records could not be read on: the offset of the record at fault, and what.
#[derive(Debug)]
pub(super) struct ReadFault {
    pub(super) at: u64,
    pub(super) reason: String,
    /// [`super::header::Counting`] refused a compressed record (the reason is its, not the parser's).
    pub(super) refused: bool,
    /// `at` is the faulty record's (in place), not the last header seen before the fault.
    pub(super) exact: bool,
}

impl ReadFault {
    pub(super) fn corrupt(at: usize, reason: impl Into<String>) -> ReadFault {
        ReadFault {
            at: at as u64,
            reason: reason.into(),
            refused: false,
            exact: true,
        }
    }

    /// The error for the whole read, `records` (`samples` of them samples) read before it.
    pub(super) fn into_error(self, path: &Path, records: u64, samples: u64) -> Error {
        let at = Position::Offset(self.at);
        let reason = self.reason;
        if self.refused {
            return Error::input(
                path,
                at,
                format!("refused the compressed record here: {reason}"),
            );
        }
        let which = if self.exact {
            "in the record at this offset"
        } else {
            "in the record at this offset or the next"
        };
        Error::input(
            path,
            at,
            format!(
                "truncated or corrupt perf.data after {records} records ({samples} samples), \
                 {which}: {reason}"
            ),
        )
    }
}

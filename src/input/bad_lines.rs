//! The one rule for lines a text reader cannot place (perf script, folded): skip and count
//! them, refuse the input only when they say it is not that format after all (issue 12).

use crate::error::{Error, Position, Result};
use crate::model::Notice;
use std::path::Path;

/// More than this share of all lines being bad means the input is not the format after all...
const MAX_BAD_LINE_SHARE: f64 = 0.01;
/// ...unless there are only a few (up to this many, and no more than the samples read): one
/// stray line in a six-sample file is a stray line, not a wrong format.
const FEW_BAD_LINES: u64 = 5;

/// Lines skipped so far, and the first of them to show the user.
#[derive(Debug, Default)]
pub struct BadLines {
    count: u64,
    /// Line number and a quoted description of the first bad line.
    first: Option<(u64, String)>,
}

impl BadLines {
    /// Counts one skipped line; `describe` (the quoted text, and why it was skipped) is only
    /// built for the first.
    pub fn record(&mut self, line_no: u64, describe: impl FnOnce() -> String) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some((line_no, describe()));
        }
    }

    /// After reading `lines` lines and `samples` samples: an error when the bad lines are too
    /// many (over 1 % of the lines and more than a few), else the warning to show when any
    /// were skipped. `what` says what a bad line is not ("not perf script output"),
    /// `expected` what the format's lines look like.
    pub fn verdict(
        &self,
        path: &Path,
        lines: u64,
        samples: u64,
        what: &'static str,
        expected: &str,
    ) -> Result<Option<Notice>> {
        let Some((line, shown)) = &self.first else {
            return Ok(None);
        };
        let few = self.count <= FEW_BAD_LINES && self.count <= samples;
        if !few && self.count as f64 > MAX_BAD_LINE_SHARE * lines as f64 {
            return Err(Error::input(
                path,
                Position::Line(*line),
                format!(
                    "{} of {lines} lines are {what} (this one: {shown}); expected {expected}",
                    self.count
                ),
            ));
        }
        Ok(Some(Notice::SkippedLines {
            path: path.to_path_buf(),
            what,
            count: self.count,
            first_line: *line,
            first: shown.clone(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(bad: u64, lines: u64, samples: u64) -> Result<Option<Notice>> {
        let mut b = BadLines::default();
        for i in 0..bad {
            b.record(i + 1, || "`x`".to_string());
        }
        b.verdict(Path::new("f"), lines, samples, "odd", "even")
    }

    #[test]
    fn few_or_rare_bad_lines_are_skipped_and_said() {
        assert_eq!(verdict(0, 10, 10).unwrap(), None);
        // one stray line in a six-sample file: 1 of 7 lines, but only one
        let w = verdict(1, 7, 6).unwrap().unwrap();
        let skipped = Notice::SkippedLines {
            path: "f".into(),
            what: "odd",
            count: 1,
            first_line: 1,
            first: "`x`".into(),
        };
        assert_eq!(w, skipped);
        // ten bad lines among 10 000: 0.1 %
        assert!(verdict(10, 10_000, 9_990).unwrap().is_some());
    }

    #[test]
    fn many_bad_lines_refuse_the_input() {
        // six bad lines among 100: over 1 % and more than five
        let e = verdict(6, 100, 94).unwrap_err().to_string();
        assert!(
            e.contains("6 of 100 lines are odd (this one: `x`); expected even"),
            "{e}"
        );
        // two bad lines and one sample: more bad lines than samples
        assert!(verdict(2, 3, 1).is_err());
    }
}

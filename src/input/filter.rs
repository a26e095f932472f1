//! Which samples to keep, as `perf report` chooses them: `--comm`, `--pid`, `--tid` and
//! `--time`. Only perf.data and perf script text record a thread and a time per sample, so
//! only their readers apply a filter; every other reader refuses one ([`SampleFilter::refuse`])
//! rather than ignore it. A filter is applied while reading, because the profile folds samples
//! into rows and keeps neither pids nor times; what it drops is counted
//! ([`FilterTally`]) and said in the report's notes.

use crate::error::{Error, Position, Result};
use crate::model::Notice;
use std::path::Path;

const NANOS_PER_SECOND: u64 = 1_000_000_000;

/// `--comm`, `--pid`, `--tid` and `--time`; a sample is kept when it passes every filter given
/// (and, within one, matches any of its values), as in `perf report`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SampleFilter {
    /// Thread names (perf's comm) to keep.
    pub comms: Vec<String>,
    pub pids: Vec<i32>,
    pub tids: Vec<i32>,
    pub time: Option<TimeSlice>,
}

/// `--time` in `perf report`'s syntax.
#[derive(Debug, Clone, PartialEq)]
pub enum TimeSlice {
    /// `START,END` in seconds (`12345.6,12346.0`), either end open; in nanoseconds here, both
    /// ends included as perf includes them.
    Absolute {
        start: Option<u64>,
        end: Option<u64>,
    },
    /// `10%/2` (the second tenth) or `0%-10%`, several separated by commas: fractions of the
    /// time from the first to the last sample (perf.data's SAMPLE_TIME header, or a first
    /// pass over a perf script file); made absolute by [`TimeSlice::resolve`] before reading.
    Percent {
        /// As given, for messages.
        text: String,
        ranges: Vec<(f64, f64)>,
    },
    /// Several percent slices made absolute (nanoseconds, both ends included): a sample in
    /// any of them is kept, as perf keeps it.
    Slices(Vec<(u64, u64)>),
}

/// The fields of one sample a filter may look at; `None` where the input does not record it.
#[derive(Debug, Clone, Copy, Default)]
pub struct SampleKey<'a> {
    pub comm: Option<&'a str>,
    pub pid: Option<i32>,
    pub tid: Option<i32>,
    /// Nanoseconds, perf's clock.
    pub time: Option<u64>,
}

impl SampleFilter {
    pub fn is_empty(&self) -> bool {
        self.comms.is_empty() && self.pids.is_empty() && self.tids.is_empty() && self.time.is_none()
    }

    /// The options in force, as the command line gave them (for notes and errors).
    pub fn describe(&self) -> String {
        let mut out = Vec::new();
        let join = |v: &[String]| v.join(",");
        if !self.comms.is_empty() {
            out.push(format!("--comm {}", join(&self.comms)));
        }
        let numbers = |v: &[i32]| v.iter().map(i32::to_string).collect::<Vec<_>>();
        if !self.pids.is_empty() {
            out.push(format!("--pid {}", join(&numbers(&self.pids))));
        }
        if !self.tids.is_empty() {
            out.push(format!("--tid {}", join(&numbers(&self.tids))));
        }
        if let Some(time) = &self.time {
            out.push(format!("--time {time}"));
        }
        out.join(" ")
    }

    /// The error for a filter on an input of `format`, which records no thread or time per
    /// sample; `Ok` when no filter is given.
    pub fn refuse(&self, path: &Path, format: &str) -> Result<()> {
        if self.is_empty() {
            return Ok(());
        }
        Err(Error::Usage(format!(
            "{}: {} is not supported for {format} input: it records no pid, thread or time per \
             sample (only perf.data and perf script text do)",
            path.display(),
            self.describe()
        )))
    }

    /// Whether to keep a sample; `Err(field)` when a filter needs a field the sample lacks.
    pub fn keeps(&self, s: &SampleKey<'_>) -> std::result::Result<bool, &'static str> {
        if !self.comms.is_empty() {
            let comm = s.comm.ok_or("comm (thread name)")?;
            if !self.comms.iter().any(|c| c == comm) {
                return Ok(false);
            }
        }
        if !self.pids.is_empty() && !self.pids.contains(&s.pid.ok_or("pid")?) {
            return Ok(false);
        }
        if !self.tids.is_empty() && !self.tids.contains(&s.tid.ok_or("tid")?) {
            return Ok(false);
        }
        match &self.time {
            None => Ok(true),
            Some(TimeSlice::Absolute { start, end }) => {
                let t = s.time.ok_or("time")?;
                Ok(start.is_none_or(|start| t >= start) && end.is_none_or(|end| t <= end))
            }
            Some(TimeSlice::Slices(slices)) => {
                let t = s.time.ok_or("time")?;
                Ok(slices
                    .iter()
                    .any(|&(start, end)| (start..=end).contains(&t)))
            }
            // `resolve` turns these into absolute slices before any sample is read
            Some(TimeSlice::Percent { .. }) => Err("time (percent slices need the recording's \
                                                first and last sample times)"),
        }
    }
}

impl std::fmt::Display for TimeSlice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let seconds = |t: Option<u64>| {
            t.map(|t| format!("{}.{:09}", t / NANOS_PER_SECOND, t % NANOS_PER_SECOND))
                .unwrap_or_default()
        };
        match self {
            TimeSlice::Absolute { start, end } => {
                write!(f, "{},{}", seconds(*start), seconds(*end))
            }
            TimeSlice::Percent { text, .. } => f.write_str(text),
            TimeSlice::Slices(slices) => {
                let all: Vec<String> = slices
                    .iter()
                    .map(|&(a, b)| format!("{},{}", seconds(Some(a)), seconds(Some(b))))
                    .collect();
                f.write_str(&all.join(" or "))
            }
        }
    }
}

impl TimeSlice {
    /// Parses `--time` as `perf report --time` does: `START,END` in seconds with up to nine
    /// decimals (either side may be empty; a lone `START` is an open end), or percent slices
    /// `P%/N` (the N-th slice of P %) and `A%-B%`, several separated by commas.
    pub fn parse(text: &str) -> Result<TimeSlice> {
        let bad = |why: String| Error::Usage(format!("--time {text}: {why}"));
        if text.contains('%') {
            let ranges = text
                .split(',')
                .map(|part| percent_range(part).map_err(&bad))
                .collect::<Result<Vec<_>>>()?;
            return Ok(TimeSlice::Percent {
                text: text.to_string(),
                ranges,
            });
        }
        let (start, end) = text.split_once(',').unwrap_or((text, ""));
        let parse = |s: &str| -> Result<Option<u64>> {
            if s.is_empty() {
                return Ok(None);
            }
            parse_seconds(s).map(Some).ok_or_else(|| {
                bad(format!(
                    "`{s}` is not a time: expected seconds as perf prints them \
                     (`12345.678901`, at most 9 decimals), as START,END with either end open \
                     (`12345.6,` or `,12346`), or percent slices (`10%/2`, `0%-10%`)"
                ))
            })
        };
        let (start, end) = (parse(start)?, parse(end)?);
        if start.is_none() && end.is_none() {
            return Err(bad("neither a start nor an end".into()));
        }
        if let (Some(s), Some(e)) = (start, end)
            && e < s
        {
            return Err(bad("the end is before the start".into()));
        }
        Ok(TimeSlice::Absolute { start, end })
    }

    /// Percent slices as absolute ones over the recording's first and last sample times
    /// (nanoseconds), rounded as perf rounds them: one slice as [`TimeSlice::Absolute`],
    /// several as [`TimeSlice::Slices`]; an absolute slice as it is.
    pub fn resolve(&self, first: u64, last: u64) -> TimeSlice {
        let TimeSlice::Percent { ranges, .. } = self else {
            return self.clone();
        };
        let total = last.saturating_sub(first) as f64;
        let slices: Vec<(u64, u64)> = ranges
            .iter()
            .map(|&(a, b)| {
                let start = first + (a * total).round() as u64;
                let mut end = first + (b * total).round() as u64;
                // perf: `if (ptime->end > ptime->start && end_pcnt != 1.0) ptime->end -= 1;`
                if end > start && b != 1.0 {
                    end -= 1;
                }
                (start, end)
            })
            .collect();
        match slices[..] {
            [(start, end)] => TimeSlice::Absolute {
                start: Some(start),
                end: Some(end),
            },
            _ => TimeSlice::Slices(slices),
        }
    }
}

/// `12345.678901` (perf's `parse_nsec_time`: digits, then at most nine decimals) in
/// nanoseconds.
pub fn parse_seconds(text: &str) -> Option<u64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) || fraction.len() > 9 {
        return None;
    }
    // the decimals padded to nine digits, without allocating: this runs on every header line
    let nanos = fraction
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(9)
        .fold(0u64, |n, b| n * 10 + u64::from(b - b'0'));
    whole
        .parse::<u64>()
        .ok()?
        .checked_mul(NANOS_PER_SECOND)?
        .checked_add(nanos)
}

/// One percent slice as fractions (start, end) of the recording: `P%/N` or `A%-B%`.
fn percent_range(part: &str) -> std::result::Result<(f64, f64), String> {
    let percent = |s: &str| -> std::result::Result<f64, String> {
        let value: f64 = s
            .trim()
            .strip_suffix('%')
            .and_then(|n| n.parse().ok())
            .filter(|v: &f64| (0.0..=100.0).contains(v))
            .ok_or_else(|| format!("`{s}` is not a percentage from 0% to 100%"))?;
        Ok(value / 100.0)
    };
    let (a, b) =
        if let Some((p, n)) = part.split_once('/') {
            let size = percent(p)?;
            let n: u32 =
                n.trim().parse().ok().filter(|&n| n >= 1).ok_or_else(|| {
                    format!("`{part}`: expected P%/N with N a slice number from 1")
                })?;
            (size * f64::from(n - 1), size * f64::from(n))
        } else if let Some((a, b)) = part.split_once('-') {
            (percent(a)?, percent(b)?)
        } else {
            return Err(format!(
                "`{part}`: expected a percent slice, `P%/N` (the N-th P % of the recording) or \
             `A%-B%`"
            ));
        };
    if !(0.0..=1.0).contains(&a) || !(0.0..=1.0).contains(&b) || b < a {
        return Err(format!(
            "`{part}` is not a slice between 0% and 100% with its end after its start"
        ));
    }
    Ok((a, b))
}

/// What a filter did to one input's samples.
#[derive(Debug, Clone, Default)]
pub struct FilterTally {
    pub kept: u64,
    pub dropped: u64,
    /// The first sample a filter could not decide: the field it lacks and where it is.
    pub undecided: Option<(&'static str, String)>,
}

impl FilterTally {
    /// Counts one sample; `place` says where it is (given the field it lacks), for the error
    /// if the filter cannot decide. Returns whether to keep it.
    pub fn count(
        &mut self,
        filter: &SampleFilter,
        sample: &SampleKey<'_>,
        place: impl FnOnce(&'static str) -> String,
    ) -> bool {
        match filter.keeps(sample) {
            Ok(true) => {
                self.kept += 1;
                true
            }
            Ok(false) => {
                self.dropped += 1;
                false
            }
            Err(field) => {
                if self.undecided.is_none() {
                    self.undecided = Some((field, place(field)));
                }
                self.dropped += 1;
                false
            }
        }
    }

    /// The note for the report header, or the error: a sample the filter could not decide,
    /// or no sample left. `None` without a filter.
    pub fn finish(&self, path: &Path, filter: &SampleFilter) -> Result<Option<Notice>> {
        if filter.is_empty() {
            return Ok(None);
        }
        if let Some((field, place)) = &self.undecided {
            return Err(Error::input(
                path,
                Position::Whole,
                format!(
                    "{} needs each sample's {field}, and the sample {place} has none",
                    filter.describe()
                ),
            ));
        }
        if self.kept == 0 {
            return Err(Error::input(
                path,
                Position::Whole,
                format!(
                    "no samples left: {} matched none of the {} samples",
                    filter.describe(),
                    self.dropped
                ),
            ));
        }
        Ok(Some(Notice::Filtered {
            filter: filter.describe(),
            kept: self.kept,
            total: self.kept + self.dropped,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn absolute(start: Option<u64>, end: Option<u64>) -> TimeSlice {
        TimeSlice::Absolute { start, end }
    }

    #[test]
    fn absolute_slices_in_perf_syntax() {
        let s = 1_000_000_000;
        assert_eq!(
            TimeSlice::parse("12345.6,12346.0").unwrap(),
            absolute(Some(12345 * s + 600_000_000), Some(12346 * s))
        );
        assert_eq!(
            TimeSlice::parse("12345.6,").unwrap(),
            absolute(Some(12345 * s + 600_000_000), None)
        );
        assert_eq!(
            TimeSlice::parse(",12346").unwrap(),
            absolute(None, Some(12346 * s))
        );
        // perf: a lone start is an open end
        assert_eq!(
            TimeSlice::parse("2863.902713").unwrap(),
            absolute(Some(2863 * s + 902_713_000), None)
        );
        assert_eq!(parse_seconds("1.000000001"), Some(s + 1));
        assert_eq!(parse_seconds("7"), Some(7 * s));
        assert_eq!(parse_seconds("0.5"), Some(s / 2));
        assert_eq!(parse_seconds("1.1x"), None);
        for bad in ["", ",", "1.2.3,", "1.0000000001,", "abc,", "5,4", "-1,"] {
            assert!(TimeSlice::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn percent_slices_resolve_as_perf_rounds_them() {
        // the second tenth of 1000 ns from 5000: [5100, 5199] (perf takes 1 ns off the end)
        let tenth = TimeSlice::parse("10%/2").unwrap();
        assert_eq!(tenth.resolve(5000, 6000), absolute(Some(5100), Some(5199)));
        let dash = TimeSlice::parse("0%-10%").unwrap();
        assert_eq!(dash.resolve(5000, 6000), absolute(Some(5000), Some(5099)));
        // the end of the recording is not cut
        let last = TimeSlice::parse("50%-100%").unwrap();
        assert_eq!(last.resolve(5000, 6000), absolute(Some(5500), Some(6000)));
        // several slices: a sample in any of them is kept
        let two = TimeSlice::parse("10%/1,10%/3").unwrap().resolve(5000, 6000);
        assert_eq!(two, TimeSlice::Slices(vec![(5000, 5099), (5200, 5299)]));
        let filter = SampleFilter {
            time: Some(two),
            ..SampleFilter::default()
        };
        let at = |time| SampleKey {
            time: Some(time),
            ..SampleKey::default()
        };
        let kept: Vec<u64> = [4999, 5000, 5099, 5100, 5199, 5200, 5299, 5300]
            .into_iter()
            .filter(|&t| filter.keeps(&at(t)) == Ok(true))
            .collect();
        assert_eq!(kept, [5000, 5099, 5200, 5299]);
        for bad in ["10%", "10%/0", "60%/2", "20%-10%", "110%-120%", "x%/1"] {
            assert!(TimeSlice::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_sample_passes_every_filter_given() {
        let filter = SampleFilter {
            comms: vec!["java".into(), "worker".into()],
            pids: vec![7],
            tids: vec![],
            time: Some(absolute(Some(10), Some(20))),
        };
        let key = |comm, pid, time| SampleKey {
            comm: Some(comm),
            pid: Some(pid),
            tid: Some(1),
            time: Some(time),
        };
        assert_eq!(filter.keeps(&key("java", 7, 10)), Ok(true));
        assert_eq!(filter.keeps(&key("worker", 7, 20)), Ok(true));
        assert_eq!(filter.keeps(&key("worker", 7, 21)), Ok(false));
        assert_eq!(filter.keeps(&key("sh", 7, 15)), Ok(false));
        assert_eq!(filter.keeps(&key("java", 8, 15)), Ok(false));
        let no_pid = SampleKey {
            pid: None,
            ..key("java", 7, 15)
        };
        assert_eq!(filter.keeps(&no_pid), Err("pid"));
    }

    #[test]
    fn the_tally_notes_what_was_left_out_and_refuses_an_empty_result() {
        let filter = SampleFilter {
            tids: vec![3],
            ..SampleFilter::default()
        };
        let mut tally = FilterTally::default();
        for tid in [1, 3, 3, 4] {
            let key = SampleKey {
                tid: Some(tid),
                ..SampleKey::default()
            };
            tally.count(&filter, &key, |_| String::new());
        }
        let note = tally.finish(Path::new("x"), &filter).unwrap().unwrap();
        let filtered = Notice::Filtered {
            filter: "--tid 3".into(),
            kept: 2,
            total: 4,
        };
        assert_eq!(note, filtered);
        let none = FilterTally {
            dropped: 4,
            ..FilterTally::default()
        };
        let e = none
            .finish(Path::new("x"), &filter)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no samples left: --tid 3 matched none of the 4"),
            "{e}"
        );
    }
}

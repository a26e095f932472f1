//! `whose diff`: the share of every owner (or category) in each view, before and after, and
//! whether the change is significant (issue 25).
//!
//! Each side may hold several repeats. A row's test is on its **share** (points of the
//! total): a weight (time, bytes) also moves with the length of the run, a share does not,
//! so a longer run of the same program is no change. Weights and their relative change are
//! shown beside the shares, for reading. The test of `new − base` (the means of the sides'
//! shares):
//!
//! ```text
//! a side of n ≥ 2 repeats:  se² = max(s², v̄) / n    s²: the variance of its shares,
//!                                                     v̄: their mean sampling variance
//!                           df = n − 1 when s² is the larger, else ∞ (normal)
//! a single profile:         se² = v (its sampling variance from its sample counts), or,
//!                           when the other side has repeats noisier than their samples,
//!                           that side's s² with its df (the single run is taken to be as
//!                           noisy as one of them)
//! delta / √(se_b² + se_n²) ~ t (Welch–Satterthwaite df)  →  two-sided p-value
//! ```
//!
//! The sampling variance `v` is the one of [`crate::aggregate::interval`] (effective sample
//! size, thread clusters). Every row is a test, so the p-values of all rows (owners × views)
//! are adjusted by Benjamini–Hochberg: a row is a **change** when its adjusted p-value (q) is
//! at most `1 − confidence`, which holds the expected share of false changes among the changes
//! at that level; else **noise**. Each row carries the interval of its share's difference (not
//! adjusted). `--per N` divides weights, not shares: the test is the same.
//!
//! The totals are compared as weights, between repeats only (a single total has no sampling
//! error to speak of): Welch over the repeats' totals, **unknown** with one profile a side.

use crate::aggregate::interval::{self, DiffTest, Interval, ShareSums};
use crate::aggregate::quality::Finding;
use crate::aggregate::report::{GroupBy, Report, Spread, View, share};
use crate::aggregate::{Attribution, Dispersion, category_index};
use crate::model::{Category, SampleType};

/// How a delta compares with the noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judgement {
    /// Not significant after the false-discovery control.
    Noise,
    /// Significant.
    Change,
    /// Nothing measures the noise (the totals of single profiles).
    Unknown,
}

impl Judgement {
    pub fn as_str(self) -> &'static str {
        match self {
            Judgement::Noise => "noise",
            Judgement::Change => "change",
            Judgement::Unknown => "unknown",
        }
    }
}

/// One quantity (a weight, or a share) on both sides and how it moved.
#[derive(Debug, Clone, PartialEq)]
pub struct Compared {
    /// Median and range over each side's repeats.
    pub base: Spread,
    pub new: Spread,
    /// The means of the sides, which the test compares.
    pub base_mean: f64,
    pub new_mean: f64,
    /// new mean − base mean.
    pub delta: f64,
    /// The delta in percent of the base mean; `None` when the base is 0.
    pub relative: Option<f64>,
    /// The test of `delta`, when something measures its noise.
    pub test: Option<DiffTest>,
    /// The interval of `delta` at the diff's confidence.
    pub interval: Option<Interval>,
    /// The p-value the judgement used: Benjamini–Hochberg adjusted for rows' shares.
    pub q_value: Option<f64>,
    pub judgement: Judgement,
}

impl Compared {
    /// The sides' values, no test (a row's weights: its share is tested).
    fn untested(base: &[f64], new: &[f64], judgement: Judgement) -> Compared {
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let (bm, nm) = (mean(base), mean(new));
        let delta = nm - bm;
        Compared {
            base: Spread::of(base),
            new: Spread::of(new),
            base_mean: bm,
            new_mean: nm,
            delta,
            relative: (bm != 0.0).then(|| delta * 100.0 / bm),
            test: None,
            interval: None,
            q_value: None,
            judgement,
        }
    }

    fn tested(base: &[f64], new: &[f64], test: Option<DiffTest>, confidence: f64) -> Compared {
        let mut c = Compared::untested(base, new, Judgement::Unknown);
        c.test = test;
        c.interval = test.map(|t| t.interval(confidence));
        c.q_value = test.map(|t| t.p_value);
        c.judgement = match test {
            Some(t) if t.p_value <= 1.0 - confidence && c.delta != 0.0 => Judgement::Change,
            Some(_) => Judgement::Noise,
            None if c.delta == 0.0 => Judgement::Noise,
            None => Judgement::Unknown,
        };
        c
    }
}

/// One side's standard error of its mean and the degrees of freedom (∞: normal): over two
/// or more repeats their spread alone (Welch's t, issue 54: the spread holds the sampling
/// noise too); one profile's own sampling error, or, beside repeats noisier than that, as
/// noisy as one of them.
fn side_error(values: &[f64], sampling_var: &[f64], other: Option<(f64, f64)>) -> (f64, f64) {
    let n = values.len() as f64;
    if values.len() >= 2 {
        let s2 = interval::repeats_sd(values).powi(2);
        return ((s2 / n).sqrt(), n - 1.0);
    }
    let v_bar = sampling_var.iter().sum::<f64>() / n.max(1.0);
    match other {
        Some((s2, df)) if s2 > v_bar => (s2.sqrt(), df),
        _ => (v_bar.sqrt(), f64::INFINITY),
    }
}

/// The repeats' variance of a side and its df, when it exceeds their sampling variance.
fn excess(values: &[f64], sampling_var: &[f64]) -> Option<(f64, f64)> {
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let s2 = interval::repeats_sd(values).powi(2);
    (s2 > sampling_var.iter().sum::<f64>() / n).then_some((s2, n - 1.0))
}

/// The test of two sides' means; `sampling` holds each value's sampling variance (0 for
/// totals, whose noise only repeats show).
fn test_of(base: (&[f64], &[f64]), new: (&[f64], &[f64])) -> DiffTest {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let delta = mean(new.0) - mean(base.0);
    let b = side_error(base.0, base.1, excess(new.0, new.1));
    let n = side_error(new.0, new.1, excess(base.0, base.1));
    DiffTest::welch(delta, b, n)
}

/// One owner in one view, before and after.
#[derive(Debug, Clone, PartialEq)]
pub struct Delta {
    pub name: String,
    pub category: Option<Category>,
    pub view: View,
    /// The weight in the metric's unit (divided by `--per`), untested: shown for reading.
    pub weight: Compared,
    /// The share of each input's total, in percent (points for the delta): what is tested.
    pub share: Compared,
}

impl Delta {
    /// The share's judgement, the row's.
    pub fn judgement(&self) -> Judgement {
        self.share.judgement
    }
}

/// The whole comparison.
#[derive(Debug, Clone)]
pub struct Diff {
    pub base_paths: Vec<String>,
    pub new_paths: Vec<String>,
    pub metric: SampleType,
    /// `--per N`: every weight divided by N (per request).
    pub per: Option<u64>,
    /// The confidence level; `1 − confidence` is the false-discovery rate across the rows.
    pub confidence: f64,
    /// What the rows are: `owner` or `category`.
    pub rows_are: &'static str,
    /// The inputs' totals, judged as the rows are.
    pub total: Compared,
    /// Largest absolute weight delta first (then name, then view); rows with no weight in
    /// that view on either side are left out.
    pub rows: Vec<Delta>,
    /// Each input's warnings (path, then what `report` would warn of): a delta between
    /// recordings unfit for a view is no more sound than a share of one (issue 28).
    pub findings: Vec<(String, Vec<Finding>)>,
}

impl Diff {
    /// How many rows got `judgement`: the counts the header states, from the marks the
    /// rows carry, so the two cannot disagree.
    pub fn count(&self, judgement: Judgement) -> usize {
        self.rows
            .iter()
            .filter(|d| d.judgement() == judgement)
            .count()
    }
}

/// The position of `view` in the tables' order (self, owner, anywhere).
fn view_rank(view: View) -> usize {
    View::ALL
        .iter()
        .position(|&v| v == view)
        .unwrap_or(usize::MAX)
}

/// Compares the first `base` inputs of `report` with the rest. Both sides share the
/// report's rule set (so the owners line up) and one metric (checked by the caller).
pub fn diff(report: &Report, base: usize, confidence: f64) -> Diff {
    let per = report.per.filter(|&n| n > 0).map_or(1.0, |n| n as f64);
    let weight = |w: u128| w as f64 / per;
    let totals: Vec<u128> = report
        .inputs
        .iter()
        .map(|i| i.aggregate.all.total)
        .collect();
    let total = total_delta(&totals, base, weight, confidence);
    let mut rows = row_deltas(report, &totals, base, weight, confidence);
    control_false_discoveries(&mut rows, confidence);
    rows.sort_by(|a, b| {
        b.weight
            .delta
            .abs()
            .total_cmp(&a.weight.delta.abs())
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| view_rank(a.view).cmp(&view_rank(b.view)))
    });
    let paths = |r: std::ops::Range<usize>| -> Vec<String> {
        report.inputs[r].iter().map(|i| i.path.clone()).collect()
    };
    Diff {
        base_paths: paths(0..base),
        new_paths: paths(base..report.inputs.len()),
        metric: report.inputs[0].metric.clone(),
        per: report.per,
        confidence,
        rows_are: match report.by {
            GroupBy::Category => "category",
            _ => "owner",
        },
        total,
        rows,
        // the warnings; the `--user` hint is the report's and explain's next step
        findings: (report.inputs.iter())
            .map(|i| {
                let mut f = i.aggregate.findings();
                f.retain(Finding::is_warning);
                (i.path.clone(), f)
            })
            .filter(|(_, f)| !f.is_empty())
            .collect(),
    }
}

/// The inputs' totals (`weight` makes them per request), base against new: tested only where
/// a side has repeats, as a single total per side has no spread to test against.
fn total_delta(
    totals: &[u128],
    base: usize,
    weight: impl Fn(u128) -> f64,
    confidence: f64,
) -> Compared {
    let total_weights: Vec<f64> = totals.iter().map(|&t| weight(t)).collect();
    let none = vec![0.0; totals.len()];
    let total_test = (base >= 2 || totals.len() - base >= 2).then(|| {
        test_of(
            (&total_weights[..base], &none[..base]),
            (&total_weights[base..], &none[base..]),
        )
    });
    Compared::tested(
        &total_weights[..base],
        &total_weights[base..],
        total_test,
        confidence,
    )
}

/// One delta per row and view with any weight: the weights compared untested, the shares
/// tested with each input's sampling variance. Unsorted, before the false-discovery control.
fn row_deltas(
    report: &Report,
    totals: &[u128],
    base: usize,
    weight: impl Fn(u128) -> f64,
    confidence: f64,
) -> Vec<Delta> {
    let mut rows = Vec::new();
    for row in report.rows() {
        for &view in &report.views {
            let weights: Vec<f64> = row.weights.iter().map(|w| weight(view.of(w))).collect();
            if weights.iter().all(|&w| w == 0.0) {
                continue;
            }
            let shares: Vec<f64> = row
                .weights
                .iter()
                .zip(totals)
                .map(|(w, &t)| share(view.of(w), t))
                .collect();
            // sampling variance of each input's share, points²
            let vars: Vec<f64> = report
                .inputs
                .iter()
                .zip(&row.weights)
                .map(|(input, w)| {
                    let sums = row_sums(report, &row.name, &input.aggregate, view, view.of(w));
                    sums.estimate(input.aggregate.dispersion.samples as f64).var * 1e4
                })
                .collect();
            let test = test_of(
                (&shares[..base], &vars[..base]),
                (&shares[base..], &vars[base..]),
            );
            rows.push(Delta {
                name: row.name.clone(),
                category: row.category,
                view,
                weight: Compared::untested(&weights[..base], &weights[base..], Judgement::Unknown),
                share: Compared::tested(&shares[..base], &shares[base..], Some(test), confidence),
            });
        }
    }
    rows
}

/// Benjamini–Hochberg over every row's share test: the judgement follows the adjusted
/// p-value; the weight's judgement is the share's.
fn control_false_discoveries(rows: &mut [Delta], confidence: f64) {
    let p: Vec<f64> = rows
        .iter()
        .map(|d| d.share.test.map_or(1.0, |t| t.p_value))
        .collect();
    let q = interval::benjamini_hochberg(&p);
    for (d, q) in rows.iter_mut().zip(q) {
        d.share.q_value = Some(q);
        d.share.judgement = if q <= 1.0 - confidence && d.share.delta != 0.0 {
            Judgement::Change
        } else {
            Judgement::Noise
        };
        d.weight.judgement = d.share.judgement;
    }
}

/// The variance sums of the row named `name` (an owner, a category, or the samples without
/// a stack) in one input.
fn row_sums(
    report: &Report,
    name: &str,
    aggregate: &crate::aggregate::Aggregate,
    view: View,
    weight: u128,
) -> ShareSums {
    let (all, d): (&Attribution, &Dispersion) = (&aggregate.all, &aggregate.dispersion);
    let index = match report.by {
        GroupBy::Category => Category::parse(name).map(|c| (category_index(c) as usize, true)),
        _ => report
            .owners
            .iter()
            .position(|o| o.name == name)
            .map(|i| (i, false)),
    };
    match index {
        Some((i, category)) => d.sums(all, i, category, view),
        // no owner (the samples without a stack): its samples taken as the average sample
        None => ShareSums {
            weight,
            total: all.total,
            owner_sq: d.total_sq * share(weight, all.total) / 100.0,
            total_sq: d.total_sq,
            blocks: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_is_as_noisy_as_its_repeats_or_one_profile_as_its_samples() {
        // repeats 10, 12, 11 (s² = 1) with sampling variance 0.25 each: s² wins, df 2
        let (se, df) = side_error(&[10.0, 12.0, 11.0], &[0.25; 3], None);
        assert!((se - (1.0f64 / 3.0).sqrt()).abs() < 1e-12 && df == 2.0);
        // the same with sampling variance 4: still the repeats' spread, which holds every
        // noise a run has (issue 54: no floor)
        let (se, df) = side_error(&[10.0, 12.0, 11.0], &[4.0; 3], None);
        assert!((se - (1.0f64 / 3.0).sqrt()).abs() < 1e-12 && df == 2.0);
        // a single profile beside noisy repeats is taken to be as noisy as one of them
        let (se, df) = side_error(&[10.0], &[0.25], Some((1.0, 2.0)));
        assert!((se - 1.0).abs() < 1e-12 && df == 2.0);
        let (se, _) = side_error(&[10.0], &[0.25], None);
        assert!((se - 0.5).abs() < 1e-12);
    }
}

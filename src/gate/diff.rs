//! `whose diff`: the share of every owner (or category) in each view, before and after, and
//! whether the change is bigger than the noise.
//!
//! Each side may hold several repeats; a side's share is their median, its spread their
//! range (max − min). The *combined spread* of a row is
//!
//! ```text
//! both sides have ≥ 2 repeats:   (base max − base min) + (new max − new min)
//! one side has ≥ 2 repeats:      2 × that side's max − min  (the single side is assumed
//!                                 to be as noisy as the measured one)
//! neither side has repeats:      unknown
//! ```
//!
//! The rows compare weights (time, bytes, samples, per request with `--per`), not shares: a
//! program that got 35 % slower because one owner grew shows that owner's growth, where its
//! share could even fall; shares are compared alongside, for reading. The inputs' totals are
//! compared the same way.
//!
//! A delta of the medians no larger than the combined spread is **noise**, larger is a
//! **change**. With single profiles on both sides nothing says how noisy the measurement is,
//! so a nonzero delta is **unknown** rather than a change (an exact 0 is still noise): the
//! honest answer is "record repeats", not a false positive.

use crate::aggregate::report::{GroupBy, Report, Spread, View, share};
use crate::model::{Category, SampleType};

/// How a delta compares with the combined spread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judgement {
    /// |delta| ≤ combined spread (or delta = 0).
    Noise,
    /// |delta| > combined spread.
    Change,
    /// A nonzero delta and no spread to compare it with (single profiles on both sides).
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

/// How the combined spread was estimated (the same for every row of one diff).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpreadRule {
    BothSides,
    OneSideDoubled,
    None,
}

impl SpreadRule {
    pub fn as_str(self) -> &'static str {
        match self {
            SpreadRule::BothSides => "base range + new range",
            SpreadRule::OneSideDoubled => "2 × the range of the side with repeats",
            SpreadRule::None => "none (single profiles on both sides)",
        }
    }

    fn of(base: usize, new: usize) -> SpreadRule {
        match (base >= 2, new >= 2) {
            (true, true) => SpreadRule::BothSides,
            (false, false) => SpreadRule::None,
            _ => SpreadRule::OneSideDoubled,
        }
    }

    /// The combined spread in the unit of the values, if it can be estimated.
    fn combine(self, base: &Spread, new: &Spread) -> Option<f64> {
        let (rb, rn) = (base.max - base.min, new.max - new.min);
        match self {
            SpreadRule::BothSides => Some(rb + rn),
            SpreadRule::OneSideDoubled => Some(2.0 * rb.max(rn)),
            SpreadRule::None => None,
        }
    }
}

/// One quantity (a weight, or a share) on both sides and how it moved.
#[derive(Debug, Clone, PartialEq)]
pub struct Compared {
    /// Median and range over each side's repeats.
    pub base: Spread,
    pub new: Spread,
    /// new median − base median.
    pub delta: f64,
    /// The delta in percent of the base median; `None` when the base is 0.
    pub relative: Option<f64>,
    /// Combined spread, in the quantity's unit; `None` when it cannot be estimated.
    pub spread: Option<f64>,
    pub judgement: Judgement,
}

impl Compared {
    /// Compares `base` and `new` values (one per repeat) by the spread `rule`.
    fn of(base: &[f64], new: &[f64], rule: SpreadRule) -> Compared {
        let (b, n) = (Spread::of(base), Spread::of(new));
        let delta = n.median - b.median;
        let spread = rule.combine(&b, &n);
        let judgement = match spread {
            _ if delta == 0.0 => Judgement::Noise,
            Some(s) if delta.abs() <= s => Judgement::Noise,
            Some(_) => Judgement::Change,
            None => Judgement::Unknown,
        };
        Compared {
            base: b,
            new: n,
            delta,
            relative: (b.median != 0.0).then(|| delta * 100.0 / b.median),
            spread,
            judgement,
        }
    }
}

/// One owner in one view, before and after.
#[derive(Debug, Clone, PartialEq)]
pub struct Delta {
    pub name: String,
    pub category: Option<Category>,
    pub view: View,
    /// The weight in the metric's unit (divided by `--per`): what the noise test judges,
    /// since a share can fall while the time it stands for grows.
    pub weight: Compared,
    /// The share of each input's total, in percent (points for the delta and spread).
    pub share: Compared,
}

impl Delta {
    /// The weight's judgement, the row's.
    pub fn judgement(&self) -> Judgement {
        self.weight.judgement
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
    pub rule: SpreadRule,
    /// What the rows are: `owner` or `category`.
    pub rows_are: &'static str,
    /// The inputs' totals, judged as the rows are.
    pub total: Compared,
    /// Largest absolute weight delta first (then name, then view); rows with no weight in
    /// that view on either side are left out.
    pub rows: Vec<Delta>,
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
pub fn diff(report: &Report, base: usize) -> Diff {
    let new = report.inputs.len() - base;
    let rule = SpreadRule::of(base, new);
    let per = report.per.filter(|&n| n > 0).map_or(1.0, |n| n as f64);
    let weight = |w: u128| w as f64 / per;
    let totals: Vec<u128> = report
        .inputs
        .iter()
        .map(|i| i.aggregate.all.total)
        .collect();
    let total_weights: Vec<f64> = totals.iter().map(|&t| weight(t)).collect();
    let total = Compared::of(&total_weights[..base], &total_weights[base..], rule);
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
                .zip(&totals)
                .map(|(w, &t)| share(view.of(w), t))
                .collect();
            rows.push(Delta {
                name: row.name.clone(),
                category: row.category,
                view,
                weight: Compared::of(&weights[..base], &weights[base..], rule),
                share: Compared::of(&shares[..base], &shares[base..], rule),
            });
        }
    }
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
        rule,
        rows_are: match report.by {
            GroupBy::Category => "category",
            _ => "owner",
        },
        total,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(v: &[f64]) -> Spread {
        Spread::of(v)
    }

    #[test]
    fn the_combined_spread_follows_the_documented_rule() {
        let (b, n) = (spread(&[10.0, 12.0, 11.0]), spread(&[13.0, 14.0]));
        assert_eq!(SpreadRule::of(3, 2).combine(&b, &n), Some(3.0));
        assert_eq!(
            SpreadRule::of(1, 2).combine(&spread(&[10.0]), &n),
            Some(2.0)
        );
        assert_eq!(SpreadRule::of(1, 1).combine(&b, &n), None);
    }
}

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

    /// The combined spread in percentage points, if it can be estimated.
    fn combine(self, base: &Spread, new: &Spread) -> Option<f64> {
        let (rb, rn) = (base.max - base.min, new.max - new.min);
        match self {
            SpreadRule::BothSides => Some(rb + rn),
            SpreadRule::OneSideDoubled => Some(2.0 * rb.max(rn)),
            SpreadRule::None => None,
        }
    }
}

/// One owner in one view, before and after.
#[derive(Debug, Clone, PartialEq)]
pub struct Delta {
    pub name: String,
    pub category: Option<Category>,
    pub view: View,
    pub base: Spread,
    pub new: Spread,
    /// new median − base median, in percentage points.
    pub delta: f64,
    /// Combined spread in percentage points; `None` when it cannot be estimated.
    pub spread: Option<f64>,
    pub judgement: Judgement,
}

/// The whole comparison.
#[derive(Debug, Clone)]
pub struct Diff {
    pub base_paths: Vec<String>,
    pub new_paths: Vec<String>,
    pub metric: SampleType,
    pub rule: SpreadRule,
    /// What the rows are: `owner` or `category`.
    pub rows_are: &'static str,
    /// Heaviest rows first (the report's order), then by view; rows with no weight in
    /// that view on either side are left out.
    pub rows: Vec<Delta>,
}

/// Compares the first `base` inputs of `report` with the rest. Both sides share the
/// report's rule set (so the owners line up) and one metric (checked by the caller).
pub fn diff(report: &Report, base: usize) -> Diff {
    let new = report.inputs.len() - base;
    let rule = SpreadRule::of(base, new);
    let totals: Vec<u128> = report
        .inputs
        .iter()
        .map(|i| i.aggregate.all.total)
        .collect();
    let mut rows = Vec::new();
    for row in report.rows() {
        for &view in &report.views {
            let shares: Vec<f64> = row
                .weights
                .iter()
                .zip(&totals)
                .map(|(w, &t)| share(view.of(w), t))
                .collect();
            if shares.iter().all(|&s| s == 0.0) {
                continue;
            }
            let (b, n) = shares.split_at(base);
            let (bs, ns) = (Spread::of(b), Spread::of(n));
            let delta = ns.median - bs.median;
            let spread = rule.combine(&bs, &ns);
            let judgement = match spread {
                _ if delta == 0.0 => Judgement::Noise,
                Some(s) if delta.abs() <= s => Judgement::Noise,
                Some(_) => Judgement::Change,
                None => Judgement::Unknown,
            };
            rows.push(Delta {
                name: row.name.clone(),
                category: row.category,
                view,
                base: bs,
                new: ns,
                delta,
                spread,
                judgement,
            });
        }
    }
    let paths = |r: std::ops::Range<usize>| -> Vec<String> {
        report.inputs[r].iter().map(|i| i.path.clone()).collect()
    };
    Diff {
        base_paths: paths(0..base),
        new_paths: paths(base..report.inputs.len()),
        metric: report.inputs[0].metric.clone(),
        rule,
        rows_are: match report.by {
            GroupBy::Category => "category",
            _ => "owner",
        },
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

//! The report: everything renderers and the gate need, and nothing they must compute.
//! Renderers only format what is here; the numbers are decided in this module.

use super::interval::Estimate;
use super::{Aggregate, Attribution, FrameWeight, ViewWeights};
use crate::error::{Error, Result};
use crate::model::{Category, NO_STACK, Notice, Owner, SampleType, UNCLASSIFIED, UNSYMBOLIZED};

pub use super::views::View;

/// What the rows of the table are; also the values of `--by` (the variant docs stay out of
/// `--help`, which lists the names only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GroupBy {
    #[default]
    Owner,
    Category,
    /// Allocated types (async-profiler allocation profiles).
    Type,
    /// Owners per time bucket (`--bucket`), for inputs that time each sample (perf.data,
    /// perf script, JFR).
    Time,
}

/// How several inputs are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Combine {
    /// Side by side, one column group per input.
    #[default]
    Columns,
    /// Repeats of one experiment: median and min–max per share.
    Repeats,
    /// Summed into one.
    Merge,
}

/// One input's results.
#[derive(Debug, Clone)]
pub struct InputReport {
    pub path: String,
    pub metric: SampleType,
    /// How the metric was chosen (`default`, `--metric`), for the header.
    pub metric_source: String,
    pub notes: Vec<Notice>,
    pub warnings: Vec<Notice>,
    pub aggregate: Aggregate,
}

/// The whole report over one or more inputs sharing one rule set.
#[derive(Debug, Clone)]
pub struct Report {
    pub owners: Vec<Owner>,
    pub presets: Vec<String>,
    pub presets_detected: bool,
    /// The program's own code guessed from the frames and claimed as `user`.
    pub own_code: Vec<crate::classify::own_code::OwnCode>,
    /// The guesses of the program's own code not made, and why.
    pub own_code_declined: Vec<crate::classify::own_code::Declined>,
    /// The third-party units that became guessed owners (`classify::auto_owner`).
    pub guessed: Vec<crate::classify::auto_owner::Unit>,
    /// `--no-guess`: nothing was guessed from the frames.
    pub guesses_off: bool,
    pub inputs: Vec<InputReport>,
    pub combine: Combine,
    pub by: GroupBy,
    pub views: Vec<View>,
    pub per: Option<u64>,
    /// `--ci`: shares shown with their intervals.
    pub ci: bool,
}

/// One table row: an owner or a category, with its weights in each input.
#[derive(Debug, Clone)]
pub struct ShareRow {
    pub name: String,
    pub category: Option<Category>,
    pub transparent: bool,
    /// An owner named after its third-party unit, not by a rule ([`Owner::guessed`]).
    pub guessed: bool,
    /// One entry per input, in input order.
    pub weights: Vec<ViewWeights>,
    /// `--ci`: the sampling estimate of the share in each input (in input order), per view
    /// (self, owner, anywhere), from that input's counts; `None` for a row that is neither an
    /// owner nor a category (samples without a stack). Empty without `--ci` and for the rows
    /// of a thread group or a time bucket, whose counts keep no dispersion.
    pub estimates: Vec<[Option<Estimate>; 3]>,
}

impl ShareRow {
    /// The estimate of the share in `view` of input `input` ([`ShareRow::estimates`]).
    pub fn estimate(&self, input: usize, view: View) -> Option<Estimate> {
        self.estimates.get(input).and_then(|e| e[view.index()])
    }
}

/// Median and range of one share over repeats, in percent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(values: &[f64]) -> Spread {
        let mut v: Vec<f64> = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n == 0 {
            return Spread {
                median: 0.0,
                min: 0.0,
                max: 0.0,
            };
        }
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Spread {
            median,
            min: v[0],
            max: v[n - 1],
        }
    }
}

/// `weight / total` in percent; 0 for an empty total (one function with the quality
/// figures' percentages, under the name the shares read by).
pub use super::quality::percent as share;

impl Report {
    /// Rows for the chosen grouping, heaviest (owner view, then self) first, rows without
    /// weight in every input left out.
    pub fn rows(&self) -> Vec<ShareRow> {
        let mut rows = self.rows_of(|input| &input.aggregate.all);
        if self.ci {
            for row in &mut rows {
                row.estimates = (0..self.inputs.len())
                    .map(|i| View::ALL.map(|view| self.estimate_of(i, row, view)))
                    .collect();
            }
        }
        rows
    }

    /// Rows of one thread group, aligned the same way (weights relative to that group).
    pub fn thread_rows(&self, input: usize, group: usize) -> Vec<ShareRow> {
        let (_, attribution) = &self.inputs[input].aggregate.threads[group];
        self.rows_for(std::slice::from_ref(attribution))
    }

    fn rows_of(&self, pick: impl Fn(&InputReport) -> &Attribution) -> Vec<ShareRow> {
        let attributions: Vec<Attribution> = self.inputs.iter().map(|i| pick(i).clone()).collect();
        self.rows_for(&attributions)
    }

    /// Rows of these attributions (one per input, or one time bucket), aligned the same way.
    pub fn rows_for(&self, attributions: &[Attribution]) -> Vec<ShareRow> {
        let mut rows = self.grouped_rows(attributions);
        rows.retain(|r| r.weights.iter().any(|w| w.self_ + w.owner + w.anywhere > 0));
        if attributions.iter().any(|a| a.stackless > 0) {
            // samples without a stack: their own line, the same weight in every view
            rows.push(ShareRow {
                name: NO_STACK.to_string(),
                category: None,
                transparent: false,
                guessed: false,
                weights: attributions
                    .iter()
                    .map(|a| ViewWeights {
                        self_: a.stackless,
                        owner: a.stackless,
                        anywhere: a.stackless,
                    })
                    .collect(),
                estimates: Vec::new(),
            });
        }
        let key = |r: &ShareRow| -> (f64, f64) {
            let totals = attributions.iter().map(|a| a.total);
            let (mut o, mut s) = (0.0, 0.0);
            for (w, t) in r.weights.iter().zip(totals) {
                o += share(w.owner, t);
                s += share(w.self_, t);
            }
            (o, s)
        };
        rows.sort_by(|a, b| {
            let (ka, kb) = (key(a), key(b));
            kb.0.total_cmp(&ka.0)
                .then(kb.1.total_cmp(&ka.1))
                .then_with(|| a.name.cmp(&b.name))
        });
        rows
    }

    /// A row per category or per owner, as the report groups, with every input's weights.
    fn grouped_rows(&self, attributions: &[Attribution]) -> Vec<ShareRow> {
        if self.by == GroupBy::Category {
            let rows = Category::ALL.iter().enumerate();
            return rows
                .map(|(i, c)| ShareRow {
                    name: c.as_str().to_string(),
                    category: Some(*c),
                    transparent: c.transparent_by_default(),
                    guessed: false,
                    weights: attributions
                        .iter()
                        .map(|a| a.categories[i].clone())
                        .collect(),
                    estimates: Vec::new(),
                })
                .collect();
        }
        (self.owners.iter().enumerate())
            .map(|(i, o)| ShareRow {
                name: o.name.clone(),
                category: Some(o.category),
                transparent: o.transparent,
                guessed: o.guessed,
                weights: attributions.iter().map(|a| a.owners[i].clone()).collect(),
                estimates: Vec::new(),
            })
            .collect()
    }

    /// The weight an owner (or category, by name) has in one view of one input.
    pub fn owner_share(&self, input: usize, name: &str, view: View) -> Option<f64> {
        let inp = &self.inputs[input];
        let all = &inp.aggregate.all;
        if let Some(i) = self.owners.iter().position(|o| o.name == name) {
            return Some(share(view.of(&all.owners[i]), all.total));
        }
        let c = Category::parse(name)?;
        let i = super::category_index(c) as usize;
        Some(share(view.of(&all.categories[i]), all.total))
    }

    /// The sampling estimate of `row`'s share in `view` of input `input`, from its sample
    /// counts ([`super::interval`]); `None` for a row that is neither an owner nor a category
    /// (samples without a stack).
    fn estimate_of(&self, input: usize, row: &ShareRow, view: View) -> Option<Estimate> {
        let agg = &self.inputs[input].aggregate;
        let (index, category) = match self.by {
            GroupBy::Category => (super::category_index(row.category?) as usize, true),
            _ => (self.owners.iter().position(|o| o.name == row.name)?, false),
        };
        let d = &agg.dispersion;
        Some(
            d.sums(&agg.all, index, category, view)
                .estimate(d.samples as f64),
        )
    }

    /// Share of `unclassified` / `unsymbolized` in the self view (the leaves) of one input, for
    /// the header's `unclassified ... and unsymbolized ... of self`.
    pub fn special_shares(&self, input: usize) -> (f64, f64) {
        let get = |n| self.owner_share(input, n, View::Self_).unwrap_or(0.0);
        (get(UNCLASSIFIED), get(UNSYMBOLIZED))
    }

    /// Sums all inputs into one (`--merge`). Inputs must share the metric; a usage error
    /// says which do not.
    pub fn merge_inputs(inputs: Vec<InputReport>) -> Result<InputReport> {
        let mut iter = inputs.into_iter();
        let mut merged = iter
            .next()
            .ok_or_else(|| Error::Usage("no inputs to merge".into()))?;
        let mut paths = vec![merged.path.clone()];
        for next in iter {
            if next.metric != merged.metric {
                return Err(Error::Usage(format!(
                    "--merge needs one metric: {} has {} ({}) but {} has {} ({})",
                    merged.path,
                    merged.metric.name,
                    merged.metric.unit,
                    next.path,
                    next.metric.name,
                    next.metric.unit
                )));
            }
            paths.push(next.path.clone());
            merge_aggregate(&mut merged.aggregate, next.aggregate);
            merged.notes.extend(next.notes);
            merged.warnings.extend(next.warnings);
        }
        merged.notes.dedup();
        merged.path = format!("merged: {}", paths.join(" + "));
        Ok(merged)
    }
}

fn merge_attribution(into: &mut Attribution, from: &Attribution) {
    into.total += from.total;
    into.stackless += from.stackless;
    for (a, b) in into.owners.iter_mut().zip(&from.owners) {
        a.add(b);
    }
    for (a, b) in into.categories.iter_mut().zip(&from.categories) {
        a.add(b);
    }
}

fn merge_frames(into: &mut Vec<FrameWeight>, from: Vec<FrameWeight>) {
    for f in from {
        match into
            .iter_mut()
            .find(|g| g.owner == f.owner && g.frame == f.frame)
        {
            Some(g) => g.weight += f.weight,
            None => into.push(f),
        }
    }
    into.sort_by(|a, b| b.weight.cmp(&a.weight).then_with(|| a.frame.cmp(&b.frame)));
}

fn merge_aggregate(into: &mut Aggregate, from: Aggregate) {
    merge_attribution(&mut into.all, &from.all);
    merge_attribution(&mut into.negative, &from.negative);
    merge_frames(&mut into.top_self, from.top_self);
    merge_frames(&mut into.top_owner_frames, from.top_owner_frames);
    merge_frames(&mut into.unclassified_frames, from.unclassified_frames);
    for t in from.types {
        match into.types.iter_mut().find(|x| x.name == t.name) {
            Some(x) => {
                x.weight += t.weight;
                for (o, w) in t.owners {
                    match x.owners.iter_mut().find(|(p, _)| *p == o) {
                        Some((_, v)) => *v += w,
                        None => x.owners.push((o, w)),
                    }
                }
            }
            None => into.types.push(t),
        }
    }
    into.types.sort_by_key(|t| std::cmp::Reverse(t.weight));
    for (name, attribution) in from.threads {
        match into.threads.iter_mut().find(|(n, _)| *n == name) {
            Some((_, a)) => merge_attribution(a, &attribution),
            None => into.threads.push((name, attribution)),
        }
    }
    into.distinct_stacks += from.distinct_stacks;
    into.quality.merge(&from.quality);
    into.dispersion.merge(&from.dispersion);
}

#[cfg(test)]
mod tests {
    use super::Spread;

    #[test]
    fn median_and_range() {
        let s = Spread::of(&[3.0, 1.0, 2.0]);
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        let s = Spread::of(&[4.0, 1.0, 2.0, 3.0]);
        assert_eq!(s.median, 2.5);
    }
}

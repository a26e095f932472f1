//! The gate: does an owned share meet a requirement, given its sampling error? And (`diff`)
//! is a change between two sets of profiles significant? Pure decisions on a [`Report`]; no
//! I/O, no formatting.
//!
//! A share measured from samples is known only up to its interval (issue 25; the maths and
//! its assumptions are in [`crate::aggregate::interval`]): from the sample counts for one
//! profile, from the repeats themselves (Student's t) for several. A requirement **passes**
//! when the whole interval is on the right side of the threshold, **fails** when the whole
//! interval is on the wrong side, and is **inconclusive** otherwise, with the samples (one
//! profile) or repeats that would decide it at the share measured. A 26 % share from 400
//! samples says nothing about `>= 25%`; from 20,000 it does.
//!
//! `--point-estimate` keeps the decision of old: each input's share against the threshold,
//! passing when every repeat holds, inconclusive ("k of n repeats pass", a fail) otherwise.

pub mod compare;
mod fitness;
pub mod threshold;

pub use fitness::{
    Claim, FlipRange, Guards, Unfit, UnfitReason, UnknownWeight, check_fit, unknown_weight,
};
pub use threshold::{Requirement, Subject, parse, parse_confidence, parse_guard, parse_subject};

use crate::aggregate::category_index;
use crate::aggregate::interval::{self, Estimate, Interval, Method};
use crate::aggregate::report::{InputReport, Report, Spread, share};
use crate::error::{Error, Result};
use crate::model::{Category, SampleType};

/// `--any`: one requirement must hold; default: all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    All,
    Any,
}

/// How a requirement is decided. Default: intervals at 95 %.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    /// The confidence level of the intervals, a fraction (0.95). Default is 0.95.
    pub confidence: f64,
    /// `--point-estimate`: compare the shares themselves, as before issue 25.
    pub point_estimate: bool,
}

/// The default confidence level, also `--confidence`'s default.
pub const DEFAULT_CONFIDENCE: f64 = 0.95;

impl Default for Decision {
    fn default() -> Decision {
        Decision {
            confidence: DEFAULT_CONFIDENCE,
            point_estimate: false,
        }
    }
}

/// The result of one requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The interval is on the right side of the threshold (with `--point-estimate`: every
    /// repeat holds).
    Pass,
    /// The interval is on the wrong side (every repeat fails).
    Fail,
    /// The interval contains the threshold: more samples or repeats are needed (with
    /// `--point-estimate`: some repeats hold, some do not; a fail).
    Inconclusive,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Inconclusive => "inconclusive",
        }
    }
}

/// What the subject of a requirement resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    Owner(usize),
    Category(Category),
}

/// One input's measurement for a requirement.
#[derive(Debug, Clone, PartialEq)]
pub struct InputShare {
    pub path: String,
    pub weight: u128,
    pub total: u128,
    /// Percent.
    pub share: f64,
    /// The samples behind `total` (rows when the input has no sample count: `counted`).
    pub samples: u128,
    pub counted: bool,
    /// The share's sampling estimate from this input's counts.
    pub estimate: Estimate,
    /// Its interval at the decision's confidence, percent.
    pub interval: Interval,
    /// The percent of this input's weight that unclassified frames decide in the
    /// requirement's view (what `--max-unclassified` guards).
    pub unclassified: f64,
    /// Weight whose owner is unknown, over its guard: how far it could move the share.
    pub unknown: Option<UnknownWeight>,
    /// The time the samples span (or the profile's declared duration), seconds.
    pub seconds: Option<f64>,
    /// The time blocks' length, seconds (time-stamped inputs).
    pub block_seconds: Option<f64>,
}

/// The share's interval widened by the weight whose owner is unknown (issue 54): the
/// requirement is decided when it holds, or fails, at both ends.
#[derive(Debug, Clone, PartialEq)]
pub struct Bounds {
    /// Points the unknown weight could take from the share, and add to it (mean over the
    /// repeats).
    pub down: f64,
    pub up: f64,
    /// The interval from the low end's low to the high end's high.
    pub interval: Interval,
    /// The interval alone decides, but not at both ends: the unknown weight could flip the
    /// verdict, and the gate refuses (exit 2) saying by how much.
    pub flips: bool,
}

/// What would decide an inconclusive requirement, at the share measured now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ToDecide {
    /// This many seconds of one recording at the same rate (`now`: the seconds recorded).
    Seconds { needed: f64, now: f64 },
    /// This many samples in one profile, where it does not say how long it ran.
    Samples { needed: f64 },
    /// This many repeats with the spread seen.
    Repeats(usize),
}

/// One requirement measured over the repeats of its metric.
#[derive(Debug, Clone)]
pub struct Evaluation {
    pub requirement: Requirement,
    /// `owner` or `category`.
    pub kind: &'static str,
    /// The owner's or category's name.
    pub name: String,
    pub metric: SampleType,
    pub inputs: Vec<InputShare>,
    /// Median and min–max of the shares over the inputs.
    pub spread: Spread,
    /// How many inputs satisfy the requirement on their own (point estimates).
    pub passing: usize,
    /// The share decided on: the input's share, or the mean of the repeats' shares.
    pub estimate: f64,
    /// Its interval, `None` with `--point-estimate`.
    pub interval: Option<Interval>,
    pub method: Method,
    pub confidence: f64,
    /// For an inconclusive interval: what would decide it.
    pub to_decide: Option<ToDecide>,
    pub status: Status,
    /// Where some input's unknown weight is over its guard: the interval at both ends.
    pub bounds: Option<Bounds>,
}

impl Evaluation {
    /// The largest unclassified percent of the view over the inputs.
    pub fn unclassified(&self) -> f64 {
        self.inputs
            .iter()
            .map(|i| i.unclassified)
            .fold(0.0, f64::max)
    }

    /// The share a point-estimate decision rests on: the min for a lower bound, the max for
    /// an upper one.
    pub fn deciding_share(&self) -> f64 {
        if self.requirement.op.is_lower_bound() {
            self.spread.min
        } else {
            self.spread.max
        }
    }

    /// The refusal when the unknown weight could flip the verdict: the first input over a
    /// guard, its guard, and the share's range.
    pub fn unfit(&self) -> Option<Unfit> {
        let bounds = self.bounds.as_ref().filter(|b| b.flips)?;
        let (input, unknown) = self
            .inputs
            .iter()
            .find_map(|i| i.unknown.as_ref().map(|u| (i, u)))?;
        Some(Unfit {
            requirement: self.requirement.text.clone(),
            path: input.path.clone(),
            view: self.requirement.view,
            reason: unknown.over.first()?.clone(),
            range: Some(FlipRange {
                subject: self.name.clone(),
                interval: bounds.interval,
                threshold: self.requirement.threshold,
            }),
        })
    }
}

/// The verdict over all requirements.
#[derive(Debug, Clone)]
pub struct GateOutcome {
    pub mode: Mode,
    pub results: Vec<Evaluation>,
    /// Pass, fail, or inconclusive (exit 0, 1, 3).
    pub verdict: Status,
}

/// Combines evaluations made on possibly different reports (one per metric) into a verdict:
/// with every requirement needed, one fail fails and else one inconclusive leaves the verdict
/// inconclusive; with `--any`, one pass passes and else one inconclusive leaves it open.
/// With `--point-estimate`, whatever is not a pass is a fail, as before issue 25.
pub fn decide(results: Vec<Evaluation>, mode: Mode, decision: &Decision) -> GateOutcome {
    let has = |s: Status| results.iter().any(|e| e.status == s);
    let mut verdict = match mode {
        Mode::All if has(Status::Fail) => Status::Fail,
        Mode::All if has(Status::Inconclusive) => Status::Inconclusive,
        Mode::All => Status::Pass,
        Mode::Any if has(Status::Pass) => Status::Pass,
        Mode::Any if has(Status::Inconclusive) => Status::Inconclusive,
        Mode::Any => Status::Fail,
    };
    if decision.point_estimate && verdict == Status::Inconclusive {
        verdict = Status::Fail;
    }
    GateOutcome {
        mode,
        results,
        verdict,
    }
}

/// Where an interval lies against `op threshold`.
fn judge(op: threshold::Op, i: Interval, t: f64) -> Status {
    let (right, wrong) = match op {
        threshold::Op::Ge => (i.low >= t, i.high < t),
        threshold::Op::Gt => (i.low > t, i.high <= t),
        threshold::Op::Le => (i.high <= t, i.low > t),
        threshold::Op::Lt => (i.high < t, i.low >= t),
    };
    if right {
        Status::Pass
    } else if wrong {
        Status::Fail
    } else {
        Status::Inconclusive
    }
}

/// Measures one requirement on every input of `report`. An owner or category the rules do
/// not know is a usage error listing what exists, never a silent pass.
pub fn check(
    report: &Report,
    requirement: &Requirement,
    decision: &Decision,
    guards: &Guards,
) -> Result<Evaluation> {
    let first = report
        .inputs
        .first()
        .ok_or_else(|| Error::Usage(format!("--require `{}`: no inputs", requirement.text)))?;
    let resolved = resolve(report, &requirement.subject).ok_or_else(|| {
        let context = format!("--require `{}`", requirement.text);
        Error::Usage(unknown_subject(report, &requirement.subject, &context))
    })?;
    let inputs: Vec<InputShare> = (report.inputs.iter())
        .map(|input| input_share(report, input, &resolved, requirement, decision, guards))
        .collect();
    let shares: Vec<f64> = inputs.iter().map(|i| i.share).collect();
    let spread = Spread::of(&shares);
    let (op, t) = (requirement.op, requirement.threshold);
    let passing = shares.iter().filter(|&&s| op.holds(s, t)).count();
    let measured = measure(&inputs, decision);
    // the widened interval holds the plain one: where it decides, the plain one decides the
    // same, so the status is the plain interval's, and the bounds only refuse (`flips`)
    let status = match measured.interval {
        Some(i) => judge(op, i, t),
        None if passing == shares.len() => Status::Pass,
        None if passing == 0 => Status::Fail,
        None => Status::Inconclusive,
    };
    let bounds = bounds(&inputs, &measured, &spread, op, t, status);
    let to_decide = (status == Status::Inconclusive && measured.interval.is_some())
        .then(|| measured.to_decide(&inputs, t, decision.confidence))
        .flatten();
    let (kind, name) = match resolved {
        Resolved::Owner(i) => ("owner", report.owners[i].name.clone()),
        Resolved::Category(c) => ("category", c.as_str().to_string()),
    };
    Ok(Evaluation {
        requirement: requirement.clone(),
        kind,
        name,
        metric: first.metric.clone(),
        inputs,
        spread,
        passing,
        estimate: measured.estimate,
        interval: measured.interval,
        method: measured.method,
        confidence: decision.confidence,
        to_decide,
        status,
        bounds,
    })
}

/// The subject's share of one input, in the requirement's view: its weight, its interval at
/// the decision's confidence and the weight whose owner is unknown, which may bound it.
fn input_share(
    report: &Report,
    input: &InputReport,
    resolved: &Resolved,
    requirement: &Requirement,
    decision: &Decision,
    guards: &Guards,
) -> InputShare {
    let all = &input.aggregate.all;
    let d = &input.aggregate.dispersion;
    let sums = match resolved {
        Resolved::Owner(i) => d.sums(all, *i, false, requirement.view),
        Resolved::Category(c) => d.sums(all, category_index(*c) as usize, true, requirement.view),
    };
    let estimate = sums.estimate(d.samples as f64);
    let in_subject = |o: usize| match resolved {
        Resolved::Owner(i) => o == *i,
        Resolved::Category(c) => report.owners.get(o).is_some_and(|x| x.category == *c),
    };
    InputShare {
        path: input.path.clone(),
        weight: sums.weight,
        total: all.total,
        share: share(sums.weight, all.total),
        samples: d.samples,
        counted: d.counted,
        interval: estimate.interval(decision.confidence),
        estimate,
        unclassified: input.aggregate.unclassified_percent(requirement.view),
        unknown: unknown_weight(&input.aggregate, requirement, guards, in_subject),
        seconds: d.seconds,
        block_seconds: estimate.block.map(|b| b * d.bucket_nanos as f64 / 1e9),
    }
}

/// The interval widened by the inputs' unknown weight (the mean of their ends over the
/// repeats), where some input has weight over a guard: `flips` when the interval alone
/// decides (`plain`) but the widened one does not.
fn bounds(
    inputs: &[InputShare],
    measured: &Measured,
    spread: &Spread,
    op: threshold::Op,
    t: f64,
    plain: Status,
) -> Option<Bounds> {
    if inputs.iter().all(|i| i.unknown.is_none()) {
        return None;
    }
    let n = inputs.len() as f64;
    let mean_of = |f: fn(&UnknownWeight) -> f64| {
        inputs
            .iter()
            .map(|i| i.unknown.as_ref().map_or(0.0, f))
            .sum::<f64>()
            / n
    };
    let (down, up) = (mean_of(|u| u.down), mean_of(|u| u.up));
    let base = measured.interval.unwrap_or(Interval {
        low: spread.min,
        high: spread.max,
    });
    let interval = Interval {
        low: (base.low - down).max(0.0),
        high: (base.high + up).min(100.0),
    };
    let widened = judge(op, interval, t);
    Some(Bounds {
        down,
        up,
        interval,
        flips: plain != Status::Inconclusive && widened != plain,
    })
}

/// The share a requirement is decided on and its interval.
struct Measured {
    estimate: f64,
    interval: Option<Interval>,
    method: Method,
    /// The standard deviation of one repeat's share (repeats only), points.
    sd: f64,
}

/// One input: its share and sampling interval. Repeats: the mean share and its t interval
/// over the repeats' spread.
fn measure(inputs: &[InputShare], decision: &Decision) -> Measured {
    let shares: Vec<f64> = inputs.iter().map(|i| i.share).collect();
    if decision.point_estimate {
        return Measured {
            estimate: Spread::of(&shares).median,
            interval: None,
            method: Method::Point,
            sd: 0.0,
        };
    }
    match inputs {
        [one] => Measured {
            estimate: one.share,
            interval: Some(one.interval),
            method: one.estimate.method,
            sd: 0.0,
        },
        many => {
            let estimates: Vec<Estimate> = many.iter().map(|i| i.estimate).collect();
            let (mean, interval) = interval::of_repeats(&shares, &estimates, decision.confidence);
            Measured {
                estimate: mean,
                interval: Some(interval),
                method: Method::RepeatsT,
                sd: interval::repeats_sd(&shares),
            }
        }
    }
}

impl Measured {
    /// What would decide an inconclusive interval: seconds of recording at the same rate
    /// where one profile says how long it ran, samples where it counts them but not the
    /// time, repeats otherwise (never distinct stacks: nobody records those).
    fn to_decide(&self, inputs: &[InputShare], t: f64, confidence: f64) -> Option<ToDecide> {
        match inputs {
            [one] => {
                let needed = one.estimate.samples_to_decide(t, confidence)?;
                match (one.counted, one.seconds) {
                    (true, Some(now)) if one.samples > 0 => Some(ToDecide::Seconds {
                        needed: now * needed / one.samples as f64,
                        now,
                    }),
                    (true, _) => Some(ToDecide::Samples { needed }),
                    (false, _) => interval::repeats_to_decide(
                        self.estimate,
                        one.estimate.var.sqrt() * 100.0,
                        t,
                        confidence,
                    )
                    .map(ToDecide::Repeats),
                }
            }
            _ => interval::repeats_to_decide(self.estimate, self.sd, t, confidence)
                .map(ToDecide::Repeats),
        }
    }
}

/// A bare name is an owner when the rules declare one, else a category.
pub fn resolve(report: &Report, subject: &Subject) -> Option<Resolved> {
    let owner = |n: &str| report.owners.iter().position(|o| o.name == n);
    match subject {
        Subject::Owner(n) => owner(n).map(Resolved::Owner),
        Subject::Category(c) => Some(Resolved::Category(*c)),
        Subject::Name(n) => owner(n)
            .map(Resolved::Owner)
            .or_else(|| Category::parse(n).map(Resolved::Category)),
    }
}

/// Declared owners without weight listed by name in an error; presets declare many.
const MAX_LISTED: usize = 12;

/// The error for a subject nobody declared, after `context` (`--require `...``, `top`): the
/// owners with weight in these inputs (the likely intended ones), how many declared owners
/// have none, and the categories.
pub fn unknown_subject(report: &Report, subject: &Subject, context: &str) -> String {
    let (with_weight, without): (Vec<&str>, Vec<&str>) = report
        .owners
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let has = report.inputs.iter().any(|inp| {
                let w = &inp.aggregate.all.owners[i];
                w.self_ + w.owner + w.anywhere > 0
            });
            (o.name.as_str(), has)
        })
        .fold((Vec::new(), Vec::new()), |(mut a, mut b), (n, has)| {
            if has {
                a.push(n)
            } else {
                b.push(n)
            }
            (a, b)
        });
    let categories: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
    let what = match subject {
        Subject::Owner(n) => format!("no owner `{n}`"),
        other => format!("no owner or category `{other}`"),
    };
    format!(
        "{context}: {what}; owners with weight in these profiles: {}{}; categories \
         (category:NAME): {}",
        if with_weight.is_empty() {
            "none".to_string()
        } else {
            with_weight.join(", ")
        },
        match without.len() {
            0 => String::new(),
            n if n > MAX_LISTED => format!(
                "; declared without weight: {} and {} more",
                without[..MAX_LISTED].join(", "),
                n - MAX_LISTED
            ),
            _ => format!("; declared without weight: {}", without.join(", ")),
        },
        categories.join(", ")
    )
}

//! The gate: does an owned share meet a requirement, over every repeat? And (`diff`) is a
//! change between two sets of profiles bigger than their spread? Pure decisions on a
//! [`Report`]; no I/O, no formatting.
//!
//! Several inputs in one report are repeats of one experiment. A requirement must hold over
//! the whole min–max range of its share (the smallest repeat for `>=`/`>`, the largest for
//! `<=`/`<`): profiles are noisy, and a bound that holds in some repeats and not in others
//! has not been shown to hold. Such a range is reported as *inconclusive* ("k of n repeats
//! pass") and fails.

pub mod diff;
mod fitness;
pub mod threshold;

pub use fitness::{Guards, check_fit};
pub use threshold::{Requirement, Subject, parse, parse_guard, parse_subject};

use crate::aggregate::category_index;
use crate::aggregate::report::{Report, Spread, share};
use crate::error::{Error, Result};
use crate::model::{Category, SampleType};

/// `--any`: one requirement must hold; default: all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    All,
    Any,
}

/// The result of one requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Holds in every repeat.
    Pass,
    /// Holds in none.
    Fail,
    /// Holds in some repeats but not all: the range straddles the threshold. Counts as a fail.
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
    /// How many inputs satisfy the requirement on their own.
    pub passing: usize,
    pub status: Status,
}

impl Evaluation {
    /// The share the decision rests on: the min for a lower bound, the max for an upper one.
    pub fn deciding_share(&self) -> f64 {
        if self.requirement.op.is_lower_bound() {
            self.spread.min
        } else {
            self.spread.max
        }
    }
}

/// The verdict over all requirements.
#[derive(Debug, Clone)]
pub struct GateOutcome {
    pub mode: Mode,
    pub results: Vec<Evaluation>,
    pub passed: bool,
}

/// Combines evaluations made on possibly different reports (one per metric) into a verdict.
pub fn decide(results: Vec<Evaluation>, mode: Mode) -> GateOutcome {
    let pass = |e: &Evaluation| e.status == Status::Pass;
    let passed = match mode {
        Mode::All => results.iter().all(pass),
        Mode::Any => results.iter().any(pass),
    };
    GateOutcome {
        mode,
        results,
        passed,
    }
}

/// Measures one requirement on every input of `report`. An owner or category the rules do
/// not know is a usage error listing what exists, never a silent pass.
pub fn check(report: &Report, requirement: &Requirement) -> Result<Evaluation> {
    let first = report
        .inputs
        .first()
        .ok_or_else(|| Error::Usage(format!("--require `{}`: no inputs", requirement.text)))?;
    let resolved = resolve(report, &requirement.subject).ok_or_else(|| {
        let context = format!("--require `{}`", requirement.text);
        Error::Usage(unknown_subject(report, &requirement.subject, &context))
    })?;
    let inputs: Vec<InputShare> = report
        .inputs
        .iter()
        .map(|input| {
            let all = &input.aggregate.all;
            let weights = match resolved {
                Resolved::Owner(i) => &all.owners[i],
                Resolved::Category(c) => &all.categories[category_index(c) as usize],
            };
            let weight = requirement.view.of(weights);
            InputShare {
                path: input.path.clone(),
                weight,
                total: all.total,
                share: share(weight, all.total),
            }
        })
        .collect();
    let shares: Vec<f64> = inputs.iter().map(|i| i.share).collect();
    let spread = Spread::of(&shares);
    let (op, t) = (requirement.op, requirement.threshold);
    let passing = shares.iter().filter(|&&s| op.holds(s, t)).count();
    let status = if passing == shares.len() {
        Status::Pass
    } else if passing == 0 {
        Status::Fail
    } else {
        Status::Inconclusive
    };
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
        status,
    })
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

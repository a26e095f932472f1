//! Whether an input can carry a verdict at all (issue 14): a gate that passes or fails on a
//! recording without call chains, with its addresses unnamed or its samples lost judges the
//! recording, not the code. Such input is refused with the guard, the figure and the fix.
//!
//! Weight whose owner is unknown — stacks cut short (`--max-ownerless`), frames nobody names
//! (`--max-unclassified`) — is a bound, not a refusal (issue 54): over its guard, it could
//! belong to the subject or not, so the share lies between the two ends ([`UnknownWeight`]),
//! and the gate refuses only when the verdict differs between them.

use crate::aggregate::Aggregate;
use crate::aggregate::quality::{CutShortAdvice, percent};
use crate::aggregate::report::{Report, View};
use crate::gate::{Requirement, Subject};
use crate::model::{Category, UNCLASSIFIED};

/// `--max-unresolved`, `--max-ownerless`, `--max-lost` and `--max-unclassified`, in percent
/// (100 turns a guard off).
///
/// Truncated DWARF stacks have no guard of their own: a cut that leaves only transparent
/// frames is ownerless (guarded), and a cut above the owner frame leaves the owner view right.
/// Throttling has none either: perf does not say how many samples it cost. Both are findings
/// in the report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Guards {
    pub max_unresolved: f64,
    pub max_ownerless: f64,
    pub max_lost: f64,
    /// The share of a view that frames no rule and no guess names may decide (issue 29): a
    /// verdict on 80 % unclassified weight judges the rules, not the code.
    pub max_unclassified: f64,
}

/// An input that cannot carry a verdict on `view`, and why: `render::verdict::unfit` words it.
#[derive(Debug, Clone, PartialEq)]
pub struct Unfit {
    /// The requirement as written.
    pub requirement: String,
    pub path: String,
    pub view: View,
    pub reason: UnfitReason,
    /// For weight whose owner is unknown: the share's interval at both ends, which
    /// straddles the threshold (the verdict could flip).
    pub range: Option<FlipRange>,
}

/// The range a share could lie in, whoever the unknown weight belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct FlipRange {
    /// The owner or category required.
    pub subject: String,
    /// The interval from the low end's low to the high end's high, percent.
    pub interval: crate::aggregate::interval::Interval,
    pub threshold: f64,
}

/// Which guard refused, with its figure (percent of the view's weight) and limit.
#[derive(Debug, Clone, PartialEq)]
pub enum UnfitReason {
    /// Every stack is one frame: the owner and anywhere views are the self view.
    NoCallChains,
    /// Addresses without a symbol decide `percent` of the view (`--max-unresolved`).
    Unresolved { percent: f64, limit: f64 },
    /// Stacks cut short hold `percent` (`--max-ownerless`); why and what to do.
    CutShort {
        percent: f64,
        limit: f64,
        advice: CutShortAdvice,
    },
    /// perf lost `percent` of the samples (`--max-lost`).
    Lost { percent: f64, limit: f64 },
    /// The recording holds no frame of the program's language, only `runtime`'s native code
    /// (perf without rbspy or a JIT map): user code's share cannot be read, whatever it is.
    NoLanguageFrames {
        unit: crate::classify::unit::UnitKind,
        runtime: String,
    },
    /// Frames no rule and no guess names decide `percent` (`--max-unclassified`).
    Unclassified {
        percent: f64,
        limit: f64,
        claim: Claim,
    },
}

/// How to claim the heaviest unclassified frames.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// `--user PREFIX` covers them.
    UserPrefix(String),
    /// The heaviest unclassified frame, for a rule file.
    Heaviest(String),
    /// Nothing to name.
    Rules,
}

/// Checks every input of `report` (the repeats `requirement` is measured over) against the
/// guards for the requirement's view: the first input unfit for it, with the guard and by
/// how much; `None` when every input can carry a verdict.
pub fn check_fit(report: &Report, requirement: &Requirement, guards: &Guards) -> Option<Unfit> {
    let unseen = (report.own_code_declined.iter())
        .find_map(|d| Some((d.unit, d.runtime_only()?.to_string())))
        .filter(|_| is_user(&requirement.subject));
    report.inputs.iter().find_map(|input| {
        let unseen = unseen
            .clone()
            .map(|(unit, runtime)| UnfitReason::NoLanguageFrames { unit, runtime });
        unseen
            .or_else(|| unfit_reason(&input.aggregate, requirement, guards))
            .map(|reason| Unfit {
                requirement: requirement.text.clone(),
                path: input.path.clone(),
                view: requirement.view,
                reason,
                range: None,
            })
    })
}

/// Whether a requirement is on the program's own code: the `user` owner or category.
fn is_user(subject: &Subject) -> bool {
    match subject {
        Subject::Name(name) | Subject::Owner(name) => name == "user",
        Subject::Category(category) => *category == Category::User,
    }
}

/// The first guard one input's figures fail for `requirement`'s view.
fn unfit_reason(
    aggregate: &Aggregate,
    requirement: &Requirement,
    guards: &Guards,
) -> Option<UnfitReason> {
    let view = requirement.view;
    let total = aggregate.all.total;
    let quality = &aggregate.quality;
    if view != View::Self_ && !quality.callchains() {
        return Some(UnfitReason::NoCallChains);
    }
    let unresolved = match view {
        View::Self_ => quality.unresolved_leaf,
        View::Owner => quality.unresolved_owner,
        View::Anywhere => quality.unresolved_anywhere,
    };
    let unresolved = percent(unresolved, total);
    if unresolved > guards.max_unresolved {
        return Some(UnfitReason::Unresolved {
            percent: unresolved,
            limit: guards.max_unresolved,
        });
    }
    let lost = quality.recording.lost_percent();
    if lost > guards.max_lost {
        return Some(UnfitReason::Lost {
            percent: lost,
            limit: guards.max_lost,
        });
    }
    None
}

/// The weight of one input whose owner the recording or the rules leave unknown, over its
/// guard: how far (percentage points) the subject's share could be below or above the one
/// measured, and the guards it is over.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownWeight {
    /// The part of the measured share that could belong to others (points).
    pub down: f64,
    /// The part of the rest that could belong to the subject (points).
    pub up: f64,
    /// The guards over their limit ([`UnfitReason::CutShort`], [`UnfitReason::Unclassified`]).
    pub over: Vec<UnfitReason>,
}

/// Where `aggregate`'s unknown weight is over its guards for `requirement`, how far it could
/// move the share of `subject`: stacks cut short (in the owner view) were given to the owner
/// of their transparent frames, their real callers unseen, so the part of them the subject
/// holds could be others' and the rest could be the subject's; in the anywhere view the
/// subject could be among the unseen callers of any of them; unclassified frames could be
/// anybody's. `owner_in_subject` tells whether an owner (by index) counts for the subject.
pub fn unknown_weight(
    aggregate: &Aggregate,
    requirement: &Requirement,
    guards: &Guards,
    owner_in_subject: impl Fn(usize) -> bool,
) -> Option<UnknownWeight> {
    let view = requirement.view;
    let total = aggregate.all.total;
    let quality = &aggregate.quality;
    let (mut down, mut up) = (0u128, 0u128);
    let mut over = Vec::new();
    let ownerless = quality.ownerless_percent(total);
    if view != View::Self_ && ownerless > guards.max_ownerless {
        over.push(UnfitReason::CutShort {
            percent: ownerless,
            limit: guards.max_ownerless,
            advice: quality.ownerless_advice(total),
        });
        let mine: u128 = match view {
            View::Owner => (quality.ownerless_by_owner.iter().enumerate())
                .filter(|&(o, _)| owner_in_subject(o))
                .map(|(_, w)| w)
                .sum(),
            _ => 0,
        };
        let (d, u) = quality.cut_short_bounds(mine);
        down += d;
        up += u;
    }
    let unclassified = aggregate.unclassified_percent(view);
    if unclassified > guards.max_unclassified && !about_unclassified(&requirement.subject) {
        over.push(UnfitReason::Unclassified {
            percent: unclassified,
            limit: guards.max_unclassified,
            claim: claim(aggregate),
        });
        up += aggregate.unclassified_weight(view);
    }
    (!over.is_empty()).then(|| UnknownWeight {
        down: percent(down, total),
        up: percent(up.min(total), total),
        over,
    })
}

/// Whether a requirement is about the unclassified weight itself (`unclassified.owner <=
/// 10%`, `category:unknown.self <= 5%`): the guard would refuse the very figure it checks.
fn about_unclassified(subject: &Subject) -> bool {
    match subject {
        Subject::Name(n) => n == UNCLASSIFIED || n == Category::Unknown.as_str(),
        Subject::Owner(n) => n == UNCLASSIFIED,
        Subject::Category(c) => *c == Category::Unknown,
    }
}

/// How to claim the heaviest unclassified frames: the `--user` prefix that covers them, or
/// the heaviest one for a rule file.
fn claim(aggregate: &Aggregate) -> Claim {
    if let Some(hint) = &aggregate.suggested_user {
        return Claim::UserPrefix(hint.prefix.clone());
    }
    match aggregate.unclassified_frames.first() {
        Some(f) => Claim::Heaviest(f.frame.clone()),
        None => Claim::Rules,
    }
}

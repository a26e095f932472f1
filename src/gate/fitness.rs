//! Whether an input can carry a verdict at all (issue 14): a gate that passes or fails on a
//! recording without call chains, with its stacks cut short or its addresses unnamed judges
//! the recording, not the code. Such input is refused with the guard, the figure and the fix.

use crate::aggregate::quality::percent;
use crate::aggregate::report::{Report, View};
use crate::error::{Error, Result};
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

/// Checks every input of `report` (the repeats `requirement` is measured over) against the
/// guards for the requirement's view; the error names the input, the guard and by how much.
pub fn check_fit(report: &Report, requirement: &Requirement, guards: &Guards) -> Result<()> {
    let view = requirement.view;
    for input in &report.inputs {
        let total = input.aggregate.all.total;
        let quality = &input.aggregate.quality;
        let refuse = |why: String| {
            Err(Error::Usage(format!(
                "--require `{}`: {} is unfit for a verdict on the {} view: {why}",
                requirement.text,
                input.path,
                view.as_str()
            )))
        };
        if view != View::Self_ && !quality.callchains() {
            return refuse(
                "it has no call chains (every stack is one frame), so the owner and anywhere \
                 views are only the self view; record with `perf record -g` (or \
                 `--call-graph dwarf`), or require the self view"
                    .to_string(),
            );
        }
        let unresolved = match view {
            View::Self_ => quality.unresolved_leaf,
            View::Owner => quality.unresolved_owner,
            View::Anywhere => quality.unresolved_anywhere,
        };
        let unresolved = percent(unresolved, total);
        if unresolved > guards.max_unresolved {
            return refuse(format!(
                "{unresolved:.1}% of its weight is decided by addresses without a symbol \
                 (--max-unresolved {}%); give whose the JIT maps (--jit-map-dir) or the \
                 binaries' symbols (--binary-path, --symfs), or raise --max-unresolved to accept \
                 them",
                guards.max_unresolved
            ));
        }
        let ownerless = quality.ownerless_percent(total);
        if view != View::Self_ && ownerless > guards.max_ownerless {
            return refuse(format!(
                "{ownerless:.1}% of its weight is in stacks cut short (only transparent frames, \
                 no thread root; --max-ownerless {}%), whose callers the owner view cannot see: \
                 {}; or raise --max-ownerless to accept them",
                guards.max_ownerless,
                quality.ownerless_advice(total)
            ));
        }
        let lost = quality.recording.lost_percent();
        if lost > guards.max_lost {
            return refuse(format!(
                "perf lost {lost:.1}% of its samples (LOST and LOST_SAMPLES records; --max-lost \
                 {}%), and the loss comes in bursts, not evenly over the code; {}, or raise \
                 --max-lost to accept it",
                guards.max_lost,
                crate::model::LOST_FIX
            ));
        }
        let unclassified = input.aggregate.unclassified_percent(view);
        if unclassified > guards.max_unclassified && !about_unclassified(&requirement.subject) {
            return refuse(format!(
                "{unclassified:.1}% of its weight is decided by frames no rule and no guess \
                 names (`unclassified`; --max-unclassified {}%), which could be anybody's: {}; \
                 or raise --max-unclassified to accept them",
                guards.max_unclassified,
                claim_advice(&input.aggregate)
            ));
        }
    }
    Ok(())
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
/// the heaviest one and the rule file `explain` writes.
fn claim_advice(aggregate: &crate::aggregate::Aggregate) -> String {
    if let Some(hint) = &aggregate.suggested_user {
        return format!(
            "the heaviest are under `{0}`; `--user {0}` claims them as user code, a --rules \
             file names their owner if they are somebody else's",
            hint.prefix
        );
    }
    match aggregate.unclassified_frames.first() {
        Some(f) => format!(
            "the heaviest is `{}`; name its owner in a --rules file (`whose explain` lists \
             them and writes the rule)",
            f.frame
        ),
        None => "name their owner in a --rules file (`whose explain` lists them and writes \
                 the rule)"
            .to_string(),
    }
}

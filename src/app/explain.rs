//! `whose explain`: which rule classified each of the heaviest functions, the heaviest
//! functions no rule claims, and what would claim them.

use super::{Detail, Outcome, aggregate_input, choose_metric, load, write_output};
use crate::aggregate::functions::{self, FunctionWeight};
use crate::classify::Decided;
use crate::config::ExplainPlan;
use crate::error::Result;
use crate::model::FrameId;
use crate::render::explain::{self, Explained, Row};

/// Unclassified functions listed under the table at most.
const UNCLASSIFIED_SHOWN: usize = 10;

pub fn run(plan: ExplainPlan) -> Result<Outcome> {
    let loaded = load(std::slice::from_ref(&plan.profile), &plan.load)?;
    let profile = &loaded.profiles[0];
    let metric = choose_metric(profile, &plan.profile, plan.load.metric.as_deref())?;
    // the owners and rules the classification kept: only the rows shown are put in words
    let classes = &loaded.classes[0];
    // one function per name and module, and per rule that claimed it (so a row names one
    // owner and one rule); `--lines` keeps each source line apart, as pprof's -lines does
    let block = |f: FrameId| classes.decided(f).block();
    let weights =
        functions::function_weights(profile, metric, plan.load.types_as_frames, |f: FrameId| {
            let frame = profile.frame(f);
            (
                &frame.name,
                &frame.module,
                classes.owner_of(f),
                block(f),
                plan.lines.then_some((&frame.file, frame.line)),
            )
        });
    let shown: Vec<&FunctionWeight> = weights
        .iter()
        .filter(|w| {
            plan.frame_filter
                .as_ref()
                .is_none_or(|r| r.is_match(&profile.frame(w.frame).name))
        })
        .collect();
    let row = |w: &FunctionWeight| {
        let frame = profile.frame(w.frame);
        Row {
            cum: w.cum,
            flat: w.flat,
            frame,
            owner: classes.owner_of(w.frame),
            reason: loaded.rules.reason(frame, classes.decided(w.frame)),
        }
    };
    let unclassified: Vec<&FunctionWeight> = shown
        .iter()
        .copied()
        .filter(|w| classes.decided(w.frame) == Decided::NO_RULE_MATCHED)
        .collect();
    let input = aggregate_input(&loaded, &plan.load, 0, metric, "", Detail::default());
    let total = input.aggregate.all.total;
    let names: Vec<(&str, u128)> = unclassified
        .iter()
        .map(|w| (&*profile.frame(w.frame).name, w.cum))
        .collect();
    let explained = Explained {
        rows: shown.iter().take(plan.top).map(|w| row(w)).collect(),
        listed: shown.len().min(plan.top),
        functions: shown.len(),
        unclassified: unclassified
            .iter()
            .take(UNCLASSIFIED_SHOWN)
            .map(|w| row(w))
            .collect(),
        unclassified_count: unclassified.len(),
        next_step: functions::next_step(input.aggregate.suggested_user.as_ref(), &names, total),
        lines: plan.lines,
    };
    write_output(None, |out, term| {
        explain::write(&loaded.rules, &input.aggregate, &explained, term.width, out)
    })?;
    super::leave_to_exit(loaded);
    Ok(Outcome::Success)
}

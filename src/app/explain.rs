//! `whose explain`: which rule classified each of the heaviest functions, the heaviest
//! functions no rule claims, and what would claim them.

use super::{Detail, Outcome, aggregate_input, choose_metric, load, write_output};
use crate::aggregate::functions::{self, FunctionWeight};
use crate::classify::Reason;
use crate::config::ExplainPlan;
use crate::error::Result;
use crate::model::{FrameId, OwnerId};
use crate::render::explain::{self, Explained, Row};

/// Unclassified functions listed under the table at most.
const UNCLASSIFIED_SHOWN: usize = 10;

pub fn run(plan: ExplainPlan) -> Result<Outcome> {
    let loaded = load(std::slice::from_ref(&plan.profile), &plan.load)?;
    let profile = &loaded.profiles[0];
    let metric = choose_metric(profile, &plan.profile, plan.load.metric.as_deref())?;
    let reasons: Vec<(OwnerId, Reason)> = profile
        .frames()
        .map(|f| loaded.rules.classify_frame(f))
        .collect();
    // one function per name and module, and per rule that claimed it (so a row names one
    // owner and one rule); `--lines` keeps each source line apart, as pprof's -lines does
    let block = |f: FrameId| match &reasons[f.0 as usize].1 {
        Reason::Rule { block, .. } => Some(*block),
        _ => None,
    };
    let weights =
        functions::function_weights(profile, metric, plan.load.types_as_frames, |f: FrameId| {
            let frame = profile.frame(f);
            (
                &frame.name,
                &frame.module,
                reasons[f.0 as usize].0,
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
        let (owner, reason) = reasons[w.frame.0 as usize].clone();
        Row {
            cum: w.cum,
            flat: w.flat,
            frame: profile.frame(w.frame),
            owner,
            reason,
        }
    };
    let unclassified: Vec<&FunctionWeight> = shown
        .iter()
        .copied()
        .filter(|w| reasons[w.frame.0 as usize].1 == Reason::NoRuleMatched)
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

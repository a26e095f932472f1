//! `whose explain`: which rule classified each of the heaviest frames.

use super::{Detail, Outcome, aggregate_input, choose_metric, load, write_output};
use crate::aggregate;
use crate::config::ExplainPlan;
use crate::error::Result;
use crate::model::FrameId;
use crate::render::explain::{self, Row};

pub fn run(plan: ExplainPlan) -> Result<Outcome> {
    let loaded = load(std::slice::from_ref(&plan.profile), &plan.load)?;
    let profile = &loaded.profiles[0];
    let metric = choose_metric(profile, &plan.profile, plan.load.metric.as_deref())?;
    let weights = aggregate::frame_inclusive_weights(profile, metric);
    let mut frames: Vec<(usize, u128)> = weights
        .into_iter()
        .enumerate()
        .filter(|(i, w)| {
            *w > 0
                && plan
                    .frame_filter
                    .as_ref()
                    .is_none_or(|r| r.is_match(&profile.frame(FrameId(*i as u32)).name))
        })
        .collect();
    frames.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let rows: Vec<Row> = frames
        .iter()
        .take(plan.top)
        .map(|&(i, weight)| {
            let frame = profile.frame(FrameId(i as u32));
            let (owner, reason) = loaded.rules.classify_frame(frame);
            Row {
                weight,
                frame,
                owner,
                reason,
            }
        })
        .collect();
    let input = aggregate_input(&loaded, &plan.load, 0, metric, "", Detail::default());
    write_output(None, |out, _| {
        explain::write(&loaded.rules, &input.aggregate, &rows, out)
    })?;
    Ok(Outcome::Success)
}

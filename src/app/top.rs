//! `whose top OWNER|CATEGORY PROFILE`: the heaviest functions of one owner, as `pprof -top`
//! restricted to it.

use super::{Detail, Outcome, aggregate_input, build_report, choose_metric, load, write_output};
use crate::aggregate::functions;
use crate::aggregate::report::{GroupBy, View};
use crate::config::{ReportShape, TopPlan};
use crate::error::{Error, Result};
use crate::gate::{self, Resolved};
use crate::model::{FrameId, OwnerId};
use crate::render::top::{self, Listing, Row};

pub fn run(plan: TopPlan) -> Result<Outcome> {
    let loaded = load(std::slice::from_ref(&plan.profile), &plan.load)?;
    let profile = &loaded.profiles[0];
    let metric = choose_metric(profile, &plan.profile, plan.load.metric.as_deref())?;
    let source = match plan.load.metric {
        Some(_) => "--metric",
        None => "default",
    };
    let input = aggregate_input(&loaded, &plan.load, 0, metric, source, Detail::default());
    let report = build_report(
        &loaded,
        vec![input],
        ReportShape::repeats(GroupBy::Owner, View::ALL.to_vec()),
    );
    let resolved = gate::resolve(&report, &plan.subject).ok_or_else(|| {
        let context = format!("top `{}`", plan.subject);
        Error::Usage(gate::unknown_subject(&report, &plan.subject, &context))
    })?;
    let classes = &loaded.classes[0];
    let rules = &loaded.rules;
    let in_subject = |owner: OwnerId| match &resolved {
        Resolved::Owner(i) => owner.0 as usize == *i,
        Resolved::Category(c) => rules.owner(owner).category == *c,
    };
    // functions as explain folds them: one per name, module and owner
    let mut mine: Vec<_> =
        functions::function_weights(profile, metric, plan.load.types_as_frames, |f: FrameId| {
            let frame = profile.frame(f);
            (&frame.name, &frame.module, classes.owner_of(f))
        })
        .into_iter()
        .filter(|w| in_subject(classes.owner_of(w.frame)))
        .collect();
    if !plan.by_cum {
        // pprof -top's order: flat, then cum, then name
        mine.sort_by(|a, b| {
            b.flat.cmp(&a.flat).then(b.cum.cmp(&a.cum)).then_with(|| {
                profile
                    .frame(a.frame)
                    .name
                    .cmp(&profile.frame(b.frame).name)
            })
        });
    }
    let listing = Listing {
        report: &report,
        resolved: &resolved,
        functions: mine.len(),
        flat_sum: mine.iter().map(|w| w.flat).sum(),
        rows: mine
            .iter()
            .take(plan.top)
            .map(|w| Row {
                flat: w.flat,
                cum: w.cum,
                frame: profile.frame(w.frame),
                owner: &rules.owner(classes.owner_of(w.frame)).name,
            })
            .collect(),
        by_cum: plan.by_cum,
    };
    write_output(plan.output.as_deref(), |out, _| top::write(&listing, out))?;
    super::leave_to_exit(loaded);
    Ok(Outcome::Success)
}

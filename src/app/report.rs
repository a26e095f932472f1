//! `whose report`: the owner table.

use super::{
    Detail, Loaded, Outcome, build_report, choose_metrics, input_reports, load, metric_mismatch,
    write_output,
};
use crate::aggregate::page::{DEFAULT_MIN_SHARE, page_input};
use crate::aggregate::report::InputReport;
use crate::aggregate::report::{Combine, GroupBy, Report};
use crate::aggregate::rows::InputLabels;
use crate::aggregate::timeline::{self, BucketSize, OwnerTimeline, Slotting, TimelineError};
use crate::config::{LoadConfig, ReportPlan};
use crate::error::{Error, Result};
use crate::model::Unit;
use crate::render;
use crate::render::OutputFormat;
use crate::render::html::HtmlInput;

pub fn run(plan: ReportPlan) -> Result<Outcome> {
    if !plan.each.is_empty()
        && let Some(format) = plan.format.row_format()
    {
        return super::each::run(plan, format);
    }
    if plan.format == OutputFormat::Html {
        super::output::refuse_terminal(
            plan.output.as_deref(),
            "an HTML page",
            "write it to a file with `-o report.html` and open that in a browser",
        )?;
    }
    let loaded = load(&plan.profiles, &plan.load)?;
    let metrics = choose_metrics(&loaded, &plan.load)?;
    let detail = Detail {
        top: plan.top,
        threads: plan.threads,
        ..Detail::default()
    };
    let mut inputs = super::timed("aggregating", || {
        input_reports(&loaded, &plan.load, &metrics, detail)
    });
    if plan.shape.by == GroupBy::Time {
        for (i, input) in inputs.iter_mut().enumerate() {
            input.aggregate.timeline = Some(owner_timeline(
                &loaded,
                &plan.load,
                plan.bucket,
                i,
                metrics[i],
            )?);
        }
    }
    if plan.format == OutputFormat::Html {
        add_timelines(&loaded, &plan.load, plan.bucket, &mut inputs, &metrics)?;
    }
    if plan.shape.combine == Combine::Merge {
        inputs = vec![Report::merge_inputs(inputs)?];
    }
    if plan.shape.combine == Combine::Repeats
        && let Some(mismatch) = metric_mismatch(&inputs)
    {
        return Err(Error::Usage(format!(
            "--repeats needs one metric: {mismatch}"
        )));
    }
    if plan.shape.by == GroupBy::Type && inputs.iter().all(|i| i.aggregate.types.is_empty()) {
        return Err(Error::Usage(
            "--by type: no allocated types in these profiles (only async-profiler allocation \
             profiles end their stacks with the allocated class)"
                .into(),
        ));
    }
    let labels = InputLabels {
        values: inputs
            .iter()
            .map(|i| plan.labels.values(&i.path, Vec::new()))
            .collect(),
        keys: plan.labels.clone(),
    };
    let report = build_report(&loaded, inputs, plan.shape.clone());
    if plan.format == OutputFormat::Html {
        return write_page(&loaded, &plan, &report, &metrics);
    }
    super::timed("rendering", || {
        write_output(plan.output.as_deref(), |out, term| {
            render::render(&report, plan.format, term, &labels, out)
        })
    })?;
    super::leave_to_exit(loaded);
    Ok(Outcome::Success)
}

/// `--format html`: each input's call tree and weights (per time bucket where it has
/// them), written as one page.
fn write_page(
    loaded: &Loaded,
    plan: &ReportPlan,
    report: &Report,
    metrics: &[usize],
) -> Result<Outcome> {
    let pages = page_inputs(loaded, report, metrics, plan.load.types_as_frames);
    write_output(plan.output.as_deref(), |out, _| {
        render::html::write(report, &loaded.rules, &pages, DEFAULT_MIN_SHARE, out)
    })?;
    Ok(Outcome::Success)
}

/// What the HTML page draws of each input of `report` (input `i` read as `loaded`'s profile
/// `i`, weighed in `metrics[i]`): its call tree and weights, per time bucket where the
/// report has a timeline. The one place a page's data is made (`report`, `flame --split`).
pub(super) fn page_inputs<'a>(
    loaded: &'a Loaded,
    report: &'a Report,
    metrics: &[usize],
    types_as_frames: bool,
) -> Vec<HtmlInput<'a>> {
    report
        .inputs
        .iter()
        .enumerate()
        .map(|(i, input)| {
            let profile = &loaded.profiles[i];
            let timed = profile
                .meta
                .timeline
                .as_ref()
                .zip(input.aggregate.timeline.as_ref());
            // the report's own bucketing where it has a timeline, else one bucket
            let slotting =
                timed.and_then(|(t, shown)| Some((t, Slotting::new(t, shown.size).ok()??)));
            let weights: Vec<_> = match slotting {
                Some((t, slotting)) => timeline::stack_weights(t, &slotting, metrics[i]).collect(),
                None => profile
                    .rows()
                    .map(|row| (0, row.stack, row.values[metrics[i]]))
                    .filter(|&(_, _, w)| w > 0)
                    .collect(),
            };
            HtmlInput {
                profile,
                page: page_input(
                    profile,
                    &loaded.rules,
                    &loaded.classes[i],
                    types_as_frames,
                    &weights,
                    DEFAULT_MIN_SHARE,
                ),
                timeline: input.aggregate.timeline.as_ref(),
            }
        })
        .collect()
}

/// Input `i`'s owners per time bucket; an error names what the input or `--bucket` lacks.
/// The owners per time bucket of every input that has sample times (the HTML page shows
/// time, and the warm-up, wherever the input has it).
pub(super) fn add_timelines(
    loaded: &Loaded,
    load: &LoadConfig,
    bucket: BucketSize,
    inputs: &mut [InputReport],
    metrics: &[usize],
) -> Result<()> {
    for (i, input) in inputs.iter_mut().enumerate() {
        if loaded.profiles[i].meta.timeline.is_some() {
            input.aggregate.timeline = Some(owner_timeline(loaded, load, bucket, i, metrics[i])?);
        }
    }
    Ok(())
}

fn owner_timeline(
    loaded: &Loaded,
    load: &LoadConfig,
    bucket: BucketSize,
    i: usize,
    metric: usize,
) -> Result<OwnerTimeline> {
    let profile = &loaded.profiles[i];
    let path = loaded.paths[i].display();
    let no_time = || {
        Error::Usage(format!(
            "--by time: {path} has no time per sample (whose reads sample times from perf.data, \
             perf script and JFR recordings)"
        ))
    };
    let t = profile.meta.timeline.as_ref().ok_or_else(no_time)?;
    timeline::owner_timeline(
        profile,
        t,
        &loaded.rules,
        &loaded.classes[i],
        metric,
        load.types_as_frames,
        bucket,
    )
    .map_err(|e| {
        Error::Usage(match e {
            TimelineError::Narrow { width, resolution } => format!(
                "--bucket: {path}'s samples are kept in buckets of {}, so a bucket of {} \
                 cannot be drawn; give {} or more",
                Unit::Nanoseconds.format(resolution.into()),
                Unit::Nanoseconds.format(width.into()),
                Unit::Nanoseconds.format(resolution.into())
            ),
            TimelineError::Many { count } => format!(
                "--bucket: {path} would need {count} buckets, more than the {} a report \
                 shows; give a wider bucket",
                timeline::MAX_SHOWN
            ),
        })
    })?
    .ok_or_else(no_time)
}

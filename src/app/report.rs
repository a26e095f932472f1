//! `whose report`: the owner table.

use super::{
    Detail, Outcome, build_report, choose_metrics, input_reports, load, metric_mismatch,
    write_output,
};
use crate::aggregate::report::{Combine, GroupBy, Report};
use crate::aggregate::rows::InputLabels;
use crate::config::ReportPlan;
use crate::error::{Error, Result};
use crate::render;

pub fn run(plan: ReportPlan) -> Result<Outcome> {
    if !plan.each.is_empty()
        && let Some(format) = plan.format.row_format()
    {
        return super::each::run(plan, format);
    }
    let loaded = load(&plan.profiles, &plan.load)?;
    let metrics = choose_metrics(&loaded, &plan.load)?;
    let detail = Detail {
        top: plan.top,
        threads: plan.threads,
    };
    let mut inputs = input_reports(&loaded, &plan.load, &metrics, detail);
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
    let report = build_report(&loaded, inputs, plan.shape);
    write_output(plan.output.as_deref(), |out, term| {
        render::render(&report, plan.format, term, &labels, out)
    })?;
    Ok(Outcome::Success)
}

//! `whose diff BASE... --against NEW...`: share deltas per owner and view, each tested for
//! significance (see `gate::compare` for the test).

use super::{
    Detail, Outcome, build_report, choose_metrics, input_reports, load, metric_mismatch,
    write_output,
};
use crate::config::DiffPlan;
use crate::error::{Error, Result};
use crate::gate::compare;
use crate::render;

pub fn run(plan: DiffPlan) -> Result<Outcome> {
    // one load, so both sides share one rule set and their owners line up
    let paths: Vec<_> = plan.base.iter().chain(&plan.against).cloned().collect();
    let loaded = load(&paths, &plan.load)?;
    let metrics = choose_metrics(&loaded, &plan.load)?;
    let inputs = input_reports(&loaded, &plan.load, &metrics, Detail::default());
    if let Some(mismatch) = metric_mismatch(&inputs) {
        return Err(Error::Usage(format!(
            "diff needs one metric on both sides: {mismatch}; choose one with --metric"
        )));
    }
    let report = build_report(&loaded, inputs, plan.shape);
    let result = compare::diff(&report, plan.base.len(), plan.confidence);
    write_output(plan.output.as_deref(), |out, term| {
        render::comparison::render(&result, plan.format, term.width, out)
    })?;
    super::leave_to_exit(loaded);
    Ok(Outcome::Success)
}

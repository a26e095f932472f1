//! `whose diff BASE... --against NEW...`: share deltas per owner and view, judged against
//! the spread of the repeats (see `gate::diff` for the rule).

use super::{Outcome, input_reports, load, write_output};
use crate::aggregate::report::{Combine, GroupBy, Report};
use crate::cli::DiffArgs;
use crate::config::{self, LoadConfig};
use crate::error::{Error, Result};
use crate::gate::diff;
use crate::render;

pub fn run(args: DiffArgs) -> Result<Outcome> {
    let by = args.by;
    if by == GroupBy::Type {
        return Err(Error::Usage(
            "diff --by type is not supported: compare owners or categories".into(),
        ));
    }
    let config = LoadConfig::new(&args.input, &args.rules);
    // one load, so both sides share one rule set and their owners line up
    let paths: Vec<_> = args.base.iter().chain(&args.against).cloned().collect();
    let loaded = load(&paths, &config)?;
    let inputs = input_reports(&loaded, &config, 0, false)?;
    if let Some(other) = inputs.iter().find(|i| i.metric != inputs[0].metric) {
        return Err(Error::Usage(format!(
            "diff needs one metric on both sides: {} has {} ({}) but {} has {} ({}); choose \
             one with --metric",
            inputs[0].path,
            inputs[0].metric.name,
            inputs[0].metric.unit,
            other.path,
            other.metric.name,
            other.metric.unit
        )));
    }
    let report = Report {
        owners: loaded.rules.owners().to_vec(),
        presets: loaded.rules.presets.clone(),
        presets_detected: loaded.rules.presets_detected,
        inputs,
        combine: Combine::Repeats,
        by,
        views: config::views(&args.views),
        per: None,
    };
    let result = diff::diff(&report, args.base.len());
    write_output(args.output.as_deref(), |out, _| {
        render::diff::render(&result, args.format, out)
    })?;
    Ok(Outcome::Success)
}

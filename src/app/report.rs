//! `whose report`: the owner table.

use super::{Outcome, input_reports, load, write_output};
use crate::aggregate::report::{Combine, GroupBy, InputReport, Report};
use crate::cli::ReportArgs;
use crate::config::{self, LoadConfig};
use crate::error::{Error, Result};
use crate::render;

pub fn run(args: ReportArgs) -> Result<Outcome> {
    let config = LoadConfig::new(&args.input, &args.rules);
    let loaded = load(&args.profiles, &config)?;
    let mut inputs = input_reports(&loaded, &config, args.top, args.threads)?;
    let combine = config::combine(args.repeats, args.merge);
    if combine == Combine::Merge {
        inputs = vec![Report::merge_inputs(inputs).map_err(Error::Usage)?];
    }
    if combine == Combine::Repeats {
        check_same_metric(&inputs)?;
    }
    let by = args.by;
    if by == GroupBy::Type && inputs.iter().all(|i| i.aggregate.types.is_empty()) {
        return Err(Error::Usage(
            "--by type: no allocated types in these profiles (only async-profiler allocation \
             profiles end their stacks with the allocated class)"
                .into(),
        ));
    }
    let report = Report {
        owners: loaded.rules.owners().to_vec(),
        presets: loaded.rules.presets.clone(),
        presets_detected: loaded.rules.presets_detected,
        inputs,
        combine,
        by,
        views: config::views(&args.views),
        per: args.per,
    };
    write_output(args.output.as_deref(), |out, color| {
        render::render(&report, args.format, color, out)
    })?;
    Ok(Outcome::Success)
}

fn check_same_metric(inputs: &[InputReport]) -> Result<()> {
    if let Some(first) = inputs.first()
        && let Some(other) = inputs.iter().find(|i| i.metric != first.metric)
    {
        return Err(Error::Usage(format!(
            "--repeats needs one metric: {} has {} but {} has {}",
            first.path, first.metric.name, other.path, other.metric.name
        )));
    }
    Ok(())
}

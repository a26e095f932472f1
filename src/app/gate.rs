//! `whose gate`: requirements on owned shares, decided over every repeat.
//!
//! Each requirement is measured in its metric: `[METRIC]` selects the inputs that have that
//! sample type (a CPU profile and an allocation profile of one run can be gated together),
//! no `[METRIC]` takes `--metric` or every input's default, which must then agree. Each
//! input is aggregated once per metric that some requirement needs.

use super::{Loaded, Outcome, load, write_output};
use crate::aggregate::report::{Combine, GroupBy, InputReport, Report, View};
use crate::aggregate::{self, AggregateOptions};
use crate::cli::GateArgs;
use crate::config::{self, LoadConfig};
use crate::error::{Error, Result};
use crate::gate::{self, Mode, Requirement};
use crate::render;

pub fn run(args: GateArgs) -> Result<Outcome> {
    let requirements = args
        .require
        .iter()
        .map(|text| gate::parse(text).map_err(Error::Usage))
        .collect::<Result<Vec<_>>>()?;
    let config = LoadConfig::new(&args.input, &args.rules);
    let loaded = load(&args.profiles, &config)?;
    let mut reports: Vec<(Option<String>, Report)> = Vec::new();
    let mut results = Vec::new();
    for requirement in &requirements {
        let metric = requirement.metric.clone().or(config.metric.clone());
        let at = match reports.iter().position(|(m, _)| *m == metric) {
            Some(i) => i,
            None => {
                let report = metric_report(&loaded, &config, requirement, metric.as_deref())?;
                reports.push((metric, report));
                reports.len() - 1
            }
        };
        results.push(gate::check(&reports[at].1, requirement).map_err(Error::Usage)?);
    }
    let mode = if args.any { Mode::Any } else { Mode::All };
    let outcome = gate::decide(results, mode);
    let format = config::verdict_format(args.format);
    write_output(args.output.as_deref(), |out, color| {
        render::gate::render(&outcome, format, color, out)
    })?;
    Ok(if outcome.passed {
        Outcome::Success
    } else {
        Outcome::GateFailed
    })
}

/// The repeats a requirement is measured over: the inputs that have its metric (or every
/// input with its default metric), aggregated in that metric.
fn metric_report(
    loaded: &Loaded,
    config: &LoadConfig,
    requirement: &Requirement,
    metric: Option<&str>,
) -> Result<Report> {
    let mut inputs = Vec::new();
    for (i, profile) in loaded.profiles.iter().enumerate() {
        let index = match metric {
            None => profile.default_sample_type,
            Some(name) => match profile.sample_type_index(name) {
                Some(t) => t,
                // [METRIC] picks the inputs that have it; `--metric` must be in every input
                None if requirement.metric.is_some() => continue,
                None => return Err(missing_metric(loaded, requirement, name)),
            },
        };
        inputs.push(aggregate_input(loaded, config, i, index));
    }
    let Some(first) = inputs.first() else {
        return Err(missing_metric(loaded, requirement, metric.unwrap_or("")));
    };
    if let Some(other) = inputs.iter().find(|i| i.metric != first.metric) {
        return Err(Error::Usage(format!(
            "--require `{}`: the inputs are measured in different metrics ({}: {} ({}), {}: \
             {} ({})); add [METRIC] to the requirement, e.g. `{}.{}[{}] ...`",
            requirement.text,
            first.path,
            first.metric.name,
            first.metric.unit,
            other.path,
            other.metric.name,
            other.metric.unit,
            requirement.subject,
            requirement.view.as_str(),
            first.metric.name
        )));
    }
    Ok(Report {
        owners: loaded.rules.owners().to_vec(),
        presets: loaded.rules.presets.clone(),
        presets_detected: loaded.rules.presets_detected,
        inputs,
        combine: Combine::Repeats,
        by: GroupBy::Owner,
        views: View::ALL.to_vec(),
        per: None,
    })
}

/// Aggregates input `i` in sample type `metric` (only totals per owner are needed).
fn aggregate_input(loaded: &Loaded, config: &LoadConfig, i: usize, metric: usize) -> InputReport {
    let profile = &loaded.profiles[i];
    let options = AggregateOptions {
        metric,
        types_as_frames: config.types_as_frames,
        threads: false,
        top: 0,
    };
    InputReport {
        path: loaded.paths[i].display().to_string(),
        metric: profile.sample_types()[metric].clone(),
        metric_source: "gate".to_string(),
        notes: profile.meta.notes.clone(),
        warnings: profile.meta.warnings.clone(),
        aggregate: aggregate::aggregate(profile, &loaded.rules, &loaded.classes[i], &options),
    }
}

/// No input has the metric: list what each has.
fn missing_metric(loaded: &Loaded, requirement: &Requirement, name: &str) -> Error {
    let have: Vec<String> = loaded
        .profiles
        .iter()
        .zip(&loaded.paths)
        .map(|(p, path)| {
            let types: Vec<String> = p
                .sample_types()
                .iter()
                .map(|t| format!("{} ({})", t.name, t.unit))
                .collect();
            format!("{}: {}", path.display(), types.join(", "))
        })
        .collect();
    Error::Usage(format!(
        "--require `{}`: no input has the metric `{name}`; the inputs have: {}",
        requirement.text,
        have.join("; ")
    ))
}

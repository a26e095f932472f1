//! `whose gate`: requirements on owned shares, decided over every repeat.
//!
//! Each requirement is measured in its metric: `[METRIC]` selects the inputs that have that
//! sample type (a CPU profile and an allocation profile of one run can be gated together),
//! no `[METRIC]` takes `--metric` or every input's default, which must then agree. Each
//! input is aggregated once per metric that some requirement needs.

use super::{
    Detail, Loaded, Outcome, aggregate_input, build_report, load, metric_index, metric_mismatch,
    write_output,
};
use crate::aggregate::report::{GroupBy, Report, View};
use crate::config::{GatePlan, LoadConfig, ReportShape};
use crate::error::{Error, Result};
use crate::gate::{self, Requirement};
use crate::render;
use crate::render::verdict::VerdictFormat;

pub fn run(plan: GatePlan) -> Result<Outcome> {
    let outcome = match decide(&plan) {
        Ok(outcome) => outcome,
        Err(e) => {
            if plan.format == VerdictFormat::Json {
                // the verdict file exists on every exit code: here it says why there is none
                let reason = e.to_string();
                write_output(plan.output.as_deref(), |out, _| {
                    render::verdict::json_error(&reason, plan.mode, out)
                })?;
            }
            return Err(e);
        }
    };
    write_output(plan.output.as_deref(), |out, term| {
        render::verdict::render(&outcome, plan.format, term.color, out)
    })?;
    Ok(match outcome.verdict {
        gate::Status::Pass => Outcome::Success,
        gate::Status::Fail => Outcome::GateFailed,
        gate::Status::Inconclusive => Outcome::GateInconclusive,
    })
}

/// Reads the inputs, checks each requirement's fitness and decides.
fn decide(plan: &GatePlan) -> Result<gate::GateOutcome> {
    let loaded = load(&plan.profiles, &plan.load)?;
    let mut reports: Vec<(Option<String>, Report)> = Vec::new();
    let mut results = Vec::new();
    for requirement in &plan.requirements {
        let metric = requirement.metric.clone().or(plan.load.metric.clone());
        let at = match reports.iter().position(|(m, _)| *m == metric) {
            Some(i) => i,
            None => {
                let report = metric_report(&loaded, &plan.load, requirement, metric.as_deref())?;
                reports.push((metric, report));
                reports.len() - 1
            }
        };
        if let Some(unfit) = gate::check_fit(&reports[at].1, requirement, &plan.guards) {
            return Err(Error::Usage(crate::render::verdict::unfit(&unfit)));
        }
        let evaluation = gate::check(&reports[at].1, requirement, &plan.decision, &plan.guards)?;
        if let Some(unfit) = evaluation.unfit() {
            return Err(Error::Usage(crate::render::verdict::unfit(&unfit)));
        }
        results.push(evaluation);
    }
    super::leave_to_exit(loaded);
    Ok(gate::decide(results, plan.mode, &plan.decision))
}

/// The repeats a requirement is measured over: the inputs that have its metric (or every
/// input with its default metric), aggregated in that metric (only totals per owner).
fn metric_report(
    loaded: &Loaded,
    config: &LoadConfig,
    requirement: &Requirement,
    metric: Option<&str>,
) -> Result<Report> {
    let mut inputs = Vec::new();
    // the inputs without a single sample (an unused pprof endpoint), not just without weight
    let mut sampleless = Vec::new();
    for (i, profile) in loaded.profiles.iter().enumerate() {
        let index = match metric_index(profile, metric) {
            Some(t) => t,
            // [METRIC] picks the inputs that have it; `--metric` must be in every input
            None if requirement.metric.is_some() => continue,
            None => return Err(missing_metric(loaded, requirement, metric.unwrap_or(""))),
        };
        if profile.rows().next().is_none() {
            sampleless.push(loaded.paths[i].display().to_string());
        }
        inputs.push(aggregate_input(
            loaded,
            config,
            i,
            index,
            "gate",
            // the heaviest unclassified frame, for the --max-unclassified refusal's advice
            Detail {
                top: 1,
                ..Detail::default()
            },
        ));
    }
    if inputs.is_empty() {
        return Err(missing_metric(loaded, requirement, metric.unwrap_or("")));
    }
    if let Some(empty) = inputs.iter().find(|i| i.aggregate.all.total == 0) {
        // a share of nothing is no measurement: neither a pass nor a fail
        return Err(Error::Usage(format!(
            "--require `{}`: {} has {} (total 0 in metric {}): there is nothing to \
             measure a share of, so no verdict",
            requirement.text,
            empty.path,
            if sampleless.contains(&empty.path) {
                "no samples"
            } else {
                "no weight"
            },
            empty.metric.name
        )));
    }
    if let Some(delta) = inputs.iter().find(|i| i.aggregate.negative.total > 0) {
        // a share of a difference is no share: a gate on it would pass or fail at random
        return Err(Error::Usage(format!(
            "--require `{}`: {} has negative weights in metric {} (-{}, a delta profile): a \
             share of a difference means nothing, so no verdict; gate on a metric without \
             them or on the profiles before subtraction",
            requirement.text,
            delta.path,
            delta.metric.name,
            delta.metric.unit.format(delta.aggregate.negative.total)
        )));
    }
    if let Some(mismatch) = metric_mismatch(&inputs) {
        return Err(Error::Usage(format!(
            "--require `{}`: the inputs are measured in different metrics ({mismatch}); add \
             [METRIC] to the requirement, e.g. `{}.{}[{}] ...`",
            requirement.text,
            requirement.subject,
            requirement.view.as_str(),
            mismatch.first.metric.name
        )));
    }
    let shape = ReportShape::repeats(GroupBy::Owner, View::ALL.to_vec());
    Ok(build_report(loaded, inputs, shape))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::{RuleOptions, RuleSet};
    use crate::gate::Mode;
    use crate::model::{Frame, FrameKind, Profile, SampleType, Unit};
    use std::path::PathBuf;

    /// A profile with two stacks, `main.work` (user by `--user main.`) and `lib.work`, and
    /// the given weights per sample type.
    fn profile(types: Vec<SampleType>, default: usize, user: &[u128], lib: &[u128]) -> Profile {
        let mut p = Profile::new(types);
        p.default_sample_type = default;
        for (name, values) in [("main.work", user), ("lib.work", lib)] {
            let f = p.intern_frame(Frame::named(name, FrameKind::Native));
            let s = p.intern_stack(&[f]);
            p.add_sample(s, None, values);
        }
        p
    }

    /// A CPU profile (user 30 % of cpu) and an allocation profile of the same run (user 60 %
    /// of alloc_space, 10 % of alloc_objects).
    fn cpu_and_alloc() -> (Loaded, LoadConfig) {
        let cpu = profile(
            vec![
                SampleType::new("samples", Unit::Count),
                SampleType::new("cpu", Unit::Nanoseconds),
            ],
            1,
            &[3, 30],
            &[7, 70],
        );
        let alloc = profile(
            vec![
                SampleType::new("alloc_objects", Unit::Count),
                SampleType::new("alloc_space", Unit::Bytes),
            ],
            1,
            &[1, 600],
            &[9, 400],
        );
        let options = RuleOptions {
            user_prefixes: vec!["main.".into()],
            no_presets: true,
            ..RuleOptions::default()
        };
        let profiles = vec![cpu, alloc];
        let rules = RuleSet::build(&options, &profiles).unwrap();
        let classes = profiles.iter().map(|p| rules.classify(p)).collect();
        let loaded = Loaded {
            paths: vec![PathBuf::from("cpu.pb.gz"), PathBuf::from("allocs.pb.gz")],
            profiles,
            rules: rules.into(),
            classes,
        };
        let config = LoadConfig::default();
        (loaded, config)
    }

    fn measure(loaded: &Loaded, config: &LoadConfig, text: &str) -> Result<gate::Evaluation> {
        let r = gate::parse(text).unwrap();
        let report = metric_report(loaded, config, &r, r.metric.as_deref())?;
        // these tests are about which inputs are measured: ten samples decide nothing by
        // interval, so the shares are compared as measured
        let point = gate::Decision {
            point_estimate: true,
            ..gate::Decision::default()
        };
        // guards off: the unknown weight's bounds are tested in `gate`
        let off = gate::Guards {
            max_unresolved: 100.0,
            max_ownerless: 100.0,
            max_lost: 100.0,
            max_unclassified: 100.0,
        };
        gate::check(&report, &r, &point, &off)
    }

    #[test]
    fn each_requirement_is_measured_over_the_inputs_that_have_its_metric() {
        let (loaded, config) = cpu_and_alloc();
        let cpu = measure(&loaded, &config, "user.self[cpu] >= 25%").unwrap();
        assert_eq!(cpu.inputs.len(), 1);
        assert_eq!(cpu.inputs[0].path, "cpu.pb.gz");
        assert_eq!((cpu.inputs[0].weight, cpu.inputs[0].total), (30, 100));
        assert_eq!(cpu.status, gate::Status::Pass);
        let alloc = measure(&loaded, &config, "user.self[alloc_space] >= 50%").unwrap();
        assert_eq!(alloc.inputs[0].path, "allocs.pb.gz");
        assert_eq!(alloc.spread.median, 60.0);
        assert_eq!(alloc.metric.unit, Unit::Bytes);
        let objects = measure(&loaded, &config, "user.self[alloc_objects] >= 50%").unwrap();
        assert_eq!(
            (objects.spread.median, objects.status),
            (10.0, gate::Status::Fail)
        );
        let outcome = gate::decide(vec![cpu, alloc], Mode::All, &gate::Decision::default());
        assert_eq!(outcome.verdict, gate::Status::Pass);
    }

    #[test]
    fn mixed_default_metrics_or_a_missing_metric_are_errors() {
        let (loaded, config) = cpu_and_alloc();
        let e = measure(&loaded, &config, "user.self >= 25%").unwrap_err();
        let e = e.to_string();
        assert!(
            e.contains("different metrics") && e.contains("user.self[cpu]"),
            "{e}"
        );
        let e = measure(&loaded, &config, "user.self[inuse_space] >= 1%")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no input has the metric `inuse_space`")
                && e.contains("cpu.pb.gz: samples (count), cpu (nanoseconds)")
                && e.contains("allocs.pb.gz: alloc_objects (count), alloc_space (bytes)"),
            "{e}"
        );
    }
}

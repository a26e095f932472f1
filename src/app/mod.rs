//! The only module that knows every stage: read → classify → aggregate → render/gate.
//! It runs a [`Plan`] that `config` has already validated, and only orchestrates: the words
//! of every output are composed in `render`. One submodule per command; the shared steps
//! (load, resolve the metric, aggregate each input, check that inputs share a metric,
//! assemble the report, write the output) live here, once each.

mod convert;
mod diff;
mod docs;
mod each;
mod explain;
mod flame;
mod gate;
mod output;
mod report;
mod rules;
mod top;

pub use output::{choose_color, write_output};

use crate::aggregate::report::{InputReport, Report};
use crate::aggregate::{self, AggregateOptions};
use crate::classify::{Classification, RuleSet};
use crate::config::{LoadConfig, Plan, ReportShape};
use crate::error::{Error, Result};
use crate::input;
use crate::model::{Notice, Profile};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a command asks `main` to exit with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    GateFailed,
    /// The gate's intervals straddle a threshold (exit 3).
    GateInconclusive,
}

pub fn run(plan: Plan) -> Result<Outcome> {
    let (inputs, output) = plan.inputs_and_output();
    output::refuse_input_as_output(output, &inputs)?;
    crate::symbolize::locate::exit_cleanly_on_sigbus();
    let fleet = matches!(&plan, Plan::Report(p) if !p.each.is_empty());
    if !fleet && !matches!(plan, Plan::Flame(_)) {
        keep_large_allocations_mapped();
    }
    match plan {
        Plan::Report(plan) => report::run(plan),
        Plan::Explain(plan) => explain::run(plan),
        Plan::Top(plan) => top::run(plan),
        Plan::Flame(plan) => flame::run(plan),
        Plan::Rules(plan) => rules::run(plan),
        Plan::Convert(plan) => convert::run(plan),
        Plan::Gate(plan) => gate::run(plan),
        Plan::Diff(plan) => diff::run(plan),
        Plan::Completions(shell) => docs::completions(shell),
        Plan::Man(command) => docs::man(command.as_deref()),
    }
}

/// glibc raises its mmap threshold each time a mapped block is freed, so a table that grows
/// by doubling ends up in the heap, where each move leaves its old copy as a hole the
/// process keeps: 10 MB of 157 on a million distinct stacks, 17 MB of 247 for their flame
/// graph (issue 24). A fixed threshold (glibc's default, 128 KiB) keeps large blocks mapped,
/// grown by mremap and returned whole when freed. Not for `--each`, whose thousands of small
/// inputs would map and unmap each buffer (6-20 % slower), nor for `flame`, which frees and
/// makes large buffers again while it draws: fresh mapped pages are 28 k more page faults
/// there, 4 % of its time, for 17 MB.
fn keep_large_allocations_mapped() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter, under the allocator's own lock
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// Profiles read and classified against one shared rule set.
pub struct Loaded {
    pub paths: Vec<PathBuf>,
    pub profiles: Vec<Profile>,
    /// Shared, not cloned, by `--each`'s inputs: a clone of a regex starts with empty lazy-DFA
    /// caches, which every input would then rebuild.
    pub rules: Arc<RuleSet>,
    pub classes: Vec<Classification>,
}

/// Reads every input, builds one rule set for all of them (presets detected over all), and
/// classifies each distinct frame once per profile.
pub fn load(paths: &[PathBuf], config: &LoadConfig) -> Result<Loaded> {
    let profiles = timed("reading", || {
        (paths.iter())
            .map(|p| input::read_profile(p, &config.read))
            .collect::<Result<Vec<_>>>()
    })?;
    for p in &profiles {
        for w in &p.meta.warnings {
            output::warn(&crate::render::notices::text(w));
        }
    }
    let (rules, classes) = timed("classifying", || {
        RuleSet::build_classified(&config.rules, &profiles)
    })?;
    Ok(Loaded {
        paths: paths.to_vec(),
        profiles,
        rules: Arc::new(rules),
        classes,
    })
}

/// `f`, and with `WHOSE_TIMINGS` set the time it took on stderr as `whose: timings: STAGE
/// 0.123 s`: the stages of a command for the benchmark (bench/), beside the perf.data
/// reader's own.
pub fn timed<T>(stage: &str, f: impl FnOnce() -> T) -> T {
    if std::env::var_os("WHOSE_TIMINGS").is_none() {
        return f();
    }
    let started = std::time::Instant::now();
    let result = f();
    eprintln!(
        "whose: timings: {stage} {:.3} s",
        started.elapsed().as_secs_f64()
    );
    result
}

/// Leaves what a command read to the end of the process instead of freeing it piece by
/// piece: a profile of a million distinct frames is a million allocations, 40 ms to free one
/// by one, which the operating system reclaims at exit at once (clang's `-disable-free`).
/// Called last in a command, once its output is written.
pub fn leave_to_exit(loaded: Loaded) {
    std::mem::forget(loaded);
}

/// The index of sample type `metric` in `profile`, or of its default type when `metric` is
/// `None`; `None` when the profile has no such type. The one place a metric is resolved.
pub fn metric_index(profile: &Profile, metric: Option<&str>) -> Option<usize> {
    match metric {
        None => Some(profile.default_sample_type),
        Some(name) => profile.sample_type_index(name),
    }
}

/// The sample type to weigh `profile` (read from `path`) by: `--metric` if given (an error
/// listing the types if the profile lacks it), else the profile's default.
pub fn choose_metric(profile: &Profile, path: &Path, metric: Option<&str>) -> Result<usize> {
    metric_index(profile, metric).ok_or_else(|| {
        let types: Vec<String> = profile
            .sample_types()
            .iter()
            .map(|t| format!("{} ({})", t.name, t.unit))
            .collect();
        Error::Usage(format!(
            "{}: has no sample type `{}`; it has: {}",
            path.display(),
            metric.unwrap_or_default(),
            types.join(", ")
        ))
    })
}

/// `--metric` (or each default) resolved in every loaded profile, in load order.
pub fn choose_metrics(loaded: &Loaded, config: &LoadConfig) -> Result<Vec<usize>> {
    loaded
        .profiles
        .iter()
        .zip(&loaded.paths)
        .map(|(profile, path)| choose_metric(profile, path, config.metric.as_deref()))
        .collect()
}

/// What to aggregate beyond the per-owner totals every command needs.
#[derive(Debug, Clone, Copy)]
pub struct Detail {
    /// Heaviest frames kept in each list, in total.
    pub top: usize,
    /// Split by thread name.
    pub threads: bool,
    /// The sums behind the shares' error bars: every output that shows a share with its
    /// interval, a gate and a diff need them; a flame graph does not.
    pub intervals: bool,
    /// Look for the `--user` prefix that would claim the most unclassified weight: every
    /// output that shows findings words it; `report --each`'s rows keep warnings only.
    pub user_hint: bool,
}

impl Default for Detail {
    fn default() -> Self {
        Detail {
            top: 0,
            threads: false,
            intervals: true,
            user_hint: true,
        }
    }
}

/// Aggregates loaded input `i` in sample type `metric`; `metric_source` says where the
/// metric came from (`--metric`, `default`, `gate`) in the JSON output.
pub fn aggregate_input(
    loaded: &Loaded,
    config: &LoadConfig,
    i: usize,
    metric: usize,
    metric_source: &str,
    detail: Detail,
) -> InputReport {
    let profile = &loaded.profiles[i];
    let options = AggregateOptions {
        metric,
        types_as_frames: config.types_as_frames,
        threads: detail.threads,
        top: detail.top,
        intervals: detail.intervals,
        user_hint: detail.user_hint,
    };
    let aggregate = aggregate::aggregate(profile, &loaded.rules, &loaded.classes[i], &options);
    let mut notes = profile.meta.notes.clone();
    if aggregate.all.total == 0 {
        notes.push(Notice::NoWeight {
            metric: profile.sample_types()[metric].name.clone(),
        });
    }
    InputReport {
        path: loaded.paths[i].display().to_string(),
        metric: profile.sample_types()[metric].clone(),
        metric_source: metric_source.to_string(),
        notes,
        warnings: profile.meta.warnings.clone(),
        aggregate,
    }
}

/// Aggregates every loaded profile in its metric from [`choose_metrics`].
pub fn input_reports(
    loaded: &Loaded,
    config: &LoadConfig,
    metrics: &[usize],
    detail: Detail,
) -> Vec<InputReport> {
    let source = if config.metric.is_some() {
        "--metric"
    } else {
        "default"
    };
    metrics
        .iter()
        .enumerate()
        .map(|(i, &metric)| aggregate_input(loaded, config, i, metric, source, detail))
        .collect()
}

/// The report of `inputs` in `shape`, owning the loaded rule set's owners and presets: the
/// one place a [`Report`] is assembled.
pub fn build_report(loaded: &Loaded, inputs: Vec<InputReport>, shape: ReportShape) -> Report {
    Report {
        owners: loaded.rules.owners().to_vec(),
        presets: loaded.rules.presets.clone(),
        presets_detected: loaded.rules.presets_detected,
        own_code: loaded.rules.own_code.clone(),
        own_code_declined: loaded.rules.own_code_declined.clone(),
        guessed: loaded.rules.guessed.clone(),
        guesses_off: !loaded.rules.guesses(),
        inputs,
        combine: shape.combine,
        by: shape.by,
        views: shape.views,
        per: shape.per,
        ci: shape.ci,
    }
}

/// The first input and the first other input measured in a different metric, if any: every
/// command that compares inputs needs one metric, and each says why in its own words.
pub fn metric_mismatch(inputs: &[InputReport]) -> Option<MetricMismatch<'_>> {
    let first = inputs.first()?;
    let other = inputs.iter().find(|i| i.metric != first.metric)?;
    Some(MetricMismatch { first, other })
}

/// Two inputs in different metrics; shown as `A has cpu (nanoseconds) but B has samples (count)`.
pub struct MetricMismatch<'a> {
    pub first: &'a InputReport,
    pub other: &'a InputReport,
}

impl std::fmt::Display for MetricMismatch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (first, other) = (self.first, self.other);
        write!(
            f,
            "{} has {} ({}) but {} has {} ({})",
            first.path,
            first.metric.name,
            first.metric.unit,
            other.path,
            other.metric.name,
            other.metric.unit
        )
    }
}

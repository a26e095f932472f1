//! The only module that knows every stage: read → classify → aggregate → render.

use crate::aggregate::report::{Combine, GroupBy, InputReport, Report};
use crate::aggregate::{self, AggregateOptions};
use crate::classify::{Classification, Reason, RuleSet, rules};
use crate::cli::{Command, ExplainArgs, ReportArgs, RulesCommand};
use crate::config::{self, LoadConfig};
use crate::error::{Error, Result};
use crate::input;
use crate::model::Profile;
use crate::render;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// What a command asks `main` to exit with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    GateFailed,
}

pub fn run(command: Command) -> Result<Outcome> {
    match command {
        Command::Report(args) => report(args),
        Command::Explain(args) => explain(args),
        Command::Rules(cmd) => rules_command(cmd),
    }
}

/// Profiles read and classified against one shared rule set.
pub struct Loaded {
    pub paths: Vec<PathBuf>,
    pub profiles: Vec<Profile>,
    pub rules: RuleSet,
    pub classes: Vec<Classification>,
}

/// Reads every input, builds one rule set for all of them (presets detected over all), and
/// classifies each distinct frame once per profile.
pub fn load(paths: &[PathBuf], config: &LoadConfig) -> Result<Loaded> {
    let profiles = paths
        .iter()
        .map(|p| input::read_profile(p, &config.read))
        .collect::<Result<Vec<_>>>()?;
    for p in &profiles {
        for w in &p.meta.warnings {
            eprintln!("whose: warning: {w}");
        }
    }
    let rules = RuleSet::build(&config.rules, &profiles)?;
    let classes = profiles.iter().map(|p| rules.classify(p)).collect();
    Ok(Loaded {
        paths: paths.to_vec(),
        profiles,
        rules,
        classes,
    })
}

/// The sample type to weigh by: `--metric` if given (an error listing the types if the
/// profile lacks it), else the profile's default.
pub fn choose_metric(
    profile: &Profile,
    path: &Path,
    metric: Option<&str>,
) -> Result<(usize, String)> {
    match metric {
        None => Ok((profile.default_sample_type, "default".to_string())),
        Some(name) => profile
            .sample_type_index(name)
            .map(|i| (i, "--metric".to_string()))
            .ok_or_else(|| {
                let types: Vec<String> = profile
                    .sample_types()
                    .iter()
                    .map(|t| format!("{} ({})", t.name, t.unit))
                    .collect();
                Error::Usage(format!(
                    "{}: has no sample type `{name}`; it has: {}",
                    path.display(),
                    types.join(", ")
                ))
            }),
    }
}

/// Aggregates each loaded profile into an [`InputReport`].
pub fn input_reports(
    loaded: &Loaded,
    config: &LoadConfig,
    top: usize,
    threads: bool,
) -> Result<Vec<InputReport>> {
    let mut out = Vec::new();
    for ((profile, classes), path) in loaded
        .profiles
        .iter()
        .zip(&loaded.classes)
        .zip(&loaded.paths)
    {
        let (metric, metric_source) = choose_metric(profile, path, config.metric.as_deref())?;
        let options = AggregateOptions {
            metric,
            types_as_frames: config.types_as_frames,
            threads,
            top,
        };
        let aggregate = aggregate::aggregate(profile, &loaded.rules, classes, &options);
        out.push(InputReport {
            path: path.display().to_string(),
            metric: profile.sample_types()[metric].clone(),
            metric_source,
            notes: profile.meta.notes.clone(),
            warnings: profile.meta.warnings.clone(),
            aggregate,
        });
    }
    Ok(out)
}

fn report(args: ReportArgs) -> Result<Outcome> {
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
    let by = config::group_by(args.by);
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
    let format = config::output_format(args.format);
    write_output(args.output.as_deref(), |out, color| {
        render::render(&report, format, color, out)
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

/// Writes to `-o FILE` (atomically: a temporary file renamed into place) or standard output.
/// Colour only on a terminal and never with `NO_COLOR`.
pub fn write_output(
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn Write, bool) -> std::io::Result<()>,
) -> Result<()> {
    match path {
        Some(p) => {
            let tmp = p.with_extension("whose-tmp");
            let result = (|| {
                let mut file = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
                write(&mut file, false)?;
                file.flush()?;
                drop(file);
                std::fs::rename(&tmp, p)
            })();
            if let Err(e) = result {
                let _ = std::fs::remove_file(&tmp);
                return Err(Error::io(p, e));
            }
            Ok(())
        }
        None => {
            let stdout = std::io::stdout();
            let color = stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none();
            let mut lock = std::io::BufWriter::new(stdout.lock());
            write(&mut lock, color)
                .and_then(|_| lock.flush())
                .map_err(|e| Error::io("<stdout>", e))
        }
    }
}

fn explain(args: ExplainArgs) -> Result<Outcome> {
    let config = LoadConfig::new(&args.input, &args.rules);
    let loaded = load(std::slice::from_ref(&args.profile), &config)?;
    let profile = &loaded.profiles[0];
    let filter = args
        .frame
        .as_deref()
        .map(regex::Regex::new)
        .transpose()
        .map_err(|e| Error::Usage(format!("--frame: invalid regex: {e}")))?;
    let (metric, _) = choose_metric(profile, &args.profile, config.metric.as_deref())?;
    let weights = aggregate::frame_inclusive_weights(profile, metric);
    let mut frames: Vec<(usize, u128)> = weights
        .into_iter()
        .enumerate()
        .filter(|(i, w)| {
            *w > 0
                && filter.as_ref().is_none_or(|r| {
                    r.is_match(&profile.frame(crate::model::FrameId(*i as u32)).name)
                })
        })
        .collect();
    frames.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let total = profile.totals()[metric];
    write_output(None, |out, _| {
        writeln!(
            out,
            "presets: {}",
            if loaded.rules.presets.is_empty() {
                "none".to_string()
            } else {
                loaded.rules.presets.join(", ")
            }
        )?;
        writeln!(out, "{:>7}  {:<20} {:<40} frame", "incl.", "owner", "rule")?;
        for (i, w) in frames.iter().take(args.top) {
            let frame = profile.frame(crate::model::FrameId(*i as u32));
            let (owner, reason) = loaded.rules.classify_frame(frame);
            let why = match reason {
                Reason::Rule { block, matcher } => {
                    format!("{matcher} @ {}", loaded.rules.block(block).origin)
                }
                Reason::NoRuleMatched => "no rule matched".to_string(),
                Reason::Unresolved => "unresolved address".to_string(),
            };
            writeln!(
                out,
                "{:>7}  {:<20} {:<40} {}",
                render::pct(crate::aggregate::report::share(*w, total)),
                loaded.rules.owner(owner).name,
                why,
                frame
            )?;
        }
        Ok(())
    })?;
    Ok(Outcome::Success)
}

fn rules_command(cmd: RulesCommand) -> Result<Outcome> {
    match cmd {
        RulesCommand::Check { files } => {
            for f in &files {
                let parsed = rules::load(f)?;
                let options = crate::classify::RuleOptions {
                    rule_files: vec![f.clone()],
                    no_presets: parsed.extend.is_empty(),
                    ..Default::default()
                };
                let set = RuleSet::build(&options, &[])?;
                println!(
                    "{}: ok, {} owner block(s), owners: {}{}",
                    f.display(),
                    parsed.blocks.len(),
                    owner_list(&set),
                    if parsed.extend.is_empty() {
                        String::new()
                    } else {
                        format!("; extends {}", parsed.extend.join(", "))
                    }
                );
            }
        }
        RulesCommand::List { preset } => {
            let names: Vec<String> = match preset {
                Some(p) => vec![p],
                None => crate::classify::presets::names()
                    .map(String::from)
                    .collect(),
            };
            for name in names {
                let options = crate::classify::RuleOptions {
                    presets: vec![name.clone()],
                    ..Default::default()
                };
                let set = RuleSet::build(&options, &[])?;
                println!(
                    "{name} (loads {}): {}",
                    set.presets.join(" → "),
                    owner_list(&set)
                );
            }
        }
    }
    Ok(Outcome::Success)
}

fn owner_list(set: &RuleSet) -> String {
    set.owners()
        .iter()
        .skip(2)
        .map(|o| {
            format!(
                "{} ({}{})",
                o.name,
                o.category,
                if o.transparent { ", transparent" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

//! The only module that knows every stage: read → classify → aggregate → render/gate.
//! One submodule per command; the shared steps (load, choose the metric, aggregate each
//! input, write the output) live here.

mod convert;
mod diff;
mod explain;
mod flame;
mod gate;
mod report;
mod rules;

use crate::aggregate::report::InputReport;
use crate::aggregate::{self, AggregateOptions};
use crate::classify::{Classification, RuleSet};
use crate::cli::Command;
use crate::config::LoadConfig;
use crate::error::{Error, Result};
use crate::input;
use crate::model::Profile;
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
        Command::Report(args) => report::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Flame(args) => flame::run(args),
        Command::Rules(cmd) => rules::run(cmd),
        Command::Convert(args) => convert::run(args),
        Command::Gate(args) => gate::run(args),
        Command::Diff(args) => diff::run(args),
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

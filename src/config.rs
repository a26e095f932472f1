//! From the command line to one validated plan per command. Core code never sees clap types;
//! everything that can be checked before reading input is checked here, so `app` only
//! orchestrates and nothing later re-validates an option.
//!
//! The checks that need the input (a metric the profile lacks, `--by type` without
//! allocated types, profiles measured in different metrics) stay with the stages that read it.

use crate::aggregate::flame_lines::ColorBy;
use crate::aggregate::report::{Combine, GroupBy, View};
use crate::aggregate::rows::RowLabels;
use crate::aggregate::timeline::BucketSize;
use crate::classify::RuleOptions;
use crate::cli::{
    Command, ConvertArgs, ConvertTo, DiffArgs, ExplainArgs, FlameArgs, GateArgs, InputArgs,
    ReportArgs, RuleArgs, RulesCommand, TopArgs, ViewArg,
};
use crate::error::{Error, Result};
use crate::gate::{self, Guards, Mode, Requirement};
use crate::input::ReadOptions;
use crate::input::filter::{SampleFilter, TimeSlice};
use crate::render::OutputFormat;
use crate::render::flame_labels::Look;
use crate::render::verdict::VerdictFormat;
use crate::symbolize::SymbolOptions;
use regex::Regex;
use std::path::{Path, PathBuf};

/// What to do, one validated plan per command.
#[derive(Debug)]
pub enum Plan {
    Report(ReportPlan),
    Explain(ExplainPlan),
    Top(TopPlan),
    Flame(FlamePlan),
    Rules(RulesPlan),
    Convert(ConvertPlan),
    Gate(GatePlan),
    Diff(DiffPlan),
    /// `whose completions SHELL`.
    Completions(clap_complete::Shell),
    /// `whose man [COMMAND]`: the command's page, or whose's when `None`.
    Man(Option<String>),
}

impl Plan {
    /// Builds and checks the plan of `command`; an invalid option is an error before any
    /// input is opened.
    pub fn new(command: Command) -> Result<Plan> {
        Ok(match command {
            Command::Report(args) => Plan::Report(ReportPlan::new(args)?),
            Command::Explain(args) => Plan::Explain(ExplainPlan::new(args)?),
            Command::Top(args) => Plan::Top(TopPlan::new(args)?),
            Command::Flame(args) => Plan::Flame(FlamePlan::new(args)?),
            Command::Rules(cmd) => Plan::Rules(RulesPlan::new(cmd)),
            Command::Convert(args) => Plan::Convert(ConvertPlan::new(args)?),
            Command::Gate(args) => Plan::Gate(GatePlan::new(args)?),
            Command::Diff(args) => Plan::Diff(DiffPlan::new(args)?),
            Command::Completions { shell } => Plan::Completions(shell),
            Command::Man { command } => Plan::Man(command),
        })
    }

    /// The profiles the command reads and the file or folder it writes (`-o`, `--split`),
    /// so that one check can refuse an output that would replace an input.
    pub fn inputs_and_output(&self) -> (Vec<&Path>, Option<&Path>) {
        fn paths(v: &[PathBuf]) -> Vec<&Path> {
            v.iter().map(PathBuf::as_path).collect()
        }
        match self {
            Plan::Report(p) => (paths(&p.profiles), p.output.as_deref()),
            Plan::Explain(p) => (vec![p.profile.as_path()], None),
            Plan::Top(p) => (vec![p.profile.as_path()], p.output.as_deref()),
            Plan::Flame(p) => match &p.output {
                FlameOutput::Single { output } => (paths(&p.profiles), output.as_deref()),
                FlameOutput::Split { dir } => (paths(&p.profiles), Some(dir.as_path())),
                FlameOutput::Diff { base, output, .. } => {
                    let mut all = paths(&p.profiles);
                    all.push(base.as_path());
                    (all, output.as_deref())
                }
            },
            Plan::Rules(_) | Plan::Completions(_) | Plan::Man(_) => (Vec::new(), None),
            Plan::Convert(p) => (vec![p.profile.as_path()], p.output.as_deref()),
            Plan::Gate(p) => (paths(&p.profiles), p.output.as_deref()),
            Plan::Diff(p) => {
                let mut all = paths(&p.base);
                all.extend(paths(&p.against));
                (all, p.output.as_deref())
            }
        }
    }
}

/// Everything needed to turn paths into classified profiles.
#[derive(Debug, Clone, Default)]
pub struct LoadConfig {
    pub read: ReadOptions,
    pub rules: RuleOptions,
    /// `--metric`, resolved per profile (each input may number its types differently).
    pub metric: Option<String>,
    pub types_as_frames: bool,
}

impl LoadConfig {
    /// The reading options of `input` (the `--time` slice parsed) and the rules of `rules`.
    /// Reading with the samples' times where the input has them: what the intervals of a
    /// gate, a diff or a report rest on (issue 54, `aggregate::interval`).
    pub fn with_timeline(mut self) -> LoadConfig {
        self.read.timeline = true;
        self
    }

    pub fn new(input: &InputArgs, rules: &RuleArgs) -> Result<LoadConfig> {
        let filter = SampleFilter {
            comms: input.comm.clone(),
            pids: input.pid.clone(),
            tids: input.tid.clone(),
            time: input.time.as_deref().map(TimeSlice::parse).transpose()?,
        };
        Ok(LoadConfig {
            read: ReadOptions {
                format: input.format_in.map(Into::into),
                unit: input.unit.clone(),
                symbols: SymbolOptions {
                    binary_path: input.binary_path.clone(),
                    symfs: input.symfs.clone(),
                    kallsyms: input.kallsyms.clone(),
                    jit_map_dir: input.jit_map_dir.clone(),
                    inline: match (input.inline, input.no_inline) {
                        (true, _) => Some(true),
                        (_, true) => Some(false),
                        _ => None,
                    },
                    lines: false,
                },
                max_decompressed: Some(input.max_decompressed),
                max_line: Some(input.max_line),
                keep_process_root: input.keep_process_root,
                filter,
                timeline: false,
                names: None,
            },
            rules: RuleOptions {
                rule_files: rules.rule_files.clone(),
                user_prefixes: rules.user.clone(),
                presets: rules.preset.clone(),
                no_presets: rules.no_presets,
                through: rules.through.clone(),
                no_guess: rules.no_guess,
                keep_reasons: false,
            },
            metric: input.metric.clone(),
            types_as_frames: input.types_as_frames,
        })
    }
}

/// The profile read when a command is given none, as `perf report` reads it.
pub const DEFAULT_INPUT: &str = "perf.data";

/// The profiles a command reads: its PROFILE arguments, then the `-i FILE`s; with neither,
/// [`DEFAULT_INPUT`] when it exists, else a usage error that names both ways to give one.
fn profiles(command: &str, positional: Vec<PathBuf>, input: &InputArgs) -> Result<Vec<PathBuf>> {
    let mut all = positional;
    all.extend(input.input_files.iter().cloned());
    if all.is_empty() {
        let default = PathBuf::from(DEFAULT_INPUT);
        if !default.exists() {
            return Err(Error::Usage(format!(
                "no input: give a profile, `whose {command} PROFILE` or `whose {command} -i \
                 FILE` (./{DEFAULT_INPUT}, read when neither is given, does not exist here)"
            )));
        }
        all.push(default);
    }
    Ok(all)
}

/// The one profile of a command that reads one: PROFILE or `-i FILE`, not both.
fn one_profile(command: &str, positional: Option<PathBuf>, input: &InputArgs) -> Result<PathBuf> {
    let mut all = profiles(command, positional.into_iter().collect(), input)?;
    if all.len() > 1 {
        let names: Vec<String> = all.iter().map(|p| p.display().to_string()).collect();
        return Err(Error::Usage(format!(
            "whose {command} reads one profile, and was given {}: {}",
            all.len(),
            names.join(", ")
        )));
    }
    Ok(all.remove(0))
}

/// How a [`crate::aggregate::report::Report`] is laid out: its rows, views, the way several
/// inputs combine, and the divisor of its weights.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportShape {
    pub by: GroupBy,
    /// Each view once, in the order asked for.
    pub views: Vec<View>,
    pub combine: Combine,
    /// `--per N`: weights divided by N.
    pub per: Option<u64>,
    /// `--ci`: each share with its interval in the table, markdown and CSV (JSON always has
    /// them).
    pub ci: bool,
}

impl ReportShape {
    /// The shape of a comparison over repeats, as `gate` and `diff` measure them.
    pub fn repeats(by: GroupBy, views: Vec<View>) -> ReportShape {
        ReportShape {
            by,
            views,
            combine: Combine::Repeats,
            per: None,
            ci: false,
        }
    }
}

/// `whose report`.
#[derive(Debug)]
pub struct ReportPlan {
    pub profiles: Vec<PathBuf>,
    pub load: LoadConfig,
    pub shape: ReportShape,
    /// Heaviest frames listed in each list, in total.
    pub top: usize,
    /// Split by thread name.
    pub threads: bool,
    pub format: OutputFormat,
    pub output: Option<PathBuf>,
    /// `--each DIR|GLOB|@LIST`: fleet rows, each input on its own (`app::each`).
    pub each: Vec<String>,
    /// `--each-memory` and `--each-timeout`: one input's share.
    pub each_share: EachShare,
    /// The label columns of the row formats.
    pub labels: RowLabels,
    /// `--by time`: the buckets' width.
    pub bucket: BucketSize,
}

/// One `--each` input's share of memory (bytes of distinct content, `model::budget`) and
/// time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EachShare {
    pub memory: usize,
    pub time: std::time::Duration,
}

impl ReportPlan {
    fn new(args: ReportArgs) -> Result<ReportPlan> {
        let format = OutputFormat::from(args.format);
        let by = GroupBy::from(args.by);
        let labels = RowLabels::new(
            &args.label,
            args.label_from_path.as_deref(),
            &args.pprof_label,
            &crate::render::rows::column_names(),
        )
        .map_err(Error::Usage)?;
        let rows = format.row_format().is_some();
        row_options(&args, rows, &labels)?;
        time_grouping(&args, format, by)?;
        if rows && !matches!(by, GroupBy::Owner | GroupBy::Time) {
            return Err(Error::Usage(
                "--format ndjson and parquet write a row per owner with its category: \
                 group by category in the engine that reads them, without --by"
                    .into(),
            ));
        }
        label_sources(&args)?;
        // --each finds its inputs; ./perf.data is the default only without it
        let profiles = if args.each.is_empty() {
            profiles("report", args.profiles, &args.input)?
        } else {
            Vec::new()
        };
        let mut load = LoadConfig::new(&args.input, &args.rules)?;
        // every report shows intervals (the table's --ci, JSON), which rest on the samples'
        // times where they have them (issue 54), as do --by time and the HTML page
        load.read.timeline = true;
        // the page names the rule of every frame it draws
        load.rules.keep_reasons = format == OutputFormat::Html;
        Ok(ReportPlan {
            load,
            profiles,
            shape: ReportShape {
                by,
                views: distinct_views(&args.views),
                combine: combine(args.repeats, args.merge),
                per: args.per,
                ci: args.ci,
            },
            top: args.top,
            threads: args.threads,
            format,
            output: args.output,
            each: args.each,
            each_share: EachShare {
                memory: usize::try_from(args.each_memory).unwrap_or(usize::MAX),
                time: std::time::Duration::from_secs(args.each_timeout),
            },
            labels,
            bucket: args.bucket.unwrap_or_default(),
        })
    }
}

/// The options that belong to fleet rows (`rows`: `--format ndjson` or `parquet`) alone, and
/// those rows refuse: a row holds one input's exact weights, so dividing them, splitting by
/// thread and comparing repeats are left to the engine that reads the rows.
fn row_options(args: &ReportArgs, rows: bool, labels: &RowLabels) -> Result<()> {
    if !rows {
        let asked = [
            (!args.each.is_empty(), "--each"),
            (
                !labels.keys.is_empty(),
                "--label, --label-from-path and --pprof-label",
            ),
        ];
        if let Some((_, what)) = asked.iter().find(|(on, _)| *on) {
            return Err(Error::Usage(format!(
                "{what} write fleet rows: add --format ndjson or --format parquet"
            )));
        }
    }
    if rows && (args.per.is_some() || args.threads || args.repeats) {
        return Err(Error::Usage(
            "--format ndjson and parquet write each input's exact weights: divide (--per), \
             split by thread (--threads) or compare repeats in the engine that reads them"
                .into(),
        ));
    }
    Ok(())
}

/// Where the label columns and the inputs may come from: a pprof label and a path are read
/// per input, so they need inputs of their own (`--each`, no `--merge`), and `--each` finds
/// the inputs itself, so it takes none named besides.
fn label_sources(args: &ReportArgs) -> Result<()> {
    if !args.pprof_label.is_empty() && args.each.is_empty() {
        return Err(Error::Usage(
            "--pprof-label is read with --each (profiles named as arguments have no \
             pprof label columns yet)"
                .into(),
        ));
    }
    if args.merge && args.label_from_path.is_some() {
        return Err(Error::Usage(
            "--label-from-path labels each input, and --merge makes one of them all: use \
             --label KEY=VALUE, or --each without --merge"
                .into(),
        ));
    }
    let named = !args.profiles.is_empty() || !args.input.input_files.is_empty();
    if !args.each.is_empty() && named {
        return Err(Error::Usage(
            "--each reads the inputs it finds; name profiles either with --each or as \
             arguments (or -i), not both"
                .into(),
        ));
    }
    Ok(())
}

/// What `--by time` and `--bucket` cannot be combined with, and why.
fn time_grouping(args: &ReportArgs, format: OutputFormat, by: GroupBy) -> Result<()> {
    if format == OutputFormat::Html && args.merge {
        return Err(Error::Usage(
            "--format html draws each input's own call tree: --merge is not supported with it \
             yet (merge the profiles with `whose convert` first, or compare them side by side)"
                .into(),
        ));
    }
    if by != GroupBy::Time {
        return match args.bucket {
            Some(_) if format != OutputFormat::Html => Err(Error::Usage(
                "--bucket sets the width of --by time's buckets: add --by time".into(),
            )),
            _ => Ok(()),
        };
    }
    let refused = [
        (args.merge, "--merge (each input keeps its own clock)"),
        (args.repeats, "--repeats (each input keeps its own clock)"),
        (args.threads, "--threads"),
        (
            !args.each.is_empty(),
            "--each (name the profiles as arguments)",
        ),
    ];
    match refused.iter().find(|(on, _)| *on) {
        Some((_, what)) => Err(Error::Usage(format!("--by time does not go with {what}"))),
        None => Ok(()),
    }
}

/// `whose explain`.
#[derive(Debug)]
pub struct ExplainPlan {
    pub profile: PathBuf,
    pub load: LoadConfig,
    /// `--frame REGEX`: only frames whose name matches.
    pub frame_filter: Option<Regex>,
    /// How many functions to list.
    pub top: usize,
    /// `--lines`: one row per source line.
    pub lines: bool,
}

impl ExplainPlan {
    fn new(args: ExplainArgs) -> Result<ExplainPlan> {
        let frame_filter = args
            .frame
            .as_deref()
            .map(Regex::new)
            .transpose()
            .map_err(|e| Error::Usage(format!("--frame: invalid regex: {e}")))?;
        let mut load = LoadConfig::new(&args.input, &args.rules)?;
        // perf.data: file:line for native frames comes from the binaries' line tables
        load.read.symbols.lines = args.lines;
        load.rules.keep_reasons = true;
        Ok(ExplainPlan {
            load,
            profile: one_profile("explain", args.profile, &args.input)?,
            frame_filter,
            top: args.top,
            lines: args.lines,
        })
    }
}

/// `whose top`.
#[derive(Debug)]
pub struct TopPlan {
    /// The owner or category to list the functions of.
    pub subject: gate::Subject,
    pub profile: PathBuf,
    pub load: LoadConfig,
    /// How many functions to list.
    pub top: usize,
    /// `--cum`: sort by cum, not flat.
    pub by_cum: bool,
    pub output: Option<PathBuf>,
}

impl TopPlan {
    fn new(args: TopArgs) -> Result<TopPlan> {
        let subject = gate::parse_subject(&args.subject)
            .map_err(|e| Error::Usage(format!("top `{}`: {e}", args.subject)))?;
        Ok(TopPlan {
            subject,
            load: LoadConfig::new(&args.input, &args.rules)?,
            profile: one_profile("top", args.profile, &args.input)?,
            top: args.top,
            by_cum: args.cum,
            output: args.output,
        })
    }
}

/// What `whose flame` writes: one graph, one graph per owner, or a differential graph.
/// clap's `conflicts_with` keeps `--split`, `--diff` and `-o` from being combined, so each
/// case carries only the options it takes.
#[derive(Debug, Clone, PartialEq)]
pub enum FlameOutput {
    /// One SVG to `-o FILE` or standard output.
    Single { output: Option<PathBuf> },
    /// `--split DIR`: one SVG per owner and an index.
    Split { dir: PathBuf },
    /// `--diff BASE`: the profile against BASE.
    Diff {
        base: PathBuf,
        /// `--normalize`: BASE scaled to the profile's total first.
        normalize: bool,
        output: Option<PathBuf>,
    },
}

/// `whose flame`.
#[derive(Debug)]
pub struct FlamePlan {
    /// Drawn as their sum when several.
    pub profiles: Vec<PathBuf>,
    pub load: LoadConfig,
    pub output: FlameOutput,
    pub color_by: ColorBy,
    /// A synthetic `[owner: NAME]` root under every stack.
    pub owner_root: bool,
    pub look: Look,
}

impl FlamePlan {
    fn new(args: FlameArgs) -> Result<FlamePlan> {
        // `0.5` and `0.5%` alike: inferno's own flag takes a bare number, and a percentage
        // written with its sign is what a reader of `--help` types
        let min_width = args
            .min_width
            .trim()
            .strip_suffix('%')
            .unwrap_or(args.min_width.trim())
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|w| (0.0..100.0).contains(w))
            .ok_or_else(|| {
                Error::Usage(format!(
                    "--min-width {}: expected a percentage in [0, 100), as `0.5` or `0.5%`",
                    args.min_width
                ))
            })?;
        let output = match (args.split, args.diff) {
            (Some(dir), _) => FlameOutput::Split { dir },
            (None, Some(base)) => FlameOutput::Diff {
                base,
                normalize: args.normalize,
                output: args.output,
            },
            (None, None) => FlameOutput::Single {
                output: args.output,
            },
        };
        let mut load = LoadConfig::new(&args.input, &args.rules)?;
        // the split's index is the HTML page, which names the rule of every frame it draws
        load.rules.keep_reasons = matches!(output, FlameOutput::Split { .. });
        Ok(FlamePlan {
            load,
            profiles: profiles("flame", args.profiles, &args.input)?,
            output,
            color_by: args.color_by.into(),
            owner_root: args.owner_root,
            look: Look {
                title: args.title,
                count_name: args.countname,
                width: args.width.map(|w| w as usize),
                min_width,
                inverted: args.inverted,
                reverse: args.reverse,
            },
        })
    }
}

/// `whose rules check` and `whose rules list`.
#[derive(Debug)]
pub enum RulesPlan {
    /// Parse and check these rule files.
    Check { files: Vec<PathBuf> },
    /// List this preset, or every preset.
    List { preset: Option<String> },
    /// Print this preset's text.
    Show { preset: String },
}

impl RulesPlan {
    fn new(cmd: RulesCommand) -> RulesPlan {
        match cmd {
            RulesCommand::Check { files } => RulesPlan::Check { files },
            RulesCommand::List { preset } => RulesPlan::List { preset },
            RulesCommand::Show { preset } => RulesPlan::Show { preset },
        }
    }
}

/// `whose convert`.
#[derive(Debug)]
pub struct ConvertPlan {
    pub profile: PathBuf,
    pub load: LoadConfig,
    pub to: ConvertTo,
    /// With folded output: a `[owner: NAME]` root per sample's owner.
    pub owner_root: bool,
    /// With folded output: `--plain`, function names only (inferno's form), not the text
    /// that reads back to the same owners.
    pub plain: bool,
    pub output: Option<PathBuf>,
}

impl ConvertPlan {
    fn new(args: ConvertArgs) -> Result<ConvertPlan> {
        // pprof keeps every frame whole and carries owners as labels: neither folded-text
        // option means anything there, and an option that changes nothing is refused
        if args.to == ConvertTo::Pprof && (args.owner_root || args.plain) {
            let option = if args.plain {
                "--plain"
            } else {
                "--owner-root"
            };
            return Err(Error::Usage(format!(
                "{option} shapes folded text and has no effect with --to pprof \
                 (pprof carries the owner as a label per sample: `go tool pprof -tagfocus owner=user`)"
            )));
        }
        Ok(ConvertPlan {
            load: LoadConfig::new(&args.input, &args.rules)?,
            profile: one_profile("convert", args.profile, &args.input)?,
            to: args.to,
            owner_root: args.owner_root,
            plain: args.plain,
            output: args.output,
        })
    }
}

/// `whose gate`.
#[derive(Debug)]
pub struct GatePlan {
    /// Repeats of one experiment.
    pub profiles: Vec<PathBuf>,
    pub load: LoadConfig,
    /// Parsed `--require` expressions, in the order given.
    pub requirements: Vec<Requirement>,
    pub mode: Mode,
    pub format: VerdictFormat,
    pub output: Option<PathBuf>,
    /// The recording-quality guards, in percent: a verdict needs fit input.
    pub guards: Guards,
    /// `--confidence`, `--point-estimate`.
    pub decision: gate::Decision,
}

impl GatePlan {
    fn new(args: GateArgs) -> Result<GatePlan> {
        let requirements = args
            .require
            .iter()
            .map(|text| gate::parse(text))
            .collect::<Result<Vec<_>>>()?;
        Ok(GatePlan {
            load: LoadConfig::new(&args.input, &args.rules)?.with_timeline(),
            profiles: profiles("gate", args.profiles, &args.input)?,
            requirements,
            mode: if args.any { Mode::Any } else { Mode::All },
            format: args.format.into(),
            output: args.output,
            decision: gate::Decision {
                confidence: gate::parse_confidence(&args.confidence)?,
                point_estimate: args.point_estimate,
            },
            guards: Guards {
                max_unresolved: gate::parse_guard("--max-unresolved", &args.max_unresolved)?,
                max_ownerless: gate::parse_guard("--max-ownerless", &args.max_ownerless)?,
                max_lost: gate::parse_guard("--max-lost", &args.max_lost)?,
                max_unclassified: gate::parse_guard("--max-unclassified", &args.max_unclassified)?,
            },
        })
    }
}

/// `whose diff`.
#[derive(Debug)]
pub struct DiffPlan {
    /// Baseline profiles (repeats).
    pub base: Vec<PathBuf>,
    /// Profiles compared with the baseline (repeats).
    pub against: Vec<PathBuf>,
    pub load: LoadConfig,
    pub shape: ReportShape,
    pub format: VerdictFormat,
    pub output: Option<PathBuf>,
    /// `--confidence`, a fraction.
    pub confidence: f64,
}

impl DiffPlan {
    fn new(args: DiffArgs) -> Result<DiffPlan> {
        let by = GroupBy::from(args.by);
        if matches!(by, GroupBy::Type | GroupBy::Time) {
            return Err(Error::Usage(format!(
                "diff --by {} is not supported: compare owners or categories",
                if by == GroupBy::Type { "type" } else { "time" }
            )));
        }
        Ok(DiffPlan {
            load: LoadConfig::new(&args.input, &args.rules)?.with_timeline(),
            shape: ReportShape {
                per: args.per,
                ..ReportShape::repeats(by, distinct_views(&args.views))
            },
            base: profiles("diff", args.base, &args.input)?,
            against: args.against,
            format: args.format.into(),
            output: args.output,
            confidence: gate::parse_confidence(&args.confidence)?,
        })
    }
}

/// `--views` as given, each view once.
fn distinct_views(v: &[ViewArg]) -> Vec<View> {
    let mut out: Vec<View> = Vec::new();
    for &view in v {
        let view = View::from(view);
        if !out.contains(&view) {
            out.push(view);
        }
    }
    out
}

/// `--repeats` and `--merge` (which clap keeps apart); neither: side by side.
fn combine(repeats: bool, merge: bool) -> Combine {
    if repeats {
        Combine::Repeats
    } else if merge {
        Combine::Merge
    } else {
        Combine::Columns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser;

    fn plan(args: &[&str]) -> Result<Plan> {
        let cli = Cli::try_parse_from(std::iter::once("whose").chain(args.iter().copied()))
            .expect("the command line parses");
        Plan::new(cli.command)
    }

    #[test]
    fn options_that_need_no_input_are_checked_before_reading_it() {
        // none of these files exists: the plan fails on the option, not on the input
        let cases = [
            (
                &["flame", "missing.folded", "--min-width", "100"][..],
                "--min-width 100: expected a percentage in [0, 100)",
            ),
            (
                &["explain", "missing.folded", "--frame", "("][..],
                "--frame: invalid regex",
            ),
            (
                &["diff", "a.folded", "--against", "b.folded", "--by", "type"][..],
                "diff --by type is not supported",
            ),
            (
                &["gate", "missing.folded", "--require", "user.owner"][..],
                "--require `user.owner`: no comparison operator",
            ),
        ];
        for (args, expected) in cases {
            let e = plan(args).unwrap_err().to_string();
            assert!(e.contains(expected), "{args:?}: {e}");
        }
    }

    #[test]
    fn min_width_takes_a_percentage_with_or_without_its_sign() {
        for (arg, want) in [("0.5", 0.5), ("0.5%", 0.5), (" 2 %", 2.0), ("0", 0.0)] {
            let Plan::Flame(p) = plan(&["flame", "a.folded", "--min-width", arg]).unwrap() else {
                panic!("not a flame plan")
            };
            assert_eq!(p.look.min_width, want, "{arg}");
        }
        for bad in ["%", "half", "100%", "1e3"] {
            let e = plan(&["flame", "a.folded", "--min-width", bad]).unwrap_err();
            assert!(e.to_string().contains("as `0.5` or `0.5%`"), "{bad}: {e}");
        }
    }

    #[test]
    fn report_views_are_distinct_and_defaults_come_from_clap() {
        let Plan::Report(p) = plan(&["report", "a.folded", "--views", "owner,self,owner"]).unwrap()
        else {
            panic!("not a report plan")
        };
        assert_eq!(p.shape.views, [View::Owner, View::Self_]);
        assert_eq!(p.shape.by, GroupBy::Owner);
        assert_eq!(p.shape.combine, Combine::Columns);
        assert_eq!(p.top, crate::cli::defaults::REPORT_TOP);
        assert_eq!(p.format, OutputFormat::Table);
        assert_eq!(
            p.load.read.max_decompressed,
            Some(crate::input::source::DEFAULT_MAX_DECOMPRESSED)
        );
    }

    #[test]
    fn flame_output_follows_split_and_diff() {
        let Plan::Flame(p) =
            plan(&["flame", "a.folded", "--diff", "b.folded", "--normalize"]).unwrap()
        else {
            panic!("not a flame plan")
        };
        assert_eq!(
            p.output,
            FlameOutput::Diff {
                base: "b.folded".into(),
                normalize: true,
                output: None
            }
        );
        assert_eq!(p.look.min_width, 0.01);
    }
}

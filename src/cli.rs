//! The command line, as clap derive structs only. No logic lives here: `config` turns these
//! into validated options before any input is read.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "whose",
    version,
    about = "Whose code is this CPU time, whose code asked for these allocations?",
    long_about = "whose reads sampled stacks (perf.data, perf script text, pprof, folded \
                  stacks) and attributes every sample to an owner by configurable rules: \
                  self (the leaf's owner), owner (the first non-transparent frame from the leaf: \
                  whose code asked for this work) and anywhere (the owner is on the stack).",
    after_help = "Exit codes: 0 success (gate passed), 1 gate failed, 2 usage or input error."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Owner shares as a table (terminal, markdown, JSON, CSV).
    Report(ReportArgs),
    /// Which rule classified each of the heaviest frames; unclassified frames by weight.
    Explain(ExplainArgs),
    /// Check rule files, or list the presets and their owners.
    #[command(subcommand)]
    Rules(RulesCommand),
}

/// How inputs are read (shared by every command that reads profiles).
#[derive(Debug, Args, Clone, Default)]
pub struct InputArgs {
    /// Input format; detected from the content when not given.
    #[arg(long, value_enum)]
    pub format_in: Option<FormatIn>,
    /// Sample type to weigh by: a pprof sample type (`cpu`, `alloc_space`...) or its index,
    /// a perf event name, or `samples`. Default: the profile's default type.
    #[arg(long)]
    pub metric: Option<String>,
    /// Unit of folded counts, which folded text does not say. Default: samples.
    #[arg(long, value_enum)]
    pub unit: Option<UnitArg>,
    /// Keep async-profiler's allocated-class leaves (`byte[]_[i]`) as ordinary frames.
    #[arg(long)]
    pub types_as_frames: bool,
    /// Search this folder for binaries by build id and file name (like PPROF_BINARY_PATH).
    #[arg(long, value_name = "DIR")]
    pub binary_path: Vec<PathBuf>,
    /// Root prefix for the binary paths in a recording (perf's --symfs).
    #[arg(long, value_name = "DIR")]
    pub symfs: Option<PathBuf>,
    /// Kernel symbols file (a copy of /proc/kallsyms).
    #[arg(long, value_name = "FILE")]
    pub kallsyms: Option<PathBuf>,
    /// Where perf-PID.map JIT symbol files are. Default: /tmp.
    #[arg(long, value_name = "DIR")]
    pub jit_map_dir: Vec<PathBuf>,
    /// perf.data: give each function inlined at an address its own frame (from DWARF).
    /// Off by default, like `perf script` (6.1) for frame-pointer call graphs, so both
    /// readings of a recording agree.
    #[arg(long)]
    pub inline: bool,
    /// Largest decompressed size accepted for compressed binary inputs (gzip bombs).
    #[arg(long, value_name = "BYTES", default_value_t = 2 << 30)]
    pub max_decompressed: u64,
}

/// Where the rules come from (shared by every command that classifies).
#[derive(Debug, Args, Clone, Default)]
pub struct RuleArgs {
    /// A rule file (TOML); repeatable, earlier files win; all come before presets.
    #[arg(long = "rules", value_name = "FILE")]
    pub rule_files: Vec<PathBuf>,
    /// A preset from rules/ (jvm, kotlin, kotlin-native, go, rust, python, native,
    /// allocators, kernel); repeatable. Default: detected from the frames.
    #[arg(long, value_name = "NAME")]
    pub preset: Vec<String>,
    /// Use the --rules files alone.
    #[arg(long)]
    pub no_presets: bool,
    /// Frames whose name starts with PREFIX are user code (top priority); repeatable.
    #[arg(long, value_name = "PREFIX")]
    pub user: Vec<String>,
    /// Make an owner or a whole category transparent, e.g. `--through framework`.
    #[arg(long, value_name = "OWNER|CATEGORY")]
    pub through: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Profiles to read (`-` for standard input).
    #[arg(required = true, value_name = "PROFILE")]
    pub profiles: Vec<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub rules: RuleArgs,
    /// Rows of the table.
    #[arg(long, value_enum, default_value_t = ByArg::Owner)]
    pub by: ByArg,
    /// Views to show, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "self,owner,anywhere")]
    pub views: Vec<ViewArg>,
    /// Heaviest frames to list per owner.
    #[arg(long, default_value_t = 5)]
    pub top: usize,
    /// Split by thread name (pool numbers folded: worker-12 → worker-*).
    #[arg(long)]
    pub threads: bool,
    /// Divide weights by N (e.g. a request count: bytes per request).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub per: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatOut::Table)]
    pub format: FormatOut,
    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Treat the profiles as repeats of one experiment: median and min–max per share.
    #[arg(long, conflicts_with = "merge")]
    pub repeats: bool,
    /// Sum the profiles into one.
    #[arg(long)]
    pub merge: bool,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    #[arg(value_name = "PROFILE")]
    pub profile: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub rules: RuleArgs,
    /// Only frames whose name matches this regex.
    #[arg(long, value_name = "REGEX")]
    pub frame: Option<String>,
    /// How many frames to list.
    #[arg(long, default_value_t = 30)]
    pub top: usize,
}

#[derive(Debug, Subcommand)]
pub enum RulesCommand {
    /// Parse and check rule files; print their owners.
    Check {
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// List the presets and the owners each declares.
    List {
        /// Only this preset, with every block.
        #[arg(long)]
        preset: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatIn {
    Folded,
    PyspyRaw,
    PerfScript,
    Pprof,
    PerfData,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UnitArg {
    Samples,
    Bytes,
    Nanoseconds,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ByArg {
    Owner,
    Category,
    Type,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ViewArg {
    #[value(name = "self")]
    Self_,
    Owner,
    Anywhere,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatOut {
    Table,
    Markdown,
    Json,
    Csv,
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }
}

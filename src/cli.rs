//! The command line, as clap derive structs only. No logic lives here: `config` turns these
//! into validated options before any input is read.

use crate::aggregate::flame_lines::ColorBy;
use crate::aggregate::report::{GroupBy, View};
use crate::aggregate::timeline::BucketSize;
use crate::input::InputFormat;
use crate::input::source::{DEFAULT_MAX_DECOMPRESSED, DEFAULT_MAX_LINE};
use crate::model::Unit;
use crate::render::verdict::VerdictFormat;
use crate::render::{ColorChoice, OutputFormat};
use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Defaults of the options that take a number, declared once: clap shows and applies them.
/// The enums' defaults are their `#[default]` variants.
pub mod defaults {
    /// `report --top`: heaviest frames listed in each frame list, in total.
    pub const REPORT_TOP: usize = 10;
    /// `top --top`: functions listed, in total.
    pub const TOP_FUNCTIONS: usize = 20;
    /// `explain --top`: functions listed, in total.
    pub const EXPLAIN_TOP: usize = 30;
    /// `flame --min-width`: frames narrower than this percentage of the total are omitted.
    pub const MIN_WIDTH_PERCENT: &str = "0.01";
    /// `--views`: all three, in the order the tables show them.
    pub const VIEWS: &str = "self,owner,anywhere";
    /// `gate --max-unresolved`, `--max-ownerless` and `--max-lost`: the recording-quality
    /// guards (the share above which the report warns, `aggregate::quality::UNFIT_PERCENT`).
    pub const GATE_GUARD: &str = "5%";
    /// `gate --confidence` and `diff --confidence`: the level of the intervals (issue 25).
    pub const CONFIDENCE: &str = "95%";
    /// `report --each-memory`: one input's share of memory, in bytes of distinct content.
    pub const EACH_MEMORY: u64 = 2 << 30;
    /// `report --each-timeout`: one input's share of time, in seconds.
    pub const EACH_TIMEOUT: u64 = 300;
}

#[derive(Debug, Parser)]
#[command(
    name = "whose",
    version,
    about = "Whose code is this CPU time, whose code asked for these allocations?",
    long_about = "whose reads sampled stacks (perf.data, perf script text, pprof, folded \
                  stacks, py-spy raw, speedscope, JFR, V8 .cpuprofile) and attributes every sample to an owner by configurable rules: \
                  self (the leaf's owner), owner (the first non-transparent frame from the leaf: \
                  whose code asked for this work) and anywhere (the owner is on the stack).",
    after_help = "Exit codes: 0 success (gate passed), 1 gate failed, 2 usage or input error, 3 \
                  gate inconclusive (the shares' intervals straddle a threshold)."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// When to colour the output: `auto` on a terminal (`NO_COLOR` turns it off,
    /// `CLICOLOR_FORCE=1` on, e.g. for `| less -R`), `always`, `never`.
    #[arg(long, global = true, value_enum, default_value_t, value_name = "WHEN")]
    pub color: ColorArg,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Owner shares as a table (terminal, markdown, JSON, CSV), fleet rows (NDJSON, Parquet) or
    /// one HTML page.
    #[command(after_long_help = examples::REPORT)]
    Report(ReportArgs),
    /// Which rule classified each of the heaviest functions; unclassified functions by
    /// weight, and the `--user` prefix or rule that would claim them.
    #[command(after_long_help = examples::EXPLAIN)]
    Explain(ExplainArgs),
    /// The heaviest functions of one owner or category, flat and cum, as `pprof -top`
    /// restricted to that owner.
    #[command(long_about = TOP_ABOUT, after_help = TOP_AFTER, after_long_help = examples::TOP)]
    Top(TopArgs),
    /// Flame graph coloured by owner (SVG, drawn by inferno), split per owner, owner-rooted
    /// or differential.
    #[command(after_long_help = examples::FLAME)]
    Flame(FlameArgs),
    /// Check rule files, list the presets and their owners, or print a preset.
    #[command(subcommand, after_long_help = examples::RULES)]
    Rules(RulesCommand),
    /// Write a profile as pprof with owner labels per sample, or as folded stacks.
    #[command(after_long_help = examples::CONVERT)]
    Convert(ConvertArgs),
    /// Exit 0 when owned shares meet requirements (`user.owner >= 25%`), 1 when not.
    #[command(long_about = GATE_ABOUT, after_help = GATE_AFTER)]
    Gate(GateArgs),
    /// Totals and weight deltas per owner and view between BASE and NEW profiles; deltas
    /// inside the spread of repeats are noise.
    #[command(long_about = DIFF_ABOUT, after_help = DIFF_AFTER, after_long_help = examples::DIFF)]
    Diff(DiffArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_long_help = examples::COMPLETIONS)]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): whose's, or one command's.
    #[command(after_long_help = examples::MAN)]
    Man {
        /// The command whose page to print (`report`, `gate`...). Default: whose's own,
        /// which lists the commands.
        #[arg(value_name = "COMMAND")]
        command: Option<String>,
    },
}

/// The examples at the end of each command's `--help`, as ripgrep shows them: what it does,
/// then the command line. Every line that starts with `whose ` is parsed by the tests.
pub mod examples {
    pub const REPORT: &str = "Examples:
  Owner shares of ./perf.data (read when no profile is given, as perf report does):
    whose report

  Only the threads named java, in the second tenth of the recording:
    whose report -i perf.data --comm java --time 10%/2

  One process, between two timestamps as perf script prints them:
    whose report perf.data --pid 4242 --time 2863.9,2870.5

  A pprof profile weighed by sample count (pprof's -sample_index):
    whose report cpu.pb.gz --sample-index samples

  Bytes allocated per request, as markdown for a PR comment:
    whose report allocs.pb.gz --metric alloc_space --per 1000 --format markdown

  Three runs of one experiment: median and min–max per share:
    whose report run1.folded run2.folded run3.folded --repeats

  Your code by name prefix, frameworks looked through, as JSON:
    whose report app.perf-script.txt --user com.example. --through framework \\
        --format json -o report.json";

    pub const EXPLAIN: &str = "Examples:
  Which rule claimed each of the 30 heaviest frames of ./perf.data:
    whose explain

  Only the frames that match a regex:
    whose explain cpu.pb.gz --frame 'regexp|json' --top 10

  Check that a rule file claims your frames:
    whose explain app.folded --rules my-rules.toml";

    pub const TOP: &str = "Examples:
  The ten heaviest functions of your own code in ./perf.data, by self weight:
    whose top user --top 10

  The allocator's callers by inclusive weight, as pprof -top -cum:
    whose top allocator allocs.pb.gz --metric alloc_space --cum";

    pub const FLAME: &str = "Examples:
  A flame graph of ./perf.data coloured by owner:
    whose flame -o flame.svg

  One graph per owner, and an index page:
    whose flame perf.data --split flames/

  Coloured by the owner of the whole sample, owners at the root:
    whose flame cpu.pb.gz --color-by owner --owner-root -o owners.svg

  What grew between two runs:
    whose flame new.pb.gz --diff old.pb.gz --normalize -o diff.svg";

    pub const RULES: &str = "Examples:
  Check a rule file and list the owners it declares:
    whose rules check my-rules.toml

  The presets and their owners; one preset with every block:
    whose rules list
    whose rules list --preset jvm";

    pub const CONVERT: &str = "Examples:
  pprof with owner labels, for go tool pprof -tagfocus owner=user:
    whose convert perf.data --to pprof -o owned.pb.gz

  Folded stacks with an [owner: NAME] root, for other flame graph tools:
    whose convert -i perf.data --to folded --owner-root -o owned.folded";

    pub const DIFF: &str = "Examples:
  Share deltas between two runs:
    whose diff before.pb.gz --against after.pb.gz

  Three repeats a side, only the owner view, as markdown:
    whose diff base1.folded base2.folded base3.folded \\
        --against new1.folded new2.folded new3.folded --views owner --format markdown";

    pub const COMPLETIONS: &str = "Examples:
  bash, for the current shell and for every new one:
    whose completions bash > ~/.local/share/bash-completion/completions/whose

  zsh (a folder on $fpath) and fish:
    whose completions zsh > ~/.zfunc/_whose
    whose completions fish > ~/.config/fish/completions/whose.fish";

    pub const MAN: &str = "Examples:
  Read whose's page, and one command's:
    whose man | man -l -
    whose man report | man -l -

  Install the pages:
    whose man > /usr/local/share/man/man1/whose.1";
}

/// How inputs are read (shared by every command that reads profiles).
#[derive(Debug, Args, Clone, Default)]
pub struct InputArgs {
    /// A profile to read, as perf's `-i`; repeatable, read after the PROFILE arguments.
    /// With neither, ./perf.data when it exists (as `perf report`).
    #[arg(short = 'i', long = "input", value_name = "FILE")]
    pub input_files: Vec<PathBuf>,
    /// Only the samples of these threads (perf's comm), comma-separated. perf.data and perf
    /// script input only: other formats record no threads, and the filter is refused there.
    #[arg(long, value_name = "NAME[,NAME]", value_delimiter = ',')]
    pub comm: Vec<String>,
    /// Only the samples of these processes, comma-separated (perf.data and perf script).
    #[arg(long, value_name = "PID[,PID]", value_delimiter = ',')]
    pub pid: Vec<i32>,
    /// Only the samples of these threads by id, comma-separated (perf.data and perf script).
    #[arg(long, value_name = "TID[,TID]", value_delimiter = ',')]
    pub tid: Vec<i32>,
    /// Only the samples in this time slice, in `perf report --time` syntax: seconds as perf
    /// prints them, `START,END`, `START,` or `,END`; or a percent slice of the recording,
    /// `10%/2` (the second tenth) or `0%-10%`, several comma-separated (not from standard
    /// input).
    /// perf.data and perf script.
    #[arg(long, value_name = "START,END")]
    pub time: Option<String>,
    /// Input format; detected from the content when not given.
    #[arg(long, value_enum)]
    pub format_in: Option<InputFormatArg>,
    /// Sample type to weigh by: a pprof sample type (`cpu`, `alloc_space`...) or its index,
    /// a perf event name, or `samples`. Default: the profile's default type.
    /// `--sample-index` is pprof's name for it.
    #[arg(long, visible_alias = "sample-index")]
    pub metric: Option<String>,
    /// Unit of folded counts, which folded text does not say. Default: samples.
    #[arg(long, value_enum)]
    pub unit: Option<Unit>,
    /// Keep async-profiler's allocated-class leaves (`byte[]_[i]`) as ordinary frames.
    #[arg(long)]
    pub types_as_frames: bool,
    /// Folded: keep a process-name root frame (`java;start_thread;...` from
    /// stackcollapse-perf or inferno) as a frame instead of reading it as the thread.
    #[arg(long)]
    pub keep_process_root: bool,
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
    /// Default: on for recordings with call chains (frame pointers too, where perf 6.1 shows
    /// none: without them inlined library code is charged to its caller), off without; the
    /// report header says which it was (docs/perf-inline.md).
    #[arg(long, overrides_with = "no_inline")]
    pub inline: bool,
    /// perf.data: no inline frames, each address its physical function only.
    #[arg(long, overrides_with = "inline")]
    pub no_inline: bool,
    /// Largest input held whole, in bytes: a gzip stream or perf.data's zstd records as they
    /// inflate, and a raw pprof or perf.data file. Past it the read is refused (exit 2) rather
    /// than exhausting memory; raise it for a genuine profile that large.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_DECOMPRESSED)]
    pub max_decompressed: u64,
    /// Longest line of a text input (folded, py-spy raw, perf script), in bytes: a longer
    /// line is refused (exit 2) with its number and length, and never held whole.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_LINE)]
    pub max_line: u64,
}

/// Where the rules come from (shared by every command that classifies).
#[derive(Debug, Args, Clone, Default)]
pub struct RuleArgs {
    /// A rule file (TOML); repeatable, earlier files win; all come before presets.
    #[arg(long = "rules", value_name = "FILE")]
    pub rule_files: Vec<PathBuf>,
    /// A preset from rules/ (kotlin, kotlin-native, node, ruby, beam, jvm, go, rust, python,
    /// native, allocators, kernel); repeatable. Default: detected from the frames.
    #[arg(long, value_name = "NAME", value_parser = Completing(preset_names), hide_possible_values = true)]
    pub preset: Vec<String>,
    /// Use the --rules files alone.
    #[arg(long)]
    pub no_presets: bool,
    /// Frames whose name starts with PREFIX are user code (top priority); repeatable.
    #[arg(long, value_name = "PREFIX")]
    pub user: Vec<String>,
    /// Guess nothing from the frames: neither the program's own code (`user`) nor owners named
    /// after the third-party unit (crate, package, module, library) of frames no rule names;
    /// those stay `unclassified`.
    #[arg(long)]
    pub no_guess: bool,
    /// Make an owner or a whole category transparent, e.g. `--through framework`.
    #[arg(long, value_name = "OWNER|CATEGORY", value_parser = Completing(owner_names), hide_possible_values = true)]
    pub through: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Profiles to read (`-` for standard input). Default: ./perf.data, unless --each.
    #[arg(value_name = "PROFILE")]
    pub profiles: Vec<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub rules: RuleArgs,
    /// Rows of the table: owners, categories, allocated types (`type`), or owners per time
    /// bucket (`time`: perf.data, perf script and JFR time each sample).
    #[arg(long, value_enum, default_value_t)]
    pub by: GroupByArg,
    /// With --by time: the width of a bucket, a duration (`1s`, `250ms`) or a percent of the
    /// recording (`5%`, the default). A warm-up, first buckets whose owner shares differ from
    /// the rest beyond their noise, is a finding with the `--time` slice that skips it.
    #[arg(long, value_name = "WIDTH|N%", value_parser = BucketSize::parse)]
    pub bucket: Option<BucketSize>,
    /// Views to show, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = defaults::VIEWS)]
    pub views: Vec<ViewArg>,
    /// Heaviest frames in each frame list (owner frames, self frames, unclassified), N in
    /// total as every --top: not N per owner.
    #[arg(long, default_value_t = defaults::REPORT_TOP)]
    pub top: usize,
    /// Split by thread name (pool numbers folded: worker-12 → worker-*).
    #[arg(long)]
    pub threads: bool,
    /// Divide weights by N (e.g. a request count: bytes per request).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub per: Option<u64>,
    /// Show each share with its 95% interval (`33.8% [32.6–35.0]`) instead of its weight:
    /// from the input's samples (batch means over time blocks where samples carry a time,
    /// else the sample counts as independent draws), or over `--repeats` their mean with
    /// Student's t. CSV gains
    /// `low` and `high`; JSON always carries the intervals.
    #[arg(long)]
    pub ci: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: OutputFormatArg,
    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Treat the profiles as repeats of one experiment: median and min–max per share.
    #[arg(long, conflicts_with = "merge")]
    pub repeats: bool,
    /// Sum the profiles into one.
    #[arg(long)]
    pub merge: bool,
    /// Fleet rows: read every profile under DIR, matching GLOB (`**` too) or listed in
    /// @LIST (a path a line) in parallel, each on its own, writing its rows as it finishes;
    /// a bad file is an error row and exit 2 at the end. Needs --format ndjson or parquet.
    #[arg(long, value_name = "DIR|GLOB|@LIST", conflicts_with_all = ["merge", "repeats"])]
    pub each: Vec<String>,
    /// --each: the most distinct content one input may hold (its frames, stacks and rows, in
    /// bytes); an input past it stops being read and becomes an error row, the others go on.
    #[arg(long, value_name = "BYTES", default_value_t = defaults::EACH_MEMORY, requires = "each")]
    pub each_memory: u64,
    /// --each: the longest one input may take to read, in seconds; past it the input stops
    /// being read and becomes an error row, the others go on.
    #[arg(long, value_name = "SECONDS", default_value_t = defaults::EACH_TIMEOUT, requires = "each")]
    pub each_timeout: u64,
    /// A label column with this value on every row (ndjson, parquet); repeatable.
    #[arg(long, value_name = "KEY=VALUE")]
    pub label: Vec<String>,
    /// Label columns from each input's path, one per named group of the regex:
    /// `(?P<service>[^/]+)/(?P<date>\d{8})/` (ndjson, parquet).
    #[arg(long, value_name = "REGEX")]
    pub label_from_path: Option<String>,
    /// A label column from the pprof string label KEY of the profile's samples (ndjson,
    /// parquet); repeatable.
    #[arg(long, value_name = "KEY")]
    pub pprof_label: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The profile to read (`-` for standard input). Default: ./perf.data.
    #[arg(value_name = "PROFILE")]
    pub profile: Option<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub rules: RuleArgs,
    /// Only functions whose name matches this regex.
    #[arg(long, value_name = "REGEX")]
    pub frame: Option<String>,
    /// How many functions to list, in total (the heaviest N by inclusive weight).
    #[arg(long, default_value_t = defaults::EXPLAIN_TOP)]
    pub top: usize,
    /// One row per source line instead of one per function (as pprof's -lines).
    #[arg(long)]
    pub lines: bool,
}

/// `whose top`: the drill-down into one owner.
#[derive(Debug, Args)]
pub struct TopArgs {
    /// An owner (`user`, `net-http`) or a category (`allocator`); `owner:NAME` and
    /// `category:NAME` say which when both exist.
    #[arg(value_name = "OWNER|CATEGORY", value_parser = Completing(owner_names), hide_possible_values = true)]
    pub subject: String,
    /// The profile to read (`-` for standard input). Default: ./perf.data.
    #[arg(value_name = "PROFILE")]
    pub profile: Option<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub rules: RuleArgs,
    /// How many functions to list, in total (as every --top: N rows, not N per owner).
    #[arg(long, default_value_t = defaults::TOP_FUNCTIONS)]
    pub top: usize,
    /// Sort by cum (inclusive weight) instead of flat (self weight), as `pprof -top -cum`.
    #[arg(long)]
    pub cum: bool,
    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

const TOP_ABOUT: &str = "The heaviest functions whose own frames the rules give to OWNER (or to \
an owner of CATEGORY), as `go tool pprof -top` lists functions: flat is the weight of the \
samples the function is the leaf of, cum of those it is anywhere on the stack of (once per \
sample), each with its percentage of the profile's total; sum% adds up flat% down the list. \
Source lines of one function are one row. The flat of all the owner's functions adds up to its \
self view; the header shows the owner's three views beside it.";

const TOP_AFTER: &str = "Examples:
  whose top user cpu.pb.gz
  whose top net-http cpu.pb.gz --cum --top 10
  whose top category:allocator perf.data";

const GATE_ABOUT: &str = "Exit 0 when owned shares meet every requirement (or one, with --any), 1 \
when not, 3 when the measurement cannot tell, 2 on an error; prints the measured share, its \
interval, the threshold and PASS/FAIL/INCONCLUSIVE per requirement, then the verdict.

A share measured from samples has a sampling error. A requirement passes when the share's \
interval (at --confidence, 95 % by default) lies on the right side of the threshold, fails \
when it lies on the wrong side, and is inconclusive when it contains the threshold; the line \
then says how many seconds of recording (one profile) or repeats would decide it at the share \
measured. One profile whose samples carry a time (perf.data, perf script, JFR): the samples of \
all threads in the recording's time buckets (1 ms, wider past a second), the variance from \
overlapping batch means of the buckets' residuals (each from the share of its own eighth of the \
recording: a warm-up is the program's time profile, not noise) at the block of 1, 2, 4... \
buckets, up to half an eighth, whose variance is largest (Flyvbjerg and Petersen's blocking), \
and Wilson's interval at the effective sample size it implies. One profile without times: the sample counts (`samples`, `value / period`, a \
Go heap profile's sampled allocations; weighted samples through their squared weights; without \
any count every distinct stack is one sample) as independent draws, Wilson at the effective \
sample size. Either covers one recording's sampling noise only: what varies from run to run \
(JIT compilation, warm-up, load, GC) needs repeats. Several profiles are repeats of one \
experiment: the mean share with Student's t interval over their spread. Weight whose owner is \
unknown over its guard (stacks cut short, --max-ownerless; unclassified frames, \
--max-unclassified) is a bound: the requirement is decided when it holds (or fails) with that \
weight given to the subject and to others, and refused (exit 2) only when it could flip the \
verdict. --point-estimate compares the shares themselves instead (every repeat must hold; a \
straddling range is `inconclusive: k of n repeats pass` and fails, exit 1).

Requirement grammar:

    SUBJECT.VIEW[METRIC] OP PERCENT

  SUBJECT  an owner name (`user`, `io.ktor`, `kotlin-stdlib`), or a category; a bare name
           is the owner if the rules declare one, else the category of that name (the
           verdict says so); `owner:NAME` and `category:NAME` say which explicitly
  VIEW     self | owner | anywhere; it is the last `.`-separated word before the optional
           [METRIC], so dots and dashes in owner names need no quoting
  METRIC   optional sample type (`cpu`, `alloc_space`, `samples`, a perf event): evaluated
           over the inputs that have it; without it, over every input with --metric or its
           default metric (which must then agree)
  OP       >=  >  <=  <
  PERCENT  0 to 100 followed by `%`: a bare `0.4` could mean 0.4 % or 40 %, so it is
           refused with both readings

A SUBJECT the rules do not declare, or a METRIC no input has, is an error (exit 2) that \
lists what exists: never a silent pass.";

const GATE_AFTER: &str = "Examples:
  whose gate alloc.txt --unit bytes --require 'user.owner >= 25%'
  whose gate run1.pb.gz run2.pb.gz run3.pb.gz --require 'category:allocator.self <= 10%'
  whose gate cpu.pb.gz allocs.pb.gz \\
      --require 'user.owner[cpu] >= 5%' --require 'user.owner[alloc_space] >= 25%'
  whose gate perf.data --require 'io.ktor.anywhere < 50%' --require 'user.self > 2%' --any
  whose gate *.folded --require 'user.owner >= 25%' --format json -o verdict.json

Exit codes: 0 the requirements hold, 1 they do not, 2 usage or input error, 3 inconclusive.";

const DIFF_ABOUT: &str = "Per owner and view, the weight in BASE and in NEW (time, bytes or \
samples, as the metric is; per request with --per N), the delta and the relative change, and the \
change of the share in percentage points; the inputs' totals first. Rows are sorted by the size \
of the weight's delta. A side with several profiles is repeats: its median, and min–max in JSON.

The noise test judges the weight: a delta of the medians no larger than the combined spread is \
noise. The combined spread is (base max − base min) + (new max − new min) when both sides have \
repeats, twice the range of the side that has repeats when only one does, and unknown with \
single profiles on both sides: a nonzero delta is then marked `unknown`, not a change, because \
one profile per side says nothing about noise. Each row's mark names the spread it was compared \
with, and the header counts the marks. --format markdown suits a PR comment, --format json \
(schema whose-diff/2) a script. Exit 0 unless an error.";

const DIFF_AFTER: &str = "Examples:
  whose diff before.pb.gz --against after.pb.gz
  whose diff base-1.data base-2.data base-3.data --against new-1.data new-2.data new-3.data
  whose diff old.folded --against new.folded --per 10000 --format markdown -o diff.md";

/// `whose gate`: requirements on owned shares, decided over repeats.
#[derive(Debug, Args)]
pub struct GateArgs {
    /// Profiles to read (`-` for standard input); several are repeats of one experiment.
    /// Default: ./perf.data.
    #[arg(value_name = "PROFILE")]
    pub profiles: Vec<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub rules: RuleArgs,
    /// A requirement, `SUBJECT.VIEW[METRIC] OP PERCENT` (see above); repeatable.
    #[arg(long, required = true, value_name = "EXPR")]
    pub require: Vec<String>,
    /// Pass when any one requirement holds. Default: all must hold.
    #[arg(long)]
    pub any: bool,
    /// Refuse a verdict (exit 2) on an input whose deciding frames (the leaf for self, the
    /// owner frame for owner, any frame for anywhere) are addresses without a symbol for more
    /// than this share of the weight; `100%` turns the guard off.
    #[arg(long, value_name = "PERCENT", default_value = defaults::GATE_GUARD)]
    pub max_unresolved: String,
    /// Refuse a verdict (exit 2) on the owner or anywhere view of an input with more than this
    /// share of its weight in stacks cut short (only transparent frames, no thread root);
    /// `100%` turns the guard off.
    #[arg(long, value_name = "PERCENT", default_value = defaults::GATE_GUARD)]
    pub max_ownerless: String,
    /// Refuse a verdict (exit 2) on a perf.data input that lost more than this share of its
    /// samples (the larger of the LOST and LOST_SAMPLES counts, against the samples kept plus
    /// lost); `100%`
    /// turns the guard off. Truncated DWARF stacks count under --max-ownerless when they
    /// leave only transparent frames; throttling is reported, not guarded.
    #[arg(long, value_name = "PERCENT", default_value = defaults::GATE_GUARD)]
    pub max_lost: String,
    /// Refuse a verdict (exit 2) when frames no rule and no guess names (`unclassified`)
    /// decide more than this share of a requirement's view (the leaf for self, the owner frame
    /// for owner, any frame for anywhere); a requirement on `unclassified` or `unknown`
    /// itself is exempt; `100%` turns the guard off.
    #[arg(long, value_name = "PERCENT", default_value = defaults::GATE_GUARD)]
    pub max_unclassified: String,
    /// Several profiles are always repeats in a gate; accepted so `report --repeats` and
    /// `gate` take the same flags.
    #[arg(long)]
    pub repeats: bool,
    /// The confidence level of the shares' intervals (from 50% to 99.99%).
    #[arg(long, value_name = "PERCENT", default_value = defaults::CONFIDENCE)]
    pub confidence: String,
    /// Decide on the measured shares alone, without their sampling error (the gate before
    /// intervals: every repeat must hold, never inconclusive by exit code).
    #[arg(long)]
    pub point_estimate: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: VerdictFormatArg,
    /// Write to FILE instead of standard output (the exit code is unchanged).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `whose diff`: share deltas between two sets of profiles.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Baseline profiles (several: repeats); `-i FILE` adds one. Default: ./perf.data.
    #[arg(value_name = "BASE")]
    pub base: Vec<PathBuf>,
    /// Profiles to compare with the baseline (several: repeats).
    #[arg(long, required = true, num_args = 1.., value_name = "NEW")]
    pub against: Vec<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub rules: RuleArgs,
    /// Rows: owners or categories.
    #[arg(long, value_enum, default_value_t)]
    pub by: GroupByArg,
    /// Views to compare, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = defaults::VIEWS)]
    pub views: Vec<ViewArg>,
    /// Divide every weight by N (e.g. the requests each run served: time per request), so
    /// runs of different lengths compare.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub per: Option<u64>,
    /// The confidence level of the test of each row's share change; false discoveries
    /// across the rows are held at 100% minus it (Benjamini–Hochberg).
    #[arg(long, value_name = "PERCENT", default_value = defaults::CONFIDENCE)]
    pub confidence: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: VerdictFormatArg,
    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Every frame's text carries its owner (`name [owner]`, or `name [frame owner \
    → sample owner]` where they differ), so inferno's tooltip and search show it; labels too \
    long for their frame keep their start. Colours: one colour-blind-safe hue per category \
    (user vermillion, framework blue, library bluish green, runtime sky blue, allocator orange, \
    gc reddish purple, kernel yellow, unknown grey), shades of it per owner, as in `whose \
    report`'s table. Click a legend entry to search that owner's samples: the \"Matched\" share \
    is the legend's. Standard output is refused when it is a terminal (use -o FILE)."
)]
pub struct FlameArgs {
    /// The profiles to draw (`-` for standard input); several are drawn as their sum.
    /// Default: ./perf.data.
    #[arg(value_name = "PROFILE")]
    pub profiles: Vec<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub rules: RuleArgs,
    /// Write the SVG to FILE instead of standard output.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        conflicts_with = "split"
    )]
    pub output: Option<PathBuf>,
    /// Colour each frame by the owner of the sample it is part of (`owner`, the owner view:
    /// the legend's shares, what the search of an owner matches) or by its own owner (`self`:
    /// the legend then shows the share of samples with the owner on the stack, and self).
    #[arg(long, value_enum, default_value_t)]
    pub color_by: ColorByArg,
    /// One SVG per owner holding only the samples that owner owns (owner view), and
    /// DIR/index.html linking them with their shares. DIR is replaced as a whole.
    #[arg(long, value_name = "DIR", conflicts_with = "diff")]
    pub split: Option<PathBuf>,
    /// A synthetic root frame `[owner: NAME]` under every stack: the first level is the
    /// owner split.
    #[arg(long)]
    pub owner_root: bool,
    /// Differential graph of BASE against PROFILE: PROFILE's stacks, each frame red where
    /// its own (self) weight grew, blue where it shrank. Stacks only in BASE are not drawn
    /// (swap the two to see them).
    #[arg(long, value_name = "BASE")]
    pub diff: Option<PathBuf>,
    /// With --diff: scale BASE to PROFILE's total first (profiles of different lengths).
    #[arg(long, requires = "diff")]
    pub normalize: bool,
    /// Image width in pixels. Default: fluid (fits the window).
    #[arg(long, value_name = "PIXELS", value_parser = clap::value_parser!(u32).range(100..))]
    pub width: Option<u32>,
    /// Omit frames narrower than this percentage of the total (`0.5` or `0.5%`).
    #[arg(long, value_name = "PERCENT", default_value = defaults::MIN_WIDTH_PERCENT)]
    pub min_width: String,
    /// Icicle graph: roots at the top.
    #[arg(long)]
    pub inverted: bool,
    /// Reverse the stacks: leaves at the root (who calls this?).
    #[arg(long)]
    pub reverse: bool,
    /// Title. Default: the input, metric and total.
    #[arg(long)]
    pub title: Option<String>,
    /// What the counts are called in tooltips. Default: from the metric's unit.
    #[arg(long, value_name = "NAME")]
    pub countname: Option<String>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "pprof output carries the string labels `owner`, `self_owner` and \
                  `category` on every sample: `go tool pprof -tagfocus owner=user OUT.pb.gz`. \
                  A pprof input keeps all its own fields (numeric labels included)."
)]
pub struct ConvertArgs {
    /// The profile to read (`-` for standard input). Default: ./perf.data.
    #[arg(value_name = "PROFILE")]
    pub profile: Option<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub rules: RuleArgs,
    /// Output format: gzipped pprof with owner labels, or `root;...;leaf N` folded lines
    /// (in the --metric sample type). A metric with negative weights (a delta profile, `go
    /// tool pprof -proto -diff_base`) is written as differential folded lines, `root;...;leaf
    /// BEFORE AFTER` with BEFORE the negative part (the base) and AFTER the positive part, as
    /// inferno-diff-folded writes them: `inferno-flamegraph` draws them as a differential graph
    /// and nothing is dropped.
    #[arg(long, value_enum)]
    pub to: ConvertTo,
    /// With `--to folded`: a synthetic root frame `[owner: NAME]` per sample's owner (owner
    /// view), for other flame graph tools.
    #[arg(long)]
    pub owner_root: bool,
    /// With `--to folded`: function names only, as inferno's and FlameGraph's collapsers
    /// write them. By default frames also carry what rules match on, in forms those tools
    /// still draw: the module as perf script prints it (`malloc (/usr/lib/libc.so.6)`,
    /// `[libc.so.6]` for an unnamed frame), py-spy's `func (file.py:LINE)`, and frame-kind
    /// suffixes; read back by whose, that text gives the same owners.
    #[arg(long, conflicts_with = "owner_root")]
    pub plain: bool,
    /// Write to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConvertTo {
    Pprof,
    Folded,
}

// The values of the options that name one of the domain's enums. clap's names, defaults and
// possible-value help live here, so the stages below keep no command-line derive; each maps
// onto its domain enum one to one (`From`), and `config` converts where it builds the plan.

/// `--color`: when standard output gets colour ([`ColorChoice`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ColorArg {
    #[default]
    Auto,
    Always,
    Never,
}

impl From<ColorArg> for ColorChoice {
    fn from(value: ColorArg) -> ColorChoice {
        match value {
            ColorArg::Auto => ColorChoice::Auto,
            ColorArg::Always => ColorChoice::Always,
            ColorArg::Never => ColorChoice::Never,
        }
    }
}

/// `--format-in`: the input formats ([`InputFormat`]); the variant docs stay out of `--help`,
/// which lists the names only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputFormatArg {
    /// `root;...;leaf N` (inferno, FlameGraph, async-profiler collapsed).
    #[value(help = None::<&str>)]
    Folded,
    /// py-spy `--format raw`: folded lines whose frames are `func (file.py:line)`.
    #[value(name = "pyspy-raw", help = None::<&str>)]
    PySpy,
    PerfScript,
    Pprof,
    PerfData,
    /// speedscope JSON (py-spy, rbspy...): sampled and evented profiles, one thread each.
    #[value(help = None::<&str>)]
    Speedscope,
    /// JDK Flight Recorder (`.jfr`): the JDK's recorder and async-profiler's `-o jfr`.
    #[value(help = None::<&str>)]
    Jfr,
    /// V8 CPU profile (`.cpuprofile`): `node --cpu-prof`, Chrome DevTools.
    #[value(help = None::<&str>)]
    Cpuprofile,
}

impl From<InputFormatArg> for InputFormat {
    fn from(value: InputFormatArg) -> InputFormat {
        match value {
            InputFormatArg::Folded => InputFormat::Folded,
            InputFormatArg::PySpy => InputFormat::PySpy,
            InputFormatArg::PerfScript => InputFormat::PerfScript,
            InputFormatArg::Pprof => InputFormat::Pprof,
            InputFormatArg::PerfData => InputFormat::PerfData,
            InputFormatArg::Speedscope => InputFormat::Speedscope,
            InputFormatArg::Jfr => InputFormat::Jfr,
            InputFormatArg::Cpuprofile => InputFormat::Cpuprofile,
        }
    }
}

/// `--by`: what the rows of the table are ([`GroupBy`]); the variant docs stay out of
/// `--help`, which lists the names only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum GroupByArg {
    #[default]
    Owner,
    Category,
    /// Allocated types (async-profiler allocation profiles).
    #[value(help = None::<&str>)]
    Type,
    /// Owners per time bucket (`--bucket`), for inputs that time each sample (perf.data,
    /// perf script, JFR).
    #[value(help = None::<&str>)]
    Time,
}

impl From<GroupByArg> for GroupBy {
    fn from(value: GroupByArg) -> GroupBy {
        match value {
            GroupByArg::Owner => GroupBy::Owner,
            GroupByArg::Category => GroupBy::Category,
            GroupByArg::Type => GroupBy::Type,
            GroupByArg::Time => GroupBy::Time,
        }
    }
}

/// `--views`: the three views ([`View`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ViewArg {
    #[value(name = "self")]
    Self_,
    Owner,
    Anywhere,
}

impl From<ViewArg> for View {
    fn from(value: ViewArg) -> View {
        match value {
            ViewArg::Self_ => View::Self_,
            ViewArg::Owner => View::Owner,
            ViewArg::Anywhere => View::Anywhere,
        }
    }
}

/// `report --format` ([`OutputFormat`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum OutputFormatArg {
    #[default]
    Table,
    Markdown,
    Json,
    Csv,
    /// One JSON object a line per (input, owner, view): fleet rows (README "Fleet rows").
    Ndjson,
    /// The same rows as a Parquet file (binary: `-o FILE` or a pipe).
    Parquet,
    /// One self-contained page: table, flame graph, findings and time (`-o FILE`).
    Html,
}

impl From<OutputFormatArg> for OutputFormat {
    fn from(value: OutputFormatArg) -> OutputFormat {
        match value {
            OutputFormatArg::Table => OutputFormat::Table,
            OutputFormatArg::Markdown => OutputFormat::Markdown,
            OutputFormatArg::Json => OutputFormat::Json,
            OutputFormatArg::Csv => OutputFormat::Csv,
            OutputFormatArg::Ndjson => OutputFormat::Ndjson,
            OutputFormatArg::Parquet => OutputFormat::Parquet,
            OutputFormatArg::Html => OutputFormat::Html,
        }
    }
}

/// `gate --format` and `diff --format` ([`VerdictFormat`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum VerdictFormatArg {
    #[default]
    Text,
    Markdown,
    Json,
}

impl From<VerdictFormatArg> for VerdictFormat {
    fn from(value: VerdictFormatArg) -> VerdictFormat {
        match value {
            VerdictFormatArg::Text => VerdictFormat::Text,
            VerdictFormatArg::Markdown => VerdictFormat::Markdown,
            VerdictFormatArg::Json => VerdictFormat::Json,
        }
    }
}

/// `--color-by`: which owner a frame's colour follows ([`ColorBy`]), named by the view it
/// follows; the variant docs stay out of `--help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ColorByArg {
    /// The frame's own owner, from the rules.
    #[value(name = "self", help = None::<&str>)]
    Frame,
    /// The owner of the sample the frame is part of (owner view).
    #[default]
    #[value(name = "owner", help = None::<&str>)]
    Sample,
}

impl From<ColorByArg> for ColorBy {
    fn from(value: ColorByArg) -> ColorBy {
        match value {
            ColorByArg::Frame => ColorBy::Frame,
            ColorByArg::Sample => ColorBy::Sample,
        }
    }
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
        /// Only this preset, with every owner block it loads: where it is declared (the
        /// line of `whose rules show`), its owner, category and matchers.
        #[arg(long)]
        preset: Option<String>,
    },
    /// Print a preset's TOML as built into whose: the text `explain` cites as `preset
    /// NAME:LINE`, and a starting point for a --rules file.
    Show {
        #[arg(value_name = "PRESET")]
        preset: String,
    },
}

/// `--unit`: the three units folded counts can be in, by their CLI names (`samples` is
/// [`Unit::Count`]). Implemented by hand because [`Unit::Other`] carries a name and is no
/// command-line value.
impl ValueEnum for Unit {
    fn value_variants<'a>() -> &'a [Self] {
        // a static, not a promoted constant: `Unit` owns a `String` in `Other`
        static UNITS: [Unit; 3] = [Unit::Count, Unit::Bytes, Unit::Nanoseconds];
        &UNITS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        match self {
            Unit::Count => Some(PossibleValue::new("samples")),
            Unit::Bytes => Some(PossibleValue::new("bytes")),
            Unit::Nanoseconds => Some(PossibleValue::new("nanoseconds")),
            Unit::Other(_) => None,
        }
    }
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

/// A free-text option whose usual values the shell completions offer (issue 28): the presets
/// after `--preset`, the categories and the presets' owners after `--through` and `top`. Any
/// text is accepted, as before: an unknown preset is refused where the rules are built, naming
/// those that exist, and a rule file may declare owners no preset knows. `--help` does not
/// list them (`hide_possible_values`), and they are computed only when a completion script is
/// written: never while a profile is read.
#[derive(Clone, Copy)]
pub struct Completing(fn() -> Vec<String>);

impl clap::builder::TypedValueParser for Completing {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new((self.0)().into_iter().map(PossibleValue::new)))
    }
}

fn preset_names() -> Vec<String> {
    crate::classify::presets::names()
        .map(String::from)
        .collect()
}

/// The categories, then every owner a preset declares, sorted.
fn owner_names() -> Vec<String> {
    use crate::classify::{RuleOptions, RuleSet};
    let mut names: Vec<String> = crate::model::Category::ALL
        .iter()
        .map(|c| c.as_str().to_string())
        .collect();
    for preset in crate::classify::presets::names() {
        let options = RuleOptions {
            presets: vec![preset.to_string()],
            ..Default::default()
        };
        if let Ok(set) = RuleSet::build(&options, &[]) {
            let owners = set
                .owners()
                .iter()
                .skip(crate::model::OwnerId::BUILT_IN_COUNT);
            names.extend(owners.map(|o| o.name.to_string()));
        }
    }
    names.sort();
    names.dedup();
    names
}

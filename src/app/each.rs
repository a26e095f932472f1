//! `whose report --each DIR|GLOB|@LIST` (issue 16): every profile of a fleet read in one
//! process, each on its own, its rows written as it finishes.
//!
//! - Parallel: rayon's pool reads one input per core.
//! - Bounded memory: a worker holds one profile; finished inputs wait in a channel of a few
//!   slots for the one writer thread, so memory does not grow with the count of inputs.
//! - Never stops at a bad file: its read error (or a reader's panic) becomes the input's
//!   error row; the run exits 2 at the end when any input failed, 0 otherwise.
//! - Each input is classified as `whose report FILE` would classify it (its presets and its
//!   own code detected from its frames), by a rule set compiled once per distinct detection
//!   (`classify::shared::SharedRuleSets`), not once per input, which remembers the owner of
//!   each frame it has classified.
//! - Rows arrive in the order inputs finish, which varies between runs; an engine sums them.

use super::{Detail, Loaded, Outcome, aggregate_input, build_report, choose_metric};
use crate::aggregate::rows::InputRows;
use crate::classify::shared::SharedRuleSets;
use crate::config::ReportPlan;
use crate::error::{Error, Result};
use crate::input;
use crate::model::budget::{self, Budget, Exceeded};
use crate::render::rows::{RowFormat, RowWriter};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::sync_channel;

/// Finished inputs that may wait for the writer, per worker thread.
const QUEUE_PER_THREAD: usize = 2;

pub fn run(mut plan: ReportPlan, format: RowFormat) -> Result<Outcome> {
    let paths = find_inputs(&plan.each, plan.output.as_deref())?;
    let as_paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    super::output::refuse_input_as_output(plan.output.as_deref(), &as_paths)?;
    if format == RowFormat::Parquet && plan.output.is_none() && std::io::stdout().is_terminal() {
        return Err(Error::Usage(
            "--format parquet is binary: write it to a file with -o FILE, or pipe it".into(),
        ));
    }
    let rules = SharedRuleSets::new(&plan.load.rules)?;
    // the inputs name the same functions: each name is normalised once per run
    plan.load.read.names = Some(Default::default());
    let mut failed = 0usize;
    super::write_output(plan.output.as_deref(), |out, _color| {
        failed = read_all(&plan, &rules, format, &paths, out)?;
        Ok(())
    })?;
    if failed > 0 {
        return Err(Error::Usage(format!(
            "{failed} of {} inputs could not be read; their error rows say why",
            paths.len()
        )));
    }
    Ok(Outcome::Success)
}

/// Reads `paths` in parallel and writes each one's rows to `out` as it finishes; returns how
/// many failed.
fn read_all(
    plan: &ReportPlan,
    rules: &SharedRuleSets,
    format: RowFormat,
    paths: &[PathBuf],
    out: &mut dyn Write,
) -> std::io::Result<usize> {
    let mut writer = RowWriter::new(format, plan.labels.clone(), out)?;
    let progress = progress_bar(paths.len() as u64);
    let stop = AtomicBool::new(false);
    let (tx, rx) = sync_channel::<InputRows>(rayon::current_num_threads() * QUEUE_PER_THREAD);
    let mut failed = 0;
    let mut written: std::io::Result<()> = Ok(());
    std::thread::scope(|scope| {
        let stop = &stop;
        scope.spawn(move || {
            paths.par_iter().for_each_with(tx, |tx, path| {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                // a closed channel means the writer stopped on an error it reports
                let _ = tx.send(read_one(plan, rules, path));
            });
        });
        for rows in rx.iter() {
            failed += usize::from(rows.outcome.is_err());
            progress.inc(1);
            if let Err(e) = writer.write(&rows) {
                stop.store(true, Ordering::Relaxed);
                written = Err(e);
                break;
            }
        }
        // dropping the receiver here lets workers blocked on a full channel return
        drop(rx);
    });
    progress.finish_and_clear();
    written?;
    writer.finish()?;
    Ok(failed)
}

/// A bar counting inputs on stderr, or nothing when stderr is no terminal.
fn progress_bar(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} inputs ({per_sec}, {eta})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message("reading");
    bar
}

/// One input's rows, or its error row; a panic in a reader is the input's error too, so that
/// one strange file cannot end a fleet run.
fn read_one(plan: &ReportPlan, rules: &SharedRuleSets, path: &Path) -> InputRows {
    let shown = path.display().to_string();
    // its share of memory and time: past either, the reader stops and the input is an error
    // row (issue 23), whatever the reader made of being stopped
    let share = plan.each_share;
    let budget = Budget::new(share.memory, Some(share.time));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        budget::within(&budget, || rows_of(plan, rules, path))
    }));
    let result = match budget.exceeded() {
        Some(limit) => Err(past_its_share(path, limit)),
        None => result.unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(Error::input(
                path,
                crate::error::Position::Whole,
                format!("internal error reading it (a bug in whose, please report it): {what}"),
            ))
        }),
    };
    match result {
        Ok(rows) => rows,
        Err(e) => {
            let none = vec![None; plan.labels.pprof_keys().len()];
            InputRows::failed(
                shown.clone(),
                plan.labels.values(&shown, none),
                e.to_string(),
            )
        }
    }
}

/// The error row's message of an input past its share, naming the flag that raises it.
fn past_its_share(path: &Path, limit: Exceeded) -> Error {
    let why = match limit {
        Exceeded::Memory { limit } => format!(
            "went past its share of memory, {limit} bytes of distinct frames, stacks and rows, \
             and was not read to the end; --each-memory BYTES raises the share"
        ),
        Exceeded::Time { limit } => format!(
            "went past its share of time, {} s, and was not read to the end; --each-timeout \
             SECONDS raises the share",
            limit.as_secs()
        ),
    };
    Error::input(path, crate::error::Position::Whole, why)
}

fn rows_of(plan: &ReportPlan, rules: &SharedRuleSets, path: &Path) -> Result<InputRows> {
    let (profile, pprof_values) =
        input::read_profile_labelled(path, &plan.load.read, plan.labels.pprof_keys())?;
    let (set, class) = rules.classified(&profile)?;
    let loaded = Loaded {
        paths: vec![path.to_path_buf()],
        profiles: vec![profile],
        rules: set,
        classes: vec![class],
    };
    let metric = choose_metric(&loaded.profiles[0], path, plan.load.metric.as_deref())?;
    let source = if plan.load.metric.is_some() {
        "--metric"
    } else {
        "default"
    };
    // the rows need the owner totals and warnings only: no frame lists, no thread split, no
    // `--user` hint (a finding, not a warning)
    let detail = Detail {
        top: 0,
        threads: false,
        user_hint: false,
        ..Detail::default()
    };
    let input = aggregate_input(&loaded, &plan.load, 0, metric, source, detail);
    let shown = path.display().to_string();
    let labels = plan.labels.values(&shown, pprof_values);
    let report = build_report(&loaded, vec![input], plan.shape.clone());
    let mut rows = InputRows::of_report(&report, &plan.shape.views, vec![labels]);
    Ok(rows.remove(0))
}

/// The inputs `--each` names: a folder's files (recursively, sorted, hidden ones left out), a
/// glob's matches, an `@LIST` file's lines (`@-`: standard input). `output` (`-o`) is never an
/// input, even when it lies in the folder.
pub fn find_inputs(specs: &[String], output: Option<&Path>) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for spec in specs {
        let before = found.len();
        if let Some(list) = spec.strip_prefix('@') {
            read_list(list, &mut found)?;
        } else if Path::new(spec).is_dir() {
            walk(Path::new(spec), &mut found)?;
        } else if spec.contains(['*', '?', '[']) {
            let matches = glob::glob(spec)
                .map_err(|e| Error::Usage(format!("--each {spec}: not a glob: {e}")))?;
            for entry in matches {
                let path = entry.map_err(|e| {
                    let at = e.path().to_path_buf();
                    Error::io(at, e.into())
                })?;
                if path.is_file() || dangling(&path) {
                    found.push(path);
                }
            }
        } else if Path::new(spec).is_file() {
            found.push(PathBuf::from(spec));
        } else {
            return Err(Error::Usage(format!(
                "--each {spec}: no such folder or file, and no glob (`*`, `?`, `[`)"
            )));
        }
        if found.len() == before {
            return Err(Error::Usage(format!("--each {spec}: no input found there")));
        }
    }
    if let Some(output) = output {
        found.retain(|p| p != output);
    }
    let mut seen = std::collections::HashSet::new();
    found.retain(|p| seen.insert(p.clone()));
    Ok(found)
}

fn read_list(list: &str, found: &mut Vec<PathBuf>) -> Result<()> {
    let text = if list == "-" {
        std::io::read_to_string(std::io::stdin()).map_err(|e| Error::io("<stdin>", e))?
    } else {
        std::fs::read_to_string(list).map_err(|e| Error::io(list, e))?
    };
    found.extend(
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(PathBuf::from),
    );
    Ok(())
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .map(|e| e.map(|e| e.path()).map_err(|e| Error::io(dir, e)))
        .collect::<Result<_>>()?;
    entries.sort();
    for path in entries {
        let hidden = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if hidden {
            continue;
        }
        if path.is_dir() {
            walk(&path, found)?;
        } else if path.is_file() || dangling(&path) {
            found.push(path);
        }
    }
    Ok(())
}

/// A symbolic link whose target is missing (or cannot be reached): an input that the folder
/// names but that cannot be read, so it is kept, to become an error row rather than be left
/// out with no word (issue 23).
fn dangling(path: &Path) -> bool {
    path.symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
        && std::fs::metadata(path).is_err()
}

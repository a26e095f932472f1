//! `whose flame`: flame graphs coloured by owner, split per owner, owner-rooted or
//! differential. The shares in legends and in the split index come from the same aggregate
//! as `whose report`; the frames from [`crate::aggregate::flame_lines`]; the words around the
//! graph from [`crate::render::flame_labels`]; the drawing from inferno.

use super::{
    Detail, Loaded, Outcome, choose_metrics, input_reports, load, metric_mismatch, output,
    write_output,
};
use crate::aggregate::flame_lines::{FlameLines, FlameOptions, flame_lines};
use crate::aggregate::report::InputReport;
use crate::classify::presets;
use crate::config::{FlameOutput, FlamePlan};
use crate::error::{Error, Position, Result};
use crate::model::OwnerId;
use crate::render::findings;
use crate::render::flame_labels::{self, Labels, present_owners};
use crate::render::flame_svg::{self as draw, INDEX_GENERATOR};
use std::path::{Path, PathBuf};

pub fn run(plan: FlamePlan) -> Result<Outcome> {
    refuse_terminal(&plan.output)?;
    let split = matches!(plan.output, FlameOutput::Split { .. });
    let (mut loaded, metrics, mut reports) = read(&plan, split)?;
    let base = BaseInput::take(&mut loaded, &mut reports, &metrics, plan.profiles.len());
    // the page is made while the profiles are here; it is written with the SVGs
    let page = if split {
        Some(split_page(&loaded, &plan, &reports, &metrics)?)
    } else {
        None
    };
    let drawn_report = drawn_report(reports, base.as_ref().map(|b| &b.report))?;
    check_drawable(&drawn_report, Path::new(&drawn_report.path))?;
    if let (Some(base), FlameOutput::Diff { base: path, .. }) = (&base, &plan.output) {
        check_drawable(&base.report, path)?;
    }
    // what `report` would warn of, on stderr as well as in the graph (issue 28)
    for report in std::iter::once(&drawn_report).chain(base.as_ref().map(|b| &b.report)) {
        for finding in report.aggregate.findings() {
            output::say(&format!("{}: {}", report.path, findings::line(&finding)));
        }
    }
    let options = FlameOptions {
        metric: metrics[0],
        types_as_frames: plan.load.types_as_frames,
        annotate: Some(plan.color_by),
        owner_root: plan.owner_root,
    };
    let lines = drawn_lines(&loaded, &metrics, &options);
    let base = base.map(|b| b.into_lines(&loaded, &options));
    // the lines hold all the graph needs: the profiles go before the drawing starts, so the
    // two never take memory at once (issue 23: 5 M distinct stacks under 2 GB)
    loaded.profiles = Vec::new();
    loaded.classes = Vec::new();
    let profile_name = flame_labels::profiles_name(&plan.profiles);
    let graph = Graph {
        loaded: &loaded,
        labels: Labels {
            owners: loaded.rules.owners(),
            report: &drawn_report,
            profile_name: &profile_name,
            color_by: plan.color_by,
            look: &plan.look,
        },
        lines,
    };
    match &plan.output {
        FlameOutput::Split { dir } => graph.split(dir, page.as_deref().unwrap_or_default())?,
        FlameOutput::Diff {
            base: path,
            normalize,
            output,
        } => {
            let base = (base.as_ref())
                .ok_or_else(|| Error::Usage(format!("--diff {}: not read", path.display())))?;
            graph.diff(
                &base.report,
                &base.lines,
                path,
                *normalize,
                output.as_deref(),
            )?
        }
        FlameOutput::Single { output } => {
            super::timed("drawing", || graph.single(output.as_deref()))?
        }
    }
    Ok(Outcome::Success)
}

/// An SVG is not for a terminal: refused before anything is read.
fn refuse_terminal(output: &FlameOutput) -> Result<()> {
    if let FlameOutput::Single { output } | FlameOutput::Diff { output, .. } = output {
        output::refuse_terminal(
            output.as_deref(),
            "an SVG",
            "write it to a file with `-o FILE.svg` or pipe it (`| tee FILE.svg`, `> FILE.svg`)",
        )?;
    }
    Ok(())
}

/// Reads the drawn profiles and, last, the `--diff` base in one go, so that one rule set
/// (its presets detected over all of them) names the frames of both sides, and aggregates
/// each in its metric. Only the split folder's page shows time and intervals.
fn read(plan: &FlamePlan, split: bool) -> Result<(Loaded, Vec<usize>, Vec<InputReport>)> {
    let mut paths = plan.profiles.clone();
    if let FlameOutput::Diff { base, .. } = &plan.output {
        paths.push(base.clone());
    }
    let mut load_config = plan.load.clone();
    // the split folder's page shows time where the input has it
    load_config.read.timeline = split;
    let loaded = load(&paths, &load_config)?;
    let metrics = choose_metrics(&loaded, &plan.load)?;
    let reports = super::timed("aggregating", || {
        // a graph shows shares without intervals; the split folder's page shows them
        let detail = Detail {
            intervals: split,
            ..Detail::default()
        };
        input_reports(&loaded, &plan.load, &metrics, detail)
    });
    Ok((loaded, metrics, reports))
}

/// The `--diff` base, read with the drawn profiles ([`read`]) and then taken out of the
/// vectors it shared with them, so that from here on it is a value of its own and every
/// vector left holds the drawn profiles alone.
struct BaseInput {
    profile: crate::model::Profile,
    classes: crate::classify::Classification,
    metric: usize,
    report: InputReport,
}

impl BaseInput {
    /// The base, which stands after the `drawn` profiles; `None` without `--diff`.
    fn take(
        loaded: &mut Loaded,
        reports: &mut Vec<InputReport>,
        metrics: &[usize],
        drawn: usize,
    ) -> Option<BaseInput> {
        let report = reports.split_off(drawn).pop()?;
        loaded.paths.truncate(drawn);
        Some(BaseInput {
            profile: loaded.profiles.split_off(drawn).pop()?,
            classes: loaded.classes.split_off(drawn).pop()?,
            metric: *metrics.get(drawn)?,
            report,
        })
    }

    /// The base's lines, in its own metric with the drawn profiles' options; its profile is
    /// dropped here, before the drawing starts.
    fn into_lines(self, loaded: &Loaded, options: &FlameOptions) -> Base {
        let options = FlameOptions {
            metric: self.metric,
            ..options.clone()
        };
        let lines = flame_lines(&self.profile, &loaded.rules, &self.classes, &options);
        Base {
            report: self.report,
            lines,
        }
    }
}

/// What the differential graph takes of the base: its report and its lines.
struct Base {
    report: InputReport,
    lines: FlameLines,
}

/// The drawn profiles as one report, in the one metric a graph has: several are drawn as
/// their sum (repeats of one run, or parts of one), and a `--diff` base is compared with that
/// sum. Both metric checks are made here, once, before any line is made.
fn drawn_report(mut reports: Vec<InputReport>, base: Option<&InputReport>) -> Result<InputReport> {
    let drawn = if reports.len() > 1 {
        if let Some(mismatch) = metric_mismatch(&reports) {
            return Err(Error::Usage(format!(
                "flame draws several profiles as their sum, which needs one metric: {mismatch}"
            )));
        }
        crate::aggregate::report::Report::merge_inputs(reports)?
    } else {
        reports.remove(0)
    };
    if let Some(base) = base
        && drawn.metric != base.metric
    {
        return Err(Error::Usage(format!(
            "--diff needs one metric: {} has {} ({}) but {} has {} ({})",
            drawn.path,
            drawn.metric.name,
            drawn.metric.unit,
            base.path,
            base.metric.name,
            base.metric.unit
        )));
    }
    Ok(drawn)
}

/// The drawn profiles' lines, one after the other, each in its own metric.
fn drawn_lines(loaded: &Loaded, metrics: &[usize], options: &FlameOptions) -> FlameLines {
    let mut lines = FlameLines::default();
    for ((profile, classes), &metric) in loaded.profiles.iter().zip(&loaded.classes).zip(metrics) {
        let options = FlameOptions {
            metric,
            ..options.clone()
        };
        lines.append(super::timed("flame lines", || {
            flame_lines(profile, &loaded.rules, classes, &options)
        }));
    }
    lines
}

/// An empty profile or one nobody could name draws nothing worth looking at: say why.
fn check_drawable(report: &InputReport, path: &Path) -> Result<()> {
    let all = &report.aggregate.all;
    if all.total == 0 {
        return Err(Error::input(
            path,
            Position::Whole,
            format!(
                "no samples with weight in metric `{}`: nothing to draw",
                report.metric.name
            ),
        ));
    }
    if u64::try_from(all.total).is_err() {
        return Err(Error::Unsupported(format!(
            "{}: total weight {} exceeds 2^64, which flame graph tools cannot count",
            path.display(),
            all.total
        )));
    }
    if all.owners[OwnerId::UNSYMBOLIZED.0 as usize].owner == all.total {
        return Err(Error::input(
            path,
            Position::Whole,
            "every sample is unsymbolized (no frame has a name): the graph would be a tower of \
             `[unknown]`; give whose the symbols (--binary-path, --symfs, --kallsyms, \
             --jit-map-dir) or a symbolized profile",
        ));
    }
    Ok(())
}

/// The drawn profile: its folded lines and the labels around them.
struct Graph<'a> {
    loaded: &'a Loaded,
    labels: Labels<'a>,
    lines: FlameLines,
}

impl Graph<'_> {
    fn single(&self, output: Option<&Path>) -> Result<()> {
        let colors = self.labels.colors();
        let style = self.labels.style(None);
        let legend = self.labels.legend(&colors, &self.lines.color_owners(None));
        write_output(output, |out, _| {
            draw::write_svg(&self.lines, None, &colors, &style, &legend, out)
        })
    }

    /// The differential graph of `base` (aggregated as `base_report`, read from `base_path`)
    /// against the drawn profile.
    fn diff(
        &self,
        base_report: &InputReport,
        base: &FlameLines,
        base_path: &Path,
        normalize: bool,
        output: Option<&Path>,
    ) -> Result<()> {
        let folded = |lines: &FlameLines| -> Result<Vec<u8>> {
            let mut v = Vec::new();
            lines
                .write_folded(None, &mut v)
                .map_err(|e| Error::io("<memory>", e))?;
            Ok(v)
        };
        let (old, new) = (folded(base)?, folded(&self.lines)?);
        let style = (self.labels).diff_style(&flame_labels::file_name(base_path), normalize);
        let legend = self.labels.diff_legend(base_report);
        write_output(output, |out, _| {
            draw::write_diff_svg(&old, &new, normalize, &style, &legend, out)
        })
    }

    /// `--split DIR`: every file is written into a fresh folder beside DIR, which then
    /// replaces DIR in one rename; on any failure the fresh folder is removed, so no partial
    /// output is left behind.
    fn split(&self, dir: &Path, page: &[u8]) -> Result<()> {
        let report = self.labels.report;
        let owners: Vec<OwnerId> = present_owners(report)
            .into_iter()
            .filter(|id| report.aggregate.all.owners[id.0 as usize].owner > 0)
            .collect();
        let staging = Staging::new(dir)?;
        let result = self
            .write_split_files(&owners, staging.path())
            .and_then(|()| write_file(&staging.path().join(PAGE), |out| out.write_all(page)));
        match result {
            Ok(()) => staging.commit(),
            Err(e) => {
                staging.abandon();
                Err(e)
            }
        }
    }

    fn write_split_files(&self, owners: &[OwnerId], into: &Path) -> Result<()> {
        let colors = self.labels.colors();
        let legend = self.labels.legend(&colors, &self.lines.color_owners(None));
        let mut index = Vec::new();
        for (rank, &id) in owners.iter().enumerate() {
            let owner = self.loaded.rules.owner(id);
            let file = format!("{:02}-{}.svg", rank + 1, file_safe(&owner.name));
            let style = self.labels.split_style(id);
            let legend = self
                .labels
                .split_legend(&legend, &self.lines.color_owners(Some(id)));
            write_file(&into.join(&file), |out| {
                draw::write_svg(&self.lines, Some(id), &colors, &style, &legend, out)
            })?;
            index.push(self.labels.index_entry(id, colors[id.0 as usize], file));
        }
        let (title, notes) = self
            .labels
            .index_text(&presets::display_list(&self.loaded.rules.presets));
        write_file(&into.join("index.html"), |out| {
            draw::write_index(&title, &notes, &index, Some(PAGE), out)
        })
    }
}

/// The HTML page (`report --format html`) of the split folder, beside its index.
const PAGE: &str = "report.html";

/// The page of the drawn inputs (each on its own, as `report --format html` shows them).
fn split_page(
    loaded: &Loaded,
    plan: &FlamePlan,
    reports: &[InputReport],
    metrics: &[usize],
) -> Result<Vec<u8>> {
    let mut inputs = reports.to_vec();
    super::report::add_timelines(loaded, &plan.load, Default::default(), &mut inputs, metrics)?;
    let shape = crate::config::ReportShape {
        by: crate::aggregate::report::GroupBy::Owner,
        views: crate::aggregate::report::View::ALL.to_vec(),
        combine: Default::default(),
        per: None,
        ci: false,
    };
    let report = super::build_report(loaded, inputs, shape);
    let pages = super::report::page_inputs(loaded, &report, metrics, plan.load.types_as_frames);
    let mut page = Vec::new();
    crate::render::html::write(
        &report,
        &loaded.rules,
        &pages,
        crate::aggregate::page::DEFAULT_MIN_SHARE,
        &mut page,
    )
    .map_err(|e| Error::io(Path::new(PAGE), e))?;
    Ok(page)
}

/// An owner name as a file name: letters, digits, `-`, `_` and `.` kept, the rest `_`.
fn file_safe(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    s.trim_start_matches('.').to_string()
}

fn write_file(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<()> {
    use std::io::Write;
    let result = (|| {
        let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
        write(&mut file)?;
        file.flush()
    })();
    result.map_err(|e| Error::io(path, e))
}

/// A fresh folder beside the `--split` target, renamed into place when complete; removed
/// when abandoned, on error and on SIGINT (it is an [`output::Temporary`]).
struct Staging {
    target: PathBuf,
    folder: output::Temporary,
}

impl Staging {
    fn new(target: &Path) -> Result<Staging> {
        check_replaceable(target)?;
        if target.file_name().is_none() {
            return Err(Error::Usage(format!(
                "--split {}: not a folder name",
                target.display()
            )));
        }
        Ok(Staging {
            target: target.to_path_buf(),
            folder: output::Temporary::folder_beside(target)?,
        })
    }

    fn path(&self) -> &Path {
        self.folder.path()
    }

    fn abandon(self) {
        drop(self.folder);
    }

    /// Moves the complete folder into place; an earlier split output there is replaced.
    ///
    /// The swap runs under the cleanup lock ([`output::critical`]): a SIGINT waits for it and
    /// then finds the old output listed for removal, never a target half swapped (a SIGINT
    /// between the two renames removed the new output and left the old one hidden beside it).
    fn commit(self) -> Result<()> {
        let old = output::beside(&self.target, "whose-old")?;
        let had_old = self.target.exists();
        let staged = self.path().to_path_buf();
        output::critical(|listed| {
            if had_old {
                std::fs::rename(&self.target, &old).map_err(|e| Error::io(&self.target, e))?;
            }
            if let Err(e) = std::fs::rename(&staged, &self.target) {
                if had_old {
                    let _ = std::fs::rename(&old, &self.target);
                }
                return Err(Error::io(&self.target, e));
            }
            listed.retain(|p| *p != staged);
            if had_old {
                listed.push(old.clone());
            }
            Ok(())
        })?;
        self.folder.keep();
        if had_old {
            let _ = std::fs::remove_dir_all(&old);
            output::critical(|listed| listed.retain(|p| *p != old));
        }
        Ok(())
    }
}

/// `--split DIR` replaces DIR as a whole, so DIR must be absent, empty, or an earlier split
/// output (its index.html says so): whose never deletes a folder it did not write.
fn check_replaceable(dir: &Path) -> Result<()> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    if !meta.is_dir() {
        return Err(Error::Usage(format!(
            "--split {}: exists and is not a folder",
            dir.display()
        )));
    }
    let mut entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    if entries.next().is_none() {
        return Ok(());
    }
    let index = std::fs::read_to_string(dir.join("index.html")).unwrap_or_default();
    if index.contains(&format!("content=\"{INDEX_GENERATOR}\"")) {
        return Ok(());
    }
    Err(Error::Usage(format!(
        "--split {}: folder exists, is not empty and is not an earlier `whose flame --split` \
         output; it would be replaced as a whole, so choose another or remove it",
        dir.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn staging_leaves_nothing_when_abandoned_and_replaces_on_commit() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("split");
        let staging = Staging::new(&target).unwrap();
        std::fs::write(staging.path().join("01-a.svg"), "half").unwrap();
        staging.abandon();
        assert!(names(dir.path()).is_empty());

        let staging = Staging::new(&target).unwrap();
        let marker = format!("<meta name=\"generator\" content=\"{INDEX_GENERATOR}\">");
        std::fs::write(staging.path().join("index.html"), &marker).unwrap();
        std::fs::write(staging.path().join("01-a.svg"), "first").unwrap();
        staging.commit().unwrap();
        assert_eq!(names(dir.path()), ["split"]);
        assert_eq!(names(&target), ["01-a.svg", "index.html"]);

        let staging = Staging::new(&target).unwrap();
        std::fs::write(staging.path().join("index.html"), &marker).unwrap();
        std::fs::write(staging.path().join("01-b.svg"), "second").unwrap();
        staging.commit().unwrap();
        assert_eq!(names(dir.path()), ["split"]);
        assert_eq!(names(&target), ["01-b.svg", "index.html"]);
    }

    #[test]
    fn owner_names_become_safe_file_names() {
        assert_eq!(file_safe("glibc-malloc"), "glibc-malloc");
        assert_eq!(file_safe("../etc/x y"), "_etc_x_y");
        assert_eq!(file_safe("net/http"), "net_http");
    }
}

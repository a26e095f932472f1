//! `whose flame`: flame graphs coloured by owner, split per owner, owner-rooted or
//! differential. The shares in legends and in the split index come from the same aggregate
//! as `whose report`; the frames from [`crate::aggregate::flame`]; the drawing from inferno.

use super::{Loaded, Outcome, choose_metric, input_reports, load, write_output};
use crate::aggregate::flame::{ColorBy, FlameLines, FlameOptions, flame_lines};
use crate::aggregate::report::{InputReport, share};
use crate::cli::FlameArgs;
use crate::config::{self, LoadConfig};
use crate::error::{Error, Position, Result};
use crate::model::Unit;
use crate::model::{OwnerId, UNSYMBOLIZED};
use crate::render::flame::{
    self as draw, Color, INDEX_GENERATOR, IndexEntry, Legend, LegendEntry, Style,
};
use crate::render::pct;
use std::path::{Path, PathBuf};

pub fn run(args: FlameArgs) -> Result<Outcome> {
    if !(args.min_width >= 0.0 && args.min_width < 100.0) {
        return Err(Error::Usage(format!(
            "--min-width {}: expected a percentage in [0, 100)",
            args.min_width
        )));
    }
    let config = LoadConfig::new(&args.input, &args.rules);
    let mut paths = vec![args.profile.clone()];
    paths.extend(args.diff.clone());
    let loaded = load(&paths, &config)?;
    let reports = input_reports(&loaded, &config, 0, false)?;
    for (report, path) in reports.iter().zip(&paths) {
        check_drawable(report, path, &loaded)?;
    }
    let color_by = config::color_by(args.color_by);
    let options = FlameOptions {
        metric: choose_metric(&loaded.profiles[0], &paths[0], config.metric.as_deref())?.0,
        types_as_frames: config.types_as_frames,
        annotate: Some(color_by),
        owner_root: args.owner_root,
    };
    let lines = flame_lines(
        &loaded.profiles[0],
        &loaded.rules,
        &loaded.classes[0],
        &options,
    );
    let graph = Graph {
        args: &args,
        loaded: &loaded,
        report: &reports[0],
        lines,
        color_by,
        metric_arg: config.metric.as_deref(),
    };
    match (&args.split, &args.diff) {
        (Some(dir), _) => graph.split(dir)?,
        (None, Some(base)) => graph.diff(&reports[1], base, &options)?,
        (None, None) => graph.single()?,
    }
    Ok(Outcome::Success)
}

/// An empty profile or one nobody could name draws nothing worth looking at: say why.
fn check_drawable(report: &InputReport, path: &Path, loaded: &Loaded) -> Result<()> {
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
    let unsymbolized = loaded.rules.owner_id(UNSYMBOLIZED);
    if let Some(u) = unsymbolized
        && all.owners[u.0 as usize].owner == all.total
    {
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

struct Graph<'a> {
    args: &'a FlameArgs,
    loaded: &'a Loaded,
    report: &'a InputReport,
    lines: FlameLines,
    color_by: ColorBy,
    metric_arg: Option<&'a str>,
}

impl Graph<'_> {
    fn single(&self) -> Result<()> {
        let colors = self.colors();
        let mut palette = draw::palette(&self.lines.frame_owners, &colors);
        let style = self.style(None);
        let legend = self.legend(&colors);
        write_output(self.args.output.as_deref(), |out, _| {
            draw::write_svg(self.lines.lines(None), &mut palette, &style, &legend, out)
        })
    }

    fn diff(&self, base: &InputReport, base_path: &Path, options: &FlameOptions) -> Result<()> {
        if base.metric != self.report.metric {
            return Err(Error::Usage(format!(
                "--diff needs one metric: {} has {} ({}) but {} has {} ({})",
                self.report.path,
                self.report.metric.name,
                self.report.metric.unit,
                base.path,
                base.metric.name,
                base.metric.unit
            )));
        }
        let base_options = FlameOptions {
            metric: choose_metric(&self.loaded.profiles[1], base_path, self.metric_arg)?.0,
            ..options.clone()
        };
        let base_lines = flame_lines(
            &self.loaded.profiles[1],
            &self.loaded.rules,
            &self.loaded.classes[1],
            &base_options,
        );
        let folded = |lines: &FlameLines| -> Result<Vec<u8>> {
            let mut v = Vec::new();
            lines
                .write_folded(None, &mut v)
                .map_err(|e| Error::io("<memory>", e))?;
            Ok(v)
        };
        let (old, new) = (folded(&base_lines)?, folded(&self.lines)?);
        let mut style = self.style(None);
        style.subtitle = Some(format!(
            "differential: {} → {}; red grew, blue shrank{}; owner in each frame's tooltip",
            file_name(base_path),
            file_name(&self.args.profile),
            if self.args.normalize {
                " (base scaled to the same total)"
            } else {
                ""
            }
        ));
        let legend = self.diff_legend(base);
        write_output(self.args.output.as_deref(), |out, _| {
            draw::write_diff_svg(&old, &new, self.args.normalize, &style, &legend, out)
        })
    }

    /// Owner colours: category hue, tinted by rank (owner view, then anywhere) in the category.
    fn colors(&self) -> Vec<Color> {
        let rank: Vec<(u128, u128)> = self
            .report
            .aggregate
            .all
            .owners
            .iter()
            .map(|w| (w.owner, w.anywhere))
            .collect();
        draw::owner_colors(self.loaded.rules.owners(), &rank)
    }

    /// Owners that appear in the profile, heaviest in the owner view first.
    fn present_owners(&self, report: &InputReport) -> Vec<OwnerId> {
        let all = &report.aggregate.all;
        let mut ids: Vec<OwnerId> = (0..all.owners.len())
            .filter(|&i| all.owners[i].anywhere > 0 || all.owners[i].owner > 0)
            .map(|i| OwnerId(i as u32))
            .collect();
        ids.sort_by(|a, b| {
            let (wa, wb) = (&all.owners[a.0 as usize], &all.owners[b.0 as usize]);
            (wb.owner, wb.anywhere)
                .cmp(&(wa.owner, wa.anywhere))
                .then_with(|| a.cmp(b))
        });
        ids
    }

    fn legend(&self, colors: &[Color]) -> Legend {
        let all = &self.report.aggregate.all;
        let entries = self
            .present_owners(self.report)
            .into_iter()
            .map(|id| {
                let owner = self.loaded.rules.owner(id);
                let weight = all.owners[id.0 as usize].owner;
                let share = share(weight, all.total);
                LegendEntry {
                    owner: owner.name.clone(),
                    category: owner.category,
                    color: Some(colors[id.0 as usize]),
                    weight,
                    share,
                    label: format!("{} ({}) {}", owner.name, owner.category, pct(share)),
                    search: Some(owner_search(&owner.name)),
                }
            })
            .collect();
        Legend {
            heading: format!(
                "Owners, owner view (whose code asked for the work) of {}; colour: {}; \
                 click one to search its frames",
                amount(self.report, all.total),
                match self.color_by {
                    ColorBy::Frame => "each frame's own owner",
                    ColorBy::Sample => "the sample's owner",
                }
            ),
            entries,
        }
    }

    fn diff_legend(&self, base: &InputReport) -> Legend {
        let (new_all, old_all) = (&self.report.aggregate.all, &base.aggregate.all);
        let mut ids = self.present_owners(self.report);
        for id in self.present_owners(base) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        let entries = ids
            .into_iter()
            .map(|id| {
                let owner = self.loaded.rules.owner(id);
                let weight = new_all.owners[id.0 as usize].owner;
                let new = share(weight, new_all.total);
                let old = share(old_all.owners[id.0 as usize].owner, old_all.total);
                LegendEntry {
                    owner: owner.name.clone(),
                    category: owner.category,
                    color: None,
                    weight,
                    share: new,
                    label: format!(
                        "{} {} → {} ({:+.1})",
                        owner.name,
                        pct(old),
                        pct(new),
                        new - old
                    ),
                    search: Some(owner_search(&owner.name)),
                }
            })
            .collect();
        Legend {
            heading: "Owners, owner view: base → profile share (percentage points)".into(),
            entries,
        }
    }

    fn style(&self, subtitle: Option<String>) -> Style {
        let metric = &self.report.metric;
        let title = self.args.title.clone().unwrap_or_else(|| {
            format!(
                "{}: {} ({}), total {}",
                file_name(&self.args.profile),
                metric.name,
                metric.unit,
                metric.unit.format(self.report.aggregate.all.total)
            )
        });
        let count_name = self
            .args
            .countname
            .clone()
            .unwrap_or_else(|| match &metric.unit {
                Unit::Count => metric.name.clone(),
                Unit::Nanoseconds => "ns".into(),
                Unit::Bytes => "bytes".into(),
                Unit::Other(u) => u.clone(),
            });
        Style {
            title,
            subtitle: subtitle.or_else(|| {
                Some(
                    match self.color_by {
                        ColorBy::Frame => "colour: each frame's own owner (hue = category)",
                        ColorBy::Sample => "colour: the owner of the sample (owner view)",
                    }
                    .to_string(),
                )
            }),
            count_name,
            width: self.args.width.map(|w| w as usize),
            min_width: self.args.min_width,
            inverted: self.args.inverted,
            reverse: self.args.reverse,
        }
    }

    /// The subtitle of one owner's graph in a split.
    fn split_style(&self, id: OwnerId) -> Style {
        let owner = self.loaded.rules.owner(id);
        let all = &self.report.aggregate.all;
        let weight = all.owners[id.0 as usize].owner;
        let mut style = self.style(Some(format!(
            "only the samples {} ({}) owns: {} of the total, owner view ({}); {}",
            owner.name,
            owner.category,
            pct(share(weight, all.total)),
            amount(self.report, weight),
            match self.color_by {
                ColorBy::Frame => "colour: each frame's own owner",
                ColorBy::Sample => "colour: the sample's owner",
            }
        )));
        if self.args.title.is_none() {
            style.title = format!(
                "{}: what {} owns, {} of {}",
                file_name(&self.args.profile),
                owner.name,
                amount(self.report, weight),
                amount(self.report, all.total)
            );
        }
        style
    }

    /// The legend of one owner's graph: the owners whose colours it shows, with their shares
    /// of the whole profile.
    fn split_legend(&self, legend: &Legend, id: OwnerId) -> Legend {
        let shown: Vec<&str> = self
            .lines
            .color_owners(Some(id))
            .into_iter()
            .map(|o| self.loaded.rules.owner(o).name.as_str())
            .collect();
        Legend {
            heading: legend.heading.clone(),
            entries: legend
                .entries
                .iter()
                .filter(|e| shown.contains(&e.owner.as_str()))
                .cloned()
                .collect(),
        }
    }

    /// `--split DIR`: every file is written into a fresh folder beside DIR, which then
    /// replaces DIR in one rename; on any failure the fresh folder is removed, so no partial
    /// output is left behind.
    fn split(&self, dir: &Path) -> Result<()> {
        let owners: Vec<OwnerId> = self
            .present_owners(self.report)
            .into_iter()
            .filter(|id| self.report.aggregate.all.owners[id.0 as usize].owner > 0)
            .collect();
        let staging = Staging::new(dir)?;
        let result = self.write_split_files(&owners, &staging.path);
        match result {
            Ok(()) => staging.commit(),
            Err(e) => {
                staging.abandon();
                Err(e)
            }
        }
    }

    fn write_split_files(&self, owners: &[OwnerId], into: &Path) -> Result<()> {
        let colors = self.colors();
        let mut palette = draw::palette(&self.lines.frame_owners, &colors);
        let legend = self.legend(&colors);
        let all = &self.report.aggregate.all;
        let mut index = Vec::new();
        for (rank, &id) in owners.iter().enumerate() {
            let owner = self.loaded.rules.owner(id);
            let weight = all.owners[id.0 as usize].owner;
            let file = format!("{:02}-{}.svg", rank + 1, file_safe(&owner.name));
            let style = self.split_style(id);
            let legend = self.split_legend(&legend, id);
            let lines = self.lines.lines(Some(id));
            write_file(&into.join(&file), |out| {
                draw::write_svg(lines, &mut palette, &style, &legend, out)
            })?;
            index.push(IndexEntry {
                file,
                owner: owner.name.clone(),
                category: owner.category,
                color: colors[id.0 as usize],
                weight: amount(self.report, weight),
                share: share(weight, all.total),
            });
        }
        let title = format!("{}: flame graphs per owner", file_name(&self.args.profile));
        let notes = vec![
            format!(
                "metric {} ({}), total {}; each graph holds only the samples its owner owns \
                 (owner view: the first frame from the leaf whose owner is not transparent).",
                self.report.metric.name,
                self.report.metric.unit,
                self.report.metric.unit.format(all.total)
            ),
            format!("presets: {}", preset_list(self.loaded)),
        ];
        write_file(&into.join("index.html"), |out| {
            draw::write_index(&title, &notes, &index, out)
        })
    }
}

/// `1999 samples`, `2.29 GiB`: a weight with what it counts.
fn amount(report: &InputReport, weight: u128) -> String {
    match report.metric.unit {
        Unit::Count => format!("{weight} {}", report.metric.name),
        ref unit => unit.format(weight),
    }
}

fn preset_list(loaded: &Loaded) -> String {
    if loaded.rules.presets.is_empty() {
        "none".into()
    } else {
        loaded.rules.presets.join(", ")
    }
}

/// inferno search regex for the frames of `owner`: `name [owner] (`, `name [x → owner] (`
/// (colour by sample owner) and the `[owner: owner]` root.
fn owner_search(owner: &str) -> String {
    let name = draw::regex_literal(&crate::aggregate::flame::folded_name(owner));
    format!(r"(\[|\[owner: | → ){name}\] \(")
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
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

/// A fresh folder beside the `--split` target, renamed into place when complete.
struct Staging {
    target: PathBuf,
    path: PathBuf,
}

impl Staging {
    fn new(target: &Path) -> Result<Staging> {
        check_replaceable(target)?;
        let name = target
            .file_name()
            .ok_or_else(|| {
                Error::Usage(format!("--split {}: not a folder name", target.display()))
            })?
            .to_string_lossy();
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let path = parent.join(format!(".{name}.whose-tmp-{}", std::process::id()));
        std::fs::create_dir(&path).map_err(|e| Error::io(&path, e))?;
        Ok(Staging {
            target: target.to_path_buf(),
            path,
        })
    }

    fn abandon(self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }

    /// Moves the complete folder into place; an earlier split output there is replaced.
    fn commit(self) -> Result<()> {
        let old = self
            .path
            .with_file_name(self.path.file_name().map_or_else(String::new, |n| {
                n.to_string_lossy().replace(".whose-tmp-", ".whose-old-")
            }));
        let had_old = self.target.exists();
        if had_old && let Err(e) = std::fs::rename(&self.target, &old) {
            let _ = std::fs::remove_dir_all(&self.path);
            return Err(Error::io(&self.target, e));
        }
        if let Err(e) = std::fs::rename(&self.path, &self.target) {
            if had_old {
                let _ = std::fs::rename(&old, &self.target);
            }
            let _ = std::fs::remove_dir_all(&self.path);
            return Err(Error::io(&self.target, e));
        }
        if had_old {
            let _ = std::fs::remove_dir_all(&old);
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
        std::fs::write(staging.path.join("01-a.svg"), "half").unwrap();
        staging.abandon();
        assert!(names(dir.path()).is_empty());

        let staging = Staging::new(&target).unwrap();
        let marker = format!("<meta name=\"generator\" content=\"{INDEX_GENERATOR}\">");
        std::fs::write(staging.path.join("index.html"), &marker).unwrap();
        std::fs::write(staging.path.join("01-a.svg"), "first").unwrap();
        staging.commit().unwrap();
        assert_eq!(names(dir.path()), ["split"]);
        assert_eq!(names(&target), ["01-a.svg", "index.html"]);

        let staging = Staging::new(&target).unwrap();
        std::fs::write(staging.path.join("index.html"), &marker).unwrap();
        std::fs::write(staging.path.join("01-b.svg"), "second").unwrap();
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

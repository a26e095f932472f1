//! The words around a flame graph: its title and subtitle, the owner legend, and the notes
//! of the `--split` index. They are composed from the same aggregate as `whose report`, so
//! a share in a legend is the share the table shows; [`super::svg`] draws them.

use super::findings;
use super::palette::attribution_colors;
use super::pct;
use super::svg::{Color, IndexEntry, Legend, LegendEntry, Style, regex_literal};
use crate::aggregate::flame_lines::{ColorBy, folded_name};
use crate::aggregate::report::{InputReport, share};
use crate::model::{Owner, OwnerId, Unit};
use std::path::{Path, PathBuf};

/// The reader's choices about the drawing, from the command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Look {
    /// `--title`, replacing the composed title.
    pub title: Option<String>,
    /// `--countname`, replacing the name the metric's unit gives the counts.
    pub count_name: Option<String>,
    /// Image width in pixels; `None` is fluid.
    pub width: Option<usize>,
    /// Frames narrower than this percentage of the total are omitted.
    pub min_width: f64,
    /// Icicle graph: roots at the top.
    pub inverted: bool,
    /// Leaves at the root.
    pub reverse: bool,
}

/// What a graph's titles call the drawn profiles: the file's name, or for several summed,
/// how many and their names.
pub fn profiles_name(paths: &[PathBuf]) -> String {
    match paths {
        [one] => file_name(one),
        many => format!(
            "{} profiles summed ({})",
            many.len(),
            many.iter()
                .map(|p| file_name(p))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A profile's file name for titles (its whole path when it has none).
pub fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// One drawn profile and what its labels are made of.
pub struct Labels<'a> {
    /// Every owner of the rule set, indexed by [`OwnerId`].
    pub owners: &'a [Owner],
    /// The drawn profile's aggregate (owner view weights per owner).
    pub report: &'a InputReport,
    /// The drawn profile's file name, for titles.
    pub profile_name: &'a str,
    pub color_by: ColorBy,
    pub look: &'a Look,
}

impl Labels<'_> {
    fn owner(&self, id: OwnerId) -> &Owner {
        &self.owners[id.0 as usize]
    }

    /// Owner colours: category hue, tinted by rank (owner view, then anywhere) in the
    /// category.
    pub fn colors(&self) -> Vec<Color> {
        attribution_colors(self.owners, &self.report.aggregate.all)
    }

    /// The legend of a graph coloured with `colors`: every owner whose colour it shows
    /// (`shown`), with the share that inferno's search for that owner reports as "Matched",
    /// so the legend and the graph agree:
    /// - coloured by owner (the default), the owner-view share: the samples the owner owns,
    ///   each drawn whole in its colour;
    /// - coloured by each frame's own owner, the share of samples with one of its frames on
    ///   the stack (the anywhere view), which is what its colour spans across the graph; the
    ///   self share (its colour on the graph's top edge) is in the label beside it.
    pub fn legend(&self, colors: &[Color], shown: &[OwnerId]) -> Legend {
        let all = &self.report.aggregate.all;
        let entries = present_owners(self.report)
            .into_iter()
            .filter(|id| shown.contains(id))
            .map(|id| {
                let owner = self.owner(id);
                let weights = &all.owners[id.0 as usize];
                let weight = match self.color_by {
                    ColorBy::Sample => weights.owner,
                    ColorBy::Frame => weights.anywhere,
                };
                let share = share(weight, all.total);
                let label = match self.color_by {
                    ColorBy::Sample => {
                        format!("{} ({}) {}", owner.name, owner.category, pct(share))
                    }
                    // the category is in the hue and the tooltip; two shares need the room
                    ColorBy::Frame => format!(
                        "{} {}, self {}",
                        owner.name,
                        pct(share),
                        pct(crate::aggregate::report::share(weights.self_, all.total))
                    ),
                };
                LegendEntry {
                    owner: owner.name.clone(),
                    category: owner.category,
                    color: Some(colors[id.0 as usize]),
                    weight,
                    share,
                    label,
                    search: Some(owner_search(&owner.name)),
                }
            })
            .collect();
        Legend {
            heading: match self.color_by {
                ColorBy::Sample => format!(
                    "Owners, owner view (whose code asked for the work) of {}; colour: the \
                     sample's owner; click one to search its samples",
                    amount(self.report, all.total),
                ),
                ColorBy::Frame => format!(
                    "Owners: share of samples with the owner's frames on the stack, and self \
                     (the leaf's owner), of {}; colour: each frame's own owner; click one to \
                     search its frames",
                    amount(self.report, all.total),
                ),
            },
            entries,
        }
    }

    /// The legend of a differential graph: each owner present on either side, with its share
    /// in `base` and in the drawn profile.
    pub fn diff_legend(&self, base: &InputReport) -> Legend {
        let (new_all, old_all) = (&self.report.aggregate.all, &base.aggregate.all);
        let mut ids = present_owners(self.report);
        for id in present_owners(base) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        let entries = ids
            .into_iter()
            .map(|id| {
                let owner = self.owner(id);
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

    /// Title, subtitle and geometry of a graph; `subtitle` replaces the one saying what the
    /// colours follow.
    pub fn style(&self, subtitle: Option<String>) -> Style {
        let metric = &self.report.metric;
        let title = self.look.title.clone().unwrap_or_else(|| {
            // a graph of some of the samples says so where it is read first
            let filtered = (self.report.notes.iter())
                .find(|n| n.is_filter())
                .map(|n| format!("; {}", super::notices::text(n)))
                .unwrap_or_default();
            format!(
                "{}: {} ({}), total {}{filtered}",
                self.profile_name,
                metric.name,
                metric.unit,
                metric.unit.format(self.report.aggregate.all.total)
            )
        });
        let count_name = self
            .look
            .count_name
            .clone()
            .unwrap_or_else(|| match &metric.unit {
                Unit::Count => metric.name.clone(),
                Unit::Nanoseconds => "ns".into(),
                Unit::Bytes => "bytes".into(),
                Unit::Other(u) => u.clone(),
            });
        let subtitle = subtitle.unwrap_or_else(|| {
            match self.color_by {
                ColorBy::Frame => "colour: each frame's own owner (hue = category)",
                ColorBy::Sample => "colour: the owner of the sample (owner view)",
            }
            .to_string()
        });
        Style {
            title,
            subtitle: Some(self.with_findings(subtitle)),
            count_name,
            width: self.look.width,
            min_width: self.look.min_width,
            inverted: self.look.inverted,
            reverse: self.look.reverse,
        }
    }

    /// `subtitle` followed by what the report warns of, in short (issue 28: a graph of an
    /// unfit recording says so where it is read first; the report and `flame`'s stderr say
    /// why and what to do).
    fn with_findings(&self, subtitle: String) -> String {
        let said: Vec<String> = (self.report.aggregate.findings().iter())
            .filter_map(findings::headline)
            .collect();
        if said.is_empty() {
            subtitle
        } else {
            format!(
                "{subtitle}; warning: {} (whose report says why and how to fix it)",
                said.join(", ")
            )
        }
    }

    /// The style of a differential graph of `base_name` against the drawn profile.
    pub fn diff_style(&self, base_name: &str, normalize: bool) -> Style {
        let mut style = self.style(None);
        style.subtitle = Some(self.with_findings(format!(
            "differential: {} → {}; red grew, blue shrank{}; owner in each frame's tooltip",
            base_name,
            self.profile_name,
            if normalize {
                " (base scaled to the same total)"
            } else {
                ""
            }
        )));
        style
    }

    /// The title and subtitle of one owner's graph in a split.
    pub fn split_style(&self, id: OwnerId) -> Style {
        let owner = self.owner(id);
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
        if self.look.title.is_none() {
            style.title = format!(
                "{}: what {} owns, {} of {}",
                self.profile_name,
                owner.name,
                amount(self.report, weight),
                amount(self.report, all.total)
            );
        }
        style
    }

    /// The legend of one owner's graph in a split: the entries of `legend` whose owners'
    /// colours it shows (`shown`), with their shares of the whole profile.
    pub fn split_legend(&self, legend: &Legend, shown: &[OwnerId]) -> Legend {
        let shown: Vec<&str> = shown.iter().map(|&o| self.owner(o).name.as_str()).collect();
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

    /// The split index's line for owner `id`, drawn in `color`, whose graph is `file`.
    pub fn index_entry(&self, id: OwnerId, color: Color, file: String) -> IndexEntry {
        let owner = self.owner(id);
        let all = &self.report.aggregate.all;
        let weight = all.owners[id.0 as usize].owner;
        IndexEntry {
            file,
            owner: owner.name.clone(),
            category: owner.category,
            color,
            weight: amount(self.report, weight),
            share: share(weight, all.total),
        }
    }

    /// The split index's title and notes; `presets` as [`crate::classify::presets::display_list`]
    /// writes them.
    pub fn index_text(&self, presets: &str) -> (String, Vec<String>) {
        let metric = &self.report.metric;
        let title = format!("{}: flame graphs per owner", self.profile_name);
        let mut notes = vec![
            format!(
                "metric {} ({}), total {}; each graph holds only the samples its owner owns \
                 (owner view: the first frame from the leaf whose owner is not transparent).",
                metric.name,
                metric.unit,
                metric.unit.format(self.report.aggregate.all.total)
            ),
            format!("presets: {presets}"),
        ];
        notes.extend(findings::lines(&self.report.aggregate.findings()));
        (title, notes)
    }
}

/// Owners that appear in the profile, heaviest in the owner view first.
pub fn present_owners(report: &InputReport) -> Vec<OwnerId> {
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

/// `1999 samples`, `2.29 GiB`: a weight with what it counts.
fn amount(report: &InputReport, weight: u128) -> String {
    match report.metric.unit {
        Unit::Count => format!("{weight} {}", report.metric.name),
        ref unit => unit.format(weight),
    }
}

/// inferno search regex for the frames of `owner`: `name [owner] (`, `name [x → owner] (`
/// (colour by sample owner) and the `[owner: owner]` root.
fn owner_search(owner: &str) -> String {
    let name = regex_literal(&folded_name(owner));
    format!(r"(\[|\[owner: | → ){name}\] \(")
}

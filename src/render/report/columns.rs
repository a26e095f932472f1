//! The titles and row names of the share tables the report's formats lay out: which columns,
//! named by view and input, and whether weights sit beside the shares.

use crate::aggregate::report::{Combine, GroupBy, Report};
use crate::render::fit;

/// The owner's name as the text table shows it: a guessed owner's marked `~` (the table's
/// legend says what it means).
pub fn owner_label(row: &crate::aggregate::report::ShareRow) -> String {
    if row.guessed {
        format!("{}~", row.name)
    } else {
        row.name.clone()
    }
}

/// Column titles for the share columns: one per (view, input), named by the input's file,
/// or per view with repeats.
pub fn share_titles(report: &Report) -> Vec<String> {
    let multi = report.inputs.len() > 1 && report.combine == Combine::Columns;
    let labels = input_labels(report, usize::MAX);
    let mut titles = Vec::new();
    for view in &report.views {
        if multi {
            for label in &labels {
                titles.push(format!("{} {label}", view.as_str()));
            }
        } else if report.combine == Combine::Repeats {
            titles.push(format!("{} median [min–max]", view.as_str()));
        } else {
            titles.push(view.as_str().to_string());
        }
    }
    titles
}

/// A short name per input for column titles: its file name (shortened in the middle to `max`
/// columns), or where two inputs share a file name, the end of its path (`…run2/p.folded`:
/// the folders that tell them apart are next to the name).
pub fn input_labels(report: &Report, max: usize) -> Vec<String> {
    let file_name = |path: &str| {
        std::path::Path::new(path)
            .file_name()
            .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned())
    };
    let names: Vec<String> = report.inputs.iter().map(|i| file_name(&i.path)).collect();
    report
        .inputs
        .iter()
        .zip(&names)
        .map(|(input, name)| {
            if names.iter().filter(|n| *n == name).count() == 1 {
                fit::shorten_middle(name, max)
            } else {
                fit::keep_end(&input.path, max)
            }
        })
        .collect()
}

/// The titles of a share table: the row name (owner or category), the category beside an
/// owner, then each share column followed by `weight_title` of it when weights are shown.
pub fn share_table_titles(report: &Report, weight_title: impl Fn(&str) -> String) -> Vec<String> {
    let by_category = report.by == GroupBy::Category;
    let mut titles = vec![if by_category { "category" } else { "owner" }.to_string()];
    if !by_category {
        titles.push("category".into());
    }
    let with_weights = show_weights(report);
    for t in share_titles(report) {
        let weight = with_weights.then(|| weight_title(&t));
        titles.push(t);
        titles.extend(weight);
    }
    titles
}

/// Whether absolute weights are shown beside shares (one input, or merged).
pub fn show_weights(report: &Report) -> bool {
    // with `--ci` the interval takes the weight's place, so that three views fit 80 columns
    report.inputs.len() == 1 && !report.ci
}

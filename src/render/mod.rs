//! Renderers: a [`Report`] as table, markdown, JSON or CSV; flame lines as SVG, with the
//! legend and title composed here (`flame_labels`); `explain`'s table; gate verdicts and diffs
//! as text. Owner colours, for the SVG and the terminal alike, come from `palette`. They
//! format, they never compute shares themselves. Writing a profile back out (pprof, folded) is
//! `export`'s.

pub mod comparison;
mod csv;
pub mod explain;
pub mod findings;
mod flame_elide;
pub mod flame_labels;
pub mod flame_svg;
pub mod guess;
pub mod html;
mod json;
mod markdown;
pub mod notices;
pub mod palette;
pub mod rows;
pub mod rules;
mod table;
pub mod timeline;
pub mod top;
pub mod verdict;

pub use table::wrap;

use crate::aggregate::report::{Combine, GroupBy, Report, ShareRow, Spread, View, share};
use crate::aggregate::rows::{InputLabels, InputRows};
use crate::model::Unit;
use std::io::Write;

/// Output formats of `report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
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

/// `--color`: when standard output gets colour (`auto`: on a terminal, by the environment's
/// `NO_COLOR`, `CLICOLOR` and `CLICOLOR_FORCE`, as cargo and ripgrep read them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// How text output is laid out: decided once by the caller for where it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Terminal {
    /// ANSI colours and bold.
    pub color: bool,
    /// Colours as 24-bit RGB rather than the nearest of 256.
    pub truecolor: bool,
    /// Columns to fit: tables shorten names and warnings wrap to this.
    pub width: usize,
}

impl OutputFormat {
    /// The row format, for the formats that write fleet rows rather than a report.
    pub fn row_format(self) -> Option<rows::RowFormat> {
        match self {
            OutputFormat::Ndjson => Some(rows::RowFormat::Ndjson),
            OutputFormat::Parquet => Some(rows::RowFormat::Parquet),
            _ => None,
        }
    }
}

/// Writes `report` in `format`, laid out for `term`; `labels` are the label columns of the
/// row formats and each input's values of them.
pub fn render(
    report: &Report,
    format: OutputFormat,
    term: Terminal,
    labels: &InputLabels,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    match format {
        OutputFormat::Table => table::write(report, term, out),
        OutputFormat::Markdown => markdown::write(report, out),
        OutputFormat::Json => json::write(report, out),
        OutputFormat::Csv => csv::write(report, out),
        OutputFormat::Ndjson => write_rows(report, rows::RowFormat::Ndjson, labels, out),
        OutputFormat::Parquet => write_rows(report, rows::RowFormat::Parquet, labels, out),
        // the page draws the profiles themselves, which a report does not hold
        OutputFormat::Html => Err(std::io::Error::other(
            "internal error: the HTML page is written by render::html::write, from the profiles",
        )),
    }
}

/// The report's inputs as fleet rows, one row per owner and view of `report.views`.
fn write_rows(
    report: &Report,
    format: rows::RowFormat,
    labels: &InputLabels,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let inputs = InputRows::of_report(report, &report.views, labels.values.clone());
    let mut writer = rows::RowWriter::new(format, labels.keys.clone(), out)?;
    for input in &inputs {
        writer.write(input)?;
    }
    writer.finish()
}

/// `12.3%` with one decimal, as the table shows shares.
pub fn pct(p: f64) -> String {
    format!("{p:.1}%")
}

/// A weight for people, divided by `--per` when given.
pub fn weight(w: u128, unit: &Unit, per: Option<u64>) -> String {
    match per {
        Some(n) if n > 0 => {
            let n = n as u128;
            unit.format((w + n / 2) / n)
        }
        _ => unit.format(w),
    }
}

/// One cell of a share column: a plain share, or `median [min–max]` over repeats.
pub fn share_cells(report: &Report, row: &ShareRow, view: View) -> Vec<String> {
    let shares: Vec<f64> = row
        .weights
        .iter()
        .zip(&report.inputs)
        .map(|(w, i)| share(view.of(w), i.aggregate.all.total))
        .collect();
    if report.ci {
        return interval_cells(report, row, view, &shares);
    }
    match report.combine {
        Combine::Repeats => {
            let s = Spread::of(&shares);
            vec![format!("{} [{:.1}–{:.1}]", pct(s.median), s.min, s.max)]
        }
        _ => shares.into_iter().map(pct).collect(),
    }
}

/// `--ci`: each input's share with its interval from its sample counts, or over repeats
/// their mean with the t interval (floored at the inputs' own sampling error, as the gate
/// decides); a row without an owner (samples without a stack) keeps its bare share.
fn interval_cells(report: &Report, row: &ShareRow, view: View, shares: &[f64]) -> Vec<String> {
    let confidence = crate::gate::DEFAULT_CONFIDENCE;
    let estimates: Option<Vec<_>> = (0..report.inputs.len())
        .map(|i| report.share_estimate(i, row, view))
        .collect();
    let Some(estimates) = estimates else {
        return shares.iter().map(|&s| pct(s)).collect();
    };
    // percent without the sign, which the note under the table gives: three views fit 80
    // columns
    let cell = |share: f64, i: crate::aggregate::interval::Interval| {
        format!("{share:.1} [{:.1}–{:.1}]", i.low, i.high)
    };
    match report.combine {
        Combine::Repeats => {
            let (mean, i) = crate::aggregate::interval::of_repeats(shares, &estimates, confidence);
            vec![cell(mean, i)]
        }
        _ => shares
            .iter()
            .zip(&estimates)
            .map(|(&s, e)| cell(s, e.interval(confidence)))
            .collect(),
    }
}

/// What `--ci` cells hold, for the note under the table; `None` without `--ci`.
pub fn interval_note(report: &Report) -> Option<String> {
    let level = crate::gate::DEFAULT_CONFIDENCE * 100.0;
    report.ci.then(|| match report.combine {
        Combine::Repeats => format!(
            "  (percent: mean [{level}% t interval] of the shares over {} repeats)",
            report.inputs.len()
        ),
        _ => format!(
            "  (percent: share [{level}% interval] from the sample counts; \
             `whose gate --help` says what it assumes)"
        ),
    })
}

/// The header's line for a guess of the program's own code: what was guessed, what it
/// claims, and how to override it (the report and `explain` say it alike).
pub fn own_code_line(code: &crate::classify::own_code::OwnCode) -> String {
    let claims: Vec<String> = code
        .prefixes
        .iter()
        .map(|p| format!("`{p}`"))
        .chain(code.files.iter().map(|f| format!("file `{f}`")))
        .chain(code.modules.iter().map(|m| format!("module `{m}`")))
        .chain(
            code.c_in_module
                .iter()
                .map(|m| format!("C functions of module `{m}`")),
        )
        .collect();
    format!(
        "user code guessed: {} {} ({}), detected from {} ({} evidence); --user PREFIX adds \
         more, a --rules file that claims them overrides",
        code.unit,
        guess::unit_name(code),
        claims.join(", "),
        guess::evidence(&code.evidence),
        code.evidence.strength().as_str()
    )
}

/// Header lines common to the table and markdown: input, metric, total, presets, specials.
pub fn header_lines(report: &Report) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, input) in report.inputs.iter().enumerate() {
        let total = input.aggregate.all.total;
        lines.push(format!(
            "{}: metric {} ({}, {}), total {}{}",
            input.path,
            input.metric.name,
            input.metric.unit,
            input.metric_source,
            input.metric.unit.format(total),
            match report.per {
                Some(n) => format!(", {} per 1/{n}", weight(total, &input.metric.unit, Some(n))),
                None => String::new(),
            }
        ));
        let (unclassified, unsymbolized) = report.special_shares(i);
        let mut notes = notices::texts(&input.notes);
        if let Some(line) = negative_line(report, i) {
            notes.push(line);
        }
        notes.push(format!(
            "{} distinct stacks; unclassified {} and unsymbolized {} of self",
            input.aggregate.distinct_stacks,
            pct(unclassified),
            pct(unsymbolized)
        ));
        let quality = &input.aggregate.quality;
        notes.push(findings::quality_line(quality, total));
        notes.extend(findings::lines(&input.aggregate.findings()));
        lines.extend(notes.into_iter().map(|n| format!("  {n}")));
    }
    lines.push(format!(
        "presets: {}{}",
        crate::classify::presets::display_list(&report.presets),
        if report.presets_detected {
            " (detected from the frames; --preset to choose)"
        } else {
            ""
        }
    ));
    lines.extend(report.own_code.iter().map(own_code_line));
    lines.extend(report.own_code_declined.iter().map(declined_line));
    // heaviest first in the owner view (summed over the inputs), so a long list names the
    // owners that matter
    let owner_weight = |name: &str| -> u128 {
        let Some(i) = report.owners.iter().position(|o| o.name == name) else {
            return 0;
        };
        report
            .inputs
            .iter()
            .map(|input| {
                input
                    .aggregate
                    .all
                    .owners
                    .get(i)
                    .map_or(0, |w| w.owner + w.self_)
            })
            .sum()
    };
    lines.extend(guess_line(
        &report.guessed,
        report.guesses_off,
        &owner_weight,
    ));
    lines
}

/// Guessed owners' names listed per kind of unit in the header at most; the table and JSON
/// have them all.
const GUESSED_LISTED: usize = 6;

/// The owner's name as the text table shows it: a guessed owner's marked `~` (the table's
/// legend says what it means).
pub fn owner_label(row: &crate::aggregate::report::ShareRow) -> String {
    if row.guessed {
        format!("{}~", row.name)
    } else {
        row.name.clone()
    }
}

/// The header's line on the owners guessed from their unit (issue 29), or that `--no-guess`
/// turned guesses off; nothing when there was nothing to guess. Each kind's names are listed
/// by `weight`, heaviest first, then by name.
pub fn guess_line(
    guessed: &[crate::classify::auto_owner::Unit],
    off: bool,
    weight: &dyn Fn(&str) -> u128,
) -> Option<String> {
    if off {
        return Some("guesses: off (--no-guess)".to_string());
    }
    if guessed.is_empty() {
        return None;
    }
    let mut kinds: Vec<_> = guessed.iter().map(|u| u.kind).collect();
    kinds.sort();
    kinds.dedup();
    let groups: Vec<String> = kinds
        .iter()
        .map(|&kind| {
            let mut names: Vec<&str> = guessed
                .iter()
                .filter(|u| u.kind == kind)
                .map(|u| u.name.as_str())
                .collect();
            names.sort_by(|a, b| weight(b).cmp(&weight(a)).then(a.cmp(b)));
            let count = names.len();
            let mut text = names[..count.min(GUESSED_LISTED)].join(", ");
            if count > GUESSED_LISTED {
                text.push_str(&format!(" and {} more", count - GUESSED_LISTED));
            }
            let what = if count == 1 {
                kind.as_str()
            } else {
                kind.plural()
            };
            format!("{text} ({what})")
        })
        .collect();
    Some(format!(
        "owners guessed from their unit: {}; --no-guess turns guesses off, a \
         --rules file that names them overrides",
        groups.join("; ")
    ))
}

/// The header's line for a guess of the program's own code that was not made (issue 29).
pub fn declined_line(declined: &crate::classify::own_code::Declined) -> String {
    use crate::classify::own_code::DeclineReason;
    match &declined.reason {
        DeclineReason::NoCallChains {
            heaviest,
            weight,
            total,
        } => format!(
            "user code not guessed: no {unit} from stacks without call chains, where the \
             outermost frame is only the sampled one (`{heaviest}::` would have been taken, \
             {share} of the weight, and it may well be a dependency); --user CRATE:: names \
             the program's own, or record with `perf record -g`",
            unit = declined.unit,
            share = pct(*weight as f64 * 100.0 / (*total).max(1) as f64),
        ),
        DeclineReason::WeakEvidence {
            heaviest,
            method,
            weight,
            total,
        } => format!(
            "user code not guessed: the outermost {unit} not of the JDK or a known vendor, \
             `{heaviest}` ({share} of the weight, `{method}`), is called by nothing known \
             (stacks cut short, or a framework the presets do not know): too weak a sign to \
             call it the program's, so its weight stays unclassified; --user {heaviest}. \
             claims it",
            unit = declined.unit,
            share = pct(*weight as f64 * 100.0 / (*total).max(1) as f64),
        ),
    }
}

/// A delta profile's negative weights, by owner in the self view: shown beside the shares,
/// which are of the positive part.
fn negative_line(report: &Report, input: usize) -> Option<String> {
    let input = &report.inputs[input];
    let negative = &input.aggregate.negative;
    if negative.total == 0 {
        return None;
    }
    let unit = &input.metric.unit;
    let mut owners: Vec<(&str, u128)> = (report.owners.iter().zip(&negative.owners))
        .filter(|(_, w)| w.self_ > 0)
        .map(|(o, w)| (o.name.as_str(), w.self_))
        .collect();
    owners.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    if negative.stackless > 0 {
        owners.push((crate::model::NO_STACK, negative.stackless));
    }
    let owners: Vec<String> = owners
        .iter()
        .map(|(name, w)| format!("{name} -{}", unit.format(*w)))
        .collect();
    Some(format!(
        "negative weights: -{} beside the total (shares are of the positive part); self by \
         owner: {}",
        unit.format(negative.total),
        owners.join(", ")
    ))
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
                table::shorten_middle(name, max)
            } else {
                table::keep_end(&input.path, max)
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

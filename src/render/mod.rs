//! Renderers, grouped by what they draw; they format, they never compute shares themselves:
//! - [`report`]: the report in its formats (table, markdown, JSON, CSV, fleet rows, the HTML
//!   page with its `html/` script), with the header and columns they share, and `top`'s table;
//! - [`flame`]: the flame graph's SVG, the frames it elides and the words around it (title,
//!   legend, the `--split` index);
//! - [`words`]: the one place sentences for the user are made from typed values: notices,
//!   findings, the guesses, `explain`, gate verdicts, diffs and `rules check/list`;
//! - [`palette`]: which colour an owner is, for the SVG, the page and the terminal alike;
//! - [`fit`]: text fitted to a terminal's width, for all three.
//!
//! Here: what the caller chooses (format, colour, the terminal's width) and the share cells
//! the formats have in common. Writing a profile back out (pprof, folded) is `export`'s.

pub mod fit;
pub mod flame;
pub mod palette;
pub mod report;
pub mod words;

// the paths callers outside render have always used
pub use fit::wrap;
pub use flame::{labels as flame_labels, svg as flame_svg};
pub use report::{html, render, rows, top};
pub use words::{comparison, explain, findings, notices, rule_listing, verdict};

use crate::aggregate::report::{Combine, Report, ShareRow, Spread, View, share};
use crate::model::Unit;

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
        .map(|i| row.estimate(i, view))
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

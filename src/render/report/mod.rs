//! The report in its formats: the terminal table, markdown, JSON, CSV, fleet rows (NDJSON,
//! Parquet) and the HTML page, with what they share (the header lines, the share columns'
//! titles, `report --by time`'s columns); `whose top`'s table, which lays out the same views.

pub mod by_time;
pub mod columns;
mod csv;
pub mod header;
pub mod html;
mod json;
mod markdown;
pub mod rows;
pub(super) mod table;
pub mod top;

// what the formats share, for them to `use super::` (the table, markdown and `top` lay out
// the same header and cells)
use super::words::{explain, findings, guess, notices};
use super::{OutputFormat, Terminal, interval_note, palette, pct, share_cells, weight};
use crate::aggregate::report::Report;
use crate::aggregate::rows::{InputLabels, InputRows};
use columns::{input_labels, owner_label, share_table_titles, show_weights};
use header::header_lines;
use std::io::Write;

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

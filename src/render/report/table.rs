//! The terminal table: aligned columns fitted to the terminal's width (80 when it is not a
//! terminal), bold titles and owner colours from [`super::palette`] when colour is on.
//!
//! Fitting: a view's share and weight sit under one compact label (`self`, `owner`,
//! `anywhere`); with repeats the label stays short and a note under the table says what the
//! cells hold; several inputs side by side are headed by their file names. When all views
//! together do not fit, even with names shortened, each view gets a table of its own. What still does not fit is the name column:
//! long owner, type and frame names are shortened in the middle with `…` (both ends of a
//! name tell most: its package and its function). Header lines and warnings are wrapped.

use super::palette::{ROOT_COLOR, attribution_colors, category_color, terminal_style};
use super::{Terminal, header_lines, input_labels, pct, share_cells, show_weights, weight};
use crate::aggregate::report::{Combine, GroupBy, Report, ShareRow, View, share};
use crate::render::fit::{shorten_middle, wrap};
use anstyle::Style;
use std::io::Write;
use unicode_width::UnicodeWidthStr;

/// Frame lists are cut to `--top` (in total) already; a large `--top` is still more than a
/// terminal shows usefully.
const MAX_LISTED: usize = 60;
/// A name column is never shortened below this: `jdk-htt…ver` still says which owner.
const MIN_NAME: usize = 10;
/// An input's file name as a column title is shortened to this.
const MAX_INPUT_LABEL: usize = 14;

pub fn write(report: &Report, term: Terminal, out: &mut dyn Write) -> std::io::Result<()> {
    let bold = if term.color {
        Style::new().bold()
    } else {
        Style::new()
    };
    for line in header_lines(report) {
        for part in wrap(&line, term.width) {
            writeln!(out, "{part}")?;
        }
    }
    writeln!(out)?;
    if report.by == GroupBy::Type {
        write_types(report, term, out)?;
    } else if report.by == GroupBy::Time {
        write_time(report, term, bold, out)?;
    } else {
        let rows = report.rows();
        write_rows(report, &rows, term, bold, out)?;
    }
    write_threads(report, term, bold, out)?;
    write_frames(report, term, bold, out)
}

/// The colour of each row's name: the owner's (or category's) colour in the flame graph.
fn row_styles(report: &Report, rows: &[ShareRow], term: Terminal) -> Vec<Style> {
    if !term.color {
        return vec![Style::new(); rows.len()];
    }
    let colors = attribution_colors(&report.owners, &report.inputs[0].aggregate.all);
    rows.iter()
        .map(|row| {
            let color = match report.by {
                GroupBy::Category => row.category.map_or(ROOT_COLOR, category_color),
                _ => report
                    .owners
                    .iter()
                    .position(|o| o.name == row.name)
                    .map_or(ROOT_COLOR, |i| colors[i]),
            };
            terminal_style(color, term.truecolor)
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Align {
    Left,
    Right,
}

/// A column: its alignment and the spaces before it.
#[derive(Debug, Clone, Copy)]
struct Column {
    align: Align,
    gap: usize,
}

/// A title over columns `first..=last`, aligned like the last of them, or with `rule`
/// centred in a line of `─` across them (a view over several inputs' columns).
struct Span {
    first: usize,
    last: usize,
    text: String,
    rule: bool,
}

/// A table to fit into a width: title lines of spans, then rows of cells.
struct Table {
    columns: Vec<Column>,
    titles: Vec<Vec<Span>>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with one title row: each column's alignment, gap before it and title.
    fn titled(columns: &[(Align, usize, &str)], rows: Vec<Vec<String>>) -> Table {
        Table {
            columns: columns
                .iter()
                .map(|&(align, gap, _)| Column { align, gap })
                .collect(),
            titles: vec![
                columns
                    .iter()
                    .enumerate()
                    .map(|(c, &(_, _, text))| Span {
                        first: c,
                        last: c,
                        text: text.into(),
                        rule: false,
                    })
                    .collect(),
            ],
            rows,
        }
    }

    /// Column widths: the widest cell, widened so each title fits over its span, then the
    /// first (name) column narrowed until the table fits `width` (never below
    /// [`MIN_NAME`] or its own title).
    fn widths(&self, width: usize) -> Vec<usize> {
        let mut widths: Vec<usize> = (0..self.columns.len())
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| r.get(c).map_or(0, |s| s.width()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for span in self.titles.iter().flatten() {
            let have: usize = (span.first..=span.last)
                .map(|c| {
                    widths[c]
                        + if c > span.first {
                            self.columns[c].gap
                        } else {
                            0
                        }
                })
                .sum();
            let want = span.text.width();
            if want > have {
                widths[span.last] += want - have;
            }
        }
        let total = 2 + widths
            .iter()
            .zip(&self.columns)
            .enumerate()
            .map(|(c, (w, col))| w + if c > 0 { col.gap } else { 0 })
            .sum::<usize>();
        if total > width && !widths.is_empty() {
            let floor = self
                .titles
                .iter()
                .flatten()
                .filter(|s| s.last == 0)
                .map(|s| s.text.width())
                .max()
                .unwrap_or(0)
                .max(MIN_NAME);
            widths[0] = widths[0]
                .saturating_sub(total - width)
                .max(floor.min(widths[0]));
        }
        widths
    }

    /// Where each column starts (after the two-space indent).
    fn starts(&self, widths: &[usize]) -> Vec<usize> {
        let mut x = 2;
        let mut starts = Vec::with_capacity(widths.len());
        for (c, w) in widths.iter().enumerate() {
            if c > 0 {
                x += self.columns[c].gap;
            }
            starts.push(x);
            x += w;
        }
        starts
    }

    /// The width the table takes.
    fn width(&self, width: usize) -> usize {
        let widths = self.widths(width);
        self.starts(&widths)
            .last()
            .map_or(0, |s| s + widths.last().unwrap_or(&0))
    }

    fn write(
        &self,
        width: usize,
        bold: Style,
        row_style: impl Fn(usize) -> Style,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
        let widths = self.widths(width);
        let starts = self.starts(&widths);
        for spans in &self.titles {
            let mut line = String::new();
            // the visible width so far: `line` holds escape codes when bold is on
            let mut at = 0;
            for span in spans {
                let (from, to) = (starts[span.first], starts[span.last] + widths[span.last]);
                let mut text = shorten_middle(&span.text, to - from);
                if span.rule && text.width() + 2 < to - from {
                    let free = to - from - text.width() - 2;
                    text = format!(
                        "{} {text} {}",
                        "─".repeat(free / 2),
                        "─".repeat(free - free / 2)
                    );
                }
                let x = match self.columns[span.last].align {
                    Align::Left => from,
                    Align::Right => to - text.width(),
                };
                let pad = x.saturating_sub(at);
                line.push_str(&" ".repeat(pad));
                line.push_str(&format!("{bold}{text}{bold:#}"));
                at += pad + text.width();
            }
            writeln!(out, "{}", line.trim_end())?;
        }
        for (r, row) in self.rows.iter().enumerate() {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                line.push_str(&" ".repeat(if c == 0 { 2 } else { self.columns[c].gap }));
                let text = shorten_middle(cell, widths[c]);
                let pad = " ".repeat(widths[c] - text.width());
                let style = if c == 0 { row_style(r) } else { Style::new() };
                match self.columns[c].align {
                    Align::Left => line.push_str(&format!("{style}{text}{style:#}{pad}")),
                    Align::Right => line.push_str(&format!("{pad}{style}{text}{style:#}")),
                }
            }
            writeln!(out, "{}", line.trim_end())?;
        }
        Ok(())
    }
}

/// The share table of `rows`: one table, or one per view when inputs side by side make it
/// wider than the terminal.
fn write_rows(
    report: &Report,
    rows: &[ShareRow],
    term: Terminal,
    bold: Style,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let styles = row_styles(report, rows, term);
    let style = |r: usize| styles[r];
    let table = share_table(report, rows, &report.views);
    // too wide even with names shortened (inputs side by side, or a narrow terminal): one
    // table per view
    if report.views.len() > 1 && table.width(term.width) > term.width {
        for (i, view) in report.views.iter().enumerate() {
            if i > 0 {
                writeln!(out)?;
            }
            share_table(report, rows, std::slice::from_ref(view))
                .write(term.width, bold, style, out)?;
        }
    } else {
        table.write(term.width, bold, style, out)?;
    }
    let mut notes = Vec::new();
    if let Some(note) = super::interval_note(report) {
        notes.push(note);
    } else if report.combine == Combine::Repeats {
        notes.push(format!(
            "  (median [min–max] of the shares over {} repeats)",
            report.inputs.len()
        ));
    }
    notes.push("  (* transparent: the owner view looks through it to its caller)".into());
    if rows.iter().any(|r| r.guessed) {
        notes.push("  (~ guessed: named after its crate, package, module or library)".into());
    }
    for line in notes.iter().flat_map(|n| wrap(n, term.width)) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The columns, titles and cells of a share table over `views`.
fn share_table(report: &Report, rows: &[ShareRow], views: &[View]) -> Table {
    let (columns, titles) = share_columns(report, views);
    Table {
        columns,
        titles,
        rows: share_rows(report, rows, views),
    }
}

/// A share table's columns and its title lines: the name (and category) columns, then per
/// view a share column per input side by side (each with its weight when weights are shown),
/// titled by view and, side by side, by input under it.
fn share_columns(report: &Report, views: &[View]) -> (Vec<Column>, Vec<Vec<Span>>) {
    let by_category = report.by == GroupBy::Category;
    let with_weights = show_weights(report);
    let side_by_side = report.inputs.len() > 1 && report.combine == Combine::Columns;
    let labels = input_labels(report, MAX_INPUT_LABEL);
    let mut columns = vec![Column {
        align: Align::Left,
        gap: 0,
    }];
    let mut view_titles = vec![Span {
        first: 0,
        last: 0,
        text: if by_category { "category" } else { "owner" }.into(),
        rule: false,
    }];
    if !by_category {
        columns.push(Column {
            align: Align::Left,
            gap: 2,
        });
        view_titles.push(Span {
            first: 1,
            last: 1,
            text: "category".into(),
            rule: false,
        });
    }
    let mut input_titles = Vec::new();
    for view in views {
        let first = columns.len();
        let per_view = if side_by_side { report.inputs.len() } else { 1 };
        for label in labels.iter().take(per_view) {
            columns.push(Column {
                align: Align::Right,
                gap: 2,
            });
            if side_by_side {
                input_titles.push(Span {
                    first: columns.len() - 1,
                    last: columns.len() - 1,
                    text: label.clone(),
                    rule: false,
                });
            }
            if with_weights {
                columns.push(Column {
                    align: Align::Right,
                    gap: 1,
                });
            }
        }
        view_titles.push(Span {
            first,
            last: columns.len() - 1,
            text: view.as_str().into(),
            rule: side_by_side,
        });
    }
    let mut titles = vec![view_titles];
    if side_by_side {
        titles.push(input_titles);
    }
    (columns, titles)
}

/// A share table's cells: per row its name (and category, `*` when transparent), then per
/// view its share cells, each followed by its weight when weights are shown.
fn share_rows(report: &Report, rows: &[ShareRow], views: &[View]) -> Vec<Vec<String>> {
    let by_category = report.by == GroupBy::Category;
    let with_weights = show_weights(report);
    let unit = &report.inputs[0].metric.unit;
    rows.iter()
        .map(|row| {
            let mut cells = vec![super::owner_label(row)];
            if !by_category {
                let mut c = row.category.map_or("", |c| c.as_str()).to_string();
                if row.transparent {
                    c.push('*');
                }
                cells.push(c);
            }
            for view in views {
                for (i, s) in share_cells(report, row, *view).into_iter().enumerate() {
                    cells.push(s);
                    if with_weights {
                        cells.push(weight(view.of(&row.weights[i]), unit, report.per));
                    }
                }
            }
            cells
        })
        .collect()
}

fn write_types(report: &Report, term: Terminal, out: &mut dyn Write) -> std::io::Result<()> {
    let mut rows = Vec::new();
    for input in &report.inputs {
        let total = input.aggregate.all.total;
        for t in input.aggregate.types.iter().take(50) {
            let owners: Vec<String> = t
                .owners
                .iter()
                .take(3)
                .map(|(o, w)| {
                    format!(
                        "{} {}",
                        report.owners[o.0 as usize].name,
                        pct(share(*w, t.weight))
                    )
                })
                .collect();
            rows.push(vec![
                t.name.clone(),
                pct(share(t.weight, total)),
                weight(t.weight, &input.metric.unit, report.per),
                owners.join(", "),
            ]);
        }
    }
    let table = Table::titled(
        &[
            (Align::Left, 0, "allocated type"),
            (Align::Right, 2, "share"),
            (Align::Right, 1, "weight"),
            (Align::Left, 2, "owned by (owner view)"),
        ],
        rows,
    );
    let bold = if term.color {
        Style::new().bold()
    } else {
        Style::new()
    };
    table.write(term.width, bold, |_| Style::new(), out)
}

/// `--by time`: per input, each owner's share over time as a sparkline, then the share of
/// the heaviest owners in every bucket.
fn write_time(
    report: &Report,
    term: Terminal,
    bold: Style,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    use super::by_time as t;
    let view = t::view(report);
    for (i, input) in report.inputs.iter().enumerate() {
        let Some(timeline) = &input.aggregate.timeline else {
            continue;
        };
        if i > 0 {
            writeln!(out)?;
        }
        for line in wrap(&t::heading(input, timeline, view), term.width) {
            writeln!(out, "{bold}{line}{bold:#}")?;
        }
        let owners = t::owners_by_weight(report, input, view);
        let sparks = Table::titled(
            &[
                (Align::Left, 0, "owner"),
                (Align::Right, 2, "share"),
                (Align::Left, 2, "over time (each row to its peak)"),
                (Align::Right, 2, "peak"),
            ],
            owners
                .iter()
                .map(|&o| t::owner_row(report, input, timeline, o, view))
                .collect(),
        );
        sparks.write(term.width, bold, |_| Style::new(), out)?;
        writeln!(out)?;
        let cells = t::bucket_cells(report, input, timeline, view);
        let columns: Vec<(Align, usize, &str)> = cells
            .titles
            .iter()
            .enumerate()
            .map(|(c, title)| (Align::Right, if c == 0 { 0 } else { 2 }, title.as_str()))
            .collect();
        let buckets = Table::titled(&columns, cells.rows);
        buckets.write(term.width, bold, |_| Style::new(), out)?;
    }
    Ok(())
}

fn write_threads(
    report: &Report,
    term: Terminal,
    bold: Style,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    for (i, input) in report.inputs.iter().enumerate() {
        for (g, (name, attribution)) in input.aggregate.threads.iter().enumerate() {
            let heading = format!(
                "thread {name}: {} of {} ({}); shares of this thread's total",
                pct(share(attribution.total, input.aggregate.all.total)),
                input.path,
                input.metric.unit.format(attribution.total),
            );
            writeln!(out)?;
            for line in wrap(&heading, term.width) {
                writeln!(out, "{bold}{line}{bold:#}")?;
            }
            let single = Report {
                inputs: vec![crate::aggregate::report::InputReport {
                    aggregate: crate::aggregate::Aggregate {
                        all: attribution.clone(),
                        ..Default::default()
                    },
                    ..input.clone()
                }],
                combine: Default::default(),
                // a thread group's counts keep no dispersion: its shares have no interval
                ci: false,
                ..report.clone()
            };
            let rows = report.thread_rows(i, g);
            write_rows(&single, &rows, term, bold, out)?;
        }
    }
    Ok(())
}

fn write_frames(
    report: &Report,
    term: Terminal,
    bold: Style,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    for input in &report.inputs {
        let agg = &input.aggregate;
        let total = agg.all.total;
        let unit = &input.metric.unit;
        let title = if report.inputs.len() > 1 {
            format!(" — {}", input.path)
        } else {
            String::new()
        };
        let lists = [
            (
                "Heaviest owner frames (the first non-transparent frame: who asked)",
                &agg.top_owner_frames,
            ),
            ("Heaviest self frames (the leaf)", &agg.top_self),
            (
                "Unclassified frames by inclusive weight (add a rule for these)",
                &agg.unclassified_frames,
            ),
        ];
        for (heading, list) in lists {
            if list.is_empty() {
                continue;
            }
            writeln!(out)?;
            for line in wrap(&format!("{heading}{title}"), term.width) {
                writeln!(out, "{bold}{line}{bold:#}")?;
            }
            let listed = &list[..list.len().min(MAX_LISTED)];
            let cells = |fw: &crate::aggregate::FrameWeight| {
                (
                    pct(share(fw.weight, total)),
                    weight(fw.weight, unit, report.per),
                )
            };
            let share_width = listed.iter().map(|f| cells(f).0.width()).max().unwrap_or(0);
            let weight_width = listed.iter().map(|f| cells(f).1.width()).max().unwrap_or(0);
            let owner_width = listed.iter().map(|f| f.owner.width()).max().unwrap_or(0);
            // the frame's name takes what is left of the line, and at least MIN_NAME
            let used = 2 + share_width + 2 + weight_width + 2 + owner_width + 2;
            let name_width = term.width.saturating_sub(used).max(MIN_NAME * 2);
            for fw in listed {
                let (s, w) = cells(fw);
                let line = format!(
                    "  {s:>share_width$}  {w:>weight_width$}  {:<owner_width$}  {}",
                    fw.owner,
                    shorten_middle(&fw.frame, name_width)
                );
                writeln!(out, "{}", line.trim_end())?;
            }
        }
    }
    Ok(())
}

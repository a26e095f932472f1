//! The terminal table: aligned columns, bold titles and category colours on a TTY.

use super::{header_lines, pct, share_cells, share_table_titles, show_weights, weight};
use crate::aggregate::report::{GroupBy, Report, ShareRow, share};
use crate::model::Category;
use anstyle::{AnsiColor, Style};
use std::io::Write;

/// Frame lists are cut to `--top` (in total) already; a large `--top` is still more than a
/// terminal shows usefully.
const MAX_LISTED: usize = 60;

pub fn write(report: &Report, color: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let bold = if color {
        Style::new().bold()
    } else {
        Style::new()
    };
    for line in header_lines(report) {
        writeln!(out, "{line}")?;
    }
    writeln!(out)?;
    if report.by == GroupBy::Type {
        write_types(report, out)?;
    } else {
        let rows = report.rows();
        write_rows(report, &rows, color, bold, out)?;
    }
    write_threads(report, color, bold, out)?;
    write_frames(report, bold, out)
}

fn category_style(c: Option<Category>) -> Style {
    let color = match c {
        Some(Category::User) => AnsiColor::Green,
        Some(Category::Framework) => AnsiColor::Cyan,
        Some(Category::Library) => AnsiColor::Blue,
        Some(Category::Runtime) => AnsiColor::Yellow,
        Some(Category::Allocator) => AnsiColor::Magenta,
        Some(Category::Gc) => AnsiColor::Red,
        Some(Category::Kernel) => AnsiColor::BrightBlack,
        _ => AnsiColor::White,
    };
    Style::new().fg_color(Some(color.into()))
}

/// Builds the cells of every row, then pads each column to its widest cell.
fn write_rows(
    report: &Report,
    rows: &[ShareRow],
    color: bool,
    bold: Style,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let by_category = report.by == GroupBy::Category;
    let with_weights = show_weights(report);
    let titles = share_table_titles(report, |_| String::new());
    let unit = &report.inputs[0].metric.unit;
    let mut table: Vec<Vec<String>> = vec![titles];
    for row in rows {
        let mut cells = vec![row.name.clone()];
        if !by_category {
            let mut c = row.category.map_or("", |c| c.as_str()).to_string();
            if row.transparent {
                c.push('*');
            }
            cells.push(c);
        }
        for view in &report.views {
            let shares = share_cells(report, row, *view);
            for (i, s) in shares.into_iter().enumerate() {
                cells.push(s);
                if with_weights {
                    cells.push(weight(view.of(&row.weights[i]), unit, report.per));
                }
            }
        }
        table.push(cells);
    }
    print_table(
        &table,
        |r, _| {
            if r == 0 {
                bold
            } else if color {
                category_style(rows[r - 1].category)
            } else {
                Style::new()
            }
        },
        out,
    )?;
    writeln!(
        out,
        "  (* transparent: the owner view looks through it to its caller)"
    )
}

fn print_table(
    table: &[Vec<String>],
    style: impl Fn(usize, usize) -> Style,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let columns = table.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            table
                .iter()
                .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    for (r, row) in table.iter().enumerate() {
        let mut line = String::from("  ");
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            let st = if c == 0 || r == 0 {
                style(r, c)
            } else {
                Style::new()
            };
            let text = if c < 2 {
                format!("{cell}{}", " ".repeat(pad))
            } else {
                format!("{}{cell}", " ".repeat(pad))
            };
            line.push_str(&format!("{st}{text}{st:#}  "));
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

fn write_types(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let mut table = vec![vec![
        "allocated type".to_string(),
        "share".into(),
        "weight".into(),
        "owned by (owner view)".into(),
    ]];
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
            table.push(vec![
                t.name.clone(),
                pct(share(t.weight, total)),
                weight(t.weight, &input.metric.unit, report.per),
                owners.join(", "),
            ]);
        }
    }
    print_table(&table, |_, _| Style::new(), out)
}

fn write_threads(
    report: &Report,
    color: bool,
    bold: Style,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    for (i, input) in report.inputs.iter().enumerate() {
        for (g, (name, attribution)) in input.aggregate.threads.iter().enumerate() {
            writeln!(
                out,
                "\n{bold}thread {name}{bold:#}: {} of {} ({}); shares of this thread's total",
                pct(share(attribution.total, input.aggregate.all.total)),
                input.path,
                input.metric.unit.format(attribution.total),
            )?;
            let single = Report {
                inputs: vec![crate::aggregate::report::InputReport {
                    aggregate: crate::aggregate::Aggregate {
                        all: attribution.clone(),
                        ..Default::default()
                    },
                    ..input.clone()
                }],
                combine: Default::default(),
                ..report.clone()
            };
            let rows = report.thread_rows(i, g);
            write_rows(&single, &rows, color, bold, out)?;
        }
    }
    Ok(())
}

fn write_frames(report: &Report, bold: Style, out: &mut dyn Write) -> std::io::Result<()> {
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
            writeln!(out, "\n{bold}{heading}{title}{bold:#}")?;
            for fw in list.iter().take(MAX_LISTED) {
                writeln!(
                    out,
                    "  {:>6}  {:>12}  {:<18} {}",
                    pct(share(fw.weight, total)),
                    weight(fw.weight, unit, report.per),
                    fw.owner,
                    fw.frame
                )?;
            }
        }
    }
    Ok(())
}

//! Markdown tables for PR comments and CI summaries (numbers right-aligned).

use super::{header_lines, pct, share_cells, share_table_titles, show_weights, weight};
use crate::aggregate::report::{GroupBy, Report, share};
use std::io::Write;

pub fn write(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "### whose report\n")?;
    for line in header_lines(report) {
        writeln!(out, "- {}", line.trim())?;
    }
    writeln!(out)?;
    if report.by == GroupBy::Type {
        return write_types(report, out);
    }
    if report.by == GroupBy::Time {
        return write_time(report, out);
    }
    let by_category = report.by == GroupBy::Category;
    let with_weights = show_weights(report);
    let titles = share_table_titles(report, |t| format!("{t} weight"));
    let right = titles.len() - if by_category { 1 } else { 2 };
    writeln!(out, "| {} |", titles.join(" | "))?;
    writeln!(
        out,
        "|{}{}",
        if by_category {
            " --- |"
        } else {
            " --- | --- |"
        },
        " ---: |".repeat(right)
    )?;
    let unit = &report.inputs[0].metric.unit;
    for row in report.rows() {
        let mut cells = vec![if row.guessed {
            format!("{} (guessed)", escape(&row.name))
        } else {
            escape(&row.name)
        }];
        if !by_category {
            let t = if row.transparent {
                " (transparent)"
            } else {
                ""
            };
            cells.push(format!("{}{t}", row.category.map_or("", |c| c.as_str())));
        }
        for view in &report.views {
            for (i, s) in share_cells(report, &row, *view).into_iter().enumerate() {
                cells.push(s);
                if with_weights {
                    cells.push(weight(view.of(&row.weights[i]), unit, report.per));
                }
            }
        }
        writeln!(out, "| {} |", cells.join(" | "))?;
    }
    if let Some(note) = super::interval_note(report) {
        writeln!(out, "\n{}", note.trim())?;
    }
    write_frames(report, out)
}

fn write_frames(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    for input in &report.inputs {
        let agg = &input.aggregate;
        if agg.top_owner_frames.is_empty() {
            continue;
        }
        writeln!(out, "\nHeaviest owner frames of `{}`:\n", input.path)?;
        writeln!(out, "| owner | frame | share |\n| --- | --- | ---: |")?;
        for fw in agg.top_owner_frames.iter().take(20) {
            writeln!(
                out,
                "| {} | `{}` | {} |",
                escape(&fw.owner),
                escape(&fw.frame),
                pct(share(fw.weight, agg.all.total))
            )?;
        }
    }
    Ok(())
}

fn write_types(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "| allocated type | share | weight |\n| --- | ---: | ---: |"
    )?;
    for input in &report.inputs {
        for t in input.aggregate.types.iter().take(50) {
            writeln!(
                out,
                "| `{}` | {} | {} |",
                escape(&t.name),
                pct(share(t.weight, input.aggregate.all.total)),
                weight(t.weight, &input.metric.unit, report.per)
            )?;
        }
    }
    Ok(())
}

/// `--by time`: per input, each owner's sparkline, then the heaviest owners per bucket.
fn write_time(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    use super::by_time as t;
    let view = t::view(report);
    for input in &report.inputs {
        let Some(timeline) = &input.aggregate.timeline else {
            continue;
        };
        writeln!(out, "{}\n", escape(&t::heading(input, timeline, view)))?;
        writeln!(
            out,
            "| owner | share | over time | peak |\n| --- | ---: | --- | ---: |"
        )?;
        let owners = t::owners_by_weight(report, input, view);
        for &o in &owners {
            let cells = t::owner_row(report, input, timeline, o, view);
            writeln!(
                out,
                "| {} | {} | `{}` | {} |",
                escape(&cells[0]),
                cells[1],
                cells[2],
                cells[3]
            )?;
        }
        let cells = t::bucket_cells(report, input, timeline, view);
        let titles: Vec<String> = cells.titles.iter().map(|c| escape(c)).collect();
        writeln!(out, "\n| {} |", titles.join(" | "))?;
        writeln!(out, "|{}", " ---: |".repeat(titles.len()))?;
        for row in &cells.rows {
            writeln!(out, "| {} |", row.join(" | "))?;
        }
        writeln!(out)?;
    }
    write_frames(report, out)
}

fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}

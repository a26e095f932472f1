//! `whose diff` as text, markdown (a PR comment) and JSON (schema `whose-diff/1`).
//! Formatting only: the deltas and their judgements come from [`Diff`].

use super::gate::VerdictFormat;
use crate::aggregate::report::Spread;
use crate::gate::diff::{Delta, Diff, Judgement};
use serde::Serialize;
use std::io::Write;

pub const SCHEMA: &str = "whose-diff/1";

pub fn render(diff: &Diff, format: VerdictFormat, out: &mut dyn Write) -> std::io::Result<()> {
    match format {
        VerdictFormat::Text => text(diff, out),
        VerdictFormat::Markdown => markdown(diff, out),
        VerdictFormat::Json => json(diff, out),
    }
}

/// `36.8%` for one profile, `36.8% [36.0–37.7]` (median [min–max]) for repeats.
fn side(s: &Spread, n: usize) -> String {
    if n > 1 {
        format!("{:.2}% [{:.2}–{:.2}]", s.median, s.min, s.max)
    } else {
        format!("{:.2}%", s.median)
    }
}

fn delta(d: &Delta) -> String {
    format!("{:+.2} pp", d.delta)
}

fn spread(d: &Delta) -> String {
    d.spread.map_or("–".to_string(), |s| format!("{s:.2} pp"))
}

fn cells(diff: &Diff, d: &Delta) -> [String; 7] {
    [
        d.name.clone(),
        d.view.as_str().to_string(),
        side(&d.base, diff.base_paths.len()),
        side(&d.new, diff.new_paths.len()),
        delta(d),
        spread(d),
        d.judgement.as_str().to_string(),
    ]
}

fn titles(diff: &Diff) -> [String; 7] {
    [diff.rows_are, "view", "base", "new", "delta", "spread", ""].map(String::from)
}

fn header(diff: &Diff) -> Vec<String> {
    let changes = diff
        .rows
        .iter()
        .filter(|d| d.judgement == Judgement::Change)
        .count();
    let unknown = diff
        .rows
        .iter()
        .filter(|d| d.judgement == Judgement::Unknown)
        .count();
    let mut lines = vec![
        format!("base: {}", diff.base_paths.join(", ")),
        format!("new: {}", diff.new_paths.join(", ")),
        format!("metric: {} ({})", diff.metric.name, diff.metric.unit),
        format!(
            "spread: {}; a delta no larger than the spread is noise",
            diff.rule.as_str()
        ),
        format!(
            "{changes} change(s) beyond the spread, {unknown} delta(s) that cannot be told from noise"
        ),
    ];
    if unknown > 0 {
        lines.push(
            "single profiles on both sides say nothing about noise: record repeats to judge"
                .to_string(),
        );
    }
    lines
}

fn text(diff: &Diff, out: &mut dyn Write) -> std::io::Result<()> {
    for line in header(diff) {
        writeln!(out, "{line}")?;
    }
    writeln!(out)?;
    let mut table: Vec<[String; 7]> = vec![titles(diff)];
    table.extend(diff.rows.iter().map(|d| cells(diff, d)));
    let widths: Vec<usize> = (0..7)
        .map(|c| {
            table
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in &table {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            // names left-aligned, numbers right-aligned
            if c < 2 || c == 6 {
                line.push_str(&format!("{cell}{}  ", " ".repeat(pad)));
            } else {
                line.push_str(&format!("{}{cell}  ", " ".repeat(pad)));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

fn markdown(diff: &Diff, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "### whose diff\n")?;
    for line in header(diff) {
        writeln!(out, "- {line}")?;
    }
    writeln!(out, "\n| {} |", titles(diff).join(" | "))?;
    writeln!(out, "| --- | --- | ---: | ---: | ---: | ---: | --- |")?;
    for d in &diff.rows {
        let mut c = cells(diff, d);
        c[0] = c[0].replace('|', "\\|");
        if d.judgement == Judgement::Change {
            c[6] = format!("**{}**", c[6]);
        }
        writeln!(out, "| {} |", c.join(" | "))?;
    }
    Ok(())
}

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    base: &'a [String],
    new: &'a [String],
    metric: Metric<'a>,
    spread_rule: &'static str,
    /// `owner` or `category`.
    rows_are: &'static str,
    rows: Vec<Row<'a>>,
}

#[derive(Serialize)]
struct Metric<'a> {
    name: &'a str,
    unit: &'a str,
}

#[derive(Serialize)]
struct Side {
    median: f64,
    min: f64,
    max: f64,
}

#[derive(Serialize)]
struct Row<'a> {
    name: &'a str,
    category: Option<&'static str>,
    view: &'static str,
    base: Side,
    new: Side,
    /// Percentage points.
    delta: f64,
    spread: Option<f64>,
    judgement: &'static str,
}

fn json(diff: &Diff, out: &mut dyn Write) -> std::io::Result<()> {
    let s = |x: &Spread| Side {
        median: x.median,
        min: x.min,
        max: x.max,
    };
    let doc = Document {
        schema: SCHEMA,
        base: &diff.base_paths,
        new: &diff.new_paths,
        metric: Metric {
            name: &diff.metric.name,
            unit: diff.metric.unit.name(),
        },
        spread_rule: diff.rule.as_str(),
        rows_are: diff.rows_are,
        rows: diff
            .rows
            .iter()
            .map(|d| Row {
                name: &d.name,
                category: d.category.map(|c| c.as_str()),
                view: d.view.as_str(),
                base: s(&d.base),
                new: s(&d.new),
                delta: d.delta,
                spread: d.spread,
                judgement: d.judgement.as_str(),
            })
            .collect(),
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

//! `whose diff` as text, markdown (a PR comment) and JSON (schema `whose-diff/2`).
//! Formatting only: the deltas and their judgements come from [`Diff`].

use super::gate::VerdictFormat;
use crate::aggregate::report::Spread;
use crate::gate::diff::{Compared, Delta, Diff, Judgement};
use crate::model::Unit;
use serde::Serialize;
use std::io::Write;

/// Version 2: rows compare weights (with totals and relative changes) and carry the shares
/// beside them; version 1 compared shares only.
pub const SCHEMA: &str = "whose-diff/2";

/// Text's header lines are wrapped to `width` columns, as the report's are.
pub fn render(
    diff: &Diff,
    format: VerdictFormat,
    width: usize,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    match format {
        VerdictFormat::Text => text(diff, width, out),
        VerdictFormat::Markdown => markdown(diff, out),
        VerdictFormat::Json => json(diff, out),
    }
}

/// A weight (a median: it may be fractional) in the metric's unit, rounded as the report
/// rounds `--per` weights (a fractional count keeps one decimal); `signed` puts `+` or `-`
/// before it.
fn amount(value: f64, unit: &Unit, signed: bool) -> String {
    let text = match unit {
        // a median of two sample counts can end in .5: rounding it hid a delta of 2.5 in a
        // spread of 2
        Unit::Count if value.fract() != 0.0 => format!("{:.1}", value.abs()),
        _ => unit.format(value.abs().round() as u128),
    };
    match signed {
        false => text,
        true if value < 0.0 => format!("-{text}"),
        true => format!("+{text}"),
    }
}

/// `+35.0%`, or `new` when the base was 0.
fn relative(c: &Compared) -> String {
    c.relative
        .map_or("new".to_string(), |r| format!("{r:+.1}%"))
}

/// `change (> 0.20 s)`: the mark and what the delta was compared with.
fn verdict(c: &Compared, unit: &Unit) -> String {
    let spread = |s: f64| amount(s, unit, false);
    match (c.judgement, c.spread) {
        (Judgement::Change, Some(s)) => format!("change (> {})", spread(s)),
        (Judgement::Noise, Some(s)) => format!("noise (≤ {})", spread(s)),
        (Judgement::Noise, None) => "noise (no change)".to_string(),
        (Judgement::Unknown, _) | (Judgement::Change, None) => "unknown".to_string(),
    }
}

const TITLES: [&str; 8] = ["", "view", "base", "new", "delta", "change", "share", ""];

fn cells(diff: &Diff, d: &Delta) -> [String; 8] {
    let unit = &diff.metric.unit;
    [
        d.name.clone(),
        d.view.as_str().to_string(),
        amount(d.weight.base.median, unit, false),
        amount(d.weight.new.median, unit, false),
        amount(d.weight.delta, unit, true),
        relative(&d.weight),
        format!("{:+.2} pp", d.share.delta),
        verdict(&d.weight, unit),
    ]
}

/// `12.00 s [11.80 s–12.40 s]` for repeats, the median alone for one profile.
fn side(s: &Spread, n: usize, unit: &Unit) -> String {
    if n > 1 {
        format!(
            "{} [{}–{}]",
            amount(s.median, unit, false),
            amount(s.min, unit, false),
            amount(s.max, unit, false)
        )
    } else {
        amount(s.median, unit, false)
    }
}

fn header(diff: &Diff) -> Vec<String> {
    let unit = &diff.metric.unit;
    let (changes, noise, unknown) = (
        diff.count(Judgement::Change),
        diff.count(Judgement::Noise),
        diff.count(Judgement::Unknown),
    );
    let per = diff
        .per
        .map_or(String::new(), |n| format!(", per request (--per {n})"));
    let t = &diff.total;
    let mut lines = vec![
        format!("base: {}", diff.base_paths.join(", ")),
        format!("new: {}", diff.new_paths.join(", ")),
        format!("metric: {} ({}){per}", diff.metric.name, diff.metric.unit),
        format!(
            "total: {} → {}, {} ({}): {}",
            side(&t.base, diff.base_paths.len(), unit),
            side(&t.new, diff.new_paths.len(), unit),
            amount(t.delta, unit, true),
            relative(t),
            verdict(t, unit)
        ),
        format!(
            "noise test: a row changed when its weight moved (new − base, medians) by more \
             than the combined spread of that weight, {}",
            diff.rule.as_str()
        ),
        format!(
            "{} row(s): {changes} change(s), {noise} noise, {unknown} unknown",
            diff.rows.len()
        ),
    ];
    if unknown > 0 || t.judgement == Judgement::Unknown {
        lines.push(
            "unknown: single profiles on both sides say nothing about noise; record repeats \
             to judge"
                .to_string(),
        );
    }
    lines
}

fn text(diff: &Diff, width: usize, out: &mut dyn Write) -> std::io::Result<()> {
    for line in header(diff).iter().flat_map(|l| super::wrap(l, width)) {
        writeln!(out, "{line}")?;
    }
    writeln!(out)?;
    let mut titles = TITLES.map(String::from);
    titles[0] = diff.rows_are.to_string();
    let mut table: Vec<[String; 8]> = vec![titles];
    table.extend(diff.rows.iter().map(|d| cells(diff, d)));
    let widths: Vec<usize> = (0..8)
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
            let pad = " ".repeat(widths[c] - cell.chars().count());
            // names and verdicts left-aligned, numbers right-aligned
            if c < 2 || c == 7 {
                line.push_str(&format!("{cell}{pad}  "));
            } else {
                line.push_str(&format!("{pad}{cell}  "));
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
    let mut titles = TITLES.map(String::from);
    titles[0] = diff.rows_are.to_string();
    writeln!(out, "\n| {} |", titles.join(" | "))?;
    writeln!(
        out,
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"
    )?;
    for d in &diff.rows {
        let mut c = cells(diff, d);
        c[0] = c[0].replace('|', "\\|");
        if d.judgement() == Judgement::Change {
            c[7] = format!("**{}**", c[7]);
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
    /// `--per N`: every weight is divided by N.
    per: Option<u64>,
    spread_rule: &'static str,
    /// What is judged: `weight`.
    judged: &'static str,
    /// `owner` or `category`.
    rows_are: &'static str,
    total: Quantity,
    /// Count of rows per judgement, as the rows carry them.
    counts: Counts,
    rows: Vec<Row<'a>>,
}

#[derive(Serialize)]
struct Metric<'a> {
    name: &'a str,
    unit: &'a str,
}

#[derive(Serialize)]
struct Counts {
    change: usize,
    noise: usize,
    unknown: usize,
}

#[derive(Serialize)]
struct Side {
    median: f64,
    min: f64,
    max: f64,
}

/// One compared quantity: weights in the metric's unit, shares in percent (points).
#[derive(Serialize)]
struct Quantity {
    base: Side,
    new: Side,
    delta: f64,
    /// Percent of the base median; null when the base is 0.
    relative: Option<f64>,
    spread: Option<f64>,
    judgement: &'static str,
}

#[derive(Serialize)]
struct Row<'a> {
    name: &'a str,
    category: Option<&'static str>,
    view: &'static str,
    /// The weight's judgement (the row's).
    judgement: &'static str,
    weight: Quantity,
    share: Quantity,
}

fn quantity(c: &Compared) -> Quantity {
    let s = |x: &Spread| Side {
        median: x.median,
        min: x.min,
        max: x.max,
    };
    Quantity {
        base: s(&c.base),
        new: s(&c.new),
        delta: c.delta,
        relative: c.relative,
        spread: c.spread,
        judgement: c.judgement.as_str(),
    }
}

fn json(diff: &Diff, out: &mut dyn Write) -> std::io::Result<()> {
    let doc = Document {
        schema: SCHEMA,
        base: &diff.base_paths,
        new: &diff.new_paths,
        metric: Metric {
            name: &diff.metric.name,
            unit: diff.metric.unit.name(),
        },
        per: diff.per,
        spread_rule: diff.rule.as_str(),
        judged: "weight",
        rows_are: diff.rows_are,
        total: quantity(&diff.total),
        counts: Counts {
            change: diff.count(Judgement::Change),
            noise: diff.count(Judgement::Noise),
            unknown: diff.count(Judgement::Unknown),
        },
        rows: diff
            .rows
            .iter()
            .map(|d| Row {
                name: &d.name,
                category: d.category.map(|c| c.as_str()),
                view: d.view.as_str(),
                judgement: d.judgement().as_str(),
                weight: quantity(&d.weight),
                share: quantity(&d.share),
            })
            .collect(),
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::amount;
    use crate::model::Unit;

    #[test]
    fn amounts_carry_their_sign_and_unit() {
        assert_eq!(
            amount(-3_640_000_000.0, &Unit::Nanoseconds, true),
            "-3.64 s"
        );
        assert_eq!(amount(1536.0, &Unit::Bytes, true), "+1.50 KiB");
        assert_eq!(amount(0.4, &Unit::Count, true), "+0.4");
        assert_eq!(amount(12.5, &Unit::Count, false), "12.5");
        assert_eq!(amount(-2.5, &Unit::Count, true), "-2.5");
        assert_eq!(amount(12.0, &Unit::Count, false), "12");
    }
}

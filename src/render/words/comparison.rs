//! `whose diff` as text, markdown (a PR comment) and JSON (schema `whose-diff/3`).
//! Formatting only: the deltas and their judgements come from [`Diff`].

use super::verdict::VerdictFormat;
use crate::aggregate::report::Spread;
use crate::gate::compare::{Compared, Delta, Diff, Judgement};

/// What the rows' test is (`gate::compare`), said in the header and JSON.
const TEST: &str = "Welch t on the shares (repeats' spread, or the sampling error from the \
                    sample counts), Benjamini–Hochberg across the rows";
use crate::model::Unit;
use serde::Serialize;
use std::io::Write;

/// Version 3 (issue 25): a row's judgement is a significance test of its share (`share.test`,
/// `share.interval`, `share.q_value`), the false discoveries across the rows controlled;
/// sides carry their `mean`, and `spread`/`spread_rule` are gone. Version 2 judged weights
/// against the repeats' min–max spread; version 1 compared shares only.
pub const SCHEMA: &str = "whose-diff/3";

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

/// A row's mark with the interval of its share's difference: `change [+1.2, +2.9 pp]`.
fn verdict(c: &Compared) -> String {
    match (c.judgement, c.interval) {
        (Judgement::Unknown, _) => "unknown".to_string(),
        (j, Some(i)) => format!("{} [{:+.2}, {:+.2} pp]", j.as_str(), i.low, i.high),
        (j, None) => j.as_str().to_string(),
    }
}

/// The totals' mark: `change [+0.2 s, +0.5 s]` (weights, between repeats).
fn total_verdict(c: &Compared, unit: &Unit) -> String {
    match (c.judgement, c.interval) {
        (Judgement::Unknown, _) => "unknown".to_string(),
        (j, Some(i)) => format!(
            "{} [{}, {}]",
            j.as_str(),
            amount(i.low, unit, true),
            amount(i.high, unit, true)
        ),
        (j, None) => j.as_str().to_string(),
    }
}

const TITLES: [&str; 8] = ["", "view", "base", "new", "delta", "change", "share", ""];

fn cells(diff: &Diff, d: &Delta) -> [String; 8] {
    let unit = &diff.metric.unit;
    [
        d.name.clone(),
        d.view.as_str().to_string(),
        amount(d.weight.base_mean, unit, false),
        amount(d.weight.new_mean, unit, false),
        amount(d.weight.delta, unit, true),
        relative(&d.weight),
        format!("{:+.2} pp", d.share.delta),
        verdict(&d.share),
    ]
}

/// `12.00 s [11.80 s–12.40 s]` (mean and range) for repeats, the value for one profile.
fn side(s: &Spread, mean: f64, n: usize, unit: &Unit) -> String {
    if n > 1 {
        format!(
            "{} [{}–{}]",
            amount(mean, unit, false),
            amount(s.min, unit, false),
            amount(s.max, unit, false)
        )
    } else {
        amount(mean, unit, false)
    }
}

/// 95 → `95`, 2.5 → `2.5`.
fn trim_float(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
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
            side(&t.base, t.base_mean, diff.base_paths.len(), unit),
            side(&t.new, t.new_mean, diff.new_paths.len(), unit),
            amount(t.delta, unit, true),
            relative(t),
            total_verdict(t, unit)
        ),
        format!(
            "test: a row changed when its share moved significantly (new − base, means; {}; \
             false discoveries at most {}%); [interval] of the share's change at {}%",
            TEST,
            trim_float((1.0 - diff.confidence) * 100.0),
            trim_float(diff.confidence * 100.0)
        ),
        format!(
            "{} row(s): {changes} change(s), {noise} noise, {unknown} unknown",
            diff.rows.len()
        ),
    ];
    if unknown > 0 || t.judgement == Judgement::Unknown {
        lines.push(
            "unknown: the totals of single profiles say nothing about their noise; record \
             repeats to judge"
                .to_string(),
        );
    }
    // what `report` warns of each input, as it words it
    for (path, findings) in &diff.findings {
        lines.extend(
            super::findings::lines(findings)
                .into_iter()
                .map(|f| format!("{path}: {f}")),
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
    /// The rows' test, in words.
    test: &'static str,
    /// `benjamini-hochberg`: how the rows' p-values are adjusted.
    false_discovery_control: &'static str,
    confidence: f64,
    /// What is judged: `share`.
    judged: &'static str,
    /// `owner` or `category`.
    rows_are: &'static str,
    total: Quantity,
    /// Count of rows per judgement, as the rows carry them.
    counts: Counts,
    rows: Vec<Row<'a>>,
    /// What `report` warns of each input (left out when nothing).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    findings: Vec<InputFinding<'a>>,
}

#[derive(Serialize)]
struct InputFinding<'a> {
    path: &'a str,
    finding: String,
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
    mean: f64,
    median: f64,
    min: f64,
    max: f64,
}

#[derive(Serialize)]
struct Test {
    /// Standard error of the delta.
    se: f64,
    /// Degrees of freedom; null for the normal (sampling error from counts).
    df: Option<f64>,
    p_value: f64,
}

#[derive(Serialize)]
struct JsonInterval {
    low: f64,
    high: f64,
}

/// One compared quantity: weights in the metric's unit, shares in percent (points).
#[derive(Serialize)]
struct Quantity {
    base: Side,
    new: Side,
    delta: f64,
    /// Percent of the base mean; null when the base is 0.
    relative: Option<f64>,
    /// The test of the delta (shares and totals; null for a row's weight, which is not
    /// tested, and for the totals of single profiles).
    test: Option<Test>,
    /// The interval of the delta at `confidence`.
    interval: Option<JsonInterval>,
    /// The p-value judged: Benjamini–Hochberg adjusted for the rows' shares.
    q_value: Option<f64>,
    judgement: &'static str,
}

#[derive(Serialize)]
struct Row<'a> {
    name: &'a str,
    category: Option<&'static str>,
    view: &'static str,
    /// The share's judgement (the row's).
    judgement: &'static str,
    weight: Quantity,
    share: Quantity,
}

fn quantity(c: &Compared) -> Quantity {
    let s = |x: &Spread, mean: f64| Side {
        mean,
        median: x.median,
        min: x.min,
        max: x.max,
    };
    Quantity {
        base: s(&c.base, c.base_mean),
        new: s(&c.new, c.new_mean),
        delta: c.delta,
        relative: c.relative,
        test: c.test.map(|t| Test {
            se: t.se,
            df: t.df.is_finite().then_some(t.df),
            p_value: t.p_value,
        }),
        interval: c.interval.map(|i| JsonInterval {
            low: i.low,
            high: i.high,
        }),
        q_value: c.q_value,
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
        test: TEST,
        false_discovery_control: "benjamini-hochberg",
        confidence: diff.confidence,
        judged: "share",
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
        // the warnings, as the report's JSON carries them (its `quality.findings`)
        findings: (diff.findings.iter())
            .flat_map(|(path, f)| f.iter().map(move |f| (path, f)))
            .map(|(path, f)| InputFinding {
                path,
                finding: super::findings::text(f),
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

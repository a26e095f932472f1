//! The gate's verdict as text (one line per requirement, then the verdict), markdown (for PR
//! comments) and JSON (schema `whose-gate/1`, for CI artefacts). Formatting only: every
//! number and decision comes from [`GateOutcome`].

use crate::gate::{Evaluation, GateOutcome, Mode, Status, Subject};
use anstyle::{AnsiColor, Style};
use serde::Serialize;
use std::io::Write;

pub const SCHEMA: &str = "whose-gate/1";

/// Output formats of `gate` and `diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum VerdictFormat {
    #[default]
    Text,
    Markdown,
    Json,
}

pub fn render(
    outcome: &GateOutcome,
    format: VerdictFormat,
    color: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    match format {
        VerdictFormat::Text => text(outcome, color, out),
        VerdictFormat::Markdown => markdown(outcome, out),
        VerdictFormat::Json => json(outcome, out),
    }
}

/// `PASS`, `FAIL` or `FAIL` for an inconclusive range (the reason follows on the line).
fn word(status: Status) -> &'static str {
    match status {
        Status::Pass => "PASS",
        Status::Fail | Status::Inconclusive => "FAIL",
    }
}

/// A share with two decimals: a threshold just beside the measured share must be visible.
fn pct2(p: f64) -> String {
    format!("{p:.2}%")
}

/// `9.92% (1.20 MiB of 12.1 MiB, metric alloc_space)` for one input, `36.76% median
/// [35.98–37.73%] over 3 repeats (metric samples)` for several.
fn measured(e: &Evaluation) -> String {
    match e.inputs.as_slice() {
        [one] => format!(
            "{} ({} of {}, metric {})",
            pct2(one.share),
            e.metric.unit.format(one.weight),
            e.metric.unit.format(one.total),
            e.metric.name
        ),
        many => format!(
            "{} median [{:.2}–{}] over {} repeats (metric {})",
            pct2(e.spread.median),
            e.spread.min,
            pct2(e.spread.max),
            many.len(),
            e.metric.name
        ),
    }
}

/// Why a requirement failed or is worth a second look, if anything needs saying.
fn remark(e: &Evaluation) -> Option<String> {
    let n = e.inputs.len();
    let mut remarks = Vec::new();
    if e.kind == "category" && matches!(e.requirement.subject, Subject::Name(_)) {
        // a bare name no owner has falls back to the category: a typo must not pass unseen
        remarks.push(format!(
            "`{}` is read as the category {} (no owner has that name; `category:{}` says so \
             explicitly)",
            e.name, e.name, e.name
        ));
    }
    match e.status {
        Status::Inconclusive => remarks.push(format!(
            "inconclusive: {} of {n} repeats pass ({} {} is on the wrong side)",
            e.passing,
            if e.requirement.op.is_lower_bound() {
                "min"
            } else {
                "max"
            },
            pct2(e.deciding_share())
        )),
        _ if e.inputs.iter().all(|i| i.weight == 0) => remarks.push(format!(
            "`{}` has no weight in the {} view of these profiles",
            e.name,
            e.requirement.view.as_str()
        )),
        _ => {}
    }
    (!remarks.is_empty()).then(|| remarks.join("; "))
}

fn verdict(outcome: &GateOutcome) -> String {
    let held = outcome
        .results
        .iter()
        .filter(|e| e.status == Status::Pass)
        .count();
    format!(
        "{} ({held} of {} requirements hold; {})",
        if outcome.passed { "PASS" } else { "FAIL" },
        outcome.results.len(),
        match outcome.mode {
            Mode::All => "all must",
            Mode::Any => "--any: one must",
        }
    )
}

fn inputs_line(outcome: &GateOutcome) -> String {
    let mut paths: Vec<&str> = Vec::new();
    for e in &outcome.results {
        for i in &e.inputs {
            if !paths.contains(&i.path.as_str()) {
                paths.push(&i.path);
            }
        }
    }
    paths.join(", ")
}

fn text(outcome: &GateOutcome, color: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let paint = |status: Status| -> Style {
        if !color {
            return Style::new();
        }
        let c = if status == Status::Pass {
            AnsiColor::Green
        } else {
            AnsiColor::Red
        };
        Style::new().bold().fg_color(Some(c.into()))
    };
    writeln!(out, "whose gate over {}", inputs_line(outcome))?;
    for e in &outcome.results {
        let style = paint(e.status);
        write!(
            out,
            "{style}{}{style:#}  {}: measured {}, threshold {}",
            word(e.status),
            e.requirement.canonical(),
            measured(e),
            pct2(e.requirement.threshold)
        )?;
        match remark(e) {
            Some(r) => writeln!(out, "; {r}")?,
            None => writeln!(out)?,
        }
    }
    let overall = if outcome.passed {
        Status::Pass
    } else {
        Status::Fail
    };
    let style = paint(overall);
    writeln!(out, "{style}verdict: {}{style:#}", verdict(outcome))
}

fn markdown(outcome: &GateOutcome, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "### whose gate: {}\n",
        if outcome.passed { "PASS" } else { "FAIL" }
    )?;
    writeln!(
        out,
        "| result | requirement | measured | threshold | repeats passing | note |"
    )?;
    writeln!(out, "| --- | --- | --- | ---: | ---: | --- |")?;
    for e in &outcome.results {
        writeln!(
            out,
            "| **{}** | `{}` | {} | {} | {} of {} | {} |",
            word(e.status),
            e.requirement.canonical().replace('|', "\\|"),
            measured(e),
            pct2(e.requirement.threshold),
            e.passing,
            e.inputs.len(),
            remark(e).unwrap_or_default().replace('|', "\\|")
        )?;
    }
    writeln!(out, "\nVerdict: **{}**\n", verdict(outcome))?;
    writeln!(out, "Inputs: {}", inputs_line(outcome))
}

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    verdict: &'static str,
    /// `pass`, `fail` or `error`: the same word as `verdict`, under the name CI tools look for.
    status: &'static str,
    /// Why there is no verdict (`error` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    mode: &'static str,
    requirements: Vec<Requirement<'a>>,
}

fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::All => "all",
        Mode::Any => "any",
    }
}

/// The JSON document of a gate that reached no verdict (unreadable or unfit input, an unknown
/// owner...): written on exit 2 too, so a CI step that publishes the verdict has it.
pub fn json_error(reason: &str, mode: Mode, out: &mut dyn Write) -> std::io::Result<()> {
    let doc = Document {
        schema: SCHEMA,
        verdict: "error",
        status: "error",
        reason: Some(reason),
        mode: mode_name(mode),
        requirements: Vec::new(),
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

#[derive(Serialize)]
struct Requirement<'a> {
    expression: &'a str,
    canonical: String,
    kind: &'static str,
    name: &'a str,
    view: &'static str,
    metric: Metric<'a>,
    op: &'static str,
    threshold: f64,
    status: &'static str,
    /// Inputs that satisfy the requirement on their own.
    passing: usize,
    repeats: usize,
    median: f64,
    min: f64,
    max: f64,
    inputs: Vec<Input<'a>>,
}

#[derive(Serialize)]
struct Metric<'a> {
    name: &'a str,
    unit: &'a str,
}

#[derive(Serialize)]
struct Input<'a> {
    path: &'a str,
    weight: u128,
    total: u128,
    share: f64,
}

fn json(outcome: &GateOutcome, out: &mut dyn Write) -> std::io::Result<()> {
    let requirements = outcome
        .results
        .iter()
        .map(|e| Requirement {
            expression: &e.requirement.text,
            canonical: e.requirement.canonical(),
            kind: e.kind,
            name: &e.name,
            view: e.requirement.view.as_str(),
            metric: Metric {
                name: &e.metric.name,
                unit: e.metric.unit.name(),
            },
            op: e.requirement.op.as_str(),
            threshold: e.requirement.threshold,
            status: e.status.as_str(),
            passing: e.passing,
            repeats: e.inputs.len(),
            median: e.spread.median,
            min: e.spread.min,
            max: e.spread.max,
            inputs: e
                .inputs
                .iter()
                .map(|i| Input {
                    path: &i.path,
                    weight: i.weight,
                    total: i.total,
                    share: i.share,
                })
                .collect(),
        })
        .collect();
    let verdict = if outcome.passed { "pass" } else { "fail" };
    let doc = Document {
        schema: SCHEMA,
        verdict,
        status: verdict,
        reason: None,
        mode: mode_name(outcome.mode),
        requirements,
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

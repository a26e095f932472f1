//! The gate's verdict as text (one line per requirement, then the verdict), markdown (for PR
//! comments) and JSON (schema `whose-gate/2`, for CI artefacts). Formatting only: every
//! number and decision comes from [`GateOutcome`].

use crate::aggregate::interval::{Interval, Method};
use crate::gate::{
    Claim, Evaluation, GateOutcome, Mode, Status, Subject, ToDecide, Unfit, UnfitReason,
};
use anstyle::{AnsiColor, Style};
use serde::Serialize;
use std::io::Write;

/// Why an input cannot carry a verdict: the requirement, the input, the guard, by how much,
/// and the fix.
pub fn unfit(u: &Unfit) -> String {
    let why = match &u.reason {
        UnfitReason::NoCallChains => "it has no call chains (every stack is one frame), so the \
             owner and anywhere views are only the self view; record with `perf record -g` (or \
             `--call-graph dwarf`), or require the self view"
            .to_string(),
        UnfitReason::Unresolved { percent, limit } => format!(
            "{percent:.1}% of its weight is decided by addresses without a symbol \
             (--max-unresolved {limit}%); give whose the JIT maps (--jit-map-dir) or the \
             binaries' symbols (--binary-path, --symfs), or raise --max-unresolved to accept \
             them"
        ),
        UnfitReason::CutShort {
            percent,
            limit,
            advice,
        } => format!(
            "{percent:.1}% of its weight is in stacks cut short (only transparent frames, \
             no thread root; --max-ownerless {limit}%), whose callers the owner view cannot see: \
             {}; or raise --max-ownerless to accept them",
            super::findings::cut_short_advice(advice)
        ),
        UnfitReason::Lost { percent, limit } => format!(
            "perf lost {percent:.1}% of its samples (LOST and LOST_SAMPLES records; --max-lost \
             {limit}%), and the loss comes in bursts, not evenly over the code; {}, or raise \
             --max-lost to accept it",
            crate::model::LOST_FIX
        ),
        UnfitReason::NoLanguageFrames { unit, runtime } => format!(
            "it holds no {unit}, only {runtime}'s native code, so user code's share cannot be \
             read from it; {}",
            super::guess::language_frames_fix(*unit)
        ),
        UnfitReason::Unclassified {
            percent,
            limit,
            claim,
        } => format!(
            "{percent:.1}% of its weight is decided by frames no rule and no guess \
             names (`unclassified`; --max-unclassified {limit}%), which could be anybody's: {}; \
             or raise --max-unclassified to accept them",
            claim_advice(claim)
        ),
    };
    match &u.range {
        // weight of unknown owner is a bound: refused only where it could flip the verdict
        Some(range) => format!(
            "--require `{}`: the weight whose owner {} cannot tell could flip the verdict: with \
             it given to `{}` or to others, the share lies in [{:.2}–{}] (95 % interval at both \
             ends), on both sides of {}; {why}",
            u.requirement,
            u.path,
            range.subject,
            range.interval.low,
            pct2(range.interval.high),
            pct2(range.threshold)
        ),
        None => format!(
            "--require `{}`: {} is unfit for a verdict on the {} view: {why}",
            u.requirement,
            u.path,
            u.view.as_str()
        ),
    }
}

/// How to claim the heaviest unclassified frames.
fn claim_advice(claim: &Claim) -> String {
    match claim {
        Claim::UserPrefix(prefix) => format!(
            "the heaviest are under `{prefix}`; `--user {prefix}` claims them as user code, a \
             --rules file names their owner if they are somebody else's"
        ),
        Claim::Heaviest(frame) => format!(
            "the heaviest is `{frame}`; name its owner in a --rules file (`whose explain` lists \
             them and writes the rule)"
        ),
        Claim::Rules => "name their owner in a --rules file (`whose explain` lists them and \
                         writes the rule)"
            .to_string(),
    }
}

/// Version 2 (issue 25): a requirement is decided on its share's interval; `verdict` and
/// `status` may be `inconclusive`; requirements and inputs carry `estimate`, `interval`,
/// `method`, `confidence`, `to_decide`, `samples` and `effective_samples`.
pub const SCHEMA: &str = "whose-gate/2";

/// Output formats of `gate` and `diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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

/// `PASS`, `FAIL` or `INCONCLUSIVE`; with `--point-estimate` an inconclusive range of
/// repeats is a `FAIL` (the reason follows on the line), as before intervals.
fn word(e: &Evaluation) -> &'static str {
    match e.status {
        Status::Pass => "PASS",
        Status::Fail => "FAIL",
        Status::Inconclusive if e.method == Method::Point => "FAIL",
        Status::Inconclusive => "INCONCLUSIVE",
    }
}

fn verdict_word(status: Status) -> &'static str {
    match status {
        Status::Pass => "PASS",
        Status::Fail => "FAIL",
        Status::Inconclusive => "INCONCLUSIVE",
    }
}

/// `[21.96–30.62%, 95%]`
fn bracket(i: &Interval, confidence: f64) -> String {
    format!(
        "[{:.2}–{}, {}%]",
        i.low,
        pct2(i.high),
        trim_float(confidence * 100.0)
    )
}

/// 95 → `95`, 99.5 → `99.5`.
fn trim_float(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A count with thousands separators: 7,392.
fn thousands(n: f64) -> String {
    let digits = format!("{:.0}", n.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A share with two decimals: a threshold just beside the measured share must be visible.
fn pct2(p: f64) -> String {
    format!("{p:.2}%")
}

/// `26.00% [21.96–30.62%, 95%] (104 of 400, 400 samples, metric samples)` for one input,
/// `36.76% mean [35.98–37.73%, 95%] over 3 repeats (range 35.90–37.80%, metric samples)`
/// for several; with `--point-estimate`, `9.92% (1.20 MiB of 12.1 MiB, metric alloc_space)`
/// and `36.76% median [35.98–37.73%] over 3 repeats (metric samples)` (the range).
fn measured(e: &Evaluation) -> String {
    match (e.inputs.as_slice(), e.interval) {
        ([one], Some(i)) => format!(
            "{} {} ({} of {}, {} {}, metric {})",
            pct2(one.share),
            bracket(&i, e.confidence),
            e.metric.unit.format(one.weight),
            e.metric.unit.format(one.total),
            thousands(one.samples as f64),
            if one.counted {
                "samples"
            } else {
                "distinct stacks"
            },
            e.metric.name
        ),
        (many, Some(i)) => format!(
            "{} mean {} over {} repeats (range {:.2}–{}, metric {})",
            pct2(e.estimate),
            bracket(&i, e.confidence),
            many.len(),
            e.spread.min,
            pct2(e.spread.max),
            e.metric.name
        ),
        ([one], None) => format!(
            "{} ({} of {}, metric {})",
            pct2(one.share),
            e.metric.unit.format(one.weight),
            e.metric.unit.format(one.total),
            e.metric.name
        ),
        (many, None) => format!(
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
        Status::Inconclusive if e.method != Method::Point => remarks.push(format!(
            "inconclusive: the {}% interval contains {}{}",
            trim_float(e.confidence * 100.0),
            pct2(e.requirement.threshold),
            match e.to_decide {
                Some(ToDecide::Seconds { needed, now }) => format!(
                    "; about {} s of recording at the same rate (now {} s) would decide it at \
                     {}, or repeats (several files) for a verdict across runs",
                    seconds(needed),
                    seconds(now),
                    pct2(e.estimate)
                ),
                Some(ToDecide::Samples { needed }) => format!(
                    "; about {} samples (now {}) would decide it at {}",
                    thousands(needed),
                    thousands(e.inputs[0].samples as f64),
                    pct2(e.estimate)
                ),
                Some(ToDecide::Repeats(n)) => format!(
                    "; about {n} repeats (now {}) with this spread would decide it at {}",
                    e.inputs.len(),
                    pct2(e.estimate)
                ),
                None => String::new(),
            }
        )),
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
        _ if e.bounds.is_some() => {}
        _ if e.inputs.iter().all(|i| i.weight == 0) => remarks.push(format!(
            "`{}` has no weight in the {} view of these profiles",
            e.name,
            e.requirement.view.as_str()
        )),
        _ => {}
    }
    if let Some(b) = &e.bounds {
        remarks.push(bounds_remark(e, b));
    }
    if e.inputs.len() > 1 && e.inputs.len() < 5 && e.method == Method::RepeatsT {
        remarks.push(format!(
            "only {} repeats: the spread of so few says little about the next run (5 or more \
             give a t interval worth its name)",
            e.inputs.len()
        ));
    }
    (!remarks.is_empty()).then(|| remarks.join("; "))
}

/// `with 14.9 % of the weight in stacks cut short (over --max-ownerless 5 %), the share
/// lies in [..]: the verdict holds at both ends`.
fn bounds_remark(e: &Evaluation, b: &crate::gate::Bounds) -> String {
    let over: Vec<String> = e
        .inputs
        .iter()
        .filter_map(|i| i.unknown.as_ref())
        .flat_map(|u| u.over.iter())
        .map(|r| match r {
            UnfitReason::CutShort { percent, limit, .. } => {
                format!("{percent:.1}% in stacks cut short (over --max-ownerless {limit}%)")
            }
            // where the weight keeps the verdict open, how to claim it
            UnfitReason::Unclassified {
                percent,
                limit,
                claim,
            } if e.status == Status::Inconclusive => format!(
                "{percent:.1}% unclassified (over --max-unclassified {limit}%: {})",
                claim_advice(claim)
            ),
            UnfitReason::Unclassified { percent, limit, .. } => {
                format!("{percent:.1}% unclassified (over --max-unclassified {limit}%)")
            }
            _ => String::new(),
        })
        .fold(Vec::new(), |mut seen, r| {
            if !r.is_empty() && !seen.contains(&r) {
                seen.push(r);
            }
            seen
        });
    format!(
        "with {} the share could be {:.2} points lower or {:.2} higher: [{:.2}–{}] at both \
         ends, {}",
        over.join(" and "),
        b.down,
        b.up,
        b.interval.low,
        pct2(b.interval.high),
        match e.status {
            Status::Inconclusive => "which still straddles the threshold",
            _ => "so the verdict holds whoever that weight belongs to",
        }
    )
}

/// Seconds with as many decimals as a short recording needs: 0.42, 5.3, 120.
fn seconds(s: f64) -> String {
    if s < 1.0 {
        format!("{s:.2}")
    } else if s < 100.0 {
        format!("{s:.1}")
    } else {
        thousands(s)
    }
}

fn verdict(outcome: &GateOutcome) -> String {
    let held = outcome
        .results
        .iter()
        .filter(|e| e.status == Status::Pass)
        .count();
    format!(
        "{} ({held} of {} requirements hold; {})",
        verdict_word(outcome.verdict),
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

/// `intervals: 95%, Wilson ...`: what the intervals on the lines assume, once per method.
fn methods_line(outcome: &GateOutcome) -> Option<String> {
    let mut methods: Vec<Method> = Vec::new();
    for e in &outcome.results {
        if e.method != Method::Point && !methods.contains(&e.method) {
            methods.push(e.method);
        }
    }
    let confidence = outcome.results.first()?.confidence;
    (!methods.is_empty()).then(|| {
        let said: Vec<&str> = methods.iter().map(|m| method_words(*m)).collect();
        format!(
            "intervals: {}% confidence; {}",
            trim_float(confidence * 100.0),
            said.join("; ")
        )
    })
}

fn text(outcome: &GateOutcome, color: bool, out: &mut dyn Write) -> std::io::Result<()> {
    let paint = |status: Status| -> Style {
        if !color {
            return Style::new();
        }
        let c = match status {
            Status::Pass => AnsiColor::Green,
            Status::Inconclusive => AnsiColor::Yellow,
            Status::Fail => AnsiColor::Red,
        };
        Style::new().bold().fg_color(Some(c.into()))
    };
    writeln!(out, "whose gate over {}", inputs_line(outcome))?;
    for e in &outcome.results {
        let style = paint(e.status);
        write!(
            out,
            "{style}{}{style:#}  {}: measured {}, threshold {}",
            word(e),
            e.requirement.canonical(),
            measured(e),
            pct2(e.requirement.threshold)
        )?;
        match remark(e) {
            Some(r) => writeln!(out, "; {r}")?,
            None => writeln!(out)?,
        }
    }
    if let Some(line) = methods_line(outcome) {
        writeln!(out, "{line}")?;
    }
    let style = paint(outcome.verdict);
    writeln!(out, "{style}verdict: {}{style:#}", verdict(outcome))
}

fn markdown(outcome: &GateOutcome, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "### whose gate: {}\n", verdict_word(outcome.verdict))?;
    writeln!(
        out,
        "| result | requirement | measured | threshold | repeats passing | note |"
    )?;
    writeln!(out, "| --- | --- | --- | ---: | ---: | --- |")?;
    for e in &outcome.results {
        writeln!(
            out,
            "| **{}** | `{}` | {} | {} | {} of {} | {} |",
            word(e),
            e.requirement.canonical().replace('|', "\\|"),
            measured(e),
            pct2(e.requirement.threshold),
            e.passing,
            e.inputs.len(),
            remark(e).unwrap_or_default().replace('|', "\\|")
        )?;
    }
    writeln!(out, "\nVerdict: **{}**\n", verdict(outcome))?;
    if let Some(line) = methods_line(outcome) {
        writeln!(out, "{line}\n")?;
    }
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
    /// The share decided on: the one input's, or the mean of the repeats'.
    estimate: f64,
    /// `null` with `--point-estimate`.
    interval: Option<JsonInterval>,
    /// `time-blocks`, `wilson-ess`, `repeats-t` or `point-estimate`.
    method: &'static str,
    confidence: f64,
    /// For an inconclusive interval: `{"seconds": {"needed": S, "now": T}}` (one recording
    /// at the same rate), `{"samples": {"needed": N}}` (one profile that does not say how
    /// long it ran) or `{"repeats": N}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    to_decide: Option<JsonToDecide>,
    /// Where weight of unknown owner is over its guard: the points it could take from and
    /// add to the share, and the interval at both ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    bounds: Option<JsonBounds>,
    /// The largest percent of the view that unclassified frames decide over the inputs.
    unclassified_percent: f64,
    inputs: Vec<Input<'a>>,
}

#[derive(Serialize)]
struct JsonInterval {
    low: f64,
    high: f64,
}

impl From<Interval> for JsonInterval {
    fn from(i: Interval) -> JsonInterval {
        JsonInterval {
            low: i.low,
            high: i.high,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum JsonToDecide {
    Seconds { needed: f64, now: f64 },
    Samples { needed: f64 },
    Repeats(usize),
}

/// The unknown weight's bounds on a requirement's share.
#[derive(Serialize)]
struct JsonBounds {
    down: f64,
    up: f64,
    interval: JsonInterval,
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
    /// Samples behind `total` (distinct stacks when `counted` is false).
    samples: u128,
    counted: bool,
    effective_samples: f64,
    /// `time-blocks` or `wilson-ess`: how this input's interval was made.
    method: &'static str,
    /// The time blocks' length, seconds (`time-blocks` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    block_seconds: Option<f64>,
    /// The time the samples span, seconds, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    seconds: Option<f64>,
    /// This input's own interval from its counts.
    interval: JsonInterval,
    /// The percent of its weight that unclassified frames decide in the view.
    unclassified_percent: f64,
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
            estimate: e.estimate,
            interval: e.interval.map(JsonInterval::from),
            method: e.method.as_str(),
            confidence: e.confidence,
            to_decide: e.to_decide.map(|t| match t {
                ToDecide::Seconds { needed, now } => JsonToDecide::Seconds { needed, now },
                ToDecide::Samples { needed } => JsonToDecide::Samples { needed },
                ToDecide::Repeats(n) => JsonToDecide::Repeats(n),
            }),
            bounds: e.bounds.as_ref().map(|b| JsonBounds {
                down: b.down,
                up: b.up,
                interval: b.interval.into(),
            }),
            unclassified_percent: e.unclassified(),
            inputs: e
                .inputs
                .iter()
                .map(|i| Input {
                    path: &i.path,
                    weight: i.weight,
                    total: i.total,
                    share: i.share,
                    samples: i.samples,
                    counted: i.counted,
                    effective_samples: i.estimate.n_eff,
                    method: i.estimate.method.as_str(),
                    block_seconds: i.block_seconds,
                    seconds: i.seconds,
                    interval: i.interval.into(),
                    unclassified_percent: i.unclassified,
                })
                .collect(),
        })
        .collect();
    let verdict = outcome.verdict.as_str();
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
/// What an interval method assumes, in one line for the reader.
fn method_words(method: Method) -> &'static str {
    match method {
        Method::Wilson => {
            "Wilson interval at the effective sample size (samples taken as independent draws: \
             the input has no sample times); one recording's sampling noise only, not what \
             varies from run to run (JIT compilation, warm-up, load, GC): repeats (several \
             files) give a verdict across runs"
        }
        Method::TimeBlocks => {
            "Wilson interval at the effective sample size of batch means over time blocks \
             (all threads together, the block length chosen from the data); one recording's \
             sampling noise only, not what varies from run to run (JIT compilation, warm-up, \
             load, GC): repeats (several files) give a verdict across runs"
        }
        Method::RepeatsT => "Student's t over the repeats",
        Method::Point => "point estimate, no interval (--point-estimate)",
    }
}

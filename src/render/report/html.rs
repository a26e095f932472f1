//! `report --format html` (issue 27): one self-contained page — the owner table, the flame
//! graph coloured by owner, the findings, several inputs and their diff, and the owner
//! shares over time — with no network access. The page's script (`html/page.js`, and
//! `html/timeline.js` for the time chart) computes every number from the embedded data
//! ([`crate::aggregate::page`]); this module only writes that data and the words the terminal
//! uses (the header lines, the rules as `explain` names them).

use super::palette::{attribution_colors, category_color};
use crate::aggregate::page::PageInput;
use crate::aggregate::report::Report;
use crate::aggregate::timeline::OwnerTimeline;
use crate::classify::RuleSet;
use crate::model::{Category, Profile};
use serde::Serialize;
use std::io::Write;

const CSS: &str = include_str!("html/page.css");
const PAGE_JS: &str = include_str!("html/page.js");
const TIMELINE_JS: &str = include_str!("html/timeline.js");

/// One input as the page gets it: the report's input and what the page draws of it.
pub struct HtmlInput<'a> {
    pub profile: &'a Profile,
    pub page: PageInput,
    /// The shown time buckets and the warm-up, when the input times its samples.
    pub timeline: Option<&'a OwnerTimeline>,
}

#[derive(Serialize)]
struct Data<'a> {
    schema: &'static str,
    min_share_percent: f64,
    owners: Vec<OwnerData<'a>>,
    categories: Vec<CategoryData>,
    inputs: Vec<InputData<'a>>,
}

#[derive(Serialize)]
struct OwnerData<'a> {
    name: &'a str,
    category: &'static str,
    category_index: usize,
    transparent: bool,
    guessed: bool,
    color: String,
}

#[derive(Serialize)]
struct CategoryData {
    name: &'static str,
    color: String,
    transparent: bool,
}

#[derive(Serialize)]
struct InputData<'a> {
    path: &'a str,
    metric: &'a str,
    unit: &'a str,
    total: u128,
    frames: Frames,
    nodes: Nodes,
    /// `[node, bucket, weight, self owner, owner, anywhere set or null]`.
    entries: Vec<(u32, u32, u128, u32, u32, Option<u32>)>,
    sets: Vec<Vec<u32>>,
    pruned: Pruned,
    buckets: Vec<Bucket>,
    first_ns: Option<u64>,
    warmup: Option<Warmup>,
}

#[derive(Serialize)]
struct Frames {
    name: Vec<String>,
    owner: Vec<u32>,
    /// The rule that decided the frame, as `explain` names it, and where it is declared.
    rule: Vec<String>,
}

#[derive(Serialize)]
struct Nodes {
    parent: Vec<u32>,
    frame: Vec<u32>,
}

#[derive(Serialize)]
struct Pruned {
    nodes: usize,
    weight: u128,
}

#[derive(Serialize)]
struct Bucket {
    start_ns: Option<u64>,
    end_ns: Option<u64>,
}

#[derive(Serialize)]
struct Warmup {
    end_bucket: usize,
    time: String,
    finding: String,
}

fn css_color(c: inferno::flamegraph::color::Color) -> String {
    format!("rgb({},{},{})", c.r, c.g, c.b)
}

/// Writes the page of `report` whose inputs are `inputs` (in the report's order).
pub fn write(
    report: &Report,
    rules: &RuleSet,
    inputs: &[HtmlInput<'_>],
    min_share: f64,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let colors = attribution_colors(&report.owners, &report.inputs[0].aggregate.all);
    let data = Data {
        schema: "whose-page/1",
        min_share_percent: min_share * 100.0,
        owners: report
            .owners
            .iter()
            .zip(&colors)
            .map(|(o, &c)| OwnerData {
                name: &o.name,
                category: o.category.as_str(),
                // its position in the page's `categories` below, listed in `Category::ALL` order
                category_index: Category::ALL
                    .iter()
                    .position(|&c| c == o.category)
                    .unwrap_or(0),
                transparent: o.transparent,
                guessed: o.guessed,
                color: css_color(c),
            })
            .collect(),
        categories: Category::ALL
            .iter()
            .map(|&c| CategoryData {
                name: c.as_str(),
                color: css_color(category_color(c)),
                transparent: c.transparent_by_default(),
            })
            .collect(),
        inputs: report
            .inputs
            .iter()
            .zip(inputs)
            .map(|(input, html)| input_data(input, html, rules))
            .collect(),
    };
    let json = serde_json::to_string(&data).map_err(std::io::Error::other)?;
    write_page(report, &json, out)
}

/// The page around the data `json`: the header lines as the terminal has them, the panels
/// the script fills, and the script itself, all inline (the page needs no network).
fn write_page(report: &Report, json: &str, out: &mut dyn Write) -> std::io::Result<()> {
    let header = super::header_lines(report).join("\n");
    let title = report
        .inputs
        .iter()
        .map(|i| i.path.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    write!(
        out,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="generator" content="whose {version}">
<title>whose: {title}</title>
<style>{CSS}</style></head>
<body>
<header><h1>whose: {title}</h1>
<pre class="findings" id="header">{header}</pre>
<div class="controls" id="input-row"><label>input <select id="input"></select></label>
<label><input type="checkbox" id="diff"> diff against the first input (red: a larger share, blue: a smaller one)</label></div>
</header>
<main>
<section id="time-panel"><h2>owner view over time</h2><div id="timeline"></div><div class="muted" id="time-note"></div></section>
<section class="scroll"><h2>owners</h2>
<div class="controls"><label>rows <select id="by"><option value="owner">owners</option><option value="category">categories</option></select></label>
<span class="muted">total <span id="total"></span>; * transparent, ~ guessed; click a row for its functions</span></div>
<table class="owners" id="owners"></table>
<h2 style="margin-top:10px">details</h2><div id="details"></div></section>
<section><h2>flame graph, coloured by owner</h2>
<div class="controls"><input type="search" id="search" placeholder="search frames (regex)">
<span id="matched" class="muted"></span>
<label><input type="checkbox" id="icicle"> root at the bottom</label><button id="reset">reset zoom</button>
<span class="muted" id="pruned"></span></div>
<div id="flame-wrap"><canvas id="flame"></canvas></div></section>
</main>
<div id="tip"></div>
<script type="application/json" id="whose-data">{data}</script>
<script>{TIMELINE_JS}</script>
<script>{PAGE_JS}</script>
</body></html>
"#,
        version = env!("CARGO_PKG_VERSION"),
        title = escape(&title),
        header = escape(&header),
        data = script_safe(json),
    )
}

fn input_data<'a>(
    input: &'a crate::aggregate::report::InputReport,
    html: &HtmlInput<'_>,
    rules: &RuleSet,
) -> InputData<'a> {
    let page = &html.page;
    let rule = |f: &crate::aggregate::page::PageFrame| -> String {
        let text = super::explain::rule_text(&f.reason);
        match &f.reason {
            crate::classify::Reason::Rule { block, .. } => {
                format!(
                    "{text} ({})",
                    super::guess::origin(&rules.block(*block).origin)
                )
            }
            _ => text,
        }
    };
    let buckets = match html.timeline {
        Some(t) => t
            .slots
            .iter()
            .map(|s| Bucket {
                start_ns: Some(s.start),
                end_ns: Some(s.end),
            })
            .collect(),
        None => vec![Bucket {
            start_ns: None,
            end_ns: None,
        }],
    };
    InputData {
        path: &input.path,
        metric: &input.metric.name,
        unit: input.metric.unit.name(),
        total: input.aggregate.all.total,
        frames: Frames {
            name: page
                .frames
                .iter()
                .map(|f| html.profile.frame(f.id).name.to_string())
                .collect(),
            owner: page.frames.iter().map(|f| f.owner.0).collect(),
            rule: page.frames.iter().map(rule).collect(),
        },
        nodes: Nodes {
            parent: page.nodes.iter().map(|n| n.parent).collect(),
            frame: page.nodes.iter().map(|n| n.frame).collect(),
        },
        entries: page
            .entries
            .iter()
            .map(|(e, w)| (e.node, e.bucket, *w, e.self_owner.0, e.owner.0, e.anywhere))
            .collect(),
        sets: page
            .owner_sets
            .iter()
            .map(|s| s.iter().map(|o| o.0).collect())
            .collect(),
        pruned: Pruned {
            nodes: page.pruned_nodes,
            weight: page.pruned_weight,
        },
        buckets,
        first_ns: html.timeline.map(|t| t.first),
        warmup: html
            .timeline
            .and_then(|t| t.warmup.as_ref())
            .map(|w| Warmup {
                end_bucket: w.end_bucket,
                time: format!("{},", super::findings::time_arg(w.end)),
                finding: super::findings::text(&w.finding()),
            }),
    }
}

/// Text for HTML content.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// JSON inside a `<script>` element: `</` (a frame named `</script>`) must not end it early.
fn script_safe(json: &str) -> String {
    json.replace("</", "<\\/")
}

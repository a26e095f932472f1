//! `report --format html` (issue 27): one self-contained page whose embedded data gives, by
//! the page's own arithmetic (re-done here in Rust), exactly the numbers of
//! `report --format json`: every owner, every view, every input format. The page in a real
//! browser is `html_browser.rs`.

use super::common::*;
use super::hermetic::Hermetic;
use serde_json::Value;
use std::collections::BTreeMap;

/// The page's embedded data.
fn page_data(html: &str) -> Value {
    let start = html
        .find(r#"<script type="application/json" id="whose-data">"#)
        .expect("the data element");
    let body = &html[start..];
    let open = body.find('>').unwrap() + 1;
    let close = body.find("</script>").unwrap();
    serde_json::from_str(&body[open..close].replace("<\\/", "</")).expect("data is JSON")
}

/// The page's table of input `i` as its script computes it from the entries: weight per
/// (owner, view), and the total.
fn page_table(data: &Value, i: usize) -> (BTreeMap<(String, &'static str), u128>, u128) {
    let owners: Vec<&str> = data["owners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    let input = &data["inputs"][i];
    let sets = input["sets"].as_array().unwrap();
    let mut table = BTreeMap::new();
    let mut total = 0u128;
    let mut add = |o: u64, view, w| {
        *table
            .entry((owners[o as usize].to_string(), view))
            .or_insert(0u128) += w;
    };
    for e in input["entries"].as_array().unwrap() {
        let w = e[2].as_u64().unwrap() as u128;
        total += w;
        if e[5].is_null() {
            continue;
        }
        add(e[3].as_u64().unwrap(), "self", w);
        add(e[4].as_u64().unwrap(), "owner", w);
        for o in sets[e[5].as_u64().unwrap() as usize].as_array().unwrap() {
            add(o.as_u64().unwrap(), "anywhere", w);
        }
    }
    table.retain(|_, w| *w > 0);
    (table, total)
}

/// `report --format json`'s weights per (owner, view) of input `i`, and its total.
fn json_table(json: &Value, i: usize) -> (BTreeMap<(String, &'static str), u128>, u128) {
    let input = &json["inputs"][i];
    let mut table = BTreeMap::new();
    for o in input["owners"].as_array().unwrap() {
        for view in ["self", "owner", "anywhere"] {
            let w = o[view].as_u64().unwrap() as u128;
            if w > 0 {
                table.insert((o["name"].as_str().unwrap().to_string(), view), w);
            }
        }
    }
    (table, input["total"].as_u64().unwrap() as u128)
}

/// The page of `args` and the JSON report of the same arguments agree on every number.
fn assert_page_is_the_report(args: &[String]) -> (String, Value) {
    let mut page_args = vec!["report".to_string(), "--format".into(), "html".into()];
    page_args.extend(args.iter().cloned());
    let args_ref: Vec<&str> = page_args.iter().map(String::as_str).collect();
    let html = whose_ok(&args_ref);
    let json_args: Vec<&str> = args.iter().map(String::as_str).collect();
    let json = report_json(&json_args);
    let data = page_data(&html);
    let inputs = json["inputs"].as_array().unwrap().len();
    assert_eq!(data["inputs"].as_array().unwrap().len(), inputs);
    for i in 0..inputs {
        let (page, page_total) = page_table(&data, i);
        let (report, report_total) = json_table(&json, i);
        assert_eq!(page_total, report_total, "total of input {i}");
        assert_eq!(page, report, "owners of input {i}");
    }
    (html, data)
}

#[test]
fn the_page_of_every_format_shows_the_reports_numbers() {
    for args in [
        &["folded/seed-ktor-alloc.txt", "--unit", "bytes"][..],
        &["pprof/cpu.pb.gz"][..],
        &["perf/kotlin-orders.perf-script.txt.gz"][..],
        &["jfr/jdk17-alloc.jfr.gz"][..],
        &["speedscope/shares.speedscope.json"][..],
    ] {
        assert_page_is_the_report(&fixture_args(args));
    }
    let run = Hermetic::new();
    let mut args = vec![fixture_arg("perf/jvm-shop.perf.data")];
    args.extend(run.symbol_args());
    assert_page_is_the_report(&args);
}

#[test]
fn several_inputs_each_keep_their_numbers() {
    let args = fixture_args(&[
        "perf/c-malloc.perf.perf-script.txt.gz",
        "perf/kotlin-orders.perf-script.txt.gz",
    ]);
    let (html, _) = assert_page_is_the_report(&args);
    assert!(html.contains(r#"id="diff""#));
}

#[test]
fn the_page_is_self_contained_and_small() {
    let (html, data) =
        assert_page_is_the_report(&fixture_args(&["perf/kotlin-orders.perf-script.txt.gz"]));
    for external in [
        "http://", "https://", "src=\"", "href=\"", "@import", "url(",
    ] {
        let found = html
            .match_indices(external)
            .map(|(i, _)| &html[i.saturating_sub(60)..(i + 60).min(html.len())])
            .find(|context| !context.contains("www.w3.org/2000/svg"));
        assert!(found.is_none(), "the page reaches out: {found:?}");
    }
    // the page's code (everything but the data) stays small
    let data_len = serde_json::to_string(&data).unwrap().len();
    assert!(
        html.len() - data_len.min(html.len()) < 100_000,
        "{}",
        html.len()
    );
    // the header says what the terminal says, the warm-up of `--by time` included
    let table = whose_ok(&[
        "report",
        &fixture_arg("perf/kotlin-orders.perf-script.txt.gz"),
        "--by",
        "time",
    ]);
    let warmup = table
        .lines()
        .find(|l| l.contains("warning: the first"))
        .expect("the warm-up in the table's header");
    assert!(html.contains(warmup.trim()), "{warmup}");
    // time buckets, as --by time makes them, and the warm-up for the chart
    let input = &data["inputs"][0];
    assert_eq!(input["buckets"].as_array().unwrap().len(), 20);
    assert_eq!(input["warmup"]["end_bucket"], 3);
    assert_eq!(input["warmup"]["time"], "3235.532000,");
}

/// A page of a profile with many distinct stacks draws only what can be seen, and says how
/// much it pruned; the numbers stay whole.
#[test]
fn narrow_frames_are_pruned_and_counted() {
    let mut text = String::from("main;hot 100000\n");
    for i in 0..3000 {
        text.push_str(&format!("main;cold;f{i} 1\n"));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = write_temp(dir.path(), "many.folded", &text);
    let (_, data) = assert_page_is_the_report(&[path.to_str().unwrap().to_string()]);
    let input = &data["inputs"][0];
    // each f{i} is 1/103000 of the total, under the 1/20000 floor: all 3000 pruned, their
    // weight at `cold`
    assert_eq!(input["pruned"]["nodes"], 3000);
    assert_eq!(input["pruned"]["weight"], 3000);
    assert_eq!(input["nodes"]["parent"].as_array().unwrap().len(), 4);
}

#[test]
fn merged_pages_are_refused() {
    let a = fixture_arg("perf/kotlin-orders.perf-script.txt.gz");
    let err = whose_err(&["report", &a, &a, "--merge", "--format", "html"]);
    assert!(err.contains("--merge is not supported"), "{err}");
}

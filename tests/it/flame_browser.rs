//! Flame SVGs opened in a real browser (headless Chromium): clicking a legend entry runs
//! inferno's own search, and the "Matched: X%" it prints must be the legend's number, in
//! both colourings; labels too long for their frame keep their start (`name..`).
//!
//! The SVG is opened as it is written, with a small script added before its end that, once
//! inferno's `init` has run, clicks every legend entry (its `onclick` is the real one) and
//! writes the "Matched" text it produced into the entry as `data-matched`; Chromium's
//! `--dump-dom` then prints the document, which is parsed here.
//!
//! Needs `/usr/bin/chromium` (`apt-get install chromium`): `.ci/run` installs it and runs
//! this group with `cargo test -- --ignored flame_browser::`.

use super::common::*;
use super::hermetic::Hermetic;
use std::path::Path;
use std::process::Command;

const CHROMIUM: &str = "/usr/bin/chromium";

/// Clicks every legend entry after inferno's init, recording what its search matched.
const SHIM: &str = r#"<script><![CDATA[
window.addEventListener("load", function () {
  var entries = document.getElementsByClassName("whose-legend-entry");
  for (var i = 0; i < entries.length; i++) {
    entries[i].onclick();
    var matched = document.getElementById("matched");
    entries[i].setAttribute("data-matched", matched ? matched.textContent : "");
  }
  document.documentElement.setAttribute("data-shim", "done");
});
]]></script>"#;

/// The document after the shim ran, as Chromium serialises it.
fn open_in_chromium(svg: &str, dir: &Path) -> String {
    let end = svg.rfind("</svg>").expect("an SVG");
    let page = dir.join("graph.svg");
    std::fs::write(&page, format!("{}{SHIM}{}", &svg[..end], &svg[end..])).unwrap();
    let out = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        dom.contains("data-shim=\"done\""),
        "the shim did not run; chromium said: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dom
}

/// `(owner, data-share, the legend's label, what the search matched)` per legend entry.
fn legend(dom: &str) -> Vec<(String, f64, String, String)> {
    let mut out = Vec::new();
    for part in dom.split("class=\"whose-legend-entry\"").skip(1) {
        let attr = |name: &str| {
            let start = part.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
            part[start..start + part[start..].find('"').unwrap()].to_string()
        };
        let label_start = part.find("<text").unwrap();
        let label = &part[label_start..];
        let label = &label[label.find('>').unwrap() + 1..label.find("</text>").unwrap()];
        out.push((
            attr("data-owner"),
            attr("data-share").parse().unwrap(),
            label.to_string(),
            attr("data-matched"),
        ));
    }
    out
}

/// The texts drawn in the frames (after inferno's script fitted them to the frames).
fn frame_labels(dom: &str) -> Vec<String> {
    let frames = &dom[dom.find("<svg id=\"frames\"").unwrap()..];
    let frames = &frames[..frames.find("</svg>").unwrap()];
    frames
        .split("<text")
        .skip(1)
        .map(|t| {
            let open = t.find('>').unwrap();
            if t[..open].ends_with('/') {
                String::new() // `<text …/>`: too narrow for any label
            } else {
                t[open + 1..t.find("</text>").unwrap()].to_string()
            }
        })
        .collect()
}

fn draw(run: &Hermetic, profile: &[String], extra: &[&str]) -> String {
    let out = run.root().join("graph-source.svg");
    let mut args = vec!["flame"];
    args.extend(profile.iter().map(String::as_str));
    args.extend(["--min-width", "0"]);
    args.extend(extra);
    args.extend(["-o", out.to_str().unwrap()]);
    let o = run.whose(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(out).unwrap()
}

/// The report's shares of the same input (several summed with `--merge`).
fn report(run: &Hermetic, profile: &[String]) -> Shares {
    let mut args = vec!["report", "--format", "json", "--merge"];
    args.extend(profile.iter().map(String::as_str));
    let o = run.whose(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    shares_of(&serde_json::from_slice(&o.stdout).unwrap()).0
}

/// Every legend entry's search matches exactly the legend's share, to the 0.1 % both print,
/// and that share is the report's in `view`.
fn check_search_matches_legend(run: &Hermetic, profile: &[String], extra: &[&str], view: usize) {
    let svg = draw(run, profile, extra);
    let dir = tempfile::tempdir().unwrap();
    let dom = open_in_chromium(&svg, dir.path());
    let entries = legend(&dom);
    assert!(!entries.is_empty());
    let want_shares = report(run, profile);
    for (owner, share, label, matched) in &entries {
        let report_share = want_shares[owner][view];
        assert!(
            (share - report_share).abs() < 1e-4,
            "{owner}: legend {share} vs report {report_share}"
        );
        let shown = format!("{share:.1}%");
        assert!(
            label.contains(&format!(" {shown}")),
            "{owner}: label {label:?} shows {shown}"
        );
        // inferno prints exactly 100 without decimals
        let want = format!("Matched: {shown}");
        assert!(
            *matched == want || (shown == "100.0%" && matched == "Matched: 100%"),
            "{owner}: legend {label:?}, search {matched:?}"
        );
    }
    // labels that do not fit keep their start: `name..`, never `..name` (a frame room for
    // the dots alone shows `..`, as inferno does)
    let labels = frame_labels(&dom);
    assert!(
        labels.iter().any(|l| l.len() > 2 && l.ends_with("..")),
        "{labels:?}"
    );
    let cut_at_start: Vec<&String> = labels
        .iter()
        .filter(|l| l.len() > 2 && l.starts_with(".."))
        .collect();
    assert!(cut_at_start.is_empty(), "{cut_at_start:?}");
}

fn jvm_profile(run: &Hermetic) -> Vec<String> {
    let mut a = vec![
        fixture_arg("perf/jvm-shop.perf.data"),
        "--rules".into(),
        fixture_arg("rules/jvm-shop.toml"),
        "--no-presets".into(),
    ];
    a.extend(run.symbol_args());
    a
}

#[test]
#[ignore = "needs chromium"]
fn legend_search_matches_the_owner_view_share() {
    let run = Hermetic::new();
    check_search_matches_legend(&run, &jvm_profile(&run), &[], OWNER);
}

#[test]
#[ignore = "needs chromium"]
fn legend_search_matches_the_on_stack_share_when_coloured_by_frame() {
    let run = Hermetic::new();
    check_search_matches_legend(&run, &jvm_profile(&run), &["--color-by", "self"], ANYWHERE);
}

#[test]
#[ignore = "needs chromium"]
fn legend_search_matches_for_summed_profiles() {
    let profile = vec![
        fixture_arg("repeats/churn-1.folded"),
        fixture_arg("repeats/churn-2.folded"),
        fixture_arg("repeats/churn-3.folded"),
    ];
    check_search_matches_legend(&Hermetic::new(), &profile, &[], OWNER);
}

//! `whose diff` (issue 15): totals and weight deltas per owner and view, sorted by the size
//! of the change, and a noise test whose counts agree with the marks it puts on the rows.

use super::common::*;
use serde_json::Value;

fn churn(i: usize) -> String {
    fixture_arg(&format!("repeats/churn-{i}.folded"))
}

const RULES: [&str; 3] = ["--rules", "", "--no-presets"];

fn args<'a>(base: &[&'a str], new: &[&'a str], rules: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["diff"];
    a.extend(base);
    a.push("--against");
    a.extend(new);
    a.extend([RULES[0], rules, RULES[2]]);
    a.extend(extra);
    a
}

/// `churn-1.folded` with every count multiplied by `factor`, written into `dir`.
fn scaled(dir: &std::path::Path, factor: u64) -> String {
    let text = std::fs::read_to_string(fixture("repeats/churn-1.folded")).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let (stack, count) = line.rsplit_once(' ').unwrap();
        let count: u64 = count.parse().unwrap();
        out.push_str(&format!("{stack} {}\n", count * factor));
    }
    let path = write_temp(dir, &format!("churn-x{factor}.folded"), out);
    path.to_str().unwrap().to_string()
}

/// The table's rows: the lines after the blank line and the titles.
fn table_rows(text: &str) -> Vec<&str> {
    text.lines().skip_while(|l| !l.is_empty()).skip(2).collect()
}

#[test]
fn a_program_35_percent_slower_shows_its_total_and_weight_deltas() {
    // the same stacks, every count × 1.35: every share is unchanged, so a share-only diff
    // showed nothing at all
    let dir = tempfile::tempdir().unwrap();
    let (base, new) = (scaled(dir.path(), 20), scaled(dir.path(), 27));
    let rules = fixture_arg("rules/c-malloc-sym.toml");
    let text = whose_ok(&args(&[&base], &[&new], &rules, &[]));
    // 1462 samples × 20 and × 27
    assert!(
        text.contains("total: 29240 → 39474, +10234 (+35.0%): unknown\n"),
        "{text}"
    );
    let json: Value = serde_json::from_str(&whose_ok(&args(
        &[&base],
        &[&new],
        &rules,
        &["--format", "json"],
    )))
    .unwrap();
    assert_eq!(json["total"]["delta"].as_f64(), Some(10234.0));
    for row in json["rows"].as_array().unwrap() {
        let w = &row["weight"];
        let relative = w["relative"].as_f64().unwrap();
        assert!((relative - 35.0).abs() < 1e-9, "{row}");
        assert!(
            row["share"]["delta"].as_f64().unwrap().abs() < 1e-9,
            "{row}"
        );
        // the shares did not move: no change, however the weights grew
        assert_eq!(row["judgement"], "noise", "same shares: {row}");
    }
    // largest change first: user.owner (526 × 7 = 3682) is not the largest; libc.anywhere is
    let deltas: Vec<f64> = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["weight"]["delta"].as_f64().unwrap().abs())
        .collect();
    assert!(deltas.windows(2).all(|w| w[0] >= w[1]), "{deltas:?}");
    assert!(
        table_rows(&text)[0].starts_with("libc       anywhere  21020"),
        "{text}"
    );
    // per request: every weight divided by N
    let per: Value = serde_json::from_str(&whose_ok(&args(
        &[&base],
        &[&new],
        &rules,
        &["--format", "json", "--per", "20"],
    )))
    .unwrap();
    assert_eq!(per["total"]["base"]["median"].as_f64(), Some(1462.0));
    assert_eq!(per["total"]["new"]["median"].as_f64(), Some(1973.7));
    let md = whose_ok(&args(
        &[&base],
        &[&new],
        &rules,
        &["--format", "markdown", "--per", "20"],
    ));
    assert!(
        md.contains("- metric: samples (count), per request (--per 20)"),
        "{md}"
    );
    assert!(
        md.contains("- total: 1462 → 1973.7, +511.7 (+35.0%): unknown"),
        "{md}"
    );
}

#[test]
fn the_header_counts_the_marks_the_rows_carry() {
    let rules = fixture_arg("rules/c-malloc-sym.toml");
    for (base, new) in [
        (vec![churn(1), churn(2)], vec![churn(3)]),
        (vec![churn(1)], vec![churn(3)]),
        (vec![churn(1), churn(2)], vec![churn(3), churn(1)]),
    ] {
        let base: Vec<&str> = base.iter().map(String::as_str).collect();
        let new: Vec<&str> = new.iter().map(String::as_str).collect();
        let text = whose_ok(&args(&base, &new, &rules, &[]));
        let rows = table_rows(&text);
        let marks = |word: &str| {
            rows.iter()
                .filter(|l| {
                    l.split("  ")
                        .filter(|c| !c.is_empty())
                        .last()
                        .is_some_and(|c| c.trim_start().starts_with(word))
                })
                .count()
        };
        let want = format!(
            "{} row(s): {} change(s), {} noise, {} unknown",
            rows.len(),
            marks("change"),
            marks("noise"),
            marks("unknown")
        );
        assert!(text.contains(&want), "{want} not in\n{text}");
        assert_eq!(
            marks("change") + marks("noise") + marks("unknown"),
            rows.len(),
            "{text}"
        );
    }
}

#[test]
fn each_mark_carries_the_interval_of_the_share_change() {
    let rules = fixture_arg("rules/c-malloc-sym.toml");
    let (c1, c2, c3) = (churn(1), churn(2), churn(3));
    let text = whose_ok(&args(&[&c1, &c2], &[&c3], &rules, &[]));
    // user.owner: 526 and 554 samples, then 563: +1.36 points of share, ±1.979 × 1.315
    // (tests/it/gate.rs derives the standard error and Welch's df by hand)
    let row = text
        .lines()
        .find(|l| l.starts_with("user ") && l.contains(" owner "))
        .unwrap();
    let cells: Vec<&str> = row
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        cells,
        [
            "user",
            "owner",
            "540",
            "563",
            "+23",
            "+4.3%",
            "+1.36 pp",
            "noise [-1.24, +3.97 pp]"
        ],
        "{text}"
    );
    assert!(
        text.contains("Benjamini–Hochberg across the rows; false discoveries at most 5%"),
        "{text}"
    );
}

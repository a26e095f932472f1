//! Helpers shared by the integration tests: run the built binary, read its JSON, compare
//! shares with the corpus oracle's expected files (`fixtures/expected/*.json`).

#![allow(dead_code)]

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Output;

pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

pub fn whose(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_whose"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run whose")
}

/// Runs `whose` and expects exit 0, returning stdout.
pub fn whose_ok(args: &[&str]) -> String {
    let out = whose(args);
    assert!(
        out.status.success(),
        "whose {args:?} failed ({:?}):\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Runs `whose` expecting exit 2 and returns stderr.
pub fn whose_err(args: &[&str]) -> String {
    let out = whose(args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(
        out.status.code(),
        Some(2),
        "whose {args:?} should exit 2; stderr:\n{stderr}\nstdout:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    stderr
}

/// Shares (percent) per owner and view from `whose report --format json` of input 0.
pub type Shares = BTreeMap<String, [f64; 3]>;

pub fn report_shares(args: &[&str]) -> (Shares, u128) {
    let mut full = vec!["report", "--format", "json"];
    full.extend_from_slice(args);
    let json: Value = serde_json::from_str(&whose_ok(&full)).expect("json");
    assert_eq!(json["schema"], "whose/1");
    shares_of(&json)
}

/// Shares (percent) per owner and view, and the total, of input 0 of a `whose/1` document.
pub fn shares_of(json: &Value) -> (Shares, u128) {
    let input = &json["inputs"][0];
    let total = input["total"]
        .as_u64()
        .map(u128::from)
        .unwrap_or_else(|| input["total"].as_f64().expect("total") as u128);
    let mut shares = Shares::new();
    for o in input["owners"].as_array().expect("owners") {
        let w = |k: &str| o[k].as_f64().expect("weight") * 100.0 / total as f64;
        shares.insert(
            o["name"].as_str().unwrap().to_string(),
            [w("self"), w("owner"), w("anywhere")],
        );
    }
    (shares, total)
}

/// The oracle's shares from an expected JSON file, with its label `other` (frames no rule
/// matched) renamed to whose's `unclassified`.
pub fn expected_shares(name: &str) -> (Shares, f64) {
    let text = std::fs::read_to_string(fixture(&format!("expected/{name}"))).unwrap();
    let json: Value = serde_json::from_str(&text).unwrap();
    let mut shares = Shares::new();
    for (label, v) in json["shares"].as_object().unwrap() {
        let label = if label == "other" {
            "unclassified"
        } else {
            label
        };
        shares.insert(
            label.to_string(),
            [
                v["self"].as_f64().unwrap(),
                v["owner"].as_f64().unwrap(),
                v["anywhere"].as_f64().unwrap(),
            ],
        );
    }
    (shares, json["total"].as_f64().unwrap())
}

/// Asserts that every owner's three shares agree within `tolerance` percentage points,
/// in both directions (an owner missing on one side counts as 0 there).
pub fn assert_shares_agree(got: &Shares, want: &Shares, tolerance: f64) {
    let mut problems = Vec::new();
    let names: std::collections::BTreeSet<&String> = got.keys().chain(want.keys()).collect();
    for name in names {
        let g = got.get(name).copied().unwrap_or([0.0; 3]);
        let w = want.get(name).copied().unwrap_or([0.0; 3]);
        for (i, view) in ["self", "owner", "anywhere"].iter().enumerate() {
            if (g[i] - w[i]).abs() > tolerance {
                problems.push(format!(
                    "{name}.{view}: whose {:.4}% vs oracle {:.4}%",
                    g[i], w[i]
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "shares disagree:\n{}",
        problems.join("\n")
    );
}

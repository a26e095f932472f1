//! Memory grows with distinct frames and stacks, at a bounded cost each (issue 17): a folded
//! file of 5 M distinct stacks (about 105 MB) aborted under a 2 GB address-space limit at
//! about 1 KB per distinct frame; it must complete under that limit with the right total.

use super::common::*;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::Command;

/// Writes `stacks` distinct stacks `main;run;fn_I COUNT` (the shape of the file: two
/// shared frames and one distinct frame per line, counts 1..=7) and returns their total.
fn distinct_stacks(path: &Path, stacks: u64) -> u64 {
    let mut out = BufWriter::new(std::fs::File::create(path).unwrap());
    let mut total = 0;
    for i in 0..stacks {
        let count = i % 7 + 1;
        writeln!(out, "main;run;fn_{i} {count}").unwrap();
        total += count;
    }
    out.flush().unwrap();
    total
}

/// `whose ARGS` under an address-space limit of `bytes` (util-linux `prlimit`).
fn whose_limited(bytes: u64, args: &[&str]) -> std::process::Output {
    Command::new("prlimit")
        .arg(format!("--as={bytes}"))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_whose"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run prlimit (util-linux)")
}

#[test]
#[ignore = "writes 105 MB and reads 5 M distinct stacks: about a minute in a debug build; .ci/run runs it"]
fn five_million_distinct_stacks_fit_in_2_gb() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("distinct-5m.folded");
    let total = distinct_stacks(&path, 5_000_000);
    let path = path.to_str().unwrap();
    let args = ["report", path, "--format", "json", "--top", "3"];
    let out = whose_limited(2 << 30, &args);
    let json = ok_stdout(&args, out);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let input = &json["inputs"][0];
    assert_eq!(input["total"], total);
    // every frame is unclassified; the heaviest leaves are those of count 7, ties by name
    let mut heaviest: Vec<String> = (6..5_000_000u64)
        .step_by(7)
        .map(|i| format!("fn_{i}"))
        .collect();
    heaviest.sort();
    heaviest.truncate(3);
    let names = |list: &str| -> Vec<String> {
        input[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["frame"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names("top_self_frames"), heaviest);
    // `main` and `run` are on every stack
    assert_eq!(names("unclassified_frames"), ["main", "run", &heaviest[0]]);
    assert_eq!(input["unclassified_frames"][0]["weight"], total);
}

//! Helpers shared by the integration tests: run the built binary, read its JSON, compare
//! shares with the corpus oracle's expected files (`fixtures/expected/*.json`), make
//! temporary and gzipped inputs. perf.data runs go through `hermetic.rs` instead.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

/// A fixture's path as a command-line argument.
pub fn fixture_arg(rel: &str) -> String {
    fixture(rel).to_str().unwrap().to_string()
}

/// Arguments with fixture-relative paths (any with a `/` that is not an option) made
/// absolute; options kept.
pub fn fixture_args(list: &[&str]) -> Vec<String> {
    list.iter()
        .map(|a| {
            if a.contains('/') && !a.starts_with('-') {
                fixture_arg(a)
            } else {
                a.to_string()
            }
        })
        .collect()
}

/// The built `whose`, without colour (so output compares as plain text) and with a table
/// width no line reaches (`COLUMNS`), so tests that look for a note or a row find it on one
/// line whatever the terminal running them; the layout itself is checked by the goldens (at
/// 80 columns) and `terminal.rs`, which set or remove `COLUMNS` themselves.
pub fn command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_whose"));
    c.env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .env("COLUMNS", "100000");
    c
}

pub fn whose(args: &[&str]) -> Output {
    command().args(args).output().expect("run whose")
}

/// Asserts `whose ARGS` exited 0 and returns its stdout.
pub fn ok_stdout(args: &[&str], out: Output) -> String {
    assert!(
        out.status.success(),
        "whose {args:?} failed ({:?}):\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Runs `whose` and expects exit 0, returning stdout.
pub fn whose_ok(args: &[&str]) -> String {
    ok_stdout(args, whose(args))
}

/// Runs `whose` expecting exit 2 and returns stderr.
pub fn whose_err(args: &[&str]) -> String {
    err_stderr(args, whose(args))
}

/// Asserts `whose ARGS` exited 2 (an input or usage error), not in a panic; returns stderr.
pub fn err_stderr(args: &[&str], out: Output) -> String {
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

/// Index of each view in a [`Shares`] entry.
pub const SELF: usize = 0;
pub const OWNER: usize = 1;
pub const ANYWHERE: usize = 2;
const VIEWS: [&str; 3] = ["self", "owner", "anywhere"];

/// `whose report --format json ARGS`, parsed (the run must succeed).
pub fn report_json(args: &[&str]) -> Value {
    let mut full = vec!["report", "--format", "json"];
    full.extend_from_slice(args);
    serde_json::from_str(&whose_ok(&full)).expect("json")
}

pub fn report_shares(args: &[&str]) -> (Shares, u128) {
    let json = report_json(args);
    assert_eq!(json["schema"], "whose/1");
    shares_of(&json)
}

/// Shares of the `perf script` dump `fixtures/perf/{recording}.perf-script.txt.gz` with the
/// corpus rules `fixtures/rules/{rules}.toml`, counting samples as the corpus oracle does.
pub fn script_shares(recording: &str, rules: &str) -> (Shares, u128) {
    report_shares(&[
        &fixture_arg(&format!("perf/{recording}.perf-script.txt.gz")),
        "--rules",
        &fixture_arg(&format!("rules/{rules}.toml")),
        "--no-presets",
        "--metric",
        "samples",
    ])
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

/// Where a no-flags report of `file` misses its hand count: user code's owner-view share more
/// than a point from `hand`, or more than 1 % unclassified (issue 53's and 57's bar).
pub fn off_the_hand_count(file: &str, json: &Value, hand: f64) -> Option<String> {
    let (shares, _) = shares_of(json);
    let user = shares.get("user").map_or(0.0, |s| s[OWNER]);
    let unclassified = shares.get("unclassified").map_or(0.0, |s| s[OWNER]);
    ((user - hand).abs() > 1.0 || unclassified > 1.0).then(|| {
        format!("{file}: user {user:.2}% (hand {hand:.2}%), unclassified {unclassified:.2}%")
    })
}

/// The notes of input 0 of a `whose/1` document.
pub fn notes(json: &Value) -> Vec<String> {
    json["inputs"][0]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect()
}

/// (truncated, all) user stacks from the note
/// `DWARF unwinding: N of M user stacks truncated (X%)...`.
pub fn truncated(json: &Value) -> (u64, u64) {
    let notes = notes(json);
    let note = notes
        .iter()
        .find(|n| n.starts_with("DWARF unwinding: "))
        .unwrap_or_else(|| panic!("no DWARF unwinding note in {notes:?}"));
    let words: Vec<&str> = note.split_whitespace().collect();
    (words[2].parse().unwrap(), words[4].parse().unwrap())
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

/// One share that differs by more than the tolerance.
pub struct Difference {
    pub line: String,
    pub owner: String,
    pub view: usize,
    /// `got - want`, in percentage points.
    pub delta: f64,
}

/// Every owner's share in every view that differs by more than `tolerance` percentage
/// points, in both directions (an owner missing on one side counts as 0 there).
pub fn differences(got: &Shares, want: &Shares, tolerance: f64) -> Vec<Difference> {
    let names: BTreeSet<&String> = got.keys().chain(want.keys()).collect();
    let mut out = Vec::new();
    for name in names {
        let g = got.get(name).copied().unwrap_or([0.0; 3]);
        let w = want.get(name).copied().unwrap_or([0.0; 3]);
        for (view, label) in VIEWS.iter().enumerate() {
            let delta = g[view] - w[view];
            if delta.abs() > tolerance {
                out.push(Difference {
                    line: format!(
                        "{name}.{label}: whose {:.4}% vs expected {:.4}% ({delta:+.4} pp)",
                        g[view], w[view]
                    ),
                    owner: name.clone(),
                    view,
                    delta,
                });
            }
        }
    }
    out
}

/// Asserts that every owner's three shares agree within `tolerance` percentage points.
pub fn assert_shares_agree(got: &Shares, want: &Shares, tolerance: f64) {
    let problems: Vec<String> = differences(got, want, tolerance)
        .into_iter()
        .map(|d| d.line)
        .collect();
    assert!(
        problems.is_empty(),
        "shares disagree:\n{}",
        problems.join("\n")
    );
}

/// A share table, one owner a line, for failure messages.
pub fn table(s: &Shares) -> String {
    s.iter()
        .map(|(k, v)| {
            format!(
                "  {k:14} self {:7.3}  owner {:7.3}  anywhere {:7.3}",
                v[SELF], v[OWNER], v[ANYWHERE]
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A temporary file holding `bytes`, deleted when dropped.
pub fn temp_file(bytes: impl AsRef<[u8]>) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(bytes.as_ref()).unwrap();
    f
}

/// Writes `bytes` to `dir/name`, for inputs whose file name matters.
pub fn write_temp(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// A gzipped file's bytes.
pub fn gunzip_file(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// `perf` with `records` (whole kernel records, header included) appended to its data
/// section; the feature sections after it move.
pub fn with_records(perf: &[u8], records: &[Vec<u8>]) -> Vec<u8> {
    let mut bytes = perf.to_vec();
    let u64_at = |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
    let (data, size) = (u64_at(&bytes, 40) as usize, u64_at(&bytes, 48) as usize);
    let end = data + size;
    let added: Vec<u8> = records.concat();
    let features = bytes[72..104]
        .iter()
        .map(|b| b.count_ones() as usize)
        .sum::<usize>();
    for i in 0..features {
        let at = end + i * 16;
        let offset = u64_at(&bytes, at) + added.len() as u64;
        bytes[at..at + 8].copy_from_slice(&offset.to_le_bytes());
    }
    bytes[48..56].copy_from_slice(&((size + added.len()) as u64).to_le_bytes());
    bytes.splice(end..end, added);
    bytes
}

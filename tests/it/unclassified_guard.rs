//! Issue 29 item 5, as issue 54 made it a bound: no verdict that unclassified weight could
//! flip. Where frames no rule and no guess names decide more than `--max-unclassified`
//! (default 5 %) of its view, a gate requirement is decided when it holds (or fails) with
//! that weight given to the subject and to others, and refused (exit 2) otherwise, naming the
//! heaviest prefix and the flag that claims it; JSON verdicts carry the figure, and the
//! report's quality line shows it.

use super::common::*;
use serde_json::Value;

/// By hand: 4 samples; `app.work` (user by `--user app.`) is the leaf of 3, `libx.parse`
/// (no rule, no guess with `--no-presets`) of 1. Unclassified decides 25 % of every view:
/// the leaf (self), the owner frame (owner) and a frame on the stack (anywhere) of 1 in 4.
const HAND_MADE: &str = "app.main;app.work 3\napp.main;libx.parse 1\n";

fn run_gate(path: &str, require: &str, extra: &[&str]) -> (Option<i32>, String, String) {
    let mut args = vec![
        "gate",
        path,
        "--no-presets",
        "--user",
        "app.",
        "--point-estimate",
    ];
    args.extend_from_slice(extra);
    args.extend(["--require", require]);
    let out = whose(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        stderr,
    )
}

#[test]
fn a_requirement_decided_by_unclassified_frames_is_refused_with_the_figure_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_temp(dir.path(), "hand.folded", HAND_MADE);
    let path = file.to_str().unwrap();
    // (in the anywhere view user is on every stack: 100 %, nothing to bound)
    for view in ["self", "owner"] {
        // 75 % measured, 25 % unclassified: the share lies in [75, 100], so 90 % could go
        // either way...
        let (code, _, stderr) = run_gate(path, &format!("user.{view} >= 90%"), &[]);
        assert_eq!(code, Some(2), "{view}: {stderr}");
        assert!(
            stderr.contains("could flip the verdict")
                && stderr.contains("the share lies in [75.00–100.00%]")
                && stderr.contains(
                    "25.0% of its weight is decided by frames no rule and no guess names \
                     (`unclassified`; --max-unclassified 5%)"
                ),
            "{stderr}"
        );
        assert!(
            stderr.contains("the heaviest are under `libx.`; `--user libx.` claims them"),
            "{stderr}"
        );
        // ...and 50 % holds whoever it belongs to
        let (code, stdout, stderr) = run_gate(path, &format!("user.{view} >= 50%"), &[]);
        assert_eq!(code, Some(0), "{view}: {stderr}");
        assert!(
            stdout.contains("25.0% unclassified (over --max-unclassified 5%)"),
            "{stdout}"
        );
    }
    // 25 % is allowed by a wider guard, and 100 % turns it off: then the share as measured
    // decides (75 % < 90 %)
    for guard in ["30%", "100%"] {
        let (code, _, stderr) = run_gate(path, "user.owner >= 90%", &["--max-unclassified", guard]);
        assert_eq!(code, Some(1), "{guard}: {stderr}");
    }
    // a guard at 20 % still bounds 25 %
    let (code, _, _) = run_gate(path, "user.owner >= 90%", &["--max-unclassified", "20%"]);
    assert_eq!(code, Some(2));
    // claiming the frames takes the bounds away: libx is now somebody's (user: 100 %)
    let (code, _, stderr) = run_gate(path, "user.owner >= 90%", &["--user", "libx."]);
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn a_requirement_on_the_unclassified_weight_itself_is_decided() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_temp(dir.path(), "hand.folded", HAND_MADE);
    let path = file.to_str().unwrap();
    for (require, code) in [
        ("unclassified.owner <= 10%", 1),
        ("owner:unclassified.self <= 30%", 0),
        ("category:unknown.anywhere <= 10%", 1),
        ("unknown.owner <= 30%", 0),
    ] {
        let (got, _, stderr) = run_gate(path, require, &[]);
        assert_eq!(got, Some(code), "{require}: {stderr}");
    }
}

#[test]
fn json_verdicts_and_the_report_carry_the_unclassified_figure() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_temp(dir.path(), "hand.folded", HAND_MADE);
    let path = file.to_str().unwrap();
    let (code, stdout, stderr) = run_gate(
        path,
        "user.owner >= 50%",
        &["--max-unclassified", "30%", "--format", "json"],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let verdict: Value = serde_json::from_str(&stdout).unwrap();
    let requirement = &verdict["requirements"][0];
    assert_eq!(requirement["unclassified_percent"], 25.0, "{verdict:#}");
    assert_eq!(requirement["inputs"][0]["unclassified_percent"], 25.0);
    // refused where the unclassified weight could flip it, the JSON verdict says why
    let (code, stdout, _) = run_gate(path, "user.owner >= 90%", &["--format", "json"]);
    assert_eq!(code, Some(2));
    let refused: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(refused["status"], "error");
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .contains("--max-unclassified 5%"),
        "{refused:#}"
    );
    // the report: the owner-view figure in the quality line and the JSON
    let table = whose_ok(&["report", path, "--no-presets", "--user", "app."]);
    assert!(
        table
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains("unclassified 25.0% of owner frames"),
        "{table}"
    );
    let json = report_json(&[path, "--no-presets", "--user", "app."]);
    assert_eq!(json["inputs"][0]["quality"]["unclassified_owner"], 1);
}

#[test]
fn the_seeds_gate_is_refused_without_its_guesses_and_decided_with_them() {
    // seed-ktor-alloc without presets and guesses: every byte's owner frame is unclassified
    // Kotlin reflection; the refusal names the prefix to claim
    let seed = fixture_arg("folded/seed-ktor-alloc.txt");
    let out = whose(&[
        "gate",
        &seed,
        "--unit",
        "bytes",
        "--no-presets",
        "--no-guess",
        "--require",
        "user.owner >= 25%",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("100.0% of its weight is decided by frames no rule and no guess"));
    assert!(stderr.contains("`--user kotlin.`"), "{stderr}");
    // with no flags the kotlin preset names them: a verdict, the hand rules' FAIL
    let out = whose(&[
        "gate",
        &seed,
        "--unit",
        "bytes",
        "--require",
        "user.owner >= 25%",
    ]);
    assert_eq!(out.status.code(), Some(1));
}

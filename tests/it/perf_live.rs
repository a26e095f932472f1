//! Recorded live, on this machine: small C programs of the repo's own (`fixtures/src/`) built
//! with `cc` and recorded with `perf record`, then reported by whose. They need a C compiler,
//! perf and permission to record (perf_event_paranoid), so they are ignored unless asked for:
//! `.ci/run` runs them with `cargo test -- --ignored perf_live::` where `perf record` works.
//! Asked for, a machine that cannot build or record fails them.
//!
//! The recordings are of this machine, so whose reads them with this machine's libraries,
//! not with the hermetic options (`hermetic.rs`) made for the committed recordings.

use super::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A program under `fixtures/src/` and how it is built and run.
struct Program {
    source: &'static str,
    binary: &'static str,
    frame_pointers: bool,
    args: &'static [&'static str],
}

/// Nearly all of its CPU time in `whose_live_spin`.
const SPIN: Program = Program {
    source: "spin.c",
    binary: "spin",
    frame_pointers: true,
    args: &[],
};

/// A ~60-frame recursion, several KiB of stack, without frame pointers.
const DEEP: Program = Program {
    source: "deep.c",
    binary: "deep",
    frame_pointers: false,
    args: &["20000"],
};

/// The same recursion with frame pointers.
const DEEP_FP: Program = Program {
    binary: "deepfp",
    frame_pointers: true,
    ..DEEP
};

/// Builds `program` into `dir` (once) and records it with `perf record -q -F 999 EVENTS` into
/// `dir/OUT.data`; panics with the reason where this machine cannot.
fn record(dir: &Path, program: &Program, events: &[&str], out: &str) -> PathBuf {
    let bin = dir.join(program.binary);
    if !bin.exists() {
        let fp = if program.frame_pointers {
            "-fno-omit-frame-pointer"
        } else {
            "-fomit-frame-pointer"
        };
        let cc = Command::new("cc")
            .args(["-O1", "-g", fp, "-o"])
            .arg(&bin)
            .arg(fixture(&format!("src/{}", program.source)))
            .output()
            .unwrap_or_else(|e| panic!("no C compiler (cc: {e})"));
        assert!(
            cc.status.success(),
            "cc failed: {}",
            String::from_utf8_lossy(&cc.stderr)
        );
    }
    let data = dir.join(format!("{out}.data"));
    let perf = Command::new("perf")
        .args(["record", "-q", "-F", "999"])
        .args(events)
        .arg("-o")
        .arg(&data)
        .arg("--")
        .arg(&bin)
        .args(program.args)
        .output()
        .unwrap_or_else(|e| panic!("no perf ({e})"));
    let paranoid =
        std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap_or_default();
    assert!(
        perf.status.success() && data.is_file(),
        "perf record failed (perf_event_paranoid = {}): {}",
        paranoid.trim(),
        String::from_utf8_lossy(&perf.stderr)
    );
    data
}

// ---------------------------------------------------------------- frame pointers, zstd

#[test]
#[ignore = "needs cc, and perf permitted to record: .ci/run runs it where it is"]
fn live_perf_record_g_reports_the_user_owner() {
    let dir = tempfile::tempdir().unwrap();
    let data = record(dir.path(), &SPIN, &["-g"], "perf");
    let rules = dir.path().join("rules.toml");
    std::fs::write(
        &rules,
        "[[owner]]\nname = \"spin\"\ncategory = \"user\"\nprefix = [\"whose_live_\", \"main\"]\n\n\
         [[owner]]\nname = \"libc\"\ncategory = \"runtime\"\nmodule = [\"libc.so*\", \"ld-linux*\"]\n\n\
         [[owner]]\nname = \"kernel\"\ncategory = \"kernel\"\nmodule = [\"[kernel.kallsyms]\", \"[vdso]\"]\n",
    )
    .unwrap();
    let (got, total) = report_shares(&[
        data.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
        "--no-presets",
    ]);
    assert!(total > 0);
    // the program spins in whose_live_spin (found in the binary at its recorded path):
    // nearly all CPU is owned by it, self included
    assert!(got["spin"][1] > 80.0, "{got:?}");
    assert!(got["spin"][0] > 60.0, "{got:?}");
    assert!(
        !got.contains_key("unclassified") || got["unclassified"][1] < 5.0,
        "{got:?}"
    );
}

#[test]
#[ignore = "needs cc, and perf permitted to record: .ci/run runs it where it is"]
fn live_perf_record_dwarf_is_unwound() {
    let dir = tempfile::tempdir().unwrap();
    let data = record(dir.path(), &SPIN, &["--call-graph", "dwarf,1024"], "perf");
    let rules = dir.path().join("rules.toml");
    std::fs::write(
        &rules,
        "[[owner]]\nname = \"spin\"\ncategory = \"user\"\nprefix = [\"whose_live_\", \"main\"]\n",
    )
    .unwrap();
    let args = [
        "report",
        data.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
        "--no-presets",
    ];
    // the user stacks come from unwinding the 1 KiB stack copies (tests/it/perf_dwarf.rs has
    // the details), and the header says how that went
    let table = whose_ok(&args);
    assert!(table.contains("DWARF unwinding: "), "{table}");
    let (got, _) = report_shares(&args[1..]);
    assert!(got["spin"][1] > 80.0, "{got:?}");
}

#[test]
#[ignore = "needs cc, and perf permitted to record: .ci/run runs it where it is"]
fn live_perf_record_zstd_compressed_is_read() {
    // `perf record -z`: records in zstd-compressed chunks, and (perf 6.1) empty build ids
    let dir = tempfile::tempdir().unwrap();
    let data = record(dir.path(), &SPIN, &["-z", "-g"], "perf");
    let (got, total) = report_shares(&[
        data.to_str().unwrap(),
        "--user",
        "whose_live_",
        "--no-presets",
    ]);
    assert!(total > 0);
    assert!(got["user"][1] > 80.0, "{got:?}");
}

// ---------------------------------------------------------------- DWARF stack copies

/// `DEEP` recorded with DWARF call graphs and a stack copy of `copy` bytes.
fn record_deep(dir: &Path, copy: u32) -> PathBuf {
    let call_graph = format!("--call-graph=dwarf,{copy}");
    record(
        dir,
        &DEEP,
        &["-e", "cpu-clock", &call_graph],
        &format!("deep-{copy}"),
    )
}

/// `entry` is only on a stack that reaches main; `work` is the recursion and its leaf.
const RULES: &str = r#"
[[owner]]
name = "entry"
category = "user"
prefix = ["main"]

[[owner]]
name = "work"
category = "user"
prefix = ["descend", "leaf_work"]
"#;

fn report(dir: &Path, data: &Path) -> (Shares, Value, String) {
    report_metric(dir, data, "samples")
}

fn report_metric(dir: &Path, data: &Path, metric: &str) -> (Shares, Value, String) {
    let rules = dir.join("rules.toml");
    std::fs::write(&rules, RULES).unwrap();
    let out = command()
        .args([
            "report",
            "--format",
            "json",
            "--no-presets",
            "--metric",
            metric,
        ])
        .arg(data)
        .arg("--rules")
        .arg(&rules)
        .arg("--binary-path")
        .arg(dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{stderr}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    (shares_of(&json).0, json, stderr)
}

#[test]
#[ignore = "needs cc, and perf permitted to record: .ci/run runs it where it is"]
fn a_tiny_stack_copy_reports_a_large_truncated_share_and_the_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = record_deep(dir.path(), 512);
    let (got, json, stderr) = report(dir.path(), &tiny);
    let (cut, all) = truncated(&json);
    assert!(all >= 100, "only {all} samples");
    assert!(
        cut * 100 >= all * 90,
        "{cut} of {all} truncated: {:?}",
        notes(&json)
    );
    assert!(
        stderr.contains("longer than the 512-byte stack copy")
            && stderr.contains("--call-graph dwarf,2048"),
        "{stderr}"
    );
    // the frames found are kept: the recursion is there, main is out of reach
    assert!(got["work"][ANYWHERE] > 99.0, "{}", table(&got));
    assert!(
        got.get("entry").is_none_or(|e| e[ANYWHERE] < 10.0),
        "{}",
        table(&got)
    );

    // the same program with a copy large enough: whole stacks, nothing to suggest
    let large = record_deep(dir.path(), 16384);
    let (got, json, stderr) = report(dir.path(), &large);
    let (cut, all) = truncated(&json);
    assert!(
        cut * 100 <= all * 5,
        "{cut} of {all} truncated: {:?}",
        notes(&json)
    );
    assert!(!stderr.contains("stack copy"), "{stderr}");
    assert!(got["entry"][ANYWHERE] > 95.0, "{}", table(&got));
}

/// One recording, two events: `cpu-clock` with DWARF call graphs, `task-clock` with frame
/// pointers. Only the DWARF event's samples are unwound; both reach main.
#[test]
#[ignore = "needs cc, and perf permitted to record: .ci/run runs it where it is"]
fn a_mixed_recording_unwinds_only_its_dwarf_samples() {
    let dir = tempfile::tempdir().unwrap();
    let events = [
        "-e",
        "cpu-clock/call-graph=dwarf/",
        "-e",
        "task-clock/call-graph=fp/",
    ];
    let mixed = record(dir.path(), &DEEP_FP, &events, "mixed");
    // sample types: the two events in recording order, then `samples`
    let (dwarf, json, _) = report_metric(dir.path(), &mixed, "0");
    let (cut, stacks) = truncated(&json);
    let samples: u64 = notes(&json)
        .iter()
        .find_map(|n| n.split_once(" samples, ")?.0.parse().ok())
        .unwrap();
    // a sample caught in a prologue or epilogue may stop early ("frame pointer unwinding moved
    // backwards"): at most 1 % of the DWARF stacks
    assert!(cut * 100 <= stacks, "{:?}", notes(&json));
    // about half the samples are the DWARF event's (both sample at 999 Hz)
    assert!(
        stacks * 10 >= samples * 4 && stacks * 10 <= samples * 6,
        "{stacks} unwound of {samples}"
    );
    assert!(dwarf["entry"][ANYWHERE] > 95.0, "{}", table(&dwarf));
    let (fp, _, _) = report_metric(dir.path(), &mixed, "1");
    assert!(fp["entry"][ANYWHERE] > 95.0, "{}", table(&fp));
}

//! Recorded live: a small C program of the repo's own (`fixtures/src/spin.c`) built with gcc
//! and recorded with `perf record -g`, then reported by whose. Where `gcc`, `perf` or the
//! kernel's permissions (perf_event_paranoid) do not allow it, each test prints
//! `SKIPPED <test>: <reason>` on stderr and returns: a skip is not a pass, read the log.

use super::common::*;
use std::path::Path;
use std::process::Command;

/// Builds and records spin.c into `dir` with the given call-graph mode; Err = skip reason.
fn record(dir: &Path, call_graph: &[&str]) -> Result<std::path::PathBuf, String> {
    let bin = dir.join("spin");
    let gcc = Command::new("gcc")
        .args(["-O1", "-g", "-fno-omit-frame-pointer", "-o"])
        .arg(&bin)
        .arg(fixture("src/spin.c"))
        .output()
        .map_err(|e| format!("gcc not available: {e}"))?;
    if !gcc.status.success() {
        return Err(format!(
            "gcc failed: {}",
            String::from_utf8_lossy(&gcc.stderr)
        ));
    }
    let data = dir.join("perf.data");
    let out = Command::new("perf")
        .arg("record")
        .args(call_graph)
        .args(["-F", "999", "-q", "-o"])
        .arg(&data)
        .arg("--")
        .arg(&bin)
        .output()
        .map_err(|e| format!("perf not available: {e}"))?;
    if !out.status.success() || !data.is_file() {
        let paranoid =
            std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap_or_default();
        return Err(format!(
            "perf record failed (perf_event_paranoid={}): {}",
            paranoid.trim(),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("")
        ));
    }
    Ok(data)
}

#[test]
fn live_perf_record_g_reports_the_user_owner_or_prints_why_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let data = match record(dir.path(), &["-g"]) {
        Ok(d) => d,
        Err(reason) => {
            eprintln!("SKIPPED live_perf_record_g_reports_the_user_owner: {reason}");
            return;
        }
    };
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
fn live_perf_record_dwarf_is_unwound_or_prints_why_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let data = match record(dir.path(), &["--call-graph", "dwarf,1024"]) {
        Ok(d) => d,
        Err(reason) => {
            eprintln!("SKIPPED live_perf_record_dwarf_is_unwound: {reason}");
            return;
        }
    };
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
fn live_perf_record_zstd_compressed_is_read_or_prints_why_skipped() {
    // `perf record -z`: records in zstd-compressed chunks, and (perf 6.1) empty build ids
    let dir = tempfile::tempdir().unwrap();
    let data = match record(dir.path(), &["-z", "-g"]) {
        Ok(d) => d,
        Err(reason) => {
            eprintln!("SKIPPED live_perf_record_zstd_compressed_is_read: {reason}");
            return;
        }
    };
    let (got, total) = report_shares(&[
        data.to_str().unwrap(),
        "--user",
        "whose_live_",
        "--no-presets",
    ]);
    assert!(total > 0);
    assert!(got["user"][1] > 80.0, "{got:?}");
}

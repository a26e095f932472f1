//! Inputs that must neither hang nor fool the gate (issue 17): stacks a million frames deep
//! are read in time linear in their depth, and a profile with no weight gets a note in the
//! report and a refusal from the gate instead of a verdict on nothing.

use super::common::*;
use std::time::{Duration, Instant};

/// One stack of `depth` distinct frames, none of which any preset knows (all unclassified:
/// the case that walked the stack once per frame).
fn deep_stack(dir: &std::path::Path, depth: usize) -> std::path::PathBuf {
    let frames: Vec<String> = (0..depth).map(|i| format!("fn_{i}")).collect();
    let path = dir.join(format!("deep-{depth}.folded"));
    std::fs::write(&path, format!("{} 3\nfn_0 1\n", frames.join(";"))).unwrap();
    path
}

#[test]
fn a_stack_100k_frames_deep_is_read_by_every_command_in_linear_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = deep_stack(dir.path(), 100_000);
    let path = path.to_str().unwrap();
    // the quadratic walks took about two minutes for `report` at this depth in a debug build
    // (20 k frames: 4.5 s); the linear ones take a few seconds
    let bound = Duration::from_secs(60);
    for args in [
        vec!["report", path],
        vec!["explain", path],
        vec!["flame", path],
        vec!["convert", path, "--to", "pprof"],
    ] {
        let started = Instant::now();
        let out = whose(&args);
        assert!(out.status.success(), "{args:?}");
        assert!(
            started.elapsed() < bound,
            "{args:?} took {:?}",
            started.elapsed()
        );
    }
    let json = whose_ok(&["report", path, "--format", "json", "--top", "1"]);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let unclassified = json["inputs"][0]["owners"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "unclassified")
        .unwrap();
    // both stacks are all unclassified: 4 samples in every view, anywhere counted once
    assert_eq!(json["inputs"][0]["total"], 4);
    assert_eq!(unclassified["self"], 4);
    assert_eq!(unclassified["owner"], 4);
    assert_eq!(unclassified["anywhere"], 4);
}

#[test]
fn a_profile_without_weight_is_noted_in_the_report_and_refused_by_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("zero.folded");
    std::fs::write(&path, "main;work 0\nmain;idle 0\n").unwrap();
    let path = path.to_str().unwrap();
    let report = whose_ok(&["report", path]);
    assert!(
        report.contains("no weight: the total of samples is 0"),
        "{report}"
    );
    let stderr = whose_err(&["gate", path, "--require", "user.self >= 1%"]);
    assert!(
        stderr.contains("has no weight (total 0 in metric samples)"),
        "{stderr}"
    );
    assert!(stderr.contains("no verdict"), "{stderr}");
}

#[test]
fn a_few_bytes_of_perf_data_or_gzip_are_called_truncated_not_bad_folded_text() {
    let dir = tempfile::tempdir().unwrap();
    let cases = (1..8)
        .map(|n| (&b"PERFILE2"[..n], "perf.data"))
        .chain([(&b"\x1f"[..], "gzip")]);
    for (bytes, format) in cases {
        let path = dir.path().join("cut");
        std::fs::write(&path, bytes).unwrap();
        let stderr = whose_err(&["report", path.to_str().unwrap()]);
        assert!(
            stderr.contains(&format!(
                "at byte offset {}: the input ends after {} byte(s) of a {format} file's \
                 magic number: truncated",
                bytes.len(),
                bytes.len()
            )),
            "{stderr}"
        );
    }
}

/// The offset of the `Elf64_Chdr` of a compressed section of a little-endian ELF64 file.
fn compressed_section_header(elf: &[u8], name: &str) -> usize {
    let u16_at = |at: usize| u16::from_le_bytes(elf[at..at + 2].try_into().unwrap()) as usize;
    let u64_at = |at: usize| u64::from_le_bytes(elf[at..at + 8].try_into().unwrap()) as usize;
    let (shoff, shentsize, shnum, shstrndx) =
        (u64_at(0x28), u16_at(0x3a), u16_at(0x3c), u16_at(0x3e));
    let section = |i: usize| shoff + i * shentsize;
    let names_at = u64_at(section(shstrndx) + 0x18);
    (0..shnum)
        .find(|&i| {
            let at = names_at
                + u32::from_le_bytes(elf[section(i)..section(i) + 4].try_into().unwrap()) as usize;
            elf[at..].starts_with(name.as_bytes()) && elf[at + name.len()] == 0
        })
        .map(|i| {
            const SHF_COMPRESSED: usize = 0x800;
            assert!(
                u64_at(section(i) + 8) & SHF_COMPRESSED != 0,
                "{name} is not compressed"
            );
            u64_at(section(i) + 0x18)
        })
        .unwrap_or_else(|| panic!("no section {name}"))
}

#[test]
fn dwarf_claiming_2_to_the_62_bytes_is_a_warning_not_silently_lost_inline_frames() {
    let run = super::hermetic::Hermetic::new();
    let bin = tempfile::tempdir().unwrap();
    let mut elf = std::fs::read(fixture("perf/bin/logcrunch")).unwrap();
    // ch_size of the compressed .debug_info: what inflating it would allocate
    let chdr = compressed_section_header(&elf, ".debug_info");
    elf[chdr + 8..chdr + 16].copy_from_slice(&(1u64 << 62).to_le_bytes());
    std::fs::write(bin.path().join("logcrunch"), elf).unwrap();
    let profile = fixture("perf/rust-native.perf-dwarf.data.gz");
    let out = run.whose(&[
        "report",
        profile.to_str().unwrap(),
        "--inline",
        "--symfs",
        run.root().to_str().unwrap(),
        "--binary-path",
        bin.path().to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("logcrunch: its DWARF could not be read (")
            && stderr.contains("every address shown without inlined frames"),
        "{stderr}"
    );
}

#[test]
fn a_pipe_mode_stream_cut_inside_a_record_is_read_with_a_warning() {
    let run = super::hermetic::Hermetic::new();
    let stream = gunzip_file(&fixture("perf/c-malloc.perf.pipe.data.gz"));
    // a record starts at 299952 (112 bytes); cut inside it, inside its header, and before it
    let cases = [
        (
            300_001,
            Some("at byte offset 299952 (49 of its 112 bytes), after 300001 bytes"),
        ),
        (
            299_955,
            Some("at byte offset 299952 (inside its header), after 299955 bytes"),
        ),
        (299_952, None),
    ];
    for (len, warning) in cases {
        let path = write_temp(run.root(), "cut.data", &stream[..len]);
        let (_, stderr) = run.run_ok(&["report"], &path, &[]);
        match warning {
            Some(w) => assert!(
                stderr.contains(&format!("the stream ends inside the record {w}"))
                    && stderr.contains("the recording was cut short"),
                "{len}: {stderr}"
            ),
            None => assert!(!stderr.contains("cut short"), "{len}: {stderr}"),
        }
    }
}

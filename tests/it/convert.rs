//! `whose convert`: pprof with owner labels and folded output round-trip to the same shares,
//! and the labels are really in the written file.

use super::common::*;
use prost::Message;
use std::path::Path;
use whose::pprof_wire as pb;

fn go_rules() -> Vec<String> {
    vec![
        "--rules".into(),
        fixture("rules/go-svc.toml").to_str().unwrap().into(),
        "--no-presets".into(),
    ]
}

fn args<'a>(head: &[&'a str], tail: &'a [String]) -> Vec<&'a str> {
    head.iter()
        .copied()
        .chain(tail.iter().map(String::as_str))
        .collect()
}

fn decode(path: &Path) -> pb::Profile {
    pb::Profile::decode(gunzip_file(path).as_slice()).unwrap()
}

fn label<'a>(p: &'a pb::Profile, s: &pb::Sample, key: &str) -> Vec<&'a str> {
    s.label
        .iter()
        .filter(|l| p.string_table[l.key as usize] == key)
        .map(|l| p.string_table[l.str as usize].as_str())
        .collect()
}

fn assert_same_shares(a: &Shares, b: &Shares) {
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "owners differ"
    );
    assert_shares_agree(a, b, 1e-9);
}

#[test]
fn pprof_to_pprof_keeps_shares_and_adds_labels() {
    let rules = go_rules();
    let input = fixture("pprof/allocs.pb.gz");
    let input = input.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("owned.pb.gz");
    let out_s = out.to_str().unwrap();
    whose_ok(&args(
        &["convert", input, "--to", "pprof", "-o", out_s],
        &rules,
    ));
    for metric in ["alloc_space", "alloc_objects", "inuse_space"] {
        let (before, t1) = report_shares(&args(&[input, "--metric", metric], &rules));
        let (after, t2) = report_shares(&args(&[out_s, "--metric", metric], &rules));
        assert_eq!(t1, t2);
        assert_same_shares(&before, &after);
    }
    // decoded: one owner, self_owner and category label per sample, agreeing with the report
    let original = decode(&fixture("pprof/allocs.pb.gz"));
    let owned = decode(&out);
    assert_eq!(owned.sample.len(), original.sample.len());
    let (shares, total) = report_shares(&args(&[out_s, "--metric", "alloc_space"], &rules));
    let mut user_owner = 0i64;
    for s in &owned.sample {
        let owner = label(&owned, s, "owner");
        assert_eq!(owner.len(), 1, "one owner label per sample");
        assert_eq!(label(&owned, s, "self_owner").len(), 1);
        let category = label(&owned, s, "category");
        assert_eq!(category.len(), 1);
        if owner[0] == "user" {
            assert_eq!(category[0], "user");
            user_owner += s.value[1];
        }
    }
    let want = shares["user"][1] * total as f64 / 100.0;
    assert!(
        (user_owner as f64 - want).abs() < 1.0,
        "{user_owner} vs {want}"
    );
    // the input's own numeric labels (Go's `bytes`) are still there, sample by sample
    let numeric = |p: &pb::Profile| -> Vec<(String, i64)> {
        p.sample
            .iter()
            .flat_map(|s| s.label.iter())
            .filter(|l| l.str == 0)
            .map(|l| (p.string_table[l.key as usize].clone(), l.num))
            .collect()
    };
    let before = numeric(&original);
    assert!(before.iter().any(|(k, _)| k == "bytes"), "Go's bytes label");
    assert_eq!(numeric(&owned), before);
    // converting the converted file again does not duplicate the labels
    let again = dir.path().join("again.pb.gz");
    whose_ok(&args(
        &[
            "convert",
            out_s,
            "--to",
            "pprof",
            "-o",
            again.to_str().unwrap(),
        ],
        &rules,
    ));
    let again = decode(&again);
    assert!(
        again
            .sample
            .iter()
            .all(|s| label(&again, s, "owner").len() == 1)
    );
}

#[test]
fn folded_to_pprof_keeps_shares_and_source_files() {
    let rules = vec![
        "--rules".to_string(),
        fixture("rules/py-app.toml").to_str().unwrap().to_string(),
        "--no-presets".to_string(),
    ];
    let input = fixture("folded/py-app.folded");
    let input = input.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("py.pb.gz");
    let out_s = out.to_str().unwrap();
    whose_ok(&args(
        &["convert", input, "--to", "pprof", "-o", out_s],
        &rules,
    ));
    let (before, t1) = report_shares(&args(&[input], &rules));
    let (after, t2) = report_shares(&args(&[out_s], &rules));
    assert_eq!(t1, t2);
    assert_eq!(t1, 1999);
    assert_same_shares(&before, &after);
    let p = decode(&out);
    assert!(p.sample.iter().all(|s| label(&p, s, "owner").len() == 1));
    // frames keep their source files
    assert!(
        p.function
            .iter()
            .any(|f| p.string_table[f.filename as usize] == "app.py")
    );
}

#[test]
fn pprof_to_folded_keeps_shares() {
    let rules = go_rules();
    let input = fixture("pprof/cpu.pb.gz");
    let input = input.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cpu.folded");
    let out_s = out.to_str().unwrap();
    whose_ok(&args(
        &["convert", input, "--to", "folded", "-o", out_s],
        &rules,
    ));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.lines().all(|l| {
        l.rsplit_once(' ')
            .is_some_and(|(_, n)| n.parse::<u64>().is_ok())
    }));
    assert!(
        text.contains("net/http.(*conn).serve (/tmp/whose-corpus/go-svc/gosvc);"),
        "Go names kept, with their module"
    );
    let (before, t1) = report_shares(&args(&[input], &rules));
    let (after, t2) = report_shares(&args(&[out_s, "--unit", "nanoseconds"], &rules));
    assert_eq!(t1, t2);
    assert_eq!(t1, 15_160_000_000);
    assert_same_shares(&before, &after);
    // --metric picks the sample type written
    let samples = whose_ok(&args(
        &["convert", input, "--to", "folded", "--metric", "samples"],
        &rules,
    ));
    let total: u64 = samples
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert_eq!(total, 1516);
}

/// `go tool pprof -tags` reads the labels.
#[test]
#[ignore = "needs Go (go tool pprof): .ci/run installs golang-go and runs it"]
fn go_tool_pprof_reads_the_owner_labels() {
    let rules = go_rules();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("owned.pb.gz");
    let input = fixture("pprof/cpu.pb.gz");
    whose_ok(&args(
        &[
            "convert",
            input.to_str().unwrap(),
            "--to",
            "pprof",
            "-o",
            out.to_str().unwrap(),
        ],
        &rules,
    ));
    let run = std::process::Command::new("go")
        .args(["tool", "pprof", "-tags"])
        .arg(&out)
        .env("HOME", dir.path())
        .output()
        .expect("run go");
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // the oracle: user owns 78.10 % of CPU, framework 10.69 %
    assert!(text.contains("owner: Total 15.2s"), "{text}");
    assert!(text.contains("(78.10%): user"), "{text}");
    assert!(text.contains("(10.69%): framework"), "{text}");
    assert!(text.contains("self_owner: Total"), "{text}");
    assert!(text.contains("category: Total"), "{text}");
}

/// The model written as pprof (standard input is never kept as it came, so this is the
/// writer for every non-pprof input) reads back to the same frames, kinds, inlining, files,
/// lines, modules and values.
#[test]
fn model_written_as_pprof_reads_back_identically() {
    use std::process::{Command, Stdio};
    use whose::{ReadOptions, read_profile};
    let input = fixture("pprof/cpu.pb.gz");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("model.pb.gz");
    let status = Command::new(env!("CARGO_BIN_EXE_whose"))
        .args(["convert", "-", "--to", "pprof", "--no-presets", "-o"])
        .arg(&out)
        .stdin(Stdio::from(std::fs::File::open(&input).unwrap()))
        .status()
        .unwrap();
    assert!(status.success());
    let read = |p: &Path| read_profile(p, &ReadOptions::default()).unwrap();
    let (before, after) = (read(&input), read(&out));
    assert_eq!(before.dump(), after.dump());
    assert!(before.dump().contains("runtime.spanOf"));
    // inlined frames share their physical frame's location: fewer locations than frames
    let written = decode(&out);
    assert!(written.location.iter().any(|l| l.line.len() > 1));
    assert!(written.location.len() < after.frame_count());
}

/// `convert --to folded --owner-root`: the weight under each `[owner: NAME]` root equals that
/// owner's owner-view weight in the report, and equal stack texts are summed.
#[test]
fn folded_owner_root_splits_the_total_like_the_owner_view() {
    let profile = fixture("folded/py-app.folded");
    let profile = profile.to_str().unwrap();
    let folded = whose_ok(&["convert", profile, "--to", "folded", "--owner-root"]);
    let mut roots: std::collections::BTreeMap<String, u128> = Default::default();
    let mut texts = std::collections::BTreeSet::new();
    for line in folded.lines() {
        let (text, w) = line.rsplit_once(' ').unwrap();
        assert!(texts.insert(text.to_string()), "duplicate line {text}");
        let root = text.split(';').next().unwrap();
        let owner = root
            .strip_prefix("[owner: ")
            .unwrap()
            .strip_suffix(']')
            .unwrap();
        *roots.entry(owner.to_string()).or_default() += w.parse::<u128>().unwrap();
    }
    let (shares, total) = report_shares(&[profile]);
    let sum: u128 = roots.values().sum();
    assert_eq!(sum, total);
    for (owner, w) in &roots {
        let want = shares[owner][1];
        let got = *w as f64 * 100.0 / total as f64;
        assert!((got - want).abs() < 1e-9, "{owner}: {got} vs {want}");
    }
    assert_eq!(roots["user"], 1998);
}

#[test]
fn folded_is_names_only_when_asked_with_plain() {
    // default: perf's `name (module)` and stackcollapse-perf's `[module]` for unnamed frames,
    // which the folded reader takes back; --plain: inferno's names-only text
    let input = fixture_arg("pprof/cpu.pb.gz");
    let plain = whose_ok(&["convert", &input, "--to", "folded", "--plain"]);
    assert!(plain.contains("net/http.(*conn).serve;"), "names only");
    assert!(!plain.contains(" (/tmp/whose-corpus/"));
    let with = whose_ok(&["convert", &input, "--to", "folded"]);
    assert!(
        with.contains("net/http.(*conn).serve (/tmp/whose-corpus/go-svc/gosvc);"),
        "module kept"
    );
    assert_eq!(plain.lines().count(), with.lines().count());
}

/// `--plain` and `--owner-root` shape folded text: with `--to pprof` they would change nothing,
/// so they are refused (exit 2) rather than silently ignored.
#[test]
fn folded_only_options_are_refused_with_pprof_output() {
    let input = fixture_arg("pprof/cpu.pb.gz");
    for option in ["--plain", "--owner-root"] {
        let err = whose_err(&["convert", &input, "--to", "pprof", option, "-o", "x.pb.gz"]);
        assert!(
            err.contains(option) && err.contains("no effect with --to pprof"),
            "{option}: {err}"
        );
    }
}

/// Issue 61: a count past pprof's int64 (a folded file's sum can reach 2^63) is refused with
/// exit 2 and nothing written, never clamped to `i64::MAX`; the largest that fits converts.
#[test]
fn a_count_past_int64_is_refused_not_clamped() {
    let dir = tempfile::tempdir().unwrap();
    let big = write_temp(dir.path(), "big.folded", "a;b 9223372036854775808\na;c 1\n");
    let out_path = dir.path().join("big.pb.gz");
    let out = whose(&[
        "convert",
        &big.display().to_string(),
        "--to",
        "pprof",
        "-o",
        &out_path.display().to_string(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("9223372036854775808") && err.contains("refused rather than clamped"));
    assert!(!out_path.exists());
    let fits = write_temp(dir.path(), "fits.folded", "a;b 9223372036854775807\n");
    let out = whose(&[
        "convert",
        &fits.display().to_string(),
        "--to",
        "pprof",
        "-o",
        &out_path.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(0));
}

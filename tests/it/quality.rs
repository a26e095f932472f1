//! Recording quality (issue 14): the figures every report carries, on a hand-made profile
//! whose answer is derived by hand and on real recordings whose weakness is known.

use super::common::*;
use super::hermetic::Hermetic;
use serde_json::Value;

fn quality(json: &Value) -> &Value {
    &json["inputs"][0]["quality"]
}

fn report_json(args: &[&str]) -> Value {
    let mut all = vec!["report", "--format", "json"];
    all.extend_from_slice(args);
    serde_json::from_str(&whose_ok(&all)).unwrap()
}

/// The owner-view weight of transparent owners: the weight of stacks made only of
/// transparent frames, which the owner view gives to the leaf's owner.
fn transparent_owner_weight(json: &Value) -> u64 {
    json["inputs"][0]["owners"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["transparent"] == true)
        .map(|o| o["owner"].as_u64().unwrap())
        .sum()
}

#[test]
fn a_hand_made_profile_gives_the_figures_derived_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    // _start;main;work      5  user code on the stack: owned, whole
    // start_thread;memcpy   3  only glibc, but it reaches a thread root: the runtime's own work
    // malloc;memcpy         2  only transparent frames and no root: cut short (ownerless)
    // _start;[unknown]      4  a leaf without a symbol nothing places (unresolved), and with
    //                          only transparent frames the leaf is also the owner frame
    let path = write_temp(
        dir.path(),
        "q.folded",
        "_start;main;work 5\nstart_thread;memcpy 3\nmalloc;memcpy 2\n_start;[unknown] 4\n",
    );
    let path = path.to_str().unwrap();
    let json = report_json(&[path, "--preset", "native", "--preset", "allocators"]);
    let q = quality(&json);
    assert_eq!(q["callchains"], true);
    assert_eq!(q["max_depth"], 3);
    assert_eq!(q["ownerless"], 2);
    assert_eq!(q["unresolved_leaf"], 4);
    assert_eq!(q["unresolved_owner"], 4);
    assert_eq!(q["unresolved_by_module"][0]["module"], "[unknown]");
    // 4 of 14 = 28.6 % unresolved is unfit (> 5 %); 2 of 14 = 14.3 % ownerless too
    let findings = q["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 2, "{findings:?}");
    assert!(
        findings[0]
            .as_str()
            .unwrap()
            .starts_with("14.3% of the weight is in stacks")
    );
    assert!(
        findings[1]
            .as_str()
            .unwrap()
            .starts_with("28.6% of the leaves and 28.6% of the")
    );
    let table = whose_ok(&[
        "report",
        path,
        "--preset",
        "native",
        "--preset",
        "allocators",
    ]);
    assert!(
        table.contains(
            "quality: call chains up to 3 frames; ownerless 14.3%; unresolved 28.6% of leaves, \
             28.6% of owner frames"
        ),
        "{table}"
    );
    assert!(table.contains("warning: 14.3% of the weight"), "{table}");
}

#[test]
fn stacks_of_one_frame_are_no_call_chains() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_temp(dir.path(), "flat.folded", "work 5\nmemcpy 3\n");
    let json = report_json(&[path.to_str().unwrap()]);
    let q = quality(&json);
    assert_eq!(
        (q["callchains"].clone(), q["max_depth"].clone()),
        (false.into(), 1.into())
    );
    assert!(
        q["findings"][0]
            .as_str()
            .unwrap()
            .starts_with("no call chains (every stack is one frame): the owner and anywhere")
    );
}

#[test]
fn frame_pointer_stacks_cut_in_glibc_are_ownerless_and_dwarf_ones_are_not() {
    let rules = fixture_arg("rules/c-malloc.toml");
    let fp = report_json(&[
        &fixture_arg("perf/c-malloc.perf.perf-script.txt.gz"),
        "--rules",
        &rules,
        "--no-presets",
    ]);
    // independently, from the folded stacks with their owner-view owner as root: a stack the
    // owner view gives to a transparent owner is all transparent; it is cut unless it reaches
    // one of the roots churn's stacks can have
    let folded = whose_ok(&[
        "convert",
        &fixture_arg("perf/c-malloc.perf.perf-script.txt.gz"),
        "--rules",
        &rules,
        "--no-presets",
        "--to",
        "folded",
        "--owner-root",
    ]);
    let transparent = ["libc", "allocator", "kernel", "unknown"].map(|o| format!("[owner: {o}];"));
    let roots = [
        "_start",
        "__libc_start_main",
        "__libc_start_call_main",
        "start_thread",
        "clone3",
    ];
    let cut: u64 = folded
        .lines()
        .filter(|l| transparent.iter().any(|t| l.starts_with(t.as_str())))
        .filter(|l| !l.split([';', ' ']).any(|f| roots.contains(&f)))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    let ownerless = quality(&fp)["ownerless"].as_u64().unwrap();
    assert_eq!(ownerless, cut);
    // all but one sample of the transparent owners' owner-view weight is cut short
    assert_eq!(transparent_owner_weight(&fp) - ownerless, 1_001_001);
    let total = fp["inputs"][0]["total"].as_u64().unwrap();
    let share = ownerless as f64 * 100.0 / total as f64;
    assert!((62.0..64.0).contains(&share), "{share}");
    assert!(
        quality(&fp)["findings"][0]
            .as_str()
            .unwrap()
            .contains("record with `--call-graph dwarf` (or `lbr`)")
    );
    let dwarf = report_json(&[
        &fixture_arg("perf/c-malloc.perf-dwarf.perf-script.txt.gz"),
        "--rules",
        &rules,
        "--no-presets",
    ]);
    assert_eq!(quality(&dwarf)["ownerless"], 0);
    assert_eq!(quality(&dwarf)["findings"].as_array().unwrap().len(), 0);
}

#[test]
fn a_jvm_recording_without_its_perf_map_has_its_java_frames_unresolved() {
    let run = Hermetic::new();
    let data = fixture("perf/jvm-shop.perf.data");
    let kallsyms = fixture_arg("perf/jvm-shop.kallsyms");
    // without --jit-map-dir: the JIT code's addresses have no symbol and nothing places them
    let root = run.root().to_str().unwrap().to_string();
    let out = run.whose(&[
        "report",
        "--format",
        "json",
        data.to_str().unwrap(),
        "--symfs",
        &root,
        "--kallsyms",
        &kallsyms,
    ]);
    assert!(out.status.success());
    let without: Value = serde_json::from_slice(&out.stdout).unwrap();
    let q = quality(&without);
    let total = without["inputs"][0]["total"].as_u64().unwrap() as f64;
    let jit = &q["unresolved_by_module"][0];
    assert_eq!(jit["module"], "perf-22048.map");
    let leaf = q["unresolved_leaf"].as_u64().unwrap() as f64 * 100.0 / total;
    assert!((38.0..39.0).contains(&leaf), "{leaf}");
    let finding = q["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find(|f| f.contains("without a symbol"))
        .unwrap();
    assert!(
        finding.contains("perf-22048.map 38.4%, JIT code without its perf map"),
        "{finding}"
    );
    assert!(finding.contains("--jit-map-dir"), "{finding}");
    // with the map: nothing unresolved
    let (with, _) = run.report(&data, &["--kallsyms", &kallsyms]);
    assert_eq!(quality(&with)["unresolved_leaf"], 0);
    assert_eq!(quality(&with)["unresolved_owner"], 0);
}

#[test]
fn the_seeds_own_code_is_suggested_as_user_bench_and_taking_it_leaves_no_hint() {
    let seed = fixture_arg("folded/seed-ktor-alloc.txt");
    let json = report_json(&[&seed, "--unit", "bytes"]);
    let suggested = &json["inputs"][0]["suggested_user"];
    assert_eq!(suggested["prefix"], "bench.");
    // every sampled byte passes through the service's own `bench.MainKt` lambdas
    assert_eq!(suggested["weight"], json["inputs"][0]["total"]);
    let explain = whose_ok(&["explain", &seed, "--unit", "bytes"]);
    assert!(
        explain.contains(
            "hint: the heaviest unclassified frames are under `bench.` (100.0% of the \
                          weight passes through one of them): `--user bench.` would claim them"
        ),
        "{explain}"
    );
    let json = report_json(&[&seed, "--unit", "bytes", "--user", "bench."]);
    assert!(json["inputs"][0].get("suggested_user").is_none());
    let user = json["inputs"][0]["owners"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "user")
        .unwrap();
    assert_eq!(user["anywhere"], json["inputs"][0]["total"]);
}

/// `perf` with `records` (whole kernel records, header included) appended to its data
/// section; the feature sections after it move.
fn with_records(perf: &[u8], records: &[Vec<u8>]) -> Vec<u8> {
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

/// A kernel record of `kind` whose body is `words`, then the sample_id trailer this
/// recording has (tid and time: two zero words).
fn record(kind: u32, words: &[u64]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&((8 + 8 * (words.len() + 2)) as u16).to_le_bytes());
    for w in words.iter().chain(&[0, 0]) {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out
}

#[test]
fn lost_samples_and_throttling_are_figures_findings_and_a_gate_refusal() {
    // c-malloc.perf.data has 4461 samples; 300 events in LOST records (type 2: id, count),
    // 100 in LOST_SAMPLES (type 13: count) and two THROTTLE records (type 5: time, id,
    // stream id) are added. LOST_SAMPLES counts the LOST records' losses too, so the loss is
    // the larger count: 300 of 4761 = 6.3 %
    let perf = std::fs::read(fixture("perf/c-malloc.perf.data")).unwrap();
    let bytes = with_records(
        &perf,
        &[
            record(2, &[0, 300]),
            record(13, &[100]),
            record(5, &[1, 0, 0]),
            record(5, &[2, 0, 0]),
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let path = write_temp(dir.path(), "lossy.data", &bytes);
    let h = Hermetic::new();
    let (json, stderr) = h.report(&path, &["--no-presets"]);
    let q = quality(&json);
    assert_eq!(q["call_graph"], "fp");
    assert_eq!(q["samples"], 4461);
    assert_eq!(q["lost_events"], 300);
    assert_eq!(q["lost_samples"], 100);
    assert_eq!(q["throttles"], 2);
    assert!(q.get("truncated_stacks").is_none(), "no DWARF here: {q}");
    let findings: Vec<&str> = q["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    let lost = findings
        .iter()
        .find(|f| f.contains("of the samples were lost"))
        .unwrap_or_else(|| panic!("{findings:?}"));
    assert!(
        lost.starts_with(
            "6.3% of the samples were lost (300 in LOST records, 100 counted in LOST_SAMPLES)"
        ),
        "{lost}"
    );
    assert!(lost.contains("perf record -m 1024"), "{lost}");
    let throttled = findings
        .iter()
        .find(|f| f.contains("throttled"))
        .unwrap_or_else(|| panic!("{findings:?}"));
    assert!(throttled.contains("2 times"), "{throttled}");
    assert!(
        throttled.contains("kernel.perf_event_max_sample_rate"),
        "{throttled}"
    );
    // the reader says each loss once, whatever the command
    assert!(
        stderr.contains("perf lost 300 events (LOST records)"),
        "{stderr}"
    );
    // fewer LOST_SAMPLES than LOST: nothing more to say about them
    assert!(!stderr.contains("LOST_SAMPLES"), "{stderr}");
    let (table, _) = h.run_ok(&["report"], &path, &["--no-presets"]);
    assert!(
        table.contains("; lost 6.3% of samples; throttled 2 times"),
        "{table}"
    );

    // the gate: a self-view requirement that the recording could otherwise answer is refused
    // for the loss, with the JSON verdict written; --max-lost 10% accepts it
    let verdict = dir.path().join("verdict.json");
    let refusal = h.run_err(
        &["gate"],
        &path,
        &[
            "--no-presets",
            "--require",
            "category:runtime.self <= 99%",
            "--format",
            "json",
            "-o",
            verdict.to_str().unwrap(),
        ],
    );
    assert!(
        refusal.contains(
            "perf lost 6.3% of its samples (LOST and LOST_SAMPLES records; --max-lost 5%)"
        ),
        "{refusal}"
    );
    let written: Value = serde_json::from_slice(&std::fs::read(&verdict).unwrap()).unwrap();
    assert_eq!(written["status"], "error");
    assert!(written["reason"].as_str().unwrap().contains("--max-lost"));
    let out = h.run(
        &["gate"],
        &path,
        &[
            "--no-presets",
            "--require",
            "category:runtime.self <= 99%",
            "--max-lost",
            "10%",
            "--max-unresolved",
            "100%",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_dwarf_recording_says_so_and_counts_its_truncated_stacks() {
    // the c-malloc DWARF recording read with the recorded glibc (hermetic): every stack is
    // unwound to a root, so nothing is truncated but the few the unwind note names
    let h = Hermetic::with_recorded_glibc();
    let path = fixture("perf/c-malloc.perf-dwarf.data.gz");
    let (json, _) = h.report(&path, &["--no-presets"]);
    let q = quality(&json);
    assert_eq!(q["call_graph"], "dwarf");
    let t = &q["truncated_stacks"];
    assert_eq!(t["stack_copy"], 4096);
    assert_eq!(t["stacks"], 1423);
    let (truncated, stacks) = super::common::truncated(&json);
    assert_eq!(
        (t["truncated"].as_u64().unwrap(), 1423),
        (truncated, stacks)
    );
    assert_eq!(q["ownerless"], 0);
}

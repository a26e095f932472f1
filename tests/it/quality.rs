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
            .contains("Record with `--call-graph dwarf` (or `lbr`)")
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

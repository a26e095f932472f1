//! Recording quality (issue 14): the figures every report carries, on a hand-made profile
//! whose answer is derived by hand and on real recordings whose weakness is known.

use super::common::*;
use super::hermetic::Hermetic;
use serde_json::Value;

fn quality(json: &Value) -> &Value {
    &json["inputs"][0]["quality"]
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
    // folded text does not say where the address was or why it has no name
    assert_eq!(q["unresolved_by_module"][0]["reason"], "no-module");
    // 4 of 14 = 28.6 % unresolved is unfit (> 5 %); 2 of 14 = 14.3 % ownerless too; the
    // unresolved finding is followed by one per module with its cause and fix
    let findings = q["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 3, "{findings:?}");
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
    assert!(
        findings[2]
            .as_str()
            .unwrap()
            .starts_with("[unknown]: 28.6% of the leaves unresolved: frames without a symbol")
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
    assert_eq!(jit["reason"], "jit-map-missing");
    let leaf = q["unresolved_leaf"].as_u64().unwrap() as f64 * 100.0 / total;
    assert!((38.0..39.0).contains(&leaf), "{leaf}");
    let finding = q["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find(|f| f.starts_with("perf-22048.map: "))
        .unwrap();
    assert!(
        finding.starts_with(
            "perf-22048.map: 38.4% of the leaves unresolved: JIT code without its perf map: \
             JIT map not found in /tmp (--jit-map-dir); fix: give the JIT's perf-PID.map"
        ),
        "{finding}"
    );
    // with the map: nothing unresolved
    let (with, _) = run.report(&data, &["--kallsyms", &kallsyms]);
    assert_eq!(quality(&with)["unresolved_leaf"], 0);
    assert_eq!(quality(&with)["unresolved_owner"], 0);
}

#[test]
fn the_seeds_own_code_is_suggested_as_user_bench_and_taking_it_leaves_no_hint() {
    // with no flags the guess of the program's own code takes `bench.` (its Kotlin `MainKt`):
    // nothing is left to suggest
    let seed = fixture_arg("folded/seed-ktor-alloc.txt");
    let guessed = report_json(&[&seed, "--unit", "bytes"]);
    assert!(
        guessed["inputs"][0].get("suggested_user").is_none(),
        "{guessed}"
    );
    // `--no-guess`: the hint finds the same prefix
    let json = report_json(&[&seed, "--unit", "bytes", "--no-guess"]);
    let suggested = &json["inputs"][0]["suggested_user"];
    assert_eq!(suggested["prefix"], "bench.");
    // every sampled byte passes through the service's own `bench.MainKt` lambdas, and none
    // of them moves in the owner view: Kotlin reflection asked for all of it (issue 28: the
    // hint says what `--user` moves, which the owners below check)
    assert_eq!(suggested["anywhere"], json["inputs"][0]["total"]);
    assert_eq!(suggested["weight"], 0);
    let explain = whose_ok(&["explain", &seed, "--unit", "bytes", "--no-guess"]);
    assert!(
        explain.contains(
            "next step: `--user bench.` would claim the heaviest unclassified functions as \
             user code, 0.0% of the weight in the owner view (100.0% passes through them)"
        ),
        "{explain}"
    );
    let json = report_json(&[&seed, "--unit", "bytes", "--no-guess", "--user", "bench."]);
    assert!(json["inputs"][0].get("suggested_user").is_none());
    let user = json["inputs"][0]["owners"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "user")
        .unwrap();
    assert_eq!(user["anywhere"], json["inputs"][0]["total"]);
}

// ---------------------------------------------------------------- why addresses have no symbol
// The c-malloc recording's own program, `churn`, four ways: stripped, its symbols fetched by
// debuginfod, another build, absent. Every other module is claimed by a module rule (libc by
// glibc, the kernel and [vdso] by kernel), so churn's leaves are the only unresolved ones.

/// Build id of `fixtures/perf/bin/churn`, as the recording names it.
const CHURN_BUILD_ID: &str = "fb1f61b96f68ea9c1fe7695aadd96fc4b8b2375a";
const CHURN: &str = "/tmp/whose-corpus/c-malloc/churn";

/// `report --format json` of the c-malloc recording with `args` as the symbol options (HOME
/// and `--symfs` are the harness's empty root).
fn churn_report(run: &Hermetic, args: &[&str]) -> Value {
    let data = fixture_arg("perf/c-malloc.perf.data");
    let root = run.root().to_str().unwrap().to_string();
    let mut all = vec!["report", "--format", "json", &data, "--symfs", &root];
    all.extend_from_slice(args);
    let out = run.whose(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn self_weight(json: &Value, owner: &str) -> u64 {
    json["inputs"][0]["owners"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == owner)
        .map_or(0, |o| o["self"].as_u64().unwrap())
}

/// With churn's symbols, the self weight of `user` (churn's own functions as leaves: the
/// recorded executable is guessed as the program's own code) and of `ld.so` (churn's PLT
/// stubs: named from `.rela.plt` even when stripped).
fn churn_leaf_weights(run: &Hermetic) -> (u64, u64) {
    let json = churn_report(run, &["--binary-path", &fixture_arg("perf/bin")]);
    assert_eq!(quality(&json)["unresolved_leaf"], 0);
    (self_weight(&json, "user"), self_weight(&json, "ld.so"))
}

#[test]
fn a_stripped_binary_is_named_as_the_cause_with_where_its_symbols_come_from() {
    let run = Hermetic::new();
    let (churn_leaves, plt_leaves) = churn_leaf_weights(&run);
    assert_eq!((churn_leaves, plt_leaves), (1_144_144_143, 9_009_009));
    // `strip -o stripped/churn bin/churn`: same build id, no .symtab
    let stripped = fixture_arg("perf/stripped");
    let json = churn_report(&run, &["--binary-path", &stripped]);
    let q = quality(&json);
    assert_eq!(q["unresolved_leaf"], churn_leaves);
    assert_eq!(self_weight(&json, "ld.so"), plt_leaves);
    let modules = q["unresolved_by_module"].as_array().unwrap();
    assert_eq!(modules.len(), 1);
    let churn = &modules[0];
    assert_eq!(churn["module"], CHURN);
    assert_eq!(churn["weight"], churn_leaves);
    assert_eq!(churn["reason"], "stripped");
    let used = format!("{stripped}/churn");
    assert_eq!(
        churn["cause"],
        format!(
            "binary stripped: {used} has no .symtab and its .dynsym does not cover the addresses"
        )
    );
    let fix = churn["fix"].as_str().unwrap();
    assert!(
        fix.starts_with(&format!(
            "install the debug symbols for {used} (e.g. its -dbgsym/-debuginfo package)"
        )),
        "{fix}"
    );
    assert!(
        fix.contains(&format!("debuginfod-find debuginfo {CHURN_BUILD_ID}")),
        "{fix}"
    );
    // the header says it too: 1144144143 of 4465465461 is 25.6 %
    let data = fixture("perf/c-malloc.perf.data");
    let root = run.root().to_str().unwrap().to_string();
    let args = [
        "report",
        data.to_str().unwrap(),
        "--symfs",
        &root,
        "--binary-path",
        &stripped,
    ];
    let table = ok_stdout(&args, run.whose(&args));
    assert!(
        table.contains(&format!(
            "warning: {CHURN}: 25.6% of the leaves unresolved: binary stripped: {used}"
        )),
        "{table}"
    );
    // what `debuginfod-find debuginfo ID` leaves in its cache is found there
    let cache = run
        .root()
        .join(".cache/debuginfod_client")
        .join(CHURN_BUILD_ID);
    std::fs::create_dir_all(&cache).unwrap();
    write_temp(
        &cache,
        "debuginfo",
        std::fs::read(fixture("perf/bin/churn")).unwrap(),
    );
    let json = churn_report(&run, &["--binary-path", &stripped]);
    assert_eq!(quality(&json)["unresolved_leaf"], 0);
    assert_eq!(
        quality(&json)["unresolved_by_module"],
        serde_json::json!([])
    );
}

#[test]
fn a_stripped_system_binary_names_the_package_dpkg_installed_it_from() {
    let run = Hermetic::new();
    // the recorded path under --symfs holds the stripped build, and dpkg's file list there
    // says which package installed it (as `dpkg -S` would)
    let (bin, info) = (
        run.root().join("tmp/whose-corpus/c-malloc"),
        run.root().join("var/lib/dpkg/info"),
    );
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&info).unwrap();
    write_temp(
        &bin,
        "churn",
        std::fs::read(fixture("perf/stripped/churn")).unwrap(),
    );
    write_temp(
        &info,
        "churn-tools:amd64.list",
        format!("/.\n/tmp\n{CHURN}\n"),
    );
    let json = churn_report(&run, &[]);
    let churn = &quality(&json)["unresolved_by_module"][0];
    assert_eq!(churn["reason"], "stripped");
    let fix = churn["fix"].as_str().unwrap();
    let on_root = run.root().join(CHURN.trim_start_matches('/'));
    assert!(
        fix.starts_with(&format!(
            "{} is from package churn-tools: install churn-tools-dbgsym (Debian/Ubuntu debug \
             symbol archive), or set DEBUGINFOD_URLS",
            on_root.display()
        )),
        "{fix}"
    );
}

#[test]
fn another_build_of_the_binary_is_a_build_id_mismatch_and_none_is_not_found() {
    let run = Hermetic::new();
    let dir = tempfile::tempdir().unwrap();
    let mut other = std::fs::read(fixture("perf/bin/churn")).unwrap();
    let id: Vec<u8> = (0..CHURN_BUILD_ID.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&CHURN_BUILD_ID[i..i + 2], 16).unwrap())
        .collect();
    let at = other.windows(id.len()).position(|w| w == id).unwrap();
    other[at] ^= 0xff; // fb… → 04…
    write_temp(dir.path(), "churn", other);
    let dir_arg = dir.path().to_str().unwrap();
    let json = churn_report(&run, &["--binary-path", dir_arg]);
    let churn = &quality(&json)["unresolved_by_module"][0];
    assert_eq!(churn["module"], CHURN);
    assert_eq!(churn["reason"], "build-id-mismatch");
    assert_eq!(
        churn["cause"],
        format!(
            "build id mismatch: {dir_arg}/churn (041f61b96f68ea9c1fe7695aadd96fc4b8b2375a) has \
             another build id than the recording's {CHURN_BUILD_ID}"
        )
    );
    assert!(churn["fix"].as_str().unwrap().contains("--binary-path"));
    // nothing on the binary path: not found, searched by build id and name
    let empty = tempfile::tempdir().unwrap();
    let json = churn_report(&run, &["--binary-path", empty.path().to_str().unwrap()]);
    let churn = &quality(&json)["unresolved_by_module"][0];
    assert_eq!(churn["reason"], "not-found");
    assert_eq!(churn["cause"], "binary not found");
    assert_eq!(
        churn["fix"],
        format!(
            "point --binary-path DIR or --symfs DIR at it (searched by build id \
             {CHURN_BUILD_ID} and by name)"
        )
    );
    // without the file even the PLT stubs have no name
    let (churn_leaves, plt_leaves) = churn_leaf_weights(&run);
    assert_eq!(quality(&json)["unresolved_leaf"], churn_leaves + plt_leaves);
    assert_eq!(self_weight(&json, "ld.so"), 0);
}

/// A real stripped system binary recorded here: Debian's `/usr/bin/sort` (no `.symtab`; its
/// `.dynsym` names only imports), whose own code is most of the samples.
#[test]
#[ignore = "needs perf permitted to record, and a stripped /usr/bin/sort without its debug \
            symbols installed (Debian/Ubuntu): .ci/run runs it where perf records"]
fn live_perf_record_of_a_stripped_system_binary_names_the_cause_and_the_package() {
    let dir = tempfile::tempdir().unwrap();
    let numbers: String = (0..300_000u64)
        .map(|i| format!("{}\n", (i * 2_654_435_761) % 1_000_003))
        .collect();
    let input = write_temp(dir.path(), "numbers.txt", numbers);
    let data = dir.path().join("sort.data");
    let perf = std::process::Command::new("perf")
        .args(["record", "-q", "-F", "999", "-g", "-o"])
        .arg(&data)
        .args(["--", "/usr/bin/sort", "-n", "-o"])
        .arg(dir.path().join("sorted.txt"))
        .arg(&input)
        .output()
        .expect("perf");
    assert!(
        perf.status.success(),
        "{}",
        String::from_utf8_lossy(&perf.stderr)
    );
    let json = report_json(&[data.to_str().unwrap()]);
    let q = quality(&json);
    let total = json["inputs"][0]["total"].as_u64().unwrap() as f64;
    let sort = q["unresolved_by_module"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["module"] == "/usr/bin/sort")
        .unwrap_or_else(|| panic!("{q}"));
    assert_eq!(sort["reason"], "stripped", "{sort}");
    // sort's own comparison and merge code is most of the run
    let share = sort["weight"].as_u64().unwrap() as f64 * 100.0 / total;
    assert!(share > 50.0, "{share}");
    let fix = sort["fix"].as_str().unwrap();
    if std::path::Path::new("/var/lib/dpkg/info/coreutils.list").exists() {
        assert!(
            fix.starts_with("/usr/bin/sort is from package coreutils: install coreutils-dbgsym"),
            "{fix}"
        );
    } else {
        assert!(
            fix.starts_with("install the debug symbols for /usr/bin/sort"),
            "{fix}"
        );
    }
}

#[test]
fn perf_script_text_without_symbols_is_judged_by_this_machines_file_of_that_name() {
    let run = Hermetic::new();
    // 3 samples whose leaf perf printed as `[unknown]` in churn, 1 in libc's memcpy
    let sample = |leaf: &str| {
        format!(
            "churn 100  100.000000:       1000 cpu-clock:ppp: \n\
             \t            1234 {leaf}\n\
             \t            5678 __libc_start_call_main+0x10 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\n"
        )
    };
    let unknown = sample(&format!("[unknown] ({CHURN})"));
    let text = [
        unknown.as_str(),
        &unknown,
        &unknown,
        &sample("memcpy+0x4 (/usr/lib/x86_64-linux-gnu/libc.so.6)"),
    ]
    .concat();
    let script = write_temp(run.root(), "churn.perf-script.txt", text);
    let report = |run: &Hermetic| -> Value {
        let root = run.root().to_str().unwrap().to_string();
        let args = [
            "report",
            "--format",
            "json",
            script.to_str().unwrap(),
            "--symfs",
            &root,
        ];
        serde_json::from_str(&ok_stdout(&args, run.whose(&args))).unwrap()
    };
    // the text names no build id, and nothing of that name is here: perf's reason is unknown
    let json = report(&run);
    assert_eq!(quality(&json)["unresolved_leaf"], 3000);
    let churn = &quality(&json)["unresolved_by_module"][0];
    assert_eq!(churn["module"], CHURN);
    assert_eq!(churn["reason"], "not-symbolized-by-perf");
    // this machine's file of that name (under --symfs) is stripped: most likely the cause
    let bin = run.root().join("tmp/whose-corpus/c-malloc");
    std::fs::create_dir_all(&bin).unwrap();
    let stripped = write_temp(
        &bin,
        "churn",
        std::fs::read(fixture("perf/stripped/churn")).unwrap(),
    );
    let json = report(&run);
    let churn = &quality(&json)["unresolved_by_module"][0];
    assert_eq!(churn["reason"], "stripped");
    assert_eq!(
        churn["cause"],
        format!(
            "binary stripped: {} has no .symtab and its .dynsym does not cover the addresses \
             (this machine's file of that name: the input names no build id)",
            stripped.display()
        )
    );
    assert!(
        churn["fix"]
            .as_str()
            .unwrap()
            .contains(&format!("debuginfod-find debuginfo {CHURN_BUILD_ID}"))
    );
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
            // no presets, no guess: every frame is unclassified, which is not what this checks
            "--max-unclassified",
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

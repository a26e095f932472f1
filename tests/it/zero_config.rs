//! Issue 29: with no flags (no `--user`, no `--rules`), the user share of real recordings
//! agrees with rules written by hand, and a gate never gives a verdict the hand rules
//! contradict. The hand rules are the corpus's (`fixtures/rules/*.toml`, one block per oracle
//! rule) and the oracle's shares (`fixtures/expected/*.json`, from `perf script`).
//!
//! The guesses checked here are the JVM package of the program's entry point and the recorded
//! executable of a native program; Go, Rust, Node and Python guesses have their tests in
//! `auto_owner.rs`, `node_python.rs` and `pprof.rs`.

use super::common::*;
use super::hermetic::Hermetic;
use serde_json::Value;

/// The owner share (percent) of `owner` in input 0, 0 when it has no row.
fn owner_share(json: &Value, owner: &str) -> f64 {
    shares_of(json).0.get(owner).map_or(0.0, |s| s[OWNER])
}

/// The one own-code guess of a report, as (unit, name).
fn guess(json: &Value) -> (String, String) {
    let guessed = json["user_code_guessed"].as_array().expect("a guess");
    assert_eq!(guessed.len(), 1, "{guessed:?}");
    let g = &guessed[0];
    (
        g["unit"].as_str().unwrap().to_string(),
        g["name"].as_str().unwrap().to_string(),
    )
}

fn assert_close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1.0,
        "{what}: {got:.2}% with no flags, {want:.2}% by hand"
    );
}

#[test]
fn a_jvm_recordings_own_package_is_guessed_as_the_hand_rules_name_it() {
    // jvm-shop: an HTTP server (com.sun.net.httpserver) whose handlers are `shop.*`; perf.data
    // with its JIT map. The hand rules say user = `shop.`: owner 33.78% of the samples
    let run = Hermetic::new();
    let data = fixture("perf/jvm-shop.perf.data");
    let kallsyms = fixture_arg("perf/jvm-shop.kallsyms");
    let (json, _) = run.report(&data, &["--kallsyms", &kallsyms]);
    assert_eq!(guess(&json), ("jvm package".into(), "shop".into()));
    let (hand, _) = run.report(
        &data,
        &[
            "--kallsyms",
            &kallsyms,
            "--rules",
            &fixture_arg("rules/jvm-shop.toml"),
        ],
    );
    let (oracle, _) = expected_shares("jvm-shop.perf.json");
    let user = owner_share(&json, "user");
    assert_close(
        user,
        owner_share(&hand, "user"),
        "jvm-shop, whose's hand rules",
    );
    assert_close(user, oracle["user"][OWNER], "jvm-shop, the oracle");
    assert!(owner_share(&json, "unclassified") <= 1.0, "{json}");
}

#[test]
fn a_jvm_perf_script_without_frame_pointers_guesses_its_main_class() {
    // jvm-nofp: `Churn` in the default package, recorded without PreserveFramePointer. By
    // hand: `--user Churn.` (the class's own methods), no guess
    let script = fixture_arg("perf/jvm-nofp.perf-script.txt.gz");
    let json = report_json(&[&script]);
    assert_eq!(guess(&json), ("jvm package".into(), "Churn".into()));
    let hand = report_json(&[&script, "--no-guess", "--user", "Churn."]);
    assert!(
        hand["user_code_guessed"]
            .as_array()
            .is_none_or(Vec::is_empty)
    );
    assert_close(
        owner_share(&json, "user"),
        owner_share(&hand, "user"),
        "jvm-nofp",
    );
    assert!(owner_share(&json, "unclassified") <= 1.0, "{json}");
}

#[test]
fn a_c_programs_executable_is_its_own_code_with_frame_pointers_and_dwarf() {
    // c-malloc: `churn`, a C program, recorded with frame pointers and with DWARF; the hand
    // rules name its functions by module. Each form of each recording within a point of the
    // oracle, and nothing left unclassified
    let run = Hermetic::with_recorded_glibc();
    let cases = [
        ("perf/c-malloc.perf.data", "c-malloc.perf.json"),
        (
            "perf/c-malloc.perf-dwarf.data.gz",
            "c-malloc.perf-dwarf.json",
        ),
    ];
    for (data, expected) in cases {
        let (json, _) = run.report(&fixture(data), &["--metric", "samples"]);
        assert_eq!(
            guess(&json),
            ("executable".into(), "churn".into()),
            "{data}"
        );
        let (oracle, _) = expected_shares(expected);
        assert_close(owner_share(&json, "user"), oracle["user"][OWNER], data);
        assert!(owner_share(&json, "unclassified") <= 1.0, "{data}: {json}");
    }
    for (script, expected) in [
        ("c-malloc.perf", "c-malloc.perf.json"),
        ("c-malloc.perf-dwarf", "c-malloc.perf-dwarf.json"),
    ] {
        let file = fixture_arg(&format!("perf/{script}.perf-script.txt.gz"));
        let json = report_json(&[&file, "--metric", "samples"]);
        let (oracle, _) = expected_shares(expected);
        assert_close(owner_share(&json, "user"), oracle["user"][OWNER], script);
        let (hand, _) = script_shares(script, "c-malloc");
        assert_close(owner_share(&json, "user"), hand["user"][OWNER], script);
    }
}

#[test]
fn a_cpp_programs_executable_is_its_own_code_with_frame_pointers_and_dwarf() {
    // cxx-index (fixtures/src/cxx-index): a C++ indexer recorded with frame pointers and with
    // DWARF; by hand (cxx-index.rules, through the oracle) the executable `idx` asks for
    // 84.29% (fp) and 100% (DWARF) of the samples. The self view differs by design: whose's
    // native preset gives the libstdc++ templates g++ compiled into idx to libstdc++, the
    // hand rules give all of idx's module to user
    for (mode, gate) in [("fp", Some(0)), ("dwarf", Some(0))] {
        let file = fixture_arg(&format!("perf/cxx-index.perf-{mode}.perf-script.txt.gz"));
        let json = report_json(&[&file, "--metric", "samples"]);
        assert_eq!(guess(&json), ("executable".into(), "idx".into()), "{mode}");
        let (oracle, _) = expected_shares(&format!("cxx-index.perf-{mode}.json"));
        assert_close(owner_share(&json, "user"), oracle["user"][OWNER], mode);
        assert!(owner_share(&json, "unclassified") <= 1.0, "{mode}: {json}");
        // `user.owner >= 50%` holds by hand; the fp recording's stacks cut short in glibc
        // (15.7%) are a bound that cannot flip it (issue 54), the DWARF one passes outright
        let (code, stderr) = gate_code(&[&file], "user.owner >= 50%");
        assert_eq!(code, gate, "{mode}: {stderr}");
    }
}

#[test]
fn a_kotlin_programs_entry_package_is_its_own_code_in_perf_script_and_folded() {
    // kotlin-orders (fixtures/src/kotlin-orders): a Kotlin batch job, `main` in
    // `orders.MainKt`, recorded with perf and its JIT map; by hand (kotlin-orders.rules,
    // through the oracle) `orders.` owns 63.44% of the samples and the Kotlin stdlib 14.92%
    let (oracle, _) = expected_shares("kotlin-orders.perf.json");
    let script = fixture_arg("perf/kotlin-orders.perf-script.txt.gz");
    let json = report_json(&[&script, "--metric", "samples"]);
    assert_eq!(guess(&json), ("jvm package".into(), "orders".into()));
    assert_close(
        owner_share(&json, "user"),
        oracle["user"][OWNER],
        "perf script",
    );
    assert_close(
        owner_share(&json, "kotlin-stdlib"),
        oracle["kotlin"][OWNER],
        "perf script, kotlin stdlib",
    );
    assert!(owner_share(&json, "unclassified") <= 1.0, "{json}");
    // the same dump through stackcollapse-perf.pl --all: DumpPerfMapAtExit's names lose their
    // parameters there (`void orders.MainKt.main`) and every frame its module. The share is
    // the same; HotSpot's C++ frames, named by module in the dump, are the jvm preset's by
    // their names where no module is left (`KlassFactory::create_from_stream`); a tail of
    // VM and glibc functions (`init_globals`, `read`) stays unclassified, under 1%
    let folded = fixture_arg("folded/kotlin-orders.folded");
    let json = report_json(&[&folded]);
    assert_eq!(guess(&json), ("jvm package".into(), "orders".into()));
    assert_close(owner_share(&json, "user"), oracle["user"][OWNER], "folded");
    assert!(owner_share(&json, "unclassified") <= 1.0, "{json}");
}

#[test]
fn the_guess_is_switched_off_and_a_rules_file_overrides_it() {
    let file = fixture_arg("perf/c-malloc.perf.perf-script.txt.gz");
    let off = report_json(&[&file, "--no-guess"]);
    assert!(
        off["user_code_guessed"]
            .as_array()
            .is_none_or(Vec::is_empty)
    );
    assert_eq!(owner_share(&off, "user"), 0.0);
    assert!(
        (owner_share(&off, "unclassified") - 36.83).abs() < 0.05,
        "{off}"
    );
    // a rules file that claims churn's module as somebody else's wins over the guess
    let dir = tempfile::tempdir().unwrap();
    let rules = write_temp(
        dir.path(),
        "vendor.toml",
        "[[owner]]\nname = \"vendor\"\ncategory = \"library\"\nmodule = [\"churn\"]\n",
    );
    let json = report_json(&[&file, "--rules", rules.to_str().unwrap()]);
    assert_eq!(owner_share(&json, "user"), 0.0, "{json}");
    assert!(
        (owner_share(&json, "vendor") - 36.83).abs() < 0.05,
        "{json}"
    );
}

/// `whose gate INPUT ARGS --require REQUIREMENT`'s exit code and stderr.
fn gate_code(input: &[&str], require: &str) -> (Option<i32>, String) {
    let mut args = vec!["gate"];
    args.extend_from_slice(input);
    args.extend(["--require", require]);
    let out = whose(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code(), stderr)
}

#[test]
fn a_gate_with_no_flags_never_contradicts_the_hand_rules() {
    // seed-ktor-alloc: Kotlin reflection asks for every sampled byte; the hand rules fail
    // `user.owner >= 25%`, with no flags and with `--user bench.` alike
    let seed = fixture_arg("folded/seed-ktor-alloc.txt");
    let seed_rules = fixture_arg("rules/seed-ktor-alloc.toml");
    for args in [
        vec![seed.as_str(), "--unit", "bytes"],
        vec![seed.as_str(), "--unit", "bytes", "--user", "bench."],
        vec![
            seed.as_str(),
            "--unit",
            "bytes",
            "--no-presets",
            "--rules",
            &seed_rules,
        ],
    ] {
        let (code, stderr) = gate_code(&args, "user.owner >= 25%");
        assert_eq!(code, Some(1), "{args:?}: {stderr}");
    }
    // c-malloc with DWARF: churn asks for 99.9% of the work; the hand rules pass
    // `user.owner >= 25%`, and so does no flag
    let dwarf = fixture_arg("perf/c-malloc.perf-dwarf.perf-script.txt.gz");
    let c_rules = fixture_arg("rules/c-malloc.toml");
    for args in [
        vec![dwarf.as_str()],
        vec![dwarf.as_str(), "--no-presets", "--rules", &c_rules],
    ] {
        let (code, stderr) = gate_code(&args, "user.owner >= 25%");
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
    }
    // jvm-shop: `shop.` owns 33.8%, so `user.owner >= 50%` does not hold by hand; with no
    // flags the 14.9% of stacks cut short in glibc, given to user, could just lift the
    // interval's top to 50.5%, so the gate refuses (issue 54: a bound, refused only where it
    // could flip the verdict) and, with the cut accepted, decides as the hand rules do,
    // never a pass
    let script = fixture_arg("perf/jvm-shop.perf.perf-script.txt.gz");
    let (code, stderr) = gate_code(&[&script], "user.owner >= 50%");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("could flip the verdict"), "{stderr}");
    let jvm_rules = fixture_arg("rules/jvm-shop.toml");
    let accept = ["--max-ownerless", "100%"];
    let (guessed, stderr) = gate_code(&[&script, accept[0], accept[1]], "user.owner >= 50%");
    let (hand, _) = gate_code(
        &[
            &script,
            accept[0],
            accept[1],
            "--no-presets",
            "--rules",
            &jvm_rules,
        ],
        "user.owner >= 50%",
    );
    assert_eq!(guessed, hand, "{stderr}");
    assert!(matches!(guessed, Some(1 | 3)), "{stderr}");
}

//! Issue 53: a thin user layer under a framework, found and gated right with no flags. Real
//! recordings of programs written for it (`fixtures/fw53/README.md`; sources and each hand
//! count in `fixtures/src/fw53/<name>/`): a Spark job (perf + JIT map, JFR on JDK 17 and 25),
//! a Kotlin service on Netty, Jackson and coroutines (JFR, perf + map), a Go program calling
//! SQLite and its own C through cgo (pprof, perf), a Python 3.12 app with Jinja2 templates and
//! dataclasses (`-X perf` with DWARF, py-spy). With no flags each gives user code's owner
//! share within a point of the hand count, leaves at most 1 % unclassified, and names the
//! program's own code, never a framework's.

use super::common::*;
use serde_json::Value;
use std::path::Path;

/// A recording, the hand-counted user owner share, and what the guess must name.
struct Case {
    file: &'static str,
    /// A gzipped JIT map to put beside it for `--jit-map-dir` (`perf-PID.map`).
    map: Option<(&'static str, &'static str)>,
    extra: &'static [&'static str],
    /// User code's owner-view share, counted by hand (percent).
    hand: f64,
    /// A name every user-code guess must be, and its evidence's strength.
    guessed: &'static str,
    strength: &'static str,
}

const CASES: &[Case] = &[
    // Spark 4 in local mode: 2.37 % by perf (C2 inlined the UDFs into Spark's generated
    // code), 9.58 % / 10.47 % by JFR, which keeps inlined frames
    Case {
        file: "fw53/spark.perf.data.gz",
        map: Some(("fw53/spark.perf-26835.map.gz", "perf-26835.map")),
        extra: &[],
        hand: 2.37,
        guessed: "com.northwind.etl",
        strength: "strong",
    },
    Case {
        file: "fw53/spark.perf-script.txt.gz",
        map: None,
        extra: &[],
        hand: 2.37,
        guessed: "com.northwind.etl",
        strength: "medium",
    },
    Case {
        file: "fw53/spark.jdk17.jfr.gz",
        map: None,
        extra: &[],
        hand: 9.58,
        guessed: "com.northwind.etl",
        strength: "strong",
    },
    Case {
        file: "fw53/spark.jdk25.jfr.gz",
        map: None,
        extra: &[],
        hand: 10.47,
        guessed: "com.northwind.etl",
        strength: "strong",
    },
    // Kotlin on Netty: 5.55 % by JFR, 3.73 % by perf (the hand count looks through the
    // Kotlin stdlib, which whose counts as a library: 0.03 points of the JFR share)
    Case {
        file: "fw53/ktsvc.jdk17.jfr.gz",
        map: None,
        extra: &[],
        hand: 5.55,
        guessed: "com.fernway.orders",
        strength: "strong",
    },
    Case {
        file: "fw53/ktsvc.perf.data.gz",
        map: Some(("fw53/ktsvc.perf-29094.map.gz", "perf-29094.map")),
        extra: &[],
        hand: 3.73,
        guessed: "com.fernway.orders",
        strength: "medium",
    },
    Case {
        file: "fw53/ktsvc.perf-script.txt.gz",
        map: None,
        extra: &[],
        hand: 3.73,
        guessed: "com.fernway.orders",
        strength: "medium",
    },
    // Go with cgo: the pprof profile has no C frames, its `_Cfunc_sqlite3_*` stubs stand for
    // SQLite; perf has the C frames of the binary's own score.c and of libsqlite3.so
    Case {
        file: "fw53/gocgo.cpu.pb.gz",
        map: None,
        extra: &[],
        hand: 67.1,
        guessed: "inventory",
        strength: "strong",
    },
    Case {
        file: "fw53/gocgo.perf.data.gz",
        map: None,
        extra: &["--binary-path", "@fw53/gocgo-bin"],
        hand: 64.3,
        guessed: "inventory",
        strength: "strong",
    },
    Case {
        file: "fw53/gocgo.perf-script.txt.gz",
        map: None,
        extra: &[],
        hand: 64.3,
        guessed: "inventory",
        strength: "strong",
    },
    Case {
        file: "fw53/gocgo.perf-dwarf.perf-script.txt.gz",
        map: None,
        extra: &[],
        hand: 63.4,
        guessed: "inventory",
        strength: "strong",
    },
    // the same kind of program with a module path under a domain, built without -trimpath,
    // on zlib: pprof names the main package's files (and cgo's `_cgo_gotypes.go`), the perf
    // script names none (the module is the one whose internal package main calls)
    Case {
        file: "fw53/gozlib.cpu.pb.gz",
        map: None,
        extra: &[],
        hand: 58.9,
        guessed: "example.com/packer",
        strength: "strong",
    },
    Case {
        file: "fw53/gozlib.perf-script.txt.gz",
        map: None,
        extra: &[],
        hand: 59.2,
        guessed: "example.com/packer",
        strength: "strong",
    },
    // a plain Java service on Netty and Jackson, JFR
    Case {
        file: "fw53/tally.jdk17.jfr.gz",
        map: None,
        extra: &[],
        hand: 10.6,
        guessed: "tally.api",
        strength: "strong",
    },
    // a Flask app: werkzeug and flask are frameworks, markupsafe's C extension markupsafe's
    Case {
        file: "fw53/pyflask.pyspy-raw.txt.gz",
        map: None,
        extra: &[],
        hand: 46.0,
        guessed: "/tmp/whose-fw53b/pyflask/shopfront",
        strength: "strong",
    },
    Case {
        file: "fw53/pyflask.perf-script.txt.gz",
        map: None,
        extra: &[],
        hand: 38.8,
        guessed: "/tmp/whose-fw53b/pyflask/shopfront",
        strength: "strong",
    },
    // Python 3.12 with Jinja2 templates (their compiled code carries the template's file)
    // and dataclasses (`<string>` methods, looked through)
    Case {
        file: "fw53/pyweb.perf-script.txt.gz",
        map: None,
        extra: &[],
        hand: 44.9,
        guessed: "/tmp/whose-fw53/pyweb/bookshop",
        strength: "strong",
    },
    Case {
        file: "fw53/pyweb.pyspy-raw.txt.gz",
        map: None,
        extra: &[],
        hand: 52.66,
        guessed: "/tmp/whose-fw53/pyweb/bookshop",
        strength: "strong",
    },
];

/// The case's arguments, its JIT map unpacked into `dir`.
fn args(case: &Case, dir: &Path) -> Vec<String> {
    let mut a = vec![fixture_arg(case.file)];
    if let Some((gz, name)) = case.map {
        std::fs::write(dir.join(name), gunzip_file(&fixture(gz))).unwrap();
        a.extend(["--jit-map-dir".into(), dir.display().to_string()]);
    }
    for e in case.extra {
        a.push(match e.strip_prefix('@') {
            Some(d) => fixture_arg(d),
            None => e.to_string(),
        });
    }
    a
}

fn report(case: &Case, dir: &Path) -> Value {
    let a = args(case, dir);
    let refs: Vec<&str> = a.iter().map(String::as_str).collect();
    report_json(&refs)
}

#[test]
fn the_user_share_is_the_hand_counts_with_no_flags() {
    let mut wrong = Vec::new();
    for case in CASES {
        let dir = tempfile::tempdir().unwrap();
        let json = report(case, dir.path());
        wrong.extend(off_the_hand_count(case.file, &json, case.hand));
        let guesses = json["user_code_guessed"].as_array().unwrap();
        assert!(!guesses.is_empty(), "{}: no guess", case.file);
        for g in guesses
            .iter()
            .filter(|g| g["unit"] != "c code of the go binary")
        {
            assert_eq!(g["name"], case.guessed, "{}: {g}", case.file);
            assert_eq!(g["strength"], case.strength, "{}: {g}", case.file);
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_gate_on_a_quarter_of_user_code_never_passes_the_spark_job() {
    for case in CASES.iter().filter(|c| c.file.contains("spark")) {
        let dir = tempfile::tempdir().unwrap();
        let mut a = vec!["gate".to_string()];
        a.extend(args(case, dir.path()));
        a.extend(["--require".into(), "user.owner >= 25%".into()]);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        let out = whose(&refs);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{}: {text}", case.file);
        assert!(text.contains("FAIL"), "{}: {text}", case.file);
    }
}

#[test]
fn a_perf_map_with_little_user_code_says_that_inlining_hides_it() {
    let with_map = &CASES[0];
    let dir = tempfile::tempdir().unwrap();
    let findings = |json: &Value| -> Vec<String> {
        json["inputs"][0]["quality"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.to_string())
            .collect()
    };
    let json = report(with_map, dir.path());
    let said = findings(&json);
    assert!(
        said.iter()
            .any(|f| f.contains("inlined") && f.contains("StartFlightRecording")),
        "{said:?}"
    );
    // JFR keeps inlined frames: nothing to say
    let jfr = report(&CASES[2], dir.path());
    assert!(!findings(&jfr).iter().any(|f| f.contains("inlined")));
}

#[test]
fn the_cgo_stubs_and_the_binarys_c_code_have_their_owners() {
    // pprof: `main._Cfunc_sqlite3_step` is SQLite's, `main._Cfunc_score_block` the user's
    let pprof = report_json(&[&fixture_arg("fw53/gocgo.cpu.pb.gz")]);
    let (shares, _) = shares_of(&pprof);
    assert!((shares["sqlite"][OWNER] - 30.6).abs() < 1.0, "{shares:?}");
    // perf: score.c's functions in the binary are the user's, by the second guess
    let perf = report_json(&[&fixture_arg("fw53/gocgo.perf-script.txt.gz")]);
    let guesses = perf["user_code_guessed"].as_array().unwrap();
    let c = guesses
        .iter()
        .find(|g| g["unit"] == "c code of the go binary")
        .unwrap_or_else(|| panic!("{guesses:?}"));
    assert_eq!(c["c_functions_of_module"], "inventory");
    let (shares, _) = shares_of(&perf);
    assert!((shares["sqlite"][OWNER] - 30.0).abs() < 1.0, "{shares:?}");
}

#[test]
fn outermost_code_nothing_known_calls_is_no_guess_and_the_gate_says_how_to_claim_it() {
    // stacks cut short at a package no list knows (by hand: 10 samples, all unclassified in
    // the owner view): the guess is declined, the header says why, and the gate's refusal
    // names the prefix and the flag that claims it
    let dir = tempfile::tempdir().unwrap();
    let path = write_temp(
        dir.path(),
        "cut.folded",
        "acme.batch.Loader.load;java.util.HashMap.put 6\n\
         acme.batch.Loader.load;acme.batch.Parse.line 4\n",
    );
    let file = path.to_str().unwrap();
    let json = report_json(&[file]);
    assert!(
        json["user_code_guessed"]
            .as_array()
            .is_none_or(|a| a.is_empty()),
        "{json}"
    );
    let declined = &json["user_code_not_guessed"][0];
    assert_eq!(declined["reason"], "weak-evidence");
    assert_eq!(declined["would_have_been"], "acme.batch");
    let (shares, _) = shares_of(&json);
    assert!((shares["unclassified"][OWNER] - 100.0).abs() < 1e-9);
    let table = whose_ok(&["report", file]);
    assert!(table.contains("user code not guessed"), "{table}");
    let out = whose(&["gate", file, "--require", "user.owner >= 10%"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_ne!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("`--user acme.` claims them"), "{text}");
    // a caller the presets know confirms it: the JDK's thread running it
    let path = write_temp(
        dir.path(),
        "rooted.folded",
        "java.lang.Thread.run;acme.batch.Loader.load;java.util.HashMap.put 6\n",
    );
    let json = report_json(&[path.to_str().unwrap()]);
    assert_eq!(json["user_code_guessed"][0]["name"], "acme.batch");
}

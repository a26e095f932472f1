//! Issue 57: one home per ecosystem, then Ruby and Erlang/Elixir with no flags. Real
//! recordings of programs written for it (`fixtures/eco57/README.md`, `README.beam.md`; sources
//! and each hand count in `fixtures/src/eco57/<name>/`): a Sinatra service on Puma and a Ruby
//! batch under rbspy (collapsed, speedscope, pprof), an Elixir service and an Erlang service
//! under perf with the BEAM's JIT map (`+JPperf true`). With no flags each gives user code's
//! owner share within a point of the hand count, leaves at most 1 % unclassified, and names the
//! program's own code.

use super::common::*;
use serde_json::Value;
use std::path::Path;

/// A recording, the hand-counted user owner share, and what the guess must name.
struct Case {
    file: &'static str,
    /// A gzipped JIT map to put beside it for `--jit-map-dir` (`perf-PID.map`).
    map: Option<(&'static str, &'static str)>,
    /// User code's owner-view share, counted by hand (percent).
    hand: f64,
    /// The name the user-code guess must have, and its evidence's strength.
    guessed: &'static str,
    strength: &'static str,
}

const CASES: &[Case] = &[
    // Elixir: the module `elixir -e 'Shop.main()'` starts (perf.data records the command);
    // perf script has no command, so the outermost modules OTP calls
    Case {
        file: "eco57/exsvc.perf.data.gz",
        map: Some(("eco57/exsvc.perf-16561.map.gz", "perf-16561.map")),
        hand: 18.44,
        guessed: "Shop",
        strength: "strong",
    },
    Case {
        file: "eco57/exsvc.perf-script.txt.gz",
        map: None,
        hand: 18.44,
        guessed: "Shop",
        strength: "medium",
    },
    Case {
        file: "eco57/erlsvc.perf.data.gz",
        map: Some(("eco57/erlsvc.perf-17245.map.gz", "perf-17245.map")),
        hand: 22.15,
        guessed: "inventory",
        strength: "strong",
    },
    Case {
        file: "eco57/erlsvc.perf-script.txt.gz",
        map: None,
        hand: 22.15,
        guessed: "inventory",
        strength: "medium",
    },
    // programs of the same kinds, not seen while the guesses were written: an Elixir mix
    // project with two namespaces (`Ledger`, `LedgerWeb`) recorded by attaching perf (no
    // command to read), an OTP application `order_book` started by `-eval`
    Case {
        file: "eco57b/exmix.perf.data.gz",
        map: Some(("eco57b/exmix.perf-14747.map.gz", "perf-14747.map")),
        hand: 20.25,
        guessed: "Ledger",
        strength: "medium",
    },
    Case {
        file: "eco57b/exmix.perf-script.txt.gz",
        map: None,
        hand: 20.25,
        guessed: "Ledger",
        strength: "medium",
    },
    Case {
        file: "eco57b/erlrebar.perf.data.gz",
        map: Some(("eco57b/erlrebar.perf-16453.map.gz", "perf-16453.map")),
        hand: 23.55,
        guessed: "order_book",
        strength: "strong",
    },
    Case {
        file: "eco57b/erlrebar.perf-script.txt.gz",
        map: None,
        hand: 23.55,
        guessed: "order_book",
        strength: "medium",
    },
    // Ruby under rbspy: the collapsed file loses the ERB template's file (`__tilt_1600 -
    // unknown:21`), taken for the program's by Tilt's name
    Case {
        file: "eco57/rbsvc.rbspy-collapsed.txt.gz",
        map: None,
        hand: 19.32,
        guessed: "/tmp/whose-eco57/rbsvc",
        strength: "strong",
    },
    Case {
        file: "eco57/rbsvc.rbspy.speedscope.json.gz",
        map: None,
        hand: 19.61,
        guessed: "/tmp/whose-eco57/rbsvc",
        strength: "strong",
    },
    Case {
        file: "eco57/rbsvc.rbspy.pb.gz",
        map: None,
        hand: 19.61,
        guessed: "/tmp/whose-eco57/rbsvc",
        strength: "strong",
    },
    Case {
        file: "eco57/rbbatch.rbspy-collapsed.txt.gz",
        map: None,
        hand: 77.47,
        guessed: "/tmp/whose-eco57/rbbatch",
        strength: "strong",
    },
    Case {
        file: "eco57/rbbatch.rbspy.speedscope.json.gz",
        map: None,
        hand: 76.97,
        guessed: "/",
        strength: "strong",
    },
    // Ruby programs of the same kinds, not seen while the guesses were written: a Rails 6.1
    // API app (its code under app/, Active Support and Action Pack around it) and a threaded
    // worker whose entry script has no extension (`bin/worker`), with C-extension gems
    Case {
        file: "eco57b/rbrails.rbspy-collapsed.txt.gz",
        map: None,
        hand: 32.35,
        guessed: "/tmp/whose-eco57b/rbrails/app",
        strength: "strong",
    },
    Case {
        file: "eco57b/rbrails.rbspy.speedscope.json.gz",
        map: None,
        hand: 33.20,
        guessed: "/tmp/whose-eco57b/rbrails/app",
        strength: "strong",
    },
    Case {
        file: "eco57b/rbworker.rbspy-collapsed.txt.gz",
        map: None,
        hand: 46.47,
        guessed: "/tmp/whose-eco57b/rbworker",
        strength: "strong",
    },
    Case {
        file: "eco57b/rbworker.rbspy.speedscope.json.gz",
        map: None,
        hand: 46.87,
        guessed: "/",
        strength: "strong",
    },
    Case {
        file: "eco57/rbbatch.rbspy.pb.gz",
        map: None,
        hand: 76.97,
        guessed: "/",
        strength: "strong",
    },
];

fn report(case: &Case, dir: &Path) -> Value {
    let mut a = vec![fixture_arg(case.file)];
    if let Some((gz, name)) = case.map {
        std::fs::write(dir.join(name), gunzip_file(&fixture(gz))).unwrap();
        a.extend(["--jit-map-dir".into(), dir.display().to_string()]);
    }
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
        assert_eq!(guesses.len(), 1, "{}: {guesses:?}", case.file);
        assert_eq!(guesses[0]["name"], case.guessed, "{}", case.file);
        assert_eq!(guesses[0]["strength"], case.strength, "{}", case.file);
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn detection_picks_ruby_and_beam_and_no_jvm_for_a_beam_map() {
    for case in CASES {
        let dir = tempfile::tempdir().unwrap();
        let json = report(case, dir.path());
        let presets: Vec<&str> = (json["presets"].as_array().unwrap().iter())
            .filter_map(Value::as_str)
            .collect();
        let want = if case.file.contains("/rb") {
            "ruby"
        } else {
            "beam"
        };
        assert_eq!(presets.first(), Some(&want), "{}: {presets:?}", case.file);
        assert!(!presets.contains(&"jvm"), "{}: {presets:?}", case.file);
    }
    let out = whose(&["rules", "list"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for preset in ["ruby (loads ruby", "beam (loads beam"] {
        assert!(text.contains(preset), "{text}");
    }
}

/// The schedulers' named waits (`__sched_yield`, `epoll_wait`, `erts_poll_wait` under the
/// emulator's threads) are `beam-idle`, not the C library's: by hand 4.85 % (exsvc), 3.41 %
/// (erlsvc), 6.10 % (exmix) and 11.37 % (erlrebar) of the samples are stacks whose first named user-space frame is one of them
/// (`handcount_beam.py`'s named-wait count; the unnamed spin loop of a stripped beam.smp
/// stays the emulator's).
#[test]
fn scheduler_waits_are_idle_not_the_c_library() {
    for (case, hand) in [
        (&CASES[0], 4.85),
        (&CASES[2], 3.41),
        (&CASES[4], 6.10),
        (&CASES[6], 11.37),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (shares, _) = shares_of(&report(case, dir.path()));
        let idle = shares.get("beam-idle").map_or(0.0, |s| s[OWNER]);
        assert!((idle - hand).abs() < 1.0, "{}: idle {idle:.2}%", case.file);
        assert!(shares["erts"][OWNER] > 40.0, "{}: {shares:?}", case.file);
    }
}

/// The gems and the frameworks of the Ruby service, by hand (collapsed file): puma 55.26 %,
/// sinatra with its router mustermann 10.24 + 1.12, rack with rack-protection 4.42 + 4.46,
/// tilt 3.41 % (its template methods less the service's own `__tilt_` ones), json 1.77 %.
#[test]
fn gems_are_their_owners_and_frameworks_are_frameworks() {
    let rbsvc = CASES
        .iter()
        .find(|c| c.file.ends_with("rbsvc.rbspy-collapsed.txt.gz"));
    let json = report(rbsvc.unwrap(), tempfile::tempdir().unwrap().path());
    let (shares, _) = shares_of(&json);
    let share = |name: &str| shares.get(name).map_or(0.0, |s| s[OWNER]);
    for (owner, hand) in [
        ("puma", 55.26),
        ("sinatra", 11.36),
        ("rack", 8.88),
        ("json", 1.77),
    ] {
        assert!(
            (share(owner) - hand).abs() < 1.0,
            "{owner}: {:.2}% (hand {hand}%)",
            share(owner)
        );
    }
    let categories = &json["inputs"][0]["owners"];
    let category = |name: &str| {
        (categories.as_array().unwrap().iter())
            .find(|o| o["name"] == name)
            .map(|o| o["category"].as_str().unwrap_or_default().to_string())
    };
    assert_eq!(category("puma").as_deref(), Some("framework"));
    assert_eq!(category("json").as_deref(), Some("library"));
}

/// The ecosystem folder's files form no circle, each language stated in it has its rules
/// file, and `docs/ecosystems.md` names every file an ecosystem needs.
#[test]
fn one_home_per_ecosystem_without_a_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let folder = root.join("src/classify/ecosystem");
    let edges = super::shape::folder_edges(&folder);
    assert!(
        edges.len() >= 8,
        "too few edges, the scanner is broken: {edges:?}"
    );
    assert!(
        super::shape::circles(&edges).is_empty(),
        "a circle in src/classify/ecosystem/: {edges:?}"
    );
    let table = std::fs::read_to_string(folder.join("mod.rs")).unwrap();
    let guide = std::fs::read_to_string(root.join("docs/ecosystems.md")).unwrap();
    for name in [
        "ruby", "beam", "go", "jvm", "python", "node", "rust", "native",
    ] {
        assert!(table.contains(&format!("{name}::ECOSYSTEM")), "{name}");
        assert!(root.join(format!("rules/{name}.toml")).is_file(), "{name}");
        assert!(guide.contains(&format!("`{name}.rs`")), "docs: {name}");
    }
}

/// perf alone sees a Ruby program as libruby's C code (`rbbatch.perf-dwarf`: DWARF stacks
/// down to `_start`, not one Ruby method): no user share can be read, so the header says why
/// no guess was made and the gate refuses a verdict on user code, where it would otherwise
/// fail it at 0 %. A requirement on the runtime itself still gets its verdict.
#[test]
fn a_ruby_program_perf_alone_recorded_gets_no_user_verdict() {
    let file = fixture_arg("eco57/rbbatch.perf-dwarf.perf-script.txt.gz");
    let json = report_json(&[&file]);
    let declined = &json["user_code_not_guessed"][0];
    assert_eq!(declined["reason"], "no-language-frames", "{json}");
    assert_eq!(declined["would_have_been"], "libruby-3.1.so.3.1.2");
    let out = whose(&["gate", &file, "--require", "user.owner >= 10%"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("rbspy"), "{err}");
    let out = whose(&["gate", &file, "--require", "ruby.owner >= 10%"]);
    assert_eq!(out.status.code(), Some(0));
}

/// A stripped `beam.smp` without frame pointers loses the Erlang caller of its C code (about
/// two thirds of exsvc's weight by hand: 66.65 % `other` with idle apart, 62.4 % once the
/// idle waits and GC are counted out): the report says so, and how to get the callers back.
/// perf of a Ruby program says the same of libruby.
#[test]
fn the_report_says_what_an_interpreter_only_stack_loses() {
    let findings =
        |json: &Value| -> String { json["inputs"][0]["quality"]["findings"].to_string() };
    let dir = tempfile::tempdir().unwrap();
    let beam = findings(&report(&CASES[0], dir.path()));
    assert!(
        beam.contains("BEAM emulator's C code with no Erlang function"),
        "{beam}"
    );
    assert!(beam.contains("--enable-frame-pointer"), "{beam}");
    let ruby = findings(&report_json(&[&fixture_arg(
        "eco57/rbbatch.perf-dwarf.perf-script.txt.gz",
    )]));
    assert!(
        ruby.contains("Ruby's interpreter with no Ruby method"),
        "{ruby}"
    );
    assert!(ruby.contains("rbspy"), "{ruby}");
}

/// stackprof's Marshal dump and vernier's Firefox Profiler JSON are refused with what they are
/// and what to record instead, not read as folded text.
#[test]
fn ruby_profilers_formats_not_read_yet_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("stackprof.dump");
    std::fs::write(&dump, b"\x04\x08{\x0b:\x0cversionf\x061.2:\tmode:\x08cpu").unwrap();
    let vernier = write_temp(
        dir.path(),
        "vernier.json",
        "{\"meta\": {\"interval\": 1, \"product\": \"Ruby/Vernier\"}, \"threads\": []}\n",
    );
    for (path, what) in [
        (dump.display().to_string(), "stackprof dump"),
        (vernier.display().to_string(), "Firefox Profiler profile"),
    ] {
        let out = whose(&["report", &path]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(what) && err.contains("not supported yet"),
            "{err}"
        );
    }
}

/// `convert --to folded` writes Ruby frames as rbspy does (`name - file.rb:LINE`), so the
/// folded file read back gives the same owners: the service's user share by hand, 19.32 %.
#[test]
fn ruby_frames_keep_their_files_through_folded_text() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rbsvc.folded");
    let o = whose(&[
        "convert",
        &fixture_arg("eco57/rbsvc.rbspy-collapsed.txt.gz"),
        "--to",
        "folded",
        "-o",
        &out.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let json = report_json(&[&out.display().to_string()]);
    assert_eq!(off_the_hand_count("rbsvc.folded", &json, 19.32), None);
}

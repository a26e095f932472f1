//! Folded input against the corpus oracle, and the folded reader's error handling.

use super::common::*;

#[test]
fn seed_ktor_alloc_strips_allocated_types_by_default() {
    let (got, total) = report_shares(&[
        fixture("folded/seed-ktor-alloc.txt").to_str().unwrap(),
        "--rules",
        fixture("rules/seed-ktor-alloc.toml").to_str().unwrap(),
        "--no-presets",
        "--unit",
        "bytes",
    ]);
    let (want, want_total) = expected_shares("seed-ktor-alloc.types-strip.json");
    assert_eq!(total, want_total as u128);
    assert_shares_agree(&got, &want, 0.01);
    // every sample's owner is kotlin (the KClassImpl frames)
    assert_eq!(got["kotlin"][1], 100.0);
}

#[test]
fn seed_ktor_alloc_types_as_frames_matches_the_seed_harness() {
    let (got, _) = report_shares(&[
        fixture("folded/seed-ktor-alloc.txt").to_str().unwrap(),
        "--rules",
        fixture("rules/seed-ktor-alloc.toml").to_str().unwrap(),
        "--no-presets",
        "--unit",
        "bytes",
        "--types-as-frames",
    ]);
    let (want, _) = expected_shares("seed-ktor-alloc.types-frame.json");
    assert_shares_agree(&got, &want, 0.01);
    assert_eq!(got["kotlin"][1], 100.0);
}

#[test]
fn py_spy_raw_agrees_with_the_oracle() {
    let (got, total) = report_shares(&[
        fixture("folded/py-app.folded").to_str().unwrap(),
        "--rules",
        fixture("rules/py-app.toml").to_str().unwrap(),
        "--no-presets",
    ]);
    let (want, want_total) = expected_shares("py-app.folded.json");
    assert_eq!(total, want_total as u128);
    assert_shares_agree(&got, &want, 0.01);
}

#[test]
fn py_spy_with_detected_presets_finds_the_application() {
    // no rules given: the python preset is detected, the stdlib is matched by file and the
    // script's own code is user; the oracle's `user` + `script` labels are whose's `user`
    let (got, _) = report_shares(&[fixture("folded/py-app.folded").to_str().unwrap()]);
    let (want, _) = expected_shares("py-app.folded.json");
    assert!((got["user"][1] - want["user"][1]).abs() < 0.01, "{got:?}");
    assert!(
        (got["python-std"][0] - want["stdlib"][0]).abs() < 0.01,
        "{got:?}"
    );
    assert!((got["user"][2] - want["script"][2]).abs() < 0.01, "{got:?}");
}

// ------------------------------------------------ collapsed-file shapes in the wild (issue 12)

fn process_root_args(extra: &[&str]) -> Vec<String> {
    let mut args = vec![
        fixture_arg("folded/process-root.folded"),
        "--rules".into(),
        fixture_arg("rules/process-root.toml"),
        "--no-presets".into(),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    args
}

#[test]
fn a_process_name_root_is_the_thread_not_a_frame() {
    // stackcollapse-perf.pl/inferno's `java;start_thread;...`: as a frame `java` owned the 40
    // samples whose other frames are all transparent; as the thread it owns nothing
    let args = process_root_args(&["--threads"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let json = report_json(&args);
    let (got, total) = shares_of(&json);
    assert_eq!(total, 100);
    assert!(!got.contains_key("unclassified"), "{got:?}");
    assert_eq!(got["app"], [60.0, 60.0, 60.0]);
    assert_eq!(got["gc"], [20.0, 20.0, 20.0]);
    assert_eq!(got["jvm"], [15.0, 15.0, 95.0]);
    assert_eq!(got["kernel"], [5.0, 5.0, 5.0]);
    assert_eq!(got["netty"], [0.0, 0.0, 50.0]);
    let threads = json["inputs"][0]["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 1);
    assert_eq!(threads[0]["name"], "java");
    assert_eq!(threads[0]["total"], 100);
    let notes = notes(&json).join("\n");
    assert!(
        notes.contains("process name") && notes.contains("(java: 1 name(s))"),
        "{notes}"
    );
    // five stacks, each one frame shorter
    let table = whose_ok(&["report", args[0], "--rules", args[2], "--no-presets"]);
    assert!(table.contains("5 distinct stacks"), "{table}");
    assert!(table.contains("call chains up to 6 frames"), "{table}");
}

#[test]
fn keep_process_root_keeps_the_frame_and_says_so() {
    let args = process_root_args(&["--keep-process-root"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let json = report_json(&args);
    let (got, total) = shares_of(&json);
    assert_eq!(total, 100);
    assert_eq!(got["unclassified"][OWNER], 40.0);
    assert_eq!(got["app"][OWNER], 60.0);
    assert!(
        notes(&json).join("\n").contains("kept as a frame"),
        "{:?}",
        notes(&json)
    );
}

#[test]
fn pid_and_tid_process_roots_become_one_thread_each() {
    // inferno collapse-perf --tid writes `comm-PID/TID`
    let file = temp_file(
        "java-41/42;start_thread;app.Work.run 3\n\
         java-41/43;start_thread;app.Work.run 4\n\
         java-41/43;start_thread;app.Work.idle 1\n",
    );
    let json = report_json(&[file.path().to_str().unwrap(), "--threads"]);
    let threads = json["inputs"][0]["threads"].as_array().unwrap();
    let mut got: Vec<(String, u64)> = threads
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["total"].as_u64().unwrap(),
            )
        })
        .collect();
    got.sort();
    // --threads folds pool numbers: the tid suffix is folded too, so compare the totals
    let total: u64 = got.iter().map(|(_, w)| w).sum();
    assert_eq!(total, 8, "{got:?}");
    assert!(
        got.iter().all(|(name, _)| name.starts_with("java-")),
        "{got:?}"
    );
    assert!(
        notes(&json).join("\n").contains("2 name(s)"),
        "{:?}",
        notes(&json)
    );
}

#[test]
fn a_root_function_is_not_taken_for_a_process() {
    // `main` above `server.Loop.run` is a function: no frame starts a process below it
    let json = report_json(&[&fixture_arg("folded/flame-mini.folded")]);
    assert!(!notes(&json).join("\n").contains("process name"));
    // one root above a thread start and one above an ordinary frame (a stack cut short):
    // one file, one rule (issue 28), so both are taken, the cut stack's too
    let file = temp_file("java;start_thread;a.B.c 3\nperf;do_work 1\n");
    let table = whose_ok(&["report", file.path().to_str().unwrap()]);
    assert!(table.contains("process name"), "{table}");
    assert!(table.contains("call chains up to 2 frames"), "{table}");
    // a root that is a thread start itself is a function, not a process name
    let file = temp_file("start_thread;a.B.c 3\nperf;start_thread;do_work 1\n");
    let table = whose_ok(&["report", file.path().to_str().unwrap()]);
    assert!(!table.contains("process name"), "{table}");
    // a process-like root that is also called inside another stack is a function
    let file = temp_file("run;start_thread;x 3\njava;start_thread;run 1\n");
    let table = whose_ok(&["report", file.path().to_str().unwrap()]);
    assert!(!table.contains("process name"), "{table}");
}

#[test]
fn a_differential_file_is_refused_with_how_to_read_it() {
    let file = temp_file("# difffolded.pl\nmain;a;c 31 56\nmain;b 2 0\n");
    let err = whose_err(&["report", file.path().to_str().unwrap()]);
    let path = file.path().display().to_string();
    assert!(err.contains(&format!("{path}:2:")), "{err}");
    assert!(err.contains("differential folded file"), "{err}");
    assert!(
        err.contains("whose diff before.folded after.folded"),
        "{err}"
    );
    // counts before the last may be decimals, `5.` among them
    for line in ["main;a 1.5 2\n", "main;a 5. 2\n"] {
        let file = temp_file(line);
        let err = whose_err(&["report", file.path().to_str().unwrap()]);
        assert!(err.contains("differential folded file"), "{line}: {err}");
    }
}

#[test]
fn fractional_counts_are_summed_exactly_and_said() {
    // 12.5 + 31.000 + 0.25: up to two places, so weights are hundredths
    let file = temp_file(
        "main;app.Orders.list 12.5\nmain;server.Loop.run 31.000\nmain;server.Loop.run 0.25\n",
    );
    let json = report_json(&[
        file.path().to_str().unwrap(),
        "--rules",
        &fixture_arg("rules/flame-mini.toml"),
        "--no-presets",
    ]);
    let (got, total) = shares_of(&json);
    assert_eq!(total, 1250 + 3100 + 25);
    assert_eq!(
        json["inputs"][0]["owners"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["name"] == "app")
            .unwrap()["self"],
        1250
    );
    assert!(
        (got["server"][SELF] - 3125.0 * 100.0 / 4375.0).abs() < 1e-9,
        "{got:?}"
    );
    let notes = notes(&json).join("\n");
    assert!(
        notes.contains("up to 2 decimal place(s)") && notes.contains("times 100"),
        "{notes}"
    );
}

#[test]
fn utf16_with_a_bom_reads_like_utf8() {
    let text = std::fs::read_to_string(fixture("folded/flame-mini.folded")).unwrap();
    let rules = fixture_arg("rules/flame-mini.toml");
    let (want, want_total) = report_shares(&[
        &fixture_arg("folded/flame-mini.folded"),
        "--rules",
        &rules,
        "--no-presets",
    ]);
    for big_endian in [false, true] {
        let mut bytes = if big_endian {
            vec![0xfe, 0xff]
        } else {
            vec![0xff, 0xfe]
        };
        for unit in text.replace('\n', "\r\n").encode_utf16() {
            bytes.extend(if big_endian {
                unit.to_be_bytes()
            } else {
                unit.to_le_bytes()
            });
        }
        let file = temp_file(&bytes);
        let (got, total) = report_shares(&[
            file.path().to_str().unwrap(),
            "--rules",
            &rules,
            "--no-presets",
        ]);
        assert_eq!(
            (got, total),
            (want.clone(), want_total),
            "big endian: {big_endian}"
        );
    }
}

#[test]
fn one_bad_line_among_many_is_skipped_and_counted() {
    let mut text = String::new();
    for i in 0..1000 {
        text.push_str(&format!("main;app.Work.f{} 2\n", i % 7));
    }
    text.insert_str(0, "main;app.Work.f1 two\n");
    let file = temp_file(&text);
    let json = report_json(&[file.path().to_str().unwrap()]);
    let (_, total) = shares_of(&json);
    assert_eq!(total, 2000);
    let warnings = json["inputs"][0]["warnings"].to_string();
    assert!(
        warnings.contains("skipped 1 line(s) that are not folded stacks (first at line 1:"),
        "{warnings}"
    );
    // 20 bad lines among 120: the file is not folded stacks
    let mut text = "main;app.Work.f 2\n".repeat(100);
    text.push_str(&"main;app.Work.f ??\n".repeat(20));
    let file = temp_file(&text);
    let err = whose_err(&["report", file.path().to_str().unwrap()]);
    assert!(
        err.contains(":101: 20 of 120 lines are not folded stacks"),
        "{err}"
    );
}

#[test]
fn gzipped_utf16_collapsed_text_reads_like_the_plain_file() {
    // the shapes above in their gzip form: UTF-16 text inside gzip, a process-name root
    let text = std::fs::read_to_string(fixture("folded/process-root.folded")).unwrap();
    let mut utf16 = vec![0xff, 0xfe];
    utf16.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    let file = temp_file(gzip(&utf16));
    let rules = fixture_arg("rules/process-root.toml");
    let plain = report_shares(&[
        &fixture_arg("folded/process-root.folded"),
        "--rules",
        &rules,
    ]);
    let packed = report_shares(&[file.path().to_str().unwrap(), "--rules", &rules]);
    assert_eq!(packed, plain);
    assert_eq!(packed.1, 100);
    assert!(!packed.0.contains_key("unclassified"), "{:?}", packed.0);
}

/// What `convert --to folded` writes for frames known by their source file and for samples
/// without frames, read from a file that is not detected as py-spy's (its first lines are
/// native): py-spy's `func (file.py:LINE)` is still a Python frame with its file (the python
/// preset is detected and matches the stdlib by file), a C frame with a source file keeps it,
/// and `[no frames]` is a sample without a stack, not a frame.
#[test]
fn source_file_frames_and_no_frames_read_back_in_any_folded_file() {
    let mut text = String::new();
    for i in 0..20 {
        text.push_str(&format!("main;work_{i} 1\n"));
    }
    text.push_str("<module> (main.py:6);run (app.py:58);loads (json/__init__.py:346) 30\n");
    text.push_str("<module> (main.py:6);run (app.py:58);encoder_call (_json.c:1305) 7\n");
    text.push_str("[no frames] 3\n");
    let file = temp_file(&text);
    let path = file.path().to_str().unwrap();
    let table = whose_ok(&["report", path]);
    assert!(table.contains("format: folded\n"), "{table}");
    let json = report_json(&[path]);
    let input = &json["inputs"][0];
    assert_eq!(input["total"], 60);
    assert!(
        json["presets"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == "python"),
        "{}",
        json["presets"]
    );
    let owner = |name: &str| {
        input["owners"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["name"] == name)
            .unwrap_or_else(|| panic!("no owner {name}: {}", input["owners"]))
            .clone()
    };
    // json/__init__.py is the stdlib by its file; _json.c the stdlib's C extension by its
    // file (issue 29: as transparent as the stdlib's Python code)
    assert_eq!(owner("python-std")["self"], 30);
    assert_eq!(owner("python-std-native")["self"], 7);
    assert_eq!(input["stackless"], 3);
    // the frame is json.loads, not `loads (json/...)`, and matched by its file
    let explain = whose_ok(&["explain", path, "--frame", "json.loads"]);
    assert!(explain.contains(r#"file "json/*""#), "{explain}");
}

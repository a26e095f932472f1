//! `whose report` on small hand-made profiles whose answers are derived by hand in the
//! comments, across output formats and options.

use super::common::*;
use serde_json::Value;
use std::io::Write;

/// Rules: `app.` user, `lib.` library, `rt.` runtime (transparent); `main` matches nothing
/// and is `unclassified` (visible).
const RULES: &str = r#"
[[owner]]
name = "app"
category = "user"
prefix = ["app."]

[[owner]]
name = "lib"
category = "library"
prefix = ["lib."]

[[owner]]
name = "rt"
category = "runtime"
prefix = ["rt."]
"#;

/// total 20
/// - main;app.handle;lib.parse;rt.alloc 10: self rt, owner lib, anywhere {main, app, lib, rt}
/// - main;app.handle;app.work 6:            self app, owner app, anywhere {main, app}
/// - main;rt.gc 4:                          self rt, owner unclassified (main), anywhere {main, rt}
///
/// So self: rt 14 (70%), app 6 (30%); owner: lib 10 (50%), app 6 (30%), unclassified 4
/// (20%); anywhere: unclassified 20, app 16, rt 14, lib 10.
const PROFILE: &str =
    "main;app.handle;lib.parse;rt.alloc 10\nmain;app.handle;app.work 6\nmain;rt.gc 4\n";

struct Case {
    _dir: tempfile::TempDir,
    profile: String,
    rules: String,
}

fn case(profile: &str) -> Case {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p.folded");
    let r = dir.path().join("r.toml");
    std::fs::write(&p, profile).unwrap();
    std::fs::write(&r, RULES).unwrap();
    Case {
        profile: p.to_str().unwrap().into(),
        rules: r.to_str().unwrap().into(),
        _dir: dir,
    }
}

fn run(c: &Case, extra: &[&str]) -> String {
    let mut args = vec!["report", &c.profile, "--rules", &c.rules, "--no-presets"];
    args.extend_from_slice(extra);
    whose_ok(&args)
}

fn json(c: &Case, extra: &[&str]) -> Value {
    let mut args = extra.to_vec();
    args.extend_from_slice(&["--format", "json"]);
    serde_json::from_str(&run(c, &args)).unwrap()
}

fn weights(v: &Value, list: &str, name: &str) -> [u64; 3] {
    let o = v[list]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {list}"));
    [
        o["self"].as_u64().unwrap(),
        o["owner"].as_u64().unwrap(),
        o["anywhere"].as_u64().unwrap(),
    ]
}

#[test]
fn json_has_exact_weights_per_view() {
    let c = case(PROFILE);
    let v = json(&c, &[]);
    assert_eq!(v["schema"], "whose/1");
    let input = &v["inputs"][0];
    assert_eq!(input["total"], 20);
    assert_eq!(input["metric"]["name"], "samples");
    assert_eq!(weights(input, "owners", "rt"), [14, 0, 14]);
    assert_eq!(weights(input, "owners", "app"), [6, 6, 16]);
    assert_eq!(weights(input, "owners", "lib"), [0, 10, 10]);
    assert_eq!(weights(input, "owners", "unclassified"), [0, 4, 20]);
    // the heaviest owner frame is lib.parse (who asked for 10 of 20)
    assert_eq!(input["top_owner_frames"][0]["frame"], "lib.parse");
    assert_eq!(input["top_owner_frames"][0]["weight"], 10);
    assert_eq!(input["unclassified_frames"][0]["frame"], "main");
    assert_eq!(input["unclassified_frames"][0]["weight"], 20);
}

#[test]
fn categories_roll_up_with_their_own_anywhere() {
    let c = case(PROFILE);
    let v = json(&c, &[]);
    let input = &v["inputs"][0];
    assert_eq!(weights(input, "categories", "user"), [6, 6, 16]);
    assert_eq!(weights(input, "categories", "runtime"), [14, 0, 14]);
    assert_eq!(weights(input, "categories", "unknown"), [0, 4, 20]);
    let table = run(&c, &["--by", "category"]);
    let line = table
        .lines()
        .find(|l| l.trim_start().starts_with("library"))
        .unwrap();
    assert!(line.contains("50.0%"), "{table}");
}

#[test]
fn table_shows_shares_and_weights() {
    let c = case(PROFILE);
    let table = run(&c, &[]);
    let line = |name: &str| {
        table
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row {name} in\n{table}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        line("app"),
        ["app", "user", "30.0%", "6", "30.0%", "6", "80.0%", "16"]
    );
    assert_eq!(
        line("rt"),
        ["rt", "runtime*", "70.0%", "14", "0.0%", "0", "70.0%", "14"]
    );
    assert!(table.contains("total 20"), "{table}");
    // sorted by the owner view: lib (50%) first, in the row under the titles
    let first_row = table
        .lines()
        .skip_while(|l| !l.contains("category"))
        .nth(1)
        .unwrap();
    assert!(first_row.trim_start().starts_with("lib"), "{table}");
}

#[test]
fn views_option_limits_columns() {
    let c = case(PROFILE);
    let table = run(&c, &["--views", "owner"]);
    let app = table
        .lines()
        .find(|l| l.trim_start().starts_with("app "))
        .unwrap();
    assert_eq!(
        app.split_whitespace().collect::<Vec<_>>(),
        ["app", "user", "30.0%", "6"]
    );
}

#[test]
fn csv_has_one_row_per_owner_and_view() {
    let c = case(PROFILE);
    let csv = run(&c, &["--format", "csv"]);
    // the last column says whether the owner was guessed from its unit (issue 29)
    assert!(csv.starts_with("input,owner,category,transparent,view,weight,total,share,guessed\n"));
    assert!(
        csv.contains(",lib,library,false,owner,10,20,50.000000,false\n"),
        "{csv}"
    );
    assert!(
        csv.contains(",rt,runtime,true,self,14,20,70.000000,false\n"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 1 + 4 * 3);
}

#[test]
fn markdown_right_aligns_numbers() {
    let c = case(PROFILE);
    let md = run(&c, &["--format", "markdown"]);
    assert!(md.contains("| owner | category | self |"), "{md}");
    assert!(md.contains("| --- | --- | ---: |"), "{md}");
    assert!(
        md.contains("| lib | library | 0.0% | 0 | 50.0% | 10 | 50.0% | 10 |"),
        "{md}"
    );
}

#[test]
fn per_divides_weights_not_shares() {
    let c = case(PROFILE);
    let table = run(&c, &["--per", "2", "--views", "owner"]);
    let lib = table
        .lines()
        .find(|l| l.trim_start().starts_with("lib "))
        .unwrap();
    assert_eq!(
        lib.split_whitespace().collect::<Vec<_>>(),
        ["lib", "library", "50.0%", "5"]
    );
}

#[test]
fn merge_sums_inputs() {
    let c = case(PROFILE);
    let v = json(&c, &[&c.profile, "--merge"]);
    let input = &v["inputs"][0];
    assert_eq!(input["total"], 40);
    assert_eq!(weights(input, "owners", "lib"), [0, 20, 20]);
}

#[test]
fn repeats_show_median_and_range() {
    // second repeat: lib.parse stack weighs 30 instead of 10 → total 40, lib owner 75%
    let c = case(PROFILE);
    let c2 = case(&PROFILE.replace(" 10\n", " 30\n"));
    let table = run(&c, &[&c2.profile, "--repeats", "--views", "owner"]);
    let lib = table
        .lines()
        .find(|l| l.trim_start().starts_with("lib "))
        .unwrap();
    // median of 50% and 75% is 62.5%, range 50.0–75.0
    assert!(lib.contains("62.5% [50.0–75.0]"), "{table}");
}

#[test]
fn several_inputs_side_by_side() {
    let c = case(PROFILE);
    let c2 = case(&PROFILE.replace(" 10\n", " 30\n"));
    let table = run(&c, &[&c2.profile, "--views", "owner"]);
    // headed by the inputs, which share a file name: the ends of their paths
    let ends = |p: &str| p[p.len() - 10..].to_string();
    let head = table
        .lines()
        .find(|l| l.starts_with("  ") && l.contains("p.folded") && l.contains('…'))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(
        head.contains(&ends(&c.profile)) && head.contains(&ends(&c2.profile)),
        "{table}"
    );
    assert!(!table.contains("#1"), "{table}");
    let lib = table
        .lines()
        .find(|l| l.trim_start().starts_with("lib "))
        .unwrap();
    assert_eq!(
        lib.split_whitespace().collect::<Vec<_>>(),
        ["lib", "library", "50.0%", "75.0%"]
    );
}

#[test]
fn threads_from_async_profiler_thread_frames() {
    // worker-1 and worker-2 fold into worker-*; main thread separate
    let c = case(
        "[worker-1 tid=11];main;app.handle;app.work 6\n[worker-2 tid=12];main;rt.gc 4\n[main tid=1];main;app.x 10\n",
    );
    let v = json(&c, &["--threads"]);
    let threads = v["inputs"][0]["threads"].as_array().unwrap();
    let names: Vec<&str> = threads
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["main", "worker-*"]);
    assert_eq!(threads[1]["total"], 10);
    assert_eq!(weights(&threads[1], "owners", "app"), [6, 6, 6]);
    let table = run(&c, &["--threads"]);
    assert!(table.contains("thread worker-*: 50.0%"), "{table}");
}

#[test]
fn stdin_is_read_with_dash() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_whose"))
        .args(["report", "-", "--no-presets", "--format", "json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(PROFILE.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["inputs"][0]["total"], 20);
    assert_eq!(v["inputs"][0]["path"], "-");
}

#[test]
fn output_file_is_written() {
    let c = case(PROFILE);
    let out = c.profile.replace("p.folded", "out.json");
    run(&c, &["--format", "json", "-o", &out]);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["inputs"][0]["total"], 20);
}

#[test]
fn user_prefix_and_through() {
    let c = case(PROFILE);
    // --user main makes `main` user code with top priority
    let v = json(&c, &["--user", "main"]);
    assert_eq!(weights(&v["inputs"][0], "owners", "user"), [0, 4, 20]);
    // --through library: lib is looked through, so app asked for the lib.parse stack
    let v = json(&c, &["--through", "library"]);
    assert_eq!(weights(&v["inputs"][0], "owners", "app"), [6, 16, 16]);
    let err = whose_err(&[
        "report",
        &c.profile,
        "--rules",
        &c.rules,
        "--through",
        "nobody",
    ]);
    assert!(
        err.contains("--through nobody") && err.contains("app"),
        "{err}"
    );
}

#[test]
fn explain_names_the_rule() {
    let c = case(PROFILE);
    let out = whose_ok(&["explain", &c.profile, "--rules", &c.rules, "--no-presets"]);
    let parse = out.lines().find(|l| l.contains("lib.parse")).unwrap();
    assert!(
        parse.contains(" lib ") && parse.contains("prefix \"lib.\""),
        "{out}"
    );
    // where the rule is, below the table
    assert!(
        out.lines()
            .any(|l| l.starts_with("  lib ") && l.ends_with("r.toml:7")),
        "{out}"
    );
    let main = out.lines().find(|l| l.ends_with(" main")).unwrap();
    assert!(
        main.contains("no rule matched") && main.contains("100.0%"),
        "{out}"
    );
}

#[test]
fn rules_check_and_list() {
    let c = case(PROFILE);
    let out = whose_ok(&["rules", "check", &c.rules]);
    assert!(
        out.contains("ok, 3 owner block(s)") && out.contains("lib (library)"),
        "{out}"
    );
    let out = whose_ok(&["rules", "list"]);
    for preset in [
        "jvm",
        "kotlin",
        "kotlin-native",
        "go",
        "rust",
        "native",
        "kernel",
        "python",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(&format!("{preset} "))),
            "{out}"
        );
    }
}

#[test]
fn by_type_reports_allocated_types() {
    // the seed's stacks end in allocated classes; their weights add up to the total
    let seed = fixture("folded/seed-ktor-alloc.txt");
    let csv = whose_ok(&[
        "report",
        seed.to_str().unwrap(),
        "--unit",
        "bytes",
        "--by",
        "type",
        "--format",
        "csv",
    ]);
    let mut sum = 0u128;
    let mut total = 0u128;
    for line in csv.lines().skip(1) {
        let cols: Vec<&str> = line.rsplitn(4, ',').collect();
        sum += cols[2].parse::<u128>().unwrap();
        total = cols[1].parse().unwrap();
    }
    assert_eq!(total, 2_459_954_604);
    assert_eq!(sum, total);
    assert!(csv.contains(",byte[],"), "{csv}");
    let table = whose_ok(&["report", seed.to_str().unwrap(), "--by", "type"]);
    assert!(table.contains("byte[]"), "{table}");
    let err = whose_err(&[
        "report",
        fixture("folded/py-app.folded").to_str().unwrap(),
        "--by",
        "type",
    ]);
    assert!(err.contains("no allocated types"), "{err}");
}

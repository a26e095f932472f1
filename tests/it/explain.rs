//! `whose explain` (issue 15): one row per function whose incl. is `go tool pprof`'s cum,
//! rules cited where an installed user can look them up, lines that fit a terminal, the
//! unclassified functions and a next step that, taken, claims them.

use super::common::{fixture_arg, whose_ok, write_temp};

fn go_cpu() -> String {
    fixture_arg("pprof/cpu.pb.gz")
}

/// `(name, cum %)` per row of `go tool pprof -top -cum` output.
fn pprof_cum(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"))
        .skip(1)
        .map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            let cum: f64 = cols[4].trim_end_matches('%').parse().unwrap();
            let name = cols[5..].join(" ");
            (name.trim_end_matches(" (inline)").to_string(), cum)
        })
        .collect()
}

/// `(incl %, self %, function)` per row of explain's table.
fn explain_rows(out: &str) -> Vec<(f64, f64, String)> {
    out.lines()
        .skip_while(|l| !l.trim_start().starts_with("incl."))
        .skip(1)
        .take_while(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|c| c.ends_with('%'))
        })
        .map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            let p = |s: &str| s.trim_end_matches('%').parse::<f64>().unwrap();
            (p(cols[0]), p(cols[1]), l.to_string())
        })
        .collect()
}

#[test]
fn one_row_per_function_with_pprofs_cum() {
    let out = whose_ok(&["explain", &go_cpu(), "--top", "60"]);
    let rows = explain_rows(&out);
    assert_eq!(rows.len(), 60, "{out}");
    let handle: Vec<_> = rows
        .iter()
        .filter(|r| r.2.contains(" main.handleOrders "))
        .collect();
    assert_eq!(handle.len(), 1, "one row for main.handleOrders:\n{out}");
    assert_eq!(handle[0].0, 83.2, "{out}");
    // every function pprof lists by cum has the same incl. here (one decimal)
    let reference =
        std::fs::read_to_string(super::common::fixture("pprof/cpu.top-cum.txt")).unwrap();
    let mut compared = 0;
    for (name, cum) in pprof_cum(&reference) {
        let row = rows
            .iter()
            .find(|r| r.2.contains(&format!("  {name} (gosvc)")));
        if let Some(row) = row {
            assert!(
                (row.0 - cum).abs() <= 0.051,
                "{name}: incl. {} but pprof cum {cum}\n{out}",
                row.0
            );
            compared += 1;
        }
    }
    assert!(compared >= 40, "only {compared} functions compared:\n{out}");
}

#[test]
fn lines_split_a_function_by_source_line() {
    let out = whose_ok(&[
        "explain",
        &go_cpu(),
        "--lines",
        "--frame",
        "^main\\.handleOrders$",
    ]);
    let rows = explain_rows(&out);
    assert!(rows.len() > 1, "{out}");
    assert!(
        rows.iter().all(|r| r.2.contains("main.go:")),
        "each row names its line:\n{out}"
    );
    // the largest line is less than the function (as the issue saw: 54.1 % of 83.2 %)
    assert_eq!(rows[0].0, 54.1, "{out}");
}

#[test]
fn rules_are_cited_as_presets_and_fit_a_terminal() {
    let out = whose_ok(&["explain", &go_cpu()]);
    assert!(!out.contains("rules/go.toml"), "{out}");
    assert!(!out.contains(":0"), "{out}");
    assert!(out.contains("  net-http    preset go:60\n"), "{out}");
    assert!(
        out.contains("  user        go module whose/gosvc (detected from the main package's file"),
        "{out}"
    );
    // the preset's line 60 is where `whose rules show go` declares net-http
    let go = whose_ok(&["rules", "show", "go"]);
    let lines: Vec<&str> = go.lines().collect();
    assert_eq!(lines[59], "[[owner]]");
    assert_eq!(lines[60], "name = \"net-http\"");
    // a 550-character regex is shortened in the row
    let c = whose_ok(&[
        "explain",
        &fixture_arg("perf/c-malloc.perf.perf-script.txt.gz"),
    ]);
    for row in explain_rows(&c) {
        assert!(row.2.chars().count() <= 100, "row too wide:\n{}", row.2);
    }
    assert!(
        c.contains("  regex \"^(__libc_(malloc|fre…  _int_malloc (libc.so.6)"),
        "{c}"
    );
}

#[test]
fn unclassified_functions_and_a_rule_that_claims_them() {
    // without the guess of the recorded executable's own code (`--no-guess`), churn's C
    // functions are unclassified: the mechanics of naming the rule that claims them
    let script = fixture_arg("perf/c-malloc.perf.perf-script.txt.gz");
    let out = whose_ok(&["explain", &script, "--no-guess"]);
    let section = out
        .split("unclassified functions by inclusive weight (8 of 8):\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{out}"));
    let first: Vec<&str> = section.lines().skip(1).take(3).collect();
    assert_eq!(
        first,
        [
            " 36.8%    0.0%  main (churn)",
            " 31.2%    0.4%  table_round.constprop.0 (churn)",
            " 15.4%   14.9%  table_put (churn)"
        ],
        "{out}"
    );
    // C functions have no package prefix: the next step is a rule, and taking it works
    let rule: String = out
        .lines()
        .skip_while(|l| !l.starts_with("next step:"))
        .skip(1)
        .take_while(|l| l.starts_with("    "))
        .map(|l| format!("{}\n", l.trim_start()))
        .collect();
    assert!(
        rule.contains("prefix = [\"main\", \"table_round.constprop.0\""),
        "{out}"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = write_temp(dir.path(), "app.toml", &rule);
    let taken = whose_ok(&[
        "explain",
        &script,
        "--no-guess",
        "--rules",
        file.to_str().unwrap(),
    ]);
    let left = taken
        .split("unclassified functions by inclusive weight (")
        .nth(1)
        .unwrap_or_else(|| panic!("{taken}"));
    assert!(left.starts_with("3 of 3):"), "{taken}");
    assert!(taken.contains(" 36.8%    0.0%  app "), "{taken}");
}

#[test]
fn a_package_prefix_is_the_next_step_when_one_covers_them() {
    // `--no-guess`: the guess of the program's own code would take `bench.` already
    let seed = fixture_arg("folded/seed-ktor-alloc.txt");
    let out = whose_ok(&["explain", &seed, "--unit", "bytes", "--no-guess"]);
    assert!(
        out.contains(
            "next step: `--user bench.` would claim the heaviest unclassified functions as user \
             code, 0.0% of the weight in the owner view (100.0% passes through them)"
        ),
        "{out}"
    );
    let taken = whose_ok(&[
        "explain",
        &seed,
        "--unit",
        "bytes",
        "--no-guess",
        "--user",
        "bench.",
    ]);
    assert!(!taken.contains("next step: `--user"), "{taken}");
    // with no flags the guess takes it: no hint is left to give
    let guessed = whose_ok(&["explain", &seed, "--unit", "bytes"]);
    assert!(!guessed.contains("next step: `--user"), "{guessed}");
}

#[test]
fn rules_list_shows_every_block_of_a_preset_and_show_prints_it() {
    let out = whose_ok(&["rules", "list", "--preset", "go"]);
    let blocks = |name: &str| {
        std::fs::read_to_string(format!("{}/rules/{name}.toml", env!("CARGO_MANIFEST_DIR")))
            .unwrap()
            .lines()
            .filter(|l| *l == "[[owner]]")
            .count()
    };
    let want: usize = ["go", "native", "allocators", "kernel"]
        .map(blocks)
        .iter()
        .sum();
    let listed = out.lines().filter(|l| l.starts_with("  preset ")).count();
    assert_eq!(listed, want, "{out}");
    assert!(out.contains(&format!("): {want} owner block(s)")), "{out}");
    assert!(
        out.contains("  preset go:182         go-std (library, transparent)"),
        "{out}"
    );
    let shown = whose_ok(&["rules", "show", "jvm"]);
    let file =
        std::fs::read_to_string(format!("{}/rules/jvm.toml", env!("CARGO_MANIFEST_DIR"))).unwrap();
    assert_eq!(shown, file);
    let err = super::common::whose_err(&["rules", "show", "cobol"]);
    assert!(
        err.contains("unknown preset `cobol`; presets are: kotlin"),
        "{err}"
    );
}

/// At 80 columns every line fits but the rule snippet's, which is copied into a file whole:
/// long function names are shortened in the middle (module kept), prose is wrapped, and the
/// matchers give up room first. Wider, the names come back whole.
#[test]
fn explain_fits_the_terminal_width() {
    // run in the repository with a relative path: the widths checked never include the
    // clone's absolute path (issue 28)
    let profile = "fixtures/perf/rust-native.perf-fp.perf-script.txt.gz";
    let run = |columns: &str| {
        let out = super::common::command()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("COLUMNS", columns)
            .args(["explain", profile])
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let narrow = run("80");
    for line in narrow.lines().filter(|l| !l.starts_with("    ")) {
        assert!(
            line.chars().count() <= 80,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    assert!(narrow.contains("logcrunch::worker (logcrunch)"), "{narrow}");
    assert!(narrow.contains("…"), "{narrow}");
    let wide = run("300");
    assert!(
        wide.contains("std::sys::backtrace::__rust_begin_short_backtrace (logcrunch)"),
        "{wide}"
    );
}

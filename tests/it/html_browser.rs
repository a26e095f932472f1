//! The HTML page in a real browser (issue 27): `tests/python/html_check.py` drives headless
//! Chromium through Selenium — it reads the table for every owner and view (and the
//! categories), clicks an owner, zooms a frame by clicking it on the canvas, searches, and
//! drags a time range under the chart — and checks each against `report --format json` and
//! `report --by time`.
//!
//! Needs `/usr/bin/chromium`, `/usr/bin/chromedriver` and Debian's `python3-selenium`
//! (`apt-get install chromium chromium-driver python3-selenium`): `.ci/run` installs them and
//! runs this group with `cargo test -- --ignored html_browser::`.

use super::common::*;
use super::hermetic::Hermetic;
use std::path::Path;
use std::process::Command;

/// Writes the page and the JSON reports of `args` into `dir` (`--by time` only when the
/// input times its samples), then runs the check.
fn check_page(run: &Hermetic, args: &[String], timed: bool, dir: &Path) {
    let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let write = |extra: &[&str], out: &str| {
        let mut all: Vec<&str> = vec!["report"];
        all.extend(args.iter().map(String::as_str));
        all.extend(extra);
        all.extend(["-o", out]);
        let output = run.whose(&all);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    write(&["--format", "html"], &path("page.html"));
    write(&["--format", "json"], &path("report.json"));
    let time = if timed {
        write(&["--format", "json", "--by", "time"], &path("time.json"));
        path("time.json")
    } else {
        "-".to_string()
    };
    html_check(&[path("page.html"), path("report.json"), time]);
}

/// Runs `tests/python/html_check.py ARGS`, which must pass.
fn html_check(args: &[String]) {
    let out = Command::new("/usr/bin/python3")
        .arg(fixture("../tests/python/html_check.py"))
        .args(args)
        .output()
        .expect("run /usr/bin/python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("checks passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[ignore = "needs chromium, chromedriver and python3-selenium"]
fn the_page_of_every_corpus_profile_shows_the_reports_numbers_in_a_browser() {
    let run = Hermetic::with_recorded_glibc();
    let dir = tempfile::tempdir().unwrap();
    // the corpus recordings in fixtures/ (fixtures/README.md), each as whose reads it
    let perf_data = |file: &str| {
        let mut args = vec![fixture_arg(file)];
        args.extend(run.symbol_args());
        args
    };
    let cases: Vec<(Vec<String>, bool)> = vec![
        (perf_data("perf/jvm-shop.perf.data"), true),
        (perf_data("perf/c-malloc.perf.data"), true),
        (perf_data("perf/rust-native.perf-dwarf.data.gz"), true),
        (
            vec![fixture_arg("perf/kotlin-orders.perf-script.txt.gz")],
            true,
        ),
        (vec![fixture_arg("pprof/cpu.pb.gz")], false),
        (vec![fixture_arg("folded/py-app.folded")], false),
        (
            vec![
                fixture_arg("folded/seed-ktor-alloc.txt"),
                "--unit".into(),
                "bytes".into(),
            ],
            false,
        ),
        (vec![fixture_arg("jfr/jdk17-cpu.jfr.gz")], true),
    ];
    for (args, timed) in cases {
        check_page(&run, &args, timed, dir.path());
    }
}

/// A page of two inputs (the same C program with frame pointers and with DWARF): each
/// input's table is its JSON report's, and the diff draws.
#[test]
#[ignore = "needs chromium, chromedriver and python3-selenium"]
fn a_page_of_two_inputs_keeps_each_ones_numbers_and_draws_their_diff() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let inputs = [
        fixture_arg("perf/c-malloc.perf.perf-script.txt.gz"),
        fixture_arg("perf/c-malloc.perf-dwarf.perf-script.txt.gz"),
    ];
    for (format, out) in [("html", path("page.html")), ("json", path("report.json"))] {
        let mut args = vec!["report", &inputs[0], &inputs[1], "--format", format, "-o"];
        args.push(&out);
        whose_ok(&args);
    }
    html_check(&["--inputs".into(), path("page.html"), path("report.json")]);
}

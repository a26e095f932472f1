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

/// Writes the page and both JSON reports of `args` into `dir`, then runs the check.
fn check_page(run: &Hermetic, args: &[String], dir: &Path) {
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
    write(&["--format", "json", "--by", "time"], &path("time.json"));
    let out = Command::new("/usr/bin/python3")
        .arg(fixture("../tests/python/html_check.py"))
        .args([path("page.html"), path("report.json"), path("time.json")])
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
fn the_page_shows_the_reports_numbers_in_a_browser() {
    let run = Hermetic::new();
    let dir = tempfile::tempdir().unwrap();
    check_page(
        &run,
        &[fixture_arg("perf/kotlin-orders.perf-script.txt.gz")],
        dir.path(),
    );
    let mut jvm = vec![fixture_arg("perf/jvm-shop.perf.data")];
    jvm.extend(run.symbol_args());
    check_page(&run, &jvm, dir.path());
}

//! Byte-for-byte goldens: every reader's fixtures through every output format (report table,
//! markdown, JSON, CSV; explain; flame SVG; convert to pprof and folded; gate and diff
//! verdicts). A change that moves one byte of any output fails here; an intended change is
//! blessed with `WHOSE_BLESS=1 cargo test goldens`, and the diff of `tests/golden/` shows it.
//!
//! Files are named `FIXTURE.OPTIONS.FORMAT` (`c-malloc-perf-data.rules.json`). Every run goes
//! through `hermetic.rs`, perf.data runs with its symbol options; its temporary directory's path
//! is replaced by `<tmp>` in what is compared.

use super::hermetic::Hermetic;
use std::path::PathBuf;

/// One golden: a file name under `tests/golden/` and the arguments that make it.
struct Case {
    name: String,
    args: Vec<String>,
}

/// An input, its golden stem, and the options every command on it takes.
struct Input {
    stem: &'static str,
    path: &'static str,
    /// Options for reading and classifying (rules, metric, hermetic symbol options).
    options: Vec<&'static str>,
    /// Whether the input is perf.data (takes the hermetic symbol options).
    perf_data: bool,
}

fn inputs() -> Vec<Input> {
    let plain = |stem, path, options: &[&'static str]| Input {
        stem,
        path,
        options: options.to_vec(),
        perf_data: false,
    };
    let data = |stem, path, options: &[&'static str]| Input {
        stem,
        path,
        options: options.to_vec(),
        perf_data: true,
    };
    vec![
        plain(
            "seed-ktor-alloc",
            "fixtures/folded/seed-ktor-alloc.txt",
            &["--unit", "bytes"],
        ),
        plain(
            "seed-ktor-alloc-types",
            "fixtures/folded/seed-ktor-alloc.txt",
            &["--unit", "bytes", "--types-as-frames", "--user", "bench."],
        ),
        plain("py-app", "fixtures/folded/py-app.folded", &[]),
        plain(
            "flame-mini",
            "fixtures/folded/flame-mini.folded",
            &["--rules", "fixtures/rules/flame-mini.toml", "--no-presets"],
        ),
        plain(
            "rust-native-folded",
            "fixtures/perf/rust-native.perf-fp.folded",
            &[],
        ),
        plain(
            "churn-1",
            "fixtures/repeats/churn-1.folded",
            &[
                "--rules",
                "fixtures/rules/c-malloc-sym.toml",
                "--no-presets",
            ],
        ),
        plain("go-cpu", "fixtures/pprof/cpu.pb.gz", &[]),
        plain(
            "go-allocs",
            "fixtures/pprof/allocs.pb.gz",
            &["--metric", "alloc_space"],
        ),
        plain(
            "go-heap-rules",
            "fixtures/pprof/heap.pb.gz",
            &["--rules", "fixtures/rules/go-svc.toml", "--no-presets"],
        ),
        plain(
            "c-malloc-script",
            "fixtures/perf/c-malloc.perf.perf-script.txt.gz",
            &[],
        ),
        plain(
            "c-malloc-dwarf-script",
            "fixtures/perf/c-malloc.perf-dwarf.perf-script.txt.gz",
            &["--rules", "fixtures/rules/c-malloc.toml", "--no-presets"],
        ),
        plain(
            "rust-native-script",
            "fixtures/perf/rust-native.perf-dwarf.perf-script.txt.gz",
            &[],
        ),
        plain(
            "jvm-shop-script",
            "fixtures/perf/jvm-shop.perf.perf-script.txt.gz",
            &["--rules", "fixtures/rules/jvm-shop.toml"],
        ),
        data("c-malloc-data", "fixtures/perf/c-malloc.perf.data", &[]),
        data(
            "c-malloc-pipe-data",
            "fixtures/perf/c-malloc.perf.pipe.data.gz",
            &["--rules", "fixtures/rules/c-malloc.toml", "--no-presets"],
        ),
        data(
            "c-malloc-dwarf-data",
            "fixtures/perf/c-malloc.perf-dwarf.data.gz",
            &[],
        ),
        data(
            "rust-native-data",
            "fixtures/perf/rust-native.perf-fp.data",
            &["--metric", "samples"],
        ),
        data(
            "rust-native-dwarf-inline",
            "fixtures/perf/rust-native.perf-dwarf.data.gz",
            &["--inline"],
        ),
        data(
            "jvm-shop-data",
            "fixtures/perf/jvm-shop.perf.data",
            &["--kallsyms", "fixtures/perf/jvm-shop.kallsyms"],
        ),
    ]
}

/// Every command and output format for one input.
fn cases(input: &Input, run: &Hermetic) -> Vec<Case> {
    let mut options: Vec<String> = input.options.iter().map(|s| s.to_string()).collect();
    if input.perf_data {
        options.extend(run.symbol_args());
    }
    let case = |suffix: &str, head: &[&str], tail: &[&str]| {
        let mut args: Vec<String> = head.iter().map(|s| s.to_string()).collect();
        args.push(input.path.to_string());
        args.extend(options.iter().cloned());
        args.extend(tail.iter().map(|s| s.to_string()));
        Case {
            name: format!("{}.{suffix}", input.stem),
            args,
        }
    };
    let mut all = vec![
        case("report.table", &["report"], &[]),
        case("report.markdown", &["report", "--format", "markdown"], &[]),
        case("report.json", &["report", "--format", "json"], &[]),
        case("report.csv", &["report", "--format", "csv"], &[]),
        case("report-threads.table", &["report", "--threads"], &[]),
        case(
            "report-by-category.table",
            &["report", "--by", "category"],
            &[],
        ),
        case("explain.txt", &["explain"], &[]),
        case("flame.svg", &["flame"], &["--width", "1200"]),
        case(
            "flame-owner-root.svg",
            &["flame", "--color-by", "owner", "--owner-root"],
            &["--width", "1200"],
        ),
        case("convert.folded", &["convert", "--to", "folded"], &[]),
        case(
            "convert-owner-root.folded",
            &["convert", "--to", "folded", "--owner-root"],
            &[],
        ),
        case("convert.pb.gz", &["convert", "--to", "pprof"], &[]),
        case(
            "gate.txt",
            &["gate"],
            &[
                "--require",
                "unclassified.self <= 50%",
                "--require",
                "category:runtime.owner < 90%",
            ],
        ),
        case(
            "gate.json",
            &["gate", "--format", "json"],
            &["--require", "unclassified.self <= 50%"],
        ),
    ];
    all.push(Case {
        name: format!("{}.diff-self.txt", input.stem),
        args: ["diff", input.path, "--against", input.path]
            .iter()
            .map(|s| s.to_string())
            .chain(options.iter().cloned())
            .collect(),
    });
    all
}

/// The repeats: `--repeats` report, diff and gate over three slices of one recording; and
/// `top` of one owner and of one category.
fn repeat_cases() -> Vec<Case> {
    let rules = [
        "--rules",
        "fixtures/rules/c-malloc-sym.toml",
        "--no-presets",
    ];
    let slices = [
        "fixtures/repeats/churn-1.folded",
        "fixtures/repeats/churn-2.folded",
        "fixtures/repeats/churn-3.folded",
    ];
    let strings = |parts: &[&[&str]]| -> Vec<String> {
        parts
            .iter()
            .flat_map(|p| p.iter().map(|s| s.to_string()))
            .collect()
    };
    vec![
        Case {
            name: "churn-repeats.report.table".into(),
            args: strings(&[&["report", "--repeats"], &slices, &rules]),
        },
        Case {
            name: "churn-repeats.report.json".into(),
            args: strings(&[
                &["report", "--repeats", "--format", "json"],
                &slices,
                &rules,
            ]),
        },
        Case {
            name: "churn-merge.report.markdown".into(),
            args: strings(&[
                &["report", "--merge", "--format", "markdown"],
                &slices,
                &rules,
            ]),
        },
        Case {
            name: "churn-side-by-side.report.csv".into(),
            args: strings(&[&["report", "--format", "csv"], &slices, &rules]),
        },
        Case {
            name: "churn-repeats.gate.txt".into(),
            args: strings(&[
                &["gate"],
                &slices,
                &rules,
                &[
                    "--require",
                    "user.owner >= 50%",
                    "--require",
                    "user.self >= 90%",
                ],
            ]),
        },
        Case {
            name: "churn-repeats.diff.txt".into(),
            args: strings(&[
                &["diff", slices[0], slices[1], "--against", slices[2]],
                &rules,
            ]),
        },
        Case {
            name: "churn-repeats.diff.json".into(),
            args: strings(&[
                &["diff", slices[0], slices[1], "--against", slices[2]],
                &rules,
                &["--format", "json"],
            ]),
        },
        Case {
            name: "go-cpu.top-user.txt".into(),
            args: strings(&[&["top", "user", "fixtures/pprof/cpu.pb.gz"]]),
        },
        Case {
            name: "c-malloc-script.top-allocator-cum.txt".into(),
            args: strings(&[&[
                "top",
                "category:allocator",
                "fixtures/perf/c-malloc.perf.perf-script.txt.gz",
                "--cum",
            ]]),
        },
        Case {
            name: "flame-mini.flame-diff.svg".into(),
            args: strings(&[
                &[
                    "flame",
                    "fixtures/folded/flame-mini.folded",
                    "--diff",
                    "fixtures/repeats/churn-1.folded",
                    "--width",
                    "1200",
                ],
                &["--rules", "fixtures/rules/flame-mini.toml", "--no-presets"],
            ]),
        },
    ]
}

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// What one run printed: stdout, then stderr and the exit code, with the temporary path
/// replaced so the file is the same on every machine.
fn run(case: &Case, hermetic: &Hermetic) -> Vec<u8> {
    let out = hermetic
        .command()
        .args(&case.args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        // the classic terminal the default table is laid out for (issue 15): every table
        // golden is a check that it fits 80 columns
        .env("COLUMNS", "80")
        .output()
        .expect("run whose");
    let tmp = hermetic.root().to_str().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).replace(tmp, "<tmp>");
    let mut bytes = out.stdout;
    let trailer = format!(
        "\n--- stderr (exit {:?}) ---\n{stderr}",
        out.status.code().unwrap_or(-1)
    );
    if case.name.ends_with(".pb.gz") {
        // binary: compared alone (its stderr is the same as the other commands')
        return bytes;
    }
    bytes.extend_from_slice(trailer.as_bytes());
    bytes
}

fn check_all(make: impl FnOnce(&Hermetic) -> Vec<Case>) {
    let hermetic = Hermetic::new();
    let cases = make(&hermetic);
    let bless = std::env::var_os("WHOSE_BLESS").is_some_and(|v| v == "1");
    let results: Vec<(String, Vec<u8>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = cases
            .chunks(cases.len().div_ceil(4).max(1))
            .map(|chunk| {
                let hermetic = &hermetic;
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|c| (c.name.clone(), run(c, hermetic)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let dir = golden_dir();
    let mut failed = Vec::new();
    for (name, got) in results {
        let path = dir.join(&name);
        if bless {
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        match std::fs::read(&path) {
            Ok(want) if want == got => {}
            Ok(_) => {
                let actual = dir.join(format!("{name}.actual"));
                std::fs::write(&actual, &got).unwrap();
                failed.push(format!(
                    "{name} differs (this run's output: {})",
                    actual.display()
                ));
            }
            Err(_) => failed.push(format!("{name} has no golden (WHOSE_BLESS=1 writes it)")),
        }
    }
    assert!(
        failed.is_empty(),
        "{} golden(s) differ:\n  {}",
        failed.len(),
        failed.join("\n  ")
    );
}

#[test]
fn goldens_of_text_readers() {
    check_all(|run| {
        inputs()
            .iter()
            .filter(|i| !i.perf_data)
            .flat_map(|i| cases(i, run))
            .collect()
    });
}

#[test]
fn goldens_of_perf_data() {
    check_all(|run| {
        inputs()
            .iter()
            .filter(|i| i.perf_data)
            .flat_map(|i| cases(i, run))
            .collect()
    });
}

#[test]
fn goldens_of_repeats_and_diffs() {
    check_all(|_| repeat_cases());
}

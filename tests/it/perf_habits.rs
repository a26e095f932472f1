//! perf's and pprof's habits (issue 15): `-i FILE` and `./perf.data` as the default input,
//! `--sample-index`, the `--comm`/`--pid`/`--tid`/`--time` sample filters, shell completions,
//! the man page, and the examples in every command's long help.
//!
//! The filters are checked on a hand-written perf script dump whose answers follow from its
//! six lines of samples, and on the committed JVM recording against the counts `perf script`
//! 6.1 prints for the same filters (the `perf_` tests run perf itself; `.ci/run` runs them).

use super::common::*;
use super::hermetic::Hermetic;
use serde_json::Value;
use std::path::Path;

/// Four samples: java (pid 100) threads 101 and 102, sh (pid 200), at 10.0 to 11.5 s.
const SCRIPT: &str = "\
java 100/101 [000] 10.000000: 1 cpu-clock:
\t1000 app_work (/opt/app/bin/app)

java 100/102 [000] 10.500000: 1 cpu-clock:
\t2000 gc_work (/opt/app/lib/libgc.so)

sh 200/200 [001] 11.000000: 1 cpu-clock:
\t3000 main (/bin/sh)

java 100/101 [000] 11.500000: 1 cpu-clock:
\t1000 app_work (/opt/app/bin/app)
";

/// The sample count and the notes of `whose report` of `profile` with `extra` options.
fn samples_and_notes(profile: &Path, extra: &[&str]) -> (u128, Vec<String>) {
    let mut args = vec![
        "report",
        profile.to_str().unwrap(),
        "--format",
        "json",
        "--metric",
        "samples",
    ];
    args.extend_from_slice(extra);
    let json: Value = serde_json::from_str(&whose_ok(&args)).unwrap();
    (shares_of(&json).1, notes(&json))
}

#[test]
fn filters_keep_the_samples_perf_report_keeps_in_perf_script_text() {
    let file = temp_file(SCRIPT);
    let cases: [(&[&str], u128); 18] = [
        (&[], 4),
        (&["--comm", "java"], 3),
        (&["--comm", "sh"], 1),
        (&["--comm", "java,sh"], 4),
        (&["--comm", "sh", "--comm", "java"], 4),
        (&["--pid", "100"], 3),
        (&["--pid", "200"], 1),
        (&["--tid", "101"], 2),
        (&["--tid", "101,200"], 3),
        // both ends are included, as perf includes them
        (&["--time", "10.5,11.0"], 2),
        (&["--time", "10.5,"], 3),
        (&["--time", ",10.5"], 2),
        // perf: a lone START is an open end
        (&["--time", "11"], 2),
        // every filter given must pass
        (&["--comm", "java", "--time", "11,"], 1),
        // percent slices of 10.0 s to 11.5 s: the first third ends at 10.499999999
        (&["--time", "0%-33.3333333333%"], 1),
        (&["--time", "50%/2"], 2),
        (&["--time", "10%/1,10%/10"], 2),
        (&["--pid", "100", "--tid", "102,200"], 1),
    ];
    for (extra, want) in cases {
        let (got, notes) = samples_and_notes(file.path(), extra);
        assert_eq!(got, want, "{extra:?}");
        let filtered = notes.iter().find(|n| n.starts_with("filtered:"));
        assert_eq!(
            filtered.is_some(),
            !extra.is_empty(),
            "{extra:?}: {notes:?}"
        );
    }
    let note = "filtered: --comm java kept 3 of 4 samples, 1 left out";
    let (_, notes) = samples_and_notes(file.path(), &["--comm", "java"]);
    assert!(notes.contains(&note.to_string()), "{notes:?}");
    let table = whose_ok(&["report", file.path().to_str().unwrap(), "--comm", "java"]);
    assert!(table.contains(note), "{table}");
    // a flame graph of some of the samples says so in its title
    let svg = whose_ok(&["flame", file.path().to_str().unwrap(), "--comm", "java"]);
    assert!(svg.contains(note), "the flame graph's title");
}

#[test]
fn what_a_filter_cannot_decide_is_an_error_never_a_silent_answer() {
    let script = temp_file(SCRIPT);
    let script = script.path().to_str().unwrap();
    let (folded, pprof) = (
        fixture_arg("folded/process-root.folded"),
        fixture_arg("pprof/cpu.pb.gz"),
    );
    let cases = [
        (
            vec!["report", &folded, "--comm", "java"],
            "--comm java is not supported for folded input: it records no pid",
        ),
        (
            vec!["flame", &pprof, "--pid", "1"],
            "--pid 1 is not supported for pprof input: it records no pid",
        ),
        (
            vec!["convert", &pprof, "--to", "folded", "--time", "1,2"],
            "is not supported for pprof input",
        ),
        (
            vec!["report", script, "--comm", "python"],
            "no samples left: --comm python matched none of the 4 samples",
        ),
        (
            vec!["report", script, "--time", "11,10"],
            "--time 11,10: the end is before the start",
        ),
        (
            vec!["report", script, "--time", "10.0000000001,"],
            "is not a time: expected seconds as perf prints them",
        ),
    ];
    for (args, want) in cases {
        let e = whose_err(&args);
        assert!(e.contains(want), "{args:?}: {e}");
    }
    // standard input cannot be read twice to find the first and last sample times
    let out = command()
        .args(["report", "-", "--time", "10%/2"])
        .stdin(std::fs::File::open(script).unwrap())
        .output()
        .unwrap();
    let e = err_stderr(&["report", "-", "--time", "10%/2"], out);
    assert!(
        e.contains("a percent --time slice needs the first and last sample times"),
        "{e}"
    );
    // perf script's default fields print the tid alone: a pid filter cannot be decided
    let tid_only = temp_file("java 101 10.000000: 1 cpu-clock:\n\t1000 app_work (/x)\n");
    let e = whose_err(&["report", tid_only.path().to_str().unwrap(), "--pid", "100"]);
    assert!(
        e.contains("--pid 100 needs each sample's pid, and the sample at line 1"),
        "{e}"
    );
    assert!(e.contains("perf script -F +pid"), "{e}");
    // ... and a tid filter can
    let (n, _) = samples_and_notes(tid_only.path(), &["--tid", "101"]);
    assert_eq!(n, 1);
}

/// `perf script -i jvm-shop.perf.data -F comm FILTER | wc -l` with perf 6.1, for each filter.
const JVM_SHOP_COUNTS: [(&[&str], u128); 8] = [
    (&["--comm", "HTTP-Dispatcher"], 1427),
    (
        &[
            "--pid",
            "22048",
            "--tid",
            "22064,22095",
            "--time",
            "2863.902713,2865",
        ],
        523,
    ),
    (
        &[
            "--comm",
            "HTTP-Dispatcher,C2 CompilerThre",
            "--tid",
            "22064,22095,22070",
            "--time",
            "2863.95,2870.5",
        ],
        445,
    ),
    (&["--time", "10%/2"], 739),
    (&["--time", "0%-10%"], 831),
    (&["--time", "90%-100%"], 692),
    // several slices: their union, overlaps counted once
    (&["--time", "10%/1,10%/3"], 1498),
    (&["--time", "0%-10%,5%-15%"], 1219),
];

#[test]
fn filters_on_perf_data_keep_what_perf_script_keeps() {
    let h = Hermetic::new();
    let data = fixture("perf/jvm-shop.perf.data");
    for (filter, want) in JVM_SHOP_COUNTS {
        let mut extra = vec!["--metric", "samples"];
        extra.extend_from_slice(filter);
        let (json, _) = h.report(&data, &extra);
        assert_eq!(shares_of(&json).1, want, "{filter:?}");
        let note = notes(&json)
            .into_iter()
            .find(|n| n.starts_with("filtered:"))
            .unwrap();
        assert!(note.ends_with(&format!(
            "kept {want} of 6694 samples, {} left out",
            6694 - want
        )));
    }
    // the perf script text of the same recording prints each sample's comm, tid and time
    let text = fixture("perf/jvm-shop.perf.perf-script.txt.gz");
    for (filter, want) in &JVM_SHOP_COUNTS[..1] {
        assert_eq!(samples_and_notes(&text, filter).0, *want, "{filter:?}");
    }
    let (n, _) = samples_and_notes(
        &text,
        &[
            "--comm",
            "HTTP-Dispatcher,C2 CompilerThre",
            "--tid",
            "22064,22095,22070",
            "--time",
            "2863.95,2870.5",
        ],
    );
    assert_eq!(n, 445);
    // percent slices over the text's own first and last sample times (perf.data's SAMPLE_TIME
    // header holds the same two, to the microsecond the text prints)
    for (filter, want) in &JVM_SHOP_COUNTS[3..] {
        assert_eq!(samples_and_notes(&text, filter).0, *want, "{filter:?}");
    }
}

#[test]
fn filtered_out_dwarf_samples_are_not_unwound_and_the_rest_are() {
    // `perf script -i perf-dwarf.data --time T -F time | wc -l` with perf 6.1: 745 and 343
    let h = Hermetic::with_recorded_glibc();
    let data = fixture("perf/c-malloc.perf-dwarf.data.gz");
    for (time, want) in [("50%/2", 745), ("0%-25%", 343)] {
        let (json, _) = h.report(&data, &["--metric", "samples", "--time", time]);
        assert_eq!(shares_of(&json).1, want, "{time}");
        let notes = notes(&json);
        assert!(
            notes.iter().any(|n| n.starts_with("DWARF unwinding: ")
                && n.contains(&format!(" of {want} user stacks"))),
            "{time}: only the kept samples are unwound: {notes:?}"
        );
    }
}

#[test]
#[ignore = "needs perf (perf script): .ci/run runs it with the perf group"]
fn perf_script_agrees_on_every_filter() {
    let h = Hermetic::new();
    let data = fixture("perf/jvm-shop.perf.data");
    for (filter, _) in JVM_SHOP_COUNTS {
        let out = std::process::Command::new("perf")
            .args(["script", "-i", data.to_str().unwrap(), "-F", "comm"])
            .args(filter)
            .env("HOME", h.root())
            .output()
            .expect("run perf");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let perf = String::from_utf8_lossy(&out.stdout).lines().count() as u128;
        let mut extra = vec!["--metric", "samples"];
        extra.extend_from_slice(filter);
        let (json, _) = h.report(&data, &extra);
        assert_eq!(shares_of(&json).1, perf, "{filter:?}");
    }
}

#[test]
fn input_flag_and_the_default_perf_data_read_what_the_argument_reads() {
    let dir = tempfile::tempdir().unwrap();
    let script = write_temp(dir.path(), "run.perf-script.txt", SCRIPT);
    let script = script.to_str().unwrap();
    let json = |args: &[&str], cwd: &Path| {
        let out = command().args(args).current_dir(cwd).output().unwrap();
        let stdout = ok_stdout(args, out);
        serde_json::from_str::<Value>(&stdout).unwrap()
    };
    let positional = json(&["report", script, "--format", "json"], dir.path());
    let with_i = json(&["report", "-i", script, "--format", "json"], dir.path());
    let long = json(
        &["report", "--input", script, "--format", "json"],
        dir.path(),
    );
    assert_eq!(shares_of(&positional), shares_of(&with_i));
    assert_eq!(shares_of(&positional), shares_of(&long));
    assert_eq!(with_i["inputs"][0]["path"], script);
    // `-i` adds to the PROFILE arguments: two inputs side by side
    let both = json(
        &["report", script, "-i", script, "--format", "json"],
        dir.path(),
    );
    assert_eq!(both["inputs"].as_array().unwrap().len(), 2);

    // no input in a folder without perf.data: a usage error naming both ways
    let out = command()
        .args(["report"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let e = err_stderr(&["report"], out);
    assert!(
        e.contains("no input: give a profile, `whose report PROFILE` or `whose report -i FILE`"),
        "{e}"
    );
    assert!(e.contains("./perf.data"), "{e}");

    // with ./perf.data there, every command reads it
    std::fs::copy(script, dir.path().join("perf.data")).unwrap();
    let default = json(&["report", "--format", "json"], dir.path());
    assert_eq!(shares_of(&default), shares_of(&positional));
    assert_eq!(default["inputs"][0]["path"], "perf.data");
    for args in [
        &["explain"][..],
        &["convert", "--to", "folded"],
        &["gate", "--require", "unclassified.self <= 100%"],
    ] {
        let out = command()
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        ok_stdout(args, out);
    }
    // a one-profile command given two is refused
    let e = whose_err(&["explain", script, "-i", script]);
    assert!(
        e.contains("whose explain reads one profile, and was given 2"),
        "{e}"
    );
}

#[test]
fn sample_index_is_pprofs_name_for_metric() {
    let cpu = fixture_arg("pprof/cpu.pb.gz");
    let by_metric = report_shares(&[&cpu, "--metric", "samples"]);
    let by_index = report_shares(&[&cpu, "--sample-index", "samples"]);
    assert_eq!(by_metric, by_index);
    assert_ne!(by_metric.1, report_shares(&[&cpu]).1, "cpu is not samples");
}

/// The commands of `whose --help`, without clap's `help`.
fn command_names() -> Vec<String> {
    use clap::CommandFactory;
    whose::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|n| n != "help")
        .collect()
}

#[test]
fn completions_are_generated_for_each_shell_and_know_every_command_and_option() {
    let commands = command_names();
    assert!(commands.len() >= 9, "{commands:?}");
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = whose_ok(&["completions", shell]);
        for name in &commands {
            assert!(script.contains(name.as_str()), "{shell}: no `{name}`");
        }
        for option in ["sample-index", "comm", "time", "input"] {
            assert!(script.contains(option), "{shell}: no `{option}`");
        }
    }
    let e = whose_err(&["completions", "tcsh"]);
    assert!(e.contains("invalid value 'tcsh'"), "{e}");
}

#[test]
fn the_man_pages_list_the_commands_and_their_options() {
    let page = whose_ok(&["man"]);
    assert!(
        page.starts_with(".ie") && page.contains(".TH whose 1"),
        "{page}"
    );
    for name in command_names() {
        // roff escapes the dash: `whose\-report(1)`
        assert!(page.contains(&format!("whose\\-{name}(1)")), "no {name}");
        let sub = whose_ok(&["man", &name]);
        assert!(sub.contains(&format!(".TH whose-{name} 1")), "{name}");
    }
    let report = whose_ok(&["man", "report"]);
    for option in [
        "\\-\\-comm",
        "\\-\\-sample\\-index",
        "\\-\\-time",
        "Examples:",
    ] {
        assert!(report.contains(option), "whose man report: no {option}");
    }
    let e = whose_err(&["man", "nosuch"]);
    assert!(
        e.contains("man nosuch: no such command; the commands are report"),
        "{e}"
    );
}

/// The example command lines of a `--help` text: lines that start with `whose `, joined with
/// their `\` continuation lines.
fn example_lines(help: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut continued = false;
    for line in help.lines().map(str::trim) {
        if continued {
            let last = out.last_mut().unwrap();
            last.push(' ');
            last.push_str(line.trim_end_matches('\\'));
        } else if line.starts_with("whose ") {
            out.push(line.trim_end_matches('\\').to_string());
        } else {
            continue;
        }
        continued = line.ends_with('\\');
    }
    out
}

#[test]
fn every_command_has_examples_that_parse() {
    use clap::Parser;
    for name in command_names() {
        let help = whose_ok(&[&name, "--help"]);
        let examples = &help[help
            .find("\nExamples:\n")
            .unwrap_or_else(|| panic!("whose {name} --help has no Examples section"))..];
        let lines = example_lines(examples);
        assert!(!lines.is_empty(), "whose {name}: no example command");
        for line in lines {
            let words = shlex::split(&line).unwrap_or_else(|| panic!("unquoted: {line}"));
            // the shell's part (`| man -l -`, `> file`) is not whose's
            let end = words
                .iter()
                .position(|w| w == "|" || w == ">")
                .unwrap_or(words.len());
            assert_eq!(words[1], name, "an example of another command: {line}");
            if let Err(e) = whose::Cli::try_parse_from(&words[..end]) {
                panic!("whose {name} --help: `{line}` does not parse:\n{e}");
            }
        }
    }
    // an example that does not parse is caught
    assert!(whose::Cli::try_parse_from(["whose", "report", "--no-such-flag"]).is_err());
    assert_eq!(
        example_lines("  whose a \\\n      b\n  text\n  whose c\n"),
        ["whose a  b", "whose c"]
    );
}

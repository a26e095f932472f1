//! speedscope JSON (issue 13): a real py-spy file read with the same shares as the raw output
//! of the same run, hand-made sampled and evented profiles whose numbers are known by
//! construction, and the reader's errors. A live recording (py-spy, ignored unless asked for)
//! repeats the real comparison on this machine.

use super::common::*;
use serde_json::Value;
use std::process::Command;

/// `fixtures/speedscope/shares.*`: one run of `fixtures/src/shares.py`, sampled by two py-spy
/// processes at once, one writing raw, the other speedscope (fixtures/README.md).
const SPEEDSCOPE: &str = "speedscope/shares.speedscope.json";
const RAW: &str = "speedscope/shares.pyspy-raw.txt";

#[test]
fn py_spy_speedscope_reads_with_the_shares_of_its_raw_output() {
    let (speedscope, total) = report_shares(&[&fixture_arg(SPEEDSCOPE)]);
    let (raw, raw_samples) = report_shares(&[&fixture_arg(RAW)]);
    // 322 samples of 4 ms (py-spy at 250 Hz) in the speedscope file, 342 in the raw one
    assert_eq!(total, 1_288_000_000, "nanoseconds");
    assert_eq!(raw_samples, 342);
    // two samplers of one process: the same program phases, sampled at other instants
    assert_shares_agree(&speedscope, &raw, 1.0);
    assert!(speedscope["user"][SELF] > 50.0, "{}", table(&speedscope));
    assert!(
        speedscope["python-std"][SELF] > 40.0,
        "{}",
        table(&speedscope)
    );
}

#[test]
fn the_same_stacks_as_raw_text_give_exactly_the_same_shares() {
    // the speedscope file written back as py-spy raw lines, frame for frame: a frame of either
    // format must become the same whose frame, so the shares are equal to the last digit
    let file: Value = serde_json::from_slice(&std::fs::read(fixture(SPEEDSCOPE)).unwrap()).unwrap();
    let frames: Vec<String> = file["shared"]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} ({}:{})",
                f["name"].as_str().unwrap(),
                f["file"].as_str().unwrap(),
                f["line"]
            )
        })
        .collect();
    let mut raw = String::new();
    let mut empty = 0;
    for sample in file["profiles"][0]["samples"].as_array().unwrap() {
        let stack: Vec<&str> = sample
            .as_array()
            .unwrap()
            .iter()
            .map(|i| frames[i.as_u64().unwrap() as usize].as_str())
            .collect();
        if stack.is_empty() {
            empty += 1;
            continue;
        }
        raw.push_str(&format!("{} 1\n", stack.join(";")));
    }
    if empty > 0 {
        raw.push_str(&format!(" {empty}\n"));
    }
    let raw_file = temp_file(raw);
    let (from_raw, samples) = report_shares(&[raw_file.path().to_str().unwrap()]);
    let (from_speedscope, nanos) = report_shares(&[&fixture_arg(SPEEDSCOPE)]);
    assert_eq!(samples * 4_000_000, nanos);
    assert_eq!(from_raw, from_speedscope);
}

#[test]
fn each_profile_is_a_thread_and_detection_needs_no_format_flag() {
    let json = report_json(&[&fixture_arg(SPEEDSCOPE), "--threads"]);
    let text = json.to_string();
    assert!(
        notes(&json).iter().any(|n| n == "format: speedscope"),
        "{text}"
    );
    assert!(
        text.contains("Thread "),
        "the profile name as the thread: {text}"
    );
}

/// Two frames `main` (user code) and `work`, called from `main`.
const FRAMES: &str = r#""shared":{"frames":[{"name":"main","file":"app.rb","line":1},{"name":"work"},{"name":"Kernel#sleep"}]}"#;

#[test]
fn sampled_weights_are_scaled_to_nanoseconds_and_samples_are_root_first() {
    // main;work 3 ms + main;work 1.5 ms + main 0.5 ms: work is 90% self, main 10%
    let file = temp_file(format!(
        r#"{{{FRAMES},"profiles":[{{"type":"sampled","name":"t1","unit":"milliseconds",
        "startValue":0,"endValue":5,"samples":[[0,1],[0,1],[0]],"weights":[3,1.5,0.5]}}]}}"#
    ));
    let rules = temp_file(
        "[[owner]]\nname = \"w\"\ncategory = \"user\"\nregex = [\"^work$\"]\n\
        [[owner]]\nname = \"m\"\ncategory = \"framework\"\nregex = [\"^main$\"]\n",
    );
    let path = file.path().to_str().unwrap();
    let (shares, total) = report_shares(&[
        path,
        "--rules",
        rules.path().to_str().unwrap(),
        "--no-presets",
    ]);
    assert_eq!(total, 5_000_000);
    assert_eq!(shares["w"], [90.0, 90.0, 90.0], "{}", table(&shares));
    assert_eq!(shares["m"], [10.0, 10.0, 100.0], "{}", table(&shares));
}

#[test]
fn evented_profiles_give_self_time_per_open_interval() {
    // main 0..10 µs, work 2..7, sleep 3..4: self main 5, work 4, sleep 1 (of 10 µs);
    // a second profile (another thread) in bytes becomes a second metric
    let file = temp_file(format!(
        r#"{{{FRAMES},"profiles":[
        {{"type":"evented","name":"t1","unit":"microseconds","startValue":0,"endValue":10,
          "events":[{{"type":"O","at":0,"frame":0}},{{"type":"O","at":2,"frame":1}},
                    {{"type":"O","at":3,"frame":2}},{{"type":"C","at":4,"frame":2}},
                    {{"type":"C","at":7,"frame":1}},{{"type":"C","at":10,"frame":0}}]}},
        {{"type":"sampled","name":"t2","unit":"bytes","startValue":0,"endValue":1,
          "samples":[[0,1]],"weights":[4096]}}]}}"#
    ));
    let rules = temp_file(
        "[[owner]]\nname = \"w\"\ncategory = \"user\"\nregex = [\"^work$\"]\n\
        [[owner]]\nname = \"m\"\ncategory = \"framework\"\nregex = [\"^main$\"]\n\
        [[owner]]\nname = \"s\"\ncategory = \"runtime\"\nregex = [\"^Kernel#sleep$\"]\n",
    );
    let path = file.path().to_str().unwrap();
    let rules = rules.path().to_str().unwrap();
    let (time, total) = report_shares(&[path, "--rules", rules, "--no-presets"]);
    assert_eq!(total, 10_000);
    assert_eq!(time["m"][SELF], 50.0, "{}", table(&time));
    assert_eq!(time["w"][SELF], 40.0, "{}", table(&time));
    assert_eq!(time["s"][SELF], 10.0, "{}", table(&time));
    let (bytes, total) =
        report_shares(&[path, "--rules", rules, "--no-presets", "--metric", "bytes"]);
    assert_eq!(total, 4096);
    assert_eq!(bytes["w"][SELF], 100.0);
}

#[test]
fn a_frame_still_open_at_the_end_is_closed_at_end_value_with_a_warning() {
    let file = temp_file(format!(
        r#"{{{FRAMES},"profiles":[{{"type":"evented","name":"t","unit":"none","startValue":0,
        "endValue":8,"events":[{{"type":"O","at":0,"frame":0}},{{"type":"O","at":6,"frame":1}}]}}]}}"#
    ));
    let path = file.path().to_str().unwrap();
    let json = report_json(&[path]);
    let (_, total) = shares_of(&json);
    assert_eq!(total, 8);
    assert!(json.to_string().contains("2 frame(s) still open"), "{json}");
}

#[test]
fn bad_files_are_refused_with_where_and_what() {
    let cases: &[(&str, &str)] = &[
        (
            "{\"shared\":{\"frames\":[]},\n\"profiles\":[{\"type\":\"sampled\",\"unit\":\"none\",\"samples\":[[0]],\"weights\":[\"x\"]}]}",
            ":2:",
        ),
        (
            r#"{"shared":{"frames":[]},"profiles":[{"type":"sampled","unit":"none","samples":[[3]],"weights":[1]}]}"#,
            "sample 0 names frame 3, but shared.frames has 0 frame(s)",
        ),
        (
            r#"{"shared":{"frames":[]},"profiles":[{"type":"sampled","unit":"none","samples":[[]],"weights":[]}]}"#,
            "1 sample(s) but 0 weight(s)",
        ),
        (
            r#"{"shared":{"frames":[]},"profiles":[{"type":"sampled","unit":"parsecs","samples":[],"weights":[]}]}"#,
            "unit parsecs is not one of speedscope's units",
        ),
        (
            r#"{"shared":{"frames":[{"name":"a"},{"name":"b"}]},"profiles":[{"type":"evented","unit":"none","events":[{"type":"O","at":0,"frame":0},{"type":"C","at":1,"frame":1}]}]}"#,
            "event 1 closes frame 1 but the innermost open frame is 0",
        ),
        (
            r#"{"shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"evented","unit":"none","events":[{"type":"O","at":5,"frame":0},{"type":"C","at":1,"frame":0}]}]}"#,
            "expected events in time order",
        ),
        (
            r#"{"shared":{"frames":[]},"profiles":[{"type":"sampled","unit":"none","samples":[[]],"weights":[-1]}]}"#,
            "the weight of sample 0 is -1",
        ),
        (r#"{"shared":{"frames":[]},"profiles":[]}"#, "no samples"),
    ];
    for (text, want) in cases {
        let file = temp_file(text);
        let err = whose_err(&["report", file.path().to_str().unwrap()]);
        assert!(err.contains(want), "{text}\n→ {err}");
        assert!(err.contains(file.path().to_str().unwrap()), "{err}");
    }
}

#[test]
fn forced_format_on_other_text_says_what_it_expected() {
    let err = whose_err(&[
        "report",
        "--format-in",
        "speedscope",
        &fixture_arg("folded/flame-mini.folded"),
    ]);
    assert!(err.contains(":1:1: expected value, near"), "{err}");
    assert!(err.contains("expected speedscope JSON"), "{err}");
}

/// Records `fixtures/src/shares.py` with py-spy in both formats at once (two samplers attached
/// to one process) and compares the shares as the committed fixtures do. The program runs about
/// six seconds and `--idle` keeps the samples py-spy would drop while the busy CI machine has the
/// one thread off CPU (a two-second run gave 354 samples there, too few to compare at 5 points).
#[test]
#[ignore = "needs py-spy and python3 (`.ci/run` installs py-spy with pip)"]
fn live_py_spy_speedscope_and_raw_agree() {
    let dir = tempfile::tempdir().unwrap();
    let mut program = Command::new("python3")
        .args(["-S", &fixture_arg("src/shares.py"), "400"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("python3");
    let pid = program.id().to_string();
    let record = |format: &str, out: &str| {
        Command::new("py-spy")
            .args([
                "record",
                "--nonblocking",
                "--idle",
                "-r",
                "400",
                "--pid",
                &pid,
                "-f",
                format,
                "-o",
            ])
            .arg(dir.path().join(out))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("py-spy")
    };
    let mut samplers = [record("raw", "raw.txt"), record("speedscope", "s.json")];
    assert!(program.wait().unwrap().success());
    for s in &mut samplers {
        assert!(s.wait().unwrap().success(), "py-spy failed");
    }
    let arg = |f: &str| dir.path().join(f).to_str().unwrap().to_string();
    let (speedscope, _) = report_shares(&[&arg("s.json")]);
    let (raw, samples) = report_shares(&[&arg("raw.txt")]);
    assert!(samples > 500, "only {samples} samples");
    // two samplers at other instants: each share is a binomial estimate (σ ≈ 2 pp at 500
    // samples), so the two recordings differ by noise; the exact check of the frames is
    // `the_same_stacks_as_raw_text_give_exactly_the_same_shares`
    assert_shares_agree(&speedscope, &raw, 5.0);
}

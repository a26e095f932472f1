//! JDK Flight Recorder input (issue 26): real recordings of small Java and Kotlin programs
//! from JDK 17 and JDK 25 (`fixtures/jfr/record.sh`) read with exactly the shares that
//! `fixtures/jfr/oracle.py` computes from `jfr print --json`; stacks cut at JFR's depth limit
//! flagged with the fix; every command on a JFR input; and the reader's errors on broken
//! chunks. A live test (ignored unless asked for) records a new run with the JDK here and
//! compares it with the oracle again.

use super::common::*;
use serde_json::Value;
use std::process::Command;

const RULES: &str = "jfr/rules.toml";

/// Shares of a JFR fixture under the hand rules, with the stackless weight as the oracle's
/// `(no stack)` owner.
fn jfr_shares(path: &str, metric: &str) -> (Shares, u128) {
    let json = report_json(&[
        path,
        "--rules",
        &fixture_arg(RULES),
        "--no-presets",
        "--metric",
        metric,
    ]);
    let (mut shares, total) = shares_of(&json);
    let stackless = json["inputs"][0]["stackless"].as_f64().unwrap_or(0.0);
    if stackless > 0.0 {
        let s = stackless * 100.0 / total as f64;
        shares.insert("(no stack)".into(), [s, s, s]);
    }
    (shares, total)
}

fn assert_oracle(recording: &str, metric: &str) {
    let (got, total) = jfr_shares(&fixture_arg(&format!("jfr/{recording}.jfr.gz")), metric);
    let (want, want_total) = expected_shares(&format!("jfr-{recording}.{metric}.json"));
    assert_eq!(total as f64, want_total, "{recording} {metric}: total");
    assert_shares_agree(&got, &want, 0.05);
}

#[test]
fn jdk17_cpu_samples_equal_the_oracle() {
    assert_oracle("jdk17-cpu", "cpu-samples");
    // the program's own code asked for nearly all of it, the JDK ran most of it
    let (s, _) = jfr_shares(&fixture_arg("jfr/jdk17-cpu.jfr.gz"), "cpu-samples");
    assert!(
        s["app"][OWNER] > 90.0 && s["jdk"][SELF] > 50.0,
        "{}",
        table(&s)
    );
}

#[test]
fn jdk17_allocation_bytes_equal_the_oracle() {
    assert_oracle("jdk17-alloc", "alloc-bytes");
    assert_oracle("jdk17-alloc", "alloc-sample-bytes");
}

#[test]
fn jdk25_cpu_time_samples_equal_the_oracle() {
    assert_oracle("jdk25-cpu", "cpu-time");
    assert_oracle("jdk25-cpu", "cpu-samples");
    assert_oracle("jdk25-cpu", "alloc-sample-bytes");
}

#[test]
fn kotlin_reflection_owns_the_allocations_as_the_oracle_says() {
    assert_oracle("kotlin-reflect", "alloc-bytes");
    let (s, _) = jfr_shares(&fixture_arg("jfr/kotlin-reflect.jfr.gz"), "alloc-bytes");
    // KClass.toString() per request: kotlin-reflect owns most of the bytes
    assert!(s["kotlin-reflect"][OWNER] > 50.0, "{}", table(&s));
}

#[test]
fn park_and_monitor_times_equal_the_oracle() {
    // JfrMix `lock`: four workers contend for the program's own monitor and ReentrantLock, a
    // consumer waits on a monitor for a producer, an idle thread pool parks (thresholds 0 ms)
    for metric in ["park-time", "monitor-enter-time", "monitor-wait-time"] {
        assert_oracle("jdk17-lock", metric);
    }
    // the pool's idle workers park in the JDK's own code (59.4%); the workers' ReentrantLock
    // parks are the program's (40.6%); every monitor enter and wait is under its frames
    let lock = fixture_arg("jfr/jdk17-lock.jfr.gz");
    let (park, _) = jfr_shares(&lock, "park-time");
    assert!(
        park["app"][OWNER] > 30.0 && park["jdk"][OWNER] > 50.0,
        "{}",
        table(&park)
    );
    let (enter, _) = jfr_shares(&lock, "monitor-enter-time");
    assert!(
        (enter["app"][OWNER] - 100.0).abs() < 1e-9,
        "{}",
        table(&enter)
    );
}

#[test]
fn jdk17_deep_stacks_equal_the_oracle() {
    assert_oracle("jdk17-deep", "cpu-samples");
}

#[test]
fn stacks_cut_at_the_default_depth_are_flagged_with_the_fix() {
    let json = report_json(&[&fixture_arg("jfr/jdk17-deep.jfr.gz")]);
    let quality = &json["inputs"][0]["quality"];
    let findings: Vec<&str> = quality["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let cut = findings
        .iter()
        .find(|f| f.contains("depth limit"))
        .unwrap_or_else(|| panic!("no cut-stack finding in {findings:?}"));
    assert!(cut.contains("limit of 64 frames"), "{cut}");
    assert!(
        cut.contains("-XX:FlightRecorderOptions:stackdepth="),
        "{cut}"
    );
    assert_eq!(quality["max_depth"], 64);
    // a recording whose stacks are all shallower says nothing of it
    let json = report_json(&[&fixture_arg("jfr/jdk17-cpu.jfr.gz")]);
    let findings = json["inputs"][0]["quality"]["findings"].to_string();
    assert!(!findings.contains("depth limit"), "{findings}");
}

#[test]
fn metrics_are_the_event_types_present_and_cpu_is_the_default() {
    let json = report_json(&[&fixture_arg("jfr/jdk17-alloc.jfr.gz")]);
    assert_eq!(json["inputs"][0]["metric"]["name"], "cpu-samples");
    let notes = notes(&json);
    assert!(notes.iter().any(|n| n == "format: JFR"), "{notes:?}");
    assert!(
        notes.iter().any(|n| n.starts_with("period: 10 ms")),
        "{notes:?}"
    );
    let out = whose(&[
        "report",
        &fixture_arg("jfr/jdk17-alloc.jfr.gz"),
        "--metric",
        "park-time",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("alloc-bytes"), "{err}");
}

#[test]
fn by_type_names_the_allocated_classes() {
    let json = report_json(&[
        &fixture_arg("jfr/kotlin-reflect.jfr.gz"),
        "--metric",
        "alloc-bytes",
        "--by",
        "type",
    ]);
    let text = json["inputs"][0]["types"].to_string();
    assert!(text.contains("\"byte[]\""), "{text}");
    assert!(text.contains("java.lang.String"), "{text}");
}

#[test]
fn threads_and_time_filters_read_the_events_thread_and_time() {
    let fx = fixture_arg("jfr/jdk17-cpu.jfr.gz");
    let text = whose_ok(&["report", &fx, "--threads"]);
    assert!(text.contains("main"), "{text}");
    let all = report_json(&[&fx])["inputs"][0]["total"].as_u64().unwrap();
    let main = report_json(&[&fx, "--comm", "main"])["inputs"][0]["total"]
        .as_u64()
        .unwrap();
    assert!(main > 0 && main <= all, "{main} of {all}");
    let first = report_json(&[&fx, "--time", "0%-50%"])["inputs"][0]["total"]
        .as_u64()
        .unwrap();
    let second = report_json(&[&fx, "--time", "50%-100%"])["inputs"][0]["total"]
        .as_u64()
        .unwrap();
    assert!(first < all && second < all, "{first} + {second} of {all}");
}

#[test]
fn every_command_reads_jfr() {
    let fx = fixture_arg("jfr/jdk17-alloc.jfr.gz");
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("f.svg");
    whose_ok(&["flame", &fx, "-o", svg.to_str().unwrap()]);
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    let text = whose_ok(&["explain", &fx]);
    assert!(text.contains("demo.jfrmix.JfrMix"), "{text}");
    let text = whose_ok(&["top", "jdk", &fx]);
    assert!(text.contains("java."), "{text}");
    // (no JVM entry-point guess of the program's own code yet: --user says it)
    // 3 of these 4 samples are the user's (75 %): too few for a verdict at 95 % (exit 3,
    // issue 25), a pass on the point estimate
    let gate = [
        "gate",
        &fx,
        "--user",
        "demo.",
        "--require",
        "user.owner >= 50%",
    ];
    let out = whose(&gate);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let out = whose(&[&gate[..], &["--point-estimate"]].concat());
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = whose_ok(&[
        "diff",
        &fx,
        "--against",
        &fixture_arg("jfr/jdk25-cpu.jfr.gz"),
    ]);
    // 4 execution samples in the allocation recording, 25 in the JDK 25 one
    assert!(text.contains("total: 4 → 25"), "{text}");
    // written as pprof and read back: the same shares
    let pb = dir.path().join("a.pb.gz");
    whose_ok(&[
        "convert",
        &fx,
        "--to",
        "pprof",
        "--metric",
        "alloc-bytes",
        "-o",
        pb.to_str().unwrap(),
    ]);
    // (pprof keeps the allocated class as an ordinary frame, as --types-as-frames reads it)
    let rules = fixture_arg(RULES);
    let shares = |args: &[&str]| {
        let mut all = vec!["--rules", &rules, "--no-presets", "--metric", "alloc-bytes"];
        all.extend_from_slice(args);
        report_shares(&all)
    };
    let (back, total) = shares(&[pb.to_str().unwrap()]);
    let (direct, direct_total) = shares(&[&fx, "--types-as-frames"]);
    assert_eq!(total, direct_total);
    assert_shares_agree(&back, &direct, 0.001);
    // folded keeps the allocated class as `_[i]`: the same shares as the recording
    let folded = dir.path().join("a.folded");
    let folded_arg = folded.to_str().unwrap();
    whose_ok(&[
        "convert",
        &fx,
        "--to",
        "folded",
        "--metric",
        "alloc-bytes",
        "-o",
        folded_arg,
    ]);
    let text = std::fs::read_to_string(&folded).unwrap();
    assert!(
        text.contains("demo.jfrmix.JfrMix.userBuffers_[0];byte[]_[i] "),
        "{text}"
    );
    let (back, total) = report_shares(&[
        folded_arg,
        "--unit",
        "bytes",
        "--rules",
        &rules,
        "--no-presets",
    ]);
    let (direct, direct_total) = shares(&[&fx]);
    assert_eq!(total, direct_total);
    assert_shares_agree(&back, &direct, 0.001);
    // --each over a folder of recordings
    for f in ["jdk17-cpu", "jdk25-cpu"] {
        std::fs::copy(
            fixture(&format!("jfr/{f}.jfr.gz")),
            dir.path().join(format!("{f}.jfr.gz")),
        )
        .unwrap();
    }
    let each = whose_ok(&[
        "report",
        "--each",
        &format!("{}/*.jfr.gz", dir.path().display()),
        "--format",
        "ndjson",
    ]);
    assert!(
        each.contains("jdk17-cpu") && each.contains("jdk25-cpu"),
        "{each}"
    );
}

/// The first fixture's decompressed bytes.
fn raw_cpu() -> Vec<u8> {
    gunzip_file(&fixture("jfr/jdk17-cpu.jfr.gz"))
}

fn err_of(bytes: &[u8]) -> String {
    let f = temp_file(bytes);
    let path = f.path().to_str().unwrap().to_string();
    let out = whose(&["report", &path]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_uncompressed_recording_reads_as_the_gzipped_one() {
    let f = temp_file(raw_cpu());
    let (raw, total) = jfr_shares(f.path().to_str().unwrap(), "cpu-samples");
    let (gz, gz_total) = jfr_shares(&fixture_arg("jfr/jdk17-cpu.jfr.gz"), "cpu-samples");
    assert_eq!(total, gz_total);
    assert_shares_agree(&raw, &gz, 0.0);
}

#[test]
fn a_truncated_chunk_names_the_chunk_and_offset() {
    let b = raw_cpu();
    let err = err_of(&b[..b.len() / 2]);
    assert!(err.contains("JFR chunk 0 (at byte 0)"), "{err}");
    assert!(err.contains("truncated chunk"), "{err}");
    assert!(
        err.contains(&format!("byte offset {}", b.len() / 2)),
        "{err}"
    );
    // a header cut short
    let err = err_of(&b[..40]);
    assert!(
        err.contains("chunk header is cut short: 40 of its 68 bytes"),
        "{err}"
    );
    // a second chunk that is only a header's start
    let mut two = b.clone();
    two.extend_from_slice(&b[..10]);
    let err = err_of(&two);
    assert!(
        err.contains(&format!("JFR chunk 1 (at byte {})", b.len())),
        "{err}"
    );
}

#[test]
fn a_chunk_claiming_a_huge_size_is_refused_before_it_is_read() {
    let mut b = raw_cpu();
    b[8..16].copy_from_slice(&(1u64 << 62).to_be_bytes());
    let err = err_of(&b);
    assert!(err.contains("byte offset 8"), "{err}");
    assert!(err.contains("--max-decompressed"), "{err}");
}

#[test]
fn a_bad_constant_pool_offset_is_an_error_with_its_offset() {
    let mut b = raw_cpu();
    // the constant-pool offset pointed at the metadata event
    let meta = b[24..32].to_vec();
    b[16..24].copy_from_slice(&meta);
    let err = err_of(&b);
    assert!(err.contains("not a pool (1)"), "{err}");
    assert!(err.contains("JFR chunk 0"), "{err}");
    // and outside the chunk
    let mut b = raw_cpu();
    b[16..24].copy_from_slice(&(u64::MAX >> 1).to_be_bytes());
    let err = err_of(&b);
    assert!(err.contains("constant pool offset"), "{err}");
    assert!(err.contains("byte offset 16"), "{err}");
}

#[test]
fn an_event_of_an_unknown_type_is_a_counted_warning() {
    let mut b = raw_cpu();
    // one more event at the chunk's end: size 4, type id 2097151 (no class has it)
    b.extend_from_slice(&[0x04, 0xff, 0xff, 0x7f]);
    let size = b.len() as u64;
    b[8..16].copy_from_slice(&size.to_be_bytes());
    let f = temp_file(&b);
    let out = whose(&["report", f.path().to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("1 event(s) of a type id the chunk's metadata does not define"),
        "{err}"
    );
}

#[test]
fn an_event_larger_than_its_chunk_is_an_error() {
    let mut b = raw_cpu();
    // the first event's size (a varint at byte 68) made 1, in as many bytes as it had
    let len = b[68..].iter().position(|&x| x & 0x80 == 0).unwrap() + 1;
    let mut one = vec![0x80; len];
    one[0] = 0x81;
    one[len - 1] &= 0x7f;
    b[68..68 + len].copy_from_slice(&one);
    let err = err_of(&b);
    assert!(err.contains("byte offset 68"), "{err}");
    assert!(
        err.contains("event size 1 is smaller than an event header"),
        "{err}"
    );
}

/// Records `fixtures/src/jfr/JfrMix.java` with this machine's JDK and compares whose with the
/// oracle on the new recording.
#[test]
#[ignore = "needs a JDK (javac, java, jfr) and python3: .ci/run runs it where they are"]
fn live_jdk_recording_equals_the_oracle() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run = |cmd: &mut Command| {
        let out = cmd.output().expect("run");
        assert!(out.status.success(), "{cmd:?}: {out:?}");
        out.stdout
    };
    run(Command::new("javac")
        .arg("-d")
        .arg(d.join("classes"))
        .arg(fixture("src/jfr/JfrMix.java")));
    let rec = d.join("live.jfr");
    run(Command::new("java")
        .arg(format!(
            "-XX:StartFlightRecording:settings=profile,filename={}",
            rec.display()
        ))
        .arg("-cp")
        .arg(d.join("classes"))
        .args(["demo.jfrmix.JfrMix", "cpu", "3"]));
    let want = run(Command::new("python3")
        .arg(fixture("jfr/oracle.py"))
        .arg(&rec)
        .arg(fixture(RULES))
        .arg("cpu-samples"));
    let want: Value = serde_json::from_slice(&want).unwrap();
    let (got, total) = jfr_shares(rec.to_str().unwrap(), "cpu-samples");
    assert_eq!(total as f64, want["total"].as_f64().unwrap());
    let mut expected = Shares::new();
    for (k, v) in want["shares"].as_object().unwrap() {
        let f = |n: &str| v[n].as_f64().unwrap();
        expected.insert(k.clone(), [f("self"), f("owner"), f("anywhere")]);
    }
    assert_shares_agree(&got, &expected, 0.05);
}

/// Bytes of a real recording changed at random (a fixed sequence): each read is a profile or
/// an error, never a panic, in the process that reads it (the fuzz target goes further).
#[test]
fn mutated_recordings_are_read_or_refused_never_a_panic() {
    let good = raw_cpu();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.jfr");
    let options = whose::ReadOptions {
        format: Some(whose::InputFormat::Jfr),
        ..whose::ReadOptions::default()
    };
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut read, mut refused) = (0, 0);
    for _ in 0..150 {
        let mut b = good.clone();
        for _ in 0..1 + next() % 4 {
            let at = (next() % b.len() as u64) as usize;
            b[at] = next() as u8;
        }
        if next() % 5 == 0 {
            b.truncate((next() % b.len() as u64) as usize);
        }
        std::fs::write(&path, &b).unwrap();
        match std::panic::catch_unwind(|| whose::read_profile(&path, &options)) {
            Ok(Ok(_)) => read += 1,
            Ok(Err(_)) => refused += 1,
            Err(_) => panic!("the reader panicked on a mutation of the recording"),
        }
    }
    assert!(read > 0 && refused > 0, "{read} read, {refused} refused");
}

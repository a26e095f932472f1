//! Bad input: each case its own test, each an error naming the file and the place, exit 2,
//! never a panic.

use super::common::*;

fn report_err(bytes: &[u8]) -> (String, String) {
    let f = temp_file(bytes);
    let path = f.path().to_str().unwrap().to_string();
    let err = whose_err(&["report", &path, "--no-presets"]);
    (err, path)
}

#[test]
fn empty_file() {
    let (err, path) = report_err(b"");
    assert!(err.contains(&path) && err.contains("empty input"), "{err}");
}

#[test]
fn only_comments_is_no_samples() {
    let (err, path) = report_err(b"# nothing here\n\n");
    assert!(err.contains(&path) && err.contains("no samples"), "{err}");
}

#[test]
fn line_without_count() {
    // a lone bad line is refused (no samples); one among many is skipped (tests/it/folded.rs)
    let (err, path) = report_err(b"# x\na;b;c\n");
    assert!(err.contains(&format!("{path}:2:")), "{err}");
    assert!(err.contains("without a count"), "{err}");
}

#[test]
fn negative_count() {
    let (err, path) = report_err(b"a;b -5\n");
    assert!(
        err.contains(&format!("{path}:1:")) && err.contains("negative"),
        "{err}"
    );
}

#[test]
fn non_numeric_count() {
    let (err, path) = report_err(b"\n\na;b 12x\n");
    assert!(
        err.contains(&format!("{path}:3:")) && err.contains("`12x`"),
        "{err}"
    );
}

#[test]
fn malformed_decimal_count() {
    // decimals are read exactly (tests/it/folded.rs); a second point is no number
    let (err, _) = report_err(b"a;b 1.5.2\n");
    assert!(err.contains("integer or decimal count"), "{err}");
}

#[test]
fn count_overflowing_u64() {
    let (err, path) = report_err(b"a;b 18446744073709551616\n");
    assert!(
        err.contains(&format!("{path}:1:")) && err.contains("64 bits"),
        "{err}"
    );
}

#[test]
fn counts_up_to_u64_max_sum_without_overflow() {
    let f = temp_file(b"a;b 18446744073709551615\na;b 18446744073709551615\nc 1\n");
    let out = whose_ok(&[
        "report",
        f.path().to_str().unwrap(),
        "--no-presets",
        "--format",
        "json",
    ]);
    assert!(out.contains("\"total\": 36893488147419103231"), "{out}");
}

#[test]
fn binary_garbage() {
    let mut bytes = vec![0x7fu8, b'E', b'L', b'F', 2, 1, 1, 0];
    bytes.extend((0..200u32).map(|i| (i * 37 % 251) as u8));
    let (err, path) = report_err(&bytes);
    assert!(err.contains(&path) && err.contains("byte offset"), "{err}");
}

#[test]
fn invalid_utf8_is_read_lossily_and_counted() {
    let f = temp_file(b"ok;fine 2\nbad\xff\xfename;x 3\n");
    let out = whose(&["report", f.path().to_str().unwrap(), "--no-presets"]);
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("1 line(s)") && stderr.contains("first at line 2"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("total 5"), "{stdout}");
}

#[test]
fn truncated_gzip() {
    let text: String = (0..2000)
        .map(|i| format!("main;work;leaf{i} {i}\n"))
        .collect();
    let gz = gzip(text.as_bytes());
    let (err, path) = report_err(&gz[..gz.len() / 2]);
    assert!(err.contains(&path) && err.contains("gzip"), "{err}");
}

#[test]
fn gzip_input_is_read() {
    let f = temp_file(gzip(b"main;a.b 3\nmain;c 1\n"));
    let out = whose_ok(&["report", f.path().to_str().unwrap(), "--no-presets"]);
    assert!(out.contains("total 4"), "{out}");
}

#[test]
fn missing_file() {
    let err = whose_err(&["report", "/nonexistent/whose/profile.txt"]);
    assert!(err.contains("/nonexistent/whose/profile.txt"), "{err}");
}

fn rules_err(text: &str) -> String {
    let profile = fixture("folded/py-app.folded");
    let f = temp_file(text.as_bytes());
    let rules = f.path().to_str().unwrap().to_string();
    let err = whose_err(&["report", profile.to_str().unwrap(), "--rules", &rules]);
    assert!(err.contains(&rules), "{err}");
    err
}

#[test]
fn rules_toml_syntax_error_has_line_and_column() {
    let err = rules_err("[[owner]]\nname = \"a\"\ncategory = \"user\"\nprefix = [\"a\"\n");
    assert!(err.contains(":4:") || err.contains(":5:"), "{err}");
}

#[test]
fn rules_unknown_key() {
    let err = rules_err("[[owner]]\nname = \"a\"\ncategory = \"user\"\nprefx = [\"a\"]\n");
    assert!(
        err.contains(":4:1:") && err.contains("unknown field `prefx`"),
        "{err}"
    );
}

#[test]
fn rules_invalid_regex() {
    let err = rules_err("[[owner]]\nname = \"a\"\ncategory = \"user\"\nregex = ['a(b']\n");
    assert!(
        err.contains(":4:10:") && err.contains("invalid regex"),
        "{err}"
    );
}

#[test]
fn rules_unknown_category() {
    let err = rules_err("[[owner]]\nname = \"a\"\ncategory = \"userland\"\nprefix = ['a']\n");
    assert!(
        err.contains(":3:12:") && err.contains("unknown category"),
        "{err}"
    );
}

#[test]
fn rules_owner_with_two_categories() {
    let err = rules_err(
        "[[owner]]\nname = \"a\"\ncategory = \"user\"\nprefix = ['a']\n\n[[owner]]\nname = \"a\"\ncategory = \"library\"\nprefix = ['b']\n",
    );
    assert!(err.contains("must agree"), "{err}");
}

#[test]
fn unknown_preset() {
    let profile = fixture("folded/py-app.folded");
    let err = whose_err(&["report", profile.to_str().unwrap(), "--preset", "cobol"]);
    assert!(
        err.contains("unknown preset `cobol`") && err.contains("jvm"),
        "{err}"
    );
}

#[test]
fn unknown_metric_lists_what_exists() {
    let profile = fixture("folded/py-app.folded");
    let err = whose_err(&["report", profile.to_str().unwrap(), "--metric", "cpu"]);
    assert!(
        err.contains("no sample type `cpu`") && err.contains("samples"),
        "{err}"
    );
}

#[test]
fn cpuprofile_cut_short() {
    // a .cpuprofile whose JSON ends inside `samples`: the byte offset and what was expected
    let text = br#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"hitCount":0,"children":[2]},{"id":2,"callFrame":{"functionName":"main","scriptId":"1","url":"file:///app/a.js","lineNumber":0,"columnNumber":0},"hitCount":1}],"startTime":0,"endTime":10,"samples":[2,2"#;
    let (err, path) = report_err(text);
    assert!(err.contains(&format!("{path} at byte offset ")), "{err}");
    assert!(err.contains("expected a V8 CPU profile"), "{err}");
}

#[test]
fn cpuprofile_sample_of_no_node() {
    let text = br#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"hitCount":0,"children":[2]},{"id":2,"callFrame":{"functionName":"main","scriptId":"1","url":"file:///app/a.js","lineNumber":0,"columnNumber":0},"hitCount":1}],"startTime":0,"endTime":10,"samples":[2,7],"timeDeltas":[1,1]}"#;
    let (err, path) = report_err(text);
    // the offset of `samples[1]`
    let at = text.windows(3).position(|w| w == b"7],").unwrap();
    assert!(
        err.contains(&format!(
            "{path} at byte offset {at}: samples[1]: node id 7"
        )),
        "{err}"
    );
}

/// A mapped file cut short under whose (SIGBUS on the next read of the lost pages) ends in an
/// error message and exit 2, not death by signal. The signal is sent by hand while whose waits
/// on stdin: its handler is installed before it reads input, so a thread blocked in `read(0,
/// ...)` says it is there. (SigCgt in /proc cannot say it: Rust's runtime catches SIGBUS from
/// the start for its stack-overflow report, so the bit is set before whose's handler is, and
/// a signal sent in between killed the process on a loaded machine.)
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn a_file_cut_short_while_mapped_is_an_error_not_a_crash() {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = command()
        .args(["report", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let tasks = format!("/proc/{}/task", child.id());
    // `/proc/PID/task/TID/syscall` starts `0 0x0 ` while a thread is in read (x86_64's
    // syscall 0) on fd 0
    let reading_stdin = || {
        std::fs::read_dir(&tasks).into_iter().flatten().any(|task| {
            let syscall = task.map(|t| t.path().join("syscall")).ok();
            syscall
                .and_then(|p| std::fs::read_to_string(p).ok())
                .is_some_and(|s| s.starts_with("0 0x0 "))
        })
    };
    let started = std::time::Instant::now();
    while !reading_stdin() {
        assert!(
            started.elapsed().as_secs() < 60,
            "whose never waited on stdin"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let sent = std::process::Command::new("kill")
        .args(["-BUS", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let _ = child.stdin.take().map(|mut s| s.write_all(b""));
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("was cut short while being read"),
        "{stderr}"
    );
}

#[test]
fn cpuprofile_cut_to_half_is_read_as_json_not_folded() {
    // cut where the head shows only the start of V8's JSON, or in the middle of the nodes:
    // either way a cpuprofile cut short, never lines of folded stacks
    let whole = std::fs::read(fixture("node/app.cpuprofile")).unwrap();
    for len in [whole.len() / 2, 40, 10] {
        let (err, path) = report_err(&whole[..len]);
        assert!(err.contains(&format!("{path} at byte offset ")), "{err}");
        assert!(err.contains("expected a V8 CPU profile"), "{err}");
        assert!(!err.contains("folded"), "{err}");
    }
}

/// Issue 61: a 1 MB string where a speedscope weight or a `.cpuprofile` number belongs gives
/// one short message (the parser's own quotes the value whole), not the value again.
#[test]
fn a_long_bad_value_is_quoted_short() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(1 << 20);
    let speedscope = format!(
        "{{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"shared\":{{\"frames\":[{{\"name\":\"a\"}}]}},\"profiles\":[{{\"type\":\"sampled\",\"name\":\"p\",\"unit\":\"none\",\"startValue\":0,\"endValue\":1,\"samples\":[[0]],\"weights\":[\"{long}\"]}}]}}"
    );
    let cpuprofile = format!(
        "{{\"nodes\":[{{\"id\":1,\"callFrame\":{{\"functionName\":\"(root)\",\"scriptId\":\"0\",\"url\":\"\",\"lineNumber\":-1,\"columnNumber\":-1}}}}],\"startTime\":0,\"endTime\":\"{long}\",\"samples\":[1],\"timeDeltas\":[1]}}"
    );
    for (name, text) in [
        ("s.speedscope.json", speedscope),
        ("p.cpuprofile", cpuprofile),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let out = whose(&["report", &path.display().to_string()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{name}: {}",
            &err[..err.len().min(300)]
        );
        assert!(
            err.len() < 400,
            "{name}: {} bytes: {}",
            err.len(),
            &err[..300]
        );
        assert!(err.contains("bytes in all"), "{name}: {err}");
    }
}

/// Issue 61: a line longer than `--max-line` is refused with its number and length, not held
/// whole (a 1.2 GB line with no newline aborted the readers under a 2 GB limit), in folded
/// text, perf script and gzip alike; `report --each` gives it an error row and reads the rest.
#[test]
fn a_line_past_the_cap_is_refused_with_its_number_and_length() {
    let dir = tempfile::tempdir().unwrap();
    let long = format!("main;{} 1\n", "f;".repeat(600));
    let folded = write_temp(
        dir.path(),
        "long.folded",
        format!("main;a 1\n{long}main;b 2\n"),
    );
    let out = whose(&[
        "report",
        &folded.display().to_string(),
        "--max-line",
        "1000",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(":2: a line of 1207 bytes"), "{err}");
    assert!(err.contains("--max-line"), "{err}");
    // the default cap reads it
    let out = whose(&["report", &folded.display().to_string()]);
    assert_eq!(out.status.code(), Some(0));
    // no newline at all, gzipped: the whole input is the one line
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &vec![b'x'; 5 << 20]).unwrap();
    let zipped = write_temp(dir.path(), "one-line.folded.gz", gz.finish().unwrap());
    let out = whose(&[
        "report",
        &zipped.display().to_string(),
        "--max-line",
        "1048576",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(":1: a line of 5242880 bytes"), "{err}");
    // a line with no end (`/dev/zero` forced to folded text) is measured so far, then refused
    let out = whose(&[
        "report",
        "/dev/zero",
        "--format-in",
        "folded",
        "--max-line",
        "1000",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(":1: a line of at least"), "{err}");
    // a fleet: the long file is an error row, the other a row of its own
    let each = dir.path().join("fleet");
    std::fs::create_dir(&each).unwrap();
    std::fs::copy(&folded, each.join("long.folded")).unwrap();
    write_temp(&each, "ok.folded", "main;a 3\n");
    let out = whose(&[
        "report",
        "--each",
        &each.display().to_string(),
        "--max-line",
        "1000",
        "--format",
        "ndjson",
    ]);
    let rows = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        rows.contains("ok.folded") && rows.contains("long.folded"),
        "{rows}"
    );
    assert!(rows.contains("a line of 1207 bytes"), "{rows}");
}

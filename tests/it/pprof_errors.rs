//! Bad and unusual pprof input, one test per case: bad input exits 2, the message names the
//! file and what is wrong, no panic; unusual input (delta, empty, stackless) is read. Each input
//! is a small valid profile with one thing changed.

use super::common::*;
use prost::Message;
use std::path::PathBuf;
use whose::pprof_wire as pb;

/// A valid profile: types samples/count and cpu/nanoseconds, one function `main.work` in
/// location 1 called from `main.main` in location 2, two samples.
fn valid() -> pb::Profile {
    let strings = [
        "",
        "samples",
        "count",
        "cpu",
        "nanoseconds",
        "main.work",
        "main.main",
        "/bin/app",
    ];
    pb::Profile {
        sample_type: vec![
            pb::ValueType { r#type: 1, unit: 2 },
            pb::ValueType { r#type: 3, unit: 4 },
        ],
        sample: vec![
            pb::Sample {
                location_id: vec![1, 2],
                value: vec![3, 30_000_000],
                label: vec![],
            },
            pb::Sample {
                location_id: vec![2],
                value: vec![1, 10_000_000],
                label: vec![],
            },
        ],
        mapping: vec![pb::Mapping {
            id: 1,
            filename: 7,
            ..Default::default()
        }],
        location: vec![
            pb::Location {
                id: 1,
                mapping_id: 1,
                address: 0x1000,
                line: vec![pb::Line {
                    function_id: 1,
                    line: 10,
                }],
                ..Default::default()
            },
            pb::Location {
                id: 2,
                mapping_id: 1,
                address: 0x2000,
                line: vec![pb::Line {
                    function_id: 2,
                    line: 20,
                }],
                ..Default::default()
            },
        ],
        function: vec![
            pb::Function {
                id: 1,
                name: 5,
                ..Default::default()
            },
            pb::Function {
                id: 2,
                name: 6,
                ..Default::default()
            },
        ],
        string_table: strings.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

/// Writes `bytes` to a temporary file; returns the directory (kept alive) and the path.
fn write(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_temp(dir.path(), name, bytes);
    (dir, path)
}

/// Runs `whose report` on `profile` (gzipped) and returns stderr, which must name the file.
fn report_err(profile: &pb::Profile, extra: &[&str]) -> String {
    let (_dir, path) = write("bad.pb.gz", &gzip(&profile.encode_to_vec()));
    let path = path.to_str().unwrap();
    let mut args = vec!["report", path];
    args.extend_from_slice(extra);
    let err = whose_err(&args);
    assert!(err.contains(path), "message does not name the file: {err}");
    err
}

#[test]
fn the_valid_base_profile_reads() {
    let (_dir, path) = write("ok.pb.gz", &gzip(&valid().encode_to_vec()));
    let (shares, total) = report_shares(&[path.to_str().unwrap(), "--user", "main.work"]);
    assert_eq!(total, 40_000_000);
    // main.work is the leaf of 30 ms of 40 ms
    assert!((shares["user"][0] - 75.0).abs() < 1e-9, "{shares:?}");
}

#[test]
fn truncated_gzip_is_an_error() {
    let full = std::fs::read(fixture("pprof/cpu.pb.gz")).unwrap();
    let (_dir, path) = write("truncated.pb.gz", &full[..full.len() / 2]);
    let err = whose_err(&["report", path.to_str().unwrap()]);
    assert!(err.contains(path.to_str().unwrap()), "{err}");
    assert!(err.contains("gzip stream is corrupt or truncated"), "{err}");
}

#[test]
fn gzip_of_garbage_is_an_error() {
    // bytes that are neither a profile nor text
    let garbage: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let (_dir, path) = write("garbage.pb.gz", &gzip(&garbage));
    let err = whose_err(&["report", path.to_str().unwrap()]);
    assert!(err.contains(path.to_str().unwrap()), "{err}");
    assert!(err.contains("not perf.data or pprof"), "{err}");
    // and read as pprof on purpose, it is no valid protobuf
    let err = whose_err(&["report", path.to_str().unwrap(), "--format-in", "pprof"]);
    assert!(err.contains("not a valid pprof protobuf"), "{err}");
}

#[test]
fn gzip_of_a_broken_protobuf_is_an_error() {
    // starts like a pprof (a sample_type) and then declares a field longer than the input
    let mut bytes = valid().encode_to_vec();
    bytes.truncate(bytes.len() - 3);
    bytes.extend_from_slice(&[0x32, 0xff, 0xff, 0x03, b'x']);
    let (_dir, path) = write("broken.pb.gz", &gzip(&bytes));
    let err = whose_err(&["report", path.to_str().unwrap()]);
    assert!(err.contains(path.to_str().unwrap()), "{err}");
    assert!(err.contains("not a valid pprof protobuf"), "{err}");
}

#[test]
fn string_index_out_of_range_is_an_error() {
    let mut p = valid();
    p.function[1].name = 99;
    let err = report_err(&p, &[]);
    assert!(
        err.contains(
            "function id 2's name is string index 99, out of range (the string table has 8 entries)"
        ),
        "{err}"
    );
}

#[test]
fn negative_string_index_is_an_error() {
    let mut p = valid();
    p.sample_type[0].unit = -1;
    let err = report_err(&p, &[]);
    assert!(
        err.contains("sample_type[0].unit is string index -1, out of range"),
        "{err}"
    );
}

#[test]
fn sample_referring_to_a_missing_location_is_an_error() {
    let mut p = valid();
    p.sample[1].location_id = vec![42];
    let err = report_err(&p, &[]);
    assert!(
        err.contains("sample 1 refers to location id 42, which is not defined"),
        "{err}"
    );
}

#[test]
fn location_id_zero_is_an_error() {
    let mut p = valid();
    p.location[1].id = 0;
    let err = report_err(&p, &[]);
    assert!(err.contains("location[1] has id 0"), "{err}");
}

#[test]
fn sample_referring_to_location_zero_is_an_error() {
    let mut p = valid();
    p.sample[0].location_id = vec![1, 0];
    let err = report_err(&p, &[]);
    assert!(err.contains("sample 0 refers to location id 0"), "{err}");
}

#[test]
fn value_count_different_from_sample_types_is_an_error() {
    let mut p = valid();
    p.sample[1].value = vec![1, 2, 3];
    let err = report_err(&p, &[]);
    assert!(
        err.contains(
            "sample 1 has 3 value(s) but the profile declares 2 sample type(s) (samples, cpu)"
        ),
        "{err}"
    );
}

#[test]
fn metric_the_file_lacks_lists_the_types_it_has() {
    let err = report_err(&valid(), &["--metric", "alloc_space"]);
    assert!(
        err.contains(
            "has no sample type `alloc_space`; it has: samples (count), cpu (nanoseconds)"
        ),
        "{err}"
    );
}

#[test]
fn missing_function_is_an_error() {
    let mut p = valid();
    p.location[0].line[0].function_id = 7;
    let err = report_err(&p, &[]);
    assert!(
        err.contains("location id 1 refers to function id 7, which is not defined"),
        "{err}"
    );
}

#[test]
fn negative_values_are_read_beside_the_positive_part_and_refused_by_the_gate() {
    // a delta profile: cpu went down by 10 ms in main.main and 5 ms in main.work; the
    // samples type has no negative value
    let mut p = valid();
    p.sample[1].value = vec![1, -10_000_000];
    p.sample.push(pb::Sample {
        location_id: vec![1, 2],
        value: vec![2, -5_000_000],
        label: vec![],
    });
    let bytes = p.encode_to_vec();
    let rules = ["--user", "main.work"];
    let json = report_json(&bytes, &rules);
    let input = &json["inputs"][0];
    // shares are of the positive part: main.work is all of it
    assert_eq!(input["total"], 30_000_000);
    let (shares, _) = shares_of(&json);
    assert_eq!(shares["user"], [100.0, 100.0, 100.0]);
    assert_eq!(shares["unclassified"], [0.0, 0.0, 100.0]);
    // the negative part, attributed as the positive part is
    let negative = &input["negative"];
    assert_eq!(negative["total"], 15_000_000, "{negative}");
    let owner = |name: &str| {
        let o = negative["owners"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {negative}"));
        (
            o["self"].as_u64(),
            o["owner"].as_u64(),
            o["anywhere"].as_u64(),
        )
    };
    let ms = |n: u64| Some(n * 1_000_000);
    assert_eq!(owner("user"), (ms(5), ms(5), ms(5)));
    assert_eq!(owner("unclassified"), (ms(10), ms(10), ms(15)));
    // and in the table header
    let (_dir, path) = write("delta.pb.gz", &gzip(&bytes));
    let path = path.to_str().unwrap();
    let mut args = vec!["report", path];
    args.extend_from_slice(&rules);
    let table = whose_ok(&args);
    assert!(
        table.contains(
            "negative weights: -15.00 ms beside the total (shares are of the positive part); \
             self by owner: unclassified -10.00 ms, user -5.00 ms"
        ),
        "{table}"
    );
    // the samples metric has no negative value: a gate on it holds as usual (on its point
    // estimate: a handful of samples decides nothing by interval)
    let mut gate = vec!["gate", path, "--metric", "samples", "--point-estimate"];
    gate.extend_from_slice(&rules);
    // main.other stands for somebody else's code: unclassified is not the point here
    gate.extend_from_slice(&["--max-unclassified", "100%"]);
    gate.extend_from_slice(&["--require", "user.self >= 50%"]);
    whose_ok(&gate);
    // cpu has: no verdict, exit 2
    let err = whose_err(&[
        "gate",
        path,
        "--metric",
        "cpu",
        "--require",
        "user.self >= 50%",
    ]);
    assert!(
        err.contains(&format!(
            "{path} has negative weights in metric cpu (-15.00 ms, a delta profile)"
        )),
        "{err}"
    );
}

/// A valid profile carrying a 24 MiB comment of zeros: 24 KiB gzipped.
fn bomb() -> Vec<u8> {
    let mut p = valid();
    p.string_table.push("\0".repeat(24 << 20));
    p.comment = vec![p.string_table.len() as i64 - 1];
    gzip(&p.encode_to_vec())
}

#[test]
fn gzip_bomb_is_capped_and_the_flag_raises_the_cap() {
    let bytes = bomb();
    assert!(bytes.len() < 1 << 20, "the bomb is small: {}", bytes.len());
    let (_dir, path) = write("bomb.pb.gz", &bytes);
    let path = path.to_str().unwrap();
    let err = whose_err(&["report", path, "--max-decompressed", "8388608"]);
    assert!(err.contains(path), "{err}");
    assert!(
        err.contains("gzip stream decompresses to more than 8388608 bytes"),
        "{err}"
    );
    assert!(err.contains("--max-decompressed"), "{err}");
    // a genuine profile that large reads once the cap is raised
    let (_, total) = report_shares(&[path, "--max-decompressed", "33554432"]);
    assert_eq!(total, 40_000_000);
}

/// The JSON report of `bytes` (written gzipped) with `extra` arguments.
fn report_json(bytes: &[u8], extra: &[&str]) -> serde_json::Value {
    let (_dir, path) = write("p.pb.gz", &gzip(bytes));
    let mut args = vec!["report", path.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    serde_json::from_str(&whose_ok(&args)).expect("json")
}

/// Runs `whose report` on a file named `name` holding `bytes`: exit 2 with the conversion
/// hint naming the file.
fn assert_legacy_refused(name: &str, bytes: &[u8], kind: &str) {
    let (_dir, path) = write(name, bytes);
    let path = path.to_str().unwrap();
    let err = whose_err(&["report", path]);
    let hint = format!("{kind}: convert with `go tool pprof -proto {path} > {path}.pb.gz`");
    assert!(err.contains(&hint), "{name}: {err}");
}

#[test]
fn legacy_text_profiles_are_refused_with_the_conversion_hint() {
    // the first lines of each format as its producer writes them (gperftools heap-profiler,
    // Go's /debug/pprof/*?debug=1, gperftools contention and threadz)
    let texts: [(&str, &str); 6] = [
        (
            "heap.txt",
            "heap profile: 13: 1595680 [47130736: 2584596557304] @ heap/1048576\n\
             1: 262144 [1: 262144] @ 0x4b1e2c 0x4a9f3e 0x43c3c1\n",
        ),
        (
            "go-heap.txt",
            "heap profile: 1: 2048 [3: 6144] @ heap/1048576\n\
             1: 2048 [3: 6144] @ 0x40cd28 0x46a0e1\n#\t0x40cd27\tmain.main+0x27\t/x/main.go:9\n",
        ),
        (
            "threadcreate.txt",
            "threadcreate profile: total 9\n7 @\n#\t0x0\n\n1 @ 0x43a1b8 0x43a9a5\n",
        ),
        (
            "goroutine.txt",
            "goroutine profile: total 4\n1 @ 0x43a1b8 0x405b2c\n#\t0x43a1b7\truntime.gopark+0xf7\n",
        ),
        (
            "contention.txt",
            "--- contention:\ncycles/second=2494236737\n17 8842 @ 0x4b3c3c 0x4b3b4a\n",
        ),
        (
            "threadz.txt",
            "--- threadz 3 ---\n\n--- Thread 7f1d (name: main/1) stack: ---\n  PC: 0x4011\n",
        ),
    ];
    for (name, text) in texts {
        assert_legacy_refused(name, text.as_bytes(), "legacy pprof text format");
        // as fetched with curl --compressed or saved gzipped, the same
        assert_legacy_refused(
            &format!("{name}.gz"),
            &gzip(text.as_bytes()),
            "legacy pprof text format",
        );
    }
}

#[test]
fn legacy_binary_cpu_profiles_are_refused_with_the_conversion_hint() {
    // gperftools' CPU profile: header words 0, 3, 0, period (µs), 0, then samples
    // (count, depth, pcs), then the trailer 0, 1, 0 and /proc/self/maps
    let words = [0u64, 3, 0, 10_000, 0, 1, 2, 0x4011, 0x4022, 0, 1, 0];
    let mut wide = Vec::new();
    let mut narrow = Vec::new();
    let mut big = Vec::new();
    for w in words {
        wide.extend_from_slice(&w.to_le_bytes());
        narrow.extend_from_slice(&(w as u32).to_le_bytes());
        big.extend_from_slice(&w.to_be_bytes());
    }
    wide.extend_from_slice(b"00400000-00452000 r-xp 00000000 08:01 1234 /bin/app\n");
    let kind = "legacy pprof binary CPU profile (gperftools)";
    assert_legacy_refused("cpu.prof", &wide, kind);
    assert_legacy_refused("cpu32.prof", &narrow, kind);
    assert_legacy_refused("cpu-be.prof", &big, kind);
    // a period of 0 is no such header: still plain unknown binary data
    let mut zero = wide.clone();
    zero[24..32].fill(0);
    let (_dir, path) = write("zero.prof", &zero);
    let err = whose_err(&["report", path.to_str().unwrap()]);
    assert!(!err.contains("legacy"), "{err}");
}

#[test]
fn invalid_utf8_in_the_string_table_is_read_lossily_with_a_warning() {
    let mut p = valid();
    p.string_table[5] = "main.wXrk".into();
    p.string_table[6] = "main.mXin".into();
    let mut bytes = p.encode_to_vec();
    // make both X an invalid UTF-8 byte (a lone continuation byte)
    for name in [&b"main.wXrk"[..], b"main.mXin"] {
        let at = bytes.windows(name.len()).position(|w| w == name).unwrap();
        bytes[at + 6] = 0x80;
    }
    let (_dir, path) = write("lossy.pb.gz", &gzip(&bytes));
    let path = path.to_str().unwrap();
    let out = whose(&["report", path, "--format", "json"]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let json: serde_json::Value = serde_json::from_str(&ok_stdout(&["report", path], out)).unwrap();
    let warning = format!("{path}: 2 string(s) of the string table were not valid UTF-8");
    assert!(stderr.contains(&warning), "{stderr}");
    let warnings = json["inputs"][0]["warnings"].to_string();
    assert!(warnings.contains("2 string(s)"), "{warnings}");
    let frames = json["inputs"][0]["top_self_frames"].to_string();
    assert!(frames.contains("main.w\u{fffd}rk"), "{frames}");
    // the numbers are those of the valid profile
    assert_eq!(json["inputs"][0]["total"], 40_000_000);
}

#[test]
fn a_profile_without_samples_has_total_0_and_the_gate_says_no_samples() {
    // /debug/pprof/mutex of a service that never called SetMutexProfileFraction
    let mut p = valid();
    p.sample.clear();
    let json = report_json(&p.encode_to_vec(), &[]);
    assert_eq!(json["inputs"][0]["total"], 0);
    let notes = notes(&json).join("\n");
    assert!(
        notes.contains("no weight: the total of cpu is 0"),
        "{notes}"
    );
    let (_dir, path) = write("mutex.pb.gz", &gzip(&p.encode_to_vec()));
    let path = path.to_str().unwrap();
    let err = whose_err(&["gate", path, "--require", "user.self <= 50%"]);
    assert!(
        err.contains(&format!("{path} has no samples (total 0 in metric cpu)")),
        "{err}"
    );
}

#[test]
fn sample_types_without_a_name_keep_the_empty_name_as_go_tool_pprof_does() {
    // `go tool pprof -raw` lists such a type as `/count`, `-sample_index=0` picks it
    let mut p = valid();
    p.sample_type[0].r#type = 0;
    let json = report_json(
        &p.encode_to_vec(),
        &["--metric", "0", "--user", "main.work"],
    );
    let input = &json["inputs"][0];
    assert_eq!(input["metric"]["name"], "");
    assert_eq!(input["metric"]["unit"], "count");
    assert_eq!(input["total"], 4);
    let notes = notes(&json).join("\n");
    assert!(
        notes.contains("sample type 0 (count) has no name, as `go tool pprof` shows it"),
        "{notes}"
    );
    // main.work is the leaf of 3 of the 4 samples
    let (shares, _) = shares_of(&json);
    assert!((shares["user"][0] - 75.0).abs() < 1e-9, "{shares:?}");
}

#[test]
fn protobuf_errors_in_samples_name_their_byte_offset() {
    let mut bytes = valid().encode_to_vec();
    // the first sample's field starts right after the two sample types (each 6 bytes)
    let at = bytes.iter().position(|&b| b == 0x12).unwrap();
    assert_eq!(at, 12);
    // a sample whose packed location ids end inside a varint
    let bad = [0x12, 0x03, 0x0a, 0x01, 0xff];
    bytes.splice(at..at, bad);
    let (_dir, path) = write("bad.pb.gz", &gzip(&bytes));
    let path = path.to_str().unwrap();
    let err = whose_err(&["report", path]);
    assert!(
        err.contains(&format!("{path}@12")) || err.contains("offset 12"),
        "{err}"
    );
    assert!(
        err.contains("sample 0 is not a valid pprof Sample message"),
        "{err}"
    );
}

#[test]
fn samples_without_a_stack_count_in_the_total_and_in_no_owner() {
    // Go's threadcreate profile: most samples have no location at all
    let mut p = valid();
    p.sample.push(pb::Sample {
        location_id: vec![],
        value: vec![5, 60_000_000],
        label: vec![],
    });
    let json = report_json(&p.encode_to_vec(), &["--user", "main.work"]);
    let input = &json["inputs"][0];
    assert_eq!(input["total"], 100_000_000);
    assert_eq!(input["stackless"], 60_000_000);
    // no made-up frame, no owner: the owners hold the 40 ms with a stack, in every view
    let text = input.to_string();
    assert!(!text.contains("[unknown]"), "{text}");
    let owners = input["owners"].as_array().unwrap();
    for view in ["self", "owner"] {
        let sum: u64 = owners.iter().map(|o| o[view].as_u64().unwrap()).sum();
        assert_eq!(sum, 40_000_000, "{view}: {owners:?}");
    }
    let notes = notes(&json).join("\n");
    assert!(notes.contains("1 sample(s) without a stack"), "{notes}");
    // the table shows them as their own line, the same share in every view
    let (_dir, path) = write("threadcreate.pb.gz", &gzip(&p.encode_to_vec()));
    let table = whose_ok(&["report", path.to_str().unwrap(), "--user", "main.work"]);
    let line = table
        .lines()
        .find(|l| l.trim_start().starts_with("(no stack)"))
        .unwrap_or_else(|| panic!("{table}"));
    assert_eq!(line.matches("60.0%").count(), 3, "{line}");
}

/// `convert --to folded` of a delta profile (issue 23: it dropped the negative samples and
/// exited 0). By hand from `valid()` and the samples below: in cpu, `main.main;main.work` has
/// +30 ms and -5 ms, `main.main` +0 and -10 ms; in samples nothing is negative (3 + 2 and 1).
#[test]
fn convert_to_folded_of_a_delta_profile_writes_both_parts_as_differential_lines() {
    let mut p = valid();
    p.sample[1].value = vec![1, -10_000_000];
    p.sample.push(pb::Sample {
        location_id: vec![1, 2],
        value: vec![2, -5_000_000],
        label: vec![],
    });
    let (_dir, path) = write("delta.pb.gz", &gzip(&p.encode_to_vec()));
    let path = path.to_str().unwrap();
    let args = [
        "convert", path, "--to", "folded", "--plain", "--metric", "cpu",
    ];
    let out = whose(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(
        ok_stdout(&args, out),
        "main.main 10000000 0\nmain.main;main.work 5000000 30000000\n"
    );
    assert!(
        stderr.contains("wrote 2 differential folded stacks (`stack BEFORE AFTER`"),
        "{stderr}"
    );
    // a metric without negative weights keeps one count per line
    let args = [
        "convert", path, "--to", "folded", "--plain", "--metric", "samples",
    ];
    assert_eq!(whose_ok(&args), "main.main 1\nmain.main;main.work 5\n");
    // the owner-rooted lines are shares of one total: refused with the reason, exit 2
    let err = whose_err(&["convert", path, "--to", "folded", "--owner-root"]);
    assert!(
        err.contains("--owner-root: metric cpu has negative weights (-15.00 ms"),
        "{err}"
    );
}

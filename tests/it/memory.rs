//! Memory grows with distinct frames and stacks, at a bounded cost each (issue 17): a folded
//! file of 5 M distinct stacks (about 105 MB) aborted under a 2 GB address-space limit at
//! about 1 KB per distinct frame; it must complete under that limit with the right total.

use super::common::*;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::Command;

/// Writes `stacks` distinct stacks `main;run;fn_I COUNT` (the shape of the file: two
/// shared frames and one distinct frame per line, counts 1..=7) and returns their total.
fn distinct_stacks(path: &Path, stacks: u64) -> u64 {
    let mut out = BufWriter::new(std::fs::File::create(path).unwrap());
    let mut total = 0;
    for i in 0..stacks {
        let count = i % 7 + 1;
        writeln!(out, "main;run;fn_{i} {count}").unwrap();
        total += count;
    }
    out.flush().unwrap();
    total
}

/// `whose ARGS` under an address-space limit of `bytes` (util-linux `prlimit`).
fn whose_limited(bytes: u64, args: &[&str]) -> std::process::Output {
    Command::new("prlimit")
        .arg(format!("--as={bytes}"))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_whose"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run prlimit (util-linux)")
}

#[test]
#[ignore = "writes 105 MB and reads 5 M distinct stacks: about a minute in a debug build; .ci/run runs it"]
fn five_million_distinct_stacks_fit_in_2_gb() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("distinct-5m.folded");
    let total = distinct_stacks(&path, 5_000_000);
    let path = path.to_str().unwrap();
    let args = ["report", path, "--format", "json", "--top", "3"];
    let out = whose_limited(2 << 30, &args);
    let json = ok_stdout(&args, out);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let input = &json["inputs"][0];
    assert_eq!(input["total"], total);
    // every frame is unclassified; the heaviest leaves are those of count 7, ties by name
    let mut heaviest: Vec<String> = (6..5_000_000u64)
        .step_by(7)
        .map(|i| format!("fn_{i}"))
        .collect();
    heaviest.sort();
    heaviest.truncate(3);
    let names = |list: &str| -> Vec<String> {
        input[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["frame"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names("top_self_frames"), heaviest);
    // `main` and `run` are on every stack
    assert_eq!(names("unclassified_frames"), ["main", "run", &heaviest[0]]);
    assert_eq!(input["unclassified_frames"][0]["weight"], total);
}

// --------------------------------------------------------------------------- issue 23

/// 2 GiB of address space, as the issue measured under.
const LIMIT: u64 = 2 << 30;

/// A speedscope file with one evented profile (unit `none`) that opens `depth` distinct
/// frames one time unit apart, then closes them one time unit apart. By hand: every frame
/// but the deepest is the leaf for one unit on the way in and one on the way out (self 2),
/// the deepest for one unit; the total is the span, `2 * depth - 1`.
fn nested_evented(path: &Path, depth: usize) -> u64 {
    let mut out = BufWriter::new(std::fs::File::create(path).unwrap());
    // `$schema` first, as speedscope and py-spy write it: detection reads the file's head
    write!(
        out,
        "{{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\
         \"shared\":{{\"frames\":["
    )
    .unwrap();
    for i in 0..depth {
        let sep = if i > 0 { "," } else { "" };
        write!(out, "{sep}{{\"name\":\"f{i}\"}}").unwrap();
    }
    write!(
        out,
        "]}},\n\"profiles\":[{{\"type\":\"evented\",\"name\":\"t\",\"unit\":\"none\",\
         \"startValue\":0,\"endValue\":{},\"events\":[",
        2 * depth - 1
    )
    .unwrap();
    for i in 0..depth {
        let sep = if i > 0 { "," } else { "" };
        write!(out, "{sep}\n{{\"type\":\"O\",\"frame\":{i},\"at\":{i}}}").unwrap();
    }
    for (k, i) in (0..depth).rev().enumerate() {
        write!(
            out,
            ",\n{{\"type\":\"C\",\"frame\":{i},\"at\":{}}}",
            depth + k
        )
        .unwrap();
    }
    writeln!(out, "]}}]}}").unwrap();
    out.flush().unwrap();
    2 * depth as u64 - 1
}

/// Small enough for every `cargo test`: the cap is an eighth of `--max-decompressed`, so
/// 4000 bytes allow 500 bytes of frame ids, 125 of them; 20 frames nested need
/// 20 · 21 / 2 = 210, and the interval after event 16 (16 open: 120 held + 16 = 136) is the
/// first past it.
#[test]
fn evented_nesting_past_its_share_of_the_cap_is_refused_at_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested.speedscope.json");
    let total = nested_evented(&path, 20);
    let path = path.to_str().unwrap();
    let err = whose_err(&["report", path, "--max-decompressed", "4000"]);
    // event 16 is on line 19 (frames on line 1, `"profiles"` on line 2, then one event a
    // line)
    assert!(
        err.contains(&format!(
            "{path}:19:1: profile 0 (t): at event 16, 16 frames open"
        )),
        "{err}"
    );
    assert!(err.contains("raise --max-decompressed"), "{err}");
    // under the default cap it reads, every unit of its span charged
    let json = report_json(&[path]);
    assert_eq!(json["inputs"][0]["total"], total);
}

#[test]
#[ignore = "a 40 k-deep evented speedscope under a 2 GB limit: about a minute in a debug build; .ci/run runs it"]
fn evented_speedscope_nested_40k_deep_is_refused_and_5k_deep_reads_under_2_gb() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("deep.speedscope.json");
    nested_evented(&deep, 40_000);
    let deep = deep.to_str().unwrap();
    // 40 k deep made 800 M frame ids (3.2 GB) and aborted: now exit 2 with the flag to raise
    let out = whose_limited(LIMIT, &["report", deep]);
    let err = err_stderr(&["report", deep], out);
    assert!(err.contains("raise --max-decompressed"), "{err}");
    // 5 k deep is 12.5 M frame ids (50 MB), under the cap's eighth (256 MiB); 10 k deep
    // (200 MB) reads too, but its 20 k stacks of up to 10 k frames take minutes to aggregate
    // in a debug build
    let ok = dir.path().join("ok.speedscope.json");
    let total = nested_evented(&ok, 5_000);
    let ok = ok.to_str().unwrap();
    let args = ["report", ok, "--format", "json"];
    let json: serde_json::Value =
        serde_json::from_str(&ok_stdout(&args, whose_limited(LIMIT, &args))).unwrap();
    assert_eq!(json["inputs"][0]["total"], total);
}

#[test]
#[ignore = "converts 10 M pprof samples twice under a 2 GB limit: about 90 s in a debug build; .ci/run runs it"]
fn convert_of_a_10m_sample_pprof_completes_under_2_gb() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_temp(
        dir.path(),
        "10m.pb.gz",
        super::memory_caps::many_samples(10_000_000),
    );
    let path = path.to_str().unwrap();
    // Σ (i % 7 + 1) over 10 M samples: 1,428,571 full cycles of 28, then 1 + 2 + 3
    let total = 1_428_571u64 * 28 + 6;
    let args = ["convert", path, "--to", "folded"];
    let folded = ok_stdout(&args, whose_limited(LIMIT, &args));
    let sum: u64 = folded
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    // three stacks (one, two and three locations deep)
    assert_eq!((folded.lines().count(), sum), (3, total), "{folded}");
    let out_path = dir.path().join("out.pb.gz");
    let out = out_path.to_str().unwrap();
    let args = ["convert", path, "--to", "pprof", "-o", out];
    ok_stdout(&args, whose_limited(LIMIT, &args));
    let json = report_json(&[out]);
    assert_eq!(json["inputs"][0]["total"], total);
}

/// A raw pprof of one sample and `empty` more empty strings at the end of its string table
/// (2 bytes each on the wire); returns the sample's value.
fn empty_strings_pprof(path: &Path, empty: usize) -> u64 {
    use prost::Message;
    use whose::pprof_wire as pb;
    let p = pb::Profile {
        sample_type: vec![pb::ValueType { r#type: 1, unit: 2 }],
        sample: vec![pb::Sample {
            location_id: vec![1],
            value: vec![7],
            label: vec![],
        }],
        location: vec![pb::Location {
            id: 1,
            line: vec![pb::Line {
                function_id: 1,
                line: 1,
            }],
            ..Default::default()
        }],
        function: vec![pb::Function {
            id: 1,
            name: 3,
            ..Default::default()
        }],
        string_table: ["", "samples", "count", "main.main"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        ..Default::default()
    };
    let mut out = BufWriter::new(std::fs::File::create(path).unwrap());
    out.write_all(&p.encode_to_vec()).unwrap();
    let block = [0x32u8, 0x00].repeat(1 << 16);
    let mut left = empty;
    while left > 0 {
        let n = left.min(1 << 16);
        out.write_all(&block[..2 * n]).unwrap();
        left -= n;
    }
    out.flush().unwrap();
    7
}

#[test]
#[ignore = "writes a 200 MB pprof of 100 M empty strings and reads it under a 2 GB limit; .ci/run runs it in release"]
fn a_pprof_of_100m_empty_strings_reads_and_converts_under_2_gb() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("strings.pb");
    let total = empty_strings_pprof(&path, 100_000_000);
    let path = path.to_str().unwrap();
    // each entry was a 24-byte `String` (2.4 GB): an abort
    let args = ["report", path, "--format", "json"];
    let json: serde_json::Value =
        serde_json::from_str(&ok_stdout(&args, whose_limited(LIMIT, &args))).unwrap();
    assert_eq!(json["inputs"][0]["total"], total);
    // written back whole: every string, and the owner labels after them
    let out_path = dir.path().join("out.pb.gz");
    let out = out_path.to_str().unwrap();
    let args = ["convert", path, "--to", "pprof", "-o", out];
    ok_stdout(&args, whose_limited(LIMIT, &args));
    let args = ["report", out, "--format", "json"];
    let json: serde_json::Value =
        serde_json::from_str(&ok_stdout(&args, whose_limited(LIMIT, &args))).unwrap();
    assert_eq!(json["inputs"][0]["total"], total);
}

#[test]
#[ignore = "writes 105 MB and reads 5 M distinct stacks through flame and convert: minutes in a debug build; .ci/run runs it in release"]
fn five_million_distinct_stacks_flame_and_convert_under_2_gb() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("distinct-5m.folded");
    let total = distinct_stacks(&path, 5_000_000);
    let path = path.to_str().unwrap();
    let svg = dir.path().join("out.svg");
    let args = ["flame", path, "-o", svg.to_str().unwrap()];
    ok_stdout(&args, whose_limited(LIMIT, &args));
    assert!(std::fs::metadata(&svg).unwrap().len() > 0);
    let pprof = dir.path().join("out.pb.gz");
    let args = [
        "convert",
        path,
        "--to",
        "pprof",
        "-o",
        pprof.to_str().unwrap(),
    ];
    ok_stdout(&args, whose_limited(LIMIT, &args));
    let args = ["convert", path, "--to", "folded"];
    let folded = ok_stdout(&args, whose_limited(LIMIT, &args));
    assert_eq!(folded.lines().count(), 5_000_000);
    let sum: u64 = folded
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, total);
}

#[test]
#[ignore = "a fleet folder holding the 5 M-stack file, under a 2 GB limit; .ci/run runs it in release"]
fn a_fleet_folder_holding_the_5m_stack_file_reports_every_input_under_2_gb() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    let big = fleet.join("distinct-5m.folded");
    let total = distinct_stacks(&big, 5_000_000);
    std::fs::copy(fixture("folded/py-app.folded"), fleet.join("py.folded")).unwrap();
    let rows = dir.path().join("rows.ndjson");
    let args = [
        "report",
        "--each",
        fleet.to_str().unwrap(),
        "--format",
        "ndjson",
        "-o",
        rows.to_str().unwrap(),
    ];
    ok_stdout(&args, whose_limited(LIMIT, &args));
    let text = std::fs::read_to_string(&rows).unwrap();
    let mut totals = std::collections::BTreeMap::new();
    for line in text.lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(row["error"].is_null(), "{row}");
        let name = row["path"]
            .as_str()
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap()
            .to_string();
        totals.insert(name, row["total"].as_u64().unwrap());
    }
    assert_eq!(totals.len(), 2, "{totals:?}");
    assert_eq!(totals["distinct-5m.folded"], total);
}

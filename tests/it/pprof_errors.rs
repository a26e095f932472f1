//! Bad pprof input, one test per case: exit 2, the message names the file and what is wrong,
//! no panic. Each input is a small valid profile with one thing broken.

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
fn negative_values_are_refused_not_misread() {
    let mut p = valid();
    p.sample[0].value = vec![-3, 30];
    let err = report_err(&p, &[]);
    assert!(err.contains("sample 0 has a negative value (-3)"), "{err}");
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

//! `report --each` keeps every input in view (issue 23): a dangling symbolic link in the
//! folder is an error row, not a file left out with no word.

use super::common::*;

#[test]
fn a_dangling_symlink_in_an_each_folder_is_an_error_row_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    std::fs::copy(fixture("folded/py-app.folded"), fleet.join("py.folded")).unwrap();
    let gone = fleet.join("gone.folded");
    std::os::unix::fs::symlink(dir.path().join("missing.folded"), &gone).unwrap();
    for format in ["ndjson", "parquet"] {
        let rows = dir.path().join(format!("rows.{format}"));
        let args = [
            "report",
            "--each",
            fleet.to_str().unwrap(),
            "--format",
            format,
            "-o",
            rows.to_str().unwrap(),
        ];
        let err = err_stderr(&args, command().args(args).output().unwrap());
        assert!(err.contains("1 of 2 inputs could not be read"), "{err}");
        if format == "ndjson" {
            let text = std::fs::read_to_string(&rows).unwrap();
            let errors: Vec<serde_json::Value> = text
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                .filter(|r| !r["error"].is_null())
                .collect();
            assert_eq!(errors.len(), 1, "{text}");
            assert_eq!(errors[0]["path"], gone.to_str().unwrap());
            let reason = errors[0]["error"].as_str().unwrap();
            assert!(reason.contains("No such file"), "{reason}");
            // the good input's rows are there too
            assert!(text.contains("py.folded"), "{text}");
        } else {
            assert!(std::fs::metadata(&rows).unwrap().len() > 0);
        }
    }
}

/// A fleet folder of three real inputs and one of 200,000 distinct stacks (about 8 MB of
/// distinct content in whose's model).
fn fleet_with_a_big_input(dir: &std::path::Path) -> std::path::PathBuf {
    let fleet = dir.join("fleet");
    std::fs::create_dir(&fleet).unwrap();
    for (from, to) in [
        ("folded/py-app.folded", "py.folded"),
        ("pprof/cpu.pb.gz", "cpu.pb.gz"),
        (
            "perf/c-malloc.perf.perf-script.txt.gz",
            "c.perf-script.txt.gz",
        ),
    ] {
        std::fs::copy(fixture(from), fleet.join(to)).unwrap();
    }
    let big: String = (0..200_000)
        .map(|i| format!("main;f{i};g{} {}\n", i * 7, 1 + i % 5))
        .collect();
    std::fs::write(fleet.join("big.folded"), big).unwrap();
    fleet
}

/// `(path, error)` of every row of a `--each` output, NDJSON or Parquet.
fn paths_and_errors(rows: &std::path::Path, format: &str) -> Vec<(String, Option<String>)> {
    if format == "ndjson" {
        return std::fs::read_to_string(rows)
            .unwrap()
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                let path = v["path"].as_str().unwrap().to_string();
                (path, v["error"].as_str().map(str::to_string))
            })
            .collect();
    }
    use arrow_array::Array;
    use arrow_array::cast::AsArray;
    let file = std::fs::File::open(rows).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let path = batch
            .column_by_name("path")
            .unwrap()
            .as_string::<i32>()
            .clone();
        let error = batch
            .column_by_name("error")
            .unwrap()
            .as_string::<i32>()
            .clone();
        for i in 0..batch.num_rows() {
            let e = (!error.is_null(i)).then(|| error.value(i).to_string());
            out.push((path.value(i).to_string(), e));
        }
    }
    out
}

#[test]
fn an_input_past_its_share_of_memory_is_one_error_row_and_the_others_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = fleet_with_a_big_input(dir.path());
    for format in ["ndjson", "parquet"] {
        let rows = dir.path().join(format!("rows.{format}"));
        let args = [
            "report",
            "--each",
            fleet.to_str().unwrap(),
            "--each-memory",
            "4000000",
            "--format",
            format,
            "-o",
            rows.to_str().unwrap(),
        ];
        let err = err_stderr(&args, command().args(args).output().unwrap());
        assert!(err.contains("1 of 4 inputs could not be read"), "{err}");
        let got = paths_and_errors(&rows, format);
        let errors: Vec<_> = got.iter().filter(|(_, e)| e.is_some()).collect();
        assert_eq!(errors.len(), 1, "{format}: {got:?}");
        assert!(errors[0].0.ends_with("big.folded"), "{errors:?}");
        let why = errors[0].1.as_deref().unwrap();
        assert!(
            why.contains("went past its share of memory, 4000000 bytes")
                && why.contains("--each-memory BYTES raises the share"),
            "{why}"
        );
        // every other input has its owner rows
        for name in ["py.folded", "cpu.pb.gz", "c.perf-script.txt.gz"] {
            let n = got
                .iter()
                .filter(|(p, e)| p.ends_with(name) && e.is_none())
                .count();
            assert!(n >= 3, "{format} {name}: {got:?}");
        }
    }
    // with the default share the big input is read like the others
    let args = [
        "report",
        "--each",
        fleet.to_str().unwrap(),
        "--format",
        "ndjson",
    ];
    let out = command().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_input_past_its_share_of_time_is_an_error_row_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = fleet_with_a_big_input(dir.path());
    let rows = dir.path().join("rows.ndjson");
    let args = [
        "report",
        "--each",
        fleet.to_str().unwrap(),
        "--each-timeout",
        "0",
        "--format",
        "ndjson",
        "-o",
        rows.to_str().unwrap(),
    ];
    let err = err_stderr(&args, command().args(args).output().unwrap());
    assert!(err.contains("4 of 4 inputs could not be read"), "{err}");
    for (path, error) in paths_and_errors(&rows, "ndjson") {
        let why = error.unwrap_or_else(|| panic!("{path} has rows"));
        assert!(
            why.contains("went past its share of time, 0 s")
                && why.contains("--each-timeout SECONDS raises the share"),
            "{why}"
        );
    }
}

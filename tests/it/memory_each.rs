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

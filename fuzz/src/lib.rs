//! What the reader targets share: the input goes through the file path a user's input takes
//! (`whose::read_profile`), and the outcome is checked for what must hold beyond "no panic".

use std::path::PathBuf;
use std::sync::OnceLock;
use whose::{Error, InputFormat, Profile, ReadOptions};

/// A cap on decompressed bytes well under libFuzzer's 2 GB RSS limit, so a gzip bomb is the
/// reader's refusal, not an out-of-memory report.
pub const MAX_DECOMPRESSED: u64 = 64 << 20;

/// Read options for one format, with the decompression cap.
pub fn options(format: InputFormat) -> ReadOptions {
    ReadOptions {
        format: Some(format),
        max_decompressed: Some(MAX_DECOMPRESSED),
        ..ReadOptions::default()
    }
}

/// One input file per process (the targets run single-threaded), removed after each run.
fn input_path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::temp_dir().join(format!("whose-fuzz-{}.input", std::process::id()))
    })
}

/// Writes `data` to the process's input file, reads it with `options` and checks the outcome.
pub fn read(data: &[u8], options: &ReadOptions) -> Result<Profile, Error> {
    let path = input_path();
    std::fs::write(path, data).expect("writing the fuzz input file");
    let result = whose::read_profile(path, options);
    let _ = std::fs::remove_file(path);
    check(&result);
    result
}

/// What must hold of a read beyond returning: a profile that the reader's own validation let
/// through has totals, and an error is never a broken invariant of the reader
/// (`read_profile` validates every profile and calls a failure an internal reader error).
pub fn check(result: &Result<Profile, Error>) {
    match result {
        Ok(profile) => {
            let totals = profile.totals();
            assert_eq!(totals.len(), profile.sample_types().len());
        }
        Err(e) => {
            let message = e.to_string();
            assert!(
                !message.contains("internal reader error"),
                "a reader produced an invalid profile: {message}"
            );
        }
    }
}

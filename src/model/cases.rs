//! Table-driven unit tests: a function's answer for each of many inputs, each failure naming
//! its input, so that a test lists cases rather than repeating one assertion per case.

use std::fmt::Debug;

/// Asserts `f(input) == want` for every `(input, want)` of `cases`.
pub fn assert_cases<I: Debug + Copy, T: Debug + PartialEq>(f: impl Fn(I) -> T, cases: &[(I, T)]) {
    for (input, want) in cases {
        assert_eq!(&f(*input), want, "for {input:?}");
    }
}

/// [`assert_cases`] for a function that names what it finds: `f(input).as_deref() == want`.
pub fn assert_named<'a, S: AsRef<str> + Debug>(
    f: impl Fn(&'a str) -> Option<S>,
    cases: &[(&'a str, Option<&str>)],
) {
    for &(input, want) in cases {
        let got = f(input);
        assert_eq!(got.as_ref().map(AsRef::as_ref), want, "for {input:?}");
    }
}

/// A file `name` holding `contents` in a fresh temporary folder, which lives as long as the
/// returned handle.
pub fn temp_file(
    name: &str,
    contents: impl AsRef<[u8]>,
) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join(name);
    std::fs::write(&path, contents).expect("write the temporary file");
    (dir, path)
}

//! py-spy `--native` raw output (issue 13): a real recording of `fixtures/src/native_mix.py`
//! (its own arithmetic, zlib, hashlib, json) read with native frames as native code of their
//! library, detected without `--format-in`, and its self shares checked against a count made
//! here from the raw text alone. A live recording (py-spy, ignored unless asked for) repeats
//! the check on this machine.

use super::common::*;
use std::collections::BTreeMap;
use std::process::Command;

/// `py-spy record --native -r 250 -f raw -- python3 -S fixtures/src/native_mix.py 10`
/// (fixtures/README.md).
const RAW: &str = "pyspy/native_mix.pyspy-raw.txt";

/// The owner of a sample, told from its leaf frame's `(LOCATION)` by hand, independently of
/// whose's rules: the library py-spy names, the C source of an extension module, the Python
/// file. `None` for a leaf this small table does not know.
fn leaf_owner(leaf: &str) -> Option<&'static str> {
    let (func, location) = leaf.strip_suffix(')')?.rsplit_once(" (")?;
    let file = location.split(':').next()?;
    // (issue 29: the standard library's C modules and the C libraries only they wrap, libz
    // and libcrypto, are the stdlib's, `python-std-native`; this program uses no other)
    Some(
        if file.starts_with("libz.so") || file.starts_with("libcrypto.so") {
            "python-std-native"
        } else if file.starts_with("libc.so") {
            "glibc"
        } else if file.starts_with("libpython3") && func.starts_with("gc_collect") {
            "cpython-gc"
        } else if file.starts_with("libpython3") || file == "object.h" || file == "unicodeobject.h"
        {
            "cpython"
        } else if file.ends_with(".c") || file.ends_with(".c.h") || file.contains(".cpython-") {
            "python-std-native"
        } else if file == "native_mix.py" {
            "user"
        } else if file.starts_with("json/") || file.starts_with("<frozen ") {
            "python-std"
        } else if file == "?" {
            "unsymbolized"
        } else {
            return None;
        },
    )
}

/// Samples per owner of the leaf, counted from py-spy raw lines (`frame;...;leaf COUNT`);
/// leaves [`leaf_owner`] does not know are listed apart.
fn leaf_counts(raw: &str) -> (BTreeMap<&'static str, u64>, Vec<String>) {
    let mut counts = BTreeMap::new();
    let mut unknown = Vec::new();
    for line in raw.lines().filter(|l| !l.is_empty()) {
        let (stack, count) = line.rsplit_once(' ').expect("a count");
        let leaf = stack.rsplit(';').next().unwrap();
        match leaf_owner(leaf) {
            Some(owner) => *counts.entry(owner).or_default() += count.parse::<u64>().unwrap(),
            None => unknown.push(leaf.to_string()),
        }
    }
    (counts, unknown)
}

/// whose's self weight per owner (samples), and the notes, from `report --format json`.
fn self_counts(args: &[&str]) -> (BTreeMap<String, u64>, Vec<String>) {
    let mut full = vec!["report", "--format", "json"];
    full.extend_from_slice(args);
    let json: serde_json::Value = serde_json::from_str(&whose_ok(&full)).expect("json");
    let input = &json["inputs"][0];
    let counts = input["owners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["name"].as_str().unwrap().to_string(),
                o["self"].as_u64().unwrap(),
            )
        })
        .filter(|(_, w)| *w > 0)
        .collect();
    (counts, notes(&json))
}

#[test]
fn native_frames_are_owned_by_their_library() {
    let raw = std::fs::read_to_string(fixture(RAW)).unwrap();
    let (want, unknown) = leaf_counts(&raw);
    assert!(
        unknown.is_empty(),
        "leaves the test cannot place: {unknown:?}"
    );
    // detected as py-spy although the first frame of every line is `0x... (libc.so.6)`
    assert!(raw.starts_with("0x"));
    let (got, notes) = self_counts(&[&fixture_arg(RAW)]);
    assert!(
        notes.contains(&"format: py-spy raw".to_string()),
        "{notes:?}"
    );
    let want: BTreeMap<String, u64> = want.into_iter().map(|(k, v)| (k.into(), v)).collect();
    assert_eq!(got, want);
    // the numbers of this recording: 195 samples, most of them in libz and libcrypto
    assert_eq!(want.values().sum::<u64>(), 195);
    // (81 in libz, 58 in libcrypto, 23 in the _json, zlib and _hashlib modules)
    assert_eq!((want["python-std-native"], want["user"]), (162, 20));
    // forced, the same
    let (forced, _) = self_counts(&[&fixture_arg(RAW), "--format-in", "pyspy-raw"]);
    assert_eq!(forced, got);
}

#[test]
fn native_frames_keep_symbol_and_library() {
    // a hand-made line with each kind of frame py-spy --native writes
    let file = temp_file(
        "0x7f00 (libc.so.6);<module> (app.py:3);deflate (libz.so.1.2.13) 2\n\
         0x7f00 (libc.so.6);<module> (app.py:3);encoder_call (_json.c:1305) 3\n\
         0x7f00 (libc.so.6);<module> (app.py:3);0x7f10 (_json.cpython-311-x86_64-linux-gnu.so) 5\n\
         0x7f00 (libc.so.6);<module> (app.py:3);SHA256_Update (libcrypto.so.3) 7\n\
         0x7f00 (libc.so.6);<module> (app.py:4) 11\n",
    );
    let (got, notes) = self_counts(&[file.path().to_str().unwrap()]);
    assert!(
        notes.contains(&"format: py-spy raw".to_string()),
        "{notes:?}"
    );
    let want: BTreeMap<String, u64> = [("python-std-native", 2 + 3 + 5 + 7), ("user", 11)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    assert_eq!(got, want);
    // the owner view: the stdlib's C code is as transparent as its Python code (issue 29
    // item 3), so user code owns all of it, as plain py-spy would show it
    let (shares, total) = report_shares(&[file.path().to_str().unwrap()]);
    assert_eq!(total, 28);
    assert!(
        (shares["user"][OWNER] - 100.0).abs() < 1e-9,
        "{}",
        table(&shares)
    );
}

/// Records `fixtures/src/native_mix.py` with `py-spy --native` and checks the self shares
/// against the count of leaves, as the committed fixture does.
#[test]
#[ignore = "needs py-spy and python3, and ptrace (`.ci/run` installs py-spy with pip)"]
fn live_py_spy_native_leaves_are_their_library() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("native.txt");
    let status = Command::new("py-spy")
        .args(["record", "--native", "-r", "250", "-f", "raw", "-o"])
        .arg(&out)
        .args([
            "--",
            "python3",
            "-S",
            &fixture_arg("src/native_mix.py"),
            "20",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("py-spy");
    assert!(status.success(), "py-spy --native failed (it needs ptrace)");
    let raw = std::fs::read_to_string(&out).unwrap();
    let (want, _) = leaf_counts(&raw);
    let (got, _) = self_counts(&[out.to_str().unwrap()]);
    let total: u64 = got.values().sum();
    assert!(total > 200, "only {total} samples");
    // the library owners and user code exactly; other leaves (allocator, interpreter
    // internals) vary with the machine and are not counted by hand
    for owner in ["python-std-native", "user"] {
        assert_eq!(
            got.get(owner).copied().unwrap_or(0),
            want.get(owner).copied().unwrap_or(0),
            "{owner}: {got:?} vs {want:?}"
        );
    }
    assert!(got["python-std-native"] > total / 3, "{got:?}");
}

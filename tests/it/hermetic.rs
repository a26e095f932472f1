//! The one way the tests run whose on the committed perf.data recordings.
//!
//! The recordings name `/tmp/whose-corpus/...` and system libraries of the recording machine.
//! Every run gets `--symfs` pointing at an empty directory (so neither the recorded paths nor
//! `/usr/lib/debug` of the test machine are used) and `HOME` pointing there too (no perf
//! build-id cache); binaries come only from `--binary-path fixtures/perf/bin` and JIT maps only
//! from `--jit-map-dir fixtures/perf`. glibc's symbols come from a stripped copy of its debug
//! file under `bin/.build-id/`, placed by the executable segment alone. The DWARF recordings
//! also unwind through Debian's glibc 2.36 (build id 93ac61ec…), whose `.eh_frame` the fixtures
//! carry gzipped: [`Hermetic::with_recorded_glibc`] unpacks it into a `--binary-path` of its own.

use super::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

pub struct Hermetic {
    /// The empty `--symfs` and `HOME`; tests may put scratch files in it, which no recorded
    /// path reaches (they all start with `/tmp/whose-corpus/` or `/usr/`).
    root: tempfile::TempDir,
    /// A directory holding only the recorded `libc.so.6`, when asked for.
    glibc: Option<tempfile::TempDir>,
}

impl Hermetic {
    pub fn new() -> Hermetic {
        Hermetic {
            root: tempfile::tempdir().unwrap(),
            glibc: None,
        }
    }

    /// As [`Hermetic::new`], and the recording machine's `libc.so.6` on the binary path.
    pub fn with_recorded_glibc() -> Hermetic {
        let glibc = tempfile::tempdir().unwrap();
        write_temp(
            glibc.path(),
            "libc.so.6",
            gunzip_file(&fixture("perf/libc/libc.so.6.gz")),
        );
        Hermetic {
            glibc: Some(glibc),
            ..Hermetic::new()
        }
    }

    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// The directory holding the recorded `libc.so.6`.
    pub fn glibc_dir(&self) -> &Path {
        self.glibc
            .as_ref()
            .expect("made by Hermetic::with_recorded_glibc")
            .path()
    }

    /// `--symfs`, `--binary-path` (twice with the recorded glibc) and `--jit-map-dir`.
    pub fn symbol_args(&self) -> Vec<String> {
        let path = |p: &Path| p.to_str().unwrap().to_string();
        let mut args = vec!["--symfs".to_string(), path(self.root())];
        args.extend(["--binary-path".to_string(), path(&fixture("perf/bin"))]);
        if let Some(glibc) = &self.glibc {
            args.extend(["--binary-path".to_string(), path(glibc.path())]);
        }
        args.extend(["--jit-map-dir".to_string(), path(&fixture("perf"))]);
        args
    }

    /// `whose` with `HOME` in the empty directory; the symbol options are the caller's.
    pub fn command(&self) -> Command {
        let mut c = command();
        c.env("HOME", self.root());
        c
    }

    /// Runs `whose ARGS` (without adding the symbol options: for tests of those options).
    pub fn whose(&self, args: &[&str]) -> Output {
        self.command().args(args).output().expect("run whose")
    }

    /// `HEAD PROFILE SYMBOL-OPTIONS TAIL`.
    fn args(&self, head: &[&str], profile: &Path, tail: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = head.iter().map(|s| s.to_string()).collect();
        args.push(profile.to_str().unwrap().to_string());
        args.extend(self.symbol_args());
        args.extend(tail.iter().map(|s| s.to_string()));
        args
    }

    /// Runs `whose HEAD PROFILE SYMBOL-OPTIONS TAIL`.
    pub fn run(&self, head: &[&str], profile: &Path, tail: &[&str]) -> Output {
        let args = self.args(head, profile, tail);
        self.command().args(&args).output().expect("run whose")
    }

    /// [`Hermetic::run`], expecting exit 0 and no panic; (stdout, stderr).
    pub fn run_ok(&self, head: &[&str], profile: &Path, tail: &[&str]) -> (String, String) {
        let args = self.args(head, profile, tail);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = self.whose(&args);
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(!stderr.contains("panicked"), "{stderr}");
        (ok_stdout(&args, out), stderr)
    }

    /// [`Hermetic::run`], expecting exit 2 (an input error) and no panic; stderr.
    pub fn run_err(&self, head: &[&str], profile: &Path, tail: &[&str]) -> String {
        let args = self.args(head, profile, tail);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        err_stderr(&args, self.whose(&args))
    }

    /// `whose report --format json` with the symbol options; (json, stderr).
    pub fn report(&self, profile: &Path, extra: &[&str]) -> (Value, String) {
        let (stdout, stderr) = self.run_ok(&["report", "--format", "json"], profile, extra);
        (serde_json::from_str(&stdout).unwrap(), stderr)
    }
}

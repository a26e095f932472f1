//! A real Rust producer of pprof: pprof-rs (dev-dependency) profiles a CPU-bound workload in
//! the test binary, and whose reads the written file back. The workload's frames — this
//! module's functions — must come out as the user owner, which needs pprof-rs's names
//! normalised (hash suffix dropped) and its `thread` label read as the thread.
//!
//! The profiler samples the whole process, and the other tests of this binary run in it in
//! parallel; so the test runs itself again, alone, in a child process of the same binary, which
//! profiles the workload and writes the file that the parent then checks.

use super::common::*;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

/// The prefix of this module's frames (`main::it::pprof_rs::`), the user code of the profile.
const USER: &str = concat!(module_path!(), "::");

/// Set in the child process: where to write the profile.
const PROFILE_TO: &str = "WHOSE_TEST_PPROF_RS_PROFILE_TO";

#[inline(never)]
fn churn_hashes(seed: u64) -> u64 {
    let mut x = seed;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

#[inline(never)]
fn workload(for_how_long: Duration) -> u64 {
    let start = Instant::now();
    let mut acc = 0u64;
    let mut i = 0u64;
    while start.elapsed() < for_how_long {
        acc = acc.wrapping_add(churn_hashes(black_box(i)));
        i += 1;
    }
    acc
}

/// Profiles the workload with pprof-rs in this process and writes the gzipped profile.
fn profile_workload(path: &Path) {
    let guard = ::pprof::ProfilerGuardBuilder::default()
        .frequency(997)
        .build()
        .expect("start pprof-rs");
    let handle = std::thread::Builder::new()
        .name("whose-workload".into())
        .spawn(|| workload(Duration::from_millis(1500)))
        .unwrap();
    black_box(handle.join().unwrap());
    let report = guard.report().build().expect("pprof-rs report");
    let profile = report.pprof().expect("pprof-rs protobuf");
    let bytes = ::pprof::protos::Message::encode_to_vec(&profile);
    std::fs::write(path, gzip(&bytes)).unwrap();
}

#[test]
fn pprof_rs_profile_attributes_the_workload_to_user() {
    if let Some(path) = std::env::var_os(PROFILE_TO) {
        // the child: profile, and leave the checks to the parent
        profile_workload(Path::new(&path));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rust.pb.gz");
    // this test's name as libtest knows it: the module path without the crate's name
    let name = format!(
        "{}::pprof_rs_profile_attributes_the_workload_to_user",
        module_path!().split_once("::").unwrap().1
    );
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name.as_str(), "--exact", "--test-threads", "1"])
        .env(PROFILE_TO, &path)
        .output()
        .unwrap();
    let child_out = String::from_utf8_lossy(&child.stdout);
    assert!(
        child.status.success() && child_out.contains("1 passed"),
        "the profiling child failed:\n{child_out}\n{}",
        String::from_utf8_lossy(&child.stderr)
    );
    let path = path.to_str().unwrap();

    let (shares, total) = report_shares(&[path, "--user", USER]);
    // pprof-rs writes samples/count and cpu/nanoseconds-like types; at ~1 kHz for 1.5 s
    assert!(total > 0, "no samples");
    let user = shares.get("user").expect("a user owner");
    // the workload thread is nearly all of the process's CPU
    assert!(
        user[1] > 80.0,
        "user owner share {:.1}%: {shares:?}",
        user[1]
    );
    assert!(user[2] >= user[1]);

    // the workload's functions appear under their Rust paths, hash dropped
    let explain = whose_ok(&["explain", path, "--user", USER, "--top", "200"]);
    assert!(
        explain.contains("pprof_rs::churn_hashes") || explain.contains("pprof_rs::workload"),
        "{explain}"
    );
    assert!(!explain.contains("pprof_rs::workload::h"), "{explain}");

    // pprof-rs's `thread` label is the thread dimension
    let threads = whose_ok(&[
        "report",
        path,
        "--user",
        USER,
        "--threads",
        "--format",
        "json",
    ]);
    assert!(threads.contains("whose-workload"), "{threads}");
}

/// Set in the child process of the flate2 test: where to write its profile.
const DEFLATE_PROFILE_TO: &str = "WHOSE_TEST_PPROF_RS_DEFLATE_PROFILE_TO";

/// Compresses generated text with flate2 (miniz_oxide's deflate), as packsum does.
#[inline(never)]
fn deflate_workload(for_how_long: Duration) -> usize {
    use std::io::Write;
    let start = Instant::now();
    let block: Vec<u8> = (0..64 * 1024u32)
        .map(|i| b"abcdefgh"[(i.wrapping_mul(2654435761) >> 29) as usize])
        .collect();
    let mut out = 0;
    while start.elapsed() < for_how_long {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(black_box(&block)).unwrap();
        out += encoder.finish().unwrap().len();
        out += churn_hashes(out as u64) as usize & 1;
    }
    out
}

#[test]
fn pprof_rs_profile_of_a_dependency_names_it_after_its_crate() {
    // issue 29 item 2: a Rust program's dependencies that no preset names (flate2, its
    // zlib-rs backend, which whose's own flate2 features select) get owners named after their
    // crates, marked guessed, instead of
    // `unclassified`; the shares are those of a hand rule naming the same crates
    if let Some(path) = std::env::var_os(DEFLATE_PROFILE_TO) {
        let guard = ::pprof::ProfilerGuardBuilder::default()
            .frequency(997)
            .build()
            .expect("start pprof-rs");
        black_box(deflate_workload(Duration::from_millis(1500)));
        let report = guard.report().build().expect("pprof-rs report");
        let profile = report.pprof().expect("pprof-rs protobuf");
        let bytes = ::pprof::protos::Message::encode_to_vec(&profile);
        std::fs::write(path, gzip(&bytes)).unwrap();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deflate.pb.gz");
    let name = format!(
        "{}::pprof_rs_profile_of_a_dependency_names_it_after_its_crate",
        module_path!().split_once("::").unwrap().1
    );
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name.as_str(), "--exact", "--test-threads", "1"])
        .env(DEFLATE_PROFILE_TO, &path)
        .output()
        .unwrap();
    assert!(
        child.status.success(),
        "the profiling child failed:\n{}\n{}",
        String::from_utf8_lossy(&child.stdout),
        String::from_utf8_lossy(&child.stderr)
    );
    let path = path.to_str().unwrap();
    let json = report_json(&[path]);
    let (shares, _) = shares_of(&json);
    let guessed: Vec<&str> = json["owners_guessed"]
        .as_array()
        .map(|a| a.iter().map(|g| g["name"].as_str().unwrap()).collect())
        .unwrap_or_default();
    assert!(guessed.contains(&"zlib_rs"), "{guessed:?} {shares:?}");
    let unclassified = shares.get("unclassified").map_or(0.0, |s| s[1]);
    assert!(
        unclassified <= 1.0,
        "unclassified {unclassified:.1}%: {shares:?}"
    );
    // by hand: one rule owner per crate the guess named gives every owner the same shares
    let mut rules = String::new();
    for krate in &guessed {
        rules.push_str(&format!(
            "[[owner]]\nname = \"{krate}\"\ncategory = \"library\"\ncrate = [\"{krate}\"]\n\n"
        ));
    }
    let rules_path = dir.path().join("crates.toml");
    std::fs::write(&rules_path, rules).unwrap();
    let (by_hand, _) = report_shares(&[path, "--rules", rules_path.to_str().unwrap()]);
    assert_eq!(shares, by_hand);
    assert!(by_hand["zlib_rs"][1] > 10.0, "{by_hand:?}");
}

//! A real Rust producer of pprof: pprof-rs (dev-dependency) profiles a CPU-bound workload in
//! this test binary, and whose reads the written file back. The workload's frames — this
//! crate, `pprof_rs::` — must come out as the user owner, which needs pprof-rs's names
//! normalised (hash suffix dropped) and its `thread` label read as the thread.
//!
//! One test in its own binary: the profiler samples the whole process.

mod common;
use common::*;
use flate2::Compression;
use flate2::write::GzEncoder;
use std::hint::black_box;
use std::io::Write;
use std::time::{Duration, Instant};

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

#[test]
fn pprof_rs_profile_attributes_the_workload_to_user() {
    let guard = pprof::ProfilerGuardBuilder::default()
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
    let bytes = pprof::protos::Message::encode_to_vec(&profile);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rust.pb.gz");
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(&bytes).unwrap();
    std::fs::write(&path, gz.finish().unwrap()).unwrap();
    let path = path.to_str().unwrap();

    let (shares, total) = report_shares(&[path, "--user", "pprof_rs::"]);
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
    let explain = whose_ok(&["explain", path, "--user", "pprof_rs::", "--top", "200"]);
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
        "pprof_rs::",
        "--threads",
        "--format",
        "json",
    ]);
    assert!(threads.contains("whose-workload"), "{threads}");
}

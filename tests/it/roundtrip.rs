//! `report(convert --to folded(X)) == report(X)` for every fixture of every format (issue 12):
//! the folded text `convert --to folded` writes by default keeps what classification needs (modules, frame
//! kinds, py-spy's source files, samples without frames), so reading it back gives the same
//! owner weights in all three views and the same stackless weight, exactly.

use super::common::*;
use super::hermetic::Hermetic;
use serde_json::Value;

/// Every fixture profile, by format; [`every_fixture_profile_is_listed`] keeps the list whole.
const FIXTURES: &[&str] = &[
    "folded/flame-mini.folded",
    "folded/process-root.folded",
    "folded/py-app.folded",
    "folded/seed-ktor-alloc.txt",
    "folded/site-packages.folded",
    "folded/node-modules.folded",
    "folded/kotlin-orders.folded",
    "repeats/churn-1.folded",
    "repeats/churn-2.folded",
    "repeats/churn-3.folded",
    "pyspy/native_mix.pyspy-raw.txt",
    "pyspy/pyown.plain.pyspy-raw.txt",
    "pyspy/pyown.native.pyspy-raw.txt",
    "speedscope/pyown.speedscope.json",
    "node/app.cpuprofile",
    "node/app.perf-script.txt.gz",
    "perf/pyown.xperf-dwarf.perf-script.txt.gz",
    "speedscope/shares.pyspy-raw.txt",
    "speedscope/shares.speedscope.json",
    "perf/rust-native.perf-fp.folded",
    "perf/c-malloc.perf.perf-script.txt.gz",
    "perf/c-malloc.perf-dwarf.perf-script.txt.gz",
    "perf/jvm-shop.perf.perf-script.txt.gz",
    "perf/rust-native.perf-fp.perf-script.txt.gz",
    "perf/rust-native.perf-dwarf.perf-script.txt.gz",
    "perf/rust-native.perf-fp.no-demangle.perf-script.txt.gz",
    "perf/rust-native.perf-dwarf.no-demangle.perf-script.txt.gz",
    "perf/rust-native.perf-fp.half-demangled.perf-script.txt.gz",
    "perf/packsum.perf-nog.perf-script.txt.gz",
    "perf/packsum.perf-fp.perf-script.txt.gz",
    "perf/c-malloc.perf.data",
    "perf/c-malloc.perf.pipe.data.gz",
    "perf/c-malloc.perf-dwarf.data.gz",
    "perf/jvm-shop.perf.data",
    "perf/rust-native.perf-fp.data",
    "perf/rust-native.perf-dwarf.data.gz",
    "perf/sh-loop.perf-z.data",
    "perf/jvm-nofp.perf-script.txt.gz",
    "perf/kotlin-orders.perf-script.txt.gz",
    "perf/cxx-index.perf-fp.perf-script.txt.gz",
    "perf/cxx-index.perf-dwarf.perf-script.txt.gz",
    "perf/cpython-fp.perf-script.txt.gz",
    "perf/cpython-dwarf.perf-script.txt.gz",
    "pprof/cpu.pb.gz",
    "pprof/allocs.pb.gz",
    "pprof/heap.pb.gz",
    "pprof/node-wall.pb.gz",
    "pprof/node-heap.pb.gz",
];

/// The folders of fixture profiles, whose files are all in [`FIXTURES`] but these.
const PROFILE_DIRS: &[&str] = &[
    "folded",
    "node",
    "perf",
    "pprof",
    "pyspy",
    "repeats",
    "speedscope",
];

/// Files in [`PROFILE_DIRS`] that are not profiles: what a profile needs to be read, and
/// expected outputs.
const NOT_PROFILES: &[&str] = &[
    "perf/jvm-shop.kallsyms",
    "perf/perf-22048.map",
    "perf/pyown.perf-7605.map.gz",
    "node/perf-8483.map.gz",
    "pprof/allocs.alloc_space.top.txt",
    "pprof/cpu.top.txt",
    "pprof/cpu.top-cum.txt",
    "pprof/heap.inuse_space.top.txt",
    "pprof/heapdelta.go",
    "repeats/expected.json",
    "repeats/make.py",
];

/// (name, self, owner, anywhere) of every owner with weight, sorted; the weight of samples
/// without a stack; and the total.
type OwnerWeights = (Vec<(String, u128, u128, u128)>, u128, u128);

/// The [`OwnerWeights`] of input 0.
fn owner_weights(json: &Value) -> OwnerWeights {
    let input = &json["inputs"][0];
    let weight = |v: &Value| {
        v.as_u64()
            .map(u128::from)
            .unwrap_or_else(|| v.as_str().and_then(|s| s.parse().ok()).expect("weight"))
    };
    let mut owners: Vec<_> = input["owners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["name"].as_str().unwrap().to_string(),
                weight(&o["self"]),
                weight(&o["owner"]),
                weight(&o["anywhere"]),
            )
        })
        .filter(|o| (o.1, o.2, o.3) != (0, 0, 0))
        .collect();
    owners.sort();
    // (left out of the document when 0)
    let stackless = input.get("stackless").map_or(0, weight);
    (owners, stackless, weight(&input["total"]))
}

/// Converts `rel` to folded and reports both; (before, after) owner weights, and whether the
/// detected presets agree.
fn round_trip(
    run: &Hermetic,
    dir: &std::path::Path,
    rel: &str,
) -> (OwnerWeights, OwnerWeights, bool) {
    let input = fixture(rel);
    let folded = dir.join(format!("{}.folded", rel.replace('/', "_")));
    let out = folded.to_str().unwrap();
    run.run_ok(&["convert"], &input, &["--to", "folded", "-o", out]);
    let (before, _) = run.report(&input, &[]);
    let (after, _) = run.report(&folded, &[]);
    let same_presets = before["presets"] == after["presets"];
    (owner_weights(&before), owner_weights(&after), same_presets)
}

#[test]
fn convert_to_folded_round_trips_every_fixture() {
    let run = Hermetic::with_recorded_glibc();
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for rel in FIXTURES {
        let (want, got, same_presets) = round_trip(&run, dir.path(), rel);
        if want != got || !same_presets {
            failures.push(format!("{rel}:\n  before {want:?}\n  after  {got:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures do not round-trip:\n{}",
        failures.len(),
        FIXTURES.len(),
        failures.join("\n")
    );
}

/// A profile added to fixtures/ is round-tripped too: every file of [`PROFILE_DIRS`] (not
/// their subfolders of binaries and libraries) is in [`FIXTURES`] or [`NOT_PROFILES`].
#[test]
fn every_fixture_profile_is_listed() {
    let mut missing = Vec::new();
    for dir in PROFILE_DIRS {
        for entry in std::fs::read_dir(fixture(dir)).unwrap() {
            let entry = entry.unwrap();
            if !entry.file_type().unwrap().is_file() {
                continue;
            }
            let rel = format!("{dir}/{}", entry.file_name().to_str().unwrap());
            if !FIXTURES.contains(&rel.as_str()) && !NOT_PROFILES.contains(&rel.as_str()) {
                missing.push(rel);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "fixtures not in roundtrip.rs FIXTURES: {missing:?}"
    );
}

//! `report(convert --to folded(X)) == report(X)` for every fixture of every format (issue 12):
//! the folded text `convert --modules` writes keeps what classification needs (modules, frame
//! kinds), so reading it back gives the same owner weights in all three views, exactly.

use super::common::*;
use super::hermetic::Hermetic;
use serde_json::Value;

/// Every fixture profile, by format. Inputs whose folded form cannot round-trip are in
/// [`CANNOT_ROUND_TRIP`] with the reason instead.
const FIXTURES: &[&str] = &[
    "folded/flame-mini.folded",
    "folded/process-root.folded",
    "folded/seed-ktor-alloc.txt",
    "perf/rust-native.perf-fp.folded",
    "perf/c-malloc.perf.perf-script.txt.gz",
    "perf/c-malloc.perf-dwarf.perf-script.txt.gz",
    "perf/jvm-shop.perf.perf-script.txt.gz",
    "perf/rust-native.perf-fp.perf-script.txt.gz",
    "perf/rust-native.perf-dwarf.perf-script.txt.gz",
    "perf/c-malloc.perf.data",
    "perf/c-malloc.perf.pipe.data.gz",
    "perf/c-malloc.perf-dwarf.data.gz",
    "perf/jvm-shop.perf.data",
    "perf/rust-native.perf-fp.data",
    "perf/rust-native.perf-dwarf.data.gz",
    "perf/sh-loop.perf-z.data",
    "pprof/cpu.pb.gz",
    "pprof/allocs.pb.gz",
    "pprof/heap.pb.gz",
];

/// Fixtures whose folded form loses something classification uses, and what. Checked to
/// still differ, so that this list is updated when one starts to round-trip.
const CANNOT_ROUND_TRIP: &[(&str, &str)] = &[
    (
        "folded/py-app.folded",
        "Python frames are written without their source file, and the python preset is \
         detected and matches by file: not supported yet",
    ),
    (
        "speedscope/shares.speedscope.json",
        "Python frames lose their file (as above); a sample with no stack is written as \
         `[unknown]`, a folded line needs a frame",
    ),
    (
        "speedscope/shares.pyspy-raw.txt",
        "as shares.speedscope.json",
    ),
];

/// (name, self, owner, anywhere) of every owner with weight, sorted, and the total.
type OwnerWeights = (Vec<(String, u128, u128, u128)>, u128);

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
    (owners, weight(&input["total"]))
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
    run.run_ok(
        &["convert"],
        &input,
        &["--to", "folded", "--modules", "-o", out],
    );
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
    for (rel, why) in CANNOT_ROUND_TRIP {
        let (want, got, _) = round_trip(&run, dir.path(), rel);
        assert_ne!(
            want, got,
            "{rel} round-trips now: move it to FIXTURES (was: {why})"
        );
    }
}

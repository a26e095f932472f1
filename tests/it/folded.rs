//! Folded input against the corpus oracle, and the folded reader's error handling.

use super::common::*;

#[test]
fn seed_ktor_alloc_strips_allocated_types_by_default() {
    let (got, total) = report_shares(&[
        fixture("folded/seed-ktor-alloc.txt").to_str().unwrap(),
        "--rules",
        fixture("rules/seed-ktor-alloc.toml").to_str().unwrap(),
        "--no-presets",
        "--unit",
        "bytes",
    ]);
    let (want, want_total) = expected_shares("seed-ktor-alloc.types-strip.json");
    assert_eq!(total, want_total as u128);
    assert_shares_agree(&got, &want, 0.01);
    // every sample's owner is kotlin (the KClassImpl frames)
    assert_eq!(got["kotlin"][1], 100.0);
}

#[test]
fn seed_ktor_alloc_types_as_frames_matches_the_seed_harness() {
    let (got, _) = report_shares(&[
        fixture("folded/seed-ktor-alloc.txt").to_str().unwrap(),
        "--rules",
        fixture("rules/seed-ktor-alloc.toml").to_str().unwrap(),
        "--no-presets",
        "--unit",
        "bytes",
        "--types-as-frames",
    ]);
    let (want, _) = expected_shares("seed-ktor-alloc.types-frame.json");
    assert_shares_agree(&got, &want, 0.01);
    assert_eq!(got["kotlin"][1], 100.0);
}

#[test]
fn py_spy_raw_agrees_with_the_oracle() {
    let (got, total) = report_shares(&[
        fixture("folded/py-app.folded").to_str().unwrap(),
        "--rules",
        fixture("rules/py-app.toml").to_str().unwrap(),
        "--no-presets",
    ]);
    let (want, want_total) = expected_shares("py-app.folded.json");
    assert_eq!(total, want_total as u128);
    assert_shares_agree(&got, &want, 0.01);
}

#[test]
fn py_spy_with_detected_presets_finds_the_application() {
    // no rules given: the python preset is detected, the stdlib is matched by file and the
    // script's own code is user; the oracle's `user` + `script` labels are whose's `user`
    let (got, _) = report_shares(&[fixture("folded/py-app.folded").to_str().unwrap()]);
    let (want, _) = expected_shares("py-app.folded.json");
    assert!((got["user"][1] - want["user"][1]).abs() < 0.01, "{got:?}");
    assert!(
        (got["python-std"][0] - want["stdlib"][0]).abs() < 0.01,
        "{got:?}"
    );
    assert!((got["user"][2] - want["script"][2]).abs() < 0.01, "{got:?}");
}

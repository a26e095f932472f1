//! Corrupted perf.data never panics (nor aborts on a huge allocation): a property test over
//! random byte damage to a real recording, read in-process. Each input either reads (the
//! damage hit something harmless, e.g. an address) or is an input error.

use super::common::fixture;
use proptest::prelude::*;
use whose::{ReadOptions, read_profile};

fn options(root: &std::path::Path) -> ReadOptions {
    let mut o = ReadOptions::default();
    // nothing to find: symbolisation stays cheap and machine-independent
    o.symbols.symfs = Some(root.to_path_buf());
    o.symbols.jit_map_dir = vec![root.to_path_buf()];
    o
}

fn damage_cases() -> impl Strategy<Value = (Vec<(usize, u8)>, Option<usize>)> {
    let len = std::fs::metadata(fixture("perf/c-malloc.perf.data"))
        .unwrap()
        .len() as usize;
    // bias towards the header, the attribute and feature sections and the first records,
    // where a damaged count or length does the most harm
    let position = prop_oneof![0..512usize, 0..len, (len - 4096)..len];
    (
        prop::collection::vec((position, any::<u8>()), 1..24),
        prop::option::of(104..len),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]
    #[test]
    fn damaged_perf_data_is_read_or_rejected_never_a_panic((writes, cut) in damage_cases()) {
        let mut bytes = std::fs::read(fixture("perf/c-malloc.perf.data")).unwrap();
        for (at, value) in writes {
            bytes[at] = value;
        }
        if let Some(cut) = cut {
            bytes.truncate(cut);
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("damaged.data");
        std::fs::write(&path, &bytes).unwrap();
        match read_profile(&path, &options(dir.path())) {
            Ok(profile) => prop_assert!(profile.validate().is_ok()),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}

/// The data section's range in the fixture.
fn data_section() -> (usize, usize) {
    let bytes = std::fs::read(fixture("perf/c-malloc.perf.data")).unwrap();
    let u = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap()) as usize;
    (u(40), u(40) + u(48))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]
    #[test]
    fn damaged_records_are_read_or_rejected_never_a_panic(
        writes in prop::collection::vec(
            ((data_section().0..data_section().1), any::<u8>()), 1..8)
    ) {
        let mut bytes = std::fs::read(fixture("perf/c-malloc.perf.data")).unwrap();
        for (at, value) in writes {
            bytes[at] = value;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("damaged.data");
        std::fs::write(&path, &bytes).unwrap();
        match read_profile(&path, &options(dir.path())) {
            Ok(profile) => prop_assert!(profile.validate().is_ok()),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}

/// Lines that look like perf script output, with arbitrary text (any Unicode) in every field.
fn script_line() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,12} [0-9/]{1,9} [0-9.]{0,12}: [0-9]{0,9} \\PC{0,10}:\\PC{0,20}",
        "\t[ 0-9a-f]{0,18} \\PC{0,30}(\\+0x[0-9a-f]{0,4})? \\(\\PC{0,20}\\)",
        "\t[0-9a-f]{1,16} \\PC{0,20} \\(inlined\\)",
        "\\PC{0,40}",
        Just(String::new()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn arbitrary_perf_script_text_is_read_or_rejected_never_a_panic(
        lines in prop::collection::vec(script_line(), 0..40)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("script.txt");
        std::fs::write(&path, lines.join("\n")).unwrap();
        let mut o = options(dir.path());
        o.format = Some(whose::InputFormat::PerfScript);
        match read_profile(&path, &o) {
            Ok(profile) => prop_assert!(profile.validate().is_ok()),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}

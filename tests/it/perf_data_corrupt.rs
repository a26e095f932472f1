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

/// The header with no feature bits (so the parser takes the attributes from the event types
/// section, as for old perf) and `event_types` set to (offset, size).
fn with_event_types(offset: u64, size: u64) -> Vec<u8> {
    let mut bytes = std::fs::read(fixture("perf/c-malloc.perf.data")).unwrap();
    bytes[56..64].copy_from_slice(&offset.to_le_bytes());
    bytes[64..72].copy_from_slice(&size.to_le_bytes());
    bytes[72..104].fill(0);
    bytes
}

#[test]
fn an_event_types_section_larger_than_the_file_is_an_error_not_an_abort() {
    // found by the perf_data fuzz target: linux-perf-data sized a vector by the declared
    // section (2^45 bytes: a 54 TB allocation) and the process aborted
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("event-types.data");
    std::fs::write(&path, with_event_types(0, 60_473_139_527_680)).unwrap();
    let stderr = super::common::whose_err(&["report", path.to_str().unwrap()]);
    assert!(
        stderr.contains("the event types section ends at byte 60473139527680 but the file has"),
        "{stderr}"
    );
}

#[test]
fn event_ids_past_the_end_of_the_file_are_an_error_not_an_abort() {
    // one event types entry of attr_size (144) + 16 bytes: the fixture's attribute section,
    // then an ids section, written over the first bytes of the data, claiming 2^40 bytes
    let mut bytes = with_event_types(120, 144 + 16);
    bytes[264..272].copy_from_slice(&0u64.to_le_bytes());
    bytes[272..280].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("event-ids.data");
    std::fs::write(&path, bytes).unwrap();
    let stderr = super::common::whose_err(&["report", path.to_str().unwrap()]);
    assert!(
        stderr.contains("the event ids of entry 0 of the event types section"),
        "{stderr}"
    );
}

#[test]
fn a_pipe_mode_event_description_numbered_past_32_bits_is_checked_not_an_abort() {
    // found by the perf_data fuzz target: linux-perf-data keeps the low 32 bits of a feature
    // record's 64-bit feature number, the check compared all 64, so an event description
    // numbered 2^32 + 12 with a count of 2^32 - 1 reached the parser unchecked and aborted
    let mut bytes = super::common::gunzip_file(&fixture("perf/c-malloc.perf.pipe.data.gz"));
    let mut at = 16;
    loop {
        let kind = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let size = u16::from_le_bytes(bytes[at + 6..at + 8].try_into().unwrap()) as usize;
        assert!(
            kind == 64 || kind == 80,
            "no event description in the fixture's headers"
        );
        if kind == 80 && bytes[at + 8..at + 16] == 12u64.to_le_bytes() {
            break;
        }
        at += size;
    }
    bytes[at + 8..at + 16].copy_from_slice(&((1u64 << 32) | 12).to_le_bytes());
    bytes[at + 16..at + 20].copy_from_slice(&u32::MAX.to_le_bytes());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("event-desc.data");
    std::fs::write(&path, bytes).unwrap();
    let stderr = super::common::whose_err(&["report", path.to_str().unwrap()]);
    assert!(
        stderr.contains("corrupt event description section"),
        "{stderr}"
    );
}

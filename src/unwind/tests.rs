//! Unwinding synthetic samples of this very test binary: its `.eh_frame` is real, the
//! registers and stack bytes are made up, so every outcome is known in advance.

use super::*;
use crate::model::cases::temp_file;
use crate::model::{ModuleProblem, Notice, UnwindCause};
use std::path::Path;

/// Two functions whose entry points have the simplest CFI there is: CFA = rsp + 8, return
/// address at [rsp].
#[inline(never)]
extern "C" fn probe_leaf() -> u64 {
    std::hint::black_box(1)
}

#[inline(never)]
extern "C" fn probe_caller() -> u64 {
    std::hint::black_box(probe_leaf() + 1)
}

/// The executable mapping of this test binary that holds `addr`, from /proc/self/maps.
fn own_mapping(addr: u64) -> Mapping {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let exe = std::env::current_exe().unwrap();
    for line in maps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (start, end) = fields[0].split_once('-').unwrap();
        let start = u64::from_str_radix(start, 16).unwrap();
        let end = u64::from_str_radix(end, 16).unwrap();
        if (start..end).contains(&addr) {
            assert!(fields[1].contains('x'), "not executable: {line}");
            return Mapping {
                start,
                end,
                page_offset: u64::from_str_radix(fields[2], 16).unwrap(),
                path: exe.display().to_string(),
                build_id: None,
            };
        }
    }
    panic!("{addr:x} not mapped");
}

fn unwinder_for(file: &Path) -> DwarfUnwinder {
    let file = file.to_path_buf();
    DwarfUnwinder::new(
        Box::new(move |_, _| ModuleFiles {
            code: Some(file.clone()),
            ..ModuleFiles::default()
        }),
        Some(16),
    )
}

/// The note for one user stack unwound and truncated by `cause`.
fn one_truncated_by(cause: UnwindCause) -> Notice {
    Notice::DwarfTruncated {
        truncated: 1,
        stacks: 1,
        causes: vec![(cause, 1)],
    }
}

fn words(ws: &[u64]) -> Vec<u8> {
    ws.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// An unwinder over this test binary, mapped into process 7.
fn own_unwinder(mapping: Mapping) -> DwarfUnwinder {
    let mut u = unwinder_for(&std::env::current_exe().unwrap());
    u.add_mapping(7, mapping);
    u
}

/// The registers of a sample taken in `probe_leaf`, its stack copy starting at 0x7000.
fn leaf_regs(leaf: u64) -> UserRegs {
    UserRegs {
        ip: leaf,
        sp: 0x7000,
        bp: 0,
    }
}

fn probes() -> (u64, u64, Mapping) {
    let leaf = probe_leaf as *const () as usize as u64;
    let caller = probe_caller as *const () as usize as u64;
    assert_eq!(probe_caller(), 2);
    (leaf, caller, own_mapping(leaf))
}

/// An unwinder of this test binary, the probe leaf's registers and its caller's address.
fn probe_unwinder() -> (DwarfUnwinder, UserRegs, u64) {
    let (leaf, caller, mapping) = probes();
    (own_unwinder(mapping), leaf_regs(leaf), caller)
}

/// Unwinds `stack` (all of it valid) from `regs` in process 7: how it ended and the frames.
fn unwind_whole(u: &mut DwarfUnwinder, regs: UserRegs, stack: &[u8]) -> (StackEnd, Vec<u64>) {
    let mut out = Vec::new();
    let end = u.unwind(
        7,
        Some(regs),
        StackCopy::whole(stack, stack.len() as u64),
        &mut out,
    );
    (end, out)
}

#[test]
fn unwinds_through_eh_frame_to_the_end_of_the_stack() {
    let (mut u, regs, caller) = probe_unwinder();
    // [return into probe_caller, then a null return address: the outermost frame]
    let stack = words(&[caller + 1, 0]);
    let (end, out) = unwind_whole(&mut u, regs, &stack);
    assert_eq!(end, StackEnd::Complete);
    assert_eq!(out, vec![regs.ip, caller + 1]);
    assert_eq!((u.stats.stacks, u.stats.truncated), (1, 0));
}

#[test]
fn a_short_stack_copy_is_counted_and_suggests_a_larger_size() {
    let (mut u, regs, caller) = probe_unwinder();
    // the copy ends right after the first return address: the kernel filled all of it
    let stack = words(&[caller + 1]);
    let (end, out) = unwind_whole(&mut u, regs, &stack);
    assert_eq!(end, StackEnd::StackExhausted);
    assert_eq!(
        out,
        vec![regs.ip, caller + 1],
        "frames found so far are kept"
    );
    assert_eq!(u.stats.copy_exhausted, 1);
    let (notes, warnings) = u.stats.report();
    assert_eq!(notes[0], one_truncated_by(UnwindCause::CopyExhausted));
    // the warning's advice, `--call-graph dwarf,64`, is a larger copy than this one
    assert!(
        warnings
            .iter()
            .any(|w| matches!(w, Notice::StackCopyTooSmall { percent, size }
            if *percent == 100.0 && crate::model::larger_stack_copy(*size) == 64)),
        "{warnings:?}"
    );
}

#[test]
fn a_stack_size_that_lies_uses_only_the_bytes_present() {
    let (mut u, regs, caller) = probe_unwinder();
    let stack = words(&[caller + 1, 0]);
    let mut out = Vec::new();
    let end = u.unwind(7, Some(regs), StackCopy::whole(&stack, 1 << 40), &mut out);
    assert_eq!(end, StackEnd::Complete);
    assert_eq!(out.len(), 2);
    assert_eq!(u.stats.bad_sizes, 1);
    let (_, warnings) = u.stats.report();
    assert!(warnings.contains(&Notice::OversizedDynamicSize { samples: 1 }));
}

#[test]
fn missing_registers_keep_nothing_and_are_reported() {
    let mut u = unwinder_for(&std::env::current_exe().unwrap());
    let mut out = vec![1, 2, 3];
    let end = u.unwind(7, None, StackCopy::whole(&[], 0), &mut out);
    assert_eq!(end, StackEnd::MissingRegisters);
    assert!(out.is_empty());
    let (notes, warnings) = u.stats.report();
    assert_eq!(notes[0], one_truncated_by(UnwindCause::MissingRegisters));
    assert_eq!(warnings[0], Notice::MissingRegisters { samples: 1 });
}

#[test]
fn an_address_outside_every_mapping_stops_the_walk() {
    let (leaf, _, mapping) = probes();
    let mut u = own_unwinder(mapping);
    let regs = leaf_regs(leaf);
    let stack = words(&[0x1234, 0]);
    let mut out = Vec::new();
    let end = u.unwind(7, Some(regs), StackCopy::whole(&stack, 16), &mut out);
    assert_eq!(end, StackEnd::Unmapped);
    assert_eq!(out, vec![leaf, 0x1234]);
}

#[test]
fn a_forked_child_inherits_mappings_and_exec_drops_them() {
    let (leaf, caller, mapping) = probes();
    let mut u = own_unwinder(mapping);
    u.fork(7, 8);
    let regs = leaf_regs(leaf);
    let stack = words(&[caller + 1, 0]);
    let mut out = Vec::new();
    assert_eq!(
        u.unwind(8, Some(regs), StackCopy::whole(&stack, 16), &mut out),
        StackEnd::Complete
    );
    u.exec(8);
    assert_eq!(
        u.unwind(8, Some(regs), StackCopy::whole(&stack, 16), &mut out),
        StackEnd::Unmapped
    );
    assert_eq!(out, vec![leaf]);
}

/// A copy of this binary whose `.eh_frame` is garbage: the module is refused up front
/// (framehop would otherwise guess with frame pointers), the walk stops in it with the frames
/// found so far, and the warning names the module and the reason.
#[test]
fn a_corrupt_eh_frame_stops_in_that_module_with_a_warning() {
    use object::{Object, ObjectSection};
    let (leaf, caller, mut mapping) = probes();
    let exe = std::env::current_exe().unwrap();
    let mut bytes = std::fs::read(&exe).unwrap();
    let (offset, size) = {
        let file = object::File::parse(&*bytes).unwrap();
        file.section_by_name(".eh_frame")
            .unwrap()
            .file_range()
            .unwrap()
    };
    for b in &mut bytes[offset as usize..(offset + size) as usize] {
        *b = 0xaa;
    }
    let (_dir, corrupt) = temp_file("corrupt-copy", &bytes);

    let image = image::Image::load(&corrupt, None).unwrap();
    assert!(!image.can_unwind());
    assert!(
        matches!(
            image.problem,
            Some(ModuleProblem::CorruptCfi {
                section: ".eh_frame",
                ..
            })
        ),
        "{:?}",
        image.problem
    );

    mapping.path = "/opt/app/corrupt-copy".to_string();
    let mut u = unwinder_for(&corrupt);
    u.add_mapping(7, mapping);
    let regs = leaf_regs(leaf);
    let stack = words(&[caller + 1, 0]);
    let mut out = Vec::new();
    let end = u.unwind(7, Some(regs), StackCopy::whole(&stack, 16), &mut out);
    assert_eq!(
        end,
        StackEnd::NoUnwindInfo("/opt/app/corrupt-copy".to_string())
    );
    assert_eq!(out, vec![leaf]);
    let (notes, warnings) = u.stats.report();
    let module = "/opt/app/corrupt-copy".to_string();
    let Notice::DwarfTruncated { causes, .. } = &notes[0] else {
        panic!("{notes:?}");
    };
    assert_eq!(causes, &[(UnwindCause::NoUnwindInfo(module.clone()), 1)]);
    assert!(
        warnings.iter().any(|w| matches!(w,
            Notice::UnwindStopped { module: m, problem: Some(p), .. }
                if *m == module && matches!(p, ModuleProblem::CorruptCfi { .. }))),
        "{warnings:?}"
    );
}

#[test]
fn a_binary_not_found_is_named() {
    let (leaf, _, mapping) = probes();
    let mut u = DwarfUnwinder::new(
        Box::new(|_, _| ModuleFiles {
            missing: Some(ModuleProblem::NotFound),
            ..ModuleFiles::default()
        }),
        None,
    );
    u.add_mapping(7, mapping.clone());
    let mut out = Vec::new();
    let regs = leaf_regs(leaf);
    let end = u.unwind(7, Some(regs), StackCopy::whole(&words(&[0]), 8), &mut out);
    assert_eq!(end, StackEnd::NoUnwindInfo(mapping.path.clone()));
    let (_, warnings) = u.stats.report();
    assert!(
        matches!(&warnings[0], Notice::UnwindStopped { problem: Some(p), .. }
            if *p == ModuleProblem::NotFound),
        "{warnings:?}"
    );
}

#[test]
fn a_record_with_a_lying_stack_size_is_counted_as_truncated() {
    let mut u = unwinder_for(&std::env::current_exe().unwrap());
    assert_eq!(u.bad_record(), StackEnd::BadRecord);
    assert_eq!(
        (u.stats.stacks, u.stats.truncated, u.stats.bad_records),
        (1, 1, 1)
    );
    let (notes, warnings) = u.stats.report();
    assert_eq!(notes[0], one_truncated_by(UnwindCause::BadRecord));
    assert_eq!(warnings[0], Notice::OversizedStackCopy { samples: 1 });
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Garbage registers and stack bytes (and lying sizes) end in some `StackEnd`, never
        /// a panic or an endless walk.
        #[test]
        fn garbage_never_panics(
            ip_offset in 0u64..0x4000,
            sp in any::<u64>(),
            bp in any::<u64>(),
            words in proptest::collection::vec(any::<u64>(), 0..64),
            dynamic_size in any::<u64>(),
            code_pointers in any::<bool>(),
        ) {
            let (leaf, _, mapping) = probes();
            let mut u = unwinder_for(&std::env::current_exe().unwrap());
            u.add_mapping(7, mapping.clone());
            // half the cases point the stack words into real code, so the walk goes on a while
            let words: Vec<u64> = if code_pointers {
                words.iter().map(|w| mapping.start + w % (mapping.end - mapping.start)).collect()
            } else {
                words
            };
            let stack = super::words(&words);
            let regs = UserRegs { ip: leaf.wrapping_add(ip_offset), sp, bp };
            let mut out = Vec::new();
            let _ = u.unwind(7, Some(regs), StackCopy::whole(&stack, dynamic_size), &mut out);
            prop_assert!(out.len() <= MAX_FRAMES);
            let (notes, _) = u.stats.report();
            prop_assert_eq!(notes.len(), 1);
        }
    }
}

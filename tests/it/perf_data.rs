//! perf.data read and symbolised by whose, against the corpus oracle (which read the
//! `perf script` text of the same recordings), against whose's own reading of that text, and
//! with bad input.
//!
//! Hermetic: every run goes through `hermetic.rs`.

use super::common::*;
use super::hermetic::Hermetic;
use serde_json::Value;
use std::path::Path;

fn rules(item: &str) -> String {
    fixture_arg(&format!("rules/{item}.toml"))
}

/// perf.data shares with the corpus rules, counting samples as the oracle does, and without
/// inline frames as the oracle's `perf script` text of a frame-pointer recording has none
/// (`--inline` in `extra` overrides).
fn data_shares(run: &Hermetic, data: &str, item: &str, extra: &[&str]) -> (Shares, u128, String) {
    let r = rules(item);
    let mut args = vec![
        "--rules",
        r.as_str(),
        "--no-presets",
        "--metric",
        "samples",
        "--no-inline",
    ];
    args.extend_from_slice(extra);
    let (json, stderr) = run.report(&fixture(&format!("perf/{data}")), &args);
    let (shares, total) = shares_of(&json);
    (shares, total, stderr)
}

#[test]
fn jvm_shop_perf_data_with_its_jit_map_agrees_with_the_oracle() {
    let run = Hermetic::new();
    let (got, total, stderr) = data_shares(&run, "jvm-shop.perf.data", "jvm-shop", &[]);
    let (want, want_total) = expected_shares("jvm-shop.perf.json");
    assert_eq!(total, want_total as u128);
    assert_shares_agree(&got, &want, 0.1);
    // the JIT map names the Java frames: without it user code would vanish
    assert!((got["user"][1] - 33.78).abs() < 0.1, "{got:?}");
    // libjvm and libc are not in the fixtures: unsymbolised, said so, still classified by module
    assert!(stderr.contains("libjvm.so (binary not found;"), "{stderr}");
    // and the same recording read as `perf script` text agrees too
    let text = script_shares("jvm-shop.perf", "jvm-shop").0;
    assert_shares_agree(&got, &text, 0.1);
}

#[test]
fn c_malloc_perf_data_agrees_with_the_oracle_and_its_perf_script_dump() {
    let run = Hermetic::new();
    let (got, total, stderr) = data_shares(&run, "c-malloc.perf.data", "c-malloc", &[]);
    let (want, want_total) = expected_shares("c-malloc.perf.json");
    assert_eq!(total, want_total as u128);
    // Differences to perf (6.1), all within 0.1 pp: perf names a stub in churn's PLT
    // `_init+0x30` where whose synthesises `free@plt` (2 samples move from user to allocator
    // self); and the recording's kernel is not the test machine's, so kernel frames stay
    // [unknown] in [kernel.kallsyms] (kernel, by module) where perf named them, two of them
    // with names the symbol rules give to libc and the allocator (`__memcg_slab_free_hook`
    // matches `__mem`, `free_unref_folios` matches `free`).
    assert_shares_agree(&got, &want, 0.1);
    assert!((got["user"][1] - 36.83).abs() < 0.01, "{got:?}");
    // glibc's allocator symbols come from the debug file found by build id
    assert!(got["allocator"][0] > 32.0, "{got:?}");
    assert!(!stderr.contains("libc.so.6 (binary not found"), "{stderr}");
    let text = script_shares("c-malloc.perf", "c-malloc").0;
    assert_shares_agree(&got, &text, 0.1);
}

#[test]
fn rust_native_perf_data_agrees_with_the_oracle_and_its_perf_script_dump() {
    let run = Hermetic::new();
    let (got, total, _) = data_shares(&run, "rust-native.perf-fp.data", "rust-native", &[]);
    let (want, want_total) = expected_shares("rust-native.perf-fp.json");
    assert_eq!(total, want_total as u128);
    assert_shares_agree(&got, &want, 0.1);
    let text = script_shares("rust-native.perf-fp", "rust-native").0;
    assert_shares_agree(&got, &text, 0.1);
}

#[test]
fn rust_native_as_perf_data_perf_script_and_folded_text_gives_the_same_shares() {
    // Folded text (inferno-collapse-perf --all of the same dump) has no dso column and puts the
    // process name at every root, which the folded reader takes as the thread (issue 12);
    // fixtures/rules-extra/rust-native-folded.toml says what the corpus rules would otherwise
    // learn from the dso (two glibc functions). With those rules the three readings agree
    // within 0.1 pp on every owner, and no owner holds the process name.
    let extra = fixture("rules-extra/rust-native-folded.toml");
    let corpus = rules("rust-native");
    let rule_args = [
        "--rules",
        extra.to_str().unwrap(),
        "--rules",
        corpus.as_str(),
        "--no-presets",
        "--metric",
        "samples",
    ];
    let run = Hermetic::new();
    // the text has perf's frames, no inline ones: so does perf.data with --no-inline
    let mut data_args = rule_args.to_vec();
    data_args.push("--no-inline");
    let (json, _) = run.report(&fixture("perf/rust-native.perf-fp.data"), &data_args);
    let (data, total) = shares_of(&json);
    let mut args = vec![
        fixture("perf/rust-native.perf-fp.perf-script.txt.gz")
            .to_str()
            .unwrap()
            .to_string(),
    ];
    args.extend(rule_args.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (text, text_total) = report_shares(&args);
    let folded_path = fixture("perf/rust-native.perf-fp.folded");
    let mut fargs = args.clone();
    fargs[0] = folded_path.to_str().unwrap();
    let metric_at = fargs.iter().position(|a| *a == "--metric").unwrap();
    fargs.drain(metric_at..metric_at + 2); // folded counts are summed periods, one metric
    let (folded, _) = report_shares(&fargs);
    assert_eq!((total, text_total), (4922, 4922));
    assert_shares_agree(&data, &text, 0.1);
    assert_shares_agree(&folded, &data, 0.1);
}

#[test]
fn rust_native_inline_frames_come_from_dwarf_and_move_self_time_to_the_inlined_code() {
    // perf 6.1 prints no inline frames for frame-pointer call chains, so the oracle sees the
    // physical function only; --inline expands each address into the functions inlined
    // there (logcrunch's DWARF, zlib-compressed). Self time moves to the inlined callees
    // (core/alloc iterators and hashbrown, i.e. rust-std) and serde's derived visitor, which
    // is logcrunch's own code inlined into serde_json, becomes user's.
    let run = Hermetic::new();
    let (plain, _, _) = data_shares(&run, "rust-native.perf-fp.data", "rust-native", &[]);
    let (inl, total, _) = data_shares(
        &run,
        "rust-native.perf-fp.data",
        "rust-native",
        &["--inline"],
    );
    assert_eq!(total, 4922);
    assert!(
        inl["rust-std"][0] > plain["rust-std"][0] + 5.0,
        "{inl:?} vs {plain:?}"
    );
    assert!(
        inl["user"][1] > plain["user"][1] + 1.0,
        "{inl:?} vs {plain:?}"
    );
    // inline expansion never changes which samples touch a module: anywhere shares of the
    // physical-frame owners stay within rounding of each other
    assert!((inl["libc"][2] - plain["libc"][2]).abs() < 0.1);
    // self and owner still add up to 100 %
    let sum = |v: usize| inl.values().map(|s| s[v]).sum::<f64>();
    assert!((sum(0) - 100.0).abs() < 1e-6 && (sum(1) - 100.0).abs() < 1e-6);
}

#[test]
fn pipe_mode_gzipped_with_build_id_records_agrees_too() {
    // `perf inject -b -i perf.data -o -`: pipe mode (no seeking, no feature sections), build
    // ids as records after the mappings that need them, and gzipped on top
    let run = Hermetic::new();
    let (got, total, _) = data_shares(&run, "c-malloc.perf.pipe.data.gz", "c-malloc", &[]);
    let (want, want_total) = expected_shares("c-malloc.perf.json");
    assert_eq!(total, want_total as u128);
    assert_shares_agree(&got, &want, 0.1);
    assert!(
        got["allocator"][0] > 32.0,
        "glibc found by the build id records: {got:?}"
    );
}

#[test]
fn thread_names_come_from_comm_records_like_perf_script_shows_them() {
    let run = Hermetic::new();
    let r = rules("jvm-shop");
    let common = [
        "--rules",
        r.as_str(),
        "--no-presets",
        "--threads",
        "--metric",
        "samples",
    ];
    let thread_lines = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.starts_with("thread "))
            .map(|l| l.split(" of ").next().unwrap().to_string() + l.rsplit_once(" (").unwrap().1)
            .collect()
    };
    let (data, _) = run.run_ok(&["report"], &fixture("perf/jvm-shop.perf.data"), &common);
    let script = fixture("perf/jvm-shop.perf.perf-script.txt.gz");
    let mut args = vec!["report", script.to_str().unwrap()];
    args.extend_from_slice(&common);
    let text = whose_ok(&args);
    let (data, text) = (thread_lines(&data), thread_lines(&text));
    assert_eq!(data, text);
    // pool-1-thread-1/2 (handlers) folded into one row, 4722 of 6694 samples
    assert!(
        data[0].starts_with("thread pool-*-thread-*: 70.5%") && data[0].contains("4722"),
        "{data:?}"
    );
}

#[test]
fn cpu_clock_is_the_default_metric_in_nanoseconds() {
    let run = Hermetic::new();
    let (json, _) = run.report(&fixture("perf/c-malloc.perf.data"), &["--no-presets"]);
    let input = &json["inputs"][0];
    assert_eq!(input["metric"]["name"], "cpu-clock");
    assert_eq!(input["metric"]["unit"], "nanoseconds");
    assert_eq!(input["total"].as_f64().unwrap() as u128, 4461 * 1_001_001);
}

#[test]
fn missing_binaries_are_unknown_frames_of_their_module_and_a_warning_with_the_cost() {
    let run = Hermetic::new();
    let root = run.root().to_str().unwrap().to_string();
    let r = rules("c-malloc");
    let data = fixture("perf/c-malloc.perf.data");
    // no --binary-path: churn is gone, but `module = ["churn*"]` still finds user code
    let out = run.whose(&[
        "report",
        "--format",
        "json",
        data.to_str().unwrap(),
        "--symfs",
        &root,
        "--rules",
        &r,
        "--no-presets",
        "--metric",
        "samples",
    ]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("/tmp/whose-corpus/c-malloc/churn (binary not found; 1643 samples)"),
        "{stderr}"
    );
    let (got, _) = shares_of(&serde_json::from_slice(&out.stdout).unwrap());
    assert!((got["user"][1] - 36.83).abs() < 0.01, "{got:?}");
}

#[test]
fn a_binary_with_another_build_id_is_not_used() {
    let run = Hermetic::new();
    // logcrunch under churn's name: found by file name, rejected by build id
    let dir = run.root().join("wrong");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixture("perf/bin/logcrunch"), dir.join("churn")).unwrap();
    let root = run.root().join("empty");
    std::fs::create_dir_all(&root).unwrap();
    let out = run.whose(&[
        "report",
        fixture("perf/c-malloc.perf.data").to_str().unwrap(),
        "--symfs",
        root.to_str().unwrap(),
        "--binary-path",
        dir.to_str().unwrap(),
        "--no-presets",
    ]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("build id 26f598cc695438c550a7211b16df3b62f99d683c differs from the recording's fb1f61b96f68ea9c1fe7695aadd96fc4b8b2375a"),
        "{stderr}"
    );
    assert!(
        stderr.contains("churn (only binaries with another build id were found; 1643 samples)"),
        "{stderr}"
    );
}

#[test]
fn an_unreadable_jit_map_line_is_skipped_with_a_warning() {
    let run = Hermetic::new();
    let maps = run.root().join("maps");
    std::fs::create_dir_all(&maps).unwrap();
    let mut text = std::fs::read_to_string(fixture("perf/perf-22048.map")).unwrap();
    text.insert_str(0, "this is not a map line\n");
    std::fs::write(maps.join("perf-22048.map"), text).unwrap();
    let out = run.whose(&[
        "report",
        fixture("perf/jvm-shop.perf.data").to_str().unwrap(),
        "--symfs",
        run.root().to_str().unwrap(),
        "--jit-map-dir",
        maps.to_str().unwrap(),
        "--rules",
        &rules("jvm-shop"),
        "--no-presets",
    ]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "perf-22048.map: 1 line(s) are not `START SIZE name` and were skipped (first: line 1)"
        ),
        "{stderr}"
    );
}

#[test]
fn without_its_jit_map_java_frames_are_unknown_and_user_code_vanishes() {
    let run = Hermetic::new();
    let empty = run.root().join("nomaps");
    std::fs::create_dir_all(&empty).unwrap();
    let out = run.whose(&[
        "report",
        "--format",
        "json",
        fixture("perf/jvm-shop.perf.data").to_str().unwrap(),
        "--symfs",
        run.root().to_str().unwrap(),
        "--jit-map-dir",
        empty.to_str().unwrap(),
        "--rules",
        &rules("jvm-shop"),
        "--no-presets",
    ]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("perf-22048.map (JIT map not found in"),
        "{stderr}"
    );
    let (got, _) = shares_of(&serde_json::from_slice(&out.stdout).unwrap());
    assert!(!got.contains_key("user"), "{got:?}");
}

/// Kernel self frames (name, samples) of a report, sorted.
fn kernel_self_frames(json: &Value) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = json["inputs"][0]["top_self_frames"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["owner"] == "kernel")
        .map(|f| {
            (
                f["frame"].as_str().unwrap().to_string(),
                f["weight"].as_u64().unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn kernel_frames_are_named_from_kallsyms_exactly_as_perf_named_them() {
    // fixtures/perf/jvm-shop.kallsyms holds the recorded kernel's symbols that the perf
    // script dump shows (address - offset of every kernel frame): every kernel self frame must
    // get perf's name and perf's count. The only difference: perf read [vdso] from its
    // build-id cache (`__vdso_clock_gettime`, 4 samples), which the fixtures do not have.
    let run = Hermetic::new();
    let kallsyms = fixture("perf/jvm-shop.kallsyms");
    let r = rules("jvm-shop");
    let extra = [
        "--kallsyms",
        kallsyms.to_str().unwrap(),
        "--rules",
        &r,
        "--no-presets",
        "--metric",
        "samples",
        "--top",
        "1000",
    ];
    let (json, stderr) = run.report(&fixture("perf/jvm-shop.perf.data"), &extra);
    assert!(!stderr.contains("[kernel.kallsyms] ("), "{stderr}");
    let mut got = kernel_self_frames(&json);
    let text = whose_ok(&[
        "report",
        "--format",
        "json",
        fixture("perf/jvm-shop.perf.perf-script.txt.gz")
            .to_str()
            .unwrap(),
        "--rules",
        &r,
        "--no-presets",
        "--metric",
        "samples",
        "--top",
        "1000",
    ]);
    let mut want = kernel_self_frames(&serde_json::from_str(&text).unwrap());
    want.retain(|f| f.0 != "__vdso_clock_gettime");
    got.retain(|f| f.0 != "[unknown]");
    assert_eq!(got, want);
    assert!(got.contains(&("finish_task_switch.isra.0".to_string(), 1390)));

    // the same symbols from a later boot (KASLR moved the kernel by 2 MiB): relocated by
    // `_text` against the recording's `_text` (0xffffffff81000000)
    let shifted: String = std::fs::read_to_string(&kallsyms)
        .unwrap()
        .lines()
        .map(|l| {
            let (addr, rest) = l.split_once(' ').unwrap();
            let a = u64::from_str_radix(addr, 16).unwrap() + 0x20_0000;
            format!("{a:016x} {rest}\n")
        })
        .collect::<String>()
        + "ffffffff81200000 T _text\n";
    let moved = run.root().join("kallsyms.moved");
    std::fs::write(&moved, shifted).unwrap();
    let extra = [
        "--kallsyms",
        moved.to_str().unwrap(),
        "--rules",
        &r,
        "--no-presets",
        "--metric",
        "samples",
        "--top",
        "1000",
    ];
    let (json, _) = run.report(&fixture("perf/jvm-shop.perf.data"), &extra);
    let mut relocated = kernel_self_frames(&json);
    relocated.retain(|f| f.0 != "[unknown]");
    assert_eq!(relocated, want);
}

/// `whose report` on a damaged copy of a recording, which must be an input error; stderr.
fn err_of(path: &Path) -> String {
    Hermetic::new().run_err(&["report"], path, &["--no-presets"])
}

#[test]
fn truncated_perf_data_is_an_input_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(fixture("perf/c-malloc.perf.data")).unwrap();
    // at the header
    let e = err_of(&write_temp(dir.path(), "header", &bytes[..60]));
    assert!(
        e.contains("truncated perf.data: the header needs 104 bytes, the file has 60"),
        "{e}"
    );
    // mid-record: the data section runs past the end of the file
    let e = err_of(&write_temp(dir.path(), "mid", &bytes[..bytes.len() / 2]));
    assert!(
        e.contains("truncated perf.data: the data section ends at byte"),
        "{e}"
    );
}

/// Offset of the first SAMPLE record (type 9) in the data section and its size.
fn first_sample(bytes: &[u8]) -> (usize, usize) {
    let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap()) as usize;
    let (data, size) = (u64_at(40), u64_at(48));
    let mut at = data;
    while at < data + size {
        let ty = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let len = u16::from_le_bytes(bytes[at + 6..at + 8].try_into().unwrap()) as usize;
        if ty == 9 {
            return (at, len);
        }
        at += len;
    }
    panic!("no sample");
}

#[test]
fn a_file_cut_inside_a_callchain_is_an_input_error() {
    // as if the writer stopped mid-record: the header's data size says where the cut is (and
    // no feature sections follow), so the record loop itself meets half a sample
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(fixture("perf/c-malloc.perf.data")).unwrap();
    let (at, _) = first_sample(&bytes);
    let cut = at + 8 + 40 + 12; // inside the callchain entries
    let data_offset = u64::from_le_bytes(bytes[40..48].try_into().unwrap()) as usize;
    bytes.truncate(cut);
    bytes[48..56].copy_from_slice(&((cut - data_offset) as u64).to_le_bytes());
    bytes[72..104].fill(0);
    let e = err_of(&write_temp(dir.path(), "cut", &bytes));
    assert!(e.contains("truncated or corrupt perf.data after"), "{e}");
    // the parser's error names no position: the offset is the cut record's, from its header
    assert!(e.contains(&format!("at byte offset {at}:")), "{e}");
}

#[test]
fn a_callchain_longer_than_its_record_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(fixture("perf/c-malloc.perf.data")).unwrap();
    let (at, len) = first_sample(&bytes);
    // c-malloc's sample format: IP TID TIME PERIOD CALLCHAIN → nr at body offset 32; a
    // callchain claiming 2^61 entries (which would overflow a multiplication) and one claiming
    // just more than the record holds are both rejected
    for nr in [1u64 << 61, (len as u64) / 8] {
        bytes[at + 8 + 32..at + 8 + 40].copy_from_slice(&nr.to_le_bytes());
        let e = err_of(&write_temp(dir.path(), "chain", &bytes));
        assert!(e.contains("corrupt SAMPLE record"), "{e}");
        assert!(e.contains("callchain"), "{e}");
    }
}

/// Sets REGS_USER | STACK_USER in the first event's sample format, in the attrs section and
/// in the EVENT_DESC feature section (which readers prefer): what `--call-graph dwarf` sets.
fn as_if_dwarf(bytes: &mut [u8]) {
    let u64_at = |b: &[u8], i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap()) as usize;
    const DWARF_BITS: u64 = (1 << 12) | (1 << 13);
    let attrs = u64_at(bytes, 24);
    let st = u64_at(bytes, attrs + 24) as u64 | DWARF_BITS;
    bytes[attrs + 24..attrs + 32].copy_from_slice(&st.to_le_bytes());
    let (data, size) = (u64_at(bytes, 40), u64_at(bytes, 48));
    let bit_set = |bit: usize| bytes[72 + bit / 8] & (1 << (bit % 8)) != 0;
    assert!(bit_set(12), "fixture has EVENT_DESC");
    let index = (0..12).filter(|&b| bit_set(b)).count();
    let desc = u64_at(bytes, data + size + index * 16);
    let at = desc + 8 + 24;
    let st = u64_at(bytes, at) as u64 | DWARF_BITS;
    bytes[at..at + 8].copy_from_slice(&st.to_le_bytes());
}

/// DWARF recordings are unwound now (tests/it/perf_dwarf.rs); a file whose attributes promise
/// user registers and stacks that its SAMPLE records do not hold is corrupt input.
#[test]
fn samples_lacking_the_dwarf_fields_their_attributes_promise_are_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(fixture("perf/c-malloc.perf.data")).unwrap();
    as_if_dwarf(&mut bytes);
    let out = Hermetic::new().run(
        &["report"],
        &write_temp(dir.path(), "dwarf.data", &bytes),
        &["--no-presets"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "no shares may be printed");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("corrupt SAMPLE record"), "{stderr}");
    assert!(stderr.contains("record ends before its user"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn lost_events_are_counted_and_reported() {
    // a PERF_RECORD_LOST (type 2: id, lost count, then the sample_id trailer — tid and time
    // for this recording) appended to the data section; the feature sections after it move
    let perf = std::fs::read(fixture("perf/c-malloc.perf.data")).unwrap();
    let mut record = Vec::new();
    record.extend_from_slice(&2u32.to_le_bytes());
    record.extend_from_slice(&0u16.to_le_bytes());
    record.extend_from_slice(&40u16.to_le_bytes());
    for word in [0u64, 1234, 0, 0] {
        record.extend_from_slice(&word.to_le_bytes());
    }
    let bytes = with_records(&perf, &[record]);
    let dir = tempfile::tempdir().unwrap();
    let (stdout, stderr) = Hermetic::new().run_ok(
        &["report"],
        &write_temp(dir.path(), "lost.data", &bytes),
        &["--no-presets", "--metric", "samples"],
    );
    assert!(
        stderr.contains("perf lost 1234 events (LOST records)"),
        "{stderr}"
    );
    assert!(stdout.contains("total 4461"));
}

#[test]
fn a_file_that_is_not_perf_data_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let e = Hermetic::new().run_err(
        &["report", "--format-in", "perf-data"],
        &write_temp(dir.path(), "x", b"definitely not perf data, just text\n"),
        &[],
    );
    assert!(
        e.contains("not a perf.data file (expected the magic `PERFILE2`)"),
        "{e}"
    );
    // `perf record` killed before it wrote the header's sizes
    let mut bytes = std::fs::read(fixture("perf/c-malloc.perf.data")).unwrap();
    bytes[48..56].copy_from_slice(&0u64.to_le_bytes());
    let e = err_of(&write_temp(dir.path(), "unfinished", &bytes));
    assert!(e.contains("`perf record` did not finish writing"), "{e}");
}

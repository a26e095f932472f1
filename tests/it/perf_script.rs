//! `perf script` text against the corpus oracle (which reads the same text), and the reader's
//! handling of `-F` variants and unexpected lines.

use super::common::*;

/// The oracle reads exactly this text, so whose must agree to rounding.
fn agrees(fixture_name: &str, rules: &str) {
    let (got, total) = script_shares(fixture_name, rules);
    let (want, want_total) = expected_shares(&format!("{fixture_name}.json"));
    assert_eq!(total, want_total as u128);
    assert_shares_agree(&got, &want, 0.01);
}

#[test]
fn c_malloc_frame_pointer_dump_agrees_with_the_oracle() {
    agrees("c-malloc.perf", "c-malloc");
}

#[test]
fn c_malloc_dwarf_dump_places_inlined_physical_frames_like_the_oracle() {
    // perf 6.1 prints some physical frames as `(inlined)` with no dso; they must still reach
    // `churn`, else user would lose most of its 99.9 %
    agrees("c-malloc.perf-dwarf", "c-malloc");
    let (got, _) = script_shares("c-malloc.perf-dwarf", "c-malloc");
    assert!(got["user"][1] > 99.0, "{got:?}");
}

#[test]
fn rust_native_dumps_agree_with_the_oracle() {
    agrees("rust-native.perf-fp", "rust-native");
    agrees("rust-native.perf-dwarf", "rust-native");
}

#[test]
fn jvm_shop_dump_agrees_with_the_oracle_including_lambda_jit_names() {
    agrees("jvm-shop.perf", "jvm-shop");
    let (got, _) = script_shares("jvm-shop.perf", "jvm-shop");
    assert!((got["user"][1] - 33.78).abs() < 0.01, "{got:?}");
}

#[test]
fn period_is_the_default_metric_and_samples_is_offered() {
    let out = whose_ok(&[
        "report",
        "--format",
        "json",
        fixture("perf/c-malloc.perf.perf-script.txt.gz")
            .to_str()
            .unwrap(),
        "--no-presets",
        "--rules",
        fixture("rules/c-malloc.toml").to_str().unwrap(),
    ]);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let input = &json["inputs"][0];
    assert_eq!(input["metric"]["name"], "cpu-clock");
    assert_eq!(input["metric"]["unit"], "nanoseconds");
    // 4461 samples at 1001001 ns each
    assert_eq!(input["total"].as_f64().unwrap() as u128, 4461 * 1_001_001);
}

#[test]
fn field_list_variants_are_read() {
    // -F comm,pid,tid,time,event,ip,sym,dso (no period), -F +pid, no symoff, kernel frames
    let text = "\
app 100/101 10.000001: cycles:u:\n\
\tffffffff81000010 do_syscall_64 ([kernel.kallsyms])\n\
\t1234 work (/srv/app)\n\
\t1300 main (/srv/app)\n\
\n\
app 100/102 10.000002: cycles:u:\n\
\t1250 work+0x1c (/srv/app)\n\
\t1300 main+0x10 (/srv/app)\n\
\n";
    let f = temp_file(text);
    let out = whose_ok(&[
        "report",
        "--format",
        "json",
        "--format-in",
        "perf-script",
        f.path().to_str().unwrap(),
        "--user",
        "work",
        "--no-presets",
    ]);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let input = &json["inputs"][0];
    // no period printed: each sample weighs 1 in the event's own unit
    assert_eq!(input["metric"]["name"], "cycles");
    assert_eq!(input["total"], 2);
    let user = input["owners"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "user")
        .unwrap();
    // the kernel leaf matches no rule (unclassified, not transparent) and owns sample 1
    assert_eq!(user["anywhere"], 2);
    assert_eq!(user["owner"], 1);
    assert_eq!(user["self"], 1);
}

#[test]
fn a_few_unexpected_lines_are_skipped_with_a_warning() {
    let mut text = String::new();
    for i in 0..200 {
        text.push_str(&format!(
            "app 100 1.{i:06}: 1000 cpu-clock:\n\t1234 work+0x1 (/srv/app)\n\n"
        ));
    }
    text.push_str("\tstray frame line outside a sample\n");
    let f = temp_file(&text);
    let out = whose(&["report", "--no-presets", f.path().to_str().unwrap()]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("skipped 1 line(s) that are not perf script output (first at line 601"),
        "{stderr}"
    );
}

#[test]
fn text_that_is_mostly_not_perf_script_is_an_error_with_its_line() {
    let text = "app 100 1.0: 1000 cpu-clock:\n\t1234 work+0x1 (/srv/app)\n\n\
                \tstray one\n\tstray two\nanother header without pid\n";
    let f = temp_file(text);
    let stderr = whose_err(&[
        "report",
        "--format-in",
        "perf-script",
        "--no-presets",
        f.path().to_str().unwrap(),
    ]);
    assert!(stderr.contains(":4:"), "{stderr}");
    assert!(stderr.contains("not perf script output"), "{stderr}");
}

#[test]
fn output_without_call_chains_is_one_header_per_sample_with_its_frame() {
    // `perf record` without -g: perf right-aligns the command name and prints the sample's
    // own frame at the end of each header line; no blank lines, no indented frames
    let text = concat!(
        "            spin 15196  4081.190144:    1001001 task-clock:      560470fee160 ",
        "whose_live_spin+0x27 (/tmp/live/spin)\n",
        "            spin 15196  4081.191144:    1001001 task-clock:      560470fee164 ",
        "whose_live_spin+0x2b (/tmp/live/spin)\n",
        "            spin 15196  4081.192145:    1001001 task-clock:  ffffffff81000010 ",
        "do_syscall_64+0x10 ([kernel.kallsyms])\n",
    );
    let f = temp_file(text);
    let out = whose_ok(&[
        "report",
        "--format",
        "json",
        f.path().to_str().unwrap(),
        "--user",
        "whose_live_",
        "--no-presets",
    ]);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let input = &json["inputs"][0];
    assert_eq!(input["metric"]["name"], "task-clock");
    assert_eq!(input["total"], 3 * 1_001_001);
    let user = input["owners"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "user")
        .unwrap();
    assert_eq!(user["self"], 2 * 1_001_001);
}

#[test]
fn srcline_lines_are_skipped_not_taken_for_frames() {
    // `perf script -F ...,srcline`: a space-indented `file:line` under every frame
    let text = concat!(
        "spin 28785/28785  1942.990997:    1001001 cpu-clock:ppp: \n",
        "\t            1167 whose_live_spin (/tmp/live/spin)\n",
        "  spin.c:9\n",
        "\t           2724a __libc_start_call_main (/usr/lib/x86_64-linux-gnu/libc.so.6)\n",
        "  libc-start.c:74\n",
        "\n",
    );
    let f = temp_file(text);
    let out = whose(&[
        "report",
        "--format",
        "json",
        f.path().to_str().unwrap(),
        "--user",
        "whose_live_",
        "--no-presets",
        "--metric",
        "samples",
    ]);
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let owners = json["inputs"][0]["owners"].as_array().unwrap();
    // the leaf is whose_live_spin, not `spin.c:9`
    let user = owners.iter().find(|o| o["name"] == "user").unwrap();
    assert_eq!(user["self"], 1);
}

/// The stacks and weights whose reads from perf script text, as sorted folded lines.
fn script_stacks(text: &str) -> Vec<String> {
    let f = temp_file(text);
    super::names::stacks_of(f.path().to_str().unwrap(), "perf-script")
}

#[test]
fn a_tab_between_address_and_symbol_is_a_separator() {
    // Android's simpleperf-style dump: the frame is `Lock::unlock`, not `b3cea6c4<TAB>Lock::unlock`
    let text = "\
app 100 1.0: 1000 cpu-clock:
\t        b3cea6c4\tLock::unlock() (/system/lib/libc.so)
\t        b3cea000\tmain (/system/bin/app)

app 100 1.1: 1000 cpu-clock:
\tb3cea6c4\tLock::unlock() (/system/lib/libc.so)
\tb3cea000\tmain (/system/bin/app)

";
    assert_eq!(script_stacks(text), ["main;Lock::unlock 2000"]);
    let f = temp_file(text);
    let (owners, _) = super::names::owners_of(&[
        f.path().to_str().unwrap(),
        "--no-presets",
        "--user",
        "Lock::",
    ]);
    assert_eq!(owners["user"], [2000, 2000, 2000]);
}

#[test]
fn frame_lines_at_column_zero_are_frames() {
    let indented = "\
app 100/101 1.0: 1000 cpu-clock:
\t1234 work+0x1 (/srv/app)
\t1300 main+0x10 (/srv/app)

app 100/101 1.1: 1000 cpu-clock:
\t1300 main+0x10 (/srv/app)

";
    let at_column_zero = indented.replace('\t', "");
    let want = ["main 1000", "main;work 1000"];
    assert_eq!(script_stacks(indented), want);
    assert_eq!(script_stacks(&at_column_zero), want);
}

/// Six samples of `work` under `main`, with `extra` after the second sample's frames.
fn six_samples_with(extra: &str) -> String {
    let mut text = String::new();
    for i in 0..6 {
        text.push_str(&format!(
            "app 100 1.{i}: 10 cpu-clock:\n\t1234 work (/srv/app)\n\t1300 main (/srv/app)\n"
        ));
        if i == 1 {
            text.push_str(extra);
        }
        text.push('\n');
    }
    text
}

#[test]
fn one_stray_line_in_a_six_sample_file_is_skipped_and_said() {
    // 1 of 25 lines: over 1 %, but one line is a stray line, not a wrong format
    for stray in ["garbage between samples\n", "\tTHIS_IS_A_WEIRD_LINE\n"] {
        let text = six_samples_with(&format!("\n{stray}"));
        let f = temp_file(&text);
        let out = whose(&["report", "--no-presets", f.path().to_str().unwrap()]);
        assert!(out.status.success(), "{stray:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("skipped 1 line(s)"), "{stderr}");
        assert_eq!(script_stacks(&text), ["main;work 60"]);
    }
}

#[test]
fn a_line_that_is_neither_header_nor_frame_inside_a_stack_is_not_a_frame() {
    for weird in ["THIS_IS_A_WEIRD_LINE\n", "\tTHIS_IS_A_WEIRD_LINE\n"] {
        // inside the second sample's stack, between its two frames
        let text = six_samples_with("").replacen(
            "app 100 1.1: 10 cpu-clock:\n\t1234 work (/srv/app)\n",
            &format!("app 100 1.1: 10 cpu-clock:\n\t1234 work (/srv/app)\n{weird}"),
            1,
        );
        assert_eq!(script_stacks(&text), ["main;work 60"], "{weird:?}");
        let f = temp_file(&text);
        let out = whose(&["report", "--no-presets", f.path().to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("skipped 1 line(s)") && stderr.contains("THIS_IS_A_WEIRD_LINE"),
            "{stderr}"
        );
    }
}

#[test]
fn many_stray_lines_in_a_small_file_still_reject_it() {
    let text = six_samples_with("junk 1\njunk 2\njunk 3\njunk 4\njunk 5\njunk 6\n");
    let f = temp_file(&text);
    let stderr = whose_err(&[
        "report",
        "--format-in",
        "perf-script",
        "--no-presets",
        f.path().to_str().unwrap(),
    ]);
    assert!(
        stderr.contains("6 of 30 lines are not perf script output"),
        "{stderr}"
    );
}

/// A JVM recorded with perf-map-agent (inline chains unfolded), a kernel entry, an unknown
/// frame and a native caller: every shape of issue 12 in one file.
const JVM_CHAINS: &str = "\
java 100/101 [000] 1.000001: 1000 cpu-clock:
\t7f3c Lio/netty/Foo;::read->Ljava/io/PrintStream;::print+0x4b (/tmp/perf-1.map)
\t7f10 Lio/netty/Loop;::run (/tmp/perf-1.map)
\t7e00 Ljava/lang/Thread;::run (/tmp/perf-1.map)

java 100/101 [000] 1.000002: 1000 cpu-clock:
\tffffffff81000010 do_syscall_64+0x10 ([kernel.kallsyms])
\t7f3c Lio/netty/Foo;::read->Ljava/io/PrintStream;::print+0x4b (/tmp/perf-1.map)
\t7f10 Lio/netty/Loop;::run (/tmp/perf-1.map)
\t7e00 Ljava/lang/Thread;::run (/tmp/perf-1.map)

java 100/102 [001] 1.000003: 1000 cpu-clock:
\t7f50 Lshop/Cart;::total->Lshop/Price;::add->Ljava/util/HashMap;::get (/tmp/perf-1.map)
\t7e00 Ljava/lang/Thread;::run (/tmp/perf-1.map)

java 100/102 [001] 1.000004: 1000 cpu-clock:
\t0 [unknown] ([unknown])
\t7e00 Ljava/lang/Thread;::run (/tmp/perf-1.map)

";

#[test]
fn perf_map_agent_inline_chains_are_caller_and_inlined_callees() {
    assert_eq!(
        script_stacks(JVM_CHAINS),
        [
            "java.lang.Thread.run_[j];[unknown] 1000",
            "java.lang.Thread.run_[j];io.netty.Loop.run_[j];io.netty.Foo.read_[j];java.io.PrintStream.print 1000",
            "java.lang.Thread.run_[j];io.netty.Loop.run_[j];io.netty.Foo.read_[j];java.io.PrintStream.print;do_syscall_64_[k] 1000",
            "java.lang.Thread.run_[j];shop.Cart.total_[j];shop.Price.add;java.util.HashMap.get 1000",
        ]
    );
    let f = temp_file(JVM_CHAINS);
    let (owners, presets) = super::names::owners_of(&[f.path().to_str().unwrap()]);
    assert!(presets.contains(&"jvm".to_string()), "{presets:?}");
    // PrintStream.print was inlined into netty's Foo.read: the JDK is transparent, so the
    // owner view gives both netty samples to netty; HashMap.get inlined into the shop's own
    // code gives that sample to the (unclassified) application
    assert_eq!(owners["netty"][1], 2000);
    assert_eq!(owners["netty"][2], 2000);
    assert_eq!(owners["jdk"][0], 2000);
}

/// inferno's `collapse-perf` (the library whose already links for flame graphs) on the same
/// text, with `_[k]`/`_[j]` annotations and without the process-name root, read back by whose
/// as folded text, gives exactly the stacks and weights whose reads from the perf script text.
#[test]
fn stacks_and_weights_agree_with_inferno_collapse_perf() {
    use inferno::collapse::Collapse;
    let mut options = inferno::collapse::perf::Options::default();
    options.annotate_jit = true;
    options.annotate_kernel = true;
    options.nthreads = 1;
    // not the tab between address and symbol: inferno splits the address off at a space only
    // and drops such a frame as a weird line, where stackcollapse-perf.pl (`^\s*(\w+)\s*(.+)`)
    // and whose read `Lock::unlock` (a_tab_between_address_and_symbol_is_a_separator)
    let shapes = format!(
        "{JVM_CHAINS}{}{}",
        "app 7 2.0: 500 cpu-clock:\n\tb3cea6c4 Lock::unlock() (/system/lib/libc.so)\n\tb3cea000 main (/system/bin/app)\n\n",
        "app 7 2.1: 500 cpu-clock:\n\tb3cea6c4 Lock::unlock() (/system/lib/libc.so)\nTHIS_IS_A_WEIRD_LINE\n\tb3cea000 main (/system/bin/app)\n\n",
    );
    let mut folded = Vec::new();
    inferno::collapse::perf::Folder::from(options)
        .collapse(shapes.as_bytes(), &mut folded)
        .unwrap();
    let without_process: String = String::from_utf8(folded)
        .unwrap()
        .lines()
        .map(|l| format!("{}\n", l.split_once(';').unwrap().1))
        .collect();
    let f = temp_file(&without_process);
    let from_inferno = super::names::stacks_of(f.path().to_str().unwrap(), "folded");
    assert_eq!(
        script_stacks(&shapes),
        from_inferno,
        "inferno:\n{without_process}"
    );
}

#[test]
fn a_right_aligned_header_with_a_hex_looking_command_is_no_frame() {
    // `perf record` without -g: `cc1` and `dd` read as hex, yet these are headers
    let text = concat!(
        "             cc1 15196  4081.190144:    1001001 task-clock:      560470fee160 ",
        "parse_expr+0x27 (/usr/lib/gcc/cc1)\n",
        "              dd 15197  4081.191144:    1001001 task-clock:      560470fee164 ",
        "copy_block+0x2b (/usr/bin/dd)\n",
        "             cc1 15196  4081.192145:    1001001 task-clock:      560470fee160 ",
        "parse_expr+0x27 (/usr/lib/gcc/cc1)\n",
    );
    assert_eq!(
        script_stacks(text),
        ["copy_block 1001001", "parse_expr 2002002"]
    );
}

/// (name, self, owner, anywhere) of an owner.
type OwnerRow = (String, u64, u64, u64);

/// The owners of a report, sorted, with the detected presets, and the total.
fn owners_and_total(path: &str) -> (Vec<OwnerRow>, serde_json::Value, u64) {
    let json: serde_json::Value = report_json(&[path]);
    let input = &json["inputs"][0];
    let mut owners: Vec<_> = input["owners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let w = |v: &str| o[v].as_u64().unwrap();
            let name = o["name"].as_str().unwrap().to_string();
            (name, w("self"), w("owner"), w("anywhere"))
        })
        .collect();
    owners.sort();
    (
        owners,
        json["presets"].clone(),
        input["total"].as_u64().unwrap(),
    )
}

/// A Rust binary profiled by `perf record -g` and dumped with `perf script --no-demangle`
/// (issue 12; fixtures/README.md says how the files were made from the committed recordings):
/// legacy `_ZN…17h…E` and v0 `_RNv…` names, and legacy names half-demangled by a C++-only
/// demangler (`_$LT$…$GT$::next::h…`), give the same frames as perf's own demangling of the
/// same recording, so the same owners. The one frame-pointer stack that differs is a
/// sample in ld.so, whose binary was missing when the mangled dump was made (`[unknown]`).
#[test]
fn rust_symbols_perf_did_not_demangle_give_the_frames_perf_demangles() {
    // (recording, how its names were left, a name in that form, total, user's owner weight,
    // stacks in ld.so that differ)
    let cases = [
        (
            "rust-native.perf-fp",
            "no-demangle",
            " _ZN9logcrunch6worker17h8df904a640d78565E+0x",
            4_926_926_922,
            1_968_968_967,
            1,
        ),
        (
            "rust-native.perf-dwarf",
            "no-demangle",
            " _ZN9logcrunch6worker17h8df904a640d78565E+0x",
            4_852_841_931,
            2_421_404_244,
            0,
        ),
        // legacy names through a C++-only demangler (c++filt -s gnu-v3)
        (
            "rust-native.perf-fp",
            "half-demangled",
            " _$LT$serde_json..read..StrRead$u20$as$u20$serde_json..read..Read$GT$::parse_str::h",
            4_926_926_922,
            1_968_968_967,
            1,
        ),
    ];
    for (recording, form, example, want_total, want_user_owner, want_ld_stacks) in cases {
        let name = format!("{recording}.{form}");
        let demangled = fixture_arg(&format!("perf/{recording}.perf-script.txt.gz"));
        let mangled = fixture_arg(&format!("perf/{name}.perf-script.txt.gz"));
        let text = String::from_utf8(gunzip_file(std::path::Path::new(&mangled))).unwrap();
        assert!(text.contains(example), "{name}");
        assert!(
            text.contains(" _RNvNtCsgEmfK2I1SDS_4core3fmt5write+0x"),
            "{name}"
        );
        assert!(
            !text.contains(" logcrunch::worker+0x"),
            "{name}: demangled already"
        );

        let stacks = |path: &str| -> std::collections::BTreeSet<String> {
            let out = whose_ok(&["convert", path, "--to", "folded"]);
            out.lines().map(str::to_string).collect()
        };
        let (want, got) = (stacks(&demangled), stacks(&mangled));
        assert!(
            got.iter().any(|l| l.contains(";logcrunch::worker")),
            "{name}"
        );
        let only_ld = |a: &std::collections::BTreeSet<String>, b| {
            a.difference(b)
                .inspect(|l| assert!(l.contains("ld-linux-x86-64.so.2"), "{name}: {l}"))
                .count()
        };
        assert_eq!(only_ld(&want, &got), want_ld_stacks, "{name}");
        assert_eq!(only_ld(&got, &want), want_ld_stacks, "{name}");

        let (want_owners, want_presets, total) = owners_and_total(&demangled);
        let (got_owners, got_presets, got_total) = owners_and_total(&mangled);
        assert_eq!(got_presets, want_presets, "{name}");
        assert_eq!((got_total, total), (want_total, want_total), "{name}");
        assert_eq!(got_owners, want_owners, "{name}");
        let user = got_owners.iter().find(|o| o.0 == "user").unwrap();
        assert_eq!(user.2, want_user_owner, "{name}");
    }
}

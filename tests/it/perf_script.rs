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

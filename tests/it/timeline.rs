//! `report --by time` (issue 27): owner shares per time bucket, the same weights as the report
//! over the whole recording, and the warm-up finding on real JVM recordings.
//!
//! The warm-up's end is checked against an independent reading of the recording: the test
//! parses the perf script text itself, takes the share of samples with a frame of the
//! program's package (`orders.`) per bucket, and finds where that share settles; whose must
//! name the same bucket, give or take one.

use super::common::*;
use super::hermetic::Hermetic;
use serde_json::Value;
use std::collections::BTreeMap;

const KOTLIN: &str = "perf/kotlin-orders.perf-script.txt.gz";

/// Weight per (owner, view) summed over every bucket of input 0's timeline.
fn bucket_sums(json: &Value) -> BTreeMap<(String, &'static str), u128> {
    let mut sums = BTreeMap::new();
    for b in json["inputs"][0]["timeline"]["buckets"].as_array().unwrap() {
        for o in b["owners"].as_array().unwrap() {
            for view in ["self", "owner", "anywhere"] {
                *sums
                    .entry((o["name"].as_str().unwrap().to_string(), view))
                    .or_default() += o[view].as_u64().unwrap() as u128;
            }
        }
    }
    sums.retain(|_, w| *w > 0);
    sums
}

/// Weight per (owner, view) of input 0 of the report over the whole input.
fn report_sums(json: &Value) -> BTreeMap<(String, &'static str), u128> {
    let mut sums = BTreeMap::new();
    for o in json["inputs"][0]["owners"].as_array().unwrap() {
        for view in ["self", "owner", "anywhere"] {
            let w = o[view].as_u64().unwrap() as u128;
            if w > 0 {
                sums.insert((o["name"].as_str().unwrap().to_string(), view), w);
            }
        }
    }
    sums
}

/// The buckets hold every sample once: their totals add up to the input's, and each owner's
/// weights in every view to its weights in the report.
fn assert_buckets_are_the_report(timed: &Value, whole: &Value) {
    let buckets = timed["inputs"][0]["timeline"]["buckets"]
        .as_array()
        .unwrap();
    let total: u64 = buckets.iter().map(|b| b["total"].as_u64().unwrap()).sum();
    assert_eq!(total, whole["inputs"][0]["total"].as_u64().unwrap());
    assert_eq!(bucket_sums(timed), report_sums(whole));
    for pair in buckets.windows(2) {
        assert!(pair[0]["end_ns"].as_u64() <= pair[1]["start_ns"].as_u64());
    }
}

/// Per sample of a perf script dump: (time in ns, whether a frame names `package`).
fn samples_with(text: &str, package: &str) -> Vec<(u64, bool)> {
    let mut out: Vec<(u64, bool)> = Vec::new();
    for line in text.lines() {
        if line.starts_with('\t') || line.starts_with(' ') {
            if line.contains(package)
                && let Some(last) = out.last_mut()
            {
                last.1 = true;
            }
        } else if let Some(colon) = line.find(": ") {
            let time = line[..colon].rsplit(' ').next().unwrap();
            let (s, frac) = time.split_once('.').unwrap();
            let nanos = s.parse::<u64>().unwrap() * 1_000_000_000
                + format!("{frac:0<9}").parse::<u64>().unwrap();
            out.push((nanos, false));
        }
    }
    out
}

#[test]
fn buckets_add_up_to_the_report_on_perf_script() {
    let path = fixture_arg(KOTLIN);
    let timed = report_json(&[&path, "--by", "time"]);
    let whole = report_json(&[&path]);
    assert_buckets_are_the_report(&timed, &whole);
    let t = &timed["inputs"][0]["timeline"];
    assert_eq!(t["bucket"]["percent"], 5.0);
    assert_eq!(t["buckets"].as_array().unwrap().len(), 20);
    // the first sample of the dump is at 3234.984812 s
    assert_eq!(t["first_ns"], 3_234_984_812_000u64);
}

#[test]
fn buckets_add_up_to_the_report_on_perf_data_and_jfr() {
    let run = Hermetic::new();
    let profile = fixture("perf/jvm-shop.perf.data");
    let (timed, _) = run.report(&profile, &["--by", "time", "--bucket", "1s"]);
    let (whole, _) = run.report(&profile, &[]);
    assert_buckets_are_the_report(&timed, &whole);
    assert_eq!(
        timed["inputs"][0]["timeline"]["bucket"]["width_ns"],
        1_000_000_000u64
    );
    let jfr = fixture_arg("jfr/jdk17-cpu.jfr.gz");
    let timed = report_json(&[&jfr, "--by", "time"]);
    assert_buckets_are_the_report(&timed, &report_json(&[&jfr]));
    // 38 samples a few a bucket: nothing differs beyond the noise
    assert!(timed["inputs"][0]["timeline"]["warmup"].is_null());
}

/// The Kotlin/JVM recording starts with the JIT compiler, the JVM's start-up and page faults;
/// the program's own code owns a quarter of the first half second and three quarters after.
#[test]
fn a_jvm_warm_up_is_found_where_the_shares_settle_and_its_slice_skips_it() {
    let path = fixture_arg(KOTLIN);
    let timed = report_json(&[&path, "--by", "time"]);
    let t = &timed["inputs"][0]["timeline"];
    let warmup = &t["warmup"];
    assert_eq!(warmup["owner"], "user", "{warmup}");
    let end_bucket = warmup["end_bucket"].as_u64().unwrap() as usize;

    // independently: the share of samples in the program's package per bucket, and the
    // first bucket from which every bucket stays within 15 points of the settled half's
    let buckets = t["buckets"].as_array().unwrap();
    let edges: Vec<(u64, u64)> = buckets
        .iter()
        .map(|b| {
            (
                b["start_ns"].as_u64().unwrap(),
                b["end_ns"].as_u64().unwrap(),
            )
        })
        .collect();
    let text = String::from_utf8(gunzip_file(&fixture(KOTLIN))).unwrap();
    let mut counts = vec![(0u32, 0u32); edges.len()];
    for (time, own) in samples_with(&text, " orders.") {
        let i = edges
            .iter()
            .position(|&(s, e)| s <= time && time < e)
            .unwrap();
        counts[i].0 += 1;
        counts[i].1 += own as u32;
    }
    let share = |(n, own): (u32, u32)| own as f64 * 100.0 / n.max(1) as f64;
    let half = counts.len() / 2;
    let settled: (u32, u32) = counts[half..]
        .iter()
        .fold((0, 0), |a, c| (a.0 + c.0, a.1 + c.1));
    let settled = share(settled);
    let settles = (0..half)
        .find(|&i| {
            counts[i..half]
                .iter()
                .all(|&c| (share(c) - settled).abs() <= 15.0)
        })
        .unwrap();
    assert!(settles > 0, "the recording has a warm-up: {counts:?}");
    assert!(
        end_bucket.abs_diff(settles) <= 1,
        "whose ends the warm-up at bucket {end_bucket}, the package's share settles at {settles} \
         ({counts:?}, settled {settled:.1}%)"
    );

    // the finding is in the header, with the slice that skips it
    let table = whose_ok(&["report", &path, "--by", "time"]);
    let slice = warmup["time"].as_str().unwrap();
    assert!(
        table.contains(&format!("skip it with `--time {slice}`")),
        "{table}"
    );

    // the slice gives the settled shares: the user share after the warm-up
    let (before, _) = report_shares(&[&path]);
    let (after, _) = report_shares(&[&path, "--time", slice]);
    let after_warmup = warmup["after"].as_f64().unwrap();
    assert!(
        (after["user"][1] - after_warmup).abs() < 0.01,
        "{after:?} vs {after_warmup}"
    );
    assert!(
        after["user"][1] > before["user"][1] + 10.0,
        "{before:?} -> {after:?}"
    );
    let sliced = report_json(&[&path, "--time", slice, "--by", "time"]);
    assert!(sliced["inputs"][0]["timeline"]["warmup"].is_null());
}

/// A hand-made perf script dump: two samples of `work` (the user's) and one of `jit` at
/// 0.0–0.9 s, then only `work`; buckets of 1 s hold what the dump says by hand.
#[test]
fn hand_made_buckets() {
    let mut text = String::new();
    let times = [
        "10.000000",
        "10.400000",
        "10.900000",
        "11.200000",
        "11.800000",
        "12.500000",
    ];
    let leaves = ["work", "jit", "work", "work", "work", "work"];
    for (t, leaf) in times.iter().zip(leaves) {
        text.push_str(&format!(
            "prog 7 {t}: 1000 cpu-clock:\n\t 1000 {leaf}+0x1 (/opt/prog)\n\t 2000 main+0x2 (/opt/prog)\n\n"
        ));
    }
    let rules = "[[owner]]\nname = \"app\"\ncategory = \"user\"\nprefix = [\"work\", \"main\"]\n\n\
                 [[owner]]\nname = \"vm\"\ncategory = \"runtime\"\nprefix = [\"jit\"]\n";
    let dir = tempfile::tempdir().unwrap();
    let dump = write_temp(dir.path(), "hand.perf-script.txt", &text);
    let rules = write_temp(dir.path(), "rules.toml", rules);
    let args = [
        dump.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
        "--no-presets",
        "--by",
        "time",
        "--bucket",
        "1s",
        "--metric",
        "samples",
    ];
    let json = report_json(&args);
    let t = &json["inputs"][0]["timeline"];
    let buckets = t["buckets"].as_array().unwrap();
    // 10.0 to 12.5 s: three buckets of one second from the first sample
    let rows: Vec<(u64, u64, u64)> = buckets
        .iter()
        .map(|b| {
            let owner = |name: &str| {
                b["owners"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|o| o["name"] == name)
                    .map_or(0, |o| o["self"].as_u64().unwrap())
            };
            (b["total"].as_u64().unwrap(), owner("app"), owner("vm"))
        })
        .collect();
    assert_eq!(rows, vec![(3, 2, 1), (2, 2, 0), (1, 1, 0)]);
    assert_eq!(buckets[0]["start_ns"], 10_000_000_000u64);
    assert_eq!(t["last_ns"], 12_500_000_000u64);
    // CSV: `vm` (runtime, transparent) is the leaf of 1 of the first bucket's 3 samples
    let mut csv_args = vec!["report"];
    csv_args.extend(args);
    csv_args.extend(["--format", "csv"]);
    let csv = whose_ok(&csv_args);
    assert!(
        csv.contains(",10000000000,11000000000,vm,runtime,true,self,1,3,33.333333"),
        "{csv}"
    );
}

/// Fleet rows carry the buckets: per bucket the owner view adds up to the bucket's total,
/// and over the buckets each owner's rows add up to its weight in the report.
#[test]
fn rows_carry_the_buckets() {
    let path = fixture_arg(KOTLIN);
    let rows = whose_ok(&["report", &path, "--by", "time", "--format", "ndjson"]);
    let mut per_bucket: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    let mut per_owner: BTreeMap<(String, &'static str), u128> = BTreeMap::new();
    for line in rows.lines() {
        let row: Value = serde_json::from_str(line).unwrap();
        let start = row["bucket_start_ns"]
            .as_u64()
            .expect("a bucket on every row");
        assert!(row["bucket_end_ns"].as_u64().unwrap() > start);
        let weight = row["weight"].as_u64().unwrap();
        let view = ["self", "owner", "anywhere"]
            .into_iter()
            .find(|v| row["view"] == *v)
            .unwrap();
        if view == "owner" {
            let b = per_bucket.entry(start).or_default();
            b.0 += weight;
            b.1 = row["total"].as_u64().unwrap();
        }
        *per_owner
            .entry((row["owner"].as_str().unwrap().to_string(), view))
            .or_default() += weight as u128;
    }
    assert_eq!(per_bucket.len(), 20);
    for (start, (owned, total)) in &per_bucket {
        assert_eq!(owned, total, "bucket at {start}");
    }
    // an owner has a row in every view where it has weight in any
    per_owner.retain(|_, w| *w > 0);
    assert_eq!(per_owner, report_sums(&report_json(&[&path])));
}

#[test]
fn inputs_without_times_and_bad_buckets_are_refused() {
    let folded = fixture_arg("folded/seed-ktor-alloc.txt");
    let err = whose_err(&["report", &folded, "--by", "time"]);
    assert!(err.contains("has no time per sample"), "{err}");
    let kotlin = fixture_arg(KOTLIN);
    let err = whose_err(&["report", &kotlin, "--bucket", "1s"]);
    assert!(err.contains("add --by time"), "{err}");
    let err = whose_err(&["report", &kotlin, "--by", "time", "--bucket", "1us"]);
    assert!(err.contains("cannot be drawn"), "{err}");
    let err = whose_err(&["report", &kotlin, "--by", "time", "--bucket", "2 weeks"]);
    assert!(err.contains("expected a duration"), "{err}");
    let err = whose_err(&["report", &kotlin, &kotlin, "--merge", "--by", "time"]);
    assert!(err.contains("--by time does not go with --merge"), "{err}");
}

//! `whose gate` and `whose diff` end to end on real profiles: the seed's allocation stacks,
//! the py-spy recording, and three repeats split by time from the c-malloc recording
//! (`fixtures/repeats/`, made by `fixtures/repeats/make.py`, which also wrote the expected
//! weights in `fixtures/repeats/expected.json` with its own implementation of the rules).

use super::common::*;
use serde_json::Value;
use std::process::Output;

fn run(args: &[String]) -> Output {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    whose(&refs)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn seed_args() -> Vec<String> {
    vec![
        fixture_arg("folded/seed-ktor-alloc.txt"),
        "--rules".into(),
        fixture_arg("rules/seed-ktor-alloc.toml"),
        "--no-presets".into(),
        "--unit".into(),
        "bytes".into(),
    ]
}

fn py_args() -> Vec<String> {
    vec![
        fixture_arg("folded/py-app.folded"),
        "--rules".into(),
        fixture_arg("rules/py-app.toml"),
        "--no-presets".into(),
    ]
}

fn churn(i: usize) -> String {
    fixture_arg(&format!("repeats/churn-{i}.folded"))
}

fn churn_rules() -> Vec<String> {
    vec![
        "--rules".into(),
        fixture_arg("rules/c-malloc-sym.toml"),
        "--no-presets".into(),
    ]
}

fn repeats_args() -> Vec<String> {
    let mut a = vec![churn(1), churn(2), churn(3)];
    a.extend(churn_rules());
    a
}

/// The repeats for a gate. They are frame-pointer stacks, 64 % of them cut inside glibc and
/// a fifth holding an `[unknown]` return address, so the guards would refuse any owner or
/// anywhere verdict on them (as they should on real input); these tests check the verdict
/// arithmetic, so they turn the guards off.
fn repeats_gate_args() -> Vec<String> {
    let mut a = repeats_args();
    a.extend(["--max-ownerless", "100%", "--max-unresolved", "100%"].map(String::from));
    a
}

/// `gate ARGS --require EXPR...`, returning the process output.
fn gate(inputs: &[String], requires: &[&str], extra: &[&str]) -> Output {
    let mut a = vec!["gate".to_string()];
    a.extend(inputs.iter().cloned());
    for r in requires {
        a.push("--require".into());
        a.push(r.to_string());
    }
    a.extend(extra.iter().map(|s| s.to_string()));
    run(&a)
}

fn gate_json(inputs: &[String], requires: &[&str], extra: &[&str]) -> (Option<i32>, Value) {
    let mut e = vec!["--format", "json"];
    e.extend_from_slice(extra);
    let o = gate(inputs, requires, &e);
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("json: {e}\n{}\n{}", stdout(&o), stderr(&o)));
    assert_eq!(v["schema"], "whose-gate/2");
    (o.status.code(), v)
}

#[test]
fn the_seeds_gate_user_owner_25_percent_fails_with_the_numbers() {
    // The seed's question on its own stacks: every sampled byte under KClassImpl.toString is
    // owned by kotlin (reflection), so user code owns 0 of the 2459954604 bytes.
    let (_, oracle_total) = expected_shares("seed-ktor-alloc.types-strip.json");
    let (want, _) = expected_shares("seed-ktor-alloc.types-strip.json");
    let o = gate(&seed_args(), &["user.owner >= 25%"], &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        // 0 B in all 21 distinct stacks (no sample count in folded bytes: each stack is one
        // sample, the fewest it can be); Wilson at n = 21: high = z²/(21 + z²) = 18.67 %
        text.contains("FAIL  user.owner >= 25%: measured 0.00% [0.00–18.67%, 95%] (0 B of 2.29 GiB, 21 distinct stacks, metric bytes), threshold 25.00%"),
        "{text}"
    );
    assert!(text.contains("verdict: FAIL (0 of 1 requirements hold; all must)"));
    let (code, v) = gate_json(&seed_args(), &["user.owner >= 25%"], &[]);
    assert_eq!(code, Some(1));
    let r = &v["requirements"][0];
    assert_eq!(r["inputs"][0]["total"].as_f64(), Some(oracle_total));
    assert_eq!(r["median"].as_f64(), Some(want["user"][1]));
    assert_eq!(r["status"], "fail");
    // and kotlin owns all of it, which the gate confirms as far as 21 stacks can (Wilson's
    // low end at n = 21 is 21/(21 + z²) = 81.33 %); that it is exactly 100 % only the point
    // estimate says
    let o = gate(&seed_args(), &["kotlin.owner >= 80%"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = gate(&seed_args(), &["kotlin.owner >= 100%"], &[]);
    assert_eq!(o.status.code(), Some(3), "{}", stdout(&o));
    let o = gate(
        &seed_args(),
        &["kotlin.owner >= 100%"],
        &["--point-estimate"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn a_threshold_just_below_or_above_the_measured_share_flips_the_exit_code() {
    // py-app: the oracle's user.self share (37.8189...%), thresholds 0.01 points either side;
    // --point-estimate compares the share itself, as the gate did before intervals
    let (want, _) = expected_shares("py-app.folded.json");
    let s = want["user"][0];
    let below = format!("user.self >= {:.4}%", s - 0.01);
    let above = format!("user.self >= {:.4}%", s + 0.01);
    let point = ["--point-estimate"];
    assert_eq!(gate(&py_args(), &[&below], &point).status.code(), Some(0));
    assert_eq!(gate(&py_args(), &[&above], &point).status.code(), Some(1));
    // upper bounds flip the other way
    let le_above = format!("user.self <= {:.4}%", s + 0.01);
    let le_below = format!("user.self <= {:.4}%", s - 0.01);
    assert_eq!(
        gate(&py_args(), &[&le_above], &point).status.code(),
        Some(0)
    );
    assert_eq!(
        gate(&py_args(), &[&le_below], &point).status.code(),
        Some(1)
    );
    // with its sampling error (1999 samples), 0.01 points decide nothing: inconclusive, 3
    for t in [&below, &above, &le_above, &le_below] {
        assert_eq!(gate(&py_args(), &[t], &[]).status.code(), Some(3), "{t}");
    }
    // the measured share the gate reports is the oracle's
    let (_, v) = gate_json(&py_args(), &[&below], &[]);
    let got = v["requirements"][0]["median"].as_f64().unwrap();
    assert!((got - s).abs() < 1e-9, "{got} vs {s}");
}

#[test]
fn all_requirements_must_hold_unless_any() {
    let pass = "stdlib.self >= 60%"; // 62.18%
    let fail = "user.owner < 50%"; // 99.95%
    let also_fail = "category:user.self > 90%"; // 37.82%
    assert_eq!(gate(&py_args(), &[pass, fail], &[]).status.code(), Some(1));
    let o = gate(&py_args(), &[pass, fail], &["--any"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("verdict: PASS (1 of 2 requirements hold; --any: one must)"));
    assert_eq!(
        gate(&py_args(), &[fail, also_fail], &["--any"])
            .status
            .code(),
        Some(1)
    );
    assert_eq!(gate(&py_args(), &[pass], &[]).status.code(), Some(0));
}

#[test]
fn an_unknown_owner_category_or_metric_exits_2_listing_what_exists() {
    let o = gate(&py_args(), &["nobody.owner >= 1%"], &[]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("no owner or category `nobody`"), "{e}");
    assert!(
        e.contains("owners with weight in these profiles: user, script, stdlib"),
        "{e}"
    );
    assert!(
        e.contains("categories (category:NAME): user, framework"),
        "{e}"
    );
    let e = stderr(&gate(&py_args(), &["owner:library.self <= 1%"], &[]));
    assert!(e.contains("no owner `library`"), "{e}");
    let e = stderr(&gate(&py_args(), &["category:nope.self <= 1%"], &[]));
    assert!(
        e.contains("unknown category `nope`; categories are: user"),
        "{e}"
    );
    let o = gate(&py_args(), &["user.owner[alloc_space] >= 25%"], &[]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("no input has the metric `alloc_space`; the inputs have: ")
            && e.contains("py-app.folded: samples (count)"),
        "{e}"
    );
    let e = whose_err(&[
        "gate",
        &fixture_arg("folded/py-app.folded"),
        "--require",
        "user >= 1",
    ]);
    assert!(e.contains("SUBJECT.VIEW[METRIC] OP PERCENT"), "{e}");
}

/// Per slice, the share in percent of `owner` in `view` from make.py's expected.json.
fn expected_repeat_shares(owner: &str, view: &str) -> Vec<f64> {
    let text = std::fs::read_to_string(fixture("repeats/expected.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["slices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let w = s["owners"][owner][view].as_f64().unwrap_or(0.0);
            w * 100.0 / s["total"].as_f64().unwrap()
        })
        .collect()
}

/// Median, min and max by hand: sorted, middle one (three repeats).
fn hand_spread(mut v: Vec<f64>) -> (f64, f64, f64) {
    assert_eq!(v.len(), 3);
    v.sort_by(f64::total_cmp);
    (v[1], v[0], v[2])
}

#[test]
fn repeats_give_the_hand_computed_median_and_range() {
    for (owner, view) in [
        ("user", "owner"),
        ("user", "self"),
        ("allocator", "self"),
        ("libc", "anywhere"),
    ] {
        let want = expected_repeat_shares(owner, view);
        let (median, min, max) = hand_spread(want.clone());
        let expr = format!("{owner}.{view} >= 0%");
        let (code, v) = gate_json(&repeats_gate_args(), &[&expr], &[]);
        assert_eq!(code, Some(0));
        let r = &v["requirements"][0];
        assert_eq!(r["repeats"], 3);
        let got: Vec<f64> = r["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["share"].as_f64().unwrap())
            .collect();
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-9, "{owner}.{view}: {got:?} vs {want:?}");
        }
        for (key, w) in [("median", median), ("min", min), ("max", max)] {
            let g = r[key].as_f64().unwrap();
            assert!((g - w).abs() < 1e-9, "{owner}.{view} {key}: {g} vs {w}");
        }
    }
    // user.owner: 526/1462, 554/1507, 563/1492 samples
    let (median, min, max) = hand_spread(vec![
        526.0 * 100.0 / 1462.0,
        554.0 * 100.0 / 1507.0,
        563.0 * 100.0 / 1492.0,
    ]);
    assert_eq!(
        hand_spread(expected_repeat_shares("user", "owner")),
        (median, min, max)
    );
    // report --repeats shows the same median [min–max]
    let mut a = vec!["report".to_string(), "--repeats".into()];
    a.extend(repeats_args());
    let table = stdout(&run(&a));
    let cell = format!("{median:.1}% [{min:.1}–{max:.1}]");
    assert!(
        table
            .lines()
            .any(|l| l.trim_start().starts_with("user") && l.contains(&cell)),
        "{cell} not in\n{table}"
    );
}

#[test]
fn with_point_estimates_a_threshold_inside_the_range_is_inconclusive_and_fails() {
    // the decision of old, kept by --point-estimate: every repeat must hold
    let point_args = || {
        let mut a = repeats_gate_args();
        a.push("--point-estimate".into());
        a
    };
    let shares = expected_repeat_shares("user", "owner");
    let (median, min, max) = hand_spread(shares.clone());
    // halfway between the smallest repeat and the median: inside the range
    let t = format!("{:.4}", (min + median) / 2.0);
    let t_value: f64 = t.parse().unwrap();
    let passing = shares.iter().filter(|&&s| s >= t_value).count();
    assert_eq!(passing, 2);
    let o = gate(&point_args(), &[&format!("user.owner >= {t}%")], &[]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(
        text.contains(&format!(
            "FAIL  user.owner >= {t}%: measured {median:.2}% median [{min:.2}–{max:.2}%] over 3 repeats (metric samples)"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "inconclusive: {passing} of 3 repeats pass (min {min:.2}% is on the wrong side)"
        )),
        "{text}"
    );
    let (_, v) = gate_json(&point_args(), &[&format!("user.owner >= {t}%")], &[]);
    assert_eq!(v["requirements"][0]["status"], "inconclusive");
    assert_eq!(v["requirements"][0]["passing"], 2);
    // below the whole range passes, above it fails outright; upper bounds use the max
    let below = format!("user.owner >= {:.4}%", min - 0.01);
    let above = format!("user.owner >= {:.4}%", max + 0.01);
    let le_max = format!("user.owner <= {:.4}%", max + 0.01);
    let le_mid = format!("user.owner <= {median:.4}%");
    assert_eq!(gate(&point_args(), &[&below], &[]).status.code(), Some(0));
    let (code, v) = gate_json(&point_args(), &[&above], &[]);
    assert_eq!(
        (code, v["requirements"][0]["status"].as_str()),
        (Some(1), Some("fail"))
    );
    assert_eq!(gate(&point_args(), &[&le_max], &[]).status.code(), Some(0));
    assert_eq!(gate(&point_args(), &[&le_mid], &[]).status.code(), Some(1));
}

#[test]
fn the_json_verdict_goes_to_a_file_and_the_exit_code_stays() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("verdict.json");
    let o = gate(
        &seed_args(),
        &["user.owner >= 25%"],
        &["--format", "json", "-o", path.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["verdict"], "fail");
    let o = gate(
        &seed_args(),
        &["user.owner >= 25%"],
        &["--format", "markdown"],
    );
    let md = stdout(&o);
    assert!(md.starts_with("### whose gate: FAIL"), "{md}");
    assert!(md.contains("| **FAIL** | `user.owner >= 25%` | 0.00% [0.00–18.67%, 95%] (0 B of 2.29 GiB, 21 distinct stacks, metric bytes) | 25.00% | 0 of 1 |"), "{md}");
}

#[test]
fn a_metric_in_brackets_selects_the_inputs_that_have_it() {
    // folded inputs have one sample type, named after --unit: `samples` here
    let (code, v) = gate_json(&repeats_gate_args(), &["user.owner[samples] >= 30%"], &[]);
    assert_eq!(code, Some(0));
    assert_eq!(v["requirements"][0]["metric"]["name"], "samples");
    assert_eq!(v["requirements"][0]["repeats"], 3);
}

#[test]
fn help_gate_explains_the_grammar_with_examples() {
    let help = whose_ok(&["help", "gate"]);
    for want in [
        "SUBJECT.VIEW[METRIC] OP PERCENT",
        "category:NAME",
        "inconclusive",
        "--require 'user.owner[cpu] >= 5%' --require 'user.owner[alloc_space] >= 25%'",
        "io.ktor.anywhere < 50%",
        "Exit codes: 0",
    ] {
        assert!(help.contains(want), "`{want}` missing from:\n{help}");
    }
}

fn diff_json(base: &[String], new: &[String]) -> Value {
    let mut a = vec!["diff".to_string()];
    a.extend(base.iter().cloned());
    a.push("--against".into());
    a.extend(new.iter().cloned());
    a.extend(churn_rules());
    a.extend(["--format".to_string(), "json".to_string()]);
    let o = run(&a);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["schema"], "whose-diff/3");
    v
}

#[test]
fn diff_of_a_profile_against_itself_is_all_zero_and_noise() {
    for (base, new) in [
        (vec![churn(1)], vec![churn(1)]),
        (
            vec![churn(1), churn(2), churn(3)],
            vec![churn(1), churn(2), churn(3)],
        ),
    ] {
        let v = diff_json(&base, &new);
        let rows = v["rows"].as_array().unwrap();
        // 4 owners; unknown has weight only in the anywhere view
        assert_eq!(rows.len(), 10, "{v}");
        for r in rows {
            assert_eq!(r["weight"]["delta"].as_f64(), Some(0.0), "{r}");
            assert_eq!(r["share"]["delta"].as_f64(), Some(0.0), "{r}");
            assert_eq!(r["judgement"], "noise", "{r}");
        }
        assert_eq!(v["total"]["delta"].as_f64(), Some(0.0), "{v}");
        assert_eq!(v["counts"]["noise"], 10, "{v}");
    }
}

/// The `prefix` list of one owner in a rules file.
fn prefixes(rules: &str, owner: &str) -> Vec<String> {
    let text = std::fs::read_to_string(fixture(rules)).unwrap();
    let doc: toml::Value = toml::from_str(&text).unwrap();
    doc["owner"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["name"].as_str() == Some(owner))
        .flat_map(|o| o["prefix"].as_array().unwrap().clone())
        .map(|p| p.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn diff_against_doubled_user_stacks_grows_exactly_user() {
    // In c-malloc-sym.toml `user` is the only non-transparent owner, so a stack is owned by
    // user iff one of its frames is a user frame (no user prefix is also an allocator one).
    let user = prefixes("rules/c-malloc-sym.toml", "user");
    let allocator = prefixes("rules/c-malloc-sym.toml", "allocator");
    let is_user = |frame: &str| {
        !allocator.iter().any(|p| frame.starts_with(p.as_str()))
            && user.iter().any(|p| frame.starts_with(p.as_str()))
    };
    let base = std::fs::read_to_string(fixture("repeats/churn-1.folded")).unwrap();
    let (mut total, mut owned) = (0u64, 0u64);
    let mut doubled = String::new();
    for line in base.lines() {
        let (stack, count) = line.rsplit_once(' ').unwrap();
        let count: u64 = count.parse().unwrap();
        total += count;
        let mine = stack.split(';').any(is_user);
        if mine {
            owned += count;
        }
        doubled.push_str(&format!(
            "{stack} {}\n",
            if mine { 2 * count } else { count }
        ));
    }
    assert_eq!((total, owned), (1462, 526));
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("churn-1-user-doubled.folded");
    std::fs::write(&new, doubled).unwrap();
    let v = diff_json(&[churn(1)], &[new.to_str().unwrap().to_string()]);
    let (t, u) = (total as f64, owned as f64);
    let want_user = 100.0 * (2.0 * u / (t + u) - u / t);
    let mut seen = 0;
    for r in v["rows"].as_array().unwrap() {
        let (name, view) = (r["name"].as_str().unwrap(), r["view"].as_str().unwrap());
        let share = &r["share"];
        let (b, n) = (
            share["base"]["median"].as_f64().unwrap(),
            share["new"]["median"].as_f64().unwrap(),
        );
        let d = share["delta"].as_f64().unwrap();
        let weight = r["weight"]["delta"].as_f64().unwrap();
        if name == "user" && view != "self" {
            assert!(
                (d - want_user).abs() < 1e-9,
                "{name}.{view}: {d} vs {want_user}"
            );
            assert!(d > 9.0);
            // exactly the samples added
            assert_eq!(weight, u, "{r}");
            // 9.6 points on 1462 and 1988 samples: far outside the sampling error
            assert_eq!(r["judgement"], "change", "{r}");
            seen += 1;
        } else if view == "owner" {
            // the other owners' stacks did not change: only the total grew, so their
            // shares fell while their weights did not move; the share is what is tested
            assert!((n - b * t / (t + u)).abs() < 1e-9, "{name}: {b} → {n}");
            assert!(d < 0.0);
            assert_eq!(weight, 0.0, "{r}");
            let q = r["share"]["q_value"].as_f64().unwrap();
            let want = if q <= 0.05 { "change" } else { "noise" };
            assert_eq!(r["judgement"], want, "{r}");
            seen += 1;
        }
    }
    assert_eq!(
        seen, 4,
        "user owner+anywhere, libc and allocator owner: {v}"
    );
}

#[test]
fn diff_with_repeats_tests_the_share_by_hand() {
    // base: slices 1 and 2, new: slice 3. user.owner: 526/1462 and 554/1507, then 563/1492
    let v = diff_json(&[churn(1), churn(2)], &[churn(3)]);
    assert_eq!(v["false_discovery_control"], "benjamini-hochberg");
    assert_eq!(v["judged"], "share");
    let row = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "user" && r["view"] == "owner")
        .unwrap()
        .clone();
    let share = |k: f64, n: f64| k * 100.0 / n;
    let (b1, b2, n3) = (
        share(526.0, 1462.0),
        share(554.0, 1507.0),
        share(563.0, 1492.0),
    );
    // the base's two repeats: their spread alone (issue 54: no floor), (b1 − b2)²/2 =
    // 0.3071 points², so se_b = √(0.3071/2) = 0.3918 with 1 df; the single new profile: its
    // own sampling variance p(1−p)/n = 1.5748 (the base's repeats are no noisier than
    // their samples, so it is not taken to be as noisy as one of them)
    let var = |p: f64, n: f64| p * (100.0 - p) / n;
    let s2_b = (b1 - b2).powi(2) / 2.0;
    let se_b = (s2_b / 2.0).sqrt();
    let se_n = var(n3, 1492.0).sqrt();
    let se = (se_b * se_b + se_n * se_n).sqrt();
    // Welch–Satterthwaite: (se_b² + se_n²)² / (se_b⁴/1) = 126.7 df
    let df = (se * se).powi(2) / se_b.powi(4);
    let delta = n3 - (b1 + b2) / 2.0;
    let s = &row["share"];
    assert!((s["delta"].as_f64().unwrap() - delta).abs() < 1e-9, "{s}");
    assert!((s["test"]["se"].as_f64().unwrap() - se).abs() < 1e-9, "{s}");
    assert!((s["test"]["df"].as_f64().unwrap() - df).abs() < 1e-6, "{s}");
    assert!((df - 126.717).abs() < 1e-3, "{df}");
    // t = 1.3646/1.3147 = 1.038 on 126.7 df: p = 0.3012 (t tables), and the interval
    // ±t(0.975; 126.7)·se = ±1.9789·se
    let p = s["test"]["p_value"].as_f64().unwrap();
    assert!((p - 0.3012).abs() < 1e-3, "{s}");
    let (low, high) = (
        s["interval"]["low"].as_f64().unwrap(),
        s["interval"]["high"].as_f64().unwrap(),
    );
    assert!(
        (low - (delta - 1.9789 * se)).abs() < 1e-3 && (high - (delta + 1.9789 * se)).abs() < 1e-3,
        "{s}"
    );
    assert!(s["q_value"].as_f64().unwrap() >= p);
    assert_eq!(row["judgement"], "noise");
    // the weights are shown, means of the sides: 540 → 563
    let weight = &row["weight"];
    assert_eq!(weight["base"]["mean"].as_f64(), Some(540.0));
    assert_eq!(weight["delta"].as_f64(), Some(23.0));
}

#[test]
fn diff_markdown_reads_as_a_pr_comment() {
    let mut a = vec!["diff".to_string(), churn(1), churn(2)];
    a.extend(["--against".to_string(), churn(3)]);
    a.extend(churn_rules());
    a.extend(["--format".to_string(), "markdown".to_string()]);
    let o = run(&a);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = stdout(&o);
    assert!(md.starts_with("### whose diff\n"), "{md}");
    assert!(
        md.contains("| owner | view | base | new | delta | change | share |  |"),
        "{md}"
    );
    assert!(
        md.contains("- total: 1484.5 [1462–1507] → 1492, +7.5 (+0.5%): noise [-179.4, +194.4]"),
        "{md}"
    );
    // user.owner: base slices 1 and 2 (526/1462, 554/1507), new slice 3 (563/1492)
    let (b1, b2, n) = (
        526.0 * 100.0 / 1462.0,
        554.0 * 100.0 / 1507.0,
        563.0 * 100.0 / 1492.0,
    );
    let row = format!(
        "| user | owner | 540 | 563 | +23 | +4.3% | {:+.2} pp | noise [-1.24, +3.97 pp] |",
        n - (b1 + b2) / 2.0,
    );
    assert!(md.contains(&row), "{row} not in\n{md}");
}

/// The mixed gate on real Go profiles of one run: a CPU profile and an allocation
/// profile, each requirement evaluated over the input that has its metric. The oracle's
/// user owner shares are 78.10 % of cpu and 98.25 % of alloc_space.
#[test]
fn a_cpu_and_an_alloc_profile_gate_together_by_metric() {
    let inputs = vec![
        fixture_arg("pprof/cpu.pb.gz"),
        fixture_arg("pprof/allocs.pb.gz"),
        "--rules".into(),
        fixture_arg("rules/go-svc.toml"),
        "--no-presets".into(),
    ];
    // thresholds a tenth of a point from the shares: the point estimates decide them
    let point = ["--point-estimate"];
    let (code, v) = gate_json(
        &inputs,
        &["user.owner[cpu] >= 78%", "user.owner[alloc_space] >= 98%"],
        &point,
    );
    assert_eq!(code, Some(0), "{v}");
    let (code, v) = gate_json(
        &inputs,
        &["user.owner[cpu] >= 78.2%", "user.owner[alloc_space] >= 98%"],
        &point,
    );
    assert_eq!(code, Some(1), "{v}");
    // with their sampling error (1516 CPU samples; 76 allocation stacks, no sample count)
    // they cannot tell; 75 % and 95 % they can: [75.95, 80.11] and [95.43, 99.34]
    let (code, v) = gate_json(
        &inputs,
        &["user.owner[cpu] >= 78%", "user.owner[alloc_space] >= 98%"],
        &[],
    );
    assert_eq!(
        (code, v["verdict"].as_str()),
        (Some(3), Some("inconclusive")),
        "{v}"
    );
    let (code, v) = gate_json(
        &inputs,
        &["user.owner[cpu] >= 75%", "user.owner[alloc_space] >= 95%"],
        &[],
    );
    assert_eq!(code, Some(0), "{v}");
    let text = stdout(&gate(&inputs, &["user.owner[alloc_space] >= 98.3%"], &[]));
    assert!(text.contains("98.2"), "{text}");
}

#[test]
fn a_bare_name_read_as_a_category_says_so_and_a_bare_number_is_refused() {
    let profile = fixture_arg("perf/c-malloc.perf.perf-script.txt.gz");
    let out = whose(&["gate", &profile, "--require", "allocator.self <= 90%"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains(
            "; `allocator` is read as the category allocator (no owner has that name; \
             `category:allocator` says so explicitly)"
        ),
        "{text}"
    );
    // spelled out, the category needs no remark
    let text = whose_ok(&[
        "gate",
        &profile,
        "--require",
        "category:allocator.self <= 90%",
    ]);
    assert!(!text.contains("is read as the category"), "{text}");
    let stderr = whose_err(&["gate", &profile, "--require", "allocator.self <= 0.9"]);
    assert!(
        stderr
            .contains("`0.9` has no `%`: write `0.9%` for 0.9 percent or `90%` for a share of 0.9"),
        "{stderr}"
    );
    let stderr = whose_err(&["gate", &profile, "--require", "allocator.self => 9%"]);
    assert!(stderr.contains("did you mean `>=`?"), "{stderr}");
}

#[test]
fn unfit_input_gets_a_refusal_not_a_verdict() {
    // the same program: frame pointers cut 63 % of the stacks inside glibc, DWARF none
    let fp = fixture_arg("perf/c-malloc.perf.perf-script.txt.gz");
    let dwarf = fixture_arg("perf/c-malloc.perf-dwarf.perf-script.txt.gz");
    // the cut-short weight is a bound (issue 54): 36.8 % measured, 63.1 % cut short in
    // glibc whose callers could be anybody's, so the share lies in [35.4, 100]: at 50 % that
    // could flip the verdict, and the gate refuses saying so...
    let refusal = whose_err(&["gate", &fp, "--require", "category:user.owner >= 50%"]);
    assert!(
        refusal.contains("could flip the verdict")
            && refusal.contains("the share lies in [35.10–100.00%]")
            && refusal.contains(
                "63.1% of its weight is in stacks cut short (only transparent frames, no \
                 thread root; --max-ownerless 5%)"
            )
            && refusal.contains("record with `--call-graph dwarf` (or `lbr`)"),
        "{refusal}"
    );
    // ...while at 25 % it holds whoever that weight belongs to: a verdict, with default
    // guards, that says why
    let require = "category:user.owner >= 25%";
    let o = gate(std::slice::from_ref(&fp), &[require], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(
            "with 63.1% in stacks cut short (over --max-ownerless 5%) the share could be 0.00 \
             points lower or 63.15 higher: [35.10–100.00%] at both ends, so the verdict holds \
             whoever that weight belongs to"
        ),
        "{}",
        stdout(&o)
    );
    // the self view does not depend on callers: a verdict (churn, the recorded executable,
    // is guessed as the program's own code: 25.6% of the leaves, as the hand rules say)
    let o = gate(
        std::slice::from_ref(&fp),
        &["category:user.self >= 1%"],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // accepted explicitly, the owner view gets its verdict without bounds: 36.8%, the hand
    // rules' 36.83%
    let o = gate(
        std::slice::from_ref(&fp),
        &["category:user.owner >= 30%"],
        &["--max-ownerless", "100%"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stdout(&o).contains("cut short"), "{}", stdout(&o));
    let o = gate(&[dwarf], &[require], &[]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));

    // no call chains: no owner or anywhere verdict
    let dir = tempfile::tempdir().unwrap();
    let flat = write_temp(dir.path(), "flat.folded", "work 5\nmemcpy 3\n");
    let flat = flat.to_str().unwrap();
    let refusal = whose_err(&["gate", flat, "--require", "unclassified.anywhere >= 1%"]);
    assert!(refusal.contains("it has no call chains"), "{refusal}");
    let o = gate(&[flat.to_string()], &["unclassified.self >= 1%"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // a JVM recording without its perf map: Java frames unresolved
    let run = super::hermetic::Hermetic::new();
    let root = run.root().to_str().unwrap().to_string();
    let data = fixture_arg("perf/jvm-shop.perf.data");
    let kallsyms = fixture_arg("perf/jvm-shop.kallsyms");
    let out = run.whose(&[
        "gate",
        &data,
        "--symfs",
        &root,
        "--kallsyms",
        &kallsyms,
        "--require",
        "category:kernel.self <= 60%",
    ]);
    let text = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains(
            "38.4% of its weight is decided by addresses without a symbol \
                       (--max-unresolved 5%)"
        ),
        "{text}"
    );
    // a guard takes a percentage, by the threshold's rule
    let refusal = whose_err(&[
        "gate",
        flat,
        "--require",
        "unclassified.self >= 1%",
        "--max-unresolved",
        "5",
    ]);
    assert!(
        refusal.contains("--max-unresolved 5: `5` has no `%`"),
        "{refusal}"
    );
}

#[test]
fn the_json_verdict_is_written_on_exit_2_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let verdict = dir.path().join("verdict.json");
    let fp = fixture_arg("perf/c-malloc.perf.perf-script.txt.gz");
    let o = gate(
        &[fp],
        &["category:user.owner >= 50%"],
        &["--format", "json", "-o", verdict.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&verdict).unwrap()).unwrap();
    assert_eq!(v["schema"], "whose-gate/2");
    assert_eq!(
        (v["verdict"].as_str(), v["status"].as_str()),
        (Some("error"), Some("error"))
    );
    let reason = v["reason"].as_str().unwrap();
    assert!(reason.contains("could flip the verdict"), "{reason}");
    assert!(stderr(&o).contains(reason), "{}", stderr(&o));
    // a verdict carries its status too
    let (code, v) = gate_json(&py_args(), &["unclassified.self <= 100%"], &[]);
    assert_eq!((code, v["status"].as_str()), (Some(0), Some("pass")));
}

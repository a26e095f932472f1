//! Verdicts that know their sampling error (issue 25): the gate says inconclusive when the
//! samples cannot decide, and `diff` calls a change only what is significant, with the false
//! discoveries across its rows controlled. The statistical tests are deterministic (a fixed
//! seed) and draw from real recordings: the three `fixtures/repeats/churn-*.folded` slices of
//! one perf recording of `churn` (1462, 1507 and 1492 samples).

use super::common::*;
use serde_json::Value;
use std::path::Path;

/// splitmix64: a small seeded generator, so every run draws the same samples.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn coin(&mut self) -> bool {
        self.next() >> 63 == 1
    }
}

/// A folded file as (stack, count) lines.
fn folded(rel: &str) -> Vec<(String, u64)> {
    std::fs::read_to_string(fixture(rel))
        .unwrap()
        .lines()
        .map(|l| {
            let (s, c) = l.rsplit_once(' ').unwrap();
            (s.to_string(), c.parse().unwrap())
        })
        .collect()
}

/// One entry per sample: the index of its stack.
fn samples(stacks: &[(String, u64)]) -> Vec<usize> {
    stacks
        .iter()
        .enumerate()
        .flat_map(|(i, (_, c))| std::iter::repeat_n(i, *c as usize))
        .collect()
}

/// Writes the samples `picked` (stack indices) as a folded file.
fn write_folded(dir: &Path, name: &str, stacks: &[(String, u64)], picked: &[usize]) -> String {
    let mut counts = vec![0u64; stacks.len()];
    for &i in picked {
        counts[i] += 1;
    }
    let mut text = String::new();
    for ((s, _), c) in stacks.iter().zip(counts) {
        if c > 0 {
            text.push_str(&format!("{s} {c}\n"));
        }
    }
    write_temp(dir, name, text).to_str().unwrap().to_string()
}

fn rules() -> String {
    fixture_arg("rules/c-malloc-sym.toml")
}

fn diff_json(base: &[String], new: &[String]) -> Value {
    diff_json_with(base, new, &rules())
}

fn diff_json_with(base: &[String], new: &[String], rules: &str) -> Value {
    let mut a: Vec<&str> = vec!["diff"];
    a.extend(base.iter().map(String::as_str));
    a.push("--against");
    a.extend(new.iter().map(String::as_str));
    a.extend(["--rules", rules, "--no-presets", "--format", "json"]);
    serde_json::from_str(&whose_ok(&a)).unwrap()
}

fn changes(v: &Value) -> (usize, usize) {
    let rows = v["rows"].as_array().unwrap();

    let changed = rows.iter().filter(|r| r["judgement"] == "change").count();
    (changed, rows.len())
}

/// The three slices' stacks in one list (the same stacks recur; each keeps its own line).
fn churn() -> Vec<(String, u64)> {
    (1..=3)
        .flat_map(|i| folded(&format!("repeats/churn-{i}.folded")))
        .collect()
}

/// Whether a churn stack is owned by `user` in the owner view: in c-malloc-sym.toml `user`
/// is the only non-transparent owner, so it owns a stack iff one of its frames is a user
/// frame (the rule `diff_against_doubled_user_stacks_grows_exactly_user` checks too).
fn user_owned(stack: &str) -> bool {
    let text = std::fs::read_to_string(fixture("rules/c-malloc-sym.toml")).unwrap();
    let doc: toml::Value = toml::from_str(&text).unwrap();
    let prefixes = |owner: &str| -> Vec<String> {
        doc["owner"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["name"].as_str() == Some(owner))
            .flat_map(|o| o["prefix"].as_array().unwrap().clone())
            .map(|p| p.as_str().unwrap().to_string())
            .collect()
    };
    let (user, allocator) = (prefixes("user"), prefixes("allocator"));
    stack.split(';').any(|f| {
        !allocator.iter().any(|p| f.starts_with(p.as_str()))
            && user.iter().any(|p| f.starts_with(p.as_str()))
    })
}

#[test]
fn a_a_halves_of_real_recordings_rarely_show_a_change() {
    // 200 pairs: each churn slice split sample by sample into two halves by a fair coin,
    // plus the slices against each other (repeated recordings of one program). At the 95 %
    // level a row may be a false change in at most 5 % of the rows; the false-discovery
    // control keeps it far below.
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(25);
    let (mut changed, mut rows) = (0, 0);
    for pair in 0..200 {
        let stacks = folded(&format!("repeats/churn-{}.folded", pair % 3 + 1));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for s in samples(&stacks) {
            if rng.coin() { a.push(s) } else { b.push(s) }
        }
        let a = write_folded(dir.path(), "a.folded", &stacks, &a);
        let b = write_folded(dir.path(), "b.folded", &stacks, &b);
        let (c, n) = changes(&diff_json(&[a], &[b]));
        changed += c;
        rows += n;
    }
    for (x, y) in [(1, 2), (1, 3), (2, 3)] {
        let f = |i| fixture_arg(&format!("repeats/churn-{i}.folded"));
        let (c, n) = changes(&diff_json(&[f(x)], &[f(y)]));
        changed += c;
        rows += n;
    }
    let rate = changed as f64 / rows as f64;
    eprintln!(
        "A/A: {changed} of {rows} owner rows called a change ({:.2}%)",
        rate * 100.0
    );
    assert!(rows >= 2000, "{rows}");
    assert!(rate <= 0.05, "{changed} of {rows} rows");
}

/// Rules for py-app that make `app.parse_events` an owner of its own (10.4 % of the owner
/// view): `parse` and `app` are not transparent, everything else is (`stdlib`), so a stack's
/// owner is decided by its first `app.` or `main.` frame from the leaf.
const PARSE_RULES: &str = r#"
[[owner]]
name = "parse"
category = "user"
prefix = ["app.parse_events"]

[[owner]]
name = "app"
category = "user"
prefix = ["app.", "main."]

[[owner]]
name = "stdlib"
category = "library"
transparent = true
regex = ['.']
"#;

/// Whether `parse` owns a py-app stack (root first, py-spy's `NAME (FILE:LINE)` frames, which
/// whose names `MODULE.NAME`: `parse_events (app.py:27)` is `app.parse_events`) in the owner
/// view, by the rule above.
fn parse_owned(stack: &str) -> bool {
    stack
        .split(';')
        .rev()
        .find(|f| f.contains(" (app.py:") || f.contains(" (main.py:"))
        .is_some_and(|f| f.starts_with("parse_events (app.py:"))
}

#[test]
fn a_two_point_shift_in_five_repeats_of_2000_samples_is_found() {
    // base: 5 draws of 2000 samples from the py-spy recording of py-app (1999 samples);
    // new: 5 draws from it with `parse`'s owner-view samples weighted by f, chosen so that
    // its owner share moves by +2 points: p' = f·p / (f·p + 1 − p) = p + 0.02.
    let stacks = folded("folded/py-app.folded");
    let all = samples(&stacks);
    let owned: Vec<bool> = stacks.iter().map(|(s, _)| parse_owned(s)).collect();
    let n_owned = all.iter().filter(|&&i| owned[i]).count();
    assert_eq!(
        (n_owned, all.len()),
        (207, 1999),
        "app.parse_events owns 10.36 %"
    );
    let p = n_owned as f64 / all.len() as f64;
    let target = p + 0.02;
    let f = target * (1.0 - p) / (p * (1.0 - target));
    let weights: Vec<f64> = all
        .iter()
        .map(|&i| if owned[i] { f } else { 1.0 })
        .collect();
    let total: f64 = weights.iter().sum();
    let shifted_share: f64 = all
        .iter()
        .zip(&weights)
        .filter(|(i, _)| owned[**i])
        .map(|(_, w)| w)
        .sum::<f64>()
        / total;
    assert!((shifted_share - target).abs() < 1e-12);
    let cumulative: Vec<f64> = weights
        .iter()
        .scan(0.0, |acc, w| {
            *acc += w;
            Some(*acc)
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let rules = write_temp(dir.path(), "parse.toml", PARSE_RULES);
    let rules = rules.to_str().unwrap();
    let mut rng = Rng(2025);
    let (trials, mut found) = (40, 0);
    for trial in 0..trials {
        let mut base = Vec::new();
        let mut new = Vec::new();
        for r in 0..5 {
            let plain: Vec<usize> = (0..2000).map(|_| all[rng.below(all.len())]).collect();
            base.push(write_folded(
                dir.path(),
                &format!("b{trial}-{r}.folded"),
                &stacks,
                &plain,
            ));
            let shifted: Vec<usize> = (0..2000)
                .map(|_| {
                    let x = (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * total;
                    all[cumulative.partition_point(|&c| c <= x).min(all.len() - 1)]
                })
                .collect();
            new.push(write_folded(
                dir.path(),
                &format!("n{trial}-{r}.folded"),
                &stacks,
                &shifted,
            ));
        }
        let v = diff_json_with(&base, &new, rules);
        let row = v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "parse" && r["view"] == "owner")
            .unwrap();
        if row["judgement"] == "change" && row["share"]["delta"].as_f64().unwrap() > 0.0 {
            found += 1;
        }
    }
    eprintln!(
        "power: parse.owner {:.2}% → {:.2}% found in {found} of {trials} trials",
        p * 100.0,
        target * 100.0
    );
    assert!(found as f64 >= 0.9 * trials as f64, "{found} of {trials}");
}

/// `app.work` (user by `--user app.`) and `libx.parse` (unclassified, not transparent)
/// stacks with the given sample counts.
fn hand_made(dir: &Path, name: &str, user: u64, other: u64) -> String {
    let text = format!("app.main;app.work {user}\napp.main;libx.parse {other}\n");
    write_temp(dir, name, text).to_str().unwrap().to_string()
}

fn gate(input: &str, require: &str, extra: &[&str]) -> (Option<i32>, String) {
    let mut a = vec![
        "gate",
        input,
        "--no-presets",
        "--user",
        "app.",
        // libx stands for any owner but user code: its being unclassified is not the point
        "--max-unclassified",
        "100%",
        "--require",
        require,
    ];
    a.extend(extra);
    let o = whose(&a);
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).to_string(),
    )
}

#[test]
fn a_26_percent_share_of_400_samples_is_inconclusive_and_of_20000_passes() {
    let dir = tempfile::tempdir().unwrap();
    // 104 of 400 = 26 %. Wilson at n = 400, z = 1.959964: centre (0.26 + z²/800)/(1 + z²/400)
    // = 0.262283, half-width z/(1 + z²/400)·√(0.26·0.74/400 + z²/640000) = 0.042841:
    // [21.94, 30.51] contains 25: inconclusive, exit 3. It would take
    // z²·0.26·0.74/0.01² = 7390.97 → 7391 samples at 26 % to decide.
    let small = hand_made(dir.path(), "small.folded", 104, 296);
    let (code, text) = gate(&small, "user.owner >= 25%", &[]);
    assert_eq!(code, Some(3), "{text}");
    assert!(
        text.contains(
            "INCONCLUSIVE  user.owner >= 25%: measured 26.00% [21.94–30.51%, 95%] (104 of 400, \
             400 samples, metric samples), threshold 25.00%; inconclusive: the 95% interval \
             contains 25.00%; about 7,391 samples (now 400) would decide it at 26.00%"
        ),
        "{text}"
    );
    assert!(
        text.contains("verdict: INCONCLUSIVE (0 of 1 requirements hold; all must)"),
        "{text}"
    );
    // 5200 of 20000 = 26 %: half-width 1.959964·√(0.26·0.74/20000) ≈ 0.608 points (Wilson's
    // centre moves by 0.0002): [25.39, 26.61] clears 25: pass
    let large = hand_made(dir.path(), "large.folded", 5200, 14800);
    let (code, text) = gate(&large, "user.owner >= 25%", &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("PASS  user.owner >= 25%: measured 26.00% [25.40–26.61%, 95%]"),
        "{text}"
    );
    // and against 27 % the interval is wholly below: fail, exit 1
    assert_eq!(gate(&large, "user.owner >= 27%", &[]).0, Some(1));
    // --point-estimate decides on 26 % alone, as the gate did before
    assert_eq!(
        gate(&small, "user.owner >= 25%", &["--point-estimate"]).0,
        Some(0)
    );
    // --confidence 50%: z = 0.674, half-width ≈ 1.48 points: [24.5, 27.5] still straddles;
    // at 99 % the large profile's interval ([25.2, 26.8]) still clears 25
    assert_eq!(
        gate(&small, "user.owner >= 25%", &["--confidence", "50%"]).0,
        Some(3)
    );
    assert_eq!(
        gate(&large, "user.owner >= 25%", &["--confidence", "99%"]).0,
        Some(0)
    );
    // the JSON says which, with the method and what would decide it
    let (code, json) = gate(&small, "user.owner >= 25%", &["--format", "json"]);
    assert_eq!(code, Some(3));
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["verdict"], "inconclusive");
    let r = &v["requirements"][0];
    assert_eq!(r["status"], "inconclusive");
    assert_eq!(r["method"], "wilson-ess");
    assert_eq!(r["confidence"].as_f64(), Some(0.95));
    assert_eq!(r["to_decide"]["samples"]["needed"].as_f64(), Some(7391.0));
    assert!(
        (r["interval"]["low"].as_f64().unwrap() - 21.944).abs() < 1e-3,
        "{r}"
    );
    assert!(
        (r["interval"]["high"].as_f64().unwrap() - 30.512).abs() < 1e-3,
        "{r}"
    );
    assert_eq!(r["inputs"][0]["samples"].as_f64(), Some(400.0));
}

#[test]
fn subsamples_of_a_real_recording_decide_as_their_size_allows() {
    // user's owner share in the pooled churn recording is 1643 of 4461 samples = 36.83 %;
    // 400 samples drawn from it cannot tell `>= 35%` (half-width ≈ 4.7 points), 20,000 can
    // (≈ 0.67 points).
    let stacks = churn();
    let all = samples(&stacks);
    let owned = all.iter().filter(|&&i| user_owned(&stacks[i].0)).count();
    assert_eq!((owned, all.len()), (1643, 4461));
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(400);
    let rules = rules();
    let mut verdict = |n: usize| {
        let picked: Vec<usize> = (0..n).map(|_| all[rng.below(all.len())]).collect();
        let path = write_folded(dir.path(), &format!("sub{n}.folded"), &stacks, &picked);
        let o = whose(&[
            "gate",
            &path,
            "--rules",
            &rules,
            "--no-presets",
            "--max-ownerless",
            "100%",
            "--max-unresolved",
            "100%",
            "--require",
            "user.owner >= 35%",
            "--format",
            "json",
        ]);
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        (o.status.code(), v["requirements"][0].clone())
    };
    let (code, r) = verdict(400);
    assert_eq!(
        (code, r["status"].as_str()),
        (Some(3), Some("inconclusive")),
        "{r}"
    );
    let (code, r) = verdict(20_000);
    assert_eq!((code, r["status"].as_str()), (Some(0), Some("pass")), "{r}");
}

#[test]
fn report_json_carries_each_shares_interval() {
    // 104 of 400 samples: the owner view's interval is the gate's, [21.94, 30.51]
    let dir = tempfile::tempdir().unwrap();
    let small = hand_made(dir.path(), "small.folded", 104, 296);
    let v = report_json(&[&small, "--no-presets", "--user", "app."]);
    let input = &v["inputs"][0];
    assert_eq!(input["sampling"]["samples"].as_f64(), Some(400.0));
    assert_eq!(input["sampling"]["counted"], true);
    let user = input["owners"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "user")
        .unwrap();
    let i = &user["intervals"];
    assert_eq!(i["method"], "wilson-ess");
    assert_eq!(i["confidence"].as_f64(), Some(0.95));
    assert!(
        (i["owner"][0].as_f64().unwrap() - 21.944).abs() < 1e-3,
        "{i}"
    );
    assert!(
        (i["owner"][1].as_f64().unwrap() - 30.512).abs() < 1e-3,
        "{i}"
    );
}

#[test]
fn report_ci_shows_each_share_with_its_interval_in_80_columns() {
    // the 400-sample profile above: user self and owner 26% [21.94, 30.51] by hand (Wilson,
    // z = 1.959964); anywhere 100% (`app.main` is on every stack), whose Wilson lower bound is
    // n / (n + z²) = 400 / 403.84 = 99.05%
    let dir = tempfile::tempdir().unwrap();
    let small = hand_made(dir.path(), "small.folded", 104, 296);
    let args = ["report", &small, "--no-presets", "--user", "app.", "--ci"];
    let table = whose_ok(&args);
    let user = table
        .lines()
        .find(|l| l.trim_start().starts_with("user "))
        .unwrap_or_else(|| panic!("{table}"));
    assert_eq!(
        user.split_whitespace().collect::<Vec<_>>(),
        [
            "user",
            "user",
            "26.0",
            "[21.9–30.5]",
            "26.0",
            "[21.9–30.5]",
            "100.0",
            "[99.0–100.0]"
        ],
        "{table}"
    );
    // the share table (owner, category, three views) fits 80 columns
    let out = command().env("COLUMNS", "80").args(args).output().unwrap();
    let narrow = ok_stdout(&args, out);
    let rows = narrow
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("owner "))
        .take_while(|l| !l.trim().is_empty());
    assert!(rows.clone().count() >= 3, "{narrow}");
    for row in rows {
        assert!(row.chars().count() <= 80, "{row}");
    }
    assert!(table.contains("(percent: share [95% interval] from the sample counts"));
    // CSV gains low and high; without --ci it keeps its columns
    let mut csv_args = args.to_vec();
    csv_args.extend(["--format", "csv"]);
    let csv = whose_ok(&csv_args);
    assert!(csv.starts_with(
        "input,owner,category,transparent,view,weight,total,share,guessed,low,high\n"
    ));
    let row = csv
        .lines()
        .find(|l| l.contains(",user,user,false,owner,"))
        .unwrap();
    let fields: Vec<f64> = row
        .rsplit(',')
        .take(2)
        .map(|f| f.parse().unwrap())
        .collect();
    assert!(
        (fields[1] - 21.944).abs() < 1e-3 && (fields[0] - 30.512).abs() < 1e-3,
        "{row}"
    );
    let plain = whose_ok(&[
        "report",
        &small,
        "--no-presets",
        "--user",
        "app.",
        "--format",
        "csv",
    ]);
    assert!(
        plain.starts_with("input,owner,category,transparent,view,weight,total,share,guessed\n")
    );
    // repeats at 26, 28 and 30% of 2,000 samples: mean 28, sd 2, t(0.975, 2) = 4.3027, half
    // width 4.3027 · 2 / √3 = 4.968 (above one repeat's own sampling error of about 1 point):
    // [23.0, 33.0]
    let repeats: Vec<String> = [520, 560, 600]
        .iter()
        .enumerate()
        .map(|(i, &u)| hand_made(dir.path(), &format!("r{i}.folded"), u, 2000 - u))
        .collect();
    let mut rargs = vec![
        "report",
        "--repeats",
        "--no-presets",
        "--user",
        "app.",
        "--ci",
    ];
    rargs.extend(repeats.iter().map(String::as_str));
    let table = whose_ok(&rargs);
    let user = table
        .lines()
        .find(|l| l.trim_start().starts_with("user "))
        .unwrap();
    assert!(user.contains("28.0 [23.0–33.0]"), "{table}");
    assert!(table.contains("(percent: mean [95% t interval] of the shares over 3 repeats)"));
}

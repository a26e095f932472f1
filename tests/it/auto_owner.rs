//! Auto-owners (issue 29 item 2): frames no rule names but that belong to a third-party unit
//! (a Rust crate, a Java package under its vendor, a site-packages package, an npm package, a
//! Go module, a shared library) get an owner named after it, marked as guessed, instead of
//! `unclassified`; `--no-guess` turns every guess off. Shares are checked against counts made
//! from the fixtures' text without whose.

use super::common::*;
use serde_json::Value;

const PACKSUM_FP: &str = "perf/packsum.perf-fp.perf-script.txt.gz";

/// (self, owner) weights of `owner` in input 0, and whether its row says it is guessed.
fn owner_row(json: &Value, owner: &str) -> Option<(u64, u64, bool)> {
    json["inputs"][0]["owners"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == owner)
        .map(|o| {
            (
                o["self"].as_u64().unwrap(),
                o["owner"].as_u64().unwrap(),
                o["guessed"] == true,
            )
        })
}

fn guessed_names(json: &Value) -> Vec<String> {
    json["owners_guessed"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|g| g["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_rust_programs_dependencies_become_owners_named_after_their_crates() {
    // packsum (fixtures/src/packsum) recorded with -g: 718 samples. Counted from the dump by
    // a short Python loop (each sample's leaf-most frame outside the kernel, libc and
    // std/core/alloc, named by its crate): miniz_oxide 624, packsum 57 (+6 under
    // `<usize as core::...>` frames, which whose looks through to packsum), flate2 8, sha2 7,
    // 16 in stacks of transparent frames only. Before auto-owners the 639 samples of the
    // three crates were `unclassified` (89.0% of the owner view).
    let dump = fixture_arg(PACKSUM_FP);
    let json = report_json(&[&dump, "--metric", "samples"]);
    let (shares, total) = shares_of(&json);
    assert_eq!(total, 718);
    assert_eq!(owner_row(&json, "miniz_oxide"), Some((607, 624, true)));
    assert_eq!(owner_row(&json, "flate2"), Some((0, 8, true)));
    assert_eq!(owner_row(&json, "sha2"), Some((7, 7, true)));
    assert_eq!(owner_row(&json, "user"), Some((46, 63, false)));
    assert!(!shares.contains_key("unclassified"), "{shares:?}");
    let mut names = guessed_names(&json);
    names.sort();
    assert_eq!(names, ["flate2", "miniz_oxide", "sha2"]);
    assert!(
        json["owners_guessed"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["unit"] == "rust-crate"),
        "{json}"
    );
    // the table marks them and says how to turn the guess off
    let table = whose_ok(&["report", &dump]);
    let flat = table.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "owners guessed from their unit: miniz_oxide, sha2, flate2 (rust crates); \
             --no-guess turns guesses off, a --rules file that names them overrides"
        ),
        "{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("  miniz_oxide~  library")),
        "{table}"
    );
    assert!(
        table.contains("(~ guessed: named after its crate, package, module or library)"),
        "{table}"
    );
}

#[test]
fn no_guess_turns_off_the_owners_and_the_programs_own_code() {
    // the same 718 samples: without guesses neither `user` (packsum's crate) nor the crates'
    // owners exist; all 702 samples with a non-transparent frame are unclassified
    let dump = fixture_arg(PACKSUM_FP);
    let json = report_json(&[&dump, "--metric", "samples", "--no-guess"]);
    assert_eq!(json["guesses_off"], true);
    assert!(guessed_names(&json).is_empty());
    assert!(
        json["user_code_guessed"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "{json}"
    );
    assert_eq!(owner_row(&json, "unclassified"), Some((660, 702, false)));
    assert_eq!(owner_row(&json, "miniz_oxide"), None);
    assert_eq!(owner_row(&json, "user"), None);
    let table = whose_ok(&["report", &dump, "--no-guess"]);
    assert!(table.contains("\nguesses: off (--no-guess)\n"), "{table}");
    assert!(!table.contains('~'), "{table}");
    // every command that classifies takes it
    let explain = whose_ok(&["explain", &dump, "--no-guess"]);
    assert!(explain.contains("guesses: off (--no-guess)"), "{explain}");
    assert!(!explain.contains("guessed "), "{explain}");
}

#[test]
fn rules_and_user_prefixes_win_over_a_guess() {
    let dir = tempfile::tempdir().unwrap();
    let dump = fixture_arg(PACKSUM_FP);
    let rules = write_temp(
        dir.path(),
        "deflate.toml",
        "[[owner]]\nname = \"deflate\"\ncategory = \"library\"\ncrate = [\"miniz_oxide\"]\n",
    );
    let json = report_json(&[
        &dump,
        "--metric",
        "samples",
        "--rules",
        rules.to_str().unwrap(),
    ]);
    assert_eq!(owner_row(&json, "deflate"), Some((607, 624, false)));
    assert_eq!(owner_row(&json, "miniz_oxide"), None);
    // the crates no rule names are still guessed
    let mut names = guessed_names(&json);
    names.sort();
    assert_eq!(names, ["flate2", "sha2"]);
    // `--user` takes sha2's 7 samples into the user owner
    let json = report_json(&[&dump, "--metric", "samples", "--user", "sha2::"]);
    assert_eq!(owner_row(&json, "user"), Some((53, 70, false)));
    assert_eq!(owner_row(&json, "sha2"), None);
}

#[test]
fn explain_names_the_unit_a_guessed_owner_comes_from() {
    let dump = fixture_arg(PACKSUM_FP);
    let explain = whose_ok(&["explain", &dump, "--top", "8"]);
    assert!(
        explain.lines().any(|l| l.contains("miniz_oxide~")
            && l.contains("guessed crate")
            && l.contains("compress_inner")),
        "{explain}"
    );
    assert!(
        explain.contains("  miniz_oxide~  guessed: rust crate miniz_oxide (no rule names it)"),
        "{explain}"
    );
    assert!(
        explain.contains("owners guessed from their unit: flate2, miniz_oxide, sha2"),
        "{explain}"
    );
}

#[test]
fn the_other_formats_mark_guessed_owners() {
    let dump = fixture_arg(PACKSUM_FP);
    let csv = whose_ok(&["report", &dump, "--metric", "samples", "--format", "csv"]);
    assert!(
        csv.lines().any(
            |l| l.contains(",miniz_oxide,library,false,owner,624,718,") && l.ends_with(",true")
        ),
        "{csv}"
    );
    assert!(
        csv.lines()
            .any(|l| l.contains(",user,user,false,owner,63,718,") && l.ends_with(",false")),
        "{csv}"
    );
    let md = whose_ok(&[
        "report", &dump, "--metric", "samples", "--format", "markdown",
    ]);
    assert!(
        md.contains("| miniz_oxide (guessed) | library | 84.5% |"),
        "{md}"
    );
}

#[test]
fn kotlin_reflect_is_guessed_under_its_vendor_prefix_without_the_kotlin_preset() {
    // seed-ktor-alloc: every allocating stack passes through kotlin.reflect.jvm.internal.*,
    // which owns 100% of the owner view under the kotlin preset's `kotlin-reflect`. With the
    // jvm preset alone no rule names those frames: the guess names the same owner view
    // `kotlin.reflect`, and io.ktor's and kotlinx.coroutines's frames get owners of theirs
    let seed = fixture_arg("folded/seed-ktor-alloc.txt");
    let (with_preset, total) = report_shares(&[&seed, "--unit", "bytes"]);
    let json = report_json(&[&seed, "--unit", "bytes", "--preset", "jvm"]);
    let (guessed, _) = shares_of(&json);
    assert_eq!(
        guessed["kotlin.reflect"], with_preset["kotlin-reflect"],
        "{guessed:?} / {with_preset:?}"
    );
    assert!((guessed["kotlin.reflect"][OWNER] - 100.0).abs() < 1e-9);
    assert!(total > 0);
    let names = guessed_names(&json);
    for unit in ["kotlin.reflect", "io.ktor", "kotlinx.coroutines"] {
        assert!(names.iter().any(|n| n == unit), "{names:?}");
    }
    // the service's own `bench.` package is no third party's: it stays unclassified, for
    // the program's own-code guess or `--user bench.`
    assert!(!names.iter().any(|n| n.starts_with("bench")), "{names:?}");
    let default = report_json(&[&seed, "--unit", "bytes"]);
    assert!(guessed_names(&default).is_empty(), "{default}");
    // ... and `bench.` is the program's own code, guessed from its Kotlin `MainKt`
    assert!(owner_row(&default, "unclassified").is_none(), "{default}");
    assert!(owner_row(&default, "user").is_some(), "{default}");
}

#[test]
fn site_packages_are_split_by_package() {
    // fixtures/folded/site-packages.folded, by hand: 100 samples; simplejson owns its 30,
    // requests the 20 of a stdlib json.loads it calls (the stdlib is transparent), six 5,
    // the app's own tally 45 (python-packages used to own all 55 as one)
    let file = fixture_arg("folded/site-packages.folded");
    let json = report_json(&[&file]);
    assert_eq!(owner_row(&json, "simplejson"), Some((30, 30, true)));
    assert_eq!(owner_row(&json, "requests"), Some((0, 20, true)));
    assert_eq!(owner_row(&json, "six"), Some((5, 5, true)));
    assert_eq!(owner_row(&json, "python-packages"), None);
    assert_eq!(
        json["owners_guessed"][0]["unit"], "python-package",
        "{json}"
    );
    // without guesses the preset's umbrella owner has them all again
    let json = report_json(&[&file, "--no-guess"]);
    assert_eq!(owner_row(&json, "python-packages"), Some((35, 55, false)));
    // a user's rule named like the umbrella is kept as written
    let dir = tempfile::tempdir().unwrap();
    let rules = write_temp(
        dir.path(),
        "deps.toml",
        "[[owner]]\nname = \"python-packages\"\ncategory = \"library\"\nfile = [\"*/site-packages/*\"]\n",
    );
    let json = report_json(&[&file, "--rules", rules.to_str().unwrap()]);
    assert_eq!(owner_row(&json, "python-packages"), Some((35, 55, false)));
    assert!(guessed_names(&json).is_empty(), "{json}");
}

#[test]
fn npm_packages_are_named_after_the_last_node_modules() {
    // fixtures/folded/node-modules.folded (JavaScript frames named as node's perf map names
    // them, `JS:*handle /srv/api/node_modules/express/...js:95`), by hand: 100 samples;
    // @fastify/busboy's parse is
    // a leaf of 25, ejs (installed by pnpm) 15, express calls back into the app's render (40)
    // so owns nothing in the owner view but 65 anywhere; the app's own 60 (server.js and
    // routes/page.js) are its own scripts: the JavaScript files select the node preset, and
    // the guess of the program's scripts claims them
    let file = fixture_arg("folded/node-modules.folded");
    let json = report_json(&[&file]);
    let (shares, _) = shares_of(&json);
    assert_eq!(owner_row(&json, "@fastify/busboy"), Some((25, 25, true)));
    assert_eq!(owner_row(&json, "ejs"), Some((15, 15, true)));
    // express is a framework the node preset names (issue 53), not a guess
    assert_eq!(owner_row(&json, "express"), Some((0, 0, false)));
    assert!(
        (shares["express"][ANYWHERE] - 65.0).abs() < 1e-9,
        "{shares:?}"
    );
    assert_eq!(owner_row(&json, "user"), Some((60, 60, false)));
    assert_eq!(owner_row(&json, "unclassified").map(|r| r.1), Some(0));
    assert!(json["presets"].to_string().contains("node"), "{json}");
}

#[test]
fn a_go_profile_is_unchanged() {
    // the Go fixture's own module is guessed as user code and the presets name the rest:
    // no frame is left for a guessed owner, and the shares are those of --no-guess plus
    // the module's user owner
    let cpu = fixture_arg("pprof/cpu.pb.gz");
    let json = report_json(&[&cpu]);
    assert!(guessed_names(&json).is_empty(), "{json}");
    assert!(!json.to_string().contains("\"guessed\":true"), "{json}");
    let (shares, _) = shares_of(&json);
    let (off, _) = report_shares(&[&cpu, "--no-guess"]);
    for (name, s) in &shares {
        if name != "user" {
            let o = off.get(name).copied().unwrap_or([0.0; 3]);
            assert!((s[SELF] - o[SELF]).abs() < 1e-9, "{name}: {s:?} / {o:?}");
        }
    }
}

#[test]
fn each_input_of_a_fleet_gets_its_own_guessed_owners() {
    // `report --each` shares compiled rule sets between inputs; the guessed owners differ
    // per input and must be what `whose report FILE` gives each
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture(PACKSUM_FP),
        dir.path().join("packsum.perf-fp.perf-script.txt.gz"),
    )
    .unwrap();
    std::fs::copy(
        fixture("folded/site-packages.folded"),
        dir.path().join("site-packages.folded"),
    )
    .unwrap();
    let rows = whose_ok(&[
        "report",
        "--each",
        dir.path().to_str().unwrap(),
        "--views",
        "owner",
        "--format",
        "ndjson",
        "--metric",
        "samples",
    ]);
    let row = |input: &str, owner: &str| -> Option<Value> {
        rows.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|r| r["path"].as_str().is_some_and(|i| i.ends_with(input)) && r["owner"] == owner)
    };
    let miniz = row("packsum.perf-fp.perf-script.txt.gz", "miniz_oxide").expect(&rows);
    assert_eq!(
        (&miniz["weight"], &miniz["total"]),
        (&624.into(), &718.into())
    );
    assert_eq!(miniz["guessed"], true, "{miniz}");
    let user = row("packsum.perf-fp.perf-script.txt.gz", "user").expect(&rows);
    assert_eq!(user["guessed"], false, "{user}");
    assert!(
        row("site-packages.folded", "simplejson").is_some(),
        "{rows}"
    );
    // one input's units are not another's owners
    assert!(
        row("site-packages.folded", "miniz_oxide").is_none(),
        "{rows}"
    );
    assert!(
        row("packsum.perf-fp.perf-script.txt.gz", "simplejson").is_none(),
        "{rows}"
    );
}

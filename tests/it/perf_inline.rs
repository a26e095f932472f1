//! Issue 29 part C: inline frames by default wherever a perf.data recording has call chains
//! (frame pointers too), `--no-inline` for perf's own view, the header saying which; no Rust
//! crate guessed from stacks without call chains; and `explain --lines` showing file:line from
//! the binaries' line tables (issue 28 item 7).
//!
//! Hermetic: the perf.data runs go through `hermetic.rs`.

use super::common::*;
use super::hermetic::Hermetic;

/// Owner-view shares (percent) of the weight whose stacks reach a thread root, with no flags
/// but the symbol options, counting samples; and the notes. The fp recording's stacks through
/// glibc's malloc (built without frame pointers) are cut: 785 of its 4922 samples reach no
/// root, and the owner view gives them to the allocator (the quality line says so), which no
/// inline frame changes; the DWARF recording unwinds through malloc. So the views are compared
/// on the stacks both recordings have whole.
fn rooted_owner_view(run: &Hermetic, data: &str, extra: &[&str]) -> (Shares, Vec<String>) {
    let mut args = vec!["--metric", "samples"];
    args.extend_from_slice(extra);
    let (json, _) = run.report(&fixture(&format!("perf/{data}")), &args);
    let input = &json["inputs"][0];
    let rooted = input["total"].as_f64().unwrap() - input["quality"]["ownerless"].as_f64().unwrap();
    let mut shares = Shares::new();
    for o in input["owners"].as_array().unwrap() {
        let transparent = ["runtime", "allocator", "gc", "kernel", "unknown"]
            .contains(&o["category"].as_str().unwrap());
        if !transparent {
            let w = o["owner"].as_f64().unwrap() * 100.0 / rooted;
            shares.insert(o["name"].as_str().unwrap().to_string(), [0.0, w, 0.0]);
        }
    }
    (shares, notes(&json))
}

#[test]
fn fp_and_dwarf_recordings_of_one_rust_binary_give_one_owner_view_by_default() {
    // logcrunch recorded twice, `-g` (4922 samples) and `--call-graph dwarf` (1451). By
    // default now (inline frames from logcrunch's DWARF): user 50.45% vs 51.05%, serde
    // 19.02 vs 20.46, regex 30.53 vs 28.49. Before (fp without inline frames, as --no-inline
    // still gives): user 47.5%, 3.6 points off, as serde's derived visitors and std's
    // iterators inlined into logcrunch's code were charged to their callers.
    let run = Hermetic::with_recorded_glibc();
    let (fp, fp_notes) = rooted_owner_view(&run, "rust-native.perf-fp.data", &[]);
    let (dwarf, dwarf_notes) = rooted_owner_view(&run, "rust-native.perf-dwarf.data.gz", &[]);
    assert!(
        fp_notes
            .iter()
            .any(|n| n.starts_with("inline frames: on (the default with call chains;")),
        "{fp_notes:?}"
    );
    assert!(
        dwarf_notes
            .iter()
            .any(|n| n.starts_with("inline frames: on")),
        "{dwarf_notes:?}"
    );
    // the user share within 2 points; every owner within 2.5, since the DWARF recording's
    // 1451 samples alone carry a standard error of 1.2 points at 28% (regex)
    for owner in fp.keys().chain(dwarf.keys()) {
        let (a, b) = (
            fp.get(owner).map_or(0.0, |s| s[OWNER]),
            dwarf.get(owner).map_or(0.0, |s| s[OWNER]),
        );
        let within = if owner == "user" { 2.0 } else { 2.5 };
        assert!(
            (a - b).abs() <= within,
            "{owner}: fp {a:.2} vs dwarf {b:.2}\n{fp:?}\n{dwarf:?}"
        );
    }
    // and the corpus oracle on perf's DWARF dump (its inline frames,
    // `corpus/expected/rust-native.perf-dwarf.json`): user owner 49.83%
    assert!((fp["user"][OWNER] - 49.83).abs() <= 2.0, "{fp:?}");
    // --no-inline is perf's own view of the fp recording, and is the further off
    let (plain, plain_notes) =
        rooted_owner_view(&run, "rust-native.perf-fp.data", &["--no-inline"]);
    assert!(
        plain_notes
            .iter()
            .any(|n| n == "inline frames: off (--no-inline)")
    );
    assert!(
        (plain["user"][OWNER] - dwarf["user"][OWNER]).abs() > 3.0,
        "{plain:?} vs {dwarf:?}"
    );
}

#[test]
fn a_perf_script_dump_without_inline_frames_says_so() {
    let json = report_json(&[&fixture_arg("perf/rust-native.perf-fp.perf-script.txt.gz")]);
    let said = notes(&json);
    assert!(
        said.iter()
            .any(|n| n.starts_with("inline frames: none in this dump")),
        "{said:?}"
    );
    // the DWARF dump has perf's inline frames: nothing to say
    let json = report_json(&[&fixture_arg(
        "perf/rust-native.perf-dwarf.perf-script.txt.gz",
    )]);
    assert!(!notes(&json).iter().any(|n| n.starts_with("inline frames")));
}

#[test]
fn a_rust_recording_without_call_chains_guesses_no_crate_and_says_why() {
    // packsum recorded without -g (fixtures/src/packsum): 728 samples, 614 in
    // miniz_oxide::deflate::core::compress_inner (84.3%), 42 in packsum's own functions
    // (5.8%), counted from the dump by hand (fixtures/README.md). Before, whose guessed
    // "rust crate miniz_oxide" and called 84.3% user code.
    let dump = fixture_arg("perf/packsum.perf-nog.perf-script.txt.gz");
    let json = report_json(&[&dump, "--metric", "samples"]);
    let (shares, total) = shares_of(&json);
    assert_eq!(total, 728);
    assert!(!shares.contains_key("user"), "{shares:?}");
    assert!(
        json["user_code_guessed"]
            .as_array()
            .is_none_or(Vec::is_empty)
    );
    let declined = &json["user_code_not_guessed"][0];
    assert_eq!(
        (
            &declined["reason"],
            &declined["would_have_been"],
            &declined["weight"]
        ),
        // in the profile's default metric: 614 samples of 1001001 ns
        (
            &"no-call-chains".into(),
            &"miniz_oxide".into(),
            &614_614_614u64.into()
        ),
        "{json}"
    );
    let table = whose_ok(&["report", &dump, "--metric", "samples"]);
    let flat = table.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "user code not guessed: no rust crate from stacks without call chains, where the \
             outermost frame is only the sampled one (`miniz_oxide::` would have been taken, \
             84.3% of the weight"
        ),
        "{table}"
    );
    // the way out it names works: 42 of 728 samples
    let (shares, _) = report_shares(&[&dump, "--metric", "samples", "--user", "packsum::"]);
    assert!(
        (shares["user"][SELF] - 42.0 * 100.0 / 728.0).abs() < 1e-9,
        "{shares:?}"
    );
    // with call chains (the -g recording) the program's crate is found by `packsum::main`
    let fp = fixture_arg("perf/packsum.perf-fp.perf-script.txt.gz");
    let json = report_json(&[&fp]);
    assert_eq!(json["user_code_guessed"][0]["name"], "packsum", "{json}");
}

#[test]
fn explain_lines_on_perf_data_shows_file_and_line_from_the_binary() {
    // churn has DWARF line tables; the numbers are `perf report --no-children --sort
    // sym,srcline --dsos churn` of the same recording (perf 6.1, churn under --symfs):
    // table_put churn.c:30 386 samples, table_free churn.c:37 233, and churn.c:15 119, which
    // perf names by its physical function table_put and whose by the inlined `hash`.
    let run = Hermetic::new();
    let (out, _) = run.run_ok(
        &["explain", "--lines", "--metric", "samples", "--top", "40"],
        &fixture("perf/c-malloc.perf.data"),
        &[],
    );
    let row = |name: &str, line: &str| {
        out.lines()
            .find(|l| l.contains(name) && l.contains(line))
            .unwrap_or_else(|| panic!("no row {name} {line}:\n{out}"))
            .to_string()
    };
    // of the 4461 samples: 386 is 8.7%, 233 5.2%, 119 2.7% (explain's flat column)
    for (name, line, flat) in [
        ("table_put", "churn.c:30", "8.7%"),
        ("table_free", "churn.c:37", "5.2%"),
        ("hash", "churn.c:15", "2.7%"),
    ] {
        let r = row(name, line);
        assert_eq!(r.split_whitespace().nth(1), Some(flat), "{r}\n{out}");
    }
    // without --lines, one row per function and no line read
    let (out, _) = run.run_ok(
        &["explain", "--metric", "samples"],
        &fixture("perf/c-malloc.perf.data"),
        &[],
    );
    assert!(!out.contains("churn.c:30"), "{out}");
}

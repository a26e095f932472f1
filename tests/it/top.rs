//! `whose top OWNER|CATEGORY PROFILE` (issue 15): an owner's heaviest functions as
//! `go tool pprof -top` lists them, restricted to that owner.

use super::common::*;

/// `(flat%, sum%, cum%, function)` per row of the listing.
fn rows(out: &str) -> Vec<(String, String, String, String)> {
    out.lines()
        .skip_while(|l| !l.trim_start().starts_with("flat  flat%"))
        .skip(1)
        .take_while(|l| !l.contains(" functions by "))
        .map(|l| {
            let c: Vec<&str> = l.split_whitespace().collect();
            // flat may be `0 ns` (two words): read from the right of the percentages
            let n = c.iter().rposition(|w| w.ends_with('%')).unwrap();
            let cum_pct = c[n].to_string();
            let function = c[n + 1..].join(" ");
            let (flat_pct, sum_pct) = {
                let pcts: Vec<&&str> = c.iter().filter(|w| w.ends_with('%')).collect();
                (pcts[0].to_string(), pcts[1].to_string())
            };
            (flat_pct, sum_pct, cum_pct, function)
        })
        .collect()
}

#[test]
fn the_functions_of_user_match_pprof_and_add_up_to_its_self_view() {
    let cpu = fixture_arg("pprof/cpu.pb.gz");
    let out = whose_ok(&["top", "user", &cpu]);
    assert!(
        out.contains("owner user (user): self 270.00 ms (1.8%), owner 11.84 s (78.1%), anywhere 12.61 s (83.2%)"),
        "{out}"
    );
    let listed = rows(&out);
    assert_eq!(listed.len(), 8, "{out}");
    // pprof -top's order (flat, then cum) and its sum%
    assert_eq!(
        listed[0],
        (
            "0.46%".into(),
            "0.46%".into(),
            "13.13%".into(),
            "main.keywords (gosvc)".into()
        ),
        "{out}"
    );
    assert!(listed.iter().all(|r| r.3.starts_with("main.")), "{out}");
    // cum% is go tool pprof's, to its two decimals, for every main. function it lists
    let reference = std::fs::read_to_string(fixture("pprof/cpu.top-cum.txt")).unwrap();
    let mut compared = 0;
    for line in reference.lines().filter(|l| l.contains(" main.")) {
        let c: Vec<&str> = line.split_whitespace().collect();
        let name = c[5];
        let row = listed
            .iter()
            .find(|r| r.3 == format!("{name} (gosvc)"))
            .unwrap_or_else(|| panic!("{name} missing:\n{out}"));
        assert_eq!(row.2, c[4], "{name}:\n{out}");
        compared += 1;
    }
    assert!(compared >= 4, "{compared}");
    assert!(
        out.contains("8 of 8 functions by flat (--top N lists N in total, --cum sorts by cum); their flat adds up to 270.00 ms (1.8%), the self view"),
        "{out}"
    );
}

#[test]
fn top_n_is_n_in_total_and_cum_sorts_by_cum() {
    let cpu = fixture_arg("pprof/cpu.pb.gz");
    let out = whose_ok(&["top", "user", &cpu, "--top", "3", "--cum"]);
    let listed = rows(&out);
    let names: Vec<&str> = listed.iter().map(|r| r.3.as_str()).collect();
    assert_eq!(
        names,
        [
            "main.handleOrders (gosvc)",
            "main.summarize (gosvc)",
            "main.keywords (gosvc)"
        ],
        "{out}"
    );
    assert_eq!(listed[0].2, "83.18%");
    assert!(out.contains("3 of 8 functions by cum"), "{out}");
}

#[test]
fn a_category_lists_the_functions_of_all_its_owners() {
    let script = fixture_arg("perf/c-malloc.perf.perf-script.txt.gz");
    let out = whose_ok(&["top", "category:allocator", &script]);
    let listed = rows(&out);
    assert!(!listed.is_empty(), "{out}");
    assert!(
        listed.iter().all(|r| r.3.ends_with("[glibc-malloc]")),
        "each row names its owner:\n{out}"
    );
    // the flat of every function of the category adds up to the category's self view
    let header = out
        .lines()
        .find(|l| l.starts_with("category allocator: self "))
        .unwrap_or_else(|| panic!("{out}"));
    let self_view = header
        .split("self ")
        .nth(1)
        .unwrap()
        .split(", owner")
        .next()
        .unwrap();
    assert!(
        out.contains(&format!("their flat adds up to {self_view}, the self view")),
        "{out}"
    );
}

#[test]
fn an_unknown_owner_is_an_error_that_lists_the_owners() {
    let cpu = fixture_arg("pprof/cpu.pb.gz");
    let err = whose_err(&["top", "nobody", &cpu]);
    assert!(
        err.contains("top `nobody`: no owner or category `nobody`; owners with weight in these profiles: user, net-http"),
        "{err}"
    );
    let err = whose_err(&["top", "category:people", &cpu]);
    assert!(err.contains("unknown category `people`"), "{err}");
}

#[test]
fn report_top_n_is_n_in_total_in_every_frame_list() {
    // go-svc's CPU profile has self frames in six owners: per owner, --top 3 listed 18
    let cpu = fixture_arg("pprof/cpu.pb.gz");
    let json: serde_json::Value = serde_json::from_str(&whose_ok(&[
        "report", &cpu, "--format", "json", "--top", "3",
    ]))
    .unwrap();
    let input = &json["inputs"][0];
    for list in ["top_owner_frames", "top_self_frames"] {
        assert_eq!(input[list].as_array().unwrap().len(), 3, "{list}: {input}");
    }
    // the heaviest leaves of the whole profile, whatever their owner (pprof -top's first 3)
    let names: Vec<&str> = input["top_self_frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["frame"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "runtime/internal/syscall.Syscall6",
            "encoding/json.(*Decoder).readValue",
            "runtime.asyncPreempt"
        ]
    );
}

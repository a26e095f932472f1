//! pprof input on real Go profiles (`fixtures/pprof/`, from `shared/corpus/go-svc/`): shares
//! against the corpus oracle, per-function flat and cum values against the committed
//! `go tool pprof -top` text, and how frames come out of the reader.

use super::common::*;
use std::collections::HashMap;
use whose::Notice;
use whose::{FrameKind, Profile};
use whose::{ReadOptions, read_profile};

fn pprof(name: &str) -> String {
    fixture_arg(&format!("pprof/{name}"))
}

fn go_svc_shares(file: &str, metric: &str, expected: &str) {
    let rules = fixture("rules/go-svc.toml");
    let (got, total) = report_shares(&[
        &pprof(file),
        "--rules",
        rules.to_str().unwrap(),
        "--no-presets",
        "--metric",
        metric,
    ]);
    let (want, want_total) = expected_shares(expected);
    assert_eq!(total, want_total as u128, "total of {file} {metric}");
    assert_shares_agree(&got, &want, 0.01);
}

#[test]
fn go_cpu_shares_match_the_oracle() {
    go_svc_shares("cpu.pb.gz", "cpu", "go-svc.cpu.json");
}

#[test]
fn go_alloc_space_shares_match_the_oracle() {
    go_svc_shares(
        "allocs.pb.gz",
        "alloc_space",
        "go-svc.allocs.alloc_space.json",
    );
}

#[test]
fn go_alloc_objects_shares_match_the_oracle() {
    go_svc_shares(
        "allocs.pb.gz",
        "alloc_objects",
        "go-svc.allocs.alloc_objects.json",
    );
}

#[test]
fn go_inuse_space_shares_match_the_oracle() {
    go_svc_shares("heap.pb.gz", "inuse_space", "go-svc.heap.inuse_space.json");
}

#[test]
fn default_metric_is_default_sample_type_else_the_last() {
    // Go's allocs profile names alloc_space as its default; the heap profile names none, so
    // the last type (inuse_space) is the default, as pprof does.
    let allocs = read(&pprof("allocs.pb.gz"));
    let heap = read(&pprof("heap.pb.gz"));
    let cpu = read(&pprof("cpu.pb.gz"));
    let name = |p: &Profile| p.sample_types()[p.default_sample_type].name.clone();
    assert_eq!(name(&allocs), "alloc_space");
    assert_eq!(name(&heap), "inuse_space");
    assert_eq!(name(&cpu), "cpu");
    let types: Vec<String> = heap
        .sample_types()
        .iter()
        .map(|t| format!("{}/{}", t.name, t.unit))
        .collect();
    assert_eq!(
        types,
        [
            "alloc_objects/count",
            "alloc_space/bytes",
            "inuse_objects/count",
            "inuse_space/bytes"
        ]
    );
    let header = whose_ok(&["report", &pprof("heap.pb.gz"), "--no-presets"]);
    assert!(
        header.contains("metric inuse_space (bytes, default), total 1.38 MiB"),
        "{header}"
    );
}

fn read(path: &str) -> Profile {
    read_profile(std::path::Path::new(path), &ReadOptions::default()).expect("read profile")
}

/// pprof's per-function flat and cum (function granularity, cum counted once per sample).
fn flat_and_cum(profile: &Profile, metric: usize) -> HashMap<String, (u128, u128)> {
    let mut out: HashMap<String, (u128, u128)> = HashMap::new();
    for row in profile.rows() {
        let w = row.values[metric];
        let stack = profile.stack(row.stack);
        if let Some(&leaf) = stack.first() {
            out.entry(profile.frame(leaf).name.to_string())
                .or_default()
                .0 += w;
        }
        let mut seen: Vec<&str> = Vec::new();
        for &f in stack {
            let name = &*profile.frame(f).name;
            if !seen.contains(&name) {
                seen.push(name);
                out.entry(name.to_string()).or_default().1 += w;
            }
        }
    }
    out
}

/// The unit a `-top` text writes its values in (one for the whole report, pprof's
/// `-unit=minimum`) and how many base units it is.
fn unit_scale(suffix: &str) -> f64 {
    match suffix {
        "" | "ns" | "B" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "kB" => 1024.0,
        "MB" => 1024.0 * 1024.0,
        "GB" => 1024.0 * 1024.0 * 1024.0,
        other => panic!("unit {other} not handled by this test"),
    }
}

/// pprof's `measurement.ScaledLabel`: two decimals, `.00` trimmed, zero as `0`.
fn pprof_label(value: u128, suffix: &str) -> String {
    let v = format!("{:.2}", value as f64 / unit_scale(suffix));
    let v = v.strip_suffix(".00").unwrap_or(&v).to_string();
    if v == "0" { v } else { format!("{v}{suffix}") }
}

fn split_value(text: &str) -> (&str, &str) {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    (&text[..end], &text[end..])
}

/// Checks every row and the total of a committed `go tool pprof -top` text; returns how
/// many rows were compared.
fn check_top_text(profile_file: &str, top_file: &str) -> usize {
    let text = std::fs::read_to_string(fixture(&format!("pprof/{top_file}"))).unwrap();
    let metric_name = text
        .lines()
        .find_map(|l| l.strip_prefix("Type: "))
        .expect("Type: line");
    let profile = read(&pprof(profile_file));
    let metric = profile.sample_type_index(metric_name).expect("metric");
    let total: u128 = profile.totals()[metric];
    // "Showing nodes accounting for 9.94s, 65.57% of 15.16s total"
    let showing = text
        .lines()
        .find(|l| l.starts_with("Showing nodes accounting for"))
        .expect("Showing line");
    let total_text = showing
        .rsplit_once(" of ")
        .unwrap()
        .1
        .strip_suffix(" total")
        .unwrap();
    let (_, unit) = split_value(total_text);
    assert_eq!(
        pprof_label(total, unit),
        total_text,
        "total of {profile_file}"
    );
    let values = flat_and_cum(&profile, metric);
    let mut rows = 0;
    let mut shown_flat = 0u128;
    for line in text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"))
        .skip(1)
    {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let (flat, cum) = (cols[0], cols[3]);
        let name = cols[5..].join(" ");
        let name = name
            .strip_suffix(" (partial-inline)")
            .or_else(|| name.strip_suffix(" (inline)"))
            .unwrap_or(&name);
        let (got_flat, got_cum) = values.get(name).copied().unwrap_or_else(|| {
            panic!("{profile_file}: function {name} of the -top text is not in the profile")
        });
        assert_eq!(pprof_label(got_flat, unit), flat, "flat of {name}");
        assert_eq!(pprof_label(got_cum, unit), cum, "cum of {name}");
        shown_flat += got_flat;
        rows += 1;
    }
    // "accounting for X": the flat sum of the rows shown
    let accounted = showing
        .strip_prefix("Showing nodes accounting for ")
        .unwrap()
        .split(',')
        .next()
        .unwrap();
    assert_eq!(pprof_label(shown_flat, unit), accounted);
    rows
}

#[test]
fn cpu_flat_and_cum_agree_with_go_tool_pprof_top() {
    assert_eq!(check_top_text("cpu.pb.gz", "cpu.top.txt"), 40);
    // the header's sample total: "Total samples = 15.16s"
    let profile = read(&pprof("cpu.pb.gz"));
    assert_eq!(profile.totals()[1], 15_160_000_000);
    assert_eq!(profile.totals()[0], 1516);
}

#[test]
fn alloc_space_flat_and_cum_agree_with_go_tool_pprof_top() {
    assert_eq!(
        check_top_text("allocs.pb.gz", "allocs.alloc_space.top.txt"),
        37
    );
}

#[test]
fn inuse_space_flat_and_cum_agree_with_go_tool_pprof_top() {
    assert_eq!(check_top_text("heap.pb.gz", "heap.inuse_space.top.txt"), 11);
}

#[test]
fn go_frames_keep_go_names_modules_files_and_inlining() {
    let profile = read(&pprof("cpu.pb.gz"));
    let serve = profile
        .frames()
        .find(|f| &*f.name == "net/http.(*conn).serve")
        .expect("Go names are kept as the runtime writes them");
    assert_eq!(serve.kind, FrameKind::Native);
    assert_eq!(
        serve.module.as_deref(),
        Some("/tmp/whose-corpus/go-svc/gosvc")
    );
    assert_eq!(serve.file.as_deref(), Some("net/http/server.go"));
    assert!(serve.line.is_some(), "a source line (line 0 reads as none)");
    // `runtime.spanOf (inline)` in the -top text: every spanOf frame is an inlined one
    let span_of: Vec<_> = profile
        .frames()
        .filter(|f| &*f.name == "runtime.spanOf")
        .collect();
    assert!(!span_of.is_empty());
    assert!(span_of.iter().all(|f| f.kind == FrameKind::Inlined));
    // inlined frames sit leafward of the physical frame they were inlined into
    for row in profile.rows() {
        let stack = profile.stack(row.stack);
        if let Some(&last) = stack.last() {
            assert_ne!(profile.frame(last).kind, FrameKind::Inlined, "root inlined");
        }
    }
    let main_main = profile
        .frames()
        .find(|f| &*f.name == "main.handleOrders")
        .unwrap();
    assert_eq!(main_main.file.as_deref(), Some("whose/gosvc/main.go"));
}

#[test]
fn pprof_notes_show_period_duration_and_main_binary() {
    let profile = read(&pprof("cpu.pb.gz"));
    let notes = &profile.meta.notes;
    let period = Notice::Period {
        period: 10_000_000,
        unit: "nanoseconds".into(),
        name: "cpu".into(),
    };
    assert!(notes.contains(&period), "{notes:?}");
    // 15.18 s, as the header shows it
    let duration = |n: &Notice| matches!(n, Notice::DurationNanos(15_181_322_186));
    assert!(notes.iter().any(duration), "{notes:?}");
    let main = Notice::MainBinary {
        file: "/tmp/whose-corpus/go-svc/gosvc".into(),
        build_id: None,
    };
    assert!(notes.contains(&main), "{notes:?}");
    // Go's allocation profiles label each sample with its object size, which the model
    // does not carry: the header says so
    let allocs = read(&pprof("allocs.pb.gz")).meta.notes;
    let bytes = Notice::NumericLabels(vec!["bytes".into()]);
    assert!(allocs.contains(&bytes), "{allocs:?}");
    let numeric = |n: &Notice| matches!(n, Notice::NumericLabels(_));
    assert!(!notes.iter().any(numeric), "{notes:?}");
    // Go writes the exact duration; the -top text rounds it to 15.18s
    let d = profile.meta.duration_nanos.expect("duration");
    assert!((d - 15_180_000_000).abs() < 5_000_000, "duration {d}");
}

#[test]
fn go_preset_detects_the_main_package_as_user() {
    // go-svc is one main package: the detected user code is exactly `main.`, as the oracle's
    // `user` rule, so the self and anywhere shares (which depend on no other owner) agree
    let (got, _) = report_shares(&[&pprof("cpu.pb.gz"), "--preset", "go"]);
    let (want, _) = expected_shares("go-svc.cpu.json");
    assert!((got["user"][0] - want["user"][0]).abs() < 0.01, "{got:?}");
    assert!((got["user"][2] - want["user"][2]).abs() < 0.01, "{got:?}");
    let explain = whose_ok(&["explain", &pprof("cpu.pb.gz"), "--frame", "^main\\."]);
    assert!(
        explain.contains("go module whose/gosvc (detected from the main package's file"),
        "{explain}"
    );
    // without presets nothing is detected
    let (none, _) = report_shares(&[&pprof("cpu.pb.gz"), "--no-presets"]);
    assert!(!none.contains_key("user"));
}

#[test]
fn go_preset_detects_the_modules_other_packages_as_user() {
    use prost::Message;
    use whose::pprof_wire as pb;
    // a -trimpath build of module example.com/svc with its main package in cmd/api
    let strings = [
        "",
        "cpu",
        "nanoseconds",
        "main.main",
        "example.com/svc/cmd/api/main.go",
        "example.com/svc/internal/db.(*DB).Query",
        "example.com/svc/internal/db/db.go",
        "runtime.mallocgc",
        "runtime/malloc.go",
    ];
    let func = |id: u64, name: i64, file: i64| pb::Function {
        id,
        name,
        filename: file,
        ..Default::default()
    };
    let loc = |id: u64| pb::Location {
        id,
        line: vec![pb::Line {
            function_id: id,
            line: 1,
        }],
        ..Default::default()
    };
    let p = pb::Profile {
        sample_type: vec![pb::ValueType { r#type: 1, unit: 2 }],
        sample: vec![
            pb::Sample {
                location_id: vec![2, 1],
                value: vec![60],
                label: vec![],
            },
            pb::Sample {
                location_id: vec![3, 2, 1],
                value: vec![40],
                label: vec![],
            },
        ],
        location: vec![loc(1), loc(2), loc(3)],
        function: vec![func(1, 3, 4), func(2, 5, 6), func(3, 7, 8)],
        string_table: strings.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("svc.pb");
    std::fs::write(&path, p.encode_to_vec()).unwrap();
    let (got, total) = report_shares(&[path.to_str().unwrap()]);
    assert_eq!(total, 100);
    // db.Query is user code: the leaf of 60 of 100
    assert!((got["user"][0] - 60.0).abs() < 1e-9, "{got:?}");
    assert!((got["user"][2] - 100.0).abs() < 1e-9, "{got:?}");
}

/// A profile of `f0` (leaf) … `fn` (root) stacks; `inline` puts several functions in one
/// location (innermost first). Returns the stacks whose read, root first, one per line.
fn read_pruned(stacks: &[&[&[&str]]], drop: &str, keep: &str) -> String {
    use prost::Message;
    use whose::pprof_wire as pb;
    let mut strings: Vec<String> = vec!["".into(), "samples".into(), "count".into()];
    let mut string = |s: &str| -> i64 {
        if let Some(i) = strings.iter().position(|x| x == s) {
            return i as i64;
        }
        strings.push(s.to_string());
        strings.len() as i64 - 1
    };
    let mut p = pb::Profile {
        sample_type: vec![pb::ValueType { r#type: 1, unit: 2 }],
        drop_frames: if drop.is_empty() { 0 } else { string(drop) },
        keep_frames: if keep.is_empty() { 0 } else { string(keep) },
        ..Default::default()
    };
    for stack in stacks {
        let mut ids = Vec::new();
        for loc in stack.iter() {
            let id = p.location.len() as u64 + 1;
            let mut lines = Vec::new();
            for name in loc.iter() {
                let fid = p.function.len() as u64 + 1;
                p.function.push(pb::Function {
                    id: fid,
                    name: string(name),
                    ..Default::default()
                });
                lines.push(pb::Line {
                    function_id: fid,
                    line: 0,
                });
            }
            p.location.push(pb::Location {
                id,
                line: lines,
                ..Default::default()
            });
            ids.push(id);
        }
        p.sample.push(pb::Sample {
            location_id: ids,
            value: vec![1],
            label: vec![],
        });
    }
    p.string_table = strings;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("prune.pb");
    std::fs::write(&path, p.encode_to_vec()).unwrap();
    let profile = read(path.to_str().unwrap());
    profile
        .dump()
        .lines()
        .skip(1)
        .map(|l| {
            l.split(';')
                .map(|f| f.split(' ').next().unwrap())
                .collect::<Vec<_>>()
                .join(";")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn drop_frames_prunes_like_pprof() {
    let stacks: &[&[&[&str]]] = &[
        // leaf first: malloc called from work, from main
        &[&["malloc"], &["work"], &["main"]],
        // malloc_inner inlined into work: the location keeps work
        &[&["leaf"], &["malloc_inner", "work2"], &["main"]],
        // a dropped root frame is kept: nothing user-like above it
        &[&["work3"], &["malloc_root"]],
    ];
    let dump = read_pruned(stacks, "malloc.*", "");
    assert_eq!(
        dump, "main;work\nmain;work2\nmalloc_root;work3",
        "pruned stacks, root first"
    );
    // keep_frames rescues a dropped name; pprof matches the whole simplified name
    let dump = read_pruned(stacks, "malloc.*", "malloc_inner");
    assert_eq!(
        dump,
        "main;work\nmain;work2;malloc_inner;leaf\nmalloc_root;work3"
    );
    // without drop_frames nothing changes, and inlined lines become frames innermost first
    let dump = read_pruned(stacks, "", "");
    assert_eq!(
        dump,
        "main;work;malloc\nmain;work2;malloc_inner;leaf\nmalloc_root;work3"
    );
}

#[test]
fn locations_without_lines_are_unsymbolized_addresses() {
    use prost::Message;
    use whose::pprof_wire as pb;
    let strings = ["", "samples", "count", "/usr/lib/libfoo.so", "main.main"];
    let p = pb::Profile {
        sample_type: vec![pb::ValueType { r#type: 1, unit: 2 }],
        sample: vec![pb::Sample {
            location_id: vec![1, 2],
            value: vec![5],
            label: vec![],
        }],
        mapping: vec![pb::Mapping {
            id: 1,
            filename: 3,
            ..Default::default()
        }],
        location: vec![
            pb::Location {
                id: 1,
                mapping_id: 1,
                address: 0x7f00_1234,
                ..Default::default()
            },
            pb::Location {
                id: 2,
                line: vec![pb::Line {
                    function_id: 1,
                    line: 3,
                }],
                ..Default::default()
            },
        ],
        function: vec![pb::Function {
            id: 1,
            name: 4,
            ..Default::default()
        }],
        string_table: strings.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("addr.pb");
    std::fs::write(&path, p.encode_to_vec()).unwrap();
    let profile = read(path.to_str().unwrap());
    assert_eq!(
        profile.dump().lines().nth(1).unwrap(),
        "main.main {native};[unknown] [/usr/lib/libfoo.so] {unknown} 5"
    );
    let (shares, _) = report_shares(&[path.to_str().unwrap(), "--user", "main."]);
    assert_eq!(shares["unsymbolized"][0], 100.0);
    assert_eq!(shares["user"][1], 100.0);
}

#[test]
fn every_go_function_name_is_kept_as_written() {
    use prost::Message;
    use std::collections::BTreeSet;
    use whose::pprof_wire as pb;
    for file in ["cpu.pb.gz", "allocs.pb.gz", "heap.pb.gz"] {
        let raw = pb::Profile::decode(gunzip_file(std::path::Path::new(&pprof(file))).as_slice())
            .unwrap();
        let written: BTreeSet<&str> = raw
            .function
            .iter()
            .map(|f| raw.string_table[f.name as usize].as_str())
            .collect();
        let profile = read(&pprof(file));
        let read: BTreeSet<&str> = profile.frames().map(|f| &*f.name).collect();
        // exactly the file's function names, unchanged: no Java dots, no C++ signature
        // stripping of Go's `(*T).M` method names
        assert_eq!(read, written, "{file}");
    }
}

/// Go's heap profile before and after (`fixtures/pprof/heapdelta.go`), their delta made by
/// `go tool pprof -proto -diff_base`, and the same heap as legacy `debug=1` text.
#[test]
#[ignore = "needs Go (go run, go tool pprof): .ci/run installs golang-go and runs it"]
fn go_delta_and_legacy_heap_profiles_agree_with_go_tool_pprof() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(fixture("pprof/heapdelta.go"), d.join("main.go")).unwrap();
    std::fs::write(
        d.join("go.mod"),
        "module example.com/heapdelta\n\ngo 1.19\n",
    )
    .unwrap();
    let go = |args: &[&str]| {
        let out = std::process::Command::new("go")
            .args(args)
            .current_dir(d)
            .output()
            .expect("run go");
        assert!(
            out.status.success(),
            "go {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    go(&["run", "."]);
    let delta = go(&[
        "tool",
        "pprof",
        "-proto",
        "-diff_base",
        "base.pb.gz",
        "new.pb.gz",
    ]);
    std::fs::write(d.join("delta.pb.gz"), delta).unwrap();
    let top = go(&[
        "tool",
        "pprof",
        "-sample_index=inuse_space",
        "-unit=B",
        "-top",
        "-nodecount=1000",
        "delta.pb.gz",
    ]);
    let top = String::from_utf8(top).unwrap();
    // `Showing nodes accounting for …B, …% of 212336B total`: with -diff_base, pprof's
    // total is the base's (the negated samples'), which is the negative part whose reports
    let bytes = |s: &str| s.trim_end_matches('B').parse::<i64>().unwrap();
    let total = top
        .lines()
        .find_map(|l| l.split(" of ").nth(1)?.strip_suffix(" total").map(bytes))
        .unwrap_or_else(|| panic!("{top}"));
    let flat = |func: &str| {
        top.lines()
            .find(|l| l.split_whitespace().last() == Some(func))
            .map_or(0, |l| bytes(l.split_whitespace().next().unwrap()))
    };
    let path = d.join("delta.pb.gz");
    let args = [
        "report",
        path.to_str().unwrap(),
        "--format",
        "json",
        "--metric",
        "inuse_space",
        "--user",
        "main.",
    ];
    let json: serde_json::Value = serde_json::from_str(&whose_ok(&args)).unwrap();
    let input = &json["inputs"][0];
    let negative = &input["negative"];
    assert_eq!(negative["total"].as_i64(), Some(total), "{negative}");
    let self_of = |owners: &serde_json::Value| {
        owners
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["name"] == "user")
            .map_or(0, |o| o["self"].as_i64().unwrap())
    };
    // main.* is user code: its positive self minus its negative self is pprof's net flat
    let net = self_of(&input["owners"]) - self_of(&negative["owners"]);
    assert_eq!(net, flat("main.grow") + flat("main.churn"), "{top}");
    assert!(flat("main.grow") > 0 && flat("main.churn") < 0, "{top}");
    // the gate refuses the metric with negatives
    let err = whose_err(&[
        "gate",
        path.to_str().unwrap(),
        "--metric",
        "inuse_space",
        "--require",
        "user.self < 50%",
    ]);
    assert!(
        err.contains("has negative weights in metric inuse_space"),
        "{err}"
    );

    // the legacy text of the same heap is refused with the hint, and the hint works
    let text = d.join("heap.txt");
    let text = text.to_str().unwrap();
    let err = whose_err(&["report", text]);
    assert!(
        err.contains("legacy pprof text format: convert with `go tool pprof -proto"),
        "{err}"
    );
    let converted = go(&["tool", "pprof", "-proto", "heap.txt"]);
    let converted_path = write_temp(d, "heap.txt.pb.gz", converted);
    // (addresses only: the text names no functions pprof keeps without the binary)
    let (shares, total) = report_shares(&[converted_path.to_str().unwrap()]);
    assert!(total > 0 && !shares.is_empty(), "{shares:?}");
}

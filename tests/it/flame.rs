//! `whose flame`: the SVGs are parsed as XML and checked against `whose report`'s numbers.
//!
//! Each property is a helper taking the profile arguments, so a new fixture (jvm-shop's
//! perf.data, go-svc's pprof once their readers land) is one more one-line test.

use super::common::*;
use super::hermetic::Hermetic;
use quick_xml::Reader;
use quick_xml::events::Event;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

// ---------------------------------------------------------------- the fixtures

fn ktor_args() -> Vec<String> {
    fixture_args(&[
        "folded/seed-ktor-alloc.txt",
        "--rules",
        "rules/seed-ktor-alloc.toml",
        "--no-presets",
        "--unit",
        "bytes",
    ])
}

fn py_args() -> Vec<String> {
    fixture_args(&[
        "folded/py-app.folded",
        "--rules",
        "rules/py-app.toml",
        "--no-presets",
    ])
}

/// go-svc CPU profile (pprof) with the go preset: its own module detected as user.
fn go_args() -> Vec<String> {
    fixture_args(&["pprof/cpu.pb.gz", "--preset", "go"])
}

/// jvm-shop perf.data with its JIT map and the corpus rules, with the hermetic symbol
/// options (`hermetic.rs`).
fn jvm_args(run: &Hermetic) -> Vec<String> {
    let mut a = fixture_args(&[
        "perf/jvm-shop.perf.data",
        "--rules",
        "rules/jvm-shop.toml",
        "--no-presets",
    ]);
    a.extend(run.symbol_args());
    a
}

fn mini_args() -> Vec<String> {
    fixture_args(&[
        "folded/flame-mini.folded",
        "--rules",
        "rules/flame-mini.toml",
        "--no-presets",
    ])
}

// ---------------------------------------------------------------- reading SVG as XML

#[derive(Debug, Clone)]
struct Rect {
    /// The tooltip: `text (N unit, P%)` or, in a differential graph, `text (…; ±D%)`.
    title: String,
    fill: (u8, u8, u8),
    w: u64,
    y: f64,
}

impl Rect {
    /// The frame text (everything before the last ` (`).
    fn text(&self) -> &str {
        &self.title[..self.title.rfind(" (").unwrap()]
    }

    /// The owner the frame's annotation names last (`name [owner]`, `name [a → owner]`,
    /// `[owner: owner]`); `None` for the `all` root.
    fn color_owner(&self) -> Option<String> {
        let t = self.text();
        if let Some(o) = t.strip_prefix("[owner: ") {
            return Some(o.trim_end_matches(']').to_string());
        }
        let inner = &t[t.rfind(" [")? + 2..t.len() - 1];
        Some(inner.rsplit(" → ").next().unwrap().to_string())
    }

    /// The differential delta in percent, from `…; +1.23%)`.
    fn delta(&self) -> f64 {
        let d = &self.title[self.title.rfind("; ").unwrap() + 2..];
        d.trim_end_matches("%)").parse().unwrap()
    }
}

#[derive(Debug, Clone)]
struct LegendEntry {
    owner: String,
    category: String,
    weight: u128,
    share: f64,
    fill: Option<(u8, u8, u8)>,
    label: String,
}

#[derive(Debug, Default)]
struct Svg {
    total_samples: u64,
    height: u64,
    frames: Vec<Rect>,
    legend: Vec<LegendEntry>,
}

fn rgb(s: &str) -> (u8, u8, u8) {
    let v: Vec<u8> = s
        .trim_start_matches("rgb(")
        .trim_end_matches(')')
        .split(',')
        .map(|x| x.trim().parse().unwrap())
        .collect();
    (v[0], v[1], v[2])
}

fn attrs(e: &quick_xml::events::BytesStart<'_>) -> BTreeMap<String, String> {
    e.attributes()
        .map(|a| {
            let a = a.unwrap();
            (
                String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                a.normalized_value(quick_xml::XmlVersion::Explicit1_0)
                    .unwrap()
                    .into_owned(),
            )
        })
        .collect()
}

fn entity(name: &str) -> &'static str {
    match name {
        "lt" => "<",
        "gt" => ">",
        "amp" => "&",
        "quot" => "\"",
        "apos" => "'",
        other => panic!("unexpected entity &{other};"),
    }
}

/// Parses the parts of a `whose flame` SVG the tests look at; panics if it is not XML.
fn parse_svg(text: &str) -> Svg {
    let mut reader = Reader::from_str(text);
    let mut svg = Svg::default();
    let mut path: Vec<String> = Vec::new();
    let mut in_frames = false;
    let mut text_buf = String::new();
    let mut title: Option<String> = None;
    let mut entry: Option<LegendEntry> = None;
    loop {
        let event = reader.read_event().expect("well-formed XML");
        match event {
            Event::Eof => break,
            Event::Start(e) => {
                let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                let a = attrs(&e);
                if name == "svg" && path.is_empty() {
                    svg.height = a["height"].parse().unwrap();
                }
                if name == "svg" && a.get("id").map(String::as_str) == Some("frames") {
                    in_frames = true;
                    svg.total_samples = a["total_samples"].parse().unwrap();
                }
                if name == "g" && a.get("class").map(String::as_str) == Some("whose-legend-entry") {
                    entry = Some(LegendEntry {
                        owner: a["data-owner"].clone(),
                        category: a["data-category"].clone(),
                        weight: a["data-weight"].parse().unwrap(),
                        share: a["data-share"].parse().unwrap(),
                        fill: None,
                        label: String::new(),
                    });
                }
                text_buf.clear();
                path.push(name);
            }
            Event::Empty(e) => {
                let a = attrs(&e);
                if e.name().as_ref() == b"rect" {
                    if in_frames {
                        svg.frames.push(Rect {
                            title: title.take().expect("a frame's title comes before its rect"),
                            fill: rgb(&a["fill"]),
                            w: a["fg:w"].parse().unwrap(),
                            y: a["y"].parse().unwrap(),
                        });
                    } else if let Some(en) = entry.as_mut() {
                        en.fill = Some(rgb(&a["fill"]));
                    }
                }
            }
            Event::Text(t) => text_buf.push_str(&t.xml10_content().unwrap()),
            Event::GeneralRef(r) => text_buf.push_str(entity(&r.decode().unwrap())),
            Event::End(e) => {
                let name = path.pop().unwrap();
                assert_eq!(name.as_bytes(), e.name().as_ref());
                if name == "title" && in_frames {
                    title = Some(text_buf.clone());
                }
                if name == "text"
                    && let Some(en) = entry.as_mut()
                {
                    en.label = text_buf.clone();
                }
                if name == "g"
                    && let Some(en) = entry.take()
                {
                    svg.legend.push(en);
                }
                if name == "svg" && in_frames && path.len() == 1 {
                    in_frames = false;
                }
            }
            _ => {}
        }
    }
    assert!(path.is_empty(), "unclosed elements: {path:?}");
    svg
}

// ---------------------------------------------------------------- what `whose report` says

struct Owners {
    total: u128,
    /// name → (category, owner-view weight)
    owners: BTreeMap<String, (String, u128)>,
    /// name → anywhere weight (samples with the owner on the stack)
    anywhere: BTreeMap<String, u128>,
}

fn report(profile_args: &[String]) -> Owners {
    let mut full = vec!["report", "--format", "json"];
    full.extend(profile_args.iter().map(String::as_str));
    let json: Value = serde_json::from_str(&whose_ok(&full)).unwrap();
    let input = &json["inputs"][0];
    let owners = input["owners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["name"].as_str().unwrap().to_string(),
                (
                    o["category"].as_str().unwrap().to_string(),
                    o["owner"].as_u64().unwrap() as u128,
                ),
            )
        })
        .collect();
    let anywhere = input["owners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["name"].as_str().unwrap().to_string(),
                o["anywhere"].as_u64().unwrap() as u128,
            )
        })
        .collect();
    Owners {
        total: input["total"].as_u64().unwrap() as u128,
        owners,
        anywhere,
    }
}

fn flame(profile_args: &[String], extra: &[&str]) -> Svg {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.svg");
    let mut full = vec!["flame"];
    full.extend(profile_args.iter().map(String::as_str));
    full.extend_from_slice(extra);
    full.extend_from_slice(&["-o", out.to_str().unwrap()]);
    whose_ok(&full);
    parse_svg(&std::fs::read_to_string(&out).unwrap())
}

// ---------------------------------------------------------------- colours

/// The documented category hues (README, `whose help flame`).
fn category_rgb(category: &str) -> (u8, u8, u8) {
    match category {
        "user" => (0xD5, 0x5E, 0x00),
        "framework" => (0x00, 0x72, 0xB2),
        "library" => (0x00, 0x9E, 0x73),
        "runtime" => (0x56, 0xB4, 0xE9),
        "allocator" => (0xE6, 0x9F, 0x00),
        "gc" => (0xCC, 0x79, 0xA7),
        "kernel" => (0xF0, 0xE4, 0x42),
        "unknown" => (0x99, 0x99, 0x99),
        other => panic!("unknown category {other}"),
    }
}

/// (hue in degrees, saturation) in HSV.
fn hue_sat((r, g, b): (u8, u8, u8)) -> (f64, f64) {
    let (r, g, b) = (r as f64, g as f64, b as f64);
    let max = r.max(g).max(b);
    let d = max - r.min(g).min(b);
    if d == 0.0 {
        return (0.0, 0.0);
    }
    let h = if max == r {
        ((g - b) / d).rem_euclid(6.0)
    } else if max == g {
        (b - r) / d + 2.0
    } else {
        (r - g) / d + 4.0
    };
    (h * 60.0, d / max)
}

fn assert_same_hue(fill: (u8, u8, u8), category: &str, what: &str) {
    let (want_h, want_s) = hue_sat(category_rgb(category));
    let (h, s) = hue_sat(fill);
    if want_s == 0.0 {
        assert_eq!(s, 0.0, "{what}: {fill:?} should be grey ({category})");
    } else {
        let diff = (h - want_h).abs().min(360.0 - (h - want_h).abs());
        assert!(
            diff < 4.0 && s > 0.0,
            "{what}: fill {fill:?} (hue {h:.1}) is not the {category} hue {want_h:.1}"
        );
    }
}

/// The weight a legend entry shows: what inferno's search for the owner matches, the owner
/// view when colouring by owner (the default), the samples with the owner on the stack when
/// colouring each frame by its own owner (`by_frame`).
fn legend_weight(want: &Owners, owner: &str, by_frame: bool) -> u128 {
    if by_frame {
        want.anywhere[owner]
    } else {
        want.owners[owner].1
    }
}

/// Every frame's fill is the legend colour of the owner its text names, in that owner's
/// category hue; the legend's numbers are the report's (see [`legend_weight`]).
fn check_frames_match_legend(svg: &Svg, want: &Owners, by_frame: bool) {
    let mut colour_of = BTreeMap::new();
    for e in &svg.legend {
        let (category, _) = &want.owners[&e.owner];
        let weight = legend_weight(want, &e.owner, by_frame);
        assert_eq!(&e.category, category, "{}", e.owner);
        assert_eq!(e.weight, weight, "legend weight of {}", e.owner);
        let share = weight as f64 * 100.0 / want.total as f64;
        assert!(
            (e.share - share).abs() < 1e-6,
            "{}: {} vs {share}",
            e.owner,
            e.share
        );
        let shown = format!("{share:.1}%");
        assert!(
            if by_frame {
                e.label.contains(&format!(" {shown}, self "))
            } else {
                e.label.ends_with(&format!(" {shown}"))
            },
            "label {:?} should show {shown}",
            e.label
        );
        let fill = e.fill.expect("a swatch");
        assert_same_hue(fill, category, &format!("legend {}", e.owner));
        colour_of.insert(e.owner.clone(), fill);
    }
    // owners of one category are told apart by their tint
    let mut by_fill: BTreeMap<(u8, u8, u8), &String> = BTreeMap::new();
    for (owner, fill) in &colour_of {
        assert!(
            by_fill.insert(*fill, owner).is_none(),
            "{owner} shares a colour"
        );
    }
    let mut frames = 0;
    for f in &svg.frames {
        let Some(owner) = f.color_owner() else {
            assert!(f.title.starts_with("all ("), "{}", f.title);
            continue;
        };
        frames += 1;
        let want_fill = colour_of
            .get(&owner)
            .unwrap_or_else(|| panic!("frame {:?}: owner {owner} not in the legend", f.title));
        assert_eq!(f.fill, *want_fill, "frame {:?}", f.title);
        assert_same_hue(f.fill, &want.owners[&owner].0, &f.title);
    }
    assert!(frames > 0);
}

/// Every frame's fill is its owner's legend colour, in its owner's category hue; the legend
/// lists exactly the report's owners whose colour the graph shows, with the report's weights
/// and shares (see [`legend_weight`]).
fn check_coloured_graph(profile_args: &[String], extra: &[&str]) -> (Svg, Owners) {
    let svg = flame(profile_args, extra);
    let want = report(profile_args);
    let by_frame = extra.windows(2).any(|w| w == ["--color-by", "self"]);
    assert_eq!(svg.total_samples as u128, want.total);
    let listed: BTreeSet<&String> = svg.legend.iter().map(|e| &e.owner).collect();
    let coloured: BTreeSet<&String> = want
        .owners
        .keys()
        .filter(|o| legend_weight(&want, o, by_frame) > 0)
        .collect();
    assert_eq!(listed, coloured);
    check_frames_match_legend(&svg, &want, by_frame);
    (svg, want)
}

#[test]
fn mini_frames_take_their_owners_colours() {
    let (svg, _) = check_coloured_graph(&mini_args(), &["--color-by", "self"]);
    // `copy` is the user's in one stack and the kernel's in another: two texts, two colours.
    let copies: BTreeMap<&str, (u8, u8, u8)> = svg
        .frames
        .iter()
        .filter(|f| f.text().starts_with("copy ["))
        .map(|f| (f.text(), f.fill))
        .collect();
    assert_eq!(copies.len(), 2, "{copies:?}");
    assert_same_hue(copies["copy [app]"], "user", "copy [app]");
    assert_same_hue(copies["copy [kernel]"], "kernel", "copy [kernel]");
}

#[test]
fn seed_ktor_alloc_frames_take_their_owners_colours() {
    let (svg, want) = check_coloured_graph(&ktor_args(), &[]);
    assert_eq!(want.total, 2_459_954_604);
    assert_eq!(svg.legend[0].owner, "kotlin");
    assert_eq!(svg.legend[0].share, 100.0);
}

#[test]
fn py_app_frames_take_their_owners_colours() {
    let (_, want) = check_coloured_graph(&py_args(), &[]);
    assert_eq!(want.owners["user"].1, 1998);
}

#[test]
fn colour_by_sample_owner_paints_whole_stacks() {
    let (svg, _) = check_coloured_graph(&mini_args(), &["--color-by", "owner"]);
    // `main` is under every owner but gc: one `main` frame per sample owner.
    let mains: BTreeSet<String> = svg
        .frames
        .iter()
        .filter(|f| f.text().starts_with("main ["))
        .map(|f| f.color_owner().unwrap())
        .collect();
    let want: BTreeSet<String> = ["app", "db", "json", "server", "yaml"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(mains, want);
}

// ---------------------------------------------------------------- --owner-root

/// The root's children are the `[owner: NAME]` frames, as wide as the owners' owner-view
/// weights.
fn check_owner_root(profile_args: &[String]) {
    let (svg, want) = check_coloured_graph(profile_args, &["--owner-root"]);
    let root_y = svg
        .frames
        .iter()
        .find(|f| f.title.starts_with("all ("))
        .unwrap()
        .y;
    let children: Vec<&Rect> = svg.frames.iter().filter(|f| f.y == root_y - 16.0).collect();
    let mut widths = BTreeMap::new();
    for c in &children {
        let owner = c
            .text()
            .strip_prefix("[owner: ")
            .unwrap_or_else(|| panic!("root child {:?} is not an owner frame", c.title));
        widths.insert(owner.trim_end_matches(']').to_string(), c.w as u128);
    }
    let owned: BTreeMap<String, u128> = want
        .owners
        .iter()
        .filter(|(_, (_, w))| *w > 0)
        .map(|(n, (_, w))| (n.clone(), *w))
        .collect();
    assert_eq!(widths, owned);
    assert_eq!(widths.values().sum::<u128>(), want.total);
}

#[test]
fn owner_root_children_are_owner_view_weights_mini() {
    check_owner_root(&mini_args());
}

#[test]
fn owner_root_children_are_owner_view_weights_py_app() {
    check_owner_root(&py_args());
}

#[test]
fn owner_root_children_are_owner_view_weights_seed_ktor() {
    check_owner_root(&ktor_args());
}

// ---------------------------------------------------------------- --split

/// One SVG per owner with owner-view weight, each totalling that weight; the totals add up
/// to the profile's; index.html links each with its share.
fn check_split(profile_args: &[String]) -> BTreeMap<String, Svg> {
    let dir = tempfile::tempdir().unwrap();
    let split = dir.path().join("split");
    let mut full = vec!["flame"];
    full.extend(profile_args.iter().map(String::as_str));
    full.extend_from_slice(&["--split", split.to_str().unwrap()]);
    whose_ok(&full);
    let want = report(profile_args);
    let index = std::fs::read_to_string(split.join("index.html")).unwrap();
    let mut graphs = BTreeMap::new();
    let mut sum = 0u128;
    for entry in std::fs::read_dir(&split).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if name == "index.html" {
            continue;
        }
        if name == "report.html" {
            // the interactive page of the same input, linked from the index (issue 27)
            assert!(
                index.contains("href=\"report.html\""),
                "the page is not linked"
            );
            let page = std::fs::read_to_string(&path).unwrap();
            assert!(page.contains(r#"id="whose-data""#), "not the page");
            continue;
        }
        assert!(name.ends_with(".svg"), "unexpected file {name}");
        assert!(
            index.contains(&format!("href=\"{name}\"")),
            "{name} not linked"
        );
        let svg = parse_svg(&std::fs::read_to_string(&path).unwrap());
        // colours as in the whole graph; the legend lists exactly the owners coloured here
        check_frames_match_legend(&svg, &want, false);
        let coloured: BTreeSet<String> = svg.frames.iter().filter_map(Rect::color_owner).collect();
        let listed: BTreeSet<String> = svg.legend.iter().map(|e| e.owner.clone()).collect();
        assert_eq!(coloured, listed, "{name}");
        // `01-json.svg` → json
        let owner = name[3..name.len() - 4].to_string();
        let (_, weight) = want.owners[&owner];
        assert_eq!(svg.total_samples as u128, weight, "{name}");
        let share = weight as f64 * 100.0 / want.total as f64;
        assert!(
            index.contains(&format!(">{owner}</a>")) && index.contains(&format!(">{share:.1}%<")),
            "index lacks {owner} {share:.1}%"
        );
        sum += svg.total_samples as u128;
        graphs.insert(owner, svg);
    }
    assert_eq!(sum, want.total);
    let owning = want.owners.values().filter(|(_, w)| *w > 0).count();
    assert_eq!(graphs.len(), owning);
    graphs
}

#[test]
fn split_totals_add_up_mini() {
    let graphs = check_split(&mini_args());
    assert_eq!(
        graphs.keys().collect::<Vec<_>>(),
        ["app", "db", "gc", "json", "server", "yaml"]
    );
    // json's graph holds only json-owned samples: its frames are the two json stacks.
    let json = &graphs["json"];
    assert!(
        json.frames
            .iter()
            .all(|f| !f.text().starts_with("db.") && !f.text().starts_with("gc."))
    );
    assert_eq!(json.total_samples, 100);
    // coloured by owner (the default), a graph of json's samples is json's colour alone
    let legend: Vec<&str> = json.legend.iter().map(|e| e.owner.as_str()).collect();
    assert_eq!(legend, ["json"]);
}

#[test]
fn split_totals_add_up_py_app() {
    let graphs = check_split(&py_args());
    assert_eq!(graphs["user"].total_samples, 1998);
    assert_eq!(graphs["stdlib"].total_samples, 1);
}

#[test]
fn split_totals_add_up_seed_ktor() {
    let graphs = check_split(&ktor_args());
    assert_eq!(graphs.len(), 1);
    assert_eq!(graphs["kotlin"].total_samples, 2_459_954_604);
}

#[test]
fn split_replaces_its_own_earlier_output_but_no_other_folder() {
    let dir = tempfile::tempdir().unwrap();
    let split = dir.path().join("split");
    let mut full: Vec<String> = vec!["flame".into()];
    full.extend(mini_args());
    full.extend(["--split".into(), split.to_str().unwrap().into()]);
    let full: Vec<&str> = full.iter().map(String::as_str).collect();
    whose_ok(&full);
    std::fs::write(split.join("stale.svg"), "old").unwrap();
    whose_ok(&full);
    assert!(
        !split.join("stale.svg").exists(),
        "an earlier split is replaced as a whole"
    );
    assert!(split.join("index.html").exists());
    // a folder of someone else's files is left alone
    let foreign = dir.path().join("mine");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "keep").unwrap();
    let mut other: Vec<&str> = full[..full.len() - 1].to_vec();
    other.push(foreign.to_str().unwrap());
    let err = whose_err(&other);
    assert!(
        err.contains("not an earlier `whose flame --split` output"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(foreign.join("notes.txt")).unwrap(),
        "keep"
    );
    assert_no_leftovers(dir.path());
}

// ---------------------------------------------------------------- --diff

/// `new` is `base` with one stack's weight doubled: exactly the frames on that stack's path
/// grew, by that stack's weight; every other frame is unchanged (neutral colour).
#[test]
fn diff_shows_exactly_the_doubled_stack_as_grown() {
    let dir = tempfile::tempdir().unwrap();
    let base_text = std::fs::read_to_string(fixture("folded/flame-mini.folded")).unwrap();
    let doubled = "main;server.Loop.run;server.Handler.serve;app.Orders.list;copy";
    let new_text = base_text.replace(&format!("{doubled} 30"), &format!("{doubled} 60"));
    assert_ne!(new_text, base_text);
    let (base, new) = (
        dir.path().join("base.folded"),
        dir.path().join("new.folded"),
    );
    std::fs::write(&base, &base_text).unwrap();
    std::fs::write(&new, &new_text).unwrap();
    let rules = fixture("rules/flame-mini.toml");
    let profile_args: Vec<String> = vec![
        new.to_str().unwrap().into(),
        "--rules".into(),
        rules.to_str().unwrap().into(),
        "--no-presets".into(),
    ];
    let svg = flame(&profile_args, &["--diff", base.to_str().unwrap()]);
    assert_eq!(svg.total_samples, 300);
    let mut grown = Vec::new();
    for f in &svg.frames {
        if f.title.starts_with("all (") {
            continue;
        }
        let d = f.delta();
        if d == 0.0 {
            assert_eq!(f.fill, (250, 250, 250), "unchanged {:?}", f.title);
            continue;
        }
        assert!(d > 0.0, "only growth expected: {:?}", f.title);
        assert_eq!(f.fill.0, 255, "grown frames are red: {:?}", f.title);
        assert!(f.fill.1 < 250 && f.fill.1 == f.fill.2, "{:?}", f.fill);
        // +30 of 300 samples
        assert!((d - 10.0).abs() < 1e-9, "{:?}", f.title);
        grown.push(f.text().to_string());
    }
    // inferno's differential colours a frame by the change of its own (self) weight, so the
    // doubled stack shows as exactly its leaf, the user's `copy`; its callers stay neutral.
    assert_eq!(grown, ["copy [app]"]);
    // the tooltip keeps the owner
    assert!(
        svg.frames
            .iter()
            .any(|f| f.title.starts_with("copy [app] (60 samples"))
    );
    // the legend says how the owners' shares moved: app 50/270 → 80/300
    let app = svg.legend.iter().find(|e| e.owner == "app").unwrap();
    assert_eq!(app.weight, 80);
    assert_eq!(app.fill, None);
    assert_eq!(app.label, "app 18.5% → 26.7% (+8.1)");
}

#[test]
fn diff_normalize_scales_the_base_to_the_new_total() {
    let dir = tempfile::tempdir().unwrap();
    let base_text = std::fs::read_to_string(fixture("folded/flame-mini.folded")).unwrap();
    // the new profile is the base recorded twice as long: normalised, nothing changed
    let new_text: String = base_text
        .lines()
        .map(|l| match l.rsplit_once(' ') {
            Some((stack, n)) if !l.starts_with('#') => {
                format!("{stack} {}\n", n.parse::<u64>().unwrap() * 2)
            }
            _ => format!("{l}\n"),
        })
        .collect();
    let (base, new) = (
        dir.path().join("base.folded"),
        dir.path().join("new.folded"),
    );
    std::fs::write(&base, &base_text).unwrap();
    std::fs::write(&new, &new_text).unwrap();
    let rules = fixture("rules/flame-mini.toml");
    let profile_args: Vec<String> = vec![
        new.to_str().unwrap().into(),
        "--rules".into(),
        rules.to_str().unwrap().into(),
        "--no-presets".into(),
    ];
    let plain = flame(&profile_args, &["--diff", base.to_str().unwrap()]);
    // unnormalised, every leaf grew: by half of the new total in all
    let frames = || {
        plain
            .frames
            .iter()
            .filter(|f| !f.title.starts_with("all ("))
    };
    let grown: f64 = frames().map(Rect::delta).sum();
    assert!((grown - 50.0).abs() < 0.05, "{grown}");
    assert!(frames().all(|f| f.delta() >= 0.0));
    let normal = flame(
        &profile_args,
        &["--diff", base.to_str().unwrap(), "--normalize"],
    );
    assert_eq!(normal.total_samples, 540);
    for f in normal
        .frames
        .iter()
        .filter(|f| !f.title.starts_with("all ("))
    {
        assert_eq!(f.delta(), 0.0, "{:?}", f.title);
        assert_eq!(f.fill, (250, 250, 250));
    }
}

// ---------------------------------------------------------------- options passed to inferno

#[test]
fn inferno_options_pass_through() {
    let svg = flame(
        &mini_args(),
        &[
            "--width",
            "800",
            "--title",
            "Checkout service",
            "--countname",
            "ticks",
            "--inverted",
            "--min-width",
            "5",
        ],
    );
    // --min-width 5%: frames under 13.5 of 270 samples are gone (yaml.parse is 10)
    assert!(svg.frames.iter().all(|f| f.w as f64 >= 13.5));
    assert!(svg.frames.iter().any(|f| f.title.contains(" ticks, ")));
    // inverted: the root is at the top
    let root = svg
        .frames
        .iter()
        .find(|f| f.title.starts_with("all ("))
        .unwrap();
    assert!(svg.frames.iter().all(|f| f.y >= root.y));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.svg");
    let mut full = vec!["flame"];
    let a = mini_args();
    full.extend(a.iter().map(String::as_str));
    full.extend_from_slice(&["--width", "800", "--title", "Checkout service", "-o"]);
    full.push(out.to_str().unwrap());
    whose_ok(&full);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("width=\"800\"") && text.contains(">Checkout service<"));
    // --reverse: the leaves are the roots' children
    let rev = flame(&mini_args(), &["--reverse", "--color-by", "self"]);
    let root = rev
        .frames
        .iter()
        .find(|f| f.title.starts_with("all ("))
        .unwrap();
    let first: BTreeSet<String> = rev
        .frames
        .iter()
        .filter(|f| f.y == root.y - 16.0)
        .map(|f| f.text().to_string())
        .collect();
    assert!(first.contains("malloc [glibc-malloc]") && first.contains("gc.mark [gc]"));
}

#[test]
fn countname_defaults_from_the_metric_unit() {
    let svg = flame(&ktor_args(), &[]);
    assert!(svg.frames.iter().any(|f| f.title.contains(" bytes, ")));
}

// ---------------------------------------------------------------- errors

fn assert_no_leftovers(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.contains("whose-tmp"), "left behind: {name}");
    }
}

#[test]
fn empty_profile_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write_temp(dir.path(), "empty.folded", "# nothing was sampled\n");
    let empty = empty.to_str().unwrap();
    let out = dir.path().join("out.svg");
    let err = whose_err(&["flame", empty, "-o", out.to_str().unwrap()]);
    assert!(
        err.contains("empty.folded") && err.contains("no samples"),
        "{err}"
    );
    assert!(!out.exists());
    // samples that all weigh nothing
    let zero = write_temp(
        dir.path(),
        "zero.folded",
        "main;work 0
",
    );
    let zero = zero.to_str().unwrap();
    let err = whose_err(&["flame", zero, "-o", out.to_str().unwrap()]);
    assert!(
        err.contains("zero.folded") && err.contains("nothing to draw"),
        "{err}"
    );
    assert!(!out.exists());
    let split = dir.path().join("split");
    whose_err(&["flame", empty, "--split", split.to_str().unwrap()]);
    assert!(!split.exists());
    assert_no_leftovers(dir.path());
}

#[test]
fn all_unsymbolized_profile_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let unknown = write_temp(
        dir.path(),
        "unknown.folded",
        "[unknown];[unknown];[unknown] 7\n[unknown] 3\n",
    );
    let unknown = unknown.to_str().unwrap();
    let split = dir.path().join("split");
    let err = whose_err(&["flame", unknown, "--split", split.to_str().unwrap()]);
    assert!(err.contains("every sample is unsymbolized"), "{err}");
    assert!(!split.exists());
    assert_no_leftovers(dir.path());
}

#[test]
fn unwritable_output_is_a_clear_error_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // a regular file where a folder should be: cannot be written even by root
    let blocker = write_temp(dir.path(), "blocker", "not a folder");
    let blocker = blocker.to_str().unwrap();
    let out = format!("{blocker}/out.svg");
    let mut full: Vec<String> = vec!["flame".into()];
    full.extend(mini_args());
    let mut single: Vec<&str> = full.iter().map(String::as_str).collect();
    single.extend_from_slice(&["-o", &out]);
    let err = whose_err(&single);
    assert!(err.contains("blocker/out.svg"), "{err}");
    let split = format!("{blocker}/split");
    let mut split_args: Vec<&str> = full.iter().map(String::as_str).collect();
    split_args.extend_from_slice(&["--split", &split]);
    let err = whose_err(&split_args);
    assert!(err.contains("blocker"), "{err}");
    let missing = dir.path().join("no/such/dir/split");
    let mut missing_args: Vec<&str> = full.iter().map(String::as_str).collect();
    missing_args.extend_from_slice(&["--split", missing.to_str().unwrap()]);
    let err = whose_err(&missing_args);
    assert!(err.contains("no/such/dir"), "{err}");
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["blocker"]);
}

#[test]
fn diff_and_split_do_not_combine() {
    let a = mini_args();
    let mut full = vec!["flame"];
    full.extend(a.iter().map(String::as_str));
    full.extend_from_slice(&["--split", "x", "--diff", &a[0]]);
    let err = whose_err(&full);
    assert!(err.contains("--diff") || err.contains("--split"), "{err}");
}

#[test]
fn weights_beyond_u64_are_refused_not_wrapped() {
    let dir = tempfile::tempdir().unwrap();
    let max = u64::MAX;
    let huge = write_temp(dir.path(), "huge.folded", format!("a;b {max}\na;c {max}\n"));
    let huge = huge.to_str().unwrap();
    let out = dir.path().join("out.svg");
    let err = whose_err(&["flame", huge, "-o", out.to_str().unwrap()]);
    assert!(err.contains("exceeds 2^64"), "{err}");
    assert!(!out.exists());
}

#[test]
fn go_svc_frames_take_their_owners_colours() {
    let (_, want) = check_coloured_graph(&go_args(), &[]);
    assert!(want.owners.contains_key("user"));
}

#[test]
fn owner_root_children_are_owner_view_weights_go_svc() {
    check_owner_root(&go_args());
}

#[test]
fn split_totals_add_up_go_svc() {
    let graphs = check_split(&go_args());
    assert!(graphs.len() > 3);
}

#[test]
fn jvm_shop_frames_take_their_owners_colours() {
    let run = Hermetic::new();
    let (_, want) = check_coloured_graph(&jvm_args(&run), &[]);
    assert!(want.owners.contains_key("user"));
}

#[test]
fn owner_root_children_are_owner_view_weights_jvm_shop() {
    let run = Hermetic::new();
    check_owner_root(&jvm_args(&run));
}

#[test]
fn split_totals_add_up_jvm_shop() {
    let run = Hermetic::new();
    let graphs = check_split(&jvm_args(&run));
    assert!(graphs.len() > 3);
}

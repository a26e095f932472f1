//! The layering of `src/` (docs/design.md "Pipeline"), checked on every `cargo test`, as
//! rust-analyzer's tidy tests guard its codebase: a top-level module may use only modules on
//! a lower level, and the modules of one level do not use each other. Data flows one way, and
//! an import against it fails here with the file and line that made it.
//!
//! Edges are read from the source text: every `crate::X` path outside comments and string
//! literals (in `use` items, `use crate::{a, b}` groups and multi-line use trees, or inline),
//! and `whose::X` in the binary's `main.rs`, which reaches the library only through what
//! `lib.rs` exports: `whose::item` is a use of `lib`, `whose::module` of that (public) module.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Bottom to top. A module may use the modules of every earlier level.
const LEVELS: &[&[&str]] = &[
    &["error", "model", "names", "pprof_wire"],
    &["symbolize"],
    &["unwind"],
    &["input", "classify"],
    &["aggregate"],
    &["gate"],
    &["render", "export"],
    &["cli"],
    &["config"],
    &["app"],
    &["lib"],
    &["main"],
];

fn level(module: &str) -> Option<usize> {
    LEVELS.iter().position(|l| l.contains(&module))
}

/// One use of another top-level module.
#[derive(Debug, PartialEq, Eq)]
struct Edge {
    from: String,
    to: String,
    file: PathBuf,
    line: usize,
}

/// The source with comments and the contents of string and character literals blanked out,
/// newlines kept, so positions still give the line.
pub(super) fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('"' | '#')) && !ident_before(&chars, i) {
            // raw string: r"..." or r#"..."#
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            out.extend(std::iter::repeat_n(' ', j + 1 - i));
            i = j + 1;
            while i < chars.len() && !chars[i..].starts_with(&close) {
                out.push(blank(chars[i]));
                i += 1;
            }
            out.extend(std::iter::repeat_n(' ', close.len().min(chars.len() - i)));
            i += close.len();
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' {
            // a character literal ('x', '\n', '\'') or a lifetime ('a), which is code
            let len = if next == Some('\\') {
                chars[i + 2..]
                    .iter()
                    .position(|&c| c == '\'')
                    .map(|p| p + 3)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(3)
            } else {
                None
            };
            match len {
                Some(n) => {
                    out.extend(std::iter::repeat_n(' ', n));
                    i += n;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// The top-level modules named after each `root::` (`crate::` or `whose::`) in `code`, with
/// their 1-based lines: `crate::a::b` gives `a`, `crate::{a::b, c}` gives `a` and `c`.
pub(super) fn used_modules(code: &str, root: &str) -> Vec<(String, usize)> {
    let chars: Vec<char> = code.chars().collect();
    let root: Vec<char> = format!("{root}::").chars().collect();
    let line_at = |pos: usize| chars[..pos].iter().filter(|&&c| c == '\n').count() + 1;
    let mut found = Vec::new();
    let mut i = 0;
    while i + root.len() <= chars.len() {
        if !chars[i..].starts_with(&root) || ident_before(&chars, i) {
            i += 1;
            continue;
        }
        i += root.len();
        while chars.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        if chars.get(i) == Some(&'{') {
            // a group: the first identifier of each item at the group's own depth
            let mut depth = 0;
            let mut expect_item = true;
            while i < chars.len() {
                let c = chars[i];
                match c {
                    '{' => {
                        depth += 1;
                        expect_item = depth == 1;
                    }
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => expect_item = true,
                    c if expect_item && depth == 1 && (c.is_alphabetic() || c == '_') => {
                        let start = i;
                        while chars
                            .get(i)
                            .is_some_and(|c| c.is_alphanumeric() || *c == '_')
                        {
                            i += 1;
                        }
                        found.push((chars[start..i].iter().collect(), line_at(start)));
                        expect_item = false;
                        continue;
                    }
                    _ => {}
                }
                i += 1;
            }
        } else {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|c| c.is_alphanumeric() || *c == '_')
            {
                i += 1;
            }
            if i > start {
                found.push((chars[start..i].iter().collect(), line_at(start)));
            }
        }
    }
    found
}

pub(super) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every use of one top-level module by another under `src`.
fn edges(src: &Path) -> Vec<Edge> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut edges = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).expect("under src");
        let first = rel.components().next().expect("a component");
        let from = first.as_os_str().to_string_lossy();
        let from = from.strip_suffix(".rs").unwrap_or(&from).to_string();
        let text = std::fs::read_to_string(&file).expect("source is UTF-8");
        let code = code_only(&text);
        let root = if from == "main" { "whose" } else { "crate" };
        for (to, line) in used_modules(&code, root) {
            let is_module = src.join(&to).is_dir() || src.join(format!("{to}.rs")).is_file();
            let to = if from == "main" && !is_module {
                "lib".to_string()
            } else {
                to
            };
            if to != from && to != "self" && to != "super" {
                edges.push(Edge {
                    from: from.clone(),
                    to,
                    file: rel.to_path_buf(),
                    line,
                });
            }
        }
    }
    edges
}

/// The edges that break the layering, each as `file:line: message`.
fn violations(edges: &[Edge]) -> Vec<String> {
    let mut out = Vec::new();
    for e in edges {
        let at = format!("src/{}:{}", e.file.display(), e.line);
        match (level(&e.from), level(&e.to)) {
            (None, _) => out.push(format!(
                "{at}: module `{}` is not in the layering; add it to LEVELS (and docs/design.md)",
                e.from
            )),
            (_, None) => out.push(format!(
                "{at}: `{}` uses `{}`, which is not in the layering; add it to LEVELS (and docs/design.md)",
                e.from, e.to
            )),
            (Some(a), Some(b)) if a == b => out.push(format!(
                "{at}: `{}` uses `{}`, on the same level; one level's modules do not use each other",
                e.from, e.to
            )),
            (Some(a), Some(b)) if b > a => out.push(format!(
                "{at}: `{}` uses `{}`, which is above it; modules use only the levels below",
                e.from, e.to
            )),
            _ => {}
        }
    }
    out
}

#[test]
fn modules_use_only_the_levels_below_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = edges(&src);
    assert!(
        edges.len() > 20,
        "found only {} edges: the scanner is broken",
        edges.len()
    );
    let bad = violations(&edges);
    assert!(
        bad.is_empty(),
        "imports against the layering:\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_top_level_module_has_a_level() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules: BTreeSet<String> = std::fs::read_dir(&src)
        .expect("src")
        .map(|e| e.expect("entry").path())
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            if p.is_dir() {
                Some(name)
            } else {
                name.strip_suffix(".rs").map(str::to_string)
            }
        })
        .collect();
    let missing: Vec<&String> = modules.iter().filter(|m| level(m).is_none()).collect();
    assert!(missing.is_empty(), "not in LEVELS: {missing:?}");
}

#[test]
fn the_scanner_sees_groups_multi_line_trees_and_not_comments_or_strings() {
    let text = "use crate::{a::X, b};\n\
                use crate::{\n    c::{self, Y},\n    d,\n};\n\
                // use crate::commented;\n\
                /* crate::blocked */\n\
                let s = \"crate::quoted\";\n\
                let r = r#\"crate::raw\"#;\n\
                let c = '\"'; let l: &'static str = x;\n\
                fn f() -> crate::e::T { crate::f::g() }\n\
                use crate::model::{Frame,\n    FrameKind};\n";
    let found = used_modules(&code_only(text), "crate");
    let names: Vec<(&str, usize)> = found.iter().map(|(m, l)| (m.as_str(), *l)).collect();
    assert_eq!(
        names,
        [
            ("a", 1),
            ("b", 1),
            ("c", 3),
            ("d", 4),
            ("e", 11),
            ("f", 11),
            ("model", 12)
        ]
    );
}

#[test]
fn an_edge_against_the_order_or_within_a_level_is_reported_with_its_place() {
    let edge = |from: &str, to: &str| Edge {
        from: from.into(),
        to: to.into(),
        file: PathBuf::from(format!("{from}/mod.rs")),
        line: 7,
    };
    assert!(violations(&[edge("input", "model"), edge("app", "config")]).is_empty());
    assert_eq!(
        violations(&[
            edge("model", "classify"),
            edge("input", "classify"),
            edge("render", "export"),
            edge("gate", "nowhere"),
        ]),
        [
            "src/model/mod.rs:7: `model` uses `classify`, which is above it; modules use only \
             the levels below",
            "src/input/mod.rs:7: `input` uses `classify`, on the same level; one level's \
             modules do not use each other",
            "src/render/mod.rs:7: `render` uses `export`, on the same level; one level's \
             modules do not use each other",
            "src/gate/mod.rs:7: `gate` uses `nowhere`, which is not in the layering; add it to \
             LEVELS (and docs/design.md)",
        ]
    );
}

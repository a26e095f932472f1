//! The shape of `src/` (issue 59), kept as rust-analyzer's tidy tests keep theirs: no `use`
//! circle between the files of one folder, no file of `aggregate/` or `input/` over 1,000
//! lines, and no function over 80 lines but the listed ones, which may only leave the list.
//! `architecture.rs` keeps the layering between top-level modules; this keeps each folder
//! readable from the bottom up. `docs/layout.md`'s file list is made here from the tree.
//!
//! Edges inside a folder are read from the source text as in `architecture.rs`: a file's
//! `super::NAME` and `crate::PATH::NAME` paths to its own folder, resolved to the sibling file
//! or subfolder that defines or re-exports NAME (else the folder's `mod.rs`), and `mod.rs`'s
//! `CHILD::` paths to its children. A subfolder is one node of its parent folder; `mod.rs`
//! is the folder's face, not a node (its children use what it declares, as in every Rust
//! module). Unit tests
//! (`#[cfg(test)] mod ... { }`) are left out: they may use anything of their file's folder.

use super::architecture::{code_only, rust_files, used_modules};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Functions over 80 lines, by file (under `src/`) and name. A function may leave this list
/// (split it, then delete its line here; the test says when one has left), never join it.
const LONG_FUNCTIONS: &[(&str, &str)] = &[
    ("render/words/notices.rs", "text"),
    ("render/words/findings.rs", "text"),
    ("input/perf_data/header.rs", "check_header"),
    ("input/jfr/mod.rs", "event"),
    ("input/perf_data/decode.rs", "decode_sample"),
    ("input/perf_data/fold.rs", "finish"),
    ("input/jfr/chunk.rs", "read_metadata"),
    ("input/speedscope.rs", "evented"),
];

/// Of those, the flat `match` tables allowed past 120 lines: one arm per kind of finding or
/// notice, each a sentence, where splitting would only hide the table.
const FLAT_TABLES: &[(&str, &str)] = &[
    ("render/words/notices.rs", "text"),
    ("render/words/findings.rs", "text"),
];

/// The folders whose files stay under this many lines: the readers and the walk, where a
/// reader should find one thing per file.
const SHORT_FILE_FOLDERS: &[(&str, usize)] = &[("aggregate", 1000), ("input", 1000)];

/// The source with its unit-test modules blanked (`#[cfg(test)]` followed by a `mod` block),
/// lines kept.
fn without_tests(code: &str) -> String {
    let mut out = code.to_string();
    while let Some(at) = out.find("#[cfg(test)]") {
        let after = &out[at + "#[cfg(test)]".len()..];
        let rest = after.trim_start();
        let is_module = rest.starts_with("mod ") || rest.starts_with("pub mod ");
        let end = match (is_module, rest.find('{')) {
            (true, Some(open)) => {
                let start = at + "#[cfg(test)]".len() + (after.len() - rest.len()) + open;
                let mut depth = 0usize;
                let mut end = out.len();
                for (i, c) in out[start..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = start + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            _ => at + "#[cfg(test)]".len(),
        };
        let blank: String = out[at..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(at..end, &blank);
    }
    out
}

/// A folder's nodes: its `.rs` files and its subfolders, by module name (`mod` for mod.rs).
fn nodes(folder: &Path) -> BTreeSet<String> {
    std::fs::read_dir(folder)
        .expect("folder")
        .filter_map(|e| {
            let path = e.expect("entry").path();
            let name = path.file_name()?.to_string_lossy().into_owned();
            if path.is_dir() {
                Some(name)
            } else {
                name.strip_suffix(".rs").map(str::to_string)
            }
        })
        .collect()
}

/// The child that `mod.rs` re-exports `name` from (`pub use child::{..name..}`), if any.
fn reexporter(mod_code: &str, children: &BTreeSet<String>, name: &str) -> Option<String> {
    mod_code
        .split(';')
        .map(str::trim)
        .filter_map(|statement| {
            let tree = statement
                .strip_prefix("pub use ")
                .or_else(|| statement.strip_prefix("pub(crate) use "))
                .or_else(|| statement.strip_prefix("pub(super) use "))?;
            let child = tree.split("::").next()?.trim();
            let named = tree
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|word| word == name);
            (children.contains(child) && named).then(|| child.to_string())
        })
        .next()
}

/// The files of a node (a subfolder's files all count as that node's), each with its code
/// and how many `super::` lead from it to this folder (`self::` when none).
fn node_files(folder: &Path, node: &str) -> Vec<(usize, String)> {
    let mut files = Vec::new();
    let dir = folder.join(node);
    if dir.is_dir() {
        rust_files(&dir, &mut files);
    } else {
        files.push(folder.join(format!("{node}.rs")));
    }
    files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(folder).expect("in the folder");
            let is_mod = f.file_name().is_some_and(|n| n == "mod.rs");
            let ups = rel.components().count() - usize::from(is_mod);
            let code = without_tests(&code_only(&std::fs::read_to_string(f).expect("UTF-8")));
            (ups, code)
        })
        .collect()
}

/// The module path of a folder from `crate` (`crate::input::perf_data`).
fn crate_path(folder: &Path) -> String {
    let rel = folder.strip_prefix(src()).expect("under src");
    let mut path = String::from("crate");
    for part in rel.components() {
        path.push_str("::");
        path.push_str(&part.as_os_str().to_string_lossy());
    }
    path
}

/// The edges between the nodes of one folder.
pub(super) fn folder_edges(folder: &Path) -> BTreeSet<(String, String)> {
    let children = nodes(folder);
    let mod_code: String = node_files(folder, "mod")
        .into_iter()
        .map(|(_, code)| code)
        .collect();
    let resolve = |name: &str| -> String {
        if children.contains(name) && name != "mod" {
            name.to_string()
        } else {
            reexporter(&mod_code, &children, name).unwrap_or_else(|| "mod".to_string())
        }
    };
    let mut edges = BTreeSet::new();
    for node in &children {
        for (ups, code) in node_files(folder, node) {
            let mut names: Vec<String> = used_modules(&code, &crate_path(folder))
                .into_iter()
                .map(|(name, _)| name)
                .collect();
            if ups == 0 {
                names.extend(used_modules(&code, "self").into_iter().map(|(n, _)| n));
                names.extend(children.iter().filter(|c| uses_child(&code, c)).cloned());
            } else {
                let up = vec!["super"; ups].join("::");
                names.extend(used_modules(&code, &up).into_iter().map(|(n, _)| n));
            }
            for name in names {
                if name == "super" || name == "self" {
                    continue;
                }
                let to = resolve(&name);
                // `mod.rs` is the folder's face, not one of its files: its children use what
                // it declares and it uses them, as every Rust module does
                if &to != node && to != "mod" && node != "mod" {
                    edges.insert((node.clone(), to));
                }
            }
        }
    }
    edges
}

/// Whether `mod.rs`'s code names `child::` as a path of its own (not `other::child::`).
fn uses_child(code: &str, child: &str) -> bool {
    let pattern = format!("{child}::");
    code.match_indices(&pattern).any(|(at, _)| {
        let before = code[..at].trim_end_matches(' ');
        let prev = before.chars().last();
        !prev.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && (!before.ends_with("::") || before.ends_with("self::"))
    }) || code.contains(&format!("use {child};"))
}

/// The circles among `edges`: each strongly connected set of more than one node.
pub(super) fn circles(edges: &BTreeSet<(String, String)>) -> Vec<BTreeSet<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges {
        next.entry(a).or_default().push(b);
    }
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(n) = todo.pop() {
            for m in next.get(n.as_str()).into_iter().flatten() {
                if seen.insert(m.to_string()) {
                    todo.push(m.to_string());
                }
            }
        }
        seen
    };
    let nodes: BTreeSet<&str> = edges
        .iter()
        .flat_map(|(a, b)| [a.as_str(), b.as_str()])
        .collect();
    let mut out: Vec<BTreeSet<String>> = Vec::new();
    for n in &nodes {
        let from_n = reach(n);
        if !from_n.contains(*n) {
            continue;
        }
        let circle: BTreeSet<String> = from_n
            .iter()
            .filter(|m| reach(m).contains(*n))
            .cloned()
            .collect();
        if !out.contains(&circle) {
            out.push(circle);
        }
    }
    out
}

fn folders(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            out.push(path.clone());
            folders(&path, out);
        }
    }
    out.sort();
}

#[test]
fn no_file_of_a_folder_uses_another_in_a_circle() {
    let mut all = Vec::new();
    folders(&src(), &mut all);
    let mut found = Vec::new();
    let mut edge_count = 0;
    for folder in all.iter().filter(|f| f.join("mod.rs").is_file()) {
        let edges = folder_edges(folder);
        edge_count += edges.len();
        for circle in circles(&edges) {
            let rel = folder.strip_prefix(src()).unwrap().display().to_string();
            let ties: Vec<String> = edges
                .iter()
                .filter(|(a, b)| circle.contains(a) && circle.contains(b))
                .map(|(a, b)| format!("{a} -> {b}"))
                .collect();
            found.push(format!("src/{rel}/: {}", ties.join(", ")));
        }
    }
    assert!(
        edge_count > 50,
        "found only {edge_count} edges inside folders: the scanner is broken"
    );
    assert!(
        found.is_empty(),
        "files of one folder use each other in a circle (put what both need in a lower \
         file):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_circle_finder_sees_a_circle_through_a_reexport() {
    let edges: BTreeSet<(String, String)> = [("a", "mod"), ("mod", "b"), ("b", "a"), ("c", "a")]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let found = circles(&edges);
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0],
        ["a", "b", "mod"].iter().map(|s| s.to_string()).collect()
    );
    let children: BTreeSet<String> = ["walk", "quality"].iter().map(|s| s.to_string()).collect();
    assert_eq!(
        reexporter(
            "pub use walk::{StackWalk, is_cut_short}; pub use quality::Quality",
            &children,
            "is_cut_short"
        ),
        Some("walk".to_string())
    );
    assert!(uses_child("let x = walk::f();", "walk"));
    assert!(!uses_child("let x = crate::model::walk::f();", "walk"));
    assert!(
        without_tests("fn a() {}\n#[cfg(test)]\nmod tests {\n use super::*;\n}\nfn b() {}")
            .contains("fn b()")
    );
}

#[test]
fn no_reader_or_aggregate_file_is_over_a_thousand_lines() {
    let mut long = Vec::new();
    for (folder, limit) in SHORT_FILE_FOLDERS {
        let mut files = Vec::new();
        rust_files(&src().join(folder), &mut files);
        for file in files {
            let lines = std::fs::read_to_string(&file).unwrap().lines().count();
            if lines > *limit {
                long.push(format!("{}: {lines} lines", file.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "split these by what each part does:\n{}",
        long.join("\n")
    );
}

/// Every function of `src/` with its length in lines, from its `fn` line to the closing brace
/// at the same indent (rustfmt's layout), as (file under src, name, lines, first line).
fn function_lengths() -> Vec<(String, String, usize, usize)> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut out = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src()).unwrap().display().to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some((indent, name)) = fn_header(line) else {
                continue;
            };
            let close = format!("{indent}}}");
            if let Some(end) = (i..lines.len()).find(|&j| lines[j] == close) {
                out.push((rel.clone(), name, end - i + 1, i + 1));
            }
        }
    }
    out
}

/// The indent and name of a line that starts a function with a body (`pub(crate) fn name(`).
fn fn_header(line: &str) -> Option<(String, String)> {
    let trimmed = line.trim_start();
    let indent = &line[..line.len() - trimmed.len()];
    let mut rest = trimmed;
    for qualifier in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "async ",
        "unsafe ",
    ] {
        rest = rest.strip_prefix(qualifier).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("extern \"C\" ").unwrap_or(rest);
    let name: String = rest
        .strip_prefix("fn ")?
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty() && !trimmed.ends_with(';')).then(|| (indent.to_string(), name))
}

#[test]
fn no_function_is_over_80_lines_but_the_listed_ones() {
    let lengths = function_lengths();
    assert!(lengths.len() > 1000, "the function scanner is broken");
    let listed: BTreeSet<(&str, &str)> = LONG_FUNCTIONS.iter().copied().collect();
    let mut problems = Vec::new();
    let mut still_long = BTreeSet::new();
    for (file, name, len, line) in &lengths {
        let key = (file.as_str(), name.as_str());
        if *len > 80 {
            still_long.insert(key);
            if !listed.contains(&key) {
                problems.push(format!(
                    "src/{file}:{line}: `{name}` is {len} lines: split it into named steps"
                ));
            } else if *len > 120 && !FLAT_TABLES.contains(&key) {
                problems.push(format!(
                    "src/{file}:{line}: `{name}` is {len} lines, over 120: only flat tables may be"
                ));
            }
        }
    }
    for key in &listed {
        if !still_long.contains(key) {
            problems.push(format!(
                "src/{}: `{}` is no longer over 80 lines: delete its line in LONG_FUNCTIONS",
                key.0, key.1
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        LONG_FUNCTIONS.len() < 23,
        "issue 59: fewer than 23 functions over 80 lines (27 before it)"
    );
}

/// Where `docs/layout.md`'s file list starts and ends.
const LAYOUT_BEGIN: &str = "<!-- every file, made by tests/it/shape.rs from each file's first doc sentence; \
     `WHOSE_BLESS=1 cargo test --test main shape` rewrites it -->";
const LAYOUT_END: &str = "<!-- end of the file list -->";

/// The first sentence of a file's `//!` doc (a generated file says so in its `//` header).
fn first_doc_sentence(text: &str) -> String {
    let mut doc = String::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("//!") else {
            break;
        };
        let rest = rest.trim();
        if rest.is_empty() {
            break;
        }
        doc.push_str(rest);
        doc.push(' ');
    }
    if doc.is_empty() && text.contains("@generated") {
        return "generated (its header says from what and how)".to_string();
    }
    let doc = doc.trim();
    let end = doc
        .match_indices(". ")
        .map(|(i, _)| i)
        .find(|&i| {
            !["e.g", "i.e", ".."]
                .iter()
                .any(|abbr| doc[..i].ends_with(abbr))
        })
        .unwrap_or(doc.len());
    doc[..end].trim_end_matches('.').replace('|', "\\|")
}

/// The file list of `docs/layout.md`: one table row per file of `src/`, in path order.
fn layout_list() -> String {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut out = format!("{LAYOUT_BEGIN}\n\n| file | what it holds |\n| --- | --- |\n");
    for file in files {
        let rel = file.strip_prefix(src()).unwrap().display().to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        out.push_str(&format!(
            "| `src/{rel}` | {} |\n",
            first_doc_sentence(&text)
        ));
    }
    out.push('\n');
    out.push_str(LAYOUT_END);
    out
}

#[test]
fn the_layout_names_every_file_of_src() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/layout.md");
    let text = std::fs::read_to_string(&path).expect("docs/layout.md");
    let (before, rest) = text
        .split_once(LAYOUT_BEGIN)
        .expect("docs/layout.md has the file list's begin marker");
    let (_, after) = rest
        .split_once(LAYOUT_END)
        .expect("docs/layout.md has the file list's end marker");
    let want = format!("{before}{}{after}", layout_list());
    if std::env::var_os("WHOSE_BLESS").is_some() {
        std::fs::write(&path, &want).expect("write docs/layout.md");
        return;
    }
    assert!(
        text == want,
        "docs/layout.md's file list is not the tree's (a file was added, moved or its first doc \
         sentence changed): run `WHOSE_BLESS=1 cargo test --test main shape` and review the diff"
    );
}

//! The Node.js program's own scripts, guessed from the profile, so that its code is user code
//! without a `--user` flag, as a Go program's module is ([`super::go`]; issue 29).
//!
//! A JavaScript frame names its script (a `.cpuprofile` node's URL, a `--perf-basic-prof` map
//! entry's file). The program's own scripts are those with a path that are neither node's own
//! code (`node:` modules and `internal/...`, which the node preset claims) nor a package under
//! `node_modules/` (npm's install tree, whatever the package manager: npm, yarn, pnpm's
//! `node_modules/.pnpm/...`). The guess claims their common directory, entry by entry below
//! it ([`script_files::own_files`]), never a `node_modules/` tree inside it.

use super::row::Ecosystem;
use crate::classify::guess::{self, Evidence, Guess, OwnCode};
use crate::classify::script_files;
use crate::classify::unit::{Unit, UnitContext, UnitKind};
use crate::model::{Frame, FrameKind, Profile};
use std::collections::BTreeSet;

/// The program's scripts in `profiles`, or `None` when no frame is one.
pub fn own_code(
    profiles: &[Profile],
    claimed_by_presets: &dyn Fn(&Frame) -> bool,
) -> Option<OwnCode> {
    let mut own: BTreeSet<&str> = BTreeSet::new();
    let mut others: BTreeSet<&str> = BTreeSet::new();
    for (frame, file) in script_files::frames_with_file(profiles, is_script_path) {
        // a .cpuprofile's or perf map's JavaScript frame (jit), or a script by its file
        // name in inputs that do not say the language (pprof from @datadog/pprof)
        if !matches!(frame.kind, FrameKind::Jit | FrameKind::Interpreted) && !is_script_file(file) {
            continue;
        }
        if is_dependency(file) || claimed_by_presets(frame) {
            others.insert(file);
        } else {
            own.insert(file);
        }
    }
    let (dir, files, names) = script_files::own_files(&own, others)?;
    Some(OwnCode {
        unit: UnitKind::NodeScripts,
        name: dir.clone(),
        prefixes: Vec::new(),
        files,
        evidence: Evidence::NodeScripts {
            count: own.len(),
            dir: dir.clone(),
            names: names.iter().map(|n| n.to_string()).collect(),
        },
        ..OwnCode::default()
    })
}

/// A script with a file system path (not `node:fs`, `evalmachine.<anonymous>`, `[eval]`,
/// `https://...`).
fn is_script_path(file: &str) -> bool {
    file.starts_with('/')
        || file
            .as_bytes()
            .get(1..3)
            .is_some_and(|s| s == b":\\" || s == b":/")
}

/// A JavaScript or TypeScript source file by its extension.
fn is_script_file(file: &str) -> bool {
    const EXTENSIONS: &[&str] = &[".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"];
    EXTENSIONS.iter().any(|e| file.ends_with(e))
}

/// A file of an installed package.
fn is_dependency(file: &str) -> bool {
    file.contains("/node_modules/") || file.contains("\\node_modules\\")
}

/// `/app/node_modules/@scope/name/lib/x.js` → `@scope/name`; the last `node_modules/` is the
/// package's own (pnpm and nested installs put packages inside others).
pub fn npm_package(path: &str) -> Option<String> {
    // most names asked have no `/` at all, found without building a substring searcher
    if memchr::memchr(b'/', path.as_bytes()).is_none() || !path.contains("node_modules/") {
        return None;
    }
    let (_, rest) = path.rsplit_once("node_modules/")?;
    let mut parts = rest.split('/');
    let first = parts.next().filter(|p| is_path_name(p))?;
    let name = if first.starts_with('@') {
        let second = parts.next().filter(|p| is_path_name(p))?;
        format!("{first}/{second}")
    } else {
        first.to_string()
    };
    // `node_modules/.bin`, `.pnpm` (without the package after it) are no package
    (!name.starts_with('.')).then_some(name)
}

/// A path segment that can be a package's name: not empty, no spaces or colons (a `:line`).
fn is_path_name(s: &str) -> bool {
    !s.is_empty() && !s.contains([' ', ':', '(', ')'])
}

/// The npm package of a frame's file, or of a JavaScript name that carries its file.
fn unit(frame: &Frame, _key: &str, _context: UnitContext) -> Option<Unit> {
    let name = (frame.file.as_deref())
        .and_then(npm_package)
        .or_else(|| npm_package(&frame.name))?;
    Some(Unit {
        kind: UnitKind::NpmPackage,
        name,
    })
}

fn guesses(profiles: &[Profile], claimed_by_presets: &dyn Fn(&Frame) -> bool) -> Vec<Guess> {
    guess::found(own_code(profiles, claimed_by_presets))
}

/// Node.js: `node.toml`, the program's scripts, npm packages under `node_modules/`.
pub const ECOSYSTEM: Ecosystem = Ecosystem::language(
    "node",
    include_str!("../../../rules/node.toml"),
    guesses,
    unit,
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SampleType;

    fn profile(files: &[&str]) -> Profile {
        let mut p = Profile::new(vec![SampleType::samples()]);
        for (i, file) in files.iter().enumerate() {
            p.intern_frame(Frame {
                file: Some((*file).into()),
                ..Frame::named(format!("f{i}"), FrameKind::Jit)
            });
        }
        p
    }

    #[test]
    fn the_scripts_outside_node_modules_and_node_are_the_programs() {
        let p = profile(&[
            "/srv/app/app.js",
            "/srv/app/src/records.js",
            "/srv/app/node_modules/somepkg/index.js",
            "node:internal/crypto/hash",
            "evalmachine.<anonymous>",
        ]);
        let code = own_code(&[p], &|f| {
            f.file.as_deref().is_some_and(|f| f.starts_with("node:"))
        })
        .unwrap();
        assert_eq!(code.name, "/srv/app");
        assert_eq!(code.files, ["/srv/app/app.js", "/srv/app/src/*"]);
        let Evidence::NodeScripts { count, .. } = code.evidence else {
            panic!("{:?}", code.evidence);
        };
        assert_eq!(count, 2);
        let block = code.user_block();
        let frame = |file: &str| Frame {
            file: Some(file.into()),
            ..Frame::named("x", FrameKind::Jit)
        };
        let probe = |file: &str| {
            let f = frame(file);
            let key = crate::classify::match_key::match_key(&f.name);
            crate::classify::probe::Probe::new(&f, &key)
                .block_match(&block)
                .is_some()
        };
        assert!(probe("/srv/app/src/new.js"));
        assert!(!probe("/srv/app/node_modules/somepkg/index.js"));
    }

    #[test]
    fn scripts_of_native_frames_count_by_their_extension() {
        // pprof from @datadog/pprof: no frame kind says JavaScript, the file name does
        let mut p = Profile::new(vec![SampleType::samples()]);
        for file in ["/srv/app/main.js", "/usr/lib/libc.c"] {
            p.intern_frame(Frame {
                file: Some(file.into()),
                ..Frame::named("f", FrameKind::Native)
            });
        }
        let code = own_code(&[p], &|_| false).unwrap();
        assert_eq!(code.files, ["/srv/app/main.js"]);
    }

    #[test]
    fn only_dependencies_no_guess() {
        let p = profile(&["/srv/app/node_modules/a/index.js", "node:fs"]);
        assert!(own_code(&[p], &|_| false).is_none());
    }
}

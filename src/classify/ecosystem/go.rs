//! The Go program's own module, detected from the profile, so that its packages are user code
//! without a `--user` flag (issue 3, item 4).
//!
//! Go names functions by import path (`example.com/svc/internal/db.Query`), and the main
//! package is always `main.`. The module path is found from the main package's source file:
//! - built with `-trimpath`, file names are import-path relative (`whose/gosvc/main.go`), so
//!   the module is the file's directory (less a trailing `/cmd/NAME`, where main packages of
//!   multi-binary modules live);
//! - otherwise file names are absolute (`/home/u/svc/main.go`); a function of another package
//!   whose file lies under the same directory (`/home/u/svc/internal/db/db.go`, package
//!   `example.com/svc/internal/db`) gives the module by removing that relative directory
//!   from its package path.
//!
//! - without file names (perf, folded text), a package path whose first element has no dot
//!   (`inventory/internal/report.Render`) and that no preset claims (the standard library's
//!   are all named in go.toml): Go reserves such paths for the standard library and the main
//!   module, so it is the program's (issue 53).
//!
//! - without file names, an `internal` package the main package calls
//!   (`example.com/packer/internal/codec`): only its module may import it.
//!
//! What no profile says (a module none of whose non-main packages was sampled, without
//! `-trimpath`) stays `--user`'s job.
//!
//! C code of the program's own, compiled into its binary by cgo (`score.c` beside the Go
//! files), is the user's too: in perf, a native frame of the binary that `main.` runs from
//! and that has no Go package, no preset claims (cgo's glue, the runtime's assembly) and no
//! C library's rule names ([`own_c_code`]).

use super::row::Ecosystem;
use crate::classify::guess::Guess;
use crate::classify::guess::{Evidence, OwnCode, Placement};
use crate::classify::unit::{Unit, UnitContext, UnitKind};
use crate::model::{Frame, FrameKind, Profile};
use regex::Regex;
use std::sync::LazyLock;

/// The detected module path and how it was found, for `explain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoModule {
    pub path: String,
    pub evidence: Evidence,
}

/// The program's own code of a Go profile: `main.`, and the detected module's packages
/// (`MODULE/...` and the module's root package `MODULE.`).
pub fn own_code(
    profiles: &[Profile],
    claimed_by_presets: &dyn Fn(&Frame) -> bool,
) -> Option<OwnCode> {
    let module = (profiles.iter().find_map(detect))
        .or_else(|| (profiles.iter()).find_map(|p| local_module(p, claimed_by_presets)))
        .or_else(|| profiles.iter().find_map(internal_called_by_main))?;
    Some(OwnCode {
        unit: UnitKind::GoModule,
        prefixes: vec![
            "main.".to_string(),
            format!("{}/", module.path),
            format!("{}.", module.path),
        ],
        files: Vec::new(),
        name: module.path,
        evidence: module.evidence,
        ..OwnCode::default()
    })
}

/// The module of the main package of a Go profile, when its frames say it. Every file of the
/// main package is tried (sorted, so the answer does not depend on frame order) but cgo's
/// generated ones (`_cgo_gotypes.go`, named without a directory), which say nothing about
/// where the package lives.
pub fn detect(profile: &Profile) -> Option<GoModule> {
    let main_files: std::collections::BTreeSet<&str> = profile
        .frames()
        .filter(|f| f.name.starts_with("main."))
        .filter_map(|f| f.file.as_deref())
        .filter(|file| {
            let base = file.rsplit('/').next().unwrap_or(file);
            !base.starts_with("_cgo_") && file.contains('/')
        })
        .collect();
    main_files
        .into_iter()
        .find_map(|main_file| module_of_main_file(profile, main_file))
}

/// The module [`detect`] finds from one file of the main package.
fn module_of_main_file(profile: &Profile, main_file: &str) -> Option<GoModule> {
    let main_dir = strip_cmd(parent(main_file)?);
    if !main_file.starts_with('/') {
        return (!main_dir.is_empty()).then(|| GoModule {
            path: main_dir.to_string(),
            evidence: Evidence::GoMainFile {
                file: main_file.to_string(),
            },
        });
    }
    profile
        .frames()
        .find_map(|f| module_from_absolute(f, main_dir))
}

/// Without file names: the module of an `internal` package the main package calls directly
/// (`main.round` → `example.com/packer/internal/codec.Generate` → `example.com/packer`). Go
/// lets only code under an internal package's parent import it, so the main package is in
/// that module.
fn internal_called_by_main(profile: &Profile) -> Option<GoModule> {
    let mut found: Option<(String, String)> = None;
    for row in profile.rows() {
        let stack = profile.stack(row.stack);
        // leaf first: a frame whose caller (the next one) is the main package's
        for pair in stack.windows(2) {
            let (callee, caller) = (profile.frame(pair[0]), profile.frame(pair[1]));
            if !caller.name.starts_with("main.") {
                continue;
            }
            let Some(package) = go_package(&callee.name) else {
                continue;
            };
            let Some((module, _)) = package.split_once("/internal/") else {
                continue;
            };
            let better = found.as_ref().is_none_or(|(m, _)| module < m.as_str());
            if !module.is_empty() && better {
                found = Some((module.to_string(), callee.name.to_string()));
            }
        }
    }
    let (path, function) = found?;
    Some(GoModule {
        path,
        evidence: Evidence::GoInternalPackage { function },
    })
}

/// The main module named by a package path with no dot in its first element
/// (`inventory/internal/report.Render` → `inventory`) that no preset claims.
fn local_module(
    profile: &Profile,
    claimed_by_presets: &dyn Fn(&Frame) -> bool,
) -> Option<GoModule> {
    profile.frames().find_map(|f| {
        let package = go_package(&f.name)?;
        let (first, _) = package.split_once('/')?;
        let plain = !first.is_empty()
            && first != "main"
            && (first.chars()).all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        (plain && !claimed_by_presets(f)).then(|| GoModule {
            path: first.to_string(),
            evidence: Evidence::GoLocalPackage {
                function: f.name.to_string(),
            },
        })
    })
}

/// The C code of the program's binary (see the module doc): the binary the main package's
/// frames are in, when one of its native frames with a C name is claimed by no preset.
pub fn own_c_code(
    profiles: &[Profile],
    claimed_by_presets: &dyn Fn(&Frame) -> bool,
) -> Option<OwnCode> {
    let frames = || profiles.iter().flat_map(Profile::frames);
    let binary = frames()
        .filter(|f| f.name.starts_with("main."))
        .find_map(|f| f.module_basename())?
        .to_string();
    let function = frames().find(|f| {
        matches!(f.kind, FrameKind::Native | FrameKind::Inlined)
            && f.module_basename() == Some(binary.as_str())
            && is_c_name(&f.name)
            && !claimed_by_presets(f)
    })?;
    Some(OwnCode {
        unit: UnitKind::GoBinaryC,
        name: binary.clone(),
        c_in_module: Some(binary.clone()),
        placement: Placement::AfterPresets,
        evidence: Evidence::GoBinaryC {
            function: function.name.to_string(),
            module: binary,
        },
        ..OwnCode::default()
    })
}

/// A C function's name, as a Go binary's symbol table holds it: an identifier, with the
/// compiler's clone suffixes (`.part.0`, `.isra.0`, `.cold`), and nothing of a Go name (a
/// package path's `/` or `.`, Go's `·`). One pattern for the guess that finds the C code and
/// for the `user` block that claims it ([`OwnCode::c_in_module`]).
pub static C_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^[A-Za-z_][A-Za-z0-9_]*(\.(part|isra|constprop|cold|lto_priv|localalias)[.0-9a-z_]*)?$",
    )
    .expect("a valid regex")
});

/// Whether `name` is a C function's ([`C_NAME`]).
pub fn is_c_name(name: &str) -> bool {
    C_NAME.is_match(name)
}

/// A frame of a non-main package whose file is under `root`: its package path minus the
/// file's directory relative to `root` is the module path.
fn module_from_absolute(frame: &Frame, root: &str) -> Option<GoModule> {
    let file = frame.file.as_deref()?;
    let rel_dir = parent(file)?.strip_prefix(root)?.strip_prefix('/')?;
    let package = go_package(&frame.name)?;
    let module = package.strip_suffix(rel_dir)?.strip_suffix('/')?;
    (!module.is_empty() && module != "main").then(|| GoModule {
        path: module.to_string(),
        evidence: Evidence::GoPackageFile {
            function: frame.name.to_string(),
            file: file.to_string(),
        },
    })
}

fn parent(path: &str) -> Option<&str> {
    path.rsplit_once('/').map(|(dir, _)| dir)
}

/// `example.com/svc/cmd/server` → `example.com/svc`.
fn strip_cmd(dir: &str) -> &str {
    match dir.rsplit_once("/cmd/") {
        Some((module, name)) if !name.contains('/') => module,
        _ => dir,
    }
}

/// Code hosts whose module paths are `HOST/OWNER/REPO`.
const THREE_SEGMENT_HOSTS: &[&str] = &[
    "github.com",
    "gitlab.com",
    "bitbucket.org",
    "codeberg.org",
    "golang.org",
];

/// `github.com/foo/bar/pkg.(*T).Method` → `github.com/foo/bar`; `go.uber.org/zap.(*Logger).Info`
/// → `go.uber.org/zap`; `gopkg.in/yaml.v3.(*decoder).unmarshal` → `gopkg.in/yaml.v3`.
pub fn module_of(name: &str) -> Option<String> {
    let (host, _) = name.split_once('/')?;
    // a domain: dotted, lowercase, nothing a C++ or Java name would have
    let domain = host.contains('.')
        && !host.starts_with('.')
        && host
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-');
    if !domain {
        return None;
    }
    let package = go_package(name)?;
    let segments: Vec<&str> = package.split('/').collect();
    let take = if THREE_SEGMENT_HOSTS.contains(&host) {
        3
    } else {
        2
    };
    if segments.len() < take || segments.iter().any(|s| s.is_empty()) {
        return None;
    }
    let mut module = segments[..take].join("/");
    if let Some(major) = segments.get(take)
        && major.len() > 1
        && major.starts_with('v')
        && major[1..].chars().all(|c| c.is_ascii_digit())
    {
        module.push('/');
        module.push_str(major);
    }
    Some(module)
}

/// The package path of a Go function name: up to the first `.` after the last `/`, or past a
/// gopkg.in-style version (`yaml.v3`) that is part of the path.
fn go_package(name: &str) -> Option<&str> {
    let slash = name[..name.find(['(', ' ']).unwrap_or(name.len())].rfind('/')?;
    let last = &name[slash + 1..];
    let dot = last.find('.')?;
    let after = &last[dot + 1..];
    let version = after
        .strip_prefix('v')
        .map(|v| v.len() - v.trim_start_matches(|c: char| c.is_ascii_digit()).len())
        .filter(|&digits| digits > 0 && after[1 + digits..].starts_with('.'));
    let end = match version {
        Some(digits) => slash + 1 + dot + 2 + digits,
        None => slash + 1 + dot,
    };
    Some(&name[..end])
}

/// A Go function's module, as an auto-owner's unit.
fn unit(frame: &Frame, _key: &str, _context: UnitContext) -> Option<Unit> {
    module_of(&frame.name).map(|name| Unit {
        kind: UnitKind::GoModule,
        name,
    })
}

/// The program's module, and the C code cgo compiled into its binary.
fn guesses(profiles: &[Profile], claimed_by_presets: &dyn Fn(&Frame) -> bool) -> Vec<Guess> {
    let module = own_code(profiles, claimed_by_presets);
    let c = own_c_code(profiles, claimed_by_presets);
    module.into_iter().chain(c).map(Guess::Found).collect()
}

/// Go: `go.toml`, the main module's guess and third-party modules by import path.
pub const ECOSYSTEM: Ecosystem =
    Ecosystem::language("go", include_str!("../../../rules/go.toml"), guesses, unit);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FrameKind, SampleType};

    fn profile(frames: &[(&str, &str)]) -> Profile {
        let mut p = Profile::new(vec![SampleType::samples()]);
        for (name, file) in frames {
            p.intern_frame(Frame {
                file: Some((*file).into()),
                ..Frame::named(*name, FrameKind::Native)
            });
        }
        p
    }

    #[test]
    fn trimpath_builds_name_the_module_in_file_names() {
        let p = profile(&[
            ("net/http.(*conn).serve", "net/http/server.go"),
            ("main.handleOrders", "whose/gosvc/main.go"),
        ]);
        assert_eq!(detect(&p).unwrap().path, "whose/gosvc");
        let p = profile(&[("main.main", "example.com/svc/cmd/server/main.go")]);
        assert_eq!(detect(&p).unwrap().path, "example.com/svc");
    }

    #[test]
    fn absolute_file_names_need_another_package_of_the_module() {
        let p = profile(&[
            ("main.main", "/home/u/svc/cmd/api/main.go"),
            (
                "example.com/svc/internal/db.(*DB).Query",
                "/home/u/svc/internal/db/db.go",
            ),
            (
                "net/http.(*conn).serve",
                "/usr/lib/go/src/net/http/server.go",
            ),
        ]);
        assert_eq!(detect(&p).unwrap().path, "example.com/svc");
        // main alone says nothing about the module
        let p = profile(&[("main.main", "/home/u/svc/main.go")]);
        assert_eq!(detect(&p), None);
    }

    #[test]
    fn no_main_package_no_module() {
        let p = profile(&[("runtime.mallocgc", "runtime/malloc.go")]);
        assert_eq!(detect(&p), None);
        assert!(own_code(&[p], &|_| false).is_none());
    }

    #[test]
    fn a_package_path_without_a_domain_is_the_main_modules() {
        let p = profile(&[
            ("inventory/internal/report.Render", ""),
            ("encoding/json.Marshal", ""),
        ]);
        let std = |f: &Frame| f.name.starts_with("encoding/");
        let code = own_code(&[p], &std).unwrap();
        assert_eq!(code.name, "inventory");
        assert_eq!(code.prefixes, ["main.", "inventory/", "inventory."]);
        // the standard library's paths are the presets'
        let p = profile(&[("encoding/json.Marshal", "")]);
        assert!(own_code(&[p], &std).is_none());
    }

    #[test]
    fn c_names_and_go_names() {
        for c in ["score_block", "sqlite3VdbeExec", "helper.part.0", "f.cold"] {
            assert!(is_c_name(c), "{c}");
        }
        for go in ["main.work", "runtime.cgocall", "a/b.C", "type:.eq.main.T"] {
            assert!(!is_c_name(go), "{go}");
        }
    }

    #[test]
    fn cgo_files_of_the_main_package_say_nothing_and_internal_packages_name_the_module() {
        // pprof: a cgo stub's generated file first, then the real ones
        let p = profile(&[
            ("main._Cfunc_deflate", "_cgo_gotypes.go"),
            ("main.round", "/src/packer/main.go"),
            (
                "example.com/packer/internal/codec.Generate",
                "/src/packer/internal/codec/codec.go",
            ),
        ]);
        assert_eq!(detect(&p).unwrap().path, "example.com/packer");
        // perf script: no files; main calls the module's internal package
        let mut p = Profile::new(vec![SampleType::samples()]);
        let ids: Vec<_> = [
            "example.com/packer/internal/codec.Generate",
            "main.round",
            "main.main",
        ]
        .iter()
        .map(|n| p.intern_frame(Frame::named(*n, FrameKind::Native)))
        .collect();
        let stack = p.intern_stack(&ids);
        p.add_sample(stack, None, &[1]);
        let code = own_code(&[p], &|_| false).unwrap();
        assert_eq!(code.name, "example.com/packer");
    }
}

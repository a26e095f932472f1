//! The Python program's own files, guessed from the profile, so that its code is user code
//! without a `--user` flag, through the same mechanism as Go's module ([`crate::classify::own_code`];
//! issue 29).
//!
//! A Python frame (py-spy raw, folded and speedscope; a CPython 3.12+ `-X perf` map entry)
//! names its source file. The program's own files are those the python preset does not claim:
//! not the standard library (`/usr/lib/python3.11/...`, `<frozen ...>`, py-spy's short
//! `json/decoder.py`), not an installed package (`site-packages/`, `dist-packages/`).
//!
//! py-spy's raw output shortens paths relative to `sys.path`, so an installed package's file
//! reads `simplejson/encoder.py`, as a package of the program would. Before calling such a
//! relative file the program's, the rest of the profile is asked: a package of that top-level
//! name seen under `site-packages/` or `dist-packages/` in any frame's file or module (a
//! speedscope path, a `--native` extension module `/venv/.../site-packages/simplejson/_speedups...so`)
//! makes it an installed package's, left to the rules for third-party code; so does a
//! top-level name the python preset lists among its `vendors` (`jinja2`, `django`: issue 53),
//! seen installed or not.
//!
//! Template code is the program's too (issue 53): Jinja2 and Mako compile a template into
//! Python whose code objects carry the template's file name (`/app/templates/page.html`), so
//! an interpreted frame of a file that is not Python source is the template's, and a template
//! of the program's tree is its code like its `.py` files.

use super::row::{Ecosystem, Interpreter, Runtime};
use super::vendors;
use crate::classify::guess::{self, Evidence, Guess, OwnCode};
use crate::classify::script_files;
use crate::classify::unit::{Unit, UnitContext, UnitKind};
use crate::model::{Frame, FrameKind, Profile};
use std::collections::BTreeSet;

/// The program's Python files in `profiles`, or `None` when no frame is one.
pub fn own_code(
    profiles: &[Profile],
    claimed_by_presets: &dyn Fn(&Frame) -> bool,
) -> Option<OwnCode> {
    // top-level package names the profile shows installed
    let mut installed: BTreeSet<&str> = BTreeSet::new();
    for profile in profiles {
        for frame in profile.frames() {
            for path in [frame.file.as_deref(), frame.module.as_deref()]
                .into_iter()
                .flatten()
            {
                if let Some(top) = installed_package(path) {
                    installed.insert(top);
                }
            }
        }
    }
    let mut own: BTreeSet<&str> = BTreeSet::new();
    let mut others: BTreeSet<&str> = BTreeSet::new();
    let mut shortened: BTreeSet<&str> = BTreeSet::new();
    for (frame, file) in script_files::frames_with_file(profiles, is_python_file) {
        if frame.kind != FrameKind::Interpreted {
            continue;
        }
        if claimed_by_presets(frame) || installed_package(file).is_some() {
            others.insert(file);
        } else if !file.starts_with('/')
            && let Some((top, _)) = file.split_once('/')
            && (installed.contains(top) || vendors::is_python_vendor(top))
        {
            shortened.insert(top);
            others.insert(file);
        } else {
            own.insert(file);
        }
    }
    let (dir, files, names) = script_files::own_files(&own, others)?;
    let evidence = Evidence::PythonFiles {
        count: own.len(),
        dir: dir.clone(),
        names: names.iter().map(|n| n.to_string()).collect(),
        not_packages: shortened.into_iter().map(str::to_string).collect(),
    };
    Some(OwnCode {
        unit: UnitKind::PythonFiles,
        // files named relative to sys.path have no directory to name them by: render names
        // them by some of the files (the evidence's names)
        name: dir,
        prefixes: Vec::new(),
        files,
        evidence,
        ..OwnCode::default()
    })
}

/// Whether `module` (a path or file name) is CPython's interpreter: the `python3.X` executable
/// or `libpython3.X.so`.
pub fn is_cpython_module(module: &str) -> bool {
    let base = module.rsplit('/').next().unwrap_or(module);
    let version = base
        .strip_prefix("libpython3")
        .or_else(|| base.strip_prefix("python3"));
    version.is_some_and(|v| {
        v.is_empty() || v.starts_with('.') && !v.contains("-config") && !v.ends_with(".py")
    })
}

/// Python source or a template compiled to Python (`page.html`), not CPython's pseudo-files
/// (`<frozen ...>`, `<string>`, `<template>`) nor the native files an interpreted frame never
/// has but a mixed profile's other frames do (`.c`, `.so`).
fn is_python_file(file: &str) -> bool {
    let native = [".c", ".h", ".so", ".cc", ".cpp", ".rs", ".go", ".js"]
        .iter()
        .any(|ext| file.ends_with(ext));
    !file.is_empty() && !file.starts_with('<') && !native
}

/// `.../site-packages/simplejson/encoder.py` → `simplejson`; `.../site-packages/_cffi_backend.cpython-311-x86_64-linux-gnu.so` → `_cffi_backend`.
fn installed_package(path: &str) -> Option<&str> {
    let (_, rest) = path
        .rsplit_once("site-packages/")
        .or_else(|| path.rsplit_once("dist-packages/"))?;
    let top = rest.split('/').next()?;
    let top = top.split('.').next()?;
    (!top.is_empty()).then_some(top)
}

/// `/usr/lib/python3/dist-packages/simplejson/encoder.py` → `simplejson`;
/// `site-packages/six.py` → `six`; an extension module `_cffi_backend.cpython-311-….so` →
/// `_cffi_backend`.
pub fn python_package(path: &str) -> Option<String> {
    let rest = ["site-packages/", "dist-packages/"]
        .iter()
        .filter_map(|marker| path.rsplit_once(marker).map(|(_, rest)| rest))
        .min_by_key(|rest| rest.len())?;
    let (first, below) = match rest.split_once('/') {
        Some((first, below)) => (first, Some(below)),
        None => (rest, None),
    };
    let name = if below.is_none() {
        // a module file directly in site-packages: the module's name
        first.split('.').next().unwrap_or(first)
    } else {
        first
    };
    // `foo-1.0.dist-info`, `foo.egg-info`, `__pycache__` hold no code of a package
    let plain = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (plain && !name.is_empty() && name != "__pycache__").then(|| name.to_string())
}

/// The package of a frame's file under `site-packages/`; a C extension's module path names
/// its package too (`.../site-packages/markupsafe/_speedups.cpython-312-x86_64-linux-gnu.so`).
fn unit(frame: &Frame, _key: &str, _context: UnitContext) -> Option<Unit> {
    let name = (frame.file.as_deref())
        .and_then(python_package)
        .or_else(|| frame.module.as_deref().and_then(python_package))?;
    Some(Unit {
        kind: UnitKind::PythonPackage,
        name,
    })
}

fn guesses(profiles: &[Profile], claimed_by_presets: &dyn Fn(&Frame) -> bool) -> Vec<Guess> {
    guess::found(own_code(profiles, claimed_by_presets))
}

/// CPython: `python.toml`, the program's files, packages under `site-packages/`; the preset's
/// `python-packages` (all of `site-packages`) and `python-extensions` (every C extension
/// module) lump packages together, so their frames go to their package's guessed owner.
pub const ECOSYSTEM: Ecosystem = Ecosystem {
    umbrella_owners: &["python-packages", "python-extensions"],
    interpreter: Some(Interpreter {
        runtime: Runtime::CPython,
        is_module: is_cpython_module,
    }),
    ..Ecosystem::language(
        "python",
        include_str!("../../../rules/python.toml"),
        guesses,
        unit,
    )
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SampleType;

    fn profile(frames: &[(&str, Option<&str>, FrameKind)]) -> Profile {
        let mut p = Profile::new(vec![SampleType::samples()]);
        for (i, (file, module, kind)) in frames.iter().enumerate() {
            p.intern_frame(Frame {
                file: Some((*file).into()),
                module: module.map(Into::into),
                ..Frame::named(format!("f{i}"), *kind)
            });
        }
        p
    }

    const PY: FrameKind = FrameKind::Interpreted;

    fn std_claims(f: &Frame) -> bool {
        f.file
            .as_deref()
            .is_some_and(|f| f.starts_with("json/") || f.contains("/lib/python3"))
    }

    #[test]
    fn files_outside_the_stdlib_and_site_packages_are_the_programs() {
        let p = profile(&[
            ("/srv/app/main.py", None, PY),
            ("/srv/app/app/db.py", None, PY),
            ("/usr/lib/python3.11/json/decoder.py", None, PY),
            (
                "/venv/lib/python3.11/site-packages/requests/api.py",
                None,
                PY,
            ),
        ]);
        let code = own_code(&[p], &std_claims).unwrap();
        assert_eq!(code.name, "/srv/app");
        assert_eq!(code.files, ["/srv/app/app/*", "/srv/app/main.py"]);
    }

    #[test]
    fn a_shortened_path_of_a_package_seen_installed_is_not_the_programs() {
        let p = profile(&[
            ("app.py", None, PY),
            ("simplejson/encoder.py", None, PY),
            ("json/encoder.py", None, PY),
            (
                "_speedups.c",
                Some(
                    "/venv/lib/python3.11/site-packages/simplejson/_speedups.cpython-311-x86_64-linux-gnu.so",
                ),
                FrameKind::Native,
            ),
        ]);
        let code = own_code(&[p], &std_claims).unwrap();
        assert_eq!(code.files, ["app.py"]);
        let Evidence::PythonFiles { not_packages, .. } = &code.evidence else {
            panic!("{:?}", code.evidence);
        };
        assert_eq!(not_packages, &["simplejson"]);
        // without that evidence (and not a package the preset lists) the short path is taken
        // for the program's own package
        let p = profile(&[("app.py", None, PY), ("acmelib/encoder.py", None, PY)]);
        let code = own_code(&[p], &std_claims).unwrap();
        assert_eq!(code.files, ["acmelib/*", "app.py"]);
    }

    #[test]
    fn templates_are_the_programs_and_listed_vendors_are_not() {
        let p = profile(&[
            ("/srv/shop/app.py", None, PY),
            ("/srv/shop/templates/page.html", None, PY),
            ("/srv/shop/templates/macros.j2", None, PY),
            ("<string>", None, PY),
            // py-spy's short name of an installed framework, seen nowhere under
            // site-packages: the preset's vendor list says it is not the program's
            ("jinja2/environment.py", None, PY),
        ]);
        let code = own_code(&[p], &std_claims).unwrap();
        assert_eq!(code.name, "/srv/shop");
        assert_eq!(code.files, ["/srv/shop/app.py", "/srv/shop/templates/*"]);
        let Evidence::PythonFiles { not_packages, .. } = &code.evidence else {
            panic!("{:?}", code.evidence);
        };
        assert_eq!(not_packages, &["jinja2"]);
    }

    #[test]
    fn the_stdlib_alone_no_guess() {
        let p = profile(&[
            ("json/encoder.py", None, PY),
            ("<frozen importlib._bootstrap>", None, PY),
        ]);
        assert!(own_code(&[p], &std_claims).is_none());
    }
}

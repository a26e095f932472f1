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
//! What no profile says (a module none of whose non-main packages was sampled, without
//! `-trimpath`) stays `--user`'s job.

use super::own_code::{Evidence, OwnCode};
use crate::model::{Frame, Profile};

/// The detected module path and how it was found, for `explain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoModule {
    pub path: String,
    pub evidence: Evidence,
}

/// The program's own code of a Go profile: `main.`, and the detected module's packages
/// (`MODULE/...` and the module's root package `MODULE.`).
pub fn own_code(profiles: &[Profile]) -> Option<OwnCode> {
    let module = profiles.iter().find_map(detect)?;
    Some(OwnCode {
        unit: "go module",
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

/// The module of the main package of a Go profile, when its frames say it.
pub fn detect(profile: &Profile) -> Option<GoModule> {
    let main_file = profile
        .frames()
        .filter(|f| f.name.starts_with("main."))
        .find_map(|f| f.file.as_deref())?;
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

/// `example.com/svc/internal/db.(*T).Query` → `example.com/svc/internal/db`.
fn go_package(name: &str) -> Option<&str> {
    let slash = name.rfind('/')?;
    let dot = name[slash..].find('.')? + slash;
    Some(&name[..dot])
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
        assert!(own_code(&[p]).is_none());
    }
}

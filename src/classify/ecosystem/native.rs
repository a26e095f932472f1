//! A native (C, C++) program's own code: the recorded executable, the binary the process
//! exec'd, guessed from the profile so that its code is user code without a `--user` flag,
//! through the same mechanism as Go's module ([`crate::classify::own_code`]; issue 29).
//!
//! A C or C++ function name says nothing of who wrote it (`work`, `Index::add`), but perf
//! says which file each frame's code is in. The program's own code is its executable's, by
//! module, not by a name prefix: the module of the C `main` symbol, else of the outermost
//! frames of the most weight ([`main_module`]). Shared libraries are their own units
//! ([`crate::classify::auto_owner`]), the presets' runtimes (glibc, libstdc++) their presets'.
//!
//! No guess is made where the executable is a runtime: the interpreter or VM a preset claims
//! by module (`python3`, `node`, `java`), or the program of a language whose own guess knows
//! more (a Go or Rust binary holds its dependencies too: [`super::go`],
//! [`super::rust`]). The block goes after the presets ([`Placement::AfterPresets`]): C++'s
//! `std::` code inlined into the executable, or a static libc, stays the presets'.

use super::row::{Ecosystem, GuessWhen};
use crate::classify::guess::{self, Evidence, Guess, OwnCode, Placement};
use crate::classify::unit::{Unit, UnitContext, UnitKind};
use crate::model::{Frame, FrameKind, Profile, perf};
use rustc_hash::FxHashMap;

/// The executable's own code in the first of `profiles` that shows it, or `None`.
pub fn own_code(
    profiles: &[Profile],
    claimed_by_presets: &dyn Fn(&Frame) -> bool,
) -> Option<OwnCode> {
    profiles.iter().find_map(|p| detect(p, claimed_by_presets))
}

fn detect(profile: &Profile, claimed_by_presets: &dyn Fn(&Frame) -> bool) -> Option<OwnCode> {
    let (module, by_main) = main_module_and_how(profile)?;
    let basename = module.rsplit('/').next().unwrap_or(module);
    // a runtime the presets claim as a whole (any name in that module is theirs)
    let probe = Frame {
        module: Some(module.into()),
        ..Frame::named("\u{1}", FrameKind::Native)
    };
    if !is_program_file(&probe) || claimed_by_presets(&probe) {
        return None;
    }
    // some of its code must be left for the guess: frames the presets do not claim
    profile
        .frames()
        .any(|f| {
            f.module.as_deref() == Some(module)
                && f.kind != FrameKind::Unknown
                && !claimed_by_presets(f)
        })
        .then(|| OwnCode {
            unit: UnitKind::Executable,
            name: basename.to_string(),
            modules: vec![basename.to_string()],
            placement: Placement::AfterPresets,
            evidence: Evidence::Executable {
                module: module.to_string(),
                by_main,
            },
            ..OwnCode::default()
        })
}

/// The main binary's module: that of the C `main` symbol when sampled, else the module of the
/// most weight's outermost frame that is in a program file (not a shared library, the kernel,
/// `[vdso]`, JIT code or an unmapped address). `None`: frames without a module (folded text).
/// `convert --to pprof` names it first among the mappings, pprof's main binary.
pub fn main_module(profile: &Profile) -> Option<&str> {
    main_module_and_how(profile).map(|(m, _)| m)
}

/// [`main_module`], and whether it was found as the module of `main` (else as the outermost
/// program file on the most weight).
fn main_module_and_how(profile: &Profile) -> Option<(&str, bool)> {
    if let Some(module) = profile
        .frames()
        .find(|f| &*f.name == "main" && f.kind == FrameKind::Native)
        .and_then(|f| f.module.as_deref())
    {
        return Some((module, true));
    }
    let mut weight: FxHashMap<&str, u128> = FxHashMap::default();
    for row in profile.rows() {
        if let Some(module) = profile
            .stack(row.stack)
            .iter()
            .rev()
            .map(|&f| profile.frame(f))
            .find(|f| is_program_file(f))
            .and_then(|f| f.module.as_deref())
        {
            *weight.entry(module).or_default() += row.values[profile.default_sample_type];
        }
    }
    weight
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
        .map(|(m, _)| (m, false))
}

/// A native frame in an executable: not a shared library, the kernel, `[vdso]` or JIT code.
fn is_program_file(f: &Frame) -> bool {
    let Some(basename) = f.module_basename() else {
        return false;
    };
    let library = basename.contains(".so") || basename.starts_with('[');
    let native = matches!(f.kind, FrameKind::Native | FrameKind::Inlined);
    native && !library && !perf::is_jit_module(basename) && !perf::is_kernel_module(basename)
}

/// `libfoo.so.1.2` → `libfoo.so`; `_json.cpython-311-x86_64-linux-gnu.so` → itself; `None` for
/// what is no shared library (`[kernel.kallsyms]`, `perf-123.map`, `jitted-12-3.so`, an
/// executable).
pub fn shared_library(basename: &str) -> Option<String> {
    if basename.starts_with('[')
        || basename.starts_with("perf-")
        || basename.starts_with("jitted-")
        || basename.ends_with(".map")
    {
        return None;
    }
    let end = basename
        .find(".so.")
        .map(|i| i + 3)
        .or_else(|| basename.ends_with(".so").then_some(basename.len()))?;
    (end > 3).then(|| basename[..end].to_string())
}

/// A native frame's shared library, version less.
fn unit(frame: &Frame, _key: &str, _context: UnitContext) -> Option<Unit> {
    if !matches!(frame.kind, FrameKind::Native | FrameKind::Inlined) {
        return None;
    }
    let name = frame.module_basename().and_then(shared_library)?;
    Some(Unit {
        kind: UnitKind::SharedLibrary,
        name,
    })
}

fn guesses(profiles: &[Profile], claimed_by_presets: &dyn Fn(&Frame) -> bool) -> Vec<Guess> {
    guess::found(own_code(profiles, claimed_by_presets))
}

/// Native code (C, C++): `native.toml` (libc, libstdc++, ld.so, well-known C libraries), the
/// recorded executable where no language's guess names the program, shared libraries.
pub const ECOSYSTEM: Ecosystem = Ecosystem {
    language: false,
    guess_when: GuessWhen::LoadedAlone,
    ..Ecosystem::language(
        "native",
        include_str!("../../../rules/native.toml"),
        guesses,
        unit,
    )
};

#[cfg(test)]
mod tests {
    use super::super::rust::tests::TestRow;
    use super::*;

    /// Rows of leaf-first (name, module) frames and their weights.
    fn profile(rows: &[(&[(&str, &str)], u128)]) -> Profile {
        type Frames<'a> = Vec<(&'a str, Option<&'a str>)>;
        let rows: Vec<(Frames, u128)> = rows
            .iter()
            .map(|(f, w)| (f.iter().map(|(n, m)| (*n, Some(*m))).collect(), *w))
            .collect();
        let rows: Vec<TestRow> = rows.iter().map(|(f, w)| (f.as_slice(), *w)).collect();
        super::super::rust::tests::profile(&rows)
    }

    const BIN: &str = "/home/u/indexer/build/indexer";
    const LIBC: &str = "/usr/lib/x86_64-linux-gnu/libc.so.6";

    /// What the native preset claims here: libc by module, `std::` by name.
    fn presets(f: &Frame) -> bool {
        f.module.as_deref() == Some(LIBC) || f.name.starts_with("std::")
    }

    #[test]
    fn the_executable_of_main_is_the_programs() {
        let p = profile(&[
            (
                &[
                    ("Index::add", BIN),
                    ("main", BIN),
                    ("__libc_start_call_main", LIBC),
                ],
                3,
            ),
            (&[("memcpy", LIBC), ("std::vector<int>::push_back", BIN)], 1),
        ]);
        let code = own_code(&[p], &presets).unwrap();
        assert_eq!(code.name, "indexer");
        assert_eq!(code.modules, ["indexer"]);
        assert_eq!(code.placement, Placement::AfterPresets);
        let by_main = Evidence::Executable {
            module: BIN.into(),
            by_main: true,
        };
        assert_eq!(code.evidence, by_main);
    }

    #[test]
    fn without_main_the_outermost_program_file() {
        let p = profile(&[
            (&[("work", BIN), ("start_thread", LIBC)], 3),
            (&[("clock_gettime", "[vdso]")], 5),
        ]);
        assert_eq!(own_code(&[p], &presets).unwrap().modules, ["indexer"]);
    }

    #[test]
    fn a_runtime_the_presets_claim_is_no_guess() {
        let python = "/usr/bin/python3.11";
        let p = profile(&[(&[("_PyEval_EvalFrameDefault", python), ("main", python)], 3)]);
        let claims = |f: &Frame| f.module.as_deref() == Some(python);
        assert_eq!(own_code(&[p], &claims), None);
        // a shared library's `main`... is no executable
        let p = profile(&[(&[("main", "/opt/lib/libapp.so")], 1)]);
        assert_eq!(own_code(&[p], &presets), None);
    }
}

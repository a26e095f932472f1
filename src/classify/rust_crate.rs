//! The main binary's own Rust crate, guessed from the profile, so that a Rust program's code
//! is user code without a `--user` flag, as a Go program's module is ([`super::go_module`]).
//!
//! Rust names functions by crate path (`logcrunch::worker`, `<logcrunch::Rule as
//! core::fmt::Debug>::fmt`), but nothing in a symbol says which crate is the program's. Two
//! signs do:
//! - the main binary's `CRATE::main` (Rust's `fn main` of the binary crate), when sampled;
//! - else the crate of the outermost frames: the program's code calls its dependencies, not the
//!   other way round, so on each stack the outermost frame of a crate that is neither std,
//!   core, alloc nor a dependency a preset knows (tokio, serde, regex ...) is the program's
//!   own; the crate that is so for the most weight is taken.
//!
//! Only frames of the main binary count (a Rust library loaded by another program has crates
//! too): the module of the C `main` symbol when sampled, else the module (not a shared library,
//! not the kernel) of the most samples' outermost frames. Inputs without modules (folded
//! text) have one program.

use super::match_key;
use super::own_code::OwnCode;
use crate::model::{Frame, FrameKind, Profile, perf};
use rustc_hash::FxHashMap;

/// Crates of Rust's own library, never the program's (named here and not only through the
/// rust preset's claims, because C++ names such as `std::vector<int>::push_back` also parse as
/// crate paths and no Rust rule claims them).
const STANDARD_CRATES: &[&str] = &["std", "core", "alloc", "proc_macro", "test"];

/// The program's own crate in the first of `profiles` that shows one. `claimed_by_presets`:
/// whether a preset owns a frame (std, a dependency the presets know).
pub fn own_code(
    profiles: &[Profile],
    claimed_by_presets: &dyn Fn(&Frame) -> bool,
) -> Option<OwnCode> {
    profiles.iter().find_map(|p| detect(p, claimed_by_presets))
}

fn detect(profile: &Profile, claimed_by_presets: &dyn Fn(&Frame) -> bool) -> Option<OwnCode> {
    let main_module = main_module(profile);
    let in_main = |f: &Frame| f.module.as_deref() == main_module;
    // the crate of each frame that may be the program's, by FrameId
    let crate_of: Vec<Option<Box<str>>> = profile
        .frames()
        .map(|f| {
            let key = match_key::match_key(&f.name);
            let krate = match_key::rust_crate(&key)?;
            (!STANDARD_CRATES.contains(&krate) && in_main(f) && !claimed_by_presets(f))
                .then(|| krate.into())
        })
        .collect();
    let module = main_module.map_or_else(String::new, |m| format!(" (module {m})"));
    if let Some((frame, krate)) = profile
        .frames()
        .zip(&crate_of)
        .filter_map(|(f, c)| Some((f, c.as_deref()?)))
        .find(|(f, c)| *match_key::match_key(&f.name) == format!("{c}::main"))
    {
        return Some(own(krate, format!("`{}`{module}", frame.name)));
    }
    let mut outermost: FxHashMap<&str, u128> = FxHashMap::default();
    let mut total = 0u128;
    for row in profile.rows() {
        let weight = row.values[profile.default_sample_type];
        total += weight;
        if let Some(krate) = profile
            .stack(row.stack)
            .iter()
            .rev()
            .find_map(|f| crate_of[f.0 as usize].as_deref())
        {
            *outermost.entry(krate).or_default() += weight;
        }
    }
    let (krate, weight) = outermost
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))?;
    let percent = weight as f64 * 100.0 / total.max(1) as f64;
    Some(own(
        krate,
        format!("outermost crate frames in {percent:.1}% of the weight{module}"),
    ))
}

fn own(krate: &str, evidence: String) -> OwnCode {
    OwnCode {
        unit: "rust crate",
        name: krate.to_string(),
        prefixes: vec![format!("{krate}::")],
        evidence,
    }
}

/// The main binary's module: that of the C `main` symbol when sampled, else the module of the
/// most weight's outermost frame that is in a program file (not a shared library, the kernel,
/// `[vdso]`, JIT code or an unmapped address). `None`: frames without a module (folded text).
fn main_module(profile: &Profile) -> Option<&str> {
    if let Some(module) = profile
        .frames()
        .find(|f| &*f.name == "main" && f.kind == FrameKind::Native)
        .and_then(|f| f.module.as_deref())
    {
        return Some(module);
    }
    fn program(f: &Frame) -> Option<&str> {
        let basename = f.module_basename()?;
        let library = basename.contains(".so") || basename.starts_with('[');
        let native = matches!(f.kind, FrameKind::Native | FrameKind::Inlined);
        (native && !library && !perf::is_jit_module(basename) && !perf::is_kernel_module(basename))
            .then_some(f.module.as_deref()?)
    }
    let mut weight: FxHashMap<&str, u128> = FxHashMap::default();
    for row in profile.rows() {
        if let Some(module) = profile
            .stack(row.stack)
            .iter()
            .rev()
            .find_map(|&f| program(profile.frame(f)))
        {
            *weight.entry(module).or_default() += row.values[profile.default_sample_type];
        }
    }
    weight
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
        .map(|(m, _)| m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SampleType;

    /// One row: leaf-first frames as (name, module), and its weight.
    type TestRow<'a> = (&'a [(&'a str, Option<&'a str>)], u128);

    fn profile(rows: &[TestRow]) -> Profile {
        let mut p = Profile::new(vec![SampleType::samples()]);
        for (frames, weight) in rows {
            let ids: Vec<_> = frames
                .iter()
                .map(|(name, module)| {
                    p.intern_frame(Frame {
                        module: module.map(Into::into),
                        ..Frame::named(*name, FrameKind::Native)
                    })
                })
                .collect();
            let stack = p.intern_stack(&ids);
            p.add_sample(stack, None, &[*weight]);
        }
        p
    }

    /// What the rust preset would claim in these tests: std and serde.
    fn known(f: &Frame) -> bool {
        f.name.starts_with("std::") || f.name.starts_with("serde_json::")
    }

    #[test]
    fn the_outermost_unknown_crate_of_the_main_binary_is_the_programs() {
        let bin = Some("/opt/app/bin/crunch");
        let libc = Some("/usr/lib/x86_64-linux-gnu/libc.so.6");
        let p = profile(&[
            // a worker thread: libc's clone, std's thread start, the program, a dependency
            // that no preset knows (itoa), serde
            (
                &[
                    ("serde_json::read::parse", bin),
                    ("itoa::Buffer::format", bin),
                    ("crunch::worker", bin),
                    ("std::sys::thread::start", bin),
                    ("clone3", libc),
                ],
                7,
            ),
            (&[("itoa::Buffer::format", bin), ("clone3", libc)], 2),
        ]);
        let own = detect(&p, &known).unwrap();
        assert_eq!(own.name, "crunch");
        assert_eq!(own.prefixes, ["crunch::"]);
        assert_eq!(
            own.evidence,
            "outermost crate frames in 77.8% of the weight (module /opt/app/bin/crunch)"
        );
    }

    #[test]
    fn crate_main_decides_and_other_modules_do_not_count() {
        let bin = Some("/opt/app/bin/crunch");
        let plugin = Some("/opt/app/lib/libplug.so");
        let p = profile(&[
            (&[("plug::heavy", plugin), ("crunch::run", bin)], 50),
            (
                &[("helper::f", bin), ("crunch::main", bin), ("main", bin)],
                1,
            ),
        ]);
        let own = detect(&p, &known).unwrap();
        assert_eq!(own.name, "crunch");
        assert_eq!(own.evidence, "`crunch::main` (module /opt/app/bin/crunch)");
    }

    #[test]
    fn folded_frames_without_modules_are_one_program_and_std_is_never_it() {
        let p = profile(&[(
            &[
                ("std::vector<int>::push_back", None),
                ("<logcrunch::Rule as core::fmt::Debug>::fmt", None),
                ("core::fmt::write", None),
            ],
            3,
        )]);
        assert_eq!(detect(&p, &known).unwrap().name, "logcrunch");
        let p = profile(&[(&[("std::io::stdio::print", None), ("main", None)], 3)]);
        assert_eq!(detect(&p, &known), None);
    }
}

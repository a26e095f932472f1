//! The main binary's own Rust crate, guessed from the profile, so that a Rust program's code
//! is user code without a `--user` flag, as a Go program's module is ([`super::go`]).
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
//!
//! Two things keep the outermost-crate sign from naming a dependency (issue 29):
//! - without call chains (`perf record` without `-g`) every stack is the sampled frame alone,
//!   so "outermost" is "where the CPU was", as often a dependency (`miniz_oxide` compressing
//!   for the program) as the program: no guess is made from such stacks, and the header says
//!   why ([`Declined`]); only a sampled `CRATE::main` still names the program;
//! - with call chains, a crate seen called from another candidate crate that it never calls
//!   back (the program's code calls `flate2`, `flate2` calls `miniz_oxide`) is a dependency
//!   and never the guess, even where cut stacks make it the outermost one. Callbacks go both
//!   ways (a serde visitor of the program called by `serde_json`, called by the program), so
//!   they exclude neither.

use super::row::Ecosystem;
use crate::classify::guess::{self, DeclineReason, Declined, Evidence, Guess, OwnCode};
use crate::classify::match_key;
use crate::classify::unit::{Unit, UnitContext, UnitKind};
use crate::model::{Frame, FrameKind, Profile};
use rustc_hash::{FxHashMap, FxHashSet};

/// Crates of Rust's own library, never the program's (named here and not only through the
/// rust preset's claims, because C++ names such as `std::vector<int>::push_back` also parse as
/// crate paths and no Rust rule claims them).
const STANDARD_CRATES: &[&str] = &["std", "core", "alloc", "proc_macro", "test"];

/// The program's own crate in the first of `profiles` that shows one, else why the first
/// profile that shows crates could not tell. `claimed_by_presets`: whether a preset owns a
/// frame (std, a dependency the presets know).
pub fn own_code(profiles: &[Profile], claimed_by_presets: &dyn Fn(&Frame) -> bool) -> Guess {
    let mut declined = None;
    for p in profiles {
        match detect(p, claimed_by_presets) {
            Guess::Found(code) => return Guess::Found(code),
            Guess::Declined(d) => {
                declined.get_or_insert(d);
            }
            Guess::Nothing => {}
        }
    }
    declined.map_or(Guess::Nothing, Guess::Declined)
}

fn detect(profile: &Profile, claimed_by_presets: &dyn Fn(&Frame) -> bool) -> Guess {
    let main_module = super::native::main_module(profile);
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
    let module = main_module.map(str::to_string);
    if let Some((frame, krate)) = profile
        .frames()
        .zip(&crate_of)
        .filter_map(|(f, c)| Some((f, c.as_deref()?)))
        .find(|(f, c)| *match_key::match_key(&f.name) == format!("{c}::main"))
    {
        let function = frame.name.to_string();
        return Guess::Found(own(krate, Evidence::RustMain { function, module }));
    }
    let stacks = CrateStacks::of(profile, &crate_of);
    if !stacks.callchains {
        return match stacks.heaviest_outermost(&FxHashSet::default()) {
            Some((krate, weight)) => Guess::Declined(Declined {
                unit: UnitKind::RustCrate,
                reason: DeclineReason::NoCallChains {
                    heaviest: krate.to_string(),
                    weight,
                    total: stacks.total,
                },
            }),
            None => Guess::Nothing,
        };
    }
    let dependencies = stacks.dependencies();
    let Some((krate, weight)) = stacks.heaviest_outermost(&dependencies) else {
        return Guess::Nothing;
    };
    let total = stacks.total;
    Guess::Found(own(
        krate,
        Evidence::RustOutermost {
            weight,
            total,
            module,
        },
    ))
}

/// Per stack, the candidate crates from the outermost frame in, and what they say together.
struct CrateStacks<'a> {
    /// (crates outermost first, consecutive repeats folded; the stack's weight)
    rows: Vec<(Vec<&'a str>, u128)>,
    total: u128,
    /// Whether some weighted stack has more than one physical frame (inlined frames are the
    /// same address, not a call chain).
    callchains: bool,
}

impl<'a> CrateStacks<'a> {
    fn of(profile: &Profile, crate_of: &'a [Option<Box<str>>]) -> CrateStacks<'a> {
        let mut rows = Vec::new();
        let (mut total, mut callchains) = (0u128, false);
        for row in profile.rows() {
            let weight = row.values[profile.default_sample_type];
            total += weight;
            let stack = profile.stack(row.stack);
            if weight > 0 && !callchains {
                let physical = stack
                    .iter()
                    .filter(|&&f| profile.frame(f).kind != FrameKind::Inlined)
                    .count();
                callchains = physical > 1;
            }
            let mut crates: Vec<&str> = Vec::new();
            for f in stack.iter().rev() {
                if let Some(krate) = crate_of[f.0 as usize].as_deref()
                    && crates.last() != Some(&krate)
                {
                    crates.push(krate);
                }
            }
            if !crates.is_empty() {
                rows.push((crates, weight));
            }
        }
        CrateStacks {
            rows,
            total,
            callchains,
        }
    }

    /// The crate outermost on the most weight, among those not in `excluded`, with that
    /// weight; ties go to the first name.
    fn heaviest_outermost(&self, excluded: &FxHashSet<&str>) -> Option<(&'a str, u128)> {
        let mut outermost: FxHashMap<&str, u128> = FxHashMap::default();
        for (crates, weight) in &self.rows {
            if let Some(krate) = crates.iter().find(|c| !excluded.contains(*c)) {
                *outermost.entry(krate).or_default() += weight;
            }
        }
        outermost
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
    }

    /// Crates seen called (further in on a stack) from another crate they are never seen
    /// calling: the program's dependencies.
    fn dependencies(&self) -> FxHashSet<&'a str> {
        guess::dependencies(self.rows.iter().map(|(crates, _)| crates))
    }
}

fn own(krate: &str, evidence: Evidence) -> OwnCode {
    OwnCode {
        unit: UnitKind::RustCrate,
        name: krate.to_string(),
        prefixes: vec![format!("{krate}::")],
        files: Vec::new(),
        evidence,
        ..OwnCode::default()
    }
}

/// A Rust path's crate (`flate2::zio::Writer::write` → `flate2`), when the context says the
/// names are Rust's: without the preset the same shape is a C++ namespace, which says
/// nothing about who shipped it.
fn unit(_frame: &Frame, key: &str, context: UnitContext) -> Option<Unit> {
    if !context.rust {
        return None;
    }
    Some(Unit {
        kind: UnitKind::RustCrate,
        name: match_key::rust_crate(key)?.to_string(),
    })
}

fn guesses(profiles: &[Profile], claimed_by_presets: &dyn Fn(&Frame) -> bool) -> Vec<Guess> {
    vec![own_code(profiles, claimed_by_presets)]
}

/// Rust: `rust.toml`, the main binary's crate, crates by path.
pub const ECOSYSTEM: Ecosystem = Ecosystem::language(
    "rust",
    include_str!("../../../rules/rust.toml"),
    guesses,
    unit,
);

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::SampleType;

    /// One row: leaf-first frames as (name, module), and its weight.
    pub(crate) type TestRow<'a> = (&'a [(&'a str, Option<&'a str>)], u128);

    /// A profile of native frames with the given modules (also `native_module`'s tests').
    pub(crate) fn profile(rows: &[TestRow]) -> Profile {
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

    fn found(guess: Guess) -> OwnCode {
        match guess {
            Guess::Found(code) => code,
            other => panic!("no guess: {other:?}"),
        }
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
        let own = found(detect(&p, &known));
        assert_eq!(own.name, "crunch");
        assert_eq!(own.prefixes, ["crunch::"]);
        // 7 of 9
        let outermost = Evidence::RustOutermost {
            weight: 7,
            total: 9,
            module: Some("/opt/app/bin/crunch".into()),
        };
        assert_eq!(own.evidence, outermost);
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
        let own = found(detect(&p, &known));
        assert_eq!(own.name, "crunch");
        let main = Evidence::RustMain {
            function: "crunch::main".into(),
            module: Some("/opt/app/bin/crunch".into()),
        };
        assert_eq!(own.evidence, main);
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
        assert_eq!(found(detect(&p, &known)).name, "logcrunch");
        let p = profile(&[(&[("std::io::stdio::print", None), ("main", None)], 3)]);
        assert_eq!(detect(&p, &known), Guess::Nothing);
    }

    #[test]
    fn stacks_without_call_chains_make_no_guess_and_say_which_crate_they_would_have_named() {
        // perf record without -g of a program that compresses (packsum, issue 29): every stack
        // is the sampled frame alone, so the heaviest crate is the one the CPU was in
        let bin = Some("/opt/app/bin/packsum");
        let p = profile(&[
            (&[("miniz_oxide::deflate::core::compress_inner", bin)], 614),
            (&[("packsum::tokenize_and_sum", bin)], 42),
            (&[("sha2::sha256::x86::digest_blocks", bin)], 8),
            (&[("clear_page_erms", Some("[kernel.kallsyms]"))], 64),
        ]);
        assert_eq!(
            detect(&p, &known),
            Guess::Declined(Declined {
                unit: UnitKind::RustCrate,
                reason: DeclineReason::NoCallChains {
                    heaviest: "miniz_oxide".into(),
                    weight: 614,
                    total: 728,
                },
            })
        );
        // a sampled `CRATE::main` names the binary's crate even so
        let p = profile(&[
            (&[("miniz_oxide::deflate::core::compress_inner", bin)], 614),
            (&[("packsum::main", bin)], 1),
        ]);
        assert_eq!(found(detect(&p, &known)).name, "packsum");
    }

    #[test]
    fn a_crate_seen_called_from_another_is_a_dependency_and_never_the_guess() {
        // cut frame-pointer stacks leave miniz_oxide outermost on most weight; on the whole
        // stacks packsum calls flate2, which calls miniz_oxide, and neither calls back
        let bin = Some("/opt/app/bin/packsum");
        let libc = Some("/usr/lib/x86_64-linux-gnu/libc.so.6");
        let p = profile(&[
            (
                &[
                    ("miniz_oxide::deflate::core::compress_inner", bin),
                    ("miniz_oxide::deflate::stream::deflate", bin),
                ],
                60,
            ),
            (
                &[
                    ("miniz_oxide::deflate::core::compress_inner", bin),
                    ("flate2::zio::Writer<W,D>::write", bin),
                    ("packsum::compress", bin),
                    ("std::rt::lang_start_internal", bin),
                    ("__libc_start_call_main", libc),
                ],
                10,
            ),
            (
                &[
                    ("packsum::tokenize_and_sum", bin),
                    ("std::rt::lang_start_internal", bin),
                ],
                30,
            ),
        ]);
        let own = found(detect(&p, &known));
        assert_eq!(own.name, "packsum");
        // 40 of 100: miniz_oxide's 60 outermost are a dependency's
        let outermost = Evidence::RustOutermost {
            weight: 40,
            total: 100,
            module: Some("/opt/app/bin/packsum".into()),
        };
        assert_eq!(own.evidence, outermost);
        // a callback goes both ways: a crate no preset knows (`ser`) calling the program's
        // visitor back makes neither a dependency of the other
        let p = profile(&[
            (
                &[
                    ("<crunch::Rule as ser::Visit>::visit", bin),
                    ("ser::de::walk", bin),
                    ("crunch::load", bin),
                ],
                20,
            ),
            (&[("ser::de::walk", bin)], 5),
        ]);
        assert_eq!(found(detect(&p, &known)).name, "crunch");
    }

    #[test]
    fn inlined_frames_of_one_address_are_no_call_chain() {
        // --inline on a recording without -g: one address, two frames, no chain
        let bin = Some("/opt/app/bin/packsum");
        let mut p = Profile::new(vec![SampleType::samples()]);
        let inlined = p.intern_frame(Frame {
            module: bin.map(Into::into),
            ..Frame::named("adler2::Adler32::write_slice", FrameKind::Inlined)
        });
        let physical = p.intern_frame(Frame {
            module: bin.map(Into::into),
            ..Frame::named("miniz_oxide::deflate::stream::deflate", FrameKind::Native)
        });
        let stack = p.intern_stack(&[inlined, physical]);
        p.add_sample(stack, None, &[3]);
        assert!(matches!(detect(&p, &known), Guess::Declined(_)));
    }
}

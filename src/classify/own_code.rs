//! The main program's own code is user code: the one place that turns what the profile says
//! about the program (Go's module, [`super::go_module`]; the main binary's Rust crate,
//! [`super::rust_crate`]) into a `user` owner block, and names the guess for the report header
//! and `explain`, so a user can see it and override it (issue 3 item 4, issue 14).
//!
//! The block is placed after the user's `--user` and `--rules` and before every preset: a user
//! rule that claims the same frames wins, and a preset's own owners (std, known crates) are
//! never taken for the program's code because a guess excludes what the presets claim.

pub use super::guess::{DeclineReason, Declined, Evidence, Guess, OwnCode, Placement};

use super::glob::Glob;
use super::rules::{Matchers, Origin, OwnerBlock};
use super::{go_module, jvm_package, native_module, node_script, python_script, rust_crate};
use crate::model::{Category, Frame, Profile};

// The block is made here, above the rules and Go's guess, rather than beside `OwnCode`:
// the rules' origin carries an `OwnCode`, and the block claims cgo code by Go's C-name
// pattern, so `guess.rs` naming either would tie the guesses back to what uses them.
impl OwnCode {
    /// The top-priority-after-the-user's `user` block claiming [`OwnCode::prefixes`].
    pub fn user_block(&self) -> OwnerBlock {
        OwnerBlock {
            name: "user".into(),
            category: Category::User,
            transparent: Some(false),
            any: Matchers {
                prefix: self.prefixes.clone(),
                file: self.files.iter().map(|f| Glob::new(f)).collect(),
                module: self.modules.iter().map(|m| Glob::new(m)).collect(),
                ..Matchers::default()
            },
            all: (self.c_in_module.iter())
                .map(|module| Matchers {
                    module: vec![Glob::new(module)],
                    regex: vec![go_module::C_NAME.clone()],
                    ..Matchers::default()
                })
                .collect(),
            origin: Origin {
                file: format!("{} {}", self.unit, self.name).trim_end().into(),
                line: 0,
                guess: Some(Box::new(self.clone())),
            },
        }
    }
}

/// What [`detect`] found: the guesses made, and those declined with their reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Guesses {
    pub found: Vec<OwnCode>,
    pub declined: Vec<Declined>,
}

impl Guesses {
    /// Keeps one ecosystem's guess: made, declined, or nothing.
    fn add(&mut self, guess: Guess) {
        match guess {
            Guess::Found(code) => self.found.push(code),
            Guess::Declined(declined) => self.declined.push(declined),
            Guess::Nothing => {}
        }
    }
}

/// The program's own code in `profiles`, for the loaded presets that know how to find it:
/// Go's module with the go preset, the main binary's crate with the rust preset, the
/// program's scripts with the node and python presets, its packages with the jvm or kotlin
/// preset, and, with the native preset and none of a language, the recorded executable.
/// `claimed_by_presets` says whether a preset block claims a frame (std, a known dependency).
pub fn detect(
    loaded_presets: &[String],
    profiles: &[Profile],
    claimed_by_presets: &dyn Fn(&Frame) -> bool,
) -> Guesses {
    let loaded = |name: &str| loaded_presets.iter().any(|p| p == name);
    let mut guesses = Guesses::default();
    if loaded("go") {
        if let Some(module) = go_module::own_code(profiles, claimed_by_presets) {
            guesses.found.push(module);
        }
        if let Some(c) = go_module::own_c_code(profiles, claimed_by_presets) {
            guesses.found.push(c);
        }
    }
    if loaded("node")
        && let Some(scripts) = node_script::own_code(profiles, claimed_by_presets)
    {
        guesses.found.push(scripts);
    }
    if loaded("python")
        && let Some(scripts) = python_script::own_code(profiles, claimed_by_presets)
    {
        guesses.found.push(scripts);
    }
    if loaded("rust") {
        guesses.add(rust_crate::own_code(profiles, claimed_by_presets));
    }
    if loaded("jvm") || loaded("kotlin") {
        guesses.add(jvm_package::own_code(profiles, claimed_by_presets));
    }
    // an executable's own code, where no language's guess names the program
    let language = native_module::LANGUAGE_PRESETS.iter().any(|p| loaded(p));
    if loaded("native")
        && !language
        && guesses.found.is_empty()
        && let Some(executable) = native_module::own_code(profiles, claimed_by_presets)
    {
        guesses.found.push(executable);
    }
    guesses
}

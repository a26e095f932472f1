//! The main program's own code is user code: the one place that turns what the profile says
//! about the program (each ecosystem's guess, [`super::ecosystem`]: Go's module, the main
//! binary's Rust crate, ...) into a `user` owner block, and names the guess for the report header
//! and `explain`, so a user can see it and override it (issue 3 item 4, issue 14).
//!
//! The block is placed after the user's `--user` and `--rules` and before every preset: a user
//! rule that claims the same frames wins, and a preset's own owners (std, known crates) are
//! never taken for the program's code because a guess excludes what the presets claim.

pub use super::guess::{DeclineReason, Declined, Evidence, Guess, OwnCode, Placement};

#[cfg(doc)]
use super::ecosystem::Ecosystem;
use super::ecosystem::{ECOSYSTEMS, GO_C_NAME, GuessWhen};
use super::glob::Glob;
use super::rules::{Matchers, Origin, OwnerBlock};
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
                    regex: vec![GO_C_NAME.clone()],
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

/// The program's own code in `profiles`: each ecosystem's guess ([`Ecosystem::own_code`]) whose
/// preset is loaded, in the table's order; the native executable's only where no language's
/// preset is loaded and nothing else was found ([`GuessWhen::LoadedAlone`]).
/// `claimed_by_presets` says whether a preset block claims a frame (std, a known dependency).
pub fn detect(
    loaded_presets: &[String],
    profiles: &[Profile],
    claimed_by_presets: &dyn Fn(&Frame) -> bool,
) -> Guesses {
    let loaded = |name: &str| loaded_presets.iter().any(|p| p == name);
    let language = ECOSYSTEMS.iter().any(|e| e.language && loaded(e.name));
    let mut guesses = Guesses::default();
    for ecosystem in ECOSYSTEMS.iter().filter(|e| loaded(e.name)) {
        let Some(guess) = ecosystem.own_code else {
            continue;
        };
        let asked = match ecosystem.guess_when {
            GuessWhen::Loaded => true,
            GuessWhen::LoadedAlone => !language && guesses.found.is_empty(),
        };
        if asked {
            for one in guess(profiles, claimed_by_presets) {
                guesses.add(one);
            }
        }
    }
    guesses
}

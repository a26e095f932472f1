//! The main program's own code is user code: the one place that turns what the profile says
//! about the program (Go's module, [`super::go_module`]; the main binary's Rust crate,
//! [`super::rust_crate`]) into a `user` owner block, and names the guess for the report header
//! and `explain`, so a user can see it and override it (issue 3 item 4, issue 14).
//!
//! The block is placed after the user's `--user` and `--rules` and before every preset: a user
//! rule that claims the same frames wins, and a preset's own owners (std, known crates) are
//! never taken for the program's code because a guess excludes what the presets claim.

use super::rules::{Matchers, Origin, OwnerBlock};
use super::{go_module, rust_crate};
use crate::model::{Category, Frame, Profile};

/// The program's own code as guessed from a profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnCode {
    /// What kind of unit was found: `go module`, `rust crate`.
    pub unit: &'static str,
    /// Its name: `whose/gosvc`, `logcrunch`.
    pub name: String,
    /// The match-key prefixes the `user` block claims.
    pub prefixes: Vec<String>,
    /// How it was found, in words (`the main package's file whose/gosvc/main.go`).
    pub evidence: String,
}

impl OwnCode {
    /// `go module whose/gosvc (detected from EVIDENCE; --user PREFIX adds more)`: the block's
    /// origin, which `explain` prints as the rule's source.
    pub fn origin(&self) -> String {
        format!(
            "{} {} (detected from {}; --user PREFIX adds more)",
            self.unit, self.name, self.evidence
        )
    }

    /// The report header's line: what was guessed, what it claims, and how to override it.
    pub fn header_line(&self) -> String {
        let prefixes: Vec<String> = self.prefixes.iter().map(|p| format!("`{p}`")).collect();
        format!(
            "user code guessed: {} {} ({}), detected from {}; --user PREFIX adds more, a \
             --rules file that claims them overrides",
            self.unit,
            self.name,
            prefixes.join(", "),
            self.evidence
        )
    }

    /// The top-priority-after-the-user's `user` block claiming [`OwnCode::prefixes`].
    pub fn user_block(&self) -> OwnerBlock {
        OwnerBlock {
            name: "user".into(),
            category: Category::User,
            transparent: Some(false),
            any: Matchers {
                prefix: self.prefixes.clone(),
                ..Matchers::default()
            },
            all: Vec::new(),
            origin: Origin {
                file: self.origin().into(),
                line: 0,
            },
        }
    }
}

/// The program's own code in `profiles`, for the loaded presets that know how to find it:
/// Go's module with the go preset, the main binary's crate with the rust preset.
/// `claimed_by_presets` says whether a preset block claims a frame (std, a known dependency).
pub fn detect(
    loaded_presets: &[String],
    profiles: &[Profile],
    claimed_by_presets: &dyn Fn(&Frame) -> bool,
) -> Vec<OwnCode> {
    let loaded = |name: &str| loaded_presets.iter().any(|p| p == name);
    let mut found = Vec::new();
    if loaded("go")
        && let Some(module) = go_module::own_code(profiles)
    {
        found.push(module);
    }
    if loaded("rust")
        && let Some(krate) = rust_crate::own_code(profiles, claimed_by_presets)
    {
        found.push(krate);
    }
    found
}

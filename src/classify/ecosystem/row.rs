//! What whose knows of one ecosystem, as one row of [`super::ECOSYSTEMS`]: its preset, whether
//! it is a language, how its own code is guessed and how its third-party units are named.
//! Below every ecosystem's file, so that each file states its own row without a circle.

use crate::classify::guess::Guess;
use crate::classify::unit::{Unit, UnitContext};
use crate::model::{Frame, Profile};

/// Guesses the program's own code of this ecosystem in `profiles`; `claimed_by_presets` says
/// whether a preset block claims a frame (the standard library, a known dependency), which
/// is never the program's.
pub type OwnCodeGuess = fn(&[Profile], &dyn Fn(&Frame) -> bool) -> Vec<Guess>;

/// The third-party unit a frame belongs to in this ecosystem (`key` its match key), if any.
pub type UnitOf = fn(&Frame, &str, UnitContext) -> Option<Unit>;

/// One ecosystem: everything the classifier asks of it.
pub struct Ecosystem {
    /// The preset's name: `go`, `ruby`, `beam`.
    pub name: &'static str,
    /// The preset's rules, `rules/NAME.toml`, compiled into the binary.
    pub rules: &'static str,
    /// A language whose programs are not native code of their own: with its preset loaded,
    /// the recorded executable is an interpreter or VM, or the language's own guess names
    /// the program more finely, so no native executable is guessed.
    pub language: bool,
    /// How the program's own code is guessed, when the preset is loaded.
    pub own_code: Option<OwnCodeGuess>,
    /// When the guess is asked.
    pub guess_when: GuessWhen,
    /// How a frame's third-party unit is found (auto-owners), asked in table order.
    pub unit_of: Option<UnitOf>,
    /// Preset owners that lump the ecosystem's packages together (`python-packages`): their
    /// frames go to their unit's guessed owner, which says more.
    pub umbrella_owners: &'static [&'static str],
    /// The interpreter or VM whose native code perf sees instead of the language's frames
    /// when the recording cannot name them (the quality finding on stacks with no frame of
    /// the language).
    pub interpreter: Option<Interpreter>,
}

/// An interpreter or VM of the language, as perf sees it.
#[derive(Debug, Clone, Copy)]
pub struct Interpreter {
    pub runtime: Runtime,
    /// Whether a module (a path or file name) is the interpreter's.
    pub is_module: fn(&str) -> bool,
}

/// The interpreters whose native code can stand where the program's frames should be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Runtime {
    CPython,
    Ruby,
    Beam,
}

/// When an ecosystem's own-code guess is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuessWhen {
    /// Whenever its preset is loaded.
    Loaded,
    /// Only when its preset is loaded, no language's is, and no other guess found anything:
    /// the native executable, which a language's program is not.
    LoadedAlone,
}

impl Ecosystem {
    /// How the rules and messages name a preset's text: `preset go`. The presets are compiled
    /// into the binary, so an installed user has no `rules/go.toml` to open; `whose rules show
    /// go` prints the text these locations (`preset go:60`) count lines in.
    pub fn origin_of(name: &str) -> String {
        format!("preset {name}")
    }

    /// [`Ecosystem::origin_of`] this ecosystem's preset.
    pub fn origin(&self) -> String {
        Self::origin_of(self.name)
    }

    /// A language's row: its preset, its own-code guess asked whenever the preset is loaded,
    /// its unit finder; no umbrella owners, no interpreter (struct update adds them).
    pub const fn language(
        name: &'static str,
        rules: &'static str,
        own_code: OwnCodeGuess,
        unit_of: UnitOf,
    ) -> Ecosystem {
        Ecosystem {
            language: true,
            own_code: Some(own_code),
            unit_of: Some(unit_of),
            ..Ecosystem::rules_only(name, rules)
        }
    }

    /// A row with nothing but its preset: a platform's rules (allocators, the kernel).
    pub const fn rules_only(name: &'static str, rules: &'static str) -> Ecosystem {
        Ecosystem {
            name,
            rules,
            language: false,
            own_code: None,
            guess_when: GuessWhen::Loaded,
            unit_of: None,
            umbrella_owners: &[],
            interpreter: None,
        }
    }
}

//! One home per language ecosystem (issue 57): each file holds everything whose knows of one
//! ecosystem — how its frames are recognised, how the program's own code is guessed, what its
//! third-party units are called and how they are found — and states it as one row
//! ([`Ecosystem`]) of [`ECOSYSTEMS`], which the presets, their detection, the own-code guess
//! and the auto-owners iterate. Its rules are `rules/NAME.toml`, compiled in by the row; its
//! frame names are normalised by the readers with `crate::names` (below the readers, so the
//! ecosystem files point to it rather than hold it).
//!
//! Adding an ecosystem: a file here with its row, the row in [`ECOSYSTEMS`] (its position is
//! its preset's precedence), `rules/NAME.toml` with a `[detect]` table, and fixtures and
//! tests (`docs/ecosystems.md`).

mod beam;
mod go;
mod jvm;
mod kotlin;
mod native;
mod node;
mod platform;
mod python;
mod row;
mod ruby;
mod rust;
pub mod vendors;

pub use go::C_NAME as GO_C_NAME;
pub use native::main_module as native_main_module;
pub use row::{Ecosystem, GuessWhen, Runtime};

/// Every ecosystem, in the order their presets apply when several are selected: the more
/// specific first, so that Kotlin's `kotlin.reflect.` claims frames before the JVM's rules,
/// and the platform (native code, allocators, the kernel) last. Auto-owners ask each row's
/// [`Ecosystem::unit_of`] in this order too; the own-code guesses are made in it.
pub const ECOSYSTEMS: &[Ecosystem] = &[
    kotlin::KOTLIN,
    kotlin::KOTLIN_NATIVE,
    node::ECOSYSTEM,
    ruby::ECOSYSTEM,
    beam::ECOSYSTEM,
    jvm::ECOSYSTEM,
    go::ECOSYSTEM,
    rust::ECOSYSTEM,
    python::ECOSYSTEM,
    native::ECOSYSTEM,
    platform::ALLOCATORS,
    platform::KERNEL,
];

/// The interpreter or VM whose native code `module` (a path or file name) is, if any
/// ecosystem's is.
pub fn interpreter_of_module(module: &str) -> Option<Runtime> {
    (ECOSYSTEMS.iter())
        .filter_map(|e| e.interpreter)
        .find(|i| (i.is_module)(module))
        .map(|i| i.runtime)
}

/// The ecosystem of preset `name`.
pub fn by_name(name: &str) -> Option<&'static Ecosystem> {
    ECOSYSTEMS.iter().find(|e| e.name == name)
}

/// Test-only access to the detectors and unit finders, for the vendors' and auto-owners'
/// tests.
#[cfg(test)]
pub(crate) mod detectors {
    pub use super::go::module_of as go_module;
    pub use super::jvm::{java_vendor, own_code as jvm_own_code};
    pub use super::native::shared_library;
    pub use super::node::npm_package;
    pub use super::python::{own_code as python_own_code, python_package};
}

//! # whose
//!
//! Whose code is this CPU time, whose code asked for these allocations?
//!
//! The pipeline, one module per stage, data flowing one way:
//!
//! ```text
//! input (one reader per format; perf.data through symbolize and unwind) ─▶ model::Profile
//!   ─▶ classify (rules → owner per frame) ─▶ aggregate (self / owner / anywhere)
//!   ─▶ gate (verdicts, diffs)
//!   ─▶ render (table, markdown, JSON, CSV, NDJSON, Parquet, HTML page, flame SVG, words)
//!      and export (the profile as pprof with owner labels, or folded)
//! ```
//!
//! `docs/design.md` is the contract: the model, the views, the rules, every command and
//! option, the outputs and the exit codes.
//!
//! Modules use only modules below them, bottom to top: `error model names pprof_wire` →
//! `symbolize` → `unwind` → `input classify` → `aggregate` → `gate` → `render export` → `cli`
//! → `config` → `app` → `main`; the modules of one level do not use each other.
//! `tests/it/architecture.rs` keeps it so. `app` is the only module that knows every stage; `cli`
//! and `config` turn the command line into the plain option structs the stages take.
//!
//! The modules are private: the crate exports only what `main.rs` runs and what `tests/`
//! drive, so an item nothing uses is a dead-code warning rather than silent public API.

mod aggregate;
mod app;
mod classify;
mod cli;
mod config;
mod error;
mod export;
mod gate;
mod input;
mod model;
mod names;
mod render;
mod symbolize;
mod unwind;

// The crate's surface (see above).
pub mod pprof_wire;

pub use aggregate::{AggregateOptions, aggregate};
pub use app::{Outcome, choose_color, run};
pub use classify::{RuleOptions, RuleSet};
pub use cli::Cli;
pub use config::Plan;
pub use error::Error;
pub use input::{InputFormat, ReadOptions, read_profile};
pub use model::{Frame, FrameKind, ModuleProblem, Notice, Profile, SampleType, Unit};
pub use unwind::{DwarfUnwinder, Mapping as UnwindMapping, ModuleFiles, StackCopy, UserRegs};

/// Exists for the fuzz targets in `fuzz/` only, not API: the two text grammars that no
/// exported item reaches without a whole command run, the rule-file parser and the
/// `gate --require` requirement grammar.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::classify::rules::parse as parse_rules;
    pub use crate::gate::parse as parse_requirement;
}

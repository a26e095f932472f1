//! # whose
//!
//! Whose code is this CPU time, whose code asked for these allocations?
//!
//! The pipeline, one module per stage, data flowing one way:
//!
//! ```text
//! input (one reader per format; perf.data through symbolize and unwind) ─▶ model::Profile
//!   ─▶ classify (rules → owner per frame) ─▶ aggregate (self / owner / anywhere)
//!   ─▶ render (table, markdown, JSON, CSV, flame SVG), gate (verdicts, diffs)
//!      and export (the profile as pprof with owner labels, or folded)
//! ```
//!
//! Modules use only modules below them, bottom to top: `error model names pprof_wire` →
//! `symbolize` → `unwind` → `input classify` → `aggregate` → `gate` → `render export` → `cli`
//! → `config` → `app` → `main`; the modules of one level do not use each other.
//! `tests/architecture.rs` keeps it so. `app` is the only module that knows every stage; `cli`
//! and `config` turn the command line into the plain option structs the stages take.

pub mod aggregate;
pub mod app;
pub mod classify;
pub mod cli;
pub mod config;
pub mod error;
pub mod export;
pub mod gate;
pub mod input;
pub mod model;
pub mod names;
pub mod pprof_wire;
pub mod render;
pub mod symbolize;
pub mod unwind;

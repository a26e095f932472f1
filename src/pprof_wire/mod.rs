//! The pprof wire format: the prost types of Google's `profile.proto`, shared by the pprof
//! reader (`input::pprof`) and writer (`export::pprof`).
//!
//! A module of its own, at the bottom of the layering, because both sides speak it and neither
//! owns it. `profile.rs` is generated from `profile.proto` (its header has the command).

#[allow(clippy::all, clippy::pedantic)]
mod profile;

pub use profile::*;

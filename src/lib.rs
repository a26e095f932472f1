//! # whose
//!
//! Whose code is this CPU time, whose code asked for these allocations?
//!
//! The pipeline, one module per stage, data flowing one way:
//!
//! ```text
//! input (one reader per format) ─▶ model::Profile ─▶ classify (rules → owner per frame)
//!                                                  ─▶ aggregate (self / owner / anywhere)
//!                                                  ─▶ render (table, markdown, JSON, CSV)
//! ```
//!
//! `app` is the only module that knows every stage; `cli` and `config` turn the command line
//! into the plain option structs the stages take.

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

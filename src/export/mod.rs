//! Exporters: a [`Profile`](crate::model::Profile) written back out in a profile format, for
//! other tools (`whose convert`): pprof with owner labels, folded stacks.
//!
//! Unlike `render`, which formats a `Report` of shares, these write the samples themselves; they
//! sit on render's level and the two do not use each other.

pub mod folded;
pub mod pprof;

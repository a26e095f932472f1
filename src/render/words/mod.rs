//! The one place sentences for the user are made from typed values: an input's notices, the
//! findings on a recording, how the guesses were made, `explain`'s table, the gate's verdicts,
//! diffs and `rules check/list`. Below render only errors carry words.

pub mod comparison;
pub mod explain;
pub mod findings;
pub mod guess;
pub mod notices;
pub mod rule_listing;
pub mod verdict;

use super::{pct, wrap};

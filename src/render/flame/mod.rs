//! The flame graph: coloured by owner and drawn by inferno ([`svg`]), after the frames too
//! narrow to draw are dropped ([`elide`]), with the words around it ([`labels`]: title,
//! legend, the `--split` index).

pub mod elide;
pub mod labels;
pub mod svg;

// what the flame graph shares with the report: owner colours, shares and findings as words
use super::words::{findings, notices};
use super::{palette, pct};

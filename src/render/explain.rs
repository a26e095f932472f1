//! `whose explain`'s table: for each listed frame its inclusive share, owner, and the rule
//! (matcher and the file or preset that declares it) that gave it that owner.

use super::pct;
use crate::aggregate::report::share;
use crate::classify::{Reason, RuleSet, presets};
use crate::model::Frame;
use crate::model::OwnerId;
use std::io::{self, Write};

/// One listed frame and how the rules classified it.
pub struct Row<'a> {
    /// Inclusive weight: samples with the frame anywhere on the stack.
    pub weight: u128,
    pub frame: &'a Frame,
    pub owner: OwnerId,
    pub reason: Reason,
}

/// Writes the presets in use, then one line per row; shares are of `total`.
pub fn write(rules: &RuleSet, total: u128, rows: &[Row], out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "presets: {}", presets::display_list(&rules.presets))?;
    writeln!(out, "{:>7}  {:<20} {:<40} frame", "incl.", "owner", "rule")?;
    for row in rows {
        let why = match &row.reason {
            Reason::Rule { block, matcher } => {
                format!("{matcher} @ {}", rules.block(*block).origin)
            }
            Reason::NoRuleMatched => "no rule matched".to_string(),
            Reason::Unresolved => "unresolved address".to_string(),
        };
        writeln!(
            out,
            "{:>7}  {:<20} {:<40} {}",
            pct(share(row.weight, total)),
            rules.owner(row.owner).name,
            why,
            row.frame
        )?;
    }
    Ok(())
}

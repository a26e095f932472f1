//! `whose explain`'s table: for each listed frame its inclusive share, owner, and the rule
//! (matcher and the file or preset that declares it) that gave it that owner.

use super::pct;
use crate::aggregate::Aggregate;
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

/// Writes the presets in use, then one line per row (shares are of the aggregate's total),
/// then the recording's quality and the next step, as the report's header has them.
pub fn write(
    rules: &RuleSet,
    aggregate: &Aggregate,
    rows: &[Row],
    out: &mut dyn Write,
) -> io::Result<()> {
    let total = aggregate.all.total;
    writeln!(out, "presets: {}", presets::display_list(&rules.presets))?;
    for code in &rules.own_code {
        writeln!(out, "{}", code.header_line())?;
    }
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
    writeln!(out, "{}", aggregate.quality.summary(total))?;
    for finding in aggregate.quality.findings(total) {
        writeln!(out, "warning: {finding}")?;
    }
    if let Some(hint) = super::user_hint(aggregate, total) {
        writeln!(out, "{hint}")?;
    }
    Ok(())
}

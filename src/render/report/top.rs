//! `whose top`'s text: the owner's (or category's) three views, then its functions as
//! `pprof -top` prints them: flat, flat%, sum%, cum, cum%, function.

use super::{header_lines, pct, weight};
use crate::aggregate::report::{Report, share};
use crate::gate::Resolved;
use crate::model::{Frame, Unit};
use std::io::{self, Write};

/// One function of the owner.
pub struct Row<'a> {
    pub flat: u128,
    pub cum: u128,
    pub frame: &'a Frame,
    /// The function's owner (shown when the subject is a category).
    pub owner: &'a str,
}

/// Everything `top` shows of one input.
pub struct Listing<'a> {
    /// The report of the one input, for its header and the owner's views.
    pub report: &'a Report,
    pub resolved: &'a Resolved,
    /// The rows listed (at most `--top`), in the order asked for.
    pub rows: Vec<Row<'a>>,
    /// How many functions the owner has, and the sum of their flat weights.
    pub functions: usize,
    pub flat_sum: u128,
    /// Sorted by cum (`--cum`), else by flat.
    pub by_cum: bool,
}

/// A percentage with two decimals, as `pprof -top` prints them.
fn percent(part: u128, total: u128) -> String {
    format!("{:.2}%", share(part, total))
}

pub fn write(listing: &Listing, out: &mut dyn Write) -> io::Result<()> {
    let report = listing.report;
    let input = &report.inputs[0];
    let unit = &input.metric.unit;
    let total = input.aggregate.all.total;
    for line in header_lines(report) {
        writeln!(out, "{line}")?;
    }
    let (what, weights) = match listing.resolved {
        Resolved::Owner(i) => {
            let owner = &report.owners[*i];
            (
                format!("owner {} ({})", owner.name, owner.category),
                &input.aggregate.all.owners[*i],
            )
        }
        Resolved::Category(c) => (format!("category {c}"), input.aggregate.all.category(*c)),
    };
    let view = |w: u128| format!("{} ({})", weight(w, unit, None), pct(share(w, total)));
    writeln!(
        out,
        "{what}: self {}, owner {}, anywhere {}",
        view(weights.self_),
        view(weights.owner),
        view(weights.anywhere)
    )?;
    write_functions(&cells(listing, unit, total), out)?;
    let order = if listing.by_cum { "cum" } else { "flat" };
    writeln!(
        out,
        "{} of {} functions by {order} (--top N lists N in total{}); their flat adds up to {} \
         ({}), the self view",
        listing.rows.len(),
        listing.functions,
        if listing.by_cum {
            ""
        } else {
            ", --cum sorts by cum"
        },
        weight(listing.flat_sum, unit, None),
        pct(share(listing.flat_sum, total))
    )
}

/// Each row's cells as `pprof -top` has them (`sum%` running over the rows), the function
/// named with its module, and with its owner when the subject is a category.
fn cells(listing: &Listing, unit: &Unit, total: u128) -> Vec<[String; 6]> {
    let by_category = matches!(listing.resolved, Resolved::Category(_));
    let mut sum = 0u128;
    listing
        .rows
        .iter()
        .map(|r| {
            sum += r.flat;
            let mut function = r.frame.name.to_string();
            if let Some(module) = r.frame.module_basename() {
                function.push_str(&format!(" ({module})"));
            }
            if by_category {
                function = format!("{function} [{}]", r.owner);
            }
            [
                weight(r.flat, unit, None),
                percent(r.flat, total),
                percent(sum, total),
                weight(r.cum, unit, None),
                percent(r.cum, total),
                function,
            ]
        })
        .collect()
}

/// The function table: the number columns right-aligned to their widest cell, the function
/// last and unpadded.
fn write_functions(cells: &[[String; 6]], out: &mut dyn Write) -> io::Result<()> {
    let titles = ["flat", "flat%", "sum%", "cum", "cum%", "function"].map(String::from);
    let widths: Vec<usize> = (0..5)
        .map(|c| {
            cells
                .iter()
                .chain([&titles])
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in [&titles].into_iter().chain(cells) {
        let mut line = String::new();
        for (c, width) in widths.iter().enumerate() {
            line.push_str(&format!("{:>width$}  ", row[c]));
        }
        line.push_str(&row[5]);
        writeln!(out, "{line}")?;
    }
    Ok(())
}

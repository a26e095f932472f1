//! The header over the table and markdown (and the HTML page's): per input its metric,
//! total, notes and findings, then the presets, the guesses and the owners guessed.

use super::super::words::{findings, guess, notices};
use super::super::{pct, weight};
use crate::aggregate::report::Report;

/// Header lines common to the table and markdown: input, metric, total, presets, specials.
pub fn header_lines(report: &Report) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, input) in report.inputs.iter().enumerate() {
        let total = input.aggregate.all.total;
        lines.push(format!(
            "{}: metric {} ({}, {}), total {}{}",
            input.path,
            input.metric.name,
            input.metric.unit,
            input.metric_source,
            input.metric.unit.format(total),
            match report.per {
                Some(n) => format!(", {} per 1/{n}", weight(total, &input.metric.unit, Some(n))),
                None => String::new(),
            }
        ));
        let (unclassified, unsymbolized) = report.special_shares(i);
        let mut notes = notices::texts(&input.notes);
        if let Some(line) = negative_line(report, i) {
            notes.push(line);
        }
        notes.push(format!(
            "{} distinct stacks; unclassified {} and unsymbolized {} of self",
            input.aggregate.distinct_stacks,
            pct(unclassified),
            pct(unsymbolized)
        ));
        let quality = &input.aggregate.quality;
        notes.push(findings::quality_line(quality, total));
        notes.extend(findings::lines(&input.aggregate.findings()));
        lines.extend(notes.into_iter().map(|n| format!("  {n}")));
    }
    lines.push(format!(
        "presets: {}{}",
        crate::classify::presets::display_list(&report.presets),
        if report.presets_detected {
            " (detected from the frames; --preset to choose)"
        } else {
            ""
        }
    ));
    lines.extend(report.own_code.iter().map(guess::own_code_line));
    lines.extend(report.own_code_declined.iter().map(guess::declined_line));
    // heaviest first in the owner view (summed over the inputs), so a long list names the
    // owners that matter
    let owner_weight = |name: &str| -> u128 {
        let Some(i) = report.owners.iter().position(|o| o.name == name) else {
            return 0;
        };
        report
            .inputs
            .iter()
            .map(|input| {
                input
                    .aggregate
                    .all
                    .owners
                    .get(i)
                    .map_or(0, |w| w.owner + w.self_)
            })
            .sum()
    };
    lines.extend(guess::guess_line(
        &report.guessed,
        report.guesses_off,
        &owner_weight,
    ));
    lines
}

/// A delta profile's negative weights, by owner in the self view: shown beside the shares,
/// which are of the positive part.
fn negative_line(report: &Report, input: usize) -> Option<String> {
    let input = &report.inputs[input];
    let negative = &input.aggregate.negative;
    if negative.total == 0 {
        return None;
    }
    let unit = &input.metric.unit;
    let mut owners: Vec<(&str, u128)> = (report.owners.iter().zip(&negative.owners))
        .filter(|(_, w)| w.self_ > 0)
        .map(|(o, w)| (o.name.as_str(), w.self_))
        .collect();
    owners.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    if negative.stackless > 0 {
        owners.push((crate::model::NO_STACK, negative.stackless));
    }
    let owners: Vec<String> = owners
        .iter()
        .map(|(name, w)| format!("{name} -{}", unit.format(*w)))
        .collect();
    Some(format!(
        "negative weights: -{} beside the total (shares are of the positive part); self by \
         owner: {}",
        unit.format(negative.total),
        owners.join(", ")
    ))
}

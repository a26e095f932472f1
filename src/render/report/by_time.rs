//! `report --by time` in words and cells (issue 27): which owners get a column, the time of a
//! bucket as an offset from the first sample, and the sparkline of an owner's share. The
//! table, markdown and CSV writers lay these out; the numbers are
//! [`crate::aggregate::timeline`]'s.

use super::pct;
use crate::aggregate::report::{InputReport, Report, View, share};
use crate::aggregate::timeline::{BucketSize, OwnerTimeline, TimeSlot};
use crate::model::Unit;

/// Owners given a column of their own in the bucket table; the rest are summed as `other`.
pub const OWNER_COLUMNS: usize = 5;

/// Eight heights of a sparkline bar.
const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The owners with weight in `view` over the whole input, heaviest first (by index into the
/// report's owners).
pub fn owners_by_weight(report: &Report, input: &InputReport, view: View) -> Vec<usize> {
    let mut owners: Vec<usize> = (0..report.owners.len())
        .filter(|&o| {
            input
                .aggregate
                .all
                .owners
                .get(o)
                .is_some_and(|w| view.of(w) > 0)
        })
        .collect();
    owners.sort_by_key(|&o| std::cmp::Reverse(view.of(&input.aggregate.all.owners[o])));
    owners
}

/// The view the time tables show: the owner view, unless `--views` leaves it out.
pub fn view(report: &Report) -> View {
    if report.views.contains(&View::Owner) || report.views.is_empty() {
        View::Owner
    } else {
        report.views[0]
    }
}

/// The bucket table's cells: `from`, `weight`, the heaviest owners' shares, `other`.
pub struct BucketCells {
    /// Titles; the owners' names are as they are (markdown escapes them).
    pub titles: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// Per bucket: its start, its weight, and the share of each of the [`OWNER_COLUMNS`] heaviest
/// owners (the rest summed as `other`).
pub fn bucket_cells(
    report: &Report,
    input: &InputReport,
    t: &OwnerTimeline,
    view: View,
) -> BucketCells {
    let owners = owners_by_weight(report, input, view);
    let shown = &owners[..owners.len().min(OWNER_COLUMNS)];
    let others = owners.len() > shown.len();
    let mut titles = vec!["from".to_string(), "weight".to_string()];
    titles.extend(shown.iter().map(|&o| report.owners[o].name.clone()));
    if others {
        titles.push("other".into());
    }
    let rows = t
        .slots
        .iter()
        .map(|slot| {
            let mut row = vec![
                offset(t, slot.start),
                super::weight(slot.all.total, &input.metric.unit, report.per),
            ];
            row.extend(shown.iter().map(|&o| pct(slot_share(slot, o, view))));
            if others {
                row.push(pct(other_share(slot, shown, view)));
            }
            row
        })
        .collect();
    BucketCells { titles, rows }
}

/// `owner`'s share of `slot` in `view`, in percent (0 for an empty bucket).
pub fn slot_share(slot: &TimeSlot, owner: usize, view: View) -> f64 {
    share(view.of(&slot.all.owners[owner]), slot.all.total)
}

/// The shares of the owners not in `shown` (`other`), in percent.
pub fn other_share(slot: &TimeSlot, shown: &[usize], view: View) -> f64 {
    let shown_weight: u128 = shown.iter().map(|&o| view.of(&slot.all.owners[o])).sum();
    let all: u128 = slot.all.owners.iter().map(|w| view.of(w)).sum();
    share(all - shown_weight.min(all), slot.all.total)
}

/// A time on the recording's clock as an offset from its first sample: `+1.25 s`.
pub fn offset(t: &OwnerTimeline, nanos: u64) -> String {
    format!("+{:.2} s", nanos.saturating_sub(t.first) as f64 / 1e9)
}

/// The heading of an input's time table.
pub fn heading(input: &InputReport, t: &OwnerTimeline, view: View) -> String {
    let span = t.last - t.first;
    let size = match t.size {
        BucketSize::Percent(p) => format!("{p}% of {}", seconds(span)),
        BucketSize::Width(w) => Unit::Nanoseconds.format(w.into()),
    };
    format!(
        "{}: {} view per time bucket, {} buckets of {size} from the first sample at {} s \
         (the recording's clock; `--time` takes it)",
        input.path,
        view.as_str(),
        t.slots.len(),
        super::findings::time_arg(t.first)
    )
}

fn seconds(nanos: u64) -> String {
    format!("{:.2} s", nanos as f64 / 1e9)
}

/// `values` as bars, each scaled to the largest (a row's own peak).
pub fn sparkline(values: &[f64]) -> String {
    let peak = values.iter().copied().fold(0.0, f64::max);
    values
        .iter()
        .map(|&v| {
            if peak <= 0.0 {
                ' '
            } else {
                let level = ((v / peak) * (BARS.len() - 1) as f64).round() as usize;
                BARS[level.min(BARS.len() - 1)]
            }
        })
        .collect()
}

/// One owner's row of the sparkline table: its share over the whole input, its bars, its
/// peak bucket's share.
pub fn owner_row(
    report: &Report,
    input: &InputReport,
    t: &OwnerTimeline,
    owner: usize,
    view: View,
) -> Vec<String> {
    let shares: Vec<f64> = t.slots.iter().map(|s| slot_share(s, owner, view)).collect();
    let peak = shares.iter().copied().fold(0.0, f64::max);
    vec![
        report.owners[owner].name.clone(),
        pct(share(
            view.of(&input.aggregate.all.owners[owner]),
            input.aggregate.all.total,
        )),
        sparkline(&shares),
        pct(peak),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparklines_rise_to_each_rows_peak() {
        assert_eq!(sparkline(&[0.0, 25.0, 50.0]), "▁▅█");
        assert_eq!(sparkline(&[0.0, 0.0]), "  ");
    }
}

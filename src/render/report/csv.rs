//! CSV: one row per (input, owner, view), for spreadsheets and quick scripts.

use crate::aggregate::report::{GroupBy, Report, share};
use std::io::Write;

pub fn write(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    if report.by == GroupBy::Type {
        return write_types(report, out);
    }
    if report.by == GroupBy::Time {
        return write_time(report, out);
    }
    let confidence = crate::gate::DEFAULT_CONFIDENCE;
    writeln!(
        out,
        "input,owner,category,transparent,view,weight,total,share,guessed{}",
        if report.ci { ",low,high" } else { "" }
    )?;
    let rows = report.rows();
    for (i, input) in report.inputs.iter().enumerate() {
        let total = input.aggregate.all.total;
        for row in &rows {
            for view in &report.views {
                let w = view.of(&row.weights[i]);
                // `--ci`: the share's interval from this input's counts (empty without an
                // owner: samples without a stack)
                let interval = match row.estimate(i, *view) {
                    _ if !report.ci => String::new(),
                    Some(e) => {
                        let i = e.interval(confidence);
                        format!(",{:.6},{:.6}", i.low, i.high)
                    }
                    None => ",,".to_string(),
                };
                writeln!(
                    out,
                    "{},{},{},{},{},{},{},{:.6},{}{interval}",
                    field(&input.path),
                    field(&row.name),
                    row.category.map_or("", |c| c.as_str()),
                    row.transparent,
                    view.as_str(),
                    w,
                    total,
                    share(w, total),
                    row.guessed
                )?;
            }
        }
    }
    Ok(())
}

/// `--by time`: one row per (input, bucket, owner with weight in it, view).
fn write_time(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "input,start_ns,end_ns,owner,category,transparent,view,weight,total,share"
    )?;
    for input in &report.inputs {
        let Some(timeline) = &input.aggregate.timeline else {
            continue;
        };
        for slot in &timeline.slots {
            for (o, weights) in slot.all.owners.iter().enumerate() {
                let owner = &report.owners[o];
                for view in &report.views {
                    let w = view.of(weights);
                    if w == 0 {
                        continue;
                    }
                    writeln!(
                        out,
                        "{},{},{},{},{},{},{},{},{},{:.6}",
                        field(&input.path),
                        slot.start,
                        slot.end,
                        field(&owner.name),
                        owner.category.as_str(),
                        owner.transparent,
                        view.as_str(),
                        w,
                        slot.all.total,
                        share(w, slot.all.total)
                    )?;
                }
            }
        }
    }
    Ok(())
}

/// `--by type`: one row per (input, allocated type).
fn write_types(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "input,type,weight,total,share")?;
    for input in &report.inputs {
        let total = input.aggregate.all.total;
        for t in &input.aggregate.types {
            writeln!(
                out,
                "{},{},{},{},{:.6}",
                field(&input.path),
                field(&t.name),
                t.weight,
                total,
                share(t.weight, total)
            )?;
        }
    }
    Ok(())
}

/// Quotes a field when it holds a comma, quote or newline (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

//! CSV: one row per (input, owner, view), for spreadsheets and quick scripts.

use crate::aggregate::report::{GroupBy, Report, share};
use std::io::Write;

pub fn write(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "input,owner,category,transparent,view,weight,total,share"
    )?;
    let rows = report.rows();
    for (i, input) in report.inputs.iter().enumerate() {
        let total = input.aggregate.all.total;
        for row in &rows {
            for view in &report.views {
                let w = view.of(&row.weights[i]);
                writeln!(
                    out,
                    "{},{},{},{},{},{},{},{:.6}",
                    field(&input.path),
                    field(&row.name),
                    row.category.map_or("", |c| c.as_str()),
                    row.transparent,
                    view.as_str(),
                    w,
                    total,
                    share(w, total)
                )?;
            }
        }
    }
    if report.by == GroupBy::Type {
        writeln!(out)?;
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

//! Fleet rows (issue 16): a report flattened to one row per (input, owner, view), the shape an
//! engine (DuckDB, Spark, a warehouse) sums across thousands of inputs. The numbers are the
//! report's own ([`Report::rows`], the quality figures of `aggregate::quality`), never
//! recomputed; this module only decides the row shape and the integer type they travel in.
//!
//! Weights travel as signed 64-bit integers, the widest integer every engine has (Spark, Java
//! and Parquet readers without unsigned types included). One input's weight above `i64::MAX`
//! (292 CPU-years of nanoseconds, 9.2 EB of bytes) is an error for that input, never a
//! rounded or wrapped number; sums across inputs are the engine's, which should sum as
//! DECIMAL(38,0) (or Python int) when a fleet's total can pass 2^63.

use super::quality::{FigureValue, QUALITY_FIGURES, Quality};
use super::report::{GroupBy, Report, ShareRow, View};
use crate::model::{NO_STACK, Notice};
use regex::Regex;

/// One input's rows, or why there are none.
#[derive(Debug, Clone)]
pub struct InputRows {
    pub path: String,
    /// Values of the row's label columns, in [`RowLabels::keys`] order; `None` where a label
    /// has no value for this input (a `--label-from-path` group that did not match).
    pub labels: Vec<Option<String>>,
    pub outcome: Result<InputFigures, String>,
}

/// What an input that was read says: its figures and one row per owner and view.
#[derive(Debug, Clone)]
pub struct InputFigures {
    pub metric: String,
    pub unit: String,
    pub total: i64,
    /// A delta profile's negative part as a magnitude (0 for ordinary profiles); its owners
    /// are not in the rows yet, so the figure says how much that leaves out.
    pub negative_total: i64,
    pub quality: RowQuality,
    /// The input's warnings, so that a fleet run does not lose them on a scrolled terminal.
    pub warnings: Vec<Notice>,
    /// What the report's header warns of for this input (issue 28: a row of an unfit
    /// recording says so as its report does); rendered into the `warnings` column.
    pub findings: Vec<super::quality::Finding>,
    pub owners: Vec<OwnerRow>,
}

/// The recording-quality figures carried on every row of an input, one per
/// [`QUALITY_FIGURES`] entry and in its order, numbers as the rows' integers.
#[derive(Debug, Clone, Default)]
pub struct RowQuality {
    pub figures: Vec<RowFigure>,
}

/// One quality figure's value in a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowFigure {
    Flag(bool),
    Int(i64),
    Name(Option<&'static str>),
}

impl RowQuality {
    fn of(quality: &Quality, path: &str) -> Result<RowQuality, String> {
        let figures = QUALITY_FIGURES.iter().map(|f| {
            Ok(match (f.value)(quality) {
                FigureValue::Flag(b) => RowFigure::Flag(b),
                FigureValue::Number(n) => RowFigure::Int(exact(n, path, f.name)?),
                FigureValue::Name(n) => RowFigure::Name(n),
            })
        });
        Ok(RowQuality {
            figures: figures.collect::<Result<_, String>>()?,
        })
    }
}

/// One owner's weight in one view. `category` is `None` for [`NO_STACK`], which is no owner's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerRow {
    pub owner: String,
    pub category: Option<&'static str>,
    pub view: View,
    pub weight: i64,
    /// The owner is named after its third-party unit, not by a rule (issue 29).
    pub guessed: bool,
    /// `--by time`: the time bucket the weight is in (`None`: the whole input).
    pub bucket: Option<RowBucket>,
}

/// One time bucket of a `--by time` row: nanoseconds on the recording's clock, and the
/// bucket's total, which the row's `total` column carries so that `weight / total` is the
/// share in the bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowBucket {
    pub start_ns: i64,
    pub end_ns: i64,
    pub total: i64,
}

/// The label columns of a run: their names, fixed before the first input so that every row
/// (and every Parquet row group) has one schema, and where each input's values come from:
/// `--label KEY=VALUE` first, then the named groups of `--label-from-path`, then
/// `--pprof-label KEY`.
#[derive(Debug, Clone, Default)]
pub struct RowLabels {
    pub keys: Vec<String>,
    /// The values of `--label`, for the first `fixed.len()` keys.
    fixed: Vec<String>,
    from_path: Option<Regex>,
    /// `--pprof-label` keys, the last keys.
    pprof: Vec<String>,
}

impl RowLabels {
    /// Checks and compiles the label options: `KEY=VALUE` with a non-empty key, a regex with
    /// at least one named group, and no key twice or equal to one of `columns` (the rows' own
    /// columns, which the writer declares).
    pub fn new(
        fixed: &[String],
        from_path: Option<&str>,
        pprof: &[String],
        columns: &[&str],
    ) -> Result<RowLabels, String> {
        let mut labels = RowLabels::default();
        for pair in fixed {
            let (key, value) = pair
                .split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .ok_or_else(|| format!("--label {pair}: expected KEY=VALUE"))?;
            labels.add_key(key, "--label", columns)?;
            labels.fixed.push(value.to_string());
        }
        if let Some(text) = from_path {
            let regex = Regex::new(text).map_err(|e| format!("--label-from-path: {e}"))?;
            let names: Vec<String> = regex.capture_names().flatten().map(String::from).collect();
            if names.is_empty() {
                return Err(format!(
                    "--label-from-path {text}: no named group; name each label column as in \
                     `(?P<service>[^/]+)/(?P<date>\\d{{8}})/`"
                ));
            }
            for name in &names {
                labels.add_key(name, "--label-from-path", columns)?;
            }
            labels.from_path = Some(regex);
        }
        for key in pprof {
            labels.add_key(key, "--pprof-label", columns)?;
            labels.pprof.push(key.clone());
        }
        Ok(labels)
    }

    fn add_key(&mut self, key: &str, option: &str, columns: &[&str]) -> Result<(), String> {
        if columns.contains(&key) {
            return Err(format!(
                "{option}: `{key}` is a column of the rows already; the label columns must have \
                 other names than {}",
                columns.join(", ")
            ));
        }
        if self.keys.iter().any(|k| k == key) {
            return Err(format!("{option}: label `{key}` given twice"));
        }
        self.keys.push(key.to_string());
        Ok(())
    }

    /// The `--pprof-label` keys whose values the reader must collect.
    pub fn pprof_keys(&self) -> &[String] {
        &self.pprof
    }

    /// One input's label values: the `--label` values, the path's groups (`None` for a group
    /// that did not take part in the match, or all `None` when the regex does not match), and
    /// `pprof_values` (one per [`RowLabels::pprof_keys`]).
    pub fn values(&self, path: &str, pprof_values: Vec<Option<String>>) -> Vec<Option<String>> {
        let mut values: Vec<Option<String>> = self.fixed.iter().cloned().map(Some).collect();
        if let Some(regex) = &self.from_path {
            let captures = regex.captures(path);
            for name in regex.capture_names().flatten() {
                values.push(
                    captures
                        .as_ref()
                        .and_then(|c| c.name(name))
                        .map(|m| m.as_str().to_string()),
                );
            }
        }
        debug_assert_eq!(pprof_values.len(), self.pprof.len());
        values.extend(pprof_values);
        values
    }
}

/// The label columns and each input's values of them, in input order.
#[derive(Debug, Clone, Default)]
pub struct InputLabels {
    pub keys: RowLabels,
    pub values: Vec<Vec<Option<String>>>,
}

/// `value` as a row integer, or the error that names the input and the figure.
fn exact(value: u128, path: &str, what: &str) -> Result<i64, String> {
    i64::try_from(value).map_err(|_| {
        format!(
            "{path}: {what} is {value}, above the rows' 64-bit signed integers ({}); \
             use --format json, which carries 128-bit weights",
            i64::MAX
        )
    })
}

impl InputRows {
    /// The rows of every input of `report` in `views` (`labels[i]` for input `i`): every owner
    /// with weight in that input (the report's owner rows, [`NO_STACK`] included), heaviest
    /// first as the table orders them; grouped by time, the same per time bucket. The report
    /// must be grouped by owner or by time.
    pub fn of_report(
        report: &Report,
        views: &[View],
        labels: Vec<Vec<Option<String>>>,
    ) -> Vec<InputRows> {
        debug_assert!(
            matches!(report.by, GroupBy::Owner | GroupBy::Time),
            "rows are per owner"
        );
        let rows = report.rows();
        labels
            .into_iter()
            .enumerate()
            .map(|(input, labels)| InputRows {
                path: report.inputs[input].path.clone(),
                labels,
                outcome: figures(report, &rows, input, views),
            })
            .collect()
    }

    /// The row of an input that could not be read: its path and why.
    pub fn failed(path: String, labels: Vec<Option<String>>, reason: String) -> InputRows {
        InputRows {
            path,
            labels,
            outcome: Err(reason),
        }
    }
}

fn figures(
    report: &Report,
    rows: &[ShareRow],
    input: usize,
    views: &[View],
) -> Result<InputFigures, String> {
    let inp = &report.inputs[input];
    let path = inp.path.as_str();
    let agg = &inp.aggregate;
    let quality = RowQuality::of(&agg.quality, path)?;
    let owners = match agg.timeline.as_ref().filter(|_| report.by == GroupBy::Time) {
        None => owner_rows(rows, input, views, path, None)?,
        Some(timeline) => {
            let mut all = Vec::new();
            for slot in &timeline.slots {
                let bucket = RowBucket {
                    start_ns: exact(slot.start.into(), path, "bucket start")?,
                    end_ns: exact(slot.end.into(), path, "bucket end")?,
                    total: exact(slot.all.total, path, "bucket total")?,
                };
                let slot_rows = report.rows_for(std::slice::from_ref(&slot.all));
                all.extend(owner_rows(&slot_rows, 0, views, path, Some(bucket))?);
            }
            all
        }
    };
    Ok(InputFigures {
        metric: inp.metric.name.clone(),
        unit: inp.metric.unit.name().to_string(),
        total: exact(agg.all.total, path, "total")?,
        negative_total: exact(agg.negative.total, path, "negative total")?,
        quality,
        warnings: inp.warnings.clone(),
        findings: agg
            .findings()
            .into_iter()
            .filter(|f| f.is_warning())
            .collect(),
        owners,
    })
}

/// One row per owner of `rows` with weight in input `input`, per view of `views`.
fn owner_rows(
    rows: &[ShareRow],
    input: usize,
    views: &[View],
    path: &str,
    bucket: Option<RowBucket>,
) -> Result<Vec<OwnerRow>, String> {
    let mut owners = Vec::new();
    for row in rows {
        let w = &row.weights[input];
        if w.self_ + w.owner + w.anywhere == 0 {
            continue;
        }
        for &view in views {
            owners.push(OwnerRow {
                owner: row.name.clone(),
                category: if row.name == NO_STACK {
                    None
                } else {
                    row.category.map(|c| c.as_str())
                },
                view,
                weight: exact(
                    view.of(w),
                    path,
                    &format!("{}'s {} weight", row.name, view.as_str()),
                )?,
                guessed: row.guessed,
                bucket,
            });
        }
    }
    Ok(owners)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_weight_past_i64_is_an_error_naming_the_input_never_a_wrapped_number() {
        assert_eq!(exact(i64::MAX as u128, "a.pb", "total"), Ok(i64::MAX));
        let e = exact(i64::MAX as u128 + 1, "a.pb", "total").unwrap_err();
        assert!(
            e.starts_with("a.pb: total is 9223372036854775808, above"),
            "{e}"
        );
        assert!(e.contains("--format json"), "{e}");
    }

    #[test]
    fn label_values_come_from_the_options_the_path_and_pprof_in_that_order() {
        let labels = RowLabels::new(
            &["region=eu".to_string()],
            Some(r"(?P<service>svc-\w+)/(?:(?P<date>\d{8})/)?"),
            &["pod".to_string()],
            &["schema", "path"],
        )
        .unwrap();
        assert_eq!(labels.keys, ["region", "service", "date", "pod"]);
        let some = |s: &str| Some(s.to_string());
        assert_eq!(
            labels.values("/p/svc-a/20261101/x.pb", vec![some("p1")]),
            [some("eu"), some("svc-a"), some("20261101"), some("p1")]
        );
        // a group outside the match, and a path the regex does not match: null
        assert_eq!(
            labels.values("/p/svc-b/x.pb", vec![None]),
            [some("eu"), some("svc-b"), None, None]
        );
        assert_eq!(
            labels.values("/q/x.pb", vec![None]),
            [some("eu"), None, None, None]
        );
        let twice = RowLabels::new(&["a=1".into()], Some("(?P<a>x)"), &[], &[]).unwrap_err();
        assert!(twice.contains("label `a` given twice"), "{twice}");
        let column = RowLabels::new(&["path=x".into()], None, &[], &["schema", "path"]);
        assert!(
            column
                .unwrap_err()
                .contains("`path` is a column of the rows already")
        );
    }
}

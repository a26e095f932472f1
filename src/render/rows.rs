//! Fleet rows written as NDJSON or Parquet (issue 16): the schema of `aggregate::rows`, one
//! line or Parquet row per (input, owner, view), documented in the README ("Fleet rows").
//!
//! Both formats stream: NDJSON is written a line at a time, Parquet a row group at a time
//! (arrow-rs buffers at most [`ROW_GROUP_ROWS`] rows before it encodes them), so a run over
//! ten thousand inputs holds one row group, never the whole output. Every row has every
//! column (null where an error row has no figure), so that a reader infers one schema.

use super::json::SCHEMA;
use crate::aggregate::rows::{InputFigures, InputRows, OwnerRow, RowLabels};
use arrow_array::builder::{BooleanBuilder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use serde::ser::{SerializeMap, Serializer};
use std::io::Write;
use std::sync::Arc;

/// Rows a Parquet row group holds: large enough for column encodings to pay off, small
/// enough (a few MB) that memory stays flat however many inputs a run reads.
pub const ROW_GROUP_ROWS: usize = 64 * 1024;

/// Rows encoded into one Arrow batch before it is handed to the Parquet writer.
const BATCH_ROWS: usize = 8 * 1024;

/// The two row formats of `report --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowFormat {
    Ndjson,
    Parquet,
}

/// A stream of rows into `out`. Call [`RowWriter::finish`] at the end: Parquet's footer is
/// written there, and a file without it is unreadable.
pub struct RowWriter<'w> {
    out: &'w mut dyn Write,
    labels: RowLabels,
    parquet: Option<ParquetRows>,
}

impl<'w> RowWriter<'w> {
    pub fn new(
        format: RowFormat,
        labels: RowLabels,
        out: &'w mut dyn Write,
    ) -> std::io::Result<Self> {
        let parquet = match format {
            RowFormat::Ndjson => None,
            RowFormat::Parquet => Some(ParquetRows::new(&labels)?),
        };
        Ok(RowWriter {
            out,
            labels,
            parquet,
        })
    }

    /// Writes one input's rows: one row per owner and view; one error row for a failed input;
    /// one row without owner, view and weight for an input without weight.
    pub fn write(&mut self, rows: &InputRows) -> std::io::Result<()> {
        match &mut self.parquet {
            Some(p) => {
                p.push(rows);
                if p.buffered >= BATCH_ROWS {
                    p.flush_batch(self.out)?;
                }
                Ok(())
            }
            None => write_ndjson(&self.labels, rows, self.out),
        }
    }

    pub fn finish(self) -> std::io::Result<()> {
        match self.parquet {
            Some(p) => p.finish(self.out),
            None => Ok(()),
        }
    }
}

/// The columns of one row, in schema order, as NDJSON and Parquet both write them.
struct Row<'a> {
    schema: &'static str,
    path: &'a str,
    labels: &'a [Option<String>],
    figures: Option<&'a InputFigures>,
    owner: Option<&'a OwnerRow>,
    warnings: Option<String>,
    error: Option<&'a str>,
}

/// The rows of one input, in order: its owner rows, or its one error row.
fn rows_of<'a>(rows: &'a InputRows) -> Vec<Row<'a>> {
    match &rows.outcome {
        Err(reason) => vec![Row {
            schema: SCHEMA,
            path: &rows.path,
            labels: &rows.labels,
            figures: None,
            owner: None,
            warnings: None,
            error: Some(reason),
        }],
        Ok(fig) => {
            // the reader's warnings, then the report header's findings, one a line
            let all: Vec<String> = (fig.warnings.iter().cloned())
                .chain(super::findings::lines(&fig.findings))
                .collect();
            let warnings = (!all.is_empty()).then(|| all.join("\n"));
            let row = |owner| Row {
                schema: SCHEMA,
                path: &rows.path,
                labels: &rows.labels,
                figures: Some(fig),
                owner,
                warnings: warnings.clone(),
                error: None,
            };
            if fig.owners.is_empty() {
                // an input without weight still says it was read, with its figures
                return vec![row(None)];
            }
            fig.owners.iter().map(|o| row(Some(o))).collect()
        }
    }
}

/// The `total` column: the time bucket's total on a `--by time` row, else the input's.
fn row_total(row: &Row<'_>) -> Option<i64> {
    match row.owner.and_then(|o| o.bucket) {
        Some(bucket) => Some(bucket.total),
        None => row.figures.map(|f| f.total),
    }
}

fn write_ndjson(labels: &RowLabels, rows: &InputRows, out: &mut dyn Write) -> std::io::Result<()> {
    for row in rows_of(rows) {
        let mut ser = serde_json::Serializer::new(&mut *out);
        let mut map = ser.serialize_map(None)?;
        map.serialize_entry("schema", row.schema)?;
        map.serialize_entry("path", row.path)?;
        for (key, value) in labels.keys.iter().zip(row.labels) {
            map.serialize_entry(key, value)?;
        }
        let f = row.figures;
        let q = f.map(|f| &f.quality);
        map.serialize_entry("metric", &f.map(|f| &f.metric))?;
        map.serialize_entry("unit", &f.map(|f| &f.unit))?;
        map.serialize_entry("total", &row_total(&row))?;
        map.serialize_entry("negative_total", &f.map(|f| f.negative_total))?;
        map.serialize_entry("owner", &row.owner.map(|o| &o.owner))?;
        map.serialize_entry("category", &row.owner.and_then(|o| o.category))?;
        map.serialize_entry("view", &row.owner.map(|o| o.view.as_str()))?;
        let bucket = row.owner.and_then(|o| o.bucket);
        map.serialize_entry("bucket_start_ns", &bucket.map(|b| b.start_ns))?;
        map.serialize_entry("bucket_end_ns", &bucket.map(|b| b.end_ns))?;
        map.serialize_entry("weight", &row.owner.map(|o| o.weight))?;
        map.serialize_entry("guessed", &row.owner.map(|o| o.guessed))?;
        map.serialize_entry("callchains", &q.map(|q| q.callchains))?;
        map.serialize_entry("max_depth", &q.map(|q| q.max_depth))?;
        map.serialize_entry("ownerless", &q.map(|q| q.ownerless))?;
        map.serialize_entry("unresolved_leaf", &q.map(|q| q.unresolved_leaf))?;
        map.serialize_entry("unresolved_owner", &q.map(|q| q.unresolved_owner))?;
        map.serialize_entry("unresolved_anywhere", &q.map(|q| q.unresolved_anywhere))?;
        map.serialize_entry("module_only_leaf", &q.map(|q| q.module_only_leaf))?;
        map.serialize_entry("call_graph", &q.and_then(|q| q.call_graph))?;
        map.serialize_entry("samples", &q.map(|q| q.samples))?;
        map.serialize_entry("lost_events", &q.map(|q| q.lost_events))?;
        map.serialize_entry("lost_samples", &q.map(|q| q.lost_samples))?;
        map.serialize_entry("throttles", &q.map(|q| q.throttles))?;
        map.serialize_entry("warnings", &row.warnings)?;
        map.serialize_entry("error", &row.error)?;
        map.end()?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// The Arrow schema of the rows: the fixed columns with the label columns after `path`.
pub fn arrow_schema(labels: &RowLabels) -> SchemaRef {
    let text = |name: &str, nullable| Field::new(name, DataType::Utf8, nullable);
    let int = |name: &str| Field::new(name, DataType::Int64, true);
    let mut fields = vec![text("schema", false), text("path", false)];
    fields.extend(labels.keys.iter().map(|k| text(k, true)));
    fields.extend([
        text("metric", true),
        text("unit", true),
        int("total"),
        int("negative_total"),
        text("owner", true),
        text("category", true),
        text("view", true),
        int("bucket_start_ns"),
        int("bucket_end_ns"),
        int("weight"),
        Field::new("guessed", DataType::Boolean, true),
        Field::new("callchains", DataType::Boolean, true),
        int("max_depth"),
        int("ownerless"),
        int("unresolved_leaf"),
        int("unresolved_owner"),
        int("unresolved_anywhere"),
        int("module_only_leaf"),
        text("call_graph", true),
        int("samples"),
        int("lost_events"),
        int("lost_samples"),
        int("throttles"),
        text("warnings", true),
        text("error", true),
    ]);
    let metadata = [("whose.schema".to_string(), SCHEMA.to_string())].into();
    Arc::new(Schema::new_with_metadata(fields, metadata))
}

/// Column builders for the rows not yet handed to the Parquet writer, and the writer, which
/// encodes into a buffer that is drained into the output after every batch.
struct ParquetRows {
    schema: SchemaRef,
    writer: ArrowWriter<Vec<u8>>,
    buffered: usize,
    text: Vec<StringBuilder>,
    labels: Vec<StringBuilder>,
    ints: Vec<Int64Builder>,
    guessed: BooleanBuilder,
    callchains: BooleanBuilder,
}

/// Text columns in builder order (labels apart).
const TEXT: [&str; 9] = [
    "schema",
    "path",
    "metric",
    "unit",
    "owner",
    "category",
    "view",
    "call_graph",
    "warnings",
];
const ERROR_TEXT: usize = TEXT.len();
/// Integer columns in builder order.
const INTS: [&str; 15] = [
    "total",
    "negative_total",
    "bucket_start_ns",
    "bucket_end_ns",
    "weight",
    "max_depth",
    "ownerless",
    "unresolved_leaf",
    "unresolved_owner",
    "unresolved_anywhere",
    "module_only_leaf",
    "samples",
    "lost_events",
    "lost_samples",
    "throttles",
];

impl ParquetRows {
    fn new(labels: &RowLabels) -> std::io::Result<ParquetRows> {
        let schema = arrow_schema(labels);
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
            .set_created_by(format!("whose {}", env!("CARGO_PKG_VERSION")))
            .build();
        let writer = ArrowWriter::try_new(Vec::new(), schema.clone(), Some(props))
            .map_err(std::io::Error::other)?;
        Ok(ParquetRows {
            schema,
            writer,
            buffered: 0,
            text: (0..=TEXT.len()).map(|_| StringBuilder::new()).collect(),
            labels: labels.keys.iter().map(|_| StringBuilder::new()).collect(),
            ints: INTS.iter().map(|_| Int64Builder::new()).collect(),
            guessed: BooleanBuilder::new(),
            callchains: BooleanBuilder::new(),
        })
    }

    fn push(&mut self, rows: &InputRows) {
        for row in rows_of(rows) {
            let f = row.figures;
            let q = f.map(|f| &f.quality);
            let o = row.owner;
            let texts: [Option<&str>; TEXT.len() + 1] = [
                Some(row.schema),
                Some(row.path),
                f.map(|f| f.metric.as_str()),
                f.map(|f| f.unit.as_str()),
                o.map(|o| o.owner.as_str()),
                o.and_then(|o| o.category),
                o.map(|o| o.view.as_str()),
                q.and_then(|q| q.call_graph),
                row.warnings.as_deref(),
                row.error,
            ];
            for (builder, value) in self.text.iter_mut().zip(texts) {
                builder.append_option(value);
            }
            for (builder, value) in self.labels.iter_mut().zip(row.labels) {
                builder.append_option(value.as_deref());
            }
            let bucket = o.and_then(|o| o.bucket);
            let ints: [Option<i64>; INTS.len()] = [
                row_total(&row),
                f.map(|f| f.negative_total),
                bucket.map(|b| b.start_ns),
                bucket.map(|b| b.end_ns),
                o.map(|o| o.weight),
                q.map(|q| q.max_depth),
                q.map(|q| q.ownerless),
                q.map(|q| q.unresolved_leaf),
                q.map(|q| q.unresolved_owner),
                q.map(|q| q.unresolved_anywhere),
                q.map(|q| q.module_only_leaf),
                q.map(|q| q.samples),
                q.map(|q| q.lost_events),
                q.map(|q| q.lost_samples),
                q.map(|q| q.throttles),
            ];
            for (builder, value) in self.ints.iter_mut().zip(ints) {
                builder.append_option(value);
            }
            self.guessed.append_option(o.map(|o| o.guessed));
            self.callchains.append_option(q.map(|q| q.callchains));
            self.buffered += 1;
        }
    }

    /// Hands the buffered rows to the writer as one batch and moves what it has encoded so
    /// far (whole row groups, the header) into `out`.
    fn flush_batch(&mut self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.buffered > 0 {
            let batch = self.batch()?;
            self.writer.write(&batch).map_err(std::io::Error::other)?;
            self.buffered = 0;
        }
        let encoded = self.writer.inner_mut();
        out.write_all(encoded)?;
        encoded.clear();
        Ok(())
    }

    /// The builders' rows as a batch in schema order.
    fn batch(&mut self) -> std::io::Result<RecordBatch> {
        let mut by_name: Vec<(&str, ArrayRef)> = Vec::new();
        for (name, builder) in TEXT.iter().zip(&mut self.text) {
            by_name.push((name, Arc::new(builder.finish())));
        }
        by_name.push(("error", Arc::new(self.text[ERROR_TEXT].finish())));
        for (name, builder) in INTS.iter().zip(&mut self.ints) {
            by_name.push((name, Arc::new(builder.finish())));
        }
        by_name.push(("guessed", Arc::new(self.guessed.finish())));
        by_name.push(("callchains", Arc::new(self.callchains.finish())));
        let labels: Vec<ArrayRef> = self
            .labels
            .iter_mut()
            .map(|b| Arc::new(b.finish()) as ArrayRef)
            .collect();
        let mut labels = labels.into_iter();
        let columns: Vec<ArrayRef> = self
            .schema
            .fields()
            .iter()
            .map(
                |field| match by_name.iter().find(|(n, _)| *n == field.name()) {
                    Some((_, array)) => array.clone(),
                    None => labels.next().expect("one builder per label column"),
                },
            )
            .collect();
        RecordBatch::try_new(self.schema.clone(), columns).map_err(std::io::Error::other)
    }

    fn finish(mut self, out: &mut dyn Write) -> std::io::Result<()> {
        self.flush_batch(out)?;
        let encoded = self.writer.into_inner().map_err(std::io::Error::other)?;
        out.write_all(&encoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::rows::FIXED_COLUMNS;

    /// The columns are named in three places (the schema, the builders' order, and the names
    /// a label may not take): they must be one set, or a label could shadow a column.
    #[test]
    fn the_schema_the_builders_and_the_reserved_names_agree() {
        let schema = arrow_schema(&RowLabels::default());
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, FIXED_COLUMNS);
        let mut built: Vec<&str> = TEXT.iter().chain(&INTS).copied().collect();
        built.extend(["guessed", "callchains", "error"]);
        built.sort_unstable();
        let mut fixed = FIXED_COLUMNS.to_vec();
        fixed.sort_unstable();
        assert_eq!(built, fixed);
    }
}

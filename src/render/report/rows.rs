//! Fleet rows written as NDJSON or Parquet (issue 16): the schema of `aggregate::rows`, one
//! line or Parquet row per (input, owner, view), documented in the README ("Fleet rows").
//!
//! Both formats stream: NDJSON is written a line at a time, Parquet a row group at a time
//! (arrow-rs buffers at most [`ROW_GROUP_ROWS`] rows before it encodes them), so a run over
//! ten thousand inputs holds one row group, never the whole output. Every row has every
//! column (null where an error row has no figure), so that a reader infers one schema.

use super::json::SCHEMA;
use crate::aggregate::quality::{FigureValue, QUALITY_FIGURES};
use crate::aggregate::rows::{InputFigures, InputRows, OwnerRow, RowFigure, RowLabels};
use arrow_array::builder::{BooleanBuilder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use serde::ser::{SerializeMap, Serializer};
use std::io::Write;
use std::sync::{Arc, LazyLock};

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
            let all: Vec<String> = (fig.warnings.iter().map(super::notices::text))
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
        for (i, column) in columns().iter().enumerate() {
            map.serialize_entry(column.name, &column.cell(&row))?;
            if i + 1 == LABELS_AFTER {
                for (key, value) in labels.keys.iter().zip(row.labels) {
                    map.serialize_entry(key, value)?;
                }
            }
        }
        map.end()?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// The names of the row columns (labels apart), which a label column may not take.
pub fn column_names() -> Vec<&'static str> {
    columns().iter().map(|c| c.name).collect()
}

/// One row column: its name, its Arrow type, and its value in a row. Every column is
/// declared once, here or (a quality figure) in [`QUALITY_FIGURES`]; NDJSON, the Parquet
/// schema and its builders all read [`columns`].
#[derive(Clone, Copy)]
struct Column {
    name: &'static str,
    kind: Kind,
    cell: CellOf,
}

/// Where a column's value in a row comes from.
#[derive(Clone, Copy)]
enum CellOf {
    Row(for<'r> fn(&'r Row<'r>) -> Cell<'r>),
    Quality(usize),
}

impl Column {
    fn cell<'r>(&self, row: &'r Row<'r>) -> Cell<'r> {
        match self.cell {
            CellOf::Row(cell) => cell(row),
            CellOf::Quality(i) => quality_cell(row, i, self.kind),
        }
    }
}

/// A column's type: text (nullable or not), a 64-bit integer or a boolean, null where a row
/// has no such figure (an error row, a row without an owner).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text { nullable: bool },
    Int,
    Bool,
}

/// One value of a row.
enum Cell<'a> {
    Text(Option<&'a str>),
    Int(Option<i64>),
    Bool(Option<bool>),
}

impl serde::Serialize for Cell<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Cell::Text(v) => v.serialize(serializer),
            Cell::Int(v) => v.serialize(serializer),
            Cell::Bool(v) => v.serialize(serializer),
        }
    }
}

/// The label columns come after this many columns (`schema`, `path`).
const LABELS_AFTER: usize = 2;

/// The row columns before the quality figures, in schema order.
static HEAD: [Column; 13] = [
    Column {
        name: "schema",
        kind: Kind::Text { nullable: false },
        cell: CellOf::Row(|r| Cell::Text(Some(r.schema))),
    },
    Column {
        name: "path",
        kind: Kind::Text { nullable: false },
        cell: CellOf::Row(|r| Cell::Text(Some(r.path))),
    },
    Column {
        name: "metric",
        kind: Kind::Text { nullable: true },
        cell: CellOf::Row(|r| Cell::Text(r.figures.map(|f| f.metric.as_str()))),
    },
    Column {
        name: "unit",
        kind: Kind::Text { nullable: true },
        cell: CellOf::Row(|r| Cell::Text(r.figures.map(|f| f.unit.as_str()))),
    },
    Column {
        name: "total",
        kind: Kind::Int,
        cell: CellOf::Row(|r| Cell::Int(row_total(r))),
    },
    Column {
        name: "negative_total",
        kind: Kind::Int,
        cell: CellOf::Row(|r| Cell::Int(r.figures.map(|f| f.negative_total))),
    },
    Column {
        name: "owner",
        kind: Kind::Text { nullable: true },
        cell: CellOf::Row(|r| Cell::Text(r.owner.map(|o| o.owner.as_str()))),
    },
    Column {
        name: "category",
        kind: Kind::Text { nullable: true },
        cell: CellOf::Row(|r| Cell::Text(r.owner.and_then(|o| o.category))),
    },
    Column {
        name: "view",
        kind: Kind::Text { nullable: true },
        cell: CellOf::Row(|r| Cell::Text(r.owner.map(|o| o.view.as_str()))),
    },
    Column {
        name: "bucket_start_ns",
        kind: Kind::Int,
        cell: CellOf::Row(|r| Cell::Int(r.owner.and_then(|o| o.bucket).map(|b| b.start_ns))),
    },
    Column {
        name: "bucket_end_ns",
        kind: Kind::Int,
        cell: CellOf::Row(|r| Cell::Int(r.owner.and_then(|o| o.bucket).map(|b| b.end_ns))),
    },
    Column {
        name: "weight",
        kind: Kind::Int,
        cell: CellOf::Row(|r| Cell::Int(r.owner.map(|o| o.weight))),
    },
    Column {
        name: "guessed",
        kind: Kind::Bool,
        cell: CellOf::Row(|r| Cell::Bool(r.owner.map(|o| o.guessed))),
    },
];

/// The row columns after the quality figures.
static TAIL: [Column; 2] = [
    Column {
        name: "warnings",
        kind: Kind::Text { nullable: true },
        cell: CellOf::Row(|r| Cell::Text(r.warnings.as_deref())),
    },
    Column {
        name: "error",
        kind: Kind::Text { nullable: true },
        cell: CellOf::Row(|r| Cell::Text(r.error)),
    },
];

/// Every row column in schema order: [`HEAD`], a column per quality figure
/// ([`QUALITY_FIGURES`], which declares them), [`TAIL`].
fn columns() -> &'static [Column] {
    static ALL: LazyLock<Vec<Column>> = LazyLock::new(|| {
        let quality = (0..QUALITY_FIGURES.len()).map(|i| Column {
            name: QUALITY_FIGURES[i].name,
            kind: match QUALITY_FIGURES[i].kind() {
                FigureValue::Flag(_) => Kind::Bool,
                FigureValue::Number(_) => Kind::Int,
                FigureValue::Name(_) => Kind::Text { nullable: true },
            },
            cell: CellOf::Quality(i),
        });
        (HEAD.iter().copied())
            .chain(quality)
            .chain(TAIL.iter().copied())
            .collect()
    });
    &ALL
}

/// Quality figure `i` of a row, in a column of `kind` (null on an error row).
fn quality_cell<'r>(row: &'r Row<'r>, i: usize, kind: Kind) -> Cell<'r> {
    match row.figures.map(|f| f.quality.figures[i]) {
        Some(RowFigure::Flag(b)) => Cell::Bool(Some(b)),
        Some(RowFigure::Int(n)) => Cell::Int(Some(n)),
        Some(RowFigure::Name(n)) => Cell::Text(n),
        None => match kind {
            Kind::Bool => Cell::Bool(None),
            Kind::Int => Cell::Int(None),
            Kind::Text { .. } => Cell::Text(None),
        },
    }
}

/// The Arrow schema of the rows: the row columns with the label columns after `path`.
pub fn arrow_schema(labels: &RowLabels) -> SchemaRef {
    let field = |column: &Column| match column.kind {
        Kind::Text { nullable } => Field::new(column.name, DataType::Utf8, nullable),
        Kind::Int => Field::new(column.name, DataType::Int64, true),
        Kind::Bool => Field::new(column.name, DataType::Boolean, true),
    };
    let mut fields: Vec<Field> = columns()[..LABELS_AFTER].iter().map(field).collect();
    fields.extend((labels.keys.iter()).map(|k| Field::new(k.as_str(), DataType::Utf8, true)));
    fields.extend(columns()[LABELS_AFTER..].iter().map(field));
    let metadata = [("whose.schema".to_string(), SCHEMA.to_string())].into();
    Arc::new(Schema::new_with_metadata(fields, metadata))
}

/// Column builders for the rows not yet handed to the Parquet writer, and the writer, which
/// encodes into a buffer that is drained into the output after every batch.
struct ParquetRows {
    schema: SchemaRef,
    writer: ArrowWriter<Vec<u8>>,
    buffered: usize,
    /// One builder per row column, in [`columns`] order.
    columns: Vec<Builder>,
    labels: Vec<StringBuilder>,
}

/// The builder of one row column.
enum Builder {
    Text(StringBuilder),
    Int(Int64Builder),
    Bool(BooleanBuilder),
}

impl Builder {
    fn new(kind: Kind) -> Builder {
        match kind {
            Kind::Text { .. } => Builder::Text(StringBuilder::new()),
            Kind::Int => Builder::Int(Int64Builder::new()),
            Kind::Bool => Builder::Bool(BooleanBuilder::new()),
        }
    }

    fn append(&mut self, cell: Cell<'_>) {
        match (self, cell) {
            (Builder::Text(b), Cell::Text(v)) => b.append_option(v),
            (Builder::Int(b), Cell::Int(v)) => b.append_option(v),
            (Builder::Bool(b), Cell::Bool(v)) => b.append_option(v),
            _ => unreachable!("a column's cells are of its kind"),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::Text(b) => Arc::new(b.finish()),
            Builder::Int(b) => Arc::new(b.finish()),
            Builder::Bool(b) => Arc::new(b.finish()),
        }
    }
}

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
            columns: columns().iter().map(|c| Builder::new(c.kind)).collect(),
            labels: labels.keys.iter().map(|_| StringBuilder::new()).collect(),
        })
    }

    fn push(&mut self, rows: &InputRows) {
        for row in rows_of(rows) {
            for (builder, column) in self.columns.iter_mut().zip(columns()) {
                builder.append(column.cell(&row));
            }
            for (builder, value) in self.labels.iter_mut().zip(row.labels) {
                builder.append_option(value.as_deref());
            }
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
        let mut arrays: Vec<ArrayRef> = self.columns.iter_mut().map(Builder::finish).collect();
        let labels = self
            .labels
            .iter_mut()
            .map(|b| Arc::new(b.finish()) as ArrayRef);
        arrays.splice(LABELS_AFTER..LABELS_AFTER, labels);
        RecordBatch::try_new(self.schema.clone(), arrays).map_err(std::io::Error::other)
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

    /// The schema is made from the column table with the labels after `path`.
    #[test]
    fn the_schema_has_every_column_and_the_labels_after_path() {
        let labels = RowLabels::new(&["team=a".into()], None, &[], &column_names()).unwrap();
        let schema = arrow_schema(&labels);
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        let mut want = column_names();
        want.insert(LABELS_AFTER, "team");
        assert_eq!(names, want);
        assert_eq!(&names[..3], ["schema", "path", "team"]);
    }
}

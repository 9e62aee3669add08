//! One Parquet file → one in-memory [`Table`] of typed, nullable columns.
//!
//! Decoding is the arrow-rs `parquet` crate's (every encoding, dictionary
//! pages, nested definition levels, the pure-Rust codecs); this module only
//! turns its Arrow arrays into four value kinds the importers read by
//! column name. A column of a type it does not read (lists, structs,
//! decimals…) is kept by name and type and listed, never guessed at.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::error::ImportError;

/// The values of one column, one entry per row (`None`: null).
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// Any integer type (and timestamps, in nanoseconds).
    Int(Vec<Option<i64>>),
    Float(Vec<Option<f64>>),
    Text(Vec<Option<String>>),
    Bool(Vec<Option<bool>>),
    /// A type this reader does not decode; only its row count is known.
    Unread(usize),
}

impl Values {
    pub fn len(&self) -> usize {
        match self {
            Values::Int(v) => v.len(),
            Values::Float(v) => v.len(),
            Values::Text(v) => v.len(),
            Values::Bool(v) => v.len(),
            Values::Unread(n) => *n,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The value of row `i` as JSON (null where absent or unread).
    pub fn json(&self, i: usize) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            Values::Int(v) => v[i].map_or(J::Null, J::from),
            Values::Float(v) => v[i]
                .and_then(serde_json::Number::from_f64)
                .map_or(J::Null, J::Number),
            Values::Text(v) => v[i].as_ref().map_or(J::Null, |s| J::from(s.as_str())),
            Values::Bool(v) => v[i].map_or(J::Null, J::from),
            Values::Unread(_) => J::Null,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    /// The Arrow type as the file declared it (`Int64`, `Utf8`, …).
    pub data_type: String,
    pub values: Values,
}

/// A whole Parquet file, decoded.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub rows: usize,
    pub columns: Vec<Column>,
    /// `created_by` from the file footer (the writer and its version).
    pub created_by: Option<String>,
    /// Codecs of the column chunks (`SNAPPY`, `ZSTD`, …), distinct.
    pub codecs: Vec<String>,
}

impl Table {
    pub fn column(&self, name: &str) -> Option<&Values> {
        self.columns
            .iter()
            .find(|c| c.name == name)
            .map(|c| &c.values)
    }
    pub fn int(&self, name: &str, row: usize) -> Option<i64> {
        match self.column(name)? {
            Values::Int(v) => v[row],
            Values::Float(v) => v[row].map(|f| f.round() as i64),
            _ => None,
        }
    }
    pub fn float(&self, name: &str, row: usize) -> Option<f64> {
        match self.column(name)? {
            Values::Int(v) => v[row].map(|i| i as f64),
            Values::Float(v) => v[row],
            _ => None,
        }
    }
    pub fn text(&self, name: &str, row: usize) -> Option<&str> {
        match self.column(name)? {
            Values::Text(v) => v[row].as_deref(),
            _ => None,
        }
    }
    /// A cell as text whatever its type (metadata listings).
    pub fn display(&self, name: &str, row: usize) -> Option<String> {
        match self.column(name)? {
            Values::Int(v) => v[row].map(|x| x.to_string()),
            Values::Float(v) => v[row].map(|x| x.to_string()),
            Values::Text(v) => v[row].clone(),
            Values::Bool(v) => v[row].map(|x| x.to_string()),
            Values::Unread(_) => None,
        }
    }
}

/// Is this the start of a Parquet file (`PAR1`)?
pub fn looks_like(head: &[u8]) -> bool {
    head.starts_with(b"PAR1")
}

/// Decodes a whole Parquet file held in memory.
pub fn read_table(bytes: bytes::Bytes) -> Result<Table, ImportError> {
    let bad = |e: &dyn std::fmt::Display| ImportError::NotATrace {
        reason: format!("a Parquet file that cannot be read: {e}"),
    };
    if !looks_like(&bytes) || !bytes.ends_with(b"PAR1") {
        return Err(ImportError::NotATrace {
            reason: "a Parquet file that is cut off or damaged (no PAR1 footer)".into(),
        });
    }
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes).map_err(|e| bad(&e))?;
    let meta = builder.metadata().clone();
    let mut codecs: Vec<String> = Vec::new();
    for rg in meta.row_groups() {
        for c in rg.columns() {
            let codec = format!("{:?}", c.compression());
            let codec = codec.split('(').next().unwrap_or("").to_string();
            if !codecs.contains(&codec) {
                codecs.push(codec);
            }
        }
    }
    let schema = builder.schema().clone();
    let reader = builder.build().map_err(|e| bad(&e))?;
    let mut columns: Vec<Column> = schema
        .fields()
        .iter()
        .map(|f| Column {
            name: f.name().clone(),
            data_type: f.data_type().to_string(),
            values: empty_values(f.data_type()),
        })
        .collect();
    let mut rows = 0;
    for batch in reader {
        let batch = batch.map_err(|e| {
            let text = e.to_string();
            if text.contains("Disabled feature") || text.contains("not supported") {
                ImportError::NotATrace {
                    reason: format!(
                        "a Parquet file compressed with {} which this build cannot decode ({text}); the tracelane CLI reads it",
                        codecs.join("/")
                    ),
                }
            } else {
                bad(&e)
            }
        })?;
        rows += batch.num_rows();
        for (col, array) in columns.iter_mut().zip(batch.columns()) {
            append(&mut col.values, array);
        }
    }
    Ok(Table {
        rows,
        columns,
        created_by: meta.file_metadata().created_by().map(str::to_string),
        codecs,
    })
}

fn empty_values(t: &DataType) -> Values {
    match value_type(t) {
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64
        | DataType::Timestamp(_, _) => Values::Int(Vec::new()),
        DataType::Float16 | DataType::Float32 | DataType::Float64 => Values::Float(Vec::new()),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Values::Text(Vec::new()),
        DataType::Boolean => Values::Bool(Vec::new()),
        _ => Values::Unread(0),
    }
}

/// The type of the values (a dictionary column's value type).
fn value_type(t: &DataType) -> &DataType {
    match t {
        DataType::Dictionary(_, v) => v,
        t => t,
    }
}

fn append(values: &mut Values, array: &ArrayRef) {
    // A dictionary column: decode its values once, then look each key up.
    if let Some(dict) = array.as_any_dictionary_opt() {
        let mut decoded = empty_values(dict.values().data_type());
        append(&mut decoded, dict.values());
        let keys = dict.normalized_keys();
        for (i, &k) in keys.iter().enumerate() {
            let valid = array.is_valid(i);
            match (&mut *values, &decoded) {
                (Values::Int(out), Values::Int(d)) => out.push(d[k].filter(|_| valid)),
                (Values::Float(out), Values::Float(d)) => out.push(d[k].filter(|_| valid)),
                (Values::Text(out), Values::Text(d)) => out.push(d[k].clone().filter(|_| valid)),
                (Values::Bool(out), Values::Bool(d)) => out.push(d[k].filter(|_| valid)),
                (Values::Unread(n), _) => *n += 1,
                _ => {}
            }
        }
        return;
    }
    macro_rules! ints {
        ($out:expr, $t:ty, $scale:expr) => {
            $out.extend(
                array
                    .as_primitive::<$t>()
                    .iter()
                    .map(|v| v.map(|x| (x as i64).saturating_mul($scale))),
            )
        };
    }
    match values {
        Values::Int(out) => match array.data_type() {
            DataType::Int8 => ints!(out, Int8Type, 1),
            DataType::Int16 => ints!(out, Int16Type, 1),
            DataType::Int32 => ints!(out, Int32Type, 1),
            DataType::Int64 => ints!(out, Int64Type, 1),
            DataType::UInt8 => ints!(out, UInt8Type, 1),
            DataType::UInt16 => ints!(out, UInt16Type, 1),
            DataType::UInt32 => ints!(out, UInt32Type, 1),
            DataType::UInt64 => ints!(out, UInt64Type, 1),
            DataType::Timestamp(TimeUnit::Second, _) => {
                ints!(out, TimestampSecondType, 1_000_000_000)
            }
            DataType::Timestamp(TimeUnit::Millisecond, _) => {
                ints!(out, TimestampMillisecondType, 1_000_000)
            }
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                ints!(out, TimestampMicrosecondType, 1_000)
            }
            DataType::Timestamp(TimeUnit::Nanosecond, _) => {
                ints!(out, TimestampNanosecondType, 1)
            }
            _ => out.extend(std::iter::repeat_n(None, array.len())),
        },
        Values::Float(out) => match array.data_type() {
            DataType::Float16 => out.extend(
                array
                    .as_primitive::<Float16Type>()
                    .iter()
                    .map(|v| v.map(f64::from)),
            ),
            DataType::Float32 => out.extend(
                array
                    .as_primitive::<Float32Type>()
                    .iter()
                    .map(|v| v.map(f64::from)),
            ),
            DataType::Float64 => out.extend(array.as_primitive::<Float64Type>().iter()),
            _ => out.extend(std::iter::repeat_n(None, array.len())),
        },
        Values::Text(out) => match array.data_type() {
            DataType::Utf8 => out.extend(
                array
                    .as_string::<i32>()
                    .iter()
                    .map(|v| v.map(str::to_string)),
            ),
            DataType::LargeUtf8 => out.extend(
                array
                    .as_string::<i64>()
                    .iter()
                    .map(|v| v.map(str::to_string)),
            ),
            DataType::Utf8View => {
                out.extend(array.as_string_view().iter().map(|v| v.map(str::to_string)))
            }
            _ => out.extend(std::iter::repeat_n(None, array.len())),
        },
        Values::Bool(out) => out.extend(array.as_boolean().iter()),
        Values::Unread(n) => *n += array.len(),
    }
}

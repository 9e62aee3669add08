//! One Parquet file → one in-memory [`Table`] of typed, nullable columns.
//!
//! Decoding is the arrow-rs `parquet` crate's (page decompression, every
//! encoding, dictionary pages, definition levels), through its typed
//! column readers rather than its Arrow layer: the Arrow crates would add
//! ~1.6 MB to the worker's wasm for nothing these flat tables need. This
//! module turns each leaf column into one of four value kinds the
//! importers read by name. A column of a type it does not read (nested
//! lists, decimals, fixed-size binaries) is kept by name and type and
//! listed, never guessed at.

use parquet::basic::{ConvertedType, LogicalType, TimeUnit, Type as Physical};
use parquet::column::reader::{ColumnReader, ColumnReaderImpl};
use parquet::data_type::DataType;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::schema::types::ColumnDescriptor;

use crate::error::ImportError;

pub use super::table::{Column, Table, Values};

/// Is this the start of a Parquet file (`PAR1`)?
pub fn looks_like(head: &[u8]) -> bool {
    head.starts_with(b"PAR1")
}

/// Decodes a whole Parquet file held in memory.
pub fn read_table(bytes: bytes::Bytes) -> Result<Table, ImportError> {
    if !looks_like(&bytes) || !bytes.ends_with(b"PAR1") {
        return Err(ImportError::NotATrace {
            reason: "a Parquet file that is cut off or damaged (no PAR1 footer)".into(),
        });
    }
    let bad = |e: &dyn std::fmt::Display| ImportError::NotATrace {
        reason: format!("a Parquet file that cannot be read: {e}"),
    };
    let reader = SerializedFileReader::new(bytes).map_err(|e| bad(&e))?;
    let meta = reader.metadata();
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
    let unreadable = |e: parquet::errors::ParquetError| {
        let text = e.to_string();
        if text.contains("Disabled feature") || text.contains("not supported") {
            ImportError::NotATrace {
                reason: format!(
                    "a Parquet file compressed with {} which this build cannot decode ({text}); the tracelane CLI reads it",
                    codecs.join("/")
                ),
            }
        } else {
            bad(&text)
        }
    };
    let schema = meta.file_metadata().schema_descr();
    let mut columns: Vec<Column> = (0..schema.num_columns())
        .map(|i| {
            let c = schema.column(i);
            let values = empty_values(&c);
            Column {
                // A list is named as its top-level field (`flow_id`, not
                // `flow_id.list.element`).
                name: match values {
                    Values::TextList(_) => c.path().parts()[0].clone(),
                    _ => c.path().string(),
                },
                data_type: describe(&c),
                values,
            }
        })
        .collect();
    let mut rows = 0;
    for g in 0..reader.num_row_groups() {
        let group = reader.get_row_group(g).map_err(unreadable)?;
        let n = group.metadata().num_rows().max(0) as usize;
        for (i, col) in columns.iter_mut().enumerate() {
            let desc = schema.column(i);
            if let Values::TextList(out) = &mut col.values {
                match group.get_column_reader(i).map_err(unreadable)? {
                    ColumnReader::ByteArrayColumnReader(r) => {
                        read_text_lists(out, r, desc.max_def_level(), n).map_err(unreadable)?
                    }
                    _ => col.values = Values::Unread(col.values.len() + n),
                }
                continue;
            }
            if desc.max_rep_level() > 0 || matches!(col.values, Values::Unread(_)) {
                col.values = Values::Unread(col.values.len() + n);
                continue;
            }
            let reader = group.get_column_reader(i).map_err(unreadable)?;
            append(&mut col.values, reader, &desc, n).map_err(unreadable)?;
        }
        rows += n;
    }
    Ok(Table {
        rows,
        columns,
        created_by: meta.file_metadata().created_by().map(str::to_string),
        codecs,
    })
}

/// Nanoseconds per unit of a timestamp column, 0 for other columns.
fn timestamp_scale(c: &ColumnDescriptor) -> i64 {
    match c.logical_type_ref() {
        Some(LogicalType::Timestamp(t)) => match t.unit {
            TimeUnit::MILLIS => 1_000_000,
            TimeUnit::MICROS => 1_000,
            TimeUnit::NANOS => 1,
        },
        _ => match c.converted_type() {
            ConvertedType::TIMESTAMP_MILLIS => 1_000_000,
            ConvertedType::TIMESTAMP_MICROS => 1_000,
            _ => 0,
        },
    }
}

fn is_text(c: &ColumnDescriptor) -> bool {
    matches!(
        c.logical_type_ref(),
        Some(LogicalType::String | LogicalType::Enum | LogicalType::Json)
    ) || matches!(
        c.converted_type(),
        ConvertedType::UTF8 | ConvertedType::ENUM | ConvertedType::JSON
    )
}

/// The column's type as Arrow would name it (`Int64`, `Utf8`, …).
fn describe(c: &ColumnDescriptor) -> String {
    let ts = timestamp_scale(c);
    match c.physical_type() {
        Physical::BOOLEAN => "Boolean".into(),
        Physical::INT32 | Physical::INT64 if ts > 0 => format!(
            "Timestamp({})",
            match ts {
                1 => "ns",
                1_000 => "µs",
                _ => "ms",
            }
        ),
        Physical::INT32 => match c.logical_type_ref() {
            Some(LogicalType::Integer(t)) => {
                format!("{}Int{}", if t.is_signed { "" } else { "U" }, t.bit_width)
            }
            _ => "Int32".into(),
        },
        Physical::INT64 => match c.logical_type_ref() {
            Some(LogicalType::Integer(t)) if !t.is_signed => "UInt64".into(),
            _ => "Int64".into(),
        },
        Physical::INT96 => "Timestamp(ns, int96)".into(),
        Physical::FLOAT => "Float32".into(),
        Physical::DOUBLE => "Float64".into(),
        Physical::BYTE_ARRAY if is_text(c) && c.max_rep_level() > 0 => "List(Utf8)".into(),
        Physical::BYTE_ARRAY if is_text(c) => "Utf8".into(),
        Physical::BYTE_ARRAY => "Binary".into(),
        Physical::FIXED_LEN_BYTE_ARRAY => format!("FixedSizeBinary({})", c.type_length()),
    }
}

fn empty_values(c: &ColumnDescriptor) -> Values {
    if c.max_rep_level() == 1 && c.physical_type() == Physical::BYTE_ARRAY && is_text(c) {
        return Values::TextList(Vec::new());
    }
    if c.max_rep_level() > 0 {
        return Values::Unread(0);
    }
    match c.physical_type() {
        Physical::BOOLEAN => Values::Bool(Vec::new()),
        Physical::INT32 | Physical::INT64 | Physical::INT96 => Values::Int(Vec::new()),
        Physical::FLOAT | Physical::DOUBLE => Values::Float(Vec::new()),
        Physical::BYTE_ARRAY => Values::Text(Vec::new()),
        Physical::FIXED_LEN_BYTE_ARRAY => Values::Unread(0),
    }
}

/// Every value of one column chunk of `n` rows, nulls where the
/// definition level says so.
fn read_all<T: DataType>(
    mut r: ColumnReaderImpl<T>,
    max_def: i16,
    n: usize,
) -> parquet::errors::Result<Vec<Option<T::T>>> {
    let mut values: Vec<T::T> = Vec::with_capacity(n);
    let mut defs: Vec<i16> = Vec::with_capacity(if max_def > 0 { n } else { 0 });
    let mut read = 0;
    while read < n {
        let levels = (max_def > 0).then_some(&mut defs);
        let (records, _, _) = r.read_records(n - read, levels, None, &mut values)?;
        if records == 0 {
            break;
        }
        read += records;
    }
    if max_def == 0 {
        return Ok(values.into_iter().map(Some).collect());
    }
    let mut it = values.into_iter();
    Ok(defs
        .iter()
        .map(|&d| if d == max_def { it.next() } else { None })
        .collect())
}

/// `n` rows of a list-of-strings column (`flow_id`): a repetition level of
/// 0 starts a row; a value is present where the definition level is the
/// column's maximum (lower levels: a null or empty list, a null element).
fn read_text_lists(
    out: &mut Vec<Vec<String>>,
    mut r: ColumnReaderImpl<parquet::data_type::ByteArrayType>,
    max_def: i16,
    n: usize,
) -> parquet::errors::Result<()> {
    let mut values = Vec::new();
    let mut defs: Vec<i16> = Vec::new();
    let mut reps: Vec<i16> = Vec::new();
    let mut read = 0;
    while read < n {
        let (records, _, _) =
            r.read_records(n - read, Some(&mut defs), Some(&mut reps), &mut values)?;
        if records == 0 {
            break;
        }
        read += records;
    }
    let mut values = values.into_iter();
    let first = out.len();
    for (d, rep) in defs.iter().zip(&reps) {
        if *rep == 0 || out.len() == first {
            out.push(Vec::new());
        }
        if *d == max_def {
            if let (Some(v), Some(row)) = (values.next(), out.last_mut()) {
                row.push(String::from_utf8_lossy(v.data()).into_owned());
            }
        }
    }
    out.resize_with(first + n, Vec::new);
    Ok(())
}

fn append(
    values: &mut Values,
    reader: ColumnReader,
    c: &ColumnDescriptor,
    n: usize,
) -> parquet::errors::Result<()> {
    let def = c.max_def_level();
    let scale = timestamp_scale(c).max(1);
    match (values, reader) {
        (Values::Int(out), ColumnReader::Int32ColumnReader(r)) => out.extend(
            read_all(r, def, n)?
                .into_iter()
                .map(|v| v.map(|x| i64::from(x).saturating_mul(scale))),
        ),
        (Values::Int(out), ColumnReader::Int64ColumnReader(r)) => out.extend(
            read_all(r, def, n)?
                .into_iter()
                .map(|v| v.map(|x| x.saturating_mul(scale))),
        ),
        (Values::Int(out), ColumnReader::Int96ColumnReader(r)) => out.extend(
            read_all(r, def, n)?
                .into_iter()
                .map(|v| v.map(|x| x.to_nanos())),
        ),
        (Values::Float(out), ColumnReader::FloatColumnReader(r)) => {
            out.extend(read_all(r, def, n)?.into_iter().map(|v| v.map(f64::from)))
        }
        (Values::Float(out), ColumnReader::DoubleColumnReader(r)) => {
            out.extend(read_all(r, def, n)?)
        }
        (Values::Bool(out), ColumnReader::BoolColumnReader(r)) => out.extend(read_all(r, def, n)?),
        (Values::Text(out), ColumnReader::ByteArrayColumnReader(r)) => out.extend(
            read_all(r, def, n)?
                .into_iter()
                .map(|v| v.map(|b| String::from_utf8_lossy(b.data()).into_owned())),
        ),
        (v, _) => *v = Values::Unread(v.len() + n),
    }
    Ok(())
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use parquet::basic::Compression;
    use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;
    use std::sync::Arc;

    /// A file with what the pyarrow fixture lacks: zstd pages, two row
    /// groups, nulls in an integer column, a timestamp in µs, a list.
    fn written() -> Vec<u8> {
        let schema = Arc::new(
            parse_message_type(
                "message t {
                    required int64 start_ts;
                    optional int64 bytes;
                    optional int64 at (TIMESTAMP(MICROS,true));
                    optional binary opcode (UTF8);
                    optional group ids (LIST) { repeated group list { optional int64 element; } }
                    optional group flow_id (LIST) { repeated group list { optional binary element (UTF8); } }
                }",
            )
            .unwrap(),
        );
        let props = Arc::new(
            WriterProperties::builder()
                .set_compression(Compression::ZSTD(Default::default()))
                .build(),
        );
        let mut out = Vec::new();
        let mut w = SerializedFileWriter::new(&mut out, schema, props).unwrap();
        for group in 0..2i64 {
            let mut rg = w.next_row_group().unwrap();
            let mut col = 0;
            while let Some(mut c) = rg.next_column().unwrap() {
                match col {
                    0 => {
                        c.typed::<Int64Type>()
                            .write_batch(&[group * 10, group * 10 + 1], None, None)
                            .unwrap();
                    }
                    1 => {
                        c.typed::<Int64Type>()
                            .write_batch(&[7], Some(&[0, 1]), None)
                            .unwrap();
                    }
                    2 => {
                        c.typed::<Int64Type>()
                            .write_batch(&[5, 6], Some(&[1, 1]), None)
                            .unwrap();
                    }
                    3 => {
                        let v = [ByteArray::from("MATMUL")];
                        c.typed::<ByteArrayType>()
                            .write_batch(&v, Some(&[1, 0]), None)
                            .unwrap();
                    }
                    4 => {
                        c.typed::<Int64Type>()
                            .write_batch(&[1, 2], Some(&[3, 3]), Some(&[0, 0]))
                            .unwrap();
                    }
                    // Rows ["1", "2"] and null; then [] and ["x"].
                    _ if group == 0 => {
                        let v = [ByteArray::from("1"), ByteArray::from("2")];
                        c.typed::<ByteArrayType>()
                            .write_batch(&v, Some(&[3, 3, 0]), Some(&[0, 1, 0]))
                            .unwrap();
                    }
                    _ => {
                        let v = [ByteArray::from("x")];
                        c.typed::<ByteArrayType>()
                            .write_batch(&v, Some(&[1, 3]), Some(&[0, 0]))
                            .unwrap();
                    }
                }
                c.close().unwrap();
                col += 1;
            }
            rg.close().unwrap();
        }
        w.close().unwrap();
        out
    }

    #[test]
    fn zstd_row_groups_nulls_timestamps_and_nested_columns() {
        let t = read_table(bytes::Bytes::from(written())).unwrap();
        assert_eq!(t.rows, 4);
        assert_eq!(t.codecs, ["ZSTD"]);
        assert_eq!(
            t.column("start_ts"),
            Some(&Values::Int(vec![Some(0), Some(1), Some(10), Some(11)]))
        );
        assert_eq!(
            t.column("bytes"),
            Some(&Values::Int(vec![None, Some(7), None, Some(7)]))
        );
        // µs → ns.
        assert_eq!(t.int("at", 1), Some(6_000));
        assert_eq!(t.text("opcode", 2), Some("MATMUL"));
        assert_eq!(t.text("opcode", 3), None);
        // A list of strings is read; other lists are kept by name and
        // listed, not read.
        assert_eq!(
            t.column("flow_id"),
            Some(&Values::TextList(vec![
                vec!["1".into(), "2".into()],
                vec![],
                vec![],
                vec!["x".into()]
            ]))
        );
        let ids = t
            .columns
            .iter()
            .find(|c| c.name.starts_with("ids"))
            .unwrap();
        assert_eq!(ids.values, Values::Unread(4));
        let types: Vec<&str> = t.columns.iter().map(|c| c.data_type.as_str()).collect();
        assert_eq!(
            types,
            [
                "Int64",
                "Int64",
                "Timestamp(µs)",
                "Utf8",
                "Int64",
                "List(Utf8)"
            ]
        );
    }

    #[test]
    fn a_cut_off_file_is_named_not_read() {
        let bytes = written();
        let cut = bytes::Bytes::from(bytes[..bytes.len() / 2].to_vec());
        let e = read_table(cut).unwrap_err().to_string();
        assert!(e.contains("cut off"), "{e}");
    }
}

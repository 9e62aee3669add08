//! A decoded table — typed, nullable columns by name — and its byte
//! encoding.
//!
//! Parquet files are decoded ([`super::parquet::read_table`]) into these
//! tables; the Neuron device-profile importer reads them by column name.
//! In the browser the decoding runs in its own worker, loaded only when a
//! profile is opened (the `parquet` crate is a fifth of a wasm module's
//! size), so the tables travel to the worker that keeps the model as the
//! bytes [`encode`] writes. The format is private to one build of
//! tracelane (both ends are the same build); anything unreadable decodes
//! to `None`.

/// The values of one column, one entry per row (`None`: null).
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// Any integer type (and timestamps, in nanoseconds).
    Int(Vec<Option<i64>>),
    Float(Vec<Option<f64>>),
    Text(Vec<Option<String>>),
    Bool(Vec<Option<bool>>),
    /// A list of strings per row (a null or empty list: empty).
    TextList(Vec<Vec<String>>),
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
            Values::TextList(v) => v.len(),
            Values::Unread(n) => *n,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Row `i` as an integer (a float rounded), if it is a number.
    pub fn int(&self, i: usize) -> Option<i64> {
        match self {
            Values::Int(v) => v[i],
            Values::Float(v) => v[i].map(|f| f.round() as i64),
            _ => None,
        }
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
            Values::TextList(v) => J::from(v[i].clone()),
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
        self.column(name)?.int(row)
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
            Values::TextList(v) => Some(v[row].join(", ")),
            Values::Unread(_) => None,
        }
    }
}

/// One file of a profile directory after decoding: its name, its size in
/// bytes, and its table (or why it could not be read).
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedFile {
    pub name: String,
    pub bytes: u64,
    pub table: Result<Table, String>,
}

use crate::wire::{Reader, Writer};

const MAGIC: &[u8; 8] = b"TLTABLE1";

/// Writes decoded files as one byte buffer ([`decode`] reads it back).
pub fn encode(files: &[DecodedFile]) -> Vec<u8> {
    let mut w = Writer(MAGIC.to_vec());
    w.u64(files.len() as u64);
    for f in files {
        w.str(&f.name);
        w.u64(f.bytes);
        match &f.table {
            Err(why) => {
                w.u8(0);
                w.str(why);
            }
            Ok(t) => {
                w.u8(1);
                w.u64(t.rows as u64);
                w.opt(&t.created_by, |w, s| w.str(s));
                w.strs(&t.codecs);
                w.u64(t.columns.len() as u64);
                for c in &t.columns {
                    w.str(&c.name);
                    w.str(&c.data_type);
                    write_values(&mut w, &c.values);
                }
            }
        }
    }
    w.0
}

fn write_values(w: &mut Writer, v: &Values) {
    match v {
        Values::Int(v) => {
            w.u8(0);
            w.u64(v.len() as u64);
            v.iter()
                .for_each(|x| w.opt(x, |w, x| w.0.extend_from_slice(&x.to_le_bytes())));
        }
        Values::Float(v) => {
            w.u8(1);
            w.u64(v.len() as u64);
            v.iter()
                .for_each(|x| w.opt(x, |w, x| w.0.extend_from_slice(&x.to_le_bytes())));
        }
        Values::Text(v) => {
            w.u8(2);
            w.u64(v.len() as u64);
            v.iter().for_each(|x| w.opt(x, |w, s| w.str(s)));
        }
        Values::Bool(v) => {
            w.u8(3);
            w.u64(v.len() as u64);
            v.iter().for_each(|x| w.opt(x, |w, b| w.u8(*b as u8)));
        }
        Values::Unread(n) => {
            w.u8(4);
            w.u64(*n as u64);
        }
        Values::TextList(v) => {
            w.u8(5);
            w.u64(v.len() as u64);
            v.iter().for_each(|x| w.strs(x));
        }
    }
}

fn read_values(r: &mut Reader) -> Option<Values> {
    let kind = r.u8()?;
    if kind == 4 {
        return Some(Values::Unread(usize::try_from(r.u64()?).ok()?));
    }
    let n = r.len(1)?;
    Some(match kind {
        0 => Values::Int(
            (0..n)
                .map(|_| r.opt(|r| Some(i64::from_le_bytes(r.take(8)?.try_into().ok()?))))
                .collect::<Option<_>>()?,
        ),
        1 => Values::Float(
            (0..n)
                .map(|_| r.opt(|r| Some(f64::from_le_bytes(r.take(8)?.try_into().ok()?))))
                .collect::<Option<_>>()?,
        ),
        2 => Values::Text((0..n).map(|_| r.opt(Reader::str)).collect::<Option<_>>()?),
        5 => Values::TextList((0..n).map(|_| r.strs()).collect::<Option<_>>()?),
        3 => Values::Bool(
            (0..n)
                .map(|_| r.opt(|r| Some(r.u8()? != 0)))
                .collect::<Option<_>>()?,
        ),
        _ => return None,
    })
}

/// Reads what [`encode`] wrote; `None` if the bytes are not that.
pub fn decode(bytes: &[u8]) -> Option<Vec<DecodedFile>> {
    let mut r = Reader(bytes.strip_prefix(MAGIC)?);
    let n = r.len(17)?;
    let mut files = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.str()?;
        let bytes = r.u64()?;
        let table = match r.u8()? {
            0 => Err(r.str()?),
            1 => {
                let rows = usize::try_from(r.u64()?).ok()?;
                let created_by = r.opt(Reader::str)?;
                let codecs = r.strs()?;
                let k = r.len(17)?;
                let columns = (0..k)
                    .map(|_| {
                        Some(Column {
                            name: r.str()?,
                            data_type: r.str()?,
                            values: read_values(&mut r)?,
                        })
                    })
                    .collect::<Option<Vec<_>>>()?;
                if columns.iter().any(|c| c.values.len() != rows) {
                    return None;
                }
                Ok(Table {
                    rows,
                    columns,
                    created_by,
                    codecs,
                })
            }
            _ => return None,
        };
        files.push(DecodedFile { name, bytes, table });
    }
    r.0.is_empty().then_some(files)
}

const FILES_MAGIC: &[u8; 8] = b"TLFILES1";

/// Writes files (name, bytes) as one buffer, for the files of a run that
/// are not tables ([`decode_files`] reads it back).
pub fn encode_files(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut w = Writer(FILES_MAGIC.to_vec());
    w.u64(files.len() as u64);
    for (name, bytes) in files {
        w.str(name);
        w.u64(bytes.len() as u64);
        w.0.extend_from_slice(bytes);
    }
    w.0
}

/// Reads what [`encode_files`] wrote; `None` if the bytes are not that.
pub fn decode_files(bytes: &[u8]) -> Option<Vec<(String, Vec<u8>)>> {
    let mut r = Reader(bytes.strip_prefix(FILES_MAGIC)?);
    let n = r.len(16)?;
    let mut files = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.str()?;
        let len = r.len(1)?;
        files.push((name, r.take(len)?.to_vec()));
    }
    r.0.is_empty().then_some(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<DecodedFile> {
        vec![
            DecodedFile {
                name: "dir/Instruction.parquet".into(),
                bytes: 1234,
                table: Ok(Table {
                    rows: 3,
                    columns: vec![
                        Column {
                            name: "start_ts".into(),
                            data_type: "Int64".into(),
                            values: Values::Int(vec![Some(1), None, Some(-7)]),
                        },
                        Column {
                            name: "opcode".into(),
                            data_type: "Utf8".into(),
                            values: Values::Text(vec![
                                Some("MATMUL".into()),
                                None,
                                Some("ü".into()),
                            ]),
                        },
                        Column {
                            name: "f".into(),
                            data_type: "Float64".into(),
                            values: Values::Float(vec![Some(0.1), Some(f64::MAX), None]),
                        },
                        Column {
                            name: "b".into(),
                            data_type: "Boolean".into(),
                            values: Values::Bool(vec![Some(true), Some(false), None]),
                        },
                        Column {
                            name: "l".into(),
                            data_type: "List".into(),
                            values: Values::Unread(3),
                        },
                        Column {
                            name: "flow_id".into(),
                            data_type: "List(Utf8)".into(),
                            values: Values::TextList(vec![
                                vec!["1".into(), "2".into()],
                                vec![],
                                vec!["x".into()],
                            ]),
                        },
                    ],
                    created_by: Some("parquet-cpp".into()),
                    codecs: vec!["SNAPPY".into(), "ZSTD".into()],
                }),
            },
            DecodedFile {
                name: "notes.txt".into(),
                bytes: 5,
                table: Err("not a Parquet file".into()),
            },
        ]
    }

    #[test]
    fn decoded_tables_survive_their_encoding() {
        let files = sample();
        assert_eq!(decode(&encode(&files)), Some(files));
    }

    #[test]
    fn damaged_encodings_decode_to_none_without_panicking() {
        let bytes = encode(&sample());
        for cut in 0..bytes.len() {
            assert_eq!(decode(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert_eq!(decode(&long), None);
        let mut huge = bytes;
        huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(decode(&huge), None);
    }

    #[test]
    fn files_survive_their_encoding_and_damage_is_refused() {
        let files = vec![
            (
                "run/trace.json".to_string(),
                b"{\"traceEvents\": []}".to_vec(),
            ),
            ("run/ntrace.pb".to_string(), Vec::new()),
        ];
        let bytes = super::encode_files(&files);
        assert_eq!(super::decode_files(&bytes), Some(files));
        for cut in 0..bytes.len() {
            assert_eq!(super::decode_files(&bytes[..cut]), None);
        }
    }
}

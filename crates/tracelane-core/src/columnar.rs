//! The columnar export: a trace (one rank of a run) as Parquet tables
//! that DuckDB, Spark or Polars scan in place, thousands of ranks at once.
//!
//! Layout (Hive partitioning, `rank` is the partition key and not a
//! column in the files):
//!
//! ```text
//! OUT_DIR/<table>/rank=<N>/part-0.parquet
//! ```
//!
//! Tables, version [`TABLE_VERSION`] (each file's key-value metadata
//! carries `tracelane.table` and `tracelane.table_version`). Times are
//! `i64` nanoseconds on the epoch clock (the trace's timestamps plus its
//! `baseTimeNanoseconds`); every table has `job` (the run's name) and,
//! where a row belongs to one, `step` (`ProfilerStep#N`'s N: the step a
//! host slice starts in, the step a device event was launched in).
//!
//! | table | one row per | columns |
//! |---|---|---|
//! | `slices` | host and device slice | `slice`, `parent`, `track`, `on_device`, `cat`, `category`, `name`, `start_ns`, `dur_ns`, `depth`, `external_id`, `correlation` |
//! | `device_events` | kernel, memcpy, memset (and device windows) | `slice`, `kind`, `kernel_type`, `name`, `device`, `stream`, `start_ns`, `dur_ns`, `correlation`, `launch_slice`, `op` (the CPU op that launched it), `bytes` |
//! | `op_table` | op name (PyTorch's `key_averages()`) | `name`, `calls`, `cpu_total_ns`, `cpu_self_ns`, `device_total_ns`, `device_self_ns`, `is_device`, `is_user_annotation` |
//! | `steps` | step | `start_ns`, `wall_ns`, `compute_ns`, `exposed_comm_ns`, `exposed_memcpy_ns`, `exposed_other_ns`, `idle_ns`, `comm_ns`, `comm_overlapped_ns`, `collective_wait_ns` |
//! | `collectives` | collective call | `name`, `group`, `seq` (the match key across ranks; null when unmatched), `bytes`, `arrival_ns`, `end_ns`, `wait_ns`, `skew_ns`, `last_rank`, `first_rank`, `ranks`, `busbw_gbps`, `slice` |
//! | `breakdown` | rank | `basis`, `steps`, the step parts summed, `comm_comp_overlap_pct`, `clock_offset_ns`, HTA's whole-trace `hta_idle_us`, `hta_compute_us`, `hta_non_compute_us`, `hta_kernel_span_us`, `hta_comm_comp_overlap_pct` |
//!
//! The definitions of the `steps`, `collectives` and `breakdown` figures
//! are [`crate::analysis::ranks`]'s. Native builds compress with zstd;
//! the browser (no zstd in wasm) with Snappy — every Parquet reader reads
//! both.

use std::collections::HashMap;
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use crate::analysis::frame::exact_kernel_type;
use crate::analysis::ops::{op_table, OpTableOptions};
use crate::analysis::ranks::{RankSummary, RanksReport};
use crate::analysis::scope::{numbered_steps, step_at, NumberedStep};
use crate::category::Category;
use crate::model::{Trace, NONE_I64, NO_SLICE};

/// The tables' schema version: bumped when a column changes meaning or
/// goes away (adding a column keeps it).
pub const TABLE_VERSION: u32 = 1;

/// The tables, in the order they are written.
pub const TABLES: [&str; 6] = [
    "slices",
    "device_events",
    "op_table",
    "steps",
    "collectives",
    "breakdown",
];

/// Rows per row group: bounds the writer's memory on big traces.
const ROW_GROUP: usize = 1 << 20;

/// One column's values (`None`: null).
enum Values {
    I64(Vec<Option<i64>>),
    I32(Vec<Option<i32>>),
    F64(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
    Str(Vec<Option<String>>),
}

struct Column {
    name: &'static str,
    required: bool,
    values: Values,
}

/// A table being built, column by column.
struct Table {
    name: &'static str,
    columns: Vec<Column>,
}

impl Table {
    fn new(name: &'static str) -> Table {
        Table {
            name,
            columns: Vec::new(),
        }
    }
    fn col(&mut self, name: &'static str, required: bool, values: Values) -> &mut Self {
        self.columns.push(Column {
            name,
            required,
            values,
        });
        self
    }
    fn i64(&mut self, name: &'static str, v: Vec<i64>) -> &mut Self {
        self.col(name, true, Values::I64(v.into_iter().map(Some).collect()))
    }
    fn opt_i64(&mut self, name: &'static str, v: Vec<Option<i64>>) -> &mut Self {
        self.col(name, false, Values::I64(v))
    }
    fn str(&mut self, name: &'static str, v: Vec<String>) -> &mut Self {
        self.col(name, true, Values::Str(v.into_iter().map(Some).collect()))
    }
    fn opt_str(&mut self, name: &'static str, v: Vec<Option<String>>) -> &mut Self {
        self.col(name, false, Values::Str(v))
    }
    fn opt_f64(&mut self, name: &'static str, v: Vec<Option<f64>>) -> &mut Self {
        self.col(name, false, Values::F64(v))
    }

    fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| match &c.values {
            Values::I64(v) => v.len(),
            Values::I32(v) => v.len(),
            Values::F64(v) => v.len(),
            Values::Bool(v) => v.len(),
            Values::Str(v) => v.len(),
        })
    }

    fn schema(&self) -> String {
        let fields: Vec<String> = self
            .columns
            .iter()
            .map(|c| {
                let rep = if c.required { "required" } else { "optional" };
                let ty = match c.values {
                    Values::I64(_) => "int64",
                    Values::I32(_) => "int32",
                    Values::F64(_) => "double",
                    Values::Bool(_) => "boolean",
                    Values::Str(_) => "binary",
                };
                let logical = if matches!(c.values, Values::Str(_)) {
                    " (STRING)"
                } else {
                    ""
                };
                format!("  {rep} {ty} {}{logical};", c.name)
            })
            .collect();
        format!("message {} {{\n{}\n}}", self.name, fields.join("\n"))
    }

    /// The table as one Parquet file.
    fn to_parquet(&self) -> Result<Vec<u8>, parquet::errors::ParquetError> {
        let schema = Arc::new(parse_message_type(&self.schema())?);
        let props = Arc::new(
            WriterProperties::builder()
                .set_compression(compression())
                .set_created_by(format!("tracelane {}", env!("CARGO_PKG_VERSION")))
                .set_key_value_metadata(Some(vec![
                    KeyValue::new("tracelane.table".into(), self.name.to_string()),
                    KeyValue::new("tracelane.table_version".into(), TABLE_VERSION.to_string()),
                ]))
                .build(),
        );
        let mut out = Vec::new();
        let mut w = SerializedFileWriter::new(&mut out, schema, props)?;
        let n = self.rows();
        let mut from = 0;
        loop {
            let to = (from + ROW_GROUP).min(n);
            let mut rg = w.next_row_group()?;
            let mut k = 0;
            while let Some(mut col) = rg.next_column()? {
                let c = &self.columns[k];
                k += 1;
                fn split<T: Clone>(v: &[Option<T>]) -> (Vec<T>, Vec<i16>) {
                    let defs = v.iter().map(|x| i16::from(x.is_some())).collect();
                    (v.iter().flatten().cloned().collect(), defs)
                }
                macro_rules! write {
                    ($ty:ty, $v:expr) => {{
                        let (vals, defs) = split(&$v[from..to]);
                        let defs = (!c.required).then_some(&defs[..]);
                        col.typed::<$ty>().write_batch(&vals, defs, None)?;
                    }};
                }
                match &c.values {
                    Values::I64(v) => write!(Int64Type, v),
                    Values::I32(v) => write!(Int32Type, v),
                    Values::F64(v) => write!(DoubleType, v),
                    Values::Bool(v) => write!(BoolType, v),
                    Values::Str(v) => {
                        let bytes: Vec<Option<ByteArray>> = v[from..to]
                            .iter()
                            .map(|s| s.as_deref().map(ByteArray::from))
                            .collect();
                        let (vals, defs) = split(&bytes);
                        let defs = (!c.required).then_some(&defs[..]);
                        col.typed::<ByteArrayType>()
                            .write_batch(&vals, defs, None)?;
                    }
                }
                col.close()?;
            }
            rg.close()?;
            from = to;
            if from >= n {
                break;
            }
        }
        w.close()?;
        Ok(out)
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn compression() -> Compression {
    Compression::ZSTD(parquet::basic::ZstdLevel::try_new(3).expect("zstd level 3"))
}

#[cfg(target_arch = "wasm32")]
fn compression() -> Compression {
    Compression::SNAPPY
}

fn opt(v: i64) -> Option<i64> {
    (v != NONE_I64).then_some(v)
}

fn category_name(c: Category) -> String {
    let s = format!("{c:?}");
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(ch.to_ascii_lowercase());
    }
    out
}

/// A device copy's or set's `bytes` arg.
fn bytes_arg(args: &str) -> Option<i64> {
    let v: serde_json::Value = serde_json::from_str(args).ok()?;
    v.get("bytes")?.as_i64()
}

/// The per-trace tables (`slices`, `device_events`, `op_table`) of one
/// rank's trace as Parquet files: `(table, bytes)`.
pub fn trace_tables(t: &Trace, job: &str) -> Result<Vec<(&'static str, Vec<u8>)>, String> {
    let steps = numbered_steps(t);
    let fail = |e: parquet::errors::ParquetError| e.to_string();
    Ok(vec![
        (
            "slices",
            slices_table(t, job, &steps).to_parquet().map_err(fail)?,
        ),
        (
            "device_events",
            device_events_table(t, job, &steps)
                .to_parquet()
                .map_err(fail)?,
        ),
        (
            "op_table",
            op_table_table(t, job).to_parquet().map_err(fail)?,
        ),
    ])
}

/// The step a slice counts in: its own start's, or for device work its
/// launch's.
fn step_of(t: &Trace, steps: &[NumberedStep], i: usize) -> Option<i64> {
    let s = &t.slices;
    let at = if t.on_host(i) || t.links.launch[i] == NO_SLICE {
        s.start_ns[i]
    } else {
        s.start_ns[t.links.launch[i] as usize]
    };
    step_at(steps, at).map(|n| n as i64)
}

/// Every slice: its step, parent, lane, kind, name and times.
fn slices_table(t: &Trace, job: &str, steps: &[NumberedStep]) -> Table {
    let s = &t.slices;
    let off = t.clock_offset_ns;
    let n = s.len();
    let job_col = || vec![job.to_string(); n];
    let step_of = |i: usize| step_of(t, steps, i);
    let track_labels: Vec<String> = (0..t.tracks.len()).map(|k| t.track_label(k)).collect();
    let mut slices = Table::new("slices");
    slices
        .str("job", job_col())
        .opt_i64("step", (0..n).map(step_of).collect())
        .i64("slice", (0..n as i64).collect())
        .opt_i64(
            "parent",
            s.parent
                .iter()
                .map(|&p| (p != NO_SLICE).then_some(p as i64))
                .collect(),
        )
        .str(
            "track",
            s.track
                .iter()
                .map(|tr| track_labels[tr.idx()].clone())
                .collect(),
        )
        .col(
            "on_device",
            true,
            Values::Bool((0..n).map(|i| Some(!t.on_host(i))).collect()),
        )
        .str("cat", s.cat.iter().map(|&c| t.str(c).to_string()).collect())
        .str(
            "category",
            s.category.iter().map(|&c| category_name(c)).collect(),
        )
        .str(
            "name",
            (0..n).map(|i| t.slice_name(i).to_string()).collect(),
        )
        .i64("start_ns", s.start_ns.iter().map(|&x| x + off).collect())
        .i64("dur_ns", s.dur_ns.clone())
        .col(
            "depth",
            true,
            Values::I32(s.depth.iter().map(|&d| Some(d as i32)).collect()),
        )
        .opt_i64("external_id", s.external_id.iter().map(opt).collect())
        .opt_i64("correlation", s.correlation.iter().map(opt).collect());
    slices
}

/// The device work (kernels, copies, sets, windows) with its launch, op
/// and bytes.
fn device_events_table(t: &Trace, job: &str, steps: &[NumberedStep]) -> Table {
    let s = &t.slices;
    let off = t.clock_offset_ns;
    let n = s.len();
    let step_of = |i: usize| step_of(t, steps, i);
    let dev: Vec<usize> = (0..n)
        .filter(|&i| {
            !t.on_host(i)
                && matches!(
                    s.category[i],
                    Category::Kernel | Category::Memcpy | Category::Memset | Category::DeviceWindow
                )
        })
        .collect();
    let m = dev.len();
    let mut d = Table::new("device_events");
    d.str("job", vec![job.to_string(); m])
        .opt_i64("step", dev.iter().map(|&i| step_of(i)).collect())
        .i64("slice", dev.iter().map(|&i| i as i64).collect())
        .str(
            "kind",
            dev.iter()
                .map(|&i| {
                    match s.category[i] {
                        Category::Kernel => "kernel",
                        Category::Memcpy => "memcpy",
                        Category::Memset => "memset",
                        _ => "device_window",
                    }
                    .to_string()
                })
                .collect(),
        )
        .str(
            "kernel_type",
            dev.iter()
                .map(|&i| {
                    exact_kernel_type(s.category[i], t.slice_name(i))
                        .as_str()
                        .to_ascii_lowercase()
                })
                .collect(),
        )
        .str(
            "name",
            dev.iter().map(|&i| t.slice_name(i).to_string()).collect(),
        )
        .opt_i64("device", dev.iter().map(|&i| opt(s.device[i])).collect())
        .opt_i64("stream", dev.iter().map(|&i| opt(s.stream[i])).collect())
        .i64(
            "start_ns",
            dev.iter().map(|&i| s.start_ns[i] + off).collect(),
        )
        .i64("dur_ns", dev.iter().map(|&i| s.dur_ns[i]).collect())
        .opt_i64(
            "correlation",
            dev.iter().map(|&i| opt(s.correlation[i])).collect(),
        )
        .opt_i64(
            "launch_slice",
            dev.iter()
                .map(|&i| {
                    let l = t.links.launch[i];
                    (l != NO_SLICE).then_some(l as i64)
                })
                .collect(),
        )
        .opt_str(
            "op",
            dev.iter()
                .map(|&i| {
                    let o = t.links.op[i];
                    (o != NO_SLICE).then(|| t.slice_name(o as usize).to_string())
                })
                .collect(),
        )
        .opt_i64(
            "bytes",
            dev.iter()
                .map(|&i| match s.category[i] {
                    Category::Memcpy | Category::Memset => bytes_arg(&t.slice_args_json(i)),
                    _ => None,
                })
                .collect(),
        );
    d
}

/// PyTorch's op table.
fn op_table_table(t: &Trace, job: &str) -> Table {
    let ops = op_table(t, OpTableOptions::default());
    let r = &ops.rows;
    let k = r.len();
    let mut o = Table::new("op_table");
    o.str("job", vec![job.to_string(); k])
        .str("name", r.iter().map(|x| x.name.clone()).collect())
        .i64("calls", r.iter().map(|x| x.calls as i64).collect())
        .i64("cpu_total_ns", r.iter().map(|x| x.cpu_total_ns).collect())
        .i64("cpu_self_ns", r.iter().map(|x| x.cpu_self_ns).collect())
        .i64(
            "device_total_ns",
            r.iter().map(|x| x.device_total_ns).collect(),
        )
        .i64(
            "device_self_ns",
            r.iter().map(|x| x.device_self_ns).collect(),
        )
        .col(
            "is_device",
            true,
            Values::Bool(r.iter().map(|x| Some(x.is_device)).collect()),
        )
        .col(
            "is_user_annotation",
            true,
            Values::Bool(r.iter().map(|x| Some(x.is_user_annotation)).collect()),
        );
    o
}

/// The set's tables (`steps`, `collectives`, `breakdown`) of rank
/// `report.ranks[k]`, from the summaries and the combined report.
/// `summary` is that rank's.
pub fn rank_tables(
    report: &RanksReport,
    k: usize,
    summary: &RankSummary,
    job: &str,
) -> Result<Vec<(&'static str, Vec<u8>)>, String> {
    let fail = |e: parquet::errors::ParquetError| e.to_string();
    let row = &report.ranks[k];
    let mut out = Vec::new();
    let st = &row.steps;
    let n = st.len();
    let mut steps = Table::new("steps");
    steps
        .str("job", vec![job.to_string(); n])
        .i64("step", st.iter().map(|s| s.step as i64).collect())
        .i64("start_ns", st.iter().map(|s| s.start_ns).collect())
        .i64("wall_ns", st.iter().map(|s| s.wall_ns).collect())
        .i64("compute_ns", st.iter().map(|s| s.compute_ns).collect())
        .i64(
            "exposed_comm_ns",
            st.iter().map(|s| s.exposed_comm_ns).collect(),
        )
        .i64(
            "exposed_memcpy_ns",
            st.iter().map(|s| s.exposed_memcpy_ns).collect(),
        )
        .i64(
            "exposed_other_ns",
            st.iter().map(|s| s.exposed_other_ns).collect(),
        )
        .i64("idle_ns", st.iter().map(|s| s.idle_ns).collect())
        .i64("comm_ns", st.iter().map(|s| s.comm_ns).collect())
        .i64(
            "comm_overlapped_ns",
            st.iter().map(|s| s.comm_overlapped_ns).collect(),
        )
        .i64("collective_wait_ns", row.wait_ns.clone());
    out.push(("steps", steps.to_parquet().map_err(fail)?));

    // Each call of this rank with the collective it was matched into.
    let mut matched: HashMap<u32, &crate::analysis::ranks::Collective> = HashMap::new();
    for c in &report.collectives {
        for call in c.calls.iter().filter(|x| x.0 == row.rank) {
            matched.insert(call.3, c);
        }
    }
    let calls = &summary.collectives;
    let m = calls.len();
    let get = |i: usize| matched.get(&calls[i].slice).copied();
    let mut coll = Table::new("collectives");
    coll.str("job", vec![job.to_string(); m])
        .opt_i64(
            "step",
            calls.iter().map(|c| c.step.map(|s| s as i64)).collect(),
        )
        .str("name", calls.iter().map(|c| c.name.clone()).collect())
        .str("group", calls.iter().map(|c| c.group.clone()).collect())
        .opt_i64(
            "seq",
            (0..m).map(|i| get(i).map(|c| c.seq as i64)).collect(),
        )
        .opt_i64(
            "bytes",
            calls.iter().map(|c| c.bytes.map(|b| b as i64)).collect(),
        )
        .i64("arrival_ns", calls.iter().map(|c| c.arrival_ns).collect())
        .i64("end_ns", calls.iter().map(|c| c.end_ns).collect())
        .opt_i64(
            "wait_ns",
            (0..m)
                .map(|i| get(i).map(|c| c.first_arrival_ns + c.skew_ns - calls[i].arrival_ns))
                .collect(),
        )
        .opt_i64(
            "skew_ns",
            (0..m).map(|i| get(i).map(|c| c.skew_ns)).collect(),
        )
        .opt_i64(
            "last_rank",
            (0..m).map(|i| get(i).map(|c| c.last_rank)).collect(),
        )
        .opt_i64(
            "first_rank",
            (0..m).map(|i| get(i).map(|c| c.first_rank)).collect(),
        )
        .col(
            "ranks",
            false,
            Values::I32((0..m).map(|i| get(i).map(|c| c.ranks as i32)).collect()),
        )
        .opt_f64(
            "busbw_gbps",
            (0..m).map(|i| get(i).and_then(|c| c.busbw_gbps)).collect(),
        )
        .i64("slice", calls.iter().map(|c| c.slice as i64).collect());
    out.push(("collectives", coll.to_parquet().map_err(fail)?));

    let sum = |g: fn(&crate::analysis::ranks::StepTimes) -> i64| st.iter().map(g).sum::<i64>();
    let hta = row.hta.as_ref();
    let hta_num = |key: &str| hta.and_then(|h| h.temporal_breakdown[key].as_f64());
    let mut b = Table::new("breakdown");
    b.str("job", vec![job.to_string()])
        .str("source", vec![row.source.clone()])
        .str(
            "basis",
            vec![format!("{:?}", row.basis).to_ascii_lowercase()],
        )
        .i64("steps", vec![n as i64])
        .i64("wall_ns", vec![sum(|s| s.wall_ns)])
        .i64("compute_ns", vec![sum(|s| s.compute_ns)])
        .i64("exposed_comm_ns", vec![sum(|s| s.exposed_comm_ns)])
        .i64("exposed_memcpy_ns", vec![sum(|s| s.exposed_memcpy_ns)])
        .i64("exposed_other_ns", vec![sum(|s| s.exposed_other_ns)])
        .i64("idle_ns", vec![sum(|s| s.idle_ns)])
        .i64("collective_wait_ns", vec![row.wait_ns.iter().sum()])
        .opt_f64("comm_comp_overlap_pct", vec![row.comm_comp_overlap_pct])
        .i64("clock_offset_ns", vec![row.clock_offset_ns])
        .opt_f64("hta_idle_us", vec![hta_num("idle_us")])
        .opt_f64("hta_compute_us", vec![hta_num("compute_us")])
        .opt_f64("hta_non_compute_us", vec![hta_num("non_compute_us")])
        .opt_f64("hta_kernel_span_us", vec![hta_num("kernel_span_us")])
        .opt_f64(
            "hta_comm_comp_overlap_pct",
            vec![hta.and_then(|h| h.comm_comp_overlap_pct)],
        );
    out.push(("breakdown", b.to_parquet().map_err(fail)?));
    Ok(out)
}

/// A table file's path under the output directory.
pub fn table_path(table: &str, rank: i64) -> String {
    format!("{table}/rank={rank}/part-0.parquet")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn category_names_are_snake_case() {
        assert_eq!(category_name(Category::CpuOp), "cpu_op");
        assert_eq!(category_name(Category::UserAnnotation), "user_annotation");
    }

    #[test]
    fn a_table_round_trips_through_the_parquet_reader() {
        let mut t = Table::new("t");
        t.str("job", vec!["j".into(), "j".into(), "j".into()])
            .opt_i64("step", vec![Some(1), None, Some(3)])
            .opt_f64("x", vec![None, Some(2.5), None]);
        let bytes = t.to_parquet().unwrap();
        use parquet::file::reader::{FileReader, SerializedFileReader};
        let r = SerializedFileReader::new(bytes::Bytes::from(bytes)).unwrap();
        let md = r.metadata();
        assert_eq!(md.file_metadata().num_rows(), 3);
        let kv = md.file_metadata().key_value_metadata().unwrap();
        assert!(kv.iter().any(|k| k.key == "tracelane.table_version"
            && k.value.as_deref() == Some(&TABLE_VERSION.to_string()[..])));
        let rows: Vec<String> = r
            .get_row_iter(None)
            .unwrap()
            .map(|row| row.unwrap().to_string())
            .collect();
        assert_eq!(
            rows,
            [
                "{job: \"j\", step: 1, x: null}",
                "{job: \"j\", step: null, x: 2.5}",
                "{job: \"j\", step: 3, x: null}"
            ]
        );
    }
}

//! The op tables of an XPlane profile, as xprof computes them: **HLO op
//! stats** (xprof's `hlo_stats` tool) and **framework op stats**
//! (`framework_op_stats`), both from the device planes' kernels and the
//! HLO modules the profile embeds.
//!
//! Rules, from xprof (`xprof/convert/xplane_to_op_metrics_db.cc`
//! `ConvertDeviceTraceXPlaneToOpMetricsDb`, `utils/op_metrics_db_utils.cc`,
//! `utils/op_utils.cc`):
//!
//! - per device plane, per stream line (not the lines xprof derives), in
//!   line order: an event with an `hlo_op` stat (the last `::` part) whose
//!   instruction its `program_id`'s module defines is one **occurrence** of
//!   that HLO op — consecutive events of the same op and `group_id` (the
//!   kernels one op launches) are one occurrence, their durations summed;
//!   events whose op the modules do not define are not counted;
//! - an event with only a `tf_op` stat is an op of its own
//!   (`<tf op name>/<event name>`);
//! - a plane's **total time** is from its first event's offset to its
//!   last event's end, whatever they are; **idle** is that total less the
//!   ops' time; planes add up;
//! - framework ops group the HLO ops by their instruction's framework op
//!   (`op_name:op_type` of its metadata, read as [`tf_op::parse`] reads
//!   it): times add up, occurrences are the largest of their HLO ops';
//!   `IDLE` is a row of its own;
//! - percentages are of the total time (idle included), times in µs
//!   from exact picoseconds.
//!
//! Host framework ops (TraceMe events named `name:type`, or carrying a
//! `tf_op` stat) follow `ConvertHostThreadsXPlaneToOpMetricsDb` (the `host` module).
//!
//! FLOPs and bytes come from `flops` / `bytes_accessed` stats on the
//! events where they give them (TPU profiles); else from the embedded
//! module's instruction as xprof's GPU cost analysis prices it
//! ([`crate::xla_cost`]: model FLOPs, and the HBM bytes read and written
//! — op_profile's `rawFlops` and `rawBytesAccessedArray[0]`), times the
//! occurrences; empty where neither says (an unknown custom call).

mod cpu_ops;
mod device_events;
mod device_ops;
mod host;
mod op_db;
mod rows;
pub mod tf_op;
mod tpu_ops;

pub use cpu_ops::{cpu_ops, CpuOps};
use device_events::{int, is_derived, DerivedOps, EventStats};
pub use device_ops::{device_ops, DeviceOp};
use op_db::OpDb;
pub use rows::FrameworkOpRow;
use rows::{percent, rank};
pub use tpu_ops::is_tpu_profile;

use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::{Trace, TrackKind};

/// One HLO op's row (`hlo_stats`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct HloOpRow {
    pub program_id: i64,
    pub module: String,
    pub category: String,
    pub hlo_op_name: String,
    /// The instruction's framework op (`op_name:op_type`).
    pub tf_op_name: String,
    pub source: String,
    pub occurrences: u64,
    pub total_time_ps: u64,
    pub self_time_ps: u64,
    /// Of the total time, idle included.
    pub self_time_percent: f64,
    pub cumulative_self_time_percent: f64,
    /// From the events' `flops` / `bytes_accessed` stats, else the
    /// instruction's cost analysis (HBM bytes), one occurrence's value
    /// times the occurrences.
    pub flops: Option<u64>,
    pub bytes_accessed: Option<u64>,
}

/// Both tables, and the totals they are shares of.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct XlaOpStats {
    pub hlo_ops: Vec<HloOpRow>,
    pub framework_ops: Vec<FrameworkOpRow>,
    /// Device planes' total time (first event to last end, per plane, summed).
    pub device_total_ps: u64,
    pub device_idle_ps: u64,
    pub host_total_ps: u64,
    pub host_idle_ps: u64,
    /// Device events with an `hlo_op` that no embedded module defines
    /// (their time counts as idle, as in xprof).
    pub unresolved_hlo_events: u64,
    /// Kernels without `hlo_op` / `tf_op` stats (a converter stripped
    /// them) given the HLO op of the `XLA Ops` event around them on
    /// their plane — tracelane's reading, not xprof's (which reads the
    /// stats only).
    #[serde(default)]
    pub ops_by_time: u64,
    pub device_planes: usize,
}

impl XlaOpStats {
    /// An op row's mean time in µs.
    pub fn us(ps: u64) -> f64 {
        ps as f64 / 1e6
    }
}

/// The op tables of an XPlane profile; `None` for any other trace. Times
/// and costs here are the events' stats, which a file may set to anything:
/// their sums saturate.
pub fn xla_op_stats(t: &Trace) -> Option<XlaOpStats> {
    let xla = t.xla.as_deref()?;
    let mut out = XlaOpStats::default();
    let mut db = OpDb::default();
    let tpu = tpu_ops::is_tpu_profile(t);
    if tpu {
        let planes = tpu_ops::tensor_core_ops(t, &mut db);
        out.device_planes = planes.planes;
        out.device_total_ps = planes.total_ps;
        out.device_idle_ps = planes.idle_ps;
    }
    for (p, process) in t.processes.iter().enumerate() {
        let plane = t.str(process.name.unwrap_or(crate::model::NO_STR));
        // A TPU profile's planes are read above (`tpu_ops`).
        if !plane.starts_with("/device:") || tpu {
            continue;
        }
        let mut span: Option<(i64, i64)> = None;
        let mut op_time: u64 = 0;
        let mut any = false;
        let derived = DerivedOps::of(t, p);
        for track in t.tracks.iter().filter(|k| k.process.0 as usize == p) {
            let lane = t.str(track.name.unwrap_or(crate::model::NO_STR));
            if track.kind != TrackKind::DeviceStream || is_derived(lane) {
                continue;
            }
            any = true;
            let mut current = Tracker::default();
            for i in track.slices.clone() {
                let args: Value =
                    serde_json::from_str(&t.slice_args_json(i as usize)).unwrap_or(Value::Null);
                let (offset, dur) = (int(&args, "offset_ps"), int(&args, "duration_ps"));
                let start = offset.unwrap_or(0);
                let end = start.saturating_add(dur.unwrap_or(0).max(0));
                span = Some(span.map_or((start, end), |(a, z)| (a.min(start), z.max(end))));
                let mut stats = EventStats::of(&args);
                if stats.hlo_op.is_none() && stats.tf_op.is_none() {
                    if let Some((op, program)) = derived
                        .as_ref()
                        .and_then(|d| d.op_of(t, xla, track.tid, i as usize))
                    {
                        out.ops_by_time += 1;
                        stats.hlo_op = Some(op);
                        stats.program_id = program;
                    }
                }
                if let Some(hlo) = stats.hlo_op {
                    let program = stats.program_id;
                    if program.and_then(|id| xla.instruction(id, hlo)).is_none() {
                        out.unresolved_hlo_events += 1;
                        continue;
                    }
                    let program = program.unwrap_or(0);
                    // xprof compares an optional group id with the run's
                    // (0 until one is seen): without group ids every
                    // event is an occurrence of its own.
                    if hlo != current.name || stats.group_id != Some(current.group_id) {
                        op_time = op_time.saturating_add(current.flush(&mut db));
                    }
                    if current.occurrences == 0 {
                        current.name = hlo.to_string();
                        current.program_id = program;
                        current.group_id = stats.group_id.unwrap_or(0);
                    }
                    current.occurrences += 1;
                    current.duration = current
                        .duration
                        .saturating_add(dur.unwrap_or(0).max(0) as u64);
                    current.flops = stats.flops.or(current.flops);
                    current.bytes = stats.bytes.or(current.bytes);
                } else if let Some(tf) = stats.tf_op {
                    op_time = op_time.saturating_add(current.flush(&mut db));
                    let parsed = tf_op::parse(tf);
                    let name = format!("{}/{}", parsed.name, t.slice_name(i as usize));
                    let d = dur.unwrap_or(0).max(0) as u64;
                    let m = db.entry(0, &name);
                    m.occurrences += 1;
                    m.time_ps = m.time_ps.saturating_add(d);
                    m.self_ps = m.self_ps.saturating_add(d);
                    m.tf_only = Some((parsed.op_type, tf.to_string()));
                    op_time = op_time.saturating_add(d);
                }
            }
            op_time = op_time.saturating_add(current.flush(&mut db));
        }
        if any {
            out.device_planes += 1;
            let total = span.map_or(0, |(a, z)| z.saturating_sub(a).max(0) as u64);
            out.device_total_ps = out.device_total_ps.saturating_add(total);
            out.device_idle_ps = out
                .device_idle_ps
                .saturating_add(total.saturating_sub(op_time));
        }
    }
    out.hlo_ops = hlo_rows(&db, xla, out.device_total_ps);
    out.framework_ops = framework_rows(&db, xla, out.device_idle_ps, out.device_total_ps);
    let (host_rows, host_total, host_idle) = host::framework_rows(t);
    out.host_total_ps = host_total;
    out.host_idle_ps = host_idle;
    out.framework_ops.extend(host_rows);
    Some(out)
}

/// The run of events of one HLO op being summed (`HLOTracker`).
#[derive(Default)]
struct Tracker {
    name: String,
    program_id: i64,
    group_id: i64,
    occurrences: u64,
    duration: u64,
    flops: Option<u64>,
    bytes: Option<u64>,
}

impl Tracker {
    /// Enters the run as one occurrence (`AggregateHloFunc`); its time.
    fn flush(&mut self, db: &mut OpDb) -> u64 {
        if self.occurrences == 0 {
            return 0;
        }
        let d = self.duration;
        // One occurrence's costs, as xprof stores them per entry.
        db.entry(self.program_id, &self.name)
            .add_occurrence(d, d, self.flops, self.bytes);
        *self = Tracker::default();
        d
    }
}

fn hlo_rows(db: &OpDb, xla: &crate::xla::XlaInfo, total: u64) -> Vec<HloOpRow> {
    let mut rows: Vec<HloOpRow> = db
        .ops
        .iter()
        .map(|((program, name), m)| {
            // An op known by its tf_op stat alone is a row too: its
            // category is its framework op's type.
            let module = xla.instruction(*program, name).cloned().unwrap_or_default();
            let i = match (&m.tf_only, &m.from_stats) {
                (Some((ty, full)), _) => crate::xla::HloInstruction {
                    category: ty.clone(),
                    provenance: full.clone(),
                    ..Default::default()
                },
                (None, Some(s)) => crate::xla::HloInstruction {
                    category: s.category.clone(),
                    provenance: s.provenance.clone(),
                    ..module
                },
                (None, None) => module,
            };
            HloOpRow {
                program_id: *program,
                module: xla
                    .modules
                    .get(program)
                    .map(|m| m.name.clone())
                    .unwrap_or_default(),
                category: if i.category.is_empty() {
                    "unknown".into()
                } else {
                    i.category
                },
                hlo_op_name: name.clone(),
                tf_op_name: i.provenance,
                source: i.source,
                occurrences: m.occurrences,
                total_time_ps: m.time_ps,
                self_time_ps: m.self_ps,
                self_time_percent: percent(m.self_ps, total),
                cumulative_self_time_percent: 0.0,
                // The events' stats where they give them (TPU profiles);
                // else the cost xprof's GPU cost analysis gives the
                // instruction, once per occurrence.
                flops: m.flops.or_else(|| per_occurrence(i.flops, m.occurrences)),
                bytes_accessed: m
                    .bytes
                    .or_else(|| per_occurrence(i.hbm_bytes, m.occurrences)),
            }
        })
        .collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.self_time_ps));
    let mut cum = 0.0;
    for r in &mut rows {
        cum += r.self_time_percent;
        r.cumulative_self_time_percent = cum;
    }
    rows
}

fn per_occurrence(cost: Option<i64>, occurrences: u64) -> Option<u64> {
    cost.map(|c| (c.max(0) as u64).saturating_mul(occurrences))
}

/// Device framework ops (`CreateTfMetricsDbFromDeviceOpMetricsDb`, with idle).
fn framework_rows(
    db: &OpDb,
    xla: &crate::xla::XlaInfo,
    idle: u64,
    total: u64,
) -> Vec<FrameworkOpRow> {
    let mut by_op: Vec<FrameworkOpRow> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::default();
    let mut add = |name: String, ty: String, occ: u64, (time, self_ps): (u64, u64)| {
        let k = *index.entry(name.clone()).or_insert_with(|| {
            by_op.push(FrameworkOpRow {
                host_or_device: "Device".into(),
                op_type: if ty.is_empty() { "Unknown".into() } else { ty },
                operation: name,
                ..FrameworkOpRow::default()
            });
            by_op.len() - 1
        });
        let r = &mut by_op[k];
        r.occurrences = r.occurrences.max(occ);
        r.total_time_ps = r.total_time_ps.saturating_add(time);
        r.self_time_ps = r.self_time_ps.saturating_add(self_ps);
    };
    add("IDLE".into(), "IDLE".into(), 0, (idle, idle));
    for ((program, name), m) in &db.ops {
        let provenance = match (&m.tf_only, &m.from_stats) {
            (Some((_, full)), _) => full.clone(),
            (None, Some(s)) => s.provenance.clone(),
            (None, None) => xla
                .instruction(*program, name)
                .map(|i| i.provenance.clone())
                .unwrap_or_default(),
        };
        if provenance.is_empty() {
            add(
                name.clone(),
                String::new(),
                m.occurrences,
                (m.time_ps, m.self_ps),
            );
        } else {
            let op = tf_op::parse(&provenance);
            add(op.name, op.op_type, m.occurrences, (m.time_ps, m.self_ps));
        }
    }
    rank(&mut by_op, total);
    by_op
}

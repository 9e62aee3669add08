//! Inside a NeuronCore: how a device profile's time splits over its
//! engines (Tensor, Vector, Scalar, GpSimd, Sync) and DMA queues, and over
//! the HLO ops, layers and NKI source lines that issued the instructions.
//!
//! Definitions (Neuron Explorer's, from AWS `profile-schema-reference`):
//! - an engine's *active* time is the union of its instructions excluding
//!   semaphore waits (`EVENT_SEMAPHORE`) — what the profile's `ActiveTime`
//!   table holds; it is read from there when present, else computed;
//! - *busy* is the union of all its instructions, semaphore waits included;
//!   *instruction time* is their plain sum (overlapping issue counts twice);
//! - *busy %* is active time over the execution window (`ExecutionInfo`,
//!   else `Metadata`'s hardware timestamps, else the instructions' span);
//! - semaphore waits (`EVENT_SEMAPHORE` instructions), `evt_wait_time_ns`
//!   (ready → its semaphore condition held) and `dma_wait_time_ns` (trigger
//!   → its DMA started) are reported as their own categories;
//! - a DMA queue's or engine's throughput is its bytes over the union of its
//!   packets' time, against `Metadata.dma_ddr_bandwidth` (per NeuronCore).
//!
//! Works on the Parquet import (every counter) and on the Perfetto export
//! (lanes and the instruction args it carries: no bytes, waits or FLOPs —
//! the report says which).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::intervals::{self, Interval};
use super::scope::{Scope, ScopeError};
use crate::device_profile::{self, opt, DeviceLane, DeviceProfile, TableInfo};
use crate::model::{Trace, NO_SLICE};

/// One engine (its lanes merged: the TensorMatrix rows are the Tensor
/// engine's moving-data half).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EngineRow {
    pub engine: String,
    /// Its timeline tracks (`Tensor`, `TensorMatrix`) and overlap rows.
    pub tracks: Vec<(String, u32)>,
    pub instructions: u64,
    pub instruction_ns: i64,
    pub busy_ns: i64,
    pub active_ns: i64,
    /// Where `active_ns` comes from: `ActiveTime` or `instructions`.
    pub active_from: String,
    /// Active time over the execution window, in percent.
    pub busy_pct: f64,
    /// Time in `EVENT_SEMAPHORE` instructions.
    pub semaphore_ns: i64,
    /// Sum of `evt_wait_time_ns` (null: the source has no such column).
    pub evt_wait_ns: Option<i64>,
    /// Sum of `dma_wait_time_ns`.
    pub dma_wait_ns: Option<i64>,
    /// (opcode, count, instruction time), longest first.
    pub opcodes: Vec<OpcodeRow>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpcodeRow {
    pub opcode: String,
    pub count: u64,
    pub instruction_ns: i64,
}

/// DMA traffic of one queue, one DMA engine, or all of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DmaRow {
    pub name: String,
    pub packets: u64,
    /// Null when the source has no byte counts (the Perfetto export).
    pub bytes: Option<i64>,
    pub busy_ns: i64,
    /// `bytes / busy` in bytes per second.
    pub throughput_bytes_per_s: Option<f64>,
    /// Throughput over `Metadata.dma_ddr_bandwidth`, in percent (all-DMA row).
    pub pct_of_bandwidth: Option<f64>,
}

/// Instructions grouped by what issued them (HLO op, layer, NKI line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupRow {
    /// `(null)` for instructions without one.
    pub name: String,
    pub instructions: u64,
    pub instruction_ns: i64,
    pub busy_ns: i64,
    pub raw_flops: i64,
    pub adjusted_flops: i64,
    pub transpose_flops: i64,
    pub hbm_read_bytes: i64,
    pub hbm_write_bytes: i64,
    /// The group's slices (up to 64), for "show on the timeline".
    pub slices: Vec<u32>,
    /// The first of them, `[start, end)`.
    pub first_ns: Option<(i64, i64)>,
}

/// How much of the NeuronCore's Tensor engine and HBM the window used, by
/// the Summary table's definitions (AWS profile-schema-reference):
/// HFU = Tensor-engine FLOPs / (peak × window), MFU the same without
/// transpose FLOPs, MBU = HBM bytes / window / HBM bandwidth; the peak is
/// rows × columns × 2 × clock from `Metadata`. Computed from the
/// instructions, beside the profile's own `Summary` figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Utilization {
    pub window_ns: i64,
    pub peak_flops_per_s: f64,
    pub hbm_bytes_per_s: f64,
    pub hardware_flops: i64,
    pub transpose_flops: i64,
    pub hbm_bytes: i64,
    pub hfu_pct: f64,
    pub mfu_pct: f64,
    pub mbu_pct: f64,
    /// The profile's `Summary`: (`hfu_estimated_percent`, …, value), on
    /// the 0–100 scale whatever the file wrote.
    pub summary: Vec<(String, f64)>,
    /// How the Summary's `*_percent` were read (fractions or percent).
    pub summary_percent_scale: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EngineReport {
    /// `parquet` (every counter) or `perfetto` (lanes and args only).
    pub source: String,
    pub schema_version: Option<String>,
    pub schema_known: bool,
    /// The execution window and where it comes from.
    pub window_ns: (i64, i64),
    pub window_from: String,
    pub engines: Vec<EngineRow>,
    pub dma_all: Option<DmaRow>,
    pub dma_queues: Vec<DmaRow>,
    pub dma_engines: Vec<DmaRow>,
    pub by_hlo: Vec<GroupRow>,
    pub by_layer: Vec<GroupRow>,
    pub by_nki_source: Vec<GroupRow>,
    /// `Metadata`'s DMA bandwidth per NeuronCore (B/s), when stated.
    pub dma_bandwidth_bytes_per_s: Option<f64>,
    pub metadata: Vec<(String, String)>,
    pub tables: Vec<TableInfo>,
    /// Tensor-engine and HBM utilisation (a Parquet profile with Metadata).
    pub utilization: Option<Utilization>,
    pub notes: Vec<String>,
}

/// One instruction as the analyses read it, from either source.
pub(crate) struct Instr<'a> {
    pub slice: u32,
    pub engine: String,
    pub track: String,
    pub opcode: &'a str,
    pub hlo: Option<String>,
    pub layer: Option<String>,
    pub nki: Option<String>,
    pub span: Interval,
    pub evt_wait: Option<i64>,
    pub dma_wait: Option<i64>,
    pub hbm_read: Option<i64>,
    pub hbm_write: Option<i64>,
    pub raw_flops: Option<i64>,
    pub adjusted_flops: Option<i64>,
    pub transpose_flops: Option<i64>,
}

/// The engine an instruction track belongs to (Neuron Explorer draws the
/// Tensor engine's MultiplyMoving half as `TensorMatrix`).
pub fn engine_of_track(track: &str) -> &str {
    if track.eq_ignore_ascii_case("TensorMatrix") {
        "Tensor"
    } else {
        track
    }
}

/// Does the trace hold a device profile (engine lanes)?
pub fn has_engines(t: &Trace) -> bool {
    t.device_profile.is_some()
        || t.tracks.iter().any(|tr| {
            tr.name.is_some_and(|n| {
                matches!(
                    device_profile::lane_of(t.str(n)),
                    Some(DeviceLane::Engine { .. })
                )
            })
        })
}

fn lane_of_slice(t: &Trace, s: usize) -> Option<DeviceLane<'_>> {
    t.track_of(s)
        .name
        .and_then(|n| device_profile::lane_of(t.str(n)))
}

/// Every instruction, in the scope's windows.
pub(crate) fn instructions<'t>(t: &'t Trace, windows: &[Interval]) -> Vec<Instr<'t>> {
    let inside = |s: i64| windows.iter().any(|&(a, b)| s >= a && s < b);
    let mut out = Vec::new();
    if let Some(p) = &t.device_profile {
        let ins = &p.instructions;
        for i in 0..ins.len() {
            if !inside(ins.start_ns[i]) {
                continue;
            }
            let slice = ins.slice[i];
            let track = match (slice != NO_SLICE).then(|| lane_of_slice(t, slice as usize)) {
                Some(Some(DeviceLane::Engine { track, .. })) => track.to_string(),
                _ => t.str(ins.engine[i]).to_string(),
            };
            let text = |id| {
                Some(t.str(id))
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
            };
            out.push(Instr {
                slice,
                engine: t.str(ins.engine[i]).to_string(),
                track,
                opcode: t.str(ins.opcode[i]),
                hlo: text(ins.hlo_name[i]),
                layer: text(ins.layer[i]),
                nki: text(ins.nki_source[i]),
                span: (ins.start_ns[i], ins.end_ns[i]),
                evt_wait: opt(ins.evt_wait_ns[i]),
                dma_wait: opt(ins.dma_wait_ns[i]),
                hbm_read: opt(ins.hbm_read[i]),
                hbm_write: opt(ins.hbm_write[i]),
                raw_flops: opt(ins.raw_flops[i]),
                adjusted_flops: opt(ins.adjusted_flops[i]),
                transpose_flops: opt(ins.flops_transpose[i]),
            });
        }
        return out;
    }
    for s in 0..t.slices.len() {
        let Some(DeviceLane::Engine { track, .. }) = lane_of_slice(t, s) else {
            continue;
        };
        let start = t.slices.start_ns[s];
        if !inside(start) {
            continue;
        }
        let args: serde_json::Value =
            serde_json::from_str(&t.slice_args_json(s)).unwrap_or(serde_json::Value::Null);
        let text = |k: &str| {
            args.get(k)
                .and_then(|v| v.as_str())
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let int = |k: &str| args.get(k).and_then(|v| v.as_i64());
        out.push(Instr {
            slice: s as u32,
            engine: engine_of_track(track).to_string(),
            track: track.to_string(),
            opcode: t.slice_name(s),
            hlo: text("hlo_name"),
            layer: text("layer"),
            nki: text("nki_source_location"),
            span: (start, t.slices.end_ns(s)),
            evt_wait: int("evt_wait_time_ns"),
            dma_wait: int("dma_wait_time_ns"),
            hbm_read: int("hbm_read_bytes"),
            hbm_write: int("hbm_write_bytes"),
            raw_flops: int("raw_flops"),
            adjusted_flops: int("adjusted_flops"),
            transpose_flops: int("flops_transpose"),
        });
    }
    out
}

fn is_semaphore_wait(opcode: &str) -> bool {
    opcode == "EVENT_SEMAPHORE"
}

fn sum_opt(v: impl Iterator<Item = Option<i64>>) -> Option<i64> {
    v.fold(None, |acc, x| match (acc, x) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    })
}

/// The engine view of a device profile, restricted to a scope.
pub fn engines(t: &Trace, scope: &Scope) -> Result<EngineReport, ScopeError> {
    let profile = t.device_profile.as_deref();
    let windows: Vec<Interval> = match scope {
        Scope::Whole => vec![(i64::MIN, i64::MAX)],
        _ => scope
            .occurrences(t)?
            .iter()
            .map(|o| (o.start_ns, o.end_ns))
            .collect(),
    };
    let ins = instructions(t, &windows);
    let mut notes = Vec::new();
    if let Some(p) = profile.and_then(|p| p.placement.as_ref()) {
        notes.push(p.clone());
    }
    let span = ins
        .iter()
        .map(|i| i.span)
        .fold(None, |acc: Option<Interval>, (a, b)| {
            Some(acc.map_or((a, b), |(x, y)| (x.min(a), y.max(b))))
        });
    let (window_ns, window_from, window_len) = window(scope, profile, &windows, span);

    // Engines.
    let engines = engine_rows(t, scope, profile, &ins, window_len);

    // DMA.
    let bandwidth = profile.and_then(|p| p.meta_f64("dma_ddr_bandwidth"));
    let packets = dma_packets(t, profile, &windows);
    let dma_all = (!packets.is_empty()).then(|| {
        dma_row(
            "all DMA".into(),
            &packets.iter().collect::<Vec<_>>(),
            bandwidth,
        )
    });
    let (dma_queues, dma_engines) = dma_rows(&packets);
    if dma_all.as_ref().is_some_and(|d| d.bytes.is_none()) {
        notes.push("this source has no DMA byte counts (the Perfetto export); open the Parquet profile directory for bytes and throughput".into());
    }

    let by_hlo = group_rows(t, &ins, &|i| i.hlo.clone());
    let by_layer = group_rows(t, &ins, &|i| i.layer.clone());
    let by_nki_source = if ins.iter().any(|i| i.nki.is_some()) {
        group_rows(t, &ins, &|i| i.nki.clone())
    } else {
        Vec::new()
    };
    if ins.is_empty() {
        notes.push("no engine instructions in this scope".into());
    }
    if profile.is_none() {
        notes.push("read from the Perfetto export's lanes: busy % uses the instructions' span as the window, and bytes, waits and FLOPs are not in that file".into());
    }
    let utilization = profile.and_then(|p| utilization(p, &ins, window_len));
    Ok(EngineReport {
        utilization,
        source: if profile.is_some() {
            "parquet"
        } else {
            "perfetto"
        }
        .into(),
        schema_version: profile.and_then(|p| p.schema_version.clone()),
        schema_known: profile.is_some_and(|p| p.schema_known()),
        window_ns,
        window_from,
        engines,
        dma_all,
        dma_queues,
        dma_engines,
        by_hlo,
        by_layer,
        by_nki_source,
        dma_bandwidth_bytes_per_s: bandwidth,
        metadata: profile.map(|p| p.metadata.clone()).unwrap_or_default(),
        tables: profile.map(|p| p.tables.clone()).unwrap_or_default(),
        notes,
    })
}

/// The window busy shares are of: the execution's span (ExecutionInfo, or
/// the hardware timestamps), else the instructions' span; a scope's
/// occurrences otherwise. Its source in words, and its length (a scope's
/// occurrences summed).
fn window(
    scope: &Scope,
    profile: Option<&DeviceProfile>,
    windows: &[Interval],
    span: Option<Interval>,
) -> (Interval, String, i64) {
    let (window_ns, window_from) = match (scope, profile.and_then(|p| p.execution_ns)) {
        (Scope::Whole, Some(w)) if w.1 > w.0 => (
            w,
            if profile.is_some_and(|p| p.meta("execution_start_ts").is_some()) {
                "ExecutionInfo".to_string()
            } else {
                "Metadata hardware timestamps".to_string()
            },
        ),
        (Scope::Whole, _) => (span.unwrap_or((0, 0)), "instructions' span".to_string()),
        _ => (
            (
                windows.iter().map(|w| w.0).min().unwrap_or(0),
                windows.iter().map(|w| w.1).max().unwrap_or(0),
            ),
            format!("scope {}", scope.label()),
        ),
    };
    let window_len: i64 = match scope {
        Scope::Whole => window_ns.1 - window_ns.0,
        _ => windows.iter().map(|w| w.1 - w.0).sum(),
    };
    (window_ns, window_from, window_len)
}

/// One row per engine: its lanes, instructions, busy and active time (the
/// `ActiveTime` table's when the profile has one), waits and opcodes.
fn engine_rows(
    t: &Trace,
    scope: &Scope,
    profile: Option<&DeviceProfile>,
    ins: &[Instr],
    window_len: i64,
) -> Vec<EngineRow> {
    let mut by_engine: BTreeMap<String, Vec<&Instr>> = BTreeMap::new();
    for i in ins {
        by_engine.entry(i.engine.clone()).or_default().push(i);
    }
    let active_table = profile.filter(|p| !p.active.is_empty() && matches!(scope, Scope::Whole));
    let mut engines = Vec::new();
    for (engine, list) in &by_engine {
        let mut tracks: Vec<(String, u32)> = Vec::new();
        for i in list {
            let rows = if i.slice == NO_SLICE {
                0
            } else {
                match lane_of_slice(t, i.slice as usize) {
                    Some(DeviceLane::Engine { row, .. }) => row + 1,
                    _ => 0,
                }
            };
            match tracks.iter_mut().find(|(n, _)| *n == i.track) {
                Some(tr) => tr.1 = tr.1.max(rows),
                None => tracks.push((i.track.clone(), rows)),
            }
        }
        let mut busy: Vec<Interval> = list.iter().map(|i| i.span).collect();
        let busy_ns = intervals::union_len(&mut busy);
        let computed_active = {
            let mut v: Vec<Interval> = list
                .iter()
                .filter(|i| !is_semaphore_wait(i.opcode))
                .map(|i| i.span)
                .collect();
            intervals::union_len(&mut v)
        };
        let (active_ns, active_from) = match active_table {
            Some(p) => {
                let mut v: Vec<Interval> = p
                    .active
                    .iter()
                    .filter(|(e, _, _)| t.str(*e).eq_ignore_ascii_case(engine))
                    .map(|&(_, a, b)| (a, b))
                    .collect();
                if v.is_empty() {
                    (computed_active, "instructions".to_string())
                } else {
                    (intervals::union_len(&mut v), "ActiveTime".to_string())
                }
            }
            None => (computed_active, "instructions".to_string()),
        };
        let mut ops: BTreeMap<&str, (u64, i64)> = BTreeMap::new();
        for i in list {
            let e = ops.entry(i.opcode).or_default();
            e.0 += 1;
            e.1 += i.span.1 - i.span.0;
        }
        let mut opcodes: Vec<OpcodeRow> = ops
            .into_iter()
            .map(|(opcode, (count, ns))| OpcodeRow {
                opcode: opcode.to_string(),
                count,
                instruction_ns: ns,
            })
            .collect();
        crate::sort::by(&mut opcodes, &|a, b| {
            b.instruction_ns
                .cmp(&a.instruction_ns)
                .then(a.opcode.cmp(&b.opcode))
        });
        engines.push(EngineRow {
            engine: engine.clone(),
            tracks,
            instructions: list.len() as u64,
            instruction_ns: list.iter().map(|i| i.span.1 - i.span.0).sum(),
            busy_ns,
            active_ns,
            active_from,
            busy_pct: if window_len > 0 {
                active_ns as f64 * 100.0 / window_len as f64
            } else {
                0.0
            },
            semaphore_ns: list
                .iter()
                .filter(|i| is_semaphore_wait(i.opcode))
                .map(|i| i.span.1 - i.span.0)
                .sum(),
            evt_wait_ns: sum_opt(list.iter().map(|i| i.evt_wait)),
            dma_wait_ns: sum_opt(list.iter().map(|i| i.dma_wait)),
            opcodes,
        });
    }
    let rank = |e: &str| {
        ["Tensor", "Vector", "Scalar", "GpSimd", "Sync"]
            .iter()
            .position(|x| x.eq_ignore_ascii_case(e))
            .unwrap_or(99)
    };
    crate::sort::by(&mut engines, &|a, b| {
        rank(&a.engine)
            .cmp(&rank(&b.engine))
            .then(a.engine.cmp(&b.engine))
    });
    engines
}

/// A DMA packet in the scope: its queue, engine, bytes (where the source
/// has them) and span.
struct Packet {
    queue: String,
    engine: i64,
    bytes: Option<i64>,
    span: Interval,
}

/// The scope's DMA packets: the profile's table, else the Perfetto
/// export's DMA lanes (their args).
fn dma_packets(t: &Trace, profile: Option<&DeviceProfile>, windows: &[Interval]) -> Vec<Packet> {
    let inside = |s: i64| windows.iter().any(|&(a, b)| s >= a && s < b);
    let mut packets: Vec<Packet> = Vec::new();
    if let Some(p) = profile {
        let d = &p.dma;
        for i in 0..d.len() {
            if inside(d.start_ns[i]) {
                packets.push(Packet {
                    queue: device_profile::queue_of(t.str(d.queue_name[i])).to_string(),
                    engine: d.engine_idx[i],
                    bytes: Some(d.transfer_bytes[i]),
                    span: (d.start_ns[i], d.end_ns[i]),
                });
            }
        }
    } else {
        for s in 0..t.slices.len() {
            let Some(DeviceLane::DmaEngine { index, .. }) = lane_of_slice(t, s) else {
                continue;
            };
            if !inside(t.slices.start_ns[s]) {
                continue;
            }
            let args: serde_json::Value =
                serde_json::from_str(&t.slice_args_json(s)).unwrap_or(serde_json::Value::Null);
            let queue = args
                .get("queue_name")
                .or(args.get("queue"))
                .and_then(|v| v.as_str())
                .map(|q| device_profile::queue_of(q).to_string())
                .unwrap_or_default();
            let bytes = ["transfer_bytes", "bytes", "size"]
                .iter()
                .find_map(|k| args.get(*k).and_then(|v| v.as_i64()));
            packets.push(Packet {
                queue,
                engine: index,
                bytes,
                span: (t.slices.start_ns[s], t.slices.end_ns(s)),
            });
        }
    }
    packets
}

/// One DMA row: packets, bytes, busy time, throughput and its share of
/// the bandwidth.
fn dma_row(name: String, list: &[&Packet], bw: Option<f64>) -> DmaRow {
    let mut v: Vec<Interval> = list.iter().map(|p| p.span).collect();
    let busy_ns = intervals::union_len(&mut v);
    let bytes = sum_opt(list.iter().map(|p| p.bytes));
    let throughput = bytes
        .filter(|_| busy_ns > 0)
        .map(|b| b as f64 * 1e9 / busy_ns as f64);
    DmaRow {
        name,
        packets: list.len() as u64,
        bytes,
        busy_ns,
        throughput_bytes_per_s: throughput,
        pct_of_bandwidth: throughput.zip(bw).map(|(x, bw)| x * 100.0 / bw),
    }
}

/// The DMA rows per queue (most bytes first) and per DMA engine.
fn dma_rows(packets: &[Packet]) -> (Vec<DmaRow>, Vec<DmaRow>) {
    let mut queue_names: Vec<&str> = Vec::new();
    for p in packets {
        if !p.queue.is_empty() && !queue_names.contains(&p.queue.as_str()) {
            queue_names.push(&p.queue);
        }
    }
    let mut dma_queues: Vec<DmaRow> = queue_names
        .iter()
        .map(|q| {
            let list: Vec<&Packet> = packets.iter().filter(|p| p.queue == *q).collect();
            dma_row(q.to_string(), &list, None)
        })
        .collect();
    crate::sort::by(&mut dma_queues, &|a, b| {
        b.bytes.cmp(&a.bytes).then(b.busy_ns.cmp(&a.busy_ns))
    });
    let mut engine_ids: Vec<i64> = packets.iter().map(|p| p.engine).collect();
    engine_ids.sort_unstable();
    engine_ids.dedup();
    let dma_engines: Vec<DmaRow> = engine_ids
        .iter()
        .map(|&e| {
            let list: Vec<&Packet> = packets.iter().filter(|p| p.engine == e).collect();
            dma_row(format!("DMA engine {e}"), &list, None)
        })
        .collect();
    (dma_queues, dma_engines)
}

/// Instructions grouped by a key (HLO op, layer, NKI source line), busiest
/// first.
fn group_rows(t: &Trace, ins: &[Instr], key: &dyn Fn(&Instr) -> Option<String>) -> Vec<GroupRow> {
    let mut m: BTreeMap<String, Vec<&Instr>> = BTreeMap::new();
    for i in ins {
        m.entry(key(i).unwrap_or_else(|| "(null)".into()))
            .or_default()
            .push(i);
    }
    let mut rows: Vec<GroupRow> = m
        .into_iter()
        .map(|(name, list)| {
            let mut v: Vec<Interval> = list.iter().map(|i| i.span).collect();
            let sum = |f: &dyn Fn(&Instr) -> Option<i64>| list.iter().filter_map(|i| f(i)).sum();
            let slices: Vec<u32> = list
                .iter()
                .filter(|i| i.slice != NO_SLICE)
                .take(64)
                .map(|i| i.slice)
                .collect();
            GroupRow {
                first_ns: t.first_span(&slices),
                name,
                instructions: list.len() as u64,
                instruction_ns: list.iter().map(|i| i.span.1 - i.span.0).sum(),
                busy_ns: intervals::union_len(&mut v),
                raw_flops: sum(&|i| i.raw_flops),
                adjusted_flops: sum(&|i| i.adjusted_flops),
                transpose_flops: sum(&|i| i.transpose_flops),
                hbm_read_bytes: sum(&|i| i.hbm_read),
                hbm_write_bytes: sum(&|i| i.hbm_write),
                slices,
            }
        })
        .collect();
    crate::sort::by(&mut rows, &|a, b| {
        b.busy_ns.cmp(&a.busy_ns).then(a.name.cmp(&b.name))
    });
    rows
}

/// MFU, HFU and MBU over the window, from the profile's peaks; the
/// profile's own estimates beside them.
fn utilization(p: &DeviceProfile, ins: &[Instr], window_len: i64) -> Option<Utilization> {
    let peak = p.meta_f64("tensor_engine_num_rows")?
        * p.meta_f64("tensor_engine_num_cols")?
        * 2.0
        * p.meta_f64("tensor_engine_clock_freq")?
        * 1e9;
    let hbm = p.meta_f64("hbm_ddr_bandwidth")?;
    let secs = window_len as f64 / 1e9;
    if window_len <= 0 || peak <= 0.0 || hbm <= 0.0 {
        return None;
    }
    let sum = |f: &dyn Fn(&Instr) -> Option<i64>| ins.iter().filter_map(f).sum::<i64>();
    let percents: Vec<f64> = p
        .summary
        .iter()
        .filter(|(k, _)| k.ends_with("_percent"))
        .map(|(_, v)| *v)
        .collect();
    let (factor, scale) = crate::neuron_system::percent_scale(&percents);
    let hardware_flops = sum(&|i| i.raw_flops);
    let transpose_flops = sum(&|i| i.transpose_flops);
    let hbm_bytes = sum(&|i| i.hbm_read) + sum(&|i| i.hbm_write);
    Some(Utilization {
        window_ns: window_len,
        peak_flops_per_s: peak,
        hbm_bytes_per_s: hbm,
        hardware_flops,
        transpose_flops,
        hbm_bytes,
        hfu_pct: hardware_flops as f64 / (peak * secs) * 100.0,
        mfu_pct: (hardware_flops - transpose_flops) as f64 / (peak * secs) * 100.0,
        mbu_pct: hbm_bytes as f64 / secs / hbm * 100.0,
        summary: [
            "hfu_estimated_percent",
            "mfu_estimated_percent",
            "mbu_estimated_percent",
        ]
        .iter()
        .filter_map(|k| p.summary(k).map(|v| (k.to_string(), v * factor)))
        .collect(),
        summary_percent_scale: scale,
    })
}

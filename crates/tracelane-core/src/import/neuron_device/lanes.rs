//! A device profile's tables as lanes: instructions on engine lanes, DMA
//! packets and queues, each lane's sort order, and the links from each
//! slice to its table row.

use crate::device_profile::{self, DeviceLane, DeviceProfile};
use crate::import::builder::{Builder, EventIn};
use crate::import::table::{Table, Values};
use crate::model::{LaneId, StrId, Trace, NONE_I64, NO_SLICE, NO_STR};
use crate::warnings;

/// Category strings of device-profile events (see `Category::from_cat`).
pub const CAT_INSTRUCTION: &str = "neuron_instruction";

pub const CAT_DMA: &str = "neuron_dma";

pub const CAT_DMA_QUEUE: &str = "neuron_dma_queue";

pub(super) const SORT_ENGINES: i64 = 0;

pub(super) const SORT_QUEUES: i64 = 100_000;

pub(super) const SORT_DMA_ENGINES: i64 = 200_000;

pub(super) const SORT_SEMAPHORES: i64 = 300_000;

/// Engine tracks in Neuron Explorer's order; others after, by name.
pub(super) fn engine_rank(track: &str) -> i64 {
    const ORDER: &[&str] = &[
        "TensorMatrix",
        "Tensor",
        "Vector",
        "Scalar",
        "GpSimd",
        "Sync",
    ];
    ORDER
        .iter()
        .position(|e| e.eq_ignore_ascii_case(track))
        .map_or(ORDER.len() as i64, |p| p as i64)
}

/// First-fit overlap rows per lane group (an engine track, a DMA engine,
/// a queue): each item goes on the first row of its group whose last end
/// is at or before its start (items in start order).
pub(super) struct Rows<K> {
    pub(super) groups: Vec<(K, Vec<i64>)>,
}

impl<K: PartialEq> Rows<K> {
    pub(super) fn new() -> Self {
        Rows { groups: Vec::new() }
    }
    /// The group's rank (first seen first) and the row the item goes on.
    pub(super) fn place(&mut self, key: K, start: i64, end: i64) -> (usize, u32) {
        let g = match self.groups.iter().position(|(k, _)| *k == key) {
            Some(g) => g,
            None => {
                self.groups.push((key, Vec::new()));
                self.groups.len() - 1
            }
        };
        let ends = &mut self.groups[g].1;
        let row = match ends.iter().position(|&e| e <= start) {
            Some(r) => {
                ends[r] = end;
                r
            }
            None => {
                ends.push(end);
                ends.len() - 1
            }
        };
        (g, row as u32)
    }
}

/// Row order by (start, end, file order): the order the lanes are filled in.
pub(super) fn by_start(t: &Table) -> Vec<usize> {
    // The columns are found once, not per comparison.
    let (start, end) = (t.column("start_ts"), t.column("end_ts"));
    let at = |c: Option<&Values>, i| c.and_then(|c| c.int(i));
    let mut order: Vec<usize> = (0..t.rows).collect();
    order.sort_by_cached_key(|&i| (at(start, i), at(end, i), i));
    order
}

/// The row's `[start, end)`, from `end_ts` or `duration_ns`; a row without
/// a start is counted and skipped, an end before its start kept as 0 long.
pub(super) fn span(b: &mut Builder, table: &str, t: &Table, i: usize) -> Option<(i64, i64)> {
    let s = t.int("start_ts", i);
    let e = s.and_then(|s| {
        t.int("end_ts", i)
            .or_else(|| t.int("duration_ns", i).map(|d| s + d))
    });
    let (Some(s), Some(e)) = (s, e) else {
        b.diag.warn(warnings::DEVICE_PROFILE_BAD_ROW, || {
            format!("{table} row {i}: no start_ts/end_ts")
        });
        return None;
    };
    if e < s {
        b.diag.warn(warnings::DEVICE_PROFILE_BAD_ROW, || {
            format!("{table} row {i}: end_ts {e} before start_ts {s}; kept with duration 0")
        });
    }
    Some((s, e.max(s)))
}

/// Every non-null column of a row as a JSON object, but `skip`.
pub(super) fn row_args(t: &Table, i: usize, skip: &[&str]) -> String {
    let mut m = serde_json::Map::new();
    for c in &t.columns {
        if skip.contains(&c.name.as_str()) {
            continue;
        }
        let v = c.values.json(i);
        if !v.is_null() {
            m.insert(c.name.clone(), v);
        }
    }
    serde_json::Value::Object(m).to_string()
}

/// A slice for row `i` of `t` on the lane `lane` (named, sorted), its args
/// every column but its times; returns its order in the input.
#[allow(clippy::too_many_arguments)]
pub(super) fn add_slice(
    b: &mut Builder,
    pid: LaneId,
    lane: &str,
    sort: i64,
    (start, end): (i64, i64),
    name: &str,
    cat: StrId,
    t: &Table,
    i: usize,
) -> u32 {
    let id = b.trace.strings.intern(lane);
    let track = b.track(pid, LaneId::Str(id));
    let tr = &mut b.trace.tracks[track.idx()];
    tr.name = Some(id);
    tr.sort_index = Some(sort);
    let name = b.trace.strings.intern(name);
    let args = row_args(t, i, &["start_ts", "end_ts"]);
    let order = b.count_event(b'X');
    b.count_category(cat);
    b.slice(
        track,
        start,
        end - start,
        &EventIn::translated(name, cat, args.as_bytes(), order),
    );
    order
}

pub(super) fn int_col(t: &Table, name: &str, i: usize) -> i64 {
    t.int(name, i).unwrap_or(NONE_I64)
}

pub(super) fn str_col(b: &mut Builder, t: &Table, name: &str, i: usize) -> StrId {
    t.text(name, i)
        .map_or(NO_STR, |s| b.trace.strings.intern(s))
}

pub(super) fn read_instructions(b: &mut Builder, p: &mut DeviceProfile, pid: LaneId, t: &Table) {
    let cat = b.trace.strings.intern(CAT_INSTRUCTION);
    let mut rows = Rows::new();
    b.reserve_slices(t.rows);
    for i in by_start(t) {
        let Some(span) = span(b, "Instruction", t, i) else {
            continue;
        };
        let engine = t.text("engine", i).unwrap_or("unknown");
        let track = t.text("timeline_track", i).unwrap_or(engine);
        let (_, row) = rows.place(track.to_string(), span.0, span.1);
        let opcode = t.text("opcode", i).unwrap_or("instruction");
        let order = add_slice(
            b,
            pid,
            &format!("{track} Engine - Row {row}"),
            SORT_ENGINES + engine_rank(track) * 1000 + row as i64,
            span,
            opcode,
            cat,
            t,
            i,
        );
        let engine = b.trace.strings.intern(engine);
        let opcode = b.trace.strings.intern(opcode);
        let hlo = str_col(b, t, "hlo_name", i);
        let layer = str_col(b, t, "layer", i);
        let nki = str_col(b, t, "nki_source_location", i);
        let ins = &mut p.instructions;
        ins.slice.push(order);
        ins.start_ns.push(span.0);
        ins.end_ns.push(span.1);
        ins.engine.push(engine);
        ins.opcode.push(opcode);
        ins.hlo_name.push(hlo);
        ins.layer.push(layer);
        ins.nki_source.push(nki);
        ins.evt_wait_ns.push(int_col(t, "evt_wait_time_ns", i));
        ins.dma_wait_ns.push(int_col(t, "dma_wait_time_ns", i));
        ins.hbm_read.push(int_col(t, "hbm_read_bytes", i));
        ins.hbm_write.push(int_col(t, "hbm_write_bytes", i));
        ins.sbuf_read.push(int_col(t, "sbuf_read_bytes", i));
        ins.sbuf_write.push(int_col(t, "sbuf_write_bytes", i));
        ins.spill_save.push(int_col(t, "spill_save_bytes", i));
        ins.spill_reload.push(int_col(t, "spill_reload_bytes", i));
        ins.raw_flops.push(int_col(t, "raw_flops", i));
        ins.adjusted_flops.push(int_col(t, "adjusted_flops", i));
        ins.flops_transpose.push(int_col(t, "flops_transpose", i));
    }
}

pub(super) fn read_dma_packets(b: &mut Builder, p: &mut DeviceProfile, pid: LaneId, t: &Table) {
    let cat = b.trace.strings.intern(CAT_DMA);
    let mut rows = Rows::new();
    for i in by_start(t) {
        let Some(span) = span(b, "DmaPacket", t, i) else {
            continue;
        };
        let engine = t.int("engine_idx", i).unwrap_or(-1);
        let (_, row) = rows.place(engine, span.0, span.1);
        let name = t
            .text("variable", i)
            .or(t.text("queue_name", i))
            .unwrap_or("dma");
        let order = add_slice(
            b,
            pid,
            &format!("DMA Engine {engine} - Row {row}"),
            SORT_DMA_ENGINES + engine.clamp(0, 10_000) * 10 + row as i64,
            span,
            name,
            cat,
            t,
            i,
        );
        let queue_name = str_col(b, t, "queue_name", i);
        let queue_type = str_col(b, t, "queue_type", i);
        let d = &mut p.dma;
        d.slice.push(order);
        d.start_ns.push(span.0);
        d.end_ns.push(span.1);
        d.engine_idx.push(engine);
        d.queue_name.push(queue_name);
        d.queue_type.push(queue_type);
        d.transfer_bytes.push(
            t.int("transfer_bytes", i)
                .or_else(|| t.int("read_bytes", i))
                .unwrap_or(0),
        );
    }
}

pub(super) fn read_dma_queues(b: &mut Builder, pid: LaneId, t: &Table) {
    let cat = b.trace.strings.intern(CAT_DMA_QUEUE);
    let mut rows = Rows::new();
    for i in by_start(t) {
        let Some(span) = span(b, "DmaPacketAggregated", t, i) else {
            continue;
        };
        let queue = device_profile::queue_of(t.text("queue_name", i).unwrap_or("qUnknown"));
        // Lanes read back as queues by their leading `q` (see `lane_of`).
        let queue = if queue.starts_with('q') {
            queue.to_string()
        } else {
            format!("q{queue}")
        };
        let (rank, row) = rows.place(queue.clone(), span.0, span.1);
        let name = t.text("variable", i).unwrap_or(&queue).to_string();
        add_slice(
            b,
            pid,
            &format!("{queue} - Row {row}"),
            SORT_QUEUES + rank as i64 * 1000 + row as i64,
            span,
            &name,
            cat,
            t,
            i,
        );
    }
}

pub(super) fn first_start(p: &DeviceProfile) -> Option<i64> {
    p.instructions
        .start_ns
        .iter()
        .chain(p.dma.start_ns.iter())
        .copied()
        .min()
}

/// Replaces the file orders kept in the typed columns with slice indices.
pub(super) fn link_slices(trace: &Trace, p: &mut DeviceProfile) {
    let mut by_order =
        vec![NO_SLICE; trace.diagnostics.events_by_phase.values().sum::<u64>() as usize];
    for (i, &o) in trace.slices.file_order.iter().enumerate() {
        if let Some(slot) = by_order.get_mut(o as usize) {
            *slot = i as u32;
        }
    }
    for s in p
        .instructions
        .slice
        .iter_mut()
        .chain(p.dma.slice.iter_mut())
    {
        *s = by_order.get(*s as usize).copied().unwrap_or(NO_SLICE);
    }
}

/// After a Perfetto import: a device profile's lanes (Neuron Explorer's
/// `"<track> Engine - Row N"`, `"DMA Engine <idx> - Row N"`, `"<queue> -
/// Row N"`) become device lanes of a NeuronCore and their slices
/// instructions and DMA transfers, as the Parquet import makes them.
pub(crate) fn mark_device_lanes(b: &mut Builder) {
    let kinds: Vec<Option<&'static str>> = b
        .trace
        .tracks
        .iter()
        .map(|tr| {
            let name = tr.name.map(|n| b.trace.strings.get(n))?;
            Some(match device_profile::lane_of(name)? {
                DeviceLane::Engine { .. } => CAT_INSTRUCTION,
                DeviceLane::DmaEngine { .. } => CAT_DMA,
                DeviceLane::DmaQueue { .. } => CAT_DMA_QUEUE,
            })
        })
        .collect();
    if !kinds.contains(&Some(CAT_INSTRUCTION)) {
        return;
    }
    let cats: Vec<Option<StrId>> = kinds
        .iter()
        .map(|k| k.map(|c| b.trace.strings.intern(c)))
        .collect();
    let mut processes: Vec<u32> = Vec::new();
    for (t, cat) in cats.iter().enumerate() {
        if cat.is_some() {
            b.device_marked[t] = true;
            let p = b.trace.tracks[t].process.0;
            if !processes.contains(&p) {
                processes.push(p);
            }
        }
    }
    for p in processes {
        let proc = &mut b.trace.processes[p as usize];
        if proc.labels.is_none() {
            proc.labels = Some(b.trace.strings.intern("NeuronCore (device profile)"));
        }
    }
    let s = &mut b.trace.slices;
    for i in 0..s.len() {
        if let Some(cat) = cats[s.track[i].idx()] {
            s.cat[i] = cat;
            s.category[i] = crate::category::Category::from_cat(b.trace.strings.get(cat));
        }
    }
}

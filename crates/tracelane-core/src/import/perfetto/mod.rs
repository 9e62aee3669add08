//! Perfetto protobuf traces (`.pftrace`, `.perfetto-trace`, gzip too): the
//! TrackEvent subset, read packet by packet as the bytes arrive, written
//! straight into the model builder.
//!
//! A `TracePacket` and its `TrackEvent` are read where they lie (the wire
//! format by hand: the scalars needed, names as slices of the input); the
//! rarer sub-messages — descriptors, interned data, clock snapshots, packet
//! defaults, debug annotations — are decoded with prost (subsets declared
//! below). What lands in the model:
//!
//! - `TrackDescriptor`s give lanes: a thread track → its pid/tid (named by
//!   its thread name, else the descriptor's name), a process track → its
//!   pid, any other track → a lane named after it inside its process,
//!   nested under its parent track in the order the descriptors give;
//!   counter tracks → counter series;
//! - `TrackEvent` SLICE_BEGIN / SLICE_END → a slice (paired per track as a
//!   stack), INSTANT → an instant, COUNTER (int or double; incremental
//!   tracks summed, unit multipliers applied) and extra counter values →
//!   counter samples; events without a track go on the sequence's default;
//! - times on the trace clock (BOOTTIME unless a ClockSnapshot names
//!   another): each packet's clock (its own, else the sequence default's)
//!   converted through the latest snapshot, incremental sequence clocks
//!   accumulated, legacy `timestamp_delta_us` / `timestamp_absolute_us`;
//! - names and categories plain or interned per `trusted_packet_sequence_id`
//!   (cleared on `SEQ_INCREMENTAL_STATE_CLEARED`), debug annotations as args;
//! - `flow_ids` / `terminating_flow_ids` (and the old fields) → flows;
//! - packets that are not TrackEvent / TrackDescriptor / interned data /
//!   clocks / defaults are counted in the diagnostics, and so are the
//!   fields of imported packets that are not read: never silently dropped.

mod proto;
mod wire;

use prost::Message;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use serde_json::{json, Map, Value};

use crate::error::ImportError;
use crate::model::{LaneId, ProcessIdx, StrId, TrackIdx};
use crate::warnings;

use super::builder::{Builder, EventIn, Fields, FlowEvent};
use super::chrome;

pub use proto::{
    Clock, ClockSnapshot, CounterDescriptor, DebugAnnotation, InternedData, InternedName,
    InternedString, ProcessDescriptor, ThreadDescriptor, TracePacketDefaults, TrackDescriptor,
    TrackEventDefaults,
};
pub use wire::{first_message, looks_like, FirstMessage};
pub(crate) use wire::{read_fields, read_varint, Wire};

use proto::{COUNTER, INSTANT, SEQ_INCREMENTAL_STATE_CLEARED, SLICE_BEGIN, SLICE_END};
use wire::{EventView, PacketView};

/// Per-sequence interning tables: names and categories as model strings.
#[derive(Default)]
struct Interned {
    names: HashMap<u64, StrId>,
    categories: HashMap<u64, StrId>,
    annotation_names: HashMap<u64, String>,
    annotation_strings: HashMap<u64, String>,
}

/// A sequence's state besides its interned strings.
#[derive(Default)]
struct Sequence {
    defaults: Option<TracePacketDefaults>,
    /// Sequence-scoped clocks (ids from 64): ns per unit, incremental, and
    /// the last absolute value (in its units).
    clocks: HashMap<u32, (u64, bool, u64)>,
    /// The legacy `timestamp_delta_us` base: the last event's time, in µs.
    last_us: Option<i64>,
}

/// BOOTTIME: the trace clock when no snapshot names another.
const BOOTTIME: u32 = 6;

/// Clock ids from here on are scoped to their sequence.
const FIRST_SEQUENCE_CLOCK: u32 = 64;

/// Where a track's events go in the model.
#[derive(Clone, Copy)]
struct Lane {
    pid: LaneId,
    tid: LaneId,
    track: TrackIdx,
    process: ProcessIdx,
    /// A counter track: its series name.
    counter: Option<StrId>,
}

/// Streams a Perfetto trace into the model builder.
#[derive(Default)]
pub struct PerfettoReader {
    held: Vec<u8>,
    interned: HashMap<u32, Interned>,
    descriptors: HashMap<u64, TrackDescriptor>,
    /// Track uuids in the order their first descriptor came.
    descriptor_order: Vec<u64>,
    lanes: HashMap<u64, Lane>,
    seen_flows: HashSet<u64>,
    /// Scratch space for an event's args text.
    args: Vec<u8>,
    /// `""` and `"flow"` in the model's strings, once known.
    empty: Option<StrId>,
    flow_cat: Option<StrId>,
    /// Per sequence: packet defaults, its clocks, the legacy delta base.
    sequences: HashMap<u32, Sequence>,
    /// The clock trace time is on (BOOTTIME unless a snapshot says).
    trace_clock: Option<u32>,
    /// For each clock (`(0, id)` builtin, `(sequence, id)` sequence-scoped):
    /// (its time in ns, the trace clock's time in ns) at each snapshot.
    snapshots: HashMap<(u32, u32), Vec<(i64, i64)>>,
    /// Running totals of incremental counter tracks.
    counter_totals: HashMap<u64, f64>,
    /// Timestamps on a clock no snapshot relates to the trace clock.
    pub unresolved_clock: u64,
    /// TracePacket / TrackEvent fields this reader does not read, by number.
    pub unread_fields: std::collections::BTreeMap<(&'static str, u64), u64>,
    pub packets: u64,
    pub track_events: u64,
    pub other_packets: u64,
    pub bad_packets: u64,
    pub unknown_tracks: u64,
    /// Other top-level `Trace` fields (not `packet`).
    pub skipped_fields: u64,
}

impl PerfettoReader {
    /// Takes the next bytes; every whole packet goes into `b`.
    pub(crate) fn push(&mut self, data: &[u8], b: &mut Builder) -> Result<(), ImportError> {
        // Whole packets are read where they lie; only a cut-off one is held.
        let mut input = std::mem::take(&mut self.held);
        let buf: &[u8] = if input.is_empty() {
            data
        } else {
            input.extend_from_slice(data);
            &input
        };
        let mut at = 0;
        loop {
            let rest = &buf[at..];
            let Some((key, n)) = read_varint(rest) else {
                break;
            };
            let (field, wire) = (key >> 3, key & 7);
            let (len, m) = match wire {
                2 => match read_varint(&rest[n..]) {
                    Some(x) => x,
                    None => break,
                },
                0 => match read_varint(&rest[n..]) {
                    Some((_, m)) => (0, m),
                    None => break,
                },
                1 => (8, 0),
                5 => (4, 0),
                _ => {
                    return Err(ImportError::NotATrace {
                        reason: format!(
                        "broken Perfetto protobuf at byte {at}: wire type {wire} at the top level"
                    ),
                    })
                }
            };
            let body = n + m;
            let Some(end) = body.checked_add(len as usize).filter(|&e| e <= rest.len()) else {
                break;
            };
            if field == 1 && wire == 2 {
                self.packets += 1;
                match PacketView::read(&rest[body..end]) {
                    Some(p) => {
                        self.packet(p, b);
                    }
                    None => self.bad_packets += 1,
                }
            } else {
                self.skipped_fields += 1;
            }
            at += end;
        }
        self.held = buf[at..].to_vec();
        Ok(())
    }

    /// Ends the stream: names the lanes and reports what was left over.
    pub(crate) fn finish(self, b: &mut Builder) {
        // Lanes' names (as Kineto's metadata events would give them).
        let mut names: Vec<(LaneId, LaneId, String, bool)> = Vec::new();
        for (uuid, lane) in &self.lanes {
            if let Some(d) = self.descriptors.get(uuid) {
                // A thread track without a thread name is named by its
                // descriptor (Neuron's device profile names its engine rows
                // only there).
                if let Some(t) = &d.thread {
                    if let Some(n) = t.thread_name.as_ref().or(d.name.as_ref()) {
                        names.push((lane.pid, lane.tid, n.clone(), false));
                    }
                }
                if let Some(p) = &d.process {
                    if let Some(n) = p.process_name.as_ref().or(d.name.as_ref()) {
                        names.push((lane.pid, LaneId::Int(0), n.clone(), true));
                    }
                }
            }
        }
        for d in self.descriptors.values() {
            if let (Some(p), None) = (&d.process, &d.thread) {
                if let (Some(pid), Some(n)) = (p.pid, p.process_name.as_ref().or(d.name.as_ref())) {
                    names.push((LaneId::Int(pid as i64), LaneId::Int(0), n.clone(), true));
                }
            }
        }
        names.sort_by(|a, b| a.2.cmp(&b.2));
        names.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1 && a.3 == b.3);
        for (pid, tid, name, process) in names {
            b.count_event(b'M');
            let name = b.trace.strings.intern(&name);
            if process {
                b.set_process_name(pid, name);
            } else {
                b.set_thread_name(pid, tid, name);
            }
        }
        self.order_lanes(b);
        let diag = &mut b.diag;
        if !self.held.is_empty() {
            diag.warn(warnings::PERFETTO_TRUNCATED, String::new);
        }
        diag.warn_n(
            warnings::PERFETTO_OTHER_PACKETS,
            self.other_packets,
            String::new(),
        );
        diag.warn_n(
            warnings::PERFETTO_BAD_PACKETS,
            self.bad_packets,
            String::new(),
        );
        diag.warn_n(
            warnings::PERFETTO_UNKNOWN_TRACKS,
            self.unknown_tracks,
            String::new(),
        );
        diag.warn_n(
            warnings::PERFETTO_CLOCK_UNRESOLVED,
            self.unresolved_clock,
            String::new(),
        );
        let unread: u64 = self.unread_fields.values().sum();
        let listed: Vec<String> = self
            .unread_fields
            .iter()
            .take(12)
            .map(|((msg, field), n)| format!("{msg} field {field} ×{n}"))
            .collect();
        diag.warn_n(warnings::PERFETTO_UNREAD_FIELDS, unread, listed.join(", "));
        diag.warn_n(
            warnings::PERFETTO_OTHER_FIELDS,
            self.skipped_fields,
            String::new(),
        );
    }

    /// Orders the lanes as the descriptors nest them: depth first, children
    /// in the order their descriptors came (or by name, numbers as
    /// numbers, or by rank, where the parent asks), each child lane nested
    /// one level under a parent that is a track (not a process).
    fn order_lanes(&self, b: &mut Builder) {
        let known = |u: &u64| self.descriptors.contains_key(u);
        // A thread track with no parent sits under its process's track.
        let process_of: HashMap<i32, u64> = self
            .descriptor_order
            .iter()
            .filter_map(|u| {
                let d = &self.descriptors[u];
                match (&d.process, &d.thread) {
                    (Some(p), None) => Some((p.pid?, *u)),
                    _ => None,
                }
            })
            .collect();
        let mut children: HashMap<u64, Vec<u64>> = HashMap::default();
        let mut roots: Vec<u64> = Vec::new();
        for &uuid in &self.descriptor_order {
            let d = &self.descriptors[&uuid];
            let parent = d.parent_uuid.filter(known).or_else(|| {
                d.thread
                    .as_ref()
                    .and_then(|t| process_of.get(&t.pid?))
                    .copied()
            });
            match parent {
                Some(p) if p != uuid => children.entry(p).or_default().push(uuid),
                _ => roots.push(uuid),
            }
        }
        for (parent, kids) in children.iter_mut() {
            let d = &self.descriptors[parent];
            let name = |u: &u64| {
                let k = &self.descriptors[u];
                k.name.clone().or(k.static_name.clone()).unwrap_or_default()
            };
            match d.child_ordering {
                Some(1) => kids.sort_by(|a, b| crate::model::natural_cmp(&name(a), &name(b))),
                Some(3) => {
                    kids.sort_by_key(|u| self.descriptors[u].sibling_order_rank.unwrap_or(0))
                }
                _ => {}
            }
        }
        // Depth first, without recursion (a malformed tree cannot loop:
        // each uuid is visited once).
        let mut seen: HashSet<u64> = HashSet::default();
        let mut stack: Vec<(u64, u8)> = roots.iter().rev().map(|&u| (u, 0)).collect();
        let mut position = 0i64;
        while let Some((uuid, level)) = stack.pop() {
            if !seen.insert(uuid) {
                continue;
            }
            let d = &self.descriptors[&uuid];
            let is_process = d.process.is_some() && d.thread.is_none();
            if let Some(lane) = self.lanes.get(&uuid) {
                let track = &mut b.trace.tracks[lane.track.idx()];
                track.sort_index = Some(position);
                position += 1;
                b.set_track_nesting(lane.track, level);
            }
            let next = if is_process {
                level
            } else {
                level.saturating_add(1)
            };
            if let Some(kids) = children.get(&uuid) {
                stack.extend(kids.iter().rev().map(|&k| (k, next)));
            }
        }
    }

    /// The lane of track `uuid` (resolved once, from its descriptor).
    fn lane(&mut self, uuid: u64, b: &mut Builder) -> Lane {
        if let Some(l) = self.lanes.get(&uuid) {
            return *l;
        }
        let mut text = |s: &str| LaneId::Str(b.trace.strings.intern(s));
        let (pid, tid, counter) = match self.descriptors.get(&uuid) {
            None => {
                self.unknown_tracks += 1;
                (
                    text("perfetto tracks"),
                    text(&format!("track {uuid}")),
                    None,
                )
            }
            Some(d) => {
                let name = d
                    .name
                    .clone()
                    .or(d.static_name.clone())
                    .unwrap_or_else(|| format!("track {uuid}"));
                let counter = d.counter.as_ref().map(|_| name.clone());
                if let Some(t) = &d.thread {
                    (
                        LaneId::Int(t.pid.unwrap_or(0) as i64),
                        LaneId::Int(t.tid.unwrap_or(0) as i64),
                        counter,
                    )
                } else {
                    // The nearest ancestor that is a process (or a thread).
                    let mut pid = None;
                    let mut parent = d.parent_uuid;
                    for _ in 0..64 {
                        let Some(p) = parent.and_then(|u| self.descriptors.get(&u)) else {
                            break;
                        };
                        if let Some(pr) = &p.process {
                            pid = pr.pid;
                            break;
                        }
                        if let Some(th) = &p.thread {
                            pid = th.pid;
                            break;
                        }
                        parent = p.parent_uuid;
                    }
                    let pid = match (&d.process, pid) {
                        (Some(p), _) => LaneId::Int(p.pid.unwrap_or(0) as i64),
                        (None, Some(pid)) => LaneId::Int(pid as i64),
                        (None, None) => text("perfetto tracks"),
                    };
                    (pid, lane_text(&name, &mut text), counter)
                }
            }
        };
        let lane = Lane {
            pid,
            tid,
            track: b.track(pid, tid),
            process: b.process(pid),
            counter: counter.map(|c| b.trace.strings.intern(&c)),
        };
        self.lanes.insert(uuid, lane);
        lane
    }

    /// Imports one packet; `false` when it holds nothing this reader reads.
    fn packet(&mut self, p: PacketView, b: &mut Builder) -> bool {
        let seq = p.trusted_packet_sequence_id.unwrap_or(0);
        let cleared = p.incremental_state_cleared.unwrap_or(false)
            || p.sequence_flags.unwrap_or(0) & SEQ_INCREMENTAL_STATE_CLEARED != 0;
        if cleared {
            self.interned.insert(seq, Interned::default());
            if let Some(q) = self.sequences.get_mut(&seq) {
                q.clocks.clear();
                q.last_us = None;
            }
        }
        let mut used = false;
        if let Some(d) = p
            .trace_packet_defaults
            .and_then(|x| TracePacketDefaults::decode(x).ok())
        {
            self.sequences.entry(seq).or_default().defaults = Some(d);
            used = true;
        }
        if let Some(c) = p.clock_snapshot.and_then(|x| ClockSnapshot::decode(x).ok()) {
            self.clock_snapshot(seq, &c);
            used = true;
        }
        if let Some(d) = p
            .track_descriptor
            .and_then(|x| TrackDescriptor::decode(x).ok())
        {
            // Writers repeat descriptors (each flush, each sequence): only a
            // changed one moves its lane.
            if let Some(us) = d.thread.as_ref().and_then(|t| t.reference_timestamp_us) {
                self.sequences.entry(seq).or_default().last_us = Some(us);
            }
            if let Some(uuid) = d.uuid.filter(|u| self.descriptors.get(u) != Some(&d)) {
                self.lanes.remove(&uuid);
                if self.descriptors.insert(uuid, d).is_none() {
                    self.descriptor_order.push(uuid);
                }
            }
            used = true;
        }
        if let Some(data) = p.interned_data.and_then(|x| InternedData::decode(x).ok()) {
            let t = self.interned.entry(seq).or_default();
            for (list, map) in [
                (data.event_names, &mut t.names),
                (data.event_categories, &mut t.categories),
            ] {
                for n in list {
                    if let (Some(iid), Some(name)) = (n.iid, n.name) {
                        map.insert(iid, b.trace.strings.intern(&name));
                    }
                }
            }
            for n in data.debug_annotation_names {
                if let (Some(iid), Some(name)) = (n.iid, n.name) {
                    t.annotation_names.insert(iid, name);
                }
            }
            for s in data.debug_annotation_string_values {
                if let (Some(iid), Some(bytes)) = (s.iid, s.str) {
                    t.annotation_strings
                        .insert(iid, String::from_utf8_lossy(&bytes).into_owned());
                }
            }
            used = true;
        }
        let mut unread = p.unread;
        if let Some(bytes) = p.track_event {
            match EventView::read(bytes, &mut unread) {
                Some(e) => {
                    self.track_events += 1;
                    let ts = self.event_time(seq, p.timestamp, p.timestamp_clock_id, &e);
                    self.track_event(seq, ts, &e, b);
                }
                None => self.bad_packets += 1,
            }
            used = true;
        }
        if !used {
            self.other_packets += 1;
        } else {
            // Fields of a packet that was imported but not read.
            for (message, field) in unread.into_iter().flatten() {
                *self.unread_fields.entry((message, field)).or_default() += 1;
            }
        }
        used
    }

    /// One value of counter track `uuid`: scaled by its unit multiplier,
    /// added to its running total if the track is incremental.
    fn counter_value(
        &mut self,
        uuid: u64,
        raw: f64,
        ts: i64,
        name: Option<StrId>,
        b: &mut Builder,
    ) {
        let lane = self.lane(uuid, b);
        let counter = self.descriptors.get(&uuid).and_then(|d| d.counter.as_ref());
        let mut value = raw * counter.and_then(|c| c.unit_multiplier).unwrap_or(1) as f64;
        if counter.and_then(|c| c.is_incremental) == Some(true) {
            let total = self.counter_totals.entry(uuid).or_insert(0.0);
            *total += value;
            value = *total;
        }
        let series = lane
            .counter
            .or(name)
            .unwrap_or_else(|| b.trace.strings.intern("counter"));
        b.counter_sample(lane.process, series, ts, value);
    }

    /// A ClockSnapshot: the trace clock, and each clock's offset to it.
    fn clock_snapshot(&mut self, seq: u32, c: &ClockSnapshot) {
        let trace_clock = *self.trace_clock.get_or_insert(
            c.primary_trace_clock
                .filter(|&k| k > 0)
                .map_or(BOOTTIME, |k| k as u32),
        );
        let ns = |k: &Clock| {
            (k.timestamp.unwrap_or(0) as i64)
                .saturating_mul(k.unit_multiplier_ns.unwrap_or(1).max(1) as i64)
        };
        let Some(trace_ns) = c
            .clocks
            .iter()
            .find(|k| k.clock_id == Some(trace_clock))
            .map(ns)
        else {
            return;
        };
        for k in &c.clocks {
            let Some(id) = k.clock_id else { continue };
            let key = if id >= FIRST_SEQUENCE_CLOCK {
                (seq, id)
            } else {
                (0, id)
            };
            if id >= FIRST_SEQUENCE_CLOCK {
                self.sequences.entry(seq).or_default().clocks.insert(
                    id,
                    (
                        k.unit_multiplier_ns.unwrap_or(1).max(1),
                        k.is_incremental.unwrap_or(false),
                        k.timestamp.unwrap_or(0),
                    ),
                );
            }
            self.snapshots
                .entry(key)
                .or_default()
                .push((ns(k), trace_ns));
        }
    }

    /// An event's time on the trace clock, in ns: the packet's timestamp on
    /// its clock (the packet's, else the sequence default's, else the trace
    /// clock), accumulated if that clock is incremental, converted through
    /// the latest snapshot at or before it; or the legacy
    /// `timestamp_absolute_us` / `timestamp_delta_us`.
    fn event_time(
        &mut self,
        seq: u32,
        timestamp: Option<u64>,
        timestamp_clock_id: Option<u32>,
        e: &EventView,
    ) -> i64 {
        if e.timestamp_absolute_us.is_some() || e.timestamp_delta_us.is_some() {
            let q = self.sequences.entry(seq).or_default();
            let us = match (e.timestamp_absolute_us, e.timestamp_delta_us, q.last_us) {
                (Some(abs), _, _) => abs,
                (None, Some(d), Some(base)) => base + d,
                _ => {
                    self.unresolved_clock += 1;
                    return timestamp.unwrap_or(0) as i64;
                }
            };
            q.last_us = Some(us);
            return us.saturating_mul(1000);
        }
        let raw = timestamp.unwrap_or(0);
        let trace_clock = self.trace_clock.unwrap_or(BOOTTIME);
        let q = self.sequences.get_mut(&seq);
        let clock = timestamp_clock_id
            .or(q
                .as_ref()
                .and_then(|q| q.defaults.as_ref())
                .and_then(|d| d.timestamp_clock_id))
            .unwrap_or(trace_clock);
        let (key, value) = if clock >= FIRST_SEQUENCE_CLOCK {
            let Some((mult, incremental, last)) = q.and_then(|q| q.clocks.get_mut(&clock)) else {
                self.unresolved_clock += 1;
                return raw as i64;
            };
            let units = if *incremental {
                *last = last.wrapping_add(raw);
                *last
            } else {
                raw
            };
            ((seq, clock), (units as i64).saturating_mul(*mult as i64))
        } else {
            ((0, clock), raw as i64)
        };
        if clock == trace_clock {
            return value;
        }
        match self.snapshots.get(&key) {
            Some(pairs) if !pairs.is_empty() => {
                let k = pairs
                    .partition_point(|&(c, _)| c <= value)
                    .saturating_sub(1);
                let (c, t) = pairs[k];
                t + (value - c)
            }
            _ => {
                self.unresolved_clock += 1;
                value
            }
        }
    }

    /// Writes the event's debug annotations as args JSON text into `self.args`.
    fn write_args(&mut self, seq: u32, e: &EventView) {
        self.args.clear();
        if e.debug_annotations.is_empty() {
            return;
        }
        let interned = self.interned.get(&seq);
        let mut map = Map::new();
        for a in &e.debug_annotations {
            let key = a
                .name
                .clone()
                .or_else(|| {
                    a.name_iid
                        .and_then(|i| interned.and_then(|t| t.annotation_names.get(&i)).cloned())
                })
                .unwrap_or_else(|| "arg".into());
            let value = if let Some(v) = a.bool_value {
                json!(v)
            } else if let Some(v) = a.uint_value {
                json!(v)
            } else if let Some(v) = a.int_value {
                json!(v)
            } else if let Some(v) = a.double_value {
                json!(v)
            } else if let Some(v) = &a.string_value {
                json!(v)
            } else if let Some(v) = a.pointer_value {
                json!(format!("0x{v:x}"))
            } else if let Some(v) = &a.legacy_json_value {
                serde_json::from_str(v).unwrap_or_else(|_| json!(v))
            } else if let Some(v) = a
                .string_value_iid
                .and_then(|i| interned.and_then(|t| t.annotation_strings.get(&i)))
            {
                json!(v)
            } else {
                Value::Null
            };
            map.insert(key, value);
        }
        let _ = serde_json::to_writer(&mut self.args, &map);
    }

    fn track_event(&mut self, seq: u32, ts: i64, e: &EventView, b: &mut Builder) {
        let defaults = self
            .sequences
            .get(&seq)
            .and_then(|q| q.defaults.as_ref())
            .and_then(|d| d.track_event_defaults.as_ref());
        let uuid = e
            .track_uuid
            .or(defaults.and_then(|d| d.track_uuid))
            .unwrap_or(0);
        // Extra counter values go to the event's counter tracks, else the
        // sequence's default ones.
        let extra_ids = |own: &Vec<u64>, default: Option<&Vec<u64>>| -> Vec<u64> {
            if own.is_empty() {
                default.cloned().unwrap_or_default()
            } else {
                own.clone()
            }
        };
        let mut extras: Vec<(u64, f64)> = Vec::new();
        if !e.extra_counter_values.is_empty() {
            let ids = extra_ids(
                &e.extra_counter_track_uuids,
                defaults.map(|d| &d.extra_counter_track_uuids),
            );
            extras.extend(
                ids.into_iter()
                    .zip(e.extra_counter_values.iter().map(|&v| v as f64)),
            );
        }
        if !e.extra_double_counter_values.is_empty() {
            let ids = extra_ids(
                &e.extra_double_counter_track_uuids,
                defaults.map(|d| &d.extra_double_counter_track_uuids),
            );
            extras.extend(
                ids.into_iter()
                    .zip(e.extra_double_counter_values.iter().copied()),
            );
        }
        for (id, v) in extras {
            b.count_event(b'C');
            self.counter_value(id, v, ts, None, b);
        }
        let lane = self.lane(uuid, b);
        let interned = self.interned.entry(seq).or_default();
        let name = match (&e.name, e.name_iid) {
            (Some(n), _) => Some(b.trace.strings.intern(n)),
            (None, Some(i)) => interned.names.get(&i).copied(),
            (None, None) => None,
        };
        let cat = match (e.categories.as_slice(), e.category_iids.as_slice()) {
            ([], []) => None,
            ([one], []) => Some(b.trace.strings.intern(one)),
            ([], [one]) => interned.categories.get(one).copied(),
            (plain, iids) => {
                let mut all: Vec<String> = plain.iter().map(|c| c.to_string()).collect();
                all.extend(
                    iids.iter()
                        .filter_map(|i| interned.categories.get(i))
                        .map(|&c| b.trace.strings.get(c).to_string()),
                );
                Some(b.trace.strings.intern(&all.join(",")))
            }
        };
        let empty = *self.empty.get_or_insert_with(|| b.trace.strings.intern(""));
        b.max_ts_ns = b.max_ts_ns.max(ts);
        match e.r#type.unwrap_or(0) {
            kind @ (SLICE_BEGIN | INSTANT) => {
                let instant = kind == INSTANT;
                let order = b.count_event(if instant { b'i' } else { b'B' });
                let cat = cat.unwrap_or(empty);
                b.count_category(cat);
                self.write_args(seq, e);
                let args = (!self.args.is_empty()).then_some(&self.args[..]);
                let fields = match args {
                    Some(text) if !instant => slice_fields(b, cat, text),
                    _ => Fields::default(),
                };
                let event = EventIn {
                    name: name.unwrap_or(empty),
                    cat,
                    args,
                    fields,
                    order,
                    source: (0, 0),
                };
                if instant {
                    b.instant(lane.track, ts, &event);
                } else {
                    b.begin(lane.track, ts, &event);
                }
            }
            SLICE_END => {
                b.count_event(b'E');
                b.count_category(empty);
                b.end(lane.track, ts, b"a Perfetto SLICE_END");
            }
            COUNTER => {
                b.count_event(b'C');
                let value = e
                    .double_counter_value
                    .or(e.counter_value.map(|v| v as f64))
                    .unwrap_or(0.0);
                self.counter_value(uuid, value, ts, name, b);
            }
            _ => {}
        }
        // Flows: the first event with an id starts it, later ones continue
        // it, a terminating id ends it (bound to the enclosing slice).
        let starts = e.flow_ids.iter().chain(&e.flow_ids_old);
        let ends = e
            .terminating_flow_ids
            .iter()
            .chain(&e.terminating_flow_ids_old);
        if e.flow_ids.is_empty()
            && e.flow_ids_old.is_empty()
            && e.terminating_flow_ids.is_empty()
            && e.terminating_flow_ids_old.is_empty()
        {
            return;
        }
        let flow_cat = *self
            .flow_cat
            .get_or_insert_with(|| b.trace.strings.intern("flow"));
        let mut flows: Vec<(u8, u64)> = Vec::new();
        for &id in starts {
            let ph = if self.seen_flows.insert(id) {
                b's'
            } else {
                b't'
            };
            flows.push((ph, id));
        }
        for &id in ends {
            flows.push((b'f', id));
        }
        for (ph, id) in flows {
            b.count_event(ph);
            b.flow(FlowEvent {
                cat: flow_cat,
                id,
                ph,
                track: lane.track,
                ts_ns: ts,
                enclosing: ph != b's',
                named: false,
            });
        }
    }
}

/// A lane named by text: a number stays a number (as the JSON path reads
/// `"tid": "7"`).
fn lane_text(name: &str, text: &mut impl FnMut(&str) -> LaneId) -> LaneId {
    match super::scan::int_text(name.as_bytes()) {
        Some(v) if !name.contains('.') => LaneId::Int(v),
        _ => text(name),
    }
}

/// A slice's linking fields from its args, as a Chrome event's; where
/// they name no correlation, rocprofv3's `corr_id` (below).
fn slice_fields(b: &mut Builder, cat: StrId, args: &[u8]) -> Fields {
    let mut fields = chrome::args_fields(b, args);
    if fields.correlation.is_none() {
        fields.correlation = rocprof_correlation(b, cat, args);
    }
    fields
}

/// rocprofv3's Perfetto output names a HIP call's, a kernel's and a
/// copy's correlation id `corr_id` in their debug args
/// (rocprofiler-sdk `generatePerfetto.cpp`): the link Kineto's
/// `correlation` makes.
fn rocprof_correlation(b: &Builder, cat: StrId, args: &[u8]) -> Option<i64> {
    if !matches!(
        b.trace.strings.get(cat),
        "hip_api" | "kernel_dispatch" | "memory_copy"
    ) {
        return None;
    }
    let v: Value = serde_json::from_slice(args).ok()?;
    v.get("corr_id")?.as_i64()
}

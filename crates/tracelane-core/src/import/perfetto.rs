//! Perfetto protobuf traces (`.pftrace`, `.perfetto-trace`, gzip too): the
//! TrackEvent subset, read packet by packet as the bytes arrive.
//!
//! Each `TracePacket` is decoded with prost (the message subset is declared
//! below; unknown fields are skipped by prost) and translated into
//! Kineto-shaped JSON events that stream into the Chrome importer, so a
//! Perfetto trace lands in the same model as any other:
//!
//! - `TrackDescriptor`s give lanes: a thread track → its pid/tid, a process
//!   track → its pid, any other track → a lane named after it inside its
//!   parent's process; counter tracks → counter series;
//! - `TrackEvent` SLICE_BEGIN / SLICE_END → `B` / `E` (paired per track as a
//!   stack by the Chrome importer), INSTANT → `i`, COUNTER (int or double)
//!   → `C`;
//! - names and categories plain or interned per `trusted_packet_sequence_id`
//!   (cleared on `SEQ_INCREMENTAL_STATE_CLEARED`), debug annotations as args;
//! - `flow_ids` / `terminating_flow_ids` (and the old fields) → flow events;
//! - packets that are not TrackEvent / TrackDescriptor / interned data are
//!   counted in the diagnostics, never silently dropped.

use crate::warnings;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use prost::Message;
use serde_json::{json, Map, Value};

use super::builder::{Builder, EventIn, Fields, FlowEvent};
use super::chrome;
use crate::error::ImportError;
use crate::model::{LaneId, ProcessIdx, StrId, TrackIdx};

#[derive(Clone, PartialEq, Message)]
pub struct TracePacket {
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
    #[prost(message, optional, tag = "12")]
    pub interned_data: Option<InternedData>,
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    #[prost(bool, optional, tag = "41")]
    pub incremental_state_cleared: Option<bool>,
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TrackEvent {
    #[prost(uint64, repeated, packed = "false", tag = "3")]
    pub category_iids: Vec<u64>,
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    #[prost(uint64, optional, tag = "10")]
    pub name_iid: Option<u64>,
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    #[prost(string, repeated, tag = "22")]
    pub categories: Vec<String>,
    #[prost(string, optional, tag = "23")]
    pub name: Option<String>,
    #[prost(int64, optional, tag = "30")]
    pub counter_value: Option<i64>,
    #[prost(uint64, repeated, packed = "false", tag = "36")]
    pub flow_ids_old: Vec<u64>,
    #[prost(uint64, repeated, packed = "false", tag = "42")]
    pub terminating_flow_ids_old: Vec<u64>,
    #[prost(double, optional, tag = "44")]
    pub double_counter_value: Option<f64>,
    #[prost(fixed64, repeated, packed = "false", tag = "47")]
    pub flow_ids: Vec<u64>,
    #[prost(fixed64, repeated, packed = "false", tag = "48")]
    pub terminating_flow_ids: Vec<u64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct DebugAnnotation {
    #[prost(uint64, optional, tag = "1")]
    pub name_iid: Option<u64>,
    #[prost(bool, optional, tag = "2")]
    pub bool_value: Option<bool>,
    #[prost(uint64, optional, tag = "3")]
    pub uint_value: Option<u64>,
    #[prost(int64, optional, tag = "4")]
    pub int_value: Option<i64>,
    #[prost(double, optional, tag = "5")]
    pub double_value: Option<f64>,
    #[prost(string, optional, tag = "6")]
    pub string_value: Option<String>,
    #[prost(uint64, optional, tag = "7")]
    pub pointer_value: Option<u64>,
    #[prost(string, optional, tag = "9")]
    pub legacy_json_value: Option<String>,
    #[prost(string, optional, tag = "10")]
    pub name: Option<String>,
    #[prost(uint64, optional, tag = "17")]
    pub string_value_iid: Option<u64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TrackDescriptor {
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
    #[prost(message, optional, tag = "4")]
    pub thread: Option<ThreadDescriptor>,
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
    #[prost(string, optional, tag = "10")]
    pub static_name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ProcessDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(string, optional, tag = "6")]
    pub process_name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ThreadDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub tid: Option<i32>,
    #[prost(string, optional, tag = "5")]
    pub thread_name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct CounterDescriptor {
    #[prost(string, optional, tag = "6")]
    pub unit_name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct InternedData {
    #[prost(message, repeated, tag = "1")]
    pub event_categories: Vec<InternedName>,
    #[prost(message, repeated, tag = "2")]
    pub event_names: Vec<InternedName>,
    #[prost(message, repeated, tag = "3")]
    pub debug_annotation_names: Vec<InternedName>,
    #[prost(message, repeated, tag = "29")]
    pub debug_annotation_string_values: Vec<InternedString>,
}

#[derive(Clone, PartialEq, Message)]
pub struct InternedName {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct InternedString {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub str: Option<Vec<u8>>,
}

const SLICE_BEGIN: i32 = 1;
const SLICE_END: i32 = 2;
const INSTANT: i32 = 3;
const COUNTER: i32 = 4;
const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;

/// Does this look like a Perfetto trace (a `Trace` whose first field is a
/// length-delimited `packet`, field 1)?
pub fn looks_like(head: &[u8]) -> bool {
    // 0x0a is also a newline: JSON text that starts with one is all
    // printable, while protobuf framing bytes are not.
    let text = head
        .iter()
        .take(64)
        .all(|&c| c >= 0x20 || c.is_ascii_whitespace());
    head.first() == Some(&0x0a)
        && !text
        && match read_varint(&head[1..]) {
            Some((len, _)) => len > 0 && len < (1 << 31),
            None => head.len() < 11,
        }
}

/// What the first length-delimited field 1 of a protobuf file holds, as far
/// as the bytes at hand tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirstMessage {
    /// Fields a `TracePacket` has, with its wire types (or too few bytes
    /// to tell otherwise).
    TracePacket,
    /// An `XPlane` (JAX / TensorFlow `*.xplane.pb`): `id` as a varint
    /// field 1, or a plane name like `/host:CPU`, `/device:GPU:0`.
    XPlane,
    /// Some other protobuf message.
    Other,
}

/// `TracePacket` fields whose wire type is known: varints and
/// length-delimited messages (perfetto/trace/trace_packet.proto).
const PACKET_VARINT_FIELDS: &[u64] = &[3, 8, 10, 13, 41, 42, 58];
const PACKET_MESSAGE_FIELDS: &[u64] = &[1, 2, 4, 5, 6, 7, 9, 11, 12, 33, 35, 45, 60];

/// Reads the fields of the first packet (a file that [`looks_like`]
/// a Perfetto trace) to tell a Perfetto trace from other protobuf files
/// that start the same way. Only the bytes of `head` are read.
pub fn first_message(head: &[u8]) -> FirstMessage {
    let Some((len, n)) = head.get(1..).and_then(read_varint) else {
        return FirstMessage::TracePacket;
    };
    let body = &head[1 + n..];
    let body = &body[..body.len().min(len as usize)];
    let mut at = 0;
    while at < body.len() {
        let Some((tag, k)) = read_varint(&body[at..]) else {
            break;
        };
        at += k;
        let (field, wire) = (tag >> 3, tag & 7);
        match wire {
            0 => {
                if field == 1 {
                    return FirstMessage::XPlane;
                }
                if PACKET_MESSAGE_FIELDS.contains(&field) {
                    return FirstMessage::Other;
                }
                let Some((_, k)) = read_varint(&body[at..]) else {
                    break;
                };
                at += k;
            }
            1 => at += 8,
            5 => at += 4,
            2 => {
                let Some((len, k)) = read_varint(&body[at..]) else {
                    break;
                };
                at += k;
                let value = &body[at.min(body.len())..];
                if field == 2 && (value.starts_with(b"/host:") || value.starts_with(b"/device:")) {
                    return FirstMessage::XPlane;
                }
                if PACKET_VARINT_FIELDS.contains(&field) {
                    return FirstMessage::Other;
                }
                at = at.saturating_add(len as usize);
            }
            _ => return FirstMessage::Other,
        }
        if field == 0 {
            return FirstMessage::Other;
        }
    }
    FirstMessage::TracePacket
}

fn read_varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (k, &c) in b.iter().enumerate().take(10) {
        v |= ((c & 0x7f) as u64) << (7 * k);
        if c < 0x80 {
            return Some((v, k + 1));
        }
    }
    None
}

/// Per-sequence interning tables: names and categories as model strings.
#[derive(Default)]
struct Interned {
    names: HashMap<u64, StrId>,
    categories: HashMap<u64, StrId>,
    annotation_names: HashMap<u64, String>,
    annotation_strings: HashMap<u64, String>,
}

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
    lanes: HashMap<u64, Lane>,
    seen_flows: HashSet<u64>,
    /// Scratch space for an event's args text.
    args: Vec<u8>,
    /// `""` and `"flow"` in the model's strings, once known.
    empty: Option<StrId>,
    flow_cat: Option<StrId>,
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
                match TracePacket::decode(&rest[body..end]) {
                    Ok(p) => self.packet(p, b),
                    Err(_) => self.bad_packets += 1,
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
                if let Some(n) = d.thread.as_ref().and_then(|t| t.thread_name.as_ref()) {
                    names.push((lane.pid, lane.tid, n.clone(), false));
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
            warnings::PERFETTO_OTHER_FIELDS,
            self.skipped_fields,
            String::new(),
        );
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

    fn packet(&mut self, p: TracePacket, b: &mut Builder) {
        let seq = p.trusted_packet_sequence_id.unwrap_or(0);
        let cleared = p.incremental_state_cleared.unwrap_or(false)
            || p.sequence_flags.unwrap_or(0) & SEQ_INCREMENTAL_STATE_CLEARED != 0;
        if cleared {
            self.interned.insert(seq, Interned::default());
        }
        let mut used = false;
        if let Some(d) = p.track_descriptor {
            // Writers repeat descriptors (each flush, each sequence): only a
            // changed one moves its lane.
            if let Some(uuid) = d.uuid.filter(|u| self.descriptors.get(u) != Some(&d)) {
                self.lanes.remove(&uuid);
                self.descriptors.insert(uuid, d);
            }
            used = true;
        }
        if let Some(data) = p.interned_data {
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
        if let Some(e) = p.track_event {
            self.track_events += 1;
            self.track_event(seq, p.timestamp.unwrap_or(0) as i64, e, b);
            used = true;
        }
        if !used {
            self.other_packets += 1;
        }
    }

    /// Writes the event's debug annotations as args JSON text into `self.args`.
    fn write_args(&mut self, seq: u32, e: &TrackEvent) {
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

    fn track_event(&mut self, seq: u32, ts: i64, e: TrackEvent, b: &mut Builder) {
        let lane = self.lane(e.track_uuid.unwrap_or(0), b);
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
                let mut all: Vec<String> = plain.to_vec();
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
                self.write_args(seq, &e);
                let args = (!self.args.is_empty()).then_some(&self.args[..]);
                let fields = match args {
                    Some(text) if !instant => chrome::args_fields(b, text),
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
                let series = lane
                    .counter
                    .or(name)
                    .unwrap_or_else(|| b.trace.strings.intern("counter"));
                b.counter_sample(lane.process, series, ts, value);
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

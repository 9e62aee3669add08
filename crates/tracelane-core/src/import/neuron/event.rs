//! One Neuron system-profile event → the model: its layer, lane, name,
//! time and args, and what the joins need to remember of it.
//!
//! The layer is read from `trace_event_source` (Neuron Explorer); the
//! Profiler 2.0 beta export has none and says `type` (11 a runtime API
//! call, 99999 a framework event) and `group` (`nrt-nc-000`,
//! `framework-<tid>`) instead (AWS, neuron-profiler-2-0-beta-user-guide);
//! failing both, the name decides for the events the Neuron docs list as
//! hardware and the runtime's own prefixes. An event whose layer cannot be
//! told sits on an `unknown layer` lane, counted.

use std::borrow::Cow;
use std::collections::HashMap;

use rustc_hash::FxHashMap;

use super::counts::NeuronCounts;
use super::fields::{int, text, Event, Flows, Text};
use crate::import::builder::{Builder, EventIn};
use crate::model::{LaneId, TrackIdx, NONE_I64};

/// What makes a lane: the layer, instance, process and the core or thread.
#[derive(Clone, Debug, PartialEq, Eq)]
struct LaneKey {
    layer: u8,
    instance: String,
    pid: String,
    nc: Option<i64>,
    core: Option<i64>,
    thread: Option<String>,
}

impl LaneKey {
    fn is(&self, k: &LaneRef) -> bool {
        self.layer == k.layer
            && self.nc == k.nc
            && self.core == k.core
            && self.instance == k.instance
            && self.pid == k.pid
            && self.thread.as_deref() == k.thread.as_deref()
    }
}

/// A lane's track and its process group's index.
type Lane = (TrackIdx, u32);

/// A lane key borrowed from the event, looked up without allocating.
struct LaneRef<'a> {
    layer: u8,
    instance: Cow<'a, str>,
    pid: Cow<'a, str>,
    nc: Option<i64>,
    core: Option<i64>,
    thread: Option<Cow<'a, str>>,
}

impl LaneRef<'_> {
    fn hash(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        (self.layer, &*self.instance, &*self.pid, self.nc, self.core).hash(&mut h);
        self.thread.as_deref().hash(&mut h);
        h.finish()
    }

    fn owned(&self) -> LaneKey {
        LaneKey {
            layer: self.layer,
            instance: self.instance.to_string(),
            pid: self.pid.to_string(),
            nc: self.nc,
            core: self.core,
            thread: self.thread.as_ref().map(|t| t.to_string()),
        }
    }
}

/// The layer an event belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layer {
    Framework = 0,
    Runtime = 1,
    Hardware = 2,
    Unknown = 3,
}

/// How an event's layer was told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Told {
    Source = 0,
    TypeGroup = 1,
    Name = 2,
    Not = 3,
}

/// Hardware events by name: the `hardware` category of
/// `NEURON_RT_INSPECT_EVENT_FILTER_TYPE` (Neuron Explorer's environment
/// variables) and the beta guide's hardware list.
pub const HARDWARE_EVENTS: &[&str] = &[
    "nc_exec_running",
    "cc_running",
    "cc_exec_barrier",
    "numerical_err",
    "nrt_model_switch",
    "nc_model_switch",
    "timestamp_sync_point",
    "hw_notify",
];

/// Hardware events that mark a moment rather than take device time: kept
/// as instants on their core's lane.
const MARKERS: &[&str] = &["timestamp_sync_point", "hw_notify", "numerical_err"];

/// Name prefixes of the runtime's own events (`nrt_model_submit`,
/// `nrta_execute_schedule`, `kbl_exec_pre`, `kmgr_exec_core`,
/// `dmem_buf_copyin`, `enc_barrier`, `exec_consume_*`,
/// `notification_consume_errors`, `tensor_block_while_exec`).
const RUNTIME_PREFIXES: &[&str] = &[
    "nrt_",
    "nrta_",
    "kbl_",
    "kmgr_",
    "dmem_",
    "enc_",
    "exec_consume",
    "notification_",
    "tensor_block",
];

/// Runtime events that start a hardware execution, in the order a join by
/// `exec_id` prefers them as its launch (scripts that read real captures
/// join `kbl_exec_pre` to `nc_exec_running`).
const LAUNCH_ORDER: &[&str] = &[
    "kbl_exec_pre",
    "kmgr_exec_core",
    "kbl_exec_core",
    "nrt_execute",
    "kbl_exec_wait",
    "kbl_exec_post",
];

/// An event as the joins need it, once it is in the model.
pub(super) struct Rec {
    pub(super) layer: Layer,
    /// The event's row among the builder's slices (before sorting), or
    /// [`GHOST`].
    pub(super) slice: u32,
    pub(super) start: i64,
    pub(super) end: i64,
}

/// The slice of a record that is not in the model: a framework event left
/// to the run's own PyTorch trace, kept for the joins (its flows, its
/// sequence id) only.
pub(super) const GHOST: u32 = u32::MAX;

/// What an execution stage or a hardware execution says about which
/// execution it belongs to.
pub(super) struct ExecRec {
    pub(super) rec: u32,
    /// Index into [`Events::processes_seen`]: instance and process.
    pub(super) process: u32,
    /// The logical NeuronCore (`lnc_idx`, else `nc_idx`).
    pub(super) nc: i64,
    pub(super) exec_id: i64,
    pub(super) model_id: i64,
    /// A hash of the model's file name (`model_name` is a full NEFF path on
    /// runtime events and may be a bare name on hardware ones).
    pub(super) model_name: u64,
    /// The physical core of a hardware event.
    pub(super) core: i64,
    pub(super) kind: ExecKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ExecKind {
    /// `nc_exec_running`: the execution's device time.
    Execution,
    /// A model switch on the device (`nc_model_switch`, `nrt_model_switch`).
    Switch,
    /// A runtime stage; its rank in [`LAUNCH_ORDER`] (others after).
    Stage(u8),
    /// Another hardware event naming the execution (collectives).
    Other,
}

/// Every event's record and the state of the translation.
#[derive(Default)]
pub(crate) struct Events {
    pub(super) recs: Vec<Rec>,
    /// (flow id, record) for each flow id an event carries. Ids are
    /// string-encoded integers (kept as numbers); any other text gets a
    /// number of its own, counted down from the top of the range.
    pub(super) flow_members: Vec<(u64, u32)>,
    flow_ids: HashMap<String, u64>,
    pub(super) execs: Vec<ExecRec>,
    /// (sequence id, record): `nrt_sequence_id` on framework events,
    /// `nrta_seq_id` / `nrt_sequence_id` on runtime (and hardware) ones.
    pub(super) seqs: Vec<(i64, u32)>,
    /// The logical core of each record that has one (runtime and
    /// hardware events), for the sequence ids' enclosure.
    pub(super) nc_of: FxHashMap<u32, (u32, i64)>,
    /// The model (`model_id`, else the NEFF file name's hash) of runtime
    /// records carrying a sequence id.
    pub(super) model_of: FxHashMap<u32, i64>,
    /// Lane process names, to name once at the end.
    processes: Vec<String>,
    /// `{instance}/PID:{pid}` groups, for the execution key.
    pub(super) processes_seen: Vec<String>,
    /// The hardware lane process of each group's lanes.
    pub(super) hw_process: HashMap<u32, String>,
    /// Lanes made so far, by their key's hash.
    lanes: FxHashMap<u64, Vec<(LaneKey, Lane)>>,
    by_layer: [u64; 4],
    told: [u64; 4],
    /// `flow_id` given as a list of strings, a list of numbers, one value.
    flow_shapes: [u64; 3],
    /// Framework events copied from this source file (`trace.json`) are
    /// left out: the run's own Kineto trace holds them.
    pub(crate) superseded_source: Option<String>,
    superseded: u64,
    device_clock: u64,
    device_clock_differs: u64,
    name_sources: u64,
    no_unit: u64,
    markers: u64,
}

impl Events {
    /// Events translated so far.
    pub(super) fn count(&self) -> u64 {
        self.by_layer.iter().sum()
    }

    /// Translates one event from its JSON text (kept whole as its args);
    /// `false` when it has no usable timestamp (or is not an object), and
    /// is not imported.
    pub(super) fn event(&mut self, raw: &[u8], b: &mut Builder) -> bool {
        // The element's UTF-8 checked once (an ASCII fast path), not string
        // by string as a parse of bytes does; invalid bytes are replaced
        // (U+FFFD) and counted, the event kept.
        let utf8 = match std::str::from_utf8(raw) {
            Ok(text) => Cow::Borrowed(text),
            Err(_) => {
                let text = String::from_utf8_lossy(raw).into_owned();
                b.diag.warn(crate::warnings::INVALID_UTF8, || {
                    crate::error::excerpt(text.as_bytes())
                });
                Cow::Owned(text)
            }
        };
        let raw = utf8.as_bytes();
        let Ok(mut e) = serde_json::from_str::<Event>(&utf8) else {
            return false;
        };
        e.lift_args();
        let unit = match e.timestamp_unit.0.as_ref().and_then(Text::str) {
            Some("us") => 1_000,
            Some("ms") => 1_000_000,
            Some("s") => 1_000_000_000,
            Some(_) => 1,
            None => {
                self.no_unit += 1;
                1
            }
        };
        let Some(ts) = int(&e.timestamp) else {
            return false;
        };
        let ts = ts.saturating_mul(unit);
        let raw_name = text(&e.name).unwrap_or_default();
        let (layer, told) = layer_of(&e, &raw_name);
        self.by_layer[layer as usize] += 1;
        self.told[told as usize] += 1;
        let mut dur = int(&e.duration).unwrap_or(0).saturating_mul(unit).max(0);
        // The device clock's own pair, where a hardware event has one.
        if let (Some(a), Some(z)) = (int(&e.nc_start_timestamp_ns), int(&e.nc_stop_timestamp_ns)) {
            if z >= a && layer == Layer::Hardware {
                self.device_clock += 1;
                if z - a != dur {
                    self.device_clock_differs += 1;
                }
                dur = z - a;
            }
        }
        // Neuron Explorer suffixes framework names with their source
        // (`aten::mm [trace.json]`): the op's name is PyTorch's.
        let (name, source) = match split_source(&raw_name) {
            Some((n, s)) if layer == Layer::Framework => {
                self.name_sources += 1;
                (n, Some(s))
            }
            _ => (raw_name.as_ref(), None),
        };
        if layer == Layer::Framework
            && self.superseded_source.is_some()
            && source == self.superseded_source.as_deref()
        {
            self.by_layer[layer as usize] -= 1;
            self.told[told as usize] -= 1;
            self.superseded += 1;
            let rec = self.recs.len() as u32;
            self.recs.push(Rec {
                layer,
                slice: GHOST,
                start: ts,
                end: ts.saturating_add(dur),
            });
            self.remember_flows(e.flow_id.as_ref(), rec);
            if let Some(seq) = int(&e.nrt_sequence_id) {
                self.seqs.push((seq, rec));
            }
            return true;
        }
        let nc = int(&e.lnc_idx)
            .or_else(|| int(&e.nc_idx))
            .or_else(|| group_number(&e, "nrt-nc-"));
        let core = int(&e.device_core_idx).or_else(|| int(&e.pcore_idx));
        let marker = layer == Layer::Hardware && MARKERS.contains(&name);
        let (track, group_idx) = self.lane(&e, layer, nc, core, b);
        let cat = match layer {
            Layer::Framework => "cpu_op",
            Layer::Runtime => "neuron_rt",
            Layer::Hardware if marker => "neuron_hw_marker",
            Layer::Hardware => "neuron_hw",
            Layer::Unknown => "neuron_unknown",
        };
        // The event's own text is its args; a name's source is added.
        let spliced;
        let args = match source {
            None => raw.trim_ascii(),
            Some(s) => {
                spliced = with_field(raw, "name_source", s);
                &spliced[..]
            }
        };
        let name = if name.is_empty() { cat } else { name };
        let cat = b.trace.strings.intern(cat);
        b.count_category(cat);
        let name_id = b.trace.strings.intern(name);
        if marker {
            let order = b.count_event(b'i');
            b.max_ts_ns = b.max_ts_ns.max(ts);
            b.instant(track, ts, &EventIn::translated(name_id, cat, args, order));
            self.markers += 1;
            return true;
        }
        let order = b.count_event(b'X');
        b.max_ts_ns = b.max_ts_ns.max(ts.saturating_add(dur));
        let slice = b.trace.slices.len() as u32;
        b.slice(
            track,
            ts,
            dur,
            &EventIn::translated(name_id, cat, args, order),
        );
        let rec = self.recs.len() as u32;
        self.recs.push(Rec {
            layer,
            slice,
            start: ts,
            end: ts.saturating_add(dur),
        });
        self.remember_flows(e.flow_id.as_ref(), rec);
        self.remember_ids(&e, layer, name, rec, group_idx, nc, core);
        true
    }

    /// The event's lane (and its process group's index), named as Neuron
    /// Explorer groups lanes: made once per distinct lane.
    fn lane(
        &mut self,
        e: &Event,
        layer: Layer,
        nc: Option<i64>,
        core: Option<i64>,
        b: &mut Builder,
    ) -> (TrackIdx, u32) {
        let key = LaneRef {
            layer: layer as u8,
            instance: text(&e.instance_id).unwrap_or(Cow::Borrowed("instance")),
            pid: text(&e.process_id).unwrap_or(Cow::Borrowed("?")),
            nc,
            core,
            thread: match layer {
                Layer::Framework => text(&e.thread_id)
                    .or_else(|| group_number(e, "framework-").map(|t| Cow::Owned(t.to_string()))),
                Layer::Unknown => text(&e.thread_id),
                _ => None,
            },
        };
        let hash = key.hash();
        if let Some(list) = self.lanes.get(&hash) {
            if let Some((_, hit)) = list.iter().find(|(k, _)| k.is(&key)) {
                return *hit;
            }
        }
        let (instance, pid) = (&key.instance, &key.pid);
        let group = format!("{instance}/PID:{pid}");
        let group_idx = match self.processes_seen.iter().position(|g| *g == group) {
            Some(k) => k as u32,
            None => {
                self.processes_seen.push(group.clone());
                (self.processes_seen.len() - 1) as u32
            }
        };
        let nc_text = nc.map_or_else(|| "?".to_string(), |n| n.to_string());
        let thread_text = key.thread.clone().unwrap_or_else(|| "?".into());
        let (process, lane) = match layer {
            Layer::Framework => (format!("{group}/framework"), format!("TID:{thread_text}")),
            Layer::Runtime => (format!("{group}/neuron_rt"), format!("NC:{nc_text}")),
            Layer::Hardware => {
                let process = format!("{group}/neuron_hw");
                self.hw_process
                    .entry(group_idx)
                    .or_insert_with(|| process.clone());
                let lane = match core {
                    Some(c) => format!("NC{nc_text}:{c}"),
                    None => format!("NC{nc_text}"),
                };
                (process, lane)
            }
            Layer::Unknown => (
                format!("{group}/unknown layer"),
                format!("TID:{thread_text}"),
            ),
        };
        if !self.processes.contains(&process) {
            self.processes.push(process.clone());
        }
        let pid = LaneId::Str(b.trace.strings.intern(&process));
        let tid = LaneId::Str(b.trace.strings.intern(&lane));
        let track = b.track(pid, tid);
        if layer == Layer::Hardware {
            b.device_marked[track.idx()] = true;
        }
        let owned = key.owned();
        self.lanes
            .entry(hash)
            .or_default()
            .push((owned, (track, group_idx)));
        (track, group_idx)
    }

    fn remember_flows(&mut self, flows: Option<&Flows>, rec: u32) {
        let Some(f) = flows else { return };
        if f.ids.is_empty() {
            return;
        }
        self.flow_shapes[f.shape as usize] += 1;
        for id in &f.ids {
            let key = match id.int() {
                Some(v) => v as u64,
                None => {
                    let n = u64::MAX - self.flow_ids.len() as u64;
                    *self.flow_ids.entry(id.text().into_owned()).or_insert(n)
                }
            };
            self.flow_members.push((key, rec));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn remember_ids(
        &mut self,
        e: &Event,
        layer: Layer,
        name: &str,
        rec: u32,
        process: u32,
        nc: Option<i64>,
        core: Option<i64>,
    ) {
        let seq = match layer {
            Layer::Framework => int(&e.nrt_sequence_id),
            Layer::Runtime | Layer::Hardware => {
                int(&e.nrta_seq_id).or_else(|| int(&e.nrt_sequence_id))
            }
            Layer::Unknown => None,
        };
        if let Some(s) = seq {
            self.seqs.push((s, rec));
        }
        let model_name = || text(&e.model_name).map(|n| model_file_hash(&n));
        let exec_id = int(&e.exec_id);
        // The core of the runtime calls the sequence joins read: those
        // carrying a sequence id, and the stages of an execution.
        if let (Some(nc), Layer::Runtime, true) = (nc, layer, seq.is_some() || exec_id.is_some()) {
            self.nc_of.insert(rec, (process, nc));
            if seq.is_some() {
                let model = int(&e.model_id).or_else(|| model_name().map(|h| h as i64));
                if let Some(m) = model {
                    self.model_of.insert(rec, m);
                }
            }
        }
        let Some(exec_id) = exec_id else {
            return;
        };
        let kind = match layer {
            Layer::Hardware if name == "nc_exec_running" => ExecKind::Execution,
            Layer::Hardware if name.ends_with("model_switch") => ExecKind::Switch,
            Layer::Hardware => ExecKind::Other,
            Layer::Runtime => ExecKind::Stage(
                LAUNCH_ORDER
                    .iter()
                    .position(|n| *n == name)
                    .unwrap_or(LAUNCH_ORDER.len()) as u8,
            ),
            _ => return,
        };
        self.execs.push(ExecRec {
            rec,
            process,
            nc: nc.unwrap_or(NONE_I64),
            exec_id,
            model_id: int(&e.model_id).unwrap_or(NONE_I64),
            model_name: model_name().unwrap_or(0),
            core: core.unwrap_or(NONE_I64),
            kind,
        });
    }

    /// Names the lanes' processes; says how the events were read.
    pub(super) fn finish(&mut self, b: &mut Builder, counts: &mut NeuronCounts) {
        for p in &self.processes {
            b.count_event(b'M');
            let id = b.trace.strings.intern(p);
            b.set_process_name(LaneId::Str(id), id);
        }
        let names = ["framework", "neuron_rt", "neuron_hw", "unknown layer"];
        counts.by_source = names
            .iter()
            .zip(self.by_layer)
            .filter(|(_, n)| *n > 0)
            .map(|(s, n)| (s.to_string(), n))
            .collect();
        counts.events = self.count();
        counts.unknown_layer = self.by_layer[Layer::Unknown as usize];
        let [source, type_group, by_name, not] = self.told;
        let mut how = Vec::new();
        if source > 0 {
            how.push(format!("{source} by trace_event_source (Neuron Explorer)"));
        }
        if type_group > 0 {
            how.push(format!(
                "{type_group} by type/group (the Profiler 2.0 beta export: type 11 runtime, 99999 framework)"
            ));
        }
        if by_name > 0 {
            how.push(format!(
                "{by_name} by their name (the Neuron docs' hardware events, the runtime's prefixes)"
            ));
        }
        if not > 0 {
            how.push(format!(
                "{not} not told (kept on the 'unknown layer' lane, out of the op table)"
            ));
        }
        if !how.is_empty() {
            counts
                .readings
                .push(format!("event layers: {}", how.join("; ")));
        }
        let [strings, numbers, single] = self.flow_shapes;
        if strings + numbers + single == 0 {
            counts.readings.push(
                "no flow_id on any event (a filtered export drops the events that carry flows): joins by exec_id and sequence id only".into(),
            );
        } else {
            counts.readings.push(format!(
                "flow_id as a list of strings on {strings} events, of numbers on {numbers}, a single value on {single}"
            ));
        }
        if self.device_clock > 0 {
            counts.readings.push(format!(
                "{} hardware durations from nc_stop_timestamp_ns − nc_start_timestamp_ns (the device clock's pair; {} differed from their duration field)",
                self.device_clock, self.device_clock_differs
            ));
        }
        if self.name_sources > 0 {
            counts.readings.push(format!(
                "{} framework names carried their source ('aten::mm [trace.json]'): read as the op's name, the source kept as name_source",
                self.name_sources
            ));
        }
        if self.superseded > 0 {
            counts.readings.push(format!(
                "{} framework events the profile copied from {} left out: the run's PyTorch trace holds them",
                self.superseded,
                self.superseded_source.as_deref().unwrap_or("?")
            ));
        }
        if self.no_unit > 0 {
            counts.readings.push(format!(
                "{} events without timestamp_unit: read as nanoseconds (the unit every attested export states)",
                self.no_unit
            ));
        }
        if self.markers > 0 {
            counts.readings.push(format!(
                "{} hardware markers (timestamp_sync_point, hw_notify, numerical_err) kept as instants",
                self.markers
            ));
        }
    }
}

/// The layer of an event, and how it was told.
fn layer_of(e: &Event, name: &str) -> (Layer, Told) {
    match e.trace_event_source.0.as_ref().and_then(Text::str) {
        Some("framework") => return (Layer::Framework, Told::Source),
        Some("neuron_rt") => return (Layer::Runtime, Told::Source),
        Some("neuron_hw") => return (Layer::Hardware, Told::Source),
        _ => {}
    }
    match int(&e.kind) {
        Some(99999) => return (Layer::Framework, Told::TypeGroup),
        Some(11) => return (Layer::Runtime, Told::TypeGroup),
        _ => {}
    }
    if let Some(g) = e.group.0.as_ref().and_then(Text::str) {
        if g.starts_with("framework") {
            return (Layer::Framework, Told::TypeGroup);
        }
        if g.starts_with("nrt") {
            return (Layer::Runtime, Told::TypeGroup);
        }
    }
    if HARDWARE_EVENTS.contains(&name) {
        return (Layer::Hardware, Told::Name);
    }
    if RUNTIME_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return (Layer::Runtime, Told::Name);
    }
    (Layer::Unknown, Told::Not)
}

/// The number a beta `group` ends with after `prefix` (`nrt-nc-000` → 0,
/// `framework-80375131` → 80375131).
fn group_number(e: &Event, prefix: &str) -> Option<i64> {
    e.group
        .0
        .as_ref()?
        .str()?
        .strip_prefix(prefix)?
        .parse()
        .ok()
}

/// An object's JSON text with one more string field (before its closing
/// brace).
fn with_field(raw: &[u8], key: &str, value: &str) -> Vec<u8> {
    let raw = raw.trim_ascii();
    let body = raw.strip_suffix(b"}").unwrap_or(raw);
    let mut out = body.to_vec();
    if body.iter().any(|c| !c.is_ascii_whitespace() && *c != b'{') {
        out.push(b',');
    }
    let _ = serde_json::to_writer(&mut out, key);
    out.push(b':');
    let _ = serde_json::to_writer(&mut out, value);
    out.push(b'}');
    out
}

/// `aten::mm [trace.json]` → (`aten::mm`, `trace.json`).
fn split_source(name: &str) -> Option<(&str, &str)> {
    let body = name.strip_suffix(']')?;
    let (op, source) = body.rsplit_once(" [")?;
    (!op.is_empty() && !source.is_empty() && !source.contains('[')).then_some((op, source))
}

/// A hash of a NEFF's file name (its path's last part), equal for
/// `/var/tmp/…/model.neff` and `model.neff`.
fn model_file_hash(name: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let file = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let mut h = rustc_hash::FxHasher::default();
    file.hash(&mut h);
    h.finish() | 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_suffix_is_split_off_the_name() {
        assert_eq!(
            split_source("aten::mm [trace.json]"),
            Some(("aten::mm", "trace.json"))
        );
        assert_eq!(split_source("aten::mm"), None);
        assert_eq!(split_source("[x]"), None);
        assert_eq!(
            model_file_hash("/a/b/model.neff"),
            model_file_hash("model.neff")
        );
    }
}

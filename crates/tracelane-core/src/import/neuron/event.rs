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

use std::collections::HashMap;

use rustc_hash::FxHashMap;

use serde_json::{Map, Value};

use super::{integer, text, NeuronCounts};
use crate::import::builder::{Builder, EventIn, Fields};
use crate::model::{LaneId, NONE_I64};

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
    /// The hardware lane process and logical core of each group's lanes.
    pub(super) hw_process: HashMap<u32, String>,
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

    /// Translates one event; `false` when it has no usable timestamp (or is
    /// not an object), and is not imported.
    pub(super) fn event(&mut self, e: &Value, b: &mut Builder) -> bool {
        let Some(o) = e.as_object() else {
            return false;
        };
        // `exec_id` and the like sit under `args` in some versions: lifted.
        let lifted;
        let o = match o.get("args").and_then(|a| a.as_object()) {
            Some(inner) => {
                let mut m = o.clone();
                for (k, v) in inner {
                    m.entry(k.clone()).or_insert_with(|| v.clone());
                }
                m.remove("args");
                lifted = m;
                &lifted
            }
            None => o,
        };
        let unit = match o.get("timestamp_unit").and_then(|u| u.as_str()) {
            Some("us") => 1_000,
            Some("ms") => 1_000_000,
            Some("s") => 1_000_000_000,
            Some(_) => 1,
            None => {
                self.no_unit += 1;
                1
            }
        };
        let Some(ts) = integer(o.get("timestamp")) else {
            return false;
        };
        let ts = ts.saturating_mul(unit);
        let raw_name = text(o.get("name")).unwrap_or_default();
        let (layer, told) = layer_of(o, &raw_name);
        self.by_layer[layer as usize] += 1;
        self.told[told as usize] += 1;
        let mut dur = integer(o.get("duration"))
            .unwrap_or(0)
            .saturating_mul(unit)
            .max(0);
        // The device clock's own pair, where a hardware event has one.
        if let (Some(a), Some(z)) = (
            integer(o.get("nc_start_timestamp_ns")),
            integer(o.get("nc_stop_timestamp_ns")),
        ) {
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
                (n.to_string(), Some(s.to_string()))
            }
            _ => (raw_name.clone(), None),
        };
        if layer == Layer::Framework
            && self.superseded_source.is_some()
            && source.as_deref() == self.superseded_source.as_deref()
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
            self.remember_flows(o.get("flow_id"), rec);
            if let Some(seq) = integer(o.get("nrt_sequence_id")) {
                self.seqs.push((seq, rec));
            }
            return true;
        }
        let instance = text(o.get("instance_id")).unwrap_or_else(|| "instance".into());
        let pid = text(o.get("process_id")).unwrap_or_else(|| "?".into());
        let group = format!("{instance}/PID:{pid}");
        let group_idx = match self.processes_seen.iter().position(|g| *g == group) {
            Some(k) => k as u32,
            None => {
                self.processes_seen.push(group.clone());
                (self.processes_seen.len() - 1) as u32
            }
        };
        let nc = integer(o.get("lnc_idx"))
            .or_else(|| integer(o.get("nc_idx")))
            .or_else(|| group_number(o, "nrt-nc-"));
        let core = integer(o.get("device_core_idx")).or_else(|| integer(o.get("pcore_idx")));
        let nc_text = nc.map_or_else(|| "?".to_string(), |n| n.to_string());
        let (cat, process, thread) = match layer {
            Layer::Framework => (
                "cpu_op",
                format!("{group}/framework"),
                format!(
                    "TID:{}",
                    text(o.get("thread_id"))
                        .or_else(|| group_number(o, "framework-").map(|t| t.to_string()))
                        .unwrap_or_else(|| "?".into())
                ),
            ),
            Layer::Runtime => (
                "neuron_rt",
                format!("{group}/neuron_rt"),
                format!("NC:{nc_text}"),
            ),
            Layer::Hardware => {
                let process = format!("{group}/neuron_hw");
                self.hw_process.entry(group_idx).or_insert(process.clone());
                let lane = match core {
                    Some(c) => format!("NC{nc_text}:{c}"),
                    None => format!("NC{nc_text}"),
                };
                let marker = MARKERS.contains(&name.as_str()) || (dur == 0 && name.is_empty());
                (
                    if marker {
                        "neuron_hw_marker"
                    } else {
                        "neuron_hw"
                    },
                    process,
                    lane,
                )
            }
            Layer::Unknown => (
                "neuron_unknown",
                format!("{group}/unknown layer"),
                format!(
                    "TID:{}",
                    text(o.get("thread_id")).unwrap_or_else(|| "?".into())
                ),
            ),
        };
        if !self.processes.contains(&process) {
            self.processes.push(process.clone());
        }
        let mut args = o.clone();
        if let Some(s) = source {
            args.insert("name_source".into(), Value::from(s));
        }
        let args = Value::Object(args).to_string();
        let lane = |b: &mut Builder, s: &str| LaneId::Str(b.trace.strings.intern(s));
        let (pid, tid) = (lane(b, &process), lane(b, &thread));
        let track = b.track(pid, tid);
        if layer == Layer::Hardware {
            b.device_marked[track.idx()] = true;
        }
        let name = if name.is_empty() {
            cat.to_string()
        } else {
            name
        };
        let cat = b.trace.strings.intern(cat);
        b.count_category(cat);
        let event = EventIn {
            name: b.trace.strings.intern(&name),
            cat,
            args: Some(args.as_bytes()),
            fields: Fields::default(),
            order: 0,
            source: (0, 0),
        };
        if b.trace.strings.get(cat) == "neuron_hw_marker" {
            let event = EventIn {
                order: b.count_event(b'i'),
                ..event
            };
            b.max_ts_ns = b.max_ts_ns.max(ts);
            b.instant(track, ts, &event);
            self.markers += 1;
            return true;
        }
        let event = EventIn {
            order: b.count_event(b'X'),
            ..event
        };
        b.max_ts_ns = b.max_ts_ns.max(ts.saturating_add(dur));
        let slice = b.trace.slices.len() as u32;
        b.slice(track, ts, dur, &event);
        let rec = self.recs.len() as u32;
        self.recs.push(Rec {
            layer,
            slice,
            start: ts,
            end: ts.saturating_add(dur),
        });
        self.remember_flows(o.get("flow_id"), rec);
        self.remember_ids(o, layer, &name, rec, group_idx, nc, core);
        true
    }

    fn remember_flows(&mut self, flows: Option<&Value>, rec: u32) {
        let mut ids: Vec<String> = Vec::new();
        match flows {
            Some(Value::Array(list)) => {
                let numbers = list.iter().all(|v| v.is_number());
                self.flow_shapes[usize::from(numbers)] += 1;
                ids.extend(list.iter().filter_map(|v| text(Some(v))));
            }
            Some(Value::Null) | None => {}
            Some(v) => {
                self.flow_shapes[2] += 1;
                ids.extend(text(Some(v)));
            }
        }
        for id in ids {
            let key = match id.trim().parse::<i64>() {
                Ok(v) => v as u64,
                Err(_) => {
                    let n = u64::MAX - self.flow_ids.len() as u64;
                    *self.flow_ids.entry(id).or_insert(n)
                }
            };
            self.flow_members.push((key, rec));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn remember_ids(
        &mut self,
        o: &Map<String, Value>,
        layer: Layer,
        name: &str,
        rec: u32,
        process: u32,
        nc: Option<i64>,
        core: Option<i64>,
    ) {
        let seq = match layer {
            Layer::Framework => integer(o.get("nrt_sequence_id")),
            Layer::Runtime | Layer::Hardware => {
                integer(o.get("nrta_seq_id")).or_else(|| integer(o.get("nrt_sequence_id")))
            }
            Layer::Unknown => None,
        };
        if let Some(s) = seq {
            self.seqs.push((s, rec));
        }
        if let (Some(nc), Layer::Runtime) = (nc, layer) {
            self.nc_of.insert(rec, (process, nc));
            if seq.is_some() {
                let model = integer(o.get("model_id"))
                    .or_else(|| text(o.get("model_name")).map(|n| model_file_hash(&n) as i64));
                if let Some(m) = model {
                    self.model_of.insert(rec, m);
                }
            }
        }
        let Some(exec_id) = integer(o.get("exec_id")) else {
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
            model_id: integer(o.get("model_id")).unwrap_or(NONE_I64),
            model_name: text(o.get("model_name"))
                .map(|n| model_file_hash(&n))
                .unwrap_or(0),
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
fn layer_of(o: &Map<String, Value>, name: &str) -> (Layer, Told) {
    match o.get("trace_event_source").and_then(|v| v.as_str()) {
        Some("framework") => return (Layer::Framework, Told::Source),
        Some("neuron_rt") => return (Layer::Runtime, Told::Source),
        Some("neuron_hw") => return (Layer::Hardware, Told::Source),
        _ => {}
    }
    match integer(o.get("type")) {
        Some(99999) => return (Layer::Framework, Told::TypeGroup),
        Some(11) => return (Layer::Runtime, Told::TypeGroup),
        _ => {}
    }
    if let Some(g) = o.get("group").and_then(|v| v.as_str()) {
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
fn group_number(o: &Map<String, Value>, prefix: &str) -> Option<i64> {
    o.get("group")?.as_str()?.strip_prefix(prefix)?.parse().ok()
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
    let mut h = std::collections::hash_map::DefaultHasher::new();
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

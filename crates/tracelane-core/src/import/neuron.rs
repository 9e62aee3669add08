//! Neuron Explorer's system profile JSON (`neuron-explorer view
//! --output-format json`, `system_profile.json`).
//!
//! Events carry `trace_event_source` (`framework`, `neuron_rt`,
//! `neuron_hw`), epoch `timestamp` and `duration` (ns unless
//! `timestamp_unit` says otherwise), ids, and `flow_id` arrays that chain a
//! framework op → its runtime execution → the hardware execution. The file
//! is translated into Kineto-shaped events and read by the Chrome importer,
//! so it lands in the same model, with the same links, op table and
//! timeline:
//!
//! - lanes as Neuron Explorer groups them: `{instance}/PID:{pid}/framework`
//!   threads `TID:{tid}`, `…/neuron_rt` lanes `NC:{nc}`, `…/neuron_hw` lanes
//!   `NC{nc}:{device_core}`;
//! - categories: framework → `cpu_op`, neuron_rt → a runtime call,
//!   neuron_hw → device work;
//! - the flow chains become Kineto's ids: a framework op gets an
//!   `External id`, each runtime event it flows to gets that id and a
//!   `correlation`, and each hardware event that runtime event flows to gets
//!   both — so the linker joins them exactly as it joins a CUDA launch;
//! - `mem_usage` and `cpu_util` samples become counters; `warnings` go to
//!   the diagnostics;
//! - every original field stays in the event's args (unknown ones too).
//!
//! Lenient as real versions differ: `trace_event` or `trace_events` or a
//! bare list; ids as strings or numbers; `exec_id` at the top level or under
//! `args`.

use std::collections::HashMap;

use serde_json::Value;

use super::builder::{Builder, EventIn, Fields};
use super::scan::{self, Scan};
use crate::error::ImportError;
use crate::model::LaneId;
use crate::warnings;

/// Does this JSON (its first bytes) look like a Neuron system profile?
pub fn looks_like(head: &[u8]) -> bool {
    let has = |needle: &[u8]| head.windows(needle.len()).any(|w| w == needle);
    (has(b"\"trace_event_source\"") || has(b"\"trace_event\"") || has(b"\"trace_events\""))
        && !has(b"\"traceEvents\"")
}

/// What the translation found, for the diagnostics.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct NeuronCounts {
    pub events: u64,
    pub by_source: Vec<(String, u64)>,
    pub flow_links: u64,
    pub mem_usage_samples: u64,
    pub cpu_util_samples: u64,
    pub warnings: Vec<String>,
    /// Events with no `trace_event_source` or no usable timestamp.
    pub skipped: u64,
}

impl NeuronCounts {
    /// Events per source, as the diagnostics list them (`framework 3, …`).
    pub fn by_source_text(&self) -> String {
        self.by_source
            .iter()
            .map(|(s, n)| format!("{s} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A field as text (numbers and booleans written out).
pub(crate) fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A field as an integer: a number, or a string holding one (Neuron and
/// Kineto write ids both ways).
pub(crate) fn integer(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f.round() as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn scale(unit: Option<&str>) -> i64 {
    match unit {
        Some("us") => 1_000,
        Some("ms") => 1_000_000,
        Some("s") => 1_000_000_000,
        _ => 1,
    }
}

/// Which top-level list an element belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    Events,
    MemUsage,
    CpuUtil,
    Warnings,
}

/// Where the reader stands in the top-level JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    /// Before the first value.
    Start,
    /// In the top-level object, before a key (or its end).
    Key,
    /// Inside one of the lists (`bare`: the whole file is a list).
    List { list: List, bare: bool },
    /// After the top-level value.
    Done,
}

/// An event as the flow chains need it, once the event is in the model.
struct Rec {
    /// framework 0, neuron_rt 1, neuron_hw 2.
    rank: u8,
    /// The event's row among the builder's slices (before sorting; its
    /// start time is read from there).
    slice: u32,
}

/// Streams a system profile into the model builder: each event, sample and
/// warning is parsed on its own as its bytes arrive (so memory holds the
/// model and one element, never the document), and the flow chains become
/// Kineto ids once every event is in.
#[derive(Default)]
pub(crate) struct NeuronReader {
    held: Vec<u8>,
    at: Option<At>,
    recs: Vec<Rec>,
    /// (flow id, record) for each flow id an event carries. Ids are
    /// string-encoded integers (kept as numbers); any other text gets a
    /// number of its own, counted down from the top of the range.
    flow_members: Vec<(u64, u32)>,
    flow_ids: HashMap<String, u64>,
    processes: Vec<String>,
    counts: NeuronCounts,
    by_source: [u64; 3],
}

impl NeuronReader {
    /// A reader given whole events (the rows of a Parquet system profile's
    /// `SystemProfileEvents`, as the JSON's event objects) rather than bytes.
    pub(crate) fn for_events() -> Self {
        NeuronReader {
            at: Some(At::Done),
            ..NeuronReader::default()
        }
    }

    /// One event object, as the JSON's `trace_event` list holds it.
    pub(crate) fn push_event(&mut self, e: &Value, b: &mut Builder) {
        self.event(e, b);
    }
}

fn syntax(what: &'static str) -> ImportError {
    ImportError::Syntax {
        offset: 0,
        message: format!("{what} (reading a Neuron Explorer system profile)"),
    }
}

impl NeuronReader {
    /// Takes the next bytes of the file.
    pub(crate) fn push(&mut self, data: &[u8], b: &mut Builder) -> Result<(), ImportError> {
        // Elements are read where they lie; only a cut-off one is held.
        if self.held.is_empty() {
            let used = self.read(data, false, b)?;
            self.held.extend_from_slice(&data[used..]);
            return Ok(());
        }
        self.held.extend_from_slice(data);
        let held = std::mem::take(&mut self.held);
        let used = self.read(&held, false, b);
        self.held = held;
        self.held.drain(..used?);
        Ok(())
    }

    /// Reads what `buf` holds; returns how many bytes were consumed.
    fn read(&mut self, buf: &[u8], last: bool, b: &mut Builder) -> Result<usize, ImportError> {
        let mut i = 0;
        loop {
            let j = scan::skip_ws(buf, i);
            let Some(&c) = buf.get(j) else {
                return Ok(i);
            };
            match self.at.unwrap_or(At::Start) {
                At::Start => {
                    self.at =
                        Some(match c {
                            b'{' => At::Key,
                            b'[' => At::List {
                                list: List::Events,
                                bare: true,
                            },
                            _ => return Err(ImportError::NotATrace {
                                reason:
                                    "a Neuron system profile must be an object or a list of events"
                                        .into(),
                            }),
                        });
                    i = j + 1;
                }
                At::Key => match c {
                    b',' => i = j + 1,
                    b'}' => {
                        self.at = Some(At::Done);
                        i = j + 1;
                    }
                    b'"' => {
                        let (key, k) = match scan::string(buf, j) {
                            Ok(x) => x,
                            Err(Scan::Incomplete) => return Ok(i),
                            Err(Scan::Syntax(m)) => return Err(syntax(m)),
                        };
                        let colon = scan::skip_ws(buf, k);
                        let v = scan::skip_ws(buf, colon + 1);
                        if v >= buf.len() {
                            return Ok(i);
                        }
                        if buf[colon] != b':' {
                            return Err(syntax("a key without a value"));
                        }
                        let list = match &buf[key.start..key.end] {
                            b"trace_event" | b"trace_events" => Some(List::Events),
                            b"mem_usage" => Some(List::MemUsage),
                            b"cpu_util" => Some(List::CpuUtil),
                            b"warnings" => Some(List::Warnings),
                            _ => None,
                        };
                        match (list, buf[v]) {
                            (Some(list), b'[') => {
                                self.at = Some(At::List { list, bare: false });
                                i = v + 1;
                            }
                            _ => match scan::skip_value(buf, v, last) {
                                Ok(e) => i = e,
                                Err(Scan::Incomplete) => return Ok(i),
                                Err(Scan::Syntax(m)) => return Err(syntax(m)),
                            },
                        }
                    }
                    _ => return Err(syntax("expected a key")),
                },
                At::List { list, bare } => match c {
                    b',' => i = j + 1,
                    b']' => {
                        self.at = Some(if bare { At::Done } else { At::Key });
                        i = j + 1;
                    }
                    _ => {
                        let e = match scan::skip_value(buf, j, last) {
                            Ok(e) => e,
                            Err(Scan::Incomplete) => return Ok(i),
                            Err(Scan::Syntax(m)) => return Err(syntax(m)),
                        };
                        match serde_json::from_slice::<Value>(&buf[j..e]) {
                            Ok(v) => self.element(list, &v, b),
                            Err(_) => self.counts.skipped += 1,
                        }
                        i = e;
                    }
                },
                At::Done => return Ok(buf.len()),
            }
        }
    }

    fn element(&mut self, list: List, v: &Value, b: &mut Builder) {
        match list {
            List::Events => self.event(v, b),
            List::MemUsage => self.sample(v, b, false),
            List::CpuUtil => self.sample(v, b, true),
            List::Warnings => self.counts.warnings.push(match v {
                Value::String(s) => s.clone(),
                Value::Object(o) => text(o.get("message")).unwrap_or_else(|| v.to_string()),
                other => other.to_string(),
            }),
        }
    }

    fn event(&mut self, e: &Value, b: &mut Builder) {
        let Some(o) = e.as_object() else {
            self.counts.skipped += 1;
            return;
        };
        let source = text(o.get("trace_event_source")).unwrap_or_default();
        let unit = scale(o.get("timestamp_unit").and_then(|u| u.as_str()));
        let Some(ts) = integer(o.get("timestamp")) else {
            self.counts.skipped += 1;
            return;
        };
        let ts = ts.saturating_mul(unit);
        let dur = integer(o.get("duration"))
            .unwrap_or(0)
            .saturating_mul(unit)
            .max(0);
        let instance = text(o.get("instance_id")).unwrap_or_else(|| "instance".into());
        let pid = text(o.get("process_id")).unwrap_or_else(|| "?".into());
        let group = format!("{instance}/PID:{pid}");
        let (rank, cat, process, thread) = match source.as_str() {
            "framework" => (
                0u8,
                "cpu_op",
                format!("{group}/framework"),
                format!(
                    "TID:{}",
                    text(o.get("thread_id")).unwrap_or_else(|| "?".into())
                ),
            ),
            "neuron_rt" => (
                1,
                "neuron_rt",
                format!("{group}/neuron_rt"),
                format!(
                    "NC:{}",
                    text(o.get("nc_idx"))
                        .or_else(|| text(o.get("lnc_idx")))
                        .unwrap_or_else(|| "?".into())
                ),
            ),
            "neuron_hw" => (
                2,
                "neuron_hw",
                format!("{group}/neuron_hw"),
                format!(
                    "NC{}:{}",
                    text(o.get("nc_idx")).unwrap_or_else(|| "?".into()),
                    text(o.get("device_core_idx"))
                        .or_else(|| text(o.get("pcore_idx")))
                        .unwrap_or_else(|| "?".into())
                ),
            ),
            _ => {
                self.counts.skipped += 1;
                return;
            }
        };
        self.counts.events += 1;
        self.by_source[rank as usize] += 1;
        if !self.processes.contains(&process) {
            self.processes.push(process.clone());
        }
        // Every original field stays in the args; `exec_id` and the like
        // may sit under `args` in some versions: lifted.
        let mut args = o.clone();
        if let Some(inner) = o.get("args").and_then(|a| a.as_object()) {
            for (k, v) in inner {
                args.entry(k.clone()).or_insert_with(|| v.clone());
            }
            args.remove("args");
        }
        let args = Value::Object(args).to_string();
        let name = text(o.get("name")).unwrap_or_else(|| source.clone());
        let lane = |b: &mut Builder, s: &str| LaneId::Str(b.trace.strings.intern(s));
        let (pid, tid) = (lane(b, &process), lane(b, &thread));
        let order = b.count_event(b'X');
        let cat = b.trace.strings.intern(cat);
        b.count_category(cat);
        let track = b.track(pid, tid);
        b.max_ts_ns = b.max_ts_ns.max(ts.saturating_add(dur));
        let slice = b.trace.slices.len() as u32;
        let event = EventIn {
            name: b.trace.strings.intern(&name),
            cat,
            args: Some(args.as_bytes()),
            fields: Fields::default(),
            order,
            source: (0, 0),
        };
        b.slice(track, ts, dur, &event);
        let rec = self.recs.len() as u32;
        self.recs.push(Rec { rank, slice });
        let mut flow = |id: String| {
            let key = match id.trim().parse::<i64>() {
                Ok(v) => v as u64,
                Err(_) => {
                    let n = u64::MAX - self.flow_ids.len() as u64;
                    *self.flow_ids.entry(id).or_insert(n)
                }
            };
            self.flow_members.push((key, rec));
        };
        match o.get("flow_id") {
            Some(Value::Array(ids)) => ids.iter().filter_map(|v| text(Some(v))).for_each(&mut flow),
            Some(v) => text(Some(v)).into_iter().for_each(&mut flow),
            None => {}
        }
    }

    /// A `mem_usage` or `cpu_util` sample: counters of the instance.
    fn sample(&mut self, v: &Value, b: &mut Builder, cpu: bool) {
        let Some(o) = v.as_object() else { return };
        let Some(ts) = integer(o.get("timestamp")) else {
            return;
        };
        let instance = text(o.get("instance_id")).unwrap_or_else(|| "instance".into());
        let system = b.trace.strings.intern(&format!("{instance}/system"));
        let process = b.process(LaneId::Str(system));
        let mut series: Vec<(String, f64)> = Vec::new();
        if cpu {
            if let Some(util) = o.get("util").and_then(|v| v.as_f64()) {
                series.push(("cpu util %".into(), util));
                self.counts.cpu_util_samples += 1;
            }
        } else {
            let keys: Vec<&str> = ["usage", "percent_usage"]
                .into_iter()
                .filter(|k| o.get(*k).is_some_and(|v| v.is_number()))
                .collect();
            for k in &keys {
                let x = o.get(*k).and_then(|v| v.as_f64()).unwrap_or(0.0);
                // One value: the series is the counter's name; several: name.key.
                let name = if keys.len() == 1 {
                    "host memory".to_string()
                } else {
                    format!("host memory.{k}")
                };
                series.push((name, x));
            }
            self.counts.mem_usage_samples += 1;
        }
        for (name, x) in series {
            b.count_event(b'C');
            let id = b.trace.strings.intern(&name);
            b.counter_sample(process, id, ts, x);
            b.max_ts_ns = b.max_ts_ns.max(ts);
        }
    }

    /// Ends the file: the flow chains become Kineto ids — an `External id`
    /// per framework op, a `correlation` per runtime event — set on the
    /// events they join (framework → runtime → hardware), exactly as the
    /// linker joins a CUDA launch.
    pub(crate) fn finish(mut self, b: &mut Builder) -> Result<NeuronCounts, ImportError> {
        let held = std::mem::take(&mut self.held);
        self.read(&held, true, b)?;
        if self.at != Some(At::Done) && self.counts.events > 0 {
            b.diag.truncated = true;
            let events = self.counts.events;
            b.diag.warn(warnings::TRUNCATED, || {
                format!("cut off after {events} events")
            });
        }
        for p in &self.processes {
            b.count_event(b'M');
            let id = b.trace.strings.intern(p);
            b.set_process_name(LaneId::Str(id), id);
        }
        // Each flow id joins the events carrying it, in stack then time order.
        self.flow_members.sort_unstable();
        let mut edges: Vec<(u32, u32)> = Vec::new();
        for members in self.flow_members.chunk_by(|a, b| a.0 == b.0) {
            let mut m: Vec<u32> = members.iter().map(|&(_, r)| r).collect();
            let ts = |r: u32| b.trace.slices.start_ns[self.recs[r as usize].slice as usize];
            m.sort_by_key(|&r| (self.recs[r as usize].rank, ts(r), r));
            m.dedup();
            for w in m.windows(2) {
                if self.recs[w[0] as usize].rank < self.recs[w[1] as usize].rank {
                    edges.push((w[0], w[1]));
                }
            }
        }
        edges.sort_unstable();
        edges.dedup();
        self.counts.flow_links = edges.len() as u64;
        let n = self.recs.len();
        let mut id_of = vec![0i64; n];
        let mut next_id = 1i64;
        for (k, r) in self.recs.iter().enumerate() {
            if r.rank < 2 {
                id_of[k] = next_id;
                next_id += 1;
            }
        }
        let mut ext_of: Vec<Option<i64>> = vec![None; n];
        let mut corr_of: Vec<Option<i64>> = vec![None; n];
        for &(a, z) in edges
            .iter()
            .filter(|(a, _)| self.recs[*a as usize].rank == 0)
        {
            ext_of[z as usize] = Some(id_of[a as usize]);
        }
        for &(a, z) in edges
            .iter()
            .filter(|(a, _)| self.recs[*a as usize].rank == 1)
        {
            corr_of[z as usize] = Some(id_of[a as usize]);
            if let Some(x) = ext_of[a as usize] {
                ext_of[z as usize].get_or_insert(x);
            }
        }
        let s = &mut b.trace.slices;
        for (k, r) in self.recs.iter().enumerate() {
            let i = r.slice as usize;
            match r.rank {
                0 => s.external_id[i] = id_of[k],
                1 => {
                    if let Some(x) = ext_of[k] {
                        s.external_id[i] = x;
                        s.correlation[i] = id_of[k];
                    }
                }
                _ => {
                    if let Some(x) = ext_of[k] {
                        s.external_id[i] = x;
                    }
                    if let Some(c) = corr_of[k] {
                        s.correlation[i] = c;
                    }
                }
            }
        }
        let names = ["framework", "neuron_rt", "neuron_hw"];
        self.counts.by_source = names
            .iter()
            .zip(self.by_source)
            .filter(|(_, n)| *n > 0)
            .map(|(s, n)| (s.to_string(), n))
            .collect();
        self.counts.by_source.sort();
        Ok(self.counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trace_events_spelling_and_numeric_ids_are_read_too() {
        let json = br#"{"trace_events": [
          {"name": "op", "trace_event_source": "framework", "thread_id": 1, "timestamp": 5000, "duration": 100,
           "flow_id": [9], "instance_id": "i", "process_id": 2},
          {"name": "nc_exec_running", "trace_event_source": "neuron_hw", "nc_idx": 0, "device_core_idx": 0,
           "timestamp": 5050, "duration": 7, "flow_id": 9, "exec_id": 3, "instance_id": "i", "process_id": 2}
        ], "warnings": ["plain string warning"]}"#;
        assert!(looks_like(json));
        let t = crate::import_bytes(json, crate::ImportOptions::default()).unwrap();
        assert_eq!(t.slices.len(), 2);
        assert!(t.diagnostics.time_unit_decision.contains("2 events"));
        assert!(t.diagnostics.time_unit_decision.contains("1 flow links"));
        assert_eq!(t.diagnostics.warning_count("neuron_profile_warning"), 1);
        // A hardware event reached straight from an op keeps its External id.
        let hw = (0..2)
            .find(|&i| t.slice_name(i) == "nc_exec_running")
            .unwrap();
        assert_eq!((t.slices.start_ns[hw], t.slices.dur_ns[hw]), (5050, 7));
        assert_eq!(t.slices.external_id[hw], 1);
        assert_eq!(
            t.links.op[hw],
            (0..2).find(|&i| t.slice_name(i) == "op").unwrap() as u32
        );
        assert!(!looks_like(
            br#"{"traceEvents": [{"trace_event_source": 1}]}"#
        ));
    }
}

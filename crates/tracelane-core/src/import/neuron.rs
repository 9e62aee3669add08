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

use serde_json::{json, Map, Value};

use super::scan::ns_to_micros_text as micros;
use crate::error::ImportError;

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

fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn integer(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f.round() as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// One event's JSON text: `fields` (an object) with `ts` (and `dur`)
/// spliced in as exact decimals.
fn event_text(ts_ns: i64, dur_ns: Option<i64>, fields: &Value) -> String {
    let body = fields.to_string();
    let rest = body.strip_prefix('{').unwrap_or("}");
    let sep = if rest == "}" { "" } else { "," };
    match dur_ns {
        Some(d) => format!(
            "{{\"ts\":{},\"dur\":{}{sep}{rest}",
            micros(ts_ns),
            micros(d)
        ),
        None => format!("{{\"ts\":{}{sep}{rest}", micros(ts_ns)),
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

/// Translates a system profile into Chrome trace JSON.
pub fn to_chrome(json_bytes: &[u8]) -> Result<(Vec<u8>, NeuronCounts), ImportError> {
    let root: Value = serde_json::from_slice(json_bytes).map_err(|e| ImportError::Syntax {
        offset: 0,
        message: format!("{e} (reading a Neuron Explorer system profile)"),
    })?;
    let (events, obj) = match &root {
        Value::Array(list) => (list.clone(), Map::new()),
        Value::Object(o) => (
            o.get("trace_event")
                .or_else(|| o.get("trace_events"))
                .and_then(|v| v.as_array())
                .cloned()
                .unwrap_or_default(),
            o.clone(),
        ),
        _ => {
            return Err(ImportError::NotATrace {
                reason: "a Neuron system profile must be an object or a list of events".into(),
            })
        }
    };
    let mut counts = NeuronCounts::default();
    // (ts, dur, fields) of each translated event; fields get ids added below.
    let mut out: Vec<(i64, Option<i64>, Value)> = Vec::new();
    let mut by_source: HashMap<String, u64> = HashMap::new();
    let mut processes: Vec<String> = Vec::new();

    struct Ev {
        source: String,
        ts: i64,
        flows: Vec<String>,
        out_index: usize,
    }
    let mut evs: Vec<Ev> = Vec::new();
    for e in &events {
        let Some(o) = e.as_object() else {
            counts.skipped += 1;
            continue;
        };
        let source = text(o.get("trace_event_source")).unwrap_or_default();
        let unit = scale(o.get("timestamp_unit").and_then(|u| u.as_str()));
        let Some(ts) = integer(o.get("timestamp")) else {
            counts.skipped += 1;
            continue;
        };
        let ts = ts.saturating_mul(unit);
        let dur = integer(o.get("duration")).unwrap_or(0).saturating_mul(unit);
        let instance = text(o.get("instance_id")).unwrap_or_else(|| "instance".into());
        let pid = text(o.get("process_id")).unwrap_or_else(|| "?".into());
        let group = format!("{instance}/PID:{pid}");
        let (cat, process, thread) = match source.as_str() {
            "framework" => (
                "cpu_op",
                format!("{group}/framework"),
                format!(
                    "TID:{}",
                    text(o.get("thread_id")).unwrap_or_else(|| "?".into())
                ),
            ),
            "neuron_rt" => (
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
                counts.skipped += 1;
                continue;
            }
        };
        counts.events += 1;
        *by_source.entry(source.clone()).or_default() += 1;
        if !processes.contains(&process) {
            processes.push(process.clone());
        }
        let mut args = o.clone();
        // `exec_id` may sit under `args` in some versions: lift it.
        if let Some(inner) = o.get("args").and_then(|a| a.as_object()) {
            for (k, v) in inner {
                args.entry(k.clone()).or_insert_with(|| v.clone());
            }
            args.remove("args");
        }
        let flows: Vec<String> = match o.get("flow_id") {
            Some(Value::Array(ids)) => ids.iter().filter_map(|v| text(Some(v))).collect(),
            Some(v) => text(Some(v)).into_iter().collect(),
            None => Vec::new(),
        };
        let name = text(o.get("name")).unwrap_or_else(|| source.clone());
        out.push((
            ts,
            Some(dur.max(0)),
            json!({
                "ph": "X", "cat": cat, "name": name, "pid": process, "tid": thread,
                "args": Value::Object(args),
            }),
        ));
        evs.push(Ev {
            source,
            ts,
            flows,
            out_index: out.len() - 1,
        });
    }

    // Flow chains: each id joins the events carrying it, in time order.
    let mut by_flow: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, e) in evs.iter().enumerate() {
        for f in &e.flows {
            by_flow.entry(f.as_str()).or_default().push(k);
        }
    }
    let rank = |s: &str| match s {
        "framework" => 0,
        "neuron_rt" => 1,
        _ => 2,
    };
    // (from, to) pairs down the stack: framework → runtime → hardware.
    let mut edges: Vec<(usize, usize)> = Vec::new();
    for members in by_flow.values() {
        let mut m = members.clone();
        m.sort_by_key(|&k| (rank(&evs[k].source), evs[k].ts, k));
        for w in m.windows(2) {
            if rank(&evs[w[0]].source) < rank(&evs[w[1]].source) {
                edges.push((w[0], w[1]));
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    counts.flow_links = edges.len() as u64;
    // Kineto ids: External id per framework op, correlation per runtime event.
    let mut external: HashMap<usize, i64> = HashMap::new();
    let mut correlation: HashMap<usize, i64> = HashMap::new();
    let mut next_id = 1i64;
    for (k, e) in evs.iter().enumerate() {
        match e.source.as_str() {
            "framework" => {
                external.insert(k, next_id);
                next_id += 1;
            }
            "neuron_rt" => {
                correlation.insert(k, next_id);
                next_id += 1;
            }
            _ => {}
        }
    }
    let mut ext_of: HashMap<usize, i64> = HashMap::new();
    let mut corr_of: HashMap<usize, i64> = HashMap::new();
    for &(a, b) in edges.iter().filter(|(a, _)| evs[*a].source == "framework") {
        ext_of.insert(b, external[&a]);
    }
    for &(a, b) in edges.iter().filter(|(a, _)| evs[*a].source == "neuron_rt") {
        corr_of.insert(b, correlation[&a]);
        if let Some(&x) = ext_of.get(&a) {
            ext_of.entry(b).or_insert(x);
        }
    }
    // A hardware event reached straight from a framework op (no runtime
    // event between) keeps that op's External id.
    for (k, e) in evs.iter().enumerate() {
        let args = out[e.out_index].2["args"]
            .as_object_mut()
            .expect("args is an object");
        match e.source.as_str() {
            "framework" => {
                args.insert("External id".into(), json!(external[&k]));
            }
            "neuron_rt" => {
                if let Some(x) = ext_of.get(&k) {
                    args.insert("External id".into(), json!(x));
                    args.insert("correlation".into(), json!(correlation[&k]));
                }
            }
            _ => {
                if let Some(x) = ext_of.get(&k) {
                    args.insert("External id".into(), json!(x));
                }
                if let Some(c) = corr_of.get(&k) {
                    args.insert("correlation".into(), json!(c));
                }
            }
        }
    }

    // Counters.
    let samples = |key: &str| {
        obj.get(key)
            .and_then(|v| v.as_array())
            .cloned()
            .unwrap_or_default()
    };
    for s in samples("mem_usage") {
        let Some(o) = s.as_object() else { continue };
        let Some(ts) = integer(o.get("timestamp")) else {
            continue;
        };
        let instance = text(o.get("instance_id")).unwrap_or_else(|| "instance".into());
        let mut values = Map::new();
        for k in ["usage", "percent_usage"] {
            if let Some(v) = o.get(k).filter(|v| v.is_number()) {
                values.insert(k.into(), v.clone());
            }
        }
        counts.mem_usage_samples += 1;
        out.push((
            ts,
            None,
            json!({"ph": "C", "name": "host memory", "pid": format!("{instance}/system"), "tid": 0, "args": values}),
        ));
    }
    for s in samples("cpu_util") {
        let Some(o) = s.as_object() else { continue };
        let Some(ts) = integer(o.get("timestamp")) else {
            continue;
        };
        let instance = text(o.get("instance_id")).unwrap_or_else(|| "instance".into());
        let cpu = text(o.get("cpu_id")).unwrap_or_else(|| "all".into());
        let Some(util) = o.get("util").filter(|v| v.is_number()) else {
            continue;
        };
        counts.cpu_util_samples += 1;
        out.push((
            ts,
            None,
            json!({"ph": "C", "name": "cpu util %", "pid": format!("{instance}/system"), "tid": 0, "args": {format!("cpu {cpu}"): util}}),
        ));
    }
    for w in obj
        .get("warnings")
        .and_then(|v| v.as_array())
        .cloned()
        .unwrap_or_default()
    {
        let msg = match &w {
            Value::String(s) => s.clone(),
            Value::Object(o) => text(o.get("message")).unwrap_or_else(|| w.to_string()),
            other => other.to_string(),
        };
        counts.warnings.push(msg);
    }
    let mut text = String::from("{\"traceEvents\":[\n");
    for p in &processes {
        text.push_str(
            &json!({"ph": "M", "name": "process_name", "pid": p, "tid": 0, "args": {"name": p}})
                .to_string(),
        );
        text.push_str(",\n");
    }
    for (k, (ts, dur, fields)) in out.iter().enumerate() {
        if k > 0 {
            text.push_str(",\n");
        }
        text.push_str(&event_text(*ts, *dur, fields));
    }
    text.push_str("\n]}");
    let mut by_source: Vec<(String, u64)> = by_source.into_iter().collect();
    by_source.sort();
    counts.by_source = by_source;
    let text = text.into_bytes();
    Ok((text, counts))
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
        let (text, counts) = to_chrome(json).unwrap();
        assert_eq!(counts.events, 2);
        assert_eq!(counts.flow_links, 1);
        assert_eq!(counts.warnings, ["plain string warning"]);
        let text = String::from_utf8(text).unwrap();
        // A hardware event reached straight from an op keeps its External id.
        assert!(text.contains(r#""ts":5.050,"dur":0.007"#), "{text}");
        assert!(text.contains(r#""External id":1"#), "{text}");
        assert!(!looks_like(
            br#"{"traceEvents": [{"trace_event_source": 1}]}"#
        ));
    }
}

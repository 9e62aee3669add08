//! rocprofv3 records and tables into the model.

use serde_json::Value;

use crate::model::LaneId;

use super::super::builder::{Builder, EventIn, Fields};
use super::process::{Agent, Counts, Process};

/// An `agents[]` entry: type 2 is a GPU, its index `gpu_index` (older
/// outputs: `logical_node_type_id`).
pub(super) fn agent(v: &Value, p: &mut Process) {
    let Some(handle) = v["id"]["handle"].as_u64() else {
        return;
    };
    let gpu = v["type"].as_i64() == Some(2);
    let index = v["gpu_index"]
        .as_i64()
        .or_else(|| v["logical_node_type_id"].as_i64())
        .unwrap_or(0);
    let name = v["product_name"]
        .as_str()
        .filter(|s| !s.is_empty())
        .or_else(|| v["name"].as_str())
        .unwrap_or("")
        .to_string();
    p.agents.insert(handle, Agent { gpu, index, name });
}

/// A `kernel_symbols[]` entry: its `formatted_kernel_name` (Kineto's name
/// for a ROCm kernel), else its `kernel_name`.
pub(super) fn symbol(v: &Value, p: &mut Process, b: &mut Builder) {
    let Some(id) = v["kernel_id"].as_u64() else {
        return;
    };
    let name = [
        "formatted_kernel_name",
        "demangled_kernel_name",
        "kernel_name",
    ]
    .iter()
    .filter_map(|k| v[*k].as_str())
    .find(|s| !s.is_empty())
    .unwrap_or("");
    let name = b.trace.strings.intern(name);
    p.kernels.insert(id, name);
}

/// Where a record goes, by the list it sits in.
enum Place {
    Host(&'static str),
    Kernel,
    Copy,
}

pub(super) fn record(kind: &str, bytes: &[u8], p: &mut Process, c: &mut Counts, b: &mut Builder) {
    let place = match kind {
        "hip_api" => Place::Host("cuda_runtime"),
        "hsa_api" => Place::Host("hsa_api"),
        "marker_api" => Place::Host("user_annotation"),
        "rccl_api" => Place::Host("user_annotation"),
        "kernel_dispatch" => Place::Kernel,
        "memory_copy" => Place::Copy,
        other => {
            *c.other.entry(other.to_string()).or_insert(0) += 1;
            return;
        }
    };
    let Ok(v) = serde_json::from_slice::<Value>(bytes) else {
        c.bad += 1;
        return;
    };
    let (Some(start), Some(end)) = (v["start_timestamp"].as_i64(), v["end_timestamp"].as_i64())
    else {
        c.bad += 1;
        return;
    };
    c.records += 1;
    let corr = v["correlation_id"]["internal"].as_i64();
    let op_name = |p: &Process| -> String {
        let k = v["kind"].as_u64().unwrap_or(u64::MAX) as usize;
        let o = v["operation"].as_u64().unwrap_or(u64::MAX) as usize;
        p.kinds
            .get(k)
            .and_then(|(_, ops)| ops.get(o))
            .cloned()
            .unwrap_or_else(|| format!("{kind} operation {o}"))
    };
    let order = b.count_event(b'X');
    let dur = (end - start).max(0);
    match place {
        Place::Host(cat) => {
            let mut name = op_name(p);
            if kind == "marker_api" {
                if let Some(m) = corr.and_then(|k| p.markers.get(&(k as u64))) {
                    name = m.clone();
                }
            }
            let pid = LaneId::Int(p.pid);
            let tid = LaneId::Int(v["thread_id"].as_i64().unwrap_or(0));
            let track = b.track(pid, tid);
            host_names(p, b);
            let name = b.trace.strings.intern(&name);
            let cat = b.trace.strings.intern(cat);
            b.count_category(cat);
            let fields = Fields {
                correlation: (kind == "hip_api").then_some(corr).flatten(),
                ..Fields::default()
            };
            let e = EventIn {
                name,
                cat,
                args: Some(bytes),
                fields,
                order,
                source: (0, 0),
            };
            b.slice(track, start, dur, &e);
        }
        Place::Kernel | Place::Copy => {
            let info = &v["dispatch_info"];
            let agent_key = if matches!(place, Place::Kernel) {
                info["agent_id"]["handle"].as_u64()
            } else {
                // A copy sits on the GPU it moves data to or from.
                let dst = v["dst_agent_id"]["handle"].as_u64();
                let src = v["src_agent_id"]["handle"].as_u64();
                dst.filter(|h| p.agents.get(h).is_some_and(|a| a.gpu))
                    .or(src)
            };
            let agent = agent_key
                .and_then(|h| p.agents.get(&h))
                .cloned()
                .unwrap_or_default();
            let gpu = gpu_process(&agent, b);
            let (tid, lane, name, cat) = if matches!(place, Place::Kernel) {
                let queue = info["queue_id"]["handle"].as_u64().unwrap_or(0);
                let next = p.queues.len();
                let k = *p
                    .queues
                    .entry((agent_key.unwrap_or(0), queue))
                    .or_insert(next);
                let kernel = info["kernel_id"].as_u64().unwrap_or(u64::MAX);
                let name = match p.kernels.get(&kernel) {
                    Some(&n) => n,
                    None => {
                        c.unnamed += 1;
                        b.trace.strings.intern(&format!("kernel_id {kernel}"))
                    }
                };
                (queue as i64, format!("queue {k}"), name, "kernel")
            } else {
                let name = b.trace.strings.intern(&op_name(p));
                (-1, "copies".to_string(), name, "gpu_memcpy")
            };
            let track = b.track(gpu, LaneId::Int(tid));
            let lane = b.trace.strings.intern(&lane);
            b.set_thread_name(gpu, LaneId::Int(tid), lane);
            let cat = b.trace.strings.intern(cat);
            b.count_category(cat);
            let e = EventIn {
                name,
                cat,
                args: Some(bytes),
                fields: Fields {
                    correlation: corr,
                    device: Some(agent.index),
                    stream: Some(tid),
                    ..Fields::default()
                },
                order,
                source: (0, 0),
            };
            b.slice(track, start, dur, &e);
        }
    }
}

/// A GPU agent's process (`GPU N`, named by its product), where its
/// kernels, copies and allocated bytes go.
pub(super) fn gpu_process(agent: &Agent, b: &mut Builder) -> LaneId {
    let gpu = LaneId::Str(b.trace.strings.intern(&format!("GPU {}", agent.index)));
    let label = b.trace.strings.intern(&format!("GPU {}", agent.index));
    b.set_process_labels(gpu, label);
    if !agent.name.is_empty() {
        let n = b
            .trace
            .strings
            .intern(&format!("GPU {} ({})", agent.index, agent.name));
        b.set_process_name(gpu, n);
    }
    gpu
}

/// The host process's name, once: `rocprofv3 pid N on HOST`.
pub(super) fn host_names(p: &Process, b: &mut Builder) {
    let pid = LaneId::Int(p.pid);
    let proc = b.process(pid);
    if b.trace.processes[proc.0 as usize].name.is_none() {
        let n = b
            .trace
            .strings
            .intern(&format!("pid {} on {}", p.pid, p.hostname));
        b.set_process_name(pid, n);
        let l = b.trace.strings.intern("CPU");
        b.set_process_labels(pid, l);
    }
}

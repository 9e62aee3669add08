//! What the Neuron runtime's own events say about why a Neuron run is
//! slow: submission and queueing per execution, the host blocked on the
//! device, host↔device copies with their bytes and bandwidth, model
//! switches, collectives and their barriers, allocation churn, clock
//! alignment (`timestamp_sync_point`) and HBM spill (`device_mem_usage`).
//!
//! Each family of events, with what the Neuron docs say it means, is one
//! [`Family`]; an event belongs to a family by its name. Times are the
//! events' own durations (runtime events on the host, hardware events on
//! the device), counted for the events that start inside the scope.

use serde::{Deserialize, Serialize};

use super::scope::{Scope, ScopeError};
use crate::category::Category;
use crate::model::Trace;

/// At most this many slices are listed per family (the longest).
pub const MAX_SLICES: usize = 64;

/// A family of runtime events: its id, title, what the docs say it means,
/// and the event names in it.
pub struct Family {
    pub id: &'static str,
    pub title: &'static str,
    pub meaning: &'static str,
    pub names: &'static [&'static str],
}

/// The families, in the order the report lists them.
pub const FAMILIES: &[Family] = &[
    Family {
        id: "submit",
        title: "Submission",
        meaning: "the host submitting an execution: nrt_model_submit, and nrta_execute_schedule, the async API's enqueue that returns its sequence number (Neuron Runtime async API overview); its time per execution is host overhead",
        names: &["nrt_model_submit", "nrta_execute_schedule"],
    },
    Family {
        id: "execute",
        title: "Synchronous execute",
        meaning: "nrt_execute: the synchronous API, returning after the execution ends (Neuron Runtime performance tips) — the host waits the whole execution",
        names: &["nrt_execute"],
    },
    Family {
        id: "queue_wait",
        title: "Queue full",
        meaning: "nrt_async_sema_wait: waiting for a free async request slot — the runtime's queue of in-flight executions is full (runtime release notes: \"Execution Queue Full\")",
        names: &["nrt_async_sema_wait"],
    },
    Family {
        id: "host_blocked",
        title: "Host blocked on the device",
        meaning: "the execution's stages on the host: kbl_exec_pre / kbl_exec_post hooks (kbl_exec_pre rebuilds the DMA I/O ring unless NEURON_RT_IO_RING_CACHE_SIZE > 1), kmgr_exec_core dispatch, kbl_exec_wait — \"long durations = host blocked on device\" (Neuron Explorer glossary) — and tensor_block_while_exec",
        names: &[
            "kbl_exec_pre",
            "kbl_exec_post",
            "kbl_exec_wait",
            "kbl_exec_core",
            "kmgr_exec_core",
            "tensor_block_while_exec",
        ],
    },
    Family {
        id: "copies",
        title: "Host↔device copies",
        meaning: "dmem_buf_copyin / dmem_buf_copyout (host→device, device→host buffer copies; Neuron Explorer derives its host_to_device / device_to_host bandwidth from them) and nrt_tensor_write / nrt_tensor_read: PCIe-bound; a copy-out in the middle of an execution is a CPU fallback",
        names: &[
            "dmem_buf_copyin",
            "dmem_buf_copyout",
            "nrt_tensor_write",
            "nrt_tensor_read",
        ],
    },
    Family {
        id: "model_switch",
        title: "Model switches",
        meaning: "nc_model_switch / nrt_model_switch: a NEFF swapped onto a NeuronCore before it runs (Neuron Explorer's hardware events); many small graphs run eagerly switch often",
        names: &["nc_model_switch", "nrt_model_switch"],
    },
    Family {
        id: "collective",
        title: "Collectives",
        meaning: "cc_running: a collective-communication execution on the device (Neuron Profiler hardware events)",
        names: &["cc_running"],
    },
    Family {
        id: "barrier",
        title: "Collective barriers",
        meaning: "cc_exec_barrier (on the device) and enc_barrier (the host's cross-rank rendezvous): time spent waiting for the other ranks",
        names: &["cc_exec_barrier", "enc_barrier"],
    },
    Family {
        id: "allocation",
        title: "Allocation",
        meaning: "nrt_dma_mem_alloc / _dealloc, nrt_tensor_allocate / _free: the HBM allocator; eager execution churns it (thousands of allocations where a compiled graph makes a few)",
        names: &[
            "nrt_dma_mem_alloc",
            "nrt_dma_mem_dealloc",
            "nrt_tensor_allocate",
            "nrt_tensor_free",
        ],
    },
    Family {
        id: "load",
        title: "Loading",
        meaning: "nrt_load, nrt_load_collectives: loading a model or its collectives; load time, not steady-state time",
        names: &["nrt_load", "nrt_load_collectives"],
    },
];

/// One event name of a family.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NameStats {
    pub name: String,
    pub count: u64,
    pub total_ns: i64,
    pub max_ns: i64,
    /// Bytes moved (copies: their `size`), where the events say.
    pub bytes: u64,
    /// `bytes` over the time of the events that gave a size, GB/s.
    pub gbps: Option<f64>,
}

/// What one family's events add up to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FamilyReport {
    pub id: String,
    pub title: String,
    pub meaning: String,
    pub names: Vec<NameStats>,
    pub count: u64,
    pub total_ns: i64,
    /// `total_ns` per hardware execution, where there are executions.
    pub per_execution_ns: Option<f64>,
    /// The longest events (at most [`MAX_SLICES`]).
    pub slices: Vec<u32>,
    /// Their time ranges, the same order.
    pub ranges: Vec<(i64, i64)>,
    pub slice_count: usize,
}

/// The device's clock against the host's, from `timestamp_sync_point`
/// pairs (`cpu_timestamp_ns`, `nc_timestamp_ns`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClockAlignment {
    pub points: u64,
    /// Host minus device clock, at the first and last point.
    pub first_offset_ns: i64,
    pub last_offset_ns: i64,
    /// How far the offset moved over the capture, per million (parts per
    /// million of host time between the first and last point).
    pub drift_ppm: Option<f64>,
}

/// One HBM's spill, from `device_mem_usage`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HbmSpill {
    pub hbm: String,
    /// Peak `dram_spill_bytes`: the SBUF working set evicted to HBM.
    pub dram_spill_bytes: f64,
    /// Peak `dma_rings_spill_bytes`: the DMA rings that move it.
    pub dma_rings_spill_bytes: f64,
    /// Peak of the HBM's use in all (`total_bytes`, else the categories').
    pub peak_bytes: f64,
    pub capacity_bytes: Option<i64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NeuronRuntimeReport {
    pub scope: String,
    /// Hardware executions (`nc_exec_running`, each logical one once).
    pub executions: u64,
    pub execution_ns: i64,
    /// Families with events in the scope, in [`FAMILIES`]' order.
    pub families: Vec<FamilyReport>,
    pub clock: Option<ClockAlignment>,
    pub spill: Vec<HbmSpill>,
    /// The counters of a summary JSON read beside the profile.
    pub summaries: Vec<crate::neuron_system::ProfileSummary>,
    /// Every execution's time range, for bounding by the critical path
    /// (not sent to the page).
    #[serde(skip)]
    pub execution_ranges: Vec<(i64, i64)>,
}

impl NeuronRuntimeReport {
    pub fn family(&self, id: &str) -> Option<&FamilyReport> {
        self.families.iter().find(|f| f.id == id)
    }
}

/// Whether a trace holds Neuron runtime or hardware events, or a Neuron
/// profile's tables (HBM usage, a summary JSON).
pub fn has_neuron_events(t: &Trace) -> bool {
    if t.neuron_system.is_some() {
        return true;
    }
    let ids: Vec<_> = ["neuron_rt", "neuron_hw", "neuron_hw_marker"]
        .iter()
        .filter_map(|c| t.strings.lookup(c))
        .collect();
    !ids.is_empty()
        && (t.slices.cat.iter().any(|c| ids.contains(c))
            || t.instants.cat.iter().any(|c| ids.contains(c)))
}

/// The Neuron runtime's events of one scope, by family.
pub fn neuron_runtime(t: &Trace, scope: &Scope) -> Result<NeuronRuntimeReport, ScopeError> {
    let windows: Vec<(i64, i64)> = scope
        .occurrences(t)?
        .iter()
        .map(|o| (o.start_ns, o.end_ns))
        .collect();
    let whole = *scope == Scope::Whole;
    let inside = |ns: i64| whole || windows.iter().any(|&(a, b)| ns >= a && ns < b);
    let s = &t.slices;
    let family_of = |name: &str| FAMILIES.iter().position(|f| f.names.contains(&name));
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); FAMILIES.len()];
    let (mut executions, mut execution_ns) = (0u64, 0i64);
    let mut execution_ranges = Vec::new();
    for i in 0..s.len() {
        if !inside(s.start_ns[i]) {
            continue;
        }
        let name = t.slice_name(i);
        if name == "nc_exec_running" && s.category[i] == Category::Kernel {
            executions += 1;
            execution_ns += s.dur_ns[i];
            execution_ranges.push((s.start_ns[i], s.end_ns(i)));
        }
        if let Some(f) = family_of(name) {
            if matches!(s.category[i], Category::Runtime | Category::Kernel) {
                members[f].push(i);
            }
        }
    }
    let mut families = Vec::new();
    for (f, list) in FAMILIES.iter().zip(members) {
        if list.is_empty() {
            continue;
        }
        families.push(family_report(t, f, list, executions));
    }
    Ok(NeuronRuntimeReport {
        scope: scope.label(),
        executions,
        execution_ns,
        families,
        clock: clock(t, &inside),
        spill: spill(t),
        summaries: t
            .neuron_system
            .as_ref()
            .map(|n| n.summaries.clone())
            .unwrap_or_default(),
        execution_ranges,
    })
}

fn family_report(t: &Trace, f: &Family, mut list: Vec<usize>, executions: u64) -> FamilyReport {
    let s = &t.slices;
    let mut names: Vec<NameStats> = Vec::new();
    let mut timed_bytes: Vec<(String, i64)> = Vec::new();
    for &i in &list {
        let name = t.slice_name(i);
        let k = match names.iter().position(|n| n.name == name) {
            Some(k) => k,
            None => {
                names.push(NameStats {
                    name: name.to_string(),
                    ..NameStats::default()
                });
                timed_bytes.push((name.to_string(), 0));
                names.len() - 1
            }
        };
        let n = &mut names[k];
        n.count += 1;
        n.total_ns += s.dur_ns[i];
        n.max_ns = n.max_ns.max(s.dur_ns[i]);
        if f.id == "copies" {
            if let Some(size) = size_of(&t.slice_args_json(i)) {
                n.bytes += size;
                timed_bytes[k].1 += s.dur_ns[i];
            }
        }
    }
    for (n, (_, ns)) in names.iter_mut().zip(&timed_bytes) {
        if n.bytes > 0 && *ns > 0 {
            n.gbps = Some(n.bytes as f64 / *ns as f64);
        }
    }
    let total_ns: i64 = names.iter().map(|n| n.total_ns).sum();
    let count = list.len() as u64;
    crate::sort::by_key(&mut list, &|&i| (std::cmp::Reverse(s.dur_ns[i]), i));
    let slice_count = list.len();
    list.truncate(MAX_SLICES);
    FamilyReport {
        id: f.id.into(),
        title: f.title.into(),
        meaning: f.meaning.into(),
        names,
        count,
        total_ns,
        per_execution_ns: (executions > 0).then(|| total_ns as f64 / executions as f64),
        ranges: list.iter().map(|&i| (s.start_ns[i], s.end_ns(i))).collect(),
        slices: list.into_iter().map(|i| i as u32).collect(),
        slice_count,
    }
}

/// A copy's bytes: its `size` field (a number, or a string holding one).
fn size_of(args: &str) -> Option<u64> {
    if !args.contains("\"size\"") {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(args).ok()?;
    match v.get("size")? {
        serde_json::Value::Number(n) => n.as_u64(),
        serde_json::Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The clocks' offset from the `timestamp_sync_point` instants in scope.
fn clock(t: &Trace, inside: &dyn Fn(i64) -> bool) -> Option<ClockAlignment> {
    let id = t.strings.lookup("timestamp_sync_point")?;
    let mut points: Vec<(i64, i64)> = Vec::new();
    for k in 0..t.instants.ts_ns.len() {
        if t.instants.name[k] != id || !inside(t.instants.ts_ns[k]) {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&t.instant_args_json(k)).ok()?;
        let int = |key: &str| match v.get(key)? {
            serde_json::Value::Number(n) => n.as_i64(),
            serde_json::Value::String(s) => s.trim().parse().ok(),
            _ => None,
        };
        if let (Some(cpu), Some(nc)) = (int("cpu_timestamp_ns"), int("nc_timestamp_ns")) {
            points.push((cpu, cpu - nc));
        }
    }
    points.sort_unstable();
    let (first, last) = (*points.first()?, *points.last()?);
    let span = last.0 - first.0;
    Some(ClockAlignment {
        points: points.len() as u64,
        first_offset_ns: first.1,
        last_offset_ns: last.1,
        drift_ppm: (span > 0).then(|| (last.1 - first.1) as f64 / span as f64 * 1e6),
    })
}

fn spill(t: &Trace) -> Vec<HbmSpill> {
    let Some(sys) = t.neuron_system.as_ref() else {
        return Vec::new();
    };
    sys.hbm
        .iter()
        .map(|h| HbmSpill {
            hbm: format!("HBM {} of device {}", h.hbm, h.device),
            dram_spill_bytes: h.peak("dram_spill"),
            dma_rings_spill_bytes: h.peak("dma_rings_spill"),
            peak_bytes: h
                .peak_total
                .unwrap_or_else(|| h.peak_bytes.iter().map(|(_, v)| v).sum()),
            capacity_bytes: sys.hbm_capacity_bytes,
        })
        .collect()
}

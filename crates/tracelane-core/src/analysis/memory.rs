//! Memory over time from the profiler's `[memory]` records
//! (`profile_memory=True`), per device: allocated and reserved (the
//! records' `Total Allocated` / `Total Reserved`), the peak, what is live
//! at the peak or at any moment — each allocation paired with its free by
//! address, as HTA's `trace_memory_analysis` pairs them — grouped by the
//! op that allocated it and its `nn.Module`, what is never freed, and each
//! op's allocation churn.
//!
//! What a trace cannot say is counted, not guessed: frees of blocks
//! allocated before the capture, and the bytes live at a moment that no
//! allocation in the trace explains (allocated before it started).

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::memory_categories::{join, Joined, MemoryCategories};
use super::memory_events::{memory_records, MemoryRecord};
use super::scope::{Scope, ScopeError};
use crate::category::Category;
use crate::memory_snapshot::report::SnapshotReport;
use crate::memory_timeline::CATEGORIES;
use crate::model::{Trace, NO_SLICE};

/// The moment whose live allocations are listed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum At {
    /// Each device's peak of allocated bytes.
    Peak,
    /// This time, ns on the trace's clock.
    Time(i64),
}

/// Live allocations of one op (and module): what holds the memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LiveGroup {
    /// The outermost CPU op around the allocation (what the user called),
    /// else its innermost annotation, else `(no op)`.
    pub op: String,
    /// The innermost `nn.Module` around it (`with_stack` captures), if any.
    pub module: Option<String>,
    /// The innermost Python source frame around it (not a module, not a
    /// `<built-in …>` C function): the line that called the op
    /// (`with_stack` captures), if any.
    pub python: Option<String>,
    /// PyTorch's category of the allocation (at its creation), when a raw
    /// memory timeline was read beside the trace.
    pub category: Option<String>,
    pub bytes: i64,
    pub count: u64,
}

/// Allocations per op over the scope: how often and how much.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Churn {
    pub op: String,
    pub allocations: u64,
    pub bytes: i64,
}

/// One device's memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceMemory {
    /// `CPU`, `CUDA:0`, `HIP:1`, …
    pub device: String,
    pub records: u64,
    pub peak_allocated_bytes: i64,
    /// µs from the trace's start.
    pub peak_at_us: f64,
    /// The same moment on the trace's clock (ns), for the timeline.
    pub peak_ns: i64,
    pub peak_reserved_bytes: i64,
    /// The records carry `Total Allocated`; without it the curve is the
    /// running sum of their bytes from the capture's start.
    pub totals_recorded: bool,
    /// What is live at the peak, largest first.
    pub live_at_peak: Vec<LiveGroup>,
    /// At the peak, bytes no allocation in the trace explains (allocated
    /// before the capture and still held).
    pub before_trace_at_peak_bytes: i64,
    /// With `At::Time`: the moment, what was allocated then and live then.
    pub at_us: Option<f64>,
    pub allocated_at_bytes: Option<i64>,
    pub live_at: Option<Vec<LiveGroup>>,
    /// Allocated in the trace, not freed by its end.
    pub never_freed_bytes: i64,
    pub never_freed_count: u64,
    /// Frees of addresses the trace never saw allocated.
    pub frees_of_earlier_blocks: u64,
    /// Allocations per op, most bytes first.
    pub churn: Vec<Churn>,
    /// By PyTorch's categories, when a raw memory timeline read beside the
    /// trace joins this device's records.
    pub categories: Option<MemoryCategories>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryReport {
    /// The trace's start on its clock (ns): the `_us` figures count from it.
    pub start_ns: i64,
    pub devices: Vec<DeviceMemory>,
    /// Neuron HBM usage from a system profile's `device_mem_usage`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hbm: Vec<super::memory_hbm::HbmMemory>,
    /// The allocator snapshot opened with the trace (or alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<SnapshotReport>,
}

/// The allocator snapshot's report with the state at a moment (ns on the
/// trace's clock) — where the decoded snapshot is at hand.
pub fn snapshot_at(t: &Trace, at_ns: i64) -> Option<SnapshotReport> {
    /// Lines of the program listed as holding memory at a moment.
    const SNAPSHOT_TOP: usize = 50;
    let snap = t.memory_snapshot.as_deref()?;
    let origin = t.time_span_ns().map_or(0, |x| x.0);
    Some(crate::memory_snapshot::report::snapshot_report(
        snap,
        (origin + t.clock_offset_ns).div_euclid(1000),
        Some((at_ns + t.clock_offset_ns).div_euclid(1000)),
        SNAPSHOT_TOP,
    ))
}

/// Whether the trace holds `[memory]` records (`profile_memory=True`), an
/// allocator snapshot, or Neuron HBM usage.
pub fn has_memory(t: &Trace) -> bool {
    if t.neuron_system.as_ref().is_some_and(|n| !n.hbm.is_empty()) {
        return true;
    }
    if t.memory_snapshot_report.is_some() {
        return true;
    }
    t.strings
        .lookup("[memory]")
        .is_some_and(|m| t.instants.name.contains(&m))
}

/// c10's `DeviceType` numbers as PyTorch names them.
pub(crate) fn device_name(device_type: i64, id: i64) -> String {
    let kind = match device_type {
        0 => "CPU",
        1 => "CUDA",
        2 => "MKLDNN",
        5 => "IDEEP",
        6 => "HIP",
        12 => "XPU",
        13 => "MPS",
        19 => "MTIA",
        20 => "PrivateUse1",
        _ => return format!("device type {device_type}:{id}"),
    };
    if id < 0 {
        kind.to_string()
    } else {
        format!("{kind}:{id}")
    }
}

/// Where a record was made.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Place {
    op: String,
    module: Option<String>,
    python: Option<String>,
}

/// Where a record was made: its op, module and Python caller, from the slices around it on its
/// own thread (Kineto writes a record on the allocating thread).
struct Places<'a> {
    t: &'a Trace,
    /// Per track: host slices as (start, index), by start.
    by_track: FxHashMap<u32, Vec<(i64, u32)>>,
}

impl<'a> Places<'a> {
    fn new(t: &'a Trace) -> Places<'a> {
        let s = &t.slices;
        let mut by_track: FxHashMap<u32, Vec<(i64, u32)>> = FxHashMap::default();
        for i in 0..s.len() {
            if matches!(
                s.category[i],
                Category::CpuOp | Category::UserAnnotation | Category::PythonFunction
            ) {
                by_track
                    .entry(s.track[i].0)
                    .or_default()
                    .push((s.start_ns[i], i as u32));
            }
        }
        for v in by_track.values_mut() {
            v.sort_unstable();
        }
        Places { t, by_track }
    }

    fn of(&self, r: &MemoryRecord) -> Place {
        let t = self.t;
        let s = &t.slices;
        let track = t.instants.track[r.instant as usize].0;
        let Some(list) = self.by_track.get(&track) else {
            return Place {
                op: "(no op)".into(),
                module: None,
                python: None,
            };
        };
        // The latest slice starting at or before the record, then up its
        // parents to the first that holds it (ends at or after it: PyTorch
        // counts both ends).
        let k = list.partition_point(|x| x.0 <= r.ts_ns);
        let mut at = NO_SLICE;
        for &(_, i) in list[..k].iter().rev().take(2) {
            let mut j = i;
            while j != NO_SLICE && s.end_ns(j as usize) < r.ts_ns {
                j = s.parent[j as usize];
            }
            if j != NO_SLICE {
                at = j;
                break;
            }
        }
        let (mut op, mut annotation, mut module, mut python) = (None, None, None, None);
        let mut j = at;
        while j != NO_SLICE {
            let name = t.slice_name(j as usize);
            let is_module = name.starts_with("nn.Module: ");
            // A C function's frame (`<built-in method …>`) says less than
            // the Python line that called it.
            let is_line = !is_module && !name.starts_with("<built-in");
            match s.category[j as usize] {
                Category::CpuOp => op = Some(name),
                Category::UserAnnotation if annotation.is_none() => annotation = Some(name),
                Category::PythonFunction if is_module && module.is_none() => {
                    module = Some(name.to_string())
                }
                Category::PythonFunction if is_line && python.is_none() => {
                    python = Some(name.to_string())
                }
                _ => {}
            }
            j = s.parent[j as usize];
        }
        Place {
            op: op.or(annotation).unwrap_or("(no op)").to_string(),
            module,
            python,
        }
    }
}

/// The memory report of `scope`: the peak is sought inside it; what is
/// live there counts every record from the trace's start.
pub fn memory(t: &Trace, scope: &Scope, at: At) -> Result<MemoryReport, ScopeError> {
    let windows = scope.windows(t)?;
    let records = memory_records(t, &|_| true);
    let origin = t.time_span_ns().map_or(0, |x| x.0);
    let places = Places::new(t);
    let mut per_device: Vec<((i64, i64), Vec<usize>)> = Vec::new();
    for (k, r) in records.iter().enumerate() {
        let key = (r.device_type, r.device_id);
        match per_device.iter_mut().find(|x| x.0 == key) {
            Some(x) => x.1.push(k),
            None => per_device.push((key, vec![k])),
        }
    }
    per_device.sort_by_key(|x| x.0);
    let inside = |ts: i64| super::scope::starts_inside(&windows, ts);
    let devices = per_device
        .iter()
        .map(|((ty, id), ks)| {
            let recs: Vec<&MemoryRecord> = ks.iter().map(|&k| &records[k]).collect();
            let joined = join(&t.memory_timelines, &recs, t.clock_offset_ns);
            let on = Device {
                name: device_name(*ty, *id),
                recs: &recs,
                places: &places,
                joined: joined.as_ref(),
                origin,
                clock_offset_ns: t.clock_offset_ns,
            };
            device_memory(&on, at, &inside)
        })
        .collect();
    // The snapshot's report at its peak, made at import (natively; the
    // browser shows its view); a moment is `snapshot_at`'s.
    let snapshot = t.memory_snapshot_report.as_deref().map(|r| SnapshotReport {
        origin_us: (origin + t.clock_offset_ns).div_euclid(1000),
        ..r.clone()
    });
    Ok(MemoryReport {
        start_ns: origin,
        devices,
        hbm: super::memory_hbm::hbm_memory(
            t,
            origin,
            match at {
                At::Peak => None,
                At::Time(ns) => Some(ns),
            },
        ),
        snapshot,
    })
}

/// The bytes allocated after each record: `Total Allocated`, else the
/// running sum.
fn allocated_curve(recs: &[&MemoryRecord]) -> (Vec<i64>, bool) {
    let recorded = recs.iter().all(|r| r.total_allocated.is_some());
    let mut run = 0;
    let curve = recs
        .iter()
        .map(|r| {
            run += r.bytes;
            if recorded {
                r.total_allocated.unwrap_or(run)
            } else {
                run
            }
        })
        .collect();
    (curve, recorded)
}

/// Live allocations after record `upto` (inclusive): addr → record index.
fn live_after(recs: &[&MemoryRecord], upto: usize) -> (FxHashMap<u64, usize>, u64) {
    let mut live: FxHashMap<u64, usize> = FxHashMap::default();
    let mut earlier = 0u64;
    for (k, r) in recs.iter().enumerate().take(upto + 1) {
        if r.bytes > 0 {
            live.insert(r.addr, k);
        } else if r.bytes < 0 && live.remove(&r.addr).is_none() {
            earlier += 1;
        }
    }
    (live, earlier)
}

/// One device's records and what they are read against.
struct Device<'a> {
    name: String,
    recs: &'a [&'a MemoryRecord],
    places: &'a Places<'a>,
    joined: Option<&'a Joined<'a>>,
    /// The trace's start, on its clock.
    origin: i64,
    clock_offset_ns: i64,
}

fn grouped(d: &Device, live: &FxHashMap<u64, usize>) -> Vec<LiveGroup> {
    let recs = d.recs;
    let mut ks: Vec<usize> = live.values().copied().collect();
    ks.sort_unstable();
    // Each live block's place, then runs of one place summed (a sort, not
    // a map keyed by strings: less code in the worker's download).
    let mut placed: Vec<(Place, Option<u8>, i64)> = ks
        .iter()
        .map(|&k| {
            let category = d.joined.and_then(|j| j.category_of[k]);
            (d.places.of(recs[k]), category, recs[k].bytes)
        })
        .collect();
    crate::sort::by(&mut placed, &|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    let mut groups: Vec<LiveGroup> = Vec::new();
    let mut last: Option<(Place, Option<u8>)> = None;
    for (place, category, bytes) in placed {
        let same = last.as_ref() == Some(&(place.clone(), category));
        if !same {
            groups.push(LiveGroup {
                op: place.op.clone(),
                module: place.module.clone(),
                python: place.python.clone(),
                category: category.map(|c| CATEGORIES[c as usize].to_string()),
                bytes: 0,
                count: 0,
            });
            last = Some((place, category));
        }
        let g = groups.len() - 1;
        groups[g].bytes += bytes;
        groups[g].count += 1;
    }
    crate::sort::by(&mut groups, &|a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then(a.op.cmp(&b.op))
            .then(a.module.cmp(&b.module))
            .then(a.python.cmp(&b.python))
            .then(a.category.cmp(&b.category))
    });
    groups
}

/// Allocations per op inside the scope, most bytes first.
fn churn_of(recs: &[&MemoryRecord], places: &Places, inside: &dyn Fn(i64) -> bool) -> Vec<Churn> {
    let mut ops: Vec<(String, i64)> = recs
        .iter()
        .filter(|r| r.bytes > 0 && inside(r.ts_ns))
        .map(|r| (places.of(r).op, r.bytes))
        .collect();
    crate::sort::by(&mut ops, &|a, b| a.0.cmp(&b.0));
    let mut churn: Vec<Churn> = Vec::new();
    for (op, bytes) in ops {
        match churn.last_mut() {
            Some(c) if c.op == op => {
                c.allocations += 1;
                c.bytes += bytes;
            }
            _ => churn.push(Churn {
                op,
                allocations: 1,
                bytes,
            }),
        }
    }
    crate::sort::by(&mut churn, &|a, b| {
        b.bytes.cmp(&a.bytes).then(a.op.cmp(&b.op))
    });
    churn
}

fn device_memory(d: &Device, at: At, inside: &dyn Fn(i64) -> bool) -> DeviceMemory {
    let recs = d.recs;
    let us = |ns: i64| (ns - d.origin) as f64 / 1e3;
    let (curve, totals_recorded) = allocated_curve(recs);
    // The first record at the scope's highest allocation.
    let peak = (0..recs.len())
        .filter(|&k| inside(recs[k].ts_ns))
        .max_by_key(|&k| (curve[k], std::cmp::Reverse(k)));
    let peak_reserved = (0..recs.len())
        .filter(|&k| inside(recs[k].ts_ns))
        .filter_map(|k| recs[k].total_reserved)
        .max()
        .unwrap_or(0);
    let (live_at_peak, before_trace_at_peak_bytes, peak_ns, peak_allocated_bytes) = match peak {
        Some(p) => {
            let (live, _) = live_after(recs, p);
            let groups = grouped(d, &live);
            let known: i64 = groups.iter().map(|g| g.bytes).sum();
            (groups, curve[p] - known, recs[p].ts_ns, curve[p])
        }
        None => (Vec::new(), 0, d.origin, 0),
    };
    let (at_us, allocated_at_bytes, live_at) = match at {
        At::Peak => (None, None, None),
        At::Time(ns) => {
            let n = recs.partition_point(|r| r.ts_ns <= ns);
            if n == 0 {
                (Some(us(ns)), Some(0), Some(Vec::new()))
            } else {
                let (live, _) = live_after(recs, n - 1);
                (Some(us(ns)), Some(curve[n - 1]), Some(grouped(d, &live)))
            }
        }
    };
    let (never, earlier) = if recs.is_empty() {
        (FxHashMap::default(), 0)
    } else {
        live_after(recs, recs.len() - 1)
    };
    let epoch = |ns: i64| ns + d.clock_offset_ns;
    let categories = d.joined.map(|j| {
        j.report(
            peak.map(|p| epoch(recs[p].ts_ns)),
            match at {
                At::Peak => None,
                At::Time(ns) => Some(epoch(ns)),
            },
        )
    });
    DeviceMemory {
        device: d.name.clone(),
        records: recs.len() as u64,
        peak_allocated_bytes,
        peak_at_us: us(peak_ns),
        peak_ns,
        peak_reserved_bytes: peak_reserved,
        totals_recorded,
        live_at_peak,
        before_trace_at_peak_bytes,
        at_us,
        allocated_at_bytes,
        live_at,
        never_freed_bytes: never.values().map(|&k| recs[k].bytes).sum(),
        never_freed_count: never.len() as u64,
        frees_of_earlier_blocks: earlier,
        churn: churn_of(recs, d.places, inside),
        categories,
    }
}

/// The timeline's memory lanes: per device, allocated and reserved bytes
/// after each record, on the process whose threads made the records.
pub fn counter_series(t: &Trace) -> Vec<super::device_time::CounterSeries> {
    let records = memory_records(t, &|_| true);
    let mut keys: Vec<(i64, i64)> = records
        .iter()
        .map(|r| (r.device_type, r.device_id))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let mut out = Vec::new();
    for (ty, id) in keys {
        let recs: Vec<&MemoryRecord> = records
            .iter()
            .filter(|r| (r.device_type, r.device_id) == (ty, id))
            .collect();
        let process = t.tracks[t.instants.track[recs[0].instant as usize].0 as usize].process;
        let name = device_name(ty, id);
        let (curve, _) = allocated_curve(&recs);
        let steps = |values: &mut dyn Iterator<Item = (i64, i64)>| {
            let mut points: Vec<(i64, f64)> = Vec::new();
            for (ts, v) in values {
                match points.last_mut() {
                    Some(p) if p.0 == ts => p.1 = v as f64,
                    _ => points.push((ts, v as f64)),
                }
            }
            points
        };
        let allocated = steps(&mut recs.iter().zip(&curve).map(|(r, &a)| (r.ts_ns, a)));
        out.push((process, format!("memory allocated · {name}"), allocated));
        if recs.iter().any(|r| r.total_reserved.is_some()) {
            let reserved = steps(
                &mut recs
                    .iter()
                    .filter_map(|r| r.total_reserved.map(|v| (r.ts_ns, v))),
            );
            out.push((process, format!("memory reserved · {name}"), reserved));
        }
    }
    out
}

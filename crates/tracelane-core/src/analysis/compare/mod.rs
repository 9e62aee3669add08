//! Fusion comparison: the same computation in several variants (eager ops,
//! a fused op, `torch.compile`) — whole traces, named regions, or time
//! ranges — measured the same way and set against a baseline.
//!
//! What belongs to a region occurrence: the host events nested in it on its
//! thread, runtime calls linked to those ops from other threads, and the
//! device events linked (through their launch or `External id`) to any of
//! them. Device events count by the link, not by time: device work often
//! runs after the CPU has left the region.
//!
//! Definitions (per variant, summed over occurrences unless said):
//! - `device_compute` / `device_exposed_comm` / `device_exposed_memory`:
//!   the busy time split as `device_time` splits it (all occurrences);
//! - `wall`: each occurrence's duration (median, min, max); the median
//!   leaves out warm-up occurrences (`warmup::flag_warmup`) and says how many;
//! - `device_ns`: sum of device event durations (kernels, memcpy, memset,
//!   device windows; not syncs or mirrored annotations); `device_busy_ns`:
//!   the union of those intervals; `device_idle_ns`: per occurrence, the span
//!   from its start to the later of its end and its last device event's end,
//!   less the busy time;
//! - `launches`: runtime calls that launched device work (for device events
//!   linked to their op without a launch call, the op's runtime calls);
//! - `cpu_ops`: ops dispatched directly in the region (not nested in
//!   another op), `cpu_ops_all` every op; `cpu_self_ns`: the CPU time of
//!   everything inside the region (the sum of its top-level host events'
//!   durations: the region's own self time, Python between the ops, is not
//!   dispatching).
//!
//! Ratios against the baseline compare per-occurrence averages, so variants
//! with different occurrence counts compare fairly.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::intervals;
use super::scope::{Scope, ScopeError};
use crate::category::Category;
use crate::model::{Trace, NO_SLICE};

/// Count and total time of events of one name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NameStat {
    pub name: String,
    pub count: u64,
    pub total_ns: i64,
}

/// One device event under an op in the op-to-kernel map.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MappedDevice {
    pub name: String,
    pub category: Category,
    pub dur_ns: i64,
}

/// One op dispatched in the region (median occurrence), with what it launched.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MappedOp {
    pub name: String,
    pub dur_ns: i64,
    /// Annotations inside it (e.g. `## Call CompiledFxGraph … ##`).
    pub inner: Vec<String>,
    pub device: Vec<MappedDevice>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    pub label: String,
    pub file: String,
    pub region: Scope,
    pub occurrences: usize,
    /// Duration of each occurrence, in start order.
    pub wall_ns: Vec<i64>,
    /// Which occurrences are warm-up ([`super::warmup::flag_warmup`]); the
    /// median wall time leaves them out.
    #[serde(default)]
    pub warmup: Vec<bool>,
    pub device_ns: i64,
    pub device_busy_ns: i64,
    pub device_idle_ns: i64,
    /// The busy time split as the Analyses view splits it: computation,
    /// communication not under computation, copies and sets under neither
    /// (device events typed by `frame::exact_kernel_type`).
    #[serde(default)]
    pub device_compute_ns: i64,
    #[serde(default)]
    pub device_exposed_comm_ns: i64,
    #[serde(default)]
    pub device_exposed_memory_ns: i64,
    pub device_events: u64,
    pub kernels: u64,
    pub memcpys: u64,
    pub memsets: u64,
    pub launches: u64,
    pub cpu_ops: u64,
    pub cpu_ops_all: u64,
    pub cpu_self_ns: i64,
    /// The trace has device events at all (a CPU-only capture has none).
    pub trace_has_device: bool,
    /// Ops (all, nested too) and device events in the region, by name.
    pub ops: Vec<NameStat>,
    pub device: Vec<NameStat>,
    /// The op-to-kernel map of occurrence `map_occurrence`.
    pub map: Vec<MappedOp>,
    /// Which occurrence (in start order) the map shows: the one with the
    /// median wall time, so a warm-up or compile outlier (often the first)
    /// is not what the map shows.
    pub map_occurrence: usize,
}

impl Variant {
    /// Median wall time of the occurrences that are not warm-up.
    pub fn wall_median_ns(&self) -> i64 {
        super::warmup::steady_median(&self.wall_ns, &self.warmup)
    }
    /// How many occurrences the median leaves out as warm-up.
    pub fn warmup_excluded(&self) -> usize {
        self.warmup.iter().filter(|&&w| w).count()
    }
    pub fn wall_min_ns(&self) -> i64 {
        self.wall_ns.iter().copied().min().unwrap_or(0)
    }
    pub fn wall_max_ns(&self) -> i64 {
        self.wall_ns.iter().copied().max().unwrap_or(0)
    }
    /// `value` per occurrence.
    pub fn per_occurrence(&self, value: f64) -> f64 {
        value / self.occurrences.max(1) as f64
    }
}

fn is_host(t: &Trace, s: usize) -> bool {
    t.on_host(s)
}

/// Measures one variant.
// Slices are indexed across several columns at once; index loops read best.
#[allow(clippy::needless_range_loop)]
pub fn measure(t: &Trace, region: &Scope, label: &str, file: &str) -> Result<Variant, ScopeError> {
    let occ: Vec<(u32, i64, i64)> = region
        .occurrences(t)?
        .into_iter()
        .map(|o| (o.slice, o.start_ns, o.end_ns))
        .collect();
    let member = members(t, &occ);
    let (device_of, trace_has_device) = device_by_occurrence(t, &occ, &member);
    let launching = launching_calls(t, &device_of);

    let mut v = Variant {
        label: label.to_string(),
        file: file.to_string(),
        region: region.clone(),
        occurrences: occ.len(),
        wall_ns: occ.iter().map(|&(_, a, b)| b - a).collect(),
        warmup: super::warmup::flag_warmup(&occ.iter().map(|&(_, a, b)| b - a).collect::<Vec<_>>()),
        device_ns: 0,
        device_busy_ns: 0,
        device_idle_ns: 0,
        device_compute_ns: 0,
        device_exposed_comm_ns: 0,
        device_exposed_memory_ns: 0,
        device_events: 0,
        kernels: 0,
        memcpys: 0,
        memsets: 0,
        launches: 0,
        cpu_ops: 0,
        cpu_ops_all: 0,
        cpu_self_ns: 0,
        trace_has_device,
        ops: Vec::new(),
        device: Vec::new(),
        map: Vec::new(),
        map_occurrence: 0,
    };
    let ops = count_host(t, &member, &launching, &mut v);
    let devs = count_device(t, &occ, &device_of, &mut v);
    v.ops = sorted_stats(ops);
    v.device = sorted_stats(devs);
    v.map_occurrence = median_index(&v.wall_ns);
    v.map = op_map(t, v.map_occurrence, &member, &device_of);
    Ok(v)
}

/// Which occurrence each host slice belongs to (`u32::MAX`: none):
/// inside a range, or nested in the region's slice; runtime calls
/// elsewhere whose op is in the region join it.
#[allow(clippy::needless_range_loop)]
fn members(t: &Trace, occ: &[(u32, i64, i64)]) -> Vec<u32> {
    let n = t.slices.len();
    let mut member = vec![u32::MAX; n];
    for (k, &(r, a, b)) in occ.iter().enumerate() {
        if r == NO_SLICE {
            for s in 0..n {
                let start = t.slices.start_ns[s];
                if is_host(t, s) && start >= a && start < b.max(a + 1) {
                    member[s] = k as u32;
                }
            }
        } else {
            let r = r as usize;
            let track = &t.tracks[t.slices.track[r].idx()];
            let d = t.slices.depth[r];
            let range = track.slices.start as usize..track.slices.end as usize;
            // Slices of a track are sorted by start: bisect to the region.
            let first = range.start + t.slices.start_ns[range.clone()].partition_point(|&x| x < a);
            for s in first..range.end {
                if t.slices.start_ns[s] > b {
                    break;
                }
                if s != r && t.slices.depth[s] > d && t.slices.end_ns(s) <= b {
                    member[s] = k as u32;
                }
            }
        }
    }
    // Runtime calls elsewhere whose op is in the region join it.
    for s in 0..n {
        if member[s] == u32::MAX && t.slices.category[s] == Category::Runtime {
            let op = t.links.op[s];
            if op != NO_SLICE && member[op as usize] != u32::MAX {
                member[s] = member[op as usize];
            }
        }
    }
    member
}

/// The device events of each occurrence: those of its ops (or launches);
/// in a range or the whole trace, unlinked ones by their start. Whether the
/// trace has device work at all.
fn device_by_occurrence(
    t: &Trace,
    occ: &[(u32, i64, i64)],
    member: &[u32],
) -> (Vec<Vec<usize>>, bool) {
    let n = t.slices.len();
    // range or the whole trace, unlinked ones count by their start.
    let mut device_of: Vec<Vec<usize>> = vec![Vec::new(); occ.len()];
    let trace_has_device = (0..n).any(|s| t.slices.category[s].is_device_work());
    for d in 0..n {
        if !t.slices.category[d].is_device_work() {
            continue;
        }
        let via = [t.links.op[d], t.links.launch[d]]
            .into_iter()
            .find(|&x| x != NO_SLICE && member[x as usize] != u32::MAX);
        let k = match via {
            Some(x) => Some(member[x as usize] as usize),
            None if t.links.op[d] == NO_SLICE && t.links.launch[d] == NO_SLICE => {
                occ.iter().position(|&(r, a, b)| {
                    r == NO_SLICE && t.slices.start_ns[d] >= a && t.slices.start_ns[d] < b
                })
            }
            None => None,
        };
        if let Some(k) = k {
            device_of[k].push(d);
        }
    }
    (device_of, trace_has_device)
}

/// The runtime calls that launched the occurrences' device work.
fn launching_calls(t: &Trace, device_of: &[Vec<usize>]) -> Vec<bool> {
    let n = t.slices.len();
    let mut runtime_of_op: HashMap<u32, Vec<u32>> = HashMap::new();
    for s in 0..n {
        if t.slices.category[s] == Category::Runtime && t.links.op[s] != NO_SLICE {
            runtime_of_op
                .entry(t.links.op[s])
                .or_default()
                .push(s as u32);
        }
    }
    let mut launching = vec![false; n];
    for ds in device_of {
        for &d in ds {
            let l = t.links.launch[d];
            if l != NO_SLICE {
                launching[l as usize] = true;
            } else if let Some(rs) = runtime_of_op.get(&t.links.op[d]) {
                for &r in rs {
                    launching[r as usize] = true;
                }
            }
        }
    }
    launching
}

/// Counts the occurrences' host work into `v` (top-level CPU time, ops,
/// launches); the ops by name.
fn count_host(
    t: &Trace,
    member: &[u32],
    launching: &[bool],
    v: &mut Variant,
) -> HashMap<u32, NameStat> {
    let n = t.slices.len();
    let mut ops: HashMap<u32, NameStat> = HashMap::new();
    // The nearest op (or annotation) above a member slice inside the region.
    let enclosing_op = |s: usize| -> Option<usize> {
        let mut p = t.slices.parent[s];
        while p != NO_SLICE && member[p as usize] == member[s] {
            let c = t.slices.category[p as usize];
            if c == Category::CpuOp {
                return Some(p as usize);
            }
            p = t.slices.parent[p as usize];
        }
        None
    };
    // Top-level: no counted host event above it inside the region.
    let top_level = |s: usize| -> bool {
        let mut p = t.slices.parent[s];
        while p != NO_SLICE && member[p as usize] == member[s] {
            if t.slices.category[p as usize].is_counted_host() {
                return false;
            }
            p = t.slices.parent[p as usize];
        }
        true
    };
    for s in 0..n {
        if member[s] == u32::MAX || !is_host(t, s) {
            continue;
        }
        let c = t.slices.category[s];
        if !c.is_counted_host() {
            continue;
        }
        let top = top_level(s);
        if top {
            v.cpu_self_ns += t.slices.dur_ns[s];
        }
        if c == Category::Runtime && launching[s] {
            v.launches += 1;
        }
        if c == Category::CpuOp {
            v.cpu_ops_all += 1;
            if enclosing_op(s).is_none() {
                v.cpu_ops += 1;
            }
            let e = ops.entry(t.slices.name[s].0).or_insert_with(|| NameStat {
                name: t.slice_name(s).to_string(),
                ..Default::default()
            });
            e.count += 1;
            e.total_ns += t.slices.dur_ns[s];
        }
    }
    ops
}

/// Counts the occurrences' device work into `v` (time, busy and idle,
/// exposed communication and memory, events by kind); the device events by
/// name.
fn count_device(
    t: &Trace,
    occ: &[(u32, i64, i64)],
    device_of: &[Vec<usize>],
    v: &mut Variant,
) -> HashMap<u32, NameStat> {
    let mut devs: HashMap<u32, NameStat> = HashMap::new();
    let mut intervals: Vec<(i64, i64)> = Vec::new();
    let mut by_type: [Vec<(i64, i64)>; 3] = Default::default();
    for ds in device_of {
        for &d in ds {
            let k = match super::frame::exact_kernel_type(t.slices.category[d], t.slice_name(d)) {
                super::frame::KernelType::Communication => 1,
                super::frame::KernelType::Memory => 2,
                _ => 0,
            };
            by_type[k].push((t.slices.start_ns[d], t.slices.end_ns(d)));
        }
    }
    let [comp, comm, mem] = by_type.map(intervals::union);
    let comp_comm = intervals::union([comp.clone(), comm.clone()].concat());
    v.device_compute_ns = intervals::total(&comp);
    v.device_exposed_comm_ns =
        intervals::total(&comm) - intervals::total(&intervals::intersect(&comm, &comp));
    v.device_exposed_memory_ns =
        intervals::total(&mem) - intervals::total(&intervals::intersect(&mem, &comp_comm));
    for (k, ds) in device_of.iter().enumerate() {
        let mut busy: Vec<(i64, i64)> = Vec::new();
        for &d in ds {
            let dur = t.slices.dur_ns[d];
            v.device_ns += dur;
            v.device_events += 1;
            match t.slices.category[d] {
                Category::Memcpy => v.memcpys += 1,
                Category::Memset => v.memsets += 1,
                _ => v.kernels += 1,
            }
            busy.push((t.slices.start_ns[d], t.slices.end_ns(d)));
            let e = devs.entry(t.slices.name[d].0).or_insert_with(|| NameStat {
                name: t.slice_name(d).to_string(),
                ..Default::default()
            });
            e.count += 1;
            e.total_ns += dur;
        }
        let union = intervals::union_len(&mut busy);
        let (_, a, b) = occ[k];
        let last_end = busy.iter().map(|x| x.1).max().unwrap_or(b);
        v.device_idle_ns += ((last_end.max(b) - a) - union).max(0);
        intervals.extend(busy);
    }
    v.device_busy_ns = intervals::union_len(&mut intervals);
    if !v.trace_has_device {
        v.device_idle_ns = 0;
    }
    devs
}

fn sorted_stats(m: HashMap<u32, NameStat>) -> Vec<NameStat> {
    let mut v: Vec<NameStat> = m.into_values().collect();
    crate::sort::by(&mut v, &|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    v
}

/// The occurrence (in start order) whose value is the median: the lower
/// middle one for an even count, the earlier of equal values.
fn median_index(v: &[i64]) -> usize {
    let mut order: Vec<usize> = (0..v.len()).collect();
    crate::sort::by_key(&mut order, &|&k| (v[k], k));
    order
        .get(v.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(0)
}

/// Occurrence `k`'s top-level ops in order, each with the device events of
/// everything nested in it and the annotations inside it.
fn op_map(t: &Trace, k: usize, member: &[u32], device_of: &[Vec<usize>]) -> Vec<MappedOp> {
    const MAX_OPS: usize = 200;
    let Some(devices) = device_of.get(k) else {
        return Vec::new();
    };
    let k = k as u32;
    let top_of = |mut s: usize| -> Option<usize> {
        // Climb to the outermost op still inside the occurrence.
        let mut top = None;
        loop {
            if member[s] != k {
                return top;
            }
            if t.slices.category[s] == Category::CpuOp {
                top = Some(s);
            }
            let p = t.slices.parent[s];
            if p == NO_SLICE {
                return top;
            }
            s = p as usize;
        }
    };
    let mut tops: Vec<usize> = (0..t.slices.len())
        .filter(|&s| {
            member[s] == k
                && t.slices.category[s] == Category::CpuOp
                && is_host(t, s)
                && top_of(s) == Some(s)
        })
        .collect();
    crate::sort::by_key(&mut tops, &|&s| (t.slices.start_ns[s], s));
    tops.truncate(MAX_OPS);
    let index: HashMap<usize, usize> = tops.iter().enumerate().map(|(k, &s)| (s, k)).collect();
    let mut map: Vec<MappedOp> = tops
        .iter()
        .map(|&s| MappedOp {
            name: t.slice_name(s).to_string(),
            dur_ns: t.slices.dur_ns[s],
            inner: Vec::new(),
            device: Vec::new(),
        })
        .collect();
    for (s, &m) in member.iter().enumerate() {
        if m == k && t.slices.category[s] == Category::UserAnnotation {
            if let Some(k) = top_of(s).and_then(|top| index.get(&top)) {
                if map[*k].inner.len() < 8 {
                    map[*k].inner.push(t.slice_name(s).to_string());
                }
            }
        }
    }
    let mut devices = devices.clone();
    crate::sort::by_key(&mut devices, &|&d| (t.slices.start_ns[d], d));
    for d in devices {
        let op = t.links.op[d];
        let op = if op != NO_SLICE {
            op as usize
        } else {
            match t.links.launch[d] {
                NO_SLICE => continue,
                l => l as usize,
            }
        };
        if let Some(k) = top_of(op).and_then(|top| index.get(&top)) {
            map[*k].device.push(MappedDevice {
                name: t.slice_name(d).to_string(),
                category: t.slices.category[d],
                dur_ns: t.slices.dur_ns[d],
            });
        }
    }
    map
}

/// A candidate against the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgainstBaseline {
    /// What changed, per occurrence, in one sentence ([`headline`]).
    pub headline: String,
    /// Candidate ÷ baseline per occurrence: device time, device events,
    /// launches, CPU ops, CPU time in ops (`None` where the baseline's is zero).
    pub ratios: Vec<(String, Option<f64>)>,
    /// Ops and device events added, removed and changed ([`diff`]).
    pub diff: Vec<DiffRow>,
}

/// The comparison report: what the CLI prints and the page renders.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Baseline first.
    pub variants: Vec<Variant>,
    /// `candidates[k]`: variant `k + 1` against the baseline.
    pub candidates: Vec<AgainstBaseline>,
    /// [`to_markdown`] and [`to_json`] of the variants, for the page's
    /// copy and download buttons.
    pub markdown: String,
    pub json: String,
}

impl Comparison {
    /// Sets measured variants (the first is the baseline) against the baseline.
    pub fn of(variants: Vec<Variant>) -> Comparison {
        let candidates = match variants.split_first() {
            Some((base, rest)) => rest
                .iter()
                .map(|v| AgainstBaseline {
                    headline: headline(base, v),
                    ratios: ratios(base, v),
                    diff: diff(base, v),
                })
                .collect(),
            None => Vec::new(),
        };
        Comparison {
            markdown: to_markdown(&variants),
            json: serde_json::to_string_pretty(&to_json(&variants)).unwrap_or_default(),
            variants,
            candidates,
        }
    }

    /// Variant `k` against the baseline (`None` for the baseline itself).
    pub fn against_baseline(&self, k: usize) -> Option<&AgainstBaseline> {
        k.checked_sub(1).and_then(|c| self.candidates.get(c))
    }
}

/// The per-occurrence ratios a candidate's card shows.
fn ratios(b: &Variant, v: &Variant) -> Vec<(String, Option<f64>)> {
    [
        ("device time", b.device_ns as f64, v.device_ns as f64),
        (
            "device events",
            b.device_events as f64,
            v.device_events as f64,
        ),
        ("launches", b.launches as f64, v.launches as f64),
        ("CPU ops", b.cpu_ops as f64, v.cpu_ops as f64),
        (
            "CPU time in ops",
            b.cpu_self_ns as f64,
            v.cpu_self_ns as f64,
        ),
    ]
    .into_iter()
    .map(|(name, x, y)| (name.to_string(), ratio(b, x, v, y)))
    .collect()
}

/// How an op or device event name changed between baseline and candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiffStatus {
    Added,
    Removed,
    Changed,
    Same,
}

impl DiffStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DiffStatus::Added => "added",
            DiffStatus::Removed => "removed",
            DiffStatus::Changed => "changed",
            DiffStatus::Same => "same",
        }
    }
}

/// What a diff row counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiffKind {
    Op,
    Device,
}

impl DiffKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DiffKind::Op => "op",
            DiffKind::Device => "device",
        }
    }
}

/// One row of the trace diff, per occurrence.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffRow {
    pub kind: DiffKind,
    pub name: String,
    pub baseline_count: f64,
    pub baseline_ns: f64,
    pub candidate_count: f64,
    pub candidate_ns: f64,
    pub status: DiffStatus,
}

/// Ops and device events added, removed and changed (per occurrence), the
/// largest time change first.
pub fn diff(baseline: &Variant, candidate: &Variant) -> Vec<DiffRow> {
    let mut rows = Vec::new();
    for (kind, b, c) in [
        (DiffKind::Op, &baseline.ops, &candidate.ops),
        (DiffKind::Device, &baseline.device, &candidate.device),
    ] {
        let mut names: Vec<&str> = b.iter().chain(c.iter()).map(|s| s.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            let get = |v: &Variant, list: &Vec<NameStat>| {
                list.iter()
                    .find(|s| s.name == name)
                    .map(|s| {
                        (
                            v.per_occurrence(s.count as f64),
                            v.per_occurrence(s.total_ns as f64),
                        )
                    })
                    .unwrap_or((0.0, 0.0))
            };
            let (bc, bt) = get(baseline, b);
            let (cc, ct) = get(candidate, c);
            let status = if bc == 0.0 {
                DiffStatus::Added
            } else if cc == 0.0 {
                DiffStatus::Removed
            } else if bc != cc || bt != ct {
                DiffStatus::Changed
            } else {
                DiffStatus::Same
            };
            rows.push(DiffRow {
                kind,
                name: name.to_string(),
                baseline_count: bc,
                baseline_ns: bt,
                candidate_count: cc,
                candidate_ns: ct,
                status,
            });
        }
    }
    crate::sort::by(&mut rows, &|a, b| {
        let da = (a.candidate_ns - a.baseline_ns).abs();
        let db = (b.candidate_ns - b.baseline_ns).abs();
        db.total_cmp(&da).then_with(|| a.name.cmp(&b.name))
    });
    rows
}

/// A candidate's value over the baseline's, per occurrence (`None` when
/// the baseline's is zero).
pub fn ratio(baseline: &Variant, b: f64, candidate: &Variant, c: f64) -> Option<f64> {
    let (b, c) = (baseline.per_occurrence(b), candidate.per_occurrence(c));
    (b != 0.0).then(|| c / b)
}

/// `2,355 µs`, `37.6 µs`.
pub fn fmt_us(ns: f64) -> String {
    let us = ns / 1e3;
    if us.abs() >= 100.0 {
        let digits = format!("{:.0}", us.abs());
        let mut out = String::new();
        for (k, c) in digits.chars().enumerate() {
            if k > 0 && (digits.len() - k) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        format!("{}{out} µs", if us < 0.0 { "-" } else { "" })
    } else {
        format!("{us:.1} µs")
    }
}

/// A per-occurrence count: whole when it is, else to one decimal.
fn fmt_count(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// A candidate ÷ baseline ratio in words: `6.3× less`, `1.2× more`.
pub fn ratio_words(ratio: f64) -> String {
    if ratio <= 0.0 {
        return "all".into();
    }
    if ratio < 1.0 {
        format!("{:.1}× less", 1.0 / ratio)
    } else {
        format!("{ratio:.1}× more")
    }
}

/// One line saying what changed, per occurrence, e.g. "device time
/// 2,355 µs → 376 µs (6.3× less); 6 device events → 1; 6 CPU ops → 1".
pub fn headline(baseline: &Variant, candidate: &Variant) -> String {
    let per = |v: &Variant, x: f64| v.per_occurrence(x);
    let mut parts = Vec::new();
    // `label b → c (k× less)` for a time per occurrence.
    let change = |label: &str, b_ns: i64, c_ns: i64| {
        let (b, c) = (per(baseline, b_ns as f64), per(candidate, c_ns as f64));
        let r = (b > 0.0).then(|| format!(" ({})", ratio_words(c / b)));
        format!(
            "{label} {} → {}{}",
            fmt_us(b),
            fmt_us(c),
            r.unwrap_or_default()
        )
    };
    if baseline.trace_has_device || candidate.trace_has_device {
        parts.push(change(
            "device time",
            baseline.device_ns,
            candidate.device_ns,
        ));
        parts.push(format!(
            "{} device events → {}",
            fmt_count(per(baseline, baseline.device_events as f64)),
            fmt_count(per(candidate, candidate.device_events as f64))
        ));
    } else {
        parts.push(format!(
            "{} (no device events: a CPU-only capture)",
            change(
                "CPU time in ops",
                baseline.cpu_self_ns,
                candidate.cpu_self_ns
            )
        ));
    }
    parts.push(format!(
        "{} CPU ops → {}",
        fmt_count(per(baseline, baseline.cpu_ops as f64)),
        fmt_count(per(candidate, candidate.cpu_ops as f64))
    ));
    parts.join("; ")
}

/// The numbers of every variant as JSON: `{"variants": [{label, file,
/// region, occurrences, wall_us (median), device_us, device_busy_us,
/// device_events, launches, cpu_ops, cpu_self_us, …, vs_baseline}]}`, the
/// first variant being the baseline. `vs_baseline` holds candidate ÷
/// baseline per occurrence (`null` where the baseline's value is zero).
pub fn to_json(variants: &[Variant]) -> serde_json::Value {
    use serde_json::json;
    let Some(base) = variants.first() else {
        return json!({ "variants": [] });
    };
    let us = |ns: i64| ns as f64 / 1e3;
    let list: Vec<serde_json::Value> = variants
        .iter()
        .map(|v| {
            let r = |b: f64, c: f64| ratio(base, b, v, c);
            let wall = (base.wall_median_ns() != 0)
                .then(|| v.wall_median_ns() as f64 / base.wall_median_ns() as f64);
            json!({
                "label": v.label,
                "file": v.file,
                "region": match &v.region { Scope::Whole => serde_json::Value::Null, r => json!(r.label()) },
                "occurrences": v.occurrences,
                "map_occurrence": v.map_occurrence + 1,
                "wall_us": us(v.wall_median_ns()),
                "warmup_excluded": v.warmup_excluded(),
                "wall_min_us": us(v.wall_min_ns()),
                "wall_max_us": us(v.wall_max_ns()),
                "device_us": us(v.device_ns),
                "device_busy_us": us(v.device_busy_ns),
                "device_idle_us": us(v.device_idle_ns),
                "device_compute_us": us(v.device_compute_ns),
                "device_exposed_comm_us": us(v.device_exposed_comm_ns),
                "device_exposed_memory_us": us(v.device_exposed_memory_ns),
                "device_events": v.device_events,
                "kernels": v.kernels,
                "memcpys": v.memcpys,
                "memsets": v.memsets,
                "launches": v.launches,
                "cpu_ops": v.cpu_ops,
                "cpu_ops_all": v.cpu_ops_all,
                "cpu_self_us": us(v.cpu_self_ns),
                "has_device_events": v.trace_has_device,
                "vs_baseline": {
                    "wall_us": wall,
                    "device_us": r(base.device_ns as f64, v.device_ns as f64),
                    "device_busy_us": r(base.device_busy_ns as f64, v.device_busy_ns as f64),
                    "device_events": r(base.device_events as f64, v.device_events as f64),
                    "launches": r(base.launches as f64, v.launches as f64),
                    "cpu_ops": r(base.cpu_ops as f64, v.cpu_ops as f64),
                    "cpu_self_us": r(base.cpu_self_ns as f64, v.cpu_self_ns as f64),
                },
            })
        })
        .collect();
    json!({ "variants": list })
}

/// Rows for a text or Markdown table: a header, then one row per variant
/// (per-occurrence figures; wall time as median with its range).
pub fn table_rows(variants: &[Variant]) -> Vec<Vec<String>> {
    let mut rows = vec![[
        "variant",
        "role",
        "occurrences",
        "wall (median, min–max)",
        "device",
        "device busy",
        "device idle",
        "device events",
        "launches",
        "CPU ops",
        "CPU time in ops",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect::<Vec<String>>()];
    for (k, v) in variants.iter().enumerate() {
        let per = |x: i64| v.per_occurrence(x as f64);
        let device = |s: String| {
            if v.trace_has_device {
                s
            } else {
                "—".into()
            }
        };
        rows.push(vec![
            v.label.clone(),
            if k == 0 {
                "baseline".into()
            } else {
                "candidate".into()
            },
            v.occurrences.to_string(),
            format!(
                "{} ({}–{}){}",
                fmt_us(v.wall_median_ns() as f64),
                fmt_us(v.wall_min_ns() as f64),
                fmt_us(v.wall_max_ns() as f64),
                match v.warmup_excluded() {
                    0 => String::new(),
                    n => format!(", {n} warm-up left out"),
                }
            ),
            device(fmt_us(per(v.device_ns))),
            device(fmt_us(per(v.device_busy_ns))),
            device(fmt_us(per(v.device_idle_ns))),
            device(fmt_count(per(v.device_events as i64))),
            device(fmt_count(per(v.launches as i64))),
            fmt_count(per(v.cpu_ops as i64)),
            fmt_us(per(v.cpu_self_ns)),
        ]);
    }
    rows
}

/// The comparison as Markdown, for a pull request: the table (per
/// occurrence) and one line per candidate against the baseline.
pub fn to_markdown(variants: &[Variant]) -> String {
    let rows = table_rows(variants);
    let mut out = String::new();
    for (k, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row.iter().map(|c| c.replace('|', "\\|")).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
        if k == 0 {
            let align: Vec<&str> = (0..row.len())
                .map(|i| if i < 2 { "---" } else { "---:" })
                .collect();
            out.push_str(&format!("| {} |\n", align.join(" | ")));
        }
    }
    out.push_str("\nPer occurrence.");
    if variants.iter().any(|v| !v.trace_has_device) {
        out.push_str(" —: no device events in that trace (a CPU-only capture).");
    }
    if let Some(base) = variants.first() {
        for v in &variants[1..] {
            out.push_str(&format!(
                "\n- **{}** vs **{}**: {}",
                v.label,
                base.label,
                headline(base, v)
            ));
        }
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests;

//! Where device time goes: temporal breakdown, kernel types and their
//! overlap, per-kernel statistics, idle gaps per lane, launch statistics,
//! queue length and communication/computation overlap — one report, under
//! any set of rules in [`frame`](super::frame) (tracelane's exact one,
//! HTA 0.6.1's or HTA 0.5.0's).
//!
//! The definitions, each from HTA where HTA has the number
//! (`hta/analyzers/breakdown_analysis.py`, `cuda_kernel_analysis.py`,
//! `communication_analysis.py`, `trace_counters.py`):
//! - **Temporal breakdown** (`get_temporal_breakdown`): device events
//!   merged (touching ones join); span = last end − first start;
//!   idle = span − merged time; compute = merged computation kernels;
//!   non-compute = span − compute − idle. The exact mode adds the exposed
//!   form: compute + communication not under compute + memory not under
//!   either + other + idle = span, per device.
//! - **Kernel types** (`get_gpu_kernel_breakdown`): each type's kernels
//!   merged, then time cut where the set of running types is constant;
//!   "COMPUTATION overlapping COMMUNICATION" is time both ran. HTA looks at
//!   computation, communication and memory; the exact mode at every type.
//!   Per kernel name: count, total, mean, min, max, sample standard
//!   deviation (HTA folds all but ten names into "others"; this keeps all).
//! - **Idle breakdown** (`get_idle_time_breakdown`, 30 µs): per lane, in
//!   start order, the gap before each kernel is a host wait when its launch
//!   started after the previous kernel ended, a kernel wait when shorter
//!   than 30 µs, else other. HTA measures from the previous kernel's end
//!   (an overlap is a negative kernel wait); the exact mode from the
//!   latest end so far and counts overlaps apart.
//! - **Launch statistics** (`get_cuda_kernel_launch_stats`, 50/100 µs):
//!   per launch, CPU duration, device duration, launch delay = device start
//!   − launch end, clipped at 0. Short kernel: CPU ≤ 50 µs and device < CPU;
//!   runtime outlier: CPU > 50 µs; delay outlier: delay > 100 µs. HTA pairs
//!   host and device rows by correlation where a `cudaLaunchKernel`,
//!   `cudaLaunchKernelExC`, `cudaMemcpyAsync`, `cudaMemsetAsync` or MTIA
//!   `runFunction` carries it; the exact mode takes every launch the import
//!   linked (Triton's `cuLaunchKernel`, HIP, CUDA graphs, Neuron).
//! - **Queue length** (`get_queue_length_summary`): per lane, +1 when a
//!   launch call starts, −1 when its device work starts. HTA's mean and
//!   max are over change points; the exact mode adds the time-weighted
//!   mean over the lane's active span, and both the time spent with 1024
//!   launches queued (CUDA's queue depth: further launches block).
//! - **Communication/computation overlap** (`get_comm_comp_overlap`): time
//!   computation and communication kernels both run ÷ communication time.

use rustc_hash::FxHashMap as HashMap;

use serde::{Deserialize, Serialize};

use crate::model::Trace;

use super::frame::{Frame, KernelType, Mode, NO_ROW};
use super::hta_queue::{hta_queue_events, QueueEvent};
use super::intervals::{self, Interval};
use super::scope::{Scope, ScopeError};

/// A derived counter series for the timeline: its process, name and
/// (time, value) steps.
pub type CounterSeries = (crate::model::ProcessIdx, String, Vec<(i64, f64)>);

/// The timeline's derived counters (tracelane's rules): per device lane,
/// the queue length (+1 at each launch call, −1 at its work's start), and
/// per device, the bandwidth of the copies and sets running (bytes ÷
/// duration of each, summed over those in flight, GB/s). `args` reads a
/// slice's args JSON (copies carry `bytes` there).
pub fn counter_series(t: &Trace, args: &dyn Fn(usize) -> String) -> Vec<CounterSeries> {
    let f = Frame::build(t, &Scope::Whole, Mode::Exact).unwrap_or_default();
    let mut out = Vec::new();
    let mut by_lane = exact_queue_events(t, &f);
    let mut lanes: Vec<i64> = by_lane.keys().copied().collect();
    lanes.sort_unstable();
    for lane in lanes {
        let mut ev = by_lane.remove(&lane).unwrap_or_default();
        ev.sort();
        let mut points: Vec<(i64, f64)> = Vec::with_capacity(ev.len());
        let mut q = 0i64;
        for (at, _, d, _) in ev {
            q += d;
            match points.last_mut() {
                Some(p) if p.0 == at => p.1 = q as f64,
                _ => points.push((at, q as f64)),
            }
        }
        out.push((
            t.tracks[lane as usize].process,
            format!("queue length · {}", t.track_label(lane as usize)),
            points,
        ));
    }
    // Copy bandwidth per device process.
    let mut copies: HashMap<u32, Vec<(i64, f64)>> = HashMap::default();
    for r in device_rows(&f) {
        let i = f.slice[r] as usize;
        if !matches!(
            t.slices.category[i],
            crate::category::Category::Memcpy | crate::category::Category::Memset
        ) {
            continue;
        }
        let dur = f.end[r] - f.ts[r];
        let Some(bytes) = super::data_movement::bytes_of(&args(i)) else {
            continue;
        };
        if dur <= 0 {
            continue;
        }
        let gbps = bytes as f64 / dur as f64;
        let e = copies.entry(f.device[r]).or_default();
        e.push((f.ts[r], gbps));
        e.push((f.end[r], -gbps));
    }
    let mut devices: Vec<u32> = copies.keys().copied().collect();
    devices.sort_unstable();
    for d in devices {
        let mut ev = copies.remove(&d).unwrap_or_default();
        crate::sort::by(&mut ev, &|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let mut points: Vec<(i64, f64)> = Vec::with_capacity(ev.len());
        let mut bw = 0f64;
        for (at, delta) in ev {
            bw += delta;
            let v = if bw.abs() < 1e-9 { 0.0 } else { bw };
            match points.last_mut() {
                Some(p) if p.0 == at => p.1 = v,
                _ => points.push((at, v)),
            }
        }
        out.push((
            crate::model::ProcessIdx(d),
            "copy bandwidth (GB/s)".to_string(),
            points,
        ));
    }
    out
}

/// HTA's `consecutive_kernel_delay`: gaps shorter than this are kernel waits.
pub const KERNEL_WAIT_NS: i64 = 30_000;
/// HTA's `runtime_cutoff`.
pub const RUNTIME_CUTOFF_NS: i64 = 50_000;
/// HTA's `launch_delay_cutoff`.
pub const LAUNCH_DELAY_CUTOFF_NS: i64 = 100_000;
/// How many of the longest gaps and launch delays a report lists.
pub const LISTED: usize = 200;

/// Runtime calls HTA's launch statistics pair by correlation.
const HTA_LAUNCH_STAT_NAMES: [&str; 5] = [
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "runFunction - job_prep_and_submit_for_execution",
    "cudaMemsetAsync",
    "cudaMemcpyAsync",
];

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TemporalBreakdown {
    pub device: String,
    pub start_ns: i64,
    pub end_ns: i64,
    pub span_ns: i64,
    pub busy_ns: i64,
    pub idle_ns: i64,
    pub compute_ns: i64,
    pub non_compute_ns: i64,
    /// Exposed form (exact mode): communication not under computation.
    pub exposed_communication_ns: i64,
    /// Memory (copies, sets) under neither computation nor communication.
    pub exposed_memory_ns: i64,
    /// Other device work under none of the above.
    pub exposed_other_ns: i64,
    /// Communication time (merged) and the part of it under computation.
    pub communication_ns: i64,
    pub communication_overlapped_ns: i64,
}

impl TemporalBreakdown {
    /// The exposed form's parts summed: compute + exposed communication +
    /// exposed memory + exposed other + idle, which is the span.
    pub fn exposed_parts_ns(&self) -> i64 {
        self.compute_ns
            + self.exposed_communication_ns
            + self.exposed_memory_ns
            + self.exposed_other_ns
            + self.idle_ns
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelTypeTime {
    /// A type, or types joined by " overlapping " (HTA's labels).
    pub kernel_type: String,
    pub time_ns: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelStats {
    pub name: String,
    pub kernel_type: KernelType,
    pub count: u64,
    pub total_ns: i64,
    pub mean_ns: f64,
    pub min_ns: i64,
    pub max_ns: i64,
    /// Sample standard deviation (pandas' `std`, 0 for one kernel).
    pub stddev_ns: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdleCategory {
    HostWait,
    KernelWait,
    Other,
}

impl IdleCategory {
    pub fn as_str(self) -> &'static str {
        match self {
            IdleCategory::HostWait => "host_wait",
            IdleCategory::KernelWait => "kernel_wait",
            IdleCategory::Other => "other",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IdleRow {
    /// HTA: the stream number; exact: the lane's track index.
    pub lane: i64,
    pub lane_label: String,
    pub category: IdleCategory,
    pub idle_ns: i64,
    pub gaps: u64,
    /// Of the lane's idle time (None when the lane has none).
    pub ratio: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Gap {
    pub lane: i64,
    pub lane_label: String,
    pub start_ns: i64,
    pub end_ns: i64,
    pub category: IdleCategory,
    /// The kernel after the gap (a model slice, for the timeline).
    pub next_slice: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LaunchStats {
    pub launches: u64,
    pub cpu_total_ns: i64,
    pub device_total_ns: i64,
    pub delay_total_ns: i64,
    pub delay_max_ns: i64,
    pub short_kernels: u64,
    pub runtime_outliers: u64,
    pub delay_outliers: u64,
    /// Device work that started before its launch call returned (delay
    /// clipped to 0): a synchronous runtime (Neuron's `nrt_execute`).
    pub started_before_return: u64,
    /// Device start − launch *start*, summed and at most: the wait in the
    /// runtime whether or not the call returned first (what a synchronous
    /// runtime's delay is).
    pub from_call_start_total_ns: i64,
    pub from_call_start_max_ns: i64,
    /// Launch-delay histogram: `(upper bound ns, count)`, powers of two
    /// from 1 µs; the last bucket is open (`i64::MAX`).
    pub delay_histogram: Vec<(i64, u64)>,
    /// The longest delays: (launch slice, device slice, delay ns).
    pub worst: Vec<(u32, u32, i64)>,
    /// Graph replays (`cudaGraphLaunch`, `hipGraphLaunch`) and the device
    /// work they replayed. Under tracelane's rules one replay is one
    /// launch of many kernels: its kernels are not launches of their own
    /// (not in `launches`, `short_kernels`, the delays). HTA's rules keep
    /// its own pairs.
    #[serde(default)]
    pub graph_launches: u64,
    #[serde(default)]
    pub graph_kernels: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueRow {
    pub lane: i64,
    pub lane_label: String,
    /// Change points (HTA's `count`).
    pub samples: u64,
    /// Mean over change points (HTA's).
    pub mean: f64,
    pub max: i64,
    /// `mean` with the launches and device starts that share a timestamp
    /// ordered starts first (`mean`) and launches first: HTA's mean is in
    /// between, its tie order undefined.
    #[serde(default)]
    pub mean_at_ties: (f64, f64),
    /// `max` likewise.
    #[serde(default)]
    pub max_at_ties: (i64, i64),
    /// Mean over time, from the lane's first change to its last.
    pub time_weighted_mean: f64,
    /// Time with the queue at least [`FULL_QUEUE`] deep: launches then
    /// block the CPU (HTA's `get_time_spent_blocked_on_full_queue`).
    pub full_queue_ns: i64,
}

/// CUDA's launch queue depth: a launch beyond it blocks until one starts
/// (the `max_queue_length` HTA's blocked-time analysis is given).
pub const FULL_QUEUE: i64 = 1024;

/// Everything this module answers for one trace and scope.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceTimeReport {
    pub mode: Mode,
    pub scope: String,
    /// The trace's first timestamp, which times in the report are shown
    /// relative to.
    pub origin_ns: i64,
    /// What the rules left out or could not answer, in words.
    pub notes: Vec<String>,
    pub devices: Vec<TemporalBreakdown>,
    /// Time of each kernel type (and each overlap of types) on a device,
    /// summed over devices (exact mode); HTA's kernel-type sweep under HTA.
    pub kernel_types: Vec<KernelTypeTime>,
    pub kernels: Vec<KernelStats>,
    /// `None` when no lane has kernels (HTA raises there).
    pub idle: Option<Vec<IdleRow>>,
    pub longest_gaps: Vec<Gap>,
    pub launches: LaunchStats,
    /// `None` where HTA's own consistency check fails (a launch paired
    /// with several device rows or the reverse).
    pub queues: Option<Vec<QueueRow>>,
    /// Per device, in `devices` order; `None` without communication.
    pub comm_comp_overlap_pct: Vec<Option<f64>>,
}

/// The analysis: builds the frame for `scope` under `mode` and answers
/// every part of the report from it.
pub fn device_time(t: &Trace, scope: &Scope, mode: Mode) -> Result<DeviceTimeReport, ScopeError> {
    let f = Frame::build(t, scope, mode)?;
    Ok(device_time_of(t, &f, scope))
}

/// [`device_time`] on a frame already built for the scope.
pub fn device_time_of(t: &Trace, f: &Frame, scope: &Scope) -> DeviceTimeReport {
    let mode = f.mode;
    let mut notes = Vec::new();
    if let Some(step) = &f.dropped_from_step {
        notes.push(format!(
            "HTA leaves out {step} and everything after it ({} host events; {} device events whose launch it left out)",
            f.dropped_host, f.dropped_device
        ));
    }
    if f.outside_host + f.outside_device > 0 {
        notes.push(format!(
            "{} host and {} device events lie outside the scope (device work belongs where its launch started)",
            f.outside_host, f.outside_device
        ));
    }
    if mode.is_hta() && f.rounded_to_us {
        notes.push("HTA rounds each start up and each end down to whole µs in this trace".into());
    }
    let mut devices = temporal(t, f);
    let comm_comp_overlap_pct = devices
        .iter()
        .map(|d| {
            (d.communication_ns > 0)
                .then(|| 100.0 * d.communication_overlapped_ns as f64 / d.communication_ns as f64)
        })
        .collect();
    if mode.is_hta() && devices.iter().any(hta_rejects) {
        let backwards = device_rows(f).filter(|&r| f.end[r] < f.ts[r]).count();
        notes.push(format!(
            "HTA's temporal breakdown fails on this trace (an AssertionError in get_temporal_breakdown): rounded to whole µs, {backwards} device events end before they start and the busy time comes out negative; tracelane's mode gives the breakdown"
        ));
        devices.clear();
    }
    let (idle, longest_gaps) = idle_breakdown(t, f);
    let queues = match mode {
        Mode::Hta | Mode::Hta05 => hta_queues(t, f),
        Mode::Exact => Some(exact_queues(t, f)),
    };
    if queues.is_none() {
        notes.push(
            "queue length: a launch pairs with several device events (or the reverse), which HTA's check rejects".into(),
        );
    }
    DeviceTimeReport {
        mode,
        scope: scope.label(),
        origin_ns: t.time_span_ns().map_or(0, |s| s.0),
        notes,
        kernel_types: kernel_types(f),
        kernels: kernel_stats(t, f),
        devices,
        idle,
        longest_gaps,
        launches: launch_stats(t, f),
        queues,
        comm_comp_overlap_pct,
    }
}

/// What `get_temporal_breakdown` asserts of a rank before it answers
/// (`idle_time <= kernel_time`, `compute_time <= kernel_time`,
/// `non_compute_time >= 0`): a breakdown that fails them is no answer of
/// HTA's.
fn hta_rejects(d: &TemporalBreakdown) -> bool {
    d.idle_ns > d.span_ns || d.compute_ns > d.span_ns || d.non_compute_ns < 0
}

fn device_rows(f: &Frame) -> impl Iterator<Item = usize> + '_ {
    (0..f.len()).filter(|&r| f.is_device(r))
}

/// HTA's `merge_kernel_intervals`: sorted by start, a new group when a
/// start lies after every earlier end; zero-length events stay (they move
/// the span).
fn merge_groups(mut v: Vec<Interval>) -> Vec<Interval> {
    crate::sort::by_key(&mut v, &|&(a, _)| a);
    let mut out: Vec<Interval> = Vec::new();
    let mut max_end = i64::MIN;
    for (a, b) in v {
        if out.is_empty() || a > max_end {
            out.push((a, b));
        } else {
            let last = out.last_mut().unwrap();
            last.1 = last.1.max(b);
        }
        max_end = max_end.max(b);
    }
    out
}

fn device_label(t: &Trace, f: &Frame, device: u32) -> String {
    match f.mode {
        Mode::Hta | Mode::Hta05 => "rank".into(),
        Mode::Exact => t.process_label(device as usize),
    }
}

fn lane_label(t: &Trace, f: &Frame, lane: i64) -> String {
    match f.mode {
        Mode::Hta | Mode::Hta05 => format!("stream {lane}"),
        Mode::Exact => {
            let process = t.tracks[lane as usize].process.0 as usize;
            format!(
                "{} · {}",
                t.process_label(process),
                t.track_label(lane as usize)
            )
        }
    }
}

fn temporal(t: &Trace, f: &Frame) -> Vec<TemporalBreakdown> {
    let mut by_device: HashMap<u32, Vec<usize>> = HashMap::default();
    for r in device_rows(f) {
        by_device.entry(f.device[r]).or_default().push(r);
    }
    let mut keys: Vec<u32> = by_device.keys().copied().collect();
    keys.sort_unstable();
    keys.into_iter()
        .map(|d| {
            let rows = &by_device[&d];
            let of_type = |k: KernelType| -> Vec<Interval> {
                rows.iter()
                    .filter(|&&r| f.kernel_type[r] == k)
                    .map(|&r| (f.ts[r], f.end[r]))
                    .collect()
            };
            let groups = merge_groups(rows.iter().map(|&r| (f.ts[r], f.end[r])).collect());
            let start = groups.first().map_or(0, |g| g.0);
            let end = groups.last().map_or(0, |g| g.1);
            let span = end - start;
            let busy: i64 = groups.iter().map(|(a, b)| b - a).sum();
            let comp_groups = merge_groups(of_type(KernelType::Computation));
            let compute: i64 = comp_groups.iter().map(|(a, b)| b - a).sum();
            let comp = intervals::union(of_type(KernelType::Computation));
            let comm = intervals::union(of_type(KernelType::Communication));
            let mem = intervals::union(of_type(KernelType::Memory));
            let other = intervals::union(of_type(KernelType::Other));
            let comp_comm = intervals::union([comp.clone(), comm.clone()].concat());
            let comp_comm_mem = intervals::union([comp_comm.clone(), mem.clone()].concat());
            let exposed = |x: &[Interval], under: &[Interval]| {
                intervals::total(x) - intervals::total(&intervals::intersect(x, under))
            };
            TemporalBreakdown {
                device: device_label(t, f, d),
                start_ns: start,
                end_ns: end,
                span_ns: span,
                busy_ns: busy,
                idle_ns: span - busy,
                compute_ns: compute,
                non_compute_ns: span - compute - (span - busy),
                exposed_communication_ns: exposed(&comm, &comp),
                exposed_memory_ns: exposed(&mem, &comp_comm),
                exposed_other_ns: exposed(&other, &comp_comm_mem),
                communication_ns: intervals::total(&comm),
                communication_overlapped_ns: intervals::total(&intervals::intersect(&comm, &comp)),
            }
        })
        .collect()
}

fn kernel_types(f: &Frame) -> Vec<KernelTypeTime> {
    if f.mode.is_hta() {
        // include_memory_kernels=True, HTA's default.
        let types: Vec<(&str, Vec<Interval>)> = KernelType::ALL[..3]
            .iter()
            .map(|&k| {
                let kernels = device_rows(f)
                    .filter(|&r| f.kernel_type[r] == k)
                    .map(|r| (f.ts[r], f.end[r]))
                    .collect();
                (k.as_str(), kernels)
            })
            .collect();
        return super::hta_kernel_types::kernel_types(&types)
            .into_iter()
            .map(|(kernel_type, time_ns)| KernelTypeTime {
                kernel_type,
                time_ns,
            })
            .collect();
    }
    // Each device swept on its own: kernels of two devices at the same
    // time are two devices' time, not one type overlapping another (a TPU's
    // cores, several GPUs in one process).
    let types = &KernelType::ALL;
    let mut sets_of: HashMap<u32, Vec<Vec<Interval>>> = HashMap::default();
    for r in device_rows(f) {
        let k = types
            .iter()
            .position(|&k| k == f.kernel_type[r])
            .unwrap_or(0);
        sets_of
            .entry(f.device[r])
            .or_insert_with(|| vec![Vec::new(); types.len()])[k]
            .push((f.ts[r], f.end[r]));
    }
    let mut by_mask: HashMap<u32, i64> = HashMap::default();
    for sets in sets_of.values() {
        for s in intervals::sweep(sets) {
            *by_mask.entry(s.mask).or_default() += s.end_ns - s.start_ns;
        }
    }
    let mut out: Vec<KernelTypeTime> = by_mask
        .into_iter()
        .map(|(mask, time_ns)| KernelTypeTime {
            kernel_type: types
                .iter()
                .enumerate()
                .filter(|(k, _)| mask & (1 << k) != 0)
                .map(|(_, t)| t.as_str())
                .collect::<Vec<_>>()
                .join(" overlapping "),
            time_ns,
        })
        .collect();
    by_time(&mut out);
    out
}

/// Kernel-type rows longest first, then by name.
pub(crate) fn by_time(rows: &mut [KernelTypeTime]) {
    crate::sort::by(rows, &|a, b| {
        b.time_ns
            .cmp(&a.time_ns)
            .then(a.kernel_type.cmp(&b.kernel_type))
    });
}

fn kernel_stats(t: &Trace, f: &Frame) -> Vec<KernelStats> {
    let mut by_name: HashMap<u32, Vec<usize>> = HashMap::default();
    for r in device_rows(f) {
        by_name.entry(f.name_id(t, r).0).or_default().push(r);
    }
    let mut out: Vec<KernelStats> = by_name
        .into_values()
        .map(|rows| {
            let durs: Vec<i64> = rows.iter().map(|&r| f.end[r] - f.ts[r]).collect();
            let n = durs.len() as f64;
            let total: i64 = durs.iter().sum();
            let mean = total as f64 / n;
            let var = if durs.len() > 1 {
                durs.iter().map(|&d| (d as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0)
            } else {
                0.0
            };
            KernelStats {
                name: f.name(t, rows[0]).to_string(),
                kernel_type: f.kernel_type[rows[0]],
                count: durs.len() as u64,
                total_ns: total,
                mean_ns: mean,
                min_ns: *durs.iter().min().unwrap(),
                max_ns: *durs.iter().max().unwrap(),
                stddev_ns: var.sqrt(),
            }
        })
        .collect();
    crate::sort::by(&mut out, &|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

fn idle_breakdown(t: &Trace, f: &Frame) -> (Option<Vec<IdleRow>>, Vec<Gap>) {
    let mut lanes: Vec<i64> = Vec::new();
    let mut by_lane: HashMap<i64, Vec<usize>> = HashMap::default();
    for r in (0..f.len()).filter(|&r| f.idle_lane[r]) {
        let e = by_lane.entry(f.lane[r]).or_default();
        if e.is_empty() {
            lanes.push(f.lane[r]);
        }
        e.push(r);
    }
    if lanes.is_empty() {
        return (None, Vec::new());
    }
    if f.mode == Mode::Exact {
        lanes.sort_unstable();
    }
    let mut rows = Vec::new();
    let mut gaps: Vec<Gap> = Vec::new();
    for lane in lanes {
        let mut ks = by_lane.remove(&lane).unwrap();
        crate::sort::by_key(&mut ks, &|&r| (f.ts[r], r));
        // category -> (time, gaps); a category exists once a kernel has it.
        let mut acc: HashMap<IdleCategory, (i64, u64)> = HashMap::default();
        let mut prev_end: Option<i64> = None;
        for &r in &ks {
            let launch_ts = match f.partner[r] {
                NO_ROW => None,
                p => Some(f.ts[p as usize]),
            };
            let cat = match prev_end {
                Some(pe) if launch_ts.is_some_and(|l| l > pe) => IdleCategory::HostWait,
                Some(pe) if f.ts[r] - pe < KERNEL_WAIT_NS => IdleCategory::KernelWait,
                _ => IdleCategory::Other,
            };
            let e = acc.entry(cat).or_default();
            if let Some(pe) = prev_end {
                let gap = f.ts[r] - pe;
                // HTA sums every interval, overlaps as negative waits; the
                // exact mode counts only time the lane stood idle.
                if f.mode.is_hta() || gap > 0 {
                    e.0 += gap;
                    e.1 += 1;
                }
                if f.mode == Mode::Exact && gap > 0 {
                    gaps.push(Gap {
                        lane,
                        lane_label: String::new(),
                        start_ns: pe,
                        end_ns: f.ts[r],
                        category: cat,
                        next_slice: f.slice[r],
                    });
                }
            }
            prev_end = Some(match (f.mode, prev_end) {
                (Mode::Exact, Some(pe)) => pe.max(f.end[r]),
                _ => f.end[r],
            });
        }
        let total: i64 = acc.values().map(|v| v.0).sum();
        let mut cats: Vec<_> = acc.into_iter().collect();
        crate::sort::by_key(&mut cats, &|(c, _)| *c);
        for (category, (idle_ns, n)) in cats {
            // HTA lists a category once a kernel has it (the first kernel
            // of a lane has "other" with no gap); the exact mode lists gaps.
            if f.mode == Mode::Exact && n == 0 {
                continue;
            }
            rows.push(IdleRow {
                lane,
                lane_label: lane_label(t, f, lane),
                category,
                idle_ns,
                gaps: n,
                ratio: (total != 0).then(|| idle_ns as f64 / total as f64),
            });
        }
    }
    crate::sort::by(&mut gaps, &|a, b| {
        (b.end_ns - b.start_ns)
            .cmp(&(a.end_ns - a.start_ns))
            .then(a.start_ns.cmp(&b.start_ns))
    });
    gaps.truncate(LISTED);
    for g in &mut gaps {
        g.lane_label = lane_label(t, f, g.lane);
    }
    (Some(rows), gaps)
}

/// (host row, device row) pairs whose launch statistics count.
fn launch_pairs(t: &Trace, f: &Frame) -> Vec<(usize, usize)> {
    match f.mode {
        Mode::Exact => device_rows(f)
            .filter(|&r| f.partner[r] != NO_ROW)
            .map(|r| (f.partner[r] as usize, r))
            .collect(),
        Mode::Hta | Mode::Hta05 => {
            let names: Vec<_> = HTA_LAUNCH_STAT_NAMES
                .iter()
                .filter_map(|n| t.strings.lookup(n))
                .collect();
            let mut wanted: rustc_hash::FxHashSet<i64> = Default::default();
            for r in 0..f.len() {
                if names.contains(&f.name_id(t, r)) {
                    wanted.insert(f.correlation[r]);
                }
            }
            // Rows carrying a wanted correlation, grouped by it; each
            // group's host × device rows are its pairs (a SQL inner join).
            let mut rows: Vec<(i64, bool, usize)> = (0..f.len())
                .filter(|&r| wanted.contains(&f.correlation[r]))
                .map(|r| (f.correlation[r], f.is_device(r), r))
                .collect();
            rows.sort_unstable();
            let mut pairs = Vec::new();
            for group in rows.chunk_by(|a, b| a.0 == b.0) {
                let split = group.partition_point(|x| !x.1);
                for h in &group[..split] {
                    for d in &group[split..] {
                        pairs.push((h.2, d.2));
                    }
                }
            }
            pairs.sort_unstable();
            pairs
        }
    }
}

fn launch_stats(t: &Trace, f: &Frame) -> LaunchStats {
    let mut s = LaunchStats::default();
    let mut buckets = [0u64; 12];
    let mut worst: Vec<(u32, u32, i64)> = Vec::new();
    let mut replays: rustc_hash::FxHashSet<usize> = Default::default();
    for (h, d) in launch_pairs(t, f) {
        if f.mode == Mode::Exact && t.str(f.name_id(t, h)).contains("GraphLaunch") {
            replays.insert(h);
            s.graph_kernels += 1;
            continue;
        }
        let cpu = f.end[h] - f.ts[h];
        let dev = f.end[d] - f.ts[d];
        let raw = f.ts[d] - f.ts[h] - cpu;
        let delay = raw.max(0);
        s.launches += 1;
        s.cpu_total_ns += cpu;
        s.device_total_ns += dev;
        s.delay_total_ns += delay;
        s.delay_max_ns = s.delay_max_ns.max(delay);
        s.short_kernels += u64::from(cpu <= RUNTIME_CUTOFF_NS && dev < cpu);
        s.runtime_outliers += u64::from(cpu > RUNTIME_CUTOFF_NS);
        s.delay_outliers += u64::from(delay > LAUNCH_DELAY_CUTOFF_NS);
        s.started_before_return += u64::from(raw < 0);
        let from_start = (f.ts[d] - f.ts[h]).max(0);
        s.from_call_start_total_ns += from_start;
        s.from_call_start_max_ns = s.from_call_start_max_ns.max(from_start);
        let mut k = 0;
        while k + 1 < buckets.len() && delay >= 1000 << k {
            k += 1;
        }
        buckets[k] += 1;
        worst.push((f.slice[h], f.slice[d], delay));
    }
    s.graph_launches = replays.len() as u64;
    s.delay_histogram = buckets
        .iter()
        .enumerate()
        .map(|(k, &n)| {
            let upper = if k + 1 == buckets.len() {
                i64::MAX
            } else {
                1000 << k
            };
            (upper, n)
        })
        .collect();
    crate::sort::by(&mut worst, &|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    worst.truncate(LISTED);
    s.worst = worst;
    s
}

fn queue_row(t: &Trace, f: &Frame, lane: i64, mut ev: Vec<QueueEvent>) -> QueueRow {
    // (time, order at a tie, ±1). At one timestamp device starts count
    // before launches: what the device did by then is done.
    ev.sort();
    let (mean, max) = change_point_stats(&ev);
    // HTA sorts its launches and starts by time alone with numpy's
    // unstable sort, so the order of a launch and a start at the same
    // timestamp is not defined (on one machine it depends on the array's
    // size and the CPU's SIMD sort): its mean and max lie between those of
    // the two orders, starts first and launches first.
    let launches_first = {
        let mut v = ev.clone();
        v.sort_by_key(|&(at, tie, d, r)| (at, 1 - tie, d, r));
        change_point_stats(&v)
    };
    let mut weighted = 0f64;
    let mut full = 0i64;
    let mut q = 0i64;
    let mut last_t = ev.first().map_or(0, |e| e.0);
    for &(at, _, d, _) in &ev {
        weighted += q as f64 * (at - last_t) as f64;
        if q >= FULL_QUEUE {
            full += at - last_t;
        }
        last_t = at;
        q += d;
    }
    let span = ev.last().map_or(0, |e| e.0) - ev.first().map_or(0, |e| e.0);
    QueueRow {
        lane,
        lane_label: lane_label(t, f, lane),
        samples: ev.len() as u64,
        mean,
        max,
        mean_at_ties: (mean, launches_first.0),
        max_at_ties: (max, launches_first.1),
        time_weighted_mean: if span > 0 {
            weighted / span as f64
        } else {
            0.0
        },
        full_queue_ns: full,
    }
}

/// The mean and max of the queue length over its change points, in
/// `ev`'s order.
fn change_point_stats(ev: &[QueueEvent]) -> (f64, i64) {
    let mut q = 0i64;
    let mut sum = 0f64;
    let mut max = i64::MIN;
    for &(_, _, d, _) in ev {
        q += d;
        sum += q as f64;
        max = max.max(q);
    }
    (sum / ev.len().max(1) as f64, max)
}

fn hta_queues(t: &Trace, f: &Frame) -> Option<Vec<QueueRow>> {
    let mut by_lane = hta_queue_events(t, f)?;
    let mut lanes: Vec<i64> = by_lane.keys().copied().collect();
    lanes.sort_unstable();
    Some(
        lanes
            .into_iter()
            .map(|l| queue_row(t, f, l, by_lane.remove(&l).unwrap()))
            .collect(),
    )
}

/// The exact mode's queue changes by lane: +1 at each linked launch call's
/// start, −1 at its work's start.
fn exact_queue_events(t: &Trace, f: &Frame) -> HashMap<i64, Vec<QueueEvent>> {
    let mut by_lane: HashMap<i64, Vec<QueueEvent>> = HashMap::default();
    for (h, d) in launch_pairs(t, f) {
        let e = by_lane.entry(f.lane[d]).or_default();
        e.push((f.ts[h], 1, 1, h));
        e.push((f.ts[d], 0, -1, d));
    }
    by_lane
}

fn exact_queues(t: &Trace, f: &Frame) -> Vec<QueueRow> {
    let mut by_lane = exact_queue_events(t, f);
    let mut lanes: Vec<i64> = by_lane.keys().copied().collect();
    lanes.sort_unstable();
    lanes
        .into_iter()
        .map(|l| queue_row(t, f, l, by_lane.remove(&l).unwrap()))
        .collect()
}

impl DeviceTimeReport {
    /// The report in HTA's terms, the object `tracelane analyze --hta
    /// --format json` prints: µs, percentages 0–100, rounded where HTA
    /// rounds (temporal and overlap to 0.01, kernel-type shares to 0.1,
    /// idle times and ratios to 0.01). The first device stands for the rank.
    /// `critical_path` is the same scope's, under HTA's rules (null where
    /// HTA's analysis fails).
    pub fn hta_json(
        &self,
        critical_path: Option<&super::critical_path::CriticalPathReport>,
    ) -> serde_json::Value {
        use serde_json::json;
        let us = |ns: i64| ns as f64 / 1000.0;
        let round = |x: f64, places: i32| {
            let k = 10f64.powi(places);
            (x * k).round() / k
        };
        let temporal = self.devices.first().map(|d| {
            let pct = |x: i64| {
                if d.span_ns == 0 {
                    serde_json::Value::Null
                } else {
                    json!(round(100.0 * x as f64 / d.span_ns as f64, 2))
                }
            };
            json!({
                "idle_us": us(d.idle_ns),
                "compute_us": us(d.compute_ns),
                "non_compute_us": us(d.non_compute_ns),
                "kernel_span_us": us(d.span_ns),
                "idle_pct": pct(d.idle_ns),
                "compute_pct": pct(d.compute_ns),
                "non_compute_pct": pct(d.non_compute_ns),
            })
        });
        let type_total: i64 = self.kernel_types.iter().map(|k| k.time_ns).sum();
        let kernel_types: Vec<_> = self
            .kernel_types
            .iter()
            .map(|k| {
                json!({
                    "kernel_type": k.kernel_type,
                    "sum_us": us(k.time_ns),
                    // HTA divides by the total: 0 / 0 is its NaN (null).
                    "percentage": (type_total > 0)
                        .then(|| round(100.0 * k.time_ns as f64 / type_total as f64, 1)),
                })
            })
            .collect();
        let idle = self.idle.as_ref().map(|rows| {
            rows.iter()
                .map(|r| {
                    json!({
                        "stream": r.lane,
                        "category": r.category.as_str(),
                        "idle_us": round(us(r.idle_ns), 2),
                        "ratio": r.ratio.map(|x| round(x, 2)),
                    })
                })
                .collect::<Vec<_>>()
        });
        let l = &self.launches;
        let queues = self.queues.as_ref().map(|qs| {
            qs.iter()
                .map(|q| {
                    json!({
                        "stream": q.lane,
                        "mean": q.mean,
                        "max": q.max,
                        "mean_at_ties": [q.mean_at_ties.0, q.mean_at_ties.1],
                        "max_at_ties": [q.max_at_ties.0, q.max_at_ties.1],
                    })
                })
                .collect::<Vec<_>>()
        });
        json!({
            "temporal_breakdown": temporal,
            "kernel_types": kernel_types,
            "idle_breakdown": idle,
            "launch_stats": {
                "launches": l.launches,
                "launch_delay_sum_us": us(l.delay_total_ns),
                "launch_delay_max_us": us(l.delay_max_ns),
                "short_kernels": l.short_kernels,
                "runtime_outliers": l.runtime_outliers,
                "launch_delay_outliers": l.delay_outliers,
            },
            "comm_comp_overlap_pct": self.comm_comp_overlap_pct.first().copied().flatten().map(|x| round(x, 2)),
            "queue_length": queues,
            "critical_path": critical_path.map(|c| c.hta_json()),
        })
    }
}

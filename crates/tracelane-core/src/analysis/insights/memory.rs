//! Memory rules: what holds the peak, reserved memory the program never
//! used, segments released and reserved again, out-of-memory errors and
//! activations that recomputation would remove. They read the memory
//! report ([`crate::analysis::memory`]: the profiler's `[memory]` records,
//! a raw memory timeline's categories, an allocator snapshot).
//!
//! A memory finding is ranked by its bytes ([`Finding::bytes`]), not by
//! time — out-of-memory errors first: freeing memory does not shorten the
//! run, it lets a larger batch or model fit. Its severity is its bytes'
//! share of the device's peak.
//! Only segment churn also costs time (`cudaFree` synchronises the
//! device), bounded by the critical path like every other gain.

use super::cx::{us, Cx, RuleResult};
use super::report::{Evidence, Finding, Severity};
use super::rules::{
    MAX_EVIDENCE, MEMORY_ACTIVATION_SHARE, MEMORY_CHURN_MIN_RELEASES, MEMORY_MIN_BYTES,
    MEMORY_PEAK_SHARE, MEMORY_RESERVED_FACTOR, MEMORY_RESERVED_MIN_BYTES, RULES,
};
use crate::analysis::intervals::Interval;
use crate::analysis::memory::{DeviceMemory, LiveGroup, MemoryReport};
use crate::analysis::memory_events::{memory_records, MemoryRecord};
use crate::category::Category;
use crate::model::{Trace, NO_SLICE};
use crate::numbers::fmt_mem;

/// Every rule of this family, in the order the report lists them.
pub(super) const MEMORY_RULES: [&str; 5] = [
    "memory_peak_holder",
    "memory_reserved_unused",
    "memory_segment_churn",
    "memory_oom",
    "memory_recompute",
];

/// Runtime calls that reserve or release device memory for the caching
/// allocator (its `cudaMalloc` / `cudaFree`, HIP's the same; async and
/// managed variants alike).
const SEGMENT_CALLS: &[&str] = &[
    "cudaMalloc",
    "cudaFree",
    "cudaMallocAsync",
    "cudaFreeAsync",
    "hipMalloc",
    "hipFree",
    "hipMallocAsync",
    "hipFreeAsync",
];

/// The rules of this family over `report` (`None`: the trace holds no
/// memory records, snapshot or HBM usage).
pub(super) fn rules(cx: &Cx, report: Option<&MemoryReport>) -> Vec<RuleResult> {
    let Some(r) = report.filter(|r| !r.devices.is_empty() || has_snapshot(r)) else {
        let hbm_only = report.is_some_and(|r| !r.hbm.is_empty());
        let why = || {
            if hbm_only {
                "Neuron HBM usage only: these rules read PyTorch's allocator (its spill is neuron_hbm_spill's)".to_string()
            } else {
                "no memory in this trace: record it with profile_memory=True, or open an allocator snapshot (torch.cuda.memory._dump_snapshot) with it".to_string()
            }
        };
        return MEMORY_RULES
            .iter()
            .map(|&id| (id, (Vec::new(), why())))
            .collect();
    };
    let activations = recompute(r);
    // A peak held by activations is the recompute finding's; not twice.
    let recomputed: Vec<&str> = activations
        .0
        .iter()
        .filter_map(|f| f.key.split(':').nth(1))
        .collect();
    vec![
        ("memory_peak_holder", peak_holders(cx, r, &recomputed)),
        ("memory_reserved_unused", reserved_unused(cx, r)),
        ("memory_segment_churn", segment_churn(cx, r)),
        ("memory_oom", ooms(cx, r)),
        ("memory_recompute", activations),
    ]
}

fn has_snapshot(r: &MemoryReport) -> bool {
    r.snapshot.is_some()
}

/// A memory finding: ranked by `bytes`, its severity their share of `of`.
#[allow(clippy::too_many_arguments)]
fn finding(
    rule: &str,
    key: String,
    title: String,
    (bytes, of): (i64, i64),
    (gain_ns, gain_basis): (i64, String),
    evidence: Evidence,
    action: String,
) -> Finding {
    let r = RULES.iter().find(|r| r.id == rule).expect("a listed rule");
    Finding {
        rule: rule.into(),
        title,
        severity: Severity::of(bytes, of),
        gain_ns,
        gain_basis,
        condition: r.condition.into(),
        evidence,
        action,
        key: format!("{rule}:{key}"),
        bytes: Some(bytes),
    }
}

const NO_TIME: &str = "memory, not time: the bytes it frees at the peak";

fn share(part: i64, whole: i64) -> String {
    format!("{:.1} %", 100.0 * part as f64 / whole.max(1) as f64)
}

/// A point on the trace's clock as an evidence range.
fn at(ns: i64) -> Interval {
    (ns, ns + 1)
}

/// The top-level CPU ops named `op` running at `ns`.
fn running(t: &Trace, op: &str, ns: i64) -> Vec<u32> {
    let Some(name) = t.strings.lookup(op) else {
        return Vec::new();
    };
    let s = &t.slices;
    (0..s.len())
        .filter(|&i| {
            s.name[i] == name
                && s.category[i] == Category::CpuOp
                && s.start_ns[i] <= ns
                && ns < s.end_ns(i)
                && (s.parent[i] == NO_SLICE || s.category[s.parent[i] as usize] != Category::CpuOp)
        })
        .map(|i| i as u32)
        .collect()
}

/// Live bytes summed by `key` (`None` keys left out), largest first.
fn sum_by<'a>(
    groups: &'a [LiveGroup],
    key: &dyn Fn(&'a LiveGroup) -> Option<&'a str>,
) -> Vec<(&'a str, i64)> {
    let mut out: Vec<(&str, i64)> = Vec::new();
    for g in groups {
        let Some(k) = key(g) else { continue };
        match out.iter_mut().find(|x| x.0 == k) {
            Some(x) => x.1 = x.1.saturating_add(g.bytes),
            None => out.push((k, g.bytes)),
        }
    }
    out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    out
}

/// One op (else one module) holding at least [`MEMORY_PEAK_SHARE`] of a
/// device's peak; an allocator snapshot's line of the program likewise.
fn peak_holders(cx: &Cx, r: &MemoryReport, recomputed: &[&str]) -> (Vec<Finding>, String) {
    let mut out = Vec::new();
    let mut seen = Vec::new();
    for d in &r.devices {
        let peak = d.peak_allocated_bytes;
        let ops = sum_by(&d.live_at_peak, &|g| {
            (g.op != "(no op)").then_some(g.op.as_str())
        });
        let modules = sum_by(&d.live_at_peak, &|g| g.module.as_deref());
        seen.push(format!(
            "{}: {} held by {}",
            d.device,
            ops.first().map_or("nothing".into(), |o| share(o.1, peak)),
            ops.first().map_or("no op", |o| o.0)
        ));
        let dominates =
            |b: i64| b as f64 >= MEMORY_PEAK_SHARE * peak as f64 && b >= MEMORY_MIN_BYTES;
        let top = match (ops.first(), modules.first()) {
            (Some(o), _) if dominates(o.1) => ("op", *o),
            (_, Some(m)) if dominates(m.1) => ("module", *m),
            _ => continue,
        };
        let activation: i64 = d
            .live_at_peak
            .iter()
            .filter(|g| g.category.as_deref() == Some("activation"))
            .filter(|g| {
                if top.0 == "op" {
                    g.op == top.1 .0
                } else {
                    g.module.as_deref() == Some(top.1 .0)
                }
            })
            .map(|g| g.bytes)
            .sum();
        if recomputed.contains(&d.device.as_str()) && 2 * activation >= top.1 .1 {
            seen.push(format!(
                "{}: {}'s share is activations (memory_recompute)",
                d.device, top.1 .0
            ));
            continue;
        }
        out.push(peak_holder(cx, d, top));
    }
    snapshot_holders(cx, r, &mut out, &mut seen);
    let why = format!(
        "no op, module or line holds ≥ {:.0} % of a peak and ≥ {}, activations aside (memory_recompute says those) ({})",
        100.0 * MEMORY_PEAK_SHARE,
        fmt_mem(MEMORY_MIN_BYTES),
        seen.join("; ")
    );
    (out, why)
}

fn peak_holder(cx: &Cx, d: &DeviceMemory, (kind, (name, bytes)): (&str, (&str, i64))) -> Finding {
    let peak = d.peak_allocated_bytes;
    let mine: Vec<LiveGroup> = d
        .live_at_peak
        .iter()
        .filter(|g| match kind {
            "op" => g.op == name,
            _ => g.module.as_deref() == Some(name),
        })
        .cloned()
        .collect();
    let count: u64 = mine.iter().map(|g| g.count).sum();
    let categories = sum_by(&mine, &|g| g.category.as_deref());
    let during = if kind == "op" {
        running(cx.t, name, d.peak_ns)
    } else {
        Vec::new()
    };
    let mut numbers = vec![
        ("device".into(), d.device.clone()),
        ("peak allocated".into(), fmt_mem(peak)),
        (
            format!("held by this {kind}"),
            format!(
                "{} in {count} allocation(s), {} of the peak",
                fmt_mem(bytes),
                share(bytes, peak)
            ),
        ),
        ("peak at".into(), us((d.peak_at_us * 1e3) as i64)),
    ];
    for (c, b) in categories.iter().take(4) {
        numbers.push((format!("of which {c}"), fmt_mem(*b)));
    }
    let others = sum_by(&mine, &|g| match kind {
        "op" => g.module.as_deref(),
        _ => Some(g.op.as_str()),
    });
    if !others.is_empty() {
        let what = if kind == "op" { "modules" } else { "ops" };
        let list: Vec<String> = others
            .iter()
            .take(5)
            .map(|(n, b)| format!("{n} {}", fmt_mem(*b)))
            .collect();
        numbers.push((format!("by {what}"), list.join(", ")));
    }
    let action = if !during.is_empty() {
        format!("The peak falls while {name} runs: its temporaries and the output it is building hold the memory. Compute it in smaller pieces (chunk the batch or sequence dimension), or use a fused or memory-efficient implementation of it (torch.compile fuses temporaries away; scaled_dot_product_attention instead of an explicit softmax(QKᵀ)V).")
    } else if categories.first().is_some_and(|c| c.0 == "activation") {
        format!("What {name} made is saved for the backward pass and still held at the peak: recompute it instead (torch.utils.checkpoint around the module that makes it), or make it smaller (a lower-precision dtype, a smaller micro-batch).")
    } else {
        format!("What {name} made is still held at the peak: release it sooner (drop the last reference, use the in-place variant, or move the work that needs it earlier), or make it smaller (a lower-precision dtype, a smaller batch).")
    };
    let s = &cx.t.slices;
    let ranges = match during.first() {
        Some(&i) => vec![(s.start_ns[i as usize], s.end_ns(i as usize))],
        None => vec![at(d.peak_ns)],
    };
    finding(
        "memory_peak_holder",
        format!("{}:{kind}:{name}", d.device),
        format!(
            "{name} holds {} of {}'s peak ({})",
            share(bytes, peak),
            d.device,
            fmt_mem(peak)
        ),
        (bytes, peak),
        (0, NO_TIME.into()),
        Evidence {
            numbers,
            ops: vec![name.to_string()],
            slice_count: during.len(),
            slices: during.into_iter().take(MAX_EVIDENCE).collect(),
            ranges,
        },
        action,
    )
}

fn snapshot_holders(cx: &Cx, r: &MemoryReport, out: &mut Vec<Finding>, seen: &mut Vec<String>) {
    let Some(snap) = &r.snapshot else { return };
    for d in &snap.devices {
        let peak = d.peak_allocated_bytes as i64;
        let Some(h) = d.at_peak.holders.first() else {
            continue;
        };
        seen.push(format!(
            "{} (snapshot): {} held by {}",
            d.device,
            share(h.bytes as i64, peak),
            h.frame
        ));
        if (h.bytes as f64) < MEMORY_PEAK_SHARE * peak as f64
            || (h.bytes as i64) < MEMORY_MIN_BYTES
            || h.frame.starts_with('(')
        {
            continue;
        }
        let ns = epoch_us_to_ns(cx.t, d.peak_allocated_at_us);
        let mut numbers = vec![
            ("device".into(), d.device.clone()),
            ("peak allocated (allocator snapshot)".into(), fmt_mem(peak)),
            (
                "held by this line".into(),
                format!(
                    "{} in {} block(s), {} of the peak",
                    fmt_mem(h.bytes as i64),
                    h.count,
                    share(h.bytes as i64, peak)
                ),
            ),
        ];
        if !h.stack.is_empty() {
            numbers.push((
                "stack of its largest block".into(),
                h.stack
                    .iter()
                    .take(8)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" ← "),
            ));
        }
        out.push(finding(
            "memory_peak_holder",
            format!("{}:line:{}", d.device, h.frame),
            format!("{} holds {} of {}'s peak ({})", h.frame, share(h.bytes as i64, peak), d.device, fmt_mem(peak)),
            (h.bytes as i64, peak),
            (0, NO_TIME.into()),
            Evidence { numbers, ranges: vec![at(ns)], ..Evidence::default() },
            format!("The tensors allocated at {} are still held at the peak: release them sooner, make them smaller (dtype, batch), or recompute them (torch.utils.checkpoint) if they are saved for backward.", h.frame),
        ));
    }
}

/// A snapshot's epoch µs on the trace's clock (ns).
fn epoch_us_to_ns(t: &Trace, us: i64) -> i64 {
    us.saturating_mul(1000) - t.clock_offset_ns
}

/// The allocator's reserved peak well above its allocated peak: memory
/// reserved for blocks the program never needed at once.
fn reserved_unused(cx: &Cx, r: &MemoryReport) -> (Vec<Finding>, String) {
    let mut out = Vec::new();
    let mut seen = Vec::new();
    for d in r.devices.iter().filter(|d| d.peak_reserved_bytes > 0) {
        let label = d.device.clone();
        let Some((unused, numbers)) = unused_reserve(
            &label,
            d.peak_allocated_bytes,
            d.peak_reserved_bytes,
            "peak reserved",
            &mut seen,
        ) else {
            continue;
        };
        let reserved = d.peak_reserved_bytes;
        out.push(reserved_finding(
            d.device.clone(),
            "trace",
            (unused, reserved),
            numbers,
            d.peak_ns,
            None,
        ));
    }
    snapshot_reserved(cx, r, &mut out, &mut seen);
    let why = if seen.is_empty() {
        "no reserved bytes recorded (CPU memory has none; the records carry Total Reserved on accelerators)".to_string()
    } else {
        format!(
            "reserved under {:.1}× allocated, or less than {} beyond it ({})",
            MEMORY_RESERVED_FACTOR,
            fmt_mem(MEMORY_RESERVED_MIN_BYTES),
            seen.join("; ")
        )
    };
    (out, why)
}

/// Reserved bytes never allocated at once on `label`, with the figures
/// that say so, when they pass [`MEMORY_RESERVED_FACTOR`] and
/// [`MEMORY_RESERVED_MIN_BYTES`]; what was seen goes to `seen` either way.
fn unused_reserve(
    label: &str,
    alloc: i64,
    reserved: i64,
    reserved_name: &str,
    seen: &mut Vec<String>,
) -> Option<(i64, Vec<(String, String)>)> {
    seen.push(format!(
        "{label}: reserved {} for {} allocated",
        fmt_mem(reserved),
        fmt_mem(alloc)
    ));
    let unused = reserved - alloc;
    if (reserved as f64) < MEMORY_RESERVED_FACTOR * alloc as f64
        || unused < MEMORY_RESERVED_MIN_BYTES
    {
        return None;
    }
    let numbers = vec![
        ("device".into(), label.to_string()),
        (reserved_name.into(), fmt_mem(reserved)),
        ("peak allocated".into(), fmt_mem(alloc)),
        (
            "reserved, never allocated at once".into(),
            format!(
                "{} ({} of reserved)",
                fmt_mem(unused),
                share(unused, reserved)
            ),
        ),
    ];
    Some((unused, numbers))
}

fn reserved_finding(
    device: String,
    source: &str,
    (unused, reserved): (i64, i64),
    numbers: Vec<(String, String)>,
    at_ns: i64,
    expandable: Option<bool>,
) -> Finding {
    let action = if expandable == Some(true) {
        "Expandable segments are already on: the reserved bytes are freed blocks kept for reuse by another stream or private pool (CUDA graphs, MemPool), or released only by torch.cuda.empty_cache(). Check which streams allocate; garbage_collection_threshold in PYTORCH_CUDA_ALLOC_CONF makes the allocator return unused blocks before it reserves more."
    } else {
        "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: segments then grow in place and freed pieces join, instead of new segments being reserved beside fragmented ones (PyTorch's own advice in its out-of-memory message). If allocation sizes vary from step to step (dynamic shapes), padding them to a few sizes helps the cache reuse blocks."
    };
    finding(
        "memory_reserved_unused",
        format!("{device}:{source}"),
        format!(
            "{device} reserves {} it never allocates at once ({} of reserved)",
            fmt_mem(unused),
            share(unused, reserved)
        ),
        (unused, reserved),
        (
            0,
            "memory, not time: the bytes the allocator would not reserve".into(),
        ),
        Evidence {
            numbers,
            ranges: vec![at(at_ns)],
            ..Evidence::default()
        },
        action.into(),
    )
}

fn snapshot_reserved(cx: &Cx, r: &MemoryReport, out: &mut Vec<Finding>, seen: &mut Vec<String>) {
    let Some(snap) = &r.snapshot else { return };
    for d in &snap.devices {
        let p = &d.at_peak;
        let reserved = d.peak_reserved_bytes as i64;
        let Some((unused, mut numbers)) = unused_reserve(
            &format!("{} (snapshot)", d.device),
            d.peak_allocated_bytes as i64,
            reserved,
            "peak reserved (allocator snapshot)",
            seen,
        ) else {
            continue;
        };
        numbers[0].1 = d.device.clone();
        numbers.extend([
            (
                "at the allocated peak: free in segments".into(),
                free_in_segments(p),
            ),
            (
                "expandable segments".into(),
                if snap.expandable_segments {
                    "on"
                } else {
                    "off"
                }
                .into(),
            ),
        ]);
        let ns = epoch_us_to_ns(cx.t, d.peak_allocated_at_us);
        out.push(reserved_finding(
            d.device.clone(),
            "snapshot",
            (unused, reserved),
            numbers,
            ns,
            Some(snap.expandable_segments),
        ));
    }
}

/// Releases of reserved memory per device: falls of `Total Reserved`
/// between consecutive records (the caching allocator releases segments
/// only on `torch.cuda.empty_cache()`, before retrying a failed
/// allocation, or past `garbage_collection_threshold`), with the most
/// one of them released.
fn releases(recs: &[MemoryRecord]) -> Vec<(i64, i64, u64, i64, Vec<i64>)> {
    // (device type, id, releases, the largest release, when)
    let mut out: Vec<(i64, i64, u64, i64, Vec<i64>)> = Vec::new();
    let mut last: Vec<((i64, i64), i64)> = Vec::new();
    for r in recs {
        let Some(now) = r.total_reserved else {
            continue;
        };
        let key = (r.device_type, r.device_id);
        let before = match last.iter_mut().find(|x| x.0 == key) {
            Some(x) => std::mem::replace(&mut x.1, now),
            None => {
                last.push((key, now));
                continue;
            }
        };
        if now < before {
            let row = match out.iter().position(|x| (x.0, x.1) == key) {
                Some(k) => k,
                None => {
                    out.push((key.0, key.1, 0, 0, Vec::new()));
                    out.len() - 1
                }
            };
            out[row].2 += 1;
            out[row].3 = out[row].3.max(before - now);
            out[row].4.push(r.ts_ns);
        }
    }
    out
}

/// Segment allocation calls in the scope: their ranges and total time.
fn segment_calls(cx: &Cx) -> (Vec<Interval>, Vec<u32>, i64) {
    let t = cx.t;
    let ids: Vec<_> = SEGMENT_CALLS
        .iter()
        .filter_map(|n| t.strings.lookup(n))
        .collect();
    let s = &t.slices;
    let mut ranges = Vec::new();
    let mut slices = Vec::new();
    let mut total = 0;
    for i in 0..s.len() {
        if s.category[i] == Category::Runtime
            && ids.contains(&s.name[i])
            && cx.inside(s.start_ns[i])
        {
            ranges.push((s.start_ns[i], s.end_ns(i)));
            slices.push(i as u32);
            total += s.dur_ns[i];
        }
    }
    (ranges, slices, total)
}

/// Reserved memory released and reserved again, repeatedly.
fn segment_churn(cx: &Cx, r: &MemoryReport) -> (Vec<Finding>, String) {
    let recs = memory_records(cx.t, &|ts| cx.inside(ts));
    let mut out = Vec::new();
    let mut seen = Vec::new();
    let (ranges, slices, call_ns) = segment_calls(cx);
    for (ty, id, count, bytes, when) in releases(&recs) {
        let device = r
            .devices
            .iter()
            .find(|d| d.device == crate::analysis::memory::device_name(ty, id))
            .map_or_else(|| format!("device {ty}:{id}"), |d| d.device.clone());
        seen.push(format!("{device}: {count} release(s)"));
        if count < MEMORY_CHURN_MIN_RELEASES {
            continue;
        }
        let peak = r
            .devices
            .iter()
            .find(|d| d.device == device)
            .map_or(bytes, |d| d.peak_reserved_bytes);
        let numbers = vec![
            ("device".into(), device.clone()),
            ("releases of reserved memory".into(), count.to_string()),
            ("the largest release".into(), fmt_mem(bytes)),
            (
                "segment calls (cudaMalloc / cudaFree …)".into(),
                format!("{} × {}", slices.len(), us(call_ns)),
            ),
        ];
        let mut ev_ranges: Vec<Interval> = when.iter().map(|&ns| at(ns)).collect();
        ev_ranges.truncate(MAX_EVIDENCE);
        out.push(churn_finding(
            cx,
            &device,
            "trace",
            (bytes, peak),
            numbers,
            (&ranges, &slices, call_ns),
            ev_ranges,
        ));
    }
    snapshot_churn(cx, r, &mut out, &mut seen, (&ranges, &slices, call_ns));
    let why = format!(
        "fewer than {MEMORY_CHURN_MIN_RELEASES} releases of reserved memory per device ({})",
        if seen.is_empty() {
            "none recorded".to_string()
        } else {
            seen.join("; ")
        }
    );
    (out, why)
}

fn churn_finding(
    cx: &Cx,
    device: &str,
    source: &str,
    (bytes, peak): (i64, i64),
    numbers: Vec<(String, String)>,
    (call_ranges, call_slices, call_ns): (&[Interval], &[u32], i64),
    ranges: Vec<Interval>,
) -> Finding {
    let gain = if call_ns > 0 {
        cx.bounded(call_ns, call_ranges)
    } else {
        (0, "no cudaMalloc / cudaFree calls in the trace to time: each release is a device-wide synchronisation and each re-reservation a cudaMalloc".into())
    };
    let mut f = finding(
        "memory_segment_churn",
        format!("{device}:{source}"),
        format!("{device} releases reserved memory {} times and reserves it again (up to {} each time)", numbers[1].1, fmt_mem(bytes)),
        (bytes, peak),
        gain,
        Evidence {
            numbers,
            ops: Vec::new(),
            slices: call_slices.iter().take(MAX_EVIDENCE).copied().collect(),
            slice_count: call_slices.len(),
            ranges,
        },
        "Remove torch.cuda.empty_cache() from the loop: the caching allocator keeps freed segments to reuse them without a cudaMalloc, and each release (cudaFree) synchronises the device. If it releases before retrying a failed allocation, lower the peak instead (see the memory findings above); a garbage_collection_threshold in PYTORCH_CUDA_ALLOC_CONF releases only what is unused.".into(),
    );
    if f.gain_ns > 0 {
        f.severity = f.severity.min(Severity::of(f.gain_ns, cx.wall_ns));
    }
    f
}

fn snapshot_churn(
    cx: &Cx,
    r: &MemoryReport,
    out: &mut Vec<Finding>,
    seen: &mut Vec<String>,
    calls: (&[Interval], &[u32], i64),
) {
    use crate::memory_snapshot::Action;
    let (Some(rep), Some(snap)) = (&r.snapshot, cx.t.memory_snapshot.as_deref()) else {
        return;
    };
    for (d, dev) in rep.devices.iter().zip(&snap.devices) {
        let e = &snap.entries;
        let rows = dev.entries.start as usize..dev.entries.end as usize;
        let release = |i: usize| matches!(e.action[i], Action::SegmentFree | Action::SegmentUnmap);
        let freed: Vec<usize> = rows.clone().filter(|&i| release(i)).collect();
        // One release is a run of segment frees with nothing between them
        // (empty_cache() frees every unused segment at once).
        let episodes: Vec<usize> = freed
            .iter()
            .copied()
            .filter(|&i| i == rows.start || !release(i - 1))
            .collect();
        let count = episodes.len() as u64;
        seen.push(format!(
            "{} (snapshot): {count} release(s) of {} segment(s)",
            d.device,
            freed.len()
        ));
        if count < MEMORY_CHURN_MIN_RELEASES {
            continue;
        }
        // The most one release gave back.
        let mut bytes = 0i64;
        let mut run = 0i64;
        for i in rows.clone() {
            if release(i) {
                run = run.saturating_add(e.size[i].min(i64::MAX as u64) as i64);
                bytes = bytes.max(run);
            } else {
                run = 0;
            }
        }
        let numbers = vec![
            ("device".into(), d.device.clone()),
            (
                "releases of reserved memory (allocator snapshot)".into(),
                count.to_string(),
            ),
            ("segments released".into(), freed.len().to_string()),
            ("the largest release".into(), fmt_mem(bytes)),
            ("segments reserved".into(), d.segment_allocs.to_string()),
            (
                "out-of-memory retries among them".into(),
                d.ooms.len().to_string(),
            ),
        ];
        let ranges = episodes
            .iter()
            .take(MAX_EVIDENCE)
            .map(|&i| at(epoch_us_to_ns(cx.t, e.time_us[i])))
            .collect();
        out.push(churn_finding(
            cx,
            &d.device,
            "snapshot",
            (bytes, d.peak_reserved_bytes as i64),
            numbers,
            calls,
            ranges,
        ));
    }
}

/// The free bytes inside an allocator state's reserved segments, in words.
fn free_in_segments(s: &crate::memory_snapshot::report::StateSummary) -> String {
    format!(
        "{} in {} block(s), the largest {}",
        fmt_mem(s.free_bytes as i64),
        s.free_blocks,
        fmt_mem(s.largest_free_block as i64)
    )
}

/// Every out-of-memory in an allocator snapshot, with its cause.
fn ooms(cx: &Cx, r: &MemoryReport) -> (Vec<Finding>, String) {
    let Some(snap) = &r.snapshot else {
        return (
            Vec::new(),
            "no allocator snapshot: a profiler trace does not record out-of-memory errors".into(),
        );
    };
    let mut out = Vec::new();
    for d in &snap.devices {
        for (k, o) in d.ooms.iter().enumerate() {
            let s = &o.state;
            let mut numbers = vec![
                ("device".into(), d.device.clone()),
                (
                    "requested".into(),
                    format!(
                        "{} (a block of {})",
                        fmt_mem(o.request_bytes as i64),
                        fmt_mem(o.block_bytes as i64)
                    ),
                ),
                (
                    "allocated / reserved then".into(),
                    format!(
                        "{} / {}",
                        fmt_mem(s.allocated_bytes as i64),
                        fmt_mem(s.reserved_bytes as i64)
                    ),
                ),
                ("free inside reserved segments".into(), free_in_segments(s)),
                (
                    "free on the device (CUDA)".into(),
                    fmt_mem(o.device_free_bytes as i64),
                ),
                ("cause".into(), o.cause.clone()),
            ];
            for h in s.holders.iter().take(3) {
                numbers.push((
                    format!("held at {}", h.frame),
                    format!("{} in {} block(s)", fmt_mem(h.bytes as i64), h.count),
                ));
            }
            let action = match o.cause.as_str() {
                "fragmentation" => "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True so freed pieces join into blocks large enough; or free long-lived tensors before the short-lived ones allocated around them.".to_string(),
                "pool" => "The free block belongs to another stream or a private pool (CUDA graphs, MemPool): allocate on the stream that frees, or release the pool (torch.cuda.empty_cache() frees unused private-pool segments).".to_string(),
                _ => match s.holders.first() {
                    Some(h) => format!("Lower the peak: {} is held at {} — release it sooner, recompute it (torch.utils.checkpoint), or make it smaller (dtype, batch); or raise the cap if one is set (set_per_process_memory_fraction).", fmt_mem(h.bytes as i64), h.frame),
                    None => "Lower the peak (a smaller batch, activation checkpointing, a lower-precision dtype) or raise the cap if one is set (set_per_process_memory_fraction).".to_string(),
                },
            };
            out.push(finding(
                "memory_oom",
                format!("{}:{}:{}", d.device, o.cause, k),
                format!(
                    "Out of memory on {}: {} asked — {}",
                    d.device,
                    fmt_mem(o.block_bytes as i64),
                    o.cause
                ),
                (
                    o.block_bytes as i64,
                    (s.reserved_bytes as i64).max(o.block_bytes as i64),
                ),
                (0, "memory, not time: the request that failed".into()),
                Evidence {
                    numbers,
                    ranges: vec![at(epoch_us_to_ns(cx.t, o.at_us))],
                    ..Evidence::default()
                },
                format!("{} {action}", o.explanation),
            ));
        }
    }
    for f in &mut out {
        f.severity = Severity::High;
    }
    let why = "the snapshot records no out-of-memory".to_string();
    (out, why)
}

/// Activations (PyTorch's category, from a raw memory timeline) holding
/// at least [`MEMORY_ACTIVATION_SHARE`] of a device's peak.
fn recompute(r: &MemoryReport) -> (Vec<Finding>, String) {
    let mut out = Vec::new();
    let mut seen = Vec::new();
    for d in &r.devices {
        let Some(c) = &d.categories else { continue };
        let act = c
            .at_peak
            .iter()
            .find(|x| x.category == "activation")
            .map_or(0, |x| x.bytes);
        let total: i64 = c.at_peak.iter().map(|x| x.bytes).sum();
        let peak = d.peak_allocated_bytes.max(total);
        seen.push(format!(
            "{}: activations {} of the peak",
            d.device,
            share(act, peak)
        ));
        if (act as f64) < MEMORY_ACTIVATION_SHARE * peak as f64 || act < MEMORY_MIN_BYTES {
            continue;
        }
        let live: Vec<LiveGroup> = d
            .live_at_peak
            .iter()
            .filter(|g| g.category.as_deref() == Some("activation"))
            .cloned()
            .collect();
        let modules = sum_by(&live, &|g| g.module.as_deref());
        let ops = sum_by(&live, &|g| Some(g.op.as_str()));
        let mut numbers = vec![
            ("device".into(), d.device.clone()),
            ("peak allocated".into(), fmt_mem(d.peak_allocated_bytes)),
            (
                "activations at the peak".into(),
                format!("{} ({})", fmt_mem(act), share(act, peak)),
            ),
        ];
        if total > d.peak_allocated_bytes {
            // PyTorch's categories count what was live before the profile.
            numbers.push((
                "all categories at the peak (with what predates the profile)".into(),
                fmt_mem(total),
            ));
        }
        for x in c.at_peak.iter().filter(|x| x.category != "activation") {
            numbers.push((x.category.clone(), fmt_mem(x.bytes)));
        }
        let top = |v: &[(&str, i64)]| {
            v.iter()
                .take(5)
                .map(|(n, b)| format!("{n} {}", fmt_mem(*b)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !modules.is_empty() {
            numbers.push(("activations by module".into(), top(&modules)));
        }
        if !ops.is_empty() {
            numbers.push(("activations by op".into(), top(&ops)));
        }
        let target = modules
            .first()
            .or(ops.first())
            .map_or("the largest blocks".to_string(), |x| x.0.to_string());
        out.push(finding(
            "memory_recompute",
            d.device.clone(),
            format!("Activations hold {} of {}'s peak: recomputing them frees up to {}", share(act, peak), d.device, fmt_mem(act)),
            (act, peak),
            (0, "memory, not time: the activations at the peak, an upper bound (checkpointing keeps each region's inputs and costs about one more forward of it)".into()),
            Evidence { numbers, ops: ops.iter().take(5).map(|x| x.0.to_string()).collect(), ranges: vec![at(d.peak_ns)], ..Evidence::default() },
            format!("Wrap {target} (and the blocks like it) in torch.utils.checkpoint, or use selective activation checkpointing, so its activations are recomputed in the backward pass instead of held from the forward; torch.compile's partitioner recomputes cheap pointwise activations on its own."),
        ));
    }
    let why = if seen.is_empty() {
        "no categories: drop export_memory_timeline's raw file (…raw.json.gz) with the trace"
            .to_string()
    } else {
        format!(
            "activations under {:.0} % of the peak or {} ({})",
            100.0 * MEMORY_ACTIVATION_SHARE,
            fmt_mem(MEMORY_MIN_BYTES),
            seen.join("; ")
        )
    };
    (out, why)
}

//! Host and launch: the device waiting on launches too small for their
//! overhead (launch-bound), or on host work between them (host-bound).

use crate::analysis::critical_path::Bound;
use crate::analysis::device_time::{Gap, IdleCategory, IdleRow};
use crate::analysis::intervals::{self, Interval};
use crate::analysis::warmup::median;
use crate::analysis::WhySlow;
use crate::category::Category;
use crate::model::NO_SLICE;

use super::cx::{pct, us, Cx};
use super::report::{Evidence, Finding};
use super::rules::{
    HOST_BOUND_IDLE_SHARE, HOST_BOUND_SYNC_SHARE, HOST_BOUND_WAIT_SHARE, LAUNCH_BOUND_HOST_SHARE,
    LAUNCH_BOUND_IDLE_SHARE, LAUNCH_BOUND_MIN_LAUNCHES, LAUNCH_BOUND_SHORT_SHARE, MAX_EVIDENCE,
    SYNCHRONOUS_CALLS, WAIT_CALLS,
};

/// The share of the scope the busiest device sat idle (its busy time over
/// the scope's wall time, or its span where that is longer).
fn device_idle_share(cx: &Cx, w: &WhySlow) -> f64 {
    let (busy, span) = w.device.devices.iter().fold((0i64, 0i64), |(b, s), d| {
        (b.max(d.busy_ns), s.max(d.span_ns))
    });
    if cx.wall_ns > 0 {
        1.0 - busy as f64 / cx.wall_ns.max(span) as f64
    } else {
        0.0
    }
}

pub(super) fn launch_bound(cx: &Cx, w: &WhySlow) -> (Vec<Finding>, String) {
    let l = &w.device.launches;
    // Kernels a graph replays are not launches of their own.
    let graphs = if l.graph_kernels > 0 {
        format!(
            "; {} kernels replayed by {} graph launches are not counted as launches",
            l.graph_kernels, l.graph_launches
        )
    } else {
        String::new()
    };
    if l.launches < LAUNCH_BOUND_MIN_LAUNCHES {
        return (
            Vec::new(),
            format!(
                "{} kernel launches in this scope (fewer than {LAUNCH_BOUND_MIN_LAUNCHES}){graphs}",
                l.launches
            ),
        );
    }
    let Ok(c) = &w.critical_path else {
        return (Vec::new(), "no critical path to split".into());
    };
    let on = |b: Bound| c.by_bound.iter().find(|x| x.0 == b).map_or(0, |x| x.1);
    let host = on(Bound::CpuBound)
        + on(Bound::GpuKernelLaunchOverhead)
        + on(Bound::GpuKernelKernelOverhead);
    let length = c.length_ns.max(1);
    let host_share = host as f64 / length as f64;
    let idle_share = device_idle_share(cx, w);
    let short_share = l.short_kernels as f64 / l.launches as f64;
    if host_share < LAUNCH_BOUND_HOST_SHARE
        || idle_share < LAUNCH_BOUND_IDLE_SHARE
        || short_share < LAUNCH_BOUND_SHORT_SHARE
    {
        return (
            Vec::new(),
            format!(
                "CPU + launch share of the critical path {}, device idle {}, short kernels {} of launches",
                pct(100.0 * host_share),
                pct(100.0 * idle_share),
                pct(100.0 * short_share)
            ),
        );
    }
    // What CUDA graphs / torch.compile's cudagraphs remove: the launch
    // overheads on the path and the runtime calls' own time on it.
    let t = cx.t;
    let launch_calls: rustc_hash::FxHashSet<u32> = t
        .links
        .launch
        .iter()
        .copied()
        .filter(|&l| l != NO_SLICE)
        .collect();
    let mut gain = on(Bound::GpuKernelLaunchOverhead) + on(Bound::GpuKernelKernelOverhead);
    let mut slices = Vec::new();
    for e in &c.edges {
        if e.bound == Bound::CpuBound && launch_calls.contains(&e.slice) {
            gain += e.weight_ns;
        }
        if matches!(
            e.bound,
            Bound::GpuKernelLaunchOverhead | Bound::GpuKernelKernelOverhead
        ) && e.slice != NO_SLICE
        {
            slices.push(e.slice);
        }
    }
    let kernels: Vec<i64> = w.device.kernels.iter().map(|k| k.mean_ns as i64).collect();
    let mut numbers = vec![
        ("launches".into(), l.launches.to_string()),
        (
            "short kernels (shorter than their launch, HTA)".into(),
            format!("{} of {}", l.short_kernels, l.launches),
        ),
        (
            "CPU + launch share of the critical path".into(),
            pct(100.0 * host_share),
        ),
        ("device idle".into(), pct(100.0 * idle_share)),
        ("median kernel (mean per name)".into(), us(median(&kernels))),
        (
            "launch overhead on the path".into(),
            us(on(Bound::GpuKernelLaunchOverhead)),
        ),
        (
            "kernel–kernel gaps on the path".into(),
            us(on(Bound::GpuKernelKernelOverhead)),
        ),
    ];
    if l.graph_kernels > 0 {
        numbers.push((
            "kernels replayed by graphs (not launches of their own)".into(),
            format!("{} by {} graph launches", l.graph_kernels, l.graph_launches),
        ));
    }
    let slice_count = slices.len();
    slices.truncate(MAX_EVIDENCE);
    let finding = cx.finding(
        "launch_bound",
        "scope".into(),
        format!(
            "Launch-bound: the device idles {} while the host launches {} kernels",
            pct(100.0 * idle_share),
            l.launches
        ),
        (gain.min(c.length_ns), format!("launch overheads, kernel–kernel gaps and launch calls on the critical path: {}", us(gain))),
        Evidence {
            numbers,
            ops: Vec::new(),
            slices,
            slice_count,
            ranges: vec![(c.start_ns, c.end_ns)],
        },
        if l.graph_kernels > 0 {
            "the step already replays CUDA graphs: capture the launches left outside them too (the ops listed launch eagerly), fuse small kernels with torch.compile, or give each launch more work (larger batches)"
        } else {
            "capture the step in a CUDA graph (torch.cuda.graphs, or torch.compile(mode=\"reduce-overhead\")), fuse small kernels with torch.compile, or give each launch more work (larger batches)"
        },
    );
    (vec![finding], String::new())
}

/// The host's work in the gaps where the device waited for it.
struct HostWork {
    /// A flat profile: each host slice's *self* time inside the gaps (its
    /// overlap less its host children's), per name, largest first — the op,
    /// runtime call or Python frame the host was in.
    own: Vec<(String, i64)>,
    /// The outermost ops (CPU ops and runtime calls, Python frames aside)
    /// overlapping the gaps, per name, largest first: what the user called.
    outer: Vec<(String, i64)>,
    /// How much of the gaps any recorded host slice covers.
    recorded: i64,
}

fn host_work_in(cx: &Cx, gaps: &[Interval]) -> HostWork {
    let t = cx.t;
    let host = |c: Category| {
        matches!(
            c,
            Category::CpuOp | Category::Runtime | Category::PythonFunction
        )
    };
    let op = |c: Category| matches!(c, Category::CpuOp | Category::Runtime);
    let merged = intervals::union(gaps.to_vec());
    let mut own: Vec<i64> = vec![0; t.slices.len()];
    let mut outer: Vec<i64> = vec![0; t.slices.len()];
    let mut covered: Vec<Interval> = Vec::new();
    let nearest = |s: usize, wanted: &dyn Fn(Category) -> bool| {
        let mut k = t.slices.parent[s];
        while k != NO_SLICE && !wanted(t.slices.category[k as usize]) {
            k = t.slices.parent[k as usize];
        }
        k
    };
    for s in 0..t.slices.len() {
        if !host(t.slices.category[s]) {
            continue;
        }
        let inside = intervals::clip(&merged, (t.slices.start_ns[s], t.slices.end_ns(s)));
        let overlap = intervals::total(&inside);
        if overlap == 0 {
            continue;
        }
        own[s] += overlap;
        match nearest(s, &host) {
            NO_SLICE => covered.extend(inside),
            k => own[k as usize] -= overlap,
        }
        if op(t.slices.category[s]) && nearest(s, &op) == NO_SLICE {
            outer[s] = overlap;
        }
    }
    let by_name = |ns: &[i64]| {
        let mut rows: Vec<(String, i64)> = Vec::new();
        for (s, &v) in ns.iter().enumerate().filter(|x| *x.1 > 0) {
            let name = t.str(t.slices.name[s]);
            match rows.iter_mut().find(|x| x.0 == name) {
                Some(x) => x.1 += v,
                None => rows.push((name.to_string(), v)),
            }
        }
        crate::sort::by(&mut rows, &|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        rows
    };
    HostWork {
        own: by_name(&own),
        outer: by_name(&outer),
        recorded: intervals::union_len(&mut covered),
    }
}

/// The device waits for the host: it sits idle most of the scope and most
/// of that idle time no work was queued (HTA's host-wait idle category),
/// without the many short launches of [`launch_bound`]. On a synchronous
/// runtime (Neuron's `nrt_execute`) host and device never overlap.
pub(super) fn host_bound(cx: &Cx, w: &WhySlow, launch_bound_fired: bool) -> (Vec<Finding>, String) {
    let none = |why: String| (Vec::new(), why);
    if launch_bound_fired {
        return none("launch-bound: that finding is the host's wait".into());
    }
    let Some(idle) = &w.device.idle else {
        return none("no device lanes".into());
    };
    let Some((lane, wait, lane_idle)) = waiting_lane(idle) else {
        return none("no idle time on the device".into());
    };
    let idle_share = device_idle_share(cx, w);
    let wait_share = if lane_idle > 0 {
        wait as f64 / lane_idle as f64
    } else {
        0.0
    };
    if idle_share < HOST_BOUND_IDLE_SHARE || wait_share < HOST_BOUND_WAIT_SHARE {
        return none(format!(
            "device idle {}, host wait {} of the idle time",
            pct(100.0 * idle_share),
            pct(100.0 * wait_share)
        ));
    }
    // Idle time that blocking calls explain is theirs to report: a host
    // stopped in a sync or a synchronous copy is not a slow host.
    let blocked: i64 = super::blocking::blocking_calls(cx)
        .iter()
        .map(|c| c.stall_ns())
        .sum();
    if blocked * 2 >= wait {
        return none(format!(
            "the device's host-wait idle time ({}) is mostly inside or right after blocking calls ({}): the blocking-calls finding",
            us(wait),
            us(blocked)
        ));
    }
    let gaps: Vec<&Gap> = w
        .device
        .longest_gaps
        .iter()
        .filter(|g| g.lane == lane && g.category == IdleCategory::HostWait)
        .collect();
    let ranges: Vec<Interval> = gaps.iter().map(|g| (g.start_ns, g.end_ns)).collect();
    let listed: i64 = ranges.iter().map(|r| r.1 - r.0).sum();
    let HostWork {
        own,
        outer: ops,
        recorded,
    } = host_work_in(cx, &ranges);
    let (launches, synchronous) = synchronous_launches(cx);
    let sync = launches > 0 && synchronous as f64 >= HOST_BOUND_SYNC_SHARE * launches as f64;
    let (gain, basis) = host_gain(cx, w, wait, &ranges);
    let mut numbers = vec![
        ("device idle".into(), pct(100.0 * idle_share)),
        (
            "host wait, of the idle time".into(),
            pct(100.0 * wait_share),
        ),
        ("host-wait idle".into(), us(wait)),
        (
            format!(
                "recorded host work in the {} longest host-wait gaps",
                gaps.len()
            ),
            format!("{} of {}", us(recorded), us(listed)),
        ),
        (
            "launch calls that return after their device work ends".into(),
            format!("{synchronous} of {launches}"),
        ),
    ];
    let top = |rows: &[(String, i64)]| {
        rows.iter()
            .take(5)
            .map(|(n, ns)| format!("{n} {}", us(*ns)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !ops.is_empty() {
        numbers.push(("outermost ops in those gaps".into(), top(&ops)));
    }
    if !own.is_empty() {
        numbers.push((
            "host self time in those gaps (op, runtime call or Python frame)".into(),
            top(&own),
        ));
    }
    let not_steady =
        intervals::total(&intervals::union(ranges.clone())) - intervals::total(&cx.steady(&ranges));
    if not_steady > 0 {
        numbers.push((
            "warm-up, one-time loading and profiler overhead in those gaps".into(),
            us(not_steady),
        ));
    }
    let mut action = String::from("the device waits for the host between launches: ");
    if 2 * not_steady >= listed && listed > 0 {
        action.push_str("most of that wait is warm-up (first calls, CUDA's lazy loading of each kernel on its first launch, the profiler's buffers), not the steady state: record after a warm-up step; ");
    }
    if sync {
        action.push_str("the runtime's launch calls return only after the device finishes, so host work never overlaps device work — use asynchronous submission (on Neuron, nrt_execute is synchronous by default: a framework version on the runtime's explicit async APIs, nrta_*), or fewer, larger executions (one compiled graph per step); ");
    }
    if listed > 0 && (recorded as f64) < 0.5 * listed as f64 {
        action.push_str("most of the host's time in the gaps is in no recorded op (Python, data loading outside torch ops): wrap it in record_function or profile with with_stack=True to name it; load data in DataLoader workers with pin_memory and prefetching");
    } else if w.device.launches.graph_kernels > 0 {
        // Never recommend what the trace already does.
        action.push_str("make the host ops listed cheaper or overlap them with device work (prefetch the next batch, preprocess on the device or in DataLoader workers); the step already replays CUDA graphs: capture the work still launched outside them");
    } else {
        action.push_str("make the host ops listed cheaper or overlap them with device work (prefetch the next batch, preprocess on the device or in DataLoader workers), or capture the step in a graph (CUDA graphs, torch.compile)");
    }
    (
        vec![cx.finding(
            "host_bound",
            "scope".into(),
            format!(
                "The device waits for the host: idle {}, {} of it with nothing queued",
                pct(100.0 * idle_share),
                pct(100.0 * wait_share)
            ),
            (gain, basis),
            Evidence {
                numbers,
                ops: ops.iter().take(10).map(|x| x.0.clone()).collect(),
                slices: gaps
                    .iter()
                    .filter(|g| g.next_slice != NO_SLICE)
                    .map(|g| g.next_slice)
                    .take(MAX_EVIDENCE)
                    .collect(),
                slice_count: gaps.len(),
                ranges,
            },
            &action,
        )],
        String::new(),
    )
}

/// Per lane, host-wait idle and all idle: the lane that waited most, with
/// its (host wait, idle).
fn waiting_lane(idle: &[IdleRow]) -> Option<(i64, i64, i64)> {
    let mut lanes: Vec<(i64, i64, i64)> = Vec::new(); // (lane, host wait, idle)
    for r in idle {
        let i = match lanes.iter().position(|x| x.0 == r.lane) {
            Some(i) => i,
            None => {
                lanes.push((r.lane, 0, 0));
                lanes.len() - 1
            }
        };
        lanes[i].2 += r.idle_ns.max(0);
        if r.category == IdleCategory::HostWait {
            lanes[i].1 += r.idle_ns.max(0);
        }
    }
    lanes.iter().max_by_key(|x| (x.1, -x.0)).copied()
}

/// Launch calls in the scope, and those that return only after the device
/// work they started ends (the runtime is synchronous: host work cannot
/// overlap it).
fn synchronous_launches(cx: &Cx) -> (u64, u64) {
    let t = cx.t;
    let (mut launches, mut synchronous) = (0u64, 0u64);
    for (d, &c) in t.links.launch.iter().enumerate() {
        if c == NO_SLICE
            || !cx.inside(t.slices.start_ns[d])
            || WAIT_CALLS.contains(&t.str(t.slices.name[c as usize]))
        {
            continue;
        }
        launches += 1;
        // The call outlasts its device work, and it is a runtime entry
        // documented as synchronous or that work is most of the call: it
        // waited for the device (a tiny kernel inside an asynchronous
        // launch call is not that).
        let call = t.slices.dur_ns[c as usize];
        if t.slices.end_ns(c as usize) >= t.slices.end_ns(d)
            && (SYNCHRONOUS_CALLS.contains(&t.str(t.slices.name[c as usize]))
                || 2 * t.slices.dur_ns[d] >= call)
        {
            synchronous += 1;
        }
    }
    (launches, synchronous)
}

/// What a faster host gives back: the host-wait idle time, bounded by the
/// host's time on the critical path, and by the path's time inside the
/// host-wait gaps (what it spends elsewhere overlaps device work).
fn host_gain(cx: &Cx, w: &WhySlow, wait: i64, ranges: &[Interval]) -> (i64, String) {
    let (gain, basis) = match w.critical_path.as_ref() {
        Ok(c) => {
            let host: i64 = c
                .by_bound
                .iter()
                .filter(|x| matches!(x.0, Bound::CpuBound | Bound::GpuKernelLaunchOverhead))
                .map(|x| x.1)
                .sum();
            (
                wait.min(host),
                format!(
                    "the device's host-wait idle time ({}) bounded by the host's time on the critical path ({})",
                    us(wait),
                    us(host)
                ),
            )
        }
        Err(_) => (
            wait,
            format!(
                "the device's host-wait idle time, {} (no critical path to bound it)",
                us(wait)
            ),
        ),
    };
    // Only the path's time inside the gaps is the host's to give back:
    // what it spends elsewhere overlaps device work, and one-time loading
    // is not the host's steady cost.
    let steady = cx.steady(ranges);
    let one_time = intervals::total(&intervals::union(ranges.to_vec())) - intervals::total(&steady);
    let (gain, basis) = match &cx.path {
        Some(p) if p.time_in(&steady) < gain => {
            let on = p.time_in(&steady);
            let without = if one_time > 0 {
                format!(
                    " less their {} of warm-up, one-time loading and profiler overhead",
                    us(one_time)
                )
            } else {
                String::new()
            };
            (
                on,
                format!(
                    "{basis}, cut to the {} of the critical path inside the host-wait gaps{without}",
                    us(on)
                ),
            )
        }
        _ => (gain, basis),
    };
    (gain, basis)
}

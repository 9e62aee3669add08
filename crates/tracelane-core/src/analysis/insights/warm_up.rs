//! Warm-up: first steps far slower than the rest, and one-time loading
//! and profiler work inside the capture.

use crate::analysis::intervals::{self, Interval};
use crate::analysis::warmup::OccurrenceTime;
use crate::analysis::warmup::WARMUP_FACTOR;
use crate::analysis::WhySlow;
use crate::category::Category;
use crate::model::Trace;

use super::cx::{pct, tally, us, Cx};
use super::report::{Evidence, Finding};
use super::rules::{MAX_EVIDENCE, ONE_TIME_MIN_SHARE};

pub(super) fn warmup(cx: &Cx, w: &WhySlow) -> (Vec<Finding>, String) {
    let r = match &w.warmup {
        Some(Ok(r)) => r,
        Some(Err(e)) => return (Vec::new(), e.clone()),
        None => return (Vec::new(), "not measured".into()),
    };
    if r.flagged == 0 {
        return (
            Vec::new(),
            format!(
                "{} occurrences, none over {WARMUP_FACTOR}× the steady median",
                r.occurrences.len()
            ),
        );
    }
    let flagged: Vec<&OccurrenceTime> = r.occurrences.iter().filter(|o| o.warmup).collect();
    let excess: i64 = flagged.iter().map(|o| o.dur_ns - r.median_ns).sum();
    let ranges: Vec<Interval> = flagged
        .iter()
        .map(|o| (o.start_ns, o.start_ns + o.dur_ns))
        .collect();
    let compiles = flagged.iter().any(|o| {
        o.reason
            .as_deref()
            .is_some_and(|x| x.starts_with("compiles"))
    });
    let f = cx.finding(
        "warmup",
        "steps".into(),
        format!(
            "{} warm-up {} {} over the steady median{}",
            flagged.len(),
            if flagged.len() == 1 { "occurrence" } else { "occurrences" },
            us(excess),
            if compiles { " (torch.compile)" } else { "" }
        ),
        // A one-time cost: the whole excess is the run's, not the steady
        // state's, as far as the critical path runs through it.
        gain_of(cx, excess, &ranges),
        Evidence {
            numbers: vec![
                ("occurrences".into(), r.occurrences.len().to_string()),
                ("warm-up".into(), flagged.len().to_string()),
                ("steady median".into(), us(r.median_ns)),
                (
                    "warm-up durations".into(),
                    flagged.iter().map(|o| format!("{} {}", o.label, us(o.dur_ns))).collect::<Vec<_>>().join(", "),
                ),
            ],
            ops: flagged.iter().map(|o| o.label.clone()).collect(),
            slices: Vec::new(),
            slice_count: 0,
            ranges,
        },
        if compiles {
            "keep compilation out of measured steps (warm up before profiling: schedule(wait, warmup, active)); avoid recompiles (torch._dynamo.config / dynamic=True for varying shapes), cache compiled artefacts (TORCHINDUCTOR_FX_GRAPH_CACHE)"
        } else {
            "exclude warm-up from measurements (the profiler's schedule(wait=1, warmup=1, active=N)); if every run pays it, pre-allocate (cudnn.benchmark autotuning, allocator growth) before the timed loop"
        },
    );
    (vec![f], String::new())
}

/// Overhead records naming the CUDA driver's lazy loading: a kernel's
/// module and function loaded on its first launch (CUPTI's overhead kinds
/// `RUNTIME_TRIGGERED_MODULE_LOADING`, `LAZY_FUNCTION_LOADING`, as Kineto
/// names them).
fn is_lazy_loading(name: &str) -> bool {
    name.contains("Module Loading") || name.contains("Function Loading")
}

/// One-time work inside the capture: the CUDA driver loading kernels on
/// their first launch and the profiler's own buffers (Kineto's `overhead`
/// events). It is time the trace shows and the next step does not pay; the
/// other rules leave it out of their gains, this one says how much it is
/// and where it fell.
pub(super) fn one_time_work(cx: &Cx) -> (Vec<Finding>, String) {
    let t = cx.t;
    let s = &t.slices;
    if cx.one_time.is_empty() {
        return (
            Vec::new(),
            "no lazy-loading or profiler-overhead records in this scope".into(),
        );
    }
    let total = intervals::total(&cx.one_time);
    let (gain, basis) = match &cx.path {
        Some(p) => {
            let on = p.time_in(&cx.one_time);
            (
                on,
                format!(
                    "the {} of one-time work on the critical path (of {} in all)",
                    us(on),
                    us(total)
                ),
            )
        }
        None => (
            total,
            format!("all {} of it (no critical path to bound it)", us(total)),
        ),
    };
    if (gain as f64) < ONE_TIME_MIN_SHARE * cx.wall_ns as f64 {
        return (
            Vec::new(),
            format!("{} of one-time loading and profiler overhead, {} on the critical path: under {:.0} % of the wall", us(total), us(gain), 100.0 * ONE_TIME_MIN_SHARE),
        );
    }
    // Per name, and the op each of the longest fell in.
    let mut records: Vec<usize> = (0..s.len())
        .filter(|&i| s.category[i] == Category::Overhead && cx.inside(s.start_ns[i]))
        .collect();
    let mut by_name: Vec<(String, usize, i64)> = Vec::new();
    for &i in &records {
        let name = t.slice_name(i);
        match by_name.iter_mut().find(|x| x.0 == name) {
            Some(x) => {
                x.1 += 1;
                x.2 += s.dur_ns[i];
            }
            None => by_name.push((name.to_string(), 1, s.dur_ns[i])),
        }
    }
    crate::sort::by(&mut by_name, &|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    crate::sort::by(&mut records, &|&a, &b| {
        s.dur_ns[b].cmp(&s.dur_ns[a]).then(a.cmp(&b))
    });
    let slice_count = records.len();
    records.truncate(MAX_EVIDENCE);
    let mut in_ops: Vec<(String, usize)> = Vec::new();
    for (&r, op) in records.iter().zip(innermost_ops(t, &records)) {
        if is_lazy_loading(t.slice_name(r)) {
            tally(
                &mut in_ops,
                op.map_or_else(|| "(no op)".into(), |o| t.slice_name(o).to_string()),
            );
        }
    }
    let lazy = by_name.iter().any(|x| is_lazy_loading(&x.0));
    let mut numbers = vec![
        ("one-time work".into(), us(total)),
        (
            "of the wall".into(),
            pct(100.0 * total as f64 / cx.wall_ns.max(1) as f64),
        ),
        (
            "records".into(),
            by_name
                .iter()
                .map(|(n, c, ns)| format!("{n} ×{c} {}", us(*ns)))
                .collect::<Vec<_>>()
                .join(", "),
        ),
    ];
    let in_warm_up = intervals::total(&intervals::intersect(&cx.one_time, &cx.warm_up));
    if in_warm_up > 0 {
        numbers.push(("of it inside warm-up occurrences".into(), us(in_warm_up)));
    }
    if !in_ops.is_empty() {
        numbers.push((
            "lazy loading inside (the longest)".into(),
            in_ops
                .iter()
                .map(|(n, c)| format!("{n} ×{c}"))
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    let ranges: Vec<Interval> = cx.one_time.iter().copied().take(MAX_EVIDENCE).collect();
    let f = cx.finding(
        "one_time_work",
        "scope".into(),
        format!(
            "{} of one-time {} inside the capture ({} of the wall)",
            us(total),
            if lazy { "kernel loading and profiler work" } else { "profiler work" },
            pct(100.0 * total as f64 / cx.wall_ns.max(1) as f64)
        ),
        (gain, basis),
        Evidence {
            numbers,
            ops: in_ops.iter().map(|x| x.0.clone()).filter(|n| n != "(no op)").collect(),
            slices: records.iter().map(|&r| r as u32).collect(),
            slice_count,
            ranges,
        },
        if lazy {
            "the capture includes first launches: the CUDA driver loads each kernel's module on its first use (lazy loading, CUDA_MODULE_LOADING=LAZY, the default on Linux since CUDA 12.2), and the numbers around it are not the steady state — record after a warm-up step (the profiler's schedule(wait=1, warmup=1, active=N)), or set CUDA_MODULE_LOADING=EAGER to pay it at start-up"
        } else {
            "the profiler's own work (activity buffers) is inside the capture: record after a warm-up step (schedule(wait=1, warmup=1, active=N)) so it falls outside the measured steps"
        },
    );
    (vec![f], String::new())
}

/// For each of `records` (slices, sorted any way), the innermost CPU op
/// on any host thread that holds its start: overhead records sit on a lane
/// of their own, not under the op that paid them.
fn innermost_ops(t: &Trace, records: &[usize]) -> Vec<Option<usize>> {
    let s = &t.slices;
    let mut starts: Vec<(i64, usize)> = records
        .iter()
        .enumerate()
        .map(|(k, &r)| (s.start_ns[r], k))
        .collect();
    starts.sort_unstable();
    let mut best: Vec<Option<usize>> = vec![None; records.len()];
    for i in (0..s.len()).filter(|&i| s.category[i] == Category::CpuOp) {
        let (a, b) = (s.start_ns[i], s.end_ns(i));
        let from = starts.partition_point(|x| x.0 < a);
        for &(_, k) in starts[from..].iter().take_while(|x| x.0 < b) {
            if best[k].is_none_or(|o| s.dur_ns[o] > s.dur_ns[i]) {
                best[k] = Some(i);
            }
        }
    }
    best
}

/// The warm-up's excess, bounded by the critical path's time in its
/// occurrences (a path that leaves a step early does not carry all of it).
fn gain_of(cx: &Cx, excess: i64, ranges: &[Interval]) -> (i64, String) {
    let words = "the flagged occurrences' time over the steady median: once per run, not per step";
    match &cx.path {
        Some(p) if p.time_in(ranges) < excess => {
            let on = p.time_in(ranges);
            (
                on,
                format!(
                    "{words}; {} cut to the {} of the critical path inside them",
                    us(excess),
                    us(on)
                ),
            )
        }
        _ => (excess, words.into()),
    }
}

//! Warm-up: first steps far slower than the rest.

use crate::analysis::intervals::Interval;
use crate::analysis::warmup::OccurrenceTime;
use crate::analysis::warmup::WARMUP_FACTOR;
use crate::analysis::WhySlow;

use super::cx::{us, Cx};
use super::report::{Evidence, Finding};

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
        // state's; it is not bounded by the path (the path covers it).
        (excess, "the flagged occurrences' time over the steady median: once per run, not per step".into()),
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

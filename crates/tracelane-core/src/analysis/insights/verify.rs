//! Every finding checked against its own evidence before it is shown: the
//! slices it names exist, its ranges are times of this trace, its gain is
//! no more than the scope's wall time nor than the critical path's time
//! inside its ranges, its severity is its gain's, its figures are numbers.
//! A finding that fails is still shown, with a note saying what failed: a
//! rule's slip is counted, never hidden.

use crate::model::Trace;

use super::cx::OnPath;
use super::report::{Finding, Severity};
use super::rules::{MAX_EVIDENCE, RULES};

/// What `f` claims that its evidence does not support, in words (empty
/// when every check holds).
pub(super) fn check(t: &Trace, wall_ns: i64, path: Option<&OnPath>, f: &Finding) -> Vec<String> {
    let mut bad = Vec::new();
    let ev = &f.evidence;
    if !RULES.iter().any(|r| r.id == f.rule) {
        bad.push(format!("rule {} is not a listed rule", f.rule));
    }
    let n = t.slices.len();
    if let Some(s) = ev.slices.iter().find(|&&s| s as usize >= n) {
        bad.push(format!("slice {s} is not in the trace ({n} slices)"));
    }
    if ev.slices.len() > MAX_EVIDENCE || ev.slice_count < ev.slices.len() {
        bad.push(format!(
            "{} slices listed of {} counted",
            ev.slices.len(),
            ev.slice_count
        ));
    }
    let (lo, hi) = trace_bounds(t);
    if let Some(r) = ev.ranges.iter().find(|r| r.0 > r.1 || r.0 < lo || r.1 > hi) {
        bad.push(format!(
            "range {}–{} ns is not within the trace ({lo}–{hi} ns)",
            r.0, r.1
        ));
    }
    if f.gain_ns < 0 || f.gain_ns > wall_ns {
        bad.push(format!(
            "gain {} ns outside 0–{wall_ns} ns (the scope's wall time)",
            f.gain_ns
        ));
    }
    if let (Some(p), true) = (path, ev.ranges.len() < MAX_EVIDENCE) {
        let on = p.time_in(&ev.ranges);
        if f.gain_ns > on && !ev.ranges.is_empty() {
            bad.push(format!(
                "gain {} ns over the {on} ns of critical path inside its ranges",
                f.gain_ns
            ));
        }
    }
    if f.severity != Severity::of(f.gain_ns, wall_ns) {
        bad.push(format!(
            "severity {} is not its gain's ({})",
            f.severity.as_str(),
            Severity::of(f.gain_ns, wall_ns).as_str()
        ));
    }
    for (name, value) in &ev.numbers {
        let word = |w: &str| value.split(|c: char| !c.is_alphanumeric()).any(|x| x == w);
        if value.is_empty() || word("NaN") || word("inf") {
            bad.push(format!("figure {name} is {value:?}"));
        }
    }
    bad.into_iter()
        .map(|b| format!("finding \"{}\" fails its evidence check: {b}", f.title))
        .collect()
}

/// The trace's first and last time, every slice, instant and counter
/// sample counted.
fn trace_bounds(t: &Trace) -> (i64, i64) {
    let s = &t.slices;
    let starts = s
        .start_ns
        .iter()
        .chain(&t.instants.ts_ns)
        .chain(&t.counters.ts_ns);
    let ends = (0..s.len())
        .map(|i| s.end_ns(i))
        .chain(t.instants.ts_ns.iter().copied())
        .chain(t.counters.ts_ns.iter().copied());
    (starts.copied().min().unwrap_or(0), ends.max().unwrap_or(0))
}

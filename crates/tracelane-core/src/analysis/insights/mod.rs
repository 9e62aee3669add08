//! Insights: what to change first. Rules read the other analyses (device
//! time, the critical path, data movement, warm-up, the engines of a Neuron
//! device profile) and the trace's op tree, and each finding says what it
//! saw (numbers and the slices / ranges that make them), what to do, and
//! how much time it should save — an estimate bounded by what of it lies on
//! the critical path, so that removing work off the path never promises a
//! shorter run. Findings are ranked by that gain.
//!
//! Every rule, its condition and where each threshold comes from is in
//! [`RULES`]; the report lists each rule's verdict ([`RuleCheck`]), fired
//! or not and why, so a quiet report still says what was looked at.
//!
//! The gain of a finding is `min(estimate, time on the critical path inside
//! the finding's ranges)`; the path's dependency and sync edges weigh
//! nothing (see [`super::critical_path`]). Where the path could not be
//! built the estimate stands and the finding says so.
use crate::model::Trace;

use super::critical_path::Bound;
use super::intervals::Interval;
use super::scope::{Scope, ScopeError};
use super::WhySlow;

mod blocking;
mod communication;
mod cx;
mod data_movement;
mod fusion;
mod host;
mod memory;
mod neuron_device;
mod neuron_runtime;
mod report;
mod rules;
mod verify;
mod warm_up;

pub use communication::{ranks_findings, STRAGGLER_STEP_SHARE};
pub(crate) use fusion::top_op;
pub use report::*;
pub use rules::*;

use cx::{Cx, OnPath};

/// The insights of one scope: runs the analyses it reads (tracelane's
/// rules) and [`insights_of`] them.
pub fn insights(
    t: &Trace,
    scope: &Scope,
    args: &dyn Fn(usize) -> String,
) -> Result<InsightsReport, ScopeError> {
    let w = super::why_slow(t, scope, super::frame::Mode::Exact, args)?;
    insights_of(t, scope, &w, args)
}

/// The insights of one scope from its analyses already run (under
/// tracelane's rules, `Mode::Exact`).
pub fn insights_of(
    t: &Trace,
    scope: &Scope,
    w: &WhySlow,
    args: &dyn Fn(usize) -> String,
) -> Result<InsightsReport, ScopeError> {
    let occ = scope.occurrences(t)?;
    let windows: Vec<Interval> = occ.iter().map(|o| (o.start_ns, o.end_ns)).collect();
    let wall_ns: i64 = occ.iter().map(|o| o.dur_ns()).sum();
    let path = w.critical_path.as_ref().ok();
    let mut notes = Vec::new();
    if let Err(e) = &w.critical_path {
        notes.push(format!(
            "no critical path ({e}): gains are the rules' estimates, not bounded by it"
        ));
    }
    let whole = *scope == Scope::Whole;
    let one_time = cx::one_time_work(t, &|ns| {
        whole || super::intervals::window_of(&windows, ns).is_some()
    });
    let warm_up: Vec<Interval> = match &w.warmup {
        Some(Ok(r)) => r
            .occurrences
            .iter()
            .filter(|o| o.warmup)
            .map(|o| (o.start_ns, o.start_ns + o.dur_ns))
            .collect(),
        _ => Vec::new(),
    };
    let cx = Cx {
        t,
        windows: &windows,
        whole,
        path: path.map(OnPath::new),
        wall_ns,
        one_time,
        warm_up: super::intervals::union(warm_up),
    };
    let engines = (t.device_profile.is_some())
        .then(|| super::engines::engines(t, scope).ok())
        .flatten();
    let mut findings = Vec::new();
    let mut checks = Vec::new();
    let mut run = |id: &str, (found, mut why): (Vec<Finding>, String)| {
        let rule = RULES.iter().find(|r| r.id == id).expect("a listed rule");
        // Nothing to gain is nothing to change: what the rule saw off the
        // critical path is said, not ranked.
        let (kept, off_path): (Vec<Finding>, Vec<Finding>) =
            found.into_iter().partition(|f| f.gain_ns > 0);
        if !off_path.is_empty() {
            let what: Vec<&str> = off_path.iter().map(|f| f.title.as_str()).collect();
            why = format!(
                "{} found with nothing on the critical path: {}",
                off_path.len(),
                what.join("; ")
            );
        }
        checks.push(RuleCheck {
            rule: id.into(),
            name: rule.name.into(),
            fired: kept.len(),
            why,
        });
        findings.extend(kept);
    };
    run("fusion", fusion::fusion(&cx));
    let launches = host::launch_bound(&cx, w);
    let launch_bound_fired = !launches.0.is_empty();
    run("launch_bound", launches);
    run("host_bound", host::host_bound(&cx, w, launch_bound_fired));
    let copies = super::data_movement::copy_events(t, scope, args)?;
    run(
        "pageable_copy",
        data_movement::pageable_copies(&cx, &copies.0),
    );
    run("blocking_sync", blocking::blocking_syncs(&cx));
    run(
        "layout_conversion",
        data_movement::layout_conversions(&cx, &copies),
    );
    run(
        "exposed_communication",
        communication::exposed_communication(&cx, w),
    );
    run(
        "collective_outlier",
        communication::collective_outliers(&cx),
    );
    run(
        "straggler_rank",
        (
            Vec::new(),
            "one trace: a straggler shows across the ranks of a run (tracelane ranks, the Ranks view)"
                .into(),
        ),
    );
    run("warmup", warm_up::warmup(&cx, w));
    run("one_time_work", warm_up::one_time_work(&cx));
    let neuron = neuron_device::rules(&cx, engines.as_ref());
    for (id, r) in neuron {
        run(id, r);
    }
    for (id, r) in neuron_runtime::rules(&cx, w.neuron.as_ref()) {
        run(id, r);
    }
    let memory_report = super::memory::has_memory(t)
        .then(|| super::memory::memory(t, scope, super::memory::At::Peak).ok())
        .flatten();
    let mut memory_findings = Vec::new();
    for (id, (found, why)) in memory::rules(&cx, memory_report.as_ref()) {
        let rule = RULES.iter().find(|r| r.id == id).expect("a listed rule");
        checks.push(RuleCheck {
            rule: id.into(),
            name: rule.name.into(),
            fired: found.len(),
            why,
        });
        memory_findings.extend(found);
    }
    // Out-of-memory errors first: the run failed there.
    crate::sort::by(&mut memory_findings, &|a, b| {
        let oom = |f: &Finding| f.rule != "memory_oom";
        oom(a)
            .cmp(&oom(b))
            .then(b.bytes.cmp(&a.bytes))
            .then(a.key.cmp(&b.key))
    });
    crate::sort::by(&mut findings, &|a, b| {
        b.gain_ns.cmp(&a.gain_ns).then(a.key.cmp(&b.key))
    });
    for f in &findings {
        notes.extend(verify::check(t, wall_ns, cx.path.as_ref(), f));
    }
    let key = key_numbers(w, wall_ns, engines.as_ref());
    Ok(InsightsReport {
        scope: scope.label(),
        key,
        findings,
        memory: memory_findings,
        checks,
        notes,
    })
}

fn key_numbers(
    w: &WhySlow,
    wall_ns: i64,
    engines: Option<&super::engines::EngineReport>,
) -> KeyNumbers {
    // Steps only: a region's occurrences are not steps.
    let (steps, step_median_ns, warmup_steps) = match &w.warmup {
        Some(Ok(r))
            if !r.occurrences.is_empty()
                && r.occurrences
                    .iter()
                    .all(|o| o.label.starts_with("ProfilerStep#")) =>
        {
            (r.occurrences.len(), Some(r.median_ns), r.flagged)
        }
        _ => (0, None, 0),
    };
    let device_busy_pct = w
        .device
        .devices
        .iter()
        .filter(|d| d.span_ns > 0)
        .map(|d| 100.0 * d.busy_ns as f64 / d.span_ns as f64)
        .reduce(f64::max);
    let device_ns = w
        .data_movement
        .as_ref()
        .map(|d| d.device_ns)
        .unwrap_or_else(|| w.device.kernels.iter().map(|k| k.total_ns).sum());
    let (critical_path_ns, critical_path_split) = match &w.critical_path {
        Ok(c) => (
            Some(c.length_ns),
            c.by_bound
                .iter()
                .filter(|(b, ns)| *ns != 0 && *b != Bound::Dependency)
                .map(|(b, ns)| (b.label().to_string(), *ns))
                .collect(),
        ),
        Err(_) => (None, Vec::new()),
    };
    let u = engines.and_then(|e| e.utilization.as_ref());
    KeyNumbers {
        wall_ns,
        steps,
        step_median_ns,
        warmup_steps,
        device_ns,
        device_busy_pct,
        launches: w.device.launches.launches,
        critical_path_ns,
        critical_path_split,
        mfu_pct: u.map(|u| u.mfu_pct),
        hfu_pct: u.map(|u| u.hfu_pct),
        mbu_pct: u.map(|u| u.mbu_pct),
    }
}

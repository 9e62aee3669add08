//! The CI gate: two traces of the same workload — a baseline and a
//! candidate — compared on the numbers a pull request can make worse, with
//! a verdict against a threshold, what got slower, and the findings that
//! are new.
//!
//! Rules:
//! - The unit: when both traces have `ProfilerStep#N`, *per step* — step
//!   time is the median of the steps not flagged as warm-up
//!   ([`super::warmup`]), device time, launches and CPU time are their
//!   totals over those steps divided by their count; otherwise *per run* —
//!   step time is the whole trace's critical-path length (the chain of work
//!   that decides the end; the trace's span when there is none), the rest
//!   whole-trace totals.
//! - Gated metrics: step time; device time when either trace has device
//!   work, else CPU time in top-level ops; launches when either has any. A
//!   metric regresses when the candidate is more than the threshold (in
//!   percent) above the baseline.
//! - Per-op and per-device-event deltas come from the comparison's diff
//!   ([`super::compare::diff`]) scaled to the unit; per-region deltas are
//!   the median duration of each automatic region ([`super::regions`]:
//!   labels, compiled regions, spans between collectives, module layers;
//!   steps aside).
//! - New findings: the candidate's findings whose key (rule and what it
//!   names) the baseline's report does not have.

use serde::{Deserialize, Serialize};

use crate::category::Category;
use crate::model::{Trace, NO_SLICE};

use super::compare::{self, DiffKind, DiffStatus};
use super::insights::{Finding, InsightsReport};
use super::intervals::Interval;
use super::scope::{profiler_steps, Scope};
use super::warmup::{flag_warmup, steady_median};

/// One number of the workload in both traces.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateMetric {
    pub name: String,
    /// `ns` or `count`.
    pub unit: String,
    pub baseline: f64,
    pub candidate: f64,
    /// (candidate − baseline) / baseline × 100; `None` when the baseline is 0.
    pub change_pct: Option<f64>,
    pub gated: bool,
    pub regressed: bool,
}

/// An op, device event or region in both traces, per unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    /// `op`, `device` or `region`.
    pub kind: String,
    pub name: String,
    pub baseline_count: f64,
    pub baseline_ns: f64,
    pub candidate_count: f64,
    pub candidate_ns: f64,
    /// `added`, `removed`, `changed`, `same`.
    pub status: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// No metric above the threshold.
    Pass,
    /// A gated metric above the threshold.
    Regression,
    /// No threshold given: the report only.
    Report,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateReport {
    /// `per step (N and M steady steps)` or `per run`.
    pub unit: String,
    pub threshold_pct: Option<f64>,
    pub metrics: Vec<GateMetric>,
    /// Ops and device events that take more time, largest increase first.
    pub slower: Vec<Delta>,
    /// …and less, largest decrease first.
    pub faster: Vec<Delta>,
    pub regions: Vec<Delta>,
    pub new_findings: Vec<Finding>,
    /// Keys of the baseline's findings the candidate no longer has.
    pub resolved_findings: Vec<String>,
    pub verdict: Verdict,
    /// One line: the verdict and the gated metrics' changes.
    pub summary: String,
}

/// What one trace's workload measures.
struct Workload {
    /// Steady steps' windows; empty: the whole run.
    windows: Vec<Interval>,
    step_ns: i64,
    step_from: &'static str,
    device_ns: f64,
    launches: f64,
    cpu_ns: f64,
    has_device: bool,
}

fn workload(t: &Trace, insights: &InsightsReport, per_step: bool) -> Workload {
    let s = &t.slices;
    let (windows, step_ns, step_from) = if per_step {
        let steps = profiler_steps(t);
        let durs: Vec<i64> = steps.iter().map(|o| o.dur_ns()).collect();
        let flags = flag_warmup(&durs);
        let windows: Vec<Interval> = steps
            .iter()
            .zip(&flags)
            .filter(|(_, &w)| !w)
            .map(|(o, _)| (o.start_ns, o.end_ns))
            .collect();
        (windows, steady_median(&durs, &flags), "median steady step")
    } else {
        match insights.key.critical_path_ns {
            Some(c) => (Vec::new(), c, "critical path"),
            None => (Vec::new(), insights.key.wall_ns, "wall time"),
        }
    };
    let inside =
        |ns: i64| windows.is_empty() || super::intervals::window_of(&windows, ns).is_some();
    let (mut device_ns, mut launches, mut cpu_ns) = (0i64, 0u64, 0i64);
    let mut has_device = false;
    let mut launch_calls = rustc_hash::FxHashSet::default();
    for i in 0..s.len() {
        let c = s.category[i];
        if c.is_device_work() && !t.on_host(i) {
            has_device = true;
            let l = t.links.launch[i];
            let at = if l != NO_SLICE {
                s.start_ns[l as usize]
            } else {
                s.start_ns[i]
            };
            if inside(at) {
                device_ns += s.dur_ns[i];
                if l != NO_SLICE && launch_calls.insert(l) {
                    launches += 1;
                }
            }
        } else if c == Category::CpuOp
            && inside(s.start_ns[i])
            // Top-level ops only: nested ones are inside their parents' time.
            && super::insights::top_op(t, i as u32) == i as u32
        {
            cpu_ns += s.dur_ns[i];
        }
    }
    let n = if per_step {
        windows.len().max(1) as f64
    } else {
        1.0
    };
    Workload {
        step_ns,
        step_from,
        device_ns: device_ns as f64 / n,
        launches: launches as f64 / n,
        cpu_ns: cpu_ns as f64 / n,
        has_device,
        windows,
    }
}

/// Median duration per automatic region (steps aside: they are the
/// unit), with counts: [`super::regions`]' groups.
fn regions(t: &Trace) -> Vec<(String, u64, i64)> {
    super::regions::regions(t)
        .groups
        .into_iter()
        .filter(|g| g.kind != super::regions::RegionKind::Step)
        .map(|g| (g.name, g.occurrences.len() as u64, g.median_ns))
        .collect()
}

/// Compares `candidate` with `baseline` (each with its insights report of
/// the whole trace); a regression is a gated metric more than
/// `threshold_pct` above the baseline's.
pub fn gate(
    baseline: &Trace,
    base_insights: &InsightsReport,
    candidate: &Trace,
    cand_insights: &InsightsReport,
    threshold_pct: Option<f64>,
) -> GateReport {
    let per_step = !profiler_steps(baseline).is_empty() && !profiler_steps(candidate).is_empty();
    let b = workload(baseline, base_insights, per_step);
    let c = workload(candidate, cand_insights, per_step);
    let unit = if per_step {
        format!(
            "per step ({} and {} steady steps)",
            b.windows.len(),
            c.windows.len()
        )
    } else {
        "per run (no ProfilerStep in both traces)".to_string()
    };
    let any_device = b.has_device || c.has_device;
    let mut metrics = Vec::new();
    let mut metric = |name: &str, unit: &str, x: f64, y: f64, gated: bool| {
        let change_pct = (x != 0.0).then(|| 100.0 * (y - x) / x);
        let regressed = gated
            && threshold_pct.is_some_and(|th| match change_pct {
                Some(p) => p > th,
                None => y > 0.0,
            });
        metrics.push(GateMetric {
            name: name.into(),
            unit: unit.into(),
            baseline: x,
            candidate: y,
            change_pct,
            gated,
            regressed,
        });
    };
    metric(
        &format!("step time ({})", b.step_from),
        "ns",
        b.step_ns as f64,
        c.step_ns as f64,
        true,
    );
    metric("device time", "ns", b.device_ns, c.device_ns, any_device);
    metric(
        "launches",
        "count",
        b.launches,
        c.launches,
        b.launches + c.launches > 0.0,
    );
    metric(
        "CPU time in top-level ops",
        "ns",
        b.cpu_ns,
        c.cpu_ns,
        !any_device,
    );
    let (slower, faster) = op_deltas(baseline, candidate, per_step, &b, &c);
    let region_rows = region_deltas(baseline, candidate);
    // Memory findings count as findings here: an out-of-memory or a peak
    // newly held by one op is news to a pull request.
    fn all(r: &InsightsReport) -> impl Iterator<Item = &Finding> {
        r.findings.iter().chain(r.memory.iter())
    }
    let base_keys: Vec<&str> = all(base_insights).map(|f| f.key.as_str()).collect();
    let cand_keys: Vec<&str> = all(cand_insights).map(|f| f.key.as_str()).collect();
    let new_findings: Vec<Finding> = all(cand_insights)
        .filter(|f| !base_keys.contains(&f.key.as_str()))
        .cloned()
        .collect();
    let resolved_findings: Vec<String> = all(base_insights)
        .filter(|f| !cand_keys.contains(&f.key.as_str()))
        .map(|f| f.title.clone())
        .collect();
    let verdict = match threshold_pct {
        None => Verdict::Report,
        Some(_) if metrics.iter().any(|m| m.regressed) => Verdict::Regression,
        Some(_) => Verdict::Pass,
    };
    let summary = summary(&metrics, verdict, threshold_pct);
    GateReport {
        unit,
        threshold_pct,
        metrics,
        slower,
        faster,
        regions: region_rows,
        new_findings,
        resolved_findings,
        verdict,
        summary,
    }
}

/// How much a delta moved, either way.
fn moved(d: &Delta) -> f64 {
    (d.candidate_ns - d.baseline_ns).abs()
}

/// Per-op and per-device-event deltas, per unit: slower and faster, the
/// largest move first.
fn op_deltas(
    baseline: &Trace,
    candidate: &Trace,
    per_step: bool,
    b: &Workload,
    c: &Workload,
) -> (Vec<Delta>, Vec<Delta>) {
    let scale = |w: &Workload| {
        if per_step {
            1.0 / w.windows.len().max(1) as f64
        } else {
            1.0
        }
    };
    let (sb, sc) = (scale(b), scale(c));
    let mut slower = Vec::new();
    let mut faster = Vec::new();
    if let (Ok(vb), Ok(vc)) = (
        compare::measure(baseline, &Scope::Whole, "baseline", ""),
        compare::measure(candidate, &Scope::Whole, "candidate", ""),
    ) {
        for r in compare::diff(&vb, &vc) {
            if r.status == DiffStatus::Same {
                continue;
            }
            let d = Delta {
                kind: match r.kind {
                    DiffKind::Op => "op",
                    DiffKind::Device => "device",
                }
                .into(),
                name: r.name,
                baseline_count: r.baseline_count * sb,
                baseline_ns: r.baseline_ns * sb,
                candidate_count: r.candidate_count * sc,
                candidate_ns: r.candidate_ns * sc,
                status: r.status.as_str().into(),
            };
            if d.candidate_ns > d.baseline_ns {
                slower.push(d);
            } else if d.candidate_ns < d.baseline_ns {
                faster.push(d);
            }
        }
    }
    crate::sort::by(&mut slower, &|x, y| moved(y).total_cmp(&moved(x)));
    crate::sort::by(&mut faster, &|x, y| moved(y).total_cmp(&moved(x)));
    (slower, faster)
}

/// Regions by name in both traces, the largest move first.
fn region_deltas(baseline: &Trace, candidate: &Trace) -> Vec<Delta> {
    let (rb, rc) = (regions(baseline), regions(candidate));
    let mut names: Vec<&str> = rb.iter().chain(&rc).map(|r| r.0.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let mut region_rows: Vec<Delta> = names
        .into_iter()
        .map(|n| {
            let get = |v: &[(String, u64, i64)]| {
                v.iter()
                    .find(|r| r.0 == n)
                    .map_or((0.0, 0.0), |r| (r.1 as f64, r.2 as f64))
            };
            let (bc, bt) = get(&rb);
            let (cc, ct) = get(&rc);
            Delta {
                kind: "region".into(),
                name: n.to_string(),
                baseline_count: bc,
                baseline_ns: bt,
                candidate_count: cc,
                candidate_ns: ct,
                status: if bc == 0.0 {
                    "added"
                } else if cc == 0.0 {
                    "removed"
                } else if bt != ct {
                    "changed"
                } else {
                    "same"
                }
                .into(),
            }
        })
        .collect();
    crate::sort::by(&mut region_rows, &|x, y| moved(y).total_cmp(&moved(x)));
    region_rows
}

/// The verdict and the gated metrics' changes in one line.
fn summary(metrics: &[GateMetric], verdict: Verdict, threshold_pct: Option<f64>) -> String {
    let changes: Vec<String> = metrics
        .iter()
        .filter(|m| m.gated)
        .map(|m| {
            format!(
                "{} {}{}",
                m.name,
                match m.change_pct {
                    Some(p) => format!("{p:+.1} %"),
                    None => "new".into(),
                },
                if m.regressed { " (over)" } else { "" }
            )
        })
        .collect();
    format!(
        "{}: {}",
        match (verdict, threshold_pct) {
            (Verdict::Regression, Some(th)) => format!("REGRESSION over {th} %"),
            (Verdict::Pass, Some(th)) => format!("pass (no gated metric over {th} %)"),
            _ => "report".into(),
        },
        changes.join(", ")
    )
}

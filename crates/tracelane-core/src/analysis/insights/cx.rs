//! What every rule reads ([`Cx`]: the trace, the scope's windows, the
//! critical path) and the helpers rules share: bounding a gain by the path,
//! building a finding, words for times and shares.

use crate::analysis::critical_path::{CriticalPathReport, EdgeKind};
use crate::analysis::intervals::{self, Interval};
use crate::category::Category;
use crate::model::Trace;

use super::report::{Evidence, Finding, Severity};
use super::rules::RULES;

/// A rule family's verdicts: (rule id, (findings, why it did not fire)).
pub(super) type RuleResult = (&'static str, (Vec<Finding>, String));

/// What every rule reads.
pub(super) struct Cx<'a> {
    pub(super) t: &'a Trace,
    pub(super) windows: &'a [Interval],
    pub(super) whole: bool,
    pub(super) path: Option<OnPath>,
    pub(super) wall_ns: i64,
    /// The profiler's and the CUDA driver's one-time work in the scope
    /// (Kineto's `overhead` records: lazy module and function loading,
    /// activity buffer requests), merged: no rule's gain counts it, since
    /// the model does not pay it again in the next step.
    pub(super) one_time: Vec<Interval>,
    /// The warm-up occurrences the warm-up rule flags, merged. With
    /// `one_time`, what [`Cx::steady`] leaves out, so a rule's gain is the
    /// steady state's.
    pub(super) warm_up: Vec<Interval>,
}

/// The scope's profiler and driver overhead slices, merged.
pub(super) fn one_time_work(t: &Trace, inside: &dyn Fn(i64) -> bool) -> Vec<Interval> {
    let s = &t.slices;
    intervals::union(
        (0..s.len())
            .filter(|&i| s.category[i] == Category::Overhead && inside(s.start_ns[i]))
            .map(|i| (s.start_ns[i], s.end_ns(i)))
            .collect(),
    )
}

impl Cx<'_> {
    pub(super) fn inside(&self, ns: i64) -> bool {
        self.whole || intervals::window_of(self.windows, ns).is_some()
    }

    /// `ranges` without the one-time work in them: what a rule's gain may
    /// come from.
    pub(super) fn steady(&self, ranges: &[Interval]) -> Vec<Interval> {
        intervals::subtract(&intervals::subtract(ranges, &self.one_time), &self.warm_up)
    }

    /// `estimate` bounded by the critical path's time inside `ranges`
    /// (less the one-time work there), and the words saying so.
    pub(super) fn bounded(&self, estimate: i64, ranges: &[Interval]) -> (i64, String) {
        let steady = self.steady(ranges);
        let one_time =
            intervals::total(&intervals::union(ranges.to_vec())) - intervals::total(&steady);
        let without = if one_time > 0 {
            format!(
                ", less the {} of warm-up, one-time loading and profiler overhead in its ranges",
                us(one_time)
            )
        } else {
            String::new()
        };
        match &self.path {
            Some(p) => {
                let on = p.time_in(&steady);
                if on < estimate {
                    (
                        on.max(0),
                        format!(
                            "estimate {} cut to the {} of it on the critical path{without}",
                            us(estimate),
                            us(on)
                        ),
                    )
                } else {
                    (
                        estimate.max(0),
                        format!("estimate {}, all of it on the critical path", us(estimate)),
                    )
                }
            }
            None if one_time > 0 && intervals::total(&steady) < estimate => {
                let left = intervals::total(&steady);
                (
                    left,
                    format!(
                        "estimate {} cut to its ranges' {}{without}",
                        us(estimate),
                        us(left)
                    ),
                )
            }
            None => (
                estimate.max(0),
                format!("estimate {} (no critical path to bound it)", us(estimate)),
            ),
        }
    }

    pub(super) fn finding(
        &self,
        rule: &str,
        key: String,
        title: String,
        (gain_ns, gain_basis): (i64, String),
        evidence: Evidence,
        action: &str,
    ) -> Finding {
        let r = RULES.iter().find(|r| r.id == rule).expect("a listed rule");
        Finding {
            rule: rule.into(),
            title,
            severity: Severity::of(gain_ns, self.wall_ns),
            gain_ns,
            gain_basis,
            condition: r.condition.into(),
            evidence,
            action: action.into(),
            key: format!("{rule}:{key}"),
            bytes: None,
        }
    }
}

/// Counts `name` in a list kept in first-seen order.
pub(super) fn tally(list: &mut Vec<(String, usize)>, name: String) {
    match list.iter_mut().find(|(n, _)| *n == name) {
        Some(x) => x.1 += 1,
        None => list.push((name, 1)),
    }
}

/// `1,234.5 µs` for words.
pub(super) fn us(ns: i64) -> String {
    crate::analysis::compare::fmt_us(ns as f64)
}

pub(super) fn pct(x: f64) -> String {
    format!("{x:.1} %")
}

/// The critical path's weighted edges, for "how much of these ranges is
/// on it".
pub(super) struct OnPath {
    /// `(from, to, weight)` of edges that carry time, by `from`.
    edges: Vec<(i64, i64, i64)>,
}

impl OnPath {
    pub(super) fn new(c: &CriticalPathReport) -> OnPath {
        let mut edges: Vec<(i64, i64, i64)> = c
            .edges
            .iter()
            .filter(|e| e.weight_ns > 0 && !matches!(e.kind, EdgeKind::Dependency | EdgeKind::Sync))
            .map(|e| (e.from_ns, e.to_ns, e.weight_ns))
            .collect();
        edges.sort_unstable();
        OnPath { edges }
    }

    /// Path time inside the union of `ranges`.
    pub(super) fn time_in(&self, ranges: &[Interval]) -> i64 {
        let merged = intervals::union(ranges.to_vec());
        let mut total = 0;
        for &(a, b, w) in &self.edges {
            let k = merged.partition_point(|r| r.1 <= a);
            let mut over = 0;
            for r in &merged[k..] {
                if r.0 >= b {
                    break;
                }
                over += b.min(r.1) - a.max(r.0);
            }
            total += over.min(w);
        }
        total
    }
}

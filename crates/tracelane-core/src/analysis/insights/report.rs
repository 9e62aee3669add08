//! What the insights report holds: findings, their evidence and severity,
//! each rule's verdict, and the key numbers a summary opens with.

use serde::{Deserialize, Serialize};

use super::rules::{HIGH_SHARE, MEDIUM_SHARE};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    High,
    Medium,
    Low,
}

impl Severity {
    /// A gain's severity by its share of `wall_ns` ([`HIGH_SHARE`],
    /// [`MEDIUM_SHARE`]).
    pub fn of(gain_ns: i64, wall_ns: i64) -> Severity {
        let share = gain_ns as f64 / wall_ns.max(1) as f64;
        if share >= HIGH_SHARE {
            Severity::High
        } else if share >= MEDIUM_SHARE {
            Severity::Medium
        } else {
            Severity::Low
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::High => "high",
            Severity::Medium => "medium",
            Severity::Low => "low",
        }
    }
}

/// What a finding saw.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// Named figures, in reading order.
    pub numbers: Vec<(String, String)>,
    /// The ops (or kernels, HLO ops) it is about.
    pub ops: Vec<String>,
    /// Slices that make the numbers (at most [`MAX_EVIDENCE`](super::MAX_EVIDENCE)), the first
    /// occurrence's first.
    pub slices: Vec<u32>,
    /// How many slices there are in all.
    pub slice_count: usize,
    /// Time ranges on the trace's clock (at most [`MAX_EVIDENCE`](super::MAX_EVIDENCE)); the
    /// first is where "show on the timeline" goes.
    pub ranges: Vec<(i64, i64)>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// A [`Rule`](super::Rule) id.
    pub rule: String,
    /// One line: what was found.
    pub title: String,
    pub severity: Severity,
    /// Estimated time saved, bounded by the critical path.
    pub gain_ns: i64,
    /// How the gain was estimated and what bounds it.
    pub gain_basis: String,
    /// The rule's condition with its thresholds and their sources.
    pub condition: String,
    pub evidence: Evidence,
    /// What to change.
    pub action: String,
    /// Identifies the finding across traces of the same workload (rule +
    /// the ops or kernels it names): the CI gate's "new finding".
    pub key: String,
    /// A memory finding's bytes (what it frees at the peak, the request
    /// that failed, the memory released to be reserved again): what the
    /// memory findings are ranked by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<i64>,
}

/// A rule's verdict on the scope.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RuleCheck {
    pub rule: String,
    pub name: String,
    pub fired: usize,
    /// Why it did not fire (or what it could not check).
    pub why: String,
}

/// The numbers a summary opens with.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KeyNumbers {
    /// The scope's wall time (its occurrences summed; the trace's span).
    pub wall_ns: i64,
    pub steps: usize,
    /// Median of the steps not flagged as warm-up.
    pub step_median_ns: Option<i64>,
    pub warmup_steps: usize,
    /// All device work's time (kernels, copies, sets, windows).
    pub device_ns: i64,
    /// Busy (union) over span, per device, the busiest.
    pub device_busy_pct: Option<f64>,
    pub launches: u64,
    pub critical_path_ns: Option<i64>,
    /// Time on the critical path by what bounds it (label, ns), non-zero.
    pub critical_path_split: Vec<(String, i64)>,
    pub mfu_pct: Option<f64>,
    pub hfu_pct: Option<f64>,
    pub mbu_pct: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InsightsReport {
    pub scope: String,
    pub key: KeyNumbers,
    /// Ranked by gain, largest first.
    pub findings: Vec<Finding>,
    /// Memory findings, ranked by their bytes, largest first.
    #[serde(default)]
    pub memory: Vec<Finding>,
    pub checks: Vec<RuleCheck>,
    pub notes: Vec<String>,
}

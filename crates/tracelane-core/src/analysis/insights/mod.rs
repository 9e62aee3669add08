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

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::category::Category;
use crate::model::{Trace, NO_SLICE};

use super::critical_path::{Bound, CriticalPathReport, EdgeKind};
use super::frame::{exact_kernel_type, KernelType};
use super::intervals::{self, Interval};
use super::scope::{Scope, ScopeError};
use super::warmup::{median, WARMUP_FACTOR};
use super::WhySlow;

mod blocking;
mod neuron_runtime;
mod verify;

/// A finding's share of the scope's wall time at or above which it is
/// `high`, and `medium` (our own cut-offs: a tenth of the run is worth a
/// change today; a fiftieth is worth a look).
pub const HIGH_SHARE: f64 = 0.10;
pub const MEDIUM_SHARE: f64 = 0.02;
/// At most this many slices and ranges per finding.
pub const MAX_EVIDENCE: usize = 64;

/// Fusion: at least this many eager ops in a chain.
pub const FUSION_MIN_OPS: usize = 3;
/// Launch-bound: the critical path's CPU, launch and kernel–kernel share,
/// and the device's idle share, at or above which a scope is launch-bound.
pub const LAUNCH_BOUND_HOST_SHARE: f64 = 0.5;
pub const LAUNCH_BOUND_IDLE_SHARE: f64 = 0.5;
/// Launch-bound: the share of launches whose kernel is shorter than its
/// launch call (HTA's "short kernel") at or above which launches dominate.
pub const LAUNCH_BOUND_SHORT_SHARE: f64 = 0.5;
/// Launch-bound: at least this many launches in the scope (our own: fewer
/// cannot add up to overhead worth capturing in a graph).
pub const LAUNCH_BOUND_MIN_LAUNCHES: u64 = 100;
/// Host-bound: the device idle at least this share of the scope, and at
/// least this share of its idle time host wait (HTA's idle-time
/// categories: no work queued when the previous kernel ended), our own
/// cut-offs as for launch-bound.
pub const HOST_BOUND_IDLE_SHARE: f64 = 0.5;
pub const HOST_BOUND_WAIT_SHARE: f64 = 0.5;
/// …and the runtime is synchronous when at least this share of launch
/// calls return only after their device work ends, the call either one of
/// [`SYNCHRONOUS_CALLS`] or that work at least half of it.
pub const HOST_BOUND_SYNC_SHARE: f64 = 0.5;
/// Runtime entries documented as synchronous: Neuron's `nrt_execute`
/// returns after the execution it submits (Neuron Runtime performance
/// tips: synchronous by default), whatever its own overhead around it.
pub const SYNCHRONOUS_CALLS: &[&str] = &["nrt_execute"];

/// Runtime calls that wait for an execution rather than start it
/// (Neuron's `kbl_exec_wait`: "host waiting for NC execution to finish",
/// Neuron Explorer's glossary): they outlast it by definition and say
/// nothing about whether the submission was synchronous.
pub const WAIT_CALLS: &[&str] = &["kbl_exec_wait"];
/// Layout conversions: their share of device time at or above which they
/// are a finding (Neuron Explorer's cut-off for transpose FLOPs, 10 %).
pub const LAYOUT_SHARE: f64 = 0.10;
/// Exposed communication: share of the device's span.
pub const EXPOSED_COMM_SHARE: f64 = 0.10;
/// Collective outliers: longer than this many times their name's median,
/// among at least [`COLLECTIVE_MIN_COUNT`] of that name.
pub const COLLECTIVE_OUTLIER_FACTOR: f64 = 2.0;
pub const COLLECTIVE_MIN_COUNT: usize = 4;
/// …and they are at most a tenth of their name: more is two populations
/// (message sizes) sharing a name, not outliers.
pub const COLLECTIVE_OUTLIER_MAX_SHARE_INV: usize = 10;
/// Neuron: transpose FLOPs' share of the Tensor engine's FLOPs.
pub const NEURON_TRANSPOSE_SHARE: f64 = 0.10;
/// Neuron: spill and reload bytes' share of HBM reads.
pub const NEURON_SPILL_SHARE: f64 = 0.25;
/// Neuron: MFU and MBU both below this (percent): neither roof is near.
pub const NEURON_LOW_UTILIZATION_PCT: f64 = 50.0;
/// Neuron: model FLOPs below this share of the Tensor engine's active
/// FLOPs (Neuron Explorer Summary Viewer: "Low Model FLOPS relative to
/// Active FLOPS (< 50%)").
pub const NEURON_MODEL_ACTIVE_SHARE: f64 = 0.5;
/// Neuron: DMA transfers smaller than this many bytes on average (the NKI
/// DMA bandwidth guide: payloads of ≥ 4 KiB are what saturate HBM
/// bandwidth; smaller ones pay the per-packet cost more often than they
/// move bytes).
pub const NEURON_DMA_MIN_BYTES: f64 = 4096.0;
/// Neuron engine imbalance: the busiest engine of a kind (DMA engines;
/// the elementwise engines Vector, Scalar, GpSimd) at least this many times
/// the median of its kind (our own cut-off: twice the median is work one
/// engine carries while its peers wait).
pub const NEURON_IMBALANCE_FACTOR: f64 = 2.0;
/// …and the busiest DMA engine busy for at least this share of the
/// execution window (our own: less is not what bounds the run).
pub const NEURON_DMA_IMBALANCE_BUSY_SHARE: f64 = 0.25;

/// One rule: its id, what it looks for and where its thresholds come from.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    pub id: &'static str,
    pub name: &'static str,
    pub condition: &'static str,
}

/// Every rule, in the order the report lists its verdicts.
pub const RULES: &[Rule] = &[
    Rule {
        id: "fusion",
        name: "Fusion candidates",
        condition: "≥ 3 consecutive eager pointwise / reduction ops on one thread under the same annotation, called from Python (no op above them), one device event each (CPU-only captures: one dispatch each), input shapes broadcast-compatible (our own rule: what torch.compile's inductor fuses into one kernel)",
    },
    Rule {
        id: "launch_bound",
        name: "Launch-bound",
        condition: "CPU, launch-overhead and kernel–kernel edges ≥ 50 % of the critical path (HTA's edge labels), the device idle ≥ 50 % of the scope, ≥ 50 % of kernels shorter than their launch call (HTA's short kernels), ≥ 100 launches (our own cut-offs)",
    },
    Rule {
        id: "host_bound",
        name: "Host-bound",
        condition: "not launch-bound; the device idle ≥ 50 % of the scope and ≥ 50 % of its idle time host wait (HTA's idle-time category: nothing queued when the previous kernel ended) (our own cut-offs); a synchronous runtime when ≥ 50 % of launch calls return after their device work ends, the call nrt_execute (Neuron Runtime performance tips: synchronous by default) or that work at least half the call",
    },
    Rule {
        id: "pageable_copy",
        name: "Pageable copies",
        condition: "any host↔device copy from or to pageable memory (Nsight Systems' expert rule on pageable memcpy: the copy is staged and blocks the host)",
    },
    Rule {
        id: "blocking_sync",
        name: "Blocking calls",
        condition: "a call that blocks the host until the device is done (cuda/hip Device-, Stream-, EventSynchronize; synchronous copies such as cudaMemcpy, hipMemcpyWithStream), wherever it is, after or during which the device sits idle (Nsight Systems' synchronous-API rule); named by the op that made it (.item(), nonzero, .cpu()) and its Python caller; a wait with nothing queued on the device is said to be on work not in this trace",
    },
    Rule {
        id: "layout_conversion",
        name: "Layout conversions",
        condition: "copy and layout kernels (data movement's rules: copy-family ops' kernels, nchwToNhwc / transpose / permute) ≥ 10 % of device time (Neuron Explorer's cut-off for transpose FLOPs)",
    },
    Rule {
        id: "exposed_communication",
        name: "Exposed communication",
        condition: "communication not under computation ≥ 10 % of a device's span (our own cut-off; overlap as HTA's comm_comp_overlap)",
    },
    Rule {
        id: "collective_outlier",
        name: "Collective outliers",
        condition: "a collective longer than 2× the median of its name, among ≥ 4 of that name, the long ones at most a tenth of them (our own cut-offs; Neuron Explorer marks collective outliers against their group)",
    },
    Rule {
        id: "straggler_rank",
        name: "Straggler rank",
        condition: "in a run of several ranks, one rank the last to arrive at collectives in half the steps or more, and at least two (our own cut-off: a rank late that often is slow, not unlucky; the ranks report's straggler per step)",
    },
    Rule {
        id: "warmup",
        name: "Warm-up and compile",
        condition: "leading steps longer than 1.5× the steady median (tracelane's warm-up rule, analysis::warmup)",
    },
    Rule {
        id: "neuron_transpose",
        name: "Transpose FLOPs",
        condition: "transpose FLOPs > 10 % of the hardware (Tensor-engine) FLOPs: the engine moves data instead of computing (Neuron Explorer Summary Viewer)",
    },
    Rule {
        id: "neuron_spill",
        name: "Spill and reload",
        condition: "spill and reload bytes > 25 % of HBM reads (Neuron Explorer Summary Viewer)",
    },
    Rule {
        id: "neuron_active_flops",
        name: "Model vs active FLOPs",
        condition: "model FLOPs (Tensor-engine FLOPs less transposes) < 50 % of the active FLOPs (peak FLOP/s × the Tensor engine's active time, ActiveTime) (Neuron Explorer Summary Viewer)",
    },
    Rule {
        id: "neuron_dma_size",
        name: "Small DMA transfers",
        condition: "average DMA packet < 4 KiB (the Summary's average_dma_size; 4 KiB from the NKI DMA bandwidth guide: smaller payloads leave the DMA engines paying per-packet cost instead of moving bytes)",
    },
    Rule {
        id: "neuron_engine_imbalance",
        name: "Engine imbalance",
        condition: "the busiest DMA engine ≥ 2× the median of the core's DMA engines and busy ≥ 25 % of the window; or an elementwise engine (Vector, Scalar, GpSimd) busier than the Tensor engine and ≥ 2× the median of the other elementwise engines (our own cut-offs)",
    },
    Rule {
        id: "neuron_utilization",
        name: "Low utilisation",
        condition: "MFU and MBU both < 50 % (the Summary table's definitions): neither the compute nor the memory roof is near, the engines wait (our own cut-off)",
    },
    Rule {
        id: "neuron_model_switch",
        name: "Model switching",
        condition: "model switches (nc_model_switch / nrt_model_switch: a NEFF swapped onto a NeuronCore) in the scope with time on the critical path (any: a compiled graph switches none)",
    },
    Rule {
        id: "neuron_host_copies",
        name: "Host copies on the critical path",
        condition: "host↔device copies (dmem_buf_copyin / copyout, nrt_tensor_write / read) with ≥ 2 % of the scope's wall time on the critical path (our own cut-off: the medium-severity share)",
    },
    Rule {
        id: "neuron_barrier_wait",
        name: "Collective barrier waits",
        condition: "collective barrier waits (cc_exec_barrier on the device, enc_barrier on the host) with ≥ 2 % of the scope's wall time on the critical path (our own cut-off)",
    },
    Rule {
        id: "neuron_hbm_spill",
        name: "HBM spill",
        condition: "DRAM spill in the system profile's HBM usage (device_mem_usage dram_spill_bytes or dma_rings_spill_bytes > 0: SBUF evicted to HBM, Neuron Explorer's glossary); gain: each spilled byte saved and reloaded once per execution at Trainium's HBM bandwidth, a lower bound",
    },
];

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
    /// Slices that make the numbers (at most [`MAX_EVIDENCE`]), the first
    /// occurrence's first.
    pub slices: Vec<u32>,
    /// How many slices there are in all.
    pub slice_count: usize,
    /// Time ranges on the trace's clock (at most [`MAX_EVIDENCE`]); the
    /// first is where "show on the timeline" goes.
    pub ranges: Vec<(i64, i64)>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// A [`Rule`] id.
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
    pub checks: Vec<RuleCheck>,
    pub notes: Vec<String>,
}

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
    let cx = Cx {
        t,
        windows: &windows,
        whole: *scope == Scope::Whole,
        path: path.map(OnPath::new),
        wall_ns,
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
    run("fusion", fusion(&cx));
    let launches = launch_bound(&cx, w);
    let launch_bound_fired = !launches.0.is_empty();
    run("launch_bound", launches);
    run("host_bound", host_bound(&cx, w, launch_bound_fired));
    let copies = super::data_movement::copy_events(t, scope, args)?;
    run("pageable_copy", pageable_copies(&cx, &copies.0));
    run("blocking_sync", blocking::blocking_syncs(&cx));
    run("layout_conversion", layout_conversions(&cx, &copies));
    run("exposed_communication", exposed_communication(&cx, w));
    run("collective_outlier", collective_outliers(&cx));
    run(
        "straggler_rank",
        (
            Vec::new(),
            "one trace: a straggler shows across the ranks of a run (tracelane ranks, the Ranks view)"
                .into(),
        ),
    );
    run("warmup", warmup(&cx, w));
    let neuron = neuron_rules(&cx, engines.as_ref());
    for (id, r) in neuron {
        run(id, r);
    }
    for (id, r) in neuron_runtime::rules(&cx, w.neuron.as_ref()) {
        run(id, r);
    }
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

/// What every rule reads.
struct Cx<'a> {
    t: &'a Trace,
    windows: &'a [Interval],
    whole: bool,
    path: Option<OnPath>,
    wall_ns: i64,
}

impl Cx<'_> {
    fn inside(&self, ns: i64) -> bool {
        self.whole || intervals::window_of(self.windows, ns).is_some()
    }

    /// `estimate` bounded by the critical path's time inside `ranges`,
    /// and the words saying so.
    fn bounded(&self, estimate: i64, ranges: &[Interval]) -> (i64, String) {
        match &self.path {
            Some(p) => {
                let on = p.time_in(ranges);
                if on < estimate {
                    (
                        on.max(0),
                        format!(
                            "estimate {} cut to the {} of it on the critical path",
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
            None => (
                estimate.max(0),
                format!("estimate {} (no critical path to bound it)", us(estimate)),
            ),
        }
    }

    fn finding(
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
        }
    }
}

/// Counts `name` in a list kept in first-seen order.
fn tally(list: &mut Vec<(String, usize)>, name: String) {
    match list.iter_mut().find(|(n, _)| *n == name) {
        Some(x) => x.1 += 1,
        None => list.push((name, 1)),
    }
}

/// `1,234.5 µs` for words.
fn us(ns: i64) -> String {
    super::compare::fmt_us(ns as f64)
}

fn pct(x: f64) -> String {
    format!("{x:.1} %")
}

/// The critical path's weighted edges, for "how much of these ranges is
/// on it".
struct OnPath {
    /// `(from, to, weight)` of edges that carry time, by `from`.
    edges: Vec<(i64, i64, i64)>,
}

impl OnPath {
    fn new(c: &CriticalPathReport) -> OnPath {
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
    fn time_in(&self, ranges: &[Interval]) -> i64 {
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

// ---------------------------------------------------------------- fusion

/// Ops one fused kernel can hold: pointwise maths, casts and the simple
/// reductions inductor fuses with them.
const FUSIBLE: &[&str] = &[
    "abs",
    "add",
    "add_",
    "addcmul",
    "addcmul_",
    "addcdiv",
    "addcdiv_",
    "amax",
    "lerp",
    "lerp_",
    "sqrt_",
    "neg_",
    "exp2",
    "log1p",
    "expm1",
    "hardtanh",
    "leaky_relu",
    "dropout",
    "native_dropout",
    "clamp",
    "clamp_",
    "clamp_max",
    "clamp_min",
    "clamp_min_",
    "cos",
    "div",
    "div_",
    "erf",
    "exp",
    "exp_",
    "gelu",
    "log",
    "masked_fill",
    "masked_fill_",
    "maximum",
    "mean",
    "minimum",
    "mul",
    "mul_",
    "neg",
    "pow",
    "pow_",
    "reciprocal",
    "relu",
    "relu_",
    "rsqrt",
    "rsqrt_",
    "rsub",
    "sigmoid",
    "sigmoid_",
    "silu",
    "silu_",
    "sin",
    "sqrt",
    "square",
    "sub",
    "sub_",
    "sum",
    "tanh",
    "tanh_",
    "to",
    "_to_copy",
    "type_as",
    "var",
    "where",
];

/// Ops that launch nothing when their input needs no copy: they neither
/// join nor break a chain.
const VIEWS: &[&str] = &[
    "view",
    "_unsafe_view",
    "reshape",
    "unsqueeze",
    "squeeze",
    "expand",
    "expand_as",
    "t",
    "transpose",
    "permute",
    "detach",
    "alias",
    "slice",
    "select",
    "as_strided",
    "flatten",
    "unflatten",
    "contiguous",
    "lift_fresh",
    "result_type",
];

#[derive(Clone, Copy, PartialEq)]
enum Role {
    Fusible,
    Neutral,
    Breaks,
}

/// `[[64, 4096], [], [4096]]` → shapes (an empty list for a scalar or a
/// non-tensor argument). `None` when the text is not a list of lists.
fn parse_dims(s: &str) -> Option<Vec<Vec<i64>>> {
    let inner = s.trim().strip_prefix('[')?.strip_suffix(']')?;
    let mut out = Vec::new();
    let mut rest = inner.trim();
    while !rest.is_empty() {
        let r = rest.strip_prefix('[')?;
        let end = r.find(']')?;
        let dims = r[..end]
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| d.parse().ok())
            .collect::<Option<Vec<i64>>>()?;
        out.push(dims);
        rest = r[end + 1..]
            .trim_start()
            .trim_start_matches(',')
            .trim_start();
    }
    Some(out)
}

/// NumPy broadcasting of two shapes, or `None` when they are not compatible.
fn broadcast(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for k in 0..n {
        let x = if k < n - a.len() {
            1
        } else {
            a[k - (n - a.len())]
        };
        let y = if k < n - b.len() {
            1
        } else {
            b[k - (n - b.len())]
        };
        out[k] = if x == y || y == 1 {
            x
        } else if x == 1 {
            y
        } else {
            return None;
        };
    }
    Some(out)
}

/// The fused op that replaces a chain, when its ops spell a known one.
fn known_pattern(names: &[&str]) -> Option<(&'static str, &'static str)> {
    let has = |n: &str| names.contains(&n);
    if names.iter().all(|&n| n == names[0]) {
        return Some((
            "one op repeated per tensor (a loop over tensors)",
            "batch the loop: torch._foreach_* ops (optimizers: foreach=True or fused=True), torch.stack the tensors, or torch.compile the loop",
        ));
    }
    let means = names.iter().filter(|&&n| n == "mean").count();
    if has("rsqrt")
        && means == 1
        && (has("pow") || has("mul") || has("square"))
        && has("add")
        && !has("sub")
    {
        return Some((
            "RMSNorm written out (x · rsqrt(mean(x²) + ε) · w)",
            "call torch.nn.functional.rms_norm (torch.rms_norm, PyTorch ≥ 2.4), one fused op, or wrap the function in torch.compile, which fuses the chain into one kernel",
        ));
    }
    if means >= 2 && has("sub") && (has("rsqrt") || has("sqrt")) {
        return Some((
            "LayerNorm written out (x − mean) / sqrt(var + ε)",
            "call torch.nn.functional.layer_norm, one fused op, or wrap the function in torch.compile",
        ));
    }
    if has("exp") && has("sum") && has("div") {
        return Some((
            "softmax written out (exp / sum exp)",
            "call torch.softmax, one fused and numerically safe op, or wrap the function in torch.compile",
        ));
    }
    if has("tanh") && has("pow") && has("mul") && has("add") {
        return Some((
            "GELU (tanh form) written out",
            "call torch.nn.functional.gelu(approximate=\"tanh\"), one op, or wrap the function in torch.compile",
        ));
    }
    None
}

struct Chain {
    ops: Vec<u32>,
    device: Vec<u32>,
}

/// The outermost `cpu_op` above (or at) `s`: the op called from Python.
pub(crate) fn top_op(t: &Trace, s: u32) -> u32 {
    let mut top = s;
    let mut k = t.slices.parent[s as usize];
    while k != NO_SLICE {
        if t.slices.category[k as usize] == Category::CpuOp {
            top = k;
        }
        k = t.slices.parent[k as usize];
    }
    top
}

/// The nearest `user_annotation` above `s` (`NO_SLICE` when none).
fn annotation_of(t: &Trace, s: u32) -> u32 {
    let mut k = t.slices.parent[s as usize];
    while k != NO_SLICE {
        if t.slices.category[k as usize] == Category::UserAnnotation {
            return k;
        }
        k = t.slices.parent[k as usize];
    }
    NO_SLICE
}

fn fusion(cx: &Cx) -> (Vec<Finding>, String) {
    let t = cx.t;
    let s = &t.slices;
    // Device work per top-level op.
    let mut device_of: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    let mut has_device = false;
    for d in 0..s.len() {
        if !s.category[d].is_device_work() || t.on_host(d) {
            continue;
        }
        has_device = true;
        let op = t.links.op[d];
        if op != NO_SLICE && s.category[op as usize] == Category::CpuOp {
            device_of.entry(top_op(t, op)).or_default().push(d as u32);
        }
    }
    let short = |i: usize| -> &str {
        let n = t.slice_name(i);
        n.strip_prefix("aten::").unwrap_or(n)
    };
    let role = |i: usize| -> Role {
        let n = t.slice_name(i);
        let Some(name) = n.strip_prefix("aten::") else {
            return Role::Breaks;
        };
        let launched = device_of.get(&(i as u32)).map_or(0, |v| v.len());
        if VIEWS.contains(&name) && launched == 0 {
            return Role::Neutral;
        }
        if !FUSIBLE.contains(&name) {
            return Role::Breaks;
        }
        match (has_device, launched) {
            (false, _) | (true, 1) => Role::Fusible,
            (true, 0) => Role::Neutral,
            _ => Role::Breaks,
        }
    };
    let mut chains: Vec<Chain> = Vec::new();
    let mut shapes_unknown = false;
    for tr in &t.tracks {
        let range = tr.slices.start as usize..tr.slices.end as usize;
        if range.is_empty() || !t.on_host(range.start) {
            continue;
        }
        let mut cur: Vec<u32> = Vec::new();
        let mut acc: Option<Vec<i64>> = None;
        let mut ctx = NO_SLICE;
        let close = |cur: &mut Vec<u32>, chains: &mut Vec<Chain>| {
            if cur.len() >= FUSION_MIN_OPS {
                let device = cur
                    .iter()
                    .flat_map(|o| device_of.get(o).cloned().unwrap_or_default())
                    .collect();
                chains.push(Chain {
                    ops: std::mem::take(cur),
                    device,
                });
            }
            cur.clear();
        };
        for i in range {
            if s.category[i] != Category::CpuOp || top_op(t, i as u32) != i as u32 {
                continue;
            }
            if !cx.inside(s.start_ns[i]) {
                close(&mut cur, &mut chains);
                continue;
            }
            let r = role(i);
            let here = annotation_of(t, i as u32);
            if here != ctx {
                close(&mut cur, &mut chains);
                acc = None;
                ctx = here;
            }
            match r {
                Role::Neutral => continue,
                Role::Breaks => {
                    close(&mut cur, &mut chains);
                    acc = None;
                    continue;
                }
                Role::Fusible => {}
            }
            let dims = parse_dims(t.str(s.input_dims[i]));
            let mut fits = true;
            match &dims {
                Some(list) => {
                    for shape in list.iter().filter(|d| !d.is_empty()) {
                        match acc
                            .as_ref()
                            .map_or(Some(shape.clone()), |a| broadcast(a, shape))
                        {
                            Some(b) => acc = Some(b),
                            None => fits = false,
                        }
                    }
                }
                None => shapes_unknown = true,
            }
            if !fits {
                close(&mut cur, &mut chains);
                acc = dims.and_then(|list| {
                    list.iter()
                        .filter(|d| !d.is_empty())
                        .try_fold(Vec::new(), |a, d| broadcast(&a, d))
                });
            }
            cur.push(i as u32);
        }
        close(&mut cur, &mut chains);
    }
    if chains.is_empty() {
        return (
            Vec::new(),
            format!(
                "no chain of ≥ {FUSION_MIN_OPS} fusible eager ops{}",
                if has_device {
                    " launching one device event each"
                } else {
                    ""
                }
            ),
        );
    }
    // One finding per op sequence.
    let mut groups: Vec<(String, Vec<Chain>)> = Vec::new();
    for c in chains {
        let sig = c
            .ops
            .iter()
            .map(|&o| t.slice_name(o as usize))
            .collect::<Vec<_>>()
            .join(" → ");
        match groups.iter_mut().find(|(k, _)| *k == sig) {
            Some((_, v)) => v.push(c),
            None => groups.push((sig, vec![c])),
        }
    }
    let mut out = Vec::new();
    for (sig, chains) in groups {
        let first = &chains[0];
        let names: Vec<&str> = first.ops.iter().map(|&o| short(o as usize)).collect();
        let n_ops = first.ops.len();
        let mut estimate = 0i64;
        let mut ranges = Vec::new();
        let mut slices = Vec::new();
        let mut host_ns = 0i64;
        let mut device_ns = 0i64;
        let mut gaps_ns = 0i64;
        let mut kept_ns = 0i64;
        for c in &chains {
            let host0 = s.start_ns[c.ops[0] as usize];
            let host1 = c
                .ops
                .iter()
                .map(|&o| s.end_ns(o as usize))
                .max()
                .unwrap_or(host0);
            host_ns += c.ops.iter().map(|&o| s.dur_ns[o as usize]).sum::<i64>();
            slices.extend(c.ops.iter().copied());
            slices.extend(c.device.iter().copied());
            if c.device.is_empty() {
                // A CPU-only capture: one op does the chain's work at
                // least as long as its longest op.
                let longest = c
                    .ops
                    .iter()
                    .map(|&o| s.dur_ns[o as usize])
                    .max()
                    .unwrap_or(0);
                estimate += (host1 - host0) - longest;
                kept_ns += longest;
                ranges.push((host0, host1));
            } else {
                let d0 = c
                    .device
                    .iter()
                    .map(|&d| s.start_ns[d as usize])
                    .min()
                    .unwrap_or(0);
                let d1 = c
                    .device
                    .iter()
                    .map(|&d| s.end_ns(d as usize))
                    .max()
                    .unwrap_or(0);
                let longest = c
                    .device
                    .iter()
                    .map(|&d| s.dur_ns[d as usize])
                    .max()
                    .unwrap_or(0);
                let mut iv: Vec<Interval> = c
                    .device
                    .iter()
                    .map(|&d| (s.start_ns[d as usize], s.end_ns(d as usize)))
                    .collect();
                let busy = intervals::union_len(&mut iv);
                device_ns += c.device.iter().map(|&d| s.dur_ns[d as usize]).sum::<i64>();
                gaps_ns += (d1 - d0) - busy;
                // One kernel reads the inputs and writes the output once,
                // as the chain's longest kernel does at least.
                estimate += (d1 - d0) - longest;
                kept_ns += longest;
                ranges.push((d0, d1));
            }
        }
        let occurrences = chains.len();
        let bounded = cx.bounded(estimate, &ranges);
        let (what, action) = known_pattern(&names).unwrap_or((
            "a chain of eager pointwise ops",
            "wrap the function in torch.compile (inductor fuses pointwise ops and simple reductions into one kernel), or write it as one fused op",
        ));
        let on_device = !first.device.is_empty();
        let mut numbers = vec![
            ("occurrences".into(), occurrences.to_string()),
            ("ops per chain".into(), n_ops.to_string()),
        ];
        if on_device {
            numbers.push((
                "device events per chain".into(),
                first.device.len().to_string(),
            ));
            numbers.push((
                "launches saved".into(),
                (occurrences * (first.device.len() - 1)).to_string(),
            ));
            numbers.push(("device time".into(), us(device_ns)));
            numbers.push(("device idle between its kernels".into(), us(gaps_ns)));
            numbers.push(("fused estimate (its longest kernels)".into(), us(kept_ns)));
        } else {
            numbers.push((
                "dispatches saved".into(),
                (occurrences * (n_ops - 1)).to_string(),
            ));
            numbers.push(("fused estimate (its longest ops)".into(), us(kept_ns)));
        }
        numbers.push(("host time in these ops".into(), us(host_ns)));
        if shapes_unknown {
            numbers.push(("shapes".into(), "not recorded: chained by order".into()));
        }
        let slice_count = slices.len();
        slices.truncate(MAX_EVIDENCE);
        ranges.truncate(MAX_EVIDENCE);
        out.push(
            cx.finding(
                "fusion",
                sig.clone(),
                format!(
                    "{what}: {n_ops} eager ops{} × {occurrences} — fuse them",
                    if on_device {
                        format!(", {} device events", first.device.len())
                    } else {
                        String::new()
                    }
                ),
                bounded,
                Evidence {
                    numbers,
                    ops: first
                        .ops
                        .iter()
                        .map(|&o| t.slice_name(o as usize).to_string())
                        .collect(),
                    slices,
                    slice_count,
                    ranges,
                },
                action,
            ),
        );
    }
    (out, String::new())
}

// ---------------------------------------------------------- launch-bound

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

fn launch_bound(cx: &Cx, w: &WhySlow) -> (Vec<Finding>, String) {
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

/// The host's work in the gaps where the device waited for it: the
/// top-level host slices overlapping `gaps` (their overlap, per name,
/// largest first) and how much of the gaps any recorded host slice covers.
fn host_work_in(cx: &Cx, gaps: &[Interval]) -> (Vec<(String, i64)>, i64) {
    let t = cx.t;
    let host = |c: Category| {
        matches!(
            c,
            Category::CpuOp | Category::Runtime | Category::PythonFunction
        )
    };
    let mut by_name: Vec<(String, i64)> = Vec::new();
    let mut covered: Vec<Interval> = Vec::new();
    for s in 0..t.slices.len() {
        if !host(t.slices.category[s]) {
            continue;
        }
        let (a, b) = (t.slices.start_ns[s], t.slices.end_ns(s));
        let mut k = t.slices.parent[s];
        let mut top = true;
        while k != NO_SLICE {
            if host(t.slices.category[k as usize]) {
                top = false;
                break;
            }
            k = t.slices.parent[k as usize];
        }
        if !top {
            continue;
        }
        let mut overlap = 0;
        for &(x, y) in gaps {
            let (lo, hi) = (a.max(x), b.min(y));
            if lo < hi {
                overlap += hi - lo;
                covered.push((lo, hi));
            }
        }
        if overlap > 0 {
            let name = t.str(t.slices.name[s]).to_string();
            match by_name.iter_mut().find(|x| x.0 == name) {
                Some(x) => x.1 += overlap,
                None => by_name.push((name, overlap)),
            }
        }
    }
    crate::sort::by(&mut by_name, &|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    (by_name, intervals::union_len(&mut covered))
}

/// The device waits for the host: it sits idle most of the scope and most
/// of that idle time no work was queued (HTA's host-wait idle category),
/// without the many short launches of [`launch_bound`]. On a synchronous
/// runtime (Neuron's `nrt_execute`) host and device never overlap.
fn host_bound(cx: &Cx, w: &WhySlow, launch_bound_fired: bool) -> (Vec<Finding>, String) {
    let none = |why: String| (Vec::new(), why);
    if launch_bound_fired {
        return none("launch-bound: that finding is the host's wait".into());
    }
    let Some(idle) = &w.device.idle else {
        return none("no device lanes".into());
    };
    // Per lane: host-wait idle and all idle; the lane that waited most.
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
        if r.category == super::device_time::IdleCategory::HostWait {
            lanes[i].1 += r.idle_ns.max(0);
        }
    }
    let Some(&(lane, wait, lane_idle)) = lanes.iter().max_by_key(|x| (x.1, -x.0)) else {
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
    let blocked: i64 = blocking::blocking_calls(cx)
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
    let gaps: Vec<&super::device_time::Gap> = w
        .device
        .longest_gaps
        .iter()
        .filter(|g| g.lane == lane && g.category == super::device_time::IdleCategory::HostWait)
        .collect();
    let ranges: Vec<Interval> = gaps.iter().map(|g| (g.start_ns, g.end_ns)).collect();
    let listed: i64 = ranges.iter().map(|r| r.1 - r.0).sum();
    let (ops, recorded) = host_work_in(cx, &ranges);
    // Launch calls that return only after the device work they started
    // ends: the runtime is synchronous, host work cannot overlap it.
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
    let sync = launches > 0 && synchronous as f64 >= HOST_BOUND_SYNC_SHARE * launches as f64;
    // Less host time on the path is the most a faster host gives back.
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
    // what it spends elsewhere overlaps device work.
    let (gain, basis) = match &cx.path {
        Some(p) if p.time_in(&ranges) < gain => {
            let on = p.time_in(&ranges);
            (
                on,
                format!(
                    "{basis}, cut to the {} of the critical path inside the host-wait gaps",
                    us(on)
                ),
            )
        }
        _ => (gain, basis),
    };
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
    if !ops.is_empty() {
        numbers.push((
            "host ops in those gaps".into(),
            ops.iter()
                .take(5)
                .map(|(n, ns)| format!("{n} {}", us(*ns)))
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    let mut action = String::from("the device waits for the host between launches: ");
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

// ------------------------------------------------- copies and syncs

fn pageable_copies(cx: &Cx, copies: &[super::data_movement::CopyEvent]) -> (Vec<Finding>, String) {
    let t = cx.t;
    let s = &t.slices;
    let pageable: Vec<&super::data_movement::CopyEvent> =
        copies.iter().filter(|c| c.memory == "pageable").collect();
    if pageable.is_empty() {
        let pinned = copies.iter().filter(|c| c.memory == "pinned").count();
        return (
            Vec::new(),
            format!("no pageable copies ({pinned} from or to pinned memory)"),
        );
    }
    // The host waits in the copy's runtime call while the driver stages it.
    let mut ranges = Vec::new();
    let mut slices = Vec::new();
    let (mut bytes, mut device_ns, mut host_ns) = (0u64, 0i64, 0i64);
    let mut kinds: Vec<String> = Vec::new();
    for c in &pageable {
        let d = c.slice as usize;
        device_ns += s.dur_ns[d];
        bytes += c.bytes.unwrap_or(0);
        slices.push(c.slice);
        if !kinds.contains(&c.kind) {
            kinds.push(c.kind.clone());
        }
        let l = t.links.launch[d];
        if l != NO_SLICE {
            slices.push(l);
            host_ns += s.dur_ns[l as usize];
            ranges.push((s.start_ns[l as usize], s.end_ns(l as usize)));
        } else {
            ranges.push((s.start_ns[d], s.end_ns(d)));
        }
    }
    let bounded = cx.bounded(host_ns, &ranges);
    let count = pageable.len();
    let mut by_op: Vec<(String, usize)> = Vec::new();
    for c in &pageable {
        let k = if c.cause != NO_SLICE { c.cause } else { c.op };
        let name = if k == NO_SLICE {
            "(no op)".to_string()
        } else {
            t.slice_name(k as usize).to_string()
        };
        tally(&mut by_op, name);
    }
    let slice_count = slices.len();
    slices.truncate(MAX_EVIDENCE);
    ranges.truncate(MAX_EVIDENCE);
    let f = cx.finding(
        "pageable_copy",
        kinds.join("+"),
        format!("{count} {} copies from or to pageable memory", kinds.join(" / ")),
        bounded,
        Evidence {
            numbers: vec![
                ("copies".into(), count.to_string()),
                ("bytes".into(), crate::numbers::fmt_count(bytes)),
                ("device time".into(), us(device_ns)),
                ("host time in their calls".into(), us(host_ns)),
                (
                    "caused by".into(),
                    by_op.iter().map(|(n, k)| format!("{n} ×{k}")).collect::<Vec<_>>().join(", "),
                ),
            ],
            ops: by_op.into_iter().map(|(n, _)| n).collect(),
            slices,
            slice_count,
            ranges,
        },
        "allocate the host tensors in pinned memory (DataLoader(pin_memory=True), tensor.pin_memory()) and copy with .to(device, non_blocking=True), so the copy runs asynchronously and overlaps compute",
    );
    (vec![f], String::new())
}

fn layout_conversions(
    cx: &Cx,
    (copies, device_ns): &(Vec<super::data_movement::CopyEvent>, i64),
) -> (Vec<Finding>, String) {
    let t = cx.t;
    let s = &t.slices;
    let layout: Vec<&super::data_movement::CopyEvent> = copies
        .iter()
        .filter(|c| c.kind == "copy kernel" || c.kind == "layout kernel")
        .collect();
    let time: i64 = layout.iter().map(|c| s.dur_ns[c.slice as usize]).sum();
    let share = time as f64 / (*device_ns).max(1) as f64;
    if layout.is_empty() || share < LAYOUT_SHARE {
        return (
            Vec::new(),
            format!(
                "copy and layout kernels {} of device time",
                pct(100.0 * share)
            ),
        );
    }
    let mut by: Vec<(String, usize, i64)> = Vec::new();
    for c in &layout {
        let k = if c.cause != NO_SLICE { c.cause } else { c.op };
        let name = if c.kind == "layout kernel" || k == NO_SLICE {
            let n = t.slice_name(c.slice as usize);
            ["nchwToNhwc", "nhwcToNchw", "transpose", "permute"]
                .into_iter()
                .find(|p| n.contains(p))
                .unwrap_or("copy")
                .to_string()
        } else {
            t.slice_name(k as usize).to_string()
        };
        let d = s.dur_ns[c.slice as usize];
        match by.iter_mut().find(|x| x.0 == name) {
            Some(x) => {
                x.1 += 1;
                x.2 += d;
            }
            None => by.push((name, 1, d)),
        }
    }
    crate::sort::by_key(&mut by, &|x| std::cmp::Reverse(x.2));
    let ranges: Vec<Interval> = layout
        .iter()
        .map(|c| (s.start_ns[c.slice as usize], s.end_ns(c.slice as usize)))
        .collect();
    let bounded = cx.bounded(time, &ranges);
    let mut slices: Vec<u32> = layout.iter().map(|c| c.slice).collect();
    let slice_count = slices.len();
    slices.truncate(MAX_EVIDENCE);
    let f = cx.finding(
        "layout_conversion",
        by.iter().map(|x| x.0.as_str()).collect::<Vec<_>>().join("+"),
        format!(
            "Layout conversions take {} of device time ({} kernels)",
            pct(100.0 * share),
            layout.len()
        ),
        bounded,
        Evidence {
            numbers: vec![
                ("kernels".into(), layout.len().to_string()),
                ("device time".into(), us(time)),
                ("share of device time".into(), pct(100.0 * share)),
                (
                    "by cause".into(),
                    by.iter().map(|(n, k, d)| format!("{n} ×{k} ({})", us(*d))).collect::<Vec<_>>().join(", "),
                ),
            ],
            ops: by.into_iter().map(|x| x.0).collect(),
            slices,
            slice_count,
            ranges: ranges.into_iter().take(MAX_EVIDENCE).collect(),
        },
        "keep one memory layout end to end: convert the model and its inputs once (model.to(memory_format=torch.channels_last) for convolutions), avoid .contiguous() / .permute() / .t() round trips between ops, or let torch.compile pick layouts",
    );
    (vec![f], String::new())
}

// ------------------------------------------------------- communication

fn exposed_communication(cx: &Cx, w: &WhySlow) -> (Vec<Finding>, String) {
    let worst = w
        .device
        .devices
        .iter()
        .filter(|d| d.communication_ns > 0 && d.span_ns > 0)
        .max_by_key(|d| d.exposed_communication_ns);
    let Some(d) = worst else {
        return (Vec::new(), "no communication on the device".into());
    };
    let share = d.exposed_communication_ns as f64 / d.span_ns as f64;
    if share < EXPOSED_COMM_SHARE {
        return (
            Vec::new(),
            format!(
                "exposed communication {} of the device's span",
                pct(100.0 * share)
            ),
        );
    }
    let t = cx.t;
    let s = &t.slices;
    let mut slices = Vec::new();
    let mut ranges = Vec::new();
    for i in 0..s.len() {
        if s.category[i].is_device_work()
            && !t.on_host(i)
            && cx.inside(s.start_ns[i])
            && exact_kernel_type(s.category[i], t.slice_name(i)) == KernelType::Communication
        {
            slices.push(i as u32);
            ranges.push((s.start_ns[i], s.end_ns(i)));
        }
    }
    let comm_on_path = cx
        .path
        .as_ref()
        .map(|p| p.time_in(&ranges))
        .unwrap_or(d.exposed_communication_ns);
    let gain = d.exposed_communication_ns.min(comm_on_path);
    let overlap = 100.0 * d.communication_overlapped_ns as f64 / d.communication_ns.max(1) as f64;
    let slice_count = slices.len();
    slices.truncate(MAX_EVIDENCE);
    ranges.truncate(MAX_EVIDENCE);
    let f = cx.finding(
        "exposed_communication",
        d.device.clone(),
        format!(
            "Communication is exposed: {} of {}'s time waits on collectives",
            pct(100.0 * share),
            d.device
        ),
        (gain, format!("exposed communication {} bounded by the collectives' time on the critical path", us(d.exposed_communication_ns))),
        Evidence {
            numbers: vec![
                ("communication".into(), us(d.communication_ns)),
                ("under computation".into(), pct(overlap)),
                ("exposed".into(), us(d.exposed_communication_ns)),
                ("share of the span".into(), pct(100.0 * share)),
            ],
            ops: Vec::new(),
            slices,
            slice_count,
            ranges,
        },
        "overlap communication with computation: DDP bucketing (bucket_cap_mb) and gradient-as-bucket-view, FSDP prefetching (forward_prefetch / backward_prefetch), collectives on their own stream launched before the compute that does not need them",
    );
    (vec![f], String::new())
}

fn collective_outliers(cx: &Cx) -> (Vec<Finding>, String) {
    let t = cx.t;
    let s = &t.slices;
    let mut by_name: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for i in 0..s.len() {
        if s.category[i].is_device_work()
            && !t.on_host(i)
            && cx.inside(s.start_ns[i])
            && exact_kernel_type(s.category[i], t.slice_name(i)) == KernelType::Communication
        {
            by_name.entry(t.slice_name(i)).or_default().push(i);
        }
    }
    if by_name.is_empty() {
        return (Vec::new(), "no collectives".into());
    }
    let mut names: Vec<&str> = by_name.keys().copied().collect();
    names.sort_unstable();
    let mut out = Vec::new();
    let mut checked = 0;
    let mut bimodal = Vec::new();
    for name in names {
        let list = &by_name[name];
        if list.len() < COLLECTIVE_MIN_COUNT {
            continue;
        }
        checked += 1;
        let durs: Vec<i64> = list.iter().map(|&i| s.dur_ns[i]).collect();
        let med = median(&durs);
        let outliers: Vec<usize> = list
            .iter()
            .copied()
            .filter(|&i| s.dur_ns[i] as f64 > COLLECTIVE_OUTLIER_FACTOR * med as f64)
            .collect();
        if outliers.is_empty() {
            continue;
        }
        if outliers.len() * COLLECTIVE_OUTLIER_MAX_SHARE_INV > list.len() {
            bimodal.push(format!("{} of {} {name}", outliers.len(), list.len()));
            continue;
        }
        let excess: i64 = outliers.iter().map(|&i| s.dur_ns[i] - med).sum();
        let ranges: Vec<Interval> = outliers
            .iter()
            .map(|&i| (s.start_ns[i], s.end_ns(i)))
            .collect();
        let bounded = cx.bounded(excess, &ranges);
        let worst = outliers.iter().map(|&i| s.dur_ns[i]).max().unwrap_or(0);
        let short: String = name.chars().take(60).collect();
        out.push(cx.finding(
            "collective_outlier",
            name.to_string(),
            format!(
                "{} of {} {short} run over {COLLECTIVE_OUTLIER_FACTOR}× their median",
                outliers.len(),
                list.len()
            ),
            bounded,
            Evidence {
                numbers: vec![
                    ("collectives of this name".into(), list.len().to_string()),
                    ("outliers".into(), outliers.len().to_string()),
                    ("median".into(), us(med)),
                    ("longest".into(), us(worst)),
                    ("time over the median".into(), us(excess)),
                ],
                ops: vec![name.to_string()],
                slice_count: outliers.len(),
                slices: outliers.iter().take(MAX_EVIDENCE).map(|&i| i as u32).collect(),
                ranges: ranges.into_iter().take(MAX_EVIDENCE).collect(),
            },
            "a long collective waits for the slowest rank: open the ranks view to find the straggler (data loading, a host sync, uneven work) and compare the outlier steps' timelines",
        ));
    }
    let why = if out.is_empty() {
        format!(
            "{checked} collective names with ≥ {COLLECTIVE_MIN_COUNT} calls, no rare one over {COLLECTIVE_OUTLIER_FACTOR}× its median{}",
            if bimodal.is_empty() {
                String::new()
            } else {
                format!(
                    " (two populations, not outliers — sizes differ: {})",
                    bimodal.join("; ")
                )
            }
        )
    } else {
        String::new()
    };
    (out, why)
}

// ------------------------------------------------------------- warm-up

fn warmup(cx: &Cx, w: &WhySlow) -> (Vec<Finding>, String) {
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
    let flagged: Vec<&super::warmup::OccurrenceTime> =
        r.occurrences.iter().filter(|o| o.warmup).collect();
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

// -------------------------------------------------------------- Neuron

type RuleResult = (&'static str, (Vec<Finding>, String));

fn neuron_rules(cx: &Cx, engines: Option<&super::engines::EngineReport>) -> Vec<RuleResult> {
    let none = |why: &str| (Vec::new(), why.to_string());
    let Some(e) = engines else {
        let why = "no Neuron device profile";
        return vec![
            ("neuron_transpose", none(why)),
            ("neuron_spill", none(why)),
            ("neuron_active_flops", none(why)),
            ("neuron_dma_size", none(why)),
            ("neuron_engine_imbalance", none(why)),
            ("neuron_utilization", none(why)),
        ];
    };
    let window = (e.window_ns.0, e.window_ns.1);
    let mut out = Vec::new();
    // Transpose FLOPs.
    let hw: i64 = e.by_hlo.iter().map(|g| g.raw_flops).sum();
    let tr: i64 = e.by_hlo.iter().map(|g| g.transpose_flops).sum();
    out.push((
        "neuron_transpose",
        if hw <= 0 {
            none("no FLOPs in the profile")
        } else if (tr as f64) <= NEURON_TRANSPOSE_SHARE * hw as f64 {
            none(&format!("transpose FLOPs {} of the Tensor engine's", pct(100.0 * tr as f64 / hw as f64)))
        } else {
            let groups: Vec<&super::engines::GroupRow> = e.by_hlo.iter().filter(|g| g.transpose_flops > 0).collect();
            let time: i64 = groups.iter().map(|g| g.busy_ns).sum();
            let ranges: Vec<Interval> = groups.iter().filter_map(|g| g.first_ns).collect();
            let mut slices: Vec<u32> = groups.iter().flat_map(|g| g.slices.iter().copied()).collect();
            let slice_count = slices.len();
            slices.truncate(MAX_EVIDENCE);
            let share = tr as f64 / hw as f64;
            let u = e.utilization.as_ref();
            let mut numbers = vec![
                ("transpose FLOPs".into(), crate::numbers::fmt_si(tr as f64)),
                ("Tensor-engine FLOPs".into(), crate::numbers::fmt_si(hw as f64)),
                ("share".into(), pct(100.0 * share)),
                ("busy time of the HLO ops with transposes".into(), us(time)),
            ];
            if let Some(u) = u {
                numbers.push(("MFU / HFU".into(), format!("{} / {}", pct(u.mfu_pct), pct(u.hfu_pct))));
            }
            (vec![cx.finding(
                "neuron_transpose",
                groups.iter().map(|g| g.name.as_str()).collect::<Vec<_>>().join("+"),
                format!("Transposes are {} of the Tensor engine's FLOPs: the engine moves data instead of computing", pct(100.0 * share)),
                // The transposes' share of the Tensor engine's busy time
                // is what a layout without them saves.
                ((share * time as f64) as i64, format!("transpose share × busy time of the HLO ops that transpose, inside the {} execution window", us(window.1 - window.0))),
                Evidence {
                    numbers,
                    ops: groups.iter().map(|g| g.name.clone()).collect(),
                    slices,
                    slice_count,
                    ranges,
                },
                "lay tensors out the way the Tensor engine reads them so the compiler inserts no transposes: keep the contraction dimension where the matmul wants it (pre-transpose weights once, at load), avoid .t() / permute() before matmuls; check the HLO ops listed",
            )], String::new())
        },
    ));
    // Spill and reload.
    let spill = cx.t.device_profile.as_deref().map(|p| {
        let ins = &p.instructions;
        let none_i64 = crate::model::NONE_I64;
        let mut save = 0i64;
        let mut reload = 0i64;
        let mut hbm_read = 0i64;
        let mut slices = Vec::new();
        for k in 0..ins.len() {
            let at = ins.start_ns[k];
            if at < window.0 || at >= window.1 {
                continue;
            }
            let v = |x: i64| if x == none_i64 { 0 } else { x };
            let (sv, rl) = (v(ins.spill_save[k]), v(ins.spill_reload[k]));
            save += sv;
            reload += rl;
            hbm_read += v(ins.hbm_read[k]);
            if sv + rl > 0 && ins.slice[k] != NO_SLICE {
                slices.push(ins.slice[k]);
            }
        }
        (save, reload, hbm_read, slices)
    });
    out.push((
        "neuron_spill",
        match spill {
            None => none("no Instruction table"),
            Some((_, _, 0, _)) => none("no HBM reads recorded"),
            Some((save, reload, read, slices)) => {
                let share = (save + reload) as f64 / read as f64;
                if share <= NEURON_SPILL_SHARE {
                    none(&format!("spill + reload {} of HBM reads", pct(100.0 * share)))
                } else {
                    let slice_count = slices.len();
                    let ranges: Vec<Interval> = slices
                        .iter()
                        .take(MAX_EVIDENCE)
                        .map(|&s| (cx.t.slices.start_ns[s as usize], cx.t.slices.end_ns(s as usize)))
                        .collect();
                    // The spill / reload DMA queues' busy time is what
                    // keeping the data on chip saves.
                    let queues: Vec<&super::engines::DmaRow> =
                        e.dma_queues.iter().filter(|q| q.name.contains("Spill")).collect();
                    let time: i64 = if queues.is_empty() {
                        slices.iter().map(|&s| cx.t.slices.dur_ns[s as usize]).sum()
                    } else {
                        queues.iter().map(|q| q.busy_ns).sum()
                    };
                    (vec![cx.finding(
                        "neuron_spill",
                        "spill".into(),
                        format!("Spill and reload are {} of HBM reads", pct(100.0 * share)),
                        (time.min(window.1 - window.0), "the spill / reload DMA queues' busy time, inside the execution window".into()),
                        Evidence {
                            numbers: vec![
                                ("spill bytes".into(), crate::numbers::fmt_si(save as f64)),
                                ("reload bytes".into(), crate::numbers::fmt_si(reload as f64)),
                                ("HBM read bytes".into(), crate::numbers::fmt_si(read as f64)),
                                ("share".into(), pct(100.0 * share)),
                            ],
                            ops: Vec::new(),
                            slices: slices.into_iter().take(MAX_EVIDENCE).collect(),
                            slice_count,
                            ranges,
                        },
                        "reduce what lives in SBUF at once: smaller tiles or sequence chunks, fewer live intermediates (fuse, recompute), or a layout the compiler can keep on chip",
                    )], String::new())
                }
            }
        },
    ));
    out.push(("neuron_active_flops", active_flops(cx, e)));
    out.push(("neuron_dma_size", dma_size(cx, e)));
    out.push(("neuron_engine_imbalance", engine_imbalance(cx, e)));
    // Utilisation.
    out.push((
        "neuron_utilization",
        match &e.utilization {
            None => none("no utilisation: the profile has no Metadata peaks"),
            Some(u) if u.mfu_pct >= NEURON_LOW_UTILIZATION_PCT || u.mbu_pct >= NEURON_LOW_UTILIZATION_PCT => {
                none(&format!("MFU {} and MBU {}", pct(u.mfu_pct), pct(u.mbu_pct)))
            }
            Some(u) => {
                let mut waits: Vec<(String, i64)> = e
                    .engines
                    .iter()
                    .map(|g| (g.engine.clone(), g.semaphore_ns + g.evt_wait_ns.unwrap_or(0) + g.dma_wait_ns.unwrap_or(0)))
                    .filter(|x| x.1 > 0)
                    .collect();
                crate::sort::by_key(&mut waits, &|x| std::cmp::Reverse(x.1));
                let idle = e
                    .engines
                    .iter()
                    .filter(|g| g.engine.eq_ignore_ascii_case("tensor"))
                    .map(|g| (u.window_ns - g.busy_ns).max(0))
                    .next()
                    .unwrap_or(0);
                let summary = u
                    .summary
                    .iter()
                    .map(|(k, v)| format!("{k} {v:.1}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                (vec![cx.finding(
                    "neuron_utilization",
                    "window".into(),
                    format!("Low utilisation: MFU {} and MBU {} — neither roof is near", pct(u.mfu_pct), pct(u.mbu_pct)),
                    (idle, "the Tensor engine's idle time in the execution window".into()),
                    Evidence {
                        numbers: vec![
                            ("MFU".into(), pct(u.mfu_pct)),
                            ("HFU".into(), pct(u.hfu_pct)),
                            ("MBU".into(), pct(u.mbu_pct)),
                            ("the profile's Summary".into(), summary),
                            ("execution window".into(), us(u.window_ns)),
                            ("Tensor engine idle".into(), us(idle)),
                            (
                                "engine waits (semaphore, event, DMA)".into(),
                                waits.iter().map(|(n, w)| format!("{n} {}", us(*w))).collect::<Vec<_>>().join(", "),
                            ),
                        ],
                        ops: Vec::new(),
                        slices: Vec::new(),
                        slice_count: 0,
                        ranges: vec![window],
                    },
                    "the engines wait rather than compute or stream: look at the engines view's waits and DMA queues; overlap DMA with compute (larger tiles, more in flight), batch more work per execution",
                )], String::new())
            }
        },
    ));
    out
}

/// An engine's row by name, as the profile spells it in any case
/// (GpSimd's older name is Pool).
fn engine_row<'e>(
    e: &'e super::engines::EngineReport,
    name: &str,
) -> Option<&'e super::engines::EngineRow> {
    e.engines.iter().find(|g| {
        g.engine.eq_ignore_ascii_case(name)
            || (name.eq_ignore_ascii_case("gpsimd") && g.engine.eq_ignore_ascii_case("pool"))
    })
}

/// The core's DMA engines: the Metadata's count, or the engines seen where
/// it says fewer or nothing.
fn dma_engines_per_core(cx: &Cx, e: &super::engines::EngineReport) -> usize {
    let seen = e.dma_engines.len().max(1);
    cx.t.device_profile
        .as_deref()
        .and_then(|p| p.meta_i64("num_dma_engines_per_neuroncore"))
        .map_or(seen, |n| (n.max(0) as usize).max(seen))
}

/// The first [`MAX_EVIDENCE`] slices and how many there are.
fn capped(all: impl Iterator<Item = u32>) -> (Vec<u32>, usize) {
    let mut n = 0;
    let mut kept = Vec::new();
    for s in all {
        if n < MAX_EVIDENCE {
            kept.push(s);
        }
        n += 1;
    }
    (kept, n)
}

/// Slices of the device profile's instructions on `engine` inside the
/// scope, and how many there are.
fn engine_slices(cx: &Cx, engine: &str) -> (Vec<u32>, usize) {
    let Some(p) = cx.t.device_profile.as_deref() else {
        return (Vec::new(), 0);
    };
    let ins = &p.instructions;
    capped(
        (0..ins.len())
            .filter(|&k| {
                ins.slice[k] != NO_SLICE
                    && cx.inside(ins.start_ns[k])
                    && cx.t.str(ins.engine[k]).eq_ignore_ascii_case(engine)
            })
            .map(|k| ins.slice[k]),
    )
}

/// Slices of the DMA packets inside the scope that `keep` selects.
fn packet_slices(cx: &Cx, keep: &dyn Fn(usize) -> bool) -> (Vec<u32>, usize) {
    let Some(p) = cx.t.device_profile.as_deref() else {
        return (Vec::new(), 0);
    };
    let d = &p.dma;
    capped(
        (0..d.len())
            .filter(|&k| d.slice[k] != NO_SLICE && cx.inside(d.start_ns[k]) && keep(k))
            .map(|k| d.slice[k]),
    )
}

fn first_range(cx: &Cx, slices: &[u32]) -> Vec<Interval> {
    slices
        .first()
        .map(|&s| {
            vec![(
                cx.t.slices.start_ns[s as usize],
                cx.t.slices.end_ns(s as usize),
            )]
        })
        .unwrap_or_default()
}

/// Model FLOPs against the Tensor engine's active FLOPs: the engine is on
/// but not doing the model's matrix work (small or badly pipelined
/// matmuls).
fn active_flops(cx: &Cx, e: &super::engines::EngineReport) -> (Vec<Finding>, String) {
    let none = |why: String| (Vec::new(), why);
    let Some(u) = &e.utilization else {
        return none("no peak FLOP/s: the profile has no Metadata peaks".into());
    };
    let Some(tensor) = engine_row(e, "tensor") else {
        return none("no Tensor engine in the profile".into());
    };
    if tensor.active_ns <= 0 || u.hardware_flops <= 0 {
        return none("no Tensor-engine FLOPs".into());
    }
    let model = u.hardware_flops - u.transpose_flops;
    let active = u.peak_flops_per_s * tensor.active_ns as f64 / 1e9;
    let share = model as f64 / active;
    if share >= NEURON_MODEL_ACTIVE_SHARE {
        return none(format!(
            "model FLOPs {} of active FLOPs",
            pct(100.0 * share)
        ));
    }
    // What the engine's FLOPs need at its peak; the rest of its active
    // time is fixed costs and gaps between instructions.
    let need = (u.hardware_flops as f64 / u.peak_flops_per_s * 1e9) as i64;
    let estimate = (tensor.active_ns - need).max(0);
    let matmuls = tensor
        .opcodes
        .iter()
        .filter(|o| o.opcode.eq_ignore_ascii_case("MATMUL"))
        .map(|o| o.count)
        .sum::<u64>();
    let groups: Vec<&super::engines::GroupRow> =
        e.by_hlo.iter().filter(|g| g.raw_flops > 0).collect();
    let mut numbers = vec![
        ("model FLOPs".into(), crate::numbers::fmt_si(model as f64)),
        ("active FLOPs".into(), crate::numbers::fmt_si(active)),
        ("share".into(), pct(100.0 * share)),
        (
            format!("Tensor engine active ({})", tensor.active_from),
            us(tensor.active_ns),
        ),
        ("needed at peak for its FLOPs".into(), us(need)),
    ];
    if matmuls > 0 {
        numbers.push((
            "FLOPs per MATMUL".into(),
            crate::numbers::fmt_si(u.hardware_flops as f64 / matmuls as f64),
        ));
    }
    for g in groups.iter().take(4) {
        if g.busy_ns > 0 {
            numbers.push((
                format!("{} at % of peak over its busy time", g.name),
                pct(100.0 * g.raw_flops as f64 / (u.peak_flops_per_s * g.busy_ns as f64 / 1e9)),
            ));
        }
    }
    let (slices, slice_count) = engine_slices(cx, &tensor.engine);
    let ranges = first_range(cx, &slices);
    (
        vec![cx.finding(
            "neuron_active_flops",
            groups.iter().map(|g| g.name.as_str()).collect::<Vec<_>>().join("+"),
            format!(
                "Model FLOPs are {} of the Tensor engine's active FLOPs: it is on but not doing the model's matmuls",
                pct(100.0 * share)
            ),
            (
                estimate.min(e.window_ns.1 - e.window_ns.0),
                "the Tensor engine's active time beyond what its FLOPs need at peak (an upper bound)".into(),
            ),
            Evidence {
                numbers,
                ops: groups.iter().map(|g| g.name.clone()).collect(),
                slices,
                slice_count,
                ranges,
            },
            "give each MATMUL more work for its fixed cost: wider moving tiles (up to 512 columns per PSUM bank), full 128-row contractions, LDWEIGHTS of the next matmul issued while the current one runs; in NKI, larger nc_matmul tiles",
        )],
        String::new(),
    )
}

/// Small DMA transfers: the DMA engines pay per-packet costs instead of
/// moving bytes.
fn dma_size(cx: &Cx, e: &super::engines::EngineReport) -> (Vec<Finding>, String) {
    let none = |why: String| (Vec::new(), why);
    let Some(all) = e.dma_all.as_ref().filter(|d| d.packets > 0) else {
        return none("no DMA packets in the scope".into());
    };
    let Some(bytes) = all.bytes else {
        return none("no DMA byte counts (the Perfetto export has none)".into());
    };
    let avg = bytes as f64 / all.packets as f64;
    if avg >= NEURON_DMA_MIN_BYTES {
        return none(format!("average DMA packet {avg:.0} B"));
    }
    let p = cx.t.device_profile.as_deref();
    let engines_per_core = dma_engines_per_core(cx, e) as f64;
    let Some(engine_bw) = e.dma_bandwidth_bytes_per_s.map(|b| b / engines_per_core) else {
        return none(format!(
            "average DMA packet {avg:.0} B < 4 KiB, but the Metadata has no DMA bandwidth to estimate the time it costs"
        ));
    };
    // Per DMA engine: its busy time beyond moving its bytes at its share
    // of the core's DMA bandwidth is per-packet cost; packets of 4 KiB
    // would pay it 4 KiB / avg times less often. The engines run side by
    // side: the longest one bounds the DMA phase.
    let keep = 1.0 - avg / NEURON_DMA_MIN_BYTES;
    let overhead = |r: &super::engines::DmaRow| {
        (r.busy_ns - (r.bytes.unwrap_or(0) as f64 / engine_bw * 1e9) as i64).max(0)
    };
    let worst = e.dma_engines.iter().max_by_key(|r| overhead(r));
    let estimate = worst.map_or(0, |r| (overhead(r) as f64 * keep) as i64);
    // Faster DMA saves only what the compute engines waited for it.
    let waited = e
        .engines
        .iter()
        .map(|g| g.semaphore_ns + g.dma_wait_ns.unwrap_or(0))
        .max()
        .unwrap_or(0);
    let small =
        |k: usize| p.is_some_and(|p| (p.dma.transfer_bytes[k] as f64) < NEURON_DMA_MIN_BYTES);
    let (slices, slice_count) = packet_slices(cx, &small);
    let mut numbers = vec![
        ("DMA packets".into(), all.packets.to_string()),
        ("bytes".into(), crate::numbers::fmt_si(bytes as f64)),
        ("average packet".into(), format!("{avg:.0} B")),
        ("packets under 4 KiB".into(), slice_count.to_string()),
        (
            "DMA engine bandwidth".into(),
            format!(
                "{}B/s ({} engines)",
                crate::numbers::fmt_si(engine_bw),
                engines_per_core
            ),
        ),
    ];
    if let Some(r) = worst {
        numbers.push((
            format!("{}: busy beyond its bytes", r.name),
            format!("{} of {}", us(overhead(r)), us(r.busy_ns)),
        ));
    }
    numbers.push((
        "longest compute-engine wait (semaphore + DMA)".into(),
        us(waited),
    ));
    if let Some(p) = p {
        if let (Some(b), Some(n)) = (
            p.summary("dma_transfer_total_bytes"),
            p.summary("dma_transfer_count"),
        ) {
            if n > 0.0 {
                numbers.push((
                    "the profile's Summary average_dma_size".into(),
                    format!("{:.0} B", b / n),
                ));
            }
        }
    }
    let ranges = first_range(cx, &slices);
    (
        vec![cx.finding(
            "neuron_dma_size",
            "dma".into(),
            format!(
                "DMA packets average {avg:.0} B, under the 4 KiB that saturates HBM bandwidth"
            ),
            (
                estimate.min(waited),
                format!(
                    "the busiest DMA engine's per-packet time × (1 − average / 4 KiB) = {}, bounded by the longest compute-engine wait ({})",
                    us(estimate),
                    us(waited)
                ),
            ),
            Evidence {
                numbers,
                ops: e.dma_queues.iter().map(|q| q.name.clone()).collect(),
                slices,
                slice_count,
                ranges,
            },
            "move more bytes per transfer: ≥ 4 KiB contiguous per partition (tile the free dimension so each partition's row is long; copy whole tiles, not rows or columns; lay tensors out in HBM so a tile is contiguous)",
        )],
        String::new(),
    )
}

/// One engine carries what its peers could share: among the core's DMA
/// engines, or among the elementwise compute engines.
fn engine_imbalance(cx: &Cx, e: &super::engines::EngineReport) -> (Vec<Finding>, String) {
    let window = (e.window_ns.1 - e.window_ns.0).max(0);
    let mut found = Vec::new();
    let mut seen = Vec::new();
    // DMA engines: the core's engines that moved nothing count as idle.
    let p = cx.t.device_profile.as_deref();
    if !e.dma_engines.is_empty() {
        let n = dma_engines_per_core(cx, e);
        let mut busy: Vec<i64> = e.dma_engines.iter().map(|r| r.busy_ns).collect();
        busy.resize(n, 0);
        let busiest = e
            .dma_engines
            .iter()
            .max_by_key(|r| r.busy_ns)
            .expect("non-empty");
        let med = median(&busy);
        let mean = busy.iter().sum::<i64>() / n.max(1) as i64;
        let used = e.dma_engines.iter().filter(|r| r.packets > 0).count();
        if busiest.busy_ns as f64 >= NEURON_IMBALANCE_FACTOR * med as f64
            && busiest.busy_ns as f64 >= NEURON_DMA_IMBALANCE_BUSY_SHARE * window as f64
            && busiest.busy_ns > 0
        {
            let index: Option<i64> = busiest.name.rsplit(' ').next().and_then(|x| x.parse().ok());
            let on = |k: usize| p.is_some_and(|p| Some(p.dma.engine_idx[k]) == index);
            let (slices, slice_count) = packet_slices(cx, &on);
            let ranges = first_range(cx, &slices);
            found.push(cx.finding(
                "neuron_engine_imbalance",
                "dma".into(),
                format!(
                    "{} carries the DMA: busy {}, the core's median DMA engine {} ({} of {} engines used)",
                    busiest.name,
                    us(busiest.busy_ns),
                    us(med),
                    used,
                    n
                ),
                (
                    (busiest.busy_ns - mean).clamp(0, window),
                    "the busiest DMA engine's time beyond the mean of the core's engines (the transfers spread evenly)".into(),
                ),
                Evidence {
                    numbers: vec![
                        ("busiest".into(), format!("{} {}", busiest.name, us(busiest.busy_ns))),
                        ("median of the core's DMA engines".into(), us(med)),
                        ("mean".into(), us(mean)),
                        ("engines used".into(), format!("{used} of {n}")),
                        ("execution window".into(), us(window)),
                    ],
                    ops: e.dma_queues.iter().map(|q| q.name.clone()).collect(),
                    slices,
                    slice_count,
                    ranges,
                },
                "spread transfers over all the core's DMA engines: split each transfer along partitions so every engine carries a share, and issue independent loads on different queues",
            ));
        } else {
            seen.push(format!(
                "busiest DMA engine {} against a median of {}",
                us(busiest.busy_ns),
                us(med)
            ));
        }
    }
    // Elementwise engines: work the compiler (or a kernel) put on one of
    // them could run on another; the Tensor engine does not share it.
    let elementwise = ["Vector", "Scalar", "GpSimd"];
    let ew: Vec<(&str, i64)> = elementwise
        .iter()
        .map(|&n| (n, engine_row(e, n).map_or(0, |g| g.active_ns)))
        .collect();
    let tensor = engine_row(e, "tensor").map_or(0, |g| g.active_ns);
    let &(top, top_ns) = ew.iter().max_by_key(|x| x.1).expect("three engines");
    let others: Vec<i64> = ew.iter().filter(|x| x.0 != top).map(|x| x.1).collect();
    let med = median(&others);
    if top_ns > tensor && top_ns > 0 && top_ns as f64 >= NEURON_IMBALANCE_FACTOR * med as f64 {
        let row = engine_row(e, top);
        let name = row.map_or(top.to_string(), |g| g.engine.clone());
        let mean = ew.iter().map(|x| x.1).sum::<i64>() / ew.len() as i64;
        let (slices, slice_count) = engine_slices(cx, &name);
        let ranges = first_range(cx, &slices);
        let mut numbers: Vec<(String, String)> = ew
            .iter()
            .map(|(n, a)| (format!("{n} active"), us(*a)))
            .collect();
        numbers.push(("Tensor active".into(), us(tensor)));
        if let Some(g) = row {
            numbers.push((
                format!("{name}'s opcodes"),
                g.opcodes
                    .iter()
                    .take(4)
                    .map(|o| format!("{} ×{} {}", o.opcode, o.count, us(o.instruction_ns)))
                    .collect::<Vec<_>>()
                    .join(", "),
            ));
        }
        found.push(cx.finding(
            "neuron_engine_imbalance",
            format!("compute:{name}"),
            format!(
                "The {name} engine carries the elementwise work: active {}, more than the Tensor engine ({}), the other elementwise engines' median {}",
                us(top_ns),
                us(tensor),
                us(med)
            ),
            (
                (top_ns - mean).clamp(0, window),
                "its active time beyond the mean of the three elementwise engines (the work spread evenly)".into(),
            ),
            Evidence {
                numbers,
                ops: row.map(|g| g.opcodes.iter().take(4).map(|o| o.opcode.clone()).collect()).unwrap_or_default(),
                slices,
                slice_count,
                ranges,
            },
            "move part of the elementwise work to the idle engines: PSUM→SBUF copies and activations (scale, bias, exp, rsqrt) to the Scalar engine, iota / masks / gathers to GpSimd; in NKI pick the engine per instruction",
        ));
    } else {
        seen.push(format!(
            "busiest elementwise engine {} {} (Tensor {}, others' median {})",
            top,
            us(top_ns),
            us(tensor),
            us(med)
        ));
    }
    (found, seen.join("; "))
}

// ----------------------------------------------------------- many ranks

/// A rank is a persistent straggler when it is the last to arrive in at
/// least this share of the steps (and in two of them at least).
pub const STRAGGLER_STEP_SHARE: f64 = 0.5;

/// The findings of a distributed run (the ranks report): a rank that the
/// others wait for in most steps. A single trace cannot show this; its
/// insights report says so under the `straggler_rank` rule.
pub fn ranks_findings(r: &super::ranks::RanksReport) -> (Vec<Finding>, String) {
    if r.ranks.len() < 2 {
        return (Vec::new(), "one rank: nothing to wait for".into());
    }
    let by_collectives: Vec<&super::ranks::StepStraggler> = r
        .stragglers
        .iter()
        .filter(|s| s.by == "collectives" && s.others_waited_ns > 0)
        .collect();
    let steps = r.stragglers.len();
    let mut ranks: Vec<i64> = by_collectives.iter().map(|s| s.rank).collect();
    ranks.sort_unstable();
    ranks.dedup();
    let mut out = Vec::new();
    let mut seen = Vec::new();
    for rank in ranks {
        let mine: Vec<&&super::ranks::StepStraggler> =
            by_collectives.iter().filter(|s| s.rank == rank).collect();
        seen.push(format!("rank {rank} in {} of {steps}", mine.len()));
        if mine.len() < 2 || (mine.len() as f64) < STRAGGLER_STEP_SHARE * steps as f64 {
            continue;
        }
        let waited: i64 = mine.iter().map(|s| s.others_waited_ns).sum();
        let wall: i64 = r
            .stragglers
            .iter()
            .map(|s| s.wall_max_ns)
            .sum::<i64>()
            .max(1);
        let severity = Severity::of(waited, wall);
        let rule = RULES
            .iter()
            .find(|r| r.id == "straggler_rank")
            .expect("a listed rule");
        out.push(Finding {
            rule: rule.id.into(),
            title: format!(
                "Rank {rank} is the straggler in {} of {steps} steps: the others wait {} for it",
                mine.len(),
                us(waited)
            ),
            severity,
            gain_ns: waited,
            gain_basis: "the time the other ranks waited for it at collectives in those steps (mean over them, summed): what they would not wait were it as fast as they are".into(),
            condition: rule.condition.into(),
            evidence: Evidence {
                numbers: vec![
                    ("steps as straggler".into(), format!("{} of {steps}", mine.len())),
                    ("steps".into(), mine.iter().map(|s| s.step.to_string()).collect::<Vec<_>>().join(", ")),
                    ("others waited".into(), us(waited)),
                    ("collectives it arrived last at".into(), mine.iter().map(|s| s.collectives as u64).sum::<u64>().to_string()),
                    ("step wall, fastest – slowest rank (median step)".into(), {
                        let mut w: Vec<(i64, i64)> = mine.iter().map(|s| (s.wall_min_ns, s.wall_max_ns)).collect();
                        w.sort_unstable();
                        let (a, b) = w[w.len() / 2];
                        format!("{} – {}", us(a), us(b))
                    }),
                ],
                ops: vec![format!("rank {rank}")],
                slices: Vec::new(),
                slice_count: 0,
                ranges: Vec::new(),
            },
            action: "open that rank's steps beside another rank's (the ranks view's step row opens the stacked timeline): look for what it does before the collective that the others do not — data loading, a host sync, uneven batch or sequence lengths, a slower device (thermal throttling, another job)".into(),
            key: format!("straggler_rank:{rank}"),
        });
    }
    let why = if out.is_empty() {
        if seen.is_empty() {
            "no step with a straggler at collectives".into()
        } else {
            format!(
                "no rank last in half the steps or more: {}",
                seen.join(", ")
            )
        }
    } else {
        String::new()
    };
    (out, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_parse_and_broadcast_like_numpy() {
        assert_eq!(
            parse_dims("[[64, 4096], [], [4096]]"),
            Some(vec![vec![64, 4096], vec![], vec![4096]])
        );
        assert_eq!(parse_dims("[]"), Some(vec![]));
        assert_eq!(parse_dims(""), None);
        assert_eq!(broadcast(&[64, 4096], &[64, 1]), Some(vec![64, 4096]));
        assert_eq!(broadcast(&[64, 4096], &[4096]), Some(vec![64, 4096]));
        assert_eq!(broadcast(&[64, 4096], &[64]), None);
    }
}

//! Communication: collectives not hidden behind compute, collectives far
//! slower than their kind's median, and ranks the others wait for.

use crate::analysis::ranks::{RanksReport, StepStraggler};
use rustc_hash::FxHashMap;

use crate::analysis::frame::{exact_kernel_type, KernelType};
use crate::analysis::intervals::Interval;
use crate::analysis::warmup::median;
use crate::analysis::WhySlow;

use super::cx::{pct, us, Cx};
use super::report::{Evidence, Finding, Severity};
use super::rules::{
    COLLECTIVE_MIN_COUNT, COLLECTIVE_OUTLIER_FACTOR, COLLECTIVE_OUTLIER_MAX_SHARE_INV,
    EXPOSED_COMM_SHARE, MAX_EVIDENCE, RULES,
};

pub(super) fn exposed_communication(cx: &Cx, w: &WhySlow) -> (Vec<Finding>, String) {
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

pub(super) fn collective_outliers(cx: &Cx) -> (Vec<Finding>, String) {
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

/// A rank is a persistent straggler when it is the last to arrive in at
/// least this share of the steps (and in two of them at least).
pub const STRAGGLER_STEP_SHARE: f64 = 0.5;

/// The findings of a distributed run (the ranks report): a rank that the
/// others wait for in most steps. A single trace cannot show this; its
/// insights report says so under the `straggler_rank` rule.
pub fn ranks_findings(r: &RanksReport) -> (Vec<Finding>, String) {
    if r.ranks.len() < 2 {
        return (Vec::new(), "one rank: nothing to wait for".into());
    }
    let by_collectives: Vec<&StepStraggler> = r
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
        let mine: Vec<&&StepStraggler> = by_collectives.iter().filter(|s| s.rank == rank).collect();
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
            bytes: None,
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

//! Automatic regions: the parts of a trace worth comparing with each other,
//! found without annotations added for the purpose — each `ProfilerStep`,
//! each `record_function` label, each compiled region, the spans between
//! collectives, and module layers from Python stacks — each group with its
//! duration distribution and outliers marked.
//!
//! Rules:
//! - *Steps*: `ProfilerStep#N` (outermost per thread), one group.
//! - *Labels*: every other `user_annotation` on a host thread, grouped by
//!   name (one nested in another of the same name is part of it); the
//!   collectives' own labels (`nccl:*`, `gloo:*`) are left to the
//!   collectives.
//! - *Compiled*: host slices named `Torch-Compiled Region: …`,
//!   `CompiledFunction…` or `## Call CompiledFxGraph … ##`, by name.
//! - *Between collectives*: on each thread that issues collectives
//!   (`c10d::*` ops and `record_param_comms`, outermost; the `nccl:*` /
//!   `gloo:*` labels only in a trace without those calls, since a backend
//!   may record them on its own thread around the work), the span from one collective's end to the next one's
//!   start; with steps, grouped by position in the step (`between
//!   collectives 3→4`), so each group compares the same span across
//!   steps; spans crossing a step boundary are left out; with several
//!   issuing threads, one group per thread.
//! - *Modules*: `python_function` slices named `nn.Module: Name_K` (what
//!   `with_stack=True` records for eager modules), one group per module
//!   instance (`Block_1`), in the order first seen.
//! - *Outliers*: with at least 4 occurrences, those longer than
//!   Q3 + 1.5 × IQR (Tukey's fence; quartiles by linear interpolation, as
//!   NumPy's default).

use serde::{Deserialize, Serialize};

use crate::category::Category;
use crate::model::{Trace, NO_SLICE};

use super::scope::profiler_steps;
use super::warmup::median;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegionKind {
    Step,
    Label,
    Compiled,
    BetweenCollectives,
    Module,
}

impl RegionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RegionKind::Step => "step",
            RegionKind::Label => "label",
            RegionKind::Compiled => "compiled",
            RegionKind::BetweenCollectives => "between collectives",
            RegionKind::Module => "module",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegionOccurrence {
    pub start_ns: i64,
    pub end_ns: i64,
    /// The slice that makes it (`NO_SLICE` for a span between collectives).
    pub slice: u32,
    pub outlier: bool,
}

impl RegionOccurrence {
    pub fn dur_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RegionGroup {
    pub kind: RegionKind,
    pub name: String,
    /// In start order.
    pub occurrences: Vec<RegionOccurrence>,
    pub median_ns: i64,
    pub min_ns: i64,
    pub max_ns: i64,
    /// Tukey's upper fence (`None` with fewer than 4 occurrences).
    pub fence_ns: Option<i64>,
    pub outliers: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RegionsReport {
    /// Steps, labels, compiled regions, between collectives, modules; by
    /// first start within a kind.
    pub groups: Vec<RegionGroup>,
}

/// Occurrences needed before outliers are marked.
pub const MIN_FOR_OUTLIERS: usize = 4;

/// The `q`-quantile of sorted values, by linear interpolation (NumPy's
/// default `linear` method).
fn quantile(sorted: &[i64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    let frac = pos - lo as f64;
    sorted[lo] as f64 + (sorted[hi] - sorted[lo]) as f64 * frac
}

fn group(kind: RegionKind, name: String, mut occ: Vec<RegionOccurrence>) -> RegionGroup {
    crate::sort::by_key(&mut occ, &|o| (o.start_ns, o.end_ns));
    let durs: Vec<i64> = occ.iter().map(|o| o.dur_ns()).collect();
    let mut sorted = durs.clone();
    sorted.sort_unstable();
    let fence = (occ.len() >= MIN_FOR_OUTLIERS).then(|| {
        let (q1, q3) = (quantile(&sorted, 0.25), quantile(&sorted, 0.75));
        (q3 + 1.5 * (q3 - q1)) as i64
    });
    let mut outliers = 0;
    if let Some(f) = fence {
        for o in &mut occ {
            o.outlier = o.dur_ns() > f;
            outliers += usize::from(o.outlier);
        }
    }
    RegionGroup {
        kind,
        name,
        median_ns: median(&durs),
        min_ns: sorted.first().copied().unwrap_or(0),
        max_ns: sorted.last().copied().unwrap_or(0),
        fence_ns: fence,
        outliers,
        occurrences: occ,
    }
}

fn is_compiled(name: &str) -> bool {
    name.starts_with("Torch-Compiled Region")
        || name.starts_with("CompiledFunction")
        || name.starts_with("## Call CompiledFxGraph")
}

/// A collective issued on the host: a `c10d::*` op or `record_param_comms`.
fn is_collective_op(t: &Trace, i: usize) -> bool {
    let name = t.slice_name(i);
    t.slices.category[i] == Category::CpuOp
        && (name.starts_with("c10d::") || name == "record_param_comms")
}

/// A collective's label (`nccl:*`, `gloo:*`): the backend may record it on
/// its own thread, around the work rather than the call.
fn is_collective_label(t: &Trace, i: usize) -> bool {
    let name = t.slice_name(i);
    t.slices.category[i] == Category::UserAnnotation
        && (name.starts_with("nccl:") || name.starts_with("gloo:"))
}

/// Whether an ancestor of `i` on its thread has the same name (then `i` is
/// part of it) or is itself a collective.
fn nested_in(t: &Trace, i: usize, same: &dyn Fn(usize) -> bool) -> bool {
    let mut k = t.slices.parent[i];
    while k != NO_SLICE {
        if same(k as usize) {
            return true;
        }
        k = t.slices.parent[k as usize];
    }
    false
}

/// The trace's automatic regions.
pub fn regions(t: &Trace) -> RegionsReport {
    let s = &t.slices;
    let occ = |i: usize| RegionOccurrence {
        start_ns: s.start_ns[i],
        end_ns: s.end_ns(i),
        slice: i as u32,
        outlier: false,
    };
    let mut groups = Vec::new();
    let steps = profiler_steps(t);
    if !steps.is_empty() {
        groups.push(group(
            RegionKind::Step,
            "ProfilerStep".into(),
            steps
                .iter()
                .map(|o| RegionOccurrence {
                    start_ns: o.start_ns,
                    end_ns: o.end_ns,
                    slice: o.slice,
                    outlier: false,
                })
                .collect(),
        ));
    }
    // Labels, compiled regions and modules by name, in order first seen.
    let mut by_name: Vec<(RegionKind, String, Vec<RegionOccurrence>)> = Vec::new();
    let mut index: rustc_hash::FxHashMap<(RegionKind, u32), usize> = Default::default();
    // Collectives per thread, in start order.
    let mut collectives: rustc_hash::FxHashMap<u32, Vec<usize>> = Default::default();
    let mut order: Vec<usize> = (0..s.len()).filter(|&i| t.on_host(i)).collect();
    crate::sort::by_key(&mut order, &|&i| {
        (s.start_ns[i], std::cmp::Reverse(s.dur_ns[i]))
    });
    // The calls when the trace has them, else the labels.
    let by_op = order.iter().any(|&i| is_collective_op(t, i));
    let is_collective = |i: usize| {
        if by_op {
            is_collective_op(t, i)
        } else {
            is_collective_label(t, i)
        }
    };
    for i in order {
        let name = t.slice_name(i);
        if is_collective_label(t, i) {
            continue;
        }
        if is_collective(i) {
            if !nested_in(t, i, &is_collective) {
                collectives.entry(s.track[i].0).or_default().push(i);
            }
            continue;
        }
        let kind = match s.category[i] {
            Category::UserAnnotation if name.starts_with("ProfilerStep#") => continue,
            Category::UserAnnotation => RegionKind::Label,
            Category::PythonFunction if name.starts_with("nn.Module: ") => RegionKind::Module,
            _ if is_compiled(name) => RegionKind::Compiled,
            _ => continue,
        };
        if nested_in(t, i, &|k| s.name[k] == s.name[i]) {
            continue;
        }
        let key = (kind, s.name[i].0);
        let k = *index.entry(key).or_insert_with(|| {
            let shown = match kind {
                RegionKind::Module => name.trim_start_matches("nn.Module: ").to_string(),
                _ => name.to_string(),
            };
            by_name.push((kind, shown, Vec::new()));
            by_name.len() - 1
        });
        by_name[k].2.push(occ(i));
    }
    // Between collectives, by position in the step.
    let mut between: Vec<(String, Vec<RegionOccurrence>)> = Vec::new();
    let mut tracks: Vec<&u32> = collectives.keys().collect();
    tracks.sort_unstable();
    let several = tracks.len() > 1;
    let step_windows: Vec<super::intervals::Interval> =
        steps.iter().map(|o| (o.start_ns, o.end_ns)).collect();
    for tr in tracks {
        // Several issuing threads (DDP's backward hooks beside the main
        // one): each thread's spans are their own groups.
        let on = if several {
            format!(" ({})", t.track_label(*tr as usize))
        } else {
            String::new()
        };
        let list = &collectives[tr];
        let step_of = |ns: i64| super::intervals::window_of(&step_windows, ns);
        let mut pos = 0usize;
        let mut last_step = None;
        for w in list.windows(2) {
            let (a, b) = (w[0], w[1]);
            let (from, to) = (s.end_ns(a), s.start_ns[b]);
            let step = step_of(s.start_ns[a]);
            if step != last_step {
                pos = 0;
                last_step = step;
            }
            pos += 1;
            if to <= from
                || (!steps.is_empty() && (step.is_none() || step_of(s.start_ns[b]) != step))
            {
                continue;
            }
            let name = if steps.is_empty() {
                format!("between collectives{on}")
            } else {
                format!("between collectives {}→{}{on}", pos, pos + 1)
            };
            let o = RegionOccurrence {
                start_ns: from,
                end_ns: to,
                slice: NO_SLICE,
                outlier: false,
            };
            match between.iter_mut().find(|(n, _)| *n == name) {
                Some((_, v)) => v.push(o),
                None => between.push((name, vec![o])),
            }
        }
    }
    for kind in [RegionKind::Label, RegionKind::Compiled] {
        for (k, name, occ) in &by_name {
            if *k == kind {
                groups.push(group(kind, name.clone(), occ.clone()));
            }
        }
    }
    for (name, occ) in between {
        groups.push(group(RegionKind::BetweenCollectives, name, occ));
    }
    for (k, name, occ) in by_name {
        if k == RegionKind::Module {
            groups.push(group(k, name, occ));
        }
    }
    RegionsReport { groups }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_interpolate_as_numpy_does_and_the_fence_marks_outliers() {
        let v = [10, 11, 12, 13, 100];
        assert_eq!(quantile(&v, 0.25), 11.0);
        assert_eq!(quantile(&v, 0.75), 13.0);
        assert_eq!(quantile(&[1, 2, 3, 4], 0.25), 1.75);
        let g = group(
            RegionKind::Step,
            "s".into(),
            v.iter()
                .enumerate()
                .map(|(k, &d)| RegionOccurrence {
                    start_ns: 1000 * k as i64,
                    end_ns: 1000 * k as i64 + d,
                    slice: NO_SLICE,
                    outlier: false,
                })
                .collect(),
        );
        assert_eq!(g.fence_ns, Some(16));
        assert_eq!(g.outliers, 1);
        assert!(g.occurrences[4].outlier);
        assert_eq!(g.median_ns, 12);
    }
}

//! Which part of a trace an analysis looks at.
//!
//! A scope resolves to one or more occurrences — time windows, each with
//! the host slice that defines it where there is one:
//! - [`Scope::Whole`]: one window, the trace's span;
//! - [`Scope::Region`]: every host slice with that name (a
//!   `record_function` label, an op, `ProfilerStep#3`); one nested in
//!   another of the same name on its thread is part of the outer one;
//! - [`Scope::Step`]: `ProfilerStep#N`, the step the profiler's schedule
//!   numbered N;
//! - [`Scope::Range`]: one window, `[start_ns, end_ns)` on the trace's clock.
//!
//! What belongs to a window is each analysis's rule (the comparison takes
//! the host events nested in the region's slice and what they launched;
//! time breakdowns clip intervals to the window).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::category::Category;
use crate::model::{StrId, Trace, NO_SLICE};

/// Which part of a trace an analysis looks at.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Scope {
    /// The whole trace.
    #[default]
    Whole,
    /// Every occurrence of a host slice with this name.
    Region { name: String },
    /// `ProfilerStep#N`.
    Step { n: u64 },
    /// Host events starting inside `[start_ns, end_ns)`.
    Range { start_ns: i64, end_ns: i64 },
}

/// One window of a scope: its time range and the host slice that defines
/// it (`NO_SLICE` for the whole trace and ranges).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Occurrence {
    pub slice: u32,
    pub start_ns: i64,
    pub end_ns: i64,
}

impl Occurrence {
    pub fn dur_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }
}

/// A scope that names nothing in the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeError(pub String);

impl std::fmt::Display for ScopeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ScopeError {}

impl Scope {
    /// A region by name (`ProfilerStep#N` is a step).
    pub fn named(name: &str) -> Scope {
        match name
            .strip_prefix("ProfilerStep#")
            .and_then(|n| n.parse().ok())
        {
            Some(n) => Scope::Step { n },
            None => Scope::Region { name: name.into() },
        }
    }

    pub fn label(&self) -> String {
        match self {
            Scope::Whole => "whole trace".into(),
            Scope::Region { name } => name.clone(),
            Scope::Step { n } => format!("ProfilerStep#{n}"),
            Scope::Range { start_ns, end_ns } => {
                format!("{:.3} ms range", (end_ns - start_ns) as f64 / 1e6)
            }
        }
    }

    /// The scope's windows in start order.
    pub fn occurrences(&self, t: &Trace) -> Result<Vec<Occurrence>, ScopeError> {
        let window = |start_ns, end_ns| Occurrence {
            slice: NO_SLICE,
            start_ns,
            end_ns,
        };
        match self {
            Scope::Whole => {
                let (a, b) = t.time_span_ns().unwrap_or((0, 0));
                Ok(vec![window(a, b)])
            }
            Scope::Range { start_ns, end_ns } => Ok(vec![window(*start_ns, *end_ns)]),
            Scope::Region { name } => named_occurrences(t, name),
            Scope::Step { n } => named_occurrences(t, &format!("ProfilerStep#{n}")),
        }
    }

    /// The windows an event must start in to count (`[start, end)`), or
    /// `None` for the whole trace (every event counts).
    pub fn windows(&self, t: &Trace) -> Result<Option<Vec<(i64, i64)>>, ScopeError> {
        Ok(match self {
            Scope::Whole => None,
            _ => Some(
                self.occurrences(t)?
                    .iter()
                    .map(|o| (o.start_ns, o.end_ns))
                    .collect(),
            ),
        })
    }
}

/// Does an event starting at `ts` count in these windows (see
/// [`Scope::windows`])?
pub fn starts_inside(windows: &Option<Vec<(i64, i64)>>, ts: i64) -> bool {
    windows
        .as_ref()
        .is_none_or(|w| w.iter().any(|&(a, b)| ts >= a && ts < b))
}

/// Every host slice called `name`, less those nested in another of the
/// same name on their thread.
fn named_occurrences(t: &Trace, name: &str) -> Result<Vec<Occurrence>, ScopeError> {
    let id = t.strings.lookup(name);
    let kept = outermost(t, |n| Some(n) == id);
    if kept.is_empty() {
        let known: Vec<String> = region_names(t)
            .into_iter()
            .take(8)
            .map(|(n, c)| format!("{n} ({c}×)"))
            .collect();
        return Err(ScopeError(format!(
            "no event named “{name}” in this trace{}",
            if known.is_empty() {
                String::new()
            } else {
                format!("; its annotations: {}", known.join(", "))
            }
        )));
    }
    Ok(kept)
}

/// Every `ProfilerStep#N` occurrence in start order, in one pass over the
/// slices (a step nested in another on its thread is part of it).
pub fn profiler_steps(t: &Trace) -> Vec<Occurrence> {
    let is_step: Vec<bool> = (0..t.strings.len())
        .map(|k| t.str(StrId(k as u32)).starts_with("ProfilerStep#"))
        .collect();
    outermost(t, |n| is_step.get(n.0 as usize).copied().unwrap_or(false))
}

/// Without `ProfilerStep#N`, the steps a user numbered by hand: the
/// annotations (`record_function`) named one stem and a number —
/// `step 0`, `iter_1`, `batch-2` — the stem with at least three numbers
/// and the most time, outermost first. `None` when no stem has three.
pub fn numbered_annotations(t: &Trace) -> Option<(String, Vec<Occurrence>)> {
    let mut stems: Vec<(String, Vec<u64>, i64)> = Vec::new();
    let mut stem_of: Vec<Option<usize>> = vec![None; t.strings.len()];
    for i in 0..t.slices.len() {
        if t.slices.category[i] != crate::category::Category::UserAnnotation || !t.on_host(i) {
            continue;
        }
        let name = t.slice_name(i);
        let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
        let number = &name[stem.len()..];
        if stem.is_empty()
            || number.is_empty()
            || number.len() > 18
            || stem.starts_with("ProfilerStep#")
        {
            continue;
        }
        let Ok(n) = number.parse::<u64>() else {
            continue;
        };
        let k = match stems.iter().position(|x| x.0 == stem) {
            Some(k) => k,
            None => {
                stems.push((stem.to_string(), Vec::new(), 0));
                stems.len() - 1
            }
        };
        stems[k].1.push(n);
        stems[k].2 += t.slices.dur_ns[i];
        stem_of[t.slices.name[i].0 as usize] = Some(k);
    }
    let best = (0..stems.len())
        .filter(|&k| {
            let mut n = stems[k].1.clone();
            n.sort_unstable();
            n.dedup();
            n.len() >= 3
        })
        .max_by_key(|&k| (stems[k].2, std::cmp::Reverse(k)))?;
    let occ = outermost(t, |n| {
        stem_of.get(n.0 as usize).copied().flatten() == Some(best)
    });
    Some((format!("{}N", stems[best].0), occ))
}

/// A `ProfilerStep#N` with its N.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NumberedStep {
    pub n: u64,
    pub start_ns: i64,
    pub end_ns: i64,
}

/// Every `ProfilerStep#N` with its number, in start order (a step whose
/// name carries no number is left out).
pub fn numbered_steps(t: &Trace) -> Vec<NumberedStep> {
    profiler_steps(t)
        .iter()
        .filter_map(|o| {
            let n = t
                .slice_name(o.slice as usize)
                .strip_prefix("ProfilerStep#")?
                .parse()
                .ok()?;
            Some(NumberedStep {
                n,
                start_ns: o.start_ns,
                end_ns: o.end_ns,
            })
        })
        .collect()
}

/// The number of the step whose window holds `ns` (`steps` in start order).
pub fn step_at(steps: &[NumberedStep], ns: i64) -> Option<u64> {
    let k = steps.partition_point(|s| s.start_ns <= ns);
    (k > 0 && ns < steps[k - 1].end_ns).then(|| steps[k - 1].n)
}

/// The host slices whose name `wanted` accepts, in start order, less those
/// nested in an earlier one on their thread (they are part of it).
fn outermost(t: &Trace, wanted: impl Fn(StrId) -> bool) -> Vec<Occurrence> {
    let mut occ: Vec<Occurrence> = (0..t.slices.len())
        .filter(|&s| wanted(t.slices.name[s]) && t.on_host(s))
        .map(|s| Occurrence {
            slice: s as u32,
            start_ns: t.slices.start_ns[s],
            end_ns: t.slices.end_ns(s),
        })
        .collect();
    crate::sort::by_key(&mut occ, &|o| (o.start_ns, o.slice));
    let mut kept: Vec<Occurrence> = Vec::new();
    // Those that may still contain a later one (sorted by start, a kept
    // occurrence ending before `o` starts cannot).
    let mut open: Vec<Occurrence> = Vec::new();
    for o in occ {
        let track = t.slices.track[o.slice as usize];
        open.retain(|k| k.end_ns >= o.start_ns);
        let inside = open
            .iter()
            .any(|k| t.slices.track[k.slice as usize] == track && o.end_ns <= k.end_ns);
        if !inside {
            kept.push(o);
            open.push(o);
        }
    }
    kept
}

/// Names of host slices usable as regions, with how often each occurs:
/// annotations (including `ProfilerStep#N`), most frequent first.
pub fn region_names(t: &Trace) -> Vec<(String, u64)> {
    let mut counts: HashMap<u32, u64> = HashMap::new();
    for s in 0..t.slices.len() {
        if t.slices.category[s] == Category::UserAnnotation && t.on_host(s) {
            *counts.entry(t.slices.name[s].0).or_default() += 1;
        }
    }
    let mut out: Vec<(String, u64)> = counts
        .into_iter()
        .map(|(id, n)| (t.str(StrId(id)).to_string(), n))
        .collect();
    crate::sort::by(&mut out, &|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{import_bytes, ImportOptions};

    fn trace() -> Trace {
        let json = br#"{"traceEvents":[
          {"ph":"X","cat":"user_annotation","name":"ProfilerStep#4","pid":1,"tid":1,"ts":0,"dur":100},
          {"ph":"X","cat":"user_annotation","name":"fwd","pid":1,"tid":1,"ts":10,"dur":30},
          {"ph":"X","cat":"user_annotation","name":"fwd","pid":1,"tid":1,"ts":12,"dur":5},
          {"ph":"X","cat":"user_annotation","name":"ProfilerStep#5","pid":1,"tid":1,"ts":100,"dur":80},
          {"ph":"X","cat":"user_annotation","name":"fwd","pid":1,"tid":1,"ts":110,"dur":20}
        ]}"#;
        import_bytes(json, ImportOptions::default()).unwrap()
    }

    #[test]
    fn a_region_is_every_outermost_occurrence_in_start_order() {
        let t = trace();
        let occ = Scope::named("fwd").occurrences(&t).unwrap();
        let spans: Vec<(i64, i64)> = occ.iter().map(|o| (o.start_ns, o.end_ns)).collect();
        assert_eq!(spans, [(10_000, 40_000), (110_000, 130_000)]);
    }

    #[test]
    fn a_step_is_its_profiler_step() {
        let t = trace();
        assert_eq!(Scope::named("ProfilerStep#5"), Scope::Step { n: 5 });
        let occ = Scope::Step { n: 5 }.occurrences(&t).unwrap();
        assert_eq!((occ.len(), occ[0].dur_ns()), (1, 80_000));
        let e = Scope::Step { n: 9 }.occurrences(&t).unwrap_err();
        assert!(
            e.0.contains("ProfilerStep#9") && e.0.contains("fwd (3×)"),
            "{e}"
        );
    }

    #[test]
    fn scopes_cross_to_the_page_as_json() {
        for s in [
            Scope::Whole,
            Scope::named("fwd"),
            Scope::Step { n: 3 },
            Scope::Range {
                start_ns: 5,
                end_ns: 9,
            },
        ] {
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(serde_json::from_str::<Scope>(&json).unwrap(), s);
        }
    }
}

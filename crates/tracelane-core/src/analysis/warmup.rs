//! Warm-up: each step's (or each occurrence of a region's) duration, with
//! the warm-up occurrences flagged, so that medians — the comparison's
//! wall time among them — describe the steady state and say what they left
//! out.
//!
//! Rule ([`flag_warmup`]): with three or more occurrences in start order,
//! the leading ones that last more than 1.5× the median of the others
//! (all but the first) are warm-up; the run stops at the first one that
//! does not, and never covers half of them. Fewer than three: nothing is
//! flagged (there is no steady state to compare against). An occurrence
//! that ran `torch.compile` (a host event named `Torch-Compiled Region`,
//! `CompiledFunction`, or a frame of dynamo's `convert_frame` or of
//! `torch/_inductor`) says so as its reason.

use serde::{Deserialize, Serialize};

use crate::model::Trace;

use super::scope::{Scope, ScopeError};

/// Warm-up when longer than this many times the steady median.
pub const WARMUP_FACTOR: f64 = 1.5;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OccurrenceTime {
    pub label: String,
    pub start_ns: i64,
    pub dur_ns: i64,
    pub warmup: bool,
    /// Why it is flagged.
    pub reason: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WarmupReport {
    pub scope: String,
    pub occurrences: Vec<OccurrenceTime>,
    /// Median over the occurrences not flagged.
    pub median_ns: i64,
    /// Median over all of them.
    pub median_all_ns: i64,
    pub flagged: usize,
}

/// The lower median (the middle value; the mean of the two middle ones for
/// an even count).
pub fn median(v: &[i64]) -> i64 {
    if v.is_empty() {
        return 0;
    }
    let mut s = v.to_vec();
    s.sort_unstable();
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2
    }
}

/// Which occurrences (durations in start order) are warm-up (see the
/// module comment).
pub fn flag_warmup(durations: &[i64]) -> Vec<bool> {
    let n = durations.len();
    let mut flags = vec![false; n];
    if n < 3 {
        return flags;
    }
    let steady = median(&durations[1..]) as f64;
    for k in 0..(n - 1) / 2 {
        if (durations[k] as f64) > WARMUP_FACTOR * steady {
            flags[k] = true;
        } else {
            break;
        }
    }
    flags
}

/// Median of the occurrences not flagged (all of them when every one is).
pub fn steady_median(durations: &[i64], flags: &[bool]) -> i64 {
    let kept: Vec<i64> = durations
        .iter()
        .zip(flags)
        .filter(|(_, &f)| !f)
        .map(|(&d, _)| d)
        .collect();
    if kept.is_empty() {
        median(durations)
    } else {
        median(&kept)
    }
}

/// Compiled code or the compiler itself. Dynamo's other frames
/// (`eval_frame.py`, `decorators.py`) are not: every call of a function
/// `torch._dynamo.disable` wraps — the optimizers' `step` among them —
/// passes through them in a `with_stack` trace.
fn compiles(name: &str) -> bool {
    name.starts_with("Torch-Compiled Region")
        || name.contains("CompiledFunction")
        || name.contains("torch/_dynamo/convert_frame")
        || name.contains("torch/_inductor")
}

/// Per occurrence of `scope` (the whole trace: every `ProfilerStep#N`).
pub fn warmup(t: &Trace, scope: &Scope) -> Result<WarmupReport, ScopeError> {
    let mut label = scope.label();
    let occ = match scope {
        Scope::Whole => {
            let all = super::scope::profiler_steps(t);
            if !all.is_empty() {
                all
            } else if let Some((stem, numbered)) = super::scope::numbered_annotations(t) {
                label = format!("{stem} (numbered annotations, no ProfilerStep#N)");
                numbered
            } else {
                return Err(ScopeError(
                    "no ProfilerStep#N and no numbered annotations (step 0, step 1, …) in this trace: choose a region to see its occurrences"
                        .into(),
                ));
            }
        }
        s => s.occurrences(t)?,
    };
    let durs: Vec<i64> = occ.iter().map(|o| o.dur_ns()).collect();
    let flags = flag_warmup(&durs);
    let steady = steady_median(&durs, &flags);
    let s = &t.slices;
    let occurrences = occ
        .iter()
        .zip(&flags)
        .map(|(o, &warm)| {
            let label = if o.slice == crate::model::NO_SLICE {
                scope.label()
            } else {
                t.slice_name(o.slice as usize).to_string()
            };
            let reason = warm.then(|| {
                let compiled = (0..s.len()).any(|i| {
                    t.on_host(i)
                        && s.start_ns[i] >= o.start_ns
                        && s.start_ns[i] < o.end_ns
                        && compiles(t.slice_name(i))
                });
                let ratio = o.dur_ns() as f64 / steady.max(1) as f64;
                if compiled {
                    format!("compiles (torch.compile); {ratio:.1}× the steady median")
                } else {
                    format!("warm-up: {ratio:.1}× the steady median")
                }
            });
            OccurrenceTime {
                label,
                start_ns: o.start_ns,
                dur_ns: o.dur_ns(),
                warmup: warm,
                reason,
            }
        })
        .collect();
    Ok(WarmupReport {
        scope: label,
        occurrences,
        median_ns: steady,
        median_all_ns: median(&durs),
        flagged: flags.iter().filter(|&&f| f).count(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_outliers_are_warm_up_and_the_median_leaves_them_out() {
        let d = [90, 12, 10, 11, 10, 40];
        let f = flag_warmup(&d);
        assert_eq!(f, [true, false, false, false, false, false]);
        assert_eq!(steady_median(&d, &f), 11);
        // A slow step later on is not warm-up; two leading ones are.
        assert_eq!(
            flag_warmup(&[50, 30, 10, 10, 10, 10]),
            [true, true, false, false, false, false]
        );
        // Never half or more, never with fewer than three.
        assert_eq!(flag_warmup(&[50, 40, 10, 10]), [true, false, false, false]);
        assert_eq!(flag_warmup(&[50, 10]), [false, false]);
    }
}

//! Memory by PyTorch's categories (parameter, optimizer state, input,
//! temporary, activation, gradient, autograd detail), from a raw memory
//! timeline read beside the trace ([`crate::memory_timeline`]).
//!
//! The totals per category at a moment are PyTorch's own: the running sum
//! of the raw rows up to it, as `_memory_profiler.MemoryProfileTimeline.
//! _coalesce_timeline` sums them for `export_memory_timeline`'s plot
//! (preexisting rows first; a version increment moves bytes from the old
//! version's category to the new one's). Each CREATE / DESTROY row is
//! joined to the trace's `[memory]` record at the same epoch nanosecond
//! with the same bytes, which gives the record (and what is live at the
//! peak) its category; rows that join nothing are counted.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::memory_events::MemoryRecord;
use crate::memory_timeline::{Action, MemoryTimeline, CATEGORIES};

/// Bytes of one category at a moment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CategoryBytes {
    pub category: String,
    pub bytes: i64,
}

/// One device's memory by category.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryCategories {
    pub rows: u64,
    /// CREATE / DESTROY rows, and how many joined a `[memory]` record.
    pub creates: u64,
    pub creates_joined: u64,
    pub destroys: u64,
    pub destroys_joined: u64,
    /// Live before the profile (PREEXISTING rows).
    pub preexisting_bytes: i64,
    /// PyTorch's totals per category at the peak, in [`CATEGORIES`] order,
    /// the empty ones left out.
    pub at_peak: Vec<CategoryBytes>,
    /// The same at the moment asked for.
    pub at: Option<Vec<CategoryBytes>>,
    /// `(µs from the trace's start, bytes per category)` after each
    /// moment the timeline changes: the stacked curve.
    #[serde(skip)]
    pub series: Vec<(f64, [i64; 8])>,
}

/// A timeline joined to one device's records.
pub(crate) struct Joined<'a> {
    timeline: &'a MemoryTimeline,
    /// Record index → category of the CREATE row it joined.
    pub(crate) category_of: FxHashMap<usize, u8>,
    creates_joined: u64,
    destroys_joined: u64,
}

/// The timeline among `timelines` that joins most of `recs` (sorted by
/// time; `clock_offset_ns` puts them on the epoch clock), if any joins.
pub(crate) fn join<'a>(
    timelines: &'a [MemoryTimeline],
    recs: &[&MemoryRecord],
    clock_offset_ns: i64,
) -> Option<Joined<'a>> {
    timelines
        .iter()
        .map(|tl| join_one(tl, recs, clock_offset_ns))
        .filter(|j| j.creates_joined + j.destroys_joined > 0)
        .max_by_key(|j| j.creates_joined + j.destroys_joined)
}

fn join_one<'a>(timeline: &'a MemoryTimeline, recs: &[&MemoryRecord], offset: i64) -> Joined<'a> {
    // (epoch ns, signed bytes) → the records there, in order.
    let mut at: FxHashMap<(i64, i64), Vec<usize>> = FxHashMap::default();
    for (k, r) in recs.iter().enumerate().rev() {
        at.entry((r.ts_ns + offset, r.bytes)).or_default().push(k);
    }
    let mut j = Joined {
        timeline,
        category_of: FxHashMap::default(),
        creates_joined: 0,
        destroys_joined: 0,
    };
    for e in &timeline.entries {
        if !matches!(e.action, Action::Create | Action::Destroy) {
            continue;
        }
        let Some(k) = at.get_mut(&(e.t_ns, e.bytes)).and_then(|v| v.pop()) else {
            continue;
        };
        if e.action == Action::Create {
            j.category_of.insert(k, e.category);
            j.creates_joined += 1;
        } else {
            j.destroys_joined += 1;
        }
    }
    j
}

/// PyTorch's totals per category after every row at or before `epoch_ns`.
fn totals_at(timeline: &MemoryTimeline, epoch_ns: i64) -> [i64; 8] {
    let mut sums = [0i64; 8];
    for e in timeline.entries.iter().take_while(|e| e.t_ns <= epoch_ns) {
        sums[e.category as usize] += e.bytes;
    }
    sums
}

fn listed(sums: [i64; 8]) -> Vec<CategoryBytes> {
    CATEGORIES
        .iter()
        .zip(sums)
        .filter(|(_, b)| *b != 0)
        .map(|(c, bytes)| CategoryBytes {
            category: c.to_string(),
            bytes,
        })
        .collect()
}

impl Joined<'_> {
    /// Per category that ever holds bytes, its running sum as timeline
    /// steps on the trace's clock (preexisting rows at the first row's
    /// time).
    pub(crate) fn category_steps(
        &self,
        clock_offset_ns: i64,
    ) -> Vec<(&'static str, Vec<(i64, f64)>)> {
        let entries = &self.timeline.entries;
        let first = entries
            .iter()
            .map(|e| e.t_ns)
            .find(|&t| t >= 0)
            .unwrap_or(0);
        let mut out: Vec<(&'static str, Vec<(i64, f64)>)> =
            CATEGORIES.iter().map(|&c| (c, Vec::new())).collect();
        let mut sums = [0i64; 8];
        for e in entries {
            let c = e.category as usize;
            sums[c] += e.bytes;
            let ts = e.t_ns.max(first) - clock_offset_ns;
            let points = &mut out[c].1;
            match points.last_mut() {
                Some(p) if p.0 == ts => p.1 = sums[c] as f64,
                _ => points.push((ts, sums[c] as f64)),
            }
        }
        out.retain(|(_, p)| p.iter().any(|x| x.1 != 0.0));
        out
    }

    /// The report: totals at the peak and at `at` (epoch ns), the curve
    /// with times as µs after `origin_epoch_ns`.
    pub(crate) fn report(
        &self,
        peak_epoch_ns: Option<i64>,
        at_epoch_ns: Option<i64>,
        origin_epoch_ns: i64,
    ) -> MemoryCategories {
        let tl = self.timeline;
        let count = |a: Action| tl.entries.iter().filter(|e| e.action == a).count() as u64;
        let mut series: Vec<(f64, [i64; 8])> = Vec::new();
        let mut sums = [0i64; 8];
        for e in &tl.entries {
            sums[e.category as usize] += e.bytes;
            // Preexisting rows (t = −1) sit at the timeline's start.
            let us = (e.t_ns.max(origin_epoch_ns) - origin_epoch_ns) as f64 / 1e3;
            match series.last_mut() {
                Some(last) if last.0 == us => last.1 = sums,
                _ => series.push((us, sums)),
            }
        }
        MemoryCategories {
            rows: tl.entries.len() as u64,
            creates: count(Action::Create),
            creates_joined: self.creates_joined,
            destroys: count(Action::Destroy),
            destroys_joined: self.destroys_joined,
            preexisting_bytes: tl
                .entries
                .iter()
                .filter(|e| e.action == Action::Preexisting)
                .map(|e| e.bytes)
                .sum(),
            at_peak: peak_epoch_ns.map_or_else(Vec::new, |t| listed(totals_at(tl, t))),
            at: at_epoch_ns.map(|t| listed(totals_at(tl, t))),
            series,
        }
    }
}

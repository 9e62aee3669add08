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
}

/// A timeline joined to one device's records.
pub(crate) struct Joined<'a> {
    timeline: &'a MemoryTimeline,
    /// Per record, the category of the CREATE row it joined.
    pub(crate) category_of: Vec<Option<u8>>,
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
    // (epoch ns, signed bytes, record) sorted: a row takes the first record
    // of its key not taken yet (a sorted list, not a map: less code in the
    // worker's download).
    let mut keys: Vec<(i64, i64, usize)> = recs
        .iter()
        .enumerate()
        .map(|(k, r)| (r.ts_ns + offset, r.bytes, k))
        .collect();
    crate::sort::unstable_by_key(&mut keys, &|x| *x);
    let mut taken = vec![false; keys.len()];
    let mut j = Joined {
        timeline,
        category_of: vec![None; recs.len()],
        creates_joined: 0,
        destroys_joined: 0,
    };
    for e in &timeline.entries {
        if !matches!(e.action, Action::Create | Action::Destroy) {
            continue;
        }
        let from = keys.partition_point(|x| (x.0, x.1) < (e.t_ns, e.bytes));
        let Some(at) = (from..keys.len())
            .take_while(|&i| (keys[i].0, keys[i].1) == (e.t_ns, e.bytes))
            .find(|&i| !taken[i])
        else {
            continue;
        };
        taken[at] = true;
        if e.action == Action::Create {
            j.category_of[keys[at].2] = Some(e.category);
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
    /// The report: totals at the peak and at `at` (epoch ns).
    pub(crate) fn report(
        &self,
        peak_epoch_ns: Option<i64>,
        at_epoch_ns: Option<i64>,
    ) -> MemoryCategories {
        let tl = self.timeline;
        let count = |a: Action| tl.entries.iter().filter(|e| e.action == a).count() as u64;
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
        }
    }
}

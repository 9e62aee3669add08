//! Two allocator snapshots compared — a baseline and another run of the
//! same program (a larger batch, another PyTorch, another setting): per
//! device the peaks of allocated and reserved bytes, the allocator's free
//! bytes and largest free block at the peak, the out-of-memory events,
//! and what changed in what holds the peak, by the program's line (the
//! frame [`super::report`] names holders by; its whole stack is kept).
//! Each side is its own replay ([`snapshot_report`]), so every figure of
//! a side is the one `tracelane memory` gives for that snapshot alone.
//!
//! Lines are matched by their text (`file:line function`): runs of the same
//! program from different paths do not match, and are listed on both sides.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::columns::MemorySnapshot;
use super::report::{snapshot_report, SnapshotDevice};

/// What holders without a Python frame are grouped under on both sides
/// (each report words them by what its snapshot holds).
const NO_STACK: &str = "(no Python stack)";

/// One side's figures for a device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SideFigures {
    pub entries: u64,
    pub peak_allocated_bytes: u64,
    pub peak_reserved_bytes: u64,
    /// Reserved but not allocated at the peak of allocated bytes.
    pub free_at_peak_bytes: u64,
    pub free_blocks_at_peak: u64,
    pub largest_free_block_at_peak: u64,
    pub ooms: u64,
}

/// A line of the program holding memory at either side's peak.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HolderChange {
    pub frame: String,
    /// The stack of the largest block the line holds (the other side's
    /// where this side holds none), innermost first.
    pub stack: Vec<String>,
    pub baseline_bytes: u64,
    pub other_bytes: u64,
    pub baseline_blocks: u64,
    pub other_blocks: u64,
    /// `other_bytes − baseline_bytes`.
    pub change_bytes: i64,
}

/// One device on both sides (`None`: that snapshot has no such device).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceComparison {
    pub device: String,
    pub baseline: Option<SideFigures>,
    pub other: Option<SideFigures>,
    /// What changed at the peak, by the program's line, the largest
    /// change (either way) first.
    pub holders: Vec<HolderChange>,
}

/// Two snapshots compared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapshotComparison {
    pub baseline: String,
    pub other: String,
    pub devices: Vec<DeviceComparison>,
}

fn figures(d: &SnapshotDevice) -> SideFigures {
    SideFigures {
        entries: d.entries,
        peak_allocated_bytes: d.peak_allocated_bytes,
        peak_reserved_bytes: d.peak_reserved_bytes,
        free_at_peak_bytes: d.at_peak.free_bytes,
        free_blocks_at_peak: d.at_peak.free_blocks,
        largest_free_block_at_peak: d.at_peak.largest_free_block,
        ooms: d.ooms.len() as u64,
    }
}

fn key(frame: &str) -> &str {
    if frame.starts_with(NO_STACK.trim_end_matches(')')) {
        NO_STACK
    } else {
        frame
    }
}

/// `other − baseline`, within an i64.
pub fn signed_change(baseline: u64, other: u64) -> i64 {
    (other as i128 - baseline as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

fn holder_changes(a: Option<&SnapshotDevice>, b: Option<&SnapshotDevice>) -> Vec<HolderChange> {
    let mut by: FxHashMap<&str, HolderChange> = FxHashMap::default();
    for (side, d) in [(0, a), (1, b)] {
        for h in d.iter().flat_map(|d| &d.at_peak.holders) {
            let c = by.entry(key(&h.frame)).or_insert_with(|| HolderChange {
                frame: key(&h.frame).to_string(),
                stack: h.stack.clone(),
                baseline_bytes: 0,
                other_bytes: 0,
                baseline_blocks: 0,
                other_blocks: 0,
                change_bytes: 0,
            });
            let (bytes, blocks) = if side == 0 {
                (&mut c.baseline_bytes, &mut c.baseline_blocks)
            } else {
                (&mut c.other_bytes, &mut c.other_blocks)
            };
            *bytes = bytes.saturating_add(h.bytes);
            *blocks += h.count;
        }
    }
    let mut out: Vec<HolderChange> = by
        .into_values()
        .map(|mut c| {
            c.change_bytes = signed_change(c.baseline_bytes, c.other_bytes);
            c
        })
        .collect();
    out.sort_by(|x, y| {
        y.change_bytes
            .unsigned_abs()
            .cmp(&x.change_bytes.unsigned_abs())
            .then(y.other_bytes.cmp(&x.other_bytes))
            .then(x.frame.cmp(&y.frame))
    });
    out
}

/// `baseline` against `other`, each named for the report.
pub fn compare(
    baseline: (&str, &MemorySnapshot),
    other: (&str, &MemorySnapshot),
) -> SnapshotComparison {
    // Every holder of each peak: the changes are over all of them.
    let a = snapshot_report(baseline.1, 0, None, usize::MAX);
    let b = snapshot_report(other.1, 0, None, usize::MAX);
    let mut names: Vec<&str> = a.devices.iter().map(|d| d.device.as_str()).collect();
    for d in &b.devices {
        if !names.contains(&d.device.as_str()) {
            names.push(&d.device);
        }
    }
    let devices = names
        .into_iter()
        .map(|name| {
            let da = a.devices.iter().find(|d| d.device == name);
            let db = b.devices.iter().find(|d| d.device == name);
            DeviceComparison {
                device: name.to_string(),
                baseline: da.map(figures),
                other: db.map(figures),
                holders: holder_changes(da, db),
            }
        })
        .collect();
    SnapshotComparison {
        baseline: baseline.0.to_string(),
        other: other.0.to_string(),
        devices,
    }
}

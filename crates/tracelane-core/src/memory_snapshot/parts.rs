//! What a trace takes of an allocator snapshot: per device its allocated
//! and reserved curves (epoch ns, so they sit on any trace's clock), with
//! the report at the peak.

use super::columns::{Action, MemorySnapshot};
use super::replay::Replay;
use super::report::{snapshot_report, SnapshotReport};

/// Rows listed per table of the report kept with a trace.
const REPORT_TOP: usize = 50;

/// One device's curves: (epoch ns, bytes), a point where the value changes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceLanes {
    pub device: i64,
    pub allocated: Vec<(i64, f64)>,
    pub reserved: Vec<(i64, f64)>,
}

/// The curves of a decoded snapshot (the allocator replayed per device)
/// and its report at the peak (times epoch µs, from its first entry).
pub fn lanes_and_report(snap: &MemorySnapshot) -> (Vec<DeviceLanes>, SnapshotReport) {
    let lanes = (0..snap.devices.len()).map(|d| lanes(snap, d)).collect();
    let first = snap.first_time_us();
    (lanes, snapshot_report(snap, first, None, REPORT_TOP))
}

fn lanes(snap: &MemorySnapshot, d: usize) -> DeviceLanes {
    let replay = Replay::new(snap, d);
    let e = &snap.entries;
    let ns = |r: u32| e.time_us[r as usize].saturating_mul(1000);
    let mut out = DeviceLanes {
        device: snap.devices[d].device,
        ..DeviceLanes::default()
    };
    if replay.rows.is_empty() {
        return out;
    }
    let start = ns(replay.rows.start);
    out.allocated.push((start, replay.initial.allocated as f64));
    out.reserved.push((start, replay.initial.reserved as f64));
    let push = |points: &mut Vec<(i64, f64)>, at: i64, v: f64| match points.last_mut() {
        Some(p) if p.0 == at => p.1 = v,
        Some(p) if p.1 == v => {}
        _ => points.push((at, v)),
    };
    replay.run(|r, st| match e.action[r as usize] {
        Action::Alloc | Action::FreeCompleted => {
            push(&mut out.allocated, ns(r), st.allocated as f64)
        }
        Action::SegmentAlloc | Action::SegmentFree | Action::SegmentMap | Action::SegmentUnmap => {
            push(&mut out.reserved, ns(r), st.reserved as f64)
        }
        _ => {}
    });
    out
}

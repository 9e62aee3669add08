//! An allocator snapshot into a trace (natively, and in the browser's
//! import worker from the columns the decoder worker decoded): per device the allocated and reserved curves as counter lanes of
//! a process of their own, and the snapshot with its report, for the memory
//! report at the peak or any moment. `time_us` is epoch µs and a trace's
//! time plus `clock_offset_ns` epoch ns, so a snapshot and a profiler trace
//! of the same run share one time axis.

use crate::error::ImportError;
use crate::ids::ProcessIdx;
use crate::memory_snapshot::parts::lanes_and_report;
use crate::memory_snapshot::MemorySnapshot;
use crate::model::{LaneId, Process, Trace};

/// Why a snapshot pickle could not be read, for the user (also for a
/// caller that pushes the pickle to a
/// [`SnapshotReader`](crate::memory_snapshot::SnapshotReader) itself).
pub fn error(e: crate::pickle::PickleError) -> ImportError {
    ImportError::NotATrace {
        reason: format!("a pickle that cannot be read as a PyTorch allocator snapshot: {e}"),
    }
}

/// A trace of a decoded snapshot alone, its clock starting at its first
/// entry.
pub fn trace_of(snap: MemorySnapshot) -> Trace {
    let first = snap.first_time_us();
    let mut t = Trace {
        clock_offset_ns: first.saturating_mul(1000),
        ..Trace::default()
    };
    t.diagnostics.format = format!(
        "PyTorch allocator snapshot (pickle protocol {})",
        snap.diagnostics.protocol
    );
    t.diagnostics.bytes_read = snap.diagnostics.bytes;
    attach(&mut t, snap);
    t
}

/// Adds a decoded snapshot to a trace of the same run: its curves as
/// lanes, the snapshot and its report kept.
pub fn attach(t: &mut Trace, snap: MemorySnapshot) {
    let (lanes, report) = lanes_and_report(&snap);
    t.diagnostics.readings.push(format!(
        "PyTorch's allocator snapshot (pickle protocol {}): {} entries on {} device(s), {} segments{}",
        snap.diagnostics.protocol,
        snap.entries.len(),
        snap.devices.len(),
        snap.segments.len(),
        snap.diagnostics
            .truncated
            .as_ref()
            .map(|why| format!("; truncated, what was read is kept: {why}"))
            .unwrap_or_default()
    ));
    // The curves of a snapshot of millions of entries are millions of
    // points: the counter columns grow once, not by doubling.
    let points: usize = lanes
        .iter()
        .map(|d| d.allocated.len() + d.reserved.len())
        .sum();
    t.counters.reserve_exact(points);
    for mut d in lanes {
        if d.allocated.is_empty() {
            continue;
        }
        let name = t
            .strings
            .intern(&format!("CUDA:{} allocator (snapshot)", d.device));
        let process = ProcessIdx(t.processes.len() as u32);
        t.processes.push(Process {
            pid: LaneId::Str(name),
            name: Some(name),
            labels: None,
            sort_index: None,
        });
        for p in d.allocated.iter_mut().chain(d.reserved.iter_mut()) {
            p.0 = p.0.saturating_sub(t.clock_offset_ns);
        }
        let series = |what: &str| format!("memory {what} · CUDA:{}", d.device);
        t.add_counter_series(process, &series("allocated"), &d.allocated);
        t.add_counter_series(process, &series("reserved"), &d.reserved);
    }
    t.memory_snapshot = Some(Box::new(snap));
    t.memory_snapshot_report = Some(Box::new(report));
}

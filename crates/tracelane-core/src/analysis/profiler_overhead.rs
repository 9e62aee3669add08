//! Kineto's `overhead` activities (`Activity Buffer Request`, `Lazy Function
//! Loading`, `Runtime Triggered Module Loading`) as PyTorch's
//! `key_averages()` counts them.
//!
//! What PyTorch 2.11 does, read from `torch/autograd/profiler.py`
//! (`_parse_kineto_results`) and `torch/csrc/profiler/collection.cpp`
//! (`TransferEvents::setKinetoTID`) and measured on real CUDA captures
//! (`tests/fixtures/torch-cuda/`, every row equal to `key_averages()`):
//!
//! * an event without a linked activity takes the thread that stopped the
//!   profiler (`at::RecordFunction::currentThreadId()` at post-processing),
//!   so the overhead nests in the containment tree of the process's main
//!   thread — inside a runtime call there — whatever thread caused it;
//! * an overhead activity carries no linked activity, so it is a
//!   "frontend" event: it is given, as its own device time, every device
//!   event linked to its correlation id, which is the op running on the
//!   main thread when the overhead happened. The op keeps those device
//!   events too, so PyTorch counts that device time twice. Overhead caused
//!   on another thread (`Lazy Function Loading` of a backward kernel on the
//!   autograd thread) is given the main thread's op of that moment — in
//!   the capture, a `record_function` range with no device events of its
//!   own: 0 — not the op that caused it.
//!
//! The file format keeps neither the correlation id nor the thread of an
//! overhead event (`"pid": -1, "tid": 0`): both are read back from time, as
//! above. The main thread is the one whose id is the process id (Linux's
//! main thread); a process without one uses the thread of the innermost op
//! around the overhead.

use rustc_hash::FxHashMap;

use crate::category::Category;
use crate::model::*;

/// Where each counted overhead event belongs.
pub(crate) struct OverheadHomes {
    /// (overhead slice, the track it nests on in the tree) for every overhead
    /// that moves off its own track.
    pub moved: Vec<(u32, u32)>,
    /// Overhead slice → the op whose device events it is given.
    pub op_of: FxHashMap<u32, u32>,
}

/// The op and the tree track of every overhead event `counted` keeps.
pub(crate) fn overhead_homes(t: &Trace, counted: &impl Fn(usize) -> bool) -> OverheadHomes {
    let s = &t.slices;
    let mut homes = OverheadHomes {
        moved: Vec::new(),
        op_of: FxHashMap::default(),
    };
    let overheads: Vec<usize> = (0..s.len())
        .filter(|&i| s.category[i] == Category::Overhead && counted(i))
        .collect();
    if overheads.is_empty() {
        return homes;
    }
    let host_tracks: Vec<usize> = (0..t.tracks.len())
        .filter(|&k| t.tracks[k].kind == TrackKind::HostThread)
        .collect();
    for i in overheads {
        // Any op around it says which process it belongs to; its op is the
        // one running on that process's main thread.
        let Some(near) = innermost_op(t, s.start_ns[i], &host_tracks, counted) else {
            continue;
        };
        let home = main_track(t, s.track[near as usize]);
        if let Some(op) = innermost_op(t, s.start_ns[i], &[home.idx()], counted) {
            homes.op_of.insert(i as u32, op);
        }
        if home != s.track[i] {
            homes.moved.push((i as u32, home.0));
        }
    }
    homes
}

/// The op running at `at` on `tracks`: the innermost op, annotation or
/// runtime call (its op) around it, the latest to start.
fn innermost_op(
    t: &Trace,
    at: i64,
    tracks: &[usize],
    counted: &impl Fn(usize) -> bool,
) -> Option<u32> {
    let s = &t.slices;
    let mut best: Option<(i64, u32)> = None;
    for &k in tracks {
        let r = &t.tracks[k].slices;
        let (lo, hi) = (r.start as usize, r.end as usize);
        let n = s.start_ns[lo..hi].partition_point(|&st| st <= at);
        if n == 0 {
            continue;
        }
        let mut c = (lo + n - 1) as u32;
        while c != NO_SLICE {
            let i = c as usize;
            if s.end_ns(i) > at && counted(i) {
                let op = match s.category[i] {
                    Category::CpuOp | Category::UserAnnotation => Some(c),
                    Category::Runtime => t.links.op.get(i).copied().filter(|&o| o != NO_SLICE),
                    _ => None,
                };
                if let Some(op) = op {
                    if best.is_none_or(|(st, _)| s.start_ns[i] > st) {
                        best = Some((s.start_ns[i], op));
                    }
                    break;
                }
            }
            c = s.parent[i];
        }
    }
    best.map(|(_, op)| op)
}

/// The main thread of the process `op_track` belongs to (its thread id is
/// the process id), else `op_track` itself.
fn main_track(t: &Trace, op_track: TrackIdx) -> TrackIdx {
    let process = t.tracks[op_track.idx()].process;
    let pid = &t.processes[process.0 as usize].pid;
    (0..t.tracks.len())
        .find(|&k| {
            let tr = &t.tracks[k];
            tr.process == process && tr.kind == TrackKind::HostThread && &tr.tid == pid
        })
        .map(|k| TrackIdx(k as u32))
        .unwrap_or(op_track)
}

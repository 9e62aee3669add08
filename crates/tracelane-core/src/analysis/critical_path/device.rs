//! The device side of the graph: per stream, launch and kernel–kernel
//! edges and each kernel's span; the syncs (stream, device and event
//! waits) that tie the host to the device.

use rustc_hash::FxHashMap;

use crate::analysis::frame::{Frame, Mode};
use crate::category::Category;
use crate::model::{StrId, Trace};

use super::graph::{Graph, Rows, BLOCKING_SYNC_CALLS, KERNEL_KERNEL_DELAY_THRESHOLD_NS};
use super::report::EdgeKind;

/// HTA's queue length at each launch and device row (`TraceCounters`),
/// by `index`, over the whole frame; `None` where HTA has no series (its
/// critical path then fails indexing it) or its length check fails.
pub(super) fn queue_at(t: &Trace, f: &Frame) -> Option<FxHashMap<i64, i64>> {
    let by_lane = crate::analysis::hta_queue::hta_queue_events(t, f)?;
    if by_lane.is_empty() {
        return None;
    }
    let mut out = FxHashMap::default();
    for (_, mut ev) in by_lane {
        crate::sort::by_key(&mut ev, &|e| (e.0, e.1));
        let mut q = 0;
        for (_, _, d, r) in ev {
            q += d;
            out.entry(f.index[r]).or_insert(q);
        }
    }
    Some(out)
}

/// The launches HTA numbers in start order (`_get_cuda_runtime_calls_df`):
/// (runtime row, its kernel's stream, its kernel's process, launch id).
pub(super) fn launches(t: &Trace, f: &Frame, rows: &Rows) -> Vec<(usize, i64, u32, usize)> {
    let names: Vec<_> = crate::analysis::hta_queue::hta_queue_names(f.mode)
        .iter()
        .filter_map(|n| t.strings.lookup(n))
        .collect();
    let mut calls: Vec<usize> = (0..f.len())
        .filter(|&r| f.partner_positive[r] && names.contains(&f.name_id(t, r)))
        .collect();
    crate::sort::by_key(&mut calls, &|&r| f.ts[r]);
    let mut out = Vec::new();
    for r in calls {
        if let Some(k) = rows.at(f.index_corr[r]) {
            if f.is_device(k) && f.index_corr[k] > 0 {
                let tr = t.track_of(f.slice[k] as usize);
                out.push((r, f.lane[k], tr.process.0, out.len()));
            }
        }
    }
    out
}

pub(super) fn arg_i64(args: &str, key: &str) -> Option<i64> {
    let v: serde_json::Value = serde_json::from_str(args).ok()?;
    v.get(key)?.as_i64()
}

#[allow(clippy::too_many_arguments)]
pub(super) fn kernel_edges(
    t: &Trace,
    f: &Frame,
    rows: &Rows,
    clipped: &[usize],
    in_clip: &[bool],
    mode: Mode,
    args: &dyn Fn(usize) -> String,
    g: &mut Graph,
) -> Result<(), String> {
    let s = &t.slices;
    let syncs = SyncNames::of(t);
    let name = |r: usize| Some(s.name[f.slice[r] as usize]);
    let is_sync = |r: usize| match mode {
        Mode::Hta | Mode::Hta05 => t.str(s.cat[f.slice[r] as usize]) == "cuda_sync",
        Mode::Exact => s.category[f.slice[r] as usize] == Category::DeviceSync,
    };
    let queue = match mode {
        Mode::Hta | Mode::Hta05 => Some(queue_at(t, f).ok_or(
            "HTA's critical path fails: it needs a queue-length series (a CUDA launch matched to one kernel, each)",
        )?),
        Mode::Exact => None,
    };
    let mut kernels: Vec<usize> = clipped
        .iter()
        .copied()
        .filter(|&r| {
            (f.is_device(r) || name(r) == syncs.event_sync || name(r) == syncs.context_sync)
                && f.index_corr[r] >= 0
        })
        .collect();
    let sort_by = |r: usize| if is_sync(r) { f.end[r] } else { f.ts[r] };
    crate::sort::by_key(&mut kernels, &|&r| sort_by(r));

    // Event-based syncs: the kernel each cudaEventRecord recorded (the
    // launch before it on its stream), and the kernel each
    // cudaStreamWaitEvent holds back (the next launch on its thread and stream).
    let sync_args: FxHashMap<usize, (i64, i64)> = kernels
        .iter()
        .filter(|&&r| is_sync(r))
        .map(|&r| {
            let a = args(f.slice[r] as usize);
            (
                r,
                (
                    arg_i64(&a, "wait_on_stream").unwrap_or(-1),
                    arg_i64(&a, "wait_on_cuda_event_record_corr_id").unwrap_or(-1),
                ),
            )
        })
        .collect();
    let launch_list = launches(t, f, rows);
    let events = EventLinks {
        record_prev_launch: record_prev_launch(t, f, &sync_args, &launch_list),
        wait_next_launch: wait_next_launch(t, f, rows, &launch_list),
        sync_args,
    };

    let mut streams = Streams::default();
    for &r in &kernels {
        if is_sync(r) {
            let at = SyncAt {
                row: r,
                name: name(r),
            };
            sync_edges(f, rows, mode, (&syncs, &events), at, &mut streams, g);
            continue;
        }
        let Some((start, end)) = g.nodes_of(r) else {
            continue;
        };
        let stream = f.lane[r];
        if let Some(uv) = g.add(mode, start, end, EdgeKind::Span, false) {
            g.attribute(uv, None);
        }
        let mut sync_end: Option<u32> = None;
        if let Some(src) = streams.kernel_sync.remove(&f.index[r]) {
            if let Some((_, e)) = rows.at(src).and_then(|k| g.nodes_of(k)) {
                g.add(mode, e, start, EdgeKind::Sync, false);
                sync_end = Some(e);
            }
        }
        let runtime = rows.at(f.index_corr[r]).filter(|_| f.index_corr[r] > 0);
        let prev = streams.last_node.get(&stream).copied();
        let runtime_ts = runtime.map(|x| f.ts[x]);
        let before = |n: Option<u32>, ts: Option<i64>| match (n, ts) {
            (None, _) => true,
            (Some(n), Some(ts)) => g.nodes[n as usize].ts < ts,
            (Some(_), None) => false,
        };
        let empty_at_launch = match mode {
            Mode::Hta | Mode::Hta05 => {
                let q = queue.as_ref().unwrap();
                runtime.and_then(|x| q.get(&f.index[x])) == Some(&1)
                    && q.get(&f.index[r]) == Some(&0)
            }
            Mode::Exact => runtime.is_some(),
        };
        if empty_at_launch && before(prev, runtime_ts) && before(sync_end, runtime_ts) {
            let Some((rs, _)) = runtime.and_then(|x| g.nodes_of(x)) else {
                return Err(format!(
                    "HTA's critical path fails: the launch of {} is not in the graph",
                    f.name(t, r)
                ));
            };
            g.add(mode, rs, start, EdgeKind::LaunchDelay, false);
        } else if let Some(p) = prev {
            let within = mode != Mode::Hta
                || g.nodes[start as usize].ts - g.nodes[p as usize].ts
                    < KERNEL_KERNEL_DELAY_THRESHOLD_NS;
            if within && sync_end.is_none_or(|e| g.nodes[e as usize].ts < g.nodes[p as usize].ts) {
                if let Some(uv) = g.add(mode, p, start, EdgeKind::KernelKernelDelay, false) {
                    g.attribute(uv, None);
                }
            }
        }
        streams.ended(stream, end);
    }
    if mode == Mode::Exact {
        exact_sync_edges(t, f, rows, clipped, in_clip, &kernels, g);
    }
    Ok(())
}

/// The sync calls' names, interned (`None` where the trace has none).
struct SyncNames {
    event_sync: Option<StrId>,
    context_sync: Option<StrId>,
    stream_sync: Option<StrId>,
    stream_wait: Option<StrId>,
}

impl SyncNames {
    fn of(t: &Trace) -> SyncNames {
        let id = |n: &str| t.strings.lookup(n);
        SyncNames {
            event_sync: id("Event Sync"),
            context_sync: id("Context Sync"),
            stream_sync: id("Stream Sync"),
            stream_wait: id("Stream Wait Event"),
        }
    }
}

/// The event-based syncs' links: each sync's (`wait_on_stream`, the
/// `cudaEventRecord` it waits on), the launch before each record on its
/// stream, the launch each stream wait holds back.
struct EventLinks {
    sync_args: FxHashMap<usize, (i64, i64)>,
    record_prev_launch: FxHashMap<i64, i64>,
    wait_next_launch: FxHashMap<i64, i64>,
}

/// What the walk over the kernels in order keeps: each stream's last
/// kernel's end node (streams in the order first seen), and the kernels a
/// stream wait holds back → the kernel they wait on.
#[derive(Default)]
struct Streams {
    last_node: FxHashMap<i64, u32>,
    last_order: Vec<i64>,
    kernel_sync: FxHashMap<i64, i64>,
}

impl Streams {
    /// A kernel on `stream` ended at node `end`.
    fn ended(&mut self, stream: i64, end: u32) {
        if !self.last_node.contains_key(&stream) {
            self.last_order.push(stream);
        }
        self.last_node.insert(stream, end);
    }
}

/// A sync call in the walk: its row and name.
struct SyncAt {
    row: usize,
    name: Option<StrId>,
}

/// A sync call's edges, as HTA draws them: an event sync from the kernel
/// its record follows to the call's end, a stream wait holding back the
/// next launch's kernel (edge drawn when that kernel comes), a stream sync
/// from its stream's last kernel, a context sync from every stream's.
fn sync_edges(
    f: &Frame,
    rows: &Rows,
    mode: Mode,
    (names, events): (&SyncNames, &EventLinks),
    at: SyncAt,
    streams: &mut Streams,
    g: &mut Graph,
) {
    let (r, n) = (at.row, at.name);
    if n == names.stream_wait || n == names.event_sync {
        let Some(&(_, record_corr)) = events.sync_args.get(&r) else {
            return;
        };
        let Some(&prev_launch) = events.record_prev_launch.get(&record_corr) else {
            return;
        };
        let Some(src_kernel) = rows.at(prev_launch).map(|l| f.index_corr[l]) else {
            return;
        };
        if n == names.stream_wait {
            let Some(&next) = events.wait_next_launch.get(&f.index_corr[r]) else {
                return;
            };
            if let Some(l) = rows.at(next) {
                streams.kernel_sync.insert(f.index_corr[l], src_kernel);
            }
        } else if let (Some(k), Some(call)) = (rows.at(src_kernel), rows.at(f.index_corr[r])) {
            if let (Some((_, kend)), Some((_, cend))) = (g.nodes_of(k), g.nodes_of(call)) {
                g.add(mode, kend, cend, EdgeKind::Sync, false);
            }
        }
        return;
    }
    if n != names.stream_sync && n != names.context_sync {
        return;
    }
    let Some(call) = rows.at(f.index_corr[r]) else {
        return;
    };
    let Some((_, call_end)) = g.nodes_of(call) else {
        return;
    };
    let targets: Vec<u32> = if n == names.context_sync {
        streams
            .last_order
            .iter()
            .map(|l| streams.last_node[l])
            .collect()
    } else {
        streams
            .last_node
            .get(&f.lane[r])
            .copied()
            .into_iter()
            .collect()
    };
    for k in targets {
        g.add(mode, k, call_end, EdgeKind::Sync, false);
    }
}

/// cudaEventRecord correlation → index of the launch before it on the
/// stream the waits name.
fn record_prev_launch(
    t: &Trace,
    f: &Frame,
    sync_args: &FxHashMap<usize, (i64, i64)>,
    launch_list: &[(usize, i64, u32, usize)],
) -> FxHashMap<i64, i64> {
    let name = |r: usize| Some(t.slices.name[f.slice[r] as usize]);
    let mut record_prev_launch: FxHashMap<i64, i64> = FxHashMap::default();
    if let Some(record) = t.strings.lookup("cudaEventRecord") {
        let mut stream_of_record: FxHashMap<i64, (i64, u32)> = FxHashMap::default();
        for (&r, &(stream, corr)) in sync_args {
            if stream > -1 {
                let tr = t.track_of(f.slice[r] as usize);
                stream_of_record.insert(corr, (stream, tr.process.0));
            }
        }
        let mut records: Vec<usize> = (0..f.len())
            .filter(|&r| {
                name(r) == Some(record) && stream_of_record.contains_key(&f.correlation[r])
            })
            .collect();
        crate::sort::by_key(&mut records, &|&r| f.ts[r]);
        // Launches per (stream, device), in start order.
        let mut by_stream: FxHashMap<(i64, u32), Vec<(i64, usize)>> = FxHashMap::default();
        for l in launch_list {
            by_stream
                .entry((l.1, l.2))
                .or_default()
                .push((f.ts[l.0], l.0));
        }
        for r in records {
            let key = stream_of_record[&f.correlation[r]];
            let Some(list) = by_stream.get(&key) else {
                continue;
            };
            let k = list.partition_point(|x| x.0 <= f.ts[r]);
            if k > 0 {
                record_prev_launch.insert(f.correlation[r], f.index[list[k - 1].1]);
            }
        }
    }
    record_prev_launch
}

/// cudaStreamWaitEvent call index → index of the next launch on its
/// thread and stream.
fn wait_next_launch(
    t: &Trace,
    f: &Frame,
    rows: &Rows,
    launch_list: &[(usize, i64, u32, usize)],
) -> FxHashMap<i64, i64> {
    let s = &t.slices;
    let name = |r: usize| Some(s.name[f.slice[r] as usize]);
    let mut wait_next_launch: FxHashMap<i64, i64> = FxHashMap::default();
    if let Some(wait_call) = t.strings.lookup("cudaStreamWaitEvent") {
        // Launches per (thread, stream), in start order.
        let mut by_thread: FxHashMap<(u32, i64), Vec<(i64, usize)>> = FxHashMap::default();
        for l in launch_list {
            let track = s.track[f.slice[l.0] as usize].0;
            by_thread
                .entry((track, l.1))
                .or_default()
                .push((f.ts[l.0], l.0));
        }
        for r in (0..f.len()).filter(|&r| name(r) == Some(wait_call) && f.partner_positive[r]) {
            let Some(k) = rows.at(f.index_corr[r]) else {
                continue;
            };
            let key = (s.track[f.slice[r] as usize].0, f.lane[k]);
            let Some(list) = by_thread.get(&key) else {
                continue;
            };
            let j = list.partition_point(|x| x.0 < f.ts[r]);
            if let Some(&(_, n)) = list.get(j) {
                wait_next_launch.insert(f.index[r], f.index[n]);
            }
        }
    }
    wait_next_launch
}

/// Exact mode's CPU waits: a blocking sync call (device, stream or event
/// synchronize, a blocking copy) ends after the device work that finished
/// last before it returned, among the work launched before it began.
pub(super) fn exact_sync_edges(
    t: &Trace,
    f: &Frame,
    rows: &Rows,
    clipped: &[usize],
    in_clip: &[bool],
    kernels: &[usize],
    g: &mut Graph,
) {
    let blocking: Vec<_> = BLOCKING_SYNC_CALLS
        .iter()
        .filter(|n| **n != "cudaMemcpyAsync" && **n != "cudaEventQuery")
        .filter_map(|n| t.strings.lookup(n))
        .collect();
    // (device end, launch start, end node), by end.
    let mut ends: Vec<(i64, i64, u32)> = kernels
        .iter()
        .filter_map(|&k| {
            let (_, end) = g.nodes_of(k)?;
            let launch = rows.at(f.index_corr[k]).filter(|&l| in_clip[l])?;
            Some((f.end[k], f.ts[launch], end))
        })
        .collect();
    ends.sort_unstable();
    for &c in clipped {
        if f.is_device(c) || !blocking.contains(&f.name_id(t, c)) {
            continue;
        }
        let Some((_, call_end)) = g.nodes_of(c) else {
            continue;
        };
        let upto = ends.partition_point(|e| e.0 <= f.end[c]);
        if let Some(e) = ends[..upto].iter().rev().find(|e| e.1 < f.ts[c]) {
            g.add(Mode::Exact, e.2, call_end, EdgeKind::Sync, false);
        }
    }
}

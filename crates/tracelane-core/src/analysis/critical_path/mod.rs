//! The critical path: the longest chain of dependent work through a scope —
//! CPU op spans (per thread call stacks), launches, kernels one after
//! another on a stream, and synchronisation — with each of its edges
//! labelled by what bounds it, and the ops ranked by their time on the path
//! next to their total time.
//!
//! The graph follows HTA's `hta/analyzers/critical_path_analysis.py`
//! (`CPGraph`), the reference model:
//! - a start and an end node per CPU op, runtime call and device event;
//! - per CPU thread, in call-stack order, an edge from each node to the
//!   next (op spans and the time between nested ops), and a dependency edge
//!   from one top-level op's end to the next one's start; a blocking sync
//!   call's span weighs nothing (the wait is the device's);
//! - per stream, in start order, each kernel's span; before it, a *launch*
//!   edge from its runtime call's start when the stream was empty at the
//!   launch, else a *kernel–kernel* edge from the previous kernel's end;
//! - sync edges: a stream / context sync call ends after the last kernel on
//!   its stream(s); `cudaStreamWaitEvent` makes the next kernel on a stream
//!   wait for the kernel its event recorded; `cudaEventSynchronize` makes
//!   the call wait for it;
//! - the longest path (networkx's `dag_longest_path`), each edge labelled
//!   `cpu_bound` (a CPU span), `gpu_compute_bound` / `gpu_communication_bound`
//!   (a kernel span), `gpu_kernel_launch_overhead`, `gpu_kernel_kernel_overhead`,
//!   or no label (a dependency or sync edge, which weighs nothing).
//!
//! Under [`Mode::Hta05`] every HTA 0.5.0 rule holds, quirks included: only
//! `cpu_op`, `cuda_runtime` and `cuda_driver` events are CPU nodes; a thread
//! with any stream ≥ 0 (a Triton op) builds no call stack; dependency edges
//! between top-level ops weigh nothing, so host time between ops is not on
//! the path; a sync edge may run backwards in time, so the path can be
//! longer than the trace; weights ≤ −1 µs count as 0 in the search but keep
//! their value in the breakdown; networkx's tie-breaking between equally
//! long paths.
//!
//! Under [`Mode::Hta`], HTA 0.6.1's (`traceinsight`): the same, and
//! nodes numbered by time then event (a start before its own end); the
//! calls that hold the CUDA runtime's lock (`cudaLaunchKernel`,
//! `cudaMemcpyAsync`, `cudaHostAlloc`) chained across threads in the order
//! they end, the call stack not joining two of them; the one thread with a
//! "forward" op and the one with an "autograd" op walked as one call
//! stack; consecutive top-level ops joined wherever they are; no
//! kernel–kernel edge across a gap of 1.5 ms or more.
//!
//! Under [`Mode::Exact`]: every op, runtime call (any runtime: Neuron's
//! dispatch too) and device event the model knows — annotations shape the
//! call stacks but are not work; launches from the import's links (a
//! launch edge when the stream had finished its earlier work before the
//! call began); blocking sync calls wait for the device work that finished
//! last before they returned; an edge that would run backwards in time is
//! left out and counted, so the path is a chain forward in time no longer
//! than the scope's wall time. As in HTA, host time between top-level ops
//! and sync waits weigh nothing: every path between two moments would
//! otherwise be equally long, and the path is the chain of *work* that
//! decides the end.

mod device;
mod graph;
mod host;
mod report;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::analysis::frame::{Frame, KernelType, Mode, NO_ROW};
use crate::analysis::scope::{Occurrence, Scope, ScopeError};
use crate::category::Category;
use crate::model::{Trace, NO_SLICE};

pub use report::{Bound, CriticalPathReport, EdgeKind, NamedTime, PathEdge};

use device::kernel_edges;
use graph::{longest_path, Graph, Node, Rows, BLOCKING_SYNC_CALLS, RUNTIME_LOCK_CALLS};
use host::{call_stack_edges, exact_call_stack_edges, runtime_lock_edges};

/// The critical path of a scope. `args` reads a slice's args JSON (the
/// event-based syncs need `wait_on_stream` and the recording call's
/// correlation, which the model keeps only as text).
pub fn critical_path(
    t: &Trace,
    scope: &Scope,
    mode: Mode,
    args: &dyn Fn(usize) -> String,
) -> Result<CriticalPathReport, String> {
    let full = Frame::build(t, &Scope::Whole, mode).map_err(|e| e.to_string())?;
    critical_path_of(t, &full, scope, args)
}

/// [`critical_path`] on a frame already built for the whole trace.
pub fn critical_path_of(
    t: &Trace,
    full: &Frame,
    scope: &Scope,
    args: &dyn Fn(usize) -> String,
) -> Result<CriticalPathReport, String> {
    let occ = scope
        .occurrences(t)
        .map_err(|e: ScopeError| e.to_string())?;
    let f = full;
    let mode = f.mode;
    let rows = Rows::new(f);
    let mut notes = Vec::new();
    let window = window(f, scope, &occ);
    let (clipped, in_clip) = clip(t, f, window);
    let (mut g, events) = nodes(t, f, &clipped);
    if g.nodes.is_empty() {
        return Err(nothing_to_follow(f, window, clipped.len()));
    }
    match mode {
        Mode::Hta => {
            runtime_lock_edges(&mut g);
            call_stack_edges(t, f, &clipped, mode, &mut g);
        }
        Mode::Hta05 => call_stack_edges(t, f, &clipped, mode, &mut g),
        Mode::Exact => exact_call_stack_edges(t, f, &clipped, &mut g),
    }
    kernel_edges(t, f, &rows, &clipped, &in_clip, mode, args, &mut g)?;
    validate(f, &mut g, &mut notes)?;
    let path = longest_path(&g).ok_or("the dependency graph has a cycle")?;
    if path.is_empty() {
        return Err("nothing in this scope to build a critical path from".into());
    }
    Ok(report(t, f, scope, &g, &path, &events, window, notes))
}

/// Why a scope has no graph: the path follows the host's work and the
/// device work it launched, and says what the scope held instead (an
/// XPlane host's TraceMe events are annotations; a TPU's ops are launched
/// by no host call the profile records).
fn nothing_to_follow(f: &Frame, (lo, hi): (i64, i64), in_window: usize) -> String {
    let unlaunched = (0..f.len())
        .filter(|&r| f.is_device(r) && f.partner[r] == NO_ROW && f.ts[r] <= hi && f.end[r] >= lo)
        .count();
    format!(
        "nothing in this scope to build a critical path from: it runs through CPU ops, runtime calls and the device work they launch, and this scope has none ({in_window} events in it, none of them that; {unlaunched} device events with no recorded launch)"
    )
}

/// The window: HTA's annotation window (its rows' rounded times) or the
/// whole trace's first start to last end.
fn window(f: &Frame, scope: &Scope, occ: &[Occurrence]) -> (i64, i64) {
    if *scope == Scope::Whole {
        (
            f.ts.iter().copied().min().unwrap_or(0),
            f.end.iter().copied().max().unwrap_or(0),
        )
    } else {
        let mut row_of_slice: FxHashMap<u32, usize> = FxHashMap::default();
        for r in 0..f.len() {
            row_of_slice.entry(f.slice[r]).or_insert(r);
        }
        let mut lo = i64::MAX;
        let mut hi = i64::MIN;
        for o in occ {
            match (o.slice != NO_SLICE)
                .then(|| row_of_slice.get(&o.slice))
                .flatten()
            {
                Some(&r) => {
                    lo = lo.min(f.ts[r]);
                    hi = hi.max(f.end[r]);
                }
                None => {
                    lo = lo.min(o.start_ns);
                    hi = hi.max(o.end_ns);
                }
            }
        }
        (lo, hi)
    }
}

/// The rows in the window (HTA: CPU rows starting in it with a duration;
/// device rows whose launch is such a row; stream waits), and a row → in
/// it table.
fn clip(t: &Trace, f: &Frame, (lo, hi): (i64, i64)) -> (Vec<usize>, Vec<bool>) {
    let mode = f.mode;
    let s = &t.slices;
    let dur = |r: usize| f.end[r] - f.ts[r];
    let stream_wait_event = t.strings.lookup("Stream Wait Event");
    let is_stream_wait = |r: usize| stream_wait_event == Some(s.name[f.slice[r] as usize]);
    let cpu_in = |r: usize| !f.is_device(r) && f.ts[r] >= lo && f.ts[r] <= hi && dur(r) > 0;
    let mut launched_in: FxHashSet<i64> = FxHashSet::default();
    for r in 0..f.len() {
        if mode.is_hta() && cpu_in(r) {
            launched_in.insert(f.index_corr[r]);
        }
    }
    let mut clipped: Vec<usize> = (0..f.len())
        .filter(|&r| {
            if !f.is_device(r) {
                cpu_in(r)
            } else if mode == Mode::Exact {
                f.partner[r] != NO_ROW && cpu_in(f.partner[r] as usize)
            } else {
                launched_in.contains(&f.index[r]) || is_stream_wait(r)
            }
        })
        .collect();
    if mode.is_hta() {
        // By index, once each (HTA's filter may repeat a device row).
        crate::sort::by_key(&mut clipped, &|&r| (f.index[r], r));
        clipped.dedup_by_key(|r| f.index[*r]);
    }
    let mut in_clip = vec![false; f.len()];
    for &r in &clipped {
        in_clip[r] = true;
    }
    (clipped, in_clip)
}

/// The graph's nodes: a start and an end per event of the clip that is
/// work, numbered as each rule set numbers them; and those events.
fn nodes(t: &Trace, f: &Frame, clipped: &[usize]) -> (Graph, Vec<usize>) {
    let mode = f.mode;
    let s = &t.slices;
    let node_cats: Vec<Option<crate::model::StrId>> = ["cpu_op", "cuda_runtime", "cuda_driver"]
        .iter()
        .map(|c| t.strings.lookup(c))
        .collect();
    let node_row = |r: usize| -> bool {
        match mode {
            Mode::Hta | Mode::Hta05 => {
                node_cats.contains(&Some(s.cat[f.slice[r] as usize]))
                    || (f.is_device(r) && f.index_corr[r] >= 0)
            }
            // Annotations give the call stack its shape but are not work.
            Mode::Exact => s.category[f.slice[r] as usize] != Category::UserAnnotation,
        }
    };
    let blocking: Vec<Option<_>> = BLOCKING_SYNC_CALLS
        .iter()
        .map(|n| t.strings.lookup(n))
        .collect();
    let events: Vec<usize> = clipped.iter().copied().filter(|&r| node_row(r)).collect();
    let mut g = Graph {
        start_of: vec![u32::MAX; f.len()],
        end_of: vec![u32::MAX; f.len()],
        ..Graph::default()
    };
    let blocking_name = |r: usize| blocking.contains(&Some(s.name[f.slice[r] as usize]));
    let lock_names: Vec<_> = RUNTIME_LOCK_CALLS
        .iter()
        .filter_map(|n| t.strings.lookup(n))
        .collect();
    let lock_name =
        |r: usize| mode == Mode::Hta && lock_names.contains(&s.name[f.slice[r] as usize]);
    let push = |g: &mut Graph, r: usize, ts: i64, is_start: bool| {
        let id = g.nodes.len() as u32;
        g.nodes.push(Node {
            row: r,
            ts,
            is_start,
            blocking: is_start && blocking_name(r),
            lock: lock_name(r),
        });
        if is_start {
            g.start_of[r] = id;
        } else {
            g.end_of[r] = id;
        }
    };
    g.nodes.reserve(events.len() * 2);
    match mode {
        // HTA 0.6 numbers nodes by time, then the event's index; a start
        // before its own end.
        Mode::Hta => {
            let mut order: Vec<(i64, i64, bool, usize)> = events
                .iter()
                .flat_map(|&r| {
                    [
                        (f.ts[r], f.index[r], false, r),
                        (f.end[r], f.index[r], true, r),
                    ]
                })
                .collect();
            crate::sort::unstable_by_key(&mut order, &|x| (x.0, x.1, x.2));
            for (ts, _, is_end, r) in order {
                push(&mut g, r, ts, !is_end);
            }
        }
        // HTA 0.5 numbers nodes by time: starts (in index order), then
        // ends; a tie keeps that order (networkx's tie-breaking follows it).
        Mode::Hta05 => {
            let mut order: Vec<(i64, usize, usize)> = events
                .iter()
                .enumerate()
                .map(|(k, &r)| (f.ts[r], k, r))
                .collect();
            order.extend(
                events
                    .iter()
                    .enumerate()
                    .map(|(k, &r)| (f.end[r], events.len() + k, r)),
            );
            crate::sort::unstable_by_key(&mut order, &|x| (x.0, x.1));
            for (ts, k, r) in order {
                push(&mut g, r, ts, k < events.len());
            }
        }
        // The exact search does not depend on the numbering.
        Mode::Exact => {
            for &r in &events {
                push(&mut g, r, f.ts[r], true);
                push(&mut g, r, f.end[r], false);
            }
        }
    }
    (g, events)
}

/// HTA's `_validate_graph`, or under tracelane's rules the edges that
/// would have run backwards, said.
fn validate(f: &Frame, g: &mut Graph, notes: &mut Vec<String>) -> Result<(), String> {
    let mode = f.mode;
    if mode.is_hta() {
        // `_validate_graph`: weights ≤ −1 µs count as 0 in the search;
        // a sync between kernels of one stream, or a cycle, fails.
        for e in g.edges.iter_mut() {
            if e.weight <= -1000 {
                e.search = 0;
            }
            if e.kind == EdgeKind::Sync {
                let (a, b) = (g.nodes[e.u as usize].row, g.nodes[e.v as usize].row);
                if f.lane[a] != -1 && f.lane[a] == f.lane[b] {
                    return Err(
                        "HTA's critical path fails: a CUDA sync between kernels on the same stream"
                            .into(),
                    );
                }
            }
        }
    } else if g.backwards > 0 {
        notes.push(format!(
            "{} dependency edges would run backwards in time (a sync that ends before the work it waits for, clock skew) and are left out",
            g.backwards
        ));
    }
    Ok(())
}

/// The path's edges labelled by what bounds them, and the report.
#[allow(clippy::too_many_arguments)]
fn report(
    t: &Trace,
    f: &Frame,
    scope: &Scope,
    g: &Graph,
    path: &[u32],
    events: &[usize],
    (lo, hi): (i64, i64),
    mut notes: Vec<String>,
) -> CriticalPathReport {
    let mode = f.mode;
    let s = &t.slices;
    let dur = |r: usize| f.end[r] - f.ts[r];
    // Breakdown.
    let mut edges = Vec::new();
    let mut by: FxHashMap<Bound, i64> = FxHashMap::default();
    let mut on_path: FxHashMap<u32, i64> = FxHashMap::default();
    for &k in path {
        let k = k as usize;
        let e = g.edges[k];
        let attributed = Some(g.attributed[k] as usize).filter(|&r| r != NO_ROW as usize);
        let bound = match e.kind {
            EdgeKind::KernelKernelDelay => Bound::GpuKernelKernelOverhead,
            EdgeKind::LaunchDelay => Bound::GpuKernelLaunchOverhead,
            EdgeKind::Sync => Bound::Dependency,
            EdgeKind::Dependency => Bound::Dependency,
            EdgeKind::Span => match attributed {
                // The frame typed each row under its own rules.
                Some(r) if f.is_device(r) => {
                    if f.kernel_type[r] == KernelType::Communication {
                        Bound::GpuCommunicationBound
                    } else {
                        Bound::GpuComputeBound
                    }
                }
                _ => Bound::CpuBound,
            },
        };
        *by.entry(bound).or_default() += e.weight;
        let slice = attributed.map_or(NO_SLICE, |r| f.slice[r]);
        if slice != NO_SLICE {
            *on_path.entry(s.name[slice as usize].0).or_default() += e.weight;
        }
        edges.push(PathEdge {
            from_ns: g.nodes[e.u as usize].ts,
            to_ns: g.nodes[e.v as usize].ts,
            weight_ns: e.weight,
            kind: e.kind,
            bound,
            slice,
        });
    }
    let length_ns: i64 = edges.iter().map(|e| e.weight_ns).sum();
    if mode == Mode::Exact {
        notes.extend(graph_replay_note(t, &edges));
    }
    let mut totals: FxHashMap<u32, i64> = FxHashMap::default();
    for &r in events {
        *totals.entry(s.name[f.slice[r] as usize].0).or_default() += dur(r);
    }
    let ranked = |m: FxHashMap<u32, i64>| {
        let mut v: Vec<NamedTime> = m
            .into_iter()
            .map(|(id, ns)| NamedTime {
                name: t.str(crate::model::StrId(id)).to_string(),
                ns,
            })
            .collect();
        crate::sort::by(&mut v, &|a, b| {
            b.ns.cmp(&a.ns).then_with(|| a.name.cmp(&b.name))
        });
        v
    };
    CriticalPathReport {
        mode,
        scope: scope.label(),
        length_ns,
        wall_ns: {
            // The scope's wall time: its events' first start to their last
            // end, device work launched in it included.
            let a = events.iter().map(|&r| f.ts[r]).min().unwrap_or(lo);
            let b = events.iter().map(|&r| f.end[r]).max().unwrap_or(hi);
            b - a
        },
        by_bound: Bound::ALL
            .iter()
            .map(|&b| (b, by.get(&b).copied().unwrap_or(0)))
            .collect(),
        edge_count: edges.len(),
        start_ns: edges.first().map_or(0, |e| e.from_ns),
        end_ns: edges.last().map_or(0, |e| e.to_ns),
        edges,
        on_path: ranked(on_path),
        by_total: ranked(totals),
        nodes: g.nodes.len(),
        graph_edges: g.edges.len(),
        notes,
    }
}

/// Kernels replayed by a CUDA / HIP graph launch on the path, said: HTA's
/// critical path leaves them out (HTA issue #290), so there the two modes
/// differ by design.
fn graph_replay_note(t: &Trace, edges: &[PathEdge]) -> Option<String> {
    let replayed: Vec<&PathEdge> = edges
        .iter()
        .filter(|e| e.kind == EdgeKind::Span && e.slice != NO_SLICE)
        .filter(|e| {
            let launch = t.links.launch[e.slice as usize];
            launch != NO_SLICE && t.slice_name(launch as usize).contains("GraphLaunch")
        })
        .collect();
    if replayed.is_empty() {
        return None;
    }
    let ns: i64 = replayed.iter().map(|e| e.weight_ns).sum();
    Some(format!(
        "{} kernels replayed by graph launches are on the path ({:.3} ms): HTA's critical path leaves graph-replayed kernels out (HTA issue #290), so its path differs here",
        replayed.len(),
        ns as f64 / 1e6
    ))
}

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

use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use crate::category::Category;
use crate::model::{LaneId, Trace, NO_SLICE};

use super::frame::{Frame, KernelType, Mode, NO_ROW};
use super::scope::{Scope, ScopeError};

/// What bounds an edge of the critical path (HTA's `bound_by`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    CpuBound,
    GpuComputeBound,
    GpuCommunicationBound,
    GpuKernelLaunchOverhead,
    GpuKernelKernelOverhead,
    /// A dependency or sync edge (HTA's empty label); weighs nothing.
    Dependency,
}

impl Bound {
    pub const ALL: [Bound; 6] = [
        Bound::CpuBound,
        Bound::GpuComputeBound,
        Bound::GpuCommunicationBound,
        Bound::GpuKernelLaunchOverhead,
        Bound::GpuKernelKernelOverhead,
        Bound::Dependency,
    ];
    /// HTA's label.
    pub fn key(self) -> &'static str {
        match self {
            Bound::CpuBound => "cpu_bound",
            Bound::GpuComputeBound => "gpu_compute_bound",
            Bound::GpuCommunicationBound => "gpu_communication_bound",
            Bound::GpuKernelLaunchOverhead => "gpu_kernel_launch_overhead",
            Bound::GpuKernelKernelOverhead => "gpu_kernel_kernel_overhead",
            Bound::Dependency => "",
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            Bound::CpuBound => "CPU-bound",
            Bound::GpuComputeBound => "compute-bound",
            Bound::GpuCommunicationBound => "communication-bound",
            Bound::GpuKernelLaunchOverhead => "launch overhead",
            Bound::GpuKernelKernelOverhead => "kernel–kernel gap",
            Bound::Dependency => "dependency",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// An op or kernel span, or time between nested ops.
    Span,
    Dependency,
    LaunchDelay,
    KernelKernelDelay,
    Sync,
}

/// One edge of the path, in path order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathEdge {
    pub from_ns: i64,
    pub to_ns: i64,
    pub weight_ns: i64,
    pub kind: EdgeKind,
    pub bound: Bound,
    /// The event the edge's time belongs to (a model slice), if any.
    pub slice: u32,
}

/// An op (or kernel) name with time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NamedTime {
    pub name: String,
    pub ns: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CriticalPathReport {
    pub mode: Mode,
    pub scope: String,
    /// Sum of the path's edge weights.
    pub length_ns: i64,
    /// The scope's wall time: its events' first start to their last end
    /// (device work launched inside it included).
    pub wall_ns: i64,
    /// Time on the path by label, every label (zero where none).
    pub by_bound: Vec<(Bound, i64)>,
    /// The path's edges in order (a caller that only shows the summary may
    /// drop them: `edge_count`, `start_ns` and `end_ns` stay).
    pub edges: Vec<PathEdge>,
    pub edge_count: usize,
    /// Where the path starts and ends (trace clock).
    pub start_ns: i64,
    pub end_ns: i64,
    /// Ops and kernels by their time on the path, most first.
    pub on_path: Vec<NamedTime>,
    /// The same events by their total time in the scope, most first.
    pub by_total: Vec<NamedTime>,
    pub nodes: usize,
    pub graph_edges: usize,
    pub notes: Vec<String>,
}

impl CriticalPathReport {
    /// HTA's `critical_path` object: length and the share of each label.
    pub fn hta_json(&self) -> serde_json::Value {
        let mut by = serde_json::Map::new();
        for &(b, ns) in &self.by_bound {
            let pct = if self.length_ns != 0 {
                100.0 * ns as f64 / self.length_ns as f64
            } else {
                0.0
            };
            // HTA's groupby lists the labels that occur; "" (dependency)
            // only matters when it carries time.
            let occurs = self.edges.iter().any(|e| e.bound == b);
            if occurs && !(b == Bound::Dependency && ns == 0) {
                by.insert(b.key().to_string(), serde_json::json!(pct));
            }
        }
        serde_json::json!({
            "length_us": self.length_ns as f64 / 1000.0,
            "bound_by_pct": by,
        })
    }
}

const BLOCKING_SYNC_CALLS: [&str; 6] = [
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventQuery",
    "cudaEventSynchronize",
    "cudaMemcpy",
    "cudaMemcpyAsync",
];

/// HTA 0.6's `CUDA_RUNTIME_EVENTS`: calls that hold the CUDA runtime's
/// lock, so only one of them, on any thread, makes progress at a time.
const RUNTIME_LOCK_CALLS: [&str; 3] = ["cudaHostAlloc", "cudaLaunchKernel", "cudaMemcpyAsync"];

/// HTA 0.6's `KERNEL_KERNEL_DELAY_THRESHOLD_US`: a gap between kernels on a
/// stream this long or longer is taken for a dependency it cannot see, not
/// kernel–kernel overhead.
const KERNEL_KERNEL_DELAY_THRESHOLD_NS: i64 = 1_500_000;

#[derive(Clone, Copy, Debug)]
struct Node {
    row: usize,
    ts: i64,
    is_start: bool,
    blocking: bool,
    /// HTA 0.6: a call that takes the CUDA runtime's lock
    /// ([`RUNTIME_LOCK_CALLS`]).
    lock: bool,
}

#[derive(Clone, Copy, Debug)]
struct Edge {
    u: u32,
    v: u32,
    /// The edge's own weight (HTA's `CPEdge.weight`), reported.
    weight: i64,
    /// The weight the search uses (negative ones zeroed under HTA).
    search: i64,
    kind: EdgeKind,
}

/// Edges by node, in insertion order (compressed rows).
struct Adjacency {
    start: Vec<u32>,
    edge: Vec<u32>,
}

impl Adjacency {
    fn build(n: usize, edges: &[Edge], key: impl Fn(&Edge) -> u32) -> Adjacency {
        let mut start = vec![0u32; n + 1];
        for e in edges {
            start[key(e) as usize + 1] += 1;
        }
        for k in 0..n {
            start[k + 1] += start[k];
        }
        let mut at = start.clone();
        let mut edge = vec![0u32; edges.len()];
        for (i, e) in edges.iter().enumerate() {
            let k = key(e) as usize;
            edge[at[k] as usize] = i as u32;
            at[k] += 1;
        }
        Adjacency { start, edge }
    }
    fn of(&self, v: u32) -> &[u32] {
        &self.edge[self.start[v as usize] as usize..self.start[v as usize + 1] as usize]
    }
}

#[derive(Default)]
struct Graph {
    nodes: Vec<Node>,
    /// By frame row: its start and end node (`u32::MAX`: none).
    start_of: Vec<u32>,
    end_of: Vec<u32>,
    edges: Vec<Edge>,
    edge_at: FxHashMap<(u32, u32), usize>,
    /// The row each edge's time is attributed to (`NO_ROW`: none), by edge.
    attributed: Vec<u32>,
    backwards: usize,
}

impl Graph {
    fn nodes_of(&self, row: usize) -> Option<(u32, u32)> {
        let (a, b) = (*self.start_of.get(row)?, *self.end_of.get(row)?);
        (a != u32::MAX && b != u32::MAX).then_some((a, b))
    }

    /// networkx `add_edge`: a second edge between the same nodes replaces
    /// the first's data in place (under HTA; the exact mode's graph never
    /// repeats a pair). Returns the edge's id.
    fn add(&mut self, mode: Mode, u: u32, v: u32, kind: EdgeKind, zero: bool) -> Option<usize> {
        if u == v {
            return None;
        }
        let span = self.nodes[v as usize].ts - self.nodes[u as usize].ts;
        let weight = if matches!(kind, EdgeKind::Dependency | EdgeKind::Sync) || zero {
            0
        } else {
            span
        };
        if mode == Mode::Exact && span < 0 {
            self.backwards += 1;
            return None;
        }
        let e = Edge {
            u,
            v,
            weight,
            search: weight,
            kind,
        };
        if mode.is_hta() {
            if let Some(&k) = self.edge_at.get(&(u, v)) {
                self.edges[k] = e;
                return Some(k);
            }
            self.edge_at.insert((u, v), self.edges.len());
        }
        self.edges.push(e);
        self.attributed.push(NO_ROW);
        Some(self.edges.len() - 1)
    }

    /// HTA's `_attribute_edge`.
    fn attribute(&mut self, k: usize, src_parent: Option<usize>) {
        let e = self.edges[k];
        if !matches!(e.kind, EdgeKind::Span | EdgeKind::KernelKernelDelay) {
            return;
        }
        let (src, dest) = (self.nodes[e.u as usize], self.nodes[e.v as usize]);
        let row = if e.kind == EdgeKind::KernelKernelDelay || src.is_start {
            Some(src.row)
        } else if !dest.is_start {
            Some(dest.row)
        } else {
            src_parent
        };
        if let Some(r) = row {
            self.attributed[k] = r as u32;
        }
    }
}

/// A frame's rows by `index` (the event's position in the file; the first
/// of HTA's duplicated rows), as a dense table.
struct Rows {
    by_index: Vec<u32>,
}

impl Rows {
    fn new(f: &Frame) -> Rows {
        let n = f.index.iter().copied().max().map_or(0, |m| m as usize + 1);
        let mut by_index = vec![u32::MAX; n];
        for r in (0..f.len()).rev() {
            by_index[f.index[r] as usize] = r as u32;
        }
        Rows { by_index }
    }
    fn at(&self, index: i64) -> Option<usize> {
        let r = *self.by_index.get(usize::try_from(index).ok()?)?;
        (r != u32::MAX).then_some(r as usize)
    }
}

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
    let mode = full.mode;
    let rows = Rows::new(full);
    let f = full;
    let s = &t.slices;
    let dur = |r: usize| f.end[r] - f.ts[r];
    let mut notes = Vec::new();

    // The window: HTA's annotation window (its rows' rounded times) or the
    // whole trace's first start to last end.
    let (lo, hi) = if *scope == Scope::Whole {
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
        for o in &occ {
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
    };

    // Clip (HTA: CPU rows starting in the window with a duration; device
    // rows whose launch is such a row; stream waits).
    let stream_wait_event = t.strings.lookup("Stream Wait Event");
    let is_stream_wait = |r: usize| stream_wait_event == Some(s.name[f.slice[r] as usize]);
    let node_cats: Vec<Option<crate::model::StrId>> = ["cpu_op", "cuda_runtime", "cuda_driver"]
        .iter()
        .map(|c| t.strings.lookup(c))
        .collect();
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
    // Nodes.
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
    match mode {
        Mode::Hta => {
            runtime_lock_edges(&mut g);
            call_stack_edges(t, f, &clipped, mode, &mut g);
        }
        Mode::Hta05 => call_stack_edges(t, f, &clipped, mode, &mut g),
        Mode::Exact => exact_call_stack_edges(t, f, &clipped, &mut g),
    }
    kernel_edges(t, f, &rows, &clipped, &in_clip, mode, args, &mut g)?;

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
    let path = longest_path(&g).ok_or("the dependency graph has a cycle")?;
    if path.is_empty() {
        return Err("nothing in this scope to build a critical path from".into());
    }
    // Breakdown.
    let mut edges = Vec::new();
    let mut by: FxHashMap<Bound, i64> = FxHashMap::default();
    let mut on_path: FxHashMap<u32, i64> = FxHashMap::default();
    for &k in &path {
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
    for &r in &events {
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
    Ok(CriticalPathReport {
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
    })
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

/// HTA's `compare_events`: the order of start and end events on a thread.
fn compare_events(x: &(i64, i64, i64, bool), y: &(i64, i64, i64, bool)) -> std::cmp::Ordering {
    use std::cmp::Ordering::*;
    // (index, time, dur, is_start)
    if x.0 == y.0 {
        return if x.3 { Less } else { Greater };
    }
    let r = x.1.cmp(&y.1);
    if r != Equal {
        return r;
    }
    if x.3 == y.3 {
        if x.3 {
            if x.2 == y.2 {
                x.0.cmp(&y.0)
            } else if x.2 < y.2 {
                Greater
            } else {
                Less
            }
        } else if x.2 == y.2 {
            y.0.cmp(&x.0)
        } else if x.2 < y.2 {
            Less
        } else {
            Greater
        }
    } else if x.2 > 0 && y.2 > 0 {
        if x.3 {
            Greater
        } else {
            Less
        }
    } else if x.2 == 0 && y.2 == 0 {
        x.0.cmp(&y.0)
    } else if x.3 {
        Less
    } else {
        Greater
    }
}

/// HTA 0.6's `_construct_graph_from_cuda_runtime_events`: calls holding
/// the runtime lock, on any thread, in node order. At each one's end, every
/// lock call started and not yet closed points to it (its own start as its
/// span, another's as a dependency), and the previous lock call's end
/// points to it: the lock passes from call to call in the order they end.
fn runtime_lock_edges(g: &mut Graph) {
    let mut open: Vec<u32> = Vec::new();
    let mut last: Option<u32> = None;
    for id in 0..g.nodes.len() as u32 {
        let n = g.nodes[id as usize];
        if !n.lock {
            continue;
        }
        if n.is_start {
            open.push(id);
        } else {
            while let Some(p) = open.pop() {
                if g.nodes[p as usize].row == n.row {
                    if let Some(k) = g.add(Mode::Hta, p, id, EdgeKind::Span, false) {
                        g.attribute(k, Some(n.row));
                    }
                } else {
                    g.add(Mode::Hta, p, id, EdgeKind::Dependency, false);
                }
            }
            if let Some(l) = last.filter(|&l| !g.nodes[l as usize].is_start) {
                g.add(Mode::Hta, l, id, EdgeKind::Dependency, false);
            }
        }
        last = Some(id);
    }
}

/// HTA 0.6's `_shares_cuda_runtime_lock`: two nodes in a row of lock calls
/// that are not one call's end and the next one's start; the lock edges
/// join them, the call stack does not.
fn shares_lock(g: &Graph, a: u32, b: u32) -> bool {
    let (a, b) = (g.nodes[a as usize], g.nodes[b as usize]);
    a.lock && b.lock && (a.is_start || !b.is_start)
}

/// HTA 0.6 walks the backward thread's ops as if on the forward thread
/// (`_get_fwd_tid` / `_get_bwd_tid`): the one thread with a `cpu_op` or
/// `user_annotation` whose name contains "forward", and the one with one
/// containing "autograd", when each is a single thread and they differ.
fn backward_thread_remap(t: &Trace, f: &Frame, clipped: &[usize]) -> Option<(LaneId, LaneId)> {
    let s = &t.slices;
    let cats: Vec<_> = ["cpu_op", "user_annotation"]
        .iter()
        .filter_map(|c| t.strings.lookup(c))
        .collect();
    let tid_of = |word: &str| -> Option<LaneId> {
        let mut tids: Vec<LaneId> = clipped
            .iter()
            .filter(|&&r| {
                let i = f.slice[r] as usize;
                cats.contains(&s.cat[i]) && t.str(s.name[i]).contains(word)
            })
            .map(|&r| t.track_of(f.slice[r] as usize).tid)
            .collect();
        tids.sort_unstable();
        tids.dedup();
        (tids.len() == 1).then(|| tids[0])
    };
    let (fwd, bwd) = (tid_of("forward")?, tid_of("autograd")?);
    (fwd != bwd).then_some((bwd, fwd))
}

/// Per CPU thread: HTA's call stack (`CallStackGraph`) and its traversal
/// (`_construct_graph_from_call_stack`).
fn call_stack_edges(t: &Trace, f: &Frame, clipped: &[usize], mode: Mode, g: &mut Graph) {
    let remap = if mode == Mode::Hta {
        backward_thread_remap(t, f, clipped)
    } else {
        None
    };
    let mut threads: FxHashMap<(LaneId, LaneId), Vec<usize>> = FxHashMap::default();
    for &r in clipped {
        let tr = t.track_of(f.slice[r] as usize);
        let pid = t.processes[tr.process.0 as usize].pid;
        let tid = match remap {
            Some((bwd, fwd)) if tr.tid == bwd => fwd,
            _ => tr.tid,
        };
        threads.entry((pid, tid)).or_default().push(r);
    }
    let mut keys: Vec<(LaneId, LaneId)> = threads.keys().copied().collect();
    keys.sort();
    const NONE: u32 = u32::MAX;
    for key in keys {
        // Rows of the thread in index order; a row's local id is its position.
        let rows = &threads[&key];
        let cpu = match mode {
            // CallGraph: a thread with a stream > 0 is a GPU stream; one
            // whose streams are not all < 0 is of unknown type; neither
            // builds a CPU stack.
            Mode::Hta | Mode::Hta05 => rows.iter().all(|&r| f.lane[r] < 0),
            Mode::Exact => rows.iter().all(|&r| !f.is_device(r)),
        };
        if !cpu {
            continue;
        }
        // (index, time, dur, is_start, local id)
        let mut ev: Vec<(i64, i64, i64, bool, u32)> = Vec::with_capacity(rows.len() * 2);
        for (k, &r) in rows.iter().enumerate() {
            let d = (f.end[r] - f.ts[r]).max(0);
            ev.push((f.index[r], f.ts[r], d, true, k as u32));
            ev.push((f.index[r], f.ts[r] + d, d, false, k as u32));
        }
        crate::sort::by(&mut ev, &|x, y| {
            compare_events(&(x.0, x.1, x.2, x.3), &(y.0, y.1, y.2, y.3))
        });
        // The tree as first-child / next-sibling links; the root is `n`.
        let n = rows.len();
        let root = n as u32;
        let mut parent = vec![NONE; n + 1];
        let mut first_child = vec![NONE; n + 1];
        let mut last_child = vec![NONE; n + 1];
        let mut next_sibling = vec![NONE; n + 1];
        let mut stack: Vec<u32> = Vec::new();
        for e in &ev {
            let id = e.4;
            if e.3 {
                // A node seen twice is ignored (HTA logs it).
                if parent[id as usize] != NONE {
                    continue;
                }
                let p = stack.last().copied().unwrap_or(root);
                parent[id as usize] = p;
                match last_child[p as usize] {
                    NONE => first_child[p as usize] = id,
                    l => next_sibling[l as usize] = id,
                }
                last_child[p as usize] = id;
                stack.push(id);
            } else {
                stack.pop();
            }
        }
        let row = |id: u32| (id != root && id != NONE).then(|| rows[id as usize]);
        // Depth-first, enter and exit.
        let mut walk = StackWalk::default();
        let mut todo: Vec<(u32, bool)> = vec![(root, true)];
        while let Some((id, entering)) = todo.pop() {
            let parent_row = row(parent[id as usize]);
            if entering {
                todo.push((id, false));
                let mut kids = Vec::new();
                let mut c = first_child[id as usize];
                while c != NONE {
                    kids.push(c);
                    c = next_sibling[c as usize];
                }
                todo.extend(kids.into_iter().rev().map(|k| (k, true)));
                if let Some(r) = row(id) {
                    walk.enter(g, mode, r, parent_row);
                }
            } else if let Some(r) = row(id) {
                walk.exit(g, mode, r, parent_row);
            }
        }
    }
}

/// The exact mode's call stacks: each thread's rows in start order (longest
/// first at a tie), nested by containment, walked in one pass — the same
/// enter/exit sequence as the depth-first walk of HTA's tree.
fn exact_call_stack_edges(t: &Trace, f: &Frame, clipped: &[usize], g: &mut Graph) {
    let mut threads: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
    for &r in clipped {
        if !f.is_device(r) {
            threads
                .entry(t.slices.track[f.slice[r] as usize].0)
                .or_default()
                .push(r);
        }
    }
    let mut keys: Vec<u32> = threads.keys().copied().collect();
    keys.sort_unstable();
    for key in keys {
        let mut rows = threads.remove(&key).unwrap_or_default();
        crate::sort::unstable_by_key(&mut rows, &|&r| {
            (f.ts[r], std::cmp::Reverse(f.end[r]), f.index[r])
        });
        let mut walk = StackWalk::default();
        let mut stack: Vec<usize> = Vec::new();
        for r in rows {
            while let Some(&top) = stack.last() {
                if f.end[r] <= f.end[top] && f.ts[r] >= f.ts[top] {
                    break;
                }
                stack.pop();
                walk.exit(g, Mode::Exact, top, stack.last().copied());
            }
            walk.enter(g, Mode::Exact, r, stack.last().copied());
            stack.push(r);
        }
        while let Some(top) = stack.pop() {
            walk.exit(g, Mode::Exact, top, stack.last().copied());
        }
    }
}

/// HTA's `enter_func` / `exit_func` state for one thread.
#[derive(Default)]
struct StackWalk {
    last_node: Option<u32>,
    last_high: Option<u32>,
    depth: i64,
    last_parent: Option<usize>,
}

impl StackWalk {
    fn enter(&mut self, g: &mut Graph, mode: Mode, r: usize, parent: Option<usize>) {
        let Some((start, _)) = g.nodes_of(r) else {
            return;
        };
        if mode == Mode::Hta {
            // 0.6: the last node links to this one wherever it is (a
            // dependency from a top-level op's end), unless the lock edges
            // join them.
            if let Some(l) = self.last_node.filter(|&l| !shares_lock(g, l, start)) {
                let kind = if self.depth == 0 {
                    EdgeKind::Dependency
                } else {
                    EdgeKind::Span
                };
                if let Some(k) = g.add(mode, l, start, kind, false) {
                    g.attribute(k, self.last_parent);
                }
            }
            self.last_node = Some(start);
            self.last_parent = parent;
            self.depth += 1;
            return;
        }
        if self.depth == 0 {
            if let Some(h) = self.last_high {
                g.add(mode, h, start, EdgeKind::Dependency, false);
            }
        }
        self.depth += 1;
        if let Some(l) = self.last_node {
            if let Some(k) = g.add(mode, l, start, EdgeKind::Span, false) {
                g.attribute(k, self.last_parent);
            }
        }
        self.last_node = Some(start);
        self.last_parent = parent;
    }

    fn exit(&mut self, g: &mut Graph, mode: Mode, r: usize, parent: Option<usize>) {
        let Some((start, end)) = g.nodes_of(r) else {
            return;
        };
        if mode == Mode::Hta {
            if let Some(l) = self.last_node.filter(|&l| !shares_lock(g, l, end)) {
                let zero = g.nodes[start as usize].blocking;
                if let Some(k) = g.add(mode, l, end, EdgeKind::Span, zero) {
                    g.attribute(k, self.last_parent);
                }
            }
            self.last_node = Some(end);
            self.last_parent = parent;
            self.depth -= 1;
            return;
        }
        self.depth -= 1;
        if let Some(l) = self.last_node {
            let zero = g.nodes[start as usize].blocking;
            if let Some(k) = g.add(mode, l, end, EdgeKind::Span, zero) {
                g.attribute(k, self.last_parent);
            }
        }
        if self.depth == 0 {
            self.last_node = None;
            self.last_high = Some(end);
        } else {
            self.last_node = Some(end);
            self.last_parent = parent;
        }
    }
}

/// HTA's queue length at each launch and device row (`TraceCounters`),
/// by `index`, over the whole frame; `None` where HTA has no series (its
/// critical path then fails indexing it) or its length check fails.
fn queue_at(t: &Trace, f: &Frame) -> Option<FxHashMap<i64, i64>> {
    let by_lane = super::hta_queue::hta_queue_events(t, f)?;
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
fn launches(t: &Trace, f: &Frame, rows: &Rows) -> Vec<(usize, i64, u32, usize)> {
    let names: Vec<_> = super::hta_queue::hta_queue_names(f.mode)
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

fn arg_i64(args: &str, key: &str) -> Option<i64> {
    let v: serde_json::Value = serde_json::from_str(args).ok()?;
    v.get(key)?.as_i64()
}

#[allow(clippy::too_many_arguments)]
fn kernel_edges(
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
    let id = |n: &str| t.strings.lookup(n);
    let (event_sync, context_sync, stream_sync, stream_wait) = (
        id("Event Sync"),
        id("Context Sync"),
        id("Stream Sync"),
        id("Stream Wait Event"),
    );
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
            (f.is_device(r) || name(r) == event_sync || name(r) == context_sync)
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
    // cudaEventRecord correlation → index of the launch before it.
    let mut record_prev_launch: FxHashMap<i64, i64> = FxHashMap::default();
    if let Some(record) = id("cudaEventRecord") {
        let mut stream_of_record: FxHashMap<i64, (i64, u32)> = FxHashMap::default();
        for (&r, &(stream, corr)) in &sync_args {
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
        for l in &launch_list {
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
    // cudaStreamWaitEvent call index → index of the next launch.
    let mut wait_next_launch: FxHashMap<i64, i64> = FxHashMap::default();
    if let Some(wait_call) = id("cudaStreamWaitEvent") {
        // Launches per (thread, stream), in start order.
        let mut by_thread: FxHashMap<(u32, i64), Vec<(i64, usize)>> = FxHashMap::default();
        for l in &launch_list {
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

    let mut last_node: FxHashMap<i64, u32> = FxHashMap::default();
    let mut last_order: Vec<i64> = Vec::new();
    let mut kernel_sync: FxHashMap<i64, i64> = FxHashMap::default();
    for &r in &kernels {
        if is_sync(r) {
            let n = name(r);
            if n == stream_wait || n == event_sync {
                let Some(&(_, record_corr)) = sync_args.get(&r) else {
                    continue;
                };
                let Some(&prev_launch) = record_prev_launch.get(&record_corr) else {
                    continue;
                };
                let Some(src_kernel) = rows.at(prev_launch).map(|l| f.index_corr[l]) else {
                    continue;
                };
                if n == stream_wait {
                    let Some(&next) = wait_next_launch.get(&f.index_corr[r]) else {
                        continue;
                    };
                    if let Some(l) = rows.at(next) {
                        kernel_sync.insert(f.index_corr[l], src_kernel);
                    }
                } else if let (Some(k), Some(call)) =
                    (rows.at(src_kernel), rows.at(f.index_corr[r]))
                {
                    if let (Some((_, kend)), Some((_, cend))) = (g.nodes_of(k), g.nodes_of(call)) {
                        g.add(mode, kend, cend, EdgeKind::Sync, false);
                    }
                }
                continue;
            }
            if n != stream_sync && n != context_sync {
                continue;
            }
            let Some(call) = rows.at(f.index_corr[r]) else {
                continue;
            };
            let Some((_, call_end)) = g.nodes_of(call) else {
                continue;
            };
            let targets: Vec<u32> = if n == context_sync {
                last_order.iter().map(|l| last_node[l]).collect()
            } else {
                last_node.get(&f.lane[r]).copied().into_iter().collect()
            };
            for k in targets {
                g.add(mode, k, call_end, EdgeKind::Sync, false);
            }
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
        if let Some(src) = kernel_sync.remove(&f.index[r]) {
            if let Some((_, e)) = rows.at(src).and_then(|k| g.nodes_of(k)) {
                g.add(mode, e, start, EdgeKind::Sync, false);
                sync_end = Some(e);
            }
        }
        let runtime = rows.at(f.index_corr[r]).filter(|_| f.index_corr[r] > 0);
        let prev = last_node.get(&stream).copied();
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
        if !last_node.contains_key(&stream) {
            last_order.push(stream);
        }
        last_node.insert(stream, end);
    }
    if mode == Mode::Exact {
        exact_sync_edges(t, f, rows, clipped, in_clip, &kernels, g);
    }
    Ok(())
}

/// Exact mode's CPU waits: a blocking sync call (device, stream or event
/// synchronize, a blocking copy) ends after the device work that finished
/// last before it returned, among the work launched before it began.
fn exact_sync_edges(
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

/// networkx's `dag_longest_path` (topological generations in node order,
/// the first best predecessor, the first best end), as the path's edge
/// ids; `None` on a cycle.
fn longest_path(g: &Graph) -> Option<Vec<u32>> {
    let n = g.nodes.len();
    let succ = Adjacency::build(n, &g.edges, |e| e.u);
    let pred = Adjacency::build(n, &g.edges, |e| e.v);
    let mut indeg: Vec<u32> = (0..n as u32).map(|v| pred.of(v).len() as u32).collect();
    let mut order: Vec<u32> = Vec::with_capacity(n);
    let mut gen: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
    while !gen.is_empty() {
        let mut next = Vec::new();
        for &v in &gen {
            for &k in succ.of(v) {
                let c = g.edges[k as usize].v;
                indeg[c as usize] -= 1;
                if indeg[c as usize] == 0 {
                    next.push(c);
                }
            }
        }
        order.extend_from_slice(&gen);
        gen = next;
    }
    if order.len() != n {
        return None;
    }
    // (length, best incoming edge or NONE)
    const NONE: u32 = u32::MAX;
    let mut dist: Vec<(i64, u32)> = vec![(0, NONE); n];
    for &v in &order {
        let mut best: Option<(i64, u32)> = None;
        for &k in pred.of(v) {
            let e = &g.edges[k as usize];
            let d = dist[e.u as usize].0 + e.search;
            if best.is_none_or(|b| d > b.0) {
                best = Some((d, k));
            }
        }
        dist[v as usize] = match best {
            Some(b) if b.0 >= 0 => b,
            _ => (0, NONE),
        };
    }
    let mut end = *order.first()?;
    for &v in &order {
        if dist[v as usize].0 > dist[end as usize].0 {
            end = v;
        }
    }
    let mut path = Vec::new();
    let mut v = end;
    while dist[v as usize].1 != NONE {
        let k = dist[v as usize].1;
        path.push(k);
        v = g.edges[k as usize].u;
    }
    path.reverse();
    Some(path)
}

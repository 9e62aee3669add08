//! The dependency graph: nodes (an event's start and end), weighted edges
//! added the way networkx's `add_edge` does under HTA, edges attributed to
//! rows, and the longest path through it; the calls its rules name.

use rustc_hash::FxHashMap;

use crate::analysis::frame::{Frame, Mode, NO_ROW};

use super::report::EdgeKind;

pub(super) const BLOCKING_SYNC_CALLS: [&str; 6] = [
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventQuery",
    "cudaEventSynchronize",
    "cudaMemcpy",
    "cudaMemcpyAsync",
];

/// HTA 0.6's `CUDA_RUNTIME_EVENTS`: calls that hold the CUDA runtime's
/// lock, so only one of them, on any thread, makes progress at a time.
pub(super) const RUNTIME_LOCK_CALLS: [&str; 3] =
    ["cudaHostAlloc", "cudaLaunchKernel", "cudaMemcpyAsync"];

/// HTA 0.6's `KERNEL_KERNEL_DELAY_THRESHOLD_US`: a gap between kernels on a
/// stream this long or longer is taken for a dependency it cannot see, not
/// kernel–kernel overhead.
pub(super) const KERNEL_KERNEL_DELAY_THRESHOLD_NS: i64 = 1_500_000;

#[derive(Clone, Copy, Debug)]
pub(super) struct Node {
    pub(super) row: usize,
    pub(super) ts: i64,
    pub(super) is_start: bool,
    pub(super) blocking: bool,
    /// HTA 0.6: a call that takes the CUDA runtime's lock
    /// ([`RUNTIME_LOCK_CALLS`]).
    pub(super) lock: bool,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Edge {
    pub(super) u: u32,
    pub(super) v: u32,
    /// The edge's own weight (HTA's `CPEdge.weight`), reported.
    pub(super) weight: i64,
    /// The weight the search uses (negative ones zeroed under HTA).
    pub(super) search: i64,
    pub(super) kind: EdgeKind,
}

/// Edges by node, in insertion order (compressed rows).
pub(super) struct Adjacency {
    pub(super) start: Vec<u32>,
    pub(super) edge: Vec<u32>,
}

impl Adjacency {
    pub(super) fn build(n: usize, edges: &[Edge], key: impl Fn(&Edge) -> u32) -> Adjacency {
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
    pub(super) fn of(&self, v: u32) -> &[u32] {
        &self.edge[self.start[v as usize] as usize..self.start[v as usize + 1] as usize]
    }
}

#[derive(Default)]
pub(super) struct Graph {
    pub(super) nodes: Vec<Node>,
    /// By frame row: its start and end node (`u32::MAX`: none).
    pub(super) start_of: Vec<u32>,
    pub(super) end_of: Vec<u32>,
    pub(super) edges: Vec<Edge>,
    pub(super) edge_at: FxHashMap<(u32, u32), usize>,
    /// The row each edge's time is attributed to (`NO_ROW`: none), by edge.
    pub(super) attributed: Vec<u32>,
    pub(super) backwards: usize,
}

impl Graph {
    pub(super) fn nodes_of(&self, row: usize) -> Option<(u32, u32)> {
        let (a, b) = (*self.start_of.get(row)?, *self.end_of.get(row)?);
        (a != u32::MAX && b != u32::MAX).then_some((a, b))
    }

    /// networkx `add_edge`: a second edge between the same nodes replaces
    /// the first's data in place (under HTA; the exact mode's graph never
    /// repeats a pair). Returns the edge's id.
    pub(super) fn add(
        &mut self,
        mode: Mode,
        u: u32,
        v: u32,
        kind: EdgeKind,
        zero: bool,
    ) -> Option<usize> {
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
    pub(super) fn attribute(&mut self, k: usize, src_parent: Option<usize>) {
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
pub(super) struct Rows {
    pub(super) by_index: Vec<u32>,
}

impl Rows {
    pub(super) fn new(f: &Frame) -> Rows {
        let n = f.index.iter().copied().max().map_or(0, |m| m as usize + 1);
        let mut by_index = vec![u32::MAX; n];
        for r in (0..f.len()).rev() {
            by_index[f.index[r] as usize] = r as u32;
        }
        Rows { by_index }
    }
    pub(super) fn at(&self, index: i64) -> Option<usize> {
        let r = *self.by_index.get(usize::try_from(index).ok()?)?;
        (r != u32::MAX).then_some(r as usize)
    }
}

/// HTA's `compare_events`: the order of start and end events on a thread.
pub(super) fn compare_events(
    x: &(i64, i64, i64, bool),
    y: &(i64, i64, i64, bool),
) -> std::cmp::Ordering {
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

/// networkx's `dag_longest_path` (topological generations in node order,
/// the first best predecessor, the first best end), as the path's edge
/// ids; `None` on a cycle.
pub(super) fn longest_path(g: &Graph) -> Option<Vec<u32>> {
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
    let Some(&first) = order.first() else {
        return Some(Vec::new());
    };
    let mut end = first;
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

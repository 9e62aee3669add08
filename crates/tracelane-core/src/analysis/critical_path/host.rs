//! The CPU side of the graph: each thread's call stack (HTA's walk, or the
//! exact one), the calls that hold the CUDA runtime's lock chained across
//! threads, the backward pass's thread remapped.

use rustc_hash::FxHashMap;

use crate::analysis::frame::{Frame, Mode};
use crate::model::{LaneId, Trace};

use super::graph::{compare_events, Graph};
use super::report::EdgeKind;

/// HTA 0.6's `_construct_graph_from_cuda_runtime_events`: calls holding
/// the runtime lock, on any thread, in node order. At each one's end, every
/// lock call started and not yet closed points to it (its own start as its
/// span, another's as a dependency), and the previous lock call's end
/// points to it: the lock passes from call to call in the order they end.
pub(super) fn runtime_lock_edges(g: &mut Graph) {
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
pub(super) fn shares_lock(g: &Graph, a: u32, b: u32) -> bool {
    let (a, b) = (g.nodes[a as usize], g.nodes[b as usize]);
    a.lock && b.lock && (a.is_start || !b.is_start)
}

/// HTA 0.6 walks the backward thread's ops as if on the forward thread
/// (`_get_fwd_tid` / `_get_bwd_tid`): the one thread with a `cpu_op` or
/// `user_annotation` whose name contains "forward", and the one with one
/// containing "autograd", when each is a single thread and they differ.
pub(super) fn backward_thread_remap(
    t: &Trace,
    f: &Frame,
    clipped: &[usize],
) -> Option<(LaneId, LaneId)> {
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
pub(super) fn call_stack_edges(t: &Trace, f: &Frame, clipped: &[usize], mode: Mode, g: &mut Graph) {
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
pub(super) fn exact_call_stack_edges(t: &Trace, f: &Frame, clipped: &[usize], g: &mut Graph) {
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
pub(super) struct StackWalk {
    pub(super) last_node: Option<u32>,
    pub(super) last_high: Option<u32>,
    pub(super) depth: i64,
    pub(super) last_parent: Option<usize>,
}

impl StackWalk {
    pub(super) fn enter(&mut self, g: &mut Graph, mode: Mode, r: usize, parent: Option<usize>) {
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

    pub(super) fn exit(&mut self, g: &mut Graph, mode: Mode, r: usize, parent: Option<usize>) {
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

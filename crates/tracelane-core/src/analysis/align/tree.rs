//! One trace's op tree inside a scope: the nodes the alignment pairs.
//!
//! Nodes are host slices of three kinds — ATen / framework ops (`cpu_op`),
//! annotations (`record_function`, `ProfilerStep#N`) and, when both traces
//! recorded them, `nn.Module:` scopes — each under its nearest such
//! ancestor on its thread; other host slices (Python frames, runtime calls)
//! are not nodes, their descendants hang from the node above them. In an
//! XLA profile the device ops are nodes too and the runtime's TraceMes
//! are not (`xla_nodes.rs`).
//!
//! The root is the scope. Its children are the scope's occurrences (each
//! `ProfilerStep#N` or region slice) or, for the whole trace and ranges,
//! the top-level nodes starting in it. A top-level node of another thread
//! that starts inside an occurrence or a top-level annotation (the autograd
//! thread's backward ops inside a step) is a child of it, in start order
//! with its own children: on one machine backward runs on the step's
//! thread, on another on its own.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::analysis::scope::{Occurrence, Scope};
use crate::category::Category;
use crate::model::{Trace, NO_SLICE};

use super::keys::Keys;
use super::xla_nodes::{is_runtime_traceme, XlaOps, NOT_OP};

/// No node (a slice outside the scope).
pub(super) const NO_NODE: u32 = u32::MAX;

/// The nodes in preorder: node 0 is the root (the scope), a node's subtree
/// is `n .. n + size[n]`.
pub(super) struct OpTree {
    pub(super) slice: Vec<u32>,
    pub(super) key: Vec<u32>,
    pub(super) parent: Vec<u32>,
    pub(super) size: Vec<u32>,
    /// Node `n`'s children are `kids[first[n] .. first[n + 1]]`, in start
    /// order.
    pub(super) first: Vec<u32>,
    pub(super) kids: Vec<u32>,
    /// For each slice, the nearest node slice at or above it on its thread
    /// ([`NO_SLICE`] if none).
    pub(super) anc: Vec<u32>,
    /// For each slice that is a node, its node ([`NO_NODE`] otherwise).
    pub(super) node_of: Vec<u32>,
    /// The scope's windows (what unlinked device work must start in).
    pub(super) windows: Vec<(i64, i64)>,
    /// The root's host time: the occurrences' durations, or the span of
    /// the top-level nodes.
    pub(super) root_host_ns: i64,
    /// An XLA trace's ops' labels (`xla_nodes.rs`) by slice: an index in
    /// `label_names`, [`NOT_OP`] for others; empty for other traces.
    pub(super) labels: Vec<u32>,
    pub(super) label_names: Vec<String>,
    /// How many devices ran an XLA trace's device ops (0: none, or not XLA).
    pub(super) xla_devices: usize,
    /// The one device whose work the tree holds, when it was narrowed
    /// to one (`alignment.rs`; an XLA trace's ops too:
    /// [`XlaOps::keep_device`]): other devices' work is left out.
    pub(super) device: Option<i64>,
    /// Where only the XLA ops' own events are device work, which slices
    /// are ([`XlaOps::op_event`]); empty otherwise.
    pub(super) op_event: Vec<bool>,
}

impl OpTree {
    /// A tree over a trace's slices (`anc` has one entry a slice) before
    /// its nodes are added.
    fn without_nodes(
        anc: Vec<u32>,
        windows: Vec<(i64, i64)>,
        root_host_ns: i64,
        xla: Option<&XlaOps>,
    ) -> OpTree {
        OpTree {
            slice: Vec::new(),
            key: Vec::new(),
            parent: Vec::new(),
            size: Vec::new(),
            first: Vec::new(),
            kids: Vec::new(),
            node_of: vec![NO_NODE; anc.len()],
            anc,
            windows,
            root_host_ns,
            labels: Default::default(),
            label_names: Vec::new(),
            xla_devices: xla.map_or(0, |x| x.devices.len()),
            device: xla.and_then(|x| x.kept),
            op_event: Vec::new(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.slice.len()
    }
    pub(super) fn children(&self, n: u32) -> &[u32] {
        &self.kids[self.first[n as usize] as usize..self.first[n as usize + 1] as usize]
    }
    /// The node a slice's work belongs to: the node at or above it.
    pub(super) fn node_above(&self, slice: u32) -> u32 {
        match self.anc.get(slice as usize) {
            Some(&a) if a != NO_SLICE => self.node_of[a as usize],
            _ => NO_NODE,
        }
    }
}

/// Does this trace record `nn.Module:` scopes (Python frames with stacks)?
pub(super) fn has_module_scopes(t: &Trace) -> bool {
    (0..t.slices.len()).any(|s| {
        t.slices.category[s] == Category::PythonFunction
            && t.slice_name(s).starts_with("nn.Module: ")
    })
}

fn is_node(t: &Trace, s: usize, modules: bool) -> bool {
    t.on_host(s)
        && match t.slices.category[s] {
            Category::CpuOp => true,
            Category::UserAnnotation => t.xla.is_none() || !is_runtime_traceme(t.slice_name(s)),
            Category::PythonFunction => modules && t.slice_name(s).starts_with("nn.Module: "),
            _ => false,
        }
}

/// The op tree of `t` inside `occurrences` (of `scope`), its keys
/// interned in `keys`; `xla`: its XLA ops ([`XlaOps::of`]).
pub(super) fn build(
    t: &Trace,
    scope: &Scope,
    occurrences: Vec<Occurrence>,
    keys: &mut Keys,
    modules: bool,
    xla: Option<XlaOps>,
) -> OpTree {
    let n = t.slices.len();
    let mut kept: Vec<bool> = (0..n).map(|s| is_node(t, s, modules)).collect();
    for o in &occurrences {
        if o.slice != NO_SLICE {
            kept[o.slice as usize] = true;
        }
    }
    for &first in xla.iter().flat_map(|x| &x.device) {
        kept[first as usize] = true;
    }
    // Parents come before their children in slice order (nesting is
    // resolved over rows sorted by lane and start).
    let mut anc = vec![NO_SLICE; n];
    for s in 0..n {
        anc[s] = if kept[s] {
            s as u32
        } else {
            match t.slices.parent[s] {
                NO_SLICE => NO_SLICE,
                p => anc[p as usize],
            }
        };
    }
    let launch_parent = xla
        .as_ref()
        .map(|x| x.hang(t, &mut anc))
        .unwrap_or_default();
    let kept_parent = |s: usize| match launch_parent.get(s) {
        Some(&p) if p != NOT_OP => p,
        _ => match t.slices.parent[s] {
            NO_SLICE => NO_SLICE,
            p => anc[p as usize],
        },
    };
    let (first, kids) = kept_children(&kept, &kept_parent);
    let start = |s: u32| t.slices.start_ns[s as usize];
    let mut tops: Vec<u32> = (0..n as u32)
        .filter(|&s| kept[s as usize] && kept_parent(s as usize) == NO_SLICE)
        .collect();
    crate::sort::by_key(&mut tops, &|&s| (start(s), s));

    let windowed = occurrences.iter().all(|o| o.slice == NO_SLICE);
    let windows: Vec<(i64, i64)> = occurrences.iter().map(|o| (o.start_ns, o.end_ns)).collect();
    // The root's children, and the containers other threads' top-level
    // nodes join.
    let (roots, containers): (Vec<u32>, Vec<u32>) = if windowed {
        let inside = |s: u32| windows.iter().any(|&(a, b)| start(s) >= a && start(s) < b);
        let roots: Vec<u32> = tops.iter().copied().filter(|&s| inside(s)).collect();
        // An op XLA:CPU runs is an annotation, not a container: another
        // thread's op running beside it is not inside it.
        let is_op = |s: u32| xla.as_ref().is_some_and(|x| x.key_of(s).is_some());
        let containers = roots
            .iter()
            .copied()
            .filter(|&s| t.slices.category[s as usize] == Category::UserAnnotation && !is_op(s))
            .collect();
        (roots, containers)
    } else {
        let occ: Vec<u32> = occurrences.iter().map(|o| o.slice).collect();
        (occ.clone(), occ)
    };
    let joinable = match &xla {
        Some(x) => x.joinable(&tops, windowed),
        None => tops.clone(),
    };
    let extra = join_other_threads(t, &joinable, &containers);
    let mut joined = vec![false; n];
    for &(_, s) in &extra {
        joined[s as usize] = true;
    }
    let roots: Vec<u32> = roots.into_iter().filter(|&s| !joined[s as usize]).collect();
    // Each container's run of joined nodes in `extra` (a few containers,
    // millions of nodes: looked up by container, not searched per node).
    let mut joined_of: FxHashMap<u32, (usize, usize)> = FxHashMap::default();
    let mut has_joined = vec![false; n];
    for (k, &(c, _)) in extra.iter().enumerate() {
        joined_of.entry(c).or_insert((k, k)).1 = k + 1;
        has_joined[c as usize] = true;
    }

    let root_host_ns = if windowed {
        let lo = roots.iter().map(|&s| start(s)).min().unwrap_or(0);
        let hi = roots
            .iter()
            .map(|&s| t.slices.end_ns(s as usize))
            .max()
            .unwrap_or(0);
        hi - lo
    } else {
        occurrences.iter().map(|o| o.dur_ns()).sum()
    };

    // Preorder: a stack of slices to visit (NO_SLICE is the root).
    let mut tree = OpTree::without_nodes(anc, windows, root_host_ns, xla.as_ref());
    let root_key = keys.of(&scope.label(), Category::UserAnnotation);
    let mut stack: Vec<(u32, u32)> = vec![(NO_SLICE, NO_NODE)];
    let mut children: Vec<u32> = Vec::new();
    // Whether each node is in a backward pass (autograd's nodes and what
    // they call).
    let mut backward: Vec<bool> = Vec::new();
    while let Some((s, parent)) = stack.pop() {
        let node = tree.slice.len() as u32;
        tree.slice.push(s);
        tree.parent.push(parent);
        if s == NO_SLICE {
            backward.push(false);
            tree.key.push(root_key);
            children.clone_from(&roots);
        } else {
            let bwd = backward[parent as usize] || is_autograd_node(t.slice_name(s as usize));
            backward.push(bwd);
            tree.key.push(node_key(t, s, xla.as_ref(), keys, bwd));
            tree.node_of[s as usize] = node;
            children.clear();
            children.extend_from_slice(
                &kids[first[s as usize] as usize..first[s as usize + 1] as usize],
            );
            let before = children.len();
            if has_joined[s as usize] {
                let (lo, hi) = joined_of[&s];
                children.extend(extra[lo..hi].iter().map(|&(_, c)| c));
            }
            // Joined nodes, and an XLA trace's device ops beside host
            // nodes, come from other lanes: in start order.
            if children.len() > before || xla.is_some() {
                crate::sort::by_key(&mut children, &|&c| (start(c), c));
            }
        }
        stack.extend(children.iter().rev().map(|&c| (c, node)));
    }
    // The ops' names are the tree's labels now (moved: a vector per slice).
    if let Some(x) = xla {
        tree.op_event = x.op_event;
        tree.labels = x.name_of;
        tree.label_names = x.names.into_iter().map(|n| n.1).collect();
    }
    finish(&mut tree);
    tree
}

/// The key of slice `s`'s node (`backward`: in a backward pass).
fn node_key(t: &Trace, s: u32, xla: Option<&XlaOps>, keys: &mut Keys, backward: bool) -> u32 {
    let name = t.slice_name(s as usize);
    if let Some(x) = xla {
        if x.is_step(s) {
            return keys.of("ProfilerStep#0", Category::UserAnnotation);
        }
        // An XLA op pairs by its name only, as an ATen op does.
        if let Some(key) = x.key_of(s) {
            return keys.of(key, Category::CpuOp);
        }
        // A jitted call is a call, not a region of ops: its ops run on
        // other threads or the device.
        if is_jitted_call(name) {
            return keys.of(name, Category::CpuOp);
        }
    }
    let category = t.slices.category[s as usize];
    if backward {
        keys.of_backward(name, category)
    } else {
        keys.of(name, category)
    }
}

/// What PyTorch's autograd engine records around each backward node it
/// runs (`torch/csrc/autograd/engine.cpp`: `evaluate_function` names its
/// `RECORD_FUNCTION` `autograd::engine::evaluate_function: <Node>`).
fn is_autograd_node(name: &str) -> bool {
    name.starts_with("autograd::engine::evaluate_function: ")
}

fn is_jitted_call(name: &str) -> bool {
    name.starts_with("PjitFunction(") || name.starts_with("PmapFunction(")
}

/// Every kept slice's kept children, in slice order: `kids[first[s] ..
/// first[s + 1]]`.
fn kept_children(kept: &[bool], kept_parent: &dyn Fn(usize) -> u32) -> (Vec<u32>, Vec<u32>) {
    let n = kept.len();
    let mut first = vec![0u32; n + 1];
    for (s, _) in kept.iter().enumerate().filter(|x| *x.1) {
        let p = kept_parent(s);
        if p != NO_SLICE {
            first[p as usize + 1] += 1;
        }
    }
    for s in 0..n {
        first[s + 1] += first[s];
    }
    let mut fill = first.clone();
    let mut kids = vec![0u32; first[n] as usize];
    for (s, _) in kept.iter().enumerate().filter(|x| *x.1) {
        let p = kept_parent(s);
        if p != NO_SLICE {
            kids[fill[p as usize] as usize] = s as u32;
            fill[p as usize] += 1;
        }
    }
    (first, kids)
}

/// Top-level nodes of other threads that start inside a container (an
/// occurrence or a top-level annotation): `(container, node)` sorted by
/// container then start. `tops` are in start order.
fn join_other_threads(t: &Trace, tops: &[u32], containers: &[u32]) -> Vec<(u32, u32)> {
    let start = |s: u32| t.slices.start_ns[s as usize];
    let mut by_start: Vec<u32> = containers.to_vec();
    crate::sort::by_key(&mut by_start, &|&s| (start(s), s));
    let is_container: FxHashSet<u32> = containers.iter().copied().collect();
    let mut out = Vec::new();
    // The containers starting at or before the current top's start.
    let mut k = 0;
    for &s in tops {
        if is_container.contains(&s) {
            continue;
        }
        let ts = start(s);
        while k < by_start.len() && start(by_start[k]) <= ts {
            k += 1;
        }
        // The latest-starting container on another thread still open at
        // `ts` (a few back at most: containers rarely overlap).
        let found = by_start[..k].iter().rev().take(64).find(|&&c| {
            t.slices.track[c as usize] != t.slices.track[s as usize]
                && t.slices.end_ns(c as usize) > ts
        });
        if let Some(&c) = found {
            out.push((c, s));
        }
    }
    crate::sort::by_key(&mut out, &|&(c, s)| (c, start(s), s));
    out
}

/// Subtree sizes and the children index, from the parents (preorder).
fn finish(tree: &mut OpTree) {
    let n = tree.len();
    tree.size = vec![1; n];
    for k in (1..n).rev() {
        let p = tree.parent[k] as usize;
        tree.size[p] += tree.size[k];
    }
    tree.first = vec![0; n + 1];
    for k in 1..n {
        tree.first[tree.parent[k] as usize + 1] += 1;
    }
    for k in 0..n {
        tree.first[k + 1] += tree.first[k];
    }
    let mut fill = tree.first.clone();
    tree.kids = vec![0; n.saturating_sub(1)];
    for k in 1..n {
        let p = tree.parent[k] as usize;
        tree.kids[fill[p] as usize] = k as u32;
        fill[p] += 1;
    }
}

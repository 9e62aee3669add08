//! Each node's work: the device events and launches its ops caused,
//! through the links resolved at import, and its host time.
//!
//! A device event (kernel, copy, set, device window — not syncs or
//! mirrored annotations) of an XLA profile's device op belongs to that op's
//! node; any other belongs to the node at or above the op it is
//! linked to (`Links::op`); without an op, to the node above the runtime
//! call that launched it. Events in the scope that reach no node are
//! unattributed: for the whole trace, every such event; for a region or a
//! step, those that start inside it. A launch is a runtime call that
//! launched device work, counted at the node of its op. A tree narrowed
//! to one device takes that device's events only; the others' in the
//! scope are left out, their time counted.

use crate::model::{Trace, NO_SLICE};

use super::tree::{OpTree, NO_NODE};

/// Per node: its own work (not its children's) and, summed over its
/// subtree, inclusive totals.
pub(super) struct Work {
    pub(super) own_device_ns: Vec<i64>,
    pub(super) own_launches: Vec<u32>,
    /// Inclusive host time: the slice's duration (the root's: the tree's).
    pub(super) host_ns: Vec<i64>,
    pub(super) device_ns: Vec<i64>,
    pub(super) events: Vec<u64>,
    pub(super) launches: Vec<u64>,
    /// Node `n`'s own device events are `dev[dev_first[n] .. dev_first[n + 1]]`.
    pub(super) dev_first: Vec<u32>,
    pub(super) dev: Vec<u32>,
    /// Device events in the scope that reach no node.
    pub(super) unattributed: Vec<u32>,
    pub(super) unattributed_ns: i64,
    /// Device time in the scope on the devices a narrowed tree leaves out.
    pub(super) other_devices_ns: i64,
}

impl Work {
    pub(super) fn own_dev(&self, n: u32) -> &[u32] {
        &self.dev[self.dev_first[n as usize] as usize..self.dev_first[n as usize + 1] as usize]
    }
    /// Device time in the scope: attributed and not.
    pub(super) fn total_device_ns(&self) -> i64 {
        self.device_ns[0] + self.unattributed_ns
    }
    pub(super) fn has_device(&self) -> bool {
        self.events[0] > 0 || !self.unattributed.is_empty()
    }
}

/// The node a device event's work belongs to.
fn device_node(t: &Trace, tree: &OpTree, d: usize) -> u32 {
    // An XLA trace's device op: its own node.
    let own = tree.node_above(d as u32);
    if own != NO_NODE {
        return own;
    }
    match t.links.host_slice(d as u32) {
        NO_SLICE => NO_NODE,
        s => tree.node_above(s),
    }
}

pub(super) fn attribute(t: &Trace, tree: &OpTree) -> Work {
    let n = tree.len();
    let s = &t.slices;
    let mut node_of_dev: Vec<(u32, u32)> = Vec::new();
    let mut unattributed = Vec::new();
    let mut unattributed_ns = 0;
    let mut other_devices_ns = 0;
    let mut launched = vec![false; s.len()];
    let in_windows = |d: usize| {
        tree.windows
            .iter()
            .any(|&(a, b)| s.start_ns[d] >= a && s.start_ns[d] < b)
    };
    for d in 0..s.len() {
        if !s.category[d].is_device_work() {
            continue;
        }
        // A TPU's op events nest: those of no op (a loop's body, the
        // program's run) are inside another's time.
        if !tree.op_event.is_empty() && !tree.op_event[d] {
            continue;
        }
        if tree.device.is_some_and(|k| s.device[d] != k) {
            if in_windows(d) {
                other_devices_ns += s.dur_ns[d];
            }
            continue;
        }
        let node = device_node(t, tree, d);
        if node != NO_NODE {
            node_of_dev.push((node, d as u32));
        } else if in_windows(d) {
            unattributed.push(d as u32);
            unattributed_ns += s.dur_ns[d];
        } else {
            continue;
        }
        if let Some(&r) = t.links.launch.get(d) {
            if r != NO_SLICE {
                launched[r as usize] = true;
            }
        }
    }
    let mut own_device_ns = vec![0i64; n];
    let mut own_events = vec![0u32; n];
    let mut dev_first = vec![0u32; n + 1];
    for &(node, d) in &node_of_dev {
        own_device_ns[node as usize] += s.dur_ns[d as usize];
        own_events[node as usize] += 1;
        dev_first[node as usize + 1] += 1;
    }
    for k in 0..n {
        dev_first[k + 1] += dev_first[k];
    }
    let mut fill = dev_first.clone();
    let mut dev = vec![0u32; node_of_dev.len()];
    for &(node, d) in &node_of_dev {
        dev[fill[node as usize] as usize] = d;
        fill[node as usize] += 1;
    }
    let mut own_launches = vec![0u32; n];
    for (r, _) in launched.iter().enumerate().filter(|x| *x.1) {
        let op = t.links.op.get(r).copied().unwrap_or(NO_SLICE);
        let node = tree.node_above(if op != NO_SLICE { op } else { r as u32 });
        if node != NO_NODE {
            own_launches[node as usize] += 1;
        }
    }
    let mut host_ns: Vec<i64> = tree
        .slice
        .iter()
        .map(|&sl| {
            if sl == NO_SLICE {
                0
            } else {
                s.dur_ns[sl as usize]
            }
        })
        .collect();
    if n > 0 {
        host_ns[0] = tree.root_host_ns;
    }
    let mut device_ns = own_device_ns.clone();
    let mut events: Vec<u64> = own_events.iter().map(|&e| e as u64).collect();
    let mut launches: Vec<u64> = own_launches.iter().map(|&e| e as u64).collect();
    for k in (1..n).rev() {
        let p = tree.parent[k] as usize;
        device_ns[p] += device_ns[k];
        events[p] += events[k];
        launches[p] += launches[k];
    }
    Work {
        own_device_ns,
        own_launches,
        host_ns,
        device_ns,
        events,
        launches,
        dev_first,
        dev,
        unattributed,
        unattributed_ns,
        other_devices_ns,
    }
}

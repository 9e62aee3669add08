//! Ops that pair across nesting inside a replacement: one backend runs an
//! op beside the op it replaced, the other inside it (cuDNN's convolution
//! with its bias `aten::add_` beside it, MIOpen's with the same `add_`
//! under `aten::miopen_convolution`).
//!
//! TraceLens' TraceDiff (`reconcile_unmatched` in `trace_diff.py`) checks
//! every op only on A against every op only on B: when one's name is among
//! the other's children, that other is looked through (replaced by its
//! children); when both have the same children by name, both are. The
//! lists are then lined up again. Here the same three rules, on our keys;
//! dispatch noise (views, conversions) never makes a node looked through.
//! A node looked through stays in the segment with its own work and its
//! unpaired children's; the ops paired out of it are *carved* from the
//! segment (their work is their pair's, not the segment's).

use super::keys::Keys;
use super::sequence;
use super::tree::OpTree;

/// A segment at most this long a side is reconciled (the check is
/// quadratic in the segment, the lining up in the children).
const MAX_SEGMENT_OPS: usize = 64;

/// A segment after reconciliation.
pub(super) struct Reconciled {
    /// Pairs found, in order: tree nodes on A and B.
    pub(super) pairs: Vec<(u32, u32)>,
    /// The segment's nodes left: the run's, less those paired directly.
    pub(super) seg: [Vec<u32>; 2],
    /// Paired nodes that are children of a node looked through.
    pub(super) carved: [Vec<u32>; 2],
}

/// The segment `ga` ↔ `gb` (siblings' runs between two pairs, both sides
/// non-empty) reconciled, or `None` when no op pairs across nesting.
pub(super) fn reconcile(
    trees: [&OpTree; 2],
    keys: &Keys,
    ga: &[u32],
    gb: &[u32],
) -> Option<Reconciled> {
    if ga.len() > MAX_SEGMENT_OPS || gb.len() > MAX_SEGMENT_OPS {
        return None;
    }
    let [ta, tb] = trees;
    let real = |k: u32| !keys.noise[k as usize];
    let kid_keys = |t: &OpTree, n: u32| -> Vec<u32> {
        t.children(n).iter().map(|&c| t.key[c as usize]).collect()
    };
    let (mut open_a, mut open_b) = (vec![false; ga.len()], vec![false; gb.len()]);
    let kids_b: Vec<Vec<u32>> = gb.iter().map(|&i| kid_keys(tb, i)).collect();
    for (x, &d) in ga.iter().enumerate() {
        let kd = kid_keys(ta, d);
        for (y, (&i, ki)) in gb.iter().zip(&kids_b).enumerate() {
            let (key_d, key_i) = (ta.key[d as usize], tb.key[i as usize]);
            if real(key_d) && ki.contains(&key_d) {
                open_b[y] = true;
            }
            if real(key_i) && kd.contains(&key_i) {
                open_a[x] = true;
            }
            if !kd.is_empty() && kd == *ki && kd.iter().any(|&k| real(k)) {
                open_a[x] = true;
                open_b[y] = true;
            }
        }
    }
    if !open_a.contains(&true) && !open_b.contains(&true) {
        return None;
    }
    // Each side's list with the nodes looked through replaced by their
    // children (in start order: a child lies inside its parent); whether
    // each item came from inside one.
    let look = |t: &OpTree, g: &[u32], open: &[bool]| -> Vec<(u32, bool)> {
        let mut out = Vec::new();
        for (&n, &o) in g.iter().zip(open) {
            if o {
                out.extend(t.children(n).iter().map(|&c| (c, true)));
            } else {
                out.push((n, false));
            }
        }
        out
    };
    let (la, lb) = (look(ta, ga, &open_a), look(tb, gb, &open_b));
    let ka: Vec<u32> = la.iter().map(|x| ta.key[x.0 as usize]).collect();
    let kb: Vec<u32> = lb.iter().map(|x| tb.key[x.0 as usize]).collect();
    let found = sequence::align(&ka, &kb, keys);
    // Only same-name pairs count here: a renamed pair inside a replacement
    // would be a guess.
    let found: Vec<_> = found
        .into_iter()
        .filter(|p| ka[p.i as usize] == kb[p.j as usize])
        .collect();
    if found.is_empty() {
        return None;
    }
    let mut out = Reconciled {
        pairs: Vec::with_capacity(found.len()),
        seg: [Vec::new(), Vec::new()],
        carved: [Vec::new(), Vec::new()],
    };
    let mut direct = [Vec::new(), Vec::new()];
    for p in &found {
        let (a, b) = (la[p.i as usize], lb[p.j as usize]);
        out.pairs.push((a.0, b.0));
        for (side, (n, inside)) in [(0, a), (1, b)] {
            if inside {
                out.carved[side].push(n);
            } else {
                direct[side].push(n);
            }
        }
    }
    out.seg = [0, 1].map(|side| {
        let g = [ga, gb][side];
        g.iter()
            .copied()
            .filter(|n| !direct[side].contains(n))
            .collect()
    });
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::category::Category;

    /// A tree from `(depth, name)` rows in preorder (depth 1: the root's
    /// children), keyed in `keys`.
    fn tree(rows: &[(u32, &str)], keys: &mut Keys) -> OpTree {
        let n = rows.len() + 1;
        let mut key = vec![u32::MAX];
        let mut parent = vec![u32::MAX];
        let mut stack = vec![0u32];
        for (i, &(depth, name)) in rows.iter().enumerate() {
            stack.truncate(depth as usize);
            parent.push(*stack.last().unwrap());
            key.push(keys.of(name, Category::CpuOp));
            stack.push(i as u32 + 1);
        }
        let mut size = vec![1u32; n];
        for k in (1..n).rev() {
            size[parent[k] as usize] += size[k];
        }
        let mut first = vec![0u32; n + 1];
        for k in 1..n {
            first[parent[k] as usize + 1] += 1;
        }
        for k in 0..n {
            first[k + 1] += first[k];
        }
        let mut fill = first.clone();
        let mut kids = vec![0u32; n - 1];
        for (k, &p) in parent.iter().enumerate().skip(1) {
            kids[fill[p as usize] as usize] = k as u32;
            fill[p as usize] += 1;
        }
        OpTree {
            slice: vec![crate::model::NO_SLICE; n],
            key,
            parent,
            size,
            first,
            kids,
            anc: Vec::new(),
            node_of: Vec::new(),
            windows: Vec::new(),
            root_host_ns: 0,
            labels: Default::default(),
            label_names: Vec::new(),
            xla_devices: 0,
        }
    }

    fn run(a: &[(u32, &str)], b: &[(u32, &str)]) -> Option<Reconciled> {
        let mut keys = Keys::default();
        let (ta, tb) = (tree(a, &mut keys), tree(b, &mut keys));
        let (ga, gb) = (ta.children(0).to_vec(), tb.children(0).to_vec());
        reconcile([&ta, &tb], &keys, &ga, &gb)
    }

    #[test]
    fn an_op_beside_on_one_side_and_inside_on_the_other_pairs() {
        // cuDNN: conv, then the bias add beside it; MIOpen: the add inside.
        let r = run(
            &[(1, "aten::cudnn_convolution"), (1, "aten::add_")],
            &[(1, "aten::miopen_convolution"), (2, "aten::add_")],
        )
        .unwrap();
        assert_eq!(r.pairs, [(2, 2)]);
        assert_eq!(r.seg, [vec![1], vec![1]]);
        assert_eq!(r.carved, [vec![], vec![2]]);
        // And the other way round.
        let r = run(
            &[(1, "aten::miopen_convolution"), (2, "aten::add_")],
            &[(1, "aten::cudnn_convolution"), (1, "aten::add_")],
        )
        .unwrap();
        assert_eq!((r.pairs, r.carved), (vec![(2, 2)], [vec![2], vec![]]));
    }

    #[test]
    fn two_wrappers_with_the_same_children_are_both_looked_through() {
        let r = run(
            &[(1, "a::fused"), (2, "aten::mm"), (2, "aten::add")],
            &[(1, "b::fused"), (2, "aten::mm"), (2, "aten::add")],
        )
        .unwrap();
        assert_eq!(r.pairs, [(2, 2), (3, 3)]);
        assert_eq!(r.seg, [vec![1], vec![1]]);
        assert_eq!(r.carved, [vec![2, 3], vec![2, 3]]);
    }

    #[test]
    fn dispatch_noise_or_unrelated_ops_look_through_nothing() {
        // A view inside on one side and beside on the other: not a reason.
        assert!(run(
            &[(1, "aten::rms_norm"), (1, "aten::view")],
            &[(1, "aten::mul"), (2, "aten::view")],
        )
        .is_none());
        assert!(run(
            &[(1, "aten::rms_norm"), (2, "aten::mean")],
            &[(1, "aten::pow"), (1, "aten::add")],
        )
        .is_none());
    }
}

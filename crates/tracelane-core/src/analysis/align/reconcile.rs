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
//!
//! TraceDiff's fourth phase collapses each op left unpaired through
//! wrappers with a single child on the way to device work, and lines the
//! collapsed ops up again; here a node whose chain of single (non-noise)
//! children reaches an op the other side has (directly, or down a chain of
//! its own) is looked through to it (a `record_function` and an
//! `nn.Module` scope around one op on one side only).
//!
//! Across frameworks (a PyTorch run against an XLA one) one more: an XLA
//! program is flat, PyTorch's backward is nested (`autograd::engine::
//! evaluate_function: AddmmBackward0` › `AddmmBackward0` › `aten::mm`), so
//! a node holding matrix products or convolutions is looked through down
//! to them when the other side runs XLA ops, and those pair with the XLA
//! side's of the same kind and direction (`Keys::across`).
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
    let mut deep = deep_opened(trees, keys, [ga, gb], [&open_a, &open_b]);
    chains_opened(trees, keys, [ga, gb], [&open_a, &open_b], &mut deep);
    if !open_a.contains(&true) && !open_b.contains(&true) && deep.iter().all(|d| d.is_empty()) {
        return None;
    }
    // Each side's list with the nodes looked through replaced by their
    // children (in start order: a child lies inside its parent); whether
    // each item came from inside one.
    let look = |t: &OpTree, g: &[u32], open: &[bool], deep: &[(usize, Vec<u32>)]| {
        let mut out = Vec::new();
        for (x, (&n, &o)) in g.iter().zip(open).enumerate() {
            if let Some((_, inner)) = deep.iter().find(|d| d.0 == x) {
                out.extend(inner.iter().map(|&c| (c, true)));
            } else if o {
                out.extend(t.children(n).iter().map(|&c| (c, true)));
            } else {
                out.push((n, false));
            }
        }
        out
    };
    let la = look(ta, ga, &open_a, &deep[0]);
    let lb = look(tb, gb, &open_b, &deep[1]);
    let ka: Vec<u32> = la.iter().map(|x| ta.key[x.0 as usize]).collect();
    let kb: Vec<u32> = lb.iter().map(|x| tb.key[x.0 as usize]).collect();
    let found = sequence::align(&ka, &kb, keys);
    // Only same-name and across-framework pairs count here: a renamed pair
    // inside a replacement would be a guess.
    let found: Vec<_> = found
        .into_iter()
        .filter(|p| {
            let (x, y) = (ka[p.i as usize], kb[p.j as usize]);
            x == y || keys.across(x, y)
        })
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

/// Per side, the segment's nodes looked through across frameworks: `(its
/// position in the segment, the matrix products and convolutions inside
/// it, in preorder, none inside another)`. Only a side whose segment holds
/// no XLA op is looked into, and only when the other's holds one that
/// pairs across; a node the same-framework rules opened is left to them.
fn deep_opened(
    trees: [&OpTree; 2],
    keys: &Keys,
    segs: [&[u32]; 2],
    open: [&[bool]; 2],
) -> [Vec<(usize, Vec<u32>)>; 2] {
    let mut out = [Vec::new(), Vec::new()];
    let xla_kinds = |side: usize| {
        let t = trees[side];
        segs[side].iter().any(|&n| {
            let k = t.key[n as usize];
            keys.is_xla(k) && keys.pairs_across(k)
        })
    };
    let no_xla = |side: usize| {
        let t = trees[side];
        !segs[side].iter().any(|&n| keys.is_xla(t.key[n as usize]))
    };
    for side in 0..2 {
        if !(no_xla(side) && xla_kinds(1 - side)) {
            continue;
        }
        let t = trees[side];
        for (x, &n) in segs[side].iter().enumerate() {
            if open[side][x] || keys.pairs_across(t.key[n as usize]) {
                continue;
            }
            let inner = products_inside(t, keys, n);
            if !inner.is_empty() {
                out[side].push((x, inner));
            }
        }
    }
    out
}

/// Adds to `deep`, per side, the segment's nodes whose chain of single
/// children reaches an op of the other side's segment or chains: `(its
/// position, [that op])`. Nodes opened already, and nodes whose own name
/// the other side has, are left as they are.
fn chains_opened(
    trees: [&OpTree; 2],
    keys: &Keys,
    segs: [&[u32]; 2],
    open: [&[bool]; 2],
    deep: &mut [Vec<(usize, Vec<u32>)>; 2],
) {
    let chains = [0, 1].map(|side| {
        segs[side]
            .iter()
            .map(|&n| single_child_chain(trees[side], keys, n))
            .collect::<Vec<_>>()
    });
    let keys_of = |side: usize| -> rustc_hash::FxHashSet<u32> {
        let t = trees[side];
        let direct = segs[side].iter().map(|&n| t.key[n as usize]);
        let chained = chains[side].iter().flatten().map(|&m| t.key[m as usize]);
        direct
            .chain(chained)
            .filter(|&k| !keys.noise[k as usize])
            .collect()
    };
    for side in 0..2 {
        let (t, other) = (trees[side], keys_of(1 - side));
        for (x, chain) in chains[side].iter().enumerate() {
            // A node the other side has pairs as itself.
            let mine = t.key[segs[side][x] as usize];
            if open[side][x] || deep[side].iter().any(|d| d.0 == x) || other.contains(&mine) {
                continue;
            }
            if let Some(&m) = chain.iter().find(|&&m| other.contains(&t.key[m as usize])) {
                deep[side].push((x, vec![m]));
            }
        }
    }
}

/// The nodes below `n` down its chain of single children (dispatch noise
/// beside the one child does not count), top down; empty when `n` has
/// none or several.
fn single_child_chain(t: &OpTree, keys: &Keys, n: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut m = n;
    loop {
        let mut real = t
            .children(m)
            .iter()
            .filter(|&&c| !keys.noise[t.key[c as usize] as usize]);
        match (real.next(), real.next()) {
            (Some(&c), None) => {
                out.push(c);
                m = c;
            }
            _ => return out,
        }
    }
}

/// The matrix products and convolutions strictly inside `n`, in preorder,
/// not looking inside one.
fn products_inside(t: &OpTree, keys: &Keys, n: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut m = n + 1;
    while m < n + t.size[n as usize] {
        if keys.pairs_across(t.key[m as usize]) {
            out.push(m);
            m += t.size[m as usize];
        } else {
            m += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::category::Category;

    /// A tree from `(depth, name)` rows in preorder (depth 1: the root's
    /// children), keyed in `keys` (`backward NAME`: keyed as in a
    /// backward pass).
    fn tree(rows: &[(u32, &str)], keys: &mut Keys) -> OpTree {
        let n = rows.len() + 1;
        let mut key = vec![u32::MAX];
        let mut parent = vec![u32::MAX];
        let mut stack = vec![0u32];
        for (i, &(depth, name)) in rows.iter().enumerate() {
            stack.truncate(depth as usize);
            parent.push(*stack.last().unwrap());
            key.push(match name.strip_prefix("backward ") {
                Some(name) => keys.of_backward(name, Category::CpuOp),
                None => keys.of(name, Category::CpuOp),
            });
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
            device: None,
            op_event: Vec::new(),
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

    #[test]
    fn a_pytorch_backward_node_is_looked_into_for_the_products_an_xla_run_has_flat() {
        let autograd = "autograd::engine::evaluate_function: AddmmBackward0";
        let r = run(
            &[
                (1, "aten::mse_loss"),
                (1, autograd),
                (2, "AddmmBackward0"),
                (3, "aten::t"),
                (3, "backward aten::mm"),
                (3, "backward aten::mm"),
                (3, "aten::sum"),
            ],
            &[
                (1, "xla:jvp()/sub"),
                (1, "xla:transpose(jvp())/dot_general"),
                (1, "xla:transpose(jvp())/reduce_sum"),
                (1, "xla:transpose(jvp())/dot_general"),
            ],
        )
        .unwrap();
        // Both gradient products pair, carved out of the autograd node,
        // which stays in the segment with the loss and the rest.
        assert_eq!(r.pairs, [(5, 2), (6, 4)]);
        assert_eq!(r.carved, [vec![5, 6], vec![]]);
        assert_eq!(r.seg, [vec![1, 2], vec![1, 3]]);
        // A forward dot is not a gradient's: nothing to look into for.
        assert!(run(
            &[(1, autograd), (2, "backward aten::mm")],
            &[(1, "xla:jvp()/dot_general")],
        )
        .is_none());
        // Within one framework, no looking into autograd's nodes.
        assert!(run(
            &[(1, autograd), (2, "backward aten::mm")],
            &[(1, "backward aten::mm"), (1, "aten::add")],
        )
        .is_some_and(|r| r.pairs == [(2, 1)]));
    }

    #[test]
    fn a_wrapper_chain_around_one_op_is_looked_through_to_it() {
        // A: the linear inside a region inside a module scope (a view
        // beside it is noise); B: the linear alone, then its relu.
        let r = run(
            &[
                (1, "nn.Module: Block_0"),
                (2, "block"),
                (3, "aten::view"),
                (3, "aten::linear"),
                (4, "aten::addmm"),
            ],
            &[(1, "aten::linear"), (2, "aten::addmm"), (1, "aten::relu")],
        )
        .unwrap();
        // The chain stops at the linear (the op B has), not its addmm.
        assert_eq!(r.pairs, [(4, 1)]);
        assert_eq!(r.carved, [vec![4], vec![]]);
        assert_eq!(r.seg, [vec![1], vec![3]]);
        // Two wrappers of other names each around the same op: both.
        let r = run(
            &[(1, "wrap_a"), (2, "outer_a"), (3, "aten::gelu")],
            &[(1, "wrap_b"), (2, "aten::gelu")],
        )
        .unwrap();
        assert_eq!(r.pairs, [(3, 2)]);
        assert_eq!(r.carved, [vec![3], vec![2]]);
        // A chain to an op the other side lacks opens nothing.
        assert!(run(&[(1, "wrap"), (2, "aten::gelu")], &[(1, "aten::relu")]).is_none());
    }
}

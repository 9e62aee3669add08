//! Two op trees lined up node by node, top down.
//!
//! The roots (the two scopes) pair. The children of every pair are lined
//! up ([`super::sequence::align`]); children that pair are a pair and their
//! own children are lined up in turn. Between two consecutive pairs, the
//! children left over on each side form one segment at the lowest common
//! pair above them: on both sides it is a replacement (`aten::rms_norm`
//! against pow/mean/add/rsqrt/mul; a compiled region against the eager
//! ops), on one side only an addition or a removal. Inside a replacement,
//! ops that pair across nesting (an op beside on one side, inside on the
//! other) are paired out of it (`reconcile.rs`); the rest of it is what
//! differs, as a whole.

use super::keys::Keys;
use super::reconcile::reconcile;
use super::sequence;
use super::tree::OpTree;

/// What an aligned node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// The same op (or annotation) on both sides.
    Matched,
    /// Annotations at the same place under different names.
    Renamed,
    /// Ops on both sides between the same pairs, different ones.
    Replaced,
    /// Ops only on A.
    OnlyA,
    /// Ops only on B.
    OnlyB,
}

impl NodeKind {
    /// The name the JSON writes (serde's), for a class or an attribute.
    pub fn name(self) -> &'static str {
        match self {
            NodeKind::Matched => "matched",
            NodeKind::Renamed => "renamed",
            NodeKind::Replaced => "replaced",
            NodeKind::OnlyA => "only_a",
            NodeKind::OnlyB => "only_b",
        }
    }
}

/// The aligned tree: node 0 pairs the roots; a node's parent comes before
/// it. A pair holds one node per side, a segment a run of siblings.
pub(super) struct Aligned {
    pub(super) kind: Vec<NodeKind>,
    pub(super) parent: Vec<u32>,
    /// Aligned node `k`'s A-side tree nodes are `a[a_first[k] .. a_first[k + 1]]`.
    pub(super) a_first: Vec<u32>,
    pub(super) a: Vec<u32>,
    pub(super) b_first: Vec<u32>,
    pub(super) b: Vec<u32>,
    /// A segment's tree nodes whose subtrees are not its work: ops paired
    /// out of it (`reconcile.rs`), each under one of its nodes. Side `s`'s
    /// for node `k`: `carved[s][carved_first[s][k] .. carved_first[s][k + 1]]`.
    pub(super) carved_first: [Vec<u32>; 2],
    pub(super) carved: [Vec<u32>; 2],
    /// A pair whose whole subtrees are its work, their children not lined
    /// up: an op paired across frameworks (`aten::linear` with the `t` and
    /// `addmm` it calls against one XLA `dot_general`: the XLA op has no
    /// ops inside, the ATen op's are how PyTorch runs the same product).
    pub(super) whole: Vec<bool>,
}

impl Aligned {
    pub(super) fn len(&self) -> usize {
        self.kind.len()
    }
    pub(super) fn a_nodes(&self, k: usize) -> &[u32] {
        &self.a[self.a_first[k] as usize..self.a_first[k + 1] as usize]
    }
    pub(super) fn b_nodes(&self, k: usize) -> &[u32] {
        &self.b[self.b_first[k] as usize..self.b_first[k + 1] as usize]
    }
    pub(super) fn carved(&self, side: usize, k: usize) -> &[u32] {
        let f = &self.carved_first[side];
        &self.carved[side][f[k] as usize..f[k + 1] as usize]
    }
    fn push(&mut self, kind: NodeKind, parent: u32, a: &[u32], b: &[u32]) -> u32 {
        self.push_carved(kind, parent, [a, b], [&[], &[]])
    }
    fn push_carved(
        &mut self,
        kind: NodeKind,
        parent: u32,
        [a, b]: [&[u32]; 2],
        carved: [&[u32]; 2],
    ) -> u32 {
        let k = self.kind.len() as u32;
        self.kind.push(kind);
        self.whole.push(false);
        self.parent.push(parent);
        self.a.extend_from_slice(a);
        self.a_first.push(self.a.len() as u32);
        self.b.extend_from_slice(b);
        self.b_first.push(self.b.len() as u32);
        for ((all, first), these) in self
            .carved
            .iter_mut()
            .zip(&mut self.carved_first)
            .zip(carved)
        {
            all.extend_from_slice(these);
            first.push(all.len() as u32);
        }
        k
    }

    /// A pair of `x2` (A) and `y2` (B) under `me`: the same op, or
    /// annotations renamed, or one kind of op across frameworks. Queued
    /// for its children to be lined up unless it is [`Aligned::whole`].
    fn push_pair(
        &mut self,
        trees: [&OpTree; 2],
        keys: &Keys,
        me: u32,
        [x2, y2]: [u32; 2],
        queue: &mut std::collections::VecDeque<(u32, u32, u32)>,
    ) {
        let (ka, kb) = (trees[0].key[x2 as usize], trees[1].key[y2 as usize]);
        let kind = if ka == kb {
            NodeKind::Matched
        } else {
            NodeKind::Renamed
        };
        let k = self.push(kind, me, &[x2], &[y2]);
        if ka != kb && keys.across(ka, kb) {
            self.whole[k as usize] = true;
        } else {
            queue.push_back((x2, y2, k));
        }
    }

    /// The run `ga` ↔ `gb` between two pairs under `me`: a segment (a
    /// replacement, an addition, a removal), and the pairs reconciliation
    /// finds across nesting inside a replacement, each queued.
    fn push_run(
        &mut self,
        trees: [&OpTree; 2],
        keys: &Keys,
        me: u32,
        [ga, gb]: [&[u32]; 2],
        queue: &mut std::collections::VecDeque<(u32, u32, u32)>,
    ) {
        let r = if ga.is_empty() || gb.is_empty() {
            None
        } else {
            reconcile(trees, keys, ga, gb)
        };
        let (seg, carved, pairs) = match &r {
            Some(r) => (
                [&r.seg[0][..], &r.seg[1][..]],
                [&r.carved[0][..], &r.carved[1][..]],
                &r.pairs[..],
            ),
            None => ([ga, gb], [&[][..], &[][..]], &[][..]),
        };
        let kind = match (seg[0].is_empty(), seg[1].is_empty()) {
            (true, true) => None,
            (false, false) => Some(NodeKind::Replaced),
            (false, true) => Some(NodeKind::OnlyA),
            (true, false) => Some(NodeKind::OnlyB),
        };
        if let Some(kind) = kind {
            self.push_carved(kind, me, seg, carved);
        }
        for &(x, y) in pairs {
            self.push_pair(trees, keys, me, [x, y], queue);
        }
    }
}

/// Lines `ta` and `tb` up; `progress(x)` says the share of A's nodes
/// visited (at most 32 times).
pub(super) fn align_trees(
    ta: &OpTree,
    tb: &OpTree,
    keys: &Keys,
    progress: &mut dyn FnMut(f64),
) -> Aligned {
    let mut al = Aligned {
        kind: Vec::new(),
        parent: Vec::new(),
        a_first: vec![0],
        a: Vec::new(),
        b_first: vec![0],
        b: Vec::new(),
        carved_first: [vec![0], vec![0]],
        carved: [Vec::new(), Vec::new()],
        whole: Vec::new(),
    };
    let root = al.push(NodeKind::Matched, u32::MAX, &[0], &[0]);
    // Breadth first: the pairs of an earlier occurrence are numbered
    // before a later one's (a report names the first).
    let mut queue = std::collections::VecDeque::from([(0u32, 0u32, root)]);
    let (mut ka, mut kb) = (Vec::new(), Vec::new());
    let step = (ta.len() / 32).max(4096);
    let (mut visited, mut told) = (0usize, 0usize);
    while let Some((x, y, me)) = queue.pop_front() {
        visited += ta.children(x).len() + 1;
        if visited >= told + step {
            told = visited;
            progress((visited as f64 / ta.len() as f64).min(1.0));
        }
        let (ca, cb) = (ta.children(x), tb.children(y));
        ka.clear();
        ka.extend(ca.iter().map(|&c| ta.key[c as usize]));
        kb.clear();
        kb.extend(cb.iter().map(|&c| tb.key[c as usize]));
        let pairs = sequence::align(&ka, &kb, keys);
        let (mut i0, mut j0) = (0usize, 0usize);
        let ends = pairs.iter().map(|p| (p.i as usize, p.j as usize, true));
        for (i, j, is_pair) in ends.chain(std::iter::once((ca.len(), cb.len(), false))) {
            al.push_run([ta, tb], keys, me, [&ca[i0..i], &cb[j0..j]], &mut queue);
            if is_pair {
                al.push_pair([ta, tb], keys, me, [ca[i], cb[j]], &mut queue);
                i0 = i + 1;
                j0 = j + 1;
            }
        }
    }
    al
}

#[cfg(test)]
mod tests {
    use super::NodeKind;

    #[test]
    fn a_kinds_name_is_the_one_the_json_writes() {
        for k in [
            NodeKind::Matched,
            NodeKind::Renamed,
            NodeKind::Replaced,
            NodeKind::OnlyA,
            NodeKind::OnlyB,
        ] {
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json.trim_matches('"'), k.name());
        }
    }
}

//! The aligned tree as rows for a page to draw: its largest nodes, each
//! with both sides' inclusive time and where it lies in each trace.
//!
//! A 1 GB trace aligns into millions of nodes; the page draws a few
//! hundred. Rows are taken largest first (by the larger side's inclusive
//! time, then the size of their own difference) from the root down, so
//! every row's ancestors are rows; the ranked nodes and their ancestors
//! come first. A row says how many of its children were left out.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::alignment::Alignment;
use super::matcher::NodeKind;
use super::report::{Metric, TreeRow};
use crate::model::NO_SLICE;

/// Per tree node of one side: the extent of the device work under it.
struct DeviceSpans {
    lo: Vec<i64>,
    hi: Vec<i64>,
}

impl DeviceSpans {
    fn of(al: &Alignment, side: usize) -> DeviceSpans {
        let (tree, w, s) = (&al.trees[side], &al.work[side], &al.traces[side].slices);
        let n = tree.len();
        let (mut lo, mut hi) = (vec![i64::MAX; n], vec![i64::MIN; n]);
        for m in (0..n).rev() {
            for &d in w.own_dev(m as u32) {
                lo[m] = lo[m].min(s.start_ns[d as usize]);
                hi[m] = hi[m].max(s.end_ns(d as usize));
            }
            if m > 0 {
                let p = tree.parent[m] as usize;
                lo[p] = lo[p].min(lo[m]);
                hi[p] = hi[p].max(hi[m]);
            }
        }
        DeviceSpans { lo, hi }
    }
}

impl Alignment<'_> {
    /// Side `side`'s inclusive time in aligned node `k`.
    fn inclusive_of(&self, side: usize, k: usize, metric: Metric) -> i64 {
        let w = &self.work[side];
        self.segment_sum(side, k, |n| match metric {
            Metric::Device => w.device_ns[n as usize],
            Metric::Host => w.host_ns[n as usize],
        })
    }

    /// Side `side`'s first slice and extent in aligned node `k`.
    fn place(&self, side: usize, k: usize, spans: &DeviceSpans) -> (Option<u32>, Option<[i64; 2]>) {
        let (tree, s) = (&self.trees[side], &self.traces[side].slices);
        let nodes = self.nodes_of(side, k);
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        let mut first = None;
        for &n in nodes {
            let n = n as usize;
            match tree.slice[n] {
                NO_SLICE => {
                    for &(a, b) in &tree.windows {
                        lo = lo.min(a);
                        hi = hi.max(b);
                    }
                }
                sl => {
                    first.get_or_insert(sl);
                    lo = lo.min(s.start_ns[sl as usize]);
                    hi = hi.max(s.end_ns(sl as usize));
                }
            }
            lo = lo.min(spans.lo[n]);
            hi = hi.max(spans.hi[n]);
        }
        (first, (lo <= hi).then_some([lo, hi]))
    }
}

/// The aligned tree's children lists (a node's children are pushed
/// together, in sequence order, so they are contiguous in index order).
fn children(al: &Alignment) -> (Vec<u32>, Vec<u32>) {
    let n = al.aligned.len();
    let mut first = vec![0u32; n + 1];
    for k in 1..n {
        first[al.aligned.parent[k] as usize + 1] += 1;
    }
    for k in 0..n {
        first[k + 1] += first[k];
    }
    let mut fill = first.clone();
    let mut kids = vec![0u32; n.saturating_sub(1)];
    for k in 1..n {
        let p = al.aligned.parent[k] as usize;
        kids[fill[p] as usize] = k as u32;
        fill[p] += 1;
    }
    (first, kids)
}

/// The rows of the aligned tree: `ranked` (aligned nodes) and their
/// ancestors, then the largest nodes under the rows kept, up to `max` in
/// all (unless the ranked nodes' chains alone take more).
/// `own[k]`: node `k`'s own contribution on each side (ns).
pub(super) fn tree_rows(
    al: &Alignment,
    metric: Metric,
    own: &dyn Fn(usize) -> [i64; 2],
    ranked: &[usize],
    unattributed: Option<[i64; 2]>,
    max: usize,
) -> Vec<TreeRow> {
    let n = al.aligned.len();
    if max == 0 || n == 0 {
        return Vec::new();
    }
    let (first, kids) = children(al);
    let kids_of = |k: usize| &kids[first[k] as usize..first[k + 1] as usize];
    let incl = |k: usize| [0, 1].map(|s| al.inclusive_of(s, k, metric));
    let mut kept = vec![false; n];
    let mut count = 0usize;
    let mut heap: BinaryHeap<(i64, i64, Reverse<u32>)> = BinaryHeap::new();
    let keep = |k: usize, kept: &mut [bool], heap: &mut BinaryHeap<_>, count: &mut usize| {
        if kept[k] {
            return;
        }
        kept[k] = true;
        *count += 1;
        for &c in kids_of(k) {
            let c = c as usize;
            let [a, b] = incl(c);
            let [oa, ob] = own(c);
            heap.push((a.abs().max(b.abs()), (ob - oa).abs(), Reverse(c as u32)));
        }
    };
    keep(0, &mut kept, &mut heap, &mut count);
    for &r in ranked {
        let mut chain = vec![r];
        let mut p = r;
        while p != 0 {
            p = al.aligned.parent[p] as usize;
            chain.push(p);
        }
        for &k in chain.iter().rev() {
            keep(k, &mut kept, &mut heap, &mut count);
        }
    }
    while let Some((_, _, Reverse(c))) = heap.pop() {
        if count >= max {
            break;
        }
        keep(c as usize, &mut kept, &mut heap, &mut count);
    }
    let spans = [DeviceSpans::of(al, 0), DeviceSpans::of(al, 1)];
    let us = |ns: i64| ns as f64 / 1e3;
    let mut rows = Vec::with_capacity(count + 1);
    // Preorder over the kept nodes, children in sequence order.
    let mut stack: Vec<(usize, u32)> = vec![(0, 0)];
    while let Some((k, depth)) = stack.pop() {
        let shown: Vec<usize> = kids_of(k)
            .iter()
            .map(|&c| c as usize)
            .filter(|&c| kept[c])
            .collect();
        let [a, b] = incl(k);
        let [oa, ob] = own(k);
        let ([a_slice, b_slice], [a_span, b_span]) = {
            let (sa, pa) = al.place(0, k, &spans[0]);
            let (sb, pb) = al.place(1, k, &spans[1]);
            ([sa, sb], [pa, pb])
        };
        let events =
            |side: usize| -> u64 { al.segment_sum(side, k, |m| al.work[side].events[m as usize]) };
        rows.push(TreeRow {
            id: Some(k as u32),
            depth,
            kind: Some(al.aligned.kind[k]),
            label: if k == 0 { root_label(al) } else { al.label(k) },
            a_us: us(a),
            b_us: us(b),
            own_delta_us: us(ob - oa),
            a_events: events(0),
            b_events: events(1),
            a_slice: (al.aligned.kind[k] != NodeKind::OnlyB)
                .then_some(a_slice)
                .flatten(),
            b_slice: (al.aligned.kind[k] != NodeKind::OnlyA)
                .then_some(b_slice)
                .flatten(),
            a_span_ns: a_span,
            b_span_ns: b_span,
            hidden_children: (kids_of(k).len() - shown.len()) as u32,
        });
        stack.extend(shown.iter().rev().map(|&c| (c, depth + 1)));
    }
    // The root's last child: everything after the root is under it.
    if let Some(u) = unattributed.filter(|u| *u != [0, 0]) {
        rows.push(unattributed_row(al, u));
    }
    rows
}

fn root_label(al: &Alignment) -> String {
    if al.scopes[0] == al.scopes[1] {
        al.scopes[0].clone()
    } else {
        format!("{} ↔ {}", al.scopes[0], al.scopes[1])
    }
}

fn unattributed_row(al: &Alignment, ns: [i64; 2]) -> TreeRow {
    TreeRow {
        id: None,
        depth: 1,
        kind: None,
        label: "(device work linked to no op)".into(),
        a_us: ns[0] as f64 / 1e3,
        b_us: ns[1] as f64 / 1e3,
        own_delta_us: (ns[1] - ns[0]) as f64 / 1e3,
        a_events: al.work[0].unattributed.len() as u64,
        b_events: al.work[1].unattributed.len() as u64,
        a_slice: None,
        b_slice: None,
        a_span_ns: None,
        b_span_ns: None,
        hidden_children: 0,
    }
}

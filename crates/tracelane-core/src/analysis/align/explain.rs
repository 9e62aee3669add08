//! The difference split over the aligned tree, ranked, each node with a
//! sentence (see the module's rules in `mod.rs`).

use std::collections::BTreeMap;

use super::alignment::Alignment;
use super::family::{ByName, Family};
use super::matcher::NodeKind;
use super::report::{
    DiffNode, DiffOptions, DiffReport, FamilyRow, KindCounts, Metric, POOR_ALIGNMENT,
};
use crate::analysis::compare::fmt_us;
use crate::category::Category;

/// One contribution: an aligned node (`None`: unattributed device work)
/// and each side's time in it.
struct Item {
    node: Option<usize>,
    ns: [i64; 2],
    /// Device events and launches on each side.
    events: [u64; 2],
    /// Device idle inside it on each side (summed over occurrences).
    idle: [i64; 2],
    launches: [u64; 2],
    /// How many aligned nodes of the same place it sums (one per step or
    /// region occurrence): the first of them is `node`.
    occurrences: u64,
}

/// A replacement has this many ops a side at most to count as aligned (a
/// fused op against its pieces, a changed attention, a compiled region
/// against the few ops it replaced); a longer run, or work on one side
/// only, is not lined up op for op.
const LOCAL_SEGMENT_OPS: usize = 8;

impl Alignment<'_> {
    pub(super) fn nodes_of(&self, side: usize, k: usize) -> &[u32] {
        if side == 0 {
            self.aligned.a_nodes(k)
        } else {
            self.aligned.b_nodes(k)
        }
    }

    /// The category of tree node `n`'s slice on `side` (`None`: the root).
    fn node_category(&self, side: usize, n: u32) -> Option<Category> {
        match self.trees[side].slice[n as usize] {
            crate::model::NO_SLICE => None,
            s => Some(self.traces[side].slices.category[s as usize]),
        }
    }

    /// A segment's sum of `f` over its nodes' subtrees (`f` inclusive),
    /// less its carved subtrees'.
    pub(super) fn segment_sum<T>(&self, side: usize, k: usize, f: impl Fn(u32) -> T) -> T
    where
        T: std::iter::Sum<T> + std::ops::Sub<Output = T>,
    {
        let all: T = self.nodes_of(side, k).iter().map(|&n| f(n)).sum();
        let carved: T = self.aligned.carved(side, k).iter().map(|&n| f(n)).sum();
        all - carved
    }

    fn total_ns(&self, side: usize, metric: Metric) -> i64 {
        let w = &self.work[side];
        match metric {
            Metric::Device => w.total_device_ns(),
            Metric::Host => w.host_ns[0],
        }
    }

    /// A tree node's own time: not under its children.
    fn own_ns(&self, side: usize, n: u32, metric: Metric) -> i64 {
        let w = &self.work[side];
        match metric {
            Metric::Device => w.own_device_ns[n as usize],
            Metric::Host => {
                let kids: i64 = self.trees[side]
                    .children(n)
                    .iter()
                    .map(|&c| w.host_ns[c as usize])
                    .sum();
                w.host_ns[n as usize] - kids
            }
        }
    }

    fn inclusive_ns(&self, side: usize, n: u32, metric: Metric) -> i64 {
        let w = &self.work[side];
        match metric {
            Metric::Device => w.device_ns[n as usize],
            Metric::Host => w.host_ns[n as usize],
        }
    }

    /// A segment that still lines the two sides up: a short replacement,
    /// or anything under a paired op (the same op, implemented with other
    /// ops on the other backend: `aten::mean` as sum and div on one side).
    fn is_local(&self, k: usize) -> bool {
        let al = &self.aligned;
        let p = al.parent[k] as usize;
        // A pair of ops: the same op, or one kind across frameworks
        // (`aten::linear` with its `addmm` against a JAX `dot_general`).
        let op = |side: usize| {
            self.node_category(side, self.nodes_of(side, p)[0]) == Some(Category::CpuOp)
        };
        let under_op = k > 0
            && p > 0
            && match al.kind[p] {
                NodeKind::Matched => op(0),
                NodeKind::Renamed => op(0) || op(1),
                _ => false,
            };
        // Regions against regions (five `rmsnorm_naive` against two
        // steps) are whole programs, not a short replacement of ops.
        let regions = |side: usize| {
            self.nodes_of(side, k)
                .iter()
                .all(|&n| self.node_category(side, n) == Some(Category::UserAnnotation))
        };
        let short = al.kind[k] == NodeKind::Replaced
            && al.a_nodes(k).len() <= LOCAL_SEGMENT_OPS
            && al.b_nodes(k).len() <= LOCAL_SEGMENT_OPS
            && !(regions(0) && regions(1));
        !self.is_pair(k) && (under_op || short)
    }

    /// Is aligned node `k` an annotation (a region, a step) on A?
    fn is_annotation(&self, k: usize) -> bool {
        self.node_category(0, self.aligned.a_nodes(k)[0]) == Some(Category::UserAnnotation)
    }

    pub(super) fn is_pair(&self, k: usize) -> bool {
        matches!(self.aligned.kind[k], NodeKind::Matched | NodeKind::Renamed)
    }

    /// A pair whose work is its ops' own (their children are aligned
    /// nodes of their own); not a [`Aligned::whole`] pair.
    ///
    /// [`Aligned::whole`]: super::matcher::Aligned
    fn owns_only(&self, k: usize) -> bool {
        self.is_pair(k) && !self.aligned.whole[k]
    }

    /// Side `side`'s time in aligned node `k`: a pair's own, a segment's
    /// (or a whole pair's) all.
    pub(super) fn item_ns(&self, side: usize, k: usize, metric: Metric) -> i64 {
        let nodes = self.nodes_of(side, k);
        if self.owns_only(k) {
            self.own_ns(side, nodes[0], metric)
        } else {
            self.segment_sum(side, k, |n| self.inclusive_ns(side, n, metric))
        }
    }

    /// Calls `f` with side `side`'s device events in aligned node `k` (a
    /// pair: its own; a segment: every event under it).
    pub(super) fn each_event(&self, side: usize, k: usize, mut f: impl FnMut(u32)) {
        let (tree, w) = (&self.trees[side], &self.work[side]);
        let nodes = self.nodes_of(side, k);
        if self.owns_only(k) {
            w.own_dev(nodes[0]).iter().for_each(|&d| f(d));
            return;
        }
        let carved = self.aligned.carved(side, k);
        for &n in nodes {
            let mut m = n;
            while m < n + tree.size[n as usize] {
                if carved.contains(&m) {
                    m += tree.size[m as usize];
                    continue;
                }
                w.own_dev(m).iter().for_each(|&d| f(d));
                m += 1;
            }
        }
    }

    fn events_of(&self, side: usize, k: usize) -> Vec<u32> {
        let mut out = Vec::new();
        self.each_event(side, k, |d| out.push(d));
        out
    }

    /// Device idle inside aligned node `k` on `side`: from its first
    /// device event's start to its last's end, the time none of them runs.
    fn idle_ns(&self, side: usize, k: usize, buf: &mut Vec<(i64, i64)>) -> i64 {
        let s = &self.traces[side].slices;
        buf.clear();
        self.each_event(side, k, |d| {
            let d = d as usize;
            buf.push((s.start_ns[d], s.end_ns(d)));
        });
        let lo = buf.iter().map(|x| x.0).min().unwrap_or(0);
        let hi = buf.iter().map(|x| x.1).max().unwrap_or(0);
        (hi - lo) - crate::analysis::intervals::union_len(buf)
    }

    fn event_count(&self, side: usize, k: usize) -> u64 {
        let w = &self.work[side];
        let nodes = self.nodes_of(side, k);
        if self.owns_only(k) {
            w.own_dev(nodes[0]).len() as u64
        } else {
            self.segment_sum(side, k, |n| w.events[n as usize])
        }
    }

    fn launches_of(&self, side: usize, k: usize) -> u64 {
        let w = &self.work[side];
        let nodes = self.nodes_of(side, k);
        if self.owns_only(k) {
            w.own_launches[nodes[0] as usize] as u64
        } else {
            self.segment_sum(side, k, |n| w.launches[n as usize])
        }
    }

    /// What aligned node `k` is called: its op, or both sides' when they differ.
    pub(super) fn label(&self, k: usize) -> String {
        let ops = |side| list(&self.names(side, k), 4);
        match self.aligned.kind[k] {
            NodeKind::Matched | NodeKind::Renamed => {
                let (a, b) = (ops(0), ops(1));
                if a == b {
                    a
                } else {
                    format!("{a} ↔ {b}")
                }
            }
            NodeKind::Replaced => format!("{} ↔ {}", ops(0), ops(1)),
            NodeKind::OnlyA => format!("{} (A only)", ops(0)),
            NodeKind::OnlyB => format!("{} (B only)", ops(1)),
        }
    }

    fn names(&self, side: usize, k: usize) -> Vec<String> {
        self.nodes_of(side, k)
            .iter()
            .map(|&n| self.name(side, n).to_string())
            .collect()
    }

    fn path(&self, k: usize) -> String {
        let mut parts = vec![self.label(k)];
        let mut p = self.aligned.parent[k] as usize;
        while p != 0 {
            parts.push(self.label(p));
            p = self.aligned.parent[p] as usize;
        }
        parts.reverse();
        parts.join(" › ")
    }
}

/// At most `max` names, then how many more.
fn list(names: &[String], max: usize) -> String {
    let mut s = names
        .iter()
        .take(max)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > max {
        s.push_str(&format!(" … ({} ops)", names.len()));
    }
    s
}

/// Device events as counts by family: `3 device events (2 GEMM, 1 elementwise)`.
fn describe_events(al: &Alignment, side: usize, events: &[u32]) -> String {
    let fam = ByName::new(al.traces[side]);
    let mut by: BTreeMap<Family, u64> = BTreeMap::new();
    for &d in events {
        *by.entry(fam.of(d as usize)).or_default() += 1;
    }
    let fams: Vec<String> = by
        .iter()
        .map(|(f, n)| format!("{n} {}", f.as_str()))
        .collect();
    match events.len() {
        0 => "no device events".into(),
        1 => format!("1 device event ({})", fams.join(", ")),
        n => format!("{n} device events ({})", fams.join(", ")),
    }
}

fn signed_us(ns: i64) -> String {
    let s = fmt_us(ns.abs() as f64);
    if ns >= 0 {
        format!("+{s}")
    } else {
        format!("−{s}")
    }
}

/// The sentence that says why a node differs.
fn why(al: &Alignment, item: &Item, metric: Metric) -> String {
    let delta = match item.occurrences {
        1 => format!("{} on B", signed_us(item.ns[1] - item.ns[0])),
        n => format!(
            "{} on B over its {n} occurrences",
            signed_us(item.ns[1] - item.ns[0])
        ),
    };
    let Some(k) = item.node else {
        let [a, b] = [0, 1].map(|s| al.work[s].unattributed.len());
        return format!(
            "device work linked to no op in the scope: {a} events on A, {b} on B: {delta}"
        );
    };
    let each = if item.occurrences > 1 {
        " each time"
    } else {
        ""
    };
    let ev = |side| describe_events(al, side, &al.events_of(side, k)) + each;
    let idle = |side: usize| match item.idle[side] {
        0 => String::new(),
        ns => format!(", idle {} between them", fmt_us(ns as f64)),
    };
    let time = |side: usize| match metric {
        Metric::Device => format!(
            "{} in {}{}",
            fmt_us(item.ns[side] as f64),
            ev(side),
            idle(side)
        ),
        Metric::Host => format!("{} of CPU", fmt_us(item.ns[side] as f64)),
    };
    let (na, nb) = (al.names(0, k), al.names(1, k));
    match al.aligned.kind[k] {
        NodeKind::Matched if k == 0 => format!(
            "time in the scope outside its ops: A {}, B {}: {delta}",
            time(0),
            time(1)
        ),
        NodeKind::Matched if al.is_annotation(k) => format!(
            "time in this region outside its ops: A {}, B {}: {delta}",
            time(0),
            time(1)
        ),
        NodeKind::Matched => format!(
            "the same op on both; its own work: A {}, B {}: {delta}",
            time(0),
            time(1)
        ),
        NodeKind::Renamed if al.aligned.whole[k] => format!(
            "{} on A is {} on B (one kind of op in two frameworks); all its work: A {}, B {}: {delta}",
            na[0],
            nb[0],
            time(0),
            time(1)
        ),
        NodeKind::Renamed => format!(
            "{} on A is {} on B; its own work: A {}, B {}: {delta}",
            na[0],
            nb[0],
            time(0),
            time(1)
        ),
        NodeKind::Replaced => {
            let fused = match (na.len(), nb.len()) {
                (1, n) if n > 1 => format!("; one op on A ({}) against {n} on B", na[0]),
                (n, 1) if n > 1 => format!("; one op on B ({}) against {n} on A", nb[0]),
                _ => String::new(),
            };
            format!(
                "A runs {} where B runs {}{fused}: A {}, B {}: {delta}",
                list(&na, 6),
                list(&nb, 6),
                time(0),
                time(1)
            )
        }
        NodeKind::OnlyA => format!(
            "only on A: {}{}: {}: {delta}",
            list(&na, 6),
            noise_note(al, k, 0),
            time(0)
        ),
        NodeKind::OnlyB => format!(
            "only on B: {}{}: {}: {delta}",
            list(&nb, 6),
            noise_note(al, k, 1),
            time(1)
        ),
    }
}

/// When one side is an XLA profile (JAX, TensorFlow: XPlane) and the other
/// is not, their ops have different names (HLO ops and name scopes against
/// ATen ops), which this alignment does not map yet: said, so that the few
/// pairs it finds are not read as a line-up.
fn framework_note(al: &Alignment) -> Option<String> {
    let xla = al.traces.map(|t| t.xla.is_some());
    if xla[0] == xla[1] {
        return None;
    }
    let (x, other) = if xla[0] { ("A", "B") } else { ("B", "A") };
    Some(format!(
        "{x} is an XLA profile (JAX or TensorFlow) and {other} is not: their ops are named by different frameworks; steps pair with steps, matrix products and convolutions with their XLA ops (aten::linear with a dot_general; a gradient's, aten::mm inside autograd's backward nodes, with a transpose(jvp(…)) one), each pair compared whole, and what lies between them is lined up as replacements (the ops XLA fuses against the ATen ops PyTorch runs one by one) — other ops are not mapped onto each other"
    ))
}

fn side_name(side: usize) -> &'static str {
    ["A", "B"][side]
}

/// Each side narrowed to one device: which, why (asked for, or an XLA
/// run of several devices against a run of another number:
/// `alignment.rs`, `one_device_each`), and the other devices' time left
/// out.
fn devices_note(al: &Alignment) -> Option<String> {
    let narrowed: Vec<String> = (0..2)
        .filter_map(|side| {
            let tree = &al.trees[side];
            let device = tree.device?;
            let others = al.devices[side].iter().filter(|&&d| d != device).count();
            let left_out = format!(
                "{} of {} device time left out of {}'s totals",
                crate::numbers::fmt_ns(al.work[side].other_devices_ns as f64),
                match others {
                    1 => "the other device's".to_string(),
                    k => format!("the other {k} devices'"),
                },
                side_name(side),
            );
            Some(if al.device_asked[side] {
                format!(
                    "{}'s device {device} alone is compared, as asked — its device work ({left_out})",
                    side_name(side)
                )
            } else {
                format!(
                    "{}'s XLA ops ran on {} devices: its device {device} alone is compared — its ops and its device work ({left_out}), as the other side ran on another number of devices",
                    side_name(side),
                    tree.xla_devices,
                )
            })
        })
        .collect();
    (!narrowed.is_empty()).then(|| narrowed.join("; "))
}

/// " (dispatch only: views, conversions)" when every op of the segment is.
fn noise_note(al: &Alignment, k: usize, side: usize) -> &'static str {
    let tree = &al.trees[side];
    let all = al
        .nodes_of(side, k)
        .iter()
        .all(|&n| al.keys.noise[tree.key[n as usize] as usize]);
    if all {
        " (dispatch only: views, conversions)"
    } else {
        ""
    }
}

pub(super) fn report(al: &Alignment, opts: &DiffOptions) -> DiffReport {
    let both_device = al.work[0].has_device() && al.work[1].has_device();
    let metric = opts.metric.unwrap_or(if both_device {
        Metric::Device
    } else {
        Metric::Host
    });
    let totals = [al.total_ns(0, metric), al.total_ns(1, metric)];
    let mut buf = Vec::new();
    let mut items: Vec<Item> = (0..al.aligned.len())
        .map(|k| Item {
            idle: [al.idle_ns(0, k, &mut buf), al.idle_ns(1, k, &mut buf)],
            node: Some(k),
            ns: [al.item_ns(0, k, metric), al.item_ns(1, k, metric)],
            events: [al.event_count(0, k), al.event_count(1, k)],
            launches: [al.launches_of(0, k), al.launches_of(1, k)],
            occurrences: 1,
        })
        .collect();
    if metric == Metric::Device {
        items.push(Item {
            node: None,
            ns: [al.work[0].unattributed_ns, al.work[1].unattributed_ns],
            events: [0, 1].map(|s| al.work[s].unattributed.len() as u64),
            idle: [0, 0],
            launches: [0, 0],
            occurrences: 1,
        });
    }
    let mut paired = [0i64; 2];
    let mut counts = KindCounts::default();
    for it in &items {
        let Some(k) = it.node else { continue };
        if al.is_pair(k) || al.is_local(k) {
            paired[0] += it.ns[0];
            paired[1] += it.ns[1];
        }
        let seg =
            |side| -> u64 { al.segment_sum(side, k, |n| al.trees[side].size[n as usize] as u64) };
        match al.aligned.kind[k] {
            NodeKind::Matched => counts.matched += 1,
            NodeKind::Renamed => counts.renamed += 1,
            NodeKind::Replaced => counts.replaced += 1,
            NodeKind::OnlyA => counts.only_a += 1,
            NodeKind::OnlyB => counts.only_b += 1,
        }
        if al.is_pair(k) {
            counts.ops_paired += (k > 0) as u64;
        } else {
            counts.a_ops_in_segments += seg(0);
            counts.b_ops_in_segments += seg(1);
        }
    }
    let mut items = group(al, items);
    items.retain(|it| it.ns != [0, 0]);
    crate::sort::by(&mut items, &|x, y| {
        let d = |it: &Item| (it.ns[1] - it.ns[0]).abs();
        d(y).cmp(&d(x)).then(x.node.cmp(&y.node))
    });
    items.truncate(opts.top);
    let us = |ns: i64| ns as f64 / 1e3;
    let nodes: Vec<DiffNode> = items.iter().map(|it| node(al, it, metric)).collect();
    let ranked: Vec<usize> = items.iter().filter_map(|it| it.node).collect();
    let tree = super::tree_rows::tree_rows(
        al,
        metric,
        &|k| [al.item_ns(0, k, metric), al.item_ns(1, k, metric)],
        &ranked,
        (metric == Metric::Device).then(|| [0, 1].map(|s| al.work[s].unattributed_ns)),
        opts.tree_rows,
    );
    let delta_ns = totals[1] - totals[0];
    let explained_ns: i64 = items.iter().map(|it| it.ns[1] - it.ns[0]).sum();
    // Over the work that reaches an op: unlinked device work is neither.
    let share = |side: usize| {
        let linked = match metric {
            Metric::Device => totals[side] - al.work[side].unattributed_ns,
            Metric::Host => totals[side],
        };
        if linked <= 0 {
            1.0
        } else {
            (paired[side] as f64 / linked as f64).clamp(0.0, 1.0)
        }
    };
    let aligned_share = [share(0), share(1)];
    let mut notes = Vec::new();
    notes.push(match (metric, both_device) {
        (Metric::Device, _) => {
            "compared by device time (kernels, copies, sets, device windows)".into()
        }
        (Metric::Host, true) => "compared by host (CPU) time, as asked".into(),
        (Metric::Host, false) => {
            let none: Vec<&str> = [(0, "A"), (1, "B")]
                .iter()
                .filter(|(s, _)| !al.work[*s].has_device())
                .map(|x| x.1)
                .collect();
            let verb = if none.len() > 1 { "have" } else { "has" };
            format!(
                "compared by host (CPU) time: {} {verb} no device work in the scope",
                none.join(" and ")
            )
        }
    });
    if let [Some((ka, na)), Some((kb, nb))] = al.picked {
        notes.push(format!(
            "the scope occurs {na} times on A and {nb} on B: each side's occurrence of median duration is compared (A's #{} of {na}, B's #{} of {nb}, in start order)",
            ka + 1,
            kb + 1
        ));
    }
    notes.extend(framework_note(al));
    notes.extend(devices_note(al));
    if aligned_share[0].min(aligned_share[1]) < POOR_ALIGNMENT {
        notes.push(format!(
            "these traces align poorly: only {:.0}% of A's and {:.0}% of B's time is in ops paired across the two, inside paired ops, or in short replacements (at most {LOCAL_SEGMENT_OPS} ops a side) — the rest is on one side only or in long unmatched runs: they may not be one workload, and the differences below are not op for op",
            100.0 * aligned_share[0],
            100.0 * aligned_share[1]
        ));
    }
    DiffReport {
        scope: al.scopes.clone(),
        metric,
        total_us: [us(totals[0]), us(totals[1])],
        delta_us: us(delta_ns),
        explained_us: us(explained_ns),
        remainder_us: us(delta_ns - explained_ns),
        aligned_share,
        counts,
        nodes,
        families: if metric == Metric::Device {
            families(al)
        } else {
            Vec::new()
        },
        notes,
        tree,
        roofline: [None, None],
    }
}

fn node(al: &Alignment, it: &Item, metric: Metric) -> DiffNode {
    let us = |ns: i64| ns as f64 / 1e3;
    let (path, kind, [a_ops, b_ops]) = match it.node {
        Some(0) => (
            al.scopes[0].clone(),
            Some(NodeKind::Matched),
            [Vec::new(), Vec::new()],
        ),
        Some(k) => (
            al.path(k),
            Some(al.aligned.kind[k]),
            [al.names(0, k), al.names(1, k)],
        ),
        None => (
            "(device work linked to no op)".into(),
            None,
            [Vec::new(), Vec::new()],
        ),
    };
    DiffNode {
        id: it.node.map(|k| k as u32),
        path,
        occurrences: it.occurrences,
        kind,
        a_us: us(it.ns[0]),
        b_us: us(it.ns[1]),
        delta_us: us(it.ns[1] - it.ns[0]),
        a_events: it.events[0],
        b_events: it.events[1],
        a_launches: it.launches[0],
        b_launches: it.launches[1],
        a_idle_us: us(it.idle[0]),
        b_idle_us: us(it.idle[1]),
        a_ops,
        b_ops,
        why: why(al, it, metric),
    }
}

/// Kernel families over each side's device events in the scope.
fn families(al: &Alignment) -> Vec<FamilyRow> {
    let mut rows: BTreeMap<Family, FamilyRow> = BTreeMap::new();
    for side in 0..2 {
        let (t, w) = (al.traces[side], &al.work[side]);
        let fam = ByName::new(t);
        let mut by_name: rustc_hash::FxHashMap<(Family, crate::model::StrId), i64> =
            Default::default();
        for &d in w.dev.iter().chain(&w.unattributed) {
            let d = d as usize;
            let f = fam.of(d);
            let row = rows.entry(f).or_insert_with(|| FamilyRow {
                family: f,
                a_events: 0,
                a_us: 0.0,
                b_events: 0,
                b_us: 0.0,
                a_top: Vec::new(),
                b_top: Vec::new(),
            });
            let us = t.slices.dur_ns[d] as f64 / 1e3;
            if side == 0 {
                row.a_events += 1;
                row.a_us += us;
            } else {
                row.b_events += 1;
                row.b_us += us;
            }
            *by_name.entry((f, t.slices.name[d])).or_default() += t.slices.dur_ns[d];
        }
        for f in Family::ALL {
            let Some(row) = rows.get_mut(&f) else {
                continue;
            };
            let mut names: Vec<(&str, i64)> = by_name
                .iter()
                .filter(|((g, _), _)| *g == f)
                .map(|((_, n), ns)| (t.str(*n), *ns))
                .collect();
            crate::sort::by(&mut names, &|x, y| y.1.cmp(&x.1).then(x.0.cmp(y.0)));
            let top: Vec<String> = names.iter().take(3).map(|x| x.0.to_string()).collect();
            if side == 0 {
                row.a_top = top;
            } else {
                row.b_top = top;
            }
        }
    }
    let mut out: Vec<FamilyRow> = rows.into_values().collect();
    crate::sort::by(&mut out, &|x, y| {
        let d = |r: &FamilyRow| (r.b_us - r.a_us).abs();
        d(y).total_cmp(&d(x)).then(x.family.cmp(&y.family))
    });
    out
}

/// Items at the same place summed: the same path of keys (step and
/// region numbers read as `#`), the same kinds, the same ops — one row for
/// a difference that repeats in every step. The first item of a group
/// stands for it.
fn group(al: &Alignment, items: Vec<Item>) -> Vec<Item> {
    use std::hash::{Hash, Hasher};
    let n = al.aligned.len();
    let mut place: Vec<u32> = vec![0; n];
    let mut ids: rustc_hash::FxHashMap<(u32, u8, u64), u32> = Default::default();
    for k in 0..n {
        let mut h = rustc_hash::FxHasher::default();
        for side in 0..2 {
            let tree = &al.trees[side];
            for &m in al.nodes_of(side, k) {
                tree.key[m as usize].hash(&mut h);
            }
            u32::MAX.hash(&mut h);
        }
        let parent = if k == 0 {
            u32::MAX
        } else {
            place[al.aligned.parent[k] as usize]
        };
        let key = (parent, al.aligned.kind[k] as u8, h.finish());
        let next = ids.len() as u32;
        place[k] = *ids.entry(key).or_insert(next);
    }
    let mut out: Vec<Item> = Vec::new();
    let mut slot: rustc_hash::FxHashMap<u32, usize> = Default::default();
    for it in items {
        let Some(k) = it.node else {
            out.push(it);
            continue;
        };
        match slot.get(&place[k]) {
            Some(&j) => {
                for side in 0..2 {
                    out[j].ns[side] += it.ns[side];
                    out[j].events[side] += it.events[side];
                    out[j].idle[side] += it.idle[side];
                    out[j].launches[side] += it.launches[side];
                }
                out[j].occurrences += 1;
            }
            None => {
                slot.insert(place[k], out.len());
                out.push(it);
            }
        }
    }
    out
}

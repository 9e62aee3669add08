//! Two op trees, their alignment and each side's work, built once.

use super::attribute::{attribute, Work};
use super::keys::Keys;
use super::matcher::{align_trees, Aligned, NodeKind};
use super::tree::{build, has_module_scopes, OpTree};
use super::xla_nodes::XlaOps;
use crate::analysis::scope::{Scope, ScopeError};
use crate::model::Trace;

/// Two op trees, their alignment and each side's work: what [`super::diff`]
/// reports from (tests read it to see which ops paired).
pub struct Alignment<'t> {
    pub(super) traces: [&'t Trace; 2],
    pub(super) scopes: [String; 2],
    pub(super) keys: Keys,
    pub(super) trees: [OpTree; 2],
    pub(super) work: [Work; 2],
    pub(super) aligned: Aligned,
    /// When the scopes occur a different number of times on the two
    /// sides, the occurrence each side compares: (its index in start
    /// order, how many there are).
    pub(super) picked: [Option<(usize, usize)>; 2],
    /// Each side's devices (with device work, or an XLA trace's ops), and
    /// whether its one device was asked for (else chosen by the rule).
    pub(super) devices: [Vec<i64>; 2],
    pub(super) device_asked: [bool; 2],
}

/// Keeps the occurrence of median duration (the lower of two middles) —
/// a steady one, not a warm-up outlier — and says which it was.
fn pick_median(occ: &mut Vec<crate::analysis::scope::Occurrence>) -> Option<(usize, usize)> {
    if occ.len() < 2 {
        return (occ.len() == 1).then_some((0, 1));
    }
    let mut order: Vec<usize> = (0..occ.len()).collect();
    crate::sort::by_key(&mut order, &|&k| (occ[k].dur_ns(), k));
    let k = order[(occ.len() - 1) / 2];
    let n = occ.len();
    *occ = vec![occ[k]];
    Some((k, n))
}

/// Each side's XLA ops, the one device it is narrowed to (if any), and
/// its devices.
struct Sides {
    xla: [Option<XlaOps>; 2],
    device: [Option<i64>; 2],
    all: [Vec<i64>; 2],
}

/// Narrows each side to a device: the one asked for (an error when the
/// side has no such device), else — for an XLA run of several devices
/// against a run of another number (a JAX run on eight GPUs against a
/// PyTorch run on one: all eight devices' ops and time against one
/// device's compare unlike runs) — its lowest device its ops ran on.
/// Sides of as many devices are compared whole.
fn one_device_each(
    traces: [&Trace; 2],
    mut xla: [Option<XlaOps>; 2],
    asked: [Option<i64>; 2],
) -> Result<Sides, ScopeError> {
    let all = [0, 1].map(|side| {
        let mut d = device_indices(traces[side]);
        d.extend(xla[side].iter().flat_map(|x| x.devices.iter().copied()));
        d.sort_unstable();
        d.dedup();
        d
    });
    let count = |side: usize| match &xla[side] {
        Some(x) => x.devices.len(),
        None => all[side].len(),
    };
    let by_rule = count(0) != count(1);
    let mut device = [None, None];
    for (side, x) in xla.iter_mut().enumerate() {
        device[side] = match asked[side] {
            Some(k) if !all[side].contains(&k) => {
                let has: Vec<String> = all[side].iter().map(|d| d.to_string()).collect();
                return Err(ScopeError(format!(
                    "{} has no device {k} (its devices: {})",
                    ["A", "B"][side],
                    if has.is_empty() {
                        "none".to_string()
                    } else {
                        has.join(", ")
                    }
                )));
            }
            Some(k) => Some(k),
            None => x
                .as_ref()
                .filter(|x| by_rule && x.devices.len() > 1)
                .map(|x| x.devices[0]),
        };
        if let (Some(x), Some(k)) = (x.as_mut(), device[side]) {
            x.keep_device(traces[side], k);
        }
    }
    Ok(Sides { xla, device, all })
}

/// The devices (by index) a trace's device work ran on, lowest first.
fn device_indices(t: &Trace) -> Vec<i64> {
    let s = &t.slices;
    let mut seen: Vec<i64> = Vec::new();
    for d in 0..s.len() {
        if s.category[d].is_device_work() && !seen.contains(&s.device[d]) {
            seen.push(s.device[d]);
        }
    }
    seen.sort_unstable();
    seen
}

/// One aligned node as names: its kind, its depth and each side's ops.
#[derive(Clone, Debug, PartialEq)]
pub struct AlignedOps {
    pub kind: NodeKind,
    pub depth: usize,
    pub a: Vec<String>,
    pub b: Vec<String>,
}

impl<'t> Alignment<'t> {
    pub fn new(a: &'t Trace, sa: &Scope, b: &'t Trace, sb: &Scope) -> Result<Self, ScopeError> {
        Self::with_progress(a, sa, b, sb, &mut |_, _| {})
    }

    /// [`Alignment::new`], calling `progress(stage, done)` as it goes
    /// (`done`: the share of a whole diff, up to 0.9).
    pub fn with_progress(
        a: &'t Trace,
        sa: &Scope,
        b: &'t Trace,
        sb: &Scope,
        progress: &mut dyn FnMut(&'static str, f64),
    ) -> Result<Self, ScopeError> {
        Self::with_devices(a, sa, b, sb, [None, None], progress)
    }

    /// [`Alignment::with_progress`], each side narrowed to device
    /// `devices[side]` where one is given.
    pub fn with_devices(
        a: &'t Trace,
        sa: &Scope,
        b: &'t Trace,
        sb: &Scope,
        devices: [Option<i64>; 2],
        progress: &mut dyn FnMut(&'static str, f64),
    ) -> Result<Self, ScopeError> {
        progress("building A's op tree", 0.0);
        let modules = has_module_scopes(a) && has_module_scopes(b);
        let mut keys = Keys::default();
        let (mut oa, mut ob) = (sa.occurrences(a)?, sb.occurrences(b)?);
        let mut picked = [None, None];
        if oa.len() != ob.len() {
            picked = [pick_median(&mut oa), pick_median(&mut ob)];
        }
        let sides = one_device_each([a, b], [XlaOps::of(a), XlaOps::of(b)], devices)?;
        let Sides {
            xla: [xa, xb],
            device,
            all,
        } = sides;
        let mut ta = build(a, sa, oa, &mut keys, modules, xa);
        ta.device = device[0];
        progress("building B's op tree", 0.2);
        let mut tb = build(b, sb, ob, &mut keys, modules, xb);
        tb.device = device[1];
        progress("aligning the op trees", 0.4);
        let aligned = align_trees(&ta, &tb, &keys, &mut |x| {
            progress("aligning the op trees", 0.4 + 0.3 * x)
        });
        progress("attributing the device work", 0.7);
        let work = [attribute(a, &ta), attribute(b, &tb)];
        Ok(Alignment {
            traces: [a, b],
            scopes: [sa.label(), sb.label()],
            keys,
            trees: [ta, tb],
            work,
            aligned,
            picked,
            devices: all,
            device_asked: devices.map(|d| d.is_some()),
        })
    }

    /// The name of side `side`'s tree node `n` (the root: its scope).
    pub(super) fn name(&self, side: usize, n: u32) -> &str {
        let tree = &self.trees[side];
        match tree.slice[n as usize] {
            crate::model::NO_SLICE => &self.scopes[side],
            s => match tree.labels.get(s as usize) {
                Some(&label) if (label as usize) < tree.label_names.len() => {
                    &tree.label_names[label as usize]
                }
                _ => self.traces[side].slice_name(s as usize),
            },
        }
    }

    /// Side `side`'s device events attributed to an aligned node, each
    /// with the name of its lowest common op: the op it is under when that
    /// op pairs, else the pair above its segment (TraceLens' TraceDiff's
    /// `lowest_common_ancestor_name`). In start order.
    pub fn device_event_lcas(&self, side: usize) -> Vec<(u32, &str)> {
        let al = &self.aligned;
        let mut out = Vec::new();
        for k in 0..al.len() {
            let lca = if self.is_pair(k) {
                k
            } else {
                al.parent[k] as usize
            };
            let name = self.name(side, self.nodes_of(side, lca)[0]);
            self.each_event(side, k, |d| out.push((d, name)));
        }
        let start = &self.traces[side].slices.start_ns;
        crate::sort::by_key(&mut out, &|x| (start[x.0 as usize], x.0));
        out
    }

    /// Every aligned node below the root, parents before children.
    pub fn nodes(&self) -> Vec<AlignedOps> {
        let al = &self.aligned;
        let mut depth = vec![0usize; al.len()];
        (1..al.len())
            .map(|k| {
                depth[k] = depth[al.parent[k] as usize] + 1;
                AlignedOps {
                    kind: al.kind[k],
                    depth: depth[k],
                    a: al
                        .a_nodes(k)
                        .iter()
                        .map(|&n| self.name(0, n).to_string())
                        .collect(),
                    b: al
                        .b_nodes(k)
                        .iter()
                        .map(|&n| self.name(1, n).to_string())
                        .collect(),
                }
            })
            .collect()
    }
}

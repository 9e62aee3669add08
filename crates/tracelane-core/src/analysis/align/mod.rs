//! Two traces of one workload lined up op by op — across machines,
//! backends, `torch.compile` or a changed kernel — and their difference
//! explained node by node.
//!
//! 1. Each trace's op tree inside its scope (`tree.rs`): ops, annotations
//!    and (when both traces have them) `nn.Module:` scopes.
//! 2. The two trees aligned top down (`matcher.rs`): children of a pair are
//!    lined up by name (`sequence.rs`); what is left between two pairs is
//!    one segment at their lowest common pair — a replacement (a fused op
//!    against its pieces), an addition or a removal. Dispatch noise
//!    (views, conversions) weighs less than real ops, so an extra
//!    `aten::to` never displaces one.
//! 3. Each side's work attributed to its nodes through the links made at
//!    import (`attribute.rs`): device time, device events, launches, host time.
//! 4. The difference split over the aligned tree (`explain.rs`): a pair
//!    contributes the change in its own work (not its children's), a
//!    segment the change in all of its work, device work that reaches no
//!    op is unattributed. The contributions add up to the difference of
//!    the totals exactly; the report lists the largest and says what the
//!    rest (the remainder) comes to.
//!
//! The time compared is device time when both scopes have device work,
//! else host (CPU) time: a node's host time is its slice's duration, its
//! own the part not under its children (which can be negative where
//! another thread's ops were joined under it).

mod attribute;
mod explain;
pub mod family;
mod keys;
mod matcher;
mod sequence;
mod tree;

use serde::{Deserialize, Serialize};

use super::scope::{Scope, ScopeError};
use crate::model::Trace;

pub use matcher::NodeKind;

/// The time a diff compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Device events' durations (kernels, copies, sets, device windows).
    Device,
    /// Host slices' durations.
    Host,
}

/// What to compare and how much to list.
#[derive(Clone, Debug)]
pub struct DiffOptions {
    /// `None`: device time when both scopes have device work, else host.
    pub metric: Option<Metric>,
    /// How many nodes the report lists.
    pub top: usize,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            metric: None,
            top: 20,
        }
    }
}

/// One node of the difference: a pair's own work, a segment's, or the
/// unattributed device work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffNode {
    /// The aligned ancestors' names and the node's, ` › `-separated.
    pub path: String,
    /// How many places it sums: the same difference in every step or
    /// region occurrence is one node (`path` names the first).
    pub occurrences: u64,
    /// `None` for the unattributed device work.
    pub kind: Option<NodeKind>,
    pub a_us: f64,
    pub b_us: f64,
    /// `b_us - a_us`: positive where B takes longer.
    pub delta_us: f64,
    pub a_events: u64,
    pub b_events: u64,
    pub a_launches: u64,
    pub b_launches: u64,
    /// The ops on each side (a pair: its op; a segment: its run of ops).
    pub a_ops: Vec<String>,
    pub b_ops: Vec<String>,
    pub why: String,
}

/// One kernel family on both sides of the scope.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FamilyRow {
    pub family: family::Family,
    pub a_events: u64,
    pub a_us: f64,
    pub b_events: u64,
    pub b_us: f64,
    /// Each side's longest-running kernel names in the family (three).
    pub a_top: Vec<String>,
    pub b_top: Vec<String>,
}

/// How many aligned nodes of each kind, and the ops in them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KindCounts {
    pub matched: u64,
    pub renamed: u64,
    pub replaced: u64,
    pub only_a: u64,
    pub only_b: u64,
    /// Ops (nodes) on each side inside segments, and paired.
    pub a_ops_in_segments: u64,
    pub b_ops_in_segments: u64,
    pub ops_paired: u64,
}

/// `tracelane diff`: two traces aligned and their difference explained.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffReport {
    pub scope: [String; 2],
    pub metric: Metric,
    pub total_us: [f64; 2],
    /// `total_us[1] - total_us[0]`.
    pub delta_us: f64,
    /// The listed nodes' deltas summed.
    pub explained_us: f64,
    /// `delta_us - explained_us`: what no listed node explains.
    pub remainder_us: f64,
    /// Each side's share of its time (linked to an op) that is aligned: in
    /// paired ops' own work, in segments under a paired op (its other
    /// implementation), or in short replacements (at most 8 ops a side) —
    /// not on one side only at the model's level, not in long unmatched
    /// runs. Low when the traces are not of one workload.
    pub aligned_share: [f64; 2],
    pub counts: KindCounts,
    /// The largest contributions first.
    pub nodes: Vec<DiffNode>,
    /// Kernel families side by side (device time only).
    pub families: Vec<FamilyRow>,
    pub notes: Vec<String>,
}

/// Below this share of either side's time aligned (in paired ops' own work
/// or short replacements), the report says the traces align poorly.
pub const POOR_ALIGNMENT: f64 = 0.8;

/// The difference between `a` in `sa` and `b` in `sb`.
pub fn diff(
    a: &Trace,
    sa: &Scope,
    b: &Trace,
    sb: &Scope,
    opts: &DiffOptions,
) -> Result<DiffReport, ScopeError> {
    let aligned = Alignment::new(a, sa, b, sb)?;
    Ok(explain::report(&aligned, opts))
}

/// Two op trees, their alignment and each side's work: what [`diff`]
/// reports from (tests read it to see which ops paired).
pub struct Alignment<'t> {
    traces: [&'t Trace; 2],
    scopes: [String; 2],
    keys: keys::Keys,
    trees: [tree::OpTree; 2],
    work: [attribute::Work; 2],
    aligned: matcher::Aligned,
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
        let modules = tree::has_module_scopes(a) && tree::has_module_scopes(b);
        let mut keys = keys::Keys::default();
        let ta = tree::build(a, sa, &mut keys, modules)?;
        let tb = tree::build(b, sb, &mut keys, modules)?;
        let aligned = matcher::align_trees(&ta, &tb, &keys);
        let work = [attribute::attribute(a, &ta), attribute::attribute(b, &tb)];
        Ok(Alignment {
            traces: [a, b],
            scopes: [sa.label(), sb.label()],
            keys,
            trees: [ta, tb],
            work,
            aligned,
        })
    }

    /// The name of side `side`'s tree node `n` (the root: its scope).
    pub(super) fn name(&self, side: usize, n: u32) -> &str {
        match self.trees[side].slice[n as usize] {
            crate::model::NO_SLICE => &self.scopes[side],
            s => self.traces[side].slice_name(s as usize),
        }
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

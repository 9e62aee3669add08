//! What `tracelane diff` reports: plain data, serialisable.

use serde::{Deserialize, Serialize};

use super::matcher::NodeKind;

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
    /// How many rows of the aligned tree the report carries (0: none; the
    /// page draws them).
    pub tree_rows: usize,
    /// Each side's position on its own roofline (device time only). Off
    /// by default: it costs the roofline's work on both sides (seconds on
    /// a 1 GB trace, where the alignment takes a fraction of one).
    pub roofline: bool,
    /// The one device whose work each side compares (`tracelane diff
    /// --device`); `None`: all of it, but for an XLA run on several
    /// devices against a run on another number (then its lowest device).
    pub devices: [Option<i64>; 2],
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            metric: None,
            top: 20,
            tree_rows: 0,
            roofline: false,
            devices: [None, None],
        }
    }
}

/// One node of the difference: a pair's own work, a segment's, or the
/// unattributed device work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffNode {
    /// The aligned node ([`TreeRow::id`]; the first of the places it
    /// sums); `None` for the unattributed device work.
    pub id: Option<u32>,
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
    /// Device idle inside the node on each side: from its first device
    /// event's start to its last's end, the time none of them runs.
    pub a_idle_us: f64,
    pub b_idle_us: f64,
    /// The ops on each side (a pair: its op; a segment: its run of ops).
    pub a_ops: Vec<String>,
    pub b_ops: Vec<String>,
    pub why: String,
}

/// One kernel family on both sides of the scope.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FamilyRow {
    pub family: super::family::Family,
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
    /// The aligned tree's largest nodes, in tree order (preorder, children
    /// in sequence order): every listed node's ancestors are in it, and so
    /// are the ranked nodes'. Empty unless [`DiffOptions::tree_rows`] asks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tree: Vec<TreeRow>,
    /// Each side's position on its own roofline (when asked, by device
    /// time; `None` where no device work has a FLOP count).
    #[serde(default)]
    pub roofline: [Option<super::RooflinePosition>; 2],
}

/// One row of the aligned tree: a pair or a segment, with each side's
/// inclusive time, and where it is in each trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TreeRow {
    /// The aligned node (0: the two scopes); `None`: the device work in
    /// the scope that reaches no op (a child of the root).
    pub id: Option<u32>,
    pub depth: u32,
    pub kind: Option<NodeKind>,
    /// Its op, or each side's (`A ↔ B`) where they differ.
    pub label: String,
    /// Inclusive time on each side (its subtree's; a segment: all of it).
    pub a_us: f64,
    pub b_us: f64,
    /// Its own contribution to the difference (as a ranked node counts
    /// it: a pair's own work, a segment's all), B − A.
    pub own_delta_us: f64,
    /// Device events under it on each side.
    pub a_events: u64,
    pub b_events: u64,
    /// Each side's first slice (the model's slice index): what the
    /// timeline selects; `None` for the root and on a side it is absent.
    pub a_slice: Option<u32>,
    pub b_slice: Option<u32>,
    /// Each side's extent in its trace (ns): its host slices and the device
    /// work under them.
    pub a_span_ns: Option<[i64; 2]>,
    pub b_span_ns: Option<[i64; 2]>,
    /// Children left out of the tree (smaller than every row kept).
    pub hidden_children: u32,
}

/// Below this share of either side's time aligned (in paired ops' own work
/// or short replacements), the report says the traces align poorly.
pub const POOR_ALIGNMENT: f64 = 0.8;

/// What a node is, in words (`None`: the device work linked to no op).
pub fn kind_words(k: Option<NodeKind>) -> &'static str {
    match k {
        Some(NodeKind::Matched) => "same op",
        Some(NodeKind::Renamed) => "renamed",
        Some(NodeKind::Replaced) => "replaced",
        Some(NodeKind::OnlyA) => "A only",
        Some(NodeKind::OnlyB) => "B only",
        None => "unlinked",
    }
}

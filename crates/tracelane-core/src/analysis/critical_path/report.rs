//! What the critical path reports: its edges, each labelled by what bounds
//! it, the time by bound, and the ops ranked by their time on the path.

use serde::{Deserialize, Serialize};

use crate::analysis::frame::Mode;

/// What bounds an edge of the critical path (HTA's `bound_by`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    CpuBound,
    GpuComputeBound,
    GpuCommunicationBound,
    GpuKernelLaunchOverhead,
    GpuKernelKernelOverhead,
    /// A dependency or sync edge (HTA's empty label); weighs nothing.
    Dependency,
}

impl Bound {
    pub const ALL: [Bound; 6] = [
        Bound::CpuBound,
        Bound::GpuComputeBound,
        Bound::GpuCommunicationBound,
        Bound::GpuKernelLaunchOverhead,
        Bound::GpuKernelKernelOverhead,
        Bound::Dependency,
    ];
    /// HTA's label.
    pub fn key(self) -> &'static str {
        match self {
            Bound::CpuBound => "cpu_bound",
            Bound::GpuComputeBound => "gpu_compute_bound",
            Bound::GpuCommunicationBound => "gpu_communication_bound",
            Bound::GpuKernelLaunchOverhead => "gpu_kernel_launch_overhead",
            Bound::GpuKernelKernelOverhead => "gpu_kernel_kernel_overhead",
            Bound::Dependency => "",
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            Bound::CpuBound => "CPU-bound",
            Bound::GpuComputeBound => "compute-bound",
            Bound::GpuCommunicationBound => "communication-bound",
            Bound::GpuKernelLaunchOverhead => "launch overhead",
            Bound::GpuKernelKernelOverhead => "kernel–kernel gap",
            Bound::Dependency => "dependency",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// An op or kernel span, or time between nested ops.
    Span,
    Dependency,
    LaunchDelay,
    KernelKernelDelay,
    Sync,
}

/// One edge of the path, in path order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathEdge {
    pub from_ns: i64,
    pub to_ns: i64,
    pub weight_ns: i64,
    pub kind: EdgeKind,
    pub bound: Bound,
    /// The event the edge's time belongs to (a model slice), if any.
    pub slice: u32,
}

/// An op (or kernel) name with time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NamedTime {
    pub name: String,
    pub ns: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CriticalPathReport {
    pub mode: Mode,
    pub scope: String,
    /// Sum of the path's edge weights.
    pub length_ns: i64,
    /// The scope's wall time: its events' first start to their last end
    /// (device work launched inside it included).
    pub wall_ns: i64,
    /// Time on the path by label, every label (zero where none).
    pub by_bound: Vec<(Bound, i64)>,
    /// The path's edges in order (a caller that only shows the summary may
    /// drop them: `edge_count`, `start_ns` and `end_ns` stay).
    pub edges: Vec<PathEdge>,
    pub edge_count: usize,
    /// Where the path starts and ends (trace clock).
    pub start_ns: i64,
    pub end_ns: i64,
    /// Ops and kernels by their time on the path, most first.
    pub on_path: Vec<NamedTime>,
    /// The same events by their total time in the scope, most first.
    pub by_total: Vec<NamedTime>,
    pub nodes: usize,
    pub graph_edges: usize,
    pub notes: Vec<String>,
}

impl CriticalPathReport {
    /// HTA's `critical_path` object: length and the share of each label.
    pub fn hta_json(&self) -> serde_json::Value {
        let mut by = serde_json::Map::new();
        for &(b, ns) in &self.by_bound {
            let pct = if self.length_ns != 0 {
                100.0 * ns as f64 / self.length_ns as f64
            } else {
                0.0
            };
            // HTA's groupby lists the labels that occur; "" (dependency)
            // only matters when it carries time.
            let occurs = self.edges.iter().any(|e| e.bound == b);
            if occurs && !(b == Bound::Dependency && ns == 0) {
                by.insert(b.key().to_string(), serde_json::json!(pct));
            }
        }
        serde_json::json!({
            "length_us": self.length_ns as f64 / 1000.0,
            "bound_by_pct": by,
        })
    }
}

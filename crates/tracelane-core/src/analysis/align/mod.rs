//! Two traces of one workload lined up op by op — across machines,
//! backends, `torch.compile` or a changed kernel — and their difference
//! explained node by node.
//!
//! 1. Each trace's op tree inside its scope (`tree.rs`): ops, annotations
//!    and (when both traces have them) `nn.Module:` scopes; in an XLA
//!    profile its device ops, named by their framework op (`xla_nodes.rs`).
//! 2. The two trees aligned top down (`matcher.rs`): children of a pair are
//!    lined up by name (`sequence.rs`); what is left between two pairs is
//!    one segment at their lowest common pair — a replacement (a fused op
//!    against its pieces), an addition or a removal; ops inside a
//!    replacement that pair across nesting are paired out of it
//!    (`reconcile.rs`, TraceLens' rule). Dispatch noise
//!    (views, conversions) weighs less than real ops, so an extra
//!    `aten::to` never displaces one.
//! 3. Each side's work attributed to its nodes through the links made at
//!    import (`attribute.rs`): device time, device events, launches, host time.
//! 4. The difference split over the aligned tree (`explain.rs`): a pair
//!    contributes the change in its own work (not its children's) — a
//!    pair across frameworks, whose children are not lined up, in all of
//!    it — a segment the change in all of its work, device work that reaches no
//!    op is unattributed. The contributions add up to the difference of
//!    the totals exactly; the report lists the largest and says what the
//!    rest (the remainder) comes to.
//!
//! The time compared is device time when both scopes have device work,
//! else host (CPU) time: a node's host time is its slice's duration, its
//! own the part not under its children (which can be negative where
//! another thread's ops were joined under it).

mod alignment;
mod attribute;
mod explain;
pub mod family;
mod keys;
mod matcher;
mod reconcile;
mod report;
mod roofline_side;
mod sequence;
mod tree;
mod tree_rows;
mod xla_nodes;

use super::scope::{Scope, ScopeError};
use crate::model::Trace;

pub use alignment::{AlignedOps, Alignment};
pub use matcher::NodeKind;
pub use report::*;
pub use roofline_side::{position, RooflinePosition};

/// The difference between `a` in `sa` and `b` in `sb`.
pub fn diff(
    a: &Trace,
    sa: &Scope,
    b: &Trace,
    sb: &Scope,
    opts: &DiffOptions,
) -> Result<DiffReport, ScopeError> {
    diff_with_progress(a, sa, b, sb, opts, &mut |_, _| {})
}

/// [`diff`], saying how far it has come: `progress(stage, done)`, `done`
/// the share of the whole (0 to 1), called a few dozen times at most.
pub fn diff_with_progress(
    a: &Trace,
    sa: &Scope,
    b: &Trace,
    sb: &Scope,
    opts: &DiffOptions,
    progress: &mut dyn FnMut(&'static str, f64),
) -> Result<DiffReport, ScopeError> {
    let aligned = Alignment::with_devices(a, sa, b, sb, opts.devices, progress)?;
    progress("explaining the difference", 0.85);
    let mut report = explain::report(&aligned, opts);
    if opts.roofline && report.metric == Metric::Device {
        progress("placing each side on its roofline", 0.92);
        // The roofline places a side's work on all its devices: its share
        // is of all their time, a side narrowed to one device included.
        let ns = |side: usize| {
            (report.total_us[side] * 1e3).round() as i64 + aligned.work[side].other_devices_ns
        };
        report.roofline = [position(a, sa, ns(0)), position(b, sb, ns(1))];
    }
    progress("done", 1.0);
    Ok(report)
}

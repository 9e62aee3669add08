//! Each device op occurrence of an XPlane profile, as the op tables count
//! them (`mod.rs`'s rules): the kernels of one HLO op and group in a row on
//! a stream line are one occurrence, named by the HLO op and the framework
//! op its instruction came from (the ops XLA:CPU runs on host threads:
//! `cpu_ops.rs`). The structural alignment ([`crate::analysis::align`]) makes each an op
//! of its tree.

use serde_json::Value;

use super::device_events::{is_derived, DerivedOps, EventStats};
use super::tf_op;
use crate::model::{Trace, TrackKind, NO_STR};

/// One occurrence of a device op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceOp {
    /// Its events (kernels) in start order, on one stream line.
    pub slices: Vec<u32>,
    /// The HLO op (`cudnn-conv.1`), or the event's name for an op known
    /// by its `tf_op` stat alone.
    pub hlo_op: String,
    /// The framework op's name (`jit(f)/conv_general_dilated`, the name
    /// stack of a JAX op), empty when the instruction records none.
    pub framework_op: String,
}

/// Every device op occurrence of an XPlane profile (none for another
/// trace), in line order then start order.
pub fn device_ops(t: &Trace) -> Vec<DeviceOp> {
    let Some(xla) = t.xla.as_deref() else {
        return Vec::new();
    };
    if super::tpu_ops::is_tpu_profile(t) {
        return super::tpu_ops::outermost_ops(t)
            .into_iter()
            .map(|(i, hlo_op, provenance)| DeviceOp {
                slices: vec![i],
                hlo_op,
                framework_op: framework_op(&provenance),
            })
            .collect();
    }
    let mut out: Vec<DeviceOp> = Vec::new();
    for (p, process) in t.processes.iter().enumerate() {
        if !t
            .str(process.name.unwrap_or(NO_STR))
            .starts_with("/device:")
        {
            continue;
        }
        let derived = DerivedOps::of(t, p);
        for track in t.tracks.iter().filter(|k| k.process.0 as usize == p) {
            let lane = t.str(track.name.unwrap_or(NO_STR));
            if track.kind != TrackKind::DeviceStream || is_derived(lane) {
                continue;
            }
            // The occurrence being extended: its index in `out` and group
            // (xprof's `HLOTracker`: an event without a group id starts
            // one of its own; events of no known op leave it open).
            let mut current: Option<(usize, i64)> = None;
            for i in track.slices.clone() {
                let args: Value =
                    serde_json::from_str(&t.slice_args_json(i as usize)).unwrap_or(Value::Null);
                let mut stats = EventStats::of(&args);
                if stats.hlo_op.is_none() && stats.tf_op.is_none() {
                    if let Some((op, program)) = derived
                        .as_ref()
                        .and_then(|d| d.op_of(t, xla, track.tid, i as usize))
                    {
                        stats.hlo_op = Some(op);
                        stats.program_id = program;
                    }
                }
                if let Some(hlo) = stats.hlo_op {
                    let Some(instruction) =
                        stats.program_id.and_then(|id| xla.instruction(id, hlo))
                    else {
                        continue;
                    };
                    if let Some((k, group)) = current {
                        if out[k].hlo_op == hlo && stats.group_id == Some(group) {
                            out[k].slices.push(i);
                            continue;
                        }
                    }
                    let framework_op = framework_op(&instruction.provenance);
                    current = Some((out.len(), stats.group_id.unwrap_or(0)));
                    out.push(DeviceOp {
                        slices: vec![i],
                        hlo_op: hlo.to_string(),
                        framework_op,
                    });
                } else if let Some(tf) = stats.tf_op {
                    current = None;
                    out.push(DeviceOp {
                        slices: vec![i],
                        hlo_op: t.slice_name(i as usize).to_string(),
                        framework_op: tf_op::parse(tf).name,
                    });
                }
            }
        }
    }
    out
}

/// The framework op's name of an instruction's `op_name:op_type`.
pub(super) fn framework_op(provenance: &str) -> String {
    match provenance {
        "" => String::new(),
        full => tf_op::parse(full).name,
    }
}

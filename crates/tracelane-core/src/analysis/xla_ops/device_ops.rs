//! Each device op occurrence of an XPlane profile, as the op tables count
//! them (`mod.rs`'s rules): the kernels of one HLO op and group in a row on
//! a stream line are one occurrence, named by the HLO op and the framework
//! op its instruction came from; and the ops XLA:CPU runs on host threads.
//! The structural alignment ([`crate::analysis::align`]) makes each an op
//! of its tree.

use rustc_hash::FxHashMap;
use serde_json::Value;

use super::device_events::{is_derived, DerivedOps, EventStats};
use super::tf_op;
use crate::model::{ArgsKey, Trace, TrackKind, NO_STR};
use crate::packed_args::Stat;

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

/// The HLO ops XLA:CPU ran on host threads: TraceMe events with an
/// `hlo_op` stat of an embedded module (`ynn_fusion`, `dot.1`), one
/// occurrence each, in slice order.
pub fn host_ops(t: &Trace) -> Vec<DeviceOp> {
    let Some(xla) = t.xla.as_deref() else {
        return Vec::new();
    };
    /// An event's op as its stats name it: HLO op, program id, module.
    type Named = (String, Option<i64>, String);
    let keys = OpKeys::of(t);
    // Millions of events run a few hundred ops: each resolved once (to
    // its HLO op and framework op, `None`: no module defines it).
    let mut seen: FxHashMap<Named, Option<(String, String)>> = FxHashMap::default();
    let mut out = Vec::new();
    for i in 0..t.slices.len() {
        if !t.on_host(i) || !t.slice_args_have(i, &keys.hlo_op) {
            continue;
        }
        let Some((hlo, program_id, module)) = keys.read(t, i) else {
            continue;
        };
        // `hlo_op` may list nested ops, outermost first.
        let hlo = hlo.rsplit("::").next().unwrap_or(&hlo).to_string();
        let resolved =
            seen.entry((hlo, program_id, module))
                .or_insert_with_key(|(hlo, program, module)| {
                    // XLA:CPU's runtime program ids are not the metadata
                    // plane's (jax 0.10 on CPU: 34 against 1..16): then by
                    // the module's name.
                    let instruction = program
                        .and_then(|id| xla.instruction(id, hlo))
                        .or_else(|| xla.instruction(xla.program_of(module)?, hlo))?;
                    Some((hlo.clone(), framework_op(&instruction.provenance)))
                });
        if let Some((hlo_op, framework_op)) = resolved {
            out.push(DeviceOp {
                slices: vec![i as u32],
                hlo_op: hlo_op.clone(),
                framework_op: framework_op.clone(),
            });
        }
    }
    out
}

/// What names an XLA:CPU op event: its `hlo_op`, `program_id` and
/// `hlo_module` stats, read from its packed args (millions of events:
/// written out as JSON and parsed only where the packed entry cannot say).
struct OpKeys {
    hlo_op: ArgsKey,
    program_id: ArgsKey,
    hlo_module: ArgsKey,
}

impl OpKeys {
    fn of(t: &Trace) -> OpKeys {
        OpKeys {
            hlo_op: t.args_key("hlo_op"),
            program_id: t.args_key("program_id"),
            hlo_module: t.args_key("hlo_module"),
        }
    }

    /// Slice `i`'s HLO op (non-empty), program id and module (empty when
    /// it has none).
    fn read(&self, t: &Trace, i: usize) -> Option<(String, Option<i64>, String)> {
        let p = t.tracks[t.slices.track[i].idx()].process;
        let [hlo, program, module] =
            [&self.hlo_op, &self.program_id, &self.hlo_module].map(|k| t.slice_packed_stat(i, k));
        let text = |s: Stat| match s {
            Stat::Value(v) => t.packed_args.value_text(p, v).map(|c| c.into_owned()),
            _ => None,
        };
        if [hlo, program, module]
            .iter()
            .any(|s| matches!(s, Stat::Json))
        {
            return Self::read_json(t, i);
        }
        let hlo = text(hlo).filter(|h| !h.is_empty())?;
        let program = match program {
            Stat::Value(v) => v.as_i64(),
            _ => None,
        };
        Some((hlo, program, text(module).unwrap_or_default()))
    }

    /// The same from the args' JSON.
    fn read_json(t: &Trace, i: usize) -> Option<(String, Option<i64>, String)> {
        /// The stats read, borrowed from the event's args.
        #[derive(serde::Deserialize)]
        struct Stats<'a> {
            #[serde(borrow)]
            hlo_op: Option<std::borrow::Cow<'a, str>>,
            program_id: Option<i64>,
            #[serde(borrow)]
            hlo_module: Option<std::borrow::Cow<'a, str>>,
        }
        let args = t.slice_args_json(i);
        let stats = serde_json::from_str::<Stats>(&args).ok()?;
        let hlo = stats.hlo_op.filter(|h| !h.is_empty())?.into_owned();
        let module = stats.hlo_module.map(|m| m.into_owned()).unwrap_or_default();
        Some((hlo, stats.program_id, module))
    }
}

/// The framework op's name of an instruction's `op_name:op_type`.
fn framework_op(provenance: &str) -> String {
    match provenance {
        "" => String::new(),
        full => tf_op::parse(full).name,
    }
}

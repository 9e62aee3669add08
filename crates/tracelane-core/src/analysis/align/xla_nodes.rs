//! The ops of an XLA profile (JAX, TensorFlow: an XPlane) in its op tree.
//!
//! An XLA program's ops run as device work: its host threads hold the
//! jitted calls (`PjitFunction(f)`), the module executions
//! (`jit_f:XLA GPU module`), sometimes one TraceMe per thunk, and the
//! runtime's own TraceMes (`PjRtStreamExecutorLoadedExecutable::…`,
//! `ThreadpoolListener::…`, buffer waits). So in an XLA trace:
//!
//! - each device op occurrence (the kernels of one HLO op in a row, as
//!   xprof's op tables count them: [`crate::analysis::xla_ops::device_ops`])
//!   is an op of the tree, under the node above the runtime call that
//!   launched it, else wherever its start falls (a top-level op); an op
//!   XLA:CPU runs is a host TraceMe, already in the tree;
//! - an op's key is its framework op's name stack less the `jit(…)` / `pjit(…)`
//!   scopes (`conv_general_dilated`, `jvp(bsd,de->bse)/dot_general`): what
//!   JAX versions and compilers keep, where HLO op names (`fusion.12`,
//!   `cudnn-conv.1.0`) change; without one, the HLO op without numbering;
//! - a step (`StepTraceAnnotation`, a TraceMe with a `step_num` stat) is
//!   keyed as PyTorch's `ProfilerStep#N` is;
//! - the runtime's TraceMes are not ops: a C++ method (`Class::Method`),
//!   PjRt's buffer and allocation steps, XLA:CPU's `end: …` markers. What
//!   they hold belongs to the node above them.

use rustc_hash::FxHashMap;

use crate::analysis::xla_ops::{cpu_ops, device_ops, is_tpu_profile};
use crate::model::{Trace, NO_SLICE};

/// The ops of an XLA trace: device ops by their first event, and the
/// host events of the ops XLA:CPU runs.
pub(super) struct XlaOps {
    /// The first event of each event's occurrence (every event of a
    /// device op).
    pub(super) first_of: FxHashMap<u32, u32>,
    /// The device ops' first events.
    pub(super) device: Vec<u32>,
    /// By slice: a device op's first event's or a host op's name, as an
    /// index in `names` ([`NOT_OP`] for any other slice; [`STEP`] for a step).
    pub(super) name_of: Vec<u32>,
    /// Each distinct op's key name and label
    /// (`cudnn-conv.1 · jit(f)/conv_general_dilated`).
    pub(super) names: Vec<(String, String)>,
    /// The devices (their indices, lowest first) that ran them.
    pub(super) devices: Vec<i64>,
    /// The one device whose ops are kept ([`XlaOps::keep_device`]).
    pub(super) kept: Option<i64>,
    /// By slice, whether it is a device op's event, on any device — kept
    /// where the device's work is its ops' events alone: a TPU records
    /// its ops nested (a loop and its body, the program's run around them
    /// all); empty for any other trace.
    pub(super) op_event: Vec<bool>,
}

/// [`XlaOps::name_of`] of a slice that is not an XLA op…
pub(super) const NOT_OP: u32 = u32::MAX;
/// …and of the training loop's steps (`jax.profiler.StepTraceAnnotation`: a
/// host TraceMe with a `step_num` stat), keyed as PyTorch's
/// `ProfilerStep#N` are: one step pairs with another.
pub(super) const STEP: u32 = u32::MAX - 1;

impl XlaOps {
    /// `None` for a trace that is not an XLA profile.
    pub(super) fn of(t: &Trace) -> Option<XlaOps> {
        t.xla.as_ref()?;
        let mut x = XlaOps {
            first_of: FxHashMap::default(),
            device: Vec::new(),
            name_of: vec![NOT_OP; t.slices.len()],
            names: Vec::new(),
            devices: Vec::new(),
            kept: None,
            op_event: Vec::new(),
        };
        let ops_only = is_tpu_profile(t);
        if ops_only {
            x.op_event = vec![false; t.slices.len()];
        }
        let step_num = t.args_key("step_num");
        for s in 0..t.slices.len() {
            if t.on_host(s) && t.slice_args_have(s, &step_num) {
                x.name_of[s] = STEP;
            }
        }
        let mut index: FxHashMap<(String, String), u32> = FxHashMap::default();
        let mut name = |hlo: &str, framework: &str, names: &mut Vec<(String, String)>| {
            let k = (hlo.to_string(), framework.to_string());
            *index.entry(k).or_insert_with(|| {
                names.push(named(hlo, framework));
                names.len() as u32 - 1
            })
        };
        for op in device_ops(t) {
            let first = op.slices[0];
            let device = t.slices.device[first as usize];
            if x.devices.last() != Some(&device) {
                x.devices.push(device);
            }
            for &s in &op.slices {
                x.first_of.insert(s, first);
                if ops_only {
                    x.op_event[s as usize] = true;
                }
            }
            x.device.push(first);
            let k = name(&op.hlo_op, &op.framework_op, &mut x.names);
            x.name_of[first as usize] = k;
        }
        let cpu = cpu_ops(t);
        let ks: Vec<u32> = cpu
            .ops
            .iter()
            .map(|(hlo, framework)| name(hlo, framework, &mut x.names))
            .collect();
        for &(s, op) in &cpu.events {
            x.name_of[s as usize] = ks[op as usize];
        }
        x.devices.sort_unstable();
        x.devices.dedup();
        Some(x)
    }

    /// Keeps device `index`'s ops and drops the others': one device of
    /// an SPMD run compared against a run of another number of devices.
    pub(super) fn keep_device(&mut self, t: &Trace, index: i64) {
        let on = |s: u32| t.slices.device[s as usize] == index;
        for &first in self.device.iter().filter(|&&f| !on(f)) {
            self.name_of[first as usize] = NOT_OP;
        }
        self.device.retain(|&f| on(f));
        self.first_of.retain(|_, f| on(*f));
        self.kept = Some(index);
    }

    /// Of the top-level nodes, those that may join another thread's
    /// annotation open at their start. The device ops of several devices
    /// (an SPMD program on eight GPUs) start inside whichever one is open
    /// then, one device's or another's: they join steps and regions (not
    /// `windowed`), never a top-level annotation by time alone.
    pub(super) fn joinable(&self, tops: &[u32], windowed: bool) -> Vec<u32> {
        let spmd = windowed && self.kept.is_none() && self.devices.len() > 1;
        tops.iter()
            .copied()
            .filter(|s| !spmd || self.first_of.get(s) != Some(s))
            .collect()
    }

    /// Each event's nearest node slice (`anc`) made its op's first event,
    /// and by slice, each device op's parent slice: the node slice above
    /// the host slice its first event is linked to ([`NO_SLICE`]: none, a top-level
    /// op; [`NOT_OP`]: not a device op; empty: no device ops).
    pub(super) fn hang(&self, t: &Trace, anc: &mut [u32]) -> Vec<u32> {
        for (&s, &first) in &self.first_of {
            anc[s as usize] = first;
        }
        let mut parent = vec![NOT_OP; if self.device.is_empty() { 0 } else { anc.len() }];
        for &first in &self.device {
            parent[first as usize] = match t.links.host_slice(first) {
                NO_SLICE => NO_SLICE,
                r => anc[r as usize],
            };
        }
        parent
    }

    /// The key name of slice `s`'s op, if it is one.
    pub(super) fn key_of(&self, s: u32) -> Option<&str> {
        match self.name_of[s as usize] {
            NOT_OP | STEP => None,
            k => Some(&self.names[k as usize].0),
        }
    }

    pub(super) fn is_step(&self, s: u32) -> bool {
        self.name_of[s as usize] == STEP
    }
}

/// An op's key name and label.
fn named(hlo_op: &str, framework_op: &str) -> (String, String) {
    let label = if framework_op.is_empty() {
        hlo_op.to_string()
    } else {
        format!("{hlo_op} · {framework_op}")
    };
    (key_name(framework_op, hlo_op), label)
}

/// The name an op is aligned by.
fn key_name(framework_op: &str, hlo_op: &str) -> String {
    let scopes: Vec<&str> = framework_op
        .split('/')
        .filter(|p| !p.is_empty() && !p.starts_with("jit(") && !p.starts_with("pjit("))
        .collect();
    if scopes.is_empty() {
        // `fusion.12` and `fusion.3`, `cudnn-conv.1.0` and `cudnn-conv.1`.
        let base = hlo_op.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        format!("hlo:{base}")
    } else {
        format!("xla:{}", scopes.join("/"))
    }
}

/// PjRt's steps around an execution, attested in JAX 0.4–0.8 profiles
/// (CPU, ROCm): not ops of the program.
const RUNTIME_STEPS: &[&str] = &[
    "Wait for usage holds",
    "Wait for donation holds",
    "RecordUsage",
    "MemoryAllocation",
    "MemoryDeallocation",
    "ThenExecuteCallback",
    "ComputeSemaphoreAcquire",
    "Build buffer allocations",
    "MakeOutputBuffers",
    "DevicePut",
    "ParseArguments",
    "Handle inputs",
    "Handle input event recording",
    "AllocateOutputBuffersWithInputReuse",
    "PJRT_LoadedExecutable_Execute",
];

/// Is this host TraceMe of an XLA trace the runtime's, not the program's?
pub(super) fn is_runtime_traceme(name: &str) -> bool {
    name.contains("::") || name.starts_with("end: ") || RUNTIME_STEPS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_ops_key_is_its_name_stack_without_the_jit_scopes() {
        let conv = "conv_general_dilated";
        assert_eq!(
            key_name(
                &format!("jit(forward_3d_conv)/jit(main)/{conv}"),
                "cudnn-conv.1.0"
            ),
            key_name(&format!("jit(forward_3d_conv)/{conv}"), "cudnn-conv.1"),
        );
        assert_eq!(
            key_name(
                "jit(loss_fn)/transpose(jvp())/te_fused_attn_backward_ffi",
                "x"
            ),
            "xla:transpose(jvp())/te_fused_attn_backward_ffi"
        );
        assert_eq!(key_name("", "fusion.12"), key_name("", "fusion.3"));
        assert_ne!(key_name("", "fusion.12"), key_name("", "loop_fusion.3"));
    }

    #[test]
    fn the_runtimes_tracemes_are_not_ops_but_the_programs_are() {
        for name in [
            "PjRtStreamExecutorLoadedExecutable::ExecuteHelper",
            "ThreadpoolListener::StartRegion",
            "end: add_rsqrt_fusion",
            "Wait for usage holds",
        ] {
            assert!(is_runtime_traceme(name), "{name}");
        }
        for name in [
            "PjitFunction(loss_fn)",
            "jit_loss_fn:XLA GPU module",
            "gemm_fusion_dot.3",
            "train",
        ] {
            assert!(!is_runtime_traceme(name), "{name}");
        }
    }
}

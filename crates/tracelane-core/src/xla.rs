//! What an XPlane profile says beside its events: the compiled XLA
//! modules it embeds (each HLO instruction's category and the framework
//! op it came from), the devices' capabilities and the session's wall
//! clock. The XPlane reader fills it; the XLA op tables
//! ([`crate::analysis::xla_ops`]) read it.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap as HashMap;

/// One HLO instruction, as xprof's `HloInstructionWrapper` describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HloInstruction {
    /// XLA's `HloInstruction::ToCategory()` (`loop fusion`, `custom-call`,
    /// `data formatting`, …).
    pub category: String,
    /// `TfOpFullname(op_type, op_name)` of its metadata: `op_name:op_type`
    /// (a JAX name stack such as `jit(f)/dot_general:`), or empty.
    pub provenance: String,
    pub opcode: String,
    /// `metadata.source_file:source_line`, or empty.
    pub source: String,
    /// FLOPs and HBM bytes of one execution, as xprof's GPU cost analysis
    /// counts them ([`crate::xla_cost`]); `None` where it knows none.
    pub flops: Option<i64>,
    pub hbm_bytes: Option<i64>,
}

/// Is `opcode` one XLA's `HloInstruction::IsElementwise()` is true of?
pub fn is_elementwise(opcode: &str) -> bool {
    ELEMENTWISE.contains(&opcode)
}

/// Opcodes XLA's `IsElementwise()` is true of (`hlo_opcode.h`), by their
/// text names.
const ELEMENTWISE: &[&str] = &[
    "abs",
    "add",
    "atan2",
    "and",
    "bitcast-convert",
    "cbrt",
    "ceil",
    "clamp",
    "clz",
    "compare",
    "complex",
    "convert",
    "cosine",
    "divide",
    "erf",
    "exponential",
    "exponential-minus-one",
    "floor",
    "imag",
    "is-finite",
    "log",
    "log-plus-one",
    "logistic",
    "map",
    "maximum",
    "minimum",
    "multiply",
    "negate",
    "not",
    "or",
    "popcnt",
    "power",
    "real",
    "reduce-precision",
    "remainder",
    "round-nearest-afz",
    "round-nearest-even",
    "rsqrt",
    "select",
    "shift-left",
    "shift-right-arithmetic",
    "shift-right-logical",
    "sign",
    "sine",
    "sqrt",
    "stochastic-convert",
    "subtract",
    "tan",
    "tanh",
    "xor",
];

/// A compiled module (`HloProto`) from `/host:metadata`.
#[derive(Clone, Debug, Default)]
pub struct HloModule {
    pub name: String,
    /// Instructions by name, fused computations' included.
    pub instructions: HashMap<String, HloInstruction>,
}

/// A device plane's capability stats (`device_vendor`, `clock_rate`, …).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct XlaDevice {
    /// The plane's name: `/device:GPU:0`, `/device:TPU:0`.
    pub plane: String,
    pub stats: Vec<(String, String)>,
}

/// The XPlane profile's tables beside its events.
#[derive(Clone, Debug, Default)]
pub struct XlaInfo {
    /// Modules by program id (the `/host:metadata` event metadata id).
    pub modules: BTreeMap<i64, HloModule>,
    pub devices: Vec<XlaDevice>,
    pub hostnames: Vec<String>,
    /// `Task Environment` `profile_start_time` / `profile_stop_time`, epoch ns.
    pub profile_start_ns: Option<i64>,
    pub profile_stop_ns: Option<i64>,
    /// HloProtos that could not be decoded (their kernels' ops stay unnamed).
    pub undecoded_modules: u64,
}

/// The name of a line xprof derives, without the source-line suffix
/// newer xprof versions add when they derive lines per stream group
/// (`XLA Ops - from #17`: `GetDerivedLineName` in
/// `xprof/utils/derived_timeline.cc`).
pub fn derived_line_base(name: &str) -> &str {
    match name.rsplit_once(" - from #") {
        Some((base, id)) if id.bytes().all(|c| c.is_ascii_digit()) => base,
        _ => name,
    }
}

impl XlaInfo {
    /// The program id of a module by its name (the first, when several
    /// programs compiled the same module).
    pub fn program_of(&self, module: &str) -> Option<i64> {
        self.modules
            .iter()
            .find(|(_, m)| m.name == module)
            .map(|(&id, _)| id)
    }

    pub fn instruction(&self, program_id: i64, name: &str) -> Option<&HloInstruction> {
        self.modules.get(&program_id)?.instructions.get(name)
    }
}

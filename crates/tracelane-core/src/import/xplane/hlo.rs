//! The HLO modules an XPlane profile embeds (`/host:metadata`: one event
//! metadata per program, its `Hlo Proto` stat an `xla.HloProto`), read
//! into what the op tables need of each instruction: its category and
//! the framework op it came from, as xprof's `HloInstructionWrapper`
//! names them.

use prost::Message;

use crate::xla::{HloInstruction, HloModule};

use super::proto::{HloInstructionProto, HloProto};

/// Decodes one `HloProto`; `None` when the bytes are not one.
pub(super) fn decode(bytes: &[u8]) -> Option<HloModule> {
    let proto = HloProto::decode(bytes).ok()?;
    let m = proto.hlo_module?;
    let mut module = HloModule {
        name: m.name,
        ..HloModule::default()
    };
    for c in m.computations {
        for i in c.instructions {
            let name = i.name.clone();
            module.instructions.insert(name, instruction(&i));
        }
    }
    Some(module)
}

fn instruction(i: &HloInstructionProto) -> HloInstruction {
    let (provenance, source) = match &i.metadata {
        Some(m) => (
            tf_op_fullname(&m.op_type, &m.op_name),
            if m.source_file.is_empty() {
                String::new()
            } else {
                format!("{}:{}", m.source_file, m.source_line)
            },
        ),
        None => (String::new(), String::new()),
    };
    HloInstruction {
        category: category(&i.opcode, &i.fusion_kind),
        provenance,
        opcode: i.opcode.clone(),
        source,
    }
}

/// `tsl::profiler::TfOpFullname(type, name)`: `name:type`, or empty when
/// the instruction names no op.
fn tf_op_fullname(op_type: &str, op_name: &str) -> String {
    if op_type.is_empty() && op_name.is_empty() {
        return String::new();
    }
    format!("{op_name}:{op_type}")
}

/// XLA's `HloInstruction::ToCategory()` (and `HloFusionInstruction`'s):
/// fusions by kind, layout changes as "data formatting", elementwise
/// instructions as "non-fusion elementwise", anything else by its opcode.
pub fn category(opcode: &str, fusion_kind: &str) -> String {
    if opcode == "fusion" {
        return match fusion_kind {
            "kLoop" => "loop fusion",
            "kInput" => "input fusion",
            "kOutput" => "output fusion",
            "kCustom" => "custom fusion",
            _ => "fusion",
        }
        .to_string();
    }
    if matches!(opcode, "transpose" | "copy" | "reshape") {
        return "data formatting".to_string();
    }
    if ELEMENTWISE.contains(&opcode) {
        return "non-fusion elementwise".to_string();
    }
    opcode.to_string()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_follow_xla() {
        assert_eq!(category("fusion", "kInput"), "input fusion");
        assert_eq!(category("custom-call", ""), "custom-call");
        assert_eq!(category("transpose", ""), "data formatting");
        assert_eq!(category("add", ""), "non-fusion elementwise");
        assert_eq!(
            tf_op_fullname("", "jit(f)/dot_general"),
            "jit(f)/dot_general:"
        );
        assert_eq!(tf_op_fullname("", ""), "");
    }
}

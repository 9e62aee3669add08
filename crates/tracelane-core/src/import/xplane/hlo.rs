//! The HLO modules an XPlane profile embeds (`/host:metadata`: one event
//! metadata per program, its `Hlo Proto` stat an `xla.HloProto`), read
//! into what the op tables need of each instruction: its category and
//! the framework op it came from, as xprof's `HloInstructionWrapper`
//! names them.

use prost::Message;

use crate::xla::{HloInstruction, HloModule};
use crate::xla_cost;

use super::proto::{HloInstructionProto, HloProto, ShapeProto};

/// Decodes one `HloProto`; `None` when the bytes are not one. Each
/// instruction's cost is worked out as xprof's GPU cost analysis does.
pub(super) fn decode(bytes: &[u8]) -> Option<HloModule> {
    let proto = HloProto::decode(bytes).ok()?;
    let m = proto.hlo_module?;
    let mut module = HloModule {
        name: m.name,
        ..HloModule::default()
    };
    let mut graph = xla_cost::Module::default();
    for c in m.computations {
        let mut comp = xla_cost::Computation {
            id: c.id,
            root_id: c.root_id,
            is_fusion: c.is_fusion_computation,
            instrs: Vec::with_capacity(c.instructions.len()),
        };
        for i in c.instructions {
            module.instructions.insert(i.name.clone(), instruction(&i));
            comp.instrs.push(cost_instr(i));
        }
        graph.computations.push(comp);
    }
    mark_fused(&mut graph);
    for (name, cost) in xla_cost::analyze(&graph) {
        if let Some(i) = module.instructions.get_mut(&name) {
            i.flops = cost.flops;
            i.hbm_bytes = cost.hbm_bytes;
        }
    }
    Some(module)
}

/// Computations a fusion calls are fused (the proto's own flag is
/// deprecated and often unset).
fn mark_fused(g: &mut xla_cost::Module) {
    let fused: std::collections::HashSet<i64> = g
        .computations
        .iter()
        .flat_map(|c| &c.instrs)
        .filter(|i| i.opcode == "fusion")
        .filter_map(|i| i.called.first().copied())
        .collect();
    for c in &mut g.computations {
        c.is_fusion |= fused.contains(&c.id);
    }
}

fn cost_instr(i: HloInstructionProto) -> xla_cost::Instr {
    let window = i.window.map_or_else(Vec::new, |w| {
        w.dimensions
            .iter()
            .map(|d| xla_cost::WindowDim {
                size: d.size,
                stride: d.stride,
                padding_low: d.padding_low,
                padding_high: d.padding_high,
                window_dilation: d.window_dilation,
                base_dilation: d.base_dilation,
            })
            .collect()
    });
    let conv = i.convolution_dimension_numbers.map(|d| xla_cost::ConvDims {
        input_batch: d.input_batch_dimension,
        input_feature: d.input_feature_dimension,
        input_spatial: d.input_spatial_dimensions,
        kernel_spatial: d.kernel_spatial_dimensions,
        output_feature: d.output_feature_dimension,
        output_spatial: d.output_spatial_dimensions,
    });
    xla_cost::Instr {
        id: i.id,
        name: i.name,
        opcode: i.opcode,
        shape: i.shape.as_ref().map(shape).unwrap_or_default(),
        operands: i.operand_ids,
        called: i.called_computation_ids,
        parameter_number: i.parameter_number,
        fusion_kind: i.fusion_kind,
        dimensions: i.dimensions,
        window,
        conv,
        lhs_contracting: i
            .dot_dimension_numbers
            .map(|d| d.lhs_contracting_dimensions)
            .unwrap_or_default(),
        feature_group_count: i.feature_group_count,
        batch_group_count: i.batch_group_count,
        custom_call_target: i.custom_call_target,
        backend_config: String::from_utf8_lossy(&i.backend_config).into_owned(),
    }
}

fn shape(s: &ShapeProto) -> xla_cost::Shape {
    xla_cost::Shape {
        element_type: s.element_type,
        dims: s.dimensions.clone(),
        tuple: s.tuple_shapes.iter().map(shape).collect(),
        layout: s.layout.as_ref().map(|l| xla_cost::Layout {
            element_size_in_bits: l.element_size_in_bits,
            memory_space: l.memory_space,
        }),
    }
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
    let mut category = category(&i.opcode, &i.fusion_kind);
    if i.opcode == "convolution" {
        // `ToCategory` names a convolution's dilations.
        let dims = i.window.as_ref().map_or(&[][..], |w| &w.dimensions[..]);
        if dims.iter().any(|d| d.base_dilation > 1) {
            category.push_str(" base-dilated");
        }
        if dims.iter().any(|d| d.window_dilation > 1) {
            category.push_str(" window-dilated");
        }
    }
    HloInstruction {
        category,
        provenance,
        opcode: i.opcode.clone(),
        source,
        flops: None,
        hbm_bytes: None,
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
    if crate::xla::is_elementwise(opcode) {
        return "non-fusion elementwise".to_string();
    }
    opcode.to_string()
}

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

//! FLOPs and HBM bytes of the instructions of a compiled XLA module, as
//! xprof's GPU cost analysis counts them for its op profile and HLO op
//! stats: `XProfGpuCostAnalysis` (`xprof/utils/xprof_gpu_cost_analysis.cc`)
//! over XLA's `GpuHloCostAnalysis` and `HloCostAnalysis`
//! (`xla/service/gpu/model/gpu_hlo_cost_analysis.cc`,
//! `xla/service/hlo_cost_analysis.cc`), with xprof's default options
//! (no device: elementwise ops cost what XLA's default `sm_86` profile
//! measured, 3 FLOPs an element where it has no entry; repeated reads
//! of an input not counted). The HBM bytes are what
//! xprof's `HloCostAnalysisWrapper::GeneratePerformanceInfo` reports for
//! memory space 0: the bytes read of each operand leaf plus the bytes
//! written of each output leaf, as the handlers set them.
//!
//! Properties are `f32` as in XLA (its `Properties` are floats), and read
//! back as integers by truncation. Opcodes this port does not model
//! (control flow, collectives XLA sizes by ranks, …) have no cost, and
//! say so, rather than a guess.

mod flops;
mod fusion;
mod profile;
pub mod shape;

use rustc_hash::FxHashMap as HashMap;

pub use flops::{ConvDims, WindowDim};
pub use shape::{Layout, Shape};

/// One HLO instruction, what the cost analysis reads of it.
#[derive(Clone, Debug, Default)]
pub struct Instr {
    pub id: i64,
    pub name: String,
    pub opcode: String,
    pub shape: Shape,
    pub operands: Vec<i64>,
    pub called: Vec<i64>,
    pub parameter_number: i64,
    pub fusion_kind: String,
    pub dimensions: Vec<i64>,
    pub window: Vec<WindowDim>,
    pub conv: Option<ConvDims>,
    pub lhs_contracting: Vec<i64>,
    pub feature_group_count: i64,
    pub batch_group_count: i64,
    pub custom_call_target: String,
    pub backend_config: String,
}

#[derive(Clone, Debug, Default)]
pub struct Computation {
    pub id: i64,
    /// In post order (as `HloComputation::ToProto` writes them).
    pub instrs: Vec<Instr>,
    pub root_id: i64,
    pub is_fusion: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Module {
    pub computations: Vec<Computation>,
}

/// One instruction's cost as xprof reports it. `None`: XLA does not know
/// (a custom call it has no model for) or this port does not model it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    pub flops: Option<i64>,
    pub hbm_bytes: Option<i64>,
}

/// The cost of every instruction outside fused computations, by name.
pub fn analyze(m: &Module) -> HashMap<String, Cost> {
    let a = Analyzer::new(m);
    let mut out = HashMap::default();
    for c in m.computations.iter().filter(|c| !c.is_fusion) {
        for i in &c.instrs {
            let p = a.visit(i, 0);
            out.insert(i.name.clone(), p.cost(&a, i));
        }
    }
    out
}

/// What the handlers set of one instruction (`HloCostAnalysis::Properties`).
#[derive(Clone, Debug, Default)]
struct Props {
    flops: f32,
    /// `kBytesAccessedKey`, the instruction's total.
    bytes: f32,
    /// Output bytes at shape index `{}`.
    out: f32,
    /// Output bytes at the top-level tuple indices `{i}` a fusion sets.
    out_leaf: Vec<(usize, f32)>,
    /// Operand bytes at index `{}`, and their utilizations.
    opnd: Vec<f32>,
    opnd_util: Vec<f32>,
    /// The opcode is not modelled here (no cost reported).
    unmodelled: bool,
}

/// Recursion bound for called computations (a malformed module may call
/// itself).
const MAX_DEPTH: u32 = 32;

/// `GpuHloCostAnalysis::GetFlopsForElementwiseOp`: the default
/// profile's FLOPs an element of the output's type, times its elements.
fn elementwise_flops(opcode: &str, shape: &Shape) -> f32 {
    let per = profile::flops_per_element(opcode, shape.element_type);
    per.saturating_mul(shape.elements_recursive()) as f32
}

struct Analyzer<'m> {
    instr_at: HashMap<i64, &'m Instr>,
    comp_at: HashMap<i64, &'m Computation>,
    /// Instruction visits left: a module whose computations call each
    /// other many times over is not priced past it.
    budget: std::cell::Cell<u64>,
}

/// Visits one module may take (a real module takes one per instruction
/// and fused instruction, and its reducers').
const VISIT_BUDGET: u64 = 20_000_000;

impl<'m> Analyzer<'m> {
    fn new(m: &'m Module) -> Self {
        let mut instr_at = HashMap::default();
        let mut comp_at = HashMap::default();
        for c in &m.computations {
            comp_at.insert(c.id, c);
            for i in &c.instrs {
                instr_at.insert(i.id, i);
            }
        }
        Analyzer {
            instr_at,
            comp_at,
            budget: std::cell::Cell::new(VISIT_BUDGET),
        }
    }

    fn operand(&self, i: &Instr, k: usize) -> Option<&'m Instr> {
        self.instr_at.get(i.operands.get(k)?).copied()
    }

    fn operand_shape(&self, i: &Instr, k: usize) -> Option<&'m Shape> {
        self.operand(i, k).map(|o| &o.shape)
    }

    /// `ProcessSubcomputation`'s FLOPs: the sum over its instructions.
    fn sub_flops(&self, comp: Option<&i64>, depth: u32) -> Option<f32> {
        let c = self.comp_at.get(comp?)?;
        if depth >= MAX_DEPTH {
            return None;
        }
        let mut sum = 0f32;
        for i in &c.instrs {
            let p = self.visit(i, depth + 1);
            if p.unmodelled {
                return None;
            }
            sum += p.flops;
        }
        Some(sum)
    }

    /// `Preprocess` then the opcode's handler.
    fn visit(&self, i: &Instr, depth: u32) -> Props {
        let n = i.operands.len();
        let opnd: Vec<f32> = (0..n)
            .map(|k| self.operand_shape(i, k).map_or(0, Shape::cost_size) as f32)
            .collect();
        let out = i.shape.cost_size() as f32;
        let mut p = Props {
            bytes: out + opnd.iter().sum::<f32>(),
            out,
            opnd,
            opnd_util: vec![1.0; n],
            ..Props::default()
        };
        match self.budget.get().checked_sub(1) {
            Some(left) => {
                self.budget.set(left);
                self.handle(i, &mut p, depth);
            }
            None => p.unmodelled = true,
        }
        p
    }

    fn handle(&self, i: &Instr, p: &mut Props, depth: u32) {
        let op = i.opcode.as_str();
        let elems_of = |k: usize| self.operand_shape(i, k).map_or(0, Shape::elements);
        match op {
            _ if is_priced_elementwise(op) => p.flops = elementwise_flops(op, &i.shape),
            "parameter" | "constant" => zero_bytes(p, false),
            "get-tuple-element" | "bitcast" | "domain" | "after-all" | "add-dependency" => {
                zero_bytes(p, true)
            }
            "tuple" => {
                p.bytes = p.out;
                p.opnd.iter_mut().for_each(|b| *b = 0.0);
            }
            "slice" => {
                p.bytes = p.out * 2.0;
                set(&mut p.opnd, 0, p.out);
                set(&mut p.opnd_util, 0, ratio(i.shape.elements(), elems_of(0)));
            }
            "dynamic-slice" => {
                let idx = p.opnd.get(1).copied().unwrap_or(0.0);
                p.bytes = p.out * 2.0 + idx;
                set(&mut p.opnd, 0, p.out);
                set(&mut p.opnd_util, 0, ratio(i.shape.elements(), elems_of(0)));
            }
            "dynamic-update-slice" => {
                let update = p.opnd.get(1).copied().unwrap_or(0.0);
                let idx = p.opnd.get(2).copied().unwrap_or(0.0);
                p.bytes = update * 2.0 + idx;
                p.out = update;
                set(&mut p.opnd, 0, 0.0);
                let out_elems = i.shape.elements();
                set(
                    &mut p.opnd_util,
                    0,
                    ratio(out_elems.saturating_sub(elems_of(1)), out_elems),
                );
            }
            "gather" => {
                let idx = p.opnd.get(1).copied().unwrap_or(0.0);
                p.bytes = p.out * 2.0 + idx;
                set(&mut p.opnd, 0, p.out);
                set(&mut p.opnd_util, 0, ratio(i.shape.elements(), elems_of(0)));
            }
            "scatter" => self.scatter(i, p, depth),
            "dot" | "scaled-dot" => {
                let lhs = self.operand_shape(i, 0).cloned().unwrap_or_default();
                p.flops = flops::dot(&lhs, &i.shape, &i.lhs_contracting) as f32;
            }
            "convolution" => match self.conv_flops(i, &i.shape) {
                Some(f) => p.flops = f as f32,
                None => p.unmodelled = true,
            },
            "reduce" => self.reduce(i, p, depth),
            "reduce-window" => {
                let count = flops::reduce_window_count(&i.window, first_array(&i.shape));
                match self.sub_flops(i.called.first(), depth) {
                    Some(f) => p.flops = f * count as f32,
                    None => p.unmodelled = true,
                }
            }
            "map" => match self.sub_flops(i.called.first(), depth) {
                Some(f) => p.flops = f * i.shape.elements() as f32,
                None => p.unmodelled = true,
            },
            "concatenate" => {
                // GPU: a compare and branch an element; a concat along a
                // minor dimension not a multiple of 32 wide costs 400.
                let d = i.dimensions.first().copied().unwrap_or(0);
                let width = self
                    .operand_shape(i, 0)
                    .and_then(|s| s.dims.get(d as usize).copied())
                    .unwrap_or(0);
                let per: i64 = if d > 0 && width & 31 != 0 { 400 } else { 6 };
                p.flops = per.saturating_mul(i.shape.elements_recursive()) as f32;
            }
            "sort" => {
                let n = elems_of(0).max(0) as u64;
                p.flops = n.saturating_mul(log2_ceiling(n)) as f32;
            }
            "all-reduce" => {
                let out: i64 = leaves(&i.shape).map(Shape::cost_size).sum();
                p.out = out as f32;
                p.bytes = out as f32 + p.opnd.iter().sum::<f32>();
                // The reducer's root opcode, priced as an elementwise op.
                let reducer = i
                    .called
                    .first()
                    .and_then(|c| self.comp_at.get(c))
                    .and_then(|c| self.instr_at.get(&c.root_id))
                    .map_or("", |r| r.opcode.as_str());
                p.flops = elementwise_flops(reducer, &i.shape);
            }
            "fusion" => self.fusion(i, p, depth),
            "custom-call" => self.custom_call(i, p),
            _ if NO_COST.contains(&op) => {}
            _ => p.unmodelled = true,
        }
    }

    /// `None` when the window is too large to count (a malformed module).
    fn conv_flops(&self, i: &Instr, result: &Shape) -> Option<i64> {
        let (Some(lhs), Some(rhs), Some(dims)) = (
            self.operand_shape(i, 0),
            self.operand_shape(i, 1),
            i.conv.as_ref(),
        ) else {
            return Some(0);
        };
        flops::convolution(&flops::Conv {
            lhs,
            rhs,
            result,
            dims,
            window: &i.window,
            feature_groups: i.feature_group_count.max(1),
            batch_groups: i.batch_group_count.max(1),
        })
    }

    /// `GpuHloCostAnalysis::HandleReduce`: the reducer's cost per element
    /// reduced; the outputs' leaves written; each init value read once
    /// per output element.
    fn reduce(&self, i: &Instr, p: &mut Props, depth: u32) {
        let output = first_array(&i.shape);
        let inputs = i.operands.len() / 2;
        let reduced = self
            .operand_shape(i, 0)
            .map_or(0, Shape::elements)
            .saturating_sub(output.elements());
        match self.sub_flops(i.called.first(), depth) {
            Some(f) => p.flops = f * reduced as f32,
            None => p.unmodelled = true,
        }
        let out: i64 = leaves(&i.shape).map(Shape::cost_size).sum();
        p.out = out as f32;
        let mut bytes = out as f32 + p.opnd.iter().take(inputs).sum::<f32>();
        let out_elems = output.elements() as f32;
        for k in inputs..i.operands.len() {
            let init = self.operand_shape(i, k).map_or(0, Shape::cost_size) as f32;
            set(&mut p.opnd, k, out_elems * init);
            set(&mut p.opnd_util, k, out_elems);
            bytes += out_elems * init;
        }
        p.bytes = bytes;
    }

    /// `HandleScatter`: three update-sized accesses and the indices; the
    /// update computation once per update element.
    fn scatter(&self, i: &Instr, p: &mut Props, depth: u32) {
        let n = (i.operands.len().saturating_sub(1)) / 2;
        let mut total = 0f32;
        for k in 0..n {
            let update = self.operand_shape(i, n + 1 + k).map_or(0, Shape::cost_size) as f32;
            set(&mut p.opnd, k, update);
            set(&mut p.opnd, n + 1 + k, update);
            total += update;
        }
        let idx = self.operand_shape(i, n).map_or(0, Shape::cost_size) as f32;
        set(&mut p.opnd, n, idx);
        p.bytes = total * 3.0 + idx;
        p.out = total;
        let elements = self.operand_shape(i, n + 1).map_or(0, Shape::elements);
        match self.sub_flops(i.called.first(), depth) {
            Some(f) => p.flops = f * elements as f32,
            None => p.unmodelled = true,
        }
    }

    /// `GpuHloCostAnalysis::HandleCustomCall`: cuBLASLt GEMMs and cuDNN
    /// convolutions are priced, their output the real result (not the
    /// scratch buffer); any other custom call is unknown (-1) unless its
    /// backend config carries a `cost_estimate_json`.
    fn custom_call(&self, i: &Instr, p: &mut Props) {
        let target = i.custom_call_target.as_str();
        let result = if i.shape.is_tuple() {
            i.shape.tuple.first().cloned().unwrap_or_default()
        } else {
            i.shape.clone()
        };
        if target == "__cublas$lt$matmul" || target == "__cublas$lt$matmul$f8" {
            let Some(contracting) = gemm_contracting_dims(&i.backend_config) else {
                // XLA fails the analysis when the config does not parse.
                p.unmodelled = true;
                return;
            };
            let lhs = self.operand_shape(i, 0).cloned().unwrap_or_default();
            p.flops = flops::dot(&lhs, &result, &contracting) as f32;
            let size = result.byte_size() as f32;
            p.bytes = p.bytes - p.out + size;
            p.out = size;
            return;
        }
        if DNN_CONVOLUTIONS.contains(&target) {
            let Some(f) = self.conv_flops(i, &result) else {
                p.unmodelled = true;
                return;
            };
            p.flops = f as f32;
            if i.shape.is_tuple() {
                let size = result.byte_size() as f32;
                p.bytes = p.bytes - p.out + size;
                p.out = size;
            }
            return;
        }
        p.flops = -1.0;
        p.bytes = -1.0;
        p.out = -1.0;
        p.opnd.iter_mut().for_each(|b| *b = -1.0);
        if let Some(f) = cost_estimate(&i.backend_config, "flops") {
            p.flops = f as f32;
        }
        if let Some(b) = cost_estimate(&i.backend_config, "bytes_accessed") {
            p.bytes = b as f32;
        }
    }
}

impl Props {
    /// What xprof's performance info reports: the model FLOPs (none when
    /// unknown) and the HBM bytes read and written (memory space 0), only
    /// when the instruction's total bytes are positive.
    fn cost(&self, a: &Analyzer, i: &Instr) -> Cost {
        if self.unmodelled {
            return Cost::default();
        }
        let flops = (self.flops >= 0.0).then_some(self.flops as i64);
        if self.bytes < 0.0 {
            // An unknown custom call: no bytes (xprof reports none).
            return Cost {
                flops,
                hbm_bytes: None,
            };
        }
        let mut read = 0i64;
        for (k, &b) in self.opnd.iter().enumerate() {
            if let Some(s) = a.operand_shape(i, k) {
                if !s.is_tuple() && s.memory_space() == Some(0) {
                    read += b as i64;
                }
            }
        }
        let mut written = 0i64;
        if i.shape.is_tuple() {
            for (k, s) in i.shape.tuple.iter().enumerate() {
                if !s.is_tuple() && s.memory_space() == Some(0) {
                    let b = self.out_leaf.iter().find(|(j, _)| *j == k);
                    written += b.map_or(0, |&(_, b)| b as i64);
                }
            }
        } else if i.shape.memory_space() == Some(0) {
            written = self.out as i64;
        }
        let hbm = if (self.bytes as i64) > 0 {
            read.max(0) + written.max(0)
        } else {
            0
        };
        Cost {
            flops,
            hbm_bytes: Some(hbm),
        }
    }
}

fn zero_bytes(p: &mut Props, operands_too: bool) {
    p.bytes = 0.0;
    p.out = 0.0;
    if operands_too {
        p.opnd.iter_mut().for_each(|b| *b = 0.0);
    }
}

fn set(v: &mut [f32], k: usize, x: f32) {
    if let Some(slot) = v.get_mut(k) {
        *slot = x;
    }
}

fn ratio(a: i64, b: i64) -> f32 {
    if b == 0 {
        0.0
    } else {
        a as f32 / b as f32
    }
}

fn log2_ceiling(n: u64) -> u64 {
    if n <= 1 {
        0
    } else {
        64 - (n - 1).leading_zeros() as u64
    }
}

/// An array shape, or a tuple's first element (reduce outputs).
fn first_array(s: &Shape) -> &Shape {
    if s.is_tuple() {
        s.tuple.first().unwrap_or(s)
    } else {
        s
    }
}

/// The array leaves of a shape.
fn leaves(s: &Shape) -> Box<dyn Iterator<Item = &Shape> + '_> {
    if s.is_tuple() {
        Box::new(s.tuple.iter().flat_map(leaves))
    } else {
        Box::new(std::iter::once(s))
    }
}

/// Opcodes `HloInstruction::IsElementwise` is true of and XLA prices as
/// one elementwise operation each (`HandleElementwiseUnary/Binary`,
/// `HandleCompare`, `HandleClamp`, `HandleSelect`, `HandleConvert`, …);
/// `copy` and `map` are elementwise but have handlers of their own.
fn is_priced_elementwise(op: &str) -> bool {
    op != "map" && crate::xla::is_elementwise(op)
}

/// Opcodes whose handler leaves `Preprocess`'s bytes and no FLOPs.
const NO_COST: &[&str] = &[
    "copy",
    "reshape",
    "dynamic-reshape",
    "broadcast",
    "transpose",
    "pad",
    "reverse",
    "iota",
    "copy-start",
    "copy-done",
    "send",
    "send-done",
    "recv",
    "recv-done",
    "all-gather",
    "all-gather-start",
    "all-gather-done",
    "all-reduce-done",
    "reduce-scatter",
    "all-to-all",
    "ragged-all-to-all",
    "collective-permute",
    "collective-permute-start",
    "collective-permute-done",
    "collective-broadcast",
    "partition-id",
    "replica-id",
    "optimization-barrier",
    "get-dimension-size",
    "set-dimension-size",
    "rng",
    "rng-bit-generator",
    "rng-get-and-update-state",
    "batch-norm-training",
    "batch-norm-inference",
    "batch-norm-grad",
    "topk",
    "async-update",
    "async-done",
];

/// `IsCustomCallToDnnConvolution`'s targets (`xla/service/gpu/cublas_cudnn.cc`).
const DNN_CONVOLUTIONS: &[&str] = &[
    "__cudnn$convForward",
    "__cudnn$convBackwardInput",
    "__cudnn$convBackwardFilter",
    "__cudnn$convBiasActivationForward",
    "__cudnn$convForwardGraph",
];

/// A cuBLASLt call's `gemm_backend_config.dot_dimension_numbers`
/// `lhs_contracting_dimensions` (its backend config is the JSON form of
/// `GpuBackendConfig`; int64s may be written as strings).
fn gemm_contracting_dims(config: &str) -> Option<Vec<i64>> {
    let v: serde_json::Value = serde_json::from_str(config).ok()?;
    let dims = v
        .get("gemm_backend_config")?
        .get("dot_dimension_numbers")?
        .get("lhs_contracting_dimensions")?
        .as_array()?;
    dims.iter()
        .map(|d| match d {
            serde_json::Value::String(s) => s.parse().ok(),
            d => d.as_i64(),
        })
        .collect()
}

/// `ExtractCustomCallCostEstimate`: a non-negative `key` number in a
/// backend config that mentions `cost_estimate_json`, its key quoted or
/// escaped any of the ways frontends write it.
fn cost_estimate(config: &str, key: &str) -> Option<i64> {
    if !config.contains("cost_estimate_json") {
        return None;
    }
    let mut from = 0;
    while let Some(at) = config[from..].find(key) {
        let start = from + at + key.len();
        from = start;
        let rest = skip_quote(&config[start..]);
        let rest = rest.trim_start();
        let Some(rest) = rest.strip_prefix([':', '=']) else {
            continue;
        };
        let rest = skip_quote(rest.trim_start());
        let digits: String = rest
            .chars()
            .enumerate()
            .take_while(|&(k, c)| c.is_ascii_digit() || (k == 0 && c == '-'))
            .map(|(_, c)| c)
            .collect();
        if let Ok(v) = digits.parse::<i64>() {
            return (v >= 0).then_some(v);
        }
    }
    None
}

/// An optional backslash and an optional quote or escaped quote
/// (`"`, `22`, `x22`, `u0022`, `u00000022`).
fn skip_quote(s: &str) -> &str {
    let s = s.strip_prefix('\\').unwrap_or(s);
    for q in [
        "\"",
        "u00000022",
        "U00000022",
        "u0022",
        "U0022",
        "x22",
        "X22",
        "22",
    ] {
        if let Some(r) = s.strip_prefix(q) {
            return r;
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_estimates_are_read_however_quoted() {
        let c = r#"{"cost_estimate_json": "{\"flops\": 1200, \"bytes_accessed\":64}"}"#;
        assert_eq!(cost_estimate(c, "flops"), Some(1200));
        assert_eq!(cost_estimate(c, "bytes_accessed"), Some(64));
        assert_eq!(cost_estimate(r#"{"flops": 3}"#, "flops"), None);
        assert_eq!(
            cost_estimate(r"cost_estimate_json=\22flops\22=-1", "flops"),
            None
        );
        assert_eq!(log2_ceiling(8), 3);
        assert_eq!(log2_ceiling(9), 4);
    }

    #[test]
    fn gemm_dims_read_from_the_backend_config() {
        let c = r#"{"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}"#;
        assert_eq!(gemm_contracting_dims(c), Some(vec![1]));
    }
}

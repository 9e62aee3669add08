//! Kernel families across vendors: the same work has different kernel
//! names on NVIDIA (cuBLAS `sm90_xmma_gemm_*`, `nvjet_*`, CUTLASS), AMD
//! (Tensile `Cijk_*`, MIOpen, CK) and XLA (`dot.3`, `fusion.12`); a family
//! names what the kernel does so the two sides can be set side by side.
//!
//! By category first (copies and sets), then by name, the first rule that
//! matches: collectives (as the device-time breakdown names them),
//! attention, convolution, GEMM, reduction and normalisation, layout
//! (transposes between memory layouts: cuDNN's `nchwToNhwcKernel`,
//! MIOpen's `batched_transpose_*`, XLA's `transpose.N`), elementwise;
//! anything else is "other".

use serde::{Deserialize, Serialize};

use crate::analysis::frame::is_collective_name;
use crate::category::Category;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Gemm,
    Attention,
    Convolution,
    Elementwise,
    Reduction,
    Layout,
    Communication,
    Memcpy,
    Memset,
    Other,
}

impl Family {
    pub const ALL: [Family; 10] = [
        Family::Gemm,
        Family::Attention,
        Family::Convolution,
        Family::Elementwise,
        Family::Reduction,
        Family::Layout,
        Family::Communication,
        Family::Memcpy,
        Family::Memset,
        Family::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Family::Gemm => "GEMM",
            Family::Attention => "attention",
            Family::Convolution => "convolution",
            Family::Elementwise => "elementwise",
            Family::Reduction => "reduction",
            Family::Layout => "layout",
            Family::Communication => "communication",
            Family::Memcpy => "memcpy",
            Family::Memset => "memset",
            Family::Other => "other",
        }
    }
}

const ATTENTION: &[&str] = &[
    "flash",
    "fmha",
    "attention",
    "attn_fwd",
    "attn_bwd",
    "mha_fwd",
    "mha_bwd",
];
const CONVOLUTION: &[&str] = &[
    "convolve",
    "conv2d",
    "conv1d",
    "conv3d",
    "fprop",
    "dgrad",
    "wgrad",
    "winograd",
    "igemm",
    "miopenconv",
    "naive_conv",
];
const GEMM: &[&str] = &[
    "gemm",
    "cijk_",
    "xmma",
    "cutlass",
    "cublas",
    "matmul",
    "gemv",
    "nvjet",
    "triton_tem",
    "triton_mm",
    "bmm",
    "mfma",
    "wmma",
];
const REDUCTION: &[&str] = &[
    "reduce",
    "softmax",
    "norm",
    "moments",
    "welford",
    "triton_red",
    "triton_per",
    "argmax",
    "argmin",
    "scan",
    "cumsum",
    "topk",
];
const LAYOUT: &[&str] = &["transpose", "nchwtonhwc", "nhwctonchw", "permute"];
const ELEMENTWISE: &[&str] = &[
    "elementwise",
    "triton_poi",
    "pointwise",
    "fill",
    "copy",
    "index",
    "gather",
    "scatter",
    "catarray",
];

/// ATen ops by family, for device work named after the op that ran it (a
/// runtime's device window, as in TorchNeuron's traces: `aten::mul`).
const ATEN_GEMM: &[&str] = &[
    "mm", "bmm", "addmm", "addbmm", "baddbmm", "matmul", "linear", "dot", "mv", "addmv", "einsum",
];
const ATEN_CONVOLUTION: &[&str] = &["convolution", "_convolution", "conv1d", "conv2d", "conv3d"];
const ATEN_REDUCTION: &[&str] = &[
    "mean",
    "sum",
    "prod",
    "amax",
    "amin",
    "max",
    "min",
    "var",
    "std",
    "var_mean",
    "norm",
    "softmax",
    "_softmax",
    "log_softmax",
    "_log_softmax",
    "logsumexp",
    "cumsum",
    "argmax",
    "argmin",
    "topk",
    "sort",
    "rms_norm",
    "layer_norm",
    "native_layer_norm",
    "group_norm",
    "native_group_norm",
    "batch_norm",
    "native_batch_norm",
];
const ATEN_ELEMENTWISE: &[&str] = &[
    "add",
    "sub",
    "rsub",
    "mul",
    "div",
    "pow",
    "rsqrt",
    "sqrt",
    "exp",
    "log",
    "neg",
    "abs",
    "relu",
    "gelu",
    "silu",
    "sigmoid",
    "tanh",
    "erf",
    "clamp",
    "where",
    "masked_fill",
    "copy",
    "to",
    "_to_copy",
    "fill",
    "zero",
    "lt",
    "le",
    "gt",
    "ge",
    "eq",
    "ne",
    "reciprocal",
    "sin",
    "cos",
    "floor",
    "ceil",
    "round",
    "maximum",
    "minimum",
    "dropout",
    "embedding",
    "index_select",
    "gather",
    "scatter",
    "cat",
    "contiguous",
    "clone",
];

/// The family of an ATen op by its name (`aten::add_` → elementwise).
fn aten_family(op: &str) -> Option<Family> {
    let op = op.split('.').next().unwrap_or(op).trim_end_matches('_');
    let op = op
        .strip_prefix('_')
        .filter(|o| !o.is_empty())
        .map_or(op, |o| {
            // `_softmax`, `_to_copy` are listed with their underscore.
            if ATEN_REDUCTION.contains(&op) || ATEN_ELEMENTWISE.contains(&op) {
                op
            } else {
                o
            }
        });
    let is = |list: &[&str]| list.contains(&op);
    if op.contains("attention") {
        Some(Family::Attention)
    } else if is(ATEN_CONVOLUTION) {
        Some(Family::Convolution)
    } else if is(ATEN_GEMM) {
        Some(Family::Gemm)
    } else if is(ATEN_REDUCTION) {
        Some(Family::Reduction)
    } else if is(ATEN_ELEMENTWISE) {
        Some(Family::Elementwise)
    } else {
        None
    }
}

/// The family of a device event.
pub fn family(category: Category, name: &str) -> Family {
    match category {
        Category::Memcpy => return Family::Memcpy,
        Category::Memset => return Family::Memset,
        _ => {}
    }
    if name.starts_with("Memcpy") || name.starts_with("hipMemcpy") {
        return Family::Memcpy;
    }
    if name.starts_with("Memset") || name.starts_with("hipMemset") {
        return Family::Memset;
    }
    if is_collective_name(name) {
        return Family::Communication;
    }
    if let Some(f) = name.strip_prefix("aten::").and_then(aten_family) {
        return f;
    }
    let lower = name.to_ascii_lowercase();
    let any = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    // XLA names an op by its HLO: `dot.3`, `convolution.1`, `reduce.7`.
    let hlo = lower.split(['.', ' ']).next().unwrap_or("");
    if any(ATTENTION) {
        Family::Attention
    } else if any(CONVOLUTION) || hlo == "convolution" {
        Family::Convolution
    } else if any(GEMM) || hlo == "dot" {
        Family::Gemm
    } else if any(REDUCTION) {
        Family::Reduction
    } else if any(LAYOUT) || hlo == "transpose" {
        Family::Layout
    } else if any(ELEMENTWISE) {
        Family::Elementwise
    } else {
        Family::Other
    }
}

/// The family of an XLA op by its `hlo_category` stat (XLA's
/// `HloInstruction::ToCategory`, what a TPU's op events carry), where its
/// name says none (`fusion.12`): `None` for a category that names no work.
pub fn hlo_category_family(category: &str) -> Option<Family> {
    let c = category.to_ascii_lowercase();
    let collective = [
        "all-reduce",
        "all-gather",
        "reduce-scatter",
        "all-to-all",
        "collective-permute",
        "send",
        "recv",
    ];
    Some(if collective.iter().any(|w| c.contains(w)) {
        Family::Communication
    } else if c.starts_with("convolution") {
        Family::Convolution
    } else if c == "dot" || c.starts_with("dot ") {
        Family::Gemm
    } else if c.starts_with("reduc") {
        Family::Reduction
    } else if c == "data formatting" || c == "transpose" || c == "copy" {
        Family::Layout
    } else if c.contains("elementwise") || c == "loop fusion" {
        Family::Elementwise
    } else {
        return None;
    })
}

/// Families by event name, each name classified once (a trace has a few
/// hundred kernel names and millions of kernels).
pub(super) struct ByName<'t> {
    trace: &'t crate::model::Trace,
    memo: std::cell::RefCell<Vec<Option<Family>>>,
}

impl<'t> ByName<'t> {
    pub(super) fn new(trace: &'t crate::model::Trace) -> Self {
        ByName {
            trace,
            memo: std::cell::RefCell::new(vec![None; trace.strings.len()]),
        }
    }

    /// The family of slice `d` (a device event).
    pub(super) fn of(&self, d: usize) -> Family {
        let s = &self.trace.slices;
        let id = s.name[d].0 as usize;
        if let Some(Some(f)) = self.memo.borrow().get(id) {
            if !matches!(s.category[d], Category::Memcpy | Category::Memset) {
                return *f;
            }
        }
        let mut f = family(s.category[d], self.trace.slice_name(d));
        if f == Family::Other && self.trace.xla.is_some() {
            // An XLA op named by its HLO (`fusion.12`): its category says.
            let args: serde_json::Value =
                serde_json::from_str(&self.trace.slice_args_json(d)).unwrap_or_default();
            if let Some(c) = args.get("hlo_category").and_then(|v| v.as_str()) {
                f = hlo_category_family(c).unwrap_or(f);
            }
        }
        if let Some(slot) = self.memo.borrow_mut().get_mut(id) {
            if !matches!(s.category[d], Category::Memcpy | Category::Memset) {
                *slot = Some(f);
            }
        }
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_xla_ops_category_names_its_family_where_its_name_does_not() {
        let c = |s| hlo_category_family(s);
        assert_eq!(c("convolution fusion"), Some(Family::Convolution));
        assert_eq!(c("dot"), Some(Family::Gemm));
        assert_eq!(c("all-reduce"), Some(Family::Communication));
        assert_eq!(c("non-fusion elementwise"), Some(Family::Elementwise));
        assert_eq!(c("loop fusion"), Some(Family::Elementwise));
        assert_eq!(c("data formatting"), Some(Family::Layout));
        assert_eq!(c("reduction"), Some(Family::Reduction));
        assert_eq!(c("custom-call"), None);
        assert_eq!(c("while"), None);
    }

    #[test]
    fn the_same_work_on_two_vendors_is_one_family() {
        let k = |n| family(Category::Kernel, n);
        assert_eq!(
            k("sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64"),
            Family::Gemm
        );
        assert_eq!(
            k("Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0"),
            Family::Gemm
        );
        assert_eq!(k("nvjet_hsh_128x256_64x4_1x2_h_bz_coopA_NTT"), Family::Gemm);
        assert_eq!(k("dot.3"), Family::Gemm);
        assert_eq!(
            k("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128>>"),
            Family::Attention
        );
        assert_eq!(
            k("sm80_xmma_fprop_implicit_gemm_indexed_f32f32_tf32f32"),
            Family::Convolution
        );
        assert_eq!(
            k("ncclDevKernel_AllReduce_Sum_f32_RING_LL"),
            Family::Communication
        );
        assert_eq!(
            k("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4>"),
            Family::Reduction
        );
        assert_eq!(k("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>"), Family::Elementwise);
        assert_eq!(
            family(Category::Memcpy, "Memcpy HtoD (Pageable -> Device)"),
            Family::Memcpy
        );
        // cuDNN's and MIOpen's layout changes around a convolution.
        assert_eq!(
            k("void cudnn::engines_precompiled::nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, false, true, (cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, __nv_bfloat16 const*, __nv_bfloat16*)"),
            Family::Layout
        );
        assert_eq!(k("batched_transpose_256x4_half"), Family::Layout);
        assert_eq!(k("transpose.4"), Family::Layout);
        assert_eq!(k("convert_fp8_kernel"), Family::Other);
        // Device windows named after their op (TorchNeuron).
        assert_eq!(k("aten::mul"), Family::Elementwise);
        assert_eq!(k("aten::add_"), Family::Elementwise);
        assert_eq!(k("aten::mean"), Family::Reduction);
        assert_eq!(k("aten::rms_norm"), Family::Reduction);
        assert_eq!(k("aten::_softmax"), Family::Reduction);
        assert_eq!(k("aten::addmm"), Family::Gemm);
        assert_eq!(
            k("aten::_scaled_dot_product_flash_attention"),
            Family::Attention
        );
        assert_eq!(k("aten::_to_copy"), Family::Elementwise);
        assert_eq!(k("aten::unknown_op"), Family::Other);
    }
}

//! The names two op trees are aligned by, one table for both traces: two
//! ops have the same name when their keys are the same integer.
//!
//! A key is the op's name, except that digit runs in an annotation's or a
//! module scope's name read as `#` (`ProfilerStep#3` and `ProfilerStep#7`,
//! `nn.Module: Linear_0` and `_2` are one key: numbering differs between
//! runs, the structure does not).

use rustc_hash::FxHashMap;

use crate::category::Category;

/// A pair of ops with the same name scores this in the alignment…
const SCORE_SAME: u32 = 8;
/// …an op PyTorch's dispatch adds or drops between backends and versions
/// (views, dtype and device conversions, allocations) scores less, so that
/// it never outweighs a real op when the two disagree on where it goes…
const SCORE_NOISE: u32 = 2;
/// …and two annotations with different names at the same place
/// (`rmsnorm_naive` against `rmsnorm_fused`) pair, but below any same-name
/// pair.
pub(super) const SCORE_RENAMED: u32 = 3;
/// An ATen op and an XLA op of one kind (`aten::linear` and a JAX
/// `dot_general`) pair below a same-name pair and above a renamed region.
const SCORE_ACROSS: u32 = 6;

/// Kinds of op two frameworks name differently but run as one op: matrix
/// products and convolutions (what the rest of a program is fused around:
/// XLA fuses the elementwise ops and reductions between them, PyTorch runs
/// them one by one).
#[derive(Clone, Copy, PartialEq, Eq)]
enum OpKind {
    None,
    MatMul,
    Conv,
}

const ATEN_MATMUL: &[&str] = &[
    "aten::mm",
    "aten::addmm",
    "aten::matmul",
    "aten::linear",
    "aten::bmm",
    "aten::baddbmm",
    "aten::addbmm",
    "aten::mv",
    "aten::addmv",
    "aten::dot",
    "aten::einsum",
    "aten::_scaled_mm",
];

const ATEN_CONV: &[&str] = &[
    "aten::conv1d",
    "aten::conv2d",
    "aten::conv3d",
    "aten::convolution",
    "aten::_convolution",
    "aten::conv_transpose1d",
    "aten::conv_transpose2d",
    "aten::conv_transpose3d",
    "aten::cudnn_convolution",
    "aten::miopen_convolution",
    "aten::mkldnn_convolution",
];

/// An op's kind across frameworks.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Kind {
    op: OpKind,
    /// An XLA op (its key made by `xla_nodes.rs`: `xla:<name stack>`,
    /// `hlo:<op>`).
    xla: bool,
    /// Part of a backward pass: a matrix product of the gradient pairs with
    /// a gradient's, never with a forward one (the same shapes, transposed).
    backward: bool,
}

/// What marks a backward ATen op's key ([`Keys::of_backward`]).
const BACKWARD_MARK: &str = "\u{0}backward";

/// Name scopes XLA's frameworks put gradient ops in: JAX differentiates by
/// transposing the forward's linearisation (`transpose(jvp(f))/dot_general`);
/// TensorFlow 2 records a `GradientTape`'s ops under `gradient_tape/`, TF 1
/// under `gradients/`.
fn is_xla_gradient(stack: &str) -> bool {
    stack.contains("transpose(")
        || stack.starts_with("gradient_tape/")
        || stack.starts_with("gradients/")
}

fn op_kind(key: &str) -> Kind {
    if let Some(stack) = key.strip_prefix("xla:") {
        // The JAX primitive: the name stack's last scope.
        let op = match stack.rsplit('/').next().unwrap_or(stack) {
            "dot_general" | "dot" => OpKind::MatMul,
            "conv_general_dilated" | "conv" => OpKind::Conv,
            _ => OpKind::None,
        };
        let backward = is_xla_gradient(stack);
        return Kind {
            op,
            xla: true,
            backward,
        };
    }
    if key.starts_with("hlo:") {
        let none = OpKind::None;
        return Kind {
            op: none,
            xla: true,
            backward: false,
        };
    }
    let (key, backward) = match key.strip_suffix(BACKWARD_MARK) {
        Some(k) => (k, true),
        None => (key, false),
    };
    let op = if ATEN_MATMUL.contains(&key) {
        OpKind::MatMul
    } else if ATEN_CONV.contains(&key) {
        OpKind::Conv
    } else {
        OpKind::None
    };
    Kind {
        op,
        xla: false,
        backward,
    }
}

/// ATen ops that move no data of their own or only convert: metadata views,
/// allocations, conjugate/negative-bit resolution, dtype/device conversion
/// wrappers (their copies, `aten::copy_`, stay real ops).
const NOISE: &[&str] = &[
    "aten::view",
    "aten::_unsafe_view",
    "aten::view_as",
    "aten::reshape",
    "aten::_reshape_alias",
    "aten::t",
    "aten::transpose",
    "aten::permute",
    "aten::expand",
    "aten::expand_as",
    "aten::as_strided",
    "aten::unsqueeze",
    "aten::squeeze",
    "aten::flatten",
    "aten::unflatten",
    "aten::contiguous",
    "aten::detach",
    "aten::detach_",
    "detach",
    "detach_",
    "aten::alias",
    "aten::slice",
    "aten::select",
    "aten::narrow",
    "aten::split",
    "aten::split_with_sizes",
    "aten::chunk",
    "aten::unbind",
    "aten::empty",
    "aten::empty_like",
    "aten::empty_strided",
    "aten::resolve_conj",
    "aten::resolve_neg",
    "aten::lift_fresh",
    "aten::to",
    "aten::_to_copy",
    "aten::result_type",
    "aten::numpy_T",
    "aten::matrix_H",
];

/// What a node with another name at the same place can be, renamed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rename {
    /// Nothing: an op is its name.
    No,
    /// Another annotation (`rmsnorm_naive` against `rmsnorm_fused`).
    Annotation,
    /// Another step only: a step is the loop's structure, never another
    /// region renamed.
    Step,
    /// Another `nn.Module:` scope (`LlamaAttention` against
    /// `LlamaSdpaAttention`): TraceLens' TraceDiff pairs these in its
    /// second, aggressive pass, which compares a Python event's name
    /// without what follows `: ` (`_normalize_name_for_comparison`).
    Module,
}

/// Keys and what each one scores.
#[derive(Default)]
pub(super) struct Keys {
    ids: FxHashMap<String, u32>,
    pub(super) names: Vec<String>,
    /// What a pair of this key scores.
    pub(super) score: Vec<u32>,
    /// Which names it pairs with as renamed (another of its class).
    rename: Vec<Rename>,
    /// A dispatch-noise op ([`NOISE`]).
    pub(super) noise: Vec<bool>,
    /// The op's kind across frameworks.
    kind: Vec<Kind>,
}

impl Keys {
    /// The key of a node with this name and category.
    pub(super) fn of(&mut self, name: &str, category: Category) -> u32 {
        let (key, rename) = match category {
            Category::UserAnnotation if name.starts_with("ProfilerStep#") => {
                (digits_as_hash(name), Rename::Step)
            }
            Category::UserAnnotation => (digits_as_hash(name), Rename::Annotation),
            Category::PythonFunction if name.starts_with("nn.Module: ") => {
                (digits_as_hash(name), Rename::Module)
            }
            Category::PythonFunction => (digits_as_hash(name), Rename::No),
            _ => (name.to_string(), Rename::No),
        };
        self.intern(key, rename)
    }

    /// The key of a node inside a PyTorch backward pass (under autograd's
    /// `evaluate_function`): a matrix product or convolution there is
    /// keyed apart from the forward's — a gradient's product pairs with a
    /// gradient's, here or across frameworks; any other op keeps its key.
    pub(super) fn of_backward(&mut self, name: &str, category: Category) -> u32 {
        let k = self.of(name, category);
        let kind = self.kind[k as usize];
        if kind.op == OpKind::None || kind.xla {
            return k;
        }
        self.intern(format!("{name}{BACKWARD_MARK}"), Rename::No)
    }

    fn intern(&mut self, key: String, rename: Rename) -> u32 {
        if let Some(&k) = self.ids.get(&key) {
            return k;
        }
        let noise = NOISE.contains(&key.as_str());
        let k = self.names.len() as u32;
        self.kind.push(op_kind(&key));
        self.ids.insert(key.clone(), k);
        self.names.push(key);
        self.score
            .push(if noise { SCORE_NOISE } else { SCORE_SAME });
        self.rename.push(rename);
        self.noise.push(noise);
        k
    }

    /// What pairing `a` with `b` scores (0: they do not pair).
    pub(super) fn pair_score(&self, a: u32, b: u32) -> u32 {
        if a == b {
            self.score[a as usize]
        } else if self.rename[a as usize] != Rename::No
            && self.rename[a as usize] == self.rename[b as usize]
        {
            // Two regions (or modules) at the same place under different
            // names.
            SCORE_RENAMED
        } else if self.across(a, b) {
            SCORE_ACROSS
        } else {
            0
        }
    }

    /// An ATen op and an XLA op of one kind and direction.
    pub(super) fn across(&self, a: u32, b: u32) -> bool {
        let (ka, kb) = (self.kind[a as usize], self.kind[b as usize]);
        ka.op != OpKind::None && ka.op == kb.op && ka.xla != kb.xla && ka.backward == kb.backward
    }

    /// A matrix product or convolution (what pairs across frameworks).
    pub(super) fn pairs_across(&self, k: u32) -> bool {
        self.kind[k as usize].op != OpKind::None
    }

    /// An XLA op's key.
    pub(super) fn is_xla(&self, k: u32) -> bool {
        self.kind[k as usize].xla
    }
}

fn digits_as_hash(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_digits = false;
    for c in name.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_annotations_share_a_key_and_ops_do_not_lose_digits() {
        let mut k = Keys::default();
        let s3 = k.of("ProfilerStep#3", Category::UserAnnotation);
        assert_eq!(s3, k.of("ProfilerStep#12", Category::UserAnnotation));
        assert_ne!(
            k.of("aten::conv1d", Category::CpuOp),
            k.of("aten::conv2d", Category::CpuOp)
        );
        let view = k.of("aten::view", Category::CpuOp);
        let mm = k.of("aten::mm", Category::CpuOp);
        assert!(k.pair_score(mm, mm) > k.pair_score(view, view));
        let other = k.of("fwd", Category::UserAnnotation);
        assert_eq!(k.pair_score(mm, view), 0);
        // A step is never another region renamed.
        let wait = k.of("Wait for usage holds", Category::UserAnnotation);
        assert_eq!(k.pair_score(s3, wait), 0);
        assert_eq!(k.pair_score(other, wait), SCORE_RENAMED);
        // A module scope renames as another module, not as a region.
        let attn = k.of("nn.Module: LlamaAttention_0", Category::PythonFunction);
        let sdpa = k.of("nn.Module: LlamaSdpaAttention_0", Category::PythonFunction);
        assert_eq!(k.pair_score(attn, sdpa), SCORE_RENAMED);
        assert_eq!(k.pair_score(attn, other), 0);
        assert_eq!(k.pair_score(attn, mm), 0);
    }

    #[test]
    fn a_matrix_product_pairs_across_frameworks_only() {
        let mut k = Keys::default();
        let linear = k.of("aten::linear", Category::CpuOp);
        let addmm = k.of("aten::addmm", Category::CpuOp);
        let dot = k.of("xla:jvp()/dot_general", Category::CpuOp);
        let dot_bwd = k.of("xla:transpose(jvp())/dot_general", Category::CpuOp);
        let conv = k.of("xla:conv_general_dilated", Category::CpuOp);
        let conv2d = k.of("aten::conv2d", Category::CpuOp);
        assert_eq!(k.pair_score(linear, dot), SCORE_ACROSS);
        assert_eq!(k.pair_score(conv2d, conv), SCORE_ACROSS);
        assert!(k.pair_score(linear, linear) > SCORE_ACROSS);
        // Within one framework the names decide: PyTorch's linear is not
        // its addmm, JAX's forward dot is not its backward one.
        assert_eq!(k.pair_score(linear, addmm), 0);
        assert_eq!(k.pair_score(dot, dot_bwd), 0);
        assert_eq!(k.pair_score(linear, conv), 0);
    }

    #[test]
    fn a_gradients_matrix_product_pairs_with_a_gradients_only() {
        let mut k = Keys::default();
        let mm = k.of("aten::mm", Category::CpuOp);
        let mm_bwd = k.of_backward("aten::mm", Category::CpuOp);
        let linear = k.of("aten::linear", Category::CpuOp);
        let dot = k.of("xla:jvp()/dot_general", Category::CpuOp);
        let dot_bwd = k.of("xla:transpose(jvp())/dot_general", Category::CpuOp);
        let tf_bwd = k.of("xla:gradient_tape/dense/dot_general", Category::CpuOp);
        assert_eq!(k.pair_score(mm_bwd, dot_bwd), SCORE_ACROSS);
        assert_eq!(k.pair_score(mm_bwd, tf_bwd), SCORE_ACROSS);
        assert_eq!(k.pair_score(linear, dot_bwd), 0);
        assert_eq!(k.pair_score(mm_bwd, dot), 0);
        assert_eq!(k.pair_score(mm, dot), SCORE_ACROSS);
        // Two PyTorch runs' backward products still pair by name; any
        // other op in a backward pass keeps its one key.
        assert_eq!(mm_bwd, k.of_backward("aten::mm", Category::CpuOp));
        assert!(k.pair_score(mm_bwd, mm_bwd) > SCORE_ACROSS);
        assert_eq!(k.pair_score(mm_bwd, mm), 0);
        let add = k.of("aten::add", Category::CpuOp);
        assert_eq!(add, k.of_backward("aten::add", Category::CpuOp));
    }
}

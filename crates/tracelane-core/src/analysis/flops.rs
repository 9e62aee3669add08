//! FLOPs and minimum bytes of one op from its recorded shapes.
//!
//! The formulas PyTorch's profiler uses for `with_flops=True`
//! (`torch/csrc/profiler/util.cpp`: `saveExtraArgs` picks the inputs,
//! `computeFlops` counts), reproduced exactly so that the sums equal
//! `key_averages()`'s `flops` column:
//! - `aten::mm`, `aten::addmm` (inputs 1, 2): `2 · Π(mat1) / mat1[-1] · Π(mat2)`;
//! - `aten::bmm`, `aten::baddbmm` (inputs 1, 2): the same `/ mat1[0]`;
//! - `aten::conv2d`: `2 · N · OH · OW · KH · KW · C_in · C_out / groups`,
//!   `OH = (H + 2·pad − dil·(KH − 1) − 1) / stride + 1` in unsigned integers,
//!   stride, padding, dilation and groups from `Concrete Inputs`;
//! - `aten::mul`, `aten::add`: the element count of the *first* input (not
//!   the broadcast output; a scalar first input counts nothing).
//!
//! PyTorch has no formula for `aten::linear` or attention; tracelane adds
//! two, from `torch.utils.flop_counter` (labelled as tracelane's):
//! - `aten::linear`: `2 · Π(input[:-1]) · in · out` (bias not counted, as
//!   PyTorch's addmm);
//! - `aten::scaled_dot_product_attention`: `2·B·H·L·S·E + 2·B·H·L·S·Ev`
//!   (`QKᵀ` then `PV`; a causal mask is not discounted, as `flop_counter`).
//!
//! Every other op has no formula: the roofline lists it, it never guesses.
//!
//! Bytes are the least an op can move: each input once plus its output
//! once, from the shapes and the `Input type` element sizes — an estimate,
//! labelled so (caches, re-reads and layouts only add to it).

use serde::{Deserialize, Serialize};

/// Where a FLOP count comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlopsSource {
    /// The trace's own `flops` arg.
    Trace,
    /// PyTorch's formula (equal to `key_averages()`).
    Pytorch,
    /// tracelane's formula for an op PyTorch does not count.
    Tracelane,
    /// Neuron's `raw_flops` from the device profile.
    Neuron,
    /// An XPlane profile: the events' `flops` stats, else XLA's cost
    /// analysis of the embedded module as xprof runs it.
    Xla,
}

/// One op's recorded inputs: `Input Dims`, `Input type`, `Concrete Inputs`.
pub struct OpInputs<'a> {
    pub dims: Vec<Vec<i64>>,
    pub types: Vec<&'a str>,
    pub concrete: Vec<String>,
}

impl<'a> OpInputs<'a> {
    /// Parses the compact JSON texts the model keeps (any may be empty).
    pub fn parse(dims: &str, types: &'a str, concrete: &str) -> OpInputs<'a> {
        let dims: Vec<Vec<i64>> = serde_json::from_str::<Vec<serde_json::Value>>(dims)
            .unwrap_or_default()
            .iter()
            .map(|v| {
                v.as_array()
                    .map(|a| a.iter().filter_map(|x| x.as_i64()).collect())
                    .unwrap_or_default()
            })
            .collect();
        let types = split_strings(types);
        let concrete = serde_json::from_str::<Vec<String>>(concrete).unwrap_or_default();
        OpInputs {
            dims,
            types,
            concrete,
        }
    }
    fn dims(&self, k: usize) -> Option<&[i64]> {
        self.dims.get(k).map(Vec::as_slice)
    }
    /// Is input `k` a tensor? Its `Input type` is then a dtype name
    /// (`float`, `long int`, `c10::BFloat16`); anything else is an IValue
    /// kind, capitalised (`Scalar`, `ScalarList`, `TensorList`, and in
    /// older traces `Int`, `Double`, `Bool`, `GenericList`), or empty.
    fn is_tensor(&self, k: usize) -> bool {
        self.types.get(k).is_some_and(|t| {
            t.starts_with("c10::") || t.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        })
    }
    fn int_list(&self, k: usize) -> Option<Vec<i64>> {
        serde_json::from_str::<Vec<i64>>(self.concrete.get(k)?).ok()
    }
    fn int(&self, k: usize) -> Option<i64> {
        self.concrete.get(k)?.trim().parse().ok()
    }
}

/// `["float", "c10::BFloat16", ""]` → its strings, borrowed.
fn split_strings(text: &str) -> Vec<&str> {
    let inner = text.trim().trim_start_matches('[').trim_end_matches(']');
    if inner.trim().is_empty() {
        return Vec::new();
    }
    inner
        .split(',')
        .map(|s| s.trim().trim_matches('"'))
        .collect()
}

fn prod(d: &[i64]) -> u64 {
    d.iter().fold(1u64, |a, &x| a.wrapping_mul(x as u64))
}

/// An op's FLOPs, or `None` when no formula applies (or its inputs do not
/// fit it, where PyTorch would count 0 and warn).
pub fn flops(name: &str, x: &OpInputs) -> Option<(u64, FlopsSource)> {
    let pytorch = |v: u64| Some((v, FlopsSource::Pytorch));
    match name {
        "aten::mm" | "aten::addmm" | "aten::bmm" | "aten::baddbmm" => {
            let first = usize::from(matches!(name, "aten::addmm" | "aten::baddbmm"));
            let need = first + 2;
            if x.dims.len() < need || !(0..need).all(|k| x.is_tensor(k)) {
                return None;
            }
            let (m1, m2) = (x.dims(first)?, x.dims(first + 1)?);
            let overlap = *m1.last()?;
            if overlap == 0 {
                return pytorch(0);
            }
            let mut f = prod(m1) / overlap as u64;
            if matches!(name, "aten::bmm" | "aten::baddbmm") {
                let batch = m1[0];
                if batch == 0 {
                    return pytorch(0);
                }
                f /= batch as u64;
            }
            pytorch(f.wrapping_mul(prod(m2)).wrapping_mul(2))
        }
        "aten::mul" | "aten::add" => {
            if !x.is_tensor(0) {
                return None;
            }
            pytorch(prod(x.dims(0)?))
        }
        "aten::conv2d" => {
            if x.dims.len() < 7 || !x.is_tensor(0) || !x.is_tensor(1) {
                return None;
            }
            let (input, weight) = (x.dims(0)?, x.dims(1)?);
            let (stride, padding, dilation) = (x.int_list(3)?, x.int_list(4)?, x.int_list(5)?);
            let groups = x.int(6)? as u64;
            if input.len() != 4 || weight.len() != 4 || groups == 0 {
                return None;
            }
            if padding.len() != 2 || dilation.len() != 2 || stride.len() != 2 {
                return None;
            }
            if stride[0] * stride[1] == 0 {
                return None;
            }
            let u = |v: i64| v as u64;
            let (n, c_in, h, w) = (u(input[0]), u(input[1]), u(input[2]), u(input[3]));
            let (c_out, kh, kw) = (u(weight[0]), u(weight[2]), u(weight[3]));
            let out = |size: u64, k: u64, i: usize| {
                (size
                    .wrapping_add(2u64.wrapping_mul(u(padding[i])))
                    .wrapping_sub(u(dilation[i]).wrapping_mul(k.wrapping_sub(1)))
                    .wrapping_sub(1))
                    / u(stride[i])
                    + 1
            };
            let (oh, ow) = (out(h, kh, 0), out(w, kw, 1));
            pytorch(
                2u64.wrapping_mul(n)
                    .wrapping_mul(oh)
                    .wrapping_mul(ow)
                    .wrapping_mul(kh)
                    .wrapping_mul(kw)
                    .wrapping_mul(c_in)
                    .wrapping_mul(c_out)
                    / groups,
            )
        }
        "aten::linear" => {
            let (input, weight) = (x.dims(0)?, x.dims(1)?);
            if input.is_empty() || weight.len() != 2 || !x.is_tensor(0) || !x.is_tensor(1) {
                return None;
            }
            let rows = prod(&input[..input.len() - 1]);
            Some((
                2 * rows * weight[1] as u64 * weight[0] as u64,
                FlopsSource::Tracelane,
            ))
        }
        "aten::scaled_dot_product_attention" => {
            let (q, k, v) = (x.dims(0)?, x.dims(1)?, x.dims(2)?);
            if q.len() < 2 || k.len() < 2 || v.is_empty() {
                return None;
            }
            let (l, e) = (q[q.len() - 2] as u64, q[q.len() - 1] as u64);
            let s = k[k.len() - 2] as u64;
            let ev = v[v.len() - 1] as u64;
            let batch_heads = prod(&q[..q.len() - 2]);
            Some((
                2 * batch_heads * l * s * e + 2 * batch_heads * l * s * ev,
                FlopsSource::Tracelane,
            ))
        }
        _ => None,
    }
}

/// Bytes per element of a recorded dtype (`Input type` spelling).
pub fn dtype_bytes(t: &str) -> Option<u64> {
    Some(match t {
        "double" | "long int" | "long" | "int64_t" | "c10::complex<float>" => 8,
        "float" | "int" | "unsigned int" => 4,
        "c10::Half" | "c10::BFloat16" | "short" | "unsigned short" => 2,
        "bool" | "unsigned char" | "signed char" | "char" => 1,
        "c10::complex<double>" => 16,
        t if t.starts_with("c10::Float8") => 1,
        _ => return None,
    })
}

/// The dtype an op computes in: its first tensor input's.
pub fn dtype_of<'a>(x: &OpInputs<'a>) -> Option<&'a str> {
    (0..x.types.len())
        .find(|&k| x.is_tensor(k))
        .map(|k| x.types[k])
}

/// The output shape of the ops with a formula (the trace does not record
/// outputs).
fn output_shape(name: &str, x: &OpInputs) -> Option<Vec<i64>> {
    match name {
        "aten::mm" => Some(vec![x.dims(0)?[0], *x.dims(1)?.last()?]),
        "aten::addmm" => Some(vec![x.dims(1)?[0], *x.dims(2)?.last()?]),
        "aten::bmm" => {
            let (a, b) = (x.dims(0)?, x.dims(1)?);
            Some(vec![a[0], *a.get(1)?, *b.last()?])
        }
        "aten::baddbmm" => {
            let (a, b) = (x.dims(1)?, x.dims(2)?);
            Some(vec![a[0], *a.get(1)?, *b.last()?])
        }
        "aten::mul" | "aten::add" => {
            // Broadcast of the tensor inputs.
            let shapes: Vec<&[i64]> = (0..2)
                .filter(|&k| x.is_tensor(k))
                .filter_map(|k| x.dims(k))
                .collect();
            let rank = shapes.iter().map(|s| s.len()).max()?;
            Some(
                (0..rank)
                    .map(|i| {
                        shapes
                            .iter()
                            .filter_map(|s| (i + s.len()).checked_sub(rank).map(|j| s[j]))
                            .max()
                            .unwrap_or(1)
                    })
                    .collect(),
            )
        }
        "aten::conv2d" => {
            let (input, weight) = (x.dims(0)?, x.dims(1)?);
            let (stride, padding, dilation) = (x.int_list(3)?, x.int_list(4)?, x.int_list(5)?);
            let o = |i: usize| {
                (input[2 + i] + 2 * padding[i] - dilation[i] * (weight[2 + i] - 1) - 1) / stride[i]
                    + 1
            };
            Some(vec![input[0], weight[0], o(0), o(1)])
        }
        "aten::linear" => {
            let (input, weight) = (x.dims(0)?, x.dims(1)?);
            let mut out = input[..input.len().checked_sub(1)?].to_vec();
            out.push(weight[0]);
            Some(out)
        }
        "aten::scaled_dot_product_attention" => {
            let (q, v) = (x.dims(0)?, x.dims(2)?);
            let mut out = q[..q.len() - 1].to_vec();
            out.push(*v.last()?);
            Some(out)
        }
        _ => None,
    }
}

/// The least bytes the op moves: every tensor input once, the output once.
/// `None` where a dtype is unknown or the op has no formula.
pub fn min_bytes(name: &str, x: &OpInputs) -> Option<u64> {
    let out = output_shape(name, x)?;
    let elem = dtype_bytes(dtype_of(x)?)?;
    let mut total = prod(&out) * elem;
    for k in 0..x.dims.len() {
        if x.is_tensor(k) {
            total += prod(x.dims(k)?) * dtype_bytes(x.types[k])?;
        }
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op<'a>(dims: &str, types: &'a str, concrete: &str) -> OpInputs<'a> {
        OpInputs::parse(dims, types, concrete)
    }

    #[test]
    fn a_square_matmul_is_2n3_flops_and_its_intensity_is_n_over_6_in_fp32() {
        let n = 1024i64;
        let x = op(
            &format!("[[{n},{n}],[{n},{n}]]"),
            r#"["float","float"]"#,
            "",
        );
        let (f, src) = flops("aten::mm", &x).unwrap();
        assert_eq!(f, 2 * (n * n * n) as u64);
        assert_eq!(src, FlopsSource::Pytorch);
        // A, B and C once each, 4 bytes an element: intensity 2n³ / 12n² = n/6.
        let b = min_bytes("aten::mm", &x).unwrap();
        assert_eq!(b, 3 * (n * n) as u64 * 4);
        assert!((f as f64 / b as f64 - n as f64 / 6.0).abs() < 1e-9);
    }

    #[test]
    fn addmm_and_baddbmm_count_their_second_and_third_inputs() {
        let x = op(
            "[[64],[128,256],[256,64]]",
            r#"["float","float","float"]"#,
            "",
        );
        assert_eq!(flops("aten::addmm", &x).unwrap().0, 2 * 128 * 256 * 64);
        let x = op(
            "[[4,32,16],[4,32,48],[4,48,16]]",
            r#"["float","float","float"]"#,
            "",
        );
        assert_eq!(flops("aten::baddbmm", &x).unwrap().0, 2 * 4 * 32 * 48 * 16);
    }

    #[test]
    fn mul_counts_its_first_input_not_the_broadcast_output() {
        let x = op("[[4096],[64,4096]]", r#"["float","float"]"#, "");
        assert_eq!(flops("aten::mul", &x).unwrap().0, 4096);
        let x = op("[[],[64,4096]]", r#"["Scalar","float"]"#, "");
        assert_eq!(flops("aten::mul", &x), None);
        // Output is the broadcast [64, 4096]: read 4096 + 64·4096, write 64·4096.
        let x = op("[[4096],[64,4096]]", r#"["float","float"]"#, "");
        assert_eq!(
            min_bytes("aten::mul", &x).unwrap(),
            (4096 + 2 * 64 * 4096) * 4
        );
    }

    #[test]
    fn older_traces_scalar_kinds_are_not_tensors() {
        // PyTorch 1.8-era `Input type`: the alpha of add is an `Int`.
        let x = op("[[32,256],[32,256],[]]", r#"["float","float","Int"]"#, "");
        assert_eq!(flops("aten::add", &x).unwrap().0, 32 * 256);
        assert_eq!(min_bytes("aten::add", &x).unwrap(), 3 * 32 * 256 * 4);
        let x = op("[[],[32,256]]", r#"["Double","float"]"#, "");
        assert_eq!(flops("aten::mul", &x), None);
    }

    #[test]
    fn a_copy_has_no_flops() {
        let x = op(
            "[[64,4096],[64,4096],[]]",
            r#"["float","float","Scalar"]"#,
            "",
        );
        assert_eq!(flops("aten::copy_", &x), None);
        assert_eq!(min_bytes("aten::copy_", &x), None);
    }

    #[test]
    fn conv2d_uses_stride_padding_dilation_and_groups() {
        let x = op(
            "[[2,16,16,16],[32,4,3,3],[],[],[],[],[]]",
            r#"["float","float","","ScalarList","ScalarList","ScalarList","Scalar"]"#,
            r#"["","","","[1, 1]","[2, 2]","[2, 2]","4"]"#,
        );
        // 16 + 4 - 2·2 - 1 = 15 → 16 outputs a side.
        assert_eq!(
            flops("aten::conv2d", &x).unwrap().0,
            2 * 2 * 16 * 16 * 9 * 16 * 32 / 4
        );
    }
}

//! The FLOP counts of XLA's cost analysis that are more than a count of
//! elements (`xla/service/hlo_cost_analysis.cc`: `GetDotFlops`,
//! `GetConvolutionFlops`, `HandleReduceWindow`'s reduction count).

use super::shape::Shape;

/// One window dimension (`xla.WindowDimension`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowDim {
    pub size: i64,
    pub stride: i64,
    pub padding_low: i64,
    pub padding_high: i64,
    pub window_dilation: i64,
    pub base_dilation: i64,
}

/// The convolution dimension numbers the FLOP count reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConvDims {
    pub input_batch: i64,
    pub input_feature: i64,
    pub input_spatial: Vec<i64>,
    pub kernel_spatial: Vec<i64>,
    pub output_feature: i64,
    pub output_spatial: Vec<i64>,
}

/// One fused multiply-add counts as two FLOPs (`kFmaFlops`).
const FMA_FLOPS: i64 = 2;

/// `GetDotFlops`: each output element is a reduction over the lhs
/// contracting dimensions.
pub(super) fn dot(lhs: &Shape, result: &Shape, lhs_contracting: &[i64]) -> i64 {
    let width = lhs_contracting
        .iter()
        .fold(1i64, |w, &d| w.saturating_mul(dim(lhs, d)));
    FMA_FLOPS
        .saturating_mul(result.elements())
        .saturating_mul(width)
}

fn dim(s: &Shape, d: i64) -> i64 {
    usize::try_from(d)
        .ok()
        .and_then(|d| s.dims.get(d).copied())
        .unwrap_or(1)
}

/// The operands and groups of a convolution.
pub(super) struct Conv<'a> {
    pub lhs: &'a Shape,
    pub rhs: &'a Shape,
    pub result: &'a Shape,
    pub dims: &'a ConvDims,
    pub window: &'a [WindowDim],
    pub feature_groups: i64,
    pub batch_groups: i64,
}

/// Position pairs one convolution may count one by one: past it (a
/// malformed module's window) it is not priced rather than frozen on.
const MAX_PAIRS: i64 = 1 << 26;

/// `GetConvolutionFlops`: for each spatial dimension, the (output,
/// kernel) position pairs that land inside the (dilated, padded) input;
/// their product times the features and batch, two FLOPs each.
pub(super) fn convolution(c: &Conv) -> Option<i64> {
    let d = c.dims;
    let input_feature = dim(c.lhs, d.input_feature);
    let output_feature = dim(c.result, d.output_feature);
    let batch = dim(c.lhs, d.input_batch);
    let mut valid = 1i64;
    if c.window.is_empty() {
        // `MakeWindow({1})`: one position.
    } else {
        for (k, w) in c.window.iter().enumerate() {
            let at = |v: &[i64], s: &Shape| v.get(k).map_or(1, |&x| dim(s, x));
            let kernel = at(&d.kernel_spatial, c.rhs);
            let output = at(&d.output_spatial, c.result);
            let input = at(&d.input_spatial, c.lhs);
            if kernel.saturating_mul(output.max(1)) > MAX_PAIRS {
                return None;
            }
            valid = valid.saturating_mul(valid_positions(input, kernel, output, w));
        }
    }
    let fmas = (input_feature / c.feature_groups.max(1))
        .saturating_mul(output_feature)
        .saturating_mul(batch / c.batch_groups.max(1))
        .saturating_mul(valid);
    Some(fmas.saturating_mul(FMA_FLOPS))
}

fn valid_positions(input: i64, kernel: i64, output: i64, w: &WindowDim) -> i64 {
    // Two shapes XLA short-cuts (the result of the general loop).
    if input == output
        && kernel == output
        && input == w.base_dilation
        && w.window_dilation == 1
        && input.saturating_sub(1).max(1) == w.stride
        && w.padding_low == 0
        && w.padding_high == 0
    {
        return input;
    }
    if input == 1
        && kernel == output
        && w.window_dilation == 1
        && w.base_dilation == 1
        && w.stride == 1
        && w.padding_high == output.saturating_sub(1)
        && w.padding_low == output.saturating_sub(1)
    {
        return output;
    }
    let mut count = 0i64;
    for k in 0..kernel {
        if w.stride == 1 && w.base_dilation == 1 {
            let base = w
                .padding_low
                .saturating_sub(k.saturating_mul(w.window_dilation));
            let hi = input.saturating_add(base).min(output);
            count += hi.saturating_sub(base.max(0)).max(0);
            continue;
        }
        for o in 0..output {
            let undilated = o
                .saturating_mul(w.stride)
                .saturating_sub(w.padding_low)
                .saturating_add(k.saturating_mul(w.window_dilation));
            let lhs = if w.base_dilation > 1 {
                undilated / w.base_dilation
            } else {
                undilated
            };
            if undilated != lhs.saturating_mul(w.base_dilation.max(1)) {
                continue;
            }
            if (0..input).contains(&lhs) {
                count += 1;
            }
        }
    }
    count
}

/// `HandleReduceWindow`'s count of reducer applications: window size
/// less one per output element, or, for a reduce-window that is a reduce
/// broadcast back along one padded dimension, what that reduce does.
pub(super) fn reduce_window_count(window: &[WindowDim], result: &Shape) -> i64 {
    let window_elements = window.iter().fold(1i64, |n, w| n.saturating_mul(w.size));
    let output = result.elements();
    let mut count = window_elements.saturating_sub(1).saturating_mul(output);
    let reducing = window.iter().filter(|w| w.size != 1).count();
    let padded = window
        .iter()
        .filter(|w| w.padding_low != 0 || w.padding_high != 0)
        .count();
    if reducing == 1 && padded == 1 && result.is_array() {
        let found = window.iter().position(|w| {
            w.size != 1
                && w.padding_low != 0
                && w.padding_high != 0
                && w.padding_low == w.padding_high
                && Some(w.size) == w.padding_low.checked_mul(2).and_then(|p| p.checked_add(1))
        });
        if let Some(k) = found {
            let span = result.dims.get(k).copied().unwrap_or(1);
            if span > 0 && window[k].padding_low == span - 1 {
                count = (output / span).saturating_add(span - 1);
            }
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xla_cost::shape::Layout;

    fn array(dims: &[i64]) -> Shape {
        Shape {
            element_type: 16,
            dims: dims.to_vec(),
            tuple: Vec::new(),
            layout: Some(Layout::default()),
        }
    }

    fn w(size: i64, stride: i64, pad: i64) -> WindowDim {
        WindowDim {
            size,
            stride,
            padding_low: pad,
            padding_high: pad,
            window_dilation: 1,
            base_dilation: 1,
        }
    }

    /// The public MI300 profile's `cudnn-conv.1`: window 1x2x2, stride
    /// 1x2x2, pad 1_1 on each side; xprof 2.24.2 gives 32,715,571,200
    /// FLOPs per occurrence (only the taps that land on the input count).
    #[test]
    fn padded_convolution_counts_taps_inside_the_input() {
        let (lhs, rhs, out) = (
            array(&[1, 16, 32, 60, 104]),
            array(&[5120, 16, 1, 2, 2]),
            array(&[1, 5120, 34, 31, 53]),
        );
        let dims = ConvDims {
            input_batch: 0,
            input_feature: 1,
            input_spatial: vec![2, 3, 4],
            kernel_spatial: vec![2, 3, 4],
            output_feature: 1,
            output_spatial: vec![2, 3, 4],
        };
        let window = [w(1, 1, 1), w(2, 2, 1), w(2, 2, 1)];
        let c = Conv {
            lhs: &lhs,
            rhs: &rhs,
            result: &out,
            dims: &dims,
            window: &window,
            feature_groups: 1,
            batch_groups: 1,
        };
        assert_eq!(convolution(&c), Some(32_715_571_200));
    }

    #[test]
    fn dot_is_two_flops_per_contracted_product() {
        let lhs = array(&[4096, 2, 1024]);
        let out = array(&[2, 4096, 6144]);
        assert_eq!(dot(&lhs, &out, &[2]), 103_079_215_104);
    }
}

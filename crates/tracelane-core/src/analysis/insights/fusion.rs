//! Fusion candidates: chains of eager pointwise ops one compiled kernel
//! could hold.

use rustc_hash::FxHashMap;

use crate::analysis::intervals::{self, Interval};
use crate::analysis::warmup::{median, WARMUP_FACTOR};
use crate::category::Category;
use crate::model::{Trace, NO_SLICE};

use super::cx::{us, Cx};
use super::report::{Evidence, Finding};
use super::rules::{FUSION_MIN_OPS, MAX_EVIDENCE};

/// Ops one fused kernel can hold: pointwise maths, casts and the simple
/// reductions inductor fuses with them.
const FUSIBLE: &[&str] = &[
    "abs",
    "add",
    "add_",
    "addcmul",
    "addcmul_",
    "addcdiv",
    "addcdiv_",
    "amax",
    "lerp",
    "lerp_",
    "sqrt_",
    "neg_",
    "exp2",
    "log1p",
    "expm1",
    "hardtanh",
    "leaky_relu",
    "dropout",
    "native_dropout",
    "clamp",
    "clamp_",
    "clamp_max",
    "clamp_min",
    "clamp_min_",
    "cos",
    "div",
    "div_",
    "erf",
    "exp",
    "exp_",
    "gelu",
    "log",
    "masked_fill",
    "masked_fill_",
    "maximum",
    "mean",
    "minimum",
    "mul",
    "mul_",
    "neg",
    "pow",
    "pow_",
    "reciprocal",
    "relu",
    "relu_",
    "rsqrt",
    "rsqrt_",
    "rsub",
    "sigmoid",
    "sigmoid_",
    "silu",
    "silu_",
    "sin",
    "sqrt",
    "square",
    "sub",
    "sub_",
    "sum",
    "tanh",
    "tanh_",
    "to",
    "_to_copy",
    "type_as",
    "var",
    "where",
];

/// Ops that launch nothing when their input needs no copy: they neither
/// join nor break a chain.
const VIEWS: &[&str] = &[
    "view",
    "_unsafe_view",
    "reshape",
    "unsqueeze",
    "squeeze",
    "expand",
    "expand_as",
    "t",
    "transpose",
    "permute",
    "detach",
    "alias",
    "slice",
    "select",
    "as_strided",
    "flatten",
    "unflatten",
    "contiguous",
    "lift_fresh",
    "result_type",
];

#[derive(Clone, Copy, PartialEq)]
enum Role {
    Fusible,
    Neutral,
    Breaks,
}

/// `[[64, 4096], [], [4096]]` → shapes (an empty list for a scalar or a
/// non-tensor argument). `None` when the text is not a list of lists.
fn parse_dims(s: &str) -> Option<Vec<Vec<i64>>> {
    let inner = s.trim().strip_prefix('[')?.strip_suffix(']')?;
    let mut out = Vec::new();
    let mut rest = inner.trim();
    while !rest.is_empty() {
        let r = rest.strip_prefix('[')?;
        let end = r.find(']')?;
        let dims = r[..end]
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| d.parse().ok())
            .collect::<Option<Vec<i64>>>()?;
        out.push(dims);
        rest = r[end + 1..]
            .trim_start()
            .trim_start_matches(',')
            .trim_start();
    }
    Some(out)
}

/// NumPy broadcasting of two shapes, or `None` when they are not compatible.
fn broadcast(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for k in 0..n {
        let x = if k < n - a.len() {
            1
        } else {
            a[k - (n - a.len())]
        };
        let y = if k < n - b.len() {
            1
        } else {
            b[k - (n - b.len())]
        };
        out[k] = if x == y || y == 1 {
            x
        } else if x == 1 {
            y
        } else {
            return None;
        };
    }
    Some(out)
}

/// The fused op that replaces a chain, when its ops spell a known one.
fn known_pattern(names: &[&str]) -> Option<(&'static str, &'static str)> {
    let has = |n: &str| names.contains(&n);
    if names.iter().all(|&n| n == names[0]) {
        return Some((
            "one op repeated per tensor (a loop over tensors)",
            "batch the loop: torch._foreach_* ops (optimizers: foreach=True or fused=True), torch.stack the tensors, or torch.compile the loop",
        ));
    }
    let means = names.iter().filter(|&&n| n == "mean").count();
    if has("rsqrt")
        && means == 1
        && (has("pow") || has("mul") || has("square"))
        && has("add")
        && !has("sub")
    {
        return Some((
            "RMSNorm written out (x · rsqrt(mean(x²) + ε) · w)",
            "call torch.nn.functional.rms_norm (torch.rms_norm, PyTorch ≥ 2.4), one fused op, or wrap the function in torch.compile, which fuses the chain into one kernel",
        ));
    }
    if means >= 2 && has("sub") && (has("rsqrt") || has("sqrt")) {
        return Some((
            "LayerNorm written out (x − mean) / sqrt(var + ε)",
            "call torch.nn.functional.layer_norm, one fused op, or wrap the function in torch.compile",
        ));
    }
    if has("exp") && has("sum") && has("div") {
        return Some((
            "softmax written out (exp / sum exp)",
            "call torch.softmax, one fused and numerically safe op, or wrap the function in torch.compile",
        ));
    }
    if has("tanh") && has("pow") && has("mul") && has("add") {
        return Some((
            "GELU (tanh form) written out",
            "call torch.nn.functional.gelu(approximate=\"tanh\"), one op, or wrap the function in torch.compile",
        ));
    }
    None
}

struct Chain {
    ops: Vec<u32>,
    device: Vec<u32>,
}

/// The outermost `cpu_op` above (or at) `s`: the op called from Python.
pub(crate) fn top_op(t: &Trace, s: u32) -> u32 {
    let mut top = s;
    let mut k = t.slices.parent[s as usize];
    while k != NO_SLICE {
        if t.slices.category[k as usize] == Category::CpuOp {
            top = k;
        }
        k = t.slices.parent[k as usize];
    }
    top
}

/// The nearest `user_annotation` above `s` (`NO_SLICE` when none).
fn annotation_of(t: &Trace, s: u32) -> u32 {
    let mut k = t.slices.parent[s as usize];
    while k != NO_SLICE {
        if t.slices.category[k as usize] == Category::UserAnnotation {
            return k;
        }
        k = t.slices.parent[k as usize];
    }
    NO_SLICE
}

pub(super) fn fusion(cx: &Cx) -> (Vec<Finding>, String) {
    let t = cx.t;
    let (device_of, has_device) = device_of_ops(t);
    let (chains, shapes_unknown) = chains(cx, &device_of, has_device);
    if chains.is_empty() {
        return (
            Vec::new(),
            format!(
                "no chain of ≥ {FUSION_MIN_OPS} fusible eager ops{}",
                if has_device {
                    " launching one device event each"
                } else {
                    ""
                }
            ),
        );
    }
    let out = group_by_ops(t, chains)
        .into_iter()
        .map(|(sig, chains)| chain_finding(cx, sig, &chains, shapes_unknown))
        .collect();
    (out, String::new())
}

/// Device work per top-level op (`has_device`: the trace has any).
fn device_of_ops(t: &Trace) -> (FxHashMap<u32, Vec<u32>>, bool) {
    let s = &t.slices;
    let mut device_of: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    let mut has_device = false;
    for d in 0..s.len() {
        if !s.category[d].is_device_work() || t.on_host(d) {
            continue;
        }
        has_device = true;
        let op = t.links.op[d];
        if op != NO_SLICE && s.category[op as usize] == Category::CpuOp {
            device_of.entry(top_op(t, op)).or_default().push(d as u32);
        }
    }
    (device_of, has_device)
}

/// An op's name without `aten::`.
fn short(t: &Trace, i: usize) -> &str {
    let n = t.slice_name(i);
    n.strip_prefix("aten::").unwrap_or(n)
}

/// The chains of fusible top-level ops on each host thread, in the scope,
/// under one annotation, shapes broadcasting (`true`: some shapes were not
/// recorded).
fn chains(cx: &Cx, device_of: &FxHashMap<u32, Vec<u32>>, has_device: bool) -> (Vec<Chain>, bool) {
    let t = cx.t;
    let s = &t.slices;
    let role = |i: usize| -> Role {
        let n = t.slice_name(i);
        let Some(name) = n.strip_prefix("aten::") else {
            return Role::Breaks;
        };
        let launched = device_of.get(&(i as u32)).map_or(0, |v| v.len());
        if VIEWS.contains(&name) && launched == 0 {
            return Role::Neutral;
        }
        if !FUSIBLE.contains(&name) {
            return Role::Breaks;
        }
        match (has_device, launched) {
            (false, _) | (true, 1) => Role::Fusible,
            (true, 0) => Role::Neutral,
            _ => Role::Breaks,
        }
    };
    let mut chains: Vec<Chain> = Vec::new();
    let mut shapes_unknown = false;
    for tr in &t.tracks {
        let range = tr.slices.start as usize..tr.slices.end as usize;
        if range.is_empty() || !t.on_host(range.start) {
            continue;
        }
        let mut cur: Vec<u32> = Vec::new();
        let mut acc: Option<Vec<i64>> = None;
        let mut ctx = NO_SLICE;
        let close = |cur: &mut Vec<u32>, chains: &mut Vec<Chain>| {
            if cur.len() >= FUSION_MIN_OPS {
                let device = cur
                    .iter()
                    .flat_map(|o| device_of.get(o).cloned().unwrap_or_default())
                    .collect();
                chains.push(Chain {
                    ops: std::mem::take(cur),
                    device,
                });
            }
            cur.clear();
        };
        for i in range {
            if s.category[i] != Category::CpuOp || top_op(t, i as u32) != i as u32 {
                continue;
            }
            if !cx.inside(s.start_ns[i]) {
                close(&mut cur, &mut chains);
                continue;
            }
            let r = role(i);
            let here = annotation_of(t, i as u32);
            if here != ctx {
                close(&mut cur, &mut chains);
                acc = None;
                ctx = here;
            }
            match r {
                Role::Neutral => continue,
                Role::Breaks => {
                    close(&mut cur, &mut chains);
                    acc = None;
                    continue;
                }
                Role::Fusible => {}
            }
            let dims = parse_dims(t.str(s.input_dims[i]));
            let mut fits = true;
            match &dims {
                Some(list) => {
                    for shape in list.iter().filter(|d| !d.is_empty()) {
                        match acc
                            .as_ref()
                            .map_or(Some(shape.clone()), |a| broadcast(a, shape))
                        {
                            Some(b) => acc = Some(b),
                            None => fits = false,
                        }
                    }
                }
                None => shapes_unknown = true,
            }
            if !fits {
                close(&mut cur, &mut chains);
                acc = dims.and_then(|list| {
                    list.iter()
                        .filter(|d| !d.is_empty())
                        .try_fold(Vec::new(), |a, d| broadcast(&a, d))
                });
            }
            cur.push(i as u32);
        }
        close(&mut cur, &mut chains);
    }
    (chains, shapes_unknown)
}

/// Chains grouped by their op sequence, in first-seen order.
fn group_by_ops(t: &Trace, chains: Vec<Chain>) -> Vec<(String, Vec<Chain>)> {
    let mut groups: Vec<(String, Vec<Chain>)> = Vec::new();
    for c in chains {
        let sig = c
            .ops
            .iter()
            .map(|&o| t.slice_name(o as usize))
            .collect::<Vec<_>>()
            .join(" → ");
        match groups.iter_mut().find(|(k, _)| *k == sig) {
            Some((_, v)) => v.push(c),
            None => groups.push((sig, vec![c])),
        }
    }
    groups
}

/// What a group of chains costs and what fusing it saves.
struct Measured {
    estimate: i64,
    /// Chains left out as first calls, and their time over the median.
    first_calls: usize,
    first_call_ns: i64,
    ranges: Vec<Interval>,
    slices: Vec<u32>,
    host_ns: i64,
    device_ns: i64,
    gaps_ns: i64,
    kept_ns: i64,
}

/// The time fusing saves (the chains' span less their longest kernel, or
/// op in a CPU-only capture), with the ranges and slices that show it.
fn measure(t: &Trace, chains: &[Chain]) -> Measured {
    let s = &t.slices;
    let mut ranges = Vec::new();
    let mut slices = Vec::new();
    let mut host_ns = 0i64;
    let mut device_ns = 0i64;
    let mut gaps_ns = 0i64;
    let mut kept_ns = 0i64;
    let mut each: Vec<i64> = Vec::with_capacity(chains.len());
    for c in chains {
        let host0 = s.start_ns[c.ops[0] as usize];
        let host1 = c
            .ops
            .iter()
            .map(|&o| s.end_ns(o as usize))
            .max()
            .unwrap_or(host0);
        host_ns += c.ops.iter().map(|&o| s.dur_ns[o as usize]).sum::<i64>();
        slices.extend(c.ops.iter().copied());
        slices.extend(c.device.iter().copied());
        if c.device.is_empty() {
            // A CPU-only capture: one op does the chain's work at
            // least as long as its longest op.
            let longest = c
                .ops
                .iter()
                .map(|&o| s.dur_ns[o as usize])
                .max()
                .unwrap_or(0);
            each.push((host1 - host0) - longest);
            kept_ns += longest;
            ranges.push((host0, host1));
        } else {
            let d0 = c
                .device
                .iter()
                .map(|&d| s.start_ns[d as usize])
                .min()
                .unwrap_or(0);
            let d1 = c
                .device
                .iter()
                .map(|&d| s.end_ns(d as usize))
                .max()
                .unwrap_or(0);
            let longest = c
                .device
                .iter()
                .map(|&d| s.dur_ns[d as usize])
                .max()
                .unwrap_or(0);
            let mut iv: Vec<Interval> = c
                .device
                .iter()
                .map(|&d| (s.start_ns[d as usize], s.end_ns(d as usize)))
                .collect();
            let busy = intervals::union_len(&mut iv);
            device_ns += c.device.iter().map(|&d| s.dur_ns[d as usize]).sum::<i64>();
            gaps_ns += (d1 - d0) - busy;
            // One kernel reads the inputs and writes the output once,
            // as the chain's longest kernel does at least.
            each.push((d1 - d0) - longest);
            kept_ns += longest;
            ranges.push((d0, d1));
        }
    }
    // A chain far slower than its peers paid a first call (lazy loading,
    // allocator growth, autotuning): fusing does not remove that, so among
    // three or more it counts as the median chain (the warm-up rule's
    // factor).
    let (mut first_calls, mut first_call_ns) = (0usize, 0i64);
    if each.len() >= 3 {
        let typical = median(&each);
        for e in &mut each {
            if *e as f64 > WARMUP_FACTOR * typical as f64 {
                first_calls += 1;
                first_call_ns += *e - typical;
                *e = typical;
            }
        }
    }
    let estimate: i64 = each.iter().sum();
    Measured {
        estimate,
        first_calls,
        first_call_ns,
        ranges,
        slices,
        host_ns,
        device_ns,
        gaps_ns,
        kept_ns,
    }
}

/// The finding of one op sequence.
fn chain_finding(cx: &Cx, sig: String, chains: &[Chain], shapes_unknown: bool) -> Finding {
    let t = cx.t;
    let first = &chains[0];
    let names: Vec<&str> = first.ops.iter().map(|&o| short(t, o as usize)).collect();
    let n_ops = first.ops.len();
    let Measured {
        estimate,
        first_calls,
        first_call_ns,
        mut ranges,
        mut slices,
        host_ns,
        device_ns,
        gaps_ns,
        kept_ns,
    } = measure(t, chains);
    let occurrences = chains.len();
    let bounded = cx.bounded(estimate, &ranges);
    let (what, action) = known_pattern(&names).unwrap_or((
        "a chain of eager pointwise ops",
        "wrap the function in torch.compile (inductor fuses pointwise ops and simple reductions into one kernel), or write it as one fused op",
    ));
    let on_device = !first.device.is_empty();
    let mut numbers = vec![
        ("occurrences".into(), occurrences.to_string()),
        ("ops per chain".into(), n_ops.to_string()),
    ];
    if on_device {
        numbers.push((
            "device events per chain".into(),
            first.device.len().to_string(),
        ));
        numbers.push((
            "launches saved".into(),
            (occurrences * (first.device.len() - 1)).to_string(),
        ));
        numbers.push(("device time".into(), us(device_ns)));
        numbers.push(("device idle between its kernels".into(), us(gaps_ns)));
        numbers.push(("fused estimate (its longest kernels)".into(), us(kept_ns)));
    } else {
        numbers.push((
            "dispatches saved".into(),
            (occurrences * (n_ops - 1)).to_string(),
        ));
        numbers.push(("fused estimate (its longest ops)".into(), us(kept_ns)));
    }
    numbers.push(("host time in these ops".into(), us(host_ns)));
    if first_calls > 0 {
        numbers.push((
            format!("first calls left out (over {WARMUP_FACTOR}× the median chain)"),
            format!("{first_calls}, {} over it", us(first_call_ns)),
        ));
    }
    if shapes_unknown {
        numbers.push(("shapes".into(), "not recorded: chained by order".into()));
    }
    let slice_count = slices.len();
    slices.truncate(MAX_EVIDENCE);
    ranges.truncate(MAX_EVIDENCE);
    cx.finding(
        "fusion",
        sig.clone(),
        format!(
            "{what}: {n_ops} eager ops{} × {occurrences} — fuse them",
            if on_device {
                format!(", {} device events", first.device.len())
            } else {
                String::new()
            }
        ),
        bounded,
        Evidence {
            numbers,
            ops: first
                .ops
                .iter()
                .map(|&o| t.slice_name(o as usize).to_string())
                .collect(),
            slices,
            slice_count,
            ranges,
        },
        action,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_parse_and_broadcast_like_numpy() {
        assert_eq!(
            parse_dims("[[64, 4096], [], [4096]]"),
            Some(vec![vec![64, 4096], vec![], vec![4096]])
        );
        assert_eq!(parse_dims("[]"), Some(vec![]));
        assert_eq!(parse_dims(""), None);
        assert_eq!(broadcast(&[64, 4096], &[64, 1]), Some(vec![64, 4096]));
        assert_eq!(broadcast(&[64, 4096], &[4096]), Some(vec![64, 4096]));
        assert_eq!(broadcast(&[64, 4096], &[64]), None);
    }
}

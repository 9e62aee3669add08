//! The roofline: each op (GPU and CPU traces, per name and input shapes) or
//! HLO op (Neuron device profiles) placed by its arithmetic intensity
//! (FLOPs per byte moved) and its achieved FLOP/s against the device's
//! compute roof and memory roof.
//!
//! - FLOPs: the trace's `flops` arg where present, else the formulas in
//!   [`super::flops`] (PyTorch's own, plus linear and attention); Neuron's
//!   `raw_flops` per instruction. Ops with no formula are listed, not
//!   plotted.
//! - Bytes: Neuron's HBM read + write bytes; for GPU/CPU ops the minimum
//!   traffic from input and output shapes (an estimate, labelled so).
//! - Time: an op's device time (its kernels and its children's, the op
//!   table's `device_total`), or its CPU time on a trace with no device
//!   work; an HLO op's busy time (the union of its instructions).
//! - Roofs: the profile's own `Metadata` for Neuron; else the table of known
//!   devices below, keyed by the `deviceProperties` name and the op's
//!   dtype, every figure with its public source; overridable.
//! - `attainable = min(peak, intensity × bandwidth)`; *bound* is memory
//!   below the ridge (`peak / bandwidth`) and compute above; *headroom* is
//!   `attainable / achieved` (1× is on the roof).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::flops::{self, FlopsSource, OpInputs};
use super::ops::{op_table_counting, pytorch_shapes_key, rewrite_name, DeviceCount, OpRow};
use super::scope::{Scope, ScopeError};
use crate::category::Category;
use crate::model::Trace;

/// A device's peaks for one dtype.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Peak {
    pub device: String,
    pub dtype: String,
    pub flops_per_s: f64,
    pub bytes_per_s: f64,
    /// Where the figures come from (a datasheet, the profile, the user).
    pub source: String,
}

/// Known devices: (name match, dtype, dense TFLOP/s, memory GB/s, source).
/// `name match` is tested against the `deviceProperties` name in order, so
/// variants precede their family. Dense (no sparsity) tensor-core figures
/// for 16-bit types; FP32 is the non-tensor-core figure (PyTorch's default
/// `float32_matmul_precision="highest"` does not use TF32).
pub const KNOWN_DEVICES: &[(&str, &str, f64, f64, &str)] = &[
    ("A100-SXM4-80GB", "bf16", 312.0, 2039.0, "NVIDIA A100 datasheet (2021): BF16 312 TFLOPS dense, 80GB SXM 2,039 GB/s"),
    ("A100-SXM4-80GB", "fp32", 19.5, 2039.0, "NVIDIA A100 datasheet (2021): FP32 19.5 TFLOPS, 80GB SXM 2,039 GB/s"),
    ("A100-PCIE-80GB", "bf16", 312.0, 1935.0, "NVIDIA A100 datasheet (2021): BF16 312 TFLOPS dense, 80GB PCIe 1,935 GB/s"),
    ("A100-PCIE-80GB", "fp32", 19.5, 1935.0, "NVIDIA A100 datasheet (2021): FP32 19.5 TFLOPS, 80GB PCIe 1,935 GB/s"),
    ("A100", "bf16", 312.0, 1555.0, "NVIDIA A100 datasheet (2021): BF16 312 TFLOPS dense, 40GB 1,555 GB/s"),
    ("A100", "fp32", 19.5, 1555.0, "NVIDIA A100 datasheet (2021): FP32 19.5 TFLOPS, 40GB 1,555 GB/s"),
    ("H100 PCIe", "bf16", 756.0, 2000.0, "NVIDIA H100 datasheet: PCIe BF16 1,513 TFLOPS with sparsity (756 dense), 2 TB/s"),
    ("H100 PCIe", "fp32", 51.0, 2000.0, "NVIDIA H100 datasheet: PCIe FP32 51 TFLOPS, 2 TB/s"),
    ("H100 NVL", "bf16", 835.0, 3900.0, "NVIDIA H100 datasheet: NVL BF16 1,671 TFLOPS with sparsity (835 dense), 3.9 TB/s"),
    ("H100 NVL", "fp32", 60.0, 3900.0, "NVIDIA H100 datasheet: NVL FP32 60 TFLOPS, 3.9 TB/s"),
    ("H100", "bf16", 989.0, 3350.0, "NVIDIA H100 datasheet: SXM BF16 1,979 TFLOPS with sparsity (989 dense), 3.35 TB/s"),
    ("H100", "fp32", 67.0, 3350.0, "NVIDIA H100 datasheet: SXM FP32 67 TFLOPS, 3.35 TB/s"),
    ("H200", "bf16", 989.0, 4800.0, "NVIDIA H200 datasheet: SXM BF16 1,979 TFLOPS with sparsity (989 dense), 4.8 TB/s"),
    ("H200", "fp32", 67.0, 4800.0, "NVIDIA H200 datasheet: SXM FP32 67 TFLOPS, 4.8 TB/s"),
    ("B200", "bf16", 2250.0, 8000.0, "NVIDIA HGX B200 datasheet: FP16/BF16 36 PFLOPS with sparsity per 8 GPUs (2.25 PFLOPS dense each), 8 TB/s"),
    ("B200", "fp32", 75.0, 8000.0, "NVIDIA HGX B200 datasheet: FP32 600 TFLOPS per 8 GPUs (75 each), 8 TB/s"),
    ("V100-PCIE", "bf16", 112.0, 900.0, "NVIDIA V100 datasheet: PCIe tensor (FP16) 112 TFLOPS, HBM2 900 GB/s (no BF16: the 16-bit rate)"),
    ("V100-PCIE", "fp32", 14.0, 900.0, "NVIDIA V100 datasheet: PCIe FP32 14 TFLOPS, HBM2 900 GB/s"),
    ("V100", "bf16", 125.0, 900.0, "NVIDIA V100 datasheet: SXM2 tensor (FP16) 125 TFLOPS, HBM2 900 GB/s (no BF16: the 16-bit rate)"),
    ("V100", "fp32", 15.7, 900.0, "NVIDIA V100 datasheet: SXM2 FP32 15.7 TFLOPS, HBM2 900 GB/s"),
    ("MI300X", "bf16", 1307.4, 5300.0, "AMD Instinct MI300X datasheet: BF16 1,307.4 TFLOPS dense, 5.3 TB/s"),
    ("MI300X", "fp32", 163.4, 5300.0, "AMD Instinct MI300X datasheet: FP32 matrix 163.4 TFLOPS, 5.3 TB/s"),
    ("MI250X", "bf16", 383.0, 3276.8, "AMD Instinct MI250X datasheet: BF16 383 TFLOPS, 3.2768 TB/s"),
    ("MI250X", "fp32", 95.7, 3276.8, "AMD Instinct MI250X datasheet: FP32 matrix 95.7 TFLOPS, 3.2768 TB/s"),
    ("MI250", "bf16", 362.1, 3276.8, "AMD Instinct MI250 datasheet: BF16 362.1 TFLOPS, 3.2768 TB/s"),
    ("MI250", "fp32", 90.5, 3276.8, "AMD Instinct MI250 datasheet: FP32 matrix 90.5 TFLOPS, 3.2768 TB/s"),
    ("Trainium2", "bf16", 79.0, 725.0, "AWS Trainium2 architecture (NeuronCore-v3): 79 BF16 TFLOPS per core; HBM 2.9 TB/s per chip over 4 stacks"),
    ("Trainium", "bf16", 95.0, 410.0, "AWS Trainium (trn1, NeuronCore-v2): 190 BF16 TFLOPS and 820 GB/s per chip of 2 cores"),
];

/// The table's peaks for a device name (`deviceProperties` name, instance
/// type) and a dtype; FP16 reads the BF16 row (same tensor-core rate).
pub fn known_peak(device: &str, dtype: &str) -> Option<Peak> {
    let want = match dtype {
        "c10::BFloat16" | "bf16" | "c10::Half" | "fp16" => "bf16",
        "float" | "fp32" => "fp32",
        _ => return None,
    };
    let name = device.to_ascii_lowercase();
    let alias = |n: &str| -> bool {
        let n = n.to_ascii_lowercase();
        name.contains(&n)
            || (n == "trainium2" && name.starts_with("trn2"))
            || (n == "trainium" && name.starts_with("trn1"))
    };
    KNOWN_DEVICES
        .iter()
        .find(|(n, d, ..)| *d == want && alias(n))
        .map(|&(n, d, tf, gbps, src)| Peak {
            device: n.to_string(),
            dtype: d.to_string(),
            flops_per_s: tf * 1e12,
            bytes_per_s: gbps * 1e9,
            source: src.to_string(),
        })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    Memory,
    Compute,
}

/// One point of the plot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub name: String,
    /// `Input Dims` as PyTorch groups them (ops), `None` for HLO ops.
    pub input_shapes: Option<String>,
    pub dtype: Option<String>,
    pub calls: u64,
    pub time_ns: i64,
    /// `device` or `cpu` (ops), `busy` (HLO ops).
    pub time_from: String,
    pub flops: f64,
    pub flops_source: FlopsSource,
    pub bytes: Option<f64>,
    /// `estimate` (shapes × dtype sizes) or `hbm` (Neuron's counters).
    pub bytes_from: String,
    pub achieved_flops_per_s: Option<f64>,
    /// FLOPs per byte.
    pub intensity: Option<f64>,
    pub bound: Option<Bound>,
    /// `attainable / achieved`: how far below its roof the point sits.
    pub headroom: Option<f64>,
    /// Up to 64 of its slices (click → timeline).
    pub slices: Vec<u32>,
    /// The first of them, `[start, end)` (where the timeline opens).
    pub first_ns: Option<(i64, i64)>,
}

/// An op the roofline cannot place: no formula and no `flops` arg.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unplaced {
    pub name: String,
    pub calls: u64,
    pub time_ns: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RooflineReport {
    /// `ops` (a PyTorch trace) or `hlo` (a Neuron device profile).
    pub level: String,
    /// The device name the trace states, if any.
    pub device: Option<String>,
    /// The roofs per dtype (none: the points show achieved numbers only).
    pub peaks: Vec<Peak>,
    /// Why there are no roofs, when there are none.
    pub no_roofs: Option<String>,
    pub points: Vec<Point>,
    /// Kernels (by name) launched alone by an op with a FLOP count, placed
    /// with that op's FLOPs and bytes over their own time.
    pub kernel_points: Vec<Point>,
    /// Ops with time but no FLOP count, longest first.
    pub unplaced: Vec<Unplaced>,
    /// CUDA/HIP kernels' launch shapes and the trace's occupancy estimate.
    pub kernels: Vec<KernelEfficiency>,
    pub notes: Vec<String>,
}

/// One statistic over a kernel's launches.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
}

/// A kernel name's launch configuration and efficiency, as the trace
/// records them (Kineto's CUPTI args: `grid`, `block`, `registers per
/// thread`, `shared memory`, `blocks per SM`, `warps per SM`, `est.
/// achieved occupancy %`); absent fields stay null (ROCm traces have none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelEfficiency {
    pub name: String,
    pub count: u64,
    pub time_ns: i64,
    /// The most frequent grid and block (`[x, y, z]`), and how many
    /// distinct ones there were.
    pub grid: Option<String>,
    pub block: Option<String>,
    pub launch_shapes: u64,
    pub registers_per_thread: Option<Stat>,
    pub shared_memory_bytes: Option<Stat>,
    pub blocks_per_sm: Option<Stat>,
    pub warps_per_sm: Option<Stat>,
    pub occupancy_pct: Option<Stat>,
}

/// The slices whose args text [`roofline`] reads (kernels: their launch
/// shapes), for a caller that keeps args in the file to read them in one
/// pass.
pub fn args_read_by_roofline(t: &Trace) -> Vec<usize> {
    (0..t.slices.len())
        .filter(|&i| t.slices.category[i] == Category::Kernel && !t.on_host(i))
        .collect()
}

/// Per kernel name: launch shapes and occupancy, longest total time first.
pub fn kernel_efficiency(
    t: &Trace,
    scope: &Scope,
    args: &dyn Fn(usize) -> String,
) -> Result<Vec<KernelEfficiency>, ScopeError> {
    let windows = scope_windows(t, scope)?;
    #[derive(Default)]
    struct Acc {
        count: u64,
        time_ns: i64,
        shapes: BTreeMap<(String, String), u64>,
        stats: [Vec<f64>; 5],
    }
    const KEYS: [&str; 5] = [
        "registers per thread",
        "shared memory",
        "blocks per SM",
        "warps per SM",
        "est. achieved occupancy %",
    ];
    let mut by_name: BTreeMap<&str, Acc> = BTreeMap::new();
    let s = &t.slices;
    for i in 0..s.len() {
        if s.category[i] != Category::Kernel || t.on_host(i) {
            continue;
        }
        if !inside_windows(windows.as_deref(), s.start_ns[i]) {
            continue;
        }
        let a = by_name.entry(t.slice_name(i)).or_default();
        a.count += 1;
        a.time_ns += s.dur_ns[i];
        let mut v: serde_json::Value = serde_json::from_str(&args(i)).unwrap_or_default();
        if let Some(d) = v.get("kernel_details").and_then(|d| d.as_str()) {
            v = xla_kernel_details(d);
        }
        let dims = |k: &str| v.get(k).map(|x| x.to_string().replace(',', ", "));
        if let (Some(g), Some(b)) = (dims("grid"), dims("block")) {
            *a.shapes.entry((g, b)).or_default() += 1;
        }
        for (k, key) in KEYS.iter().enumerate() {
            if let Some(x) = v.get(*key).and_then(|x| x.as_f64()) {
                a.stats[k].push(x);
            }
        }
    }
    let stat = |v: &[f64]| {
        (!v.is_empty()).then(|| Stat {
            mean: v.iter().sum::<f64>() / v.len() as f64,
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    };
    let mut out: Vec<KernelEfficiency> = by_name
        .into_iter()
        .map(|(name, a)| {
            let common = a
                .shapes
                .iter()
                .max_by(|x, y| x.1.cmp(y.1).then(y.0.cmp(x.0)))
                .map(|(k, _)| k.clone());
            KernelEfficiency {
                name: name.to_string(),
                count: a.count,
                time_ns: a.time_ns,
                grid: common.as_ref().map(|c| c.0.clone()),
                block: common.map(|c| c.1),
                launch_shapes: a.shapes.len() as u64,
                registers_per_thread: stat(&a.stats[0]),
                shared_memory_bytes: stat(&a.stats[1]),
                blocks_per_sm: stat(&a.stats[2]),
                warps_per_sm: stat(&a.stats[3]),
                occupancy_pct: stat(&a.stats[4]),
            }
        })
        .collect();
    crate::sort::by(&mut out, &|a, b| {
        b.time_ns.cmp(&a.time_ns).then(a.name.cmp(&b.name))
    });
    Ok(out)
}

/// An XPlane kernel's `kernel_details` stat (`regs:32 static_shared:0
/// dynamic_shared:0 grid:1280,1,1 block:256,1,1 occ_pct:50`, as XLA's
/// `KernelDetails` writes it, the figures xprof's kernel stats show) in
/// the keys Kineto's kernels carry. A register count no GPU allows (ROCm
/// runs write an address there) and an occupancy of 0 (not computed)
/// are left out rather than shown.
fn xla_kernel_details(d: &str) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    let mut shared: Option<f64> = None;
    for part in d.split_whitespace() {
        let Some((k, v)) = part.split_once(':') else {
            continue;
        };
        let num = v.parse::<f64>().ok();
        match (k, num) {
            ("grid" | "block", _) => {
                let dims: Option<Vec<i64>> = v.split(',').map(|x| x.parse().ok()).collect();
                if let Some(dims) = dims {
                    out.insert(k.into(), dims.into());
                }
            }
            ("regs", Some(r)) if (1.0..=1024.0).contains(&r) => {
                out.insert("registers per thread".into(), r.into());
            }
            ("static_shared" | "dynamic_shared", Some(b)) => {
                *shared.get_or_insert(0.0) += b;
            }
            ("occ_pct", Some(o)) if o > 0.0 => {
                out.insert("est. achieved occupancy %".into(), o.into());
            }
            _ => {}
        }
    }
    if let Some(b) = shared {
        out.insert("shared memory".into(), b.into());
    }
    serde_json::Value::Object(out)
}

/// What the caller overrides: both peaks (`--peak-tflops`, `--peak-gbps`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PeakOverride {
    pub flops_per_s: Option<f64>,
    pub bytes_per_s: Option<f64>,
}

/// The device name a trace states (`deviceProperties[0].name`, or a Neuron
/// profile's instance type).
pub fn device_name(t: &Trace) -> Option<String> {
    if let Some(p) = &t.device_profile {
        return p.meta("instance_type").map(str::to_string);
    }
    let (_, props) = t.header.iter().find(|(k, _)| k == "deviceProperties")?;
    let v: serde_json::Value = serde_json::from_str(props).ok()?;
    v.as_array()?
        .iter()
        .find_map(|d| d.get("name")?.as_str().map(str::to_string))
}

pub(crate) fn place(p: &mut Point, peak: Option<&Peak>) {
    p.achieved_flops_per_s = (p.time_ns > 0).then(|| p.flops * 1e9 / p.time_ns as f64);
    p.intensity = p
        .bytes
        .filter(|&b| b > 0.0 && p.flops > 0.0)
        .map(|b| p.flops / b);
    if let (Some(peak), Some(i)) = (peak, p.intensity) {
        let ridge = peak.flops_per_s / peak.bytes_per_s;
        p.bound = Some(if i < ridge {
            Bound::Memory
        } else {
            Bound::Compute
        });
        let attainable = peak.flops_per_s.min(i * peak.bytes_per_s);
        p.headroom = p
            .achieved_flops_per_s
            .filter(|&a| a > 0.0)
            .map(|a| attainable / a);
    }
}

fn overridden(mut peak: Peak, o: PeakOverride) -> Peak {
    if let Some(f) = o.flops_per_s {
        peak.flops_per_s = f;
        peak.source = format!("given: {:.1} TFLOP/s; {}", f / 1e12, peak.source);
    }
    if let Some(b) = o.bytes_per_s {
        peak.bytes_per_s = b;
        peak.source = format!("given: {:.0} GB/s; {}", b / 1e9, peak.source);
    }
    peak
}

/// The roofline of a scope. `args` reads a slice's args JSON (a `flops`
/// arg, where the trace has one).
pub fn roofline(
    t: &Trace,
    scope: &Scope,
    over: PeakOverride,
    args: &dyn Fn(usize) -> String,
) -> Result<RooflineReport, ScopeError> {
    if super::engines::has_engines(t) {
        return hlo_roofline(t, scope, over);
    }
    if let Some(stats) = super::xla_ops::xla_op_stats(t) {
        let mut report = xla_roofline(t, &stats, scope, over);
        report.kernels = kernel_efficiency(t, scope, args)?;
        return Ok(report);
    }
    let device = device_name(t);
    // Each op's device time once: not PyTorch's second count under
    // profiler overhead.
    let table = op_table_counting(t, scope, true, DeviceCount::Once)?;
    let windows = scope_windows(t, scope)?;
    let inside = |ts: i64| inside_windows(windows.as_deref(), ts);
    let any_device = table.rows.iter().any(|r| r.device_total_ns > 0);
    let (acc, op_counts) = op_flops(t, &inside);
    let by_kernel = kernel_flops(t, &inside, &op_counts);
    let peak_of = |dtype: Option<&str>| peak_for(device.as_deref(), over, dtype);
    let mut peaks: Vec<Peak> = Vec::new();
    let (points, unplaced) = op_points(t, &table.rows, &acc, any_device, &peak_of, &mut peaks);
    let kernel_points = kernel_points(t, by_kernel, &peak_of);
    let mut unplaced: Vec<Unplaced> = unplaced.into_values().collect();
    crate::sort::by(&mut unplaced, &|a, b| {
        b.time_ns.cmp(&a.time_ns).then(a.name.cmp(&b.name))
    });
    // The device's roofs for both dtypes, also when no point needed them.
    for dtype in ["bf16", "fp32"] {
        if let Some(p) = device.as_deref().and_then(|d| known_peak(d, dtype)) {
            let p = overridden(p, over);
            if !peaks.iter().any(|q| q.dtype == p.dtype) {
                peaks.push(p);
            }
        }
    }
    let no_roofs = peaks.is_empty().then(|| match &device {
        None => "the trace names no device (no deviceProperties): achieved numbers only; give --peak-tflops and --peak-gbps for roofs".to_string(),
        Some(d) => format!("no known peaks for \"{d}\": achieved numbers only; give --peak-tflops and --peak-gbps for roofs"),
    });
    let mut notes = vec![
        "bytes are estimates: each input and the output moved once (shapes × dtype size)"
            .to_string(),
    ];
    if !any_device {
        notes.push("no device work in this trace: times are the ops' CPU time".into());
    }
    Ok(RooflineReport {
        level: "ops".into(),
        device,
        peaks,
        no_roofs,
        points,
        kernel_points,
        unplaced,
        kernels: kernel_efficiency(t, scope, args)?,
        notes,
    })
}

/// The device work the roofline places, alone (no op table, no kernel
/// efficiency — what makes [`roofline`] slow on a big trace): the HLO ops
/// of a device profile (`level` "hlo"), else the kernels launched alone by
/// an op with a FLOP count (`level` "kernels"), each placed against the
/// device's roofs — the same points as the report's `points` or
/// `kernel_points`. With the device the trace names.
pub fn placed_device_work(
    t: &Trace,
    scope: &Scope,
    over: PeakOverride,
) -> Result<(&'static str, Option<String>, Vec<Point>), ScopeError> {
    if super::engines::has_engines(t) {
        let r = hlo_roofline(t, scope, over)?;
        return Ok(("hlo", r.device, r.points));
    }
    if let Some(stats) = super::xla_ops::xla_op_stats(t) {
        let r = xla_roofline(t, &stats, scope, over);
        return Ok(("hlo", r.device, r.points));
    }
    let device = device_name(t);
    let windows = scope_windows(t, scope)?;
    let inside = |ts: i64| inside_windows(windows.as_deref(), ts);
    let (_, op_counts) = op_flops(t, &inside);
    let by_kernel = kernel_flops(t, &inside, &op_counts);
    let peak_of = |dtype: Option<&str>| peak_for(device.as_deref(), over, dtype);
    let points = kernel_points(t, by_kernel, &peak_of);
    Ok(("kernels", device, points))
}

/// The scope's windows (`None`: the whole trace).
fn scope_windows(t: &Trace, scope: &Scope) -> Result<Option<Vec<(i64, i64)>>, ScopeError> {
    Ok(match scope {
        Scope::Whole => None,
        _ => Some(
            scope
                .occurrences(t)?
                .iter()
                .map(|o| (o.start_ns, o.end_ns))
                .collect(),
        ),
    })
}

fn inside_windows(windows: Option<&[(i64, i64)]>, ts: i64) -> bool {
    windows.is_none_or(|w| w.iter().any(|&(a, b)| ts >= a && ts < b))
}

/// FLOPs, bytes and dtype summed over one (name, shapes) row, or one
/// kernel name, with the slices that make them.
struct Acc {
    flops: u64,
    source: FlopsSource,
    bytes: Option<u64>,
    dtype: Option<String>,
    slices: Vec<u32>,
}

/// Each op's FLOPs and bytes computed from its recorded shapes (or its
/// `flops` arg), summed per (name, shapes) as the op table groups; and per
/// counted op slice, its own (for its kernels).
#[allow(clippy::type_complexity)]
fn op_flops(
    t: &Trace,
    inside: &dyn Fn(i64) -> bool,
) -> (
    BTreeMap<(String, String), Acc>,
    rustc_hash::FxHashMap<u32, (u64, Option<u64>, Option<String>)>,
) {
    let mut acc: BTreeMap<(String, String), Acc> = BTreeMap::new();
    // Each counted op's FLOPs, bytes and dtype (for its kernels below).
    let mut op_counts: rustc_hash::FxHashMap<u32, (u64, Option<u64>, Option<String>)> =
        Default::default();
    let s = &t.slices;
    for i in 0..s.len() {
        if s.category[i] != Category::CpuOp || !inside(s.start_ns[i]) {
            continue;
        }
        let name = rewrite_name(t.slice_name(i));
        let x = OpInputs::parse(
            t.str(s.input_dims[i]),
            t.str(s.input_types[i]),
            t.str(s.concrete_inputs[i]),
        );
        // An op with a `flops` arg keeps its args in the model (import).
        let from_arg = (s.args_range[i].1 > 0)
            .then(|| arg_flops(&t.slice_args_json(i)))
            .flatten();
        let Some((f, source)) = from_arg
            .map(|f| (f, FlopsSource::Trace))
            .or_else(|| flops::flops(name, &x))
        else {
            continue;
        };
        // The op table's key: no `Input Dims` groups as `[]`.
        let shapes = match s.input_dims[i] {
            crate::model::NO_STR => "[]".to_string(),
            d => pytorch_shapes_key(t.str(d)),
        };
        let key = (name.to_string(), shapes);
        let a = acc.entry(key).or_insert(Acc {
            flops: 0,
            source,
            bytes: Some(0),
            dtype: flops::dtype_of(&x).map(str::to_string),
            slices: Vec::new(),
        });
        let bytes = flops::min_bytes(name, &x);
        a.flops += f;
        a.bytes = a.bytes.zip(bytes).map(|(a, b)| a + b);
        if a.slices.len() < 64 {
            a.slices.push(i as u32);
        }
        op_counts.insert(i as u32, (f, bytes, a.dtype.clone()));
    }
    (acc, op_counts)
}

/// Kernels: one launched alone by a counted op carries that op's FLOPs and
/// bytes (a GEMM, an elementwise kernel); kernels of ops that launch
/// several (split-K, reductions) cannot be apportioned and are not placed.
/// By kernel name: (FLOPs and bytes, calls, time).
fn kernel_flops<'t>(
    t: &'t Trace,
    inside: &dyn Fn(i64) -> bool,
    op_counts: &rustc_hash::FxHashMap<u32, (u64, Option<u64>, Option<String>)>,
) -> BTreeMap<&'t str, (Acc, u64, i64)> {
    let s = &t.slices;
    let mut kernels_of: rustc_hash::FxHashMap<u32, Vec<u32>> = Default::default();
    for k in 0..s.len() {
        if s.category[k] == Category::Kernel
            && !t.on_host(k)
            && inside(s.start_ns[k])
            && op_counts.contains_key(&t.links.op[k])
        {
            kernels_of.entry(t.links.op[k]).or_default().push(k as u32);
        }
    }
    let mut by_kernel: BTreeMap<&str, (Acc, u64, i64)> = BTreeMap::new();
    let mut ops: Vec<(&u32, &Vec<u32>)> = kernels_of.iter().collect();
    ops.sort_unstable();
    for (op, ks) in ops {
        let [k] = ks[..] else { continue };
        let (f, bytes, dtype) = &op_counts[op];
        let e = by_kernel.entry(t.slice_name(k as usize)).or_insert((
            Acc {
                flops: 0,
                source: FlopsSource::Pytorch,
                bytes: Some(0),
                dtype: dtype.clone(),
                slices: Vec::new(),
            },
            0,
            0,
        ));
        e.0.flops += f;
        e.0.bytes = e.0.bytes.zip(*bytes).map(|(a, b)| a + b);
        if e.0.slices.len() < 64 {
            e.0.slices.push(k);
        }
        e.1 += 1;
        e.2 += s.dur_ns[k as usize];
    }
    by_kernel
}

/// The roof for a dtype: the device's known peak (overridden where the
/// user gave numbers), else the user's numbers alone.
pub(crate) fn peak_for(
    device: Option<&str>,
    over: PeakOverride,
    dtype: Option<&str>,
) -> Option<Peak> {
    let base = device.and_then(|d| known_peak(d, dtype.unwrap_or("float")));
    match base {
        Some(p) => Some(overridden(p, over)),
        None => given_peak(
            device.unwrap_or("this device"),
            dtype.unwrap_or("any"),
            over,
        ),
    }
}

/// The user's roofs alone, when both are given.
fn given_peak(device: &str, dtype: &str, over: PeakOverride) -> Option<Peak> {
    Some(Peak {
        device: device.to_string(),
        dtype: dtype.to_string(),
        flops_per_s: over.flops_per_s?,
        bytes_per_s: over.bytes_per_s?,
        source: "given on the command line / in the page".into(),
    })
}

/// A point per op-table row with counted FLOPs (its roof added to
/// `peaks`), longest first; the rows with time but no FLOPs, by name.
fn op_points(
    t: &Trace,
    rows: &[OpRow],
    acc: &BTreeMap<(String, String), Acc>,
    any_device: bool,
    peak_of: &dyn Fn(Option<&str>) -> Option<Peak>,
    peaks: &mut Vec<Peak>,
) -> (Vec<Point>, BTreeMap<String, Unplaced>) {
    let mut points = Vec::new();
    let mut unplaced: BTreeMap<String, Unplaced> = BTreeMap::new();
    for row in rows
        .iter()
        .filter(|r| !r.is_device && !r.is_user_annotation)
    {
        let shapes = row.input_shapes.clone().unwrap_or_default();
        let (time_ns, time_from) = if any_device {
            (row.device_total_ns, "device")
        } else {
            (row.cpu_total_ns, "cpu")
        };
        match acc.get(&(row.name.clone(), shapes.clone())) {
            Some(a) => {
                let peak = peak_of(a.dtype.as_deref());
                if let Some(p) = &peak {
                    if !peaks.contains(p) {
                        peaks.push(p.clone());
                    }
                }
                let mut p = Point {
                    name: row.name.clone(),
                    input_shapes: Some(shapes),
                    dtype: a.dtype.clone(),
                    calls: row.calls,
                    time_ns,
                    time_from: time_from.into(),
                    flops: a.flops as f64,
                    flops_source: a.source,
                    bytes: a.bytes.map(|b| b as f64),
                    bytes_from: "estimate".into(),
                    achieved_flops_per_s: None,
                    intensity: None,
                    bound: None,
                    headroom: None,
                    slices: a.slices.clone(),
                    first_ns: t.first_span(&a.slices),
                };
                place(&mut p, peak.as_ref());
                points.push(p);
            }
            None if time_ns > 0 => {
                let u = unplaced.entry(row.name.clone()).or_insert(Unplaced {
                    name: row.name.clone(),
                    calls: 0,
                    time_ns: 0,
                });
                u.calls += row.calls;
                u.time_ns += time_ns;
            }
            None => {}
        }
    }
    crate::sort::by(&mut points, &|a, b| {
        b.time_ns.cmp(&a.time_ns).then(a.name.cmp(&b.name))
    });
    (points, unplaced)
}

/// A point per kernel name, longest first.
fn kernel_points(
    t: &Trace,
    by_kernel: BTreeMap<&str, (Acc, u64, i64)>,
    peak_of: &dyn Fn(Option<&str>) -> Option<Peak>,
) -> Vec<Point> {
    let mut kernel_points: Vec<Point> = by_kernel
        .into_iter()
        .map(|(name, (a, calls, time_ns))| {
            let mut p = Point {
                name: name.to_string(),
                input_shapes: None,
                dtype: a.dtype.clone(),
                calls,
                time_ns,
                time_from: "kernel".into(),
                flops: a.flops as f64,
                flops_source: a.source,
                bytes: a.bytes.map(|b| b as f64),
                bytes_from: "estimate".into(),
                achieved_flops_per_s: None,
                intensity: None,
                bound: None,
                headroom: None,
                first_ns: t.first_span(&a.slices),
                slices: a.slices,
            };
            place(&mut p, peak_of(a.dtype.as_deref()).as_ref());
            p
        })
        .collect();
    crate::sort::by(&mut kernel_points, &|a, b| {
        b.time_ns.cmp(&a.time_ns).then(a.name.cmp(&b.name))
    });
    kernel_points
}

/// A `flops` arg (number or numeric string).
fn arg_flops(args: &str) -> Option<u64> {
    if !args.contains("\"flops\"") {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(args).ok()?;
    let f = v.get("flops")?;
    f.as_u64()
        .or_else(|| f.as_f64().map(|x| x as u64))
        .or_else(|| f.as_str()?.trim().parse().ok())
        .filter(|&x| x > 0)
}

/// An XPlane profile: one point per HLO op of xprof's HLO op stats, its
/// FLOPs and HBM bytes as xprof's op profile counts them, over its total
/// time (xprof's model FLOP rate and memory bandwidth use the same). No
/// device name is stated (the planes give vendor, compute capability and
/// a memory bandwidth): roofs come from `--peak-tflops` / `--peak-gbps`.
fn xla_roofline(
    t: &Trace,
    stats: &super::xla_ops::XlaOpStats,
    scope: &Scope,
    over: PeakOverride,
) -> RooflineReport {
    let mut points = Vec::new();
    let mut unplaced = Vec::new();
    let peak = match xla_plane_peak(t) {
        Some(p) => Some(overridden(p, over)),
        None => given_peak("device", "any", over),
    };
    // An op name several programs define is told apart by its program.
    let mut programs: rustc_hash::FxHashMap<&str, rustc_hash::FxHashSet<i64>> = Default::default();
    for r in &stats.hlo_ops {
        programs
            .entry(r.hlo_op_name.as_str())
            .or_default()
            .insert(r.program_id);
    }
    let named = |r: &super::xla_ops::HloOpRow| {
        if programs[r.hlo_op_name.as_str()].len() > 1 {
            format!("{} (program {})", r.hlo_op_name, r.program_id)
        } else {
            r.hlo_op_name.clone()
        }
    };
    for r in &stats.hlo_ops {
        let time_ns = (r.total_time_ps / 1000) as i64;
        match r.flops.filter(|&f| f > 0) {
            Some(f) => {
                let mut pt = Point {
                    name: named(r),
                    input_shapes: None,
                    dtype: None,
                    calls: r.occurrences,
                    time_ns,
                    time_from: "device".into(),
                    flops: f as f64,
                    flops_source: FlopsSource::Xla,
                    bytes: r.bytes_accessed.filter(|&b| b > 0).map(|b| b as f64),
                    bytes_from: "hbm".into(),
                    achieved_flops_per_s: None,
                    intensity: None,
                    bound: None,
                    headroom: None,
                    slices: Vec::new(),
                    first_ns: None,
                };
                place(&mut pt, peak.as_ref());
                points.push(pt);
            }
            None => unplaced.push(Unplaced {
                name: named(r),
                calls: r.occurrences,
                time_ns,
            }),
        }
    }
    crate::sort::by(&mut points, &|a, b| {
        b.time_ns.cmp(&a.time_ns).then(a.name.cmp(&b.name))
    });
    let mut notes = vec![
        "FLOPs and bytes as xprof's op profile counts them: the events' flops / bytes_accessed stats, else XLA's GPU cost analysis of the embedded module (HBM bytes read and written); time is the HLO op's total device time".to_string(),
    ];
    if !matches!(scope, Scope::Whole) {
        notes.push(
            "an XPlane profile's HLO ops are over the whole profile: the scope is not applied"
                .into(),
        );
    }
    RooflineReport {
        level: "hlo".into(),
        device: peak.as_ref().map(|p| p.device.clone()),
        no_roofs: peak.is_none().then(|| {
            "an XPlane profile names no device model: achieved numbers only; give --peak-tflops and --peak-gbps for roofs".to_string()
        }),
        peaks: peak.into_iter().collect(),
        points,
        kernel_points: Vec::new(),
        unplaced,
        kernels: Vec::new(),
        notes,
    }
}

/// The peaks an XPlane profile's first device plane (TPU planes first, as
/// xprof picks them) states in its stats (a TPU's do; GB/s), as xprof's
/// roofline takes them (`GetPerfEnvFromXPlane`).
fn xla_plane_peak(t: &Trace) -> Option<Peak> {
    let xla = t.xla.as_deref()?;
    let is_tpu = |d: &crate::xla::XlaDevice| d.plane.starts_with("/device:TPU:");
    let tpu = xla.devices.iter().any(is_tpu);
    let plane = xla.devices.iter().find(|d| !tpu || is_tpu(d))?;
    let stat = |name: &str| {
        let (_, v) = plane.stats.iter().find(|(n, _)| n == name)?;
        v.parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0)
    };
    let tflops = stat("peak_teraflops_per_second")?;
    let gbps = stat("peak_hbm_bw_gigabytes_per_second")?;
    Some(Peak {
        device: plane.plane.clone(),
        dtype: "any".into(),
        flops_per_s: tflops * 1e12,
        bytes_per_s: gbps * 1e9,
        source: format!(
            "the profile's {} plane: peak_teraflops_per_second {tflops}, peak_hbm_bw_gigabytes_per_second {gbps}",
            plane.plane
        ),
    })
}

/// A Neuron device profile: one point per HLO op.
fn hlo_roofline(
    t: &Trace,
    scope: &Scope,
    over: PeakOverride,
) -> Result<RooflineReport, ScopeError> {
    let profile = t.device_profile.as_deref();
    let report = super::engines::engines(t, scope)?;
    let device = profile.and_then(|p| p.meta("instance_type").map(str::to_string));
    let metadata_peak = (|| {
        let p = profile?;
        let rows = p.meta_f64("tensor_engine_num_rows")?;
        let cols = p.meta_f64("tensor_engine_num_cols")?;
        let ghz = p.meta_f64("tensor_engine_clock_freq")?;
        let hbm = p.meta_f64("hbm_ddr_bandwidth")?;
        Some(Peak {
            device: format!("NeuronCore {}", p.meta("neuroncore_idx").unwrap_or("?")),
            dtype: "bf16".into(),
            flops_per_s: rows * cols * 2.0 * ghz * 1e9,
            bytes_per_s: hbm,
            source: format!(
                "the profile's Metadata: Tensor engine {rows}×{cols} × 2 FLOP × {ghz} GHz; hbm_ddr_bandwidth {:.0} GB/s",
                hbm / 1e9
            ),
        })
    })();
    let peak = metadata_peak
        .or_else(|| device.as_deref().and_then(|d| known_peak(d, "bf16")))
        .map(|pk| overridden(pk, over))
        .or_else(|| given_peak("NeuronCore", "any", over));
    let mut points = Vec::new();
    let mut unplaced = Vec::new();
    for g in &report.by_hlo {
        if g.raw_flops <= 0 {
            if g.name != "(null)" {
                unplaced.push(Unplaced {
                    name: g.name.clone(),
                    calls: g.instructions,
                    time_ns: g.busy_ns,
                });
            }
            continue;
        }
        let bytes = g.hbm_read_bytes + g.hbm_write_bytes;
        let mut pt = Point {
            name: g.name.clone(),
            input_shapes: None,
            dtype: None,
            calls: g.instructions,
            time_ns: g.busy_ns,
            time_from: "busy".into(),
            flops: g.raw_flops as f64,
            flops_source: FlopsSource::Neuron,
            bytes: (g.hbm_read_bytes > 0 || g.hbm_write_bytes > 0).then_some(bytes as f64),
            bytes_from: "hbm".into(),
            achieved_flops_per_s: None,
            intensity: None,
            bound: None,
            headroom: None,
            slices: g.slices.clone(),
            first_ns: g.first_ns,
        };
        place(&mut pt, peak.as_ref());
        points.push(pt);
    }
    crate::sort::by(&mut points, &|a, b| {
        b.time_ns.cmp(&a.time_ns).then(a.name.cmp(&b.name))
    });
    crate::sort::by(&mut unplaced, &|a, b| {
        b.time_ns.cmp(&a.time_ns).then(a.name.cmp(&b.name))
    });
    let no_roofs = peak.is_none().then(|| {
        if profile.is_none() {
            "the Perfetto export carries no FLOP or byte counters and no device metadata: open the Parquet profile directory".to_string()
        } else {
            "the profile's Metadata states no Tensor engine size, clock or HBM bandwidth, and no known instance type: achieved numbers only".to_string()
        }
    });
    Ok(RooflineReport {
        level: "hlo".into(),
        device,
        peaks: peak.into_iter().collect(),
        no_roofs,
        points,
        kernel_points: Vec::new(),
        unplaced,
        kernels: Vec::new(),
        notes: vec![
            "FLOPs are the Tensor engine's raw_flops (other engines carry none); bytes are the instructions' HBM read + write bytes; time is the HLO op's busy time (the union of its instructions)".into(),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xla_kernel_details_read_as_launch_fields() {
        let v = xla_kernel_details(
            "regs:40 static_shared:1024 dynamic_shared:2048 grid:219,40,1 block:256,1,1 occ_pct:62.5",
        );
        assert_eq!(v["grid"], serde_json::json!([219, 40, 1]));
        assert_eq!(v["block"], serde_json::json!([256, 1, 1]));
        assert_eq!(v["registers per thread"], 40.0);
        assert_eq!(v["shared memory"], 3072.0);
        assert_eq!(v["est. achieved occupancy %"], 62.5);
        // A ROCm run's register field holds an address; occupancy 0: not computed.
        let rocm =
            xla_kernel_details("regs:2191500840 static_shared:0 grid:1,1,1 block:64,1,1 occ_pct:0");
        assert!(rocm.get("registers per thread").is_none());
        assert!(rocm.get("est. achieved occupancy %").is_none());
    }
}

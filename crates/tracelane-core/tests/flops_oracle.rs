//! FLOPs against PyTorch's own: real CPU traces recorded with
//! `with_flops=True` (`tests/fixtures/torch-flops/`, made by
//! `tools/gen_flops_oracles.py`) and `key_averages()`'s `flops` column,
//! by name and by name + input shapes. Every row PyTorch counts is equal;
//! no PyTorch-formula count appears where PyTorch has none.

mod common;

use std::collections::BTreeMap;

use serde_json::Value;
use tracelane_core::analysis::flops::FlopsSource;
use tracelane_core::analysis::roofline::{roofline, PeakOverride};
use tracelane_core::analysis::Scope;

const CASES: [&str; 5] = [
    "flops_matmuls_cpu",
    "flops_elementwise_cpu",
    "flops_convs_cpu",
    "flops_transformer_cpu",
    "flops_train_step_cpu",
];

fn oracle(case: &str, by_shape: bool) -> BTreeMap<(String, String), u64> {
    let file = if by_shape {
        format!("torch-flops/{case}.key_averages_by_shape.json")
    } else {
        format!("torch-flops/{case}.key_averages.json")
    };
    let v: Value = common::expected(&file);
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["flops"].as_u64().unwrap_or(0) > 0)
        .map(|r| {
            let shapes = r["input_shapes"].as_str().unwrap_or("").replace(' ', "");
            let key = (r["key"].as_str().unwrap().to_string(), shapes);
            (key, r["flops"].as_u64().unwrap())
        })
        .collect()
}

#[test]
fn computed_flops_equal_key_averages_by_name_and_by_shape() {
    let mut rows_checked = 0;
    for case in CASES {
        let t = common::load(&format!("torch-flops/{case}.pt.trace.json.gz"));
        let args = |s: usize| t.slice_args_json(s).to_string();
        let r = roofline(&t, &Scope::Whole, PeakOverride::default(), &args).unwrap();
        let ours_by_shape: BTreeMap<(String, String), u64> = r
            .points
            .iter()
            .filter(|p| p.flops_source == FlopsSource::Pytorch)
            .map(|p| {
                let shapes = p.input_shapes.clone().unwrap_or_default().replace(' ', "");
                ((p.name.clone(), shapes), p.flops as u64)
            })
            .collect();
        let want = oracle(case, true);
        assert_eq!(ours_by_shape, want, "{case} by shape");
        let mut ours_by_name: BTreeMap<(String, String), u64> = BTreeMap::new();
        for ((name, _), f) in &ours_by_shape {
            *ours_by_name
                .entry((name.clone(), String::new()))
                .or_default() += f;
        }
        assert_eq!(ours_by_name, oracle(case, false), "{case} by name");
        rows_checked += want.len();
        // A CPU trace names no device: achieved numbers, no roofs, and why.
        assert!(r.peaks.is_empty() && r.no_roofs.is_some(), "{case}");
        assert!(r.points.iter().all(|p| p.time_from == "cpu"));
    }
    assert!(rows_checked >= 15, "{rows_checked}");
}

#[test]
fn linear_and_attention_have_tracelanes_formula_and_say_so() {
    let t = common::load("torch-flops/flops_transformer_cpu.pt.trace.json.gz");
    let args = |s: usize| t.slice_args_json(s).to_string();
    let r = roofline(&t, &Scope::Whole, PeakOverride::default(), &args).unwrap();
    let sdpa: Vec<_> = r
        .points
        .iter()
        .filter(|p| p.name == "aten::scaled_dot_product_attention")
        .collect();
    assert_eq!(sdpa.len(), 1);
    // q, k, v [2, 4, 64, 32], 4 calls: 4 · (2·8·64·64·32 · 2).
    assert_eq!(sdpa[0].flops as u64, 4 * 2 * (2 * 8 * 64 * 64 * 32));
    assert_eq!(sdpa[0].flops_source, FlopsSource::Tracelane);
    let linear: u64 = r
        .points
        .iter()
        .filter(|p| p.name == "aten::linear")
        .map(|p| p.flops as u64)
        .sum();
    // [8, 16, 256] and [16, 256] through a 256 → 512 linear, twice each.
    assert_eq!(linear, 2 * 2 * (8 * 16 + 16) * 256 * 512);
    // Ops without any formula are listed with their time, not plotted.
    assert!(r
        .unplaced
        .iter()
        .any(|u| u.name == "aten::sub" || u.name.starts_with("aten::_scaled")));
}

#[test]
fn overriding_the_peaks_gives_roofs_bounds_and_headroom() {
    let t = common::load("torch-flops/flops_matmuls_cpu.pt.trace.json.gz");
    let args = |s: usize| t.slice_args_json(s).to_string();
    let over = PeakOverride {
        flops_per_s: Some(1e12),
        bytes_per_s: Some(100e9),
    };
    let r = roofline(&t, &Scope::Whole, over, &args).unwrap();
    assert!(r.no_roofs.is_none());
    let mm = r.points.iter().find(|p| p.name == "aten::mm").unwrap();
    let i = mm.intensity.unwrap();
    // [128, 256] @ [256, 64] in fp32: 2·128·256·64 FLOPs over
    // (128·256 + 256·64 + 128·64) · 4 bytes.
    let want = (2.0 * 128.0 * 256.0 * 64.0) / ((128.0 * 256.0 + 256.0 * 64.0 + 128.0 * 64.0) * 4.0);
    assert!((i - want).abs() < 1e-9, "{i} {want}");
    // Ridge 10 FLOP/byte: 36.6 is above it.
    assert_eq!(
        mm.bound,
        Some(tracelane_core::analysis::roofline::Bound::Compute)
    );
    let attainable = 1e12_f64.min(i * 100e9);
    let h = mm.headroom.unwrap();
    assert!((h - attainable / mm.achieved_flops_per_s.unwrap()).abs() < 1e-9);
}

/// Some exporters write the count into the op's args: it is kept with the
/// op (even where op args are otherwise read back from the file) and
/// preferred to the formula.
#[test]
fn a_flops_arg_is_kept_and_preferred() {
    use tracelane_core::{import_bytes, ImportOptions};
    let json = br#"{"traceEvents":[
      {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":2,
       "args":{"Input Dims":[[4,8],[8,2]],"Input type":["float","float"],"flops":1000}},
      {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":5,"dur":2,
       "args":{"Input Dims":[[4,8],[8,2]],"Input type":["float","float"],"flops":"1000"}},
      {"ph":"X","cat":"cpu_op","name":"my::op","pid":1,"tid":1,"ts":9,"dur":2,
       "args":{"flops":77}}]}"#;
    for args_in_source in [false, true] {
        let opts = ImportOptions {
            args_in_source,
            ..ImportOptions::default()
        };
        let t = import_bytes(json, opts).unwrap();
        let args = |s: usize| t.slice_args_json(s).to_string();
        let r = roofline(&t, &Scope::Whole, PeakOverride::default(), &args).unwrap();
        let mm = r.points.iter().find(|p| p.name == "aten::mm").unwrap();
        assert_eq!(
            (mm.flops as u64, mm.flops_source),
            (2000, FlopsSource::Trace)
        );
        let mine = r.points.iter().find(|p| p.name == "my::op").unwrap();
        assert_eq!(mine.flops as u64, 77);
        assert_eq!(mine.bytes, None, "no shapes: no byte estimate");
    }
}

/// A kernel launched alone by a counted op carries its FLOPs over its own
/// time; the kernels of an op that launched two are not placed.
#[test]
fn kernels_launched_alone_take_their_ops_flops() {
    use tracelane_core::{import_bytes, ImportOptions};
    let json = br#"{"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3"}],"traceEvents":[
      {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":10,
       "args":{"External id":1,"Input Dims":[[64,128],[128,32]],"Input type":["c10::BFloat16","c10::BFloat16"]}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":2,"args":{"External id":1,"correlation":11}},
      {"ph":"X","cat":"kernel","name":"gemm_bf16","pid":0,"tid":7,"ts":20,"dur":4,"args":{"External id":1,"correlation":11,"stream":7,"device":0}},
      {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":30,"dur":10,
       "args":{"External id":2,"Input Dims":[[64,128],[128,32]],"Input type":["c10::BFloat16","c10::BFloat16"]}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":31,"dur":2,"args":{"External id":2,"correlation":12}},
      {"ph":"X","cat":"kernel","name":"gemm_splitk","pid":0,"tid":7,"ts":50,"dur":4,"args":{"External id":2,"correlation":12,"stream":7,"device":0}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":34,"dur":2,"args":{"External id":2,"correlation":13}},
      {"ph":"X","cat":"kernel","name":"splitk_reduce","pid":0,"tid":7,"ts":55,"dur":1,"args":{"External id":2,"correlation":13,"stream":7,"device":0}}
    ]}"#;
    let t = import_bytes(json, ImportOptions::default()).unwrap();
    let args = |s: usize| t.slice_args_json(s).to_string();
    let r = roofline(&t, &Scope::Whole, PeakOverride::default(), &args).unwrap();
    assert_eq!(r.kernel_points.len(), 1, "{:?}", r.kernel_points);
    let k = &r.kernel_points[0];
    assert_eq!(
        (k.name.as_str(), k.flops as u64, k.time_ns),
        ("gemm_bf16", 2 * 64 * 128 * 32, 4000)
    );
    // bf16 on an H100: the BF16 roof, and the op's time is its device time.
    assert_eq!(r.peaks[0].dtype, "bf16");
    let op = r.points.iter().find(|p| p.name == "aten::mm").unwrap();
    assert_eq!(
        (op.time_from.as_str(), op.time_ns, op.calls),
        ("device", 9000, 2)
    );
    assert!(k.bound.is_some() && k.headroom.unwrap() > 1.0);
}

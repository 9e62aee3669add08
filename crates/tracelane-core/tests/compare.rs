//! Fusion comparison on real fixtures, checked against numbers worked out
//! independently of the comparison code:
//! - the RMSNorm CPU traces: occurrences, and CPU time inside the region,
//!   from PyTorch's own `key_averages()` row of the `record_function`
//!   (calls; CPU total − self CPU = time in what the region ran); wall time
//!   and the top-level ops from the raw events (listed in the comments);
//! - TorchNeuron's provisional trace: its `.expected.json`;
//! - HTA's before/after pair: device events and time summed straight from
//!   the raw JSON (`cat` kernel / gpu_memcpy / gpu_memset).

mod common;

use serde_json::Value;
use tracelane_core::analysis::compare::{diff, headline, measure, DiffKind, DiffStatus};
use tracelane_core::analysis::Scope;

fn oracle_row(rel: &str, key: &str) -> Value {
    let text = std::fs::read_to_string(common::fixtures().join(rel)).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == key)
        .unwrap()
        .clone()
}

fn raw_events(rel: &str) -> Vec<Value> {
    let bytes = std::fs::read(common::fixtures().join(rel)).unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text)
        .unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["traceEvents"].as_array().unwrap().clone()
}

/// The median: the middle value, the mean of the two middle ones for an
/// even count.
fn median_us(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[test]
fn rmsnorm_cpu_variants_match_pytorch_and_the_raw_events() {
    // Top-level ops per occurrence, read from the raw events:
    // naive: pow, mean, add, rsqrt, mul, mul; fused: rms_norm;
    // compiled: TorchDynamo Cache Lookup, Torch-Compiled Region: 0/0.
    for (variant, top_ops) in [("naive", 6u64), ("fused", 1), ("compiled", 2)] {
        let region = format!("rmsnorm_{variant}");
        let trace_rel = format!("torch-cpu/rmsnorm_{variant}_cpu.pt.trace.json.gz");
        let t = common::load(&trace_rel);
        let v = measure(&t, &Scope::named(&region.clone()), variant, &trace_rel).unwrap();
        let row = oracle_row(
            &format!("torch-cpu/rmsnorm_{variant}_cpu.key_averages.json"),
            &region,
        );
        assert_eq!(
            v.occurrences as u64,
            row["count"].as_u64().unwrap(),
            "{variant}"
        );
        let inside_us = row["cpu_time_total_us"].as_f64().unwrap()
            - row["self_cpu_time_total_us"].as_f64().unwrap();
        assert!(
            (v.cpu_self_ns as f64 / 1e3 - inside_us).abs() <= 1.0,
            "{variant}: {} vs {inside_us}",
            v.cpu_self_ns
        );
        let walls: Vec<f64> = raw_events(&trace_rel)
            .iter()
            .filter(|e| e["name"] == region.as_str() && e["ph"] == "X")
            .map(|e| e["dur"].as_f64().unwrap())
            .collect();
        // The median leaves out the warm-up occurrences (the first call
        // runs slower: allocation, and for torch.compile the compile).
        let steady: Vec<f64> = walls
            .iter()
            .zip(&v.warmup)
            .filter(|(_, &w)| !w)
            .map(|(&d, _)| d)
            .collect();
        assert_eq!(v.warmup.len(), walls.len());
        assert!(
            (v.wall_median_ns() as f64 / 1e3 - median_us(steady)).abs() < 0.001,
            "{variant}: {walls:?} {:?}",
            v.warmup
        );
        assert_eq!(v.cpu_ops, top_ops * 5, "{variant}");
        // A CPU-only capture: no device numbers, and it says so.
        assert!(!v.trace_has_device);
        assert_eq!((v.device_events, v.device_ns, v.launches), (0, 0, 0));
    }
    let naive = common::load("torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz");
    let fused = common::load("torch-cpu/rmsnorm_fused_cpu.pt.trace.json.gz");
    let a = measure(&naive, &Scope::named("rmsnorm_naive"), "naive", "n").unwrap();
    let b = measure(&fused, &Scope::named("rmsnorm_fused"), "fused", "f").unwrap();
    let line = headline(&a, &b);
    assert!(
        line.contains("CPU-only") && line.ends_with("6 CPU ops → 1"),
        "{line}"
    );
    // The map shows the eager ops in order.
    let names: Vec<&str> = a.map.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "aten::pow",
            "aten::mean",
            "aten::add",
            "aten::rsqrt",
            "aten::mul",
            "aten::mul"
        ]
    );
}

#[test]
fn torchneuron_rmsnorm_regions_match_the_expected_figures() {
    let t = common::load("neuron-provisional/torchneuron_rmsnorm.json");
    let expected = common::expected("neuron-provisional/torchneuron_rmsnorm.expected.json");
    let mut variants = Vec::new();
    for region in ["rmsnorm_naive", "rmsnorm_fused", "rmsnorm_compiled"] {
        let v = measure(&t, &Scope::named(region), region, "t").unwrap();
        let e = &expected["regions"][region];
        assert_eq!(
            v.device_events,
            e["device_events"].as_u64().unwrap(),
            "{region}"
        );
        assert_eq!(v.cpu_ops, e["cpu_ops"].as_u64().unwrap(), "{region}");
        assert!((v.device_ns as f64 / 1e3 - e["device_us"].as_f64().unwrap()).abs() < 0.01);
        // One neuron_dispatch per op.
        assert_eq!(v.launches, v.cpu_ops, "{region}");
        variants.push(v);
    }
    assert_eq!(
        headline(&variants[0], &variants[1]),
        "device time 2,355 µs → 403 µs (5.8× less); 6 device events → 1; 6 CPU ops → 1"
    );
    // The compiled region launches one compiled graph from one op.
    let map = &variants[2].map;
    assert_eq!(map.len(), 1);
    assert_eq!(map[0].name, "Torch-Compiled Region: 0/0");
    assert_eq!(map[0].device[0].name, "compiled_graph_0");
    // Three aten::mul became part of one fused op.
    let d = diff(&variants[0], &variants[1]);
    let mul = d
        .iter()
        .find(|r| r.kind == DiffKind::Device && r.name == "aten::mul")
        .unwrap();
    assert_eq!((mul.baseline_count, mul.candidate_count), (3.0, 0.0));
    assert_eq!(mul.status, DiffStatus::Removed);
}

#[test]
fn hta_pair_whole_traces_count_device_work_from_the_raw_events() {
    for rel in [
        "public/hta_compare_pair/base.json.gz",
        "public/hta_compare_pair/test.json.gz",
    ] {
        let t = common::load(rel);
        let v = measure(&t, &Scope::Whole, rel, rel).unwrap();
        let raw = raw_events(rel);
        let device: Vec<&Value> = raw
            .iter()
            .filter(|e| {
                e["ph"] == "X"
                    && matches!(
                        e["cat"].as_str(),
                        Some("kernel" | "gpu_memcpy" | "gpu_memset")
                    )
            })
            .collect();
        assert_eq!(v.device_events as usize, device.len(), "{rel}");
        let total_us: f64 = device.iter().map(|e| e["dur"].as_f64().unwrap()).sum();
        assert!((v.device_ns as f64 / 1e3 - total_us).abs() < 0.01, "{rel}");
        let memsets = device.iter().filter(|e| e["cat"] == "gpu_memset").count();
        assert_eq!(v.memsets as usize, memsets);
        assert!(v.device_busy_ns <= v.device_ns);
    }
}

#[test]
fn op_map_shows_the_median_occurrence_not_the_warm_up() {
    // The naive RMSNorm's first occurrence is the warm-up: its aten::mean
    // takes far longer than in the later ones. The map shows the occurrence
    // with the median wall time, read here from the raw events.
    let rel = "torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz";
    let events = raw_events(rel);
    let mut regions: Vec<(f64, f64)> = events
        .iter()
        .filter(|e| e["name"] == "rmsnorm_naive" && e["ph"] == "X")
        .map(|e| (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap()))
        .collect();
    regions.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut by_wall: Vec<usize> = (0..regions.len()).collect();
    by_wall.sort_by(|&a, &b| regions[a].1.total_cmp(&regions[b].1).then(a.cmp(&b)));
    let want = by_wall[(regions.len() - 1) / 2];
    let (start, dur) = regions[want];
    let mean_us = events
        .iter()
        .find(|e| {
            let ts = e["ts"].as_f64().unwrap_or(-1.0);
            e["name"] == "aten::mean" && ts >= start && ts <= start + dur
        })
        .map(|e| e["dur"].as_f64().unwrap())
        .unwrap();

    let t = common::load(rel);
    let v = measure(&t, &Scope::named("rmsnorm_naive"), "naive", rel).unwrap();
    assert_ne!(want, 0, "the fixture's first occurrence is its warm-up");
    assert_eq!(v.map_occurrence, want);
    let mean = v.map.iter().find(|m| m.name == "aten::mean").unwrap();
    assert!(
        (mean.dur_ns as f64 / 1e3 - mean_us).abs() < 0.001,
        "{} vs {mean_us}",
        mean.dur_ns
    );
}

#[test]
fn the_op_table_of_a_scope_counts_the_events_inside_its_occurrences() {
    use tracelane_core::analysis::ops::{op_table, op_table_in, OpTableOptions};
    let t = common::load("torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz");
    // A range: the same table as the range option.
    let (a, b) = t.time_span_ns().unwrap();
    let mid = (a + (b - a) / 3, a + 2 * (b - a) / 3);
    let range = tracelane_core::analysis::Scope::Range {
        start_ns: mid.0,
        end_ns: mid.1,
    };
    let want = op_table(
        &t,
        OpTableOptions {
            by_shape: false,
            range_ns: Some(mid),
        },
    );
    assert_eq!(op_table_in(&t, &range, false).unwrap(), want);
    assert_eq!(
        op_table_in(&t, &Scope::Whole, true).unwrap(),
        op_table(
            &t,
            OpTableOptions {
                by_shape: true,
                range_ns: None
            }
        )
    );
    // A region: its occurrences' ops, counted as PyTorch's row of the
    // region says (5 calls of rmsnorm_naive, each dispatching aten::pow once).
    let region = op_table_in(&t, &Scope::named("rmsnorm_naive"), false).unwrap();
    let row = |name: &str| region.rows.iter().find(|r| r.name == name).unwrap().clone();
    let oracle = oracle_row(
        "torch-cpu/rmsnorm_naive_cpu.key_averages.json",
        "rmsnorm_naive",
    );
    assert_eq!(
        row("rmsnorm_naive").calls,
        oracle["count"].as_u64().unwrap()
    );
    assert_eq!(row("aten::pow").calls, row("rmsnorm_naive").calls);
    assert!(op_table_in(&t, &Scope::named("no such region"), false).is_err());
}

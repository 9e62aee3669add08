//! `Mode::Hta` against HTA 0.6.1's own answers for the public traces and
//! the real CUDA captures made here (`tests/fixtures/hta06/*.hta.json`) and `Mode::Hta05` against 0.5.0's
//! (`tests/fixtures/hta/*.hta.json`), both written by `tools/hta_oracle.py`:
//! times within 1 µs, percentages within 0.1 points, counts exact.
//!
//! Rows with a zero sum (an overlap state that lasts no time, which
//! appears or not depending on how numpy's unstable sort orders equal
//! timestamps) may be on one side only; so may a queue length's mean and
//! max differ, within the range the order of equal timestamps allows.

mod common;

use serde_json::Value;
use tracelane_core::analysis::critical_path::critical_path;
use tracelane_core::analysis::device_time::device_time;
use tracelane_core::analysis::frame::Mode;
use tracelane_core::analysis::Scope;
use tracelane_core::Trace;

const CASES: [(&str, &str); 22] = [
    ("public/hta_simple_add_a100.json.gz", "hta_simple_add_a100"),
    ("public/hta_amd_mi250_rocm.json.gz", "hta_amd_mi250_rocm"),
    ("public/hta_triton_example.json.gz", "hta_triton_example"),
    (
        "public/hta_nccl_2rank_rank0.json.gz",
        "hta_nccl_2rank_rank0",
    ),
    (
        "public/hta_large_216k_events.json.gz",
        "hta_large_216k_events",
    ),
    ("public/hta_cpu_only_rank34.json.gz", "hta_cpu_only_rank34"),
    (
        "public/kineto_legacy_2021_resnet50.pt.trace.json.gz",
        "kineto_legacy_2021_resnet50.pt.trace",
    ),
    (
        "public/hta_compare_pair/base.json.gz",
        "hta_compare_pair_base",
    ),
    (
        "public/hta_compare_pair/test.json.gz",
        "hta_compare_pair_test",
    ),
    (
        "neuron-provisional/torchneuron_rmsnorm.json",
        "torchneuron_rmsnorm",
    ),
    (
        "torch-cuda/block_infer_cuda.pt.trace.json.gz",
        "block_infer_cuda.pt.trace",
    ),
    (
        "torch-cuda/mlp_train_cuda.pt.trace.json.gz",
        "mlp_train_cuda.pt.trace",
    ),
    (
        "torch-cuda/rmsnorm_compiled_cuda.pt.trace.json.gz",
        "rmsnorm_compiled_cuda.pt.trace",
    ),
    (
        "torch-cuda/rmsnorm_fused_cuda.pt.trace.json.gz",
        "rmsnorm_fused_cuda.pt.trace",
    ),
    (
        "torch-cuda/rmsnorm_naive_cuda.pt.trace.json.gz",
        "rmsnorm_naive_cuda.pt.trace",
    ),
    (
        "torch-cuda-behaviours/blocking_cuda.pt.trace.json.gz",
        "blocking_cuda.pt.trace",
    ),
    (
        "torch-cuda-behaviours/cuda_graph_cuda.pt.trace.json.gz",
        "cuda_graph_cuda.pt.trace",
    ),
    (
        "torch-cuda-behaviours/multistream_cuda.pt.trace.json.gz",
        "multistream_cuda.pt.trace",
    ),
    (
        "torch-memory/mem_churn_cuda.pt.trace.json.gz",
        "mem_churn_cuda.pt.trace",
    ),
    (
        "torch-memory/mem_infer_cuda.pt.trace.json.gz",
        "mem_infer_cuda.pt.trace",
    ),
    (
        "torch-memory/mem_train_cuda.pt.trace.json.gz",
        "mem_train_cuda.pt.trace",
    ),
    (
        "memory-snapshots/snap_train_cuda.pt.trace.json.gz",
        "snap_train_cuda.pt.trace",
    ),
];

fn close(what: &str, ours: &Value, theirs: &Value, tol: f64, errs: &mut Vec<String>) {
    match (ours.as_f64(), theirs.as_f64()) {
        (Some(a), Some(b)) if (a - b).abs() <= tol => {}
        (None, None) if ours.is_null() && theirs.is_null() => {}
        _ => errs.push(format!("{what}: ours {ours}, HTA {theirs}")),
    }
}

fn rows_by<'a>(v: &'a Value, key: &dyn Fn(&Value) -> String) -> Vec<(String, &'a Value)> {
    v.as_array()
        .map(|a| a.iter().map(|r| (key(r), r)).collect())
        .unwrap_or_default()
}

/// Two lists of rows (or both null) with the same keys, each field within
/// its tolerance.
fn keyed_rows(
    what: &str,
    o: &Value,
    h: &Value,
    key: &dyn Fn(&Value) -> String,
    fields: &[(&str, f64)],
    e: &mut Vec<String>,
) {
    if h.is_null() != o.is_null() {
        e.push(format!("{what}: ours {o}, HTA {h}"));
        return;
    }
    let (or, hr) = (rows_by(o, key), rows_by(h, key));
    if or.len() != hr.len() {
        e.push(format!("{what}: {} rows, HTA {}", or.len(), hr.len()));
    }
    for (k, hv) in &hr {
        match or.iter().find(|(ok, _)| ok == k) {
            Some((_, ov)) => {
                for (f, tol) in fields {
                    close(&format!("{what}[{k}].{f}"), &ov[f], &hv[f], *tol, e);
                }
            }
            None => e.push(format!("{what}: HTA has {k}, we do not")),
        }
    }
}

/// HTA's queue length per stream: its mean and max between ours with the
/// launches and starts that share a timestamp ordered starts first and
/// launches first (HTA's numpy sort leaves that order undefined).
fn queue_lengths(o: &Value, h: &Value, e: &mut Vec<String>) {
    if h.is_null() != o.is_null() {
        e.push(format!("queue_length: ours {o}, HTA {h}"));
        return;
    }
    let key = |r: &Value| r["stream"].to_string();
    let (or, hr) = (rows_by(o, &key), rows_by(h, &key));
    if or.len() != hr.len() {
        e.push(format!("queue_length: {} rows, HTA {}", or.len(), hr.len()));
    }
    for (k, hv) in &hr {
        let Some((_, ov)) = or.iter().find(|(ok, _)| ok == k) else {
            e.push(format!("queue_length: HTA has {k}, we do not"));
            continue;
        };
        for (f, tol) in [("mean", 0.01), ("max", 0.0)] {
            let range = &ov[format!("{f}_at_ties")];
            let (lo, hi) = (range[0].as_f64().unwrap(), range[1].as_f64().unwrap());
            let theirs = hv[f].as_f64().unwrap_or(f64::NAN);
            if !(lo - tol <= theirs && theirs <= hi + tol) {
                e.push(format!(
                    "queue_length[{k}].{f}: ours {lo}..{hi}, HTA {theirs}"
                ));
            }
        }
    }
}

fn compare(name: &str, ours: &Value, hta: &Value) -> Vec<String> {
    let mut errs = Vec::new();
    let e = &mut errs;
    // Temporal breakdown.
    let (o, h) = (&ours["temporal_breakdown"], &hta["temporal_breakdown"]);
    if h.is_null() || o.is_null() {
        if h.is_null() != o.is_null() {
            e.push(format!("temporal_breakdown: ours {o}, HTA {h}"));
        }
    } else {
        for k in ["idle_us", "compute_us", "non_compute_us", "kernel_span_us"] {
            close(&format!("temporal.{k}"), &o[k], &h[k], 1.0, e);
        }
        for k in ["idle_pct", "compute_pct", "non_compute_pct"] {
            close(&format!("temporal.{k}"), &o[k], &h[k], 0.1, e);
        }
    }
    // Kernel types (zero rows optional, see the module comment).
    let key = |r: &Value| r["kernel_type"].as_str().unwrap_or("").to_string();
    let ot = rows_by(&ours["kernel_types"], &key);
    let ht = rows_by(&hta["kernel_types"], &key);
    for (k, hr) in &ht {
        match ot.iter().find(|(ok, _)| ok == k) {
            Some((_, or)) => {
                close(
                    &format!("kernel_types[{k}].sum_us"),
                    &or["sum_us"],
                    &hr["sum_us"],
                    1.0,
                    e,
                );
                close(
                    &format!("kernel_types[{k}].percentage"),
                    &or["percentage"],
                    &hr["percentage"],
                    0.1,
                    e,
                );
            }
            None if hr["sum_us"].as_f64() == Some(0.0) => {}
            None => e.push(format!("kernel_types: HTA has {k}, we do not")),
        }
    }
    for (k, or) in &ot {
        if !ht.iter().any(|(hk, _)| hk == k) && or["sum_us"].as_f64() != Some(0.0) {
            e.push(format!("kernel_types: we have {k}, HTA does not"));
        }
    }
    let idle_key = |r: &Value| format!("{}/{}", r["stream"], r["category"].as_str().unwrap_or(""));
    keyed_rows(
        "idle_breakdown",
        &ours["idle_breakdown"],
        &hta["idle_breakdown"],
        &idle_key,
        &[("idle_us", 1.0), ("ratio", 0.011)],
        e,
    );
    // Launch statistics.
    let (o, h) = (&ours["launch_stats"], &hta["launch_stats"]);
    for k in [
        "launches",
        "short_kernels",
        "runtime_outliers",
        "launch_delay_outliers",
    ] {
        close(&format!("launch_stats.{k}"), &o[k], &h[k], 0.0, e);
    }
    for k in ["launch_delay_sum_us", "launch_delay_max_us"] {
        close(&format!("launch_stats.{k}"), &o[k], &h[k], 1.0, e);
    }
    close(
        "comm_comp_overlap_pct",
        &ours["comm_comp_overlap_pct"],
        &hta["comm_comp_overlap_pct"],
        0.1,
        e,
    );
    queue_lengths(&ours["queue_length"], &hta["queue_length"], e);
    // Critical path: length and the share of each label.
    let (o, h) = (&ours["critical_path"], &hta["critical_path"]);
    if h.is_null() || o.is_null() {
        if h.is_null() != o.is_null() {
            e.push(format!("critical_path: ours {o}, HTA {h}"));
        }
    } else {
        close(
            "critical_path.length_us",
            &o["length_us"],
            &h["length_us"],
            1.0,
            e,
        );
        let (ob, hb) = (&o["bound_by_pct"], &h["bound_by_pct"]);
        for k in ob
            .as_object()
            .unwrap()
            .keys()
            .chain(hb.as_object().unwrap().keys())
        {
            let zero = Value::from(0.0);
            let (x, y) = (ob.get(k).unwrap_or(&zero), hb.get(k).unwrap_or(&zero));
            close(&format!("critical_path.bound_by_pct.{k}"), x, y, 0.1, e);
        }
    }
    errs.into_iter().map(|s| format!("{name}: {s}")).collect()
}

/// Our `--hta` answers under `mode` against one oracle file's.
fn differences(name: &str, t: &Trace, mode: Mode, oracle: &Value) -> Vec<String> {
    let cp = critical_path(t, &Scope::Whole, mode, &|s| {
        t.slice_args_json(s).to_string()
    });
    let ours = device_time(t, &Scope::Whole, mode)
        .unwrap()
        .hta_json(cp.as_ref().ok());
    compare(name, &ours, &oracle["expected"])
}

/// The rules an oracle file was written under (its `meta.version`).
fn mode_of(oracle: &Value) -> Mode {
    match oracle["meta"]["version"].as_str() {
        Some(v) if v.starts_with("0.5") => Mode::Hta05,
        _ => Mode::Hta,
    }
}

#[test]
fn hta_mode_equals_hta_on_every_public_trace() {
    let mut errs = Vec::new();
    for (dir, mode) in [("hta", Mode::Hta05), ("hta06", Mode::Hta)] {
        for (rel, golden) in CASES {
            let t = common::load(rel);
            let oracle = common::expected(&format!("{dir}/{golden}.hta.json"));
            assert_eq!(mode_of(&oracle), mode, "{dir}/{golden}");
            errs.extend(differences(&format!("{dir}/{golden}"), &t, mode, &oracle));
        }
    }
    assert!(
        errs.is_empty(),
        "{} differences:\n{}",
        errs.len(),
        errs.join("\n")
    );
}

/// The same comparison over a corpus kept outside the repository (public
/// traces we may read but not redistribute): `TRACELANE_HTA_CORPUS=DIR`
/// with DIR holding the traces and `DIR/hta/<stem>.hta.json` from
/// `tools/hta_oracle.py DIR/hta DIR/*.json.gz` — under HTA 0.6.1 or 0.5.0,
/// whichever wrote them (their `meta.version`). Without the variable it
/// checks nothing.
#[test]
fn hta_mode_equals_hta_on_a_local_corpus() {
    let Some(dir) = std::env::var_os("TRACELANE_HTA_CORPUS") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let mut traces: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    traces.sort();
    let mut errs = Vec::new();
    for p in traces {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let stem = name
            .trim_end_matches(".gz")
            .trim_end_matches(".json")
            .to_string();
        let oracle = dir.join("hta").join(format!("{stem}.hta.json"));
        if !oracle.exists() {
            continue;
        }
        let t = common::load(p.to_str().unwrap());
        let oracle = common::expected(oracle.to_str().unwrap());
        errs.extend(differences(&stem, &t, mode_of(&oracle), &oracle));
    }
    assert!(
        errs.is_empty(),
        "{} differences:\n{}",
        errs.len(),
        errs.join("\n")
    );
}

//! The `tracelane` binary: output formats and error behaviour.

use std::path::PathBuf;
use std::process::Command;

fn fixture(rel: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

fn tracelane(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tracelane"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn ops_json_has_exactly_the_documented_keys() {
    let (code, out, err) = tracelane(&[
        "ops",
        &fixture("torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz"),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 14);
    for r in rows {
        let mut keys: Vec<&str> = r.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "calls",
                "cpu_self_us",
                "cpu_total_us",
                "device_self_us",
                "device_total_us",
                "name"
            ]
        );
    }
    let mul = rows.iter().find(|r| r["name"] == "aten::mul").unwrap();
    assert_eq!(mul["calls"], 10);
    assert!((mul["cpu_self_us"].as_f64().unwrap() - 42511.0).abs() < 1.0);
}

#[test]
fn ops_by_shape_adds_compact_input_shapes() {
    let (code, out, _) = tracelane(&[
        "ops",
        &fixture("torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz"),
        "--by-shape",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    let shapes: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["input_shapes"].as_str().unwrap())
        .collect();
    assert!(shapes.contains(&"[[64,4096],[]]"), "{shapes:?}");
    assert!(shapes.contains(&"[]"));
}

#[test]
fn sort_top_and_other_formats() {
    let f = fixture("public/hta_triton_example.json.gz");
    let (code, out, _) = tracelane(&[
        "ops",
        &f,
        "--sort",
        "device_self",
        "--top",
        "1",
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "name,calls,cpu_total_us,cpu_self_us,device_total_us,device_self_us"
    );
    assert_eq!(lines.len(), 2);
    assert!(
        lines[1].starts_with("triton_poi_fused_add_cos_sin_0,1,"),
        "{}",
        lines[1]
    );
    let (code, out, _) = tracelane(&["ops", &f, "--format", "md"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("| Name | Calls | CPU self |"));
    let (code, out, _) = tracelane(&["info", &f, "--format", "json"]);
    assert_eq!(code, 0);
    let info: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(info["links"]["device_by_args"], 1);
}

#[test]
fn errors_are_one_line_and_exit_non_zero() {
    for (file, says) in [
        (
            fixture("edge/image.png"),
            "not a trace: the file is a PNG image, not JSON",
        ),
        (fixture("edge/empty.json"), "the file is empty"),
        (
            fixture("edge/not_a_trace.json"),
            "not a trace: a JSON object without a traceEvents array",
        ),
        ("/nonexistent/trace.json".to_string(), "No such file"),
    ] {
        let (code, out, err) = tracelane(&["ops", &file]);
        assert_eq!(code, 2, "{file}");
        assert!(out.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("tracelane: ") && err.contains(says),
            "{err}"
        );
    }
    let (code, _, err) = tracelane(&["ops", &fixture("edge/bare_array.json"), "--sort", "bogus"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown --sort"));
}

#[test]
fn compare_json_has_the_documented_fields_and_ratios() {
    let file = fixture("neuron-provisional/torchneuron_rmsnorm.json");
    let (code, out, err) = tracelane(&[
        "compare",
        &file,
        "--region",
        "rmsnorm_naive",
        "--region",
        "rmsnorm_fused",
        "--region",
        "rmsnorm_compiled",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let variants = v["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 3);
    for key in [
        "label",
        "file",
        "region",
        "occurrences",
        "wall_us",
        "warmup_excluded",
        "device_us",
        "device_busy_us",
        "device_events",
        "launches",
        "cpu_ops",
        "cpu_self_us",
        "vs_baseline",
    ] {
        assert!(variants.iter().all(|x| x.get(key).is_some()), "{key}");
    }
    assert_eq!(variants[0]["region"], "rmsnorm_naive");
    assert_eq!(variants[0]["device_us"], 2355.0);
    assert_eq!(variants[2]["device_us"], 375.5);
    // 375.5 / 2355 of the baseline's device time; 1 event for 6.
    let r = variants[2]["vs_baseline"]["device_us"].as_f64().unwrap();
    assert!((r - 375.5 / 2355.0).abs() < 1e-9);
    assert_eq!(
        variants[2]["vs_baseline"]["device_events"]
            .as_f64()
            .unwrap(),
        1.0 / 6.0
    );
    assert_eq!(variants[0]["vs_baseline"]["device_us"], 1.0);
}

#[test]
fn compare_pairs_files_with_regions_and_says_what_is_wrong() {
    let naive = fixture("torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz");
    let fused = fixture("torch-cpu/rmsnorm_fused_cpu.pt.trace.json.gz");
    let (code, out, err) = tracelane(&[
        "compare",
        &naive,
        &fused,
        "--region",
        "rmsnorm_naive",
        "--region",
        "rmsnorm_fused",
        "--format",
        "md",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("| variant | role |"), "{out}");
    assert!(
        out.contains("| rmsnorm_naive_cpu | baseline | 5 |"),
        "{out}"
    );
    assert!(out.contains("6 CPU ops → 1"), "{out}");
    assert!(out.contains("CPU-only capture"), "{out}");
    // A region the file does not have: one line naming the ones it has.
    let (code, _, err) = tracelane(&["compare", &naive, &fused, "--region", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("rmsnorm_naive (5×)"), "{err}");
    let (code, _, err) = tracelane(&["compare", &naive]);
    assert_eq!(code, 2);
    assert!(err.contains("at least two variants"), "{err}");
}

#[test]
fn analyze_hta_json_has_exactly_the_issue_fields_and_htas_numbers() {
    let (code, out, err) = tracelane(&[
        "analyze",
        &fixture("public/hta_nccl_2rank_rank0.json.gz"),
        "--hta",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let keys = |v: &serde_json::Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(
        keys(&v),
        [
            "comm_comp_overlap_pct",
            "critical_path",
            "idle_breakdown",
            "kernel_types",
            "launch_stats",
            "queue_length",
            "temporal_breakdown"
        ]
    );
    assert_eq!(
        keys(&v["temporal_breakdown"]),
        [
            "compute_pct",
            "compute_us",
            "idle_pct",
            "idle_us",
            "kernel_span_us",
            "non_compute_pct",
            "non_compute_us"
        ]
    );
    assert_eq!(
        keys(&v["launch_stats"]),
        [
            "launch_delay_max_us",
            "launch_delay_outliers",
            "launch_delay_sum_us",
            "launches",
            "runtime_outliers",
            "short_kernels"
        ]
    );
    // HTA on this file: 435,586 µs of kernel span, 77.78% idle; a critical
    // path of 379,819 µs under 0.6.1 (the backward thread walked with the
    // forward one), 203,044 µs under 0.5.0.
    assert_eq!(v["temporal_breakdown"]["kernel_span_us"], 435586.0);
    assert_eq!(v["temporal_breakdown"]["idle_pct"], 77.78);
    assert_eq!(v["critical_path"]["length_us"], 379819.0);
    let (code, out, err) = tracelane(&[
        "analyze",
        &fixture("public/hta_nccl_2rank_rank0.json.gz"),
        "--hta-version",
        "0.5",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v05: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v05["critical_path"]["length_us"], 203044.0);
    assert_eq!(v05["temporal_breakdown"], v["temporal_breakdown"]);
    let (code, _, err) = tracelane(&[
        "analyze",
        &fixture("public/hta_nccl_2rank_rank0.json.gz"),
        "--hta-version",
        "0.4",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--hta-version takes 0.6 or 0.5"), "{err}");
}

#[test]
fn analyze_steps_reports_each_profiler_step_and_names_a_bad_scope() {
    let f = fixture("public/hta_nccl_2rank_rank0.json.gz");
    let (code, out, err) = tracelane(&["analyze", &f, "--scope", "steps", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let scopes: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["scope"].as_str().unwrap())
        .collect();
    assert_eq!(scopes.len(), 3, "{scopes:?}");
    assert!(scopes.iter().all(|s| s.starts_with("ProfilerStep#")));
    // The 2021 schema files its steps as operators: they are steps too.
    let legacy = fixture("public/kineto_legacy_2021_resnet50.pt.trace.json.gz");
    let (code, out, err) = tracelane(&["analyze", &legacy, "--scope", "steps", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v.as_array().unwrap().len() >= 2, "{out:.200}");
    let (code, out, _) = tracelane(&["analyze", &f, "--format", "md"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("### Kernel types") && out.contains("| COMPUTATION |"),
        "{out}"
    );
    let (code, _, err) = tracelane(&["analyze", &f, "--scope", "bogus"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("whole, steps, region:NAME, occurrences:NAME"),
        "{err}"
    );
    // Each occurrence of a region on its own: TorchNeuron's fused region
    // runs once, one 403.3 µs window.
    let n = fixture("neuron-provisional/torchneuron_rmsnorm.json");
    let (code, out, err) = tracelane(&[
        "analyze",
        &n,
        "--scope",
        "occurrences:rmsnorm_fused",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["scope"], "rmsnorm_fused #1");
    assert_eq!(v["devices"][0]["busy_ns"], 403_300);
}

#[test]
fn ranks_reads_a_tar_gz_of_traces_as_the_folder_it_holds() {
    let dir = fixture("synth-ranks");
    let archive = std::env::temp_dir().join(format!("tracelane-set-{}.tar.gz", std::process::id()));
    {
        let gz = flate2::write::GzEncoder::new(
            std::fs::File::create(&archive).unwrap(),
            flate2::Compression::fast(),
        );
        let mut tar = tar::Builder::new(gz);
        tar.append_dir_all("synth-ranks", &dir).unwrap();
        tar.into_inner().unwrap().finish().unwrap();
    }
    let (code, from_dir, err) = tracelane(&["ranks", &dir, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let (code, from_archive, err) =
        tracelane(&["ranks", archive.to_str().unwrap(), "--format", "json"]);
    let _ = std::fs::remove_file(&archive);
    assert_eq!(code, 0, "{err}");
    assert_eq!(from_archive, from_dir);
    // The README beside the traces is passed over, and said.
    assert!(
        err.contains("passed over 1 file") && err.contains("README.md"),
        "{err}"
    );
}

#[test]
fn insights_json_lists_findings_in_rank_order_with_the_documented_fields() {
    let (code, out, err) = tracelane(&[
        "insights",
        &fixture("public/hta_simple_add_a100.json.gz"),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let findings = v["findings"].as_array().unwrap();
    assert!(findings.len() >= 2);
    for f in findings {
        for key in ["rule", "title", "severity", "gain_us", "evidence", "action"] {
            assert!(!f[key].is_null(), "{key} missing in {f}");
        }
    }
    let gains: Vec<f64> = findings
        .iter()
        .map(|f| f["gain_us"].as_f64().unwrap())
        .collect();
    assert!(gains.windows(2).all(|w| w[0] >= w[1]));
    let pageable = findings
        .iter()
        .find(|f| f["rule"] == "pageable_copy")
        .unwrap();
    assert_eq!(pageable["evidence"]["numbers"]["copies"], "16");
    assert_eq!(
        v["checks"].as_array().unwrap().len(),
        tracelane_core::analysis::insights::RULES.len()
    );
}

#[test]
fn insights_markdown_is_a_pull_request_comment() {
    let (code, out, err) = tracelane(&[
        "insights",
        &fixture("neuron-provisional/torchneuron_rmsnorm.json"),
        "--scope",
        "region:rmsnorm_naive",
        "--format",
        "md",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("### tracelane insights — `torchneuron_rmsnorm.json` (rmsnorm_naive)"));
    assert!(out.contains("| 1 | RMSNorm written out"));
    assert!(out.contains("<details><summary>1. RMSNorm"));
    assert!(out.contains(
        "`aten::mul`, `aten::mean`, `aten::add`, `aten::rsqrt`, `aten::mul`, `aten::mul`"
    ));
}

#[test]
fn the_gate_exits_1_on_a_regression_0_otherwise_and_2_on_bad_input() {
    let naive = fixture("torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz");
    let fused = fixture("torch-cpu/rmsnorm_fused_cpu.pt.trace.json.gz");
    // Naive → fused: faster.
    let (code, out, err) = tracelane(&[
        "insights",
        "--baseline",
        &naive,
        &fused,
        "--fail-on-regression",
        "5",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("pass (no gated metric over 5 %)"), "{out}");
    // Fused → naive: slower, and the fusion finding is new.
    let (code, out, _) = tracelane(&[
        "insights",
        "--baseline",
        &fused,
        &naive,
        "--fail-on-regression",
        "5",
        "--format",
        "md",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("**REGRESSION over 5 %"), "{out}");
    assert!(out.contains("### New findings"));
    assert!(out.contains("RMSNorm written out"));
    // Without a threshold the gate reports and passes.
    let (code, out, _) = tracelane(&["insights", "--baseline", &fused, &naive, "--format", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["verdict"], "report");
    // The HTA pair: the same workload, per step.
    let (code, out, err) = tracelane(&[
        "insights",
        "--baseline",
        &fixture("public/hta_compare_pair/base.json.gz"),
        &fixture("public/hta_compare_pair/test.json.gz"),
        "--fail-on-regression",
        "5",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("per step (2 and 2 steady steps)"), "{out}");
    // Bad input is an error, not a verdict.
    let (code, _, err) = tracelane(&[
        "insights",
        "--baseline",
        &fixture("edge/not_a_trace.json"),
        &fused,
        "--fail-on-regression",
        "5",
    ]);
    assert_eq!(code, 2);
    assert!(err.starts_with("tracelane: "), "{err}");
    let (code, _, err) = tracelane(&[
        "insights",
        "--baseline",
        &fused,
        &naive,
        "--fail-on-regression",
        "x",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--fail-on-regression takes a percentage"),
        "{err}"
    );
}

#[test]
fn regions_lists_each_group_with_its_outliers() {
    let (code, out, err) = tracelane(&[
        "regions",
        &fixture("torch-regions/module_steps_cpu.pt.trace.json.gz"),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let groups = v["groups"].as_array().unwrap();
    assert_eq!(groups[0]["kind"], "step");
    assert_eq!(groups[0]["occurrences"].as_array().unwrap().len(), 6);
    for g in groups {
        let marked = g["occurrences"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["outlier"] == true)
            .count();
        assert_eq!(g["outliers"].as_u64().unwrap() as usize, marked);
    }
    let (code, out, _) = tracelane(&[
        "regions",
        &fixture("torch-regions/module_steps_cpu.pt.trace.json.gz"),
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("module               Linear_3"), "{out}");
}

#[test]
fn memory_json_has_the_documented_fields_and_takes_a_moment() {
    let f = fixture("edge/memory_live.json");
    let (code, out, err) = tracelane(&["memory", &f, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cuda = &v["devices"][1];
    assert_eq!(cuda["device"], "CUDA:0");
    for key in [
        "peak_allocated_bytes",
        "peak_at_us",
        "peak_reserved_bytes",
        "live_at_peak",
        "never_freed_bytes",
    ] {
        assert!(cuda.get(key).is_some(), "{key} missing: {cuda}");
    }
    assert_eq!(cuda["peak_allocated_bytes"], 1450);
    assert_eq!(cuda["live_at_peak"][0]["op"], "optimizer");
    let mut keys: Vec<&str> = cuda["live_at_peak"][1]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        ["bytes", "category", "count", "module", "op", "python"]
    );
    assert!(cuda["at_us"].is_null());

    let (code, out, err) = tracelane(&["memory", &f, "--at", "57", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["devices"][1]["allocated_at_bytes"], 1300);
    assert_eq!(v["devices"][1]["live_at"][1]["op"], "aten::linear");

    let (code, out, _) = tracelane(&["memory", &f]);
    assert_eq!(code, 0);
    assert!(
        out.contains("CUDA:0: live at the peak (150.000 µs)"),
        "{out}"
    );
    assert!(out.contains("1.42 KB"), "{out}");

    let (code, _, err) = tracelane(&["memory", &f, "--at", "soon"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--at takes peak"), "{err}");
    let (code, out, _) = tracelane(&["memory", &fixture("edge/flows.json")]);
    assert_eq!(code, 0);
    assert!(out.contains("no [memory] records"), "{out}");
}

/// `tracelane memory SNAPSHOT [--at]`: the allocator snapshot's report —
/// the out-of-memory explained, and the state at a moment after the peak.
#[test]
fn memory_reads_an_allocator_snapshot_and_explains_its_oom() {
    let f = fixture("memory-snapshots/snap_oom_fragmented_cuda.pickle");
    let (code, out, err) = tracelane(&["memory", &f, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let d = &v["snapshot"]["devices"][0];
    assert_eq!(d["peak_allocated_bytes"], 671088640);
    assert_eq!(d["ooms"][0]["cause"], "fragmentation");
    assert!(d["at"].is_null());
    let (code, out, err) = tracelane(&["memory", &f, "--at", "500", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let at = &v["snapshot"]["devices"][0]["at"];
    assert_eq!(at["allocated_bytes"], 671088640);
    let (code, out, _) = tracelane(&["memory", &f]);
    assert_eq!(code, 0);
    assert!(
        out.contains("out of memory") && out.contains("fragmentation"),
        "{out}"
    );
}

/// `tracelane memory BASELINE OTHER` with two allocator snapshots compares
/// them: JSON with each side's figures and the lines that changed; the
/// table names both; `--at` is refused (two are compared at their peaks).
#[test]
fn memory_compares_two_allocator_snapshots() {
    let a = fixture("memory-snapshots/snap_train_cuda.pickle");
    let b = fixture("memory-snapshots/snap_expandable_cuda.pickle");
    let (code, out, err) = tracelane(&["memory", &a, &b, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["baseline"], "snap_train_cuda.pickle");
    assert_eq!(v["other"], "snap_expandable_cuda.pickle");
    let d = &v["devices"][0];
    assert_eq!(d["baseline"]["peak_allocated_bytes"], 100389888);
    assert!(d["holders"][0]["change_bytes"].as_i64().unwrap() > 0);
    let (code, out, _) = tracelane(&["memory", &a, &b]);
    assert_eq!(code, 0);
    assert!(
        out.contains("snap_train_cuda.pickle (baseline) against snap_expandable_cuda.pickle"),
        "{out}"
    );
    let (code, _, err) = tracelane(&["memory", &a, &b, "--at", "5"]);
    assert_eq!(code, 2);
    assert!(err.contains("--at"), "{err}");
}

#[test]
fn rocpd_database_reads_as_its_json_records() {
    // The same run as rocprofv3's JSON and as its rocpd SQLite database:
    // the kernel rows equal the independent reading of the JSON.
    let oracle: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("rocprof/sys_trace.oracle.json")).unwrap(),
    )
    .unwrap();
    let (code, out, err) = tracelane(&[
        "ops",
        &fixture("rocprof/sys_trace.rocpd.db"),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    for (name, want) in oracle["kernels"].as_object().unwrap() {
        let r = rows
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name.as_str())
            .unwrap_or_else(|| panic!("no row {name}: {out}"));
        assert_eq!(r["calls"], want["count"], "{name}");
        let us = want["total_ns"].as_f64().unwrap() / 1e3;
        assert_eq!(r["device_total_us"].as_f64().unwrap(), us, "{name}");
    }
    let (code, out, err) = tracelane(&["info", &fixture("rocprof/sys_trace.rocpd.db")]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("rocpd database"), "{out}");
    assert!(out.contains("device_by_args: 15"), "{out}");
}

#[test]
fn a_profile_run_folder_opens_as_one_session() {
    // plugins/profile/<run>/: its hosts' XPlane files stacked; the JSON
    // beside them passed over.
    let run = fixture("xplane/run/plugins/profile/2026_12_06_04_00_00");
    let (code, out, err) = tracelane(&["ops", &run, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let stats: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(stats["device_planes"], 4, "{out}");
    // Two hosts: twice the one host's device time.
    let (_, one, _) = tracelane(&[
        "ops",
        &fixture("xplane/gpu_rules.xplane.pb"),
        "--format",
        "json",
    ]);
    let one: serde_json::Value = serde_json::from_str(&one).unwrap();
    assert_eq!(
        stats["device_total_ps"].as_u64().unwrap(),
        2 * one["device_total_ps"].as_u64().unwrap()
    );
}

#[test]
fn diff_compares_the_device_asked_for() {
    // Two GPUs' run against one GPU's: `--device 1` compares A's device 1
    // (B has only device 0: given once, it would be asked of B too).
    let (a, b) = (
        fixture("xplane/two_gpus.xplane.pb"),
        fixture("xplane/stripped_full.xplane.pb"),
    );
    let json = |extra: &[&str]| {
        let mut args = vec!["diff", a.as_str(), b.as_str(), "--format", "json"];
        args.extend_from_slice(extra);
        let (code, out, err) = tracelane(&args);
        (code, out, err)
    };
    let (code, out, err) = json(&["--device", "1", "--device", "0"]);
    assert_eq!(code, 0, "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    // Device 1's kernels each take 1 µs more: 11 kernels, 52 µs against 41.
    assert_eq!(r["total_us"], serde_json::json!([52.0, 41.0]), "{out}");
    let (code, _, err) = json(&["--device", "1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("B has no device 1 (its devices: 0)"), "{err}");
}

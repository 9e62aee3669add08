//! Insights: every rule fires on a fixture made for it (or a real trace
//! that has the problem) and stays quiet on one that does not; the CI
//! gate's verdicts on the RMSNorm and HTA pairs.

mod common;

use tracelane_core::analysis::gate::{gate, Verdict};
use tracelane_core::analysis::insights::{insights, Finding, InsightsReport};
use tracelane_core::analysis::Scope;
use tracelane_core::import::neuron_device::import_profile;
use tracelane_core::{import_bytes, ImportOptions, Trace};

fn trace(rel: &str) -> Trace {
    if rel.ends_with(".gz") {
        import_bytes(&common::gunzip(rel), ImportOptions::default()).unwrap()
    } else {
        common::load(rel)
    }
}

fn report(t: &Trace, scope: &Scope) -> InsightsReport {
    insights(t, scope, &|i| t.slice_args_json(i).to_string()).unwrap()
}

fn of<'a>(r: &'a InsightsReport, rule: &str) -> Vec<&'a Finding> {
    r.findings.iter().filter(|f| f.rule == rule).collect()
}

fn number<'a>(f: &'a Finding, name: &str) -> &'a str {
    f.evidence
        .numbers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("{}: no {name:?} in {:?}", f.rule, f.evidence.numbers))
}

fn quiet(r: &InsightsReport, rule: &str) {
    assert!(
        of(r, rule).is_empty(),
        "{rule} fired on {}: {:?}",
        r.scope,
        of(r, rule).iter().map(|f| &f.title).collect::<Vec<_>>()
    );
    let check = r.checks.iter().find(|c| c.rule == rule).unwrap();
    assert_eq!(check.fired, 0);
    assert!(!check.why.is_empty(), "{rule}: a quiet rule says why");
}

const RMSNORM_OPS: [&str; 6] = [
    "aten::pow",
    "aten::mean",
    "aten::add",
    "aten::rsqrt",
    "aten::mul",
    "aten::mul",
];

#[test]
fn the_naive_rmsnorm_capture_yields_one_fusion_finding_listing_its_six_ops() {
    let t = trace("torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz");
    let r = report(&t, &Scope::Whole);
    let f = of(&r, "fusion");
    assert_eq!(f.len(), 1);
    let f = f[0];
    assert_eq!(f.evidence.ops, RMSNORM_OPS);
    assert!(f.title.starts_with("RMSNorm"), "{}", f.title);
    assert!(f.action.contains("torch.nn.functional.rms_norm"));
    assert!(f.action.contains("torch.compile"));
    // Five calls of the function in the capture; one dispatch each.
    assert_eq!(number(f, "occurrences"), "5");
    assert_eq!(number(f, "dispatches saved"), "25");
    assert_eq!(f.evidence.slice_count, 30);
    assert!(f.gain_ns > 0);
    // Bounded by the critical path.
    assert!(f.gain_ns <= r.key.critical_path_ns.unwrap());
    assert_eq!(r.findings[0].rule, "fusion");
}

#[test]
fn the_fused_and_compiled_rmsnorm_captures_yield_no_fusion_finding() {
    for rel in [
        "torch-cpu/rmsnorm_fused_cpu.pt.trace.json.gz",
        "torch-cpu/rmsnorm_compiled_cpu.pt.trace.json.gz",
    ] {
        quiet(&report(&trace(rel), &Scope::Whole), "fusion");
    }
}

#[test]
fn torchneuron_regions_naive_fires_with_its_six_device_events_fused_and_compiled_do_not() {
    let t = trace("neuron-provisional/torchneuron_rmsnorm.json");
    let naive = report(
        &t,
        &Scope::Region {
            name: "rmsnorm_naive".into(),
        },
    );
    let f = of(&naive, "fusion");
    assert_eq!(f.len(), 1);
    assert_eq!(
        f[0].evidence.ops,
        [
            "aten::mul",
            "aten::mean",
            "aten::add",
            "aten::rsqrt",
            "aten::mul",
            "aten::mul"
        ]
    );
    assert_eq!(number(f[0], "device events per chain"), "6");
    assert_eq!(number(f[0], "launches saved"), "5");
    assert_eq!(number(f[0], "device time"), "2,355 µs");
    // The estimate keeps the longest kernel (735 µs) of the 2,365 µs the
    // chain spans: 1,630 µs, less than the 1,952 µs the article's fused op
    // saved (2,355 → 403 µs).
    assert_eq!(f[0].gain_ns, 1_630_000);
    for region in ["rmsnorm_fused", "rmsnorm_compiled"] {
        quiet(
            &report(
                &t,
                &Scope::Region {
                    name: region.into(),
                },
            ),
            "fusion",
        );
    }
}

#[test]
fn a_gpu_chain_with_recorded_shapes_fires_and_shapes_that_do_not_broadcast_break_it() {
    let r = report(&trace("insights/rmsnorm_gpu_shapes.json"), &Scope::Whole);
    let f = of(&r, "fusion");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].evidence.ops, RMSNORM_OPS);
    assert_eq!(number(f[0], "occurrences"), "2");
    assert_eq!(number(f[0], "launches saved"), "10");
    assert!(!f[0].evidence.numbers.iter().any(|(n, _)| n == "shapes"));
    quiet(
        &report(
            &trace("insights/shapes_do_not_broadcast.json"),
            &Scope::Whole,
        ),
        "fusion",
    );
}

#[test]
fn a_device_waiting_on_the_host_is_host_bound_and_a_synchronous_runtime_is_named() {
    // The Neuron system profile beside its device profile: nrt_execute
    // returns after the execution it started, every time.
    let t = import_profile(common::tree_files("neuron-provisional/system_device")).unwrap();
    let r = whole(&t);
    let f = of(&r, "host_bound");
    assert_eq!(f.len(), 1, "{:?}", r.checks);
    assert_eq!(
        number(
            f[0],
            "launch calls that return after their device work ends"
        ),
        "3 of 3"
    );
    assert!(f[0].action.contains("nrta_"), "{}", f[0].action);
    // The system profile alone: its executions last what the device clock's
    // nc_start/nc_stop pair says (228 µs, not the 620 µs of its duration
    // field), inside the nrt_execute calls that started them — synchronous
    // too — and most of the host's time between them is in no recorded op.
    let r = whole(&trace("neuron-provisional/system_profile.json"));
    let f = of(&r, "host_bound");
    assert_eq!(f.len(), 1);
    assert!(f[0].action.contains("nrta_"), "{}", f[0].action);
    assert!(f[0].action.contains("no recorded op"), "{}", f[0].action);
    assert!(f[0].gain_ns > 0);
    // A GPU trace whose device waits 16 s on the host's first conv2d.
    let r = whole(&trace("public/hta_simple_add_a100.json.gz"));
    let f = of(&r, "host_bound");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].evidence.ops[0], "aten::conv2d");
    // …and inside it, where the host's time went: cudaFree (CUDA's
    // context creation on first use), not the outermost frame.
    assert!(
        number(
            f[0],
            "host self time in those gaps (op, runtime call or Python frame)"
        )
        .starts_with("cudaFree "),
        "{:?}",
        f[0].evidence.numbers
    );
    assert_eq!(r.findings[0].rule, "host_bound");
    // Quiet: a busy device, a launch-bound trace (that rule says it), a
    // device idle less than half the time.
    quiet(
        &whole(&trace("neuron-provisional/torchneuron_rmsnorm.json")),
        "host_bound",
    );
    let nccl = whole(&trace("public/hta_nccl_2rank_rank0.json.gz"));
    assert_eq!(of(&nccl, "launch_bound").len(), 1);
    quiet(&nccl, "host_bound");
    quiet(
        &whole(&trace("public/hta_large_216k_events.json.gz")),
        "host_bound",
    );
}

#[test]
fn pageable_copies_and_blocking_syncs_are_counted_with_their_slices() {
    let t = trace("public/hta_simple_add_a100.json.gz");
    let r = report(&t, &Scope::Whole);
    let p = of(&r, "pageable_copy");
    assert_eq!(p.len(), 1);
    assert_eq!(number(p[0], "copies"), "16");
    // Each copy and its runtime call.
    assert_eq!(p[0].evidence.slice_count, 32);
    let copies = p[0]
        .evidence
        .slices
        .iter()
        .filter(|&&s| t.slice_name(s as usize) == "Memcpy HtoD (Pageable -> Device)")
        .count();
    assert_eq!(copies, 16);
    let s = of(&r, "blocking_sync");
    assert_eq!(s.len(), 1);
    // Every one in the trace, in a step or not: 16 under .cpu()'s copy.
    assert_eq!(number(s[0], "blocking calls"), "21");
    assert_eq!(
        number(s[0], "calls"),
        "cudaStreamSynchronize ×16, cudaDeviceSynchronize ×5"
    );
    assert!(number(s[0], "made by").starts_with("aten::copy_ (a copy to or from the host"));
    assert!(s[0]
        .evidence
        .slices
        .iter()
        .all(|&i| t.slice_name(i as usize).ends_with("Synchronize")));

    let legacy = report(
        &trace("public/kineto_legacy_2021_resnet50.pt.trace.json.gz"),
        &Scope::Whole,
    );
    assert_eq!(number(of(&legacy, "pageable_copy")[0], "copies"), "12");
    assert_eq!(
        number(of(&legacy, "blocking_sync")[0], "blocking calls"),
        "13"
    );

    // Pinned copies; the one sync has nothing on the critical path.
    for rel in [
        "public/hta_compare_pair/base.json.gz",
        "public/hta_compare_pair/test.json.gz",
    ] {
        let r = report(&trace(rel), &Scope::Whole);
        quiet(&r, "pageable_copy");
        quiet(&r, "blocking_sync");
    }
}

#[test]
fn launch_bound_needs_many_short_launches_with_the_device_idle() {
    let r = report(&trace("public/hta_nccl_2rank_rank0.json.gz"), &Scope::Whole);
    let f = of(&r, "launch_bound");
    assert_eq!(f.len(), 1);
    assert_eq!(number(f[0], "launches"), "3774");
    assert!(f[0].gain_ns > 0 && f[0].gain_ns <= r.key.critical_path_ns.unwrap());
    // 16 kernels on an idle MI250: too few launches to be the bottleneck.
    quiet(
        &report(&trace("public/hta_amd_mi250_rocm.json.gz"), &Scope::Whole),
        "launch_bound",
    );
    // The device is busy more than half the time.
    quiet(
        &report(
            &trace("neuron-provisional/torchneuron_rmsnorm.json"),
            &Scope::Whole,
        ),
        "launch_bound",
    );
}

#[test]
fn layout_conversions_over_a_tenth_of_device_time_fire() {
    let r = report(&trace("insights/layout_heavy.json"), &Scope::Whole);
    let f = of(&r, "layout_conversion");
    assert_eq!(f.len(), 1);
    assert_eq!(number(f[0], "kernels"), "8");
    assert_eq!(number(f[0], "share of device time"), "37.5 %");
    assert!(f[0].evidence.ops.contains(&"aten::contiguous".to_string()));
    assert!(f[0].evidence.ops.contains(&"nchwToNhwc".to_string()));
    // 0.6 % of device time in the A100 trace.
    quiet(
        &report(&trace("public/hta_simple_add_a100.json.gz"), &Scope::Whole),
        "layout_conversion",
    );
}

#[test]
fn communication_exposure_and_outliers() {
    let r = report(&trace("insights/collective_outlier.json"), &Scope::Whole);
    let f = of(&r, "collective_outlier");
    assert_eq!(f.len(), 1);
    assert_eq!(number(f[0], "outliers"), "1");
    assert_eq!(number(f[0], "median"), "100 µs");
    assert_eq!(f[0].gain_ns, 400_000);
    assert_eq!(f[0].evidence.slices.len(), 1);

    let large = report(
        &trace("public/hta_large_216k_events.json.gz"),
        &Scope::Whole,
    );
    assert_eq!(of(&large, "exposed_communication").len(), 1);
    // 914 of 2,020 all-reduces over 2× the median are two message sizes,
    // not outliers.
    quiet(&large, "collective_outlier");
    assert!(large
        .checks
        .iter()
        .any(|c| c.rule == "collective_outlier" && c.why.contains("two populations")));

    let rms = report(
        &trace("torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz"),
        &Scope::Whole,
    );
    quiet(&rms, "exposed_communication");
    quiet(&rms, "collective_outlier");
}

#[test]
fn a_compiling_first_step_is_a_warmup_finding() {
    let r = report(&trace("insights/warmup_compile.json"), &Scope::Whole);
    let f = of(&r, "warmup");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].gain_ns, 90_000_000);
    assert!(f[0].title.ends_with("(torch.compile)"), "{}", f[0].title);
    assert_eq!(f[0].evidence.ranges.len(), 1);
    assert_eq!(r.key.steps, 5);
    assert_eq!(r.key.step_median_ns, Some(10_000_000));
    quiet(
        &report(
            &trace("public/kineto_legacy_2021_resnet50.pt.trace.json.gz"),
            &Scope::Whole,
        ),
        "warmup",
    );
}

fn neuron_profile() -> Trace {
    import_profile(common::profile_files("neuron-provisional/device_profile")).unwrap()
}

#[test]
fn the_neuron_device_profile_meets_the_summary_viewers_conditions() {
    let t = neuron_profile();
    let r = report(&t, &Scope::Whole);
    let expected = common::expected("neuron-provisional/device_profile.expected.json");
    let roof = &expected["parquet"]["roofline"];
    // The key numbers are the Summary table's.
    let close = |x: Option<f64>, key: &str| {
        let want = roof[key].as_f64().unwrap();
        assert!(
            (x.unwrap() - want).abs() < 0.05,
            "{key}: {x:?} against {want}"
        );
    };
    close(r.key.mfu_pct, "summary_mfu_estimated_percent");
    close(r.key.hfu_pct, "summary_hfu_estimated_percent");
    close(r.key.mbu_pct, "summary_mbu_estimated_percent");
    let tr = of(&r, "neuron_transpose");
    assert_eq!(tr.len(), 1);
    let share = 100.0 * roof["transpose_flops"].as_f64().unwrap()
        / roof["hardware_flops"].as_f64().unwrap();
    assert_eq!(number(tr[0], "share"), format!("{share:.1} %"));
    assert!(tr[0].evidence.ops.contains(&"transpose.11".to_string()));
    assert_eq!(of(&r, "neuron_spill").len(), 1);
    assert_eq!(of(&r, "neuron_utilization").len(), 1);
    // A host-side Neuron trace has no device profile.
    let sys = report(
        &trace("neuron-provisional/system_profile.json"),
        &Scope::Whole,
    );
    for rule in [
        "neuron_transpose",
        "neuron_spill",
        "neuron_active_flops",
        "neuron_dma_size",
        "neuron_engine_imbalance",
        "neuron_utilization",
    ] {
        quiet(&sys, rule);
    }
}

fn profile(rel: &str) -> InsightsReport {
    whole(&import_profile(common::profile_files(rel)).unwrap())
}

#[test]
fn small_dma_small_matmuls_and_engine_imbalance_fire_on_their_profiles_only() {
    // The provisional profile: 8 KiB packets, matmuls 512 wide, loads
    // over all 16 DMA engines, the Tensor engine the busiest.
    let base = profile("neuron-provisional/device_profile");
    for rule in [
        "neuron_active_flops",
        "neuron_dma_size",
        "neuron_engine_imbalance",
    ] {
        quiet(&base, rule);
    }

    // 1 KiB packets: every packet is evidence.
    let t = import_profile(common::profile_files(
        "insights/neuron_small_dma/device_profile",
    ))
    .unwrap();
    let r = whole(&t);
    let f = of(&r, "neuron_dma_size");
    assert_eq!(f.len(), 1, "{:?}", r.checks);
    let p = t.device_profile.as_deref().unwrap();
    assert_eq!(number(f[0], "average packet"), "1024 B");
    assert_eq!(
        number(f[0], "the profile's Summary average_dma_size"),
        "1024 B"
    );
    assert_eq!(number(f[0], "DMA packets"), p.dma.len().to_string());
    assert_eq!(f[0].evidence.slice_count, p.dma.len());
    assert!(f[0].gain_ns > 0);
    for &s in &f[0].evidence.slices {
        assert!(p.dma.slice.contains(&s), "evidence is DMA packets");
    }
    quiet(&r, "neuron_active_flops");
    quiet(&r, "neuron_engine_imbalance");

    // Matmuls 128 wide: model FLOPs over active FLOPs as the profile's
    // own Summary gives them.
    let t = import_profile(common::profile_files(
        "insights/neuron_small_matmul/device_profile",
    ))
    .unwrap();
    let r = whole(&t);
    let f = of(&r, "neuron_active_flops");
    assert_eq!(f.len(), 1, "{:?}", r.checks);
    let p = t.device_profile.as_deref().unwrap();
    let peak = p.meta_f64("tensor_engine_num_rows").unwrap()
        * p.meta_f64("tensor_engine_num_cols").unwrap()
        * 2.0
        * p.meta_f64("tensor_engine_clock_freq").unwrap()
        * 1e9;
    let share = 100.0 * p.summary("model_flops").unwrap()
        / (peak * p.summary("tensor_engine_active_time").unwrap());
    assert!(share < 50.0);
    assert_eq!(number(f[0], "share"), format!("{share:.1} %"));
    assert!(f[0].evidence.ops.contains(&"dot.12".to_string()));
    quiet(&r, "neuron_dma_size");
    quiet(&r, "neuron_engine_imbalance");

    // PSUM copies on the Vector engine, transfers on 4 of 16 DMA engines.
    let r = profile("insights/neuron_imbalance/device_profile");
    let f = of(&r, "neuron_engine_imbalance");
    let keys: Vec<&str> = f.iter().map(|f| f.key.as_str()).collect();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(keys.contains(&"neuron_engine_imbalance:dma"));
    assert!(keys.contains(&"neuron_engine_imbalance:compute:Vector"));
    let dma = f.iter().find(|f| f.key.ends_with(":dma")).unwrap();
    assert_eq!(number(dma, "engines used"), "4 of 16");
    let vector = f.iter().find(|f| f.key.ends_with(":Vector")).unwrap();
    assert!(number(vector, "Vector's opcodes").contains("TENSOR_COPY"));
    quiet(&r, "neuron_dma_size");
}

#[test]
fn every_rule_reports_a_verdict_and_findings_are_ranked_by_gain() {
    let r = report(&trace("public/hta_simple_add_a100.json.gz"), &Scope::Whole);
    let ids: Vec<&str> = r.checks.iter().map(|c| c.rule.as_str()).collect();
    let all: Vec<&str> = tracelane_core::analysis::insights::RULES
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(ids, all);
    assert!(r.findings.windows(2).all(|w| w[0].gain_ns >= w[1].gain_ns));
    assert!(r.findings.iter().all(|f| f.gain_ns > 0));
}

fn whole(t: &Trace) -> InsightsReport {
    report(t, &Scope::Whole)
}

#[test]
fn the_gate_passes_the_fused_rmsnorm_and_fails_the_naive_one() {
    let naive = trace("torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz");
    let fused = trace("torch-cpu/rmsnorm_fused_cpu.pt.trace.json.gz");
    let (ni, fi) = (whole(&naive), whole(&fused));
    let better = gate(&naive, &ni, &fused, &fi, Some(5.0));
    assert_eq!(better.verdict, Verdict::Pass);
    assert!(better.new_findings.is_empty());
    assert_eq!(better.resolved_findings.len(), 1);
    let worse = gate(&fused, &fi, &naive, &ni, Some(5.0));
    assert_eq!(worse.verdict, Verdict::Regression);
    assert_eq!(worse.new_findings.len(), 1);
    assert_eq!(worse.new_findings[0].rule, "fusion");
    assert_eq!(worse.slower[0].name, "aten::mul");
    // No threshold: a report, never a failure.
    assert_eq!(
        gate(&fused, &fi, &naive, &ni, None).verdict,
        Verdict::Report
    );
}

#[test]
fn the_gate_passes_the_hta_compare_pair_per_step() {
    let base = trace("public/hta_compare_pair/base.json.gz");
    let test = trace("public/hta_compare_pair/test.json.gz");
    let r = gate(&base, &whole(&base), &test, &whole(&test), Some(5.0));
    assert!(r.unit.starts_with("per step"), "{}", r.unit);
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.summary);
    // HTA's trace diff: ops the test run added.
    assert!(r
        .slower
        .iter()
        .any(|d| d.name == "AddmmBackward0" && d.status == "added"));
    // A 0 % threshold fails on any slower gated metric; this pair's step
    // time is equal and its device time smaller.
    assert_eq!(
        gate(&base, &whole(&base), &test, &whole(&test), Some(0.0)).verdict,
        Verdict::Pass
    );
}

#[test]
fn automatic_regions_find_steps_labels_collective_gaps_and_module_layers() {
    use tracelane_core::analysis::regions::{regions, RegionKind};
    let t = trace("torch-regions/module_steps_cpu.pt.trace.json.gz");
    let want = common::expected("torch-regions/module_steps_cpu.expected.json");
    let steps = want["steps"].as_u64().unwrap() as usize;
    let per_step = |k: &str| want["per_step"][k].as_u64().unwrap() as usize;
    let r = regions(&t);
    let count = |kind: RegionKind, prefix: &str| -> usize {
        r.groups
            .iter()
            .filter(|g| g.kind == kind && g.name.starts_with(prefix))
            .map(|g| g.occurrences.len())
            .sum()
    };
    assert_eq!(r.groups[0].kind, RegionKind::Step);
    assert_eq!(r.groups[0].occurrences.len(), steps);
    for class in ["Net", "Block", "Linear"] {
        assert_eq!(
            count(RegionKind::Module, &format!("{class}_")),
            per_step(class) * steps,
            "{class}"
        );
    }
    // Each module instance is a layer: Linear_0 … Linear_3, once per step.
    let linears: Vec<&str> = r
        .groups
        .iter()
        .filter(|g| g.name.starts_with("Linear_"))
        .map(|g| g.name.as_str())
        .collect();
    assert_eq!(linears, ["Linear_0", "Linear_1", "Linear_2", "Linear_3"]);
    assert_eq!(
        count(RegionKind::Label, "optimizer"),
        per_step("optimizer") * steps
    );
    // Between consecutive all-reduces of a step: one group per position,
    // each once per step; the all-reduces' own labels are not labels.
    let gaps: Vec<_> = r
        .groups
        .iter()
        .filter(|g| g.kind == RegionKind::BetweenCollectives)
        .collect();
    assert_eq!(gaps.len(), per_step("all_reduce") - 1);
    assert!(gaps.iter().all(|g| g.occurrences.len() == steps));
    assert_eq!(count(RegionKind::Label, "gloo:"), 0);
    // Tukey's fence needs four occurrences and marks only what is over it.
    for g in &r.groups {
        assert_eq!(g.fence_ns.is_some(), g.occurrences.len() >= 4, "{}", g.name);
        assert_eq!(
            g.outliers,
            g.occurrences.iter().filter(|o| o.outlier).count()
        );
        if let Some(f) = g.fence_ns {
            assert!(g.occurrences.iter().all(|o| o.outlier == (o.dur_ns() > f)));
        }
    }
}

#[test]
fn compiled_regions_and_a_trace_without_annotations() {
    use tracelane_core::analysis::regions::{regions, RegionKind};
    let r = regions(&trace("torch-cpu/rmsnorm_compiled_cpu.pt.trace.json.gz"));
    let compiled = r
        .groups
        .iter()
        .find(|g| g.kind == RegionKind::Compiled && g.name == "Torch-Compiled Region: 0/0")
        .unwrap();
    assert_eq!(compiled.occurrences.len(), 5);
    assert!(r
        .groups
        .iter()
        .any(|g| g.kind == RegionKind::Label && g.name == "rmsnorm_compiled"));
    assert!(regions(&trace("edge/python_frames.json")).groups.is_empty());
}

#[test]
fn dynamo_frames_of_a_disabled_function_are_not_compilation() {
    // The optimizer's step passes through torch/_dynamo/eval_frame.py in a
    // with_stack trace; nothing here is compiled.
    let r = report(
        &trace("torch-regions/module_steps_cpu.pt.trace.json.gz"),
        &Scope::Whole,
    );
    let w = of(&r, "warmup");
    assert_eq!(w.len(), 1);
    assert!(!w[0].title.contains("torch.compile"), "{}", w[0].title);
    assert!(w[0].action.starts_with("exclude warm-up"));
}

#[test]
fn a_copy_waiting_with_nothing_queued_is_a_blocking_call_not_a_slow_host() {
    let t = trace("edge/blocking_copy_nothing_queued.json");
    let r = report(&t, &Scope::Whole);
    quiet(&r, "host_bound");
    let f = of(&r, "blocking_sync");
    assert_eq!(f.len(), 1);
    let f = f[0];
    assert!(
        f.title.contains("hipMemcpyWithStream under aten::copy_")
            && f.title.contains("in sample (decode.py:77)")
            && f.title.contains("nothing queued"),
        "{}",
        f.title
    );
    assert_eq!(number(f, "calls"), "hipMemcpyWithStream ×1");
    assert_eq!(number(f, "Python callers"), "sample (decode.py:77) ×1");
    assert!(number(f, "waiting on work not in this trace").starts_with("1 of 1"));
    // The host waited 463,100 µs; the device idled all of it but the copy.
    assert_eq!(number(f, "host time waiting in them"), "463,100 µs");
    assert_eq!(number(f, "device idle while the host waited"), "463,010 µs");
    // Evidence: the call itself, where "show on the timeline" goes.
    assert_eq!(
        t.slice_name(f.evidence.slices[0] as usize),
        "hipMemcpyWithStream"
    );
    assert!(f.gain_ns > 0 && f.gain_ns <= 463_100_000);
}

#[test]
fn a_graph_replay_is_one_launch_of_its_kernels_not_a_launch_bound_program() {
    use tracelane_core::analysis::device_time::device_time;
    use tracelane_core::analysis::frame::Mode;
    let t = trace("edge/cuda_graph_replay.json");
    let d = device_time(&t, &Scope::Whole, Mode::Exact).unwrap();
    assert_eq!(d.launches.launches, 10);
    assert_eq!(
        (d.launches.graph_launches, d.launches.graph_kernels),
        (1, 150)
    );
    // Each replayed kernel is attributed through the replay to its op.
    let k = (0..t.slices.len())
        .find(|&i| t.slice_name(i) == "graph_captured_kernel_0")
        .unwrap();
    assert_eq!(t.slice_name(t.links.launch[k] as usize), "cudaGraphLaunch");
    assert_eq!(t.slice_name(t.links.op[k] as usize), "aten::_graph_replay");
    let r = report(&t, &Scope::Whole);
    quiet(&r, "launch_bound");
    let check = r.checks.iter().find(|c| c.rule == "launch_bound").unwrap();
    assert!(
        check
            .why
            .contains("150 kernels replayed by 1 graph launches"),
        "{}",
        check.why
    );
    // No finding recommends what the trace already does.
    for f in &r.findings {
        assert!(
            !f.action.contains("capture the step in a"),
            "{}: {}",
            f.rule,
            f.action
        );
    }
}

const BEHAVIOURS: &str = "torch-cuda-behaviours";

#[test]
fn first_calls_and_lazy_loading_are_warm_up_not_a_slow_host_or_a_fusion() {
    // A real H200 capture with no warm-up: `step 0` pays cuBLAS's module
    // loading (25 ms, Kineto's overhead records) and each kernel's first
    // launch; steps 1 and 2 take under a millisecond.
    let r = whole(&trace(&format!(
        "{BEHAVIOURS}/multistream_cuda.pt.trace.json.gz"
    )));
    assert_eq!(r.findings[0].rule, "warmup", "{:?}", titles(&r));
    assert_eq!(
        number(&r.findings[0], "warm-up durations"),
        "step 0 61,539 µs"
    );
    let once = of(&r, "one_time_work");
    assert_eq!(once.len(), 1);
    assert!(number(once[0], "records").starts_with("Runtime Triggered Module Loading ×2 25,045 µs"));
    assert!(once[0].action.contains("CUDA_MODULE_LOADING"));
    // What is left for the other rules is the steady state's.
    let host = of(&r, "host_bound");
    assert!(
        host.iter().all(|f| f.gain_ns < 1_000_000),
        "{:?}",
        titles(&r)
    );
    let fusion = of(&r, "fusion");
    assert_eq!(fusion.len(), 1);
    assert!(fusion[0].gain_ns < 1_000_000, "{}", fusion[0].gain_basis);
    assert!(number(
        fusion[0],
        "first calls left out (over 1.5× the median chain)"
    )
    .starts_with("1, "));
    // A graph replay captured cold: warm-up first, never "use CUDA graphs".
    let r = whole(&trace(&format!(
        "{BEHAVIOURS}/cuda_graph_cuda.pt.trace.json.gz"
    )));
    assert_eq!(r.findings[0].rule, "warmup", "{:?}", titles(&r));
    assert!(r
        .findings
        .iter()
        .all(|f| !f.action.contains("capture the step in a")));
    // Blocking calls: no numbered steps, so the host's first calls stay the
    // host's, named op by op; the lazy loading is said apart.
    let r = whole(&trace(&format!(
        "{BEHAVIOURS}/blocking_cuda.pt.trace.json.gz"
    )));
    let host = of(&r, "host_bound");
    assert_eq!(host.len(), 1);
    assert!(number(host[0], "outermost ops in those gaps").starts_with("aten::gt "));
    assert_eq!(
        number(
            host[0],
            "warm-up, one-time loading and profiler overhead in those gaps"
        ),
        "3,341 µs"
    );
    assert_eq!(of(&r, "one_time_work").len(), 1);
    assert_eq!(of(&r, "blocking_sync").len(), 1);
}

fn titles(r: &InsightsReport) -> Vec<&str> {
    r.findings.iter().map(|f| f.title.as_str()).collect()
}

/// Findings that fail their own evidence check (`insights::verify`), on
/// the whole trace and on each step.
fn evidence_failures(name: &str, t: &Trace) -> Vec<String> {
    let mut scopes = vec![Scope::Whole];
    let steps = tracelane_core::analysis::scope::numbered_steps(t);
    scopes.extend(steps.iter().take(4).map(|s| Scope::Step { n: s.n }));
    let mut bad = Vec::new();
    for scope in scopes {
        let Ok(r) = insights(t, &scope, &|i| t.slice_args_json(i).to_string()) else {
            continue;
        };
        bad.extend(
            r.notes
                .iter()
                .filter(|n| n.contains("fails its evidence check"))
                .map(|n| format!("{name} ({}): {n}", r.scope)),
        );
    }
    bad
}

#[test]
fn every_finding_on_every_fixture_passes_its_evidence_check() {
    let files = common::real_trace_files();
    let mut bad = Vec::new();
    let mut checked = 0;
    for p in &files {
        let Ok(bytes) = std::fs::read(p) else {
            continue;
        };
        let Ok(t) = import_bytes(&bytes, ImportOptions::default()) else {
            continue;
        };
        checked += 1;
        bad.extend(evidence_failures(&p.to_string_lossy(), &t));
    }
    assert!(checked >= 40, "only {checked} traces imported");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

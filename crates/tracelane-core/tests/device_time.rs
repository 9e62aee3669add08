//! The exact mode's device-time report: its parts add up on every fixture,
//! no event is counted twice across steps, and the provisional TorchNeuron
//! trace gives the numbers worked out by hand from its events.

mod common;

use tracelane_core::analysis::device_time::{counter_series, device_time, IdleCategory};
use tracelane_core::analysis::frame::Mode;
use tracelane_core::analysis::Scope;
use tracelane_core::model::Trace;
use tracelane_core::{import_bytes, ImportOptions};

const FIXTURES: [&str; 11] = [
    "public/hta_simple_add_a100.json.gz",
    "public/hta_amd_mi250_rocm.json.gz",
    "public/hta_triton_example.json.gz",
    "public/hta_nccl_2rank_rank0.json.gz",
    "public/hta_large_216k_events.json.gz",
    "public/hta_cpu_only_rank34.json.gz",
    "public/kineto_legacy_2021_resnet50.pt.trace.json.gz",
    "neuron-provisional/torchneuron_rmsnorm.json",
    "neuron-provisional/system_profile.json",
    "perfetto/neuron_like_system.pftrace",
    "torch-cpu/mlp_train_cpu.pt.trace.json.gz",
];

#[test]
fn breakdown_parts_add_up_to_the_span_on_every_fixture() {
    for rel in FIXTURES {
        let t = common::load(rel);
        let r = device_time(&t, &Scope::Whole, Mode::Exact).unwrap();
        for d in &r.devices {
            assert_eq!(d.exposed_parts_ns(), d.span_ns, "{rel} {}", d.device);
            assert_eq!(d.busy_ns + d.idle_ns, d.span_ns, "{rel}");
            assert_eq!(
                d.compute_ns + d.non_compute_ns + d.idle_ns,
                d.span_ns,
                "{rel}"
            );
            assert!(d.idle_ns >= 0 && d.busy_ns >= 0, "{rel}");
        }
        // Every device event has one type, so the type table's stretches
        // cover the busy time exactly once (one device here or summed).
        let busy: i64 = r.devices.iter().map(|d| d.busy_ns).sum();
        let typed: i64 = r.kernel_types.iter().map(|k| k.time_ns).sum();
        if r.devices.len() == 1 {
            assert_eq!(typed, busy, "{rel}");
        } else {
            assert!(typed <= busy, "{rel}");
        }
        // Idle per lane: only real gaps, never negative.
        for i in r.idle.iter().flatten() {
            assert!(i.idle_ns > 0 && i.gaps > 0, "{rel} {i:?}");
        }
        let l = &r.launches;
        assert!(l.delay_max_ns >= 0 && l.delay_total_ns >= 0, "{rel}");
        assert_eq!(
            l.delay_histogram.iter().map(|b| b.1).sum::<u64>(),
            l.launches,
            "{rel}"
        );
        for q in r.queues.iter().flatten() {
            assert!(q.max >= 1 && q.time_weighted_mean <= q.max as f64, "{rel}");
        }
    }
}

#[test]
fn steps_split_the_device_work_without_counting_any_twice() {
    let t = common::load("public/hta_large_216k_events.json.gz");
    let whole = device_time(&t, &Scope::Whole, Mode::Exact).unwrap();
    let count = |r: &tracelane_core::analysis::device_time::DeviceTimeReport| -> u64 {
        r.kernels.iter().map(|k| k.count).sum()
    };
    let mut in_steps = 0;
    let mut n = 0;
    for step in 0..100 {
        let Ok(r) = device_time(&t, &Scope::Step { n: step }, Mode::Exact) else {
            continue;
        };
        n += 1;
        in_steps += count(&r);
        for d in &r.devices {
            assert_eq!(d.busy_ns + d.idle_ns, d.span_ns);
        }
    }
    assert!(n >= 2, "steps found: {n}");
    assert!(in_steps <= count(&whole), "{in_steps} > {}", count(&whole));
    assert!(in_steps > 0);
}

/// `torchneuron_rmsnorm.json`: eight `neuron_dispatch` calls (25 µs each)
/// and the device windows they launched on NeuronCore 0:
/// [1041, 1461] [1463, 1763] [1765, 1865] [1867, 2047] [2049, 2669]
/// [2671, 3406] [3554, 3957.3] [4105.3, 4480.8] µs.
#[test]
fn torchneuron_breakdown_matches_the_hand_computed_figures() {
    let t = common::load("neuron-provisional/torchneuron_rmsnorm.json");
    let r = device_time(&t, &Scope::Whole, Mode::Exact).unwrap();
    assert_eq!(r.devices.len(), 1);
    let d = &r.devices[0];
    // busy = 420+300+100+180+620+735+403.3+375.5; span = 4480.8 − 1041.
    assert_eq!(d.busy_ns, 3_133_800);
    assert_eq!(d.span_ns, 3_439_800);
    assert_eq!(d.idle_ns, 306_000);
    let idle = r.idle.as_ref().unwrap();
    let get = |c: IdleCategory| idle.iter().find(|i| i.category == c).unwrap();
    // Five 2 µs gaps between back-to-back windows; two 148 µs gaps after
    // which the next dispatch (3528, 4079.3) came after the core drained
    // (3406, 3957.3).
    assert_eq!(
        (
            get(IdleCategory::KernelWait).idle_ns,
            get(IdleCategory::KernelWait).gaps
        ),
        (10_000, 5)
    );
    assert_eq!(
        (
            get(IdleCategory::HostWait).idle_ns,
            get(IdleCategory::HostWait).gaps
        ),
        (296_000, 2)
    );
    // Delays (start − dispatch end): 1, 378, 635, 692, 829, 1406, 1, 1 µs.
    let l = &r.launches;
    assert_eq!(l.launches, 8);
    assert_eq!(l.delay_total_ns, 3_943_000);
    assert_eq!(l.delay_max_ns, 1_406_000);
    assert_eq!(l.delay_outliers, 5);
    // Six dispatches (1015 … 1240) before the second window starts at 1463:
    // five are waiting at 1240.
    let q = r.queues.as_ref().unwrap();
    assert_eq!(q.len(), 1);
    assert_eq!(q[0].max, 5);
}

/// `system_profile.json`: `nrt_execute` is synchronous — each NeuronCore
/// execution starts inside the call that launched it, so the delay from
/// the call's end is 0 for all six, and the wait is measured from its start.
#[test]
fn a_synchronous_runtimes_wait_is_measured_from_the_calls_start() {
    let t = common::load("neuron-provisional/system_profile.json");
    let l = device_time(&t, &Scope::Whole, Mode::Exact)
        .unwrap()
        .launches;
    assert_eq!(
        (l.launches, l.started_before_return, l.delay_total_ns),
        (6, 6, 0)
    );
    assert!(l.from_call_start_total_ns > 0);
    assert!(l.from_call_start_max_ns <= l.from_call_start_total_ns);
}

/// Counted from the raw events with Python: the A100 trace's 16
/// `Memcpy HtoD (Pageable -> Device)` carry 244,403,360 bytes in 39,080 µs,
/// all under `aten::to`; the NCCL trace has 633 layout kernels
/// (`nchwToNhwc` / `nhwcToNchw`) taking 15,120.91 µs.
#[test]
fn data_movement_matches_the_raw_events() {
    use tracelane_core::analysis::data_movement::data_movement;
    let t = common::load("public/hta_simple_add_a100.json.gz");
    let r = data_movement(&t, &Scope::Whole, &|i| t.slice_args_json(i).to_string()).unwrap();
    let htod = r.by_kind.iter().find(|k| k.kind == "HtoD").unwrap();
    assert_eq!(
        (htod.memory.as_str(), htod.count, htod.bytes, htod.time_ns),
        ("pageable", 16, 244_403_360, 39_080_000)
    );
    assert!((htod.gbps.unwrap() - 244_403_360.0 / 39_080_000.0).abs() < 1e-9);
    assert_eq!(r.by_cause[0].op, "aten::to");
    assert_eq!(r.by_cause[0].count, 16);
    let t = common::load("public/hta_nccl_2rank_rank0.json.gz");
    let r = data_movement(&t, &Scope::Whole, &|i| t.slice_args_json(i).to_string()).unwrap();
    let layout = r
        .by_kind
        .iter()
        .find(|k| k.kind == "layout kernel")
        .unwrap();
    assert_eq!((layout.count, layout.time_ns), (633, 15_120_910));
}

#[test]
fn a_compiled_regions_first_call_is_warm_up_and_says_it_compiled() {
    use tracelane_core::analysis::warmup::warmup;
    let t = common::load("torch-cpu/rmsnorm_compiled_cpu.pt.trace.json.gz");
    let w = warmup(&t, &Scope::named("rmsnorm_compiled")).unwrap();
    assert_eq!(w.occurrences.len(), 5);
    assert_eq!(w.flagged, 1);
    assert!(w.occurrences[0].warmup);
    assert!(
        w.occurrences[0]
            .reason
            .as_deref()
            .unwrap()
            .starts_with("compiles"),
        "{:?}",
        w.occurrences[0].reason
    );
    assert!(w.median_ns < w.median_all_ns);
}

fn trace(events: &str) -> Trace {
    let json = format!(r#"{{"traceEvents":[{events}]}}"#);
    import_bytes(json.as_bytes(), ImportOptions::default()).unwrap()
}

const TWO_KERNELS: &str = r#"
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":100},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":10,"args":{"correlation":1}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":80,"dur":10,"args":{"correlation":2}},
  {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":30,"dur":20,"args":{"stream":7,"correlation":1,"device":0}},
  {"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce","pid":0,"tid":7,"ts":95,"dur":10,"args":{"stream":7,"correlation":2,"device":0}}
"#;

#[test]
fn breakdown_parts_add_up_to_the_span() {
    let t = trace(TWO_KERNELS);
    for mode in [Mode::Exact, Mode::Hta05] {
        let r = device_time(&t, &Scope::Whole, mode).unwrap();
        let d = &r.devices[0];
        assert_eq!(d.span_ns, 75_000, "{mode:?}");
        assert_eq!(d.idle_ns, 45_000);
        assert_eq!(d.compute_ns, 20_000);
        assert_eq!(d.non_compute_ns, 10_000);
        assert_eq!(d.exposed_parts_ns(), d.span_ns);
    }
}

#[test]
fn a_gap_after_a_late_launch_is_a_host_wait() {
    let t = trace(TWO_KERNELS);
    let r = device_time(&t, &Scope::Whole, Mode::Exact).unwrap();
    let idle = r.idle.unwrap();
    let host: Vec<_> = idle
        .iter()
        .filter(|i| i.category == IdleCategory::HostWait)
        .collect();
    assert_eq!((host.len(), host[0].idle_ns, host[0].gaps), (1, 45_000, 1));
    assert_eq!(r.longest_gaps[0].start_ns, 50_000);
}

#[test]
fn launch_delay_is_device_start_minus_launch_end() {
    let t = trace(TWO_KERNELS);
    let r = device_time(&t, &Scope::Whole, Mode::Exact).unwrap();
    assert_eq!(r.launches.launches, 2);
    assert_eq!(r.launches.delay_total_ns, 10_000 + 5_000);
    assert_eq!(r.launches.delay_max_ns, 10_000);
    // CPU 10 µs each; the kernels take 20 and 10 µs: neither is shorter.
    assert_eq!(r.launches.short_kernels, 0);
}

#[test]
fn hta_drops_the_last_profiler_step_and_what_it_launched() {
    let t = trace(
        r#"
      {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":50},
      {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":50,"dur":50},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":5,"args":{"correlation":1}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":60,"dur":5,"args":{"correlation":2}},
      {"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":7,"ts":20,"dur":10,"args":{"stream":7,"correlation":1}},
      {"ph":"X","cat":"kernel","name":"k2","pid":0,"tid":7,"ts":70,"dur":10,"args":{"stream":7,"correlation":2}}
    "#,
    );
    let hta = device_time(&t, &Scope::Whole, Mode::Hta05).unwrap();
    assert_eq!(hta.devices[0].span_ns, 10_000);
    assert!(hta.notes[0].contains("ProfilerStep#2"), "{:?}", hta.notes);
    let exact = device_time(&t, &Scope::Whole, Mode::Exact).unwrap();
    assert_eq!(exact.devices[0].span_ns, 60_000);
}

#[test]
fn a_queue_of_1024_launches_counts_as_blocked_time() {
    // 1,100 launches 1 µs apart; the kernels start from 2,000 µs on,
    // 1 µs each: the queue holds 1,024 or more from the 1,024th launch
    // (1,023 µs) until the 77th kernel has started (2,076 µs).
    let mut ev = Vec::new();
    for k in 0..1100 {
        ev.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{k},"dur":0.5,"args":{{"correlation":{c}}}}}"#, c = k + 1));
        ev.push(format!(r#"{{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":{},"dur":1,"args":{{"stream":7,"correlation":{c}}}}}"#, 2000 + k, c = k + 1));
    }
    let t = trace(&ev.join(","));
    let q = device_time(&t, &Scope::Whole, Mode::Exact)
        .unwrap()
        .queues
        .unwrap();
    assert_eq!(q[0].max, 1100);
    assert_eq!(q[0].full_queue_ns, (2076 - 1023) * 1000);
}

#[test]
fn the_queue_length_and_copy_bandwidth_become_counter_series() {
    let t = trace(
        r#"
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0,"dur":1,"args":{"correlation":1}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":2,"dur":1,"args":{"correlation":2}},
      {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10,"dur":10,"args":{"stream":7,"correlation":1}},
      {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pinned -> Device)","pid":0,"tid":7,"ts":20,"dur":4,"args":{"stream":7,"correlation":2,"bytes":8000}}
    "#,
    );
    let series = counter_series(&t, &|i| t.slice_args_json(i).to_string());
    assert_eq!(series.len(), 2);
    assert_eq!(series[0].1, "queue length · stream 7");
    assert_eq!(
        series[0].2,
        [(0, 1.0), (2_000, 2.0), (10_000, 1.0), (20_000, 0.0)]
    );
    // 8,000 bytes in 4 µs: 2 GB/s while it runs.
    assert_eq!(series[1].1, "copy bandwidth (GB/s)");
    assert_eq!(series[1].2, [(20_000, 2.0), (24_000, 0.0)]);
}

#[test]
fn queue_length_counts_launches_not_yet_started() {
    let t = trace(
        r#"
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0,"dur":1,"args":{"correlation":1}},
      {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":2,"dur":1,"args":{"correlation":2}},
      {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10,"dur":10,"args":{"stream":7,"correlation":1}},
      {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":20,"dur":10,"args":{"stream":7,"correlation":2}}
    "#,
    );
    for mode in [Mode::Exact, Mode::Hta05] {
        let q = device_time(&t, &Scope::Whole, mode)
            .unwrap()
            .queues
            .unwrap();
        assert_eq!(q.len(), 1);
        assert_eq!((q[0].max, q[0].samples), (2, 4), "{mode:?}");
        assert!((q[0].mean - 1.0).abs() < 1e-9);
        // 1 for 2 µs, 2 for 8 µs, 1 for 10 µs over 20 µs.
        assert!(
            (q[0].time_weighted_mean - 1.4).abs() < 1e-9,
            "{}",
            q[0].time_weighted_mean
        );
    }
}

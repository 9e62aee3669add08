//! Golden tests on every real trace in `tests/fixtures/`: a stable text
//! summary of what was imported and linked (`tests/golden/*.txt`), the
//! model's integrity, and conservation of device time in the op table.
//!
//! Regenerate the summaries after an intended change with
//! `TRACELANE_BLESS=1 cargo test -p tracelane-core --test real_traces`.

mod common;

use std::collections::BTreeMap;
use std::fmt::Write;

use tracelane_core::analysis::ops::{op_table, OpTableOptions};
use tracelane_core::category::Category;
use tracelane_core::model::*;

const REAL: &[&str] = &[
    "public/hta_triton_example.json.gz",
    "public/hta_simple_add_a100.json.gz",
    "public/hta_amd_mi250_rocm.json.gz",
    "public/hta_nccl_2rank_rank0.json.gz",
    "public/hta_cpu_only_rank34.json.gz",
    "public/hta_large_216k_events.json.gz",
    "public/hta_compare_pair/base.json.gz",
    "public/hta_compare_pair/test.json.gz",
    "public/kineto_legacy_2021_resnet50.pt.trace.json.gz",
    "torch-cpu/mlp_train_cpu.pt.trace.json.gz",
    "torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz",
    "torch-cpu/rmsnorm_fused_cpu.pt.trace.json.gz",
    "torch-cpu/rmsnorm_compiled_cpu.pt.trace.json.gz",
    "neuron-provisional/torchneuron_rmsnorm.json",
];

/// Indices in range, tracks contiguous and sorted, children inside parents.
fn check_integrity(name: &str, t: &Trace) {
    let s = &t.slices;
    let n = s.len();
    for col in [
        s.track.len(),
        s.dur_ns.len(),
        s.name.len(),
        s.depth.len(),
        s.parent.len(),
        t.links.op.len(),
    ] {
        assert_eq!(col, n, "{name}: column lengths differ");
    }
    let mut covered = 0u32;
    for (ti, tr) in t.tracks.iter().enumerate() {
        assert_eq!(
            tr.slices.start, covered,
            "{name}: track ranges are not contiguous"
        );
        covered = tr.slices.end;
        for i in tr.slices.start as usize..tr.slices.end as usize {
            assert_eq!(
                s.track[i].idx(),
                ti,
                "{name}: slice {i} is in the wrong track range"
            );
            assert!(s.dur_ns[i] >= 0, "{name}: negative duration");
            if i > tr.slices.start as usize {
                assert!(
                    s.start_ns[i - 1] <= s.start_ns[i],
                    "{name}: track {ti} is not sorted"
                );
            }
            let p = s.parent[i];
            if p != NO_SLICE {
                let p = p as usize;
                assert!(p < i && s.track[p] == s.track[i], "{name}: bad parent");
                assert!(
                    s.start_ns[p] <= s.start_ns[i] && s.end_ns(i) <= s.end_ns(p),
                    "{name}: child outside parent"
                );
                assert_eq!(
                    s.depth[i],
                    s.depth[p] + 1,
                    "{name}: depth is not parent's + 1"
                );
            } else {
                assert_eq!(s.depth[i], 0, "{name}: top-level slice with depth");
            }
        }
    }
    assert_eq!(
        covered as usize, n,
        "{name}: tracks do not cover all slices"
    );
    for i in 0..n {
        for v in [t.links.op[i], t.links.launch[i]] {
            assert!(
                v == NO_SLICE || (v as usize) < n,
                "{name}: link out of range"
            );
        }
        if t.links.launch[i] != NO_SLICE {
            assert_eq!(
                s.category[t.links.launch[i] as usize],
                Category::Runtime,
                "{name}: launch is not a runtime call"
            );
        }
        if t.links.op[i] != NO_SLICE {
            let c = s.category[t.links.op[i] as usize];
            assert!(
                matches!(c, Category::CpuOp | Category::UserAnnotation),
                "{name}: op link to {c:?}"
            );
        }
    }
    for k in 0..t.flows.id.len() {
        assert!(
            (t.flows.from[k] as usize) < n && (t.flows.to[k] as usize) < n,
            "{name}: flow out of range"
        );
    }
}

fn summary(t: &Trace) -> String {
    let mut out = String::new();
    let d = &t.diagnostics;
    let span = t.time_span_ns().unwrap_or((0, 0));
    writeln!(out, "format: {}", d.format).unwrap();
    writeln!(out, "json bytes: {}", d.bytes_read).unwrap();
    writeln!(out, "events by phase: {:?}", d.events_by_phase).unwrap();
    writeln!(out, "events by category: {:?}", d.events_by_category).unwrap();
    writeln!(
        out,
        "span ns: {} .. {} (clock offset {})",
        span.0, span.1, t.clock_offset_ns
    )
    .unwrap();
    writeln!(
        out,
        "slices {} instants {} counters {} flows {}",
        t.slices.len(),
        t.instants.ts_ns.len(),
        t.counters.ts_ns.len(),
        t.flows.id.len()
    )
    .unwrap();
    let mut by_cat: BTreeMap<String, (u64, i64)> = BTreeMap::new();
    for i in 0..t.slices.len() {
        let e = by_cat
            .entry(format!("{:?}", t.slices.category[i]))
            .or_default();
        e.0 += 1;
        e.1 += t.slices.dur_ns[i];
    }
    writeln!(out, "slices by role (count, total ns): {by_cat:?}").unwrap();
    for tr in &t.tracks {
        writeln!(
            out,
            "track pid={} tid={} name={:?} kind={:?} slices={} depth={}",
            t.lane_label(t.processes[tr.process.0 as usize].pid),
            t.lane_label(tr.tid),
            tr.name.map(|n| t.str(n)),
            tr.kind,
            tr.slices.end - tr.slices.start,
            tr.max_depth
        )
        .unwrap();
    }
    writeln!(out, "links: {:?}", d.links).unwrap();
    for (k, w) in &d.warnings {
        writeln!(out, "warning {k}: {} × {}", w.count, w.message()).unwrap();
    }
    let table = op_table(t, OpTableOptions::default());
    writeln!(
        out,
        "op table: {} rows, self cpu {} ns, self device {} ns, device events {} ns, without op {} ns",
        table.rows.len(),
        table.self_cpu_total_ns,
        table.self_device_total_ns,
        table.device_events_ns,
        table.device_without_op_ns
    )
    .unwrap();
    let mut rows = table.rows.clone();
    rows.sort_by(|a, b| {
        b.device_total_ns
            .cmp(&a.device_total_ns)
            .then(b.cpu_total_ns.cmp(&a.cpu_total_ns))
            .then(a.name.cmp(&b.name))
    });
    for r in rows.iter().take(12) {
        writeln!(
            out,
            "  {:?} device={} annotation={} calls={} cpu_total={} cpu_self={} device_total={} device_self={}",
            r.name, r.is_device, r.is_user_annotation, r.calls, r.cpu_total_ns, r.cpu_self_ns, r.device_total_ns, r.device_self_ns
        )
        .unwrap();
    }
    out
}

#[test]
fn real_traces_import_link_and_match_their_golden_summaries() {
    let bless = std::env::var_os("TRACELANE_BLESS").is_some();
    let golden_dir = common::fixtures().join("../golden");
    let mut diffs = Vec::new();
    for rel in REAL {
        let t = common::load(rel);
        check_integrity(rel, &t);
        let got = summary(&t);
        let file = golden_dir.join(format!("{}.txt", rel.replace('/', "__")));
        if bless {
            std::fs::create_dir_all(&golden_dir).unwrap();
            std::fs::write(&file, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&file)
            .unwrap_or_else(|_| panic!("no golden {}: run with TRACELANE_BLESS=1", file.display()));
        if want != got {
            let first = want.lines().zip(got.lines()).find(|(a, b)| a != b);
            diffs.push(format!(
                "{rel}: first difference\n  want: {:?}\n  got:  {:?}",
                first.map(|f| f.0),
                first.map(|f| f.1)
            ));
        }
    }
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// Σ self device time of host rows − what PyTorch counts twice (profiler
/// overhead) + device time with no op + what PyTorch's same-name merge
/// drops + GPU-side annotations == Σ device event durations, in ns.
#[test]
fn device_time_is_conserved_in_the_op_table() {
    for rel in REAL {
        let t = common::load(rel);
        for by_shape in [false, true] {
            let table = op_table(
                &t,
                OpTableOptions {
                    by_shape,
                    range_ns: None,
                },
            );
            let host_self: i64 = table
                .rows
                .iter()
                .filter(|r| !r.is_device)
                .map(|r| r.device_self_ns)
                .sum();
            let device_rows: i64 = table
                .rows
                .iter()
                .filter(|r| r.is_device)
                .map(|r| r.device_self_ns)
                .sum();
            let all: i64 = (0..t.slices.len())
                .filter(|&i| t.slices.category[i].is_device())
                .map(|i| t.slices.dur_ns[i])
                .sum();
            assert_eq!(
                device_rows, all,
                "{rel}: device rows do not add up to all device events"
            );
            assert_eq!(
                host_self - table.device_counted_twice_ns
                    + table.device_without_op_ns
                    + table.device_dropped_by_merge_ns
                    + table.device_annotations_ns,
                all,
                "{rel}: device time is not conserved"
            );
        }
    }
}

fn row<'a>(
    table: &'a tracelane_core::analysis::ops::OpTable,
    name: &str,
    device: bool,
) -> &'a tracelane_core::analysis::ops::OpRow {
    table
        .rows
        .iter()
        .find(|r| r.name == name && r.is_device == device)
        .unwrap_or_else(|| panic!("no row {name}"))
}

#[test]
fn triton_kernel_belongs_to_the_op_that_launched_it_through_cu_launch_kernel() {
    let t = common::load("public/hta_triton_example.json.gz");
    let s = &t.slices;
    let k = (0..s.len())
        .find(|&i| s.category[i] == Category::Kernel)
        .unwrap();
    let launch = t.links.launch[k] as usize;
    assert_eq!(t.slice_name(launch), "cuLaunchKernel");
    let op = t.links.op[k] as usize;
    assert_eq!(t.slice_name(op), "triton_poi_fused_add_cos_sin_0");
    assert_eq!(s.category[op], Category::CpuOp);
    let table = op_table(&t, OpTableOptions::default());
    let r = row(&table, "triton_poi_fused_add_cos_sin_0", false);
    assert_eq!((r.device_self_ns, r.device_total_ns), (1_760, 1_760));
    let region = row(&table, "Torch-Compiled Region: 0/0", false);
    assert_eq!((region.device_self_ns, region.device_total_ns), (0, 1_760));
}

#[test]
fn old_kineto_external_id_equal_to_correlation_falls_back_to_containment() {
    let t = common::load("public/hta_simple_add_a100.json.gz");
    let l = &t.diagnostics.links;
    assert!(l.runtime_by_containment > 300, "{l:?}");
    // Every linked kernel's op encloses its launch on the launching thread.
    let s = &t.slices;
    for i in 0..s.len() {
        let (r, o) = (t.links.launch[i], t.links.op[i]);
        if r != NO_SLICE && o != NO_SLICE {
            let (r, o) = (r as usize, o as usize);
            assert!(
                s.track[o] == s.track[r]
                    && s.start_ns[o] <= s.start_ns[r]
                    && s.end_ns(r) <= s.end_ns(o)
            );
        }
    }
}

#[test]
fn legacy_2021_schema_links_through_lower_case_external_id_and_string_tids() {
    let t = common::load("public/kineto_legacy_2021_resnet50.pt.trace.json.gz");
    let l = &t.diagnostics.links;
    assert!(l.device_by_args > 9000, "{l:?}");
    // String tid "25738" and integer 25738 are one lane.
    let s = &t.slices;
    let host: Vec<_> = t
        .tracks
        .iter()
        .filter(|tr| {
            (tr.slices.start..tr.slices.end).any(|i| s.category[i as usize] == Category::CpuOp)
        })
        .collect();
    assert_eq!(host.len(), 2, "the main thread and the autograd thread");
    assert!(host.iter().all(|tr| matches!(tr.tid, LaneId::Int(_))));
    let dev = t
        .tracks
        .iter()
        .find(|tr| matches!(tr.tid, LaneId::Str(s) if t.str(s) == "stream 7"))
        .unwrap();
    assert_eq!(dev.kind, TrackKind::DeviceStream);
}

#[test]
fn torchneuron_device_windows_feed_the_ops_device_time() {
    let t = common::load("neuron-provisional/torchneuron_rmsnorm.json");
    let expected = common::expected("neuron-provisional/torchneuron_rmsnorm.expected.json");
    let table = op_table(&t, OpTableOptions::default());
    for (op, us) in expected["device_us_by_op"].as_object().unwrap() {
        let r = row(&table, op, false);
        let want = (us.as_f64().unwrap() * 1000.0).round() as i64;
        assert_eq!(r.device_total_ns, want, "{op}");
    }
    for (region, v) in expected["regions"].as_object().unwrap() {
        let r = row(&table, region, false);
        assert_eq!(
            r.device_total_ns,
            (v["device_us"].as_f64().unwrap() * 1000.0).round() as i64,
            "{region}"
        );
    }
    // Host vs device by lane: the driver windows are device work, the runtime calls host work.
    let s = &t.slices;
    let windows = (0..s.len())
        .filter(|&i| s.category[i] == Category::DeviceWindow)
        .count();
    assert_eq!(windows, 8);
    assert_eq!(t.diagnostics.links.device_without_op, 0);
}

#[test]
fn row_details_list_launches_kernels_and_parents() {
    let t = common::load("public/hta_triton_example.json.gz");
    let table = op_table(&t, OpTableOptions::default());
    let op = row(&table, "triton_poi_fused_add_cos_sin_0", false);
    let d = tracelane_core::analysis::op_details::op_details(&t, op);
    assert_eq!(d.device_events.len(), 1);
    assert_eq!(
        (d.device_events[0].count, d.device_events[0].total_ns),
        (1, 1_760)
    );
    assert_eq!(d.runtime_calls[0].name, "cuLaunchKernel");
    assert_eq!(d.parents, [("Torch-Compiled Region: 0/0".to_string(), 1)]);
    let kernel = row(&table, "triton_poi_fused_add_cos_sin_0", true);
    let d = tracelane_core::analysis::op_details::op_details(&t, kernel);
    assert_eq!(d.runtime_calls[0].name, "cuLaunchKernel");
    assert_eq!(
        d.parents,
        [("triton_poi_fused_add_cos_sin_0".to_string(), 1)]
    );
}

/// The app asks for both groupings at once (`op_tables`, one pass over the
/// tree); each must be the table `op_table` gives on its own, whole trace
/// and a range.
#[test]
fn both_groupings_at_once_equal_each_alone() {
    use tracelane_core::analysis::ops::op_tables;
    for rel in REAL {
        let t = common::load(rel);
        let span = t.time_span_ns().unwrap();
        let mid = span.0 + (span.1 - span.0) / 2;
        for range_ns in [None, Some((span.0, mid))] {
            let (by_name, by_shape) = op_tables(&t, range_ns);
            for (got, by_shape) in [(by_name, false), (by_shape, true)] {
                let want = op_table(&t, OpTableOptions { by_shape, range_ns });
                assert_eq!(got, want, "{rel} by_shape={by_shape} range={range_ns:?}");
            }
        }
    }
}

#[test]
fn neuron_device_profile_perfetto_names_its_engine_rows_from_their_descriptors() {
    // Neuron Explorer's device-profile export (provisional fixture) names
    // each engine row only in TrackDescriptor.name (no thread_name).
    let expected = common::expected("neuron-provisional/device_profile.expected.json");
    let want = &expected["pftrace"];
    let t = common::load("neuron-provisional/device_profile_model_1.pftrace");
    assert_eq!(t.slices.len() as u64, want["slices"].as_u64().unwrap());
    assert_eq!(
        t.instants.ts_ns.len() as u64,
        want["instants"].as_u64().unwrap()
    );
    assert_eq!(
        t.counters.ts_ns.len() as u64,
        want["counter_samples"].as_u64().unwrap()
    );
    let mut named: std::collections::BTreeMap<String, u64> = Default::default();
    for tr in &t.tracks {
        if tr.slices.end > tr.slices.start {
            let name = tr.name.map(|n| t.str(n).to_string()).unwrap_or_default();
            *named.entry(name).or_default() += (tr.slices.end - tr.slices.start) as u64;
        }
    }
    let want_rows: std::collections::BTreeMap<String, u64> = want["track_slices"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect();
    assert_eq!(named, want_rows);
}

#[test]
fn perfetto_sdk_clocks_defaults_extra_counters_nesting_and_unread_fields() {
    // tools/gen_perfetto_clocks.py: timestamps as µs deltas on an
    // incremental sequence clock and as MONOTONIC values, both converted to
    // BOOTTIME through a ClockSnapshot; events on the default track; extra
    // counter values on default counter tracks; an incremental counter with
    // a unit multiplier; tracks nested under tracks; two unread fields.
    let want = common::expected("perfetto/sdk_clocks_defaults.expected.json");
    let t = common::load("perfetto/sdk_clocks_defaults.pftrace");
    let lane = |tr: &tracelane_core::model::Track| {
        tr.name
            .map(|n| t.str(n).to_string())
            .unwrap_or_else(|| t.lane_label(tr.tid))
    };
    let mut got: Vec<(String, String, i64, i64)> = (0..t.slices.len())
        .map(|i| {
            (
                lane(t.track_of(i)),
                t.slice_name(i).to_string(),
                t.slices.start_ns[i],
                t.slices.dur_ns[i],
            )
        })
        .collect();
    let mut expected: Vec<(String, String, i64, i64)> = want["slices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s[0].as_str().unwrap().to_string(),
                s[1].as_str().unwrap().to_string(),
                s[2].as_i64().unwrap(),
                s[3].as_i64().unwrap(),
            )
        })
        .collect();
    got.sort();
    expected.sort();
    assert_eq!(got, expected);
    let mut counters: Vec<(String, i64, f64)> = (0..t.counters.ts_ns.len())
        .map(|i| {
            (
                t.str(t.counters.series[i]).to_string(),
                t.counters.ts_ns[i],
                t.counters.value[i],
            )
        })
        .collect();
    let mut want_counters: Vec<(String, i64, f64)> = want["counters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c[0].as_str().unwrap().to_string(),
                c[1].as_i64().unwrap(),
                c[2].as_f64().unwrap(),
            )
        })
        .collect();
    counters.sort_by(|a, b| a.partial_cmp(b).unwrap());
    want_counters.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(counters, want_counters);
    assert_eq!(t.instants.ts_ns, [want["instant"][2].as_i64().unwrap()]);
    // Lanes with slices, in display order, and how deep each is nested.
    let order: Vec<(String, u8)> = t
        .lane_order()
        .into_iter()
        .map(|k| &t.tracks[k.idx()])
        .filter(|tr| tr.slices.end > tr.slices.start)
        .map(|tr| (lane(tr), tr.nesting))
        .collect();
    let want_order: Vec<String> = want["lane_order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        order.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
        want_order
    );
    assert!(
        order.iter().all(|(n, d)| *d == u8::from(n == "engine")),
        "{order:?}"
    );
    let d = &t.diagnostics;
    assert_eq!(d.warning_count("perfetto_unread_fields"), 2);
    assert_eq!(d.warning_count("perfetto_clock_unresolved"), 0);
}

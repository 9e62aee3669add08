//! One small fixture per edge case (`tests/fixtures/edge/`), plus inputs
//! generated here (deep nesting, a gzip bomb), and the promise that feeding
//! bytes in any chunking gives the same model.

mod common;

use std::io::Write;

use tracelane_core::analysis::ops::{op_table, OpTableOptions};
use tracelane_core::category::Category;
use tracelane_core::model::*;
use tracelane_core::{import_bytes, ImportError, ImportOptions, Importer, Trace};

fn edge(name: &str) -> Result<Trace, ImportError> {
    let bytes = std::fs::read(common::fixtures().join("edge").join(name)).unwrap();
    import_bytes(&bytes, ImportOptions::default())
}

fn names(t: &Trace) -> Vec<&str> {
    (0..t.slices.len()).map(|i| t.slice_name(i)).collect()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

#[test]
fn empty_file_is_reported_as_empty() {
    assert_eq!(edge("empty.json").unwrap_err(), ImportError::Empty);
    assert_eq!(
        edge("whitespace_only.json").unwrap_err(),
        ImportError::Empty
    );
    assert_eq!(
        import_bytes(&gzip(b""), ImportOptions::default()).unwrap_err(),
        ImportError::Empty
    );
}

#[test]
fn png_is_named_as_a_png() {
    let e = edge("image.png").unwrap_err();
    assert_eq!(
        e.to_string(),
        "not a trace: the file is a PNG image, not JSON"
    );
    let e = edge("plain_text.txt").unwrap_err();
    assert!(matches!(e, ImportError::NotJson { .. }), "{e}");
}

#[test]
fn json_that_is_not_a_trace_says_so() {
    let e = edge("not_a_trace.json").unwrap_err();
    assert!(matches!(e, ImportError::NotATrace { .. }), "{e}");
    assert!(e.to_string().contains("traceEvents"), "{e}");
    for text in [&b"42"[..], b"\"hello\"", b"[1, 2, 3]", b"null"] {
        assert!(
            import_bytes(text, ImportOptions::default()).is_err(),
            "{:?}",
            String::from_utf8_lossy(text)
        );
    }
}

#[test]
fn truncated_json_keeps_complete_events_and_warns() {
    let t = edge("truncated.json").unwrap();
    assert_eq!(names(&t), ["aten::mm", "aten::add"]);
    assert!(t.diagnostics.truncated);
    assert_eq!(t.diagnostics.warning_count("truncated"), 1);
    // A truncated .gz (a killed job) does the same.
    let full = std::fs::read(common::fixtures().join("public/hta_triton_example.json.gz")).unwrap();
    let t = import_bytes(&full[..full.len() * 2 / 3], ImportOptions::default()).unwrap();
    assert!(t.diagnostics.truncated && !t.slices.is_empty());
    assert_eq!(t.diagnostics.warning_count("gzip_truncated"), 1);
}

#[test]
fn trailing_commas_are_tolerated() {
    let t = edge("trailing_commas.json").unwrap();
    assert_eq!(names(&t), ["a", "b"]);
    assert_eq!(t.slices.external_id[0], 1);
}

#[test]
fn nesting_100k_deep_does_not_overflow_the_stack() {
    let mut deep = b"{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"deep\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1, \"args\": {\"x\": ".to_vec();
    deep.extend(std::iter::repeat_n(b'[', 100_000));
    deep.extend(std::iter::repeat_n(b']', 100_000));
    deep.extend(b"}}]}");
    let t = import_bytes(&deep, ImportOptions::default()).unwrap();
    assert_eq!(names(&t), ["deep"]);
    // As a whole document, and cut off in the middle.
    let mut bare = vec![b'['; 100_000];
    bare.extend(vec![b']'; 100_000]);
    assert!(matches!(
        import_bytes(&bare, ImportOptions::default()),
        Err(ImportError::NotATrace { .. })
    ));
    assert!(matches!(
        import_bytes(&bare[..150_000], ImportOptions::default()),
        Err(ImportError::NotATrace { .. })
    ));
}

#[test]
fn gzip_bomb_stops_at_the_callers_limit() {
    // 200 MB of whitespace inside a valid trace compresses to ~200 KB.
    let mut body = b"{\"traceEvents\": [".to_vec();
    body.extend(std::iter::repeat_n(b' ', 200_000_000));
    body.extend(b"]}");
    let bomb = gzip(&body);
    drop(body);
    assert!(bomb.len() < 1_000_000);
    let e = import_bytes(
        &bomb,
        ImportOptions {
            max_json_bytes: 10_000_000,
            ..ImportOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        e,
        ImportError::TooLarge {
            limit_bytes: 10_000_000
        }
    );
    assert!(e.to_string().contains("10 MB limit"), "{e}");
}

#[test]
fn invalid_utf8_in_a_name_is_replaced_and_counted() {
    let t = edge("invalid_utf8_name.json").unwrap();
    assert_eq!(t.slice_name(0), "bad\u{FFFD}\u{FFFD}name");
    assert_eq!(t.diagnostics.warning_count("invalid_utf8"), 1);
}

#[test]
fn nan_negative_and_huge_durations_are_counted_not_fatal() {
    let t = edge("bad_durations.json").unwrap();
    assert_eq!(names(&t), ["negative", "fine"]);
    let d = &t.diagnostics;
    assert_eq!(
        (
            d.warning_count("bad_dur"),
            d.warning_count("negative_dur"),
            d.warning_count("huge_dur")
        ),
        (1, 1, 1)
    );
    assert_eq!(t.slices.dur_ns[0], 0);
}

#[test]
fn e_without_b_is_skipped_and_unclosed_b_is_closed_at_the_end() {
    let t = edge("e_without_b.json").unwrap();
    assert_eq!(names(&t), ["outer", "inner", "never_closed", "last"]);
    assert_eq!(t.slices.dur_ns[..2], [10_000, 4_000]);
    assert_eq!(t.slices.depth[1], 1);
    // Closed at the last timestamp seen (40 + 2 µs).
    assert_eq!(t.slices.end_ns(2), 42_000);
    let d = &t.diagnostics;
    assert_eq!(
        (
            d.warning_count("e_without_b"),
            d.warning_count("unclosed_b")
        ),
        (1, 1)
    );
}

#[test]
fn duplicate_correlation_ids_are_counted() {
    let t = edge("duplicate_correlation.json").unwrap();
    assert_eq!(t.diagnostics.links.duplicate_correlation_ids, 1);
    let k = (0..t.slices.len())
        .find(|&i| t.slices.category[i] == Category::Kernel)
        .unwrap();
    assert_eq!(t.slice_name(t.links.op[k] as usize), "aten::mm");
}

#[test]
fn bare_array_form_and_exact_decimal_microseconds() {
    let t = edge("bare_array.json").unwrap();
    assert_eq!(t.slices.start_ns[0], 10_500);
    assert_eq!(t.slices.dur_ns[0], 5_250);
    assert_eq!(t.instants.ts_ns, [11_000]);
}

#[test]
fn header_keys_after_trace_events_are_read_and_display_unit_never_rescales() {
    let t = edge("header_after_events.json").unwrap();
    assert_eq!(t.clock_offset_ns, 1_700_000_000_000_000_000);
    assert_eq!(
        (t.slices.start_ns[0], t.slices.dur_ns[0]),
        (1_000_500, 1_250)
    );
    assert!(t
        .header
        .iter()
        .any(|(k, v)| k == "displayTimeUnit" && v == "\"ns\""));
}

#[test]
fn string_pids_and_tids_name_lanes_and_integer_strings_join_integer_lanes() {
    let t = edge("string_pids.json").unwrap();
    let lanes: Vec<String> = t.tracks.iter().map(|tr| t.lane_label(tr.tid)).collect();
    assert!(
        lanes.contains(&"PyTorch Profiler".to_string()) && lanes.contains(&"stream 7".to_string())
    );
    let op = names(&t).iter().position(|n| *n == "aten::empty").unwrap();
    assert_eq!(t.track_of(op).tid, LaneId::Int(25738));
    assert_eq!(t.instants.track[0], t.slices.track[op]);
    let k = names(&t).iter().position(|n| *n == "k").unwrap();
    assert_eq!(t.track_of(k).kind, TrackKind::DeviceStream);
    // Legacy lower-case "external id" links the kernel to the op.
    assert_eq!(t.links.op[k] as usize, op);
}

#[test]
fn flows_bind_to_enclosing_slices_and_link_device_work_without_args() {
    let t = edge("flows.json").unwrap();
    let k = names(&t).iter().position(|n| *n == "gemm").unwrap();
    assert_eq!(t.links.state[k], LinkState::ByFlow);
    assert_eq!(t.slice_name(t.links.launch[k] as usize), "cudaLaunchKernel");
    assert_eq!(t.slice_name(t.links.op[k] as usize), "aten::mm");
    assert_eq!(t.diagnostics.links.device_by_flow, 1);
    assert_eq!(t.diagnostics.links.flows_unmatched, 1);
    // fwdbwd flows are kept for display.
    let fwdbwd = t.strings.lookup("fwdbwd").unwrap();
    let f = t.flows.cat.iter().position(|&c| c == fwdbwd).unwrap();
    assert_eq!(t.slice_name(t.flows.to[f] as usize), "MmBackward0");
}

#[test]
fn counters_become_series() {
    let t = edge("counters.json").unwrap();
    let series: Vec<&str> = t.counters.series.iter().map(|&s| t.str(s)).collect();
    assert_eq!(series, ["memory.allocated", "memory.reserved", "bandwidth"]);
    assert_eq!(t.counters.value, [10.0, 20.0, 3.5]);
}

#[test]
fn unknown_phases_are_counted_not_fatal() {
    let t = edge("unknown_phases.json").unwrap();
    assert_eq!(names(&t), ["kept"]);
    assert_eq!(t.diagnostics.warning_count("unknown_phase"), 3);
}

#[test]
fn old_kineto_marker_naming_a_foreign_op_falls_back_to_containment() {
    let t = edge("old_kineto_unlinked_marker.json").unwrap();
    let k = names(&t).iter().position(|n| *n == "add_kernel").unwrap();
    assert_eq!(t.slice_name(t.links.op[k] as usize), "aten::add");
    assert_eq!(t.links.state[k], LinkState::ByContainment);
}

#[test]
fn runtime_call_on_another_thread_counts_under_its_op() {
    let t = edge("runtime_on_other_thread.json").unwrap();
    let table = op_table(&t, OpTableOptions::default());
    let mm = table.rows.iter().find(|r| r.name == "aten::mm").unwrap();
    // PyTorch moves the launch to the op's thread: a child, so not op self time.
    assert_eq!(
        (mm.cpu_total_ns, mm.cpu_self_ns, mm.device_total_ns),
        (20_000, 17_000, 4_000)
    );
}

#[test]
fn same_name_child_merges_into_its_parent() {
    let t = edge("same_name_merge.json").unwrap();
    let table = op_table(&t, OpTableOptions::default());
    let div = table.rows.iter().find(|r| r.name == "aten::div_").unwrap();
    // One call: the inner div_ merged away; the outer keeps its duration,
    // takes the inner one's children (copy_, the launch) and device time.
    assert_eq!(
        (div.calls, div.cpu_total_ns, div.cpu_self_ns),
        (1, 20_000, 13_000)
    );
    assert_eq!((div.device_self_ns, div.device_total_ns), (4_000, 4_000));
}

#[test]
fn html_in_names_is_kept_as_plain_text() {
    let t = edge("xss_name.json").unwrap();
    assert_eq!(t.slice_name(0), "<img src=x onerror=alert(1)>");
}

fn summary(t: &Trace) -> String {
    let table = op_table(
        t,
        OpTableOptions {
            by_shape: true,
            range_ns: None,
        },
    );
    format!(
        "{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
        t.slices.start_ns,
        t.slices.dur_ns,
        t.links.op,
        t.diagnostics.links,
        t.diagnostics.warnings.keys().collect::<Vec<_>>(),
        table.rows,
        t.args_arena.len()
    )
}

#[test]
fn any_chunking_of_the_input_gives_the_same_model() {
    for rel in [
        "public/hta_triton_example.json.gz",
        "public/hta_amd_mi250_rocm.json.gz",
        "torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz",
        "edge/e_without_b.json",
        "edge/trailing_commas.json",
        "edge/flows.json",
    ] {
        let bytes = std::fs::read(common::fixtures().join(rel)).unwrap();
        let whole = summary(&import_bytes(&bytes, ImportOptions::default()).unwrap());
        for chunk in [1usize, 3, 7, 64, 4097] {
            let mut imp = Importer::new(ImportOptions::default());
            for c in bytes.chunks(chunk) {
                imp.push(c).unwrap();
            }
            assert_eq!(
                summary(&imp.finish().unwrap()),
                whole,
                "{rel} in chunks of {chunk}"
            );
        }
    }
}

#[test]
fn an_xplane_pushed_in_chunks_with_any_size_hint_gives_the_same_model() {
    // A plane cut across chunks is given room for its declared length
    // when the hint says the input holds it; a wrong hint changes nothing.
    for rel in ["jax-cpu/mlp_train.xplane.pb", "xplane/cost.xplane.pb"] {
        let bytes = std::fs::read(common::fixtures().join(rel)).unwrap();
        let whole = summary(&import_bytes(&bytes, ImportOptions::default()).unwrap());
        let len = bytes.len() as u64;
        for hint in [0, len, len / 2, len * 4] {
            for chunk in [7usize, 4097, 65_536] {
                let mut imp = Importer::new(ImportOptions::default());
                imp.set_size_hint(hint);
                for c in bytes.chunks(chunk) {
                    imp.push(c).unwrap();
                }
                assert_eq!(
                    summary(&imp.finish().unwrap()),
                    whole,
                    "{rel} in chunks of {chunk}, size hint {hint}"
                );
            }
        }
    }
}

#[test]
fn chunks_larger_than_the_completion_window_give_the_same_model() {
    // A chunk that starts inside an event completes it from its first bytes
    // and is parsed where it lies; the model (with every event's source
    // range) must be the one of the whole input. An event longer than the
    // window (a long name) falls back to holding the chunk.
    let mut json = Vec::new();
    tracelane_core::synth::write_kineto_trace(&mut json, 3_000_000, 4).unwrap();
    let long = format!(
        r#"{{"ph":"X","cat":"cpu_op","name":"{}","pid":1,"tid":1,"ts":1,"dur":1}},"#,
        "n".repeat(200_000)
    );
    let at = json.iter().position(|&c| c == b'{').unwrap() + 1;
    let at = at + json[at..].iter().position(|&c| c == b'{').unwrap();
    json.splice(at..at, long.bytes());
    let whole = import_bytes(&json, ImportOptions::default()).unwrap();
    for chunk in [65_537usize, 100_003, 1 << 20] {
        let mut imp = Importer::new(ImportOptions::default());
        for c in json.chunks(chunk) {
            imp.push(c).unwrap();
        }
        let t = imp.finish().unwrap();
        assert_eq!(summary(&t), summary(&whole), "chunks of {chunk}");
        assert_eq!(t.slices.source, whole.slices.source, "chunks of {chunk}");
    }
}

#[test]
fn a_failed_import_can_be_retried_with_a_new_importer() {
    let mut imp = Importer::new(ImportOptions::default());
    assert!(imp.push(b"\x89PNG\r\n\x1a\n....").is_err());
    assert!(imp.push(b"more").is_err(), "a failed importer stays failed");
    assert!(import_bytes(
        br#"[{"ph":"X","name":"ok","ts":1,"dur":1}]"#,
        ImportOptions::default()
    )
    .is_ok());
}

#[test]
fn python_tracer_frames_are_on_the_timeline_but_not_in_the_op_table() {
    let t = edge("python_frames.json").unwrap();
    assert_eq!(t.slices.len(), 4);
    let table = op_table(&t, OpTableOptions::default());
    let names: Vec<&str> = table.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["MyFn", "aten::mul"]);
    // PyTorch's tree has no Python frames: aten::mul is MyFn's child.
    assert_eq!(table.rows[0].cpu_self_ns, 50_000);
}

#[test]
fn two_thread_import_of_a_large_file_equals_the_sequential_one() {
    use std::io::Read;
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    for rel in [
        "public/hta_large_216k_events.json.gz",
        "public/kineto_legacy_2021_resnet50.pt.trace.json.gz",
    ] {
        let gz = std::fs::read(common::fixtures().join(rel)).unwrap();
        let mut json = Vec::new();
        flate2::read::MultiGzDecoder::new(&gz[..])
            .read_to_end(&mut json)
            .unwrap();
        cases.push((rel.to_string(), json));
    }
    let mut synth = Vec::new();
    tracelane_core::synth::write_kineto_trace(&mut synth, 20_000_000, 7).unwrap();
    cases.push(("synth 20 MB".into(), synth));
    for (name, json) in &cases {
        let parallel = import_bytes(json, ImportOptions::default()).unwrap();
        let sequential =
            tracelane_core::import::import_bytes_sequential(json, ImportOptions::default())
                .unwrap();
        assert_eq!(summary(&parallel), summary(&sequential), "{name}");
        assert_eq!(parallel.slices.source, sequential.slices.source, "{name}");
        assert_eq!(
            parallel.slices.file_order, sequential.slices.file_order,
            "{name}"
        );
        assert_eq!(parallel.diagnostics, sequential.diagnostics, "{name}");
        let (pa, sa) = (
            parallel.slice_args_json(parallel.slices.len() - 1),
            sequential.slice_args_json(sequential.slices.len() - 1),
        );
        assert_eq!(pa, sa, "{name}");
    }
}

#[test]
fn broken_json_after_some_events_keeps_them_and_reports_once() {
    let text = br#"{"traceEvents": [{"ph": "X", "name": "ok", "pid": 1, "tid": 1, "ts": 1, "dur": 1}, {"ph": "X", "name": }, {"ph": "X", "name": "later", "ts": 5, "dur": 1}]}"#;
    for chunk in [1usize, 8, text.len()] {
        let mut imp = Importer::new(ImportOptions::default());
        for c in text.chunks(chunk) {
            imp.push(c).unwrap();
        }
        let t = imp.finish().unwrap();
        assert_eq!(names(&t), ["ok"]);
        assert_eq!(t.diagnostics.warning_count("syntax_after_events"), 1);
        assert!(!t.diagnostics.warnings.contains_key("trailing_data"));
    }
}

/// Found by the fuzzer: a UTF-8 byte-order mark split across chunks was
/// taken for non-JSON text.
#[test]
fn byte_order_mark_split_across_chunks() {
    let bytes = std::fs::read(common::fixtures().join("edge/utf8_bom.json")).unwrap();
    let whole = import_bytes(&bytes, ImportOptions::default()).map(|t| t.slices.len());
    let mut imp = Importer::new(ImportOptions::default());
    for c in bytes.chunks(1) {
        imp.push(c).unwrap();
    }
    assert_eq!(imp.finish().map(|t| t.slices.len()), whole);
}

#[test]
fn an_event_much_larger_than_the_chunks_is_read_in_linear_time() {
    // One 8 MB event pushed in 64-byte chunks: re-parsing it from the start
    // on every chunk would take ~10^12 byte reads; doubling keeps it ~10^7.
    let mut text = br#"{"traceEvents": [{"ph": "X", "name": "big", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"blob": ""#.to_vec();
    text.extend(std::iter::repeat_n(b'a', 8_000_000));
    text.extend(br#""}}]}"#);
    let mut imp = Importer::new(ImportOptions::default());
    for c in text.chunks(64) {
        imp.push(c).unwrap();
    }
    let t = imp.finish().unwrap();
    // (A quadratic importer would keep this test running for many minutes.)
    assert_eq!(names(&t), ["big"]);
}

/// Kineto's overhead activities as PyTorch 2.11's `key_averages()` counts
/// them (measured on `torch-cuda/`): CPU rows of their own that nest on the
/// process's main thread, given the device events of the op running there.
#[test]
fn profiler_overhead_nests_on_the_main_thread_and_takes_its_ops_device_time() {
    let t = edge("profiler_overhead.json").unwrap();
    let table = op_table(&t, OpTableOptions::default());
    let row = |name: &str| {
        let r = table.rows.iter().find(|r| r.name == name).unwrap();
        assert!(!r.is_device, "{name}");
        (
            r.calls,
            r.cpu_total_ns,
            r.cpu_self_ns,
            r.device_total_ns,
            r.device_self_ns,
        )
    };
    // The op: its runtime call and the buffer request are its children; its
    // kernel counts once for it and once more for each overhead inside it.
    assert_eq!(row("aten::mm"), (1, 20_000, 9_000, 9_000, 3_000));
    assert_eq!(row("cudaLaunchKernel"), (1, 6_000, 4_000, 3_000, 0));
    assert_eq!(
        row("Lazy Function Loading"),
        (1, 2_000, 2_000, 3_000, 3_000)
    );
    // One inside the op, one outside every op (no device time).
    assert_eq!(
        row("Activity Buffer Request"),
        (2, 6_000, 6_000, 3_000, 3_000)
    );
    assert_eq!(table.device_counted_twice_ns, 6_000);
    assert_eq!(table.self_device_total_ns, 3_000);
}

/// PyTorch's memory columns: a `[memory]` record counts in every CPU event
/// whose `[start, end]` holds it (both ends, any thread); self = total −
/// children's totals; a record inside no event is a `[memory]` row.
#[test]
fn memory_columns_count_records_on_both_ends_and_any_thread() {
    let t = edge("memory_columns.json").unwrap();
    let table = op_table(&t, OpTableOptions::default());
    let mem = |name: &str| {
        let r = table.rows.iter().find(|r| r.name == name).unwrap();
        (
            r.cpu_mem_bytes,
            r.cpu_self_mem_bytes,
            r.device_mem_bytes,
            r.device_self_mem_bytes,
        )
    };
    assert_eq!(mem("outer"), (70, 100, 50, 0));
    assert_eq!(mem("inner"), (-30, -30, 50, 50));
    assert_eq!(mem("[memory]"), (7, 7, 0, 0));
}

/// Neuron Explorer's system profile: the provisional fixture's expected counts.
#[test]
fn neuron_system_profile_matches_its_expected_counts() {
    let t = common::load("neuron-provisional/system_profile.json");
    let e = common::expected("neuron-provisional/system_profile.expected.json");
    assert_eq!(t.slices.len() as u64, e["events"].as_u64().unwrap());
    assert!(t
        .diagnostics
        .format
        .starts_with("Neuron Explorer system profile JSON"));
    let count = |cat: &str| {
        (0..t.slices.len())
            .filter(|&i| t.str(t.slices.cat[i]) == cat)
            .count() as u64
    };
    assert_eq!(
        count("cpu_op"),
        e["by_source"]["framework"].as_u64().unwrap()
    );
    assert_eq!(
        count("neuron_rt"),
        e["by_source"]["neuron_rt"].as_u64().unwrap()
    );
    assert_eq!(
        count("neuron_hw"),
        e["by_source"]["neuron_hw"].as_u64().unwrap()
    );
    // 12 flow links: 6 framework → nrt_execute, 6 nrt_execute → nc_exec_running;
    // each hardware event reaches its op through them.
    assert!(t.diagnostics.time_unit_decision.contains("12 flow links"));
    let hw: Vec<usize> = (0..t.slices.len())
        .filter(|&i| t.str(t.slices.cat[i]) == "neuron_hw")
        .collect();
    for &k in &hw {
        let op = t.links.op[k];
        assert_ne!(op, tracelane_core::model::NO_SLICE);
        assert_eq!(t.str(t.slices.cat[op as usize]), "cpu_op");
        assert_eq!(t.slice_name(t.links.launch[k] as usize), "nrt_execute");
    }
    // Memory and CPU samples as counters: one sample per series per entry.
    let series = |prefix: &str| {
        (0..t.counters.ts_ns.len())
            .filter(|&i| t.str(t.counters.series[i]).starts_with(prefix))
            .count() as u64
    };
    assert_eq!(
        series("host memory.usage"),
        e["mem_usage_samples"].as_u64().unwrap()
    );
    assert_eq!(
        series("cpu util %"),
        e["cpu_util_samples"].as_u64().unwrap()
    );
    assert_eq!(
        t.diagnostics.warning_count("neuron_profile_warning"),
        e["warnings"].as_u64().unwrap()
    );
    // The op table gives each op the device time of its hardware execution.
    let table = op_table(&t, OpTableOptions::default());
    let device: i64 = table
        .rows
        .iter()
        .filter(|r| !r.is_device)
        .map(|r| r.device_self_ns)
        .sum();
    let hw_total: i64 = hw.iter().map(|&k| t.slices.dur_ns[k]).sum();
    assert_eq!(device, hw_total);
}

/// Real Neuron versions differ: a bare list, ids as numbers or strings, a
/// scalar flow id, `exec_id` under `args`, microsecond timestamps, fields
/// nobody documented (kept), an event whose layer nothing tells (counted,
/// shown on its own lane, out of the op table).
#[test]
fn neuron_variants_are_read_leniently_and_nothing_is_dropped_silently() {
    let t = edge("neuron_variants.json").unwrap();
    assert_eq!(t.slices.len(), 4);
    assert_eq!(t.diagnostics.warning_count("neuron_event_skipped"), 0);
    assert_eq!(t.diagnostics.warning_count("neuron_unknown_layer"), 1);
    let orphan = (0..4).find(|&i| t.slice_name(i) == "orphan").unwrap();
    assert_eq!(
        t.lane_label(t.processes[t.track_of(orphan).process.0 as usize].pid),
        "instance/PID:?/unknown layer"
    );
    assert!(op_table(&t, OpTableOptions::default())
        .rows
        .iter()
        .all(|r| r.name != "orphan"));
    let find = |name: &str| {
        (0..t.slices.len())
            .find(|&i| t.slice_name(i) == name)
            .unwrap()
    };
    let (op, rt, hw) = (
        find("aten::relu"),
        find("nrt_execute"),
        find("nc_exec_running"),
    );
    // `timestamp_unit: us` on the framework event; ns elsewhere, to the ns.
    assert_eq!(t.slices.start_ns[op], 1_000_000_000);
    assert_eq!(t.slices.dur_ns[op], 10_000);
    assert_eq!(t.slices.start_ns[hw], 1_000_020_000_001);
    assert_eq!(t.links.op[hw] as usize, op);
    assert_eq!(t.links.launch[hw] as usize, rt);
    // The event's own text is its args: every field, as written.
    let args = |s: usize| serde_json::from_str::<serde_json::Value>(&t.slice_args_json(s)).unwrap();
    assert_eq!(args(op)["custom_field"], serde_json::json!({"kept": true}));
    assert_eq!(args(hw)["args"]["exec_id"], 5);
    let lane = |s: usize| {
        let tr = t.track_of(s);
        format!(
            "{} {}",
            t.lane_label(t.processes[tr.process.0 as usize].pid),
            t.lane_label(tr.tid)
        )
    };
    assert_eq!(lane(op), "i-1/PID:77/framework TID:3");
    assert_eq!(lane(rt), "i-1/PID:77/neuron_rt NC:2");
    assert_eq!(lane(hw), "i-1/PID:77/neuron_hw NC2:1");
}

/// Perfetto's own encoder wrote these (`../shared/tools/gen_perfetto_traces.py`):
/// descriptors, nested slices, instants, double counters, flows between tracks.
#[test]
fn perfetto_trackevent_trace_matches_its_expected_counts() {
    let t = common::load("perfetto/neuron_like_system.pftrace");
    let e = common::expected("perfetto/neuron_like_system.expected.json");
    assert!(t.diagnostics.format.starts_with("Perfetto protobuf trace"));
    assert_eq!(t.slices.len() as u64, e["slices"].as_u64().unwrap());
    assert_eq!(
        t.instants.ts_ns.len() as u64,
        e["instants"].as_u64().unwrap()
    );
    assert_eq!(
        t.counters.ts_ns.len() as u64,
        e["counter_samples"].as_u64().unwrap()
    );
    assert_eq!(t.flows.id.len() as u64, e["flows"].as_u64().unwrap());
    let first = (0..t.slices.len())
        .map(|i| t.slices.start_ns[i])
        .min()
        .unwrap();
    assert_eq!(first, e["first_ts_ns"].as_i64().unwrap());
    for (suffix, n) in e["tracks"].as_object().unwrap() {
        let on_track: usize = t
            .tracks
            .iter()
            .filter(|tr| t.lane_label(tr.tid).contains(suffix.as_str()))
            .map(|tr| tr.slices.len())
            .sum();
        assert_eq!(on_track as u64, n.as_u64().unwrap(), "{suffix}");
    }
    // nrt_execute ⊃ kmgr_exec_core ⊃ kbl_exec_core: three depths.
    let kbl = (0..t.slices.len())
        .find(|&i| t.slice_name(i) == "kbl_exec_core")
        .unwrap();
    assert_eq!(t.slices.depth[kbl], 2);
    // Debug annotations are args.
    let hw = (0..t.slices.len())
        .find(|&i| t.slice_name(i).starts_with("nc_exec_running"))
        .unwrap();
    assert!(
        t.slice_args_json(hw).contains("\"exec_id\":0"),
        "{}",
        t.slice_args_json(hw)
    );
    // Every flow joins two slices: op → runtime → hardware.
    for k in 0..t.flows.id.len() {
        assert_ne!(t.flows.from[k], NO_SLICE);
        assert_ne!(t.flows.to[k], NO_SLICE);
    }
}

#[test]
fn perfetto_interned_names_follow_their_sequence_and_chunks_do_not_matter() {
    let bytes =
        std::fs::read(common::fixtures().join("perfetto/sdk_style_interned.pftrace")).unwrap();
    let e = common::expected("perfetto/sdk_style_interned.expected.json");
    let whole = import_bytes(&bytes, ImportOptions::default()).unwrap();
    assert_eq!(whole.slices.len() as u64, e["slices"].as_u64().unwrap());
    assert_eq!(
        whole.instants.ts_ns.len() as u64,
        e["instants"].as_u64().unwrap()
    );
    let mut names: Vec<&str> = (0..whole.slices.len())
        .map(|i| whole.slice_name(i))
        .collect();
    names.extend((0..whole.instants.ts_ns.len()).map(|i| whole.str(whole.instants.name[i])));
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len() as u64, e["distinct_names"].as_u64().unwrap());
    assert_eq!(
        names,
        ["aten::add", "aten::matmul", "aten::mm", "cudaLaunchKernel"]
    );
    // Seven-byte chunks: packets split anywhere give the same model.
    let mut imp = Importer::new(ImportOptions::default());
    for chunk in bytes.chunks(7) {
        imp.push(chunk).unwrap();
    }
    let chunked = imp.finish().unwrap();
    assert_eq!(chunked.slices.start_ns, whole.slices.start_ns);
    assert_eq!(chunked.slices.depth, whole.slices.depth);
    // Gzip'd, it is the same trace.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&bytes).unwrap();
    let unzipped = import_bytes(&gz.finish().unwrap(), ImportOptions::default()).unwrap();
    assert_eq!(unzipped.slices.len(), whole.slices.len());
    assert!(unzipped.diagnostics.format.ends_with("(gzip)"));
    // Cut mid-packet: what came before stays, and it is said.
    let cut = import_bytes(&bytes[..bytes.len() - 5], ImportOptions::default()).unwrap();
    assert_eq!(cut.diagnostics.warning_count("perfetto_truncated"), 1);
    assert!(cut.slices.len() <= whole.slices.len());
}

#[test]
fn data_after_the_end_is_one_warning_however_it_arrives() {
    let json = br#"[{"ph":"X","name":"a","ts":1,"dur":1}] {"ph":"X"}, {"ph":"X"} trailing"#;
    for chunk in [1usize, 5, json.len()] {
        let mut imp = Importer::new(ImportOptions::default());
        for c in json.chunks(chunk) {
            imp.push(c).unwrap();
        }
        let t = imp.finish().unwrap();
        assert_eq!(
            t.diagnostics.warning_count("trailing_data"),
            1,
            "chunks of {chunk}"
        );
    }
}

/// The real MI250 trace whose lanes `tools/make_edge_from_real.py` re-labels.
fn rocm_original() -> Trace {
    let bytes =
        std::fs::read(common::fixtures().join("public/hta_amd_mi250_rocm.json.gz")).unwrap();
    import_bytes(&bytes, ImportOptions::default()).unwrap()
}

#[test]
fn host_pid_labelled_as_a_gpu_keeps_its_cpu_side() {
    // In a container the host is pid 1, and Kineto labels pid 1 "GPU 1" too.
    let t = edge("rocm_container_pid1.json.gz").unwrap();
    let mut pid1_host_lanes: Vec<_> = t
        .tracks
        .iter()
        .filter(|tr| {
            t.processes[tr.process.0 as usize].pid == LaneId::Int(1)
                && tr.kind == TrackKind::HostThread
        })
        .map(|tr| t.lane_label(tr.tid))
        .collect();
    pid1_host_lanes.sort();
    assert_eq!(pid1_host_lanes, ["1", "58"]);
    let want = op_table(&rocm_original(), OpTableOptions::default());
    let got = op_table(&t, OpTableOptions::default());
    assert!(got.self_cpu_total_ns > 0);
    assert_eq!(got, want);
    assert_eq!(t.diagnostics.warning_count("process_labels_conflict"), 1);
    assert_eq!(t.diagnostics.warning_count("lane_label_conflict"), 2);
    assert_eq!(
        t.diagnostics.links.runtime_without_op,
        rocm_original().diagnostics.links.runtime_without_op
    );
}

#[test]
fn runtime_calls_on_a_device_submission_queue_are_cpu_rows() {
    // MTIA files its runtime calls on "Stream N Submission Queue" threads of
    // the device's pid; PyTorch counts them as CPU-side runtime rows.
    let t = edge("mtia_submission_queue.json").unwrap();
    let got = op_table(&t, OpTableOptions::default());
    let want = op_table(&rocm_original(), OpTableOptions::default());
    assert_eq!(got, want);
    let launch = got
        .rows
        .iter()
        .find(|r| r.name == "hipLaunchKernel")
        .unwrap();
    assert!(launch.calls > 0 && launch.cpu_total_ns > 0 && !launch.is_device);
}

#[test]
fn xplane_protobuf_is_read_as_xplane_not_as_an_empty_perfetto_trace() {
    // Both start with a length-delimited field 1; the plane's fields tell.
    let whole = edge("jax_profile.xplane.pb").unwrap();
    assert!(
        whole.diagnostics.format.starts_with("XPlane"),
        "{}",
        whole.diagnostics.format
    );
    assert!(!whole.slices.is_empty());
    let bytes = std::fs::read(common::fixtures().join("edge/jax_profile.xplane.pb")).unwrap();
    let gz = import_bytes(&gzip(&bytes), ImportOptions::default()).unwrap();
    assert_eq!(gz.slices.start_ns, whole.slices.start_ns);
    // Any chunking reads alike: planes cut anywhere are held until whole.
    let mut imp = Importer::new(ImportOptions::default());
    bytes.chunks(3).try_for_each(|c| imp.push(c)).unwrap();
    let chunked = imp.finish().unwrap();
    assert_eq!(chunked.slices.start_ns, whole.slices.start_ns);
    assert_eq!(chunked.slices.name, whole.slices.name);
}

#[test]
fn protobuf_that_is_not_a_perfetto_trace_says_so() {
    // field 1 (a message) holding field 3 as a string: a TracePacket's
    // field 3 is a varint.
    let bytes = b"\x0a\x07\x1a\x05hello\x0a\x02\x08\x01";
    let e = import_bytes(bytes, ImportOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "not a trace: the file is a protobuf file that is not a Perfetto trace, not JSON"
    );
}

#[test]
fn a_neuron_system_profile_streams_in_any_chunking_and_keeps_what_a_cut_leaves() {
    let bytes =
        std::fs::read(common::fixtures().join("neuron-provisional/system_profile.json")).unwrap();
    let whole = import_bytes(&bytes, ImportOptions::default()).unwrap();
    for chunk in [7usize, 4097] {
        let mut imp = Importer::new(ImportOptions::default());
        for c in bytes.chunks(chunk) {
            imp.push(c).unwrap();
        }
        let t = imp.finish().unwrap();
        assert_eq!(summary(&t), summary(&whole), "chunks of {chunk}");
    }
    // Cut inside the event list: the complete events stay, the cut is said.
    let cut = &bytes[..bytes.len() * 2 / 3];
    let t = import_bytes(cut, ImportOptions::default()).unwrap();
    assert!(!t.slices.is_empty() && t.slices.len() < whole.slices.len());
    assert!(t.diagnostics.truncated);
    assert_eq!(t.diagnostics.warning_count("truncated"), 1);
}

#[test]
fn sqlite_database_says_how_to_convert_a_rocpd_database() {
    let bytes = std::fs::read(common::fixtures().join("rocprof/sys_trace.rocpd.db")).unwrap();
    let e = import_bytes(&bytes, ImportOptions::default()).unwrap_err();
    assert!(e.to_string().contains("rocpd convert -f pftrace"), "{e}");
}

/// Found by the fuzzer: a GPU kernel's `offset_ps` and `duration_ps` stats
/// near i64's ends overflowed the op tables' plane span (a panic in a
/// debug build, a wrong span in a release one); the sums now saturate.
#[test]
fn xplane_stat_times_near_the_integer_ends_do_not_overflow_the_op_tables() {
    let bytes = std::fs::read(common::fixtures().join("edge/xplane_stat_times_overflow.xplane.pb"))
        .unwrap();
    let t = import_bytes(&bytes, ImportOptions::default()).unwrap();
    let stats = tracelane_core::analysis::xla_ops::xla_op_stats(&t).unwrap();
    assert!(stats.device_idle_ps <= stats.device_total_ps);
}

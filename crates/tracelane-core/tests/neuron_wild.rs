//! Neuron inputs in the shapes public code written against real captures
//! attests (`shared/research/neuron-wild.md`): one fixture per shape in
//! `tests/fixtures/neuron-wild/`, each checked against the figures the
//! script that wrote it computed (`tools/gen_neuron_wild.py`,
//! `tools/gen_torchneuron_run.py`), never against tracelane's own output.

mod common;

use std::collections::BTreeMap;

use tracelane_core::analysis::ops::{op_table, OpTableOptions};
use tracelane_core::category::Category;
use tracelane_core::import::import_set;
use tracelane_core::model::{Trace, NO_SLICE};
use tracelane_core::{import_bytes, ImportError, ImportOptions};

fn wild(name: &str) -> Result<Trace, ImportError> {
    let bytes = std::fs::read(common::fixtures().join("neuron-wild").join(name)).unwrap();
    import_bytes(&bytes, ImportOptions::default())
}

fn expected(name: &str) -> serde_json::Value {
    common::expected(&format!("neuron-wild/{name}"))
}

fn n(v: &serde_json::Value) -> i64 {
    v.as_i64()
        .unwrap_or_else(|| panic!("{v} is not an integer"))
}

/// An expected figure per op name.
fn by_name(v: &serde_json::Value) -> BTreeMap<String, i64> {
    v.as_object()
        .unwrap()
        .iter()
        .filter(|(_, v)| n(v) > 0)
        .map(|(k, v)| (k.clone(), n(v)))
        .collect()
}

fn run(rel: &str) -> Trace {
    import_set(common::profile_files(rel), ImportOptions::default())
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Device self time per op name (ops, not device rows), in ns.
fn device_by_op(t: &Trace) -> BTreeMap<String, i64> {
    op_table(t, OpTableOptions::default())
        .rows
        .iter()
        .filter(|r| !r.is_device && r.device_self_ns > 0)
        .map(|r| (r.name.clone(), r.device_self_ns))
        .collect()
}

#[test]
fn an_explorer_export_with_sorted_keys_lnc2_and_its_tables_is_read_whole() {
    let e = expected("system_profile.explorer.expected.json");
    let t = wild("system_profile.explorer.json").unwrap();
    assert_eq!(t.slices.len() as i64, n(&e["slices"]));
    assert_eq!(t.instants.ts_ns.len() as i64, n(&e["markers_as_instants"]));
    let d = &t.diagnostics;
    assert!(d.readings.iter().any(|r| r.contains("in sorted order")));
    assert!(d
        .readings
        .iter()
        .any(|r| r.starts_with(&format!("LNC = 2: {} executions", n(&e["lnc_executions"])))));
    // The op table groups names as PyTorch does: the source is an attribute.
    let device = device_by_op(&t);
    let want = by_name(&e["device_self_ns_by_op"]);
    assert_eq!(device, want);
    let mm = (0..t.slices.len())
        .find(|&i| t.slice_name(i) == "aten::mm")
        .unwrap();
    assert!(t
        .slice_args_json(mm)
        .contains("\"name_source\":\"trace.json\""));
    // Both physical cores stay on their lanes, out of the device time.
    let parts = (0..t.slices.len())
        .filter(|&i| t.str(t.slices.cat[i]) == "neuron_hw_core")
        .count() as i64;
    assert_eq!(parts, 2 * n(&e["lnc_executions"]));
    let table = op_table(&t, OpTableOptions::default());
    assert_eq!(
        table.device_without_op_ns,
        n(&e["collective_ns_without_op"])
    );
    // HBM: one lane per category in use, peaks as written, capacity kept.
    let sys = t.neuron_system.as_ref().unwrap();
    assert_eq!(sys.hbm_capacity_bytes, Some(n(&e["hbm_capacity_bytes"])));
    assert_eq!(sys.ntff_version.as_deref(), Some("5"));
    let hbm = &sys.hbm[0];
    for (cat, peak) in e["hbm_peak_bytes"].as_object().unwrap() {
        assert_eq!(hbm.peak(cat), peak.as_f64().unwrap(), "{cat}");
    }
    assert_eq!(
        hbm.peak_bytes.len(),
        e["hbm_peak_bytes"].as_object().unwrap().len()
    );
    assert_eq!(
        t.counters.ts_ns.len() as i64,
        n(&e["cpu_util_samples"])
            // usage and percent_usage: two series.
            + 2 * n(&e["mem_usage_samples"])
            + n(&e["hbm_rows"]) * (e["hbm_peak_bytes"].as_object().unwrap().len() as i64 + 1)
    );
    assert_eq!(sys.device_profiles.len(), 1);
}

#[test]
fn a_filtered_export_joins_by_exec_id_and_sequence_id_and_says_events_were_dropped() {
    let e = expected("system_profile.filtered.expected.json");
    let t = wild("system_profile.filtered.json").unwrap();
    let want = by_name(&e["device_self_ns_by_op"]);
    assert_eq!(device_by_op(&t), want);
    let d = &t.diagnostics;
    assert!(d.truncated);
    assert_eq!(
        d.warning_count("neuron_events_dropped") as i64,
        n(&e["dropped_by_profiler"])
    );
    assert!(d
        .readings
        .iter()
        .any(|r| r.contains("no flow_id on any event")));
    // Every execution says which key joined it.
    let joined = (0..t.slices.len())
        .filter(|&i| {
            t.slices.category[i] == Category::Kernel && t.slice_name(i) == "nc_exec_running"
        })
        .filter(|&i| t.slice_args_json(i).contains("linked_by"))
        .count() as i64;
    assert_eq!(joined, n(&e["lnc_executions"]));
}

#[test]
fn a_beta_export_is_read_by_type_and_group_and_an_untold_event_is_shown() {
    let e = expected("system_profile.beta.expected.json");
    let t = wild("system_profile.beta.json").unwrap();
    assert_eq!(t.slices.len() as i64, n(&e["events"]));
    let d = &t.diagnostics;
    assert_eq!(
        d.warning_count("neuron_unknown_layer") as i64,
        n(&e["unknown_layer"])
    );
    let layers = d
        .readings
        .iter()
        .find(|r| r.starts_with("event layers"))
        .unwrap();
    assert!(layers.contains(&format!("{} by type/group", n(&e["by_type_group"]))));
    assert!(layers.contains(&format!("{} by their name", n(&e["by_name"]))));
    let lane = |name: &str| {
        let i = (0..t.slices.len())
            .find(|&i| t.slice_name(i) == name)
            .unwrap();
        t.track_label(t.slices.track[i].idx())
    };
    assert_eq!(
        lane("PjitFunction(matmul_allgather)"),
        e["framework_thread"]
    );
    assert_eq!(lane("nrt_tensor_write"), e["runtime_lane"]);
}

#[test]
fn a_fetched_runtime_trace_pairs_its_halves_and_counts_the_unpaired() {
    let e = expected("nrt_sys_trace_fetch.expected.json");
    let t = wild("nrt_sys_trace_fetch.json").unwrap();
    assert_eq!(t.slices.len() as i64, n(&e["slices"]));
    assert_eq!(t.instants.ts_ns.len() as i64, n(&e["instants"]));
    assert_eq!(
        t.diagnostics.warning_count("neuron_unpaired") as i64,
        n(&e["unpaired"])
    );
    // Each logical execution: first start to last end; device durations
    // from the device clock.
    let mut logical: Vec<(i64, String)> = (0..t.slices.len())
        .filter(|&i| t.slices.category[i] == Category::Kernel)
        .map(|i| (t.slices.dur_ns[i], t.slice_args_json(i).to_string()))
        .collect();
    logical.sort();
    let mut want: Vec<i64> = e["executions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| n(&x["execution_ns"]))
        .collect();
    want.sort();
    assert_eq!(logical.iter().map(|l| l.0).collect::<Vec<_>>(), want);
    for x in e["executions"].as_array().unwrap() {
        let seq = format!("\"nrta_seq_id\":{}", n(&x["nrta_seq_id"]));
        assert!(
            logical.iter().any(|(_, a)| a.contains(&seq)
                && a.contains(&format!("\"exec_id\":{}", n(&x["exec_id"])))),
            "{seq}"
        );
    }
}

#[test]
fn a_fetched_trace_cut_mid_record_keeps_what_was_complete() {
    let e = expected("nrt_sys_trace_fetch.cut.expected.json");
    let t = wild("nrt_sys_trace_fetch.cut.json").unwrap();
    assert!(t.diagnostics.truncated);
    assert_eq!(t.diagnostics.warning_count("truncated"), 1);
    assert_eq!(
        t.diagnostics.warning_count("neuron_unpaired") as i64,
        n(&e["unpaired"])
    );
    let read = t
        .diagnostics
        .readings
        .iter()
        .find(|r| r.starts_with("nrt_sys_trace_fetch_events"))
        .unwrap();
    assert!(read.contains(&format!(
        "{} records → {} start/stop pairs",
        n(&e["records"]),
        n(&e["pairs"])
    )));
}

#[test]
fn companions_alone_and_tables_without_events_are_refused_with_what_they_are() {
    for (name, says) in [
        ("summary.json", "summary JSON"),
        ("metadata_only.json", "no events, only 2 HBM usage rows"),
    ] {
        let err = wild(name).err().unwrap().to_string();
        assert!(err.contains(says), "{name}: {err}");
    }
    let mapping = common::profile_files("neuron-wild/torchneuron_run")
        .into_iter()
        .find(|(n, _)| n.starts_with("framework_mapping"))
        .unwrap();
    let err = import_bytes(&mapping.1, ImportOptions::default())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("TorchNeuron framework mapping"), "{err}");
}

#[test]
fn a_summary_beside_a_profile_is_read_with_its_percent_scale() {
    let e = expected("summary.expected.json");
    let mut files = vec![(
        "system_profile.json".to_string(),
        std::fs::read(common::fixtures().join("neuron-wild/system_profile.beta.json")).unwrap(),
    )];
    files.push((
        "summary.json".into(),
        std::fs::read(common::fixtures().join("neuron-wild/summary.json")).unwrap(),
    ));
    let t = import_set(files, ImportOptions::default()).unwrap();
    let s = &t.neuron_system.as_ref().unwrap().summaries;
    assert_eq!(s.len() as i64, n(&e["profiles"]));
    let device = s.iter().find(|p| p.kind == "device").unwrap();
    assert!(device
        .percent_scale
        .starts_with(e["scale"].as_str().unwrap()));
    let dma = device
        .percents
        .iter()
        .find(|(k, _)| k == "dma_active_time_percent")
        .unwrap()
        .1;
    assert!((dma - e["dma_active_time_percent_shown"].as_f64().unwrap()).abs() < 1e-9);
    let system = s.iter().find(|p| p.kind == "system").unwrap();
    assert_eq!(
        system.get("event_type_count.cc_running").unwrap() as i64,
        n(&e["event_type_count.cc_running"])
    );
}

/// The TorchNeuron join on a real PyTorch 2.15 capture: the op table is
/// PyTorch's key_averages() for the CPU columns, and each op's device time
/// is that of the executions the mapping names for it.
#[test]
fn a_torchneuron_run_is_one_trace_with_pytorchs_table_and_each_ops_device_time() {
    let e = expected("torchneuron_run.expected.json");
    let k = expected("torchneuron_run.key_averages.json");
    let t = run("neuron-wild/torchneuron_run");
    let table = op_table(&t, OpTableOptions::default());
    for (name, row) in k["rows"].as_object().unwrap() {
        let ours = table
            .rows
            .iter()
            .find(|r| &r.name == name && !r.is_device)
            .unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(ours.calls as i64, n(&row["count"]), "{name} calls");
        for (col, got) in [
            ("cpu_time_total_us", ours.cpu_total_ns),
            ("self_cpu_time_total_us", ours.cpu_self_ns),
        ] {
            let want = row[col].as_f64().unwrap();
            assert!(
                (got as f64 / 1e3 - want).abs() < 0.0015,
                "{name} {col}: {got} ns vs {want} µs"
            );
        }
    }
    // Each execution joined to the op the mapping names.
    for x in e["executions"].as_array().unwrap() {
        let seq = format!("\"nrta_seq_id\":{}", n(&x["nrta_seq_id"]));
        let d = (0..t.slices.len())
            .find(|&i| {
                t.slices.category[i] == Category::Kernel && t.slice_args_json(i).contains(&seq)
            })
            .unwrap_or_else(|| panic!("no execution {seq}"));
        let op = t.links.op[d];
        assert_ne!(op, NO_SLICE, "{seq}");
        let first = &x["ops"][0];
        assert_eq!(
            t.slice_name(op as usize),
            first["name"].as_str().unwrap(),
            "{seq}"
        );
        // On the PyTorch trace's clock, as the generator reads it.
        assert_eq!(
            t.slices.start_ns[op as usize],
            n(&first["start_ns"]),
            "{seq}"
        );
    }
    let device: BTreeMap<String, i64> = table
        .rows
        .iter()
        .filter(|r| !r.is_device && r.device_total_ns > 0)
        .map(|r| (r.name.clone(), r.device_total_ns))
        .collect();
    let want = by_name(&e["device_total_ns_by_name"]);
    assert_eq!(device, want);
    assert_eq!(device_by_op(&t).values().sum::<i64>(), n(&e["device_ns"]));
    // The profile's copies of the ops are left to the trace.
    assert!(t
        .diagnostics
        .readings
        .iter()
        .any(|r| r.starts_with(&format!("{} framework events", n(&e["framework_copies"])))));
    assert_eq!(t.diagnostics.warning_count("device_without_op"), 0);
    // The timeline's chain of an op: framework → runtime → hardware.
    let first = &e["executions"][0]["ops"][0];
    let op = (0..t.slices.len())
        .find(|&i| {
            t.slices.start_ns[i] == n(&first["start_ns"]) && t.slice_name(i) == first["name"]
        })
        .unwrap();
    let chain = tracelane_core::analysis::chain::dependency_chain(&t, op);
    let roles: Vec<&str> = chain.items.iter().map(|c| c.role.as_str()).collect();
    assert_eq!(roles, ["op", "runtime", "device"]);
    assert_eq!(
        t.slice_name(chain.items[2].slice as usize),
        "nc_exec_running"
    );
}

#[test]
fn a_mapping_that_matches_nothing_is_counted_and_the_rest_opens() {
    let mut files = common::profile_files("neuron-wild/torchneuron_run");
    for (name, bytes) in &mut files {
        if name.starts_with("framework_mapping") {
            let text = String::from_utf8(bytes.clone()).unwrap();
            *bytes = text
                .replace(
                    "\"nrta_seq_id\": 2814749767107",
                    "\"nrta_seq_id\": 9914749767107",
                )
                .into_bytes();
        }
    }
    let t = import_set(files, ImportOptions::default()).unwrap();
    assert_eq!(t.diagnostics.links.device_by_mapping, 0);
    assert!(t.diagnostics.warning_count("neuron_mapping_unmatched") > 0);
    assert!(t
        .diagnostics
        .readings
        .iter()
        .any(|r| r.contains("is it the mapping of another run?")));
    // The trace and the profile are both there.
    assert!((0..t.slices.len()).any(|i| t.slice_name(i) == "aten::addmm"));
    assert!((0..t.slices.len()).any(|i| t.slice_name(i) == "nc_exec_running"));
}

fn insights(t: &Trace) -> tracelane_core::analysis::insights::InsightsReport {
    use tracelane_core::analysis::{insights, Scope};
    insights::insights(t, &Scope::Whole, &|i| t.slice_args_json(i).to_string()).unwrap()
}

fn fired(r: &tracelane_core::analysis::insights::InsightsReport, rule: &str) -> usize {
    r.checks.iter().find(|c| c.rule == rule).unwrap().fired
}

/// The runtime's own events, by family, as the generator summed them; the
/// rules over them fire where their events weigh on the critical path.
#[test]
fn the_runtime_events_say_why_and_their_rules_fire_where_they_weigh() {
    use tracelane_core::analysis::neuron_runtime::neuron_runtime;
    use tracelane_core::analysis::Scope;
    let e = expected("system_profile.explorer.expected.json");
    let t = wild("system_profile.explorer.json").unwrap();
    let r = neuron_runtime(&t, &Scope::Whole).unwrap();
    assert_eq!(r.executions as i64, n(&e["lnc_executions"]));
    for (id, want) in e["families"].as_object().unwrap() {
        let f = r.family(id).unwrap_or_else(|| panic!("{id}"));
        assert_eq!(f.count as i64, n(&want["count"]), "{id}");
        assert_eq!(f.total_ns, n(&want["total_ns"]), "{id}");
    }
    let copies = r.family("copies").unwrap();
    for (name, bytes) in e["copy_bytes"].as_object().unwrap() {
        let got = copies.names.iter().find(|x| &x.name == name).unwrap();
        assert_eq!(got.bytes as i64, n(bytes), "{name}");
    }
    assert_eq!(r.spill[0].dram_spill_bytes as i64, n(&e["dram_spill_peak"]));
    let c = r.clock.as_ref().unwrap();
    assert_eq!(c.points as i64, n(&e["markers_as_instants"]));

    // Model switches and spill fire; the copies and barriers are short.
    let x = insights(&t);
    assert_eq!(fired(&x, "neuron_model_switch"), 1);
    assert_eq!(fired(&x, "neuron_hbm_spill"), 1);
    assert_eq!(fired(&x, "neuron_host_copies"), 0);
    assert_eq!(fired(&x, "neuron_barrier_wait"), 0);
    let switch = x
        .findings
        .iter()
        .find(|f| f.rule == "neuron_model_switch")
        .unwrap();
    assert!(switch
        .evidence
        .numbers
        .contains(&("switches".into(), e["model_switches"].to_string())));
    // Long copies and barrier waits: both fire, gains within their time.
    let h = expected("system_profile.heavy.expected.json");
    let heavy = insights(&wild("system_profile.heavy.json").unwrap());
    for (rule, family) in [
        ("neuron_host_copies", "copies"),
        ("neuron_barrier_wait", "barrier"),
    ] {
        let f = heavy
            .findings
            .iter()
            .find(|f| f.rule == rule)
            .unwrap_or_else(|| panic!("{rule}"));
        assert!(
            f.gain_ns > 0 && f.gain_ns <= n(&h["families"][family]["total_ns"]),
            "{rule}"
        );
    }
    // No runtime family and no HBM usage: all four quiet.
    let beta = insights(&wild("system_profile.beta.json").unwrap());
    for rule in [
        "neuron_model_switch",
        "neuron_host_copies",
        "neuron_barrier_wait",
        "neuron_hbm_spill",
    ] {
        assert_eq!(fired(&beta, rule), 0, "{rule}");
    }
    // A wait on the execution (kbl_exec_wait) does not make the runtime
    // synchronous: the run schedules through the async API.
    let run = insights(&run("neuron-wild/torchneuron_run"));
    let host = run
        .findings
        .iter()
        .find(|f| f.rule == "host_bound")
        .unwrap();
    assert!(!host.action.contains("nrta_"), "{}", host.action);
}

#[test]
fn the_trace_events_spelling_and_numeric_ids_are_read_too() {
    let json = br#"{"trace_events": [
      {"name": "op", "trace_event_source": "framework", "thread_id": 1, "timestamp": 5000, "duration": 100,
       "flow_id": [9], "instance_id": "i", "process_id": 2},
      {"name": "nc_exec_running", "trace_event_source": "neuron_hw", "nc_idx": 0, "device_core_idx": 0,
       "timestamp": 5050, "duration": 7, "flow_id": 9, "exec_id": 3, "instance_id": "i", "process_id": 2}
    ], "warnings": ["plain string warning"]}"#;
    assert!(tracelane_core::import::neuron::looks_like(json));
    let t = import_bytes(json, ImportOptions::default()).unwrap();
    assert_eq!(t.slices.len(), 2);
    assert!(t.diagnostics.time_unit_decision.contains("2 events"));
    assert!(t.diagnostics.time_unit_decision.contains("1 flow links"));
    assert_eq!(t.diagnostics.warning_count("neuron_profile_warning"), 1);
    // A hardware event reached straight from an op keeps its External id.
    let hw = (0..2)
        .find(|&i| t.slice_name(i) == "nc_exec_running")
        .unwrap();
    assert_eq!((t.slices.start_ns[hw], t.slices.dur_ns[hw]), (5050, 7));
    assert_eq!(t.slices.external_id[hw], 1);
    assert_eq!(
        t.links.op[hw],
        (0..2).find(|&i| t.slice_name(i) == "op").unwrap() as u32
    );
    assert!(!tracelane_core::import::neuron::looks_like(
        br#"{"traceEvents": [{"trace_event_source": 1}]}"#
    ));
}

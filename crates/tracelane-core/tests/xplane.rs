//! XPlane profiles: the reader on real files (recorded here with
//! `jax[cpu]`, `tests/fixtures/jax-cpu/`, and the public MI300 files of
//! the local corpus, `TRACELANE_XPLANE_CORPUS=DIR`, see `tests/corpus.md`),
//! and the op tables against xprof's own (`tools/xprof_oracle.py`: each
//! file's `.xprof.json` beside it).

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;
use tracelane_core::analysis::xla_ops::{xla_op_stats, XlaOpStats};
use tracelane_core::{import_bytes, ImportOptions, Trace};

fn load(path: &Path) -> Trace {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    import_bytes(&bytes, ImportOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn oracle(path: &Path) -> Value {
    let name = path.file_name().unwrap().to_str().unwrap();
    let o = path.with_file_name(name.replace(".xplane.pb", ".xprof.json"));
    serde_json::from_str(
        &std::fs::read_to_string(&o).unwrap_or_else(|e| panic!("{}: {e}", o.display())),
    )
    .unwrap()
}

/// A Google DataTable's rows as maps from column id to value.
fn rows(table: &Value) -> Vec<serde_json::Map<String, Value>> {
    let cols: Vec<&str> = table["cols"]
        .as_array()
        .map(|c| c.iter().map(|c| c["id"].as_str().unwrap_or("")).collect())
        .unwrap_or_default();
    table["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    cols.iter()
                        .zip(r["c"].as_array().unwrap())
                        .map(|(c, v)| (c.to_string(), v["v"].clone()))
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-3 + 1e-9 * b.abs()
}

/// Every row of xprof's `hlo_stats` and `framework_op_stats` tables is
/// ours, with the same figures, and we have no other rows.
fn check_against_xprof(path: &Path) -> XlaOpStats {
    check_trace(&load(path), &oracle(path), path)
}

fn check_trace(t: &Trace, o: &Value, path: &Path) -> XlaOpStats {
    let stats = xla_op_stats(t).expect("an XPlane profile has op tables");
    let us = XlaOpStats::us;
    let hlo = rows(&o["hlo_stats"]);
    assert_eq!(
        hlo.len(),
        stats.hlo_ops.len(),
        "{}: HLO rows",
        path.display()
    );
    for r in &hlo {
        let name = r["hlo_op_name"].as_str().unwrap();
        let program: i64 = r["program_id"].as_str().unwrap().parse().unwrap();
        let ours = stats
            .hlo_ops
            .iter()
            .find(|x| x.hlo_op_name == name && x.program_id == program)
            .unwrap_or_else(|| panic!("{}: no HLO row {program}/{name}", path.display()));
        let what = format!("{} {name}", path.display());
        assert_eq!(ours.category, r["category"].as_str().unwrap(), "{what}");
        assert_eq!(ours.tf_op_name, r["tf_op_name"].as_str().unwrap(), "{what}");
        assert_eq!(
            ours.occurrences as f64,
            r["occurrences"].as_f64().unwrap(),
            "{what}"
        );
        assert!(
            close(us(ours.total_time_ps), r["total_time"].as_f64().unwrap()),
            "{what}"
        );
        assert!(
            close(
                us(ours.self_time_ps),
                r["total_self_time"].as_f64().unwrap()
            ),
            "{what}"
        );
        assert!(
            close(
                ours.self_time_percent / 100.0 * 100.0,
                r["total_self_time_percent"].as_f64().unwrap()
            ),
            "{what}: {} vs {}",
            ours.self_time_percent,
            r["total_self_time_percent"]
        );
    }
    let fw: Vec<_> = o["framework_op_stats"]
        .as_array()
        .and_then(|a| a.first())
        .map(rows)
        .unwrap_or_default();
    for r in &fw {
        let side = r["host_or_device"].as_str().unwrap();
        let op = r["operation"].as_str().unwrap();
        let what = format!("{} {side} {op}", path.display());
        let ours = stats
            .framework_ops
            .iter()
            .find(|x| x.host_or_device == side && x.operation == op)
            .unwrap_or_else(|| panic!("{what}: missing; ours {:#?}", stats.framework_ops));
        assert_eq!(ours.op_type, r["type"].as_str().unwrap(), "{what}");
        assert_eq!(
            ours.occurrences as f64,
            r["occurrences"].as_f64().unwrap(),
            "{what}"
        );
        assert!(
            close(us(ours.total_time_ps), r["total_time"].as_f64().unwrap()),
            "{what}: {} vs {}",
            us(ours.total_time_ps),
            r["total_time"]
        );
        assert!(
            close(
                us(ours.self_time_ps),
                r["total_self_time"].as_f64().unwrap()
            ),
            "{what}"
        );
    }
    let ours_nonzero = stats
        .framework_ops
        .iter()
        .filter(|r| r.self_time_ps > 0 || r.occurrences > 0)
        .count();
    let theirs_nonzero = fw
        .iter()
        .filter(|r| {
            r["total_self_time"].as_f64() != Some(0.0) || r["occurrences"].as_f64() != Some(0.0)
        })
        .count();
    assert_eq!(
        ours_nonzero,
        theirs_nonzero,
        "{}: framework rows",
        path.display()
    );
    stats
}

/// xprof's op profile leaves (program id, op name) → (raw FLOPs, HBM
/// bytes): its GPU cost analysis' figures times the occurrences.
type OpCosts = Vec<((i64, String), (f64, f64))>;

fn op_profile_costs(o: &Value) -> OpCosts {
    fn walk(n: &Value, out: &mut OpCosts) {
        let children = n["children"].as_array().map_or(&[][..], |c| c.as_slice());
        let x = &n["xla"];
        if children.is_empty() && x["expression"].as_str().is_some_and(|s| !s.is_empty()) {
            let program = x["programId"]
                .as_str()
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            let m = &n["metrics"];
            let bytes = m["rawBytesAccessedArray"][0].as_f64().unwrap_or(0.0);
            let flops = m["rawFlops"].as_f64().unwrap_or(0.0);
            out.push((
                (program, n["name"].as_str().unwrap().to_string()),
                (flops, bytes),
            ));
        }
        for c in children {
            walk(c, out);
        }
    }
    let mut out = Vec::new();
    walk(&o["op_profile"]["byProgram"], &mut out);
    out
}

/// Each HLO row's FLOPs and HBM bytes equal xprof's op profile (its
/// cost analysis of the embedded module; an unknown custom call: 0 there,
/// none here).
fn check_costs(stats: &XlaOpStats, o: &Value, path: &Path) -> usize {
    let costs = op_profile_costs(o);
    for ((program, name), (flops, bytes)) in &costs {
        let what = format!("{} {program}/{name}", path.display());
        let ours = stats
            .hlo_ops
            .iter()
            .find(|r| &r.hlo_op_name == name && r.program_id == *program)
            .unwrap_or_else(|| panic!("{what}: no HLO row"));
        let near = |a: f64, b: f64| (a - b).abs() <= 1.0 + 1e-6 * b.abs();
        let f = ours.flops.unwrap_or(0) as f64;
        let b = ours.bytes_accessed.unwrap_or(0) as f64;
        assert!(near(f, *flops), "{what}: FLOPs {f} vs xprof {flops}");
        assert!(near(b, *bytes), "{what}: HBM bytes {b} vs xprof {bytes}");
    }
    costs.len()
}

fn corpus() -> Vec<PathBuf> {
    let Some(dir) = std::env::var_os("TRACELANE_XPLANE_CORPUS") else {
        eprintln!("TRACELANE_XPLANE_CORPUS not set: the public XPlane files are not checked");
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".xplane.pb"))
        .collect();
    files.sort();
    files
}

#[test]
fn op_tables_equal_xprof_on_public_gpu_profiles() {
    for path in corpus() {
        let s = check_against_xprof(&path);
        assert!(s.device_planes > 0, "{}", path.display());
        assert!(
            check_costs(&s, &oracle(&path), &path) > 0,
            "{}",
            path.display()
        );
    }
}

#[test]
fn hlo_costs_equal_xprofs_gpu_cost_analysis() {
    // Modules compiled by jax[cpu], priced by xprof as a GPU profile's
    // (tools/make_xplane_cost_fixture.py): convolutions with padding,
    // strides, dilation and groups, batched dots, fusions of elementwise
    // ops and reductions, concatenate, slices, in-place updates, gather,
    // scatter, sort, reduce-windows.
    let path = common::fixtures().join("xplane/cost.xplane.pb");
    let s = check_against_xprof(&path);
    assert_eq!(check_costs(&s, &oracle(&path), &path), 33);
}

#[test]
fn roofline_places_an_xplane_profiles_hlo_ops_by_their_costs() {
    use tracelane_core::analysis::roofline::{roofline, PeakOverride};
    use tracelane_core::analysis::scope::Scope;
    let t = load(&common::fixtures().join("xplane/cost.xplane.pb"));
    let stats = xla_op_stats(&t).unwrap();
    let over = PeakOverride {
        flops_per_s: Some(100e12),
        bytes_per_s: Some(2e12),
    };
    let r = roofline(&t, &Scope::Whole, over, &|i| {
        t.slice_args_json(i).to_string()
    })
    .unwrap();
    assert_eq!(r.level, "hlo");
    let priced = stats
        .hlo_ops
        .iter()
        .filter(|o| o.flops.unwrap_or(0) > 0)
        .count();
    assert_eq!(r.points.len(), priced);
    assert_eq!(r.points.len() + r.unplaced.len(), stats.hlo_ops.len());
    for p in &r.points {
        // Named `op (program N)` where programs share the name.
        let row = stats
            .hlo_ops
            .iter()
            .find(|o| {
                p.name == o.hlo_op_name
                    || p.name == format!("{} (program {})", o.hlo_op_name, o.program_id)
            })
            .unwrap();
        assert_eq!(p.flops, row.flops.unwrap() as f64, "{}", p.name);
        assert_eq!(
            p.bytes,
            row.bytes_accessed.filter(|&b| b > 0).map(|b| b as f64)
        );
        assert_eq!(p.time_ns as u64, row.total_time_ps / 1000);
        assert!(p.bound.is_some() || p.bytes.is_none(), "{}", p.name);
    }
}

#[test]
fn op_tables_equal_xprof_on_jax_cpu_recordings() {
    let dir = common::fixtures().join("jax-cpu");
    for name in ["matmul", "mlp_train", "rmsnorm", "conv_eager"] {
        check_against_xprof(&dir.join(format!("{name}.xplane.pb")));
    }
}

#[test]
fn op_tables_equal_xprof_on_the_rules_fixture() {
    // Spans by event offsets (its lines start at different times), an op
    // known only by its tf_op stat, unresolved HLO ops, nested host ops,
    // an aggregated event: xprof's answer for each.
    let path = common::fixtures().join("xplane/gpu_rules.xplane.pb");
    let s = check_against_xprof(&path);
    assert_eq!(s.device_planes, 2);
    assert_eq!(s.unresolved_hlo_events, 13);
    let t = load(&path);
    assert_eq!(t.diagnostics.warning_count("xplane_aggregated"), 1);
    // The launch calls link to nothing here (no kernel carries their
    // correlation ids but 0), and the wall clock comes from the
    // Task Environment plane.
    assert_eq!(t.clock_offset_ns, 1_764_000_000_000_000_000);
}

#[test]
fn a_tpu_profiles_op_tables_equal_xprofs_from_the_ops_own_stats() {
    // A TPU records its ops itself: nested ops' self time, the root and
    // keyless events counted for no op, a custom call's FLOPs, op lines
    // and step lines spanning each plane by their times (the device's
    // own where an event has them), tf_op events on
    // other lines too (xprof derives its framework-op line from them),
    // SparseCore planes in no table: xprof 2.24.2's answer for each.
    let path = common::fixtures().join("xplane/tpu_rules.xplane.pb");
    let s = check_against_xprof(&path);
    assert_eq!(s.device_planes, 2);
    assert_eq!(s.device_total_ps, 302_000_000);
    let op = |name: &str| s.hlo_ops.iter().find(|r| r.hlo_op_name == name).unwrap();
    assert_eq!(op("while.1").self_time_ps, 20_000_000);
    assert_eq!(op("wrapped_reduce").self_time_ps, 16_000_000);
    assert_eq!(op("ynn_fusion.2").flops, Some(3 * 1_048_576));
    assert_eq!(op("custom-call.1").flops, Some(2 * 500_000));
    // The device's own duration, not the event's.
    assert_eq!(op("negate_divide_fusion").total_time_ps, 6_000_000);
    assert!(s.hlo_ops.iter().all(|r| r.hlo_op_name != "sparse_gather.1"));
    // The roofs the TPU plane states, as xprof's roofline reads them
    // (GFLOP/s, GiB/s, FLOP/B).
    use tracelane_core::analysis::roofline::{roofline, PeakOverride};
    let t = load(&path);
    // The program's run on the op line (symbol 0) is not device work.
    let run: Vec<usize> = (0..t.slices.len())
        .filter(|&i| t.slice_name(i) == "jit_step")
        .collect();
    assert_eq!(run.len(), 1);
    assert!(!t.slices.category[run[0]].is_device_work());
    let r = roofline(
        &t,
        &tracelane_core::analysis::scope::Scope::Whole,
        PeakOverride::default(),
        &|i| t.slice_args_json(i).to_string(),
    )
    .unwrap();
    let theirs = &oracle(&path)["roofline_model"][0]["p"];
    let num = |k: &str| theirs[k].as_str().unwrap().parse::<f64>().unwrap();
    let peak = &r.peaks[0];
    assert!(close(peak.flops_per_s / 1e9, num("peak_flop_rate")));
    assert!(close(
        peak.bytes_per_s / (1u64 << 30) as f64,
        num("peak_hbm_bw")
    ));
    assert!(close(
        peak.flops_per_s / peak.bytes_per_s,
        num("hbm_ridge_point")
    ));
}

#[test]
fn a_profile_runs_hosts_open_as_one_session_equal_to_xprofs() {
    // plugins/profile/<run>/: two hosts' files (and the JSON JAX writes
    // beside them, passed over), the tables summed over hosts as xprof
    // serves a session.
    let dir = common::fixtures().join("xplane/run/plugins/profile/2026_12_06_04_00_00");
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    files.sort();
    let t = tracelane_core::import::import_set(files, ImportOptions::default()).unwrap();
    let o: Value = serde_json::from_str(
        &std::fs::read_to_string(common::fixtures().join("xplane/run.xprof.json")).unwrap(),
    )
    .unwrap();
    let s = check_trace(&t, &o, &dir);
    assert_eq!(s.device_planes, 4);
    assert_eq!(t.diagnostics.warning_count("xplane_files_passed_over"), 1);
    assert!(
        t.diagnostics.format.contains("hosts' XPlane files stacked"),
        "{}",
        t.diagnostics.format
    );
}

#[test]
fn kernels_whose_hlo_stats_were_stripped_take_the_op_of_the_derived_line_around_them() {
    // The same kernels twice (tools/make_xplane_stripped_fixture.py): with
    // their hlo_op / program_id stats, and stripped as newer xprof
    // converters write them, with the `XLA Ops - from #N` lines xprof
    // derived. The stripped file's tables equal the full one's, and say
    // how many kernels were placed by time.
    let dir = common::fixtures().join("xplane");
    let full = xla_op_stats(&load(&dir.join("stripped_full.xplane.pb"))).unwrap();
    let stripped = xla_op_stats(&load(&dir.join("stripped.xplane.pb"))).unwrap();
    assert_eq!(full.ops_by_time, 0);
    assert_eq!(stripped.ops_by_time, 11);
    assert_eq!(full.hlo_ops.len(), 6);
    assert_eq!(stripped.hlo_ops, full.hlo_ops);
    assert_eq!(stripped.framework_ops, full.framework_ops);
    assert_eq!(
        (stripped.device_total_ps, stripped.device_idle_ps),
        (full.device_total_ps, full.device_idle_ps)
    );
    // The nested `while.9::dot` kernel is its innermost op, as xprof
    // reads the full stat.
    assert!(stripped.hlo_ops.iter().any(|r| r.hlo_op_name == "dot"));
}

/// The events' stats, kept packed, read back as each slice's args JSON:
/// an object on every slice, the same `correlation_id` as the linker's
/// column, a device event's exact picoseconds agreeing with its
/// nanoseconds, and a key scan finding exactly the slices whose JSON has
/// the key.
#[test]
fn an_xplane_events_stats_read_back_as_its_args_json() {
    let dir = common::fixtures();
    let files = [
        "jax-cpu/mlp_train",
        "jax-cpu/conv_eager",
        "xplane/gpu_rules",
        "xplane/stripped",
        "xplane/cost",
    ];
    for name in files {
        let path = dir.join(format!("{name}.xplane.pb"));
        let t = load(&path);
        let hlo_op = t.args_key("hlo_op");
        let (mut device, mut with_hlo) = (0, 0);
        for i in 0..t.slices.len() {
            let text = t.slice_args_json(i);
            let args: Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}: {text}"));
            assert!(args.is_object(), "{name}: {text}");
            assert_eq!(
                t.slice_args_have(i, &hlo_op),
                args.get("hlo_op").is_some(),
                "{name}: {text}"
            );
            with_hlo += args.get("hlo_op").is_some() as usize;
            if let Some(c) = args.get("correlation_id").and_then(Value::as_i64) {
                assert_eq!(t.slices.correlation[i], c, "{name}: {text}");
            }
            if t.track_of(i).kind == tracelane_core::model::TrackKind::DeviceStream {
                device += 1;
                let dur_ps = args["duration_ps"].as_i64().unwrap();
                assert!(args["offset_ps"].is_i64(), "{name}: {text}");
                assert!(
                    (t.slices.dur_ns[i] - dur_ps.max(0) / 1000).abs() <= 1,
                    "{name}: {text}"
                );
            }
        }
        // The stripped file is the one whose kernels lost their `hlo_op`.
        let stripped = name == "xplane/stripped";
        assert_eq!(
            with_hlo == 0,
            stripped,
            "{name}: {with_hlo} events name their HLO op"
        );
        if name.starts_with("xplane/") {
            assert!(device > 0, "{name}: no device events");
        }
    }
}

#[test]
fn a_tpus_nested_ops_count_once_in_the_kernel_tables() {
    // A loop's body and a fusion's pieces lie inside their op on the TPU's
    // op line: the kernel table counts each outermost op once, so its rows
    // add up to the devices' busy time (they summed to 202 µs for 168).
    use tracelane_core::analysis::device_time::device_time;
    use tracelane_core::analysis::frame::Mode;
    use tracelane_core::analysis::Scope;
    let t = load(&common::fixtures().join("xplane/tpu_rules.xplane.pb"));
    let r = device_time(&t, &Scope::Whole, Mode::Exact).unwrap();
    let kernels: i64 = r.kernels.iter().map(|k| k.total_ns).sum();
    let busy: i64 = r.devices.iter().map(|d| d.busy_ns).sum();
    assert_eq!((kernels, busy), (168_000, 168_000));
    // Each device's kernel types on their own: two cores at once are two
    // cores' time (the sweep over all devices together gave 125 µs).
    let types: i64 = r.kernel_types.iter().map(|k| k.time_ns).sum();
    assert_eq!(types, 168_000);
    let count = |name: &str| r.kernels.iter().find(|k| k.name == name).map(|k| k.count);
    assert_eq!(count("while.1"), Some(1));
    // Inside the loop: its time is the loop's.
    assert_eq!(count("wrapped_reduce"), None);
}

#[test]
fn a_profile_with_nothing_to_follow_says_so_not_that_its_graph_has_a_cycle() {
    // A jax[cpu] host's events are TraceMe annotations and a TPU's ops are
    // launched by no recorded host call: the critical path has no graph,
    // which it reported as a cycle.
    use tracelane_core::analysis::critical_path::critical_path;
    use tracelane_core::analysis::frame::Mode;
    use tracelane_core::analysis::Scope;
    for rel in ["jax-cpu/matmul.xplane.pb", "xplane/tpu_rules.xplane.pb"] {
        let t = load(&common::fixtures().join(rel));
        let args = |s: usize| t.slice_args_json(s).to_string();
        let e = critical_path(&t, &Scope::Whole, Mode::Exact, &args).unwrap_err();
        assert!(
            e.starts_with("nothing in this scope to build a critical path from"),
            "{rel}: {e}"
        );
    }
}

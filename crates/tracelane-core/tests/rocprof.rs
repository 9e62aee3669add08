//! rocprofv3 JSON: the op table's kernel rows equal an independent
//! reading of the file (`tools/rocprof_oracle.py`, `.oracle.json` beside
//! it) on the shape fixture made here and, with
//! `TRACELANE_ROCPROF_CORPUS=DIR`, on the public MI350X file
//! (`tests/corpus.md`); chunked = whole; a file cut short keeps its
//! records.

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;
use tracelane_core::analysis::ops::{op_table, OpTableOptions};
use tracelane_core::{import_bytes, ImportOptions, Importer, Trace};

fn load(path: &Path) -> (Vec<u8>, Trace) {
    let bytes = std::fs::read(path).unwrap();
    let t = import_bytes(&bytes, ImportOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (bytes, t)
}

fn oracle(path: &Path) -> Value {
    let name = path.file_name().unwrap().to_str().unwrap();
    let base = name.trim_end_matches(".gz").trim_end_matches(".json");
    let o = path.with_file_name(format!("{base}.oracle.json"));
    serde_json::from_str(&std::fs::read_to_string(&o).unwrap()).unwrap()
}

fn check(path: &Path) -> Trace {
    check_with(path, &oracle(path))
}

fn check_with(path: &Path, o: &Value) -> Trace {
    let (_, t) = load(path);
    let table = op_table(&t, OpTableOptions::default());
    let kernels = o["kernels"].as_object().unwrap();
    let rows: Vec<_> = table
        .rows
        .iter()
        .filter(|r| r.is_device && !r.name.starts_with("MEMORY_COPY"))
        .collect();
    assert_eq!(rows.len(), kernels.len(), "{}: kernel rows", path.display());
    for (name, want) in kernels {
        let r = rows
            .iter()
            .find(|r| &r.name == name)
            .unwrap_or_else(|| panic!("{}: no row {name}", path.display()));
        assert_eq!(r.calls, want["count"].as_u64().unwrap(), "{name}");
        assert_eq!(
            r.device_total_ns,
            want["total_ns"].as_i64().unwrap(),
            "{name}"
        );
    }
    for (name, n) in o["hip_api"].as_object().unwrap() {
        let r = table.rows.iter().find(|r| &r.name == name).unwrap();
        assert_eq!(r.calls, n.as_u64().unwrap(), "{name}");
    }
    t
}

#[test]
fn kernel_rows_equal_an_independent_reading_of_the_shape_fixture() {
    let path = common::fixtures().join("rocprof/sys_trace.json");
    let t = check(&path);
    // Every kernel and copy is linked to its HIP call by correlation id.
    assert_eq!(t.diagnostics.links.device_by_args, 15);
    assert_eq!(t.diagnostics.links.device_dangling, 0);
    // ROCTX ranges named by their messages; the allocation, which names
    // no agent, counted as passed over.
    let names: Vec<&str> = (0..t.slices.len()).map(|i| t.slice_name(i)).collect();
    assert!(names.contains(&"train_step 1"), "{names:?}");
    assert!(names.contains(&"ncclAllReduce"));
    assert_eq!(t.diagnostics.warning_count("rocprof_other_records"), 0);
    assert_eq!(t.diagnostics.warning_count("rocprof_memory_passed_over"), 1);
    // Two GPUs, each its own process.
    assert!(t
        .processes
        .iter()
        .any(|p| p.name.is_some_and(|n| t.str(n).contains("GPU 1"))));
}

#[test]
fn chunked_and_cut_short_files_read_alike() {
    let path = common::fixtures().join("rocprof/sys_trace.json");
    let (bytes, whole) = load(&path);
    for chunk in [1, 7, 4096] {
        let mut imp = Importer::new(ImportOptions::default());
        bytes.chunks(chunk).try_for_each(|c| imp.push(c)).unwrap();
        let t = imp.finish().unwrap();
        assert_eq!(
            t.slices.start_ns, whole.slices.start_ns,
            "chunks of {chunk}"
        );
        assert_eq!(t.slices.name, whole.slices.name);
    }
    // Cut in the middle of the records: what came before stays.
    let cut = bytes.len() * 3 / 4;
    let t = import_bytes(&bytes[..cut], ImportOptions::default()).unwrap();
    assert!(t.diagnostics.truncated);
    assert!(!t.slices.is_empty() && t.slices.len() < whole.slices.len());
}

fn corpus() -> Vec<PathBuf> {
    let Some(dir) = std::env::var_os("TRACELANE_ROCPROF_CORPUS") else {
        eprintln!("TRACELANE_ROCPROF_CORPUS not set: the public rocprofv3 file is not checked");
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with("results.json.gz"))
        .collect();
    files.sort();
    files
}

#[test]
fn kernel_rows_equal_an_independent_reading_of_public_files() {
    for path in corpus() {
        let t = check(&path);
        assert_eq!(t.slices.len(), 43_915, "{}", path.display());
    }
}

#[test]
fn perfetto_output_links_hip_calls_to_kernels_by_corr_id() {
    // The same run written as rocprofv3's pftrace: its kernel rows are the
    // JSON's, each kernel and copy linked to its HIP call.
    let dir = common::fixtures().join("rocprof");
    let t = check_with(
        &dir.join("sys_trace.pftrace"),
        &oracle(&dir.join("sys_trace.json")),
    );
    assert_eq!(t.diagnostics.links.device_by_args, 15);
    let device_lanes = t
        .tracks
        .iter()
        .filter(|k| k.kind == tracelane_core::model::TrackKind::DeviceStream)
        .count();
    assert_eq!(device_lanes, 3);
}

#[test]
fn records_before_their_tables_wait_for_them() {
    // JSON objects are unordered: the same file with its keys sorted puts
    // `buffer_records` before `kernel_symbols`, `metadata` and `strings`.
    let path = common::fixtures().join("rocprof/sys_trace.json");
    let (bytes, whole) = load(&path);
    let doc: Value = serde_json::from_slice(&bytes).unwrap();
    let sorted = serde_json::to_vec(&doc).unwrap(); // serde_json's map is sorted
    let first = |b: &[u8], k: &str| String::from_utf8_lossy(b).find(k).unwrap();
    assert!(first(&sorted, "\"buffer_records\":{") < first(&sorted, "\"kernel_symbols\""));
    for chunk in [5, sorted.len()] {
        let mut imp = Importer::new(ImportOptions::default());
        sorted.chunks(chunk).try_for_each(|c| imp.push(c)).unwrap();
        let t = imp.finish().unwrap();
        // The same events (lanes may come in another order).
        assert_eq!(events(&t), events(&whole));
        assert_eq!(t.diagnostics.warning_count("rocprof_unnamed_kernels"), 0);
        assert_eq!(t.diagnostics.links, whole.diagnostics.links);
    }
}

/// Every slice as (name, start, duration, lane name), sorted.
fn events(t: &Trace) -> Vec<(String, i64, i64, String)> {
    let mut v: Vec<_> = (0..t.slices.len())
        .map(|i| {
            let track = &t.tracks[t.slices.track[i].0 as usize];
            (
                t.slice_name(i).to_string(),
                t.slices.start_ns[i],
                t.slices.dur_ns[i],
                track.name.map(|n| t.str(n).to_string()).unwrap_or_default(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn rccl_api_calls_are_collectives_with_the_kernels_they_launched() {
    // The shape fixture's three `rccl_api` records (RCCL's `ncclAllReduce`,
    // `ncclBroadcast`) each hold a HIP launch on their thread: the
    // collectives analysis takes them as calls and their kernels as their
    // device work.
    use tracelane_core::analysis::collectives::{device_collectives, MatchedBy};
    let (_, t) = load(&common::fixtures().join("rocprof/sys_trace.json"));
    let found = device_collectives(&t, &|i| t.slice_args_json(i).to_string());
    let rccl: Vec<_> = (0..t.slices.len())
        .filter(|&i| {
            t.slice_name(i).starts_with("nccl")
                && t.slices.category[i] == tracelane_core::category::Category::UserAnnotation
        })
        .collect();
    assert_eq!(rccl.len(), 3);
    assert_eq!(found.calls.len(), 3);
    for c in &found.calls {
        assert_eq!(c.by, MatchedBy::CpuRange);
        assert!(rccl.contains(&(c.range as usize)), "{c:?}");
        assert!(
            ["allreduce", "broadcast"].contains(&c.kind.as_str()),
            "{c:?}"
        );
        assert!(c.parts >= 1, "{c:?}");
        // Its device work starts after the call does.
        assert!(c.start_ns >= t.slices.start_ns[c.range as usize], "{c:?}");
    }
}

#[test]
fn allocated_bytes_per_agent_equal_rocprofv3s_running_sum_and_the_live_bytes() {
    // memory_allocation records (tools/make_rocprof_memory_fixture.py):
    // each agent's `ALLOCATE BYTES` series is the sum rocprofv3's own
    // Perfetto output draws, and `allocated bytes (live)` what it holds —
    // both as tools/rocprof_oracle.py computes them independently.
    let path = common::fixtures().join("rocprof/memory_allocation.json");
    let (_, t) = load(&path);
    let o = oracle(&path);
    // Agent handle → its process: the CPU's is the host process.
    let process_of = |agent: &str| -> usize {
        let label = match agent {
            "81920" => None,
            "81922" => Some("GPU 0"),
            "81923" => Some("GPU 1"),
            other => panic!("agent {other}"),
        };
        t.processes
            .iter()
            .position(|p| match label {
                Some(l) => p.labels.is_some_and(|x| t.str(x) == l),
                None => p.pid == tracelane_core::model::LaneId::Int(5151),
            })
            .unwrap_or_else(|| panic!("no process for agent {agent}"))
    };
    let c = &t.counters;
    for (series, key) in [
        ("ALLOCATE BYTES", "allocated_bytes"),
        ("allocated bytes (live)", "live_bytes"),
    ] {
        let want = o[key].as_object().unwrap();
        assert_eq!(want.len(), 3, "{key}");
        for (agent, samples) in want {
            let p = process_of(agent);
            let got: Vec<(i64, f64)> = (0..c.ts_ns.len())
                .filter(|&k| c.process[k].0 as usize == p && t.str(c.series[k]) == series)
                .map(|k| (c.ts_ns[k], c.value[k]))
                .collect();
            let want: Vec<(i64, f64)> = samples
                .as_array()
                .unwrap()
                .iter()
                .map(|s| (s[0].as_i64().unwrap(), s[1].as_f64().unwrap()))
                .collect();
            assert_eq!(got, want, "{series} of agent {agent}");
        }
    }
    // What rocprofv3 passes over is counted: a null free, a free of an
    // address never allocated, an endpoint lost to another at its time.
    assert_eq!(t.diagnostics.warning_count("rocprof_memory_passed_over"), 3);
    // The two differ where rocprofv3's pairs a reused address's free with
    // its first allocation: GPU 0 ends holding 64 MiB, not 56.
    let last = |series: &str| {
        let p = process_of("81922");
        (0..c.ts_ns.len())
            .filter(|&k| c.process[k].0 as usize == p && t.str(c.series[k]) == series)
            .map(|k| c.value[k])
            .next_back()
            .unwrap()
    };
    assert_eq!(last("allocated bytes (live)"), (64 << 20) as f64);
}

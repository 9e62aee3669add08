//! The op table must equal PyTorch's own `key_averages()` for the same run:
//! every row, calls exactly, times within 1 µs, the memory columns (where
//! the oracle was recorded with `profile_memory`) exactly.
//!
//! Oracles: `tests/fixtures/torch-{cpu,cpu-extra,gloo,cuda,cuda-behaviours,memory}/<case>.key_averages{,_by_shape}.json`
//! beside `<case>.pt.trace.json.gz`. Set `TRACELANE_ORACLE_DIRS` (paths
//! separated by `:`) to check more directories laid out the same way.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tracelane_core::analysis::ops::{op_table, OpTableOptions};

fn oracle_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![
        common::fixtures().join("torch-cpu"),
        common::fixtures().join("torch-cpu-extra"),
        common::fixtures().join("torch-gloo"),
        common::fixtures().join("torch-cuda"),
        common::fixtures().join("torch-cuda-behaviours"),
        common::fixtures().join("torch-memory"),
        common::fixtures().join("torch-python-frames"),
    ];
    if let Ok(extra) = std::env::var("TRACELANE_ORACLE_DIRS") {
        dirs.extend(
            extra
                .split(':')
                .filter(|s| !s.is_empty())
                .map(PathBuf::from),
        );
    }
    dirs
}

/// `str(event.input_shapes)` as Python prints it → compact JSON.
fn compact(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

type Key = (String, String);
type Vals = (u64, f64, f64, f64, f64);

fn check(trace_path: &Path, oracle_path: &Path, by_shape: bool) -> Vec<String> {
    let bytes = std::fs::read(trace_path).unwrap();
    let trace = tracelane_core::import_bytes(&bytes, Default::default()).unwrap();
    let table = op_table(
        &trace,
        OpTableOptions {
            by_shape,
            range_ns: None,
        },
    );
    let oracle: serde_json::Value =
        serde_json::from_slice(&std::fs::read(oracle_path).unwrap()).unwrap();

    let mut want: BTreeMap<Key, Vec<Vals>> = BTreeMap::new();
    // The memory columns (oracles recorded with profile_memory), summed
    // per key, exactly.
    let mut want_mem: BTreeMap<Key, [i64; 4]> = BTreeMap::new();
    let mut got_mem: BTreeMap<Key, [i64; 4]> = BTreeMap::new();
    const MEM: [&str; 4] = [
        "cpu_memory_usage",
        "self_cpu_memory_usage",
        "device_memory_usage",
        "self_device_memory_usage",
    ];
    for r in oracle["rows"].as_array().unwrap() {
        let shapes = if by_shape {
            compact(r["input_shapes"].as_str().unwrap_or("[]"))
        } else {
            String::new()
        };
        let key = (r["key"].as_str().unwrap().to_string(), shapes.clone());
        if r.get(MEM[0]).is_some() {
            let m = want_mem.entry(key).or_default();
            for (k, col) in MEM.iter().enumerate() {
                m[k] += r[col].as_i64().unwrap();
            }
        }
        want.entry((r["key"].as_str().unwrap().to_string(), shapes))
            .or_default()
            .push((
                r["count"].as_u64().unwrap(),
                r["cpu_time_total_us"].as_f64().unwrap(),
                r["self_cpu_time_total_us"].as_f64().unwrap(),
                r["device_time_total_us"].as_f64().unwrap(),
                r["self_device_time_total_us"].as_f64().unwrap(),
            ));
    }
    let mut got: BTreeMap<Key, Vec<Vals>> = BTreeMap::new();
    for r in &table.rows {
        let shapes = if by_shape {
            r.input_shapes.clone().unwrap_or_default()
        } else {
            String::new()
        };
        let m = got_mem.entry((r.name.clone(), shapes.clone())).or_default();
        for (k, v) in [
            r.cpu_mem_bytes,
            r.cpu_self_mem_bytes,
            r.device_mem_bytes,
            r.device_self_mem_bytes,
        ]
        .into_iter()
        .enumerate()
        {
            m[k] += v;
        }
        got.entry((r.name.clone(), shapes)).or_default().push((
            r.calls,
            r.cpu_total_ns as f64 / 1e3,
            r.cpu_self_ns as f64 / 1e3,
            r.device_total_ns as f64 / 1e3,
            r.device_self_ns as f64 / 1e3,
        ));
    }
    let mut problems = Vec::new();
    for (k, w) in &want {
        let Some(g) = got.get(k) else {
            problems.push(format!("missing row {k:?}: want {w:?}"));
            continue;
        };
        let mut w = w.clone();
        let mut g = g.clone();
        w.sort_by(|a, b| a.partial_cmp(b).unwrap());
        g.sort_by(|a, b| a.partial_cmp(b).unwrap());
        if w.len() != g.len() {
            problems.push(format!(
                "{k:?}: want {} rows {w:?}, got {} rows {g:?}",
                w.len(),
                g.len()
            ));
            continue;
        }
        for (a, b) in w.iter().zip(&g) {
            let close = |x: f64, y: f64| (x - y).abs() <= 1.0;
            if a.0 != b.0
                || !close(a.1, b.1)
                || !close(a.2, b.2)
                || !close(a.3, b.3)
                || !close(a.4, b.4)
            {
                problems.push(format!("{k:?}: want {a:?}, got {b:?}"));
            }
        }
    }
    for (k, w) in &want_mem {
        let g = got_mem.get(k).copied().unwrap_or_default();
        if *w != g {
            problems.push(format!(
                "{k:?} memory (cpu, self, device, self): want {w:?}, got {g:?}"
            ));
        }
    }
    for k in got.keys() {
        if !want.contains_key(k) {
            problems.push(format!("extra row {k:?}: {:?}", got[k]));
        }
    }
    problems
}

#[test]
fn op_table_matches_pytorch_key_averages_on_every_oracle() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for dir in oracle_dirs() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        files.sort();
        for oracle in files {
            let name = oracle.file_name().unwrap().to_string_lossy().to_string();
            let (case, by_shape) = if let Some(c) = name.strip_suffix(".key_averages_by_shape.json")
            {
                (c.to_string(), true)
            } else if let Some(c) = name.strip_suffix(".key_averages.json") {
                (c.to_string(), false)
            } else {
                continue;
            };
            let trace = ["pt.trace.json.gz", "pt.trace.json", "json.gz", "json"]
                .iter()
                .map(|ext| dir.join(format!("{case}.{ext}")))
                .find(|p| p.exists())
                .unwrap_or_else(|| panic!("no trace beside {}", oracle.display()));
            let problems = check(&trace, &oracle, by_shape);
            checked += 1;
            if !problems.is_empty() {
                failures.push(format!("{name}:\n  {}", problems.join("\n  ")));
            }
        }
    }
    assert!(
        checked >= 62,
        "expected at least the 62 oracle files of the fixtures, found {checked}"
    );
    assert!(
        failures.is_empty(),
        "{} of {checked} oracles differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

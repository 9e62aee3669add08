//! rocprofv3's JSON (`rocprofv3 -f json`, also gzipped): a list of
//! processes under `rocprofiler-sdk-tool`, each with its `agents`,
//! `kernel_symbols`, `strings` and `buffer_records` — the records streamed
//! one at a time as the bytes arrive (the `walk` module), straight into the model
//! builder. What lands in the model (field names from rocprofiler-sdk's
//! JSON output, as `../shared/research/formats-turn3.md` §2 cites them):
//!
//! - `kernel_dispatch` → a kernel on its GPU agent's queue lane, named by
//!   its kernel symbol's `formatted_kernel_name` (as Kineto names ROCm
//!   kernels), its grid and workgroup sizes as args;
//! - `hip_api` → a runtime call on its host thread, linked to the kernels
//!   and copies of the same `correlation_id.internal`; `hsa_api` calls on
//!   their threads (not launches);
//! - `marker_api` (ROCTX) → annotations named by their message where the
//!   strings give one; `rccl_api` → annotations on their threads named by
//!   the API call (`ncclAllReduce`: the collectives analysis takes the
//!   collective ones as calls; the HIP calls under them link their
//!   kernels);
//! - `memory_copy` → copies on the GPU agent's copy lane, bytes kept;
//! - `memory_allocation` → the bytes each agent holds over time, as
//!   rocprofv3 sums them (the `memory` module);
//! - every other record kind (scratch, decode, PC samples…) counted in
//!   the diagnostics by kind, never dropped silently.
//!
//! Times are the tool's nanoseconds on a monotonic clock (not epoch).

mod memory;
mod process;
mod records;
mod walk;

use serde_json::Value;

use crate::error::ImportError;
use crate::warnings;

use super::builder::Builder;
use super::scan;

use process::{Counts, Process};

/// Whether a file's first bytes are rocprofv3's JSON.
pub fn looks_like(head: &[u8]) -> bool {
    scan::top_level_keys(head)
        .is_some_and(|keys| keys.iter().any(|k| k.key == b"rocprofiler-sdk-tool"))
}

/// Which containers the walk opens: the process list, each process, its
/// lists and tables, and the record lists under `buffer_records`.
fn descend(path: &[String]) -> bool {
    match path {
        [] => true,
        [top] => top == "rocprofiler-sdk-tool",
        [_, p] => p == "[]",
        [_, _, key] => matches!(
            key.as_str(),
            "agents" | "kernel_symbols" | "buffer_records" | "strings"
        ),
        [_, _, table, key] => {
            table == "buffer_records" || (table == "strings" && key != "correlation_id")
        }
        _ => false,
    }
}

/// Streams rocprofv3 JSON into the model builder.
pub struct RocprofReader {
    walk: walk::PathWalker,
    process: Process,
    pub(crate) counts: Counts,
}

impl Default for RocprofReader {
    fn default() -> Self {
        RocprofReader {
            walk: walk::PathWalker::new(descend, "rocprofv3 JSON"),
            process: Process::default(),
            counts: Counts::default(),
        }
    }
}

impl RocprofReader {
    pub(crate) fn push(&mut self, data: &[u8], b: &mut Builder) -> Result<(), ImportError> {
        self.walk_bytes(data, false, b)
    }

    fn walk_bytes(&mut self, data: &[u8], last: bool, b: &mut Builder) -> Result<(), ImportError> {
        let RocprofReader {
            walk,
            process,
            counts,
        } = self;
        walk.push(data, last, &mut |item| match item {
            walk::Item::Closed { path } => {
                if path.len() == 2 {
                    // A process ended: the next one has tables of its own.
                    flush(process, counts, b);
                    memory::write(process, &mut counts.memory, b);
                    *process = Process::default();
                    counts.processes += 1;
                    return;
                }
                let table = match path {
                    [_, _, t] => ["metadata", "agents", "kernel_symbols", "strings"]
                        .iter()
                        .position(|k| k == t),
                    _ => None,
                };
                if let Some(k) = table {
                    process.seen[k] = true;
                    if process.ready() {
                        flush(process, counts, b);
                    }
                }
            }
            walk::Item::Value { path, bytes } => value(path, bytes, process, counts, b),
        })
    }

    /// Ends the stream; the counts go to the diagnostics.
    pub(crate) fn finish(mut self, b: &mut Builder) -> Result<String, ImportError> {
        self.walk_bytes(&[], true, b)?;
        // A file cut short: its records held for tables that never came.
        flush(&mut self.process, &mut self.counts, b);
        memory::write(&self.process, &mut self.counts.memory, b);
        let c = &self.counts;
        memory::report(&c.memory, b);
        if !self.walk.complete() {
            b.diag.truncated = true;
            let n = c.records;
            b.diag
                .warn(warnings::TRUNCATED, || format!("cut off after {n} records"));
        }
        if c.records == 0 && c.memory.records == 0 && c.other.is_empty() {
            return Err(ImportError::NotATrace {
                reason: "rocprofv3 JSON with no records (was it written with --kernel-trace, --hip-trace or --sys-trace?)".into(),
            });
        }
        for (kind, n) in &c.other {
            b.diag.warn_n(
                warnings::ROCPROF_OTHER_RECORDS,
                *n,
                format!("{n} {kind} records"),
            );
        }
        if c.bad > 0 {
            b.diag.warn_n(
                warnings::ROCPROF_BAD_RECORDS,
                c.bad,
                "records without a start and an end".into(),
            );
        }
        if c.unnamed > 0 {
            b.diag.warn_n(
                warnings::ROCPROF_UNNAMED_KERNELS,
                c.unnamed,
                "dispatches whose kernel_id no kernel symbol names (named by the id)".into(),
            );
        }
        Ok(format!(
            "rocprofv3 timestamps are nanoseconds on the tool's monotonic clock; {} processes, {} records",
            c.processes.max(1),
            c.records
        ))
    }
}

/// Reads the records held for tables that came after them.
fn flush(p: &mut Process, c: &mut Counts, b: &mut Builder) {
    for (kind, bytes) in std::mem::take(&mut p.pending) {
        record(&kind, &bytes, p, c, b);
    }
}

/// One record of list `kind`: an allocation kept for the process's
/// running sums, any other into the model.
fn record(kind: &str, bytes: &[u8], p: &mut Process, c: &mut Counts, b: &mut Builder) {
    if kind != "memory_allocation" {
        return records::record(kind, bytes, p, c, b);
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(v) if memory::keep(&v, p, &mut c.memory) => {}
        _ => c.bad += 1,
    }
}

/// One whole value of the document, by where it sits.
fn value(path: &[String], bytes: &[u8], p: &mut Process, c: &mut Counts, b: &mut Builder) {
    let keys: Vec<&str> = path.iter().map(String::as_str).collect();
    match keys.as_slice() {
        [_, _, "metadata"] => {
            if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
                p.pid = v["pid"].as_i64().unwrap_or(0);
                p.hostname = v["node"]["hostname"].as_str().unwrap_or("").to_string();
            }
            p.seen[0] = true;
            if p.ready() {
                flush(p, c, b);
            }
        }
        [_, _, "agents", "[]"] => {
            if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
                records::agent(&v, p);
            }
        }
        [_, _, "kernel_symbols", "[]"] => {
            if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
                records::symbol(&v, p, b);
            }
        }
        [_, _, "strings", "buffer_records", "[]"] => {
            if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
                let ops = v["operations"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|o| o.as_str().unwrap_or("").to_string())
                            .collect()
                    })
                    .unwrap_or_default();
                p.kinds
                    .push((v["kind"].as_str().unwrap_or("").to_string(), ops));
            }
        }
        [_, _, "strings", "marker_api", "[]"] => {
            if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
                if let (Some(k), Some(m)) = (v["key"].as_u64(), v["value"].as_str()) {
                    p.markers.insert(k, m.to_string());
                }
            }
        }
        [_, _, "buffer_records", kind, "[]"] if p.ready() => {
            record(kind, bytes, p, c, b);
        }
        [_, _, "buffer_records", kind, "[]"] => p.pending.push((kind.to_string(), bytes.to_vec())),
        _ => {}
    }
}

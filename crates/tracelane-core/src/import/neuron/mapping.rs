//! TorchNeuron's framework mapping, `framework_mapping_<YYYYMMDD_HHMMSS_mmm>.json`:
//! which PyTorch ops each runtime execution ran for.
//!
//! ```text
//! {"version": 1, "data": [{"nrta_seq_id": 281474976710685,
//!   "framework_op_exec_ids": [{"seq_nr": 1417, "th_id": 1, "stream_id": 0}]}]}
//! ```
//!
//! torch-neuronx writes it into the runtime's output directory when both
//! the runtime's and PyTorch's profilers ran (`profiling.py`,
//! `_dump_profiler_mappings`; the fields from `NeuronBindings.cpp`
//! `_get_profiler_mappings`). An op submitted to a Neuron stream records
//! `seq_nr = at::sequence_number::peek()` and `th_id =
//! RecordFunction::currentThreadId()` at submission
//! (`NeuronStream.cpp`, `SubmitOperationContext`); `nrta_seq_id` is the
//! runtime's async sequence id of the execution that ran it
//! (`ProfilerMappingCollector.h`). [`super::super::run`] joins it to the
//! Kineto trace's ops and the runtime profile's executions.

use serde_json::Value;

use super::scan;
use super::value::integer;
use crate::error::ImportError;

/// One op submission the mapping names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpExec {
    /// `at::sequence_number::peek()` when the op was submitted.
    pub seq_nr: i64,
    /// `RecordFunction::currentThreadId()` of the submitting thread.
    pub th_id: i64,
    /// torch-neuronx's internal stream id.
    pub stream_id: i64,
}

/// One execution and the ops it ran for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub nrta_seq_id: i64,
    pub ops: Vec<OpExec>,
}

/// A whole mapping file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mapping {
    pub version: Option<i64>,
    pub entries: Vec<Entry>,
    /// Entries or op ids without the fields the join needs.
    pub unreadable: u64,
}

/// Does this JSON (its first bytes) look like a framework mapping?
pub fn looks_like(head: &[u8]) -> bool {
    let Some(keys) = scan::top_level_keys(head) else {
        return false;
    };
    let has = |needle: &[u8]| head.windows(needle.len()).any(|w| w == needle);
    keys.iter()
        .any(|k| k.key == b"data" && k.first == Some(b'['))
        && (has(b"\"nrta_seq_id\"") || has(b"\"framework_op_exec_ids\""))
}

/// Whether a file name is a framework mapping's (`framework_mapping_*.json`).
pub fn is_mapping_name(name: &str) -> bool {
    let file = name.rsplit(['/', '\\']).next().unwrap_or(name);
    file.starts_with("framework_mapping") && file.ends_with(".json")
}

/// Reads a whole mapping file.
pub fn read(bytes: &[u8]) -> Result<Mapping, ImportError> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| ImportError::Syntax {
        offset: 0,
        message: format!("{e} (reading a TorchNeuron framework mapping)"),
    })?;
    let Some(data) = v.get("data").and_then(|d| d.as_array()) else {
        return Err(ImportError::NotATrace {
            reason: "a TorchNeuron framework mapping has a data list".into(),
        });
    };
    let mut m = Mapping {
        version: integer(v.get("version")),
        ..Mapping::default()
    };
    for e in data {
        let Some(seq) = integer(e.get("nrta_seq_id")) else {
            m.unreadable += 1;
            continue;
        };
        let mut ops = Vec::new();
        for op in e
            .get("framework_op_exec_ids")
            .and_then(|o| o.as_array())
            .into_iter()
            .flatten()
        {
            match (integer(op.get("seq_nr")), integer(op.get("th_id"))) {
                (Some(seq_nr), Some(th_id)) => ops.push(OpExec {
                    seq_nr,
                    th_id,
                    stream_id: integer(op.get("stream_id")).unwrap_or(0),
                }),
                _ => m.unreadable += 1,
            }
        }
        m.entries.push(Entry {
            nrta_seq_id: seq,
            ops,
        });
    }
    crate::sort::by_key(&mut m.entries, &|e| e.nrta_seq_id);
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapping_is_read_in_execution_order() {
        let f = br#"{"version": 1, "data": [
          {"nrta_seq_id": 281474976710686, "framework_op_exec_ids": [{"seq_nr": 1418, "th_id": 1, "stream_id": 0}, {"seq_nr": 1419, "th_id": 1, "stream_id": 0}]},
          {"nrta_seq_id": "281474976710685", "framework_op_exec_ids": [{"seq_nr": 1417, "th_id": 1, "stream_id": 0}]},
          {"framework_op_exec_ids": []}]}"#;
        assert!(looks_like(f));
        let m = read(f).unwrap();
        assert_eq!(m.version, Some(1));
        assert_eq!(m.entries[0].nrta_seq_id, 281474976710685);
        assert_eq!(m.entries[1].ops.len(), 2);
        assert_eq!(m.unreadable, 1);
        assert!(is_mapping_name(
            "run/framework_mapping_20260421_101500_123.json"
        ));
        assert!(!looks_like(br#"{"data": [1, 2]}"#));
    }
}

//! What a Neuron *device* profile adds to a trace: the NeuronCore's engines
//! and DMA queues as lanes, and — from the Parquet profile directory — the
//! per-instruction counters (bytes, FLOPs, waits) the engine view and the
//! roofline read, columnar like the rest of the model.
//!
//! Lane names are Neuron Explorer's own (its Perfetto export writes them;
//! the Parquet importer writes the same):
//! - `"<track> Engine - Row N"` for instructions (one row per overlap
//!   level, first fit);
//! - `"DMA Engine <idx> - Row N"` for DMA packets;
//! - `"<queue> - Row N"` for a queue's aggregated transfers.
//!
//! [`lane_of`] reads them back for both importers.

use crate::ids::{StrId, NONE_I64};

/// The profile schema this reader was written against
/// (AWS `profile-schema-reference.rst`).
pub const SCHEMA_VERSION: &str = "7.4.0";

/// What a device-profile lane holds, read from its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceLane<'a> {
    /// Instructions of one engine track (`Tensor`, `TensorMatrix`, `Vector`…).
    Engine { track: &'a str, row: u32 },
    /// Packets of one DMA engine.
    DmaEngine { index: i64, row: u32 },
    /// Aggregated transfers of one DMA queue (`qSyncIO0`).
    DmaQueue { queue: &'a str, row: u32 },
}

/// Reads a device-profile lane name; `None` for any other lane.
pub fn lane_of(name: &str) -> Option<DeviceLane<'_>> {
    let (group, row) = name.rsplit_once(" - Row ")?;
    let row: u32 = row.trim().parse().ok()?;
    if let Some(index) = group.strip_prefix("DMA Engine ") {
        return Some(DeviceLane::DmaEngine {
            index: index.trim().parse().ok()?,
            row,
        });
    }
    if let Some(track) = group.strip_suffix(" Engine") {
        return Some(DeviceLane::Engine { track, row });
    }
    // Queue names start with `q` (`qSyncIO0`, `qScalarSpillReload0`).
    (group.starts_with('q') && !group.contains(' '))
        .then_some(DeviceLane::DmaQueue { queue: group, row })
}

/// A queue name without its queue and DMA-engine suffixes
/// (`qSyncIO0-Q0-E64` → `qSyncIO0`), as Neuron Explorer groups queues.
pub fn queue_of(queue_name: &str) -> &str {
    match queue_name.rfind("-Q") {
        Some(i) if queue_name[i + 2..].starts_with(|c: char| c.is_ascii_digit()) => {
            &queue_name[..i]
        }
        _ => queue_name,
    }
}

/// One table the profile directory held, as read.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TableInfo {
    pub name: String,
    /// The file it came from.
    pub file: String,
    pub rows: usize,
    /// Columns (name, Arrow type), in file order.
    pub columns: Vec<(String, String)>,
    /// Columns this reader does not use: kept (in the events' args, or in
    /// the table listing for tables it does not read) and listed.
    pub unused_columns: Vec<String>,
    /// A table this reader knows (`Instruction`, `DmaPacket`, …).
    pub known: bool,
    pub codecs: Vec<String>,
    pub created_by: Option<String>,
}

/// Per instruction (a row of `Instruction`), in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Instructions {
    /// The instruction's slice in the trace
    /// ([`NO_SLICE`](crate::ids::NO_SLICE) when it has none).
    pub slice: Vec<u32>,
    pub start_ns: Vec<i64>,
    pub end_ns: Vec<i64>,
    /// `engine` as written (`Tensor`; `ActiveTime` spells it `tensor`).
    pub engine: Vec<StrId>,
    pub opcode: Vec<StrId>,
    pub hlo_name: Vec<StrId>,
    pub layer: Vec<StrId>,
    pub nki_source: Vec<StrId>,
    /// Columns below: [`NONE_I64`] where null.
    pub evt_wait_ns: Vec<i64>,
    pub dma_wait_ns: Vec<i64>,
    pub hbm_read: Vec<i64>,
    pub hbm_write: Vec<i64>,
    pub sbuf_read: Vec<i64>,
    pub sbuf_write: Vec<i64>,
    pub spill_save: Vec<i64>,
    pub spill_reload: Vec<i64>,
    pub raw_flops: Vec<i64>,
    pub adjusted_flops: Vec<i64>,
    pub flops_transpose: Vec<i64>,
}

impl Instructions {
    pub fn len(&self) -> usize {
        self.start_ns.len()
    }
    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }
}

/// Per DMA packet (a row of `DmaPacket`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DmaPackets {
    pub slice: Vec<u32>,
    pub start_ns: Vec<i64>,
    pub end_ns: Vec<i64>,
    pub engine_idx: Vec<i64>,
    /// `queue_name` as written (`qSyncIO0-Q0-E64`).
    pub queue_name: Vec<StrId>,
    pub queue_type: Vec<StrId>,
    pub transfer_bytes: Vec<i64>,
}

impl DmaPackets {
    pub fn len(&self) -> usize {
        self.start_ns.len()
    }
    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }
}

/// The typed part of a Neuron device profile read from Parquet.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceProfile {
    /// `Metadata.profile_schema_version`.
    pub schema_version: Option<String>,
    pub tables: Vec<TableInfo>,
    /// `Metadata` and `ExecutionInfo` (first row), every column as text.
    pub metadata: Vec<(String, String)>,
    /// `Summary` (first row), numeric columns.
    pub summary: Vec<(String, f64)>,
    pub instructions: Instructions,
    pub dma: DmaPackets,
    /// `ActiveTime`: (engine as written, start, end).
    pub active: Vec<(StrId, i64, i64)>,
    /// `ExecutionInfo`'s window, else `Metadata`'s hardware timestamps.
    pub execution_ns: Option<(i64, i64)>,
    /// Opened beside a system profile: where its times were placed and why.
    pub placement: Option<String>,
}

impl DeviceProfile {
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
    pub fn meta_i64(&self, key: &str) -> Option<i64> {
        self.meta(key)?.trim().parse().ok()
    }
    pub fn meta_f64(&self, key: &str) -> Option<f64> {
        self.meta(key)?.trim().parse().ok()
    }
    pub fn summary(&self, key: &str) -> Option<f64> {
        self.summary.iter().find(|(k, _)| k == key).map(|&(_, v)| v)
    }
    /// Whether the schema is one this reader understands (major version 7).
    pub fn schema_known(&self) -> bool {
        self.schema_version
            .as_deref()
            .is_some_and(|v| v.split('.').next() == SCHEMA_VERSION.split('.').next())
    }
}

/// `value` unless it is [`NONE_I64`].
pub fn opt(v: i64) -> Option<i64> {
    (v != NONE_I64).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_names_as_neuron_explorer_writes_them() {
        assert_eq!(
            lane_of("TensorMatrix Engine - Row 2"),
            Some(DeviceLane::Engine {
                track: "TensorMatrix",
                row: 2
            })
        );
        assert_eq!(
            lane_of("DMA Engine 64 - Row 1"),
            Some(DeviceLane::DmaEngine { index: 64, row: 1 })
        );
        assert_eq!(
            lane_of("qScalarSpillReload0 - Row 7"),
            Some(DeviceLane::DmaQueue {
                queue: "qScalarSpillReload0",
                row: 7
            })
        );
        assert_eq!(lane_of("thread 7"), None);
        assert_eq!(lane_of("Some thing - Row x"), None);
        assert_eq!(queue_of("qSyncIO0-Q0-E64"), "qSyncIO0");
        assert_eq!(queue_of("qPlain"), "qPlain");
    }
}

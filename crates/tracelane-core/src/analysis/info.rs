//! A summary of an imported trace: what `tracelane info` prints.

use serde::Serialize;
use std::collections::BTreeMap;

use crate::model::{Trace, TrackKind};

#[derive(Debug, Serialize)]
pub struct TrackInfo {
    pub process: String,
    pub thread: String,
    pub name: Option<String>,
    pub kind: &'static str,
    pub slices: u32,
    pub max_depth: u16,
}

#[derive(Debug, Serialize)]
pub struct WarningInfo {
    pub kind: &'static str,
    /// `note`, `repaired`, `skipped` or `lost` ([`crate::warnings::Severity`]).
    pub severity: &'static str,
    pub count: u64,
    pub message: String,
    pub example: String,
}

#[derive(Debug, Serialize)]
pub struct Info {
    pub format: String,
    pub bytes: u64,
    pub events_by_phase: BTreeMap<String, u64>,
    pub events_by_category: BTreeMap<String, u64>,
    pub slices: usize,
    pub instants: usize,
    pub counter_samples: usize,
    pub flows: usize,
    pub tracks: Vec<TrackInfo>,
    pub first_start_ns: Option<i64>,
    pub last_end_ns: Option<i64>,
    pub span_ns: Option<i64>,
    pub clock_offset_ns: i64,
    pub time_unit_decision: String,
    /// How the file was read where its format has variants or rests on
    /// inference (Neuron profiles: the variant, the readings taken).
    pub readings: Vec<String>,
    /// `distributedInfo`: which rank of which run this trace is.
    pub distributed: Option<crate::distributed::Distributed>,
    pub links: BTreeMap<&'static str, u64>,
    pub truncated: bool,
    pub warnings: Vec<WarningInfo>,
}

pub fn info(t: &Trace) -> Info {
    let d = &t.diagnostics;
    let span = t.time_span_ns();
    let l = &d.links;
    let links: BTreeMap<&'static str, u64> = [
        ("device_by_args", l.device_by_args),
        ("device_by_flow", l.device_by_flow),
        ("device_by_external_id", l.device_by_external_id),
        ("device_by_mapping", l.device_by_mapping),
        ("device_dangling", l.device_dangling),
        ("device_without_op", l.device_without_op),
        ("runtime_by_args", l.runtime_by_args),
        ("runtime_by_containment", l.runtime_by_containment),
        ("runtime_without_op", l.runtime_without_op),
        ("duplicate_correlation_ids", l.duplicate_correlation_ids),
        ("flows_unmatched", l.flows_unmatched),
        ("device_annotations_linked", l.device_annotations_linked),
    ]
    .into_iter()
    .collect();
    Info {
        format: d.format.clone(),
        bytes: d.bytes_read,
        events_by_phase: d.events_by_phase.clone(),
        events_by_category: d.events_by_category.clone(),
        slices: t.slices.len(),
        instants: t.instants.ts_ns.len(),
        counter_samples: t.counters.ts_ns.len(),
        flows: t.flows.id.len(),
        tracks: t
            .lane_order()
            .into_iter()
            .map(|k| &t.tracks[k.idx()])
            .map(|tr| TrackInfo {
                process: t.lane_label(t.processes[tr.process.0 as usize].pid),
                thread: t.lane_label(tr.tid),
                name: tr.name.map(|n| t.str(n).to_string()),
                kind: match tr.kind {
                    TrackKind::HostThread => "host",
                    TrackKind::DeviceStream => "device",
                },
                slices: tr.slices.end - tr.slices.start,
                max_depth: tr.max_depth,
            })
            .collect(),
        first_start_ns: span.map(|s| s.0),
        last_end_ns: span.map(|s| s.1),
        span_ns: span.map(|s| s.1 - s.0),
        clock_offset_ns: t.clock_offset_ns,
        time_unit_decision: d.time_unit_decision.clone(),
        readings: d.readings.clone(),
        distributed: t.distributed(),
        links,
        truncated: d.truncated,
        warnings: d
            .warnings
            .iter()
            .map(|(k, w)| WarningInfo {
                kind: k,
                count: w.count,
                severity: w.kind.severity.as_str(),
                message: w.message().to_string(),
                example: w.example.clone(),
            })
            .collect(),
    }
}

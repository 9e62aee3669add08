//! Messages between the page and the import worker, as JSON text, and the
//! summary the worker computes from an imported trace.
//!
//! File bytes never travel between the threads: the page posts a
//! `{read: id, blob, from, to}` object (the `Blob` is a handle) and the
//! worker reads that range itself. Everything else is one of these enums
//! serialised to a string.

use crate::compare_view::VariantSpec;
use crate::timeline_view::{Highlight, LaneView, PickedSlice, Scene, TimelineModel, ViewRequest};
use serde::{Deserialize, Serialize};
use tracelane_core::analysis::compare::Comparison;
use tracelane_core::analysis::ops::{op_table, op_tables, OpDetails, OpRow, OpTableOptions};
use tracelane_core::Trace;

/// Page → worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToWorker {
    /// A new file starts; read requests for its bytes follow.
    Begin { id: u32, name: String, size: u64 },
    /// All bytes up to the end, or up to `part_at`, were sent. With
    /// `part_at`, the rest of the file is being parsed by the helper worker,
    /// which sends its part through the port the page gave both workers.
    Finish { id: u32, part_at: Option<u64> },
    /// To the helper: a part of a file, `bytes` long, starting at byte
    /// `start` inside its event list (`bare`: a bare array); a read request
    /// for its bytes follows, then [`ToWorker::PartEnd`].
    Part {
        id: u32,
        start: u64,
        bytes: u64,
        bare: bool,
    },
    /// To the helper: no more bytes for this part (it is encoded and sent
    /// once they are all read).
    PartEnd { id: u32 },
    /// Stop import `id` (to either worker); the traces already open stay.
    Cancel { id: u32 },
    /// Details of one row of an imported trace (`id` as in `open`).
    Details { id: u32, request: u32, row: OpRow },
    /// The op table of import `id` by name and input shapes (computed when
    /// the page first groups by shape, not with every import).
    ShapeRows { id: u32, request: u32 },
    /// Paint this scene on the canvases the page handed over (an
    /// `{attach: id, rects, overlay}` object message with two transferred
    /// `OffscreenCanvas`es). `sent_ms` is when the page sent it
    /// (`timeOrigin + now()`, comparable across threads).
    View {
        id: u32,
        /// The page's number for this scene; [`FromWorker::Painted`] echoes it.
        frame: u32,
        scene: Box<Scene>,
        sent_ms: f64,
    },
    /// What lies under a point of the timeline.
    Pick {
        id: u32,
        request: u32,
        view: ViewRequest,
        row: u32,
        x_px: f64,
        /// A hover (tooltip) rather than a click (details panel).
        hover: bool,
    },
    /// Selects a slice by index (a dependency-chain link).
    Select { id: u32, request: u32, slice: u32 },
    /// The `index`-th slice matching `highlight` (modulo the count).
    Find {
        id: u32,
        request: u32,
        highlight: Highlight,
        index: i64,
    },
    /// Measures and compares variants (the first is the baseline).
    Compare {
        request: u32,
        variants: Vec<VariantSpec>,
    },
    /// The op table of the events that start inside `[start_ns, end_ns)`.
    RangeTable {
        id: u32,
        request: u32,
        start_ns: i64,
        end_ns: i64,
    },
}

/// Worker → page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromWorker {
    /// The worker's wasm is loaded and it listens.
    Ready,
    /// Bytes of the file consumed so far (by this worker).
    Progress {
        id: u32,
        bytes: u64,
    },
    /// The first bytes were read: `bare` is `Some` when the file is plain
    /// Chrome JSON whose event list has begun (the rest may be split with
    /// the helper), `None` otherwise.
    Head {
        id: u32,
        bare: Option<bool>,
    },
    /// The helper's part could not be merged: send the bytes from `from` on.
    NeedBytes {
        id: u32,
        from: u64,
    },
    Done {
        id: u32,
        summary: Box<Summary>,
    },
    /// The file could not be imported; `message` is for the user.
    Failed {
        id: u32,
        message: String,
    },
    /// Answer to [`ToWorker::ShapeRows`].
    ShapeRows {
        request: u32,
        rows: Vec<OpRow>,
    },
    /// Answer to [`ToWorker::Details`].
    Details {
        request: u32,
        details: OpDetails,
    },
    /// A [`ToWorker::View`] was painted: milliseconds from the page's send
    /// to the end of painting, and the worker's layout and paint parts.
    Painted {
        /// The scene painted ([`ToWorker::View`]'s `frame`).
        frame: u32,
        frame_ms: f64,
        layout_ms: f64,
        paint_ms: f64,
        renderer: String,
    },
    /// Answer to [`ToWorker::Pick`] and [`ToWorker::Select`].
    Picked {
        request: u32,
        hover: bool,
        slice: Option<PickedSlice>,
    },
    /// Answer to [`ToWorker::Find`].
    Found {
        request: u32,
        count: usize,
        index: i64,
        slice: Option<PickedSlice>,
    },
    /// Answer to [`ToWorker::Compare`]: the comparison, or why not.
    Compared {
        request: u32,
        result: Result<Box<Comparison>, String>,
    },
    /// Answer to [`ToWorker::RangeTable`].
    RangeTable {
        request: u32,
        table: Box<RangeOps>,
    },
}

/// The op table of a time range (by name and by name + shapes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RangeOps {
    pub start_ns: i64,
    pub end_ns: i64,
    pub rows_by_name: Vec<OpRow>,
    pub rows_by_shape: Option<Vec<OpRow>>,
    pub self_cpu_total_ns: i64,
    pub self_device_total_ns: i64,
}

/// The op table restricted to events starting in `[start_ns, end_ns)`.
pub fn range_ops(trace: &Trace, start_ns: i64, end_ns: i64) -> RangeOps {
    let (by_name, by_shape) = op_tables(trace, Some((start_ns, end_ns)));
    RangeOps {
        start_ns,
        end_ns,
        self_cpu_total_ns: by_name.self_cpu_total_ns,
        self_device_total_ns: by_name.self_device_total_ns,
        rows_by_name: by_name.rows,
        rows_by_shape: Some(by_shape.rows),
    }
}

/// The op table by name and input shapes ([`ToWorker::ShapeRows`]).
pub fn shape_rows(trace: &Trace) -> Vec<OpRow> {
    op_table(
        trace,
        OpTableOptions {
            by_shape: true,
            range_ns: None,
        },
    )
    .rows
}

/// What the page shows about one imported trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The import's id: the worker keeps the model under it for details.
    pub id: u32,
    pub name: String,
    /// Size of the file as dropped (compressed if gzip).
    pub file_bytes: u64,
    /// Bytes of JSON read.
    pub json_bytes: u64,
    pub events: u64,
    pub slices: u64,
    pub span_ns: i64,
    /// Device lanes, labelled (e.g. `GPU 0 / stream 7`).
    pub devices: Vec<String>,
    pub import_ms: f64,
    /// Where the import's time and memory went (filled in by the worker).
    pub phases: ImportPhases,
    pub rows_by_name: Vec<OpRow>,
    /// By name and input shapes: `None` until the page asks for them
    /// ([`ToWorker::ShapeRows`]).
    pub rows_by_shape: Option<Vec<OpRow>>,
    pub self_cpu_total_ns: i64,
    pub self_device_total_ns: i64,
    pub device_without_op_ns: i64,
    pub diagnostics: DiagnosticsView,
    /// Names usable as comparison regions, with their occurrences.
    pub regions: Vec<(String, u64)>,
    /// Timeline lanes in display order, and the time span they cover.
    pub lanes: Vec<LaneView>,
    pub timeline_start_ns: i64,
    pub timeline_end_ns: i64,
}

/// Timings and memory of one import in the worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ImportPhases {
    /// From the import's start to the last byte parsed and the helper's
    /// part merged (reading the file, inflating, parsing, building columns).
    pub parse_ms: f64,
    /// Of `parse_ms`: waiting for the helper's part after this worker had
    /// parsed its own bytes.
    pub part_wait_ms: f64,
    /// Of `parse_ms`: merging the helper's part.
    pub merge_ms: f64,
    /// `Importer::finish`: sorting, nesting, flows, linking.
    pub link_ms: f64,
    /// Timeline index and the summary (two op tables) for the page.
    pub views_ms: f64,
    /// The worker's wasm memory after the import (it never shrinks, so
    /// this is its peak).
    pub wasm_memory_bytes: u64,
    /// Workers that parsed the file: 2 when the helper's half was merged.
    pub workers: u32,
    /// The helper's wasm memory after its part (0 without one); the helper
    /// is ended afterwards, so this is memory the import held only briefly.
    pub helper_wasm_memory_bytes: u64,
}

/// The import-diagnostics panel's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct DiagnosticsView {
    pub format: String,
    pub time_unit_decision: String,
    pub truncated: bool,
    pub events_by_phase: Vec<(String, u64)>,
    pub events_by_category: Vec<(String, u64)>,
    pub links: Vec<(String, u64)>,
    pub warnings: Vec<WarningView>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WarningView {
    pub kind: String,
    pub count: u64,
    pub message: String,
    pub example: String,
}

/// Computes everything the page shows for a trace.
pub fn summarize(
    trace: &Trace,
    timeline: &TimelineModel,
    id: u32,
    name: &str,
    file_bytes: u64,
    import_ms: f64,
) -> Summary {
    let by_name = op_table(trace, OpTableOptions::default());
    let info = tracelane_core::analysis::info::info(trace);
    let devices = info
        .tracks
        .iter()
        .filter(|t| t.kind == "device" && t.slices > 0)
        .map(|t| match &t.name {
            Some(n) => format!("device {} / {}", t.process, n.trim()),
            None => format!("device {} / {}", t.process, t.thread),
        })
        .collect();
    let d = &trace.diagnostics;
    Summary {
        id,
        name: name.to_string(),
        file_bytes,
        json_bytes: d.bytes_read,
        events: d.events_by_phase.values().sum(),
        slices: trace.slices.len() as u64,
        span_ns: info.span_ns.unwrap_or(0),
        devices,
        import_ms,
        phases: ImportPhases::default(),
        self_cpu_total_ns: by_name.self_cpu_total_ns,
        self_device_total_ns: by_name.self_device_total_ns,
        device_without_op_ns: by_name.device_without_op_ns,
        regions: tracelane_core::analysis::scope::region_names(trace)
            .into_iter()
            .take(200)
            .collect(),
        lanes: timeline.lanes.clone(),
        timeline_start_ns: timeline.start_ns,
        timeline_end_ns: timeline.end_ns,
        rows_by_name: by_name.rows,
        rows_by_shape: None,
        diagnostics: DiagnosticsView {
            format: info.format.clone(),
            time_unit_decision: info.time_unit_decision.clone(),
            truncated: info.truncated,
            events_by_phase: info.events_by_phase.into_iter().collect(),
            events_by_category: info.events_by_category.into_iter().collect(),
            links: info
                .links
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            warnings: info
                .warnings
                .into_iter()
                .map(|w| WarningView {
                    kind: w.kind.to_string(),
                    count: w.count,
                    message: w.message,
                    example: w.example,
                })
                .collect(),
        },
    }
}

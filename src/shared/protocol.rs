//! Every message between the page and the workers, and the summary the
//! worker computes from an imported trace.
//!
//! Messages are these enums as JSON text, externally tagged (serde's
//! default: `{"variant": {…}}`) — internally tagged enums cost the page and
//! the worker several times the code to read (measured: 72 KB of wasm for
//! `FromWorker` and `Answer` alone). What must travel as a JavaScript
//! object — a `Blob` to read, a `MessagePort`, an `OffscreenCanvas`, a
//! transferred buffer — is a `transfer::Transfer` (wasm only),
//! written and read in one place. File bytes never travel between threads
//! as messages: the page posts a `Blob` handle and a range, and the worker
//! reads it itself.
//!
//! Questions are [`Ask`]s: the page's client numbers them and awaits the
//! [`FromWorker::Answer`] with the same number.

use crate::shared::compare_view::VariantSpec;
use crate::shared::timeline_view::{
    Highlight, LaneView, PickedSlice, Scene, TimelineModel, ViewRequest,
};
use serde::{Deserialize, Serialize};
use tracelane_core::analysis::compare::Comparison;
use tracelane_core::analysis::engines::EngineReport;
use tracelane_core::analysis::frame::Mode;
use tracelane_core::analysis::insights::InsightsReport;
use tracelane_core::analysis::op_details::OpDetails;
use tracelane_core::analysis::ops::{op_table, op_tables, OpRow, OpTableOptions};
use tracelane_core::analysis::regions::RegionsReport;
use tracelane_core::analysis::roofline::RooflineReport;
use tracelane_core::analysis::Scope;
use tracelane_core::analysis::WhySlow;
use tracelane_core::Trace;

/// Which of the page's timelines a scene, a canvas or a painted frame
/// belongs to: the trace's own, or one side of the Compare view's split
/// (both sides may show one trace, so a timeline is named by its place,
/// not by its trace).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TimelineSlot {
    /// The Timeline view of the trace shown.
    #[default]
    Main,
    /// The Compare view's split: the baseline (A) above …
    SplitA,
    /// … the candidate (B) below.
    SplitB,
}

impl TimelineSlot {
    /// Every slot, in the page's order.
    pub const ALL: [TimelineSlot; 3] = [Self::Main, Self::SplitA, Self::SplitB];

    /// Its place in [`TimelineSlot::ALL`].
    pub fn index(self) -> u32 {
        self as u32
    }

    /// Suffix of the DOM ids inside a timeline: none for the main one (its
    /// ids are the page's long-standing ones), `-a` / `-b` for the split.
    pub fn id_suffix(self) -> &'static str {
        match self {
            Self::Main => "",
            Self::SplitA => "-a",
            Self::SplitB => "-b",
        }
    }
}

/// Page → worker: commands (no answer but events) and questions
/// ([`ToWorker::Ask`], answered by [`FromWorker::Answer`] with the same
/// request number).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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
    /// The tab of trace `id` was closed: drop its model → [`FromWorker::Closed`].
    Close { id: u32 },
    /// Paint this scene on the canvases the page handed over
    /// (`transfer::Transfer::Attach`). `sent_ms` is when the page
    /// sent it (`timeOrigin + now()`, comparable across threads).
    View {
        id: u32,
        /// Which of the page's timelines it is for ([`TimelineSlot`]).
        slot: TimelineSlot,
        /// The page's number for this scene; [`FromWorker::Painted`] echoes it.
        frame: u32,
        scene: Box<Scene>,
        sent_ms: f64,
    },
    /// A question about an imported trace; the answer carries `request`.
    Ask { request: u32, ask: Ask },
}

/// Page → a worker of the ranks pool (JSON text; a rank's file travels as
/// `transfer::Transfer::Rank`, which the worker answers with
/// [`FromRanks::Summarised`] or [`FromRanks::Failed`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToRanks {
    /// Combine the ranks' summaries (as they came) into the report →
    /// [`FromRanks::Report`].
    Combine { summaries: Vec<String> },
    /// The run's own tables (steps, collectives, breakdown) of each rank,
    /// for the columnar export of job `job` → a `transfer::Transfer::Tables`
    /// per rank file (paths in the export's layout), then
    /// [`FromRanks::Exported`].
    Export { summaries: Vec<String>, job: String },
}

/// A worker of the ranks pool → the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FromRanks {
    Ready,
    Progress {
        id: u32,
        bytes: u64,
    },
    /// Rank `id` reduced to its summary (JSON text the page keeps and
    /// hands back for [`ToRanks::Combine`] without reading it); the model
    /// is gone. `wasm_memory_bytes`: the worker's memory then (its peak).
    Summarised {
        id: u32,
        summary: String,
        wasm_memory_bytes: u64,
    },
    Failed {
        id: u32,
        message: String,
    },
    /// An archive's traces were all sent ([`crate::transfer::Transfer::Entry`]);
    /// its other files, passed over, by path.
    Unpacked {
        passed_over: Vec<String>,
    },
    /// The export's run tables were sent; `ranks[k]` is rank file k's rank
    /// (its partition in the layout).
    Exported {
        ranks: Vec<i64>,
    },
    /// The combined report as the view shows it, and as JSON (`tracelane
    /// ranks --format json`'s object) for the download.
    Report {
        view: Box<crate::shared::report_view::ReportView>,
        json: String,
    },
}

/// A question the page asks the worker (about import `id` where it has one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ask {
    /// Details of one row of the op table → [`Answer::Details`].
    Details { id: u32, row: OpRow },
    /// The op table by name and input shapes (computed when the page first
    /// groups by shape, not with every import) → [`Answer::ShapeRows`].
    ShapeRows { id: u32 },
    /// What lies under a point of the timeline → [`Answer::Picked`].
    Pick {
        id: u32,
        view: ViewRequest,
        row: u32,
        x_px: f64,
        /// A hover (tooltip) rather than a click (details panel).
        hover: bool,
    },
    /// Selects a slice by index (a dependency-chain link) → [`Answer::Picked`].
    Select { id: u32, slice: u32 },
    /// The `index`-th slice matching `highlight` (modulo the count) →
    /// [`Answer::Found`].
    Find {
        id: u32,
        highlight: Highlight,
        index: i64,
    },
    /// Measures and compares variants (the first is the baseline) →
    /// [`Answer::Compared`].
    Compare { variants: Vec<VariantSpec> },
    /// Lines variant `a` (the baseline) up against `b` op by op, by their
    /// framework structure (`tracelane diff`); the worker says how far it
    /// has come ([`FromWorker::AskProgress`]) → [`Answer::Aligned`].
    Align { a: VariantSpec, b: VariantSpec },
    /// Each of two aligned variants on its own roofline, `device_ns` its
    /// device time in its scope → [`Answer::AlignRoofline`].
    AlignRoofline {
        a: VariantSpec,
        b: VariantSpec,
        device_ns: [i64; 2],
    },
    /// The op table of the events that start inside `[start_ns, end_ns)` →
    /// [`Answer::RangeTable`].
    RangeTable { id: u32, start_ns: i64, end_ns: i64 },
    /// Why is it slow: where device time goes and the critical path of a
    /// scope, under tracelane's or HTA's rules → [`Answer::WhySlow`].
    WhySlow { id: u32, scope: Scope, mode: Mode },
    /// What to change first: the insights of a scope → [`Answer::Insights`].
    Insights { id: u32, scope: Scope },
    /// The trace's automatic regions → [`Answer::Regions`].
    Regions { id: u32 },
    /// Memory per device: the peak and what holds it, and what is live at
    /// `at_ns` (the trace's clock) when given → [`Answer::Memory`].
    Memory { id: u32, at_ns: Option<i64> },
    /// The allocations of the snapshot's `device`-th device as bands,
    /// built for `range` (the trace's clock, ns; `None`: the whole
    /// snapshot) and kept until another range or device is asked, painted
    /// for the window `view` (`None`: the range) on the canvas handed over
    /// ([`crate::transfer::Transfer::AttachBands`]), `width` × `height`
    /// cells → [`Answer::MemoryBands`].
    MemoryBands {
        id: u32,
        device: u32,
        range: Option<(i64, i64)>,
        view: Option<(i64, i64)>,
        width: u32,
        height: u32,
    },
    /// What the last painted bands show at cell (`x`, `y`) →
    /// [`Answer::MemoryBand`].
    MemoryBandAt { id: u32, x: u32, y: u32 },
    /// Two traces' allocator snapshots compared, each (trace, its label):
    /// the CLI's `tracelane memory BASELINE.pickle OTHER.pickle` →
    /// [`Answer::SnapshotsCompared`].
    CompareSnapshots {
        baseline: (u32, String),
        other: (u32, String),
    },
    /// Adds the analyses' counters (queue length, copy bandwidth, memory)
    /// to the trace's timeline as lanes, once → [`Answer::Lanes`].
    CounterLanes { id: u32 },
    /// A device profile's engines and DMA queues → [`Answer::Engines`].
    Engines { id: u32, scope: Scope },
    /// Every op (or HLO op) on the roofline, with the roofs overridden
    /// where given → [`Answer::Roofline`].
    Roofline {
        id: u32,
        scope: Scope,
        peak_tflops: Option<f64>,
        peak_gbps: Option<f64>,
    },
}

/// The worker's answer to an [`Ask`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    Details {
        details: OpDetails,
    },
    ShapeRows {
        rows: Vec<OpRow>,
    },
    Picked {
        slice: Option<PickedSlice>,
    },
    Found {
        count: usize,
        index: i64,
        slice: Option<PickedSlice>,
    },
    Compared {
        comparison: Box<Comparison>,
    },
    Aligned {
        view: Box<crate::shared::align_view::AlignedView>,
    },
    AlignRoofline {
        sides: Box<[Option<tracelane_core::analysis::align::RooflinePosition>; 2]>,
    },
    RangeTable {
        table: Box<RangeOps>,
    },
    WhySlow {
        report: Box<WhySlow>,
    },
    Insights {
        report: Box<InsightsReport>,
    },
    Regions {
        report: Box<RegionsReport>,
    },
    /// The Memory view laid out as tables, the trace's start (ns: typed
    /// moments count from it) and each device's peak (ns).
    /// `snapshot_devices`: the allocator snapshot's devices, whose
    /// allocations [`Ask::MemoryBands`] draws.
    Memory {
        view: Box<crate::shared::report_view::ReportView>,
        start_ns: i64,
        peaks: Vec<(String, i64)>,
        snapshot_devices: Vec<String>,
    },
    MemoryBands {
        frame: Box<crate::shared::bands_view::BandsFrame>,
    },
    /// `None`: nothing there.
    MemoryBand {
        band: Option<crate::shared::bands_view::BandText>,
    },
    SnapshotsCompared {
        view: Box<crate::shared::report_view::ReportView>,
    },
    /// The trace's timeline lanes with the counter lanes added (`None`:
    /// they were already).
    Lanes {
        lanes: Option<Vec<LaneView>>,
    },
    Engines {
        report: Box<EngineReport>,
    },
    Roofline {
        report: Box<RooflineReport>,
    },
}

/// Worker → page: events, and answers to [`ToWorker::Ask`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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
    /// Trace `id`'s model is gone: the worker's live heap bytes before and
    /// after (its wasm memory stays: freed blocks serve the next trace).
    Closed {
        id: u32,
        heap_before: u64,
        heap_after: u64,
    },
    /// The file could not be imported; `message` is for the user.
    Failed {
        id: u32,
        message: String,
    },
    /// A [`ToWorker::View`] was painted: milliseconds from the page's send
    /// to the end of painting, and the worker's layout and paint parts.
    Painted {
        slot: TimelineSlot,
        /// The scene painted ([`ToWorker::View`]'s `frame`).
        frame: u32,
        frame_ms: f64,
        layout_ms: f64,
        paint_ms: f64,
        renderer: String,
    },
    /// Painted scene `frame` has reached the screen: sent from the worker's
    /// next animation frame after the paint (an OffscreenCanvas frame is
    /// handed to the compositor when the painting task ends, after
    /// [`FromWorker::Painted`] was posted). What reads pixels waits on this.
    Shown {
        slot: TimelineSlot,
        frame: u32,
    },
    /// How far the answer to [`ToWorker::Ask`] number `request` has come
    /// (a long one: [`Ask::Align`]): its stage, and the share done (0 to 1).
    AskProgress {
        request: u32,
        stage: String,
        done: f64,
    },
    /// The answer to [`ToWorker::Ask`] number `request`, or why there is none.
    Answer {
        request: u32,
        answer: Result<Answer, String>,
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

/// The op table by name and input shapes ([`Ask::ShapeRows`]).
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
    /// ([`Ask::ShapeRows`]).
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
    /// The trace holds a device profile's engine lanes (the Engines view).
    pub engines: bool,
    /// The trace holds `[memory]` records (the Memory view).
    pub memory: bool,
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
    /// Of `parse_ms`: the decoder worker's time on an archive, a device
    /// profile's tables or an allocator snapshot (0 for other files).
    #[serde(default)]
    pub decode_ms: f64,
    /// Of `decode_ms`: the decoder waiting for the file's bytes.
    #[serde(default)]
    pub decode_read_wait_ms: f64,
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
    /// The decoder worker's wasm memory after its answer (0 when it had no
    /// part in the import); a decoder left holding much is ended then.
    #[serde(default)]
    pub decoder_wasm_memory_bytes: u64,
}

/// The import-diagnostics panel's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct DiagnosticsView {
    pub format: String,
    pub time_unit_decision: String,
    /// How the file was read: its variant, the readings taken where its
    /// format is inferred (Neuron profiles).
    pub readings: Vec<String>,
    /// `distributedInfo` in words (`rank 2 of 4 (gloo); …`).
    pub distributed: Option<String>,
    pub truncated: bool,
    pub events_by_phase: Vec<(String, u64)>,
    pub events_by_category: Vec<(String, u64)>,
    pub links: Vec<(String, u64)>,
    pub warnings: Vec<WarningView>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WarningView {
    pub kind: String,
    /// `note`, `repaired`, `skipped` or `lost` (the core's warnings registry).
    pub severity: String,
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
    // A device profile's many lanes (one per engine row, DMA engine, queue
    // row) are summed up per process.
    use tracelane_core::device_profile::{lane_of, DeviceLane};
    let profile_lane = |name: Option<&str>| {
        name.and_then(lane_of).map(|l| match l {
            DeviceLane::Engine { .. } => 0,
            DeviceLane::DmaEngine { .. } => 1,
            DeviceLane::DmaQueue { .. } => 2,
        })
    };
    let mut profile_lanes: Vec<(String, [u32; 3])> = Vec::new();
    for tr in &trace.tracks {
        let Some(kind) = profile_lane(tr.name.map(|n| trace.str(n))) else {
            continue;
        };
        if tr.slices.is_empty() {
            continue;
        }
        let process = trace.process_label(tr.process.0 as usize);
        match profile_lanes.iter_mut().find(|(p, _)| *p == process) {
            Some((_, n)) => n[kind] += 1,
            None => {
                let mut n = [0; 3];
                n[kind] = 1;
                profile_lanes.push((process, n));
            }
        }
    }
    let mut devices: Vec<String> = info
        .tracks
        .iter()
        .filter(|t| t.kind == "device" && t.slices > 0 && profile_lane(t.name.as_deref()).is_none())
        .map(|t| match &t.name {
            Some(n) => format!("device {} / {}", t.process, n.trim()),
            None => format!("device {} / {}", t.process, t.thread),
        })
        .collect();
    for (process, [engines, dma, queues]) in profile_lanes {
        devices.push(format!(
            "{process}: {engines} engine rows, {dma} DMA engine rows, {queues} queue rows"
        ));
    }
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
        engines: tracelane_core::analysis::engines::has_engines(trace),
        memory: tracelane_core::analysis::memory::has_memory(trace),
        rows_by_name: by_name.rows,
        rows_by_shape: None,
        diagnostics: DiagnosticsView {
            format: info.format.clone(),
            time_unit_decision: info.time_unit_decision.clone(),
            readings: info.readings.clone(),
            distributed: info.distributed.as_ref().map(|d| d.describe()),
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
                    severity: w.severity.to_string(),
                    count: w.count,
                    message: w.message,
                    example: w.example,
                })
                .collect(),
        },
    }
}

#[cfg(test)]
#[path = "protocol_tests.rs"]
mod tests;

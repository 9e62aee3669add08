//! The messages: every variant crosses as JSON text and comes back equal.
use super::*;
use crate::shared::compare_view::compare_traces;
use crate::shared::timeline_view::kept_args;
use tracelane_core::analysis::op_details::op_details;
use tracelane_core::analysis::Scope;
use tracelane_core::{import_bytes, ImportOptions};

fn round_trip<T: Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(v: &T) {
    let text = serde_json::to_string(v).unwrap();
    assert_eq!(&serde_json::from_str::<T>(&text).unwrap(), v, "{text}");
}

/// One message of each variant, from a real trace.
fn samples() -> (Vec<ToWorker>, Vec<FromWorker>) {
    let t = import_bytes(
        include_bytes!("../../tests/fixtures/public/hta_triton_example.json.gz"),
        ImportOptions::default(),
    )
    .unwrap();
    let timeline = TimelineModel::new(&t);
    let summary = summarize(&t, &timeline, 3, "triton.json.gz", 1234, 5.5);
    let row = summary.rows_by_name[0].clone();
    let kernel = (0..t.slices.len())
        .find(|&i| t.slice_name(i) == "triton_poi_fused_add_cos_sin_0" && !t.on_host(i))
        .unwrap();
    let picked = timeline
        .describe(&t, kernel, &|a| kept_args(&t, a))
        .unwrap();
    let highlight = Highlight {
        text: "triton".into(),
        exact: false,
    };
    let view = ViewRequest {
        start_ns: 10,
        ns_per_px: 2.5,
        width_px: 800.0,
        collapsed: vec![1],
        hide_empty: false,
        highlight: Some(highlight.clone()),
        colour_by_name: true,
    };
    let spec = |scope| VariantSpec {
        trace: 3,
        file: "triton.json.gz".into(),
        region: scope,
    };
    let variants = vec![spec(Scope::Whole), spec(Scope::named("ProfilerStep#1"))];
    let comparison = compare_traces(&variants, |_| Some(&t)).unwrap();
    let aligned = crate::shared::align_view::align_traces(
        &variants[0],
        &variants[1],
        |_| Some(&t),
        &mut |_, _| {},
    )
    .unwrap();
    let asks = vec![
        Ask::Details {
            id: 3,
            row: row.clone(),
        },
        Ask::ShapeRows { id: 3 },
        Ask::Pick {
            id: 3,
            view: view.clone(),
            row: 2,
            x_px: 17.5,
            hover: true,
        },
        Ask::Select { id: 3, slice: 9 },
        Ask::Find {
            id: 3,
            highlight,
            index: -1,
        },
        Ask::Align {
            a: variants[0].clone(),
            b: variants[1].clone(),
        },
        Ask::AlignRoofline {
            a: variants[0].clone(),
            b: variants[1].clone(),
            device_ns: [5, 7],
        },
        Ask::Compare { variants },
        Ask::RangeTable {
            id: 3,
            start_ns: 0,
            end_ns: 99,
        },
        Ask::WhySlow {
            id: 3,
            scope: Scope::named("ProfilerStep#1"),
            mode: Mode::Hta,
        },
        Ask::CounterLanes { id: 3 },
        Ask::Insights {
            id: 3,
            scope: Scope::Whole,
        },
        Ask::Regions { id: 3 },
        Ask::Memory {
            id: 3,
            at_ns: Some(5),
        },
        Ask::MemoryBands {
            id: 3,
            device: 0,
            range: Some((1, 9)),
            view: None,
            width: 640,
            height: 200,
        },
        Ask::MemoryBandAt { id: 3, x: 4, y: 5 },
        Ask::CompareSnapshots {
            baseline: (3, "a.pickle".into()),
            other: (4, "b.pickle".into()),
        },
        Ask::Engines {
            id: 3,
            scope: Scope::Whole,
        },
        Ask::Roofline {
            id: 3,
            scope: Scope::Whole,
            peak_tflops: Some(312.0),
            peak_gbps: None,
        },
    ];
    let device = import_bytes(
        include_bytes!("../../tests/fixtures/neuron-provisional/device_profile_model_1.pftrace"),
        ImportOptions::default(),
    )
    .unwrap();
    let answers = vec![
        Answer::Details {
            details: op_details(&t, &row),
        },
        Answer::ShapeRows {
            rows: shape_rows(&t),
        },
        Answer::Picked {
            slice: Some(picked.clone()),
        },
        Answer::Found {
            count: 4,
            index: 1,
            slice: None,
        },
        Answer::Compared {
            comparison: Box::new(comparison),
        },
        Answer::Aligned {
            view: Box::new(aligned),
        },
        Answer::AlignRoofline {
            sides: Box::new([
                tracelane_core::analysis::align::position(&t, &Scope::Whole, 1),
                None,
            ]),
        },
        Answer::RangeTable {
            table: Box::new(range_ops(&t, 0, i64::MAX)),
        },
        Answer::WhySlow {
            report: Box::new(
                tracelane_core::analysis::why_slow(&t, &Scope::Whole, Mode::Exact, &|s| {
                    t.slice_args_json(s).to_string()
                })
                .unwrap(),
            ),
        },
        Answer::Lanes {
            lanes: Some(timeline.lanes.clone()),
        },
        Answer::Regions {
            report: Box::new(tracelane_core::analysis::regions::regions(&t)),
        },
        Answer::Memory {
            view: Box::new(crate::shared::memory_view::memory_view(
                &tracelane_core::analysis::memory::memory(
                    &t,
                    &Scope::Whole,
                    tracelane_core::analysis::memory::At::Peak,
                )
                .unwrap(),
            )),
            start_ns: 0,
            peaks: vec![("CUDA:0".into(), 5)],
            snapshot_devices: vec!["CUDA:0".into()],
        },
        Answer::MemoryBands {
            frame: Box::new(crate::shared::bands_view::BandsFrame {
                device: "CUDA:0".into(),
                entries: false,
                range: (0, 9_000),
                view: (1_000, 2_000),
                top: 1 << 30,
                allocations: 12,
                bands: 10,
                summarised: 2,
                smallest_drawn: 512,
                pieces: 40,
                builds: 1,
                build_ms: 1.5,
                raster_ms: 0.25,
                paint_ms: 0.5,
            }),
        },
        Answer::SnapshotsCompared {
            view: Box::new(crate::shared::memory_view::snapshot_comparison_view(
                &tracelane_core::memory_snapshot::compare::compare(
                    ("a", &Default::default()),
                    ("b", &Default::default()),
                ),
            )),
        },
        Answer::MemoryBand {
            band: Some(crate::shared::bands_view::BandText {
                band: Some(2),
                title: "2.00 MB block".into(),
                lines: vec!["train.py:3 step".into()],
            }),
        },
        Answer::Insights {
            report: Box::new(
                tracelane_core::analysis::insights::insights(&t, &Scope::Whole, &|s| {
                    t.slice_args_json(s).to_string()
                })
                .unwrap(),
            ),
        },
        Answer::Engines {
            report: Box::new(
                tracelane_core::analysis::engines::engines(&device, &Scope::Whole).unwrap(),
            ),
        },
        Answer::Roofline {
            report: Box::new(
                tracelane_core::analysis::roofline::roofline(
                    &t,
                    &Scope::Whole,
                    Default::default(),
                    &|s| t.slice_args_json(s).to_string(),
                )
                .unwrap(),
            ),
        },
    ];
    let mut to = vec![
        ToWorker::Begin {
            id: 3,
            name: "a.json".into(),
            size: 9,
        },
        ToWorker::Finish {
            id: 3,
            part_at: Some(5),
        },
        ToWorker::Part {
            id: 3,
            start: 5,
            bytes: 4,
            bare: true,
        },
        ToWorker::PartEnd { id: 3 },
        ToWorker::Cancel { id: 3 },
        ToWorker::Close { id: 3 },
        ToWorker::View {
            id: 3,
            slot: TimelineSlot::SplitB,
            frame: 7,
            scene: Box::new(Scene {
                view,
                selected: Some(picked),
                range: Some((1, 2)),
                dpr: 2.0,
                critical_path: Some(Mode::Exact),
                dark: true,
            }),
            sent_ms: 1.5,
        },
    ];
    to.extend(asks.into_iter().enumerate().map(|(k, ask)| ToWorker::Ask {
        request: k as u32,
        ask,
    }));
    let mut from = vec![
        FromWorker::Ready,
        FromWorker::Progress { id: 3, bytes: 10 },
        FromWorker::Head {
            id: 3,
            bare: Some(false),
        },
        FromWorker::NeedBytes { id: 3, from: 4 },
        FromWorker::Done {
            id: 3,
            summary: Box::new(summary),
        },
        FromWorker::Failed {
            id: 3,
            message: "not a trace".into(),
        },
        FromWorker::Closed {
            id: 3,
            heap_before: 9,
            heap_after: 4,
        },
        FromWorker::Painted {
            slot: TimelineSlot::SplitA,
            frame: 7,
            frame_ms: 1.0,
            layout_ms: 0.5,
            paint_ms: 0.25,
            renderer: "webgl2".into(),
        },
        FromWorker::Shown {
            slot: TimelineSlot::Main,
            frame: 7,
        },
        FromWorker::AskProgress {
            request: 4,
            stage: "aligning the op trees".into(),
            done: 0.5,
        },
        FromWorker::Answer {
            request: 99,
            answer: Err("this trace is no longer open".into()),
        },
    ];
    from.extend(
        answers
            .into_iter()
            .enumerate()
            .map(|(k, a)| FromWorker::Answer {
                request: k as u32,
                answer: Ok(a),
            }),
    );
    (to, from)
}

/// The variant's name; a new variant fails to compile here until a
/// sample of it is added above.
fn to_name(m: &ToWorker) -> &'static str {
    match m {
        ToWorker::Begin { .. } => "begin",
        ToWorker::Finish { .. } => "finish",
        ToWorker::Part { .. } => "part",
        ToWorker::PartEnd { .. } => "part_end",
        ToWorker::Cancel { .. } => "cancel",
        ToWorker::Close { .. } => "close",
        ToWorker::View { .. } => "view",
        ToWorker::Ask { ask, .. } => match ask {
            Ask::Details { .. } => "ask details",
            Ask::ShapeRows { .. } => "ask shape_rows",
            Ask::Pick { .. } => "ask pick",
            Ask::Select { .. } => "ask select",
            Ask::Find { .. } => "ask find",
            Ask::Compare { .. } => "ask compare",
            Ask::Align { .. } => "ask align",
            Ask::AlignRoofline { .. } => "ask align_roofline",
            Ask::RangeTable { .. } => "ask range_table",
            Ask::WhySlow { .. } => "ask why_slow",
            Ask::CounterLanes { .. } => "ask counter_lanes",
            Ask::Insights { .. } => "ask insights",
            Ask::Regions { .. } => "ask regions",
            Ask::Memory { .. } => "ask memory",
            Ask::MemoryBands { .. } => "ask memory_bands",
            Ask::MemoryBandAt { .. } => "ask memory_band_at",
            Ask::CompareSnapshots { .. } => "ask compare_snapshots",
            Ask::Engines { .. } => "ask engines",
            Ask::Roofline { .. } => "ask roofline",
        },
    }
}

fn from_name(m: &FromWorker) -> &'static str {
    match m {
        FromWorker::Ready => "ready",
        FromWorker::Progress { .. } => "progress",
        FromWorker::Head { .. } => "head",
        FromWorker::NeedBytes { .. } => "need_bytes",
        FromWorker::Done { .. } => "done",
        FromWorker::Failed { .. } => "failed",
        FromWorker::Closed { .. } => "closed",
        FromWorker::Painted { .. } => "painted",
        FromWorker::Shown { .. } => "shown",
        FromWorker::AskProgress { .. } => "ask_progress",
        FromWorker::Answer { answer: Err(_), .. } => "answer error",
        FromWorker::Answer { answer: Ok(a), .. } => match a {
            Answer::Details { .. } => "answer details",
            Answer::ShapeRows { .. } => "answer shape_rows",
            Answer::Picked { .. } => "answer picked",
            Answer::Found { .. } => "answer found",
            Answer::Compared { .. } => "answer compared",
            Answer::Aligned { .. } => "answer aligned",
            Answer::AlignRoofline { .. } => "answer align_roofline",
            Answer::RangeTable { .. } => "answer range_table",
            Answer::WhySlow { .. } => "answer why_slow",
            Answer::Lanes { .. } => "answer lanes",
            Answer::Insights { .. } => "answer insights",
            Answer::Regions { .. } => "answer regions",
            Answer::Memory { .. } => "answer memory",
            Answer::MemoryBands { .. } => "answer memory_bands",
            Answer::MemoryBand { .. } => "answer memory_band",
            Answer::SnapshotsCompared { .. } => "answer snapshots_compared",
            Answer::Engines { .. } => "answer engines",
            Answer::Roofline { .. } => "answer roofline",
        },
    }
}

/// A device profile's 88 lanes are one line of the trace's facts.
#[test]
fn a_device_profiles_lanes_are_summed_up_per_neuroncore() {
    let t = import_bytes(
        include_bytes!("../../tests/fixtures/neuron-provisional/device_profile_model_1.pftrace"),
        ImportOptions::default(),
    )
    .unwrap();
    let s = summarize(&t, &TimelineModel::new(&t), 1, "d.pftrace", 1, 1.0);
    assert_eq!(
        s.devices,
        ["NeuronCore (device profile): 10 engine rows, 32 DMA engine rows, 46 queue rows"]
    );
    assert!(s.engines);
}

#[test]
fn every_message_variant_survives_json() {
    let (to, from) = samples();
    let mut names: Vec<&str> = to.iter().map(to_name).collect();
    names.extend(from.iter().map(from_name));
    let n = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), n, "one sample per variant");
    assert_eq!(n, 26 + 29);
    for m in &to {
        round_trip(m);
    }
    for m in &from {
        round_trip(m);
    }
}

use super::*;

fn triton() -> Trace {
    let bytes = include_bytes!("../../../tests/fixtures/public/hta_triton_example.json.gz");
    tracelane_core::import_bytes(bytes, Default::default()).unwrap()
}

fn view_of(axis: TimeAxis, width_px: f64) -> ViewRequest {
    ViewRequest {
        start_ns: axis.start_ns,
        ns_per_px: axis.ns_per_px,
        width_px,
        ..Default::default()
    }
}

/// The display row of slice `s` with nothing collapsed.
fn row_of(m: &TimelineModel, t: &Trace, s: usize) -> u32 {
    let (lane, lane_row) = m.lane_row_of_slice(t, s).unwrap();
    row_layout(&m.lanes, &[], false).lane_first_row[lane as usize].unwrap() + lane_row as u32
}

#[test]
fn hidden_empty_lanes_take_no_row_and_an_all_empty_group_no_header() {
    let lane = |group: u32, empty: bool| LaneView {
        label: String::new(),
        kind: LaneKind::Thread,
        rows: if empty { 1 } else { 2 },
        group,
        group_label: String::new(),
        peak: None,
        indent: 0,
        empty,
    };
    let lanes = [lane(0, false), lane(0, true), lane(1, true), lane(2, false)];
    let shown = row_layout(&lanes, &[], false);
    assert_eq!(
        shown.lane_first_row,
        vec![Some(1), Some(3), Some(5), Some(7)]
    );
    assert_eq!(shown.headers.len(), 3);
    let hidden = row_layout(&lanes, &[], true);
    assert_eq!(hidden.lane_first_row, vec![Some(1), None, None, Some(4)]);
    assert_eq!(hidden.headers, vec![(0, 0, 1), (2, 3, 1)]);
    assert_eq!(hidden.rows, 6);
}

#[test]
fn lanes_are_host_first_grouped_and_cover_every_row() {
    let t = triton();
    let m = TimelineModel::new(&t);
    let first_device = m
        .lanes
        .iter()
        .position(|l| l.kind == LaneKind::Device)
        .unwrap();
    assert!(m.lanes[..first_device]
        .iter()
        .all(|l| l.kind != LaneKind::Device));
    assert!(m.lanes[first_device..]
        .iter()
        .all(|l| l.kind == LaneKind::Device));
    let layout = row_layout(&m.lanes, &[], false);
    let lane_rows: u32 = m.lanes.iter().map(|l| l.rows as u32).sum();
    assert_eq!(layout.rows, lane_rows + layout.headers.len() as u32);
    // Collapsing the device group leaves its header only.
    let g = m.lanes[first_device].group;
    let folded = row_layout(&m.lanes, &[g], false);
    let device_rows: u32 = m.lanes[first_device..].iter().map(|l| l.rows as u32).sum();
    assert_eq!(folded.rows, layout.rows - device_rows);
    assert!(folded.lane_first_row[first_device].is_none());
}

#[test]
fn the_kernel_can_be_picked_and_its_chain_names_its_launch_and_op() {
    let t = triton();
    let m = TimelineModel::new(&t);
    let k = (0..t.slices.len())
        .find(|&i| t.slices.category[i] == Category::Kernel)
        .unwrap();
    let (a, b) = (t.slices.start_ns[k], t.slices.end_ns(k));
    let view = view_of(TimeAxis::fit(a - 1_000, b + 1_000, 1000.0), 1000.0);
    let row = row_of(&m, &t, k);
    let picked = m
        .pick(&t, &view, row, view.axis().px((a + b) / 2), &|a| {
            kept_args(&t, a)
        })
        .unwrap();
    assert_eq!(picked.name, "triton_poi_fused_add_cos_sin_0");
    assert_eq!(picked.self_ns, 1_760);
    let chain: Vec<(&str, &str)> = picked
        .chain
        .iter()
        .map(|c| (c.role.as_str(), c.name.as_str()))
        .collect();
    assert_eq!(
        chain,
        [
            ("op", "triton_poi_fused_add_cos_sin_0"),
            ("runtime", "cuLaunchKernel"),
            ("device", "triton_poi_fused_add_cos_sin_0"),
        ]
    );
    let launch = &picked.chain[1];
    let delay = picked.chain[2].launch_delay_ns.unwrap();
    assert_eq!(delay, picked.start_ns - (launch.start_ns + launch.dur_ns));
    // The compiled region's self time excludes the op nested in it.
    let region = (0..t.slices.len())
        .find(|&i| t.slice_name(i) == "Torch-Compiled Region: 0/0")
        .unwrap();
    let (a, b) = (t.slices.start_ns[region], t.slices.end_ns(region));
    let view_r = view_of(TimeAxis::fit(a, b, 1000.0), 1000.0);
    let p = m
        .pick(&t, &view_r, row_of(&m, &t, region), 500.0, &|a| {
            kept_args(&t, a)
        })
        .unwrap();
    assert_eq!(p.name, "Torch-Compiled Region: 0/0");
    let children: i64 = (0..t.slices.len())
        .filter(|&i| t.slices.parent[i] == region as u32)
        .map(|i| t.slices.dur_ns[i])
        .sum();
    assert!(children > 0);
    assert_eq!(p.self_ns, p.dur_ns - children);
    // Its chain reaches the Triton kernel through the op nested in it.
    assert!(p.chain.iter().any(|c| c.role == "device"));
    let rects = m.draw(&t, &view);
    assert!(rects
        .iter()
        .any(|r| r.row == row && r.label.as_deref() == Some("triton_poi_fused_add_cos_sin_0")));
}

#[test]
fn search_highlights_every_match_and_steps_through_them_in_time_order() {
    let t = triton();
    let m = TimelineModel::new(&t);
    let h = Highlight {
        text: "TRITON_poi".into(),
        exact: false,
    };
    let expected = (0..t.slices.len())
        .filter(|&i| t.slice_name(i).to_lowercase().contains("triton_poi"))
        .count();
    let (count, first) = m.find(&t, &h, 0, &|a| kept_args(&t, a));
    assert_eq!(count, expected);
    assert!(count >= 2);
    let (_, last) = m.find(&t, &h, -1, &|a| kept_args(&t, a));
    assert!(first.unwrap().start_ns <= last.unwrap().start_ns);
    // Zoomed all the way out, each row's highlights cover its matches.
    let view = ViewRequest {
        highlight: Some(h),
        ..view_of(TimeAxis::fit(m.start_ns, m.end_ns, 800.0), 800.0)
    };
    let lit: u32 = m
        .draw(&t, &view)
        .iter()
        .filter(|r| r.code == CODE_HIGHLIGHT)
        .map(|r| r.count)
        .sum();
    assert_eq!(lit as usize, expected);
}

#[test]
fn counters_and_instants_get_their_own_rows() {
    let t = tracelane_core::import_bytes(
        br#"{"traceEvents":[
          {"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":0,"dur":10},
          {"ph":"i","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":5,"s":"t","args":{"Bytes":512}},
          {"ph":"C","name":"memory","pid":1,"ts":1,"args":{"allocated":10}},
          {"ph":"C","name":"memory","pid":1,"ts":6,"args":{"allocated":40}}
        ]}"#,
        Default::default(),
    )
    .unwrap();
    let m = TimelineModel::new(&t);
    let kinds: Vec<(LaneKind, u16)> = m.lanes.iter().map(|l| (l.kind, l.rows)).collect();
    assert_eq!(kinds, [(LaneKind::Thread, 2), (LaneKind::Counter, 2)]);
    assert_eq!(m.lanes[1].peak, Some(40.0));
    let view = view_of(TimeAxis::fit(0, 10_000, 1000.0), 1000.0);
    let rects = m.draw(&t, &view);
    // Header row 0; the thread's instant row 1, its op row 2; the counter rows 3–4.
    assert!(rects.iter().any(|r| r.code == CODE_INSTANT && r.row == 1));
    assert!(rects.iter().any(|r| r.code == 1 && r.row == 2));
    let tall = rects
        .iter()
        .filter(|r| r.code == CODE_COUNTER)
        .map(|r| r.height)
        .fold(0.0f32, f32::max);
    assert_eq!(
        (
            tall,
            rects.iter().find(|r| r.code == CODE_COUNTER).unwrap().row
        ),
        (2.0, 4)
    );
    let p = m.pick(&t, &view, 1, 500.0, &|a| kept_args(&t, a)).unwrap();
    assert_eq!((p.name.as_str(), p.args[0].1.as_str()), ("[memory]", "512"));
    let c = m.pick(&t, &view, 3, 700.0, &|a| kept_args(&t, a)).unwrap();
    assert_eq!(c.args, [("value".to_string(), "40".to_string())]);
    // Colour by name keeps a name's colour whatever the zoom.
    assert_eq!(name_colour_code("aten::mm"), name_colour_code("aten::mm"));
}

#[test]
fn without_links_the_chain_follows_the_flows() {
    // Perfetto's encoder wrote op → nrt_execute → nc_exec_running as flows.
    let bytes = include_bytes!("../../../tests/fixtures/perfetto/neuron_like_system.pftrace");
    let t = tracelane_core::import_bytes(bytes, Default::default()).unwrap();
    let m = TimelineModel::new(&t);
    let hw = (0..t.slices.len())
        .find(|&i| t.slice_name(i).starts_with("nc_exec_running"))
        .unwrap();
    let p = m.describe(&t, hw, &|a| kept_args(&t, a)).unwrap();
    let names: Vec<&str> = p.chain.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "aten::linear",
            "nrt_execute",
            "nc_exec_running /models/linear.neff"
        ]
    );
    assert_eq!(p.chain[0].from, None);
    assert_eq!(p.chain[1].from, Some(p.chain[0].slice));
    assert_eq!(p.chain[2].from, Some(p.chain[1].slice));
}

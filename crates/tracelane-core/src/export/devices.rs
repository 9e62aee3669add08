//! The device views as sections: Neuron engines and DMA, the roofline.

use super::section::{time_cell as t, Section};
use crate::analysis::engines::{DmaRow, EngineReport, GroupRow};
use crate::numbers::{fmt_count, fmt_ns, fmt_si};

/// The engine view as sections: engines, opcodes, DMA, HLO ops, layers.
pub fn engine_sections(r: &EngineReport, top: usize) -> Vec<Section> {
    let mut out = vec![profile_section(r)];
    out.extend(utilization_section(r));
    out.push(engines_section(r));
    out.extend(dma_sections(r, top));
    out.push(group_section("By HLO op", &r.by_hlo, top));
    out.push(group_section("By layer", &r.by_layer, top));
    if !r.by_nki_source.is_empty() {
        out.push(group_section(
            "By NKI source location",
            &r.by_nki_source,
            top,
        ));
    }
    if !r.tables.is_empty() {
        out.push(tables_section(r));
    }
    out
}

/// A duration, or a dash where the source has none.
fn opt_t(ns: Option<i64>) -> String {
    ns.map_or("—".to_string(), t)
}

/// What was read: the source, schema, window and notes.
fn profile_section(r: &EngineReport) -> Section {
    let mut s = Section::new(
        &format!(
            "Device profile ({}{}) — window {} from {}",
            r.source,
            r.schema_version
                .as_deref()
                .map(|v| format!(
                    ", schema {v}{}",
                    if r.schema_known {
                        ""
                    } else {
                        ", not the 7.x this reader knows"
                    }
                ))
                .unwrap_or_default(),
            t(r.window_ns.1 - r.window_ns.0),
            r.window_from
        ),
        &[("note", false)],
    );
    for n in &r.notes {
        s.rows.push(vec![n.clone()]);
    }
    if r.notes.is_empty() {
        s.rows.push(vec![format!(
            "{} tables read (unused columns listed under Tables)",
            r.tables.len()
        )]);
    }
    s
}

/// HFU, MFU and MBU from the instructions beside the profile's Summary.
fn utilization_section(r: &EngineReport) -> Option<Section> {
    let u = r.utilization.as_ref()?;
    let mut s = Section::new(
        &format!(
            "Tensor engine and HBM use over {} (peak {}FLOP/s, HBM {}B/s)",
            t(u.window_ns),
            fmt_si(u.peak_flops_per_s),
            fmt_si(u.hbm_bytes_per_s)
        ),
        &[
            ("", false),
            ("from the instructions", true),
            ("the profile's Summary", true),
            ("Summary read as", false),
        ],
    );
    for (label, mine, key) in [
        ("HFU", u.hfu_pct, "hfu_estimated_percent"),
        ("MFU", u.mfu_pct, "mfu_estimated_percent"),
        ("MBU", u.mbu_pct, "mbu_estimated_percent"),
    ] {
        let theirs = u.summary.iter().find(|(k, _)| k == key).map(|&(_, v)| v);
        s.rows.push(vec![
            label.into(),
            format!("{mine:.2}%"),
            theirs.map_or("—".into(), |v| format!("{v:.2}%")),
            u.summary_percent_scale.clone(),
        ]);
    }
    Some(s)
}

/// One row per engine: busy, active, instructions, waits, top opcodes.
fn engines_section(r: &EngineReport) -> Section {
    let mut s = Section::new(
        "Engines",
        &[
            ("engine", false),
            ("busy %", true),
            ("active", true),
            ("busy", true),
            ("instructions", true),
            ("instruction time", true),
            ("semaphore waits", true),
            ("event waits", true),
            ("DMA waits", true),
            ("top opcodes", false),
        ],
    );
    for e in &r.engines {
        let ops: Vec<String> = e
            .opcodes
            .iter()
            .take(3)
            .map(|o| format!("{} ×{} {}", o.opcode, o.count, t(o.instruction_ns)))
            .collect();
        s.rows.push(vec![
            e.engine.clone(),
            format!("{:.1}%", e.busy_pct),
            t(e.active_ns),
            t(e.busy_ns),
            fmt_count(e.instructions),
            t(e.instruction_ns),
            t(e.semaphore_ns),
            opt_t(e.evt_wait_ns),
            opt_t(e.dma_wait_ns),
            ops.join(", "),
        ]);
    }
    s
}

/// The DMA queues (all DMA first) and the DMA engines.
fn dma_sections(r: &EngineReport, top: usize) -> [Section; 2] {
    let dma_header = [
        ("", false),
        ("packets", true),
        ("bytes", true),
        ("busy", true),
        ("throughput", true),
        ("% of DMA bandwidth", true),
    ];
    let dma_row = |d: &DmaRow| {
        vec![
            d.name.clone(),
            fmt_count(d.packets),
            d.bytes.map_or("—".into(), |b| fmt_si(b as f64) + "B"),
            t(d.busy_ns),
            d.throughput_bytes_per_s
                .map_or("—".into(), |x| fmt_si(x) + "B/s"),
            d.pct_of_bandwidth
                .map_or("—".into(), |p| format!("{p:.1}%")),
        ]
    };
    let mut s = Section::new(
        &format!(
            "DMA queues{}",
            r.dma_bandwidth_bytes_per_s
                .map(|b| format!(" (Metadata bandwidth {}B/s per NeuronCore)", fmt_si(b)))
                .unwrap_or_default()
        ),
        &dma_header,
    );
    s.rows.extend(r.dma_all.iter().map(dma_row));
    s.rows.extend(r.dma_queues.iter().map(dma_row));
    let queues = s;
    let mut s = Section::new("DMA engines", &dma_header);
    s.rows.extend(r.dma_engines.iter().take(top).map(dma_row));
    [queues, s]
}

/// Instructions grouped (HLO op, layer, NKI source line), the top rows.
fn group_section(title: &str, rows: &[GroupRow], top: usize) -> Section {
    let mut s = Section::new(
        title,
        &[
            ("", false),
            ("instructions", true),
            ("busy", true),
            ("instruction time", true),
            ("FLOPs", true),
            ("HBM bytes", true),
        ],
    );
    for g in rows.iter().take(top) {
        s.rows.push(vec![
            g.name.clone(),
            fmt_count(g.instructions),
            t(g.busy_ns),
            t(g.instruction_ns),
            fmt_si(g.raw_flops as f64),
            fmt_si((g.hbm_read_bytes + g.hbm_write_bytes) as f64) + "B",
        ]);
    }
    s
}

/// The tables read, with the columns not used.
fn tables_section(r: &EngineReport) -> Section {
    let mut s = Section::new(
        "Tables",
        &[
            ("table", false),
            ("rows", true),
            ("columns", true),
            ("not used (kept)", false),
        ],
    );
    for tb in &r.tables {
        s.rows.push(vec![
            format!("{}{}", tb.name, if tb.known { "" } else { " (unknown)" }),
            fmt_count(tb.rows as u64),
            tb.columns.len().to_string(),
            tb.unused_columns.join(", "),
        ]);
    }
    s
}

/// The roofline as sections: roofs, points, unplaced ops, kernels.
pub fn roofline_sections(
    r: &crate::analysis::roofline::RooflineReport,
    top: usize,
) -> Vec<Section> {
    let mut out = Vec::new();
    let mut s = Section::new(
        &format!(
            "Roofs{}",
            r.device
                .as_deref()
                .map(|d| format!(" — {d}"))
                .unwrap_or_default()
        ),
        &[
            ("dtype", false),
            ("peak", true),
            ("memory", true),
            ("ridge FLOP/B", true),
            ("source", false),
        ],
    );
    for p in &r.peaks {
        s.rows.push(vec![
            p.dtype.clone(),
            fmt_si(p.flops_per_s) + "FLOP/s",
            fmt_si(p.bytes_per_s) + "B/s",
            format!("{:.1}", p.flops_per_s / p.bytes_per_s),
            p.source.clone(),
        ]);
    }
    if let Some(why) = &r.no_roofs {
        s.rows.push(vec![
            "—".into(),
            "—".into(),
            "—".into(),
            "—".into(),
            why.clone(),
        ]);
    }
    for n in &r.notes {
        s.rows
            .push(vec!["".into(), "".into(), "".into(), "".into(), n.clone()]);
    }
    out.push(s);
    // One table per level of points: ops (with their shapes), then kernels
    // (no shapes column).
    let columns = [
        ("name", false),
        ("shapes", false),
        ("calls", true),
        ("time_us", true),
        ("flops", true),
        ("bytes", true),
        ("achieved_tflops", true),
        ("intensity", true),
        ("bound", false),
        ("headroom", true),
    ];
    let tables = [
        (format!("Roofline ({} level)", r.level), &r.points, true),
        (
            "Kernels on the roofline (launched alone by a counted op: its FLOPs and bytes)"
                .to_string(),
            &r.kernel_points,
            false,
        ),
    ];
    for (title, points, ops) in tables {
        if !ops && points.is_empty() {
            continue;
        }
        let mut header = columns.to_vec();
        if !ops {
            header[0].0 = "kernel";
            header.remove(1);
        }
        let mut s = Section::new(&title, &header);
        for p in points.iter().take(top) {
            let mut row = vec![
                p.name.clone(),
                p.input_shapes.clone().unwrap_or_default(),
                fmt_count(p.calls),
                format!("{:.3}", p.time_ns as f64 / 1e3),
                fmt_si(p.flops),
                p.bytes.map_or("—".into(), fmt_si),
                p.achieved_flops_per_s
                    .map_or("—".into(), |a| format!("{:.4}", a / 1e12)),
                p.intensity.map_or("—".into(), |i| format!("{i:.2}")),
                p.bound
                    .map_or("—".into(), |b| format!("{b:?}").to_lowercase()),
                p.headroom.map_or("—".into(), |h| format!("{h:.1}×")),
            ];
            if !ops {
                row.remove(1);
            }
            s.rows.push(row);
        }
        out.push(s);
    }
    let mut s = Section::new(
        "Not placed (no FLOP formula or flops arg)",
        &[("name", false), ("calls", true), ("time", true)],
    );
    for u in r.unplaced.iter().take(top) {
        s.rows.push(vec![
            u.name.clone(),
            fmt_count(u.calls),
            fmt_ns(u.time_ns as f64),
        ]);
    }
    out.push(s);
    if !r.kernels.is_empty() {
        let st = |x: Option<crate::analysis::roofline::Stat>, d: usize| {
            x.map_or("—".into(), |s| format!("{:.d$} / {:.d$}", s.mean, s.min))
        };
        let mut s = Section::new(
            "Kernel efficiency (mean / min)",
            &[
                ("kernel", false),
                ("count", true),
                ("time", true),
                ("grid", false),
                ("block", false),
                ("registers", true),
                ("shared mem", true),
                ("occupancy %", true),
            ],
        );
        for k in r.kernels.iter().take(top) {
            s.rows.push(vec![
                k.name.clone(),
                fmt_count(k.count),
                fmt_ns(k.time_ns as f64),
                k.grid.clone().unwrap_or_else(|| "—".into()),
                k.block.clone().unwrap_or_else(|| "—".into()),
                st(k.registers_per_thread, 0),
                st(k.shared_memory_bytes, 0),
                st(k.occupancy_pct, 1),
            ]);
        }
        out.push(s);
    }
    out
}

//! Where device time goes as sections: the device-time report (tracelane's
//! and HTA's), the why-slow summary, the Neuron runtime report.

use super::section::{time_cell as t, Section};
use crate::analysis::device_time::DeviceTimeReport;
use crate::numbers::{fmt_count, fmt_ns, pct};

/// The device-time report as sections: notes, the breakdown per device,
/// kernel types, the longest-running kernels (`top` of them), idle time per
/// lane and its longest gaps, launches, queues.
pub fn device_time_sections(r: &DeviceTimeReport, top: usize) -> Vec<Section> {
    let mut out = vec![
        devices_section(r),
        kernel_types_section(r),
        kernels_section(r, top),
        idle_section(r),
    ];
    if !r.longest_gaps.is_empty() {
        out.push(gaps_section(r, top));
    }
    out.push(launches_section(r));
    out.push(queues_section(r));
    if !r.notes.is_empty() {
        let mut s = Section::new("Notes", &[("note", false)]);
        s.rows = r.notes.iter().map(|n| vec![n.clone()]).collect();
        out.push(s);
    }
    out
}

/// Per device: span, busy, idle, compute and what is exposed.
fn devices_section(r: &DeviceTimeReport) -> Section {
    let mut s = Section::new(
        &format!("Device time — {} ({})", r.scope, r.mode.describe()),
        &[
            ("device", false),
            ("span", true),
            ("busy", true),
            ("idle", true),
            ("compute", true),
            ("non-compute", true),
            ("exposed comm", true),
            ("exposed memory", true),
            ("comm under compute", true),
        ],
    );
    for (d, ov) in r.devices.iter().zip(&r.comm_comp_overlap_pct) {
        s.rows.push(vec![
            d.device.clone(),
            t(d.span_ns),
            format!("{} ({})", t(d.busy_ns), pct(d.busy_ns, d.span_ns)),
            format!("{} ({})", t(d.idle_ns), pct(d.idle_ns, d.span_ns)),
            format!("{} ({})", t(d.compute_ns), pct(d.compute_ns, d.span_ns)),
            format!(
                "{} ({})",
                t(d.non_compute_ns),
                pct(d.non_compute_ns, d.span_ns)
            ),
            t(d.exposed_communication_ns),
            t(d.exposed_memory_ns),
            ov.map_or("—".into(), |p| format!("{p:.2}%")),
        ]);
    }
    s
}

/// Time by kernel type, with its share.
fn kernel_types_section(r: &DeviceTimeReport) -> Section {
    let mut s = Section::new(
        "Kernel types",
        &[("type", false), ("time", true), ("share", true)],
    );
    let total: i64 = r.kernel_types.iter().map(|k| k.time_ns).sum();
    for k in &r.kernel_types {
        s.rows.push(vec![
            k.kernel_type.clone(),
            t(k.time_ns),
            pct(k.time_ns, total),
        ]);
    }
    s
}

/// The longest-running kernels with their statistics.
fn kernels_section(r: &DeviceTimeReport, top: usize) -> Section {
    let mut s = Section::new(
        "Kernels",
        &[
            ("name", false),
            ("type", false),
            ("count", true),
            ("total", true),
            ("mean", true),
            ("min", true),
            ("max", true),
            ("stddev", true),
        ],
    );
    for k in r.kernels.iter().take(top) {
        s.rows.push(vec![
            k.name.clone(),
            k.kernel_type.as_str().into(),
            fmt_count(k.count),
            t(k.total_ns),
            fmt_ns(k.mean_ns),
            t(k.min_ns),
            t(k.max_ns),
            fmt_ns(k.stddev_ns),
        ]);
    }
    s
}

/// Idle time per lane, by category.
fn idle_section(r: &DeviceTimeReport) -> Section {
    let mut s = Section::new(
        "Idle time per lane",
        &[
            ("lane", false),
            ("category", false),
            ("idle", true),
            ("gaps", true),
            ("share", true),
        ],
    );
    for i in r.idle.iter().flatten() {
        s.rows.push(vec![
            i.lane_label.clone(),
            i.category.as_str().into(),
            t(i.idle_ns),
            fmt_count(i.gaps),
            i.ratio.map_or("—".into(), |x| format!("{:.2}%", 100.0 * x)),
        ]);
    }
    s
}

/// The longest idle gaps, from the scope's start.
fn gaps_section(r: &DeviceTimeReport, top: usize) -> Section {
    let mut s = Section::new(
        "Longest gaps",
        &[
            ("lane", false),
            ("at", true),
            ("length", true),
            ("category", false),
        ],
    );
    for g in r.longest_gaps.iter().take(top) {
        s.rows.push(vec![
            g.lane_label.clone(),
            format!("+{}", t(g.start_ns - r.origin_ns)),
            t(g.end_ns - g.start_ns),
            g.category.as_str().into(),
        ]);
    }
    s
}

/// Launch statistics.
fn launches_section(r: &DeviceTimeReport) -> Section {
    let l = &r.launches;
    let mut s = Section::new("Launches", &[("measure", false), ("value", true)]);
    for (k, v) in [
        ("launches", fmt_count(l.launches)),
        ("CPU time in launch calls", t(l.cpu_total_ns)),
        ("device time launched", t(l.device_total_ns)),
        ("launch delay, total", t(l.delay_total_ns)),
        ("launch delay, max", t(l.delay_max_ns)),
        (
            "short kernels (device < launch call ≤ 50 µs)",
            fmt_count(l.short_kernels),
        ),
        ("launch calls > 50 µs", fmt_count(l.runtime_outliers)),
        ("launch delays > 100 µs", fmt_count(l.delay_outliers)),
        (
            "started before the call returned",
            fmt_count(l.started_before_return),
        ),
        (
            "device start − call start, total",
            t(l.from_call_start_total_ns),
        ),
        (
            "device start − call start, max",
            t(l.from_call_start_max_ns),
        ),
    ] {
        s.rows.push(vec![k.into(), v]);
    }
    s
}

/// Queue length per lane.
fn queues_section(r: &DeviceTimeReport) -> Section {
    let mut s = Section::new(
        "Queue length per lane",
        &[
            ("lane", false),
            ("changes", true),
            ("mean (per change)", true),
            ("mean (over time)", true),
            ("max", true),
            ("blocked on a full queue", true),
        ],
    );
    for q in r.queues.iter().flatten() {
        s.rows.push(vec![
            q.lane_label.clone(),
            fmt_count(q.samples),
            format!("{:.3}", q.mean),
            format!("{:.3}", q.time_weighted_mean),
            q.max.to_string(),
            t(q.full_queue_ns),
        ]);
    }
    s
}

/// Every "why is it slow" section: device time, the critical path (its
/// length against the scope's wall time, the time by label, the ops by
/// time on the path beside the ops by total time, or why there is none),
/// data movement and warm-up.
pub fn analysis_sections(w: &crate::analysis::WhySlow, top: usize) -> Vec<Section> {
    let r = &w.device;
    let cp = w.critical_path.as_ref();
    let mut out = device_time_sections(r, top);
    match cp {
        Err(e) => {
            let mut s = Section::new("Critical path", &[("", false)]);
            s.rows.push(vec![format!("none: {e}")]);
            out.push(s);
        }
        Ok(cp) => {
            let mut s = Section::new(
                &format!(
                    "Critical path — {} over a {} window ({} edges)",
                    t(cp.length_ns),
                    t(cp.wall_ns),
                    cp.edge_count
                ),
                &[("bound by", false), ("time", true), ("share", true)],
            );
            for &(b, ns) in cp.by_bound.iter().filter(|b| b.1 != 0) {
                s.rows
                    .push(vec![b.label().into(), t(ns), pct(ns, cp.length_ns)]);
            }
            out.push(s);
            let mut s = Section::new(
                "Ops on the critical path vs by total time",
                &[
                    ("on the path", false),
                    ("time", true),
                    ("by total time", false),
                    ("time", true),
                ],
            );
            for k in 0..top.min(cp.on_path.len().max(cp.by_total.len())) {
                let a = cp.on_path.get(k);
                let b = cp.by_total.get(k);
                s.rows.push(vec![
                    a.map_or(String::new(), |x| x.name.clone()),
                    a.map_or(String::new(), |x| t(x.ns)),
                    b.map_or(String::new(), |x| x.name.clone()),
                    b.map_or(String::new(), |x| t(x.ns)),
                ]);
            }
            out.push(s);
        }
    }
    let Some(dm) = &w.data_movement else {
        return out;
    };
    let mut s = Section::new(
        &format!("Data movement — {:.2}% of device time", dm.copy_share_pct),
        &[
            ("kind", false),
            ("memory", false),
            ("count", true),
            ("bytes", true),
            ("time", true),
            ("GB/s", true),
        ],
    );
    for k in &dm.by_kind {
        s.rows.push(vec![
            k.kind.clone(),
            k.memory.clone(),
            fmt_count(k.count),
            fmt_count(k.bytes),
            t(k.time_ns),
            k.gbps.map_or("—".into(), |g| format!("{g:.1}")),
        ]);
    }
    out.push(s);
    let mut s = Section::new(
        "Copies by the op that caused them",
        &[
            ("op", false),
            ("under", false),
            ("count", true),
            ("bytes", true),
            ("time", true),
            ("of device time", true),
        ],
    );
    for c in dm.by_cause.iter().take(top) {
        s.rows.push(vec![
            c.op.clone(),
            c.context.clone(),
            fmt_count(c.count),
            fmt_count(c.bytes),
            t(c.time_ns),
            format!("{:.2}%", c.device_share_pct),
        ]);
    }
    out.push(s);
    if let Some(x) = &w.xla_ops {
        out.extend(super::xla_ops::xla_op_sections(x, top));
    }
    if let Some(n) = &w.neuron {
        out.extend(neuron_runtime_sections(n));
    }
    match w.warmup.as_ref().unwrap_or(&Err(String::new())) {
        Ok(wu) => {
            let mut s = Section::new(
                &format!(
                    "Occurrences — median {} ({} warm-up left out; {} with them)",
                    t(wu.median_ns),
                    wu.flagged,
                    t(wu.median_all_ns)
                ),
                &[("occurrence", false), ("duration", true), ("", false)],
            );
            for o in wu.occurrences.iter().take(top.max(20)) {
                s.rows.push(vec![
                    o.label.clone(),
                    t(o.dur_ns),
                    o.reason.clone().unwrap_or_default(),
                ]);
            }
            out.push(s);
        }
        Err(e) if !e.is_empty() => {
            let mut s = Section::new("Occurrences", &[("", false)]);
            s.rows.push(vec![e.clone()]);
            out.push(s);
        }
        Err(_) => {}
    }
    out
}

/// What the Neuron runtime's events say, as sections: the families (time,
/// count, per execution, what they mean), copies by name with bytes and
/// bandwidth, the clocks' alignment, HBM spill.
pub fn neuron_runtime_sections(
    r: &crate::analysis::neuron_runtime::NeuronRuntimeReport,
) -> Vec<Section> {
    let mut out = Vec::new();
    let mut s = Section::new(
        &format!(
            "Neuron runtime — {} executions, {} on the device",
            fmt_count(r.executions),
            t(r.execution_ns)
        ),
        &[
            ("events", false),
            ("count", true),
            ("time", true),
            ("per execution", true),
            ("longest", true),
            ("what it means", false),
        ],
    );
    for f in &r.families {
        s.rows.push(vec![
            f.title.clone(),
            fmt_count(f.count),
            t(f.total_ns),
            f.per_execution_ns.map_or("—".into(), fmt_ns),
            t(f.names.iter().map(|n| n.max_ns).max().unwrap_or(0)),
            f.meaning.clone(),
        ]);
    }
    out.push(s);
    if let Some(c) = r.family("copies") {
        let mut s = Section::new(
            "Host↔device copies",
            &[
                ("event", false),
                ("count", true),
                ("bytes", true),
                ("time", true),
                ("GB/s", true),
            ],
        );
        for n in &c.names {
            s.rows.push(vec![
                n.name.clone(),
                fmt_count(n.count),
                fmt_count(n.bytes),
                t(n.total_ns),
                n.gbps.map_or("—".into(), |g| format!("{g:.2}")),
            ]);
        }
        out.push(s);
    }
    if let Some(c) = &r.clock {
        let mut s = Section::new(
            "Clock alignment (timestamp_sync_point)",
            &[("measure", false), ("value", true)],
        );
        s.rows.push(vec!["points".into(), fmt_count(c.points)]);
        s.rows.push(vec![
            "host − device at the first".into(),
            c.first_offset_ns.to_string(),
        ]);
        s.rows.push(vec![
            "host − device at the last".into(),
            c.last_offset_ns.to_string(),
        ]);
        s.rows.push(vec![
            "drift".into(),
            c.drift_ppm.map_or("—".into(), |d| format!("{d:.2} ppm")),
        ]);
        out.push(s);
    }
    for p in &r.summaries {
        let mut s = Section::new(
            &format!(
                "Summary {} ({} profile) — *_percent read as {}",
                p.key, p.kind, p.percent_scale
            ),
            &[("counter", false), ("value", true)],
        );
        for (k, v) in p.counters.iter().chain(&p.nested) {
            let shown = match p.percents.iter().find(|(n, _)| n == k) {
                Some((_, pct)) => format!("{pct:.2} %"),
                None if v.fract() == 0.0 && (0.0..9e15).contains(v) => fmt_count(*v as u64),
                None => format!("{v}"),
            };
            s.rows.push(vec![k.clone(), shown]);
        }
        out.push(s);
    }
    if !r.spill.is_empty() {
        let mut s = Section::new(
            "HBM spill (device_mem_usage peaks)",
            &[
                ("HBM", false),
                ("DRAM spill", true),
                ("DMA rings spill", true),
                ("in use", true),
                ("capacity", true),
            ],
        );
        for h in &r.spill {
            s.rows.push(vec![
                h.hbm.clone(),
                fmt_count(h.dram_spill_bytes as u64),
                fmt_count(h.dma_rings_spill_bytes as u64),
                fmt_count(h.peak_bytes as u64),
                h.capacity_bytes.map_or("—".into(), |c| fmt_count(c as u64)),
            ]);
        }
        out.push(s);
    }
    out
}

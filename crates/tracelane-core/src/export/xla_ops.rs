//! An XPlane profile's op tables ([`crate::analysis::xla_ops`]) as
//! sections: HLO ops, then framework ops on the device and on the host,
//! times in µs to the nanosecond as xprof shows them.

use super::section::Section;
use crate::analysis::xla_ops::XlaOpStats;
use crate::numbers::{fmt_count, fmt_si};

fn us(ps: u64) -> String {
    format!("{:.3}", ps as f64 / 1e6)
}

fn avg(ps: u64, n: u64) -> String {
    if n == 0 {
        "—".into()
    } else {
        format!("{:.3}", ps as f64 / 1e6 / n as f64)
    }
}

/// A count per second of an op's total time (xprof's model FLOP rate
/// and measured memory bandwidth use the same time).
fn rate(count: Option<u64>, ps: u64) -> String {
    match count {
        Some(c) if ps > 0 && c > 0 => fmt_si(c as f64 / (ps as f64 / 1e12)),
        _ => "—".into(),
    }
}

/// The tables, `top` rows each (0: all).
pub fn xla_op_sections(s: &XlaOpStats, top: usize) -> Vec<Section> {
    let take = |n: usize| if top == 0 { n } else { top.min(n) };
    let mut hlo = Section::new(
        &format!(
            "HLO ops (xprof's hlo_stats) — {} device planes, total {} µs, idle {} µs",
            s.device_planes,
            us(s.device_total_ps),
            us(s.device_idle_ps)
        ),
        &[
            ("HLO op", false),
            ("category", false),
            ("framework op", false),
            ("program", true),
            ("occurrences", true),
            ("total µs", true),
            ("avg µs", true),
            ("self µs", true),
            ("% of total", true),
            ("cumulative %", true),
            ("FLOPs", true),
            ("HBM bytes", true),
            ("FLOP/s", true),
            ("B/s", true),
        ],
    );
    for r in s.hlo_ops.iter().take(take(s.hlo_ops.len())) {
        hlo.rows.push(vec![
            r.hlo_op_name.clone(),
            r.category.clone(),
            r.tf_op_name.clone(),
            r.program_id.to_string(),
            fmt_count(r.occurrences),
            us(r.total_time_ps),
            avg(r.total_time_ps, r.occurrences),
            us(r.self_time_ps),
            format!("{:.2}%", r.self_time_percent),
            format!("{:.2}%", r.cumulative_self_time_percent),
            r.flops.map_or("—".into(), |f| fmt_si(f as f64)),
            r.bytes_accessed.map_or("—".into(), |b| fmt_si(b as f64)),
            rate(r.flops, r.total_time_ps),
            rate(r.bytes_accessed, r.total_time_ps),
        ]);
    }
    let mut out = vec![hlo];
    if s.hlo_ops
        .iter()
        .any(|r| r.flops.is_some() || r.bytes_accessed.is_some())
    {
        out.push(note(
            "FLOPs and HBM bytes: the events' flops / bytes_accessed stats where they carry them, else the embedded HLO as xprof's GPU cost analysis prices it (XLA's GPU HloCostAnalysis: elementwise ops by its default per-op profile, dots and convolutions by their shapes; HBM bytes read and written), times the occurrences — '—': a custom call XLA has no cost for".to_string(),
        ));
    }
    for side in ["Device", "Host"] {
        let rows: Vec<_> = s
            .framework_ops
            .iter()
            .filter(|r| r.host_or_device == side)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let total = if side == "Device" {
            s.device_total_ps
        } else {
            s.host_total_ps
        };
        let mut sec = Section::new(
            &format!(
                "Framework ops on the {} (xprof's framework_op_stats) — total {} µs",
                side.to_lowercase(),
                us(total)
            ),
            &[
                ("operation", false),
                ("type", false),
                ("occurrences", true),
                ("total µs", true),
                ("avg µs", true),
                ("self µs", true),
                ("% of total", true),
                ("cumulative %", true),
            ],
        );
        for r in rows.iter().take(take(rows.len())) {
            sec.rows.push(vec![
                r.operation.clone(),
                r.op_type.clone(),
                fmt_count(r.occurrences),
                us(r.total_time_ps),
                avg(r.total_time_ps, r.occurrences),
                us(r.self_time_ps),
                format!("{:.2}%", r.self_time_percent),
                format!("{:.2}%", r.cumulative_self_time_percent),
            ]);
        }
        out.push(sec);
    }
    if s.unresolved_hlo_events > 0 {
        out.push(note(format!(
            "{} device events name an HLO op that no module in the profile defines: xprof leaves them out of its tables (their time is idle), and so do these",
            fmt_count(s.unresolved_hlo_events)
        )));
    }
    if s.ops_by_time > 0 {
        out.push(note(format!(
            "{} kernels carry no hlo_op stat (a newer xprof converter strips it): each is counted as the HLO op of the XLA Ops event around it on its stream's derived line — tracelane's reading; xprof's own tables read the stats only",
            fmt_count(s.ops_by_time)
        )));
    }
    out
}

/// A section of one line of text.
fn note(text: String) -> Section {
    let mut note = Section::new("Note", &[("", false)]);
    note.rows.push(vec![text]);
    note
}

//! `tracelane diff`'s report as sections: the totals, the ranked nodes,
//! why each differs, and the kernel families side by side.

use super::section::Section;
use crate::analysis::align::{kind_words as kind, DiffReport, Metric, RooflinePosition};
use crate::analysis::compare::fmt_us;

/// Microseconds as the report writes them.
pub fn us(x: f64) -> String {
    fmt_us(x * 1e3)
}

/// A difference in microseconds with its sign (`+`, or `−` U+2212).
pub fn signed(x: f64) -> String {
    if x >= 0.0 {
        format!("+{}", us(x))
    } else {
        format!("−{}", us(-x))
    }
}

/// The report as sections (the printer clips table cells; the reasons are
/// a section of prose, never clipped).
pub fn diff_sections(r: &DiffReport) -> Vec<Section> {
    let metric = match r.metric {
        Metric::Device => "device time",
        Metric::Host => "host (CPU) time",
    };
    let mut head = Section::new("Difference", &[("", false), ("A", true), ("B", true)]);
    // The first column names the row; its header says nothing.
    head.rows
        .push(vec!["scope".into(), r.scope[0].clone(), r.scope[1].clone()]);
    head.rows
        .push(vec![metric.into(), us(r.total_us[0]), us(r.total_us[1])]);
    head.rows.push(vec![
        "share in paired ops".into(),
        format!("{:.0}%", 100.0 * r.aligned_share[0]),
        format!("{:.0}%", 100.0 * r.aligned_share[1]),
    ]);
    head.rows
        .push(vec!["B − A".into(), String::new(), signed(r.delta_us)]);
    head.rows.push(vec![
        "explained by the nodes below".into(),
        String::new(),
        signed(r.explained_us),
    ]);
    head.rows.push(vec![
        "remainder".into(),
        String::new(),
        signed(r.remainder_us),
    ]);
    let c = &r.counts;
    head.rows.push(vec![
        "ops paired / in differing runs".into(),
        format!("{} / {}", c.ops_paired, c.a_ops_in_segments),
        format!("{} / {}", c.ops_paired, c.b_ops_in_segments),
    ]);

    let mut nodes = Section::new(
        "Largest differences (B − A)",
        &[
            ("#", true),
            ("node", false),
            ("kind", false),
            ("times", true),
            ("A", true),
            ("B", true),
            ("B − A", true),
            ("events A", true),
            ("events B", true),
        ],
    );
    let mut why = Section::new("Why", &[("reason", false)]);
    for (k, n) in r.nodes.iter().enumerate() {
        let last = n.path.rsplit(" › ").next().unwrap_or(&n.path).to_string();
        nodes.rows.push(vec![
            (k + 1).to_string(),
            last,
            kind(n.kind).into(),
            n.occurrences.to_string(),
            us(n.a_us),
            us(n.b_us),
            signed(n.delta_us),
            n.a_events.to_string(),
            n.b_events.to_string(),
        ]);
        why.rows
            .push(vec![format!("{}. {}: {}", k + 1, n.path, n.why)]);
    }
    let mut out = vec![head, nodes, why];
    if !r.families.is_empty() {
        let mut fam = Section::new(
            "Kernel families",
            &[
                ("family", false),
                ("A events", true),
                ("A", true),
                ("B events", true),
                ("B", true),
                ("B − A", true),
                ("A's top kernel", false),
                ("B's top kernel", false),
            ],
        );
        for f in &r.families {
            fam.rows.push(vec![
                f.family.as_str().into(),
                f.a_events.to_string(),
                us(f.a_us),
                f.b_events.to_string(),
                us(f.b_us),
                signed(f.b_us - f.a_us),
                f.a_top.first().cloned().unwrap_or_default(),
                f.b_top.first().cloned().unwrap_or_default(),
            ]);
        }
        out.push(fam);
    }
    if r.roofline.iter().any(Option::is_some) {
        out.push(diff_roofline_section(&r.roofline));
    }
    let mut notes = Section::new("Notes", &[("note", false)]);
    notes.rows = r.notes.iter().map(|n| vec![n.clone()]).collect();
    out.push(notes);
    out
}

/// Each side on its own roofline, side by side.
pub fn diff_roofline_section(sides: &[Option<RooflinePosition>; 2]) -> Section {
    use crate::numbers::fmt_si;
    let mut sec = Section::new(
        "Each side on its roofline (the placed device work as one point)",
        &[("", false), ("A", true), ("B", true)],
    );
    type Cell = fn(&RooflinePosition) -> String;
    let rows: [(&str, Cell); 9] = [
        ("device", |s| {
            s.device.clone().unwrap_or_else(|| "not stated".into())
        }),
        ("roofs", |s| match &s.peak {
            Some(p) => format!(
                "{} {}FLOP/s, {}B/s",
                p.dtype,
                fmt_si(p.flops_per_s),
                fmt_si(p.bytes_per_s)
            ),
            None => "unknown".into(),
        }),
        ("placed work", |s| {
            format!(
                "{} calls, {} ({:.0}% of device time)",
                s.point.calls,
                fmt_us(s.point.time_ns as f64),
                100.0 * s.share_of_device_time
            )
        }),
        ("FLOPs", |s| fmt_si(s.point.flops)),
        ("bytes", |s| s.point.bytes.map_or("—".into(), fmt_si)),
        ("achieved", |s| {
            s.point
                .achieved_flops_per_s
                .map_or("—".into(), |f| format!("{}FLOP/s", fmt_si(f)))
        }),
        ("intensity (FLOP/B)", |s| {
            s.point.intensity.map_or("—".into(), |i| format!("{i:.1}"))
        }),
        ("bound", |s| match s.point.bound {
            Some(crate::analysis::roofline::Bound::Memory) => "memory".into(),
            Some(crate::analysis::roofline::Bound::Compute) => "compute".into(),
            None => "—".into(),
        }),
        ("below its roof", |s| {
            s.point.headroom.map_or("—".into(), |h| format!("{h:.1}×"))
        }),
    ];
    for (name, cell) in rows {
        let side = |x: &Option<RooflinePosition>| x.as_ref().map_or("nothing placed".into(), cell);
        sec.rows
            .push(vec![name.into(), side(&sides[0]), side(&sides[1])]);
    }
    sec
}

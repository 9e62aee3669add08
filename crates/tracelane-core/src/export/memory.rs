//! The memory report as sections: per device its peak and what holds it.

use super::ops::fmt_mem;
use super::section::Section;
use crate::analysis::memory::{LiveGroup, MemoryReport};
use crate::analysis::memory_categories::MemoryCategories;
use crate::analysis::memory_hbm::{HbmMemory, SPILL_CATEGORIES};

fn live_section(title: &str, groups: &[LiveGroup], top: usize) -> Section {
    let mut s = Section::new(
        title,
        &[
            ("op", false),
            ("nn.Module", false),
            ("Python caller", false),
            ("category", false),
            ("bytes", true),
            ("allocations", true),
        ],
    );
    for g in groups.iter().take(top) {
        s.rows.push(vec![
            g.op.clone(),
            g.module.clone().unwrap_or_else(|| "—".into()),
            g.python.clone().unwrap_or_else(|| "—".into()),
            g.category.clone().unwrap_or_else(|| "—".into()),
            fmt_mem(g.bytes),
            g.count.to_string(),
        ]);
    }
    s
}

/// PyTorch's categories at the peak (and at the moment asked for), and
/// how much of the raw timeline joined the trace.
fn category_section(device: &str, c: &MemoryCategories) -> Section {
    let mut s = Section::new(
        &format!(
            "{device}: by PyTorch's category (raw memory timeline: {}/{} creates and {}/{} destroys joined the trace)",
            c.creates_joined, c.creates, c.destroys_joined, c.destroys
        ),
        &[("category", false), ("at the peak", true), ("at the moment", true)],
    );
    let mut names: Vec<&str> = c.at_peak.iter().map(|x| x.category.as_str()).collect();
    for x in c.at.iter().flatten() {
        if !names.contains(&x.category.as_str()) {
            names.push(&x.category);
        }
    }
    let find = |list: Option<&Vec<_>>, name: &str| -> String {
        match list {
            None => "—".into(),
            Some(list) => fmt_mem(
                list.iter()
                    .find(|x: &&crate::analysis::memory_categories::CategoryBytes| {
                        x.category == name
                    })
                    .map_or(0, |x| x.bytes),
            ),
        }
    };
    for name in names {
        s.rows.push(vec![
            name.to_string(),
            find(Some(&c.at_peak), name),
            find(c.at.as_ref(), name),
        ]);
    }
    s
}

/// Per device: the summary, what is live at the peak (and at the moment
/// asked for), and the ops that allocate most; `top` rows per table.
pub fn memory_sections(r: &MemoryReport, top: usize) -> Vec<Section> {
    let mut out = Vec::new();
    let mut summary = Section::new(
        "Memory per device",
        &[
            ("device", false),
            ("records", true),
            ("peak allocated", true),
            ("at (µs)", true),
            ("peak reserved", true),
            ("held from before the trace, at the peak", true),
            ("never freed", true),
            ("frees of earlier blocks", true),
        ],
    );
    for d in &r.devices {
        summary.rows.push(vec![
            d.device.clone(),
            d.records.to_string(),
            fmt_mem(d.peak_allocated_bytes),
            format!("{:.3}", d.peak_at_us),
            fmt_mem(d.peak_reserved_bytes),
            fmt_mem(d.before_trace_at_peak_bytes),
            format!("{} ({})", fmt_mem(d.never_freed_bytes), d.never_freed_count),
            d.frees_of_earlier_blocks.to_string(),
        ]);
    }
    let snapshot = r.snapshot.as_ref();
    if !(r.devices.is_empty() && (snapshot.is_some() || !r.hbm.is_empty())) {
        out.push(summary);
    }
    for d in &r.devices {
        out.push(live_section(
            &format!("{}: live at the peak ({:.3} µs)", d.device, d.peak_at_us),
            &d.live_at_peak,
            top,
        ));
        if let (Some(at), Some(live), Some(bytes)) = (d.at_us, &d.live_at, d.allocated_at_bytes) {
            out.push(live_section(
                &format!(
                    "{}: live at {at:.3} µs ({} allocated)",
                    d.device,
                    fmt_mem(bytes)
                ),
                live,
                top,
            ));
        }
        if let Some(c) = &d.categories {
            out.push(category_section(d.device.as_str(), c));
        }
        let mut churn = Section::new(
            &format!("{}: allocations per op", d.device),
            &[("op", false), ("allocations", true), ("bytes", true)],
        );
        for c in d.churn.iter().take(top) {
            churn.rows.push(vec![
                c.op.clone(),
                c.allocations.to_string(),
                fmt_mem(c.bytes),
            ]);
        }
        out.push(churn);
    }
    out.extend(hbm_sections(&r.hbm));
    if let Some(snap) = snapshot {
        out.extend(super::memory_snapshot::snapshot_sections(
            snap,
            top,
            "the trace's start",
        ));
    } else if r.devices.is_empty() && r.hbm.is_empty() {
        let mut note = Section::new("Notes", &[("note", false)]);
        note.rows.push(vec![
            "no [memory] records: record with torch.profiler.profile(profile_memory=True)".into(),
        ]);
        out.push(note);
    }
    out
}

/// Neuron HBM: per HBM its peak, capacity and spill, then its categories
/// at the peak (and at the moment asked for).
pub fn hbm_sections(hbms: &[HbmMemory]) -> Vec<Section> {
    if hbms.is_empty() {
        return Vec::new();
    }
    let mem = |v: f64| fmt_mem(v as i64);
    let mut summary = Section::new(
        "Neuron HBM",
        &[
            ("HBM", false),
            ("samples", true),
            ("peak", true),
            ("at (µs)", true),
            ("of capacity", true),
            ("spill peak", true),
            ("samples with spill", true),
            ("spill from (µs)", true),
        ],
    );
    let mut out = Vec::new();
    for h in hbms {
        let moment = h.at.as_ref();
        summary.rows.push(vec![
            h.hbm.clone(),
            h.samples.to_string(),
            mem(h.peak_bytes),
            format!("{:.3}", h.peak_at_us),
            h.capacity_bytes
                .filter(|&c| c > 0.0)
                .map_or("—".into(), |c| {
                    format!("{:.1} % of {}", 100.0 * h.peak_bytes / c, mem(c))
                }),
            mem(h.spill_peak_bytes),
            h.spill_samples.to_string(),
            h.spill_first_at_us
                .map_or("—".into(), |t| format!("{t:.3}")),
        ]);
        let then = moment.map_or(String::new(), |m| format!(" and at {:.3} µs", m.at_us));
        let mut s = Section::new(
            &format!(
                "{}: by category at the peak ({:.3} µs){then}",
                h.hbm, h.peak_at_us
            ),
            &[
                ("category", false),
                ("at the peak", true),
                ("at the moment", true),
            ],
        );
        let mut names: Vec<&str> = h.at_peak.iter().map(|x| x.0.as_str()).collect();
        for (c, _) in moment.iter().flat_map(|m| &m.by_category) {
            if !names.contains(&c.as_str()) {
                names.push(c);
            }
        }
        let find = |list: &[(String, f64)], name: &str| {
            mem(list.iter().find(|x| x.0 == name).map_or(0.0, |x| x.1))
        };
        for name in names {
            let spill = if SPILL_CATEGORIES.contains(&name) {
                " (spill)"
            } else {
                ""
            };
            s.rows.push(vec![
                format!("{name}{spill}"),
                find(&h.at_peak, name),
                moment.map_or("—".into(), |m| find(&m.by_category, name)),
            ]);
        }
        out.push(s);
    }
    out.insert(0, summary);
    out
}

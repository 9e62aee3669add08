//! The Memory view laid out by the worker as tables
//! ([`super::report_view`]): the page renders it with the one generic
//! renderer, so its download carries no code for the memory report's types.
//! The numbers are the core's `analysis::memory` (the CLI's `tracelane
//! memory`), printed by the core's `fmt_mem`.
//!
//! Attributes for tests: `#memory-devices` rows carry `data-device`,
//! `data-peak-bytes`, `data-peak-ns`, `data-at-bytes`; the k-th device's
//! tables are `#memory-live-peak-k`, `#memory-live-at-k`,
//! `#memory-categories-k` (rows `data-category`, `data-bytes`) and
//! `#memory-churn-k`; live rows carry `data-op` and `data-bytes`. Neuron
//! HBM's tables are `#memory-hbm-k`, an allocator snapshot's
//! `#memory-snapshot-k` (the CLI's sections, in its order: the summary
//! first, then per device what holds the peak, the moment asked for and
//! each out-of-memory).

use tracelane_core::analysis::memory::{LiveGroup, MemoryReport};
use tracelane_core::export::memory_snapshot::snapshot_sections;
use tracelane_core::export::memory_snapshot_compare::comparison_sections;
use tracelane_core::export::{fmt_mem, hbm_sections, Section};
use tracelane_core::memory_snapshot::compare::SnapshotComparison;

use super::report_view::{ReportView, ViewCell, ViewRow, ViewTable};

/// Rows of a live table (the largest; the CLI's `--top` lists more).
const LIVE_ROWS: usize = 50;

fn cells(texts: Vec<String>) -> Vec<ViewCell> {
    texts
        .into_iter()
        .map(|text| ViewCell {
            text,
            ..ViewCell::default()
        })
        .collect()
}

fn live_table(id: String, title: String, groups: &[LiveGroup]) -> ViewTable {
    let mut t = ViewTable::new(
        &id,
        &title,
        &[
            ("op", false),
            ("nn.Module", false),
            ("Python caller", false),
            ("category", false),
            ("bytes", true),
            ("allocations", true),
        ],
    );
    let dash = |s: &Option<String>| s.clone().unwrap_or_else(|| "—".into());
    for g in groups.iter().take(LIVE_ROWS) {
        t.rows.push(ViewRow {
            data: vec![
                ("op".into(), g.op.clone()),
                ("bytes".into(), g.bytes.to_string()),
            ],
            cells: cells(vec![
                g.op.clone(),
                dash(&g.module),
                dash(&g.python),
                dash(&g.category),
                fmt_mem(g.bytes),
                g.count.to_string(),
            ]),
        });
    }
    if groups.len() > LIVE_ROWS {
        t.note = format!(
            "and {} smaller groups (tracelane memory --top N lists them)",
            groups.len() - LIVE_ROWS
        );
    }
    t
}

/// Sections the CLI prints as they are, tables `#{prefix}-k`.
fn section_tables(prefix: &str, sections: Vec<Section>, v: &mut ReportView) {
    for (k, s) in sections.into_iter().enumerate() {
        let mut t = ViewTable::new(&format!("{prefix}-{k}"), &s.title, &[]);
        t.head = s.header;
        t.numeric = s.numeric;
        t.rows = s
            .rows
            .into_iter()
            .map(|row| ViewRow {
                data: Vec::new(),
                cells: cells(row),
            })
            .collect();
        v.tables.push(t);
    }
}

/// The view of a memory report.
pub fn memory_view(r: &MemoryReport) -> ReportView {
    let mut v = ReportView::default();
    if r.devices.is_empty() && r.hbm.is_empty() && r.snapshot.is_none() {
        v.notes.push(
            "No [memory] records: record with torch.profiler.profile(profile_memory=True).".into(),
        );
        return v;
    }
    section_tables("memory-hbm", hbm_sections(&r.hbm), &mut v);
    device_tables(r, &mut v);
    // After the trace's own tables, as the CLI prints them.
    if let Some(snap) = &r.snapshot {
        let sections = snapshot_sections(snap, LIVE_ROWS, "the trace's start");
        section_tables("memory-snapshot", sections, &mut v);
    }
    v
}

/// Two allocator snapshots compared, as the CLI prints them (tables
/// `#memory-compare-k`).
pub fn snapshot_comparison_view(c: &SnapshotComparison) -> ReportView {
    let mut v = ReportView::default();
    if c.devices.is_empty() {
        v.notes
            .push("Neither snapshot has a device with allocator trace entries.".into());
    }
    section_tables("memory-compare", comparison_sections(c, LIVE_ROWS), &mut v);
    v
}

/// The trace's `[memory]` records: the devices, then per device what is
/// live at the peak (and at the moment), the categories, the churn.
fn device_tables(r: &MemoryReport, v: &mut ReportView) {
    if r.devices.is_empty() {
        return;
    }
    let mut summary = ViewTable::new(
        "memory-devices",
        "",
        &[
            ("device", false),
            ("records", true),
            ("peak allocated", true),
            ("at (ms)", true),
            ("peak reserved", true),
            ("held from before the trace, at the peak", true),
            ("never freed", true),
            ("frees of earlier blocks", true),
        ],
    );
    for d in &r.devices {
        summary.rows.push(ViewRow {
            data: vec![
                ("device".into(), d.device.clone()),
                ("peak-bytes".into(), d.peak_allocated_bytes.to_string()),
                ("peak-ns".into(), d.peak_ns.to_string()),
                (
                    "at-bytes".into(),
                    d.allocated_at_bytes
                        .map(|b| b.to_string())
                        .unwrap_or_default(),
                ),
            ],
            cells: cells(vec![
                d.device.clone(),
                d.records.to_string(),
                fmt_mem(d.peak_allocated_bytes),
                format!("{:.3}", d.peak_at_us / 1e3),
                fmt_mem(d.peak_reserved_bytes),
                fmt_mem(d.before_trace_at_peak_bytes),
                format!("{} ({})", fmt_mem(d.never_freed_bytes), d.never_freed_count),
                d.frees_of_earlier_blocks.to_string(),
            ]),
        });
    }
    v.tables.push(summary);
    for (k, d) in r.devices.iter().enumerate() {
        v.tables.push(live_table(
            format!("memory-live-peak-{k}"),
            format!(
                "{}: live at the peak ({:.3} ms)",
                d.device,
                d.peak_at_us / 1e3
            ),
            &d.live_at_peak,
        ));
        if let (Some(us), Some(bytes), Some(live)) = (d.at_us, d.allocated_at_bytes, &d.live_at) {
            v.tables.push(live_table(
                format!("memory-live-at-{k}"),
                format!(
                    "{}: live at {:.3} ms ({} allocated)",
                    d.device,
                    us / 1e3,
                    fmt_mem(bytes)
                ),
                live,
            ));
        }
        if let Some(c) = &d.categories {
            let mut t = ViewTable::new(
                &format!("memory-categories-{k}"),
                &format!(
                    "{}: PyTorch's categories at the peak (raw memory timeline: {}/{} creates and {}/{} destroys joined the trace)",
                    d.device, c.creates_joined, c.creates, c.destroys_joined, c.destroys
                ),
                &[("category", false), ("bytes", true), ("at the moment", true)],
            );
            for x in &c.at_peak {
                let then = c.at.as_ref().map_or("—".to_string(), |a| {
                    fmt_mem(
                        a.iter()
                            .find(|y| y.category == x.category)
                            .map_or(0, |y| y.bytes),
                    )
                });
                t.rows.push(ViewRow {
                    data: vec![
                        ("category".into(), x.category.clone()),
                        ("bytes".into(), x.bytes.to_string()),
                    ],
                    cells: cells(vec![x.category.clone(), fmt_mem(x.bytes), then]),
                });
            }
            v.tables.push(t);
        }
        let mut churn = ViewTable::new(
            &format!("memory-churn-{k}"),
            &format!("{}: allocations per op", d.device),
            &[("op", false), ("allocations", true), ("bytes", true)],
        );
        for c in d.churn.iter().take(20) {
            churn.rows.push(ViewRow {
                data: vec![("op".into(), c.op.clone())],
                cells: cells(vec![
                    c.op.clone(),
                    c.allocations.to_string(),
                    fmt_mem(c.bytes),
                ]),
            });
        }
        v.tables.push(churn);
    }
}

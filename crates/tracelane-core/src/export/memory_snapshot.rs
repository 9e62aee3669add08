//! The allocator snapshot's report as sections: per device the peaks and
//! the replay's check, what holds the peak by the program's line, each
//! out-of-memory explained.

use super::section::Section;
use crate::memory_snapshot::report::{Holder, SnapshotReport, StateSummary};
use crate::numbers::fmt_mem;

fn mem(b: u64) -> String {
    fmt_mem(b.min(i64::MAX as u64) as i64)
}

fn holders_section(title: &str, holders: &[Holder], top: usize) -> Section {
    let mut s = Section::new(
        title,
        &[("allocated at", false), ("bytes", true), ("blocks", true)],
    );
    for h in holders.iter().take(top) {
        s.rows
            .push(vec![h.frame.clone(), mem(h.bytes), h.count.to_string()]);
    }
    s
}

fn state_row(label: String, st: &StateSummary) -> Vec<String> {
    vec![
        label,
        mem(st.allocated_bytes),
        mem(st.reserved_bytes),
        mem(st.free_bytes),
        st.free_blocks.to_string(),
        mem(st.largest_free_block),
    ]
}

/// The snapshot's sections; times in µs from `r.origin_us`, which `from`
/// names ("the trace's start").
pub fn snapshot_sections(r: &SnapshotReport, top: usize, from: &str) -> Vec<Section> {
    let rel = |us: i64| format!("{:.3}", (us - r.origin_us) as f64);
    let mut out = Vec::new();
    let mut summary = Section::new(
        &format!(
            "Allocator snapshot (pickle protocol {}, {} entries, {} stacks; times in µs from {from}{}{})",
            r.protocol,
            r.entries,
            r.stacks,
            if r.overflowed {
                "; the ring buffer overflowed: its oldest entries are lost"
            } else {
                ""
            },
            r.truncated
                .as_ref()
                .map(|t| format!("; truncated, what was read is shown: {t}"))
                .unwrap_or_default()
        ),
        &[
            ("device", false),
            ("entries", true),
            ("peak allocated", true),
            ("at (µs)", true),
            ("peak reserved", true),
            ("at the end: allocated", true),
            ("reserved", true),
            ("replay", false),
        ],
    );
    for d in &r.devices {
        let c = &d.replay;
        let problems = c.alloc_conflicts + c.free_unmatched + c.end_differs;
        summary.rows.push(vec![
            d.device.clone(),
            d.entries.to_string(),
            mem(d.peak_allocated_bytes),
            rel(d.peak_allocated_at_us),
            mem(d.peak_reserved_bytes),
            mem(d.end_allocated_bytes),
            mem(d.end_reserved_bytes),
            if problems == 0 {
                "ends in the file's state".into()
            } else {
                format!(
                    "{} conflicting allocs, {} unmatched frees, {} blocks differ at the end",
                    c.alloc_conflicts, c.free_unmatched, c.end_differs
                )
            },
        ]);
    }
    out.push(summary);
    for d in &r.devices {
        let mut state = Section::new(
            &format!("{}: the allocator's state", d.device),
            &[
                ("moment", false),
                ("allocated", true),
                ("reserved", true),
                ("free in reserved", true),
                ("free blocks", true),
                ("largest free block", true),
            ],
        );
        state.rows.push(state_row(
            format!("peak ({} µs)", rel(d.at_peak.at_us)),
            &d.at_peak,
        ));
        if let Some(at) = &d.at {
            state
                .rows
                .push(state_row(format!("{} µs", rel(at.at_us)), at));
        }
        for o in &d.ooms {
            state.rows.push(state_row(
                format!("out of memory ({} µs)", rel(o.at_us)),
                &o.state,
            ));
        }
        out.push(state);
        out.push(holders_section(
            &format!("{}: what holds the peak, by the program's line", d.device),
            &d.at_peak.holders,
            top,
        ));
        if let Some(at) = &d.at {
            out.push(holders_section(
                &format!("{}: what holds memory at {} µs", d.device, rel(at.at_us)),
                &at.holders,
                top,
            ));
        }
        for o in &d.ooms {
            let mut s = Section::new(
                &format!(
                    "{}: out of memory at {} µs — {} (asked {}, a block of {})",
                    d.device,
                    rel(o.at_us),
                    o.cause,
                    mem(o.request_bytes),
                    mem(o.block_bytes)
                ),
                &[("why", false)],
            );
            s.rows.push(vec![o.explanation.clone()]);
            out.push(s);
        }
    }
    out
}

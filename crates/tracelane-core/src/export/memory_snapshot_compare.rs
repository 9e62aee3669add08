//! Two allocator snapshots compared, as sections: per device the figures
//! of each side and their change, then what changed at the peak by the
//! program's line.

use super::section::Section;
use crate::memory_snapshot::compare::{signed_change, SideFigures, SnapshotComparison};
use crate::numbers::fmt_mem;

fn mem(b: u64) -> String {
    fmt_mem(b.min(i64::MAX as u64) as i64)
}

/// A change in bytes, signed (`+0 B` for none).
fn change(b: i64) -> String {
    if b < 0 {
        fmt_mem(b)
    } else {
        format!("+{}", fmt_mem(b))
    }
}

/// Reads one figure of a side.
type Figure = fn(&SideFigures) -> u64;

/// The comparison's sections; `top` lines of the program per device.
pub fn comparison_sections(c: &SnapshotComparison, top: usize) -> Vec<Section> {
    let mut out = Vec::new();
    for d in &c.devices {
        let mut s = Section::new(
            &format!(
                "{}: {} (baseline) against {}",
                d.device, c.baseline, c.other
            ),
            &[
                ("", false),
                ("baseline", true),
                ("other", true),
                ("change", true),
            ],
        );
        let (a, b) = (d.baseline.as_ref(), d.other.as_ref());
        let rows: [(&str, Figure, bool); 7] = [
            ("peak allocated", |x| x.peak_allocated_bytes, true),
            ("peak reserved", |x| x.peak_reserved_bytes, true),
            (
                "free in reserved, at the peak",
                |x| x.free_at_peak_bytes,
                true,
            ),
            (
                "largest free block, at the peak",
                |x| x.largest_free_block_at_peak,
                true,
            ),
            ("free blocks, at the peak", |x| x.free_blocks_at_peak, false),
            ("out-of-memory events", |x| x.ooms, false),
            ("trace entries", |x| x.entries, false),
        ];
        for (label, f, bytes) in rows {
            let (x, y) = (a.map(f), b.map(f));
            let shown = |v: Option<u64>| match v {
                None => "—".to_string(),
                Some(v) if bytes => mem(v),
                Some(v) => v.to_string(),
            };
            let delta = match (x, y) {
                (Some(x), Some(y)) if bytes => change(signed_change(x, y)),
                (Some(x), Some(y)) => format!("{:+}", signed_change(x, y)),
                _ => "—".into(),
            };
            s.rows
                .push(vec![label.to_string(), shown(x), shown(y), delta]);
        }
        out.push(s);
        let mut h = Section::new(
            &format!(
                "{}: what changed at the peak, by the program's line (the largest change first)",
                d.device
            ),
            &[
                ("allocated at", false),
                ("baseline", true),
                ("other", true),
                ("change", true),
                ("blocks", true),
            ],
        );
        for x in d.holders.iter().take(top) {
            h.rows.push(vec![
                x.frame.clone(),
                mem(x.baseline_bytes),
                mem(x.other_bytes),
                change(x.change_bytes),
                format!("{} → {}", x.baseline_blocks, x.other_blocks),
            ]);
        }
        out.push(h);
    }
    out
}

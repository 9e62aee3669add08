//! The op table's presentation in the page: filtering, the virtual list,
//! the timeline highlight of a row. Columns, units, sorting and every export
//! are the core's `export` module (the CLI's too), re-exported here.

use tracelane_core::analysis::ops::OpRow;
pub use tracelane_core::export::{
    cell, fmt_count, fmt_ns, has_memory, pct, sort_rows, to_csv, to_markdown, Column, Totals,
};

/// Case-insensitive substring filter on the name (the page adds regular
/// expressions with the browser's own engine).
pub fn matches_substring(row: &OpRow, query: &str) -> bool {
    query.is_empty() || row.name.to_lowercase().contains(&query.to_lowercase())
}

/// `54 MB`, `2.9 MB`, `6.6 kB`.
pub fn fmt_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e7 {
        format!("{:.0} MB", b / 1e6)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{b:.0} B")
    }
}

/// `216,092`.
/// A counter value: whole numbers with separators, others to 4 significant digits.
pub fn fmt_count_f(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        let s = fmt_count(v.abs() as u64);
        if v < 0.0 {
            format!("-{s}")
        } else {
            s
        }
    } else {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// What the timeline highlights for a row of the op table: slices with the
/// row's name (`ProfilerStep*` stands for every `ProfilerStep#N`).
pub fn highlight_for(row: &OpRow) -> crate::shared::timeline_view::Highlight {
    match row.name.strip_suffix('*') {
        Some(prefix) if row.name == "ProfilerStep*" => crate::shared::timeline_view::Highlight {
            text: format!("{prefix}#"),
            exact: false,
        },
        _ => crate::shared::timeline_view::Highlight {
            text: row.name.clone(),
            exact: true,
        },
    }
}

/// Which rows of a virtualised list are in the DOM: `[first, last)` for a
/// viewport, with `overscan` rows above and below.
pub fn visible_range(
    scroll_px: f64,
    viewport_px: f64,
    row_px: f64,
    rows: usize,
    overscan: usize,
) -> (usize, usize) {
    if rows == 0 || row_px <= 0.0 {
        return (0, 0);
    }
    let first = (scroll_px.max(0.0) / row_px).floor() as usize;
    let count = (viewport_px.max(0.0) / row_px).ceil() as usize + 1;
    let start = first.saturating_sub(overscan).min(rows);
    let end = (first + count + overscan).min(rows);
    (start, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_well() {
        assert_eq!(fmt_bytes(53_733_385), "54 MB");
    }

    #[test]
    fn virtual_list_window() {
        assert_eq!(visible_range(0.0, 100.0, 20.0, 1000, 5), (0, 11));
        assert_eq!(visible_range(2000.0, 100.0, 20.0, 1000, 5), (95, 111));
        assert_eq!(visible_range(1e9, 100.0, 20.0, 1000, 5), (1000, 1000));
    }
}

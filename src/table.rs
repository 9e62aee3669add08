//! The op table's presentation: columns, sorting, filtering, units and
//! exports. Pure functions, so the page and the tests agree.

use tracelane_core::ops::OpRow;

/// A sortable column of the op table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    Name,
    Shapes,
    Calls,
    CpuSelf,
    CpuTotal,
    CpuAvg,
    DeviceSelf,
    DeviceTotal,
    DeviceAvg,
    CpuPct,
    DevicePct,
}

/// The totals percentages are taken of (PyTorch's "Self CPU time total" and
/// "Self CUDA time total").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub cpu_self_ns: i64,
    pub device_self_ns: i64,
}

impl Column {
    pub const ALL: [Column; 11] = [
        Column::Name,
        Column::Shapes,
        Column::Calls,
        Column::CpuSelf,
        Column::CpuTotal,
        Column::CpuAvg,
        Column::DeviceSelf,
        Column::DeviceTotal,
        Column::DeviceAvg,
        Column::CpuPct,
        Column::DevicePct,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Column::Name => "Name",
            Column::Shapes => "Input shapes",
            Column::Calls => "Calls",
            Column::CpuSelf => "CPU self",
            Column::CpuTotal => "CPU total",
            Column::CpuAvg => "CPU avg",
            Column::DeviceSelf => "Device self",
            Column::DeviceTotal => "Device total",
            Column::DeviceAvg => "Device avg",
            Column::CpuPct => "CPU self %",
            Column::DevicePct => "Device self %",
        }
    }

    /// Numeric columns sort largest first on the first click.
    pub fn descending_first(self) -> bool {
        !matches!(self, Column::Name | Column::Shapes)
    }
}

fn avg(total: i64, calls: u64) -> f64 {
    if calls == 0 {
        0.0
    } else {
        total as f64 / calls as f64
    }
}

/// Sorts rows by a column; ties keep name order so the result is stable.
pub fn sort_rows(rows: &mut [OpRow], col: Column, descending: bool) {
    rows.sort_by(|a, b| {
        let ord = match col {
            Column::Name => a.name.cmp(&b.name),
            Column::Shapes => a.input_shapes.cmp(&b.input_shapes),
            Column::Calls => a.calls.cmp(&b.calls),
            Column::CpuSelf | Column::CpuPct => a.cpu_self_ns.cmp(&b.cpu_self_ns),
            Column::CpuTotal => a.cpu_total_ns.cmp(&b.cpu_total_ns),
            Column::CpuAvg => avg(a.cpu_total_ns, a.calls).total_cmp(&avg(b.cpu_total_ns, b.calls)),
            Column::DeviceSelf | Column::DevicePct => a.device_self_ns.cmp(&b.device_self_ns),
            Column::DeviceTotal => a.device_total_ns.cmp(&b.device_total_ns),
            Column::DeviceAvg => {
                avg(a.device_total_ns, a.calls).total_cmp(&avg(b.device_total_ns, b.calls))
            }
        };
        let ord = if descending { ord.reverse() } else { ord };
        ord.then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.is_device.cmp(&b.is_device))
    });
}

/// Case-insensitive substring filter on the name (the page adds regular
/// expressions with the browser's own engine).
pub fn matches_substring(row: &OpRow, query: &str) -> bool {
    query.is_empty() || row.name.to_lowercase().contains(&query.to_lowercase())
}

/// `412 ns`, `3.217 µs`, `42.511 ms`, `1.305 s`.
pub fn fmt_ns(ns: f64) -> String {
    let a = ns.abs();
    if a == 0.0 {
        "0".to_string()
    } else if a < 1e3 {
        format!("{ns:.0} ns")
    } else if a < 1e6 {
        format!("{:.3} µs", ns / 1e3)
    } else if a < 1e9 {
        format!("{:.3} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
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
pub fn highlight_for(row: &OpRow) -> crate::timeline_view::Highlight {
    match row.name.strip_suffix('*') {
        Some(prefix) if row.name == "ProfilerStep*" => crate::timeline_view::Highlight {
            text: format!("{prefix}#"),
            exact: false,
        },
        _ => crate::timeline_view::Highlight {
            text: row.name.clone(),
            exact: true,
        },
    }
}

pub fn fmt_count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (k, c) in s.chars().enumerate() {
        if k > 0 && (s.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn pct(part: i64, whole: i64) -> String {
    if whole == 0 {
        "—".into()
    } else {
        format!("{:.2}%", part as f64 * 100.0 / whole as f64)
    }
}

/// The cell text of a column (times in readable units).
pub fn cell(row: &OpRow, col: Column, totals: Totals) -> String {
    match col {
        Column::Name => row.name.clone(),
        Column::Shapes => row.input_shapes.clone().unwrap_or_default(),
        Column::Calls => fmt_count(row.calls),
        Column::CpuSelf => fmt_ns(row.cpu_self_ns as f64),
        Column::CpuTotal => fmt_ns(row.cpu_total_ns as f64),
        Column::CpuAvg => fmt_ns(avg(row.cpu_total_ns, row.calls)),
        Column::DeviceSelf => fmt_ns(row.device_self_ns as f64),
        Column::DeviceTotal => fmt_ns(row.device_total_ns as f64),
        Column::DeviceAvg => fmt_ns(avg(row.device_total_ns, row.calls)),
        Column::CpuPct => pct(row.cpu_self_ns, totals.cpu_self_ns),
        Column::DevicePct => pct(row.device_self_ns, totals.device_self_ns),
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The rows as CSV with microsecond numbers (same columns as `tracelane ops --format csv`).
pub fn to_csv(rows: &[OpRow], by_shape: bool) -> String {
    let mut out = String::from("name");
    if by_shape {
        out.push_str(",input_shapes");
    }
    out.push_str(",calls,cpu_total_us,cpu_self_us,device_total_us,device_self_us\n");
    for r in rows {
        out.push_str(&csv_field(&r.name));
        if by_shape {
            out.push(',');
            out.push_str(&csv_field(r.input_shapes.as_deref().unwrap_or("[]")));
        }
        let us = |ns: i64| ns as f64 / 1e3;
        out.push_str(&format!(
            ",{},{},{},{},{}\n",
            r.calls,
            us(r.cpu_total_ns),
            us(r.cpu_self_ns),
            us(r.device_total_ns),
            us(r.device_self_ns)
        ));
    }
    out
}

/// The rows as a Markdown table, for pasting into a pull request.
pub fn to_markdown(rows: &[OpRow], by_shape: bool, totals: Totals) -> String {
    let cols: Vec<Column> = Column::ALL
        .into_iter()
        .filter(|&c| by_shape || c != Column::Shapes)
        .collect();
    let mut out = format!(
        "| {} |\n",
        cols.iter()
            .map(|c| c.title())
            .collect::<Vec<_>>()
            .join(" | ")
    );
    out.push_str(&format!(
        "|{}|\n",
        cols.iter()
            .map(|&c| if c.descending_first() { "---:" } else { "---" })
            .collect::<Vec<_>>()
            .join("|")
    ));
    for r in rows {
        let cells: Vec<String> = cols
            .iter()
            .map(|&c| cell(r, c, totals).replace('|', "\\|"))
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
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

    fn row(name: &str, calls: u64, cpu_self: i64, dev: i64) -> OpRow {
        OpRow {
            name: name.into(),
            input_shapes: None,
            is_device: false,
            is_user_annotation: false,
            calls,
            cpu_total_ns: cpu_self * 2,
            cpu_self_ns: cpu_self,
            device_total_ns: dev,
            device_self_ns: dev,
        }
    }

    #[test]
    fn units_read_well() {
        assert_eq!(fmt_ns(412.0), "412 ns");
        assert_eq!(fmt_ns(3_217.4), "3.217 µs");
        assert_eq!(fmt_ns(42_511_000.0), "42.511 ms");
        assert_eq!(fmt_ns(1_305_161_000.0), "1.305 s");
        assert_eq!(fmt_count(216_092), "216,092");
        assert_eq!(fmt_bytes(53_733_385), "54 MB");
    }

    #[test]
    fn sorting_by_a_column_and_reversing() {
        let mut rows = vec![row("b", 1, 5, 0), row("a", 3, 9, 7), row("c", 2, 1, 3)];
        sort_rows(&mut rows, Column::CpuSelf, true);
        assert_eq!(
            rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        sort_rows(&mut rows, Column::DeviceTotal, false);
        assert_eq!(
            rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            ["b", "c", "a"]
        );
        sort_rows(&mut rows, Column::Name, false);
        assert_eq!(rows[0].name, "a");
    }

    #[test]
    fn csv_quotes_names_with_commas() {
        let csv = to_csv(&[row("aten::mul, fused", 2, 1500, 0)], false);
        assert_eq!(
            csv,
            "name,calls,cpu_total_us,cpu_self_us,device_total_us,device_self_us\n\"aten::mul, fused\",2,3,1.5,0,0\n"
        );
    }

    #[test]
    fn markdown_escapes_pipes() {
        let md = to_markdown(&[row("a|b", 1, 1000, 0)], false, Totals::default());
        assert!(md.contains("| a\\|b |"), "{md}");
    }

    #[test]
    fn virtual_list_window() {
        assert_eq!(visible_range(0.0, 100.0, 20.0, 1000, 5), (0, 11));
        assert_eq!(visible_range(2000.0, 100.0, 20.0, 1000, 5), (95, 111));
        assert_eq!(visible_range(1e9, 100.0, 20.0, 1000, 5), (1000, 1000));
    }
}

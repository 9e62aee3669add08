//! The op table's exports — CSV, Markdown, JSON and a plain-text grid —
//! with the columns, units and sorting they share.
//!
//! Units: CSV and JSON carry plain microseconds (`cpu_total_us`, …) for
//! tools; Markdown and text carry readable durations ([`fmt_ns`]).
//! Percentages are of PyTorch's totals ([`Totals`]); where a total is zero
//! the percentage is `—` (undefined, not 0 %).

use crate::analysis::ops::{OpRow, OpTable};
use crate::numbers::{fmt_count, fmt_ns, pct};

/// A column of the op table.
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
    /// PyTorch's memory columns (`profile_memory=True`), shown when the
    /// trace recorded memory: CPU Mem, Self CPU Mem, device Mem, Self
    /// device Mem.
    CpuMem,
    CpuSelfMem,
    DeviceMem,
    DeviceSelfMem,
}

/// The totals percentages are taken of (PyTorch's "Self CPU time total" and
/// "Self CUDA time total").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub cpu_self_ns: i64,
    pub device_self_ns: i64,
}

impl Totals {
    pub fn of(table: &OpTable) -> Totals {
        Totals {
            cpu_self_ns: table.self_cpu_total_ns,
            device_self_ns: table.self_device_total_ns,
        }
    }
}

impl Column {
    /// Every column, in the order tables and exports show them.
    pub const ALL: [Column; 15] = [
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
        Column::CpuMem,
        Column::CpuSelfMem,
        Column::DeviceMem,
        Column::DeviceSelfMem,
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
            Column::CpuMem => "CPU mem",
            Column::CpuSelfMem => "Self CPU mem",
            Column::DeviceMem => "Device mem",
            Column::DeviceSelfMem => "Self device mem",
        }
    }

    /// The name `tracelane ops --sort` takes.
    pub fn key(self) -> &'static str {
        match self {
            Column::Name => "name",
            Column::Shapes => "shapes",
            Column::Calls => "calls",
            Column::CpuSelf => "cpu_self",
            Column::CpuTotal => "cpu_total",
            Column::CpuAvg => "cpu_avg",
            Column::DeviceSelf => "device_self",
            Column::DeviceTotal => "device_total",
            Column::DeviceAvg => "device_avg",
            Column::CpuPct => "cpu_pct",
            Column::DevicePct => "device_pct",
            Column::CpuMem => "cpu_mem",
            Column::CpuSelfMem => "cpu_self_mem",
            Column::DeviceMem => "device_mem",
            Column::DeviceSelfMem => "device_self_mem",
        }
    }

    pub fn from_key(key: &str) -> Option<Column> {
        Column::ALL.into_iter().find(|c| c.key() == key)
    }

    /// Numeric columns sort largest first on the first click.
    pub fn descending_first(self) -> bool {
        !matches!(self, Column::Name | Column::Shapes)
    }

    /// The memory columns.
    pub fn is_memory(self) -> bool {
        matches!(
            self,
            Column::CpuMem | Column::CpuSelfMem | Column::DeviceMem | Column::DeviceSelfMem
        )
    }

    /// The columns shown for a grouping (input shapes only when grouped by
    /// them), the memory columns only when the trace recorded memory
    /// ([`has_memory`]).
    pub fn shown(by_shape: bool, memory: bool) -> impl Iterator<Item = Column> {
        Column::ALL
            .into_iter()
            .filter(move |&c| (by_shape || c != Column::Shapes) && (memory || !c.is_memory()))
    }
}

/// Did the trace record memory (`profile_memory=True`): a `[memory]` row,
/// or any op given bytes.
pub fn has_memory(rows: &[OpRow]) -> bool {
    rows.iter().any(|r| {
        r.name == "[memory]"
            || [
                r.cpu_mem_bytes,
                r.device_mem_bytes,
                r.cpu_self_mem_bytes,
                r.device_self_mem_bytes,
            ]
            .iter()
            .any(|&b| b != 0)
    })
}

pub use crate::numbers::fmt_mem;

/// The sort a table starts with: device time where a row has any, else CPU
/// time, largest first.
pub fn default_sort(rows: &[OpRow]) -> Column {
    if rows.iter().any(|r| r.device_total_ns > 0) {
        Column::DeviceTotal
    } else {
        Column::CpuTotal
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
    crate::sort::by(rows, &|a, b| {
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
            Column::CpuMem => a.cpu_mem_bytes.cmp(&b.cpu_mem_bytes),
            Column::CpuSelfMem => a.cpu_self_mem_bytes.cmp(&b.cpu_self_mem_bytes),
            Column::DeviceMem => a.device_mem_bytes.cmp(&b.device_mem_bytes),
            Column::DeviceSelfMem => a.device_self_mem_bytes.cmp(&b.device_self_mem_bytes),
        };
        let ord = if descending { ord.reverse() } else { ord };
        ord.then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.is_device.cmp(&b.is_device))
    });
}

/// Input shapes as shown and exported: `[]` where a row has none.
fn shapes(row: &OpRow) -> &str {
    row.input_shapes.as_deref().unwrap_or("[]")
}

/// The cell text of a column (times in readable units).
pub fn cell(row: &OpRow, col: Column, totals: Totals) -> String {
    match col {
        Column::Name => row.name.clone(),
        Column::Shapes => shapes(row).to_string(),
        Column::Calls => fmt_count(row.calls),
        Column::CpuSelf => fmt_ns(row.cpu_self_ns as f64),
        Column::CpuTotal => fmt_ns(row.cpu_total_ns as f64),
        Column::CpuAvg => fmt_ns(avg(row.cpu_total_ns, row.calls)),
        Column::DeviceSelf => fmt_ns(row.device_self_ns as f64),
        Column::DeviceTotal => fmt_ns(row.device_total_ns as f64),
        Column::DeviceAvg => fmt_ns(avg(row.device_total_ns, row.calls)),
        Column::CpuPct => pct(row.cpu_self_ns, totals.cpu_self_ns),
        Column::DevicePct => pct(row.device_self_ns, totals.device_self_ns),
        Column::CpuMem => fmt_mem(row.cpu_mem_bytes),
        Column::CpuSelfMem => fmt_mem(row.cpu_self_mem_bytes),
        Column::DeviceMem => fmt_mem(row.device_mem_bytes),
        Column::DeviceSelfMem => fmt_mem(row.device_self_mem_bytes),
    }
}

/// A CSV field, quoted where it must be (RFC 4180).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn us(ns: i64) -> f64 {
    ns as f64 / 1e3
}

/// The rows as CSV with microsecond numbers.
pub fn to_csv(rows: &[OpRow], by_shape: bool) -> String {
    let mut out = String::from("name");
    if by_shape {
        out.push_str(",input_shapes");
    }
    let memory = has_memory(rows);
    out.push_str(",calls,cpu_total_us,cpu_self_us,device_total_us,device_self_us");
    out.push_str(if memory {
        ",cpu_mem_bytes,cpu_self_mem_bytes,device_mem_bytes,device_self_mem_bytes\n"
    } else {
        "\n"
    });
    for r in rows {
        out.push_str(&csv_field(&r.name));
        if by_shape {
            out.push(',');
            out.push_str(&csv_field(shapes(r)));
        }
        out.push_str(&format!(
            ",{},{},{},{},{}",
            r.calls,
            us(r.cpu_total_ns),
            us(r.cpu_self_ns),
            us(r.device_total_ns),
            us(r.device_self_ns)
        ));
        if memory {
            out.push_str(&format!(
                ",{},{},{},{}",
                r.cpu_mem_bytes, r.cpu_self_mem_bytes, r.device_mem_bytes, r.device_self_mem_bytes
            ));
        }
        out.push('\n');
    }
    out
}

/// The rows as JSON: an array of `{name, input_shapes (grouped by shape
/// only), calls, cpu_total_us, cpu_self_us, device_total_us, device_self_us}`,
/// and PyTorch's memory columns (`cpu_mem_bytes`, `cpu_self_mem_bytes`,
/// `device_mem_bytes`, `device_self_mem_bytes`) when the trace recorded
/// memory.
pub fn to_json(rows: &[OpRow], by_shape: bool) -> serde_json::Value {
    let with_memory = has_memory(rows);
    let list: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let mut m = serde_json::Map::new();
            m.insert("name".into(), r.name.clone().into());
            if by_shape {
                m.insert("input_shapes".into(), shapes(r).into());
            }
            m.insert("calls".into(), r.calls.into());
            m.insert("cpu_total_us".into(), us(r.cpu_total_ns).into());
            m.insert("cpu_self_us".into(), us(r.cpu_self_ns).into());
            m.insert("device_total_us".into(), us(r.device_total_ns).into());
            m.insert("device_self_us".into(), us(r.device_self_ns).into());
            if with_memory {
                m.insert("cpu_mem_bytes".into(), r.cpu_mem_bytes.into());
                m.insert("cpu_self_mem_bytes".into(), r.cpu_self_mem_bytes.into());
                m.insert("device_mem_bytes".into(), r.device_mem_bytes.into());
                m.insert(
                    "device_self_mem_bytes".into(),
                    r.device_self_mem_bytes.into(),
                );
            }
            serde_json::Value::Object(m)
        })
        .collect();
    serde_json::Value::Array(list)
}

/// The rows as a Markdown table, for pasting into a pull request.
pub fn to_markdown(rows: &[OpRow], by_shape: bool, totals: Totals) -> String {
    let cols: Vec<Column> = Column::shown(by_shape, has_memory(rows)).collect();
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

/// The rows as an aligned plain-text grid (names clipped to 60
/// characters), then the totals, as a terminal shows them.
pub fn to_text(rows: &[OpRow], by_shape: bool, table: &OpTable) -> String {
    const NAME_MAX: usize = 60;
    let totals = Totals::of(table);
    let cols: Vec<Column> = Column::shown(by_shape, has_memory(&table.rows)).collect();
    let clip = |s: String, c: Column| -> String {
        if c == Column::Name && s.chars().count() > NAME_MAX {
            let t: String = s.chars().take(NAME_MAX - 3).collect();
            format!("{t}...")
        } else {
            s
        }
    };
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| cols.iter().map(|&c| clip(cell(r, c, totals), c)).collect())
        .collect();
    let mut width: Vec<usize> = cols.iter().map(|c| c.title().chars().count()).collect();
    for row in &body {
        for (k, v) in row.iter().enumerate() {
            width[k] = width[k].max(v.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let padded: Vec<String> = cells
            .iter()
            .zip(&cols)
            .enumerate()
            .map(|(k, (v, c))| {
                let pad = " ".repeat(width[k] - v.chars().count());
                if c.descending_first() {
                    format!("{pad}{v}")
                } else {
                    format!("{v}{pad}")
                }
            })
            .collect();
        padded.join("  ").trim_end().to_string()
    };
    let sep = width
        .iter()
        .map(|w| "-".repeat(*w))
        .collect::<Vec<_>>()
        .join("  ");
    let mut out = format!("{sep}\n");
    let header: Vec<String> = cols.iter().map(|c| c.title().to_string()).collect();
    out.push_str(&line(&header));
    out.push('\n');
    out.push_str(&sep);
    out.push('\n');
    for row in &body {
        out.push_str(&line(row));
        out.push('\n');
    }
    out.push_str(&sep);
    out.push('\n');
    out.push_str(&format!(
        "Self CPU time total: {}\n",
        fmt_ns(table.self_cpu_total_ns as f64)
    ));
    out.push_str(&format!(
        "Self device time total: {}\n",
        fmt_ns(table.self_device_total_ns as f64)
    ));
    if table.device_without_op_ns > 0 {
        out.push_str(&format!(
            "Device time with no launching op: {}\n",
            fmt_ns(table.device_without_op_ns as f64)
        ));
    }
    out
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
            ..Default::default()
        }
    }

    #[test]
    fn sorting_by_a_column_and_reversing() {
        let mut rows = vec![row("b", 1, 5, 0), row("a", 3, 9, 7), row("c", 2, 1, 3)];
        sort_rows(&mut rows, Column::CpuSelf, true);
        let names = |rows: &[OpRow]| rows.iter().map(|r| r.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&rows), ["a", "b", "c"]);
        sort_rows(&mut rows, Column::DeviceTotal, false);
        assert_eq!(names(&rows), ["b", "c", "a"]);
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
    fn markdown_escapes_pipes_and_a_zero_total_is_undefined() {
        let md = to_markdown(&[row("a|b", 1, 1000, 0)], false, Totals::default());
        assert!(md.contains("| a\\|b |"), "{md}");
        assert!(md.trim_end().ends_with("| — | — |"), "{md}");
    }

    #[test]
    fn rows_without_shapes_export_as_an_empty_list() {
        let r = row("aten::empty", 1, 10, 0);
        assert!(
            to_csv(std::slice::from_ref(&r), true).ends_with("aten::empty,[],1,0.02,0.01,0,0\n")
        );
        assert_eq!(
            to_json(std::slice::from_ref(&r), true)[0]["input_shapes"],
            "[]"
        );
        assert!(to_markdown(&[r], true, Totals::default()).contains("| aten::empty | [] |"));
    }

    #[test]
    fn memory_reads_as_pytorchs_table() {
        assert_eq!(fmt_mem(25_288_704), "24.12 MB");
        assert_eq!(fmt_mem(-30 * 1024), "-30.00 KB");
        assert_eq!(fmt_mem(-144), "-144 B");
        assert_eq!(fmt_mem(0), "0 B");
        assert_eq!(fmt_mem(3 << 30), "3.00 GB");
    }

    #[test]
    fn sort_keys_round_trip() {
        for c in Column::ALL {
            assert_eq!(Column::from_key(c.key()), Some(c));
        }
    }
}

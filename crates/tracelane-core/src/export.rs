//! One writer for every export of the op table — CSV, Markdown, JSON and a
//! plain-text grid — with the columns, units and sorting they share. The
//! CLI (`tracelane ops`), the page (its table, *Export CSV*, *Copy
//! Markdown*) and the golden tests all call these, so what a user gets
//! from either is byte-equal.
//!
//! Units: CSV and JSON carry plain microseconds (`cpu_total_us`, …) for
//! tools; Markdown and text carry readable durations ([`fmt_ns`]).
//! Percentages are of PyTorch's totals ([`Totals`]); where a total is zero
//! the percentage is `—` (undefined, not 0 %).

use crate::analysis::ops::{OpRow, OpTable};

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
        }
    }

    pub fn from_key(key: &str) -> Option<Column> {
        Column::ALL.into_iter().find(|c| c.key() == key)
    }

    /// Numeric columns sort largest first on the first click.
    pub fn descending_first(self) -> bool {
        !matches!(self, Column::Name | Column::Shapes)
    }

    /// The columns shown for a grouping (input shapes only when grouped by them).
    pub fn shown(by_shape: bool) -> impl Iterator<Item = Column> {
        Column::ALL
            .into_iter()
            .filter(move |&c| by_shape || c != Column::Shapes)
    }
}

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
        };
        let ord = if descending { ord.reverse() } else { ord };
        ord.then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.is_device.cmp(&b.is_device))
    });
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

/// `216,092`.
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

/// `12.34%` of a total; `—` where the total is zero (undefined).
pub fn pct(part: i64, whole: i64) -> String {
    if whole == 0 {
        "—".into()
    } else {
        format!("{:.2}%", part as f64 * 100.0 / whole as f64)
    }
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
    out.push_str(",calls,cpu_total_us,cpu_self_us,device_total_us,device_self_us\n");
    for r in rows {
        out.push_str(&csv_field(&r.name));
        if by_shape {
            out.push(',');
            out.push_str(&csv_field(shapes(r)));
        }
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

/// The rows as JSON: an array of `{name, input_shapes (grouped by shape
/// only), calls, cpu_total_us, cpu_self_us, device_total_us, device_self_us}`.
pub fn to_json(rows: &[OpRow], by_shape: bool) -> serde_json::Value {
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
            serde_json::Value::Object(m)
        })
        .collect();
    serde_json::Value::Array(list)
}

/// The rows as a Markdown table, for pasting into a pull request.
pub fn to_markdown(rows: &[OpRow], by_shape: bool, totals: Totals) -> String {
    let cols: Vec<Column> = Column::shown(by_shape).collect();
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
    let cols: Vec<Column> = Column::shown(by_shape).collect();
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
        }
    }

    #[test]
    fn units_read_well() {
        assert_eq!(fmt_ns(412.0), "412 ns");
        assert_eq!(fmt_ns(3_217.4), "3.217 µs");
        assert_eq!(fmt_ns(42_511_000.0), "42.511 ms");
        assert_eq!(fmt_ns(1_305_161_000.0), "1.305 s");
        assert_eq!(fmt_count(216_092), "216,092");
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
    fn sort_keys_round_trip() {
        for c in Column::ALL {
            assert_eq!(Column::from_key(c.key()), Some(c));
        }
    }
}

/// A titled table of text cells: how the CLI and the page's copy button
/// print a report that is not the op table.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    pub title: String,
    pub header: Vec<String>,
    /// Which columns are numbers (right-aligned).
    pub numeric: Vec<bool>,
    pub rows: Vec<Vec<String>>,
}

impl Section {
    fn new(title: &str, header: &[(&str, bool)]) -> Section {
        Section {
            title: title.into(),
            header: header.iter().map(|h| h.0.to_string()).collect(),
            numeric: header.iter().map(|h| h.1).collect(),
            rows: Vec::new(),
        }
    }
}

/// The device-time report as sections: notes, the breakdown per device,
/// kernel types, the longest-running kernels (`top` of them), idle time per
/// lane and its longest gaps, launches, queues.
pub fn device_time_sections(
    r: &crate::analysis::device_time::DeviceTimeReport,
    top: usize,
) -> Vec<Section> {
    let t = |ns: i64| fmt_ns(ns as f64);
    let mut out = Vec::new();
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
    out.push(s);
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
    out.push(s);
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
    out.push(s);
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
    out.push(s);
    if !r.longest_gaps.is_empty() {
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
        out.push(s);
    }
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
    out.push(s);
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
    out.push(s);
    if !r.notes.is_empty() {
        let mut s = Section::new("Notes", &[("note", false)]);
        s.rows = r.notes.iter().map(|n| vec![n.clone()]).collect();
        out.push(s);
    }
    out
}

/// Every "why is it slow" section: device time, the critical path (its
/// length against the scope's wall time, the time by label, the ops by
/// time on the path beside the ops by total time, or why there is none),
/// data movement and warm-up.
pub fn analysis_sections(w: &crate::analysis::WhySlow, top: usize) -> Vec<Section> {
    let r = &w.device;
    let cp = w.critical_path.as_ref();
    let mut out = device_time_sections(r, top);
    let t = |ns: i64| fmt_ns(ns as f64);
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
    let t = |ns: i64| fmt_ns(ns as f64);
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

/// Sections as aligned plain text (cells clipped to 60 characters).
pub fn sections_to_text(sections: &[Section]) -> String {
    let clip = |s: &str| -> String {
        if s.chars().count() > 60 {
            s.chars().take(59).collect::<String>() + "…"
        } else {
            s.to_string()
        }
    };
    let mut out = String::new();
    for s in sections {
        out.push_str(&format!("{}\n", s.title));
        let rows: Vec<Vec<String>> = std::iter::once(s.header.clone())
            .chain(s.rows.iter().cloned())
            // A one-column section (notes) is prose: never clipped.
            .map(|r| {
                r.iter()
                    .map(|c| {
                        if s.header.len() == 1 {
                            c.clone()
                        } else {
                            clip(c)
                        }
                    })
                    .collect()
            })
            .collect();
        let widths: Vec<usize> = (0..s.header.len())
            .map(|k| rows.iter().map(|r| r[k].chars().count()).max().unwrap_or(0))
            .collect();
        for r in &rows {
            let cells: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(k, c)| {
                    let pad = widths[k] - c.chars().count();
                    if s.numeric[k] {
                        format!("{}{c}", " ".repeat(pad))
                    } else {
                        format!("{c}{}", " ".repeat(pad))
                    }
                })
                .collect();
            out.push_str(&format!("  {}\n", cells.join("  ").trim_end()));
        }
        if s.rows.is_empty() {
            out.push_str("  (none)\n");
        }
        out.push('\n');
    }
    out
}

/// Sections as Markdown tables.
pub fn sections_to_markdown(sections: &[Section]) -> String {
    let mut out = String::new();
    for s in sections {
        out.push_str(&format!(
            "### {}\n\n| {} |\n|",
            s.title,
            s.header.join(" | ")
        ));
        for &n in &s.numeric {
            out.push_str(if n { "---:|" } else { "---|" });
        }
        out.push('\n');
        for r in &s.rows {
            let cells: Vec<String> = r.iter().map(|c| c.replace('|', "\\|")).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out.push('\n');
    }
    out
}

/// A count with SI prefixes (`1.07 G`), for FLOPs and bytes.
pub fn fmt_si(x: f64) -> String {
    let a = x.abs();
    let (v, p) = if a >= 1e15 {
        (x / 1e15, " P")
    } else if a >= 1e12 {
        (x / 1e12, " T")
    } else if a >= 1e9 {
        (x / 1e9, " G")
    } else if a >= 1e6 {
        (x / 1e6, " M")
    } else if a >= 1e3 {
        (x / 1e3, " k")
    } else {
        (x, "")
    };
    if p.is_empty() {
        format!("{v:.0}")
    } else {
        format!("{v:.2}{p}")
    }
}

/// The engine view as sections: engines, opcodes, DMA, HLO ops, layers.
pub fn engine_sections(r: &crate::analysis::engines::EngineReport, top: usize) -> Vec<Section> {
    let t = |ns: i64| fmt_ns(ns as f64);
    let opt_t = |ns: Option<i64>| ns.map_or("—".to_string(), t);
    let mut out = Vec::new();
    let mut s = Section::new(
        &format!(
            "Device profile ({}{}) — window {} from {}",
            r.source,
            r.schema_version
                .as_deref()
                .map(|v| format!(
                    ", schema {v}{}",
                    if r.schema_known {
                        ""
                    } else {
                        ", not the 7.x this reader knows"
                    }
                ))
                .unwrap_or_default(),
            t(r.window_ns.1 - r.window_ns.0),
            r.window_from
        ),
        &[("note", false)],
    );
    for n in &r.notes {
        s.rows.push(vec![n.clone()]);
    }
    if r.notes.is_empty() {
        s.rows.push(vec![format!(
            "{} tables read (unused columns listed under Tables)",
            r.tables.len()
        )]);
    }
    out.push(s);
    if let Some(u) = &r.utilization {
        let mut s = Section::new(
            &format!(
                "Tensor engine and HBM use over {} (peak {}FLOP/s, HBM {}B/s)",
                t(u.window_ns),
                fmt_si(u.peak_flops_per_s),
                fmt_si(u.hbm_bytes_per_s)
            ),
            &[
                ("", false),
                ("from the instructions", true),
                ("the profile's Summary", true),
                ("Summary read as", false),
            ],
        );
        for (label, mine, key) in [
            ("HFU", u.hfu_pct, "hfu_estimated_percent"),
            ("MFU", u.mfu_pct, "mfu_estimated_percent"),
            ("MBU", u.mbu_pct, "mbu_estimated_percent"),
        ] {
            let theirs = u.summary.iter().find(|(k, _)| k == key).map(|&(_, v)| v);
            s.rows.push(vec![
                label.into(),
                format!("{mine:.2}%"),
                theirs.map_or("—".into(), |v| format!("{v:.2}%")),
                u.summary_percent_scale.clone(),
            ]);
        }
        out.push(s);
    }
    let mut s = Section::new(
        "Engines",
        &[
            ("engine", false),
            ("busy %", true),
            ("active", true),
            ("busy", true),
            ("instructions", true),
            ("instruction time", true),
            ("semaphore waits", true),
            ("event waits", true),
            ("DMA waits", true),
            ("top opcodes", false),
        ],
    );
    for e in &r.engines {
        let ops: Vec<String> = e
            .opcodes
            .iter()
            .take(3)
            .map(|o| format!("{} ×{} {}", o.opcode, o.count, t(o.instruction_ns)))
            .collect();
        s.rows.push(vec![
            e.engine.clone(),
            format!("{:.1}%", e.busy_pct),
            t(e.active_ns),
            t(e.busy_ns),
            fmt_count(e.instructions),
            t(e.instruction_ns),
            t(e.semaphore_ns),
            opt_t(e.evt_wait_ns),
            opt_t(e.dma_wait_ns),
            ops.join(", "),
        ]);
    }
    out.push(s);
    let dma_header = [
        ("", false),
        ("packets", true),
        ("bytes", true),
        ("busy", true),
        ("throughput", true),
        ("% of DMA bandwidth", true),
    ];
    let dma_row = |d: &crate::analysis::engines::DmaRow| {
        vec![
            d.name.clone(),
            fmt_count(d.packets),
            d.bytes.map_or("—".into(), |b| fmt_si(b as f64) + "B"),
            t(d.busy_ns),
            d.throughput_bytes_per_s
                .map_or("—".into(), |x| fmt_si(x) + "B/s"),
            d.pct_of_bandwidth
                .map_or("—".into(), |p| format!("{p:.1}%")),
        ]
    };
    let mut s = Section::new(
        &format!(
            "DMA queues{}",
            r.dma_bandwidth_bytes_per_s
                .map(|b| format!(" (Metadata bandwidth {}B/s per NeuronCore)", fmt_si(b)))
                .unwrap_or_default()
        ),
        &dma_header,
    );
    s.rows.extend(r.dma_all.iter().map(dma_row));
    s.rows.extend(r.dma_queues.iter().map(dma_row));
    out.push(s);
    let mut s = Section::new("DMA engines", &dma_header);
    s.rows.extend(r.dma_engines.iter().take(top).map(dma_row));
    out.push(s);
    let group = |title: &str, rows: &[crate::analysis::engines::GroupRow]| {
        let mut s = Section::new(
            title,
            &[
                ("", false),
                ("instructions", true),
                ("busy", true),
                ("instruction time", true),
                ("FLOPs", true),
                ("HBM bytes", true),
            ],
        );
        for g in rows.iter().take(top) {
            s.rows.push(vec![
                g.name.clone(),
                fmt_count(g.instructions),
                t(g.busy_ns),
                t(g.instruction_ns),
                fmt_si(g.raw_flops as f64),
                fmt_si((g.hbm_read_bytes + g.hbm_write_bytes) as f64) + "B",
            ]);
        }
        s
    };
    out.push(group("By HLO op", &r.by_hlo));
    out.push(group("By layer", &r.by_layer));
    if !r.by_nki_source.is_empty() {
        out.push(group("By NKI source location", &r.by_nki_source));
    }
    let mut s = Section::new(
        "Tables",
        &[
            ("table", false),
            ("rows", true),
            ("columns", true),
            ("not used (kept)", false),
        ],
    );
    for tb in &r.tables {
        s.rows.push(vec![
            format!("{}{}", tb.name, if tb.known { "" } else { " (unknown)" }),
            fmt_count(tb.rows as u64),
            tb.columns.len().to_string(),
            tb.unused_columns.join(", "),
        ]);
    }
    if !r.tables.is_empty() {
        out.push(s);
    }
    out
}

/// The roofline as sections: roofs, points, unplaced ops, kernels.
pub fn roofline_sections(
    r: &crate::analysis::roofline::RooflineReport,
    top: usize,
) -> Vec<Section> {
    let mut out = Vec::new();
    let mut s = Section::new(
        &format!(
            "Roofs{}",
            r.device
                .as_deref()
                .map(|d| format!(" — {d}"))
                .unwrap_or_default()
        ),
        &[
            ("dtype", false),
            ("peak", true),
            ("memory", true),
            ("ridge FLOP/B", true),
            ("source", false),
        ],
    );
    for p in &r.peaks {
        s.rows.push(vec![
            p.dtype.clone(),
            fmt_si(p.flops_per_s) + "FLOP/s",
            fmt_si(p.bytes_per_s) + "B/s",
            format!("{:.1}", p.flops_per_s / p.bytes_per_s),
            p.source.clone(),
        ]);
    }
    if let Some(why) = &r.no_roofs {
        s.rows.push(vec![
            "—".into(),
            "—".into(),
            "—".into(),
            "—".into(),
            why.clone(),
        ]);
    }
    for n in &r.notes {
        s.rows
            .push(vec!["".into(), "".into(), "".into(), "".into(), n.clone()]);
    }
    out.push(s);
    // One table per level of points: ops (with their shapes), then kernels
    // (no shapes column).
    let columns = [
        ("name", false),
        ("shapes", false),
        ("calls", true),
        ("time_us", true),
        ("flops", true),
        ("bytes", true),
        ("achieved_tflops", true),
        ("intensity", true),
        ("bound", false),
        ("headroom", true),
    ];
    let tables = [
        (format!("Roofline ({} level)", r.level), &r.points, true),
        (
            "Kernels on the roofline (launched alone by a counted op: its FLOPs and bytes)"
                .to_string(),
            &r.kernel_points,
            false,
        ),
    ];
    for (title, points, ops) in tables {
        if !ops && points.is_empty() {
            continue;
        }
        let mut header = columns.to_vec();
        if !ops {
            header[0].0 = "kernel";
            header.remove(1);
        }
        let mut s = Section::new(&title, &header);
        for p in points.iter().take(top) {
            let mut row = vec![
                p.name.clone(),
                p.input_shapes.clone().unwrap_or_default(),
                fmt_count(p.calls),
                format!("{:.3}", p.time_ns as f64 / 1e3),
                fmt_si(p.flops),
                p.bytes.map_or("—".into(), fmt_si),
                p.achieved_flops_per_s
                    .map_or("—".into(), |a| format!("{:.4}", a / 1e12)),
                p.intensity.map_or("—".into(), |i| format!("{i:.2}")),
                p.bound
                    .map_or("—".into(), |b| format!("{b:?}").to_lowercase()),
                p.headroom.map_or("—".into(), |h| format!("{h:.1}×")),
            ];
            if !ops {
                row.remove(1);
            }
            s.rows.push(row);
        }
        out.push(s);
    }
    let mut s = Section::new(
        "Not placed (no FLOP formula or flops arg)",
        &[("name", false), ("calls", true), ("time", true)],
    );
    for u in r.unplaced.iter().take(top) {
        s.rows.push(vec![
            u.name.clone(),
            fmt_count(u.calls),
            fmt_ns(u.time_ns as f64),
        ]);
    }
    out.push(s);
    if !r.kernels.is_empty() {
        let st = |x: Option<crate::analysis::roofline::Stat>, d: usize| {
            x.map_or("—".into(), |s| format!("{:.d$} / {:.d$}", s.mean, s.min))
        };
        let mut s = Section::new(
            "Kernel efficiency (mean / min)",
            &[
                ("kernel", false),
                ("count", true),
                ("time", true),
                ("grid", false),
                ("block", false),
                ("registers", true),
                ("shared mem", true),
                ("occupancy %", true),
            ],
        );
        for k in r.kernels.iter().take(top) {
            s.rows.push(vec![
                k.name.clone(),
                fmt_count(k.count),
                fmt_ns(k.time_ns as f64),
                k.grid.clone().unwrap_or_else(|| "—".into()),
                k.block.clone().unwrap_or_else(|| "—".into()),
                st(k.registers_per_thread, 0),
                st(k.shared_memory_bytes, 0),
                st(k.occupancy_pct, 1),
            ]);
        }
        out.push(s);
    }
    out
}

/// The ranks report in the JSON shape `tracelane ranks --format json`
/// prints and the page downloads: µs, each rank's steps, stragglers and
/// the collectives by skew (`top` of them; all with `None`).
pub fn ranks_json(
    r: &crate::analysis::ranks::RanksReport,
    top: Option<usize>,
) -> serde_json::Value {
    use serde_json::json;
    let us = |ns: i64| ns as f64 / 1000.0;
    let ranks: Vec<_> = r
        .ranks
        .iter()
        .map(|row| {
            json!({
                "rank": row.rank,
                "source": row.source,
                "basis": row.basis,
                "clock_offset_ns": row.clock_offset_ns,
                "start_offset_us": us(row.start_offset_ns),
                "steps": row.steps.iter().zip(&row.wait_ns).map(|(s, w)| json!({
                    "step": s.step,
                    "wall_us": us(s.wall_ns),
                    "compute_us": us(s.compute_ns),
                    "exposed_comm_us": us(s.exposed_comm_ns),
                    "exposed_memcpy_us": us(s.exposed_memcpy_ns),
                    "exposed_other_us": us(s.exposed_other_ns),
                    "idle_us": us(s.idle_ns),
                    "comm_us": us(s.comm_ns),
                    "collective_wait_us": us(*w),
                })).collect::<Vec<_>>(),
                "comm_comp_overlap_pct": row.comm_comp_overlap_pct,
                "hta": row.hta,
            })
        })
        .collect();
    let n = top.unwrap_or(usize::MAX);
    let collectives: Vec<_> = r
        .collectives
        .iter()
        .take(n)
        .map(|c| {
            json!({
                "name": c.name,
                "group": c.group,
                "seq": c.seq,
                "step": c.step,
                "bytes": c.bytes,
                "ranks": c.ranks,
                "skew_us": us(c.skew_ns),
                "last_rank": c.last_rank,
                "first_rank": c.first_rank,
                "transfer_us": c.transfer_ns.map(us),
                "algbw_gbps": c.algbw_gbps,
                "busbw_gbps": c.busbw_gbps,
            })
        })
        .collect();
    json!({
        "rank_source": r.rank_source,
        "steps": r.steps,
        "ranks": ranks,
        "stragglers": r.stragglers.iter().map(|s| json!({
            "step": s.step,
            "rank": s.rank,
            "by": s.by,
            "blame_us": us(s.blame_ns),
            "others_waited_us": us(s.others_waited_ns),
            "wall_max_us": us(s.wall_max_ns),
            "wall_min_us": us(s.wall_min_ns),
            "collectives": s.collectives,
        })).collect::<Vec<_>>(),
        "collectives": collectives,
        "findings": crate::analysis::insights::ranks_findings(r).0.iter().map(finding_json).collect::<Vec<_>>(),
        "collectives_matched": r.collectives.len(),
        "mismatched": r.mismatched,
        "unmatched_calls": r.unmatched_calls,
        "unmatched_by_kind": r.unmatched_by_kind,
        "notes": r.notes,
    })
}

/// The ranks report as sections: notes, stragglers per step, each rank's
/// mean step breakdown, rank × step wall times, the `top` collectives by
/// skew.
pub fn ranks_sections(r: &crate::analysis::ranks::RanksReport, top: usize) -> Vec<Section> {
    let f = |ns: i64| fmt_ns(ns as f64);
    let mut notes = Section::new("Ranks", &[("note", false)]);
    let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    notes.rows.push(vec![format!(
        "{}, {}; {}",
        plural(r.ranks.len(), "rank"),
        plural(r.steps.len(), "step"),
        r.rank_source.describe()
    )]);
    for n in &r.notes {
        notes.rows.push(vec![n.clone()]);
    }
    let (findings, why) = crate::analysis::insights::ranks_findings(r);
    match findings.is_empty() {
        true => notes.rows.push(vec![format!("straggler rank: — {why}")]),
        false => {
            for f in &findings {
                notes.rows.push(vec![format!("{} — {}", f.title, f.action)]);
            }
        }
    }
    let mut strag = Section::new(
        "Stragglers per step",
        &[
            ("step", true),
            ("straggler", true),
            ("by", false),
            ("last at (skew)", true),
            ("others waited", true),
            ("wall min", true),
            ("wall max", true),
            ("collectives", true),
        ],
    );
    for s in &r.stragglers {
        strag.rows.push(vec![
            s.step.to_string(),
            s.rank.to_string(),
            s.by.clone(),
            f(s.blame_ns),
            f(s.others_waited_ns),
            f(s.wall_min_ns),
            f(s.wall_max_ns),
            s.collectives.to_string(),
        ]);
    }
    let mut per_rank = Section::new(
        "Per rank (sum over steps)",
        &[
            ("rank", true),
            ("basis", false),
            ("wall", true),
            ("compute", true),
            ("exposed comm", true),
            ("exposed memcpy", true),
            ("other", true),
            ("idle", true),
            ("waited in collectives", true),
            ("comm/comp overlap", true),
            ("clock offset", true),
        ],
    );
    for row in &r.ranks {
        let sum =
            |g: fn(&crate::analysis::ranks::StepTimes) -> i64| row.steps.iter().map(g).sum::<i64>();
        let wall = sum(|s| s.wall_ns);
        per_rank.rows.push(vec![
            row.rank.to_string(),
            format!("{:?}", row.basis).to_lowercase(),
            f(wall),
            format!(
                "{} ({})",
                f(sum(|s| s.compute_ns)),
                pct(sum(|s| s.compute_ns), wall)
            ),
            format!(
                "{} ({})",
                f(sum(|s| s.exposed_comm_ns)),
                pct(sum(|s| s.exposed_comm_ns), wall)
            ),
            format!(
                "{} ({})",
                f(sum(|s| s.exposed_memcpy_ns)),
                pct(sum(|s| s.exposed_memcpy_ns), wall)
            ),
            f(sum(|s| s.exposed_other_ns)),
            format!(
                "{} ({})",
                f(sum(|s| s.idle_ns)),
                pct(sum(|s| s.idle_ns), wall)
            ),
            f(row.wait_ns.iter().sum()),
            row.comm_comp_overlap_pct
                .map_or("—".into(), |p| format!("{p:.1}%")),
            format!("{} ns", row.clock_offset_ns),
        ]);
    }
    let mut header: Vec<(String, bool)> = vec![("rank".into(), true)];
    header.extend(r.steps.iter().map(|s| (format!("step {s}"), true)));
    let mut grid = Section {
        title: "Step wall time per rank".into(),
        header: header.iter().map(|h| h.0.clone()).collect(),
        numeric: header.iter().map(|h| h.1).collect(),
        rows: Vec::new(),
    };
    for row in &r.ranks {
        let mut cells = vec![row.rank.to_string()];
        for s in &r.steps {
            cells.push(
                row.steps
                    .iter()
                    .find(|x| x.step == *s)
                    .map_or("—".into(), |x| f(x.wall_ns)),
            );
        }
        grid.rows.push(cells);
    }
    let mut coll = Section::new(
        &format!("Collectives by skew ({} matched)", r.collectives.len()),
        &[
            ("collective", false),
            ("group", false),
            ("seq", true),
            ("step", true),
            ("bytes", true),
            ("skew", true),
            ("last rank", true),
            ("transfer", true),
            ("bus bw", true),
        ],
    );
    for c in r.collectives.iter().take(top) {
        coll.rows.push(vec![
            c.name.clone(),
            c.group.clone(),
            c.seq.to_string(),
            c.step.map_or("—".into(), |s| s.to_string()),
            c.bytes
                .map_or("—".into(), |b| format!("{}B", fmt_si(b as f64))),
            f(c.skew_ns),
            c.last_rank.to_string(),
            c.transfer_ns.map_or("—".into(), f),
            c.busbw_gbps.map_or("—".into(), |b| format!("{b:.1} GB/s")),
        ]);
    }
    vec![notes, strag, per_rank, grid, coll]
}

/// The insights report as JSON: `{"scope", "key": {…}, "findings": [{"rule",
/// "title", "severity", "gain_us", "gain_basis", "condition", "evidence":
/// {"numbers": {name: value}, "ops", "slices", "slice_count", "ranges_us"},
/// "action"}], "checks": [{"rule", "name", "fired", "why"}], "notes"}`,
/// findings in rank order. Times in µs on the trace's clock.
pub fn insights_json(r: &crate::analysis::insights::InsightsReport) -> serde_json::Value {
    use serde_json::json;
    let us = |ns: i64| ns as f64 / 1e3;
    let k = &r.key;
    json!({
        "scope": r.scope,
        "key": {
            "wall_us": us(k.wall_ns),
            "steps": k.steps,
            "step_median_us": k.step_median_ns.map(us),
            "warmup_steps": k.warmup_steps,
            "device_us": us(k.device_ns),
            "device_busy_pct": k.device_busy_pct,
            "launches": k.launches,
            "critical_path_us": k.critical_path_ns.map(us),
            "critical_path_split_us": k.critical_path_split.iter().map(|(b, ns)| (b.clone(), json!(us(*ns)))).collect::<serde_json::Map<_, _>>(),
            "mfu_pct": k.mfu_pct,
            "hfu_pct": k.hfu_pct,
            "mbu_pct": k.mbu_pct,
        },
        "findings": r.findings.iter().map(finding_json).collect::<Vec<_>>(),
        "checks": r.checks.iter().map(|c| json!({"rule": c.rule, "name": c.name, "fired": c.fired, "why": c.why})).collect::<Vec<_>>(),
        "notes": r.notes,
    })
}

/// One finding as JSON (the insights' and the ranks' findings alike).
pub fn finding_json(f: &crate::analysis::insights::Finding) -> serde_json::Value {
    use serde_json::json;
    let us = |ns: i64| ns as f64 / 1e3;
    json!({
        "rule": f.rule,
        "title": f.title,
        "severity": f.severity.as_str(),
        "gain_us": us(f.gain_ns),
        "gain_basis": f.gain_basis,
        "condition": f.condition,
        "evidence": {
            "numbers": f.evidence.numbers.iter().map(|(n, v)| (n.clone(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "ops": f.evidence.ops,
            "slices": f.evidence.slices,
            "slice_count": f.evidence.slice_count,
            "ranges_us": f.evidence.ranges.iter().map(|&(a, b)| [us(a), us(b)]).collect::<Vec<_>>(),
        },
        "action": f.action,
        "key": f.key,
    })
}

/// The key numbers in one line: step, device busy, launches, critical path.
pub fn insights_headline(k: &crate::analysis::insights::KeyNumbers) -> String {
    let us = |ns: i64| crate::analysis::compare::fmt_us(ns as f64);
    let mut parts = Vec::new();
    match k.step_median_ns {
        Some(m) => parts.push(format!(
            "step {} median of {} steps{}",
            us(m),
            k.steps,
            if k.warmup_steps > 0 {
                format!(" ({} warm-up left out)", k.warmup_steps)
            } else {
                String::new()
            }
        )),
        None => parts.push(format!("wall {}", us(k.wall_ns))),
    }
    if k.device_ns > 0 {
        parts.push(format!("device time {}", us(k.device_ns)));
    }
    if let Some(b) = k.device_busy_pct {
        parts.push(format!("device busy {b:.1} %"));
    }
    if k.launches > 0 {
        parts.push(format!("{} launches", fmt_count(k.launches)));
    }
    if let Some(c) = k.critical_path_ns {
        let split: Vec<String> = k
            .critical_path_split
            .iter()
            .map(|(b, ns)| format!("{b} {:.0} %", 100.0 * *ns as f64 / c.max(1) as f64))
            .collect();
        parts.push(format!("critical path {} ({})", us(c), split.join(", ")));
    }
    if let (Some(m), Some(b)) = (k.mfu_pct, k.mbu_pct) {
        parts.push(format!("MFU {m:.1} %, MBU {b:.1} %"));
    }
    parts.join(" · ")
}

/// The insights report as text sections: key numbers, the findings ranked,
/// each finding's evidence and action, and every rule's verdict.
pub fn insights_sections(r: &crate::analysis::insights::InsightsReport) -> Vec<Section> {
    let us = |ns: i64| crate::analysis::compare::fmt_us(ns as f64);
    let mut out = Vec::new();
    let mut key = Section::new("Insights", &[(&format!("scope: {}", r.scope), false)]);
    key.rows.push(vec![insights_headline(&r.key)]);
    for n in &r.notes {
        key.rows.push(vec![n.clone()]);
    }
    out.push(key);
    let mut list = Section::new(
        "Findings, largest estimated gain first",
        &[
            ("#", true),
            ("severity", false),
            ("gain", true),
            ("finding", false),
        ],
    );
    for (k, f) in r.findings.iter().enumerate() {
        list.rows.push(vec![
            (k + 1).to_string(),
            f.severity.as_str().into(),
            us(f.gain_ns),
            f.title.clone(),
        ]);
    }
    out.push(list);
    for (k, f) in r.findings.iter().enumerate() {
        let mut s = Section::new(
            &format!("{}. {}", k + 1, f.title),
            &[(&format!("rule: {} — {}", f.rule, f.condition), false)],
        );
        for (n, v) in &f.evidence.numbers {
            s.rows.push(vec![format!("{n}: {v}")]);
        }
        if !f.evidence.ops.is_empty() {
            s.rows
                .push(vec![format!("ops: {}", f.evidence.ops.join(", "))]);
        }
        s.rows
            .push(vec![format!("gain: {} — {}", us(f.gain_ns), f.gain_basis)]);
        s.rows.push(vec![format!("action: {}", f.action)]);
        out.push(s);
    }
    let mut checks = Section::new("Rules checked", &[("rule: findings, or why none", false)]);
    for c in &r.checks {
        checks.rows.push(vec![if c.fired > 0 {
            format!("{}: {}", c.rule, c.fired)
        } else {
            format!("{}: — {}", c.rule, c.why)
        }]);
    }
    out.push(checks);
    out
}

/// The insights report as Markdown made for a pull-request comment: the
/// key numbers, a ranked table, and each finding's evidence folded.
pub fn insights_markdown(r: &crate::analysis::insights::InsightsReport, file: &str) -> String {
    let us = |ns: i64| crate::analysis::compare::fmt_us(ns as f64);
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let mut out = format!(
        "### tracelane insights — `{}` ({})\n\n{}\n\n",
        cell(file),
        cell(&r.scope),
        insights_headline(&r.key)
    );
    for n in &r.notes {
        out.push_str(&format!("> {}\n\n", cell(n)));
    }
    if r.findings.is_empty() {
        out.push_str("No findings: every rule checked, none fired.\n\n");
    } else {
        out.push_str("| # | finding | severity | est. gain | action |\n|---:|---|---|---:|---|\n");
        for (k, f) in r.findings.iter().enumerate() {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                k + 1,
                cell(&f.title),
                f.severity.as_str(),
                us(f.gain_ns),
                cell(&f.action)
            ));
        }
        out.push('\n');
        for (k, f) in r.findings.iter().enumerate() {
            out.push_str(&format!(
                "<details><summary>{}. {}</summary>\n\n",
                k + 1,
                cell(&f.title)
            ));
            for (n, v) in &f.evidence.numbers {
                out.push_str(&format!("- {}: {}\n", cell(n), cell(v)));
            }
            if !f.evidence.ops.is_empty() {
                out.push_str(&format!("- ops: `{}`\n", f.evidence.ops.join("`, `")));
            }
            out.push_str(&format!(
                "- gain: {} — {}\n- rule `{}`: {}\n\n</details>\n\n",
                us(f.gain_ns),
                cell(&f.gain_basis),
                f.rule,
                cell(&f.condition)
            ));
        }
    }
    out
}

/// A gate metric's value for people: µs for times, a count otherwise.
fn gate_value(m: &crate::analysis::gate::GateMetric, x: f64) -> String {
    if m.unit == "ns" {
        crate::analysis::compare::fmt_us(x)
    } else {
        format!("{x:.1}")
    }
}

/// The gate's report as text sections: verdict, metrics, what got slower
/// and faster, regions, new findings.
pub fn gate_sections(r: &crate::analysis::gate::GateReport, top: usize) -> Vec<Section> {
    let us = |ns: f64| crate::analysis::compare::fmt_us(ns);
    let mut out = Vec::new();
    let mut head = Section::new("Gate", &[(&r.unit, false)]);
    head.rows.push(vec![r.summary.clone()]);
    if !r.resolved_findings.is_empty() {
        head.rows.push(vec![format!(
            "findings gone: {}",
            r.resolved_findings.join("; ")
        )]);
    }
    out.push(head);
    let mut m = Section::new(
        "Metrics",
        &[
            ("metric", false),
            ("baseline", true),
            ("candidate", true),
            ("change", true),
            ("gated", false),
        ],
    );
    for x in &r.metrics {
        m.rows.push(vec![
            x.name.clone(),
            gate_value(x, x.baseline),
            gate_value(x, x.candidate),
            x.change_pct.map_or("—".into(), |p| format!("{p:+.1} %")),
            match (x.gated, x.regressed) {
                (true, true) => "REGRESSED",
                (true, false) => "yes",
                _ => "no",
            }
            .into(),
        ]);
    }
    out.push(m);
    let deltas = |title: &str, rows: &[crate::analysis::gate::Delta]| {
        let mut s = Section::new(
            title,
            &[
                ("kind", false),
                ("name", false),
                ("status", false),
                ("calls", true),
                ("baseline", true),
                ("candidate", true),
                ("change", true),
            ],
        );
        for d in rows.iter().take(top) {
            s.rows.push(vec![
                d.kind.clone(),
                d.name.clone(),
                d.status.clone(),
                format!("{:.1} → {:.1}", d.baseline_count, d.candidate_count),
                us(d.baseline_ns),
                us(d.candidate_ns),
                us(d.candidate_ns - d.baseline_ns),
            ]);
        }
        s
    };
    out.push(deltas("Slower (ops and device events)", &r.slower));
    out.push(deltas("Faster (ops and device events)", &r.faster));
    let changed: Vec<crate::analysis::gate::Delta> = r
        .regions
        .iter()
        .filter(|d| d.status != "same")
        .cloned()
        .collect();
    out.push(deltas("Regions (median occurrence)", &changed));
    let mut f = Section::new(
        "New findings",
        &[("severity", false), ("gain", true), ("finding", false)],
    );
    for x in &r.new_findings {
        f.rows.push(vec![
            x.severity.as_str().into(),
            us(x.gain_ns as f64),
            x.title.clone(),
        ]);
    }
    out.push(f);
    out
}

/// The automatic regions as one table: each group's kind, name,
/// occurrences, median, min, max and outliers (Tukey's fence).
pub fn regions_sections(r: &crate::analysis::regions::RegionsReport) -> Vec<Section> {
    let us = |ns: i64| crate::analysis::compare::fmt_us(ns as f64);
    let mut s = Section::new(
        "Automatic regions",
        &[
            ("kind", false),
            ("region", false),
            ("occurrences", true),
            ("median", true),
            ("min", true),
            ("max", true),
            ("outliers", true),
        ],
    );
    for g in &r.groups {
        s.rows.push(vec![
            g.kind.as_str().into(),
            g.name.clone(),
            g.occurrences.len().to_string(),
            us(g.median_ns),
            us(g.min_ns),
            us(g.max_ns),
            match g.fence_ns {
                Some(f) => format!("{} (over {})", g.outliers, us(f)),
                None => "—".into(),
            },
        ]);
    }
    vec![s]
}

//! `tracelane ops`: the op table (PyTorch's `key_averages()`).

use std::io::Write;

use tracelane_core::analysis::ops::{op_table, OpRow, OpTableOptions};
use tracelane_core::analysis::xla_ops::{xla_op_stats, XlaOpStats};
use tracelane_core::export;

use crate::args::{one_file, Flags};
use crate::input::load;

pub(crate) fn run(flags: &Flags) -> Result<(), String> {
    let path = one_file(flags)?;
    let trace = load(path, flags)?;
    if let Some(stats) = xla_op_stats(&trace) {
        return print_xla(&stats, flags);
    }
    let table = op_table(
        &trace,
        OpTableOptions {
            by_shape: flags.by_shape,
            range_ns: None,
        },
    );
    let sort = match flags.sort.as_deref() {
        None => export::default_sort(&table.rows),
        Some(key) => export::Column::from_key(key).ok_or_else(|| {
            let keys: Vec<&str> = export::Column::ALL.iter().map(|c| c.key()).collect();
            format!("unknown --sort {key:?} ({})", keys.join(", "))
        })?,
    };
    let mut rows: Vec<OpRow> = table.rows.clone();
    export::sort_rows(&mut rows, sort, sort.descending_first());
    if let Some(n) = flags.top {
        rows.truncate(n);
    }
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => {
            let json = export::to_json(&rows, flags.by_shape);
            serde_json::to_string_pretty(&json).map_err(|e| e.to_string())? + "\n"
        }
        "csv" => export::to_csv(&rows, flags.by_shape),
        "md" => export::to_markdown(&rows, flags.by_shape, export::Totals::of(&table)),
        "table" => export::to_text(&rows, flags.by_shape, &table),
        other => return Err(format!("unknown --format {other:?} (table, csv, json, md)")),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())
}

/// An XPlane profile's op tables: xprof's HLO and framework op stats.
fn print_xla(stats: &XlaOpStats, flags: &Flags) -> Result<(), String> {
    let sections = export::xla_op_sections(stats, flags.top.unwrap_or(0));
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => serde_json::to_string_pretty(stats).map_err(|e| e.to_string())? + "\n",
        "md" => export::sections_to_markdown(&sections),
        "table" => export::sections_to_text(&sections),
        other => {
            return Err(format!(
                "unknown --format {other:?} for an XPlane profile's op tables (table, json, md)"
            ))
        }
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())
}

//! `tracelane info`: what was read, and the import's diagnostics.

use std::io::Write;

use crate::args::{one_file, Flags};
use crate::input::load;

pub(crate) fn run(flags: &Flags) -> Result<(), String> {
    let path = one_file(flags)?;
    let trace = load(path, flags)?;
    let info = tracelane_core::analysis::info::info(&trace);
    let out = std::io::stdout();
    let mut out = out.lock();
    let w = |e: std::io::Error| e.to_string();
    match flags.format.as_deref().unwrap_or("text") {
        "json" => {
            serde_json::to_writer_pretty(&mut out, &info).map_err(|e| e.to_string())?;
            writeln!(out).map_err(w)?;
        }
        "text" | "table" => {
            writeln!(
                out,
                "format: {} ({} bytes read, uncompressed)",
                info.format, info.bytes
            )
            .map_err(w)?;
            writeln!(
                out,
                "events by phase: {}",
                join_counts(&info.events_by_phase)
            )
            .map_err(w)?;
            writeln!(
                out,
                "events by category: {}",
                join_counts(&info.events_by_category)
            )
            .map_err(w)?;
            writeln!(
                out,
                "slices {}, instants {}, counter samples {}, flows {}",
                info.slices, info.instants, info.counter_samples, info.flows
            )
            .map_err(w)?;
            if let (Some(a), Some(b)) = (info.first_start_ns, info.last_end_ns) {
                writeln!(out, "time span: {a} .. {b} ns ({})", human(b - a)).map_err(w)?;
            }
            writeln!(out, "time: {}", info.time_unit_decision).map_err(w)?;
            if !info.readings.is_empty() {
                writeln!(out, "read as:").map_err(w)?;
                for r in &info.readings {
                    writeln!(out, "  {r}").map_err(w)?;
                }
            }
            if let Some(d) = &info.distributed {
                writeln!(out, "distributed: {}", d.describe()).map_err(w)?;
            }
            writeln!(out, "tracks:").map_err(w)?;
            for t in &info.tracks {
                writeln!(
                    out,
                    "  {:<6} pid {} tid {}{}: {} slices, depth {}",
                    t.kind,
                    t.process,
                    t.thread,
                    t.name
                        .as_deref()
                        .map(|n| format!(" ({n})"))
                        .unwrap_or_default(),
                    t.slices,
                    t.max_depth
                )
                .map_err(w)?;
            }
            writeln!(out, "links:").map_err(w)?;
            for (k, v) in &info.links {
                writeln!(out, "  {k}: {v}").map_err(w)?;
            }
            if info.truncated {
                writeln!(
                    out,
                    "TRUNCATED: the file was cut off, or its profiler dropped events; what was complete was kept"
                )
                .map_err(w)?;
            }
            writeln!(
                out,
                "warnings:{}",
                if info.warnings.is_empty() {
                    " none"
                } else {
                    ""
                }
            )
            .map_err(w)?;
            for wi in &info.warnings {
                writeln!(
                    out,
                    "  {} × {} ({}): {}",
                    wi.count, wi.kind, wi.severity, wi.message
                )
                .map_err(w)?;
                if !wi.example.is_empty() {
                    writeln!(out, "      e.g. {}", wi.example).map_err(w)?;
                }
            }
        }
        other => return Err(format!("unknown --format {other:?} (text, json)")),
    }
    Ok(())
}

pub(crate) fn join_counts(m: &std::collections::BTreeMap<String, u64>) -> String {
    m.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `1.234ms`-style durations, as PyTorch's table prints them.
pub(crate) fn human(ns: i64) -> String {
    human_f(ns as f64)
}

pub(crate) fn human_f(ns: f64) -> String {
    let a = ns.abs();
    if a >= 1e9 {
        format!("{:.3}s", ns / 1e9)
    } else if a >= 1e6 {
        format!("{:.3}ms", ns / 1e6)
    } else {
        format!("{:.3}us", ns / 1e3)
    }
}

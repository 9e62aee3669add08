//! `tracelane memory`: memory over time from the trace's `[memory]`
//! records — per device the peak and what holds it; with PyTorch's raw
//! memory timeline given after the trace, by category too; with an
//! allocator snapshot (alone or after the trace), the allocator's peaks,
//! what holds them by the program's line, and each out-of-memory explained.

use std::io::Write;

use tracelane_core::analysis::memory::{memory, snapshot_at, At};
use tracelane_core::analysis::Scope;
use tracelane_core::export;

use crate::args::Flags;
use crate::input::load_with_memory;

pub(crate) fn run(flags: &Flags) -> Result<(), String> {
    let (trace, _) = load_with_memory(flags)?;
    let at = match flags.at.as_deref() {
        None | Some("peak") => At::Peak,
        Some(us) => {
            let us: f64 = us
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| {
                    format!("--at takes peak or µs from the trace's start, not {us:?}")
                })?;
            let origin = trace.time_span_ns().map_or(0, |x| x.0);
            At::Time(origin + (us * 1e3).round() as i64)
        }
    };
    let mut r = memory(&trace, &Scope::Whole, at).map_err(|e| e.to_string())?;
    if let At::Time(ns) = at {
        if let Some(s) = snapshot_at(&trace, ns) {
            r.snapshot = Some(s);
        }
    }
    let top = flags.top.unwrap_or(20);
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => serde_json::to_string_pretty(&r).map_err(|e| e.to_string())? + "\n",
        "md" => export::sections_to_markdown(&export::memory_sections(&r, top)),
        "table" => export::sections_to_text(&export::memory_sections(&r, top)),
        other => return Err(format!("unknown --format {other:?} (table, md, json)")),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())
}

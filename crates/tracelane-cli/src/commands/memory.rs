//! `tracelane memory`: memory over time from the trace's `[memory]`
//! records — per device the peak and what holds it; with PyTorch's raw
//! memory timeline given after the trace, by category too; with an
//! allocator snapshot (alone or after the trace), the allocator's peaks,
//! what holds them by the program's line, and each out-of-memory explained.
//! Two snapshots (a baseline, then another run) are compared: peaks, free
//! memory at the peak, and what changed by the program's line.

use std::io::{Read, Write};

use tracelane_core::analysis::memory::{memory, snapshot_at, At};
use tracelane_core::analysis::Scope;
use tracelane_core::export::{self, memory_snapshot_compare};
use tracelane_core::import::run;
use tracelane_core::memory_snapshot::compare::{self, SnapshotComparison};

use crate::args::Flags;
use crate::input::load_with_memory;

pub(crate) fn run(flags: &Flags) -> Result<(), String> {
    if let Some(c) = two_snapshots(flags)? {
        return compare(flags, &c);
    }
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
    print(
        flags,
        || serde_json::to_string_pretty(&r),
        &export::memory_sections(&r, top),
    )
}

/// The report as `--format` asks: JSON, or its sections as Markdown or
/// text.
fn print(
    flags: &Flags,
    json: impl FnOnce() -> serde_json::Result<String>,
    sections: &[export::Section],
) -> Result<(), String> {
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => json().map_err(|e| e.to_string())? + "\n",
        "md" => export::sections_to_markdown(sections),
        "table" => export::sections_to_text(sections),
        other => return Err(format!("unknown --format {other:?} (table, md, json)")),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())
}

/// Two allocator snapshots given (and nothing else): compared, the first
/// the baseline.
fn two_snapshots(flags: &Flags) -> Result<Option<SnapshotComparison>, String> {
    let [a, b] = flags.positional.as_slice() else {
        return Ok(None);
    };
    // Told by each file's first bytes: a trace given with its snapshot is
    // read once, by the import.
    let is_snapshot = |p: &String| -> Result<bool, String> {
        let mut head = Vec::new();
        std::fs::File::open(p)
            .and_then(|f| f.take(1 << 20).read_to_end(&mut head))
            .map_err(|e| format!("{p}: {e}"))?;
        Ok(run::part_of(p, &head) == run::Part::MemorySnapshot)
    };
    if !(is_snapshot(a)? && is_snapshot(b)?) {
        return Ok(None);
    }
    let read = |p: &String| std::fs::read(p).map_err(|e| format!("{p}: {e}"));
    let (ra, rb) = (read(a)?, read(b)?);
    if flags.at.is_some() {
        return Err("--at describes one snapshot; two are compared at their peaks".into());
    }
    let decode =
        |p: &String, bytes: &[u8]| run::read_snapshot(bytes).map_err(|e| format!("{p}: {e}"));
    let name = |p: &String| {
        std::path::Path::new(p)
            .file_name()
            .map_or(p.clone(), |n| n.to_string_lossy().into_owned())
    };
    Ok(Some(compare::compare(
        (&name(a), &decode(a, &ra)?),
        (&name(b), &decode(b, &rb)?),
    )))
}

fn compare(flags: &Flags, c: &SnapshotComparison) -> Result<(), String> {
    let top = flags.top.unwrap_or(20);
    print(
        flags,
        || serde_json::to_string_pretty(c),
        &memory_snapshot_compare::comparison_sections(c, top),
    )
}

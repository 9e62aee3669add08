//! `tracelane roofline`: each op against the device's roofline.

use std::io::Write;

use tracelane_core::export;

use crate::args::{one_file, Flags};
use crate::input::load;
use crate::scopes::one_scope;

pub(crate) fn run(flags: &Flags) -> Result<(), String> {
    use tracelane_core::analysis::roofline::{roofline, PeakOverride};
    let path = one_file(flags)?;
    let trace = load(path, flags)?;
    let scope = one_scope(&trace, flags.scope.as_deref())?;
    let over = PeakOverride {
        flops_per_s: flags.peak_tflops.map(|x| x * 1e12),
        bytes_per_s: flags.peak_gbps.map(|x| x * 1e9),
    };
    let args = |s: usize| trace.slice_args_json(s).to_string();
    let r = roofline(&trace, &scope, over, &args).map_err(|e| e.to_string())?;
    let top = flags.top.unwrap_or(30);
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => {
            // The row fields first, then everything the report has.
            let rows: Vec<serde_json::Value> = r
                .points
                .iter()
                .map(|p| {
                    serde_json::json!({
                        "name": p.name,
                        "input_shapes": p.input_shapes,
                        "calls": p.calls,
                        "time_us": p.time_ns as f64 / 1e3,
                        "flops": p.flops,
                        "bytes": p.bytes,
                        "achieved_tflops": p.achieved_flops_per_s.map(|a| a / 1e12),
                        "intensity": p.intensity,
                        "bound": p.bound,
                        "headroom": p.headroom,
                        "flops_source": p.flops_source,
                        "bytes_from": p.bytes_from,
                        "time_from": p.time_from,
                    })
                })
                .collect();
            let mut v = serde_json::to_value(&r).map_err(|e| e.to_string())?;
            v["rows"] = serde_json::Value::Array(rows);
            serde_json::to_string_pretty(&v).map_err(|e| e.to_string())? + "\n"
        }
        "md" => export::sections_to_markdown(&export::roofline_sections(&r, top)),
        "table" => export::sections_to_text(&export::roofline_sections(&r, top)),
        other => return Err(format!("unknown --format {other:?} (table, md, json)")),
    };
    std::io::stdout()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())
}

//! `tracelane analyze`: HTA-style breakdowns, tracelane's or HTA's rules.

use std::io::Write;

use tracelane_core::analysis::frame::Mode;
use tracelane_core::export;

use crate::args::{one_file, Flags};
use crate::input::load;
use crate::scopes::analyze_scopes;

pub(crate) fn run(flags: &Flags) -> Result<(), String> {
    use tracelane_core::analysis::WhySlow;
    let path = one_file(flags)?;
    let trace = load(path, flags)?;
    let mode = flags.hta.unwrap_or(Mode::Exact);
    let mut reports = Vec::new();
    let args = |s: usize| trace.slice_args_json(s).to_string();
    for (label, scope) in analyze_scopes(&trace, flags.scope.as_deref())? {
        let mut w = tracelane_core::analysis::why_slow(&trace, &scope, mode, &args)
            .map_err(|e| e.to_string())?;
        w.device.scope = label;
        reports.push(w);
    }
    let top = flags.top.unwrap_or(15);
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => {
            let one = |w: &WhySlow| {
                if flags.hta.is_some() {
                    w.device.hta_json(w.critical_path.as_ref().ok())
                } else {
                    // The device-time report's fields, then each other
                    // analysis under its name (or {"error": why}).
                    let or_error = |v: Result<serde_json::Value, &String>| {
                        v.unwrap_or_else(|e| serde_json::json!({ "error": e }))
                    };
                    let mut v = serde_json::to_value(&w.device).unwrap_or_default();
                    v["critical_path"] = or_error(
                        w.critical_path
                            .as_ref()
                            .map(|c| serde_json::to_value(c).unwrap_or_default()),
                    );
                    v["data_movement"] = serde_json::to_value(&w.data_movement).unwrap_or_default();
                    v["warmup"] = match &w.warmup {
                        Some(r) => or_error(
                            r.as_ref()
                                .map(|x| serde_json::to_value(x).unwrap_or_default()),
                        ),
                        None => serde_json::Value::Null,
                    };
                    v
                }
            };
            let json = if reports.len() == 1 {
                one(&reports[0])
            } else {
                serde_json::Value::Array(
                    reports
                        .iter()
                        .map(|r| serde_json::json!({"scope": r.device.scope, "report": one(r)}))
                        .collect(),
                )
            };
            serde_json::to_string_pretty(&json).map_err(|e| e.to_string())? + "\n"
        }
        "md" => reports
            .iter()
            .map(|w| export::sections_to_markdown(&export::analysis_sections(w, top)))
            .collect(),
        "table" => reports
            .iter()
            .map(|w| export::sections_to_text(&export::analysis_sections(w, top)))
            .collect(),
        other => return Err(format!("unknown --format {other:?} (table, md, json)")),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())
}

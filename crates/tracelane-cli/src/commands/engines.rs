//! `tracelane engines`: a Neuron device profile's engines.

use std::io::Write;

use tracelane_core::export;

use crate::args::{one_file, Flags};
use crate::input::load;
use crate::scopes::one_scope;

pub(crate) fn run(flags: &Flags) -> Result<(), String> {
    use tracelane_core::analysis::engines::{engines, has_engines};
    let path = one_file(flags)?;
    let trace = load(path, flags)?;
    if !has_engines(&trace) {
        return Err(format!(
            "{path}: no engine lanes: give a Neuron device profile (its Parquet directory, or device_profile_model_<id>.pftrace)"
        ));
    }
    let scope = one_scope(&trace, flags.scope.as_deref())?;
    let r = engines(&trace, &scope).map_err(|e| e.to_string())?;
    let top = flags.top.unwrap_or(20);
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => serde_json::to_string_pretty(&r).map_err(|e| e.to_string())? + "\n",
        "md" => export::sections_to_markdown(&export::engine_sections(&r, top)),
        "table" => export::sections_to_text(&export::engine_sections(&r, top)),
        other => return Err(format!("unknown --format {other:?} (table, md, json)")),
    };
    std::io::stdout()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())
}

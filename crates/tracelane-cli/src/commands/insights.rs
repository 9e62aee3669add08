//! `tracelane insights`: what to change first (or the CI gate, with
//! `--baseline`).

use std::io::Write;

use tracelane_core::export;

use crate::args::Flags;
use crate::input::{file_name, load_with_memory};
use crate::scopes::one_scope;

pub(crate) fn run(flags: &Flags) -> Result<(), String> {
    if flags.baseline.is_some() {
        return super::gate::run(flags);
    }
    let (trace, path) = load_with_memory(flags)?;
    let scope = one_scope(&trace, flags.scope.as_deref())?;
    let args = |s: usize| trace.slice_args_json(s).to_string();
    let r = tracelane_core::analysis::insights::insights(&trace, &scope, &args)
        .map_err(|e| e.to_string())?;
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => {
            serde_json::to_string_pretty(&export::insights_json(&r)).map_err(|e| e.to_string())?
                + "\n"
        }
        "md" => export::insights_markdown(&r, file_name(path)),
        "table" => export::sections_to_text(&export::insights_sections(&r)),
        other => return Err(format!("unknown --format {other:?} (table, md, json)")),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())
}

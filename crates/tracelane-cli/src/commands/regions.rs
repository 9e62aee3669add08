//! `tracelane regions`: the trace's annotated regions.

use std::io::Write;

use tracelane_core::export;

use crate::args::{one_file, Flags};
use crate::input::load;

pub(crate) fn run(flags: &Flags) -> Result<(), String> {
    let path = one_file(flags)?;
    let trace = load(path, flags)?;
    let r = tracelane_core::analysis::regions::regions(&trace);
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => serde_json::to_string_pretty(&r).map_err(|e| e.to_string())? + "\n",
        "md" => export::sections_to_markdown(&export::regions_sections(&r)),
        "table" => export::sections_to_text(&export::regions_sections(&r)),
        other => return Err(format!("unknown --format {other:?} (table, md, json)")),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())
}

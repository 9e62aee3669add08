//! `tracelane ranks`: the ranks of a distributed run side by side.

use std::io::Write;

use tracelane_core::export;

use crate::args::Flags;
use crate::rank_set::{rank_summaries, trace_files};

pub(crate) fn run(flags: &Flags) -> Result<(), String> {
    let files = trace_files(&flags.positional)?;
    let summaries: Vec<_> = rank_summaries(&files, flags, &|_, _| Ok(()))?
        .into_iter()
        .map(|(_, s)| s)
        .collect();
    let report = tracelane_core::analysis::ranks::ranks(&summaries);
    let top = flags.top.unwrap_or(15);
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => {
            serde_json::to_string_pretty(&export::ranks_json(&report, flags.top))
                .map_err(|e| e.to_string())?
                + "\n"
        }
        "md" => export::sections_to_markdown(&export::ranks_sections(&report, top)),
        "table" => export::sections_to_text(&export::ranks_sections(&report, top)),
        other => return Err(format!("unknown --format {other:?} (table, md, json)")),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())
}

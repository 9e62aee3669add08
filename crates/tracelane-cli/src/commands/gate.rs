//! `tracelane insights --baseline`: the CI gate, a candidate against its
//! baseline.

use std::io::Write;

use tracelane_core::analysis::Scope;
use tracelane_core::export;
use tracelane_core::Trace;

use crate::args::{one_file, Flags, REGRESSION};
use crate::input::{file_name, load};

/// `insights --baseline BASE CANDIDATE [--fail-on-regression PCT]`: the
/// verdict, and whether it failed (exit status 1).
pub(crate) fn run(flags: &Flags) -> Result<(), String> {
    use tracelane_core::analysis::gate::{gate, Verdict};
    use tracelane_core::analysis::insights::insights;
    let base_path = flags.baseline.as_deref().unwrap_or_default();
    let cand_path = one_file(flags)?;
    let whole = |t: &Trace| {
        let args = |s: usize| t.slice_args_json(s).to_string();
        insights(t, &Scope::Whole, &args).map_err(|e| e.to_string())
    };
    let base = load(base_path, flags)?;
    let base_ins = whole(&base)?;
    let cand = load(cand_path, flags)?;
    let cand_ins = whole(&cand)?;
    let r = gate(&base, &base_ins, &cand, &cand_ins, flags.fail_on_regression);
    let top = flags.top.unwrap_or(10);
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => serde_json::to_string_pretty(&r).map_err(|e| e.to_string())? + "\n",
        "md" => format!(
            "### tracelane gate — `{}` against `{}`\n\n**{}**\n\n{}",
            file_name(cand_path),
            file_name(base_path),
            r.summary,
            export::sections_to_markdown(&export::gate_sections(&r, top)[1..])
        ),
        "table" => export::sections_to_text(&export::gate_sections(&r, top)),
        other => return Err(format!("unknown --format {other:?} (table, md, json)")),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())?;
    if r.verdict == Verdict::Regression {
        return Err(REGRESSION.into());
    }
    Ok(())
}

//! `tracelane diff`: two traces of one workload aligned op by op, their
//! difference explained.

use std::io::Write;

use tracelane_core::analysis::align::{diff, DiffOptions, Metric};
use tracelane_core::analysis::Scope;
use tracelane_core::export;

use crate::args::{Flags, USAGE};
use crate::input::load;

/// Each side's scope: `--step N` on both, one `--region` on both, two
/// `--region`s one per side, else the whole traces.
fn scopes(flags: &Flags) -> Result<[Scope; 2], String> {
    match (flags.step, flags.regions.as_slice()) {
        (Some(_), [_, ..]) => Err("give --step or --region, not both".into()),
        (Some(n), []) => Ok([Scope::Step { n }, Scope::Step { n }]),
        (None, []) => Ok([Scope::Whole, Scope::Whole]),
        (None, [r]) => Ok([Scope::named(r), Scope::named(r)]),
        (None, [ra, rb]) => Ok([Scope::named(ra), Scope::named(rb)]),
        (None, _) => Err("give one --region (both sides) or two (A's, then B's)".into()),
    }
}

pub(crate) fn run(flags: &Flags) -> Result<(), String> {
    let [fa, fb] = flags.positional.as_slice() else {
        return Err(format!("diff takes two trace files, A and B\n{USAGE}"));
    };
    let [sa, sb] = scopes(flags)?;
    let metric = match flags.metric.as_deref() {
        None => None,
        Some("device") => Some(Metric::Device),
        Some("host") => Some(Metric::Host),
        Some(m) => return Err(format!("--metric takes device or host, not {m:?}")),
    };
    // The two files load side by side (each import is mostly one thread).
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| load(fa, flags));
        let b = load(fb, flags);
        (a.join().expect("loading A"), b)
    });
    let (a, b) = (a?, b?);
    let devices = match flags.devices.as_slice() {
        [] => [None, None],
        [d] => [Some(*d), Some(*d)],
        [da, db] => [Some(*da), Some(*db)],
        _ => return Err("give one --device (both sides) or two (A's, then B's)".into()),
    };
    let opts = DiffOptions {
        metric,
        top: flags.top.unwrap_or(20),
        roofline: flags.roofline,
        devices,
        ..DiffOptions::default()
    };
    let side = |name: &str, e: tracelane_core::analysis::ScopeError| format!("{name}: {e}");
    let report = diff(&a, &sa, &b, &sb, &opts).map_err(|e| {
        // Which side the scope failed on: try A's alone.
        match sa.occurrences(&a) {
            Err(_) => side(fa, e),
            Ok(_) => side(fb, e),
        }
    })?;
    let text = match flags.format.as_deref().unwrap_or("table") {
        "json" => serde_json::to_string_pretty(&report).map_err(|e| e.to_string())? + "\n",
        "md" => export::sections_to_markdown(&export::diff_sections(&report)),
        "table" => export::sections_to_text(&export::diff_sections(&report)),
        other => return Err(format!("unknown --format {other:?} (table, md, json)")),
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(|e| e.to_string())
}

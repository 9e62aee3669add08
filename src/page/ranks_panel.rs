//! The Ranks view: the import's progress per rank, then the report (one
//! [`ReportView`] for the generic renderer), its downloads, and a
//! collective's ranks opened stacked on one timeline when its row is
//! clicked. The run itself (the pool of workers) is `page::ranks`.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::page::dom::download;
use crate::page::rank_set::{ExportState, RankSet, RankState};
use crate::page::ranks::start_export;
use crate::page::state::Ui;
use crate::shared::report_view::ReportView;
use crate::shared::table;

/// What the view shows now: the import's progress (until every rank is
/// in), failures, then the report — one [`ReportView`] for the generic
/// renderer.
fn panel_view(s: &RankSet) -> ReportView {
    use crate::shared::report_view::{ViewRow, ViewTable};
    let n = s.entries.len();
    let (done, summarised) = s.counts();
    let peak = s.entries.iter().map(|e| e.memory).max().unwrap_or(0);
    let unpacking = s
        .entries
        .iter()
        .any(|e| matches!(e.state, RankState::Unpacking(_)));
    let mut notes = vec![match s.imported_ms {
        None if unpacking => "Reading the archive: each trace in it is taken out, then imported…".into(),
        None => format!("Importing {n} files on {} workers: {done} of {n} in…", s.workers),
        Some(ms) => format!(
            "{summarised} ranks imported in {:.1} s on {} workers (largest worker memory {}); each rank's model was summarised and dropped.",
            ms / 1000.0,
            s.workers,
            table::fmt_bytes(peak)
        ),
    }];
    let skipped: Vec<&str> = s
        .entries
        .iter()
        .filter(|e| matches!(e.state, RankState::Skipped(_)))
        .map(|e| e.name.as_str())
        .collect();
    if !skipped.is_empty() {
        notes.push(format!(
            "Passed over {} file{} of the folder or archive that are not traces: {}",
            skipped.len(),
            if skipped.len() == 1 { "" } else { "s" },
            skipped.join(", ")
        ));
    }
    for e in &s.entries {
        if let RankState::Failed(m) = &e.state {
            notes.push(format!("Could not import {}: {m}", e.name));
        }
    }
    match &s.export {
        None => {}
        Some(ExportState::Writing((d, n))) => notes.push(format!(
            "Writing Parquet: each rank file is read again ({d} of {n} written)…"
        )),
        Some(ExportState::Done(m)) => notes.push(format!(
            "Downloaded {m} — the layout of tracelane export --parquet (Snappy here; the CLI writes zstd)."
        )),
        Some(ExportState::Failed(m)) => notes.push(format!("The Parquet download failed: {m}")),
    }
    let mut tables = Vec::new();
    if s.view.is_none() {
        let mut t = ViewTable::new(
            "rank-progress",
            "",
            &[
                ("trace", false),
                ("size", true),
                ("read", true),
                ("state", false),
            ],
        );
        for e in &s.entries {
            let state = match &e.state {
                RankState::Queued => "queued",
                RankState::Importing => "importing",
                RankState::Unpacking(_) => "unpacking",
                RankState::Done => "summarised",
                RankState::Failed(_) => "failed",
                RankState::Skipped(_) => "not a trace",
            };
            let shown = match &e.state {
                RankState::Unpacking(n) => format!("unpacking: {n} traces read"),
                _ => state.to_string(),
            };
            let pct = if e.size > 0 {
                e.bytes as f64 * 100.0 / e.size as f64
            } else {
                0.0
            };
            t.rows.push(
                ViewRow::of(vec![
                    e.name.clone().into(),
                    table::fmt_bytes(e.size).into(),
                    format!("{pct:.0}%").into(),
                    shown.into(),
                ])
                .data("state", state),
            );
        }
        tables.push(t);
    }
    let mut v = ReportView { notes, tables };
    if let Some(r) = &s.view {
        v.notes.extend(r.notes.iter().cloned());
        v.tables.extend(r.tables.iter().cloned());
    }
    v
}

/// Opens the timelines of a collective's ranks (the row of the
/// collectives table clicked), stacked in one trace: the primary worker
/// imports those ranks' files again (the pool kept no model) — or, when
/// the same ranks are already stacked, shows that trace at this
/// collective.
fn open_collective(ui: Ui, row: &web_sys::Element) {
    let get = |k: &str| row.get_attribute(&format!("data-{k}")).unwrap_or_default();
    let num = |k: &str| get(k).parse::<i64>().ok();
    let (Some(from), Some(to), Some(base)) = (num("from-ns"), num("to-ns"), num("base-ns")) else {
        return;
    };
    let inputs: Vec<usize> = get("inputs")
        .split(',')
        .filter_map(|k| k.parse().ok())
        .collect();
    let ranks: Vec<String> = get("ranks").split(',').map(str::to_string).collect();
    if inputs.is_empty() || inputs.len() != ranks.len() {
        return;
    }
    let Some(parts) = crate::page::ranks::rank_files(&inputs, &ranks) else {
        return;
    };
    let job = ui
        .rank_set
        .with_untracked(|s| s.as_ref().map(|s| s.job.clone()))
        .unwrap_or_default();
    let name = format!("{job} · ranks {}", ranks.join(", "));
    let open = ui
        .traces
        .with_untracked(|t| t.iter().position(|s| s.name == name).map(|k| (k, t[k].id)));
    ui.ranks_open.set(false);
    ui.compare_open.set(false);
    match open {
        Some((k, id)) => {
            // The same ranks give the same clock: the window is the same.
            ui.focus.set(Some(crate::page::state::Focus {
                trace: id,
                slice: None,
                start_ns: from - base,
                end_ns: to - base,
            }));
            ui.active.set(k);
        }
        None => crate::page::imports::enqueue(
            ui,
            vec![crate::page::sources::Source::Stack {
                name,
                parts,
                base_ns: base,
                window: (from, to),
            }],
        ),
    }
}

/// The Ranks view: a section whose content the generic renderer draws.
#[component]
pub fn RanksPanel() -> impl IntoView {
    let ui: Ui = expect_context();
    let root: NodeRef<leptos::html::Section> = NodeRef::new();
    Effect::new(move |_| {
        let Some(el) = root.get() else { return };
        ui.rank_set.with(|s| {
            let Some(s) = s else { return };
            let (done, summarised) = s.counts();
            let state = match (&s.imported_ms, &s.view) {
                (_, Some(_)) => "ready",
                (Some(_), None) => "combining",
                _ => "importing",
            };
            crate::page::report::render(&el, &panel_view(s));
            if s.view.is_some() && !matches!(s.export, Some(ExportState::Writing(_))) {
                crate::page::report::button(
                    &el,
                    "ranks-download-parquet",
                    "Download Parquet (.tar)",
                    move || start_export(ui),
                );
            }
            if let Some(json) = s.json.clone() {
                crate::page::report::button(
                    &el,
                    "ranks-download-json",
                    "Download JSON",
                    move || download("ranks.json", "application/json", &json),
                );
            }
            // Set last: a test that waits for `ready` finds the report drawn.
            for (k, v) in [
                ("files", s.entries.len().to_string()),
                ("done", done.to_string()),
                ("summarised", summarised.to_string()),
                (
                    "export",
                    match &s.export {
                        None => "",
                        Some(ExportState::Writing(_)) => "writing",
                        Some(ExportState::Done(_)) => "done",
                        Some(ExportState::Failed(_)) => "failed",
                    }
                    .to_string(),
                ),
                (
                    "import-ms",
                    s.imported_ms.map_or(String::new(), |ms| format!("{ms:.0}")),
                ),
                (
                    "worker-memory",
                    s.entries
                        .iter()
                        .map(|e| e.memory)
                        .max()
                        .unwrap_or(0)
                        .to_string(),
                ),
                ("state", state.to_string()),
            ] {
                let _ = el.set_attribute(&format!("data-{k}"), &v);
            }
        });
    });
    // A click on a collective opens its ranks' timelines.
    let on_click = move |ev: web_sys::MouseEvent| {
        let row = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|e| e.closest("#rank-collectives tbody tr").ok().flatten());
        if let Some(row) = row {
            open_collective(ui, &row);
        }
    };
    view! { <section class="ranks" id="ranks-panel" aria-label="Ranks" node_ref=root on:click=on_click></section> }
}

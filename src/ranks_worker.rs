//! The ranks worker: the page starts a pool of them when a distributed run
//! is opened (`page::ranks`). Each imports one rank's trace at a time,
//! reduces it to its `RankSummary` and drops the model; one of them then
//! combines the summaries (`analysis::ranks::ranks`) and lays the report
//! out for the page (`shared::ranks_view`).
//!
//! Its own module, downloaded the first time a run is opened: the importer
//! it carries is the import worker's, but the ranks analysis, its report
//! and their presentation stay out of the first download.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use crate::shared::protocol::{FromRanks, ToRanks};
use crate::transfer::Transfer;
use crate::worker::{options, rank_summary, MAX_JSON_BYTES};
use tracelane_core::analysis::ranks::{ranks, RankSummary};
use tracelane_core::Importer;

/// Bytes read from the file at a time.
const READ_BYTES: u64 = 4 << 20;

/// The least time between two progress messages.
const PROGRESS_EVERY_MS: f64 = 150.0;

fn post(scope: &DedicatedWorkerGlobalScope, msg: &FromRanks) {
    if let Ok(text) = serde_json::to_string(msg) {
        let _ = scope.post_message(&JsValue::from_str(&text));
    }
}

fn now_ms(scope: &DedicatedWorkerGlobalScope) -> f64 {
    scope.performance().map_or(0.0, |p| p.now())
}

/// Imports rank `id` from `blob` (read here, synchronously: this worker
/// does nothing else meanwhile) and summarises it.
fn summarise(
    scope: &DedicatedWorkerGlobalScope,
    id: u32,
    name: &str,
    blob: web_sys::Blob,
) -> Result<RankSummary, String> {
    let size = blob.size() as u64;
    let mut importer = Importer::new(options());
    importer.set_size_hint(size.min(MAX_JSON_BYTES));
    let reader =
        web_sys::FileReaderSync::new().map_err(|_| "this browser cannot read files in a worker")?;
    let mut at = 0;
    let mut sent = now_ms(scope);
    while at < size {
        let end = (at + READ_BYTES).min(size);
        let piece = blob
            .slice_with_f64_and_f64(at as f64, end as f64)
            .map_err(|_| "could not read the file")?;
        let buf = reader
            .read_as_array_buffer(&piece)
            .map_err(|_| "could not read the file (was it moved or deleted?)")?;
        importer
            .push(&js_sys::Uint8Array::new(&buf).to_vec())
            .map_err(|e| e.to_string())?;
        at = end;
        if now_ms(scope) - sent >= PROGRESS_EVERY_MS {
            post(scope, &FromRanks::Progress { id, bytes: at });
            sent = now_ms(scope);
        }
    }
    let trace = importer.finish().map_err(|e| e.to_string())?;
    Ok(rank_summary(trace, Some(blob), name))
}

/// The report of the summaries, as the view shows it and as JSON.
fn combine(summaries: &[String]) -> FromRanks {
    let parsed: Vec<RankSummary> = summaries
        .iter()
        .filter_map(|s| serde_json::from_str(s).ok())
        .collect();
    let report = ranks(&parsed);
    FromRanks::Report {
        view: Box::new(crate::shared::ranks_view::ranks_view(&report)),
        json: serde_json::to_string_pretty(&tracelane_core::export::ranks_json(&report, None))
            .unwrap_or_default(),
    }
}

pub fn start() {
    console_error_panic_hook::set_once();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let me = scope.clone();
    let onmessage = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let data = e.data();
        if let Some(Transfer::Rank { id, name, blob }) = Transfer::from_js(&data) {
            let msg = match summarise(&me, id, &name, blob) {
                Ok(s) => FromRanks::Summarised {
                    id,
                    summary: serde_json::to_string(&s).unwrap_or_default(),
                    wasm_memory_bytes: core::arch::wasm32::memory_size(0) as u64 * 65_536,
                },
                Err(message) => FromRanks::Failed { id, message },
            };
            post(&me, &msg);
            return;
        }
        if let Some(Ok(ToRanks::Combine { summaries })) = data
            .as_string()
            .map(|t| serde_json::from_str::<ToRanks>(&t))
        {
            post(&me, &combine(&summaries));
        }
    });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    post(&scope, &FromRanks::Ready);
}

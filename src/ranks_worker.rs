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
use crate::worker::{options, rank_summary, read_blob, BlobReader, MAX_JSON_BYTES};
use tracelane_core::analysis::ranks::{ranks, RankSummary};

fn post(scope: &DedicatedWorkerGlobalScope, msg: &FromRanks) {
    if let Ok(text) = serde_json::to_string(msg) {
        let _ = scope.post_message(&JsValue::from_str(&text));
    }
}

/// Posts Parquet files (name, bytes) of rank file `id`, transferred.
fn post_tables(scope: &DedicatedWorkerGlobalScope, id: u32, files: Vec<(String, Vec<u8>)>) {
    let (names, buffers) = files
        .into_iter()
        .map(|(n, b)| (n, js_sys::Uint8Array::from(&b[..])))
        .unzip();
    let _ = Transfer::Tables { id, names, buffers }.post(scope);
}

/// Imports rank `id` from `blob` (read here, synchronously: this worker
/// does nothing else meanwhile) and summarises it; with `job`, its
/// columnar tables are sent first.
fn summarise(
    scope: &DedicatedWorkerGlobalScope,
    id: u32,
    name: &str,
    blob: web_sys::Blob,
    job: Option<&str>,
) -> Result<RankSummary, String> {
    let trace = read_blob(scope, &blob, options(), &mut |bytes| {
        post(scope, &FromRanks::Progress { id, bytes })
    })?
    .finish()
    .map_err(|e| e.to_string())?;
    if let Some(job) = job {
        let tables = tracelane_core::columnar::trace_tables(&trace, job)?;
        post_tables(
            scope,
            id,
            tables
                .into_iter()
                .map(|(t, b)| (t.to_string(), b))
                .collect(),
        );
    }
    Ok(rank_summary(trace, Some(blob), name))
}

/// The entries an archive of rank traces may inflate to together: they
/// become `Blob`s, which the browser may keep on disk.
const MAX_SET_BYTES: u64 = 64 << 30;

/// Walks an archive of rank traces, sending each trace to the page
/// ([`Transfer::Entry`]) as it is read.
fn unpack(scope: &DedicatedWorkerGlobalScope, blob: web_sys::Blob) -> FromRanks {
    let walked = BlobReader::new(blob).and_then(|r| {
        tracelane_core::import::archive::walk_set(
            r,
            MAX_JSON_BYTES,
            MAX_SET_BYTES,
            &mut |name, bytes| {
                Transfer::Entry {
                    name,
                    bytes: js_sys::Uint8Array::from(&bytes[..]),
                }
                .post(scope)
                .is_ok()
            },
        )
        .map_err(|e| e.to_string())
    });
    match walked {
        Ok(w) => FromRanks::Unpacked {
            passed_over: w.passed_over,
        },
        Err(message) => FromRanks::Failed { id: 0, message },
    }
}

fn parse(summaries: &[String]) -> Vec<RankSummary> {
    summaries
        .iter()
        .filter_map(|s| serde_json::from_str(s).ok())
        .collect()
}

/// The run's tables of every rank for the columnar export (one
/// [`Transfer::Tables`] per summary, by its index), then which rank each is.
fn export(scope: &DedicatedWorkerGlobalScope, summaries: &[String], job: &str) -> FromRanks {
    use tracelane_core::columnar::{rank_tables, table_path};
    let parsed = parse(summaries);
    let report = ranks(&parsed);
    let mut rank_of = vec![0; parsed.len()];
    for (j, row) in report.ranks.iter().enumerate() {
        rank_of[row.input] = row.rank;
        match rank_tables(&report, j, &parsed[row.input], job) {
            Ok(tables) => post_tables(
                scope,
                row.input as u32,
                tables
                    .into_iter()
                    .map(|(t, b)| (table_path(t, row.rank), b))
                    .collect(),
            ),
            Err(message) => {
                return FromRanks::Failed {
                    id: row.input as u32,
                    message,
                }
            }
        }
    }
    FromRanks::Exported { ranks: rank_of }
}

/// The report of the summaries, as the view shows it and as JSON.
fn combine(summaries: &[String]) -> FromRanks {
    let parsed = parse(summaries);
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
        if let Some(Transfer::Unpack { blob }) = Transfer::from_js(&data) {
            let done = unpack(&me, blob);
            post(&me, &done);
            return;
        }
        if let Some(Transfer::Rank {
            id,
            name,
            blob,
            job,
        }) = Transfer::from_js(&data)
        {
            let msg = match summarise(&me, id, &name, blob, job.as_deref()) {
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
        match data
            .as_string()
            .map(|t| serde_json::from_str::<ToRanks>(&t))
        {
            Some(Ok(ToRanks::Combine { summaries })) => post(&me, &combine(&summaries)),
            Some(Ok(ToRanks::Export { summaries, job })) => {
                let done = export(&me, &summaries, &job);
                post(&me, &done);
            }
            _ => {}
        }
    });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    post(&scope, &FromRanks::Ready);
}

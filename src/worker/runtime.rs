//! The worker's own clock, its messages to the page, and the limits of
//! its imports.

use tracelane_core::ImportOptions;
use wasm_bindgen::prelude::*;
use web_sys::DedicatedWorkerGlobalScope;

use crate::shared::protocol::FromWorker;

/// wasm32 memory is 4 GiB at most: stop inflating well before it.
pub(crate) const MAX_JSON_BYTES: u64 = 3 << 30;

pub(crate) fn options() -> ImportOptions {
    ImportOptions {
        max_json_bytes: MAX_JSON_BYTES,
        // The worker keeps each trace's Blob: args are read back from it.
        args_in_source: true,
    }
}

/// The least time between two progress messages.
pub(crate) const PROGRESS_EVERY_MS: f64 = 150.0;

pub(crate) fn now_ms(scope: &DedicatedWorkerGlobalScope) -> f64 {
    scope.performance().map(|p| p.now()).unwrap_or(0.0)
}

/// `timeOrigin + now()`: milliseconds comparable with the page's clock.
pub(super) fn epoch_ms(scope: &DedicatedWorkerGlobalScope) -> f64 {
    scope
        .performance()
        .map(|p| p.time_origin() + p.now())
        .unwrap_or(0.0)
}

pub(super) fn post(scope: &DedicatedWorkerGlobalScope, msg: &FromWorker) {
    if let Ok(text) = serde_json::to_string(msg) {
        let _ = scope.post_message(&JsValue::from_str(&text));
    }
}

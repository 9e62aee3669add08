//! The core and the app's pure modules, run as wasm in headless Chromium
//! (`cargo test --target wasm32-unknown-unknown --test web`).
#![cfg(target_arch = "wasm32")]

use tracelane_app::protocol::summarize;
use tracelane_app::table;
use tracelane_core::{import_bytes, ImportOptions, Importer};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn gzip_trace_imports_in_the_browser_with_the_same_numbers() {
    let bytes = include_bytes!("fixtures/torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz");
    let trace = import_bytes(bytes, ImportOptions::default()).unwrap();
    let timeline = tracelane_app::timeline_view::TimelineModel::new(&trace);
    let s = summarize(&trace, &timeline, 1, "naive", bytes.len() as u64, 0.0);
    let mul = s
        .rows_by_name
        .iter()
        .find(|r| r.name == "aten::mul")
        .unwrap();
    assert_eq!(mul.calls, 10);
    assert_eq!(table::fmt_ns(mul.cpu_self_ns as f64), "42.511 ms");
}

#[wasm_bindgen_test]
fn chunked_import_in_the_browser_reports_bad_files() {
    let mut imp = Importer::new(ImportOptions::default());
    let err = imp
        .push(include_bytes!("fixtures/edge/image.png"))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "not a trace: the file is a PNG image, not JSON"
    );
}

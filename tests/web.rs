//! The core and the app's pure modules, run as wasm in headless Chromium
//! (`cargo test --target wasm32-unknown-unknown --test web`).
#![cfg(target_arch = "wasm32")]

use tracelane_app::shared::protocol::summarize;
use tracelane_app::shared::table;
use tracelane_core::{import_bytes, ImportOptions, Importer};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn gzip_trace_imports_in_the_browser_with_the_same_numbers() {
    let bytes = include_bytes!("fixtures/torch-cpu/rmsnorm_naive_cpu.pt.trace.json.gz");
    let trace = import_bytes(bytes, ImportOptions::default()).unwrap();
    let timeline = tracelane_app::shared::timeline_view::TimelineModel::new(&trace);
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

#[wasm_bindgen_test]
fn every_transfer_message_reads_back_what_was_written() {
    use tracelane_app::shared::protocol::TimelineSlot;
    use tracelane_app::transfer::Transfer;
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(&b"abc"[..]));
    let blob = web_sys::Blob::new_with_u8_array_sequence(&parts).unwrap();
    let channel = web_sys::MessageChannel::new().unwrap();
    let canvas = || web_sys::OffscreenCanvas::new(4, 4).unwrap();
    let messages = [
        Transfer::Read {
            id: 4,
            blob: blob.clone(),
            from: 1,
            to: 3,
        },
        Transfer::Port {
            port: channel.port1(),
        },
        Transfer::Part {
            part_of: 4,
            encoded: Some(js_sys::Uint8Array::from(&[1u8, 2, 3][..])),
            memory: 65_536,
        },
        Transfer::Part {
            part_of: 5,
            encoded: None,
            memory: 0,
        },
        Transfer::Attach {
            id: 4,
            slot: TimelineSlot::SplitB,
            rects: canvas(),
            overlay: canvas(),
            renderer: "webgl2".into(),
        },
    ];
    for m in &messages {
        let (msg, transfer) = m.to_js();
        let back = Transfer::from_js(&msg).expect("reads back");
        match (m, back) {
            (
                Transfer::Read { id, from, to, .. },
                Transfer::Read {
                    id: i,
                    blob: b,
                    from: f,
                    to: t,
                },
            ) => {
                assert_eq!((*id, *from, *to), (i, f, t));
                assert_eq!(b.size(), 3.0);
                assert_eq!(transfer.length(), 0);
            }
            (Transfer::Port { .. }, Transfer::Port { .. }) => assert_eq!(transfer.length(), 1),
            (
                Transfer::Part {
                    part_of,
                    encoded,
                    memory,
                },
                Transfer::Part {
                    part_of: p,
                    encoded: e,
                    memory: mem,
                },
            ) => {
                assert_eq!((*part_of, *memory), (p, mem));
                assert_eq!(encoded.as_ref().map(|a| a.to_vec()), e.map(|a| a.to_vec()));
                assert_eq!(transfer.length(), u32::from(encoded.is_some()));
            }
            (
                Transfer::Attach {
                    id, slot, renderer, ..
                },
                Transfer::Attach {
                    id: i,
                    slot: s,
                    renderer: r,
                    ..
                },
            ) => {
                assert_eq!((*id, *slot, renderer.as_str()), (i, s, r.as_str()));
                assert_eq!(transfer.length(), 2);
            }
            _ => panic!("read back as another message"),
        }
    }
    // JSON text and other objects are not transfer messages.
    assert!(Transfer::from_js(&"{\"type\":\"ready\"}".into()).is_none());
    assert!(Transfer::from_js(&js_sys::Object::new().into()).is_none());
}

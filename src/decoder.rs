//! The decoder worker: opens archives and decodes a Neuron device
//! profile's Parquet tables for the primary import worker, which started
//! it.
//!
//! The `parquet` crate (page decompression, encodings, Thrift footers) with
//! the zip and tar readers was about a fifth of the import worker (measured:
//! 977 → 734 KB gzipped without them, at the time), and only archives and device
//! profiles need them. So they live in this third module, downloaded and
//! started the first time one is opened: the primary posts the archive's
//! bytes ([`Transfer::Decode`]), this worker answers with the decoded
//! tables, the archive's one file, or a run's tables and other files
//! ([`Transfer::Decoded`]), and the
//! primary builds the model from them (`neuron_device::import_decoded`,
//! `import::import_unpacked`) exactly as the CLI does.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use crate::transfer::{Opened, Transfer};
use crate::worker::MAX_JSON_BYTES;
use tracelane_core::import::{neuron_device, table, unpack, Unpacked};

/// Opens an archive: a profile's tables decoded and encoded, or its file.
fn open(archive: &[u8]) -> Result<Opened, String> {
    Ok(
        match unpack(archive, MAX_JSON_BYTES).map_err(|e| e.to_string())? {
            Unpacked::Profile(files) => {
                let tables = table::encode(&neuron_device::decode_profile(files));
                Opened::Tables(js_sys::Uint8Array::from(&tables[..]))
            }
            Unpacked::File(file) => Opened::File(js_sys::Uint8Array::from(&file[..])),
            Unpacked::Run(files) => {
                let (tables, rest): (Vec<_>, Vec<_>) = files
                    .into_iter()
                    .partition(|(_, b)| tracelane_core::import::parquet::looks_like(b));
                let tables = table::encode(&neuron_device::decode_profile(tables));
                Opened::Run {
                    tables: js_sys::Uint8Array::from(&tables[..]),
                    files: js_sys::Uint8Array::from(&table::encode_files(&rest)[..]),
                }
            }
        },
    )
}

pub fn start() {
    console_error_panic_hook::set_once();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply_to = scope.clone();
    let onmessage = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let Some(Transfer::Decode { id, archive }) = Transfer::from_js(&e.data()) else {
            return;
        };
        let opened = open(&archive.to_vec());
        let _ = Transfer::Decoded { id, opened }.post(&reply_to);
    });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    let _ = Transfer::DecoderReady.post(&scope);
}

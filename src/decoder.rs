//! The decoder worker: opens archives, decodes a Neuron device profile's
//! Parquet tables and PyTorch's allocator snapshots for the primary import
//! worker, which started it.
//!
//! The `parquet` crate (page decompression, encodings, Thrift footers) with
//! the zip and tar readers was about a fifth of the import worker (measured:
//! 977 → 734 KB gzipped without them, at the time), and only archives and device
//! profiles need them. So they live in this third module, downloaded and
//! started the first time one is opened: the primary posts the archive's
//! bytes ([`Transfer::Decode`]), this worker answers with the decoded
//! tables, the archive's one file, a run's tables and other files, or a
//! decoded snapshot ([`Transfer::Decoded`]), and the primary builds the
//! model from them (`neuron_device::import_decoded`,
//! `import::import_unpacked`, `import::snapshot::trace_of`) exactly as the
//! CLI does. This module is built at opt-level 3 (`release-decoder` in
//! `Cargo.toml`): the pickle decoder reads a snapshot at 72 MB/s built for
//! size, ~175 MB/s for speed (wasm in V8, README).

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use crate::transfer::{Opened, Transfer};
use crate::worker::{now_ms, MAX_JSON_BYTES};
use tracelane_core::import::{neuron_device, run, snapshot, table, unpack, Unpacked};
use tracelane_core::memory_snapshot::encoding;

/// Opens an archive: a profile's tables decoded and encoded, its file, a
/// run's tables and files with its snapshot decoded, or a snapshot.
fn open(archive: &[u8]) -> Result<Opened, String> {
    Ok(
        match unpack(archive, MAX_JSON_BYTES).map_err(|e| e.to_string())? {
            Unpacked::Snapshot(snap) => {
                Opened::Snapshot(js_sys::Uint8Array::from(&encoding::encode(&snap)[..]))
            }
            Unpacked::Profile(files) => {
                let tables = table::encode(&neuron_device::decode_profile(files));
                Opened::Tables(js_sys::Uint8Array::from(&tables[..]))
            }
            Unpacked::File(file) => Opened::File(js_sys::Uint8Array::from(&file[..])),
            Unpacked::Run(files) => {
                let (files, snapshot) = run::take_snapshot(files).map_err(|e| e.to_string())?;
                let (tables, rest): (Vec<_>, Vec<_>) = files
                    .into_iter()
                    .partition(|(_, b)| tracelane_core::import::parquet::looks_like(b));
                let tables = table::encode(&neuron_device::decode_profile(tables));
                Opened::Run {
                    tables: js_sys::Uint8Array::from(&tables[..]),
                    files: js_sys::Uint8Array::from(&table::encode_files(&rest)[..]),
                    snapshot: snapshot.map(|s| js_sys::Uint8Array::from(&encoding::encode(&s)[..])),
                }
            }
        },
    )
}

/// Whether the bytes are a pickle (the import worker inflated a gzipped
/// one): a snapshot, decoded as it is copied out of the array.
fn is_snapshot(bytes: &js_sys::Uint8Array) -> bool {
    let mut head = [0u8; 16];
    let n = bytes.length().min(head.len() as u32);
    bytes.subarray(0, n).copy_to(&mut head[..n as usize]);
    tracelane_core::memory_snapshot::looks_like(&head[..n as usize])
}

/// A snapshot pushed to its reader 1 MiB at a time, copied out of the
/// array into one reused buffer: the pickle is never whole in this
/// worker's memory (a 1 GB snapshot holds ~32 bytes per entry here, not
/// the file), and the decoder reads it from cache.
fn open_snapshot(bytes: &js_sys::Uint8Array) -> Result<Opened, String> {
    const CHUNK: u32 = 1 << 20;
    let mut reader = tracelane_core::memory_snapshot::SnapshotReader::default();
    let mut chunk = vec![0u8; CHUNK as usize];
    let (mut at, len) = (0, bytes.length());
    let fail = |e| snapshot::error(e).to_string();
    while at < len {
        let end = len.min(at + CHUNK);
        let part = &mut chunk[..(end - at) as usize];
        bytes.subarray(at, end).copy_to(part);
        reader.push(part).map_err(fail)?;
        at = end;
    }
    let snap = reader.finish().map_err(fail)?;
    Ok(Opened::Snapshot(js_sys::Uint8Array::from(
        &encoding::encode(&snap)[..],
    )))
}

pub fn start() {
    console_error_panic_hook::set_once();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply_to = scope.clone();
    let onmessage = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let Some(Transfer::Decode { id, archive }) = Transfer::from_js(&e.data()) else {
            return;
        };
        let started = now_ms(&reply_to);
        let opened = if is_snapshot(&archive) {
            open_snapshot(&archive)
        } else {
            open(&archive.to_vec())
        };
        let decode_ms = now_ms(&reply_to) - started;
        let _ = Transfer::Decoded {
            id,
            opened,
            decode_ms,
        }
        .post(&reply_to);
    });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    let _ = Transfer::DecoderReady.post(&scope);
}

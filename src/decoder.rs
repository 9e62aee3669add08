//! The decoder worker: opens archives, decodes a Neuron device profile's
//! Parquet tables and PyTorch's allocator snapshots for the primary import
//! worker, which started it.
//!
//! The `parquet` crate (page decompression, encodings, Thrift footers) with
//! the zip and tar readers was about a fifth of the import worker (measured:
//! 977 → 734 KB gzipped without them, at the time), and only archives and device
//! profiles need them. So they live in this third module, downloaded and
//! started the first time one is opened: the primary posts the file's
//! `Blob` ([`Transfer::Decode`]) as soon as its first bytes say what it is,
//! this worker reads it itself and answers with the decoded
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
use crate::worker::{
    now_ms, BlobReader, MAX_JSON_BYTES, PROGRESS_EVERY_MS, READ_BYTES, READ_ERROR,
};
use tracelane_core::import::neuron_device::ProfileFile;
use tracelane_core::import::snapshot_stream::{self, SnapshotStream};
use tracelane_core::import::{
    archive, neuron_device, run, table, unpack_archive_stream, unpack_file, Streamed, Unpacked,
};
use tracelane_core::memory_snapshot::encoding;
use tracelane_core::memory_snapshot::MemorySnapshot;
use wasm_bindgen_futures::JsFuture;

/// A `Blob`'s bytes in order, [`READ_BYTES`] at a time, the next read
/// already under way while one is decoded: the browser reads the file
/// while this worker decodes (a synchronous `FileReaderSync` read cost
/// 0.3 s of each 111 MB, measured, on top of the decoding).
struct Reads {
    file: web_sys::Blob,
    size: u64,
    at: u64,
    ahead: Option<JsFuture>,
    /// Time spent waiting for reads (the rest of the decoder's time is its
    /// own work).
    waited_ms: f64,
    scope: DedicatedWorkerGlobalScope,
}

impl Reads {
    fn new(file: web_sys::Blob, scope: DedicatedWorkerGlobalScope) -> Self {
        Reads {
            size: file.size() as u64,
            file,
            at: 0,
            ahead: None,
            waited_ms: 0.0,
            scope,
        }
    }

    /// Starts the read after the last one started (`None` at the end).
    fn start(&mut self) -> Result<Option<JsFuture>, String> {
        if self.at >= self.size {
            return Ok(None);
        }
        let end = (self.at + READ_BYTES as u64).min(self.size);
        let piece = self
            .file
            .slice_with_f64_and_f64(self.at as f64, end as f64)
            .map_err(|_| READ_ERROR.to_string())?;
        self.at = end;
        Ok(Some(JsFuture::from(piece.array_buffer())))
    }

    /// The next bytes, copied into `into` (`false` at the end).
    async fn next(&mut self, into: &mut Vec<u8>) -> Result<bool, String> {
        let current = match self.ahead.take() {
            Some(read) => read,
            None => match self.start()? {
                Some(read) => read,
                None => return Ok(false),
            },
        };
        self.ahead = self.start()?;
        let waiting = now_ms(&self.scope);
        let read = current.await.map_err(|_| READ_ERROR.to_string());
        self.waited_ms += now_ms(&self.scope) - waiting;
        let bytes = js_sys::Uint8Array::new(&read?);
        into.resize(bytes.length() as usize, 0);
        bytes.copy_to(into);
        Ok(true)
    }
}

/// Reads import `id`'s file from its `Blob` and opens it. An allocator
/// snapshot (gzipped or not) is pushed to the pickle decoder a read at a
/// time ([`SnapshotStream`]): this worker holds ~32 bytes per entry, never
/// the pickle, so a 1 GB snapshot opens in a tab. Anything else is read
/// whole and opened as the CLI opens it ([`unpack_file`]).
async fn open(reads: &mut Reads, progress: &mut dyn FnMut(u64)) -> Result<Opened, String> {
    let fail = |e: tracelane_core::ImportError| e.to_string();
    let size = reads.size;
    let mut piece = Vec::new();
    if !reads.next(&mut piece).await? {
        return Err(tracelane_core::ImportError::Empty.to_string());
    }
    if snapshot_stream::looks_like(&piece) {
        let mut stream = SnapshotStream::new(MAX_JSON_BYTES);
        let mut read = 0;
        loop {
            read += piece.len() as u64;
            stream.push(&piece).map_err(fail)?;
            progress(read);
            if !reads.next(&mut piece).await? {
                break;
            }
        }
        let snap = stream.finish().map_err(fail)?;
        return Ok(Opened::Snapshot(js_sys::Uint8Array::from(
            &encoding::encode(&snap)[..],
        )));
    }
    if archive::set_kind(&piece).is_some() {
        // Member by member (a trace dropped with its snapshot is the page's
        // tar): the snapshot decoded as it is read, never whole.
        drop(piece);
        let reader = BlobReader::new(reads.file.clone())?;
        return match unpack_archive_stream(reader, MAX_JSON_BYTES, progress).map_err(fail)? {
            Streamed::Unpacked(unpacked) => opened(unpacked),
            Streamed::Run(files, snap) => Ok(run_opened(files, Some(*snap))),
        };
    }
    let mut bytes = Vec::with_capacity(size.min(MAX_JSON_BYTES) as usize);
    loop {
        bytes.extend_from_slice(&piece);
        progress(bytes.len() as u64);
        if bytes.len() as u64 > MAX_JSON_BYTES || !reads.next(&mut piece).await? {
            break;
        }
    }
    drop(piece);
    opened(unpack_file(&bytes, MAX_JSON_BYTES).map_err(fail)?)
}

/// What the primary is sent for an opened file: a profile's tables decoded
/// and encoded, the archive's one file, a run's tables and files with its
/// snapshot decoded, or a snapshot's columns.
fn opened(unpacked: Unpacked) -> Result<Opened, String> {
    Ok(match unpacked {
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
            run_opened(files, snapshot)
        }
    })
}

/// A run's files: its Parquet tables decoded, the others as they are, its
/// snapshot's columns.
fn run_opened(files: Vec<ProfileFile>, snapshot: Option<MemorySnapshot>) -> Opened {
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

pub fn start() {
    console_error_panic_hook::set_once();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply_to = scope.clone();
    let onmessage = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let Some(Transfer::Decode { id, file }) = Transfer::from_js(&e.data()) else {
            return;
        };
        let reply_to = reply_to.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let started = now_ms(&reply_to);
            let mut sent = started;
            let mut progress = |bytes| {
                let now = now_ms(&reply_to);
                if now - sent >= PROGRESS_EVERY_MS {
                    sent = now;
                    let _ = Transfer::DecodeProgress { id, bytes }.post(&reply_to);
                }
            };
            let mut reads = Reads::new(file, reply_to.clone());
            let opened = open(&mut reads, &mut progress).await;
            let decode_ms = now_ms(&reply_to) - started;
            let _ = Transfer::Decoded {
                id,
                opened,
                decode_ms,
                read_wait_ms: reads.waited_ms,
                memory: core::arch::wasm32::memory_size(0) as u64 * 65_536,
            }
            .post(&reply_to);
        });
    });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    let _ = Transfer::DecoderReady.post(&scope);
}

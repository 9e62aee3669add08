//! The imports under way: the file's byte ranges read and fed to the
//! importer, the helper's part merged, archives sent to the decoder worker,
//! and each finished model kept ([`super::kept`]).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use tracelane_core::import::{import_unpacked, neuron_device, snapshot, table, Finished};
use tracelane_core::memory_snapshot::encoding;
use tracelane_core::{ImportOptions, Importer, Trace};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent, MessagePort};

use crate::js::object;
use crate::shared::protocol::{summarize, FromWorker, ImportPhases, TimelineSlot};
use crate::shared::timeline_view::TimelineModel;
use crate::transfer::{Opened, Transfer};
use crate::worker::paint::Surface;

use super::blob::{read_blob, READ_BYTES};
use super::kept::{Kept, Models};
use super::runtime::{now_ms, options, post, PROGRESS_EVERY_MS};

/// `blob[from..to]` of import (or part) `id`, to be read by this worker.
pub(super) struct ReadRequest {
    pub(super) id: u32,
    pub(super) blob: web_sys::Blob,
    pub(super) from: u64,
    pub(super) to: u64,
}

/// An import in the primary worker.
pub(super) struct Job {
    pub(super) id: u32,
    pub(super) name: String,
    pub(super) file_bytes: u64,
    pub(super) importer: Importer,
    pub(super) started_ms: f64,
    pub(super) head_sent: bool,
    /// The helper's part was merged into this import: the helper's wasm
    /// memory when it sent it.
    pub(super) helper_memory: Option<u64>,
    /// `Finish` arrived: where the helper's part starts, if there is one.
    pub(super) finish: Option<Option<u64>>,
    /// When this worker had read all its bytes (waiting for the helper's
    /// part from then on), and how long merging the part took.
    pub(super) read_all_ms: Option<f64>,
    pub(super) merge_ms: f64,
    /// The file (from the first read request): args are read back from it.
    pub(super) source: Option<web_sys::Blob>,
}

/// A part being parsed in the helper worker.
pub(super) struct PartJob {
    pub(super) id: u32,
    pub(super) importer: Importer,
    /// Its bytes could not all be read: the part is not sent.
    pub(super) failed: bool,
}

/// What the message handlers share.
pub(super) struct Shared {
    pub(super) scope: DedicatedWorkerGlobalScope,
    pub(super) models: Models,
    /// The canvases of each timeline the page shows (at most one per
    /// slot), with the slot.
    pub(super) surfaces: RefCell<Vec<(TimelineSlot, Surface)>>,
    /// The Memory view's bands canvas, with what was built for it.
    pub(super) bands: RefCell<Option<super::bands::BandsCanvas>>,
    pub(super) job: RefCell<Option<Job>>,
    pub(super) part_job: RefCell<Option<PartJob>>,
    /// Encoded parts from the helper (`null`: it failed), by import id,
    /// with the helper's wasm memory at the time.
    pub(super) parts: RefCell<Vec<(u32, Option<js_sys::Uint8Array>, u64)>>,
    /// The channel between the primary and the helper.
    pub(super) port: RefCell<Option<MessagePort>>,
    /// Byte ranges to read, in order, and whether they are being read.
    pub(super) reads: RefCell<VecDeque<ReadRequest>>,
    pub(super) reading: Cell<bool>,
    /// `PartEnd` for this part came while its bytes were still being read.
    pub(super) part_end: Cell<Option<u32>>,
    /// Where read bytes land in wasm memory (reused: one allocation).
    pub(super) scratch: RefCell<Vec<u8>>,
    /// When the last progress message was posted.
    pub(super) progress_sent: Cell<f64>,
    /// Archives and device profiles the decoder worker is opening.
    pub(super) decoding: RefCell<Vec<Finishing>>,
    /// The decoder worker, once one was needed; whether it said it is
    /// ready, and what waits to be sent to it until then.
    pub(super) decoder: RefCell<Option<web_sys::Worker>>,
    pub(super) decoder_ready: Cell<bool>,
    pub(super) decode_queue: RefCell<Vec<Transfer>>,
    /// Painted scenes waiting for the next animation frame to be reported
    /// shown ([`Shared::show_after_commit`]): the latest of each slot.
    pub(super) shown_pending: RefCell<Vec<(TimelineSlot, u32)>>,
    /// This value's own handle, for callbacks.
    pub(super) me: std::rc::Weak<Shared>,
}

impl Shared {
    /// What painting the bands needs of this state.
    pub(super) fn bands_context(&self) -> super::bands::BandsContext<'_> {
        super::bands::BandsContext {
            slot: &self.bands,
            models: &self.models,
            scope: &self.scope,
        }
    }

    pub(super) fn post(&self, msg: &FromWorker) {
        post(&self.scope, msg);
    }

    pub(super) fn fail(&self, id: u32, message: String) {
        self.post(&FromWorker::Failed { id, message });
    }

    /// Tells the page how far the import got — at most every
    /// [`PROGRESS_EVERY_MS`]: each message costs the page a task and a
    /// repaint, on the same two cores the parsers use (measured: 99 progress
    /// messages and 80 repaints took 0.5 s of the page's main thread during
    /// a 1.9 s import).
    pub(super) fn progress(&self, id: u32, bytes: u64) {
        let now = now_ms(&self.scope);
        if now - self.progress_sent.get() >= PROGRESS_EVERY_MS {
            self.progress_sent.set(now);
            self.post(&FromWorker::Progress { id, bytes });
        }
    }

    /// A chunk of import or part `id` (dropped if that is no longer under
    /// way here: a read that was in flight when it was cancelled).
    pub(super) fn chunk(&self, id: u32, bytes: &[u8]) {
        if let Some(p) = self.part_job.borrow_mut().as_mut().filter(|p| p.id == id) {
            if p.importer.push(bytes).is_ok() {
                let (id, bytes) = (p.id, p.importer.bytes_in());
                self.progress(id, bytes);
            }
            // A failed part is reported as `null` at its end.
            return;
        }
        let mut slot = self.job.borrow_mut();
        let Some(j) = slot.as_mut().filter(|j| j.id == id) else {
            return;
        };
        if let Err(err) = j.importer.push(bytes) {
            let id = j.id;
            *slot = None;
            drop(slot);
            self.fail(id, err.to_string());
            return;
        }
        let (id, bytes) = (j.id, j.importer.bytes_in());
        let head = (!j.head_sent).then(|| j.importer.plain_event_list());
        j.head_sent = true;
        let hand_off = j.importer.holds_archive();
        drop(slot);
        self.progress(id, bytes);
        if let Some(bare) = head {
            self.post(&FromWorker::Head { id, bare });
        }
        if hand_off {
            // An archive or a snapshot: the decoder worker reads the file
            // itself from here on (the reads still queued are dropped).
            if let Some(j) = self.job.borrow_mut().take() {
                self.complete(j);
            }
        }
    }

    /// In the helper: encodes the finished part and sends it to the primary.
    pub(super) fn end_part(&self, id: u32) {
        let Some(p) = self.part_job.borrow_mut().take().filter(|p| p.id == id) else {
            return;
        };
        let array = (!p.failed)
            .then(|| p.importer.finish_part().ok())
            .flatten()
            .map(|bytes| js_sys::Uint8Array::from(&bytes[..]));
        let msg = Transfer::Part {
            part_of: id,
            encoded: array,
            memory: core::arch::wasm32::memory_size(0) as u64 * 65_536,
        };
        if let Some(port) = self.port.borrow().as_ref() {
            let _ = msg.post(port);
        }
    }

    /// In the primary: the helper's part of import `id` (`None` when the
    /// helper could not parse it, or died).
    pub(super) fn part_arrived(&self, id: u32, encoded: Option<js_sys::Uint8Array>, memory: u64) {
        self.parts.borrow_mut().push((id, encoded, memory));
        self.try_complete();
    }

    /// In the primary: finishes the current import once its bytes (and the
    /// helper's part, if one is expected) are all in.
    pub(super) fn try_complete(&self) {
        if self.busy_reading() {
            return;
        }
        let mut slot = self.job.borrow_mut();
        let Some(j) = slot.as_mut() else { return };
        let Some(part_at) = j.finish else { return };
        j.read_all_ms.get_or_insert_with(|| now_ms(&self.scope));
        if let Some(at) = part_at {
            let mut parts = self.parts.borrow_mut();
            let Some(k) = parts.iter().position(|(id, _, _)| *id == j.id) else {
                return; // the part is still on its way
            };
            let (_, encoded, helper_memory) = parts.swap_remove(k);
            drop(parts);
            let merging = now_ms(&self.scope);
            let merged = match encoded {
                None => Ok(false),
                Some(encoded) => j.importer.absorb_part(&encoded.to_vec()),
            };
            j.merge_ms = now_ms(&self.scope) - merging;
            match merged {
                Ok(true) => j.helper_memory = Some(helper_memory),
                Ok(false) => {
                    j.finish = None;
                    let id = j.id;
                    drop(slot);
                    self.post(&FromWorker::NeedBytes { id, from: at });
                    return;
                }
                Err(err) => {
                    let id = j.id;
                    *slot = None;
                    drop(slot);
                    self.fail(id, err.to_string());
                    return;
                }
            }
        }
        let j = slot.take().expect("the job checked above");
        drop(slot);
        self.complete(j);
    }

    pub(super) fn complete(&self, j: Job) {
        let finishing = now_ms(&self.scope);
        let result = j.importer.finish_or_archive();
        let done = Finishing {
            id: j.id,
            name: j.name,
            file_bytes: j.file_bytes,
            started_ms: j.started_ms,
            finishing_ms: finishing,
            read_all_ms: j.read_all_ms,
            merge_ms: j.merge_ms,
            decode_ms: 0.0,
            decode_read_wait_ms: 0.0,
            decoder_memory: 0,
            helper_memory: j.helper_memory,
            source: j.source,
        };
        match result {
            Ok(Finished::Trace(trace)) => self.keep(done, *trace),
            // Its bytes were left in the file (`Importer::leave_archives`).
            Ok(Finished::Archive(_)) => self.decode(done),
            Err(err) => self.fail(done.id, err.to_string()),
        }
    }

    /// Hands an archive, a lone Parquet table or an allocator snapshot to
    /// the decoder worker (started on first use), which reads the file
    /// itself; [`Shared::decoded`] takes its answer.
    pub(super) fn decode(&self, done: Finishing) {
        let id = done.id;
        let Some(file) = done.source.clone() else {
            self.fail(id, READ_ERROR.into());
            return;
        };
        let Some(decoder) = self.decoder() else {
            self.fail(
                id,
                "could not start the decoder of archives and Parquet tables (this browser cannot start a worker from a worker)".into(),
            );
            return;
        };
        self.decoding.borrow_mut().push(done);
        self.decode_queue
            .borrow_mut()
            .push(Transfer::Decode { id, file });
        if self.decoder_ready.get() {
            self.send_decodes(&decoder);
        }
    }

    /// Posts the queued archives to the decoder (once it is ready).
    pub(super) fn send_decodes(&self, decoder: &web_sys::Worker) {
        let queued: Vec<Transfer> = self.decode_queue.borrow_mut().drain(..).collect();
        for msg in queued {
            if msg.post(decoder).is_err() {
                if let Transfer::Decode { id, .. } = msg {
                    self.decoding.borrow_mut().retain(|f| f.id != id);
                    self.fail(
                        id,
                        "the decoder of archives and Parquet tables is gone".into(),
                    );
                }
            }
        }
    }

    /// The decoder worker, started the first time a profile is opened.
    pub(super) fn decoder(&self) -> Option<web_sys::Worker> {
        if let Some(d) = self.decoder.borrow().as_ref() {
            return Some(d.clone());
        }
        let d = web_sys::Worker::new("./decoder_loader.js").ok()?;
        let weak = self.me.clone();
        let onmessage = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            let Some(sh) = weak.upgrade() else { return };
            match Transfer::from_js(&e.data()) {
                Some(Transfer::DecoderReady) => {
                    sh.decoder_ready.set(true);
                    if let Some(d) = sh.decoder.borrow().clone() {
                        sh.send_decodes(&d);
                    }
                }
                Some(Transfer::DecodeProgress { id, bytes }) => sh.progress(id, bytes),
                Some(Transfer::Decoded {
                    id,
                    opened,
                    decode_ms,
                    read_wait_ms,
                    memory,
                }) => sh.decoded(id, opened, (decode_ms, read_wait_ms, memory)),
                _ => {}
            }
        });
        d.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
        onmessage.forget();
        let weak = self.me.clone();
        let onerror = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
            let Some(sh) = weak.upgrade() else { return };
            let why = js_sys::Reflect::get(&e, &"message".into())
                .ok()
                .and_then(|m| m.as_string())
                .unwrap_or_else(|| "it could not be loaded".into());
            // A crash (a panic, out of memory) ends every decode in flight;
            // the next profile starts a new decoder.
            if let Some(d) = sh.decoder.borrow_mut().take() {
                d.terminate();
            }
            sh.decoder_ready.set(false);
            sh.decode_queue.borrow_mut().clear();
            let failed: Vec<Finishing> = sh.decoding.borrow_mut().drain(..).collect();
            for f in failed {
                sh.fail(
                    f.id,
                    format!("the decoder of archives and Parquet tables stopped: {why}"),
                );
            }
        });
        d.set_onerror(Some(onerror.as_ref().unchecked_ref()));
        onerror.forget();
        *self.decoder.borrow_mut() = Some(d.clone());
        Some(d)
    }

    /// Ends the decoder once an answer leaves it holding more than
    /// [`DECODER_KEPT_BYTES`] of wasm memory (which never shrinks: a 1 GB
    /// snapshot's columns and their encoding) and nothing else waits on it;
    /// the next archive starts a new one (a module load, ~0.1 s).
    fn retire_decoder_if_large(&self, memory: u64) {
        if memory <= DECODER_KEPT_BYTES
            || !self.decoding.borrow().is_empty()
            || !self.decode_queue.borrow().is_empty()
        {
            return;
        }
        if let Some(d) = self.decoder.borrow_mut().take() {
            d.terminate();
        }
        self.decoder_ready.set(false);
    }

    /// The decoder's answer for import `id`: the model is built here.
    pub(super) fn decoded(
        &self,
        id: u32,
        opened: Result<Opened, String>,
        (decode_ms, read_wait_ms, memory): (f64, f64, u64),
    ) {
        let Some(mut done) = self
            .decoding
            .borrow_mut()
            .extract_if(.., |f| f.id == id)
            .next()
        else {
            return; // cancelled meanwhile
        };
        done.finishing_ms = now_ms(&self.scope);
        done.decode_ms = decode_ms;
        done.decode_read_wait_ms = read_wait_ms;
        done.decoder_memory = memory;
        self.retire_decoder_if_large(memory);
        let damaged = || "the decoded snapshot arrived damaged".to_string();
        let trace = opened.and_then(|opened| match opened {
            Opened::Snapshot(s) => Ok(snapshot::trace_of(
                encoding::decode(&s.to_vec()).ok_or_else(damaged)?,
            )),
            Opened::Tables(t) => {
                let files = table::decode(&t.to_vec())
                    .ok_or("the decoded tables arrived damaged".to_string())?;
                neuron_device::import_decoded(files).map_err(|e| e.to_string())
            }
            Opened::File(f) => import_unpacked(&f.to_vec(), options()).map_err(|e| e.to_string()),
            Opened::Run {
                tables,
                files,
                snapshot: snap,
            } => {
                let run_damaged = || "the run's files arrived damaged".to_string();
                let tables = table::decode(&tables.to_vec()).ok_or_else(run_damaged)?;
                let files = table::decode_files(&files.to_vec()).ok_or_else(run_damaged)?;
                let snap = match snap {
                    Some(s) => Some(encoding::decode(&s.to_vec()).ok_or_else(damaged)?),
                    None => None,
                };
                let mut trace =
                    tracelane_core::import::import_decoded_run(files, tables, options())
                        .map_err(|e| e.to_string())?;
                if let Some(snap) = snap {
                    snapshot::attach(&mut trace, snap);
                }
                Ok(trace)
            }
        });
        match trace {
            Ok(trace) => self.keep(done, trace),
            Err(why) => self.fail(id, why),
        }
    }

    /// Imports rank traces one after another (reading each `Blob` here)
    /// and keeps them stacked as one model, trace `id`.
    pub(super) fn stack(
        &self,
        id: u32,
        name: String,
        blobs: Vec<web_sys::Blob>,
        labels: Vec<String>,
        base_ns: i64,
    ) {
        let started_ms = now_ms(&self.scope);
        let file_bytes: u64 = blobs.iter().map(|b| b.size() as u64).sum();
        // A stack has no one file to read args back from: each part keeps
        // its own.
        let opts = ImportOptions {
            args_in_source: false,
            ..options()
        };
        let mut parts = Vec::with_capacity(blobs.len());
        let mut read = 0;
        for (blob, label) in blobs.into_iter().zip(labels) {
            let size = blob.size() as u64;
            let imported = read_blob(&self.scope, &blob, opts, &mut |at| {
                self.post(&FromWorker::Progress {
                    id,
                    bytes: read + at,
                })
            })
            .and_then(|importer| match importer.finish_or_archive() {
                Ok(Finished::Trace(t)) => Ok(*t),
                Ok(Finished::Archive(_)) => {
                    Err("an archive among the rank traces; open the traces in it".to_string())
                }
                Err(e) => Err(e.to_string()),
            });
            match imported {
                Ok(trace) => parts.push(tracelane_core::stack::Part { label, trace }),
                Err(why) => {
                    self.fail(id, format!("{label}: {why}"));
                    return;
                }
            }
            read += size;
        }
        let trace = tracelane_core::stack::stack(parts, base_ns);
        let done = Finishing {
            id,
            name,
            file_bytes,
            started_ms,
            finishing_ms: now_ms(&self.scope),
            read_all_ms: None,
            merge_ms: 0.0,
            decode_ms: 0.0,
            decode_read_wait_ms: 0.0,
            decoder_memory: 0,
            helper_memory: None,
            source: None,
        };
        self.keep(done, trace);
    }

    /// Keeps an imported model and tells the page.
    pub(super) fn keep(&self, done: Finishing, trace: Trace) {
        let Finishing {
            id,
            name,
            file_bytes,
            started_ms,
            finishing_ms: finishing,
            read_all_ms,
            merge_ms,
            decode_ms,
            decode_read_wait_ms,
            decoder_memory,
            helper_memory,
            source,
        } = done;
        let linked = now_ms(&self.scope);
        let ms = linked - started_ms;
        let timeline = TimelineModel::new(&trace);
        let mut summary = summarize(&trace, &timeline, id, &name, file_bytes, ms);
        summary.phases = ImportPhases {
            parse_ms: finishing - started_ms,
            part_wait_ms: read_all_ms.map_or(0.0, |t| finishing - merge_ms - t),
            merge_ms,
            decode_ms,
            decode_read_wait_ms,
            link_ms: linked - finishing,
            views_ms: now_ms(&self.scope) - linked,
            wasm_memory_bytes: core::arch::wasm32::memory_size(0) as u64 * 65_536,
            workers: if helper_memory.is_some() { 2 } else { 1 },
            helper_wasm_memory_bytes: helper_memory.unwrap_or(0),
            decoder_wasm_memory_bytes: decoder_memory,
        };
        self.models.borrow_mut().push(Kept {
            id,
            trace,
            timeline,
            source,
            paths: RefCell::new(Vec::new()),
            exact_analysis: RefCell::new(None),
            derived_counters: Cell::new(false),
        });
        self.post(&FromWorker::Done {
            id,
            summary: Box::new(summary),
        });
    }
}

/// The decoder's wasm memory above which it is ended after its answer.
const DECODER_KEPT_BYTES: u64 = 256 << 20;

/// An import whose input is all in, on its way to becoming a model.
pub(super) struct Finishing {
    pub(super) id: u32,
    pub(super) name: String,
    pub(super) file_bytes: u64,
    pub(super) started_ms: f64,
    /// When the importer was finished (for an archive: when the decoder
    /// answered).
    pub(super) finishing_ms: f64,
    pub(super) read_all_ms: Option<f64>,
    pub(super) merge_ms: f64,
    /// The decoder worker's own time on an archive or a snapshot, and its
    /// wasm memory then.
    pub(super) decode_ms: f64,
    pub(super) decode_read_wait_ms: f64,
    pub(super) decoder_memory: u64,
    pub(super) helper_memory: Option<u64>,
    pub(super) source: Option<web_sys::Blob>,
}

impl Shared {
    /// Posts [`FromWorker::Shown`] for `frame` of timeline `slot` from the
    /// next animation frame: by then the task that painted it has ended
    /// and its canvas frame was handed to the compositor. One callback
    /// serves every paint before it (the latest frame of each slot is
    /// reported).
    pub(super) fn show_after_commit(&self, slot: TimelineSlot, frame: u32) {
        let waiting = {
            let mut pending = self.shown_pending.borrow_mut();
            let waiting = !pending.is_empty();
            pending.retain(|(s, _)| *s != slot);
            pending.push((slot, frame));
            waiting
        };
        if waiting {
            return; // a callback is already waiting
        }
        let report = |weak: std::rc::Weak<Shared>| {
            move || {
                if let Some(sh) = weak.upgrade() {
                    let pending = std::mem::take(&mut *sh.shown_pending.borrow_mut());
                    for (slot, frame) in pending {
                        sh.post(&FromWorker::Shown { slot, frame });
                    }
                }
            }
        };
        let on_frame = report(self.me.clone());
        let on_frame = Closure::once_into_js(move |_: f64| on_frame());
        if self
            .scope
            .request_animation_frame(on_frame.unchecked_ref())
            .is_err()
        {
            // No animation frames in this worker: the task's end is the
            // best signal there is.
            let later = Closure::once_into_js(report(self.me.clone()));
            let _ = self.scope.set_timeout_with_callback(later.unchecked_ref());
        }
    }

    /// Whether byte ranges are still being read (or wait to be).
    pub(super) fn busy_reading(&self) -> bool {
        self.reading.get() || !self.reads.borrow().is_empty()
    }

    /// Whether import or part `id` is still wanted here.
    pub(super) fn wants(&self, id: u32) -> bool {
        self.job.borrow().as_ref().is_some_and(|j| j.id == id)
            || self.part_job.borrow().as_ref().is_some_and(|p| p.id == id)
    }

    /// A read failed: the primary reports it; the helper's part is then
    /// not usable (the primary reads those bytes itself).
    pub(super) fn read_failed(&self, id: u32, message: String) {
        if let Some(p) = self.part_job.borrow_mut().as_mut().filter(|p| p.id == id) {
            p.failed = true;
            return;
        }
        if self.job.borrow_mut().take_if(|j| j.id == id).is_some() {
            self.fail(id, message);
        }
    }

    /// `PartEnd`: the part is encoded once its bytes are all read.
    pub(super) fn part_end_arrived(&self, id: u32) {
        if self.busy_reading() {
            self.part_end.set(Some(id));
        } else {
            self.end_part(id);
        }
    }
}

/// Queues a byte range; starts the reading loop if it is not running.
pub(super) fn queue_read(sh: &Rc<Shared>, r: ReadRequest) {
    sh.reads.borrow_mut().push_back(r);
    if sh.reading.replace(true) {
        return;
    }
    let sh = Rc::clone(sh);
    wasm_bindgen_futures::spawn_local(async move {
        loop {
            let next = sh.reads.borrow_mut().pop_front();
            let Some(r) = next else { break };
            if !sh.wants(r.id) {
                continue;
            }
            if let Err(message) = read_range(&sh, &r).await {
                sh.read_failed(r.id, message);
            }
        }
        sh.reading.set(false);
        if let Some(id) = sh.part_end.take() {
            sh.end_part(id);
        }
        sh.try_complete();
    });
}

pub(crate) const READ_ERROR: &str = "could not read the file (was it moved or changed?)";

/// Reads `r.blob[r.from..r.to]` into the importer, [`READ_BYTES`] at a
/// time; stops early when the import is cancelled.
pub(super) async fn read_range(sh: &Shared, r: &ReadRequest) -> Result<(), String> {
    let piece = r
        .blob
        .slice_with_f64_and_f64(r.from as f64, r.to as f64)
        .map_err(|_| READ_ERROR.to_string())?;
    let Some(reader) = byob_reader(&piece.stream()) else {
        return read_range_in_slices(sh, r, &piece).await;
    };
    let mut buf = js_sys::ArrayBuffer::new(READ_BYTES);
    let mut filled = 0u32;
    loop {
        let view =
            js_sys::Uint8Array::new_with_byte_offset_and_length(&buf, filled, READ_BYTES - filled);
        let result = JsFuture::from(reader.read_with_array_buffer_view(&view))
            .await
            .map_err(|_| READ_ERROR.to_string())?;
        let result: web_sys::ReadableStreamReadResult = result.unchecked_into();
        let done = result.get_done().unwrap_or(true);
        // The view comes back on the same memory, moved to a new buffer.
        if let Ok(value) = result.get_value().dyn_into::<js_sys::Uint8Array>() {
            buf = value.buffer();
            filled += value.length();
        }
        if filled > 0 && (done || filled == READ_BYTES) {
            let bytes = js_sys::Uint8Array::new_with_byte_offset_and_length(&buf, 0, filled);
            deliver(sh, r.id, &bytes);
            filled = 0;
        }
        if done {
            return Ok(());
        }
        if !sh.wants(r.id) {
            let _ = reader.cancel();
            return Ok(());
        }
    }
}

/// `stream.getReader({mode: "byob"})`, or `None` where a browser's blob
/// stream has no BYOB reader. That call throws there, so it is made through
/// `Function::call1`, which catches (web-sys' binding would not).
pub(super) fn byob_reader(
    stream: &web_sys::ReadableStream,
) -> Option<web_sys::ReadableStreamByobReader> {
    let get_reader: js_sys::Function = js_sys::Reflect::get(stream, &"getReader".into())
        .ok()?
        .dyn_into()
        .ok()?;
    let options = object(&[("mode", "byob".into())]);
    get_reader.call1(stream, &options).ok()?.dyn_into().ok()
}

/// Where a browser's blob stream has no BYOB reader: slices, each read
/// into a buffer of its own.
pub(super) async fn read_range_in_slices(
    sh: &Shared,
    r: &ReadRequest,
    piece: &web_sys::Blob,
) -> Result<(), String> {
    let len = r.to.saturating_sub(r.from);
    let mut at = 0u64;
    while at < len && sh.wants(r.id) {
        let end = (at + READ_BYTES as u64).min(len);
        let part = piece
            .slice_with_f64_and_f64(at as f64, end as f64)
            .map_err(|_| READ_ERROR.to_string())?;
        let buf = JsFuture::from(part.array_buffer())
            .await
            .map_err(|_| READ_ERROR.to_string())?;
        let bytes = js_sys::Uint8Array::new(&buf);
        if bytes.length() == 0 {
            break;
        }
        at += bytes.length() as u64;
        deliver(sh, r.id, &bytes);
    }
    Ok(())
}

/// Copies read bytes into wasm memory (the reused scratch buffer) and
/// hands them to the import or part under way.
pub(super) fn deliver(sh: &Shared, id: u32, bytes: &js_sys::Uint8Array) {
    if !sh.wants(id) {
        return;
    }
    let mut scratch = sh.scratch.borrow_mut();
    let n = bytes.length() as usize;
    if scratch.len() < n {
        scratch.resize(n, 0);
    }
    bytes.copy_to(&mut scratch[..n]);
    sh.chunk(id, &scratch[..n]);
}

//! The import worker: receives a file's bytes in chunks from the page,
//! feeds the core's streaming importer, and answers with a [`Summary`] or a
//! readable error; then keeps the models for the timeline, details and
//! comparisons.
//!
//! The worker reads the file itself: the page posts the `Blob` (a handle,
//! not its bytes) with a byte range, and the worker pulls that range through
//! a BYOB stream reader into one reused buffer, then into wasm memory — no
//! chunk passes through the page's thread, and no buffer is allocated per
//! chunk (measured on 400 MB: about half the time and two thirds of the
//! browser's CPU of reading slices in the page and transferring them).
//!
//! The page starts this code twice. The *primary* instance holds the
//! models. The *helper* only parses parts: for a large plain-JSON trace the
//! page sends the first half (up to an event boundary near the middle) to
//! the primary and the second half to the helper, so two cores parse at
//! once. The helper encodes its part (`Importer::finish_part`) and sends it
//! straight to the primary through a `MessagePort` the page gave both;
//! the primary merges it (`Importer::absorb_part`). If it cannot be merged
//! (the cut fell inside a pretty-printed event, a `B` is open across it,
//! the helper failed), the primary asks the page for those bytes and reads
//! them itself: the model is always the sequential one.

pub mod gl;
pub mod paint;

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent, MessagePort};

use crate::js::object;
use crate::shared::compare_view::compare_traces;
use crate::shared::protocol::{
    range_ops, shape_rows, summarize, Answer, Ask, FromWorker, ImportPhases, ToWorker,
};
use crate::shared::timeline_view::{kept_args, ArgsOf, PathMark, TimelineModel};
use crate::transfer::{Opened, Transfer};
use crate::worker::paint::Surface;
use tracelane_core::analysis::frame::Mode;
use tracelane_core::analysis::ops::op_details;
use tracelane_core::import::{import_unpacked, neuron_device, table, Finished};
use tracelane_core::{ImportOptions, Importer, Trace};

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
const PROGRESS_EVERY_MS: f64 = 150.0;

/// Bytes handed to the importer at a time. Reads are gathered until this
/// much is in (a stream read returns far less); 4 MB measured best for
/// Chromium's blob reading.
const READ_BYTES: u32 = 4 << 20;

/// `blob[from..to]` of import (or part) `id`, to be read by this worker.
struct ReadRequest {
    id: u32,
    blob: web_sys::Blob,
    from: u64,
    to: u64,
}

/// An import in the primary worker.
struct Job {
    id: u32,
    name: String,
    file_bytes: u64,
    importer: Importer,
    started_ms: f64,
    head_sent: bool,
    /// The helper's part was merged into this import: the helper's wasm
    /// memory when it sent it.
    helper_memory: Option<u64>,
    /// `Finish` arrived: where the helper's part starts, if there is one.
    finish: Option<Option<u64>>,
    /// When this worker had read all its bytes (waiting for the helper's
    /// part from then on), and how long merging the part took.
    read_all_ms: Option<f64>,
    merge_ms: f64,
    /// The file (from the first read request): args are read back from it.
    source: Option<web_sys::Blob>,
}

/// A part being parsed in the helper worker.
struct PartJob {
    id: u32,
    importer: Importer,
    /// Its bytes could not all be read: the part is not sent.
    failed: bool,
}

fn now_ms(scope: &DedicatedWorkerGlobalScope) -> f64 {
    scope.performance().map(|p| p.now()).unwrap_or(0.0)
}

/// `timeOrigin + now()`: milliseconds comparable with the page's clock.
fn epoch_ms(scope: &DedicatedWorkerGlobalScope) -> f64 {
    scope
        .performance()
        .map(|p| p.time_origin() + p.now())
        .unwrap_or(0.0)
}

fn post(scope: &DedicatedWorkerGlobalScope, msg: &FromWorker) {
    if let Ok(text) = serde_json::to_string(msg) {
        let _ = scope.post_message(&JsValue::from_str(&text));
    }
}

/// One scope's analyses under tracelane's rules, kept for the next ask.
struct ExactAnalysis {
    scope: tracelane_core::analysis::Scope,
    report: tracelane_core::analysis::WhySlow,
    marks: Vec<PathMark>,
}

/// An imported model, kept for the details panel and the timeline (one per
/// tab), with the file it came from.
struct Kept {
    id: u32,
    trace: Trace,
    timeline: TimelineModel,
    source: Option<web_sys::Blob>,
    /// The critical path last computed under each rule set, placed on lanes.
    paths: RefCell<Vec<(Mode, Vec<PathMark>)>>,
    /// The last "why is it slow" the summary's insights ran on: its scope,
    /// the report (its path's edges dropped) and the path placed on lanes.
    /// The Analyses view asking for that scope under tracelane's rules
    /// gets it without running the analyses again.
    exact_analysis: RefCell<Option<ExactAnalysis>>,
    /// The analyses' counters (queue length, copy bandwidth) are lanes.
    derived_counters: Cell<bool>,
}

impl Kept {
    /// An event's raw `args` text: kept in the model, or read back from the
    /// file at the event's source range ([`Trace::args_in_source`]).
    fn args(&self, of: ArgsOf) -> String {
        let t = &self.trace;
        if !t.args_in_source {
            return kept_args(t, of);
        }
        let (off, len) = match of {
            ArgsOf::Slice(s) => t.slices.source[s],
            ArgsOf::Instant(i) => t.instants.source[i],
        };
        let read = || -> Option<String> {
            let piece = self
                .source
                .as_ref()?
                .slice_with_f64_and_f64(off as f64, (off + len as u64) as f64)
                .ok()?;
            let buf = web_sys::FileReaderSync::new()
                .ok()?
                .read_as_array_buffer(&piece)
                .ok()?;
            let event = js_sys::Uint8Array::new(&buf).to_vec();
            let args = tracelane_core::import::event_args(&event)?;
            Some(String::from_utf8_lossy(args).into_owned())
        };
        read().unwrap_or_else(|| "{}".to_string())
    }

    /// The report with its critical path placed on the timeline's lanes
    /// and its edges dropped: the worker draws the path itself, the page
    /// gets its summary.
    fn placed(
        &self,
        mut w: tracelane_core::analysis::WhySlow,
    ) -> (tracelane_core::analysis::WhySlow, Vec<PathMark>) {
        let marks = w
            .critical_path
            .as_ref()
            .map(|c| self.timeline.place_path(&self.trace, &c.edges))
            .unwrap_or_default();
        if let Ok(c) = w.critical_path.as_mut() {
            c.edges = Vec::new();
        }
        (w, marks)
    }

    /// Runs `f` with the args reader the analyses use: the args they read
    /// (copies' bytes, syncs' events) come from the file in a few large
    /// pieces up front, anything else one event at a time.
    fn with_analysis_args<R>(&self, f: impl FnOnce(&dyn Fn(usize) -> String) -> R) -> R {
        self.with_args_of(
            tracelane_core::analysis::args_read_by_why_slow(&self.trace),
            f,
        )
    }

    /// Runs `f` with an args reader that has `slices`' args read in advance
    /// (in runs, where they are in the file), others read one by one.
    fn with_args_of<R>(
        &self,
        slices: Vec<usize>,
        f: impl FnOnce(&dyn Fn(usize) -> String) -> R,
    ) -> R {
        let read = self.args_of_many(slices);
        f(&|s: usize| {
            read.get(&s)
                .cloned()
                .unwrap_or_else(|| self.args(ArgsOf::Slice(s)))
        })
    }

    /// The args of many slices at once: their source ranges read in runs of
    /// up to 4 MB (one file read per run instead of one per event).
    fn args_of_many(&self, mut slices: Vec<usize>) -> std::collections::HashMap<usize, String> {
        let t = &self.trace;
        let mut out = std::collections::HashMap::new();
        if !t.args_in_source {
            for s in slices {
                out.insert(s, kept_args(t, ArgsOf::Slice(s)));
            }
            return out;
        }
        const RUN: u64 = 4 << 20;
        tracelane_core::sort::by_key(&mut slices, &|&s| t.slices.source[s].0);
        let mut k = 0;
        while k < slices.len() {
            let start = t.slices.source[slices[k]].0;
            let mut j = k;
            let mut end = start;
            while j < slices.len() {
                let (off, len) = t.slices.source[slices[j]];
                if off + len as u64 - start > RUN && j > k {
                    break;
                }
                end = end.max(off + len as u64);
                j += 1;
            }
            let bytes = (|| -> Option<Vec<u8>> {
                let piece = self
                    .source
                    .as_ref()?
                    .slice_with_f64_and_f64(start as f64, end as f64)
                    .ok()?;
                let buf = web_sys::FileReaderSync::new()
                    .ok()?
                    .read_as_array_buffer(&piece)
                    .ok()?;
                Some(js_sys::Uint8Array::new(&buf).to_vec())
            })();
            for &s in &slices[k..j] {
                let (off, len) = t.slices.source[s];
                let text = bytes
                    .as_ref()
                    .and_then(|b| {
                        b.get((off - start) as usize..(off - start) as usize + len as usize)
                    })
                    .and_then(tracelane_core::import::event_args)
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .unwrap_or_else(|| "{}".to_string());
                out.insert(s, text);
            }
            k = j;
        }
        out
    }
}

/// A `Blob` read like a file, [`READ_BYTES`] at a time and synchronously
/// (a worker may: it does nothing else meanwhile) — no more of it in
/// memory than the piece last read.
pub(crate) struct BlobReader {
    blob: web_sys::Blob,
    reader: web_sys::FileReaderSync,
    size: u64,
    pos: u64,
    /// The piece last read, and where it starts.
    piece: Vec<u8>,
    piece_at: u64,
}

impl BlobReader {
    pub(crate) fn new(blob: web_sys::Blob) -> Result<BlobReader, String> {
        Ok(BlobReader {
            size: blob.size() as u64,
            blob,
            reader: web_sys::FileReaderSync::new()
                .map_err(|_| "this browser cannot read files in a worker")?,
            pos: 0,
            piece: Vec::new(),
            piece_at: 0,
        })
    }

    /// Reads the piece at the current position unless it is the one held.
    fn load(&mut self) -> std::io::Result<()> {
        if self.pos >= self.piece_at && self.pos < self.piece_at + self.piece.len() as u64 {
            return Ok(());
        }
        let end = (self.pos + READ_BYTES as u64).min(self.size);
        let lost = || std::io::Error::other("could not read the file (was it moved or deleted?)");
        let slice = self
            .blob
            .slice_with_f64_and_f64(self.pos as f64, end as f64)
            .map_err(|_| lost())?;
        let buf = self
            .reader
            .read_as_array_buffer(&slice)
            .map_err(|_| lost())?;
        self.piece = js_sys::Uint8Array::new(&buf).to_vec();
        self.piece_at = self.pos;
        Ok(())
    }

    /// The rest of the piece at the current position (empty at the end),
    /// consumed.
    fn next_piece(&mut self) -> std::io::Result<&[u8]> {
        if self.pos >= self.size {
            return Ok(&[]);
        }
        self.load()?;
        let from = (self.pos - self.piece_at) as usize;
        self.pos = self.piece_at + self.piece.len() as u64;
        Ok(&self.piece[from..])
    }
}

impl std::io::Read for BlobReader {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.size || out.is_empty() {
            return Ok(0);
        }
        self.load()?;
        let from = (self.pos - self.piece_at) as usize;
        let n = out.len().min(self.piece.len() - from);
        out[..n].copy_from_slice(&self.piece[from..from + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl std::io::Seek for BlobReader {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let at = match to {
            std::io::SeekFrom::Start(n) => n as i128,
            std::io::SeekFrom::End(d) => self.size as i128 + d as i128,
            std::io::SeekFrom::Current(d) => self.pos as i128 + d as i128,
        };
        if at < 0 {
            return Err(std::io::Error::other("seek before the start of the file"));
        }
        self.pos = at as u64;
        Ok(self.pos)
    }
}

/// Reads all of `blob` into a new importer, piece by piece, calling
/// `progress` with the bytes read at most every [`PROGRESS_EVERY_MS`]; the
/// caller finishes it (the primary never opens archives itself: see
/// `Importer::finish_or_archive`).
pub(crate) fn read_blob(
    scope: &DedicatedWorkerGlobalScope,
    blob: &web_sys::Blob,
    opts: ImportOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<Importer, String> {
    let mut importer = Importer::new(opts);
    importer.set_size_hint((blob.size() as u64).min(MAX_JSON_BYTES));
    let mut reader = BlobReader::new(blob.clone())?;
    let mut sent = now_ms(scope);
    loop {
        let piece = reader.next_piece().map_err(|e| e.to_string())?;
        if piece.is_empty() {
            break;
        }
        importer.push(piece).map_err(|e| e.to_string())?;
        if now_ms(scope) - sent >= PROGRESS_EVERY_MS {
            progress(reader.pos);
            sent = now_ms(scope);
        }
    }
    Ok(importer)
}

/// A rank's summary (the ranks worker's), the collectives' args read
/// back from `source` where the model keeps them there; the model is
/// dropped.
pub(crate) fn rank_summary(
    trace: Trace,
    source: Option<web_sys::Blob>,
    name: &str,
) -> tracelane_core::analysis::ranks::RankSummary {
    // Held as a kept model only to read args back; no timeline is built.
    let kept = Kept {
        id: 0,
        trace,
        timeline: TimelineModel::new(&Trace::default()),
        source,
        paths: RefCell::new(Vec::new()),
        exact_analysis: RefCell::new(None),
        derived_counters: Cell::new(false),
    };
    kept.with_args_of(
        tracelane_core::analysis::ranks::args_read_by_summary(&kept.trace),
        |args| tracelane_core::analysis::ranks::RankSummary::of(&kept.trace, name, args),
    )
}

type Models = RefCell<Vec<Kept>>;

/// Runs `f` on the model of import `id`, if the worker still has it.
fn with_model<R>(models: &Models, id: u32, f: impl FnOnce(&Kept) -> R) -> Option<R> {
    models.borrow().iter().find(|k| k.id == id).map(f)
}

/// What the message handlers share.
struct Shared {
    scope: DedicatedWorkerGlobalScope,
    models: Models,
    surface: RefCell<Option<Surface>>,
    job: RefCell<Option<Job>>,
    part_job: RefCell<Option<PartJob>>,
    /// Encoded parts from the helper (`null`: it failed), by import id,
    /// with the helper's wasm memory at the time.
    parts: RefCell<Vec<(u32, Option<js_sys::Uint8Array>, u64)>>,
    /// The channel between the primary and the helper.
    port: RefCell<Option<MessagePort>>,
    /// Byte ranges to read, in order, and whether they are being read.
    reads: RefCell<VecDeque<ReadRequest>>,
    reading: Cell<bool>,
    /// `PartEnd` for this part came while its bytes were still being read.
    part_end: Cell<Option<u32>>,
    /// Where read bytes land in wasm memory (reused: one allocation).
    scratch: RefCell<Vec<u8>>,
    /// When the last progress message was posted.
    progress_sent: Cell<f64>,
    /// Archives and device profiles the decoder worker is opening.
    decoding: RefCell<Vec<Finishing>>,
    /// The decoder worker, once one was needed; whether it said it is
    /// ready, and what waits to be sent to it until then.
    decoder: RefCell<Option<web_sys::Worker>>,
    decoder_ready: Cell<bool>,
    decode_queue: RefCell<Vec<Transfer>>,
    /// A painted scene waiting for the next animation frame to be reported
    /// shown ([`Shared::show_after_commit`]).
    shown_pending: Cell<Option<u32>>,
    /// This value's own handle, for callbacks.
    me: std::rc::Weak<Shared>,
}

impl Shared {
    fn post(&self, msg: &FromWorker) {
        post(&self.scope, msg);
    }

    fn fail(&self, id: u32, message: String) {
        self.post(&FromWorker::Failed { id, message });
    }

    /// Tells the page how far the import got — at most every
    /// [`PROGRESS_EVERY_MS`]: each message costs the page a task and a
    /// repaint, on the same two cores the parsers use (measured: 99 progress
    /// messages and 80 repaints took 0.5 s of the page's main thread during
    /// a 1.9 s import).
    fn progress(&self, id: u32, bytes: u64) {
        let now = now_ms(&self.scope);
        if now - self.progress_sent.get() >= PROGRESS_EVERY_MS {
            self.progress_sent.set(now);
            self.post(&FromWorker::Progress { id, bytes });
        }
    }

    /// A chunk of import or part `id` (dropped if that is no longer under
    /// way here: a read that was in flight when it was cancelled).
    fn chunk(&self, id: u32, bytes: &[u8]) {
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
        drop(slot);
        self.progress(id, bytes);
        if let Some(bare) = head {
            self.post(&FromWorker::Head { id, bare });
        }
    }

    /// In the helper: encodes the finished part and sends it to the primary.
    fn end_part(&self, id: u32) {
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
    fn part_arrived(&self, id: u32, encoded: Option<js_sys::Uint8Array>, memory: u64) {
        self.parts.borrow_mut().push((id, encoded, memory));
        self.try_complete();
    }

    /// In the primary: finishes the current import once its bytes (and the
    /// helper's part, if one is expected) are all in.
    fn try_complete(&self) {
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

    fn complete(&self, j: Job) {
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
            helper_memory: j.helper_memory,
            source: j.source,
        };
        match result {
            Ok(Finished::Trace(trace)) => self.keep(done, *trace),
            Ok(Finished::Archive(bytes)) => self.decode(done, bytes),
            Err(err) => self.fail(done.id, err.to_string()),
        }
    }

    /// Hands an archive (or a lone Parquet table) to the decoder worker
    /// (started on first use); [`Shared::decoded`] takes its answer.
    fn decode(&self, done: Finishing, bytes: Vec<u8>) {
        let id = done.id;
        let Some(decoder) = self.decoder() else {
            self.fail(
                id,
                "could not start the decoder of archives and Parquet tables (this browser cannot start a worker from a worker)".into(),
            );
            return;
        };
        let archive = js_sys::Uint8Array::from(&bytes[..]);
        drop(bytes);
        self.decoding.borrow_mut().push(done);
        self.decode_queue
            .borrow_mut()
            .push(Transfer::Decode { id, archive });
        if self.decoder_ready.get() {
            self.send_decodes(&decoder);
        }
    }

    /// Posts the queued archives to the decoder (once it is ready).
    fn send_decodes(&self, decoder: &web_sys::Worker) {
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
    fn decoder(&self) -> Option<web_sys::Worker> {
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
                Some(Transfer::Decoded { id, opened }) => sh.decoded(id, opened),
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

    /// The decoder's answer for import `id`: the model is built here.
    fn decoded(&self, id: u32, opened: Result<Opened, String>) {
        let Some(mut done) = self
            .decoding
            .borrow_mut()
            .extract_if(.., |f| f.id == id)
            .next()
        else {
            return; // cancelled meanwhile
        };
        done.finishing_ms = now_ms(&self.scope);
        let trace = opened.and_then(|opened| match opened {
            Opened::Tables(t) => {
                let files = table::decode(&t.to_vec())
                    .ok_or("the decoded tables arrived damaged".to_string())?;
                neuron_device::import_decoded(files).map_err(|e| e.to_string())
            }
            Opened::File(f) => import_unpacked(&f.to_vec(), options()).map_err(|e| e.to_string()),
            Opened::Run { tables, files } => {
                let damaged = || "the run's files arrived damaged".to_string();
                let tables = table::decode(&tables.to_vec()).ok_or_else(damaged)?;
                let files = table::decode_files(&files.to_vec()).ok_or_else(damaged)?;
                tracelane_core::import::run::import_run(files, tables, options())
                    .map_err(|e| e.to_string())
            }
        });
        match trace {
            Ok(trace) => self.keep(done, trace),
            Err(why) => self.fail(id, why),
        }
    }

    /// Imports rank traces one after another (reading each `Blob` here)
    /// and keeps them stacked as one model, trace `id`.
    fn stack(
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
            helper_memory: None,
            source: None,
        };
        self.keep(done, trace);
    }

    /// Keeps an imported model and tells the page.
    fn keep(&self, done: Finishing, trace: Trace) {
        let Finishing {
            id,
            name,
            file_bytes,
            started_ms,
            finishing_ms: finishing,
            read_all_ms,
            merge_ms,
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
            link_ms: linked - finishing,
            views_ms: now_ms(&self.scope) - linked,
            wasm_memory_bytes: core::arch::wasm32::memory_size(0) as u64 * 65_536,
            workers: if helper_memory.is_some() { 2 } else { 1 },
            helper_wasm_memory_bytes: helper_memory.unwrap_or(0),
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

/// An import whose input is all in, on its way to becoming a model.
struct Finishing {
    id: u32,
    name: String,
    file_bytes: u64,
    started_ms: f64,
    /// When the importer was finished (for an archive: when the decoder
    /// answered).
    finishing_ms: f64,
    read_all_ms: Option<f64>,
    merge_ms: f64,
    helper_memory: Option<u64>,
    source: Option<web_sys::Blob>,
}

impl Shared {
    /// Posts [`FromWorker::Shown`] for `frame` from the next animation
    /// frame: by then the task that painted it has ended and its canvas
    /// frame was handed to the compositor. One callback serves every paint
    /// before it (the latest frame is reported).
    fn show_after_commit(&self, frame: u32) {
        if self.shown_pending.replace(Some(frame)).is_some() {
            return; // a callback is already waiting
        }
        let report = |weak: std::rc::Weak<Shared>| {
            move || {
                if let Some(sh) = weak.upgrade() {
                    if let Some(frame) = sh.shown_pending.take() {
                        sh.post(&FromWorker::Shown { frame });
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
    fn busy_reading(&self) -> bool {
        self.reading.get() || !self.reads.borrow().is_empty()
    }

    /// Whether import or part `id` is still wanted here.
    fn wants(&self, id: u32) -> bool {
        self.job.borrow().as_ref().is_some_and(|j| j.id == id)
            || self.part_job.borrow().as_ref().is_some_and(|p| p.id == id)
    }

    /// A read failed: the primary reports it; the helper's part is then
    /// not usable (the primary reads those bytes itself).
    fn read_failed(&self, id: u32, message: String) {
        if let Some(p) = self.part_job.borrow_mut().as_mut().filter(|p| p.id == id) {
            p.failed = true;
            return;
        }
        if self.job.borrow_mut().take_if(|j| j.id == id).is_some() {
            self.fail(id, message);
        }
    }

    /// `PartEnd`: the part is encoded once its bytes are all read.
    fn part_end_arrived(&self, id: u32) {
        if self.busy_reading() {
            self.part_end.set(Some(id));
        } else {
            self.end_part(id);
        }
    }
}

/// Queues a byte range; starts the reading loop if it is not running.
fn queue_read(sh: &Rc<Shared>, r: ReadRequest) {
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

const READ_ERROR: &str = "could not read the file (was it moved or changed?)";

/// Reads `r.blob[r.from..r.to]` into the importer, [`READ_BYTES`] at a
/// time; stops early when the import is cancelled.
async fn read_range(sh: &Shared, r: &ReadRequest) -> Result<(), String> {
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
fn byob_reader(stream: &web_sys::ReadableStream) -> Option<web_sys::ReadableStreamByobReader> {
    let get_reader: js_sys::Function = js_sys::Reflect::get(stream, &"getReader".into())
        .ok()?
        .dyn_into()
        .ok()?;
    let options = object(&[("mode", "byob".into())]);
    get_reader.call1(stream, &options).ok()?.dyn_into().ok()
}

/// Where a browser's blob stream has no BYOB reader: slices, each read
/// into a buffer of its own.
async fn read_range_in_slices(
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
fn deliver(sh: &Shared, id: u32, bytes: &js_sys::Uint8Array) {
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

pub fn start() {
    console_error_panic_hook::set_once();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let sh = Rc::new_cyclic(|me| Shared {
        me: me.clone(),
        shown_pending: Cell::new(None),
        decoding: RefCell::default(),
        decoder: RefCell::default(),
        decoder_ready: Cell::new(false),
        decode_queue: RefCell::default(),
        scope: scope.clone(),
        models: RefCell::default(),
        surface: RefCell::default(),
        job: RefCell::default(),
        part_job: RefCell::default(),
        parts: RefCell::default(),
        port: RefCell::default(),
        reads: RefCell::default(),
        reading: Cell::new(false),
        part_end: Cell::new(None),
        scratch: RefCell::default(),
        progress_sent: Cell::new(f64::NEG_INFINITY),
    });
    let idle = Rc::clone(&sh);
    let onmessage = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let data = e.data();
        match Transfer::from_js(&data) {
            Some(Transfer::Read { id, blob, from, to }) => {
                if let Some(j) = sh.job.borrow_mut().as_mut().filter(|j| j.id == id) {
                    j.source.get_or_insert_with(|| blob.clone());
                }
                queue_read(&sh, ReadRequest { id, blob, from, to });
                return;
            }
            Some(Transfer::Port { port }) => {
                // The channel to the other instance: parts arrive on it.
                let weak = Rc::downgrade(&sh);
                let on_part = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
                    if let (
                        Some(sh),
                        Some(Transfer::Part {
                            part_of,
                            encoded,
                            memory,
                        }),
                    ) = (weak.upgrade(), Transfer::from_js(&e.data()))
                    {
                        sh.part_arrived(part_of, encoded, memory);
                    }
                });
                port.set_onmessage(Some(on_part.as_ref().unchecked_ref()));
                on_part.forget();
                *sh.port.borrow_mut() = Some(port);
                return;
            }
            Some(Transfer::Part {
                part_of,
                encoded,
                memory,
            }) => {
                // From the page: the helper died before sending its part.
                sh.part_arrived(part_of, encoded, memory);
                return;
            }
            Some(Transfer::Stack {
                id,
                name,
                blobs,
                labels,
                base_ns,
            }) => {
                sh.stack(id, name, blobs, labels, base_ns);
                return;
            }
            Some(Transfer::Attach {
                id,
                rects,
                overlay,
                renderer,
            }) => {
                *sh.surface.borrow_mut() = Some(Surface::new(id, rects, overlay, &renderer));
                return;
            }
            // Between the primary and its decoder only.
            Some(Transfer::Decode { .. } | Transfer::Decoded { .. } | Transfer::DecoderReady) => {
                return
            }
            // For the ranks pool only.
            Some(
                Transfer::Rank { .. }
                | Transfer::Tables { .. }
                | Transfer::Unpack { .. }
                | Transfer::Entry { .. },
            ) => return,
            None => {}
        }
        if let Some(text) = data.as_string() {
            match serde_json::from_str::<ToWorker>(&text) {
                Ok(ToWorker::Begin { id, name, size }) => {
                    let mut importer = Importer::new(options());
                    importer.set_size_hint(size.min(MAX_JSON_BYTES));
                    sh.parts.borrow_mut().retain(|(k, _, _)| *k == id);
                    *sh.job.borrow_mut() = Some(Job {
                        id,
                        name,
                        file_bytes: size,
                        importer,
                        started_ms: now_ms(&sh.scope),
                        head_sent: false,
                        helper_memory: None,
                        finish: None,
                        read_all_ms: None,
                        merge_ms: 0.0,
                        source: None,
                    });
                }
                Ok(ToWorker::Finish { id, part_at }) => {
                    if let Some(j) = sh.job.borrow_mut().as_mut().filter(|j| j.id == id) {
                        j.finish = Some(part_at);
                    }
                    sh.try_complete();
                }
                Ok(ToWorker::Part {
                    id,
                    start,
                    bytes,
                    bare,
                }) => {
                    let mut importer = Importer::for_part(options(), bare, start);
                    // Columns sized once, not grown by doubling (which also
                    // leaves the old copies' memory behind in wasm).
                    importer.set_size_hint(bytes.min(MAX_JSON_BYTES));
                    *sh.part_job.borrow_mut() = Some(PartJob {
                        id,
                        importer,
                        failed: false,
                    });
                }
                Ok(ToWorker::PartEnd { id }) => sh.part_end_arrived(id),
                Ok(ToWorker::Cancel { id }) => {
                    sh.job.borrow_mut().take_if(|j| j.id == id);
                    sh.part_job.borrow_mut().take_if(|p| p.id == id);
                    sh.parts.borrow_mut().retain(|(k, _, _)| *k != id);
                    sh.decoding.borrow_mut().retain(|f| f.id != id);
                    sh.decode_queue
                        .borrow_mut()
                        .retain(|m| !matches!(m, Transfer::Decode { id: k, .. } if *k == id));
                    sh.reads.borrow_mut().retain(|r| r.id != id);
                    if sh.part_end.get() == Some(id) {
                        sh.part_end.set(None);
                    }
                }
                Ok(ToWorker::Close { id }) => {
                    let heap_before = crate::alloc::live_bytes();
                    sh.models.borrow_mut().retain(|k| k.id != id);
                    if sh.surface.borrow().as_ref().is_some_and(|x| x.id == id) {
                        *sh.surface.borrow_mut() = None;
                    }
                    post(
                        &sh.scope,
                        &FromWorker::Closed {
                            id,
                            heap_before,
                            heap_after: crate::alloc::live_bytes(),
                        },
                    );
                }
                Ok(ToWorker::View {
                    id,
                    frame,
                    scene,
                    sent_ms,
                }) => {
                    let surface = sh.surface.borrow();
                    let Some(surface) = surface.as_ref().filter(|x| x.id == id) else {
                        return;
                    };
                    let painted = with_model(&sh.models, id, |k| {
                        let paths = k.paths.borrow();
                        let path = scene
                            .critical_path
                            .and_then(|m| paths.iter().find(|p| p.0 == m))
                            .map(|p| p.1.as_slice());
                        surface.paint(&k.trace, &k.timeline, &scene, path, || now_ms(&sh.scope))
                    });
                    if let Some((layout_ms, paint_ms)) = painted {
                        post(
                            &sh.scope,
                            &FromWorker::Painted {
                                frame,
                                frame_ms: epoch_ms(&sh.scope) - sent_ms,
                                layout_ms,
                                paint_ms,
                                renderer: surface.renderer().into(),
                            },
                        );
                        sh.show_after_commit(frame);
                    }
                }
                Ok(ToWorker::Ask { request, ask }) => {
                    let answer = answer(&sh.models, ask);
                    post(&sh.scope, &FromWorker::Answer { request, answer });
                }
                Err(err) => web_sys::console::error_1(
                    &format!("tracelane worker: bad message: {err}").into(),
                ),
            }
        }
    });
    scope.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    post(&scope, &FromWorker::Ready);
    let warm = Closure::once_into_js(move || {
        if idle.job.borrow().is_none() && idle.part_job.borrow().is_none() {
            warm_up();
        }
    });
    let _ = scope.set_timeout_with_callback_and_timeout_and_arguments_0(
        warm.unchecked_ref(),
        WARM_UP_DELAY_MS,
    );
}

/// Answers a question about the kept models.
fn answer(models: &Models, ask: Ask) -> Result<Answer, String> {
    let gone = || "this trace is no longer open".to_string();
    let model = |id: u32| -> Result<std::cell::Ref<'_, Kept>, String> {
        std::cell::Ref::filter_map(models.borrow(), |m| m.iter().find(|k| k.id == id))
            .map_err(|_| gone())
    };
    Ok(match ask {
        Ask::Details { id, row } => Answer::Details {
            details: op_details(&model(id)?.trace, &row),
        },
        Ask::ShapeRows { id } => Answer::ShapeRows {
            rows: shape_rows(&model(id)?.trace),
        },
        Ask::Pick {
            id,
            view,
            row,
            x_px,
            hover,
        } => {
            let k = model(id)?;
            // A hover's tooltip shows no args: the file is only read for a click.
            let args = |a| {
                if hover {
                    kept_args(&k.trace, a)
                } else {
                    k.args(a)
                }
            };
            Answer::Picked {
                slice: k.timeline.pick(&k.trace, &view, row, x_px, &args),
            }
        }
        Ask::Select { id, slice } => {
            let k = model(id)?;
            Answer::Picked {
                slice: k
                    .timeline
                    .describe(&k.trace, slice as usize, &|a| k.args(a)),
            }
        }
        Ask::Find {
            id,
            highlight,
            index,
        } => {
            let k = model(id)?;
            let (count, slice) = k.timeline.find(&k.trace, &highlight, index, &|a| k.args(a));
            Answer::Found {
                count,
                index,
                slice,
            }
        }
        Ask::Compare { variants } => {
            let models = models.borrow();
            let comparison = compare_traces(&variants, |id| {
                models.iter().find(|k| k.id == id).map(|k| &k.trace)
            })?;
            Answer::Compared {
                comparison: Box::new(comparison),
            }
        }
        Ask::RangeTable {
            id,
            start_ns,
            end_ns,
        } => Answer::RangeTable {
            table: Box::new(range_ops(&model(id)?.trace, start_ns, end_ns)),
        },
        Ask::WhySlow { id, scope, mode } => {
            let k = model(id)?;
            let cached = match mode {
                Mode::Exact => k
                    .exact_analysis
                    .borrow()
                    .as_ref()
                    .filter(|a| a.scope == scope)
                    .map(|a| (a.report.clone(), a.marks.clone())),
                Mode::Hta | Mode::Hta05 => None,
            };
            let (report, marks) = match cached {
                Some(x) => x,
                None => k
                    .with_analysis_args(|args| {
                        tracelane_core::analysis::why_slow(&k.trace, &scope, mode, args)
                    })
                    .map(|w| k.placed(w))
                    .map_err(|e| e.to_string())?,
            };
            let mut paths = k.paths.borrow_mut();
            paths.retain(|p| p.0 != mode);
            paths.push((mode, marks));
            Answer::WhySlow {
                report: Box::new(report),
            }
        }
        Ask::Insights { id, scope } => {
            let k = model(id)?;
            let report = k.with_analysis_args(|args| -> Result<_, String> {
                let w = tracelane_core::analysis::why_slow(&k.trace, &scope, Mode::Exact, args)
                    .map_err(|e| e.to_string())?;
                let report =
                    tracelane_core::analysis::insights::insights_of(&k.trace, &scope, &w, args)
                        .map_err(|e| e.to_string())?;
                let (w, marks) = k.placed(w);
                *k.exact_analysis.borrow_mut() = Some(ExactAnalysis {
                    scope: scope.clone(),
                    report: w,
                    marks,
                });
                Ok(report)
            })?;
            Answer::Insights {
                report: Box::new(report),
            }
        }
        Ask::Regions { id } => Answer::Regions {
            report: Box::new(tracelane_core::analysis::regions::regions(
                &model(id)?.trace,
            )),
        },
        Ask::Engines { id, scope } => Answer::Engines {
            report: Box::new(
                tracelane_core::analysis::engines::engines(&model(id)?.trace, &scope)
                    .map_err(|e| e.to_string())?,
            ),
        },
        Ask::Roofline {
            id,
            scope,
            peak_tflops,
            peak_gbps,
        } => {
            let k = model(id)?;
            let over = tracelane_core::analysis::roofline::PeakOverride {
                flops_per_s: peak_tflops.map(|x| x * 1e12),
                bytes_per_s: peak_gbps.map(|x| x * 1e9),
            };
            let kernels = tracelane_core::analysis::roofline::args_read_by_roofline(&k.trace);
            let report = k
                .with_args_of(kernels, |args| {
                    tracelane_core::analysis::roofline::roofline(&k.trace, &scope, over, args)
                })
                .map_err(|e| e.to_string())?;
            Answer::Roofline {
                report: Box::new(report),
            }
        }
        Ask::CounterLanes { id } => {
            let series = {
                let k = model(id)?;
                if k.derived_counters.get() {
                    return Ok(Answer::Lanes { lanes: None });
                }
                k.with_analysis_args(|args| {
                    tracelane_core::analysis::device_time::counter_series(&k.trace, args)
                })
            };
            // The counters join the timeline after the existing lanes
            // (whose numbers stay).
            let mut models = models.borrow_mut();
            let k = models.iter_mut().find(|k| k.id == id).ok_or_else(gone)?;
            for (process, name, points) in &series {
                k.trace.add_counter_series(*process, name, points);
            }
            k.timeline = TimelineModel::new(&k.trace);
            k.derived_counters.set(true);
            Answer::Lanes {
                lanes: Some(k.timeline.lanes.clone()),
            }
        }
    })
}

/// When the worker warms up, after it starts (the page is idle by then).
const WARM_UP_DELAY_MS: i32 = 500;

/// Imports a small generated trace once, so the engine has compiled the
/// importer's hot code with its optimising tier before a real file comes.
/// Measured: without it, the first large import in a fresh worker parsed at
/// about half the speed of the next one — the optimising compiler runs on
/// background threads, which two busy workers on two cores starve.
fn warm_up() {
    let mut json = Vec::new();
    if tracelane_core::synth::write_kineto_trace(&mut json, 3 << 20, 1).is_err() {
        return;
    }
    // Both halves of the two-worker import too (encoding and merging a
    // part run once per import: without a warm-up they would run in the
    // engine's baseline tier, measured twice as slow).
    let mid = json.len() / 2;
    let cut = tracelane_core::import::event_boundary(&json[mid..]).map_or(json.len(), |k| mid + k);
    let two = tracelane_core::import::import_in_two(
        &json,
        cut,
        options(),
        tracelane_core::import::PartCarry::Encoded,
        1 << 20,
    );
    if let Ok(two) = two {
        let trace = two.trace;
        let timeline = TimelineModel::new(&trace);
        std::hint::black_box(summarize(&trace, &timeline, 0, "", 0, 0.0));
    }
}

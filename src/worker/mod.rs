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

mod answer;
mod bands;
mod blob;
pub mod gl;
mod imports;
mod kept;
pub mod paint;
mod runtime;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use tracelane_core::Importer;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use crate::shared::protocol::{summarize, Ask, FromWorker, TimelineSlot, ToWorker};
use crate::shared::timeline_view::{Scene, TimelineModel};
use crate::transfer::Transfer;
use crate::worker::paint::Surface;

pub(crate) use blob::{read_blob, BlobReader, READ_BYTES};
pub(crate) use imports::READ_ERROR;
pub(crate) use kept::rank_summary;
pub(crate) use runtime::{now_ms, options, MAX_JSON_BYTES, PROGRESS_EVERY_MS};

use answer::answer;
use imports::{queue_read, Job, PartJob, ReadRequest, Shared};
use kept::with_model;
use runtime::{epoch_ms, post};

pub fn start() {
    console_error_panic_hook::set_once();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let sh = Rc::new_cyclic(|me| Shared {
        me: me.clone(),
        shown_pending: RefCell::default(),
        decoding: RefCell::default(),
        decoder: RefCell::default(),
        decoder_ready: Cell::new(false),
        decode_queue: RefCell::default(),
        scope: scope.clone(),
        models: RefCell::default(),
        surfaces: RefCell::default(),
        bands: RefCell::default(),
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
        on_message(&sh, e.data());
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

/// A message from the page (or the other instance): a transfer (a `Blob`,
/// a port, bytes) or a request in JSON.
fn on_message(sh: &Rc<Shared>, data: JsValue) {
    if let Some(t) = Transfer::from_js(&data) {
        return on_transfer(sh, t);
    }
    let Some(text) = data.as_string() else {
        return;
    };
    match serde_json::from_str::<ToWorker>(&text) {
        Ok(request) => on_request(sh, request),
        Err(err) => {
            web_sys::console::error_1(&format!("tracelane worker: bad message: {err}").into())
        }
    }
}

/// Messages that carry objects: byte ranges to read, the port to the
/// other instance, parts, the files of ranks to stack, the canvas.
fn on_transfer(sh: &Rc<Shared>, t: Transfer) {
    match t {
        Transfer::Read { id, blob, from, to } => {
            if let Some(j) = sh.job.borrow_mut().as_mut().filter(|j| j.id == id) {
                j.source.get_or_insert_with(|| blob.clone());
            }
            queue_read(sh, ReadRequest { id, blob, from, to });
        }
        Transfer::Port { port } => {
            // The channel to the other instance: parts arrive on it.
            let weak = Rc::downgrade(sh);
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
        }
        Transfer::Part {
            part_of,
            encoded,
            memory,
        } => {
            // From the page: the helper died before sending its part.
            sh.part_arrived(part_of, encoded, memory);
        }
        Transfer::Stack {
            id,
            name,
            blobs,
            labels,
            base_ns,
        } => {
            sh.stack(id, name, blobs, labels, base_ns);
        }
        Transfer::Attach {
            id,
            slot,
            rects,
            overlay,
            renderer,
        } => {
            let mut surfaces = sh.surfaces.borrow_mut();
            surfaces.retain(|(s, _)| *s != slot);
            surfaces.push((slot, Surface::new(id, rects, overlay, &renderer)));
        }
        Transfer::AttachBands { id, canvas } => {
            *sh.bands.borrow_mut() = Some(bands::BandsCanvas::new(id, canvas));
        }
        // Between the primary and its decoder only.
        Transfer::Decode { .. }
        | Transfer::DecodeProgress { .. }
        | Transfer::Decoded { .. }
        | Transfer::DecoderReady => {}
        // For the ranks pool only.
        Transfer::Rank { .. }
        | Transfer::Tables { .. }
        | Transfer::Unpack { .. }
        | Transfer::Entry { .. } => {}
    }
}

/// The page's requests: imports (begin, parts, finish, cancel), closing a
/// model, painting a view, and questions about a model.
fn on_request(sh: &Rc<Shared>, request: ToWorker) {
    match request {
        ToWorker::Begin { id, name, size } => {
            let mut importer = Importer::new(options());
            importer.set_size_hint(size.min(MAX_JSON_BYTES));
            // The decoder worker reads archives and snapshots from the file.
            importer.leave_archives();
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
        ToWorker::Finish { id, part_at } => {
            if let Some(j) = sh.job.borrow_mut().as_mut().filter(|j| j.id == id) {
                j.finish = Some(part_at);
            }
            sh.try_complete();
        }
        ToWorker::Part {
            id,
            start,
            bytes,
            bare,
        } => {
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
        ToWorker::PartEnd { id } => sh.part_end_arrived(id),
        ToWorker::Cancel { id } => {
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
        ToWorker::Close { id } => {
            let heap_before = crate::alloc::live_bytes();
            sh.models.borrow_mut().retain(|k| k.id != id);
            sh.surfaces.borrow_mut().retain(|(_, x)| x.id != id);
            sh.bands.borrow_mut().take_if(|b| b.id() == id);
            post(
                &sh.scope,
                &FromWorker::Closed {
                    id,
                    heap_before,
                    heap_after: crate::alloc::live_bytes(),
                },
            );
        }
        ToWorker::View {
            id,
            slot,
            frame,
            scene,
            sent_ms,
        } => paint_view(sh, (id, slot), frame, scene, sent_ms),
        ToWorker::Ask { request, ask } => {
            let answer = match ask {
                Ask::MemoryBands {
                    id,
                    device,
                    range,
                    view,
                    width,
                    height,
                } => bands::paint(sh.bands_context(), id, device, range, view, (width, height)),
                Ask::MemoryBandAt { id, x, y } => bands::at(sh.bands_context(), id, x, y),
                Ask::Align { a, b } => {
                    // A new stage is said at once, its progress at most
                    // every PROGRESS_EVERY_MS.
                    let (mut said, mut at_ms) = ("", f64::MIN);
                    let mut tell = |stage: &'static str, done: f64| {
                        let now = now_ms(&sh.scope);
                        if stage != said || now - at_ms >= PROGRESS_EVERY_MS {
                            (said, at_ms) = (stage, now);
                            let stage = stage.into();
                            post(
                                &sh.scope,
                                &FromWorker::AskProgress {
                                    request,
                                    stage,
                                    done,
                                },
                            );
                        }
                    };
                    answer::align(&sh.models, &a, &b, &mut tell)
                }
                ask => answer(&sh.models, ask),
            };
            post(&sh.scope, &FromWorker::Answer { request, answer });
        }
    }
}

/// Paints a scene of model `id` on timeline `slot`'s canvases, and says
/// when it was.
fn paint_view(sh: &Shared, to: (u32, TimelineSlot), frame: u32, scene: Box<Scene>, sent_ms: f64) {
    let (id, slot) = to;
    let surfaces = sh.surfaces.borrow();
    let Some((_, surface)) = surfaces.iter().find(|(s, x)| *s == slot && x.id == id) else {
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
                slot,
                frame,
                frame_ms: epoch_ms(&sh.scope) - sent_ms,
                layout_ms,
                paint_ms,
                renderer: surface.renderer().into(),
            },
        );
        sh.show_after_commit(slot, frame);
    }
}

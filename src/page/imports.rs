//! The import pipeline on the page: the queue of files, the two workers
//! (the primary, which imports and keeps the models, and the helper, which
//! parses the second half of large files), reading a file by handing each
//! worker a `Blob` range, progress, cancel, and the workers' events.

use std::cell::RefCell;
use std::collections::VecDeque;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{MessageEvent, Worker};

use crate::page::client;
use crate::page::dom::{performance_mark, performance_measure, performance_span, window};
use crate::page::sources::{origin, Source};
use crate::page::state::{Status, Ui};
use crate::shared::protocol::{FromWorker, ToWorker};
use crate::transfer::Transfer;

thread_local! {
    static IMPORTS: RefCell<Imports> = RefCell::new(Imports::default());
}

/// The first bytes of a file the primary reads (enough to tell its format).
const FIRST_CHUNK_BYTES: u64 = 1 << 20;

/// Files from this size are parsed by both workers, half each.
const SPLIT_MIN_BYTES: u64 = 16 << 20;

/// Where a file is cut for the helper, in percent of its size.
const CUT_PERCENT: u64 = 53;

/// How far past the cut to look for an event boundary.
const CUT_WINDOW_BYTES: u64 = 4 << 20;

/// The workers and the queue of sources waiting for them.
#[derive(Default)]
struct Imports {
    /// The primary worker (held by [`client`]) listens.
    ready: bool,
    /// The helper worker: parses the second half of large files.
    helper: Option<Worker>,
    helper_ready: bool,
    /// The two workers share a channel (for the helper's parts).
    connected: bool,
    /// The current import's bytes (asked for again if a part is refused).
    blob: Option<web_sys::Blob>,
    /// Bytes of the current import consumed by the primary / the helper.
    progress: (u64, u64),
    /// The primary's [`FromWorker::Head`] answer for the current import.
    head: Option<Option<bool>>,
    /// The current import gave the helper a part.
    helper_used: bool,
    /// The helper has parsed a part and is replaced once no file waits.
    helper_stale: bool,
    helper_ui: Option<Ui>,
    queue: VecDeque<Source>,
    busy: bool,
    next_id: u32,
    current: u32,
    /// Imports left of the files opened together, and those done so far.
    batch_left: usize,
    batch_ids: Vec<u32>,
    /// The window the timeline of import `id` opens on (its model's ns).
    focus: Option<(u32, (i64, i64))>,
    /// Sources opened for a link: how many are still to come, the import
    /// id of each so far (`None`: it failed), and what to do once all are in.
    then: Option<(usize, Vec<Option<u32>>, AfterImports)>,
}

/// Called with the import id of each source (in order) once all are in.
pub(crate) type AfterImports = Box<dyn FnOnce(Ui, Vec<Option<u32>>)>;
pub(crate) fn spawn_worker(ui: Ui) {
    let worker = match Worker::new("./worker_loader.js") {
        Ok(w) => w,
        Err(_) => {
            ui.status.set(Status::Failed {
                name: String::new(),
                message: "this browser could not start the import worker".into(),
            });
            return;
        }
    };
    let onmessage = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let Some(text) = e.data().as_string() else {
            return;
        };
        let Ok(msg) = serde_json::from_str::<FromWorker>(&text) else {
            return;
        };
        on_worker_message(ui, msg);
    });
    worker.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    let onerror = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
        // A panic inside the worker ends it: report, restart, keep going.
        let name = match ui.status.get_untracked() {
            Status::Loading { name, .. } => name,
            _ => String::new(),
        };
        ui.status.set(Status::Failed {
            name,
            message: "internal error while importing this file (please report it with the file if you can)".into(),
        });
        if let Some(w) = client::primary() {
            w.terminate();
        }
        client::set_primary(None);
        IMPORTS.with(|i| {
            let mut i = i.borrow_mut();
            i.ready = false;
            i.busy = false;
            i.connected = false;
        });
        spawn_worker(ui);
    });
    worker.set_onerror(Some(onerror.as_ref().unchecked_ref()));
    onerror.forget();
    client::set_primary(Some(worker));
}

fn on_worker_message(ui: Ui, msg: FromWorker) {
    match msg {
        FromWorker::Ready => {
            IMPORTS.with(|i| i.borrow_mut().ready = true);
            connect_workers();
            pump(ui);
        }
        FromWorker::Progress { id, bytes } => record_progress(ui, id, false, bytes),
        FromWorker::Head { id, bare } => IMPORTS.with(|i| {
            let mut i = i.borrow_mut();
            if i.current == id {
                i.head = Some(bare);
            }
        }),
        FromWorker::NeedBytes { id, from } => {
            let blob = IMPORTS.with(|i| i.borrow().blob.clone());
            if let (Some(blob), true) = (blob, is_current(id)) {
                let size = blob.size() as u64;
                let sent = client::primary()
                    .ok_or_else(|| "the import worker is gone".to_string())
                    .and_then(|w| {
                        post_read(&w, id, &blob, (from, size))?;
                        client::post_to(&w, &ToWorker::Finish { id, part_at: None })
                    });
                if let Err(message) = sent {
                    fail_current(ui, id, message);
                }
            }
        }
        FromWorker::Done { id, summary } => {
            if !finish_job(id) {
                return;
            }
            performance_mark("tracelane:import:end");
            performance_measure(
                "tracelane:import",
                "tracelane:import:start",
                "tracelane:import:end",
            );
            // The worker's phases, as measures ending now (in order).
            if let Some(now) = window().performance().map(|p| p.now()) {
                let ph = &summary.phases;
                let views_start = now - ph.views_ms;
                let link_start = views_start - ph.link_ms;
                performance_span("tracelane:parse", link_start - ph.parse_ms, link_start);
                performance_span("tracelane:link", link_start, views_start);
                performance_span("tracelane:views", views_start, now);
            }
            // A stack of ranks opens its timeline on the collective.
            let focus = IMPORTS.with(|i| i.borrow_mut().focus.take_if(|f| f.0 == id));
            if let Some((_, (start_ns, end_ns))) = focus {
                ui.focus.set(Some(crate::page::state::Focus {
                    trace: id,
                    slice: None,
                    start_ns,
                    end_ns,
                }));
            }
            // A trace opens on its summary (what to change first).
            ui.view.set(5);
            ui.traces.update(|t| t.push(*summary));
            ui.active.set(ui.traces.with_untracked(|t| t.len() - 1));
            // Opening a file shows that file (a batch of two or more opens
            // the comparison view again once its last file is in).
            ui.compare_open.set(false);
            ui.library_open.set(false);
            ui.status.set(Status::Idle);
            batch_done(ui, Some(id));
            pump(ui);
        }
        FromWorker::Painted {
            slot,
            frame,
            frame_ms,
            layout_ms,
            paint_ms,
            renderer,
        } => crate::page::frames::on_painted(slot, frame, frame_ms, layout_ms, paint_ms, &renderer),
        FromWorker::Shown { slot, frame } => crate::page::frames::on_shown(slot, frame),
        FromWorker::Answer { request, answer } => client::answered(request, answer),
        FromWorker::AskProgress {
            request,
            stage,
            done,
        } => client::progressed(request, stage, done),
        FromWorker::Failed { id, message } => fail_current(ui, id, message),
        FromWorker::Closed {
            id,
            heap_before,
            heap_after,
        } => ui.closed.set(Some((id, heap_before, heap_after))),
    }
}

/// Closes trace `id`'s tab: the page forgets it and the worker drops its
/// model ([`FromWorker::Closed`] says what that gave back).
pub(crate) fn close(ui: Ui, id: u32) {
    let Some(k) = ui
        .traces
        .with_untracked(|t| t.iter().position(|s| s.id == id))
    else {
        return;
    };
    let active = ui.active.get_untracked();
    ui.traces.update(|t| {
        t.remove(k);
    });
    let n = ui.traces.with_untracked(|t| t.len());
    // The tab after the closed one takes its place (the one before, at the end).
    if active > k || active >= n {
        ui.active
            .set(active.saturating_sub(1).min(n.saturating_sub(1)));
    }
    ui.ranges.update(|r| r.retain(|(t, _)| *t != id));
    ui.lanes.update(|l| l.retain(|(t, _)| *t != id));
    ui.origins.update(|o| o.retain(|(t, _)| *t != id));
    ui.states.update(|s| s.retain(|(t, _)| *t != id));
    ui.variants.update(|v| v.retain(|s| s.trace != id));
    ui.last_batch.update(|b| b.retain(|t| *t != id));
    if ui.focus.get_untracked().is_some_and(|f| f.trace == id) {
        ui.focus.set(None);
    }
    if ui.path_shown.get_untracked().is_some_and(|(t, _)| t == id) {
        ui.path_shown.set(None);
    }
    if let Some(w) = client::primary() {
        let _ = client::post_to(&w, &ToWorker::Close { id });
    }
}

/// Marks the job done if it is the current one. A helper that parsed a
/// part of it is replaced by a fresh one (its grown memory goes with it) —
/// once no other file waits: a new helper takes a moment to start, and the
/// next file of a batch should not go without one.
fn finish_job(id: u32) -> bool {
    let retire = IMPORTS.with(|i| {
        let mut i = i.borrow_mut();
        if i.current != id || !i.busy {
            return None;
        }
        i.busy = false;
        i.blob = None;
        i.helper_stale |= std::mem::take(&mut i.helper_used);
        Some(i.helper_stale && i.queue.is_empty())
    });
    if retire == Some(true) {
        IMPORTS.with(|i| i.borrow_mut().helper_stale = false);
        retire_helper();
    }
    retire.is_some()
}

/// Ends the current import as cancelled; `true` if the helper had a part
/// (of this import or an earlier one).
fn finish_job_cancelled() -> bool {
    IMPORTS.with(|i| {
        let mut i = i.borrow_mut();
        i.busy = false;
        i.blob = None;
        std::mem::take(&mut i.helper_used) | std::mem::take(&mut i.helper_stale)
    })
}

fn fail_current(ui: Ui, id: u32, message: String) {
    if finish_job(id) {
        let name = match ui.status.get_untracked() {
            Status::Loading { name, .. } => name,
            _ => String::new(),
        };
        ui.status.set(Status::Failed { name, message });
        batch_done(ui, None);
        pump(ui);
    }
}

/// A worker's count of the bytes it consumed (the primary's, or the
/// helper's); the bar shows both together.
fn record_progress(ui: Ui, id: u32, from_helper: bool, bytes: u64) {
    let total = IMPORTS.with(|i| {
        let mut i = i.borrow_mut();
        (i.current == id).then(|| {
            if from_helper {
                i.progress.1 = bytes;
            } else {
                i.progress.0 = bytes;
            }
            i.progress.0 + i.progress.1
        })
    });
    if let Some(total) = total {
        ui.status.update(|s| {
            if let Status::Loading { bytes: b, .. } = s {
                *b = total;
            }
        });
    }
}

/// Tells the primary that the helper's part of import `id` will not come
/// (it then asks for those bytes and reads them itself).
fn no_part_coming(id: u32) {
    let _ = client::post_transfer(&Transfer::Part {
        part_of: id,
        encoded: None,
        memory: 0,
    });
}

/// Starts a helper worker; it is connected to the primary once both listen.
pub(crate) fn spawn_helper(ui: Ui) {
    let Ok(helper) = Worker::new("./worker_loader.js") else {
        return; // imports simply run on the primary alone
    };
    let onmessage = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let Some(msg) = e
            .data()
            .as_string()
            .and_then(|t| serde_json::from_str::<FromWorker>(&t).ok())
        else {
            return;
        };
        match msg {
            FromWorker::Ready => {
                IMPORTS.with(|i| i.borrow_mut().helper_ready = true);
                connect_workers();
            }
            FromWorker::Progress { id, bytes } => record_progress(ui, id, true, bytes),
            _ => {}
        }
    });
    helper.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    let onerror = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
        // A helper that dies leaves its part undone: the primary is told, and
        // reads those bytes itself.
        let orphan = IMPORTS.with(|i| {
            let i = i.borrow();
            (i.helper_used && i.busy).then_some(i.current)
        });
        if let Some(id) = orphan {
            no_part_coming(id);
        }
        retire_helper();
    });
    helper.set_onerror(Some(onerror.as_ref().unchecked_ref()));
    onerror.forget();
    IMPORTS.with(|i| {
        let mut i = i.borrow_mut();
        i.helper = Some(helper);
        i.helper_ready = false;
        i.connected = false;
        i.helper_ui = Some(ui);
    });
}

/// Ends the helper and starts a fresh one.
fn retire_helper() {
    let ui = IMPORTS.with(|i| {
        let mut i = i.borrow_mut();
        if let Some(h) = i.helper.take() {
            h.terminate();
        }
        i.helper_ready = false;
        i.connected = false;
        i.helper_ui
    });
    if let Some(ui) = ui {
        spawn_helper(ui);
    }
}

/// Gives the primary and the helper the two ends of a channel, once both
/// listen (a message to a worker that is still loading would be lost).
fn connect_workers() {
    IMPORTS.with(|i| {
        let mut i = i.borrow_mut();
        if i.connected || !i.ready || !i.helper_ready {
            return;
        }
        let (Some(w), Some(h)) = (client::primary(), i.helper.clone()) else {
            return;
        };
        let Ok(channel) = web_sys::MessageChannel::new() else {
            return;
        };
        let hand_over =
            |to: &Worker, port: web_sys::MessagePort| Transfer::Port { port }.post(to).is_ok();
        i.connected = hand_over(&w, channel.port1()) && hand_over(&h, channel.port2());
    });
}

pub(crate) fn enqueue(ui: Ui, sources: Vec<Source>) {
    IMPORTS.with(|i| i.borrow_mut().queue.extend(sources));
    pump(ui);
}

/// Files the user opened together: once two or more of them are imported,
/// the comparison view opens on them.
pub(crate) fn enqueue_batch(ui: Ui, sources: Vec<Source>) {
    if sources.len() >= 2 {
        IMPORTS.with(|i| {
            let mut i = i.borrow_mut();
            i.batch_left = sources.len();
            i.batch_ids.clear();
        });
    }
    enqueue(ui, sources);
}

/// Imports `sources` in order, then hands `after` the import id of each.
pub(crate) fn enqueue_then(ui: Ui, sources: Vec<Source>, after: AfterImports) {
    IMPORTS.with(|i| i.borrow_mut().then = Some((sources.len(), Vec::new(), after)));
    if sources.is_empty() {
        batch_done(ui, None);
    }
    enqueue(ui, sources);
}

/// Counts an import of the current batch as finished (`id` if it worked).
fn batch_done(ui: Ui, id: Option<u32>) {
    let after = IMPORTS.with(|i| {
        let mut i = i.borrow_mut();
        let (left, ids, _) = i.then.as_mut()?;
        if *left > 0 {
            *left -= 1;
            ids.push(id);
        }
        (*left == 0).then(|| i.then.take()).flatten()
    });
    if let Some((_, ids, after)) = after {
        after(ui, ids);
    }
    let done = IMPORTS.with(|i| {
        let mut i = i.borrow_mut();
        if i.batch_left == 0 {
            return None;
        }
        i.batch_left -= 1;
        i.batch_ids.extend(id);
        (i.batch_left == 0).then(|| std::mem::take(&mut i.batch_ids))
    });
    if let Some(ids) = done.filter(|ids| ids.len() >= 2) {
        ui.last_batch.set(ids);
        // The comparison opens on these files (not the variants last chosen).
        ui.variants.set(Vec::new());
        ui.compare_open.set(true);
    }
}

/// Starts the next queued import if the worker is free.
fn pump(ui: Ui) {
    let next = IMPORTS.with(|i| {
        let mut i = i.borrow_mut();
        if i.busy || !i.ready {
            return None;
        }
        let src = i.queue.pop_front()?;
        i.busy = true;
        i.next_id += 1;
        i.current = i.next_id;
        Some((src, i.current, client::primary()?))
    });
    let Some((src, id, worker)) = next else {
        return;
    };
    if let Some(origin) = origin(&src) {
        ui.origins.update(|o| o.push((id, origin)));
    }
    leptos::task::spawn_local(async move {
        let name = src.name();
        ui.status.set(Status::Loading {
            name: name.clone(),
            bytes: 0,
            total: 0,
        });
        performance_mark("tracelane:import:start");
        if let Err(message) = send(ui, &worker, id, &name, src).await {
            fail_current(ui, id, message);
        }
    });
}

async fn sleep_ms(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let _ = window().set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
    });
    let _ = JsFuture::from(promise).await;
}

/// Whether import `id` is still the one under way (not done, cancelled or
/// superseded).
fn is_current(id: u32) -> bool {
    IMPORTS.with(|i| {
        let i = i.borrow();
        i.busy && i.current == id
    })
}

/// A source's bytes as a `Blob`: a `File` is one already (a handle — the
/// bytes are read chunk by chunk below, never all at once).
pub(crate) async fn blob_of(src: Source) -> Result<web_sys::Blob, String> {
    let url = match src {
        Source::File(file) => return Ok(file.into()),
        Source::Bundle { blob, .. } => return Ok(blob),
        Source::Stack { .. } => return Err("a stack of ranks is not one file".into()),
        Source::Demo(name) => crate::demo_url(&name),
        Source::Url(url) => url,
    };
    let resp = crate::page::dom::fetch_ok(&url).await?;
    let blob = JsFuture::from(
        resp.blob()
            .map_err(|_| "could not read the response".to_string())?,
    )
    .await
    .map_err(|_| "could not read the response".to_string())?;
    Ok(blob.unchecked_into())
}

/// Starts reading `blob[at..end]` (in the page: the small window where a
/// file is cut).
fn read_slice(blob: &web_sys::Blob, at: u64, end: u64) -> Result<JsFuture, String> {
    let piece = blob
        .slice_with_f64_and_f64(at as f64, end as f64)
        .map_err(|_| "could not read the file".to_string())?;
    Ok(JsFuture::from(piece.array_buffer()))
}

/// Asks `worker` to read `blob[from..to]` of import `id` itself (the blob is
/// a handle: no bytes pass through the page).
fn post_read(
    worker: &Worker,
    id: u32,
    blob: &web_sys::Blob,
    (from, to): (u64, u64),
) -> Result<(), String> {
    if from >= to {
        return Ok(());
    }
    Transfer::Read {
        id,
        blob: blob.clone(),
        from,
        to,
    }
    .post(worker)
}

/// Starts reading the window after the middle of a file where [`split`]
/// looks for an event boundary.
fn read_middle(blob: &web_sys::Blob, size: u64) -> Option<(u64, JsFuture)> {
    // A little after the middle: the helper starts later (it waits for the
    // primary's first chunk) and still has to encode and send its part once
    // parsed, while the primary merges it only after both are done.
    let mid = size / 100 * CUT_PERCENT;
    let window = read_slice(blob, mid, (mid + CUT_WINDOW_BYTES).min(size)).ok()?;
    Some((mid, window))
}

/// For a large plain-JSON file, hands the helper the bytes from an event
/// boundary near the middle on; returns where its part starts.
async fn split(
    blob: &web_sys::Blob,
    id: u32,
    middle: Option<(u64, JsFuture)>,
    first: u64,
) -> Result<Option<u64>, String> {
    let size = blob.size() as u64;
    let helper = IMPORTS.with(|i| {
        let i = i.borrow();
        i.helper.clone().filter(|_| i.helper_ready && i.connected)
    });
    let (Some(helper), Some((mid, window))) = (helper, middle) else {
        return Ok(None);
    };
    let Ok(window) = window.await else {
        return Ok(None);
    };
    let window = js_sys::Uint8Array::new(&window).to_vec();
    let cut = tracelane_core::import::event_boundary(&window).map(|k| mid + k as u64);
    let Some(cut) = cut.filter(|&c| c > first) else {
        return Ok(None);
    };
    // The primary has read the first chunk: it says whether this is plain
    // Chrome JSON inside its event list.
    let bare = loop {
        if !is_current(id) {
            return Ok(None);
        }
        if let Some(head) = IMPORTS.with(|i| i.borrow().head) {
            break head;
        }
        sleep_ms(2).await;
    };
    let Some(bare) = bare else {
        return Ok(None);
    };
    let sent = client::post_to(
        &helper,
        &ToWorker::Part {
            id,
            start: cut,
            bytes: size - cut,
            bare,
        },
    )
    .and_then(|()| post_read(&helper, id, blob, (cut, size)))
    .and_then(|()| client::post_to(&helper, &ToWorker::PartEnd { id }));
    if sent.is_err() {
        return Ok(None);
    }
    IMPORTS.with(|i| i.borrow_mut().helper_used = true);
    Ok(Some(cut))
}

/// Reads a source in chunks and hands them to the workers.
async fn send(ui: Ui, worker: &Worker, id: u32, name: &str, src: Source) -> Result<(), String> {
    if let Source::Stack {
        parts,
        base_ns,
        window: (from, to),
        ..
    } = src
    {
        let total: u64 = parts.iter().map(|(_, b)| b.size() as u64).sum();
        ui.status.update(|s| {
            if let Status::Loading { total: t, .. } = s {
                *t = total;
            }
        });
        IMPORTS.with(|i| i.borrow_mut().focus = Some((id, (from - base_ns, to - base_ns))));
        let (labels, blobs) = parts.into_iter().unzip();
        return Transfer::Stack {
            id,
            name: name.to_string(),
            blobs,
            labels,
            base_ns,
        }
        .post(worker);
    }
    let blob = blob_of(src).await?;
    if !is_current(id) {
        return Ok(());
    }
    let size = blob.size() as u64;
    IMPORTS.with(|i| {
        let mut i = i.borrow_mut();
        i.blob = Some(blob.clone());
        i.progress = (0, 0);
        i.head = None;
        i.helper_used = false;
    });
    ui.status.update(|s| {
        if let Status::Loading { total, .. } = s {
            *total = size;
        }
    });
    client::post_to(
        worker,
        &ToWorker::Begin {
            id,
            name: name.to_string(),
            size,
        },
    )?;
    // A small first chunk: the primary soon says whether the file can be
    // split, and the helper starts early.
    let first = FIRST_CHUNK_BYTES.min(size);
    // The window where the file may be cut is read alongside its first chunk.
    let middle = (size >= SPLIT_MIN_BYTES)
        .then(|| read_middle(&blob, size))
        .flatten();
    post_read(worker, id, &blob, (0, first))?;
    let part_at = split(&blob, id, middle, first).await?;
    if !is_current(id) {
        return Ok(());
    }
    post_read(worker, id, &blob, (first, part_at.unwrap_or(size)))?;
    client::post_to(worker, &ToWorker::Finish { id, part_at })
}

pub(crate) fn cancel(ui: Ui) {
    let (id, worker) = IMPORTS.with(|i| {
        let mut i = i.borrow_mut();
        i.queue.clear();
        i.batch_left = 0;
        (i.current, client::primary())
    });
    // A link's sources cancelled: what is in is shown.
    if let Some((left, mut ids, after)) = IMPORTS.with(|i| i.borrow_mut().then.take()) {
        ids.extend(std::iter::repeat_n(None, left));
        after(ui, ids);
    }
    // The worker drops this import and keeps the traces it holds: the open
    // tabs stay fully usable.
    if let Some(w) = worker {
        let _ = client::post_to(&w, &ToWorker::Cancel { id });
    }
    if finish_job_cancelled() {
        retire_helper();
    }
    ui.status.set(Status::Idle);
    pump(ui);
}

/// Opens the built-in demo traces, on the comparison of the TorchNeuron
/// article's example (unless the visitor opened a trace meanwhile).
pub(crate) fn open_demo(ui: Ui) {
    ui.demo.set(true);
    ui.ranks_open.set(false);
    let sources = crate::DEMO_TRACES
        .iter()
        .map(|name| Source::Demo(name.to_string()))
        .collect();
    enqueue_then(
        ui,
        sources,
        Box::new(|ui, ids| {
            let k = crate::DEMO_TRACES
                .iter()
                .position(|n| *n == crate::DEMO_NEURON);
            let Some(trace) = k.and_then(|k| ids.get(k).copied().flatten()) else {
                return;
            };
            ui.variants.set(
                crate::DEMO_NEURON_REGIONS
                    .iter()
                    .map(|r| crate::shared::compare_view::VariantSpec {
                        trace,
                        file: crate::DEMO_NEURON.into(),
                        region: tracelane_core::analysis::Scope::named(r),
                    })
                    .collect(),
            );
            if ui.demo.get_untracked() {
                ui.ranks_open.set(false);
                ui.compare_open.set(true);
            }
        }),
    );
}

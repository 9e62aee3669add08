//! The page: drop zone, import queue, tabs, op table, diagnostics.
//!
//! The worker owns the import (it reads the file itself); this side queues
//! files, shows progress and a cancel button, and renders the [`Summary`] it gets back. Names from a trace are
//! always inserted as text (leptos escapes them), never as HTML.

use std::cell::RefCell;
use std::collections::VecDeque;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{File, MessageEvent, Worker};

use crate::client;
use crate::js::object;
use crate::protocol::{Answer, Ask, FromWorker, Summary, ToWorker};
use crate::table::{self, Column};
use crate::timeline_view::Highlight;
use crate::transfer::Transfer;
use tracelane_core::analysis::ops::{NamedStats, OpDetails, OpRow};

const ROW_PX: f64 = 28.0;

/// Where a trace comes from.
enum Source {
    File(File),
    Bytes { name: String, bytes: Vec<u8> },
    Url(String),
}

impl Source {
    fn name(&self) -> String {
        match self {
            Source::File(f) => f.name(),
            Source::Bytes { name, .. } => name.clone(),
            Source::Url(u) => u.rsplit('/').next().unwrap_or(u).to_string(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Status {
    Idle,
    Loading {
        name: String,
        bytes: u64,
        total: u64,
    },
    Failed {
        name: String,
        message: String,
    },
}

/// The page's state: plain signals, shared through context.
#[derive(Clone, Copy)]
pub struct Ui {
    pub traces: RwSignal<Vec<Summary>>,
    pub active: RwSignal<usize>,
    status: RwSignal<Status>,
    demo: RwSignal<bool>,
    dragging: RwSignal<bool>,
    /// The op-table row whose occurrences the timeline highlights.
    pub table_highlight: RwSignal<Option<Highlight>>,
    /// The comparison view is showing (instead of a trace).
    pub compare_open: RwSignal<bool>,
    /// Import ids of the last files opened together.
    pub last_batch: RwSignal<Vec<u32>>,
    /// The last range selected on each trace's timeline (by import id).
    pub ranges: RwSignal<Vec<(u32, (i64, i64))>>,
}

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
}

pub(crate) fn window() -> web_sys::Window {
    web_sys::window().expect("a browser window")
}

pub(crate) fn performance_mark(name: &str) {
    if let Some(p) = window().performance() {
        let _ = p.mark(name);
    }
}

/// A `performance.measure` over explicit times (ms since time origin).
pub(crate) fn performance_span(name: &str, start: f64, end: f64) {
    let Some(perf) = window().performance() else {
        return;
    };
    let options = object(&[("start", start.into()), ("end", end.into())]);
    if let Ok(measure) = js_sys::Reflect::get(&perf, &"measure".into()) {
        let measure: js_sys::Function = measure.unchecked_into();
        let _ = measure.call2(&perf, &name.into(), &options);
    }
}

pub(crate) fn performance_measure(name: &str, start: &str, end: &str) {
    if let Some(p) = window().performance() {
        let _ = p.measure_with_start_mark_and_end_mark(name, start, end);
    }
}

fn spawn_worker(ui: Ui) {
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
            ui.traces.update(|t| t.push(*summary));
            ui.active.set(ui.traces.with_untracked(|t| t.len() - 1));
            // Opening a file shows that file (a batch of two or more opens
            // the comparison view again once its last file is in).
            ui.compare_open.set(false);
            ui.status.set(Status::Idle);
            batch_done(ui, Some(id));
            pump(ui);
        }
        FromWorker::Painted {
            frame,
            frame_ms,
            layout_ms,
            paint_ms,
            renderer,
        } => crate::timeline_page::on_painted(frame, frame_ms, layout_ms, paint_ms, &renderer),
        FromWorker::Answer { request, answer } => client::answered(request, answer),
        FromWorker::Failed { id, message } => fail_current(ui, id, message),
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
fn spawn_helper(ui: Ui) {
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

fn enqueue(ui: Ui, sources: Vec<Source>) {
    IMPORTS.with(|i| i.borrow_mut().queue.extend(sources));
    pump(ui);
}

/// Files the user opened together: once two or more of them are imported,
/// the comparison view opens on them.
fn enqueue_batch(ui: Ui, sources: Vec<Source>) {
    if sources.len() >= 2 {
        IMPORTS.with(|i| {
            let mut i = i.borrow_mut();
            i.batch_left = sources.len();
            i.batch_ids.clear();
        });
    }
    enqueue(ui, sources);
}

/// Counts an import of the current batch as finished (`id` if it worked).
fn batch_done(ui: Ui, id: Option<u32>) {
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
async fn blob_of(src: Source) -> Result<web_sys::Blob, String> {
    match src {
        Source::File(file) => Ok(file.into()),
        Source::Bytes { bytes, .. } => {
            let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(&bytes[..]));
            web_sys::Blob::new_with_u8_array_sequence(&parts)
                .map_err(|_| "could not hold the trace in memory".to_string())
        }
        Source::Url(url) => {
            let resp = JsFuture::from(window().fetch_with_str(&url))
                .await
                .map_err(|_| format!("could not fetch {url} (network error, or the server does not allow this page to read it: CORS)"))?;
            let resp: web_sys::Response = resp.unchecked_into();
            if !resp.ok() {
                return Err(format!("could not fetch {url}: HTTP {}", resp.status()));
            }
            let blob = JsFuture::from(
                resp.blob()
                    .map_err(|_| "could not read the response".to_string())?,
            )
            .await
            .map_err(|_| "could not read the response".to_string())?;
            Ok(blob.unchecked_into())
        }
    }
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

fn cancel(ui: Ui) {
    let (id, worker) = IMPORTS.with(|i| {
        let mut i = i.borrow_mut();
        i.queue.clear();
        i.batch_left = 0;
        (i.current, client::primary())
    });
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

fn files_from(list: Option<web_sys::FileList>) -> Vec<Source> {
    let Some(list) = list else { return Vec::new() };
    (0..list.length())
        .filter_map(|k| list.get(k))
        .map(Source::File)
        .collect()
}

pub(crate) fn download(name: &str, mime: &str, text: &str) {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    let doc = window().document().expect("a document");
    if let Ok(a) = doc.create_element("a") {
        let a: web_sys::HtmlAnchorElement = a.unchecked_into();
        a.set_href(&url);
        a.set_download(name);
        a.click();
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}

pub fn start() {
    // A panic must not leave a silently dead page: log it, and say so in the
    // page in plain words.
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
            return;
        };
        let (Ok(el), Some(body)) = (doc.create_element("div"), doc.body()) else {
            return;
        };
        el.set_class_name("status error");
        let _ = el.set_attribute("role", "alert");
        let _ = el.set_attribute("id", "fatal-error");
        el.set_text_content(Some(
            "tracelane hit an internal error and needs a reload. Your files never left this computer; \
             if you can, report the problem with the file that caused it.",
        ));
        let _ = body.prepend_with_node_1(&el);
    }));
    leptos::mount::mount_to_body(App);
}

#[component]
fn App() -> impl IntoView {
    let ui = Ui {
        traces: RwSignal::new(Vec::new()),
        active: RwSignal::new(0),
        status: RwSignal::new(Status::Idle),
        demo: RwSignal::new(true),
        dragging: RwSignal::new(false),
        table_highlight: RwSignal::new(None),
        compare_open: RwSignal::new(false),
        ranges: RwSignal::new(Vec::new()),
        last_batch: RwSignal::new(Vec::new()),
    };
    provide_context(ui);
    spawn_worker(ui);
    spawn_helper(ui);

    // ?url=… loads a trace the browser fetches itself; otherwise the demo.
    let params = window()
        .location()
        .search()
        .ok()
        .and_then(|s| web_sys::UrlSearchParams::new_with_str(&s).ok());
    match params.and_then(|p| p.get("url")) {
        Some(url) => {
            ui.demo.set(false);
            enqueue(ui, vec![Source::Url(url)]);
        }
        None => enqueue(
            ui,
            crate::DEMO_TRACES
                .iter()
                .map(|(name, bytes)| Source::Bytes {
                    name: name.to_string(),
                    bytes: bytes.to_vec(),
                })
                .collect(),
        ),
    }

    let picker: NodeRef<leptos::html::Input> = NodeRef::new();
    let on_drop = move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        ui.dragging.set(false);
        let files = files_from(ev.data_transfer().and_then(|d| d.files()));
        if !files.is_empty() {
            ui.demo.set(false);
            enqueue_batch(ui, files);
        }
    };
    view! {
        <div
            class="page"
            class:dragging=move || ui.dragging.get()
            on:dragover=move |ev: web_sys::DragEvent| {
                ev.prevent_default();
                ui.dragging.set(true);
            }
            on:dragleave=move |_| ui.dragging.set(false)
            on:drop=on_drop
        >
            <header>
                <h1>"tracelane"</h1>
                <span class="tagline">"PyTorch profiler traces, analysed in your browser — nothing is uploaded"</span>
                <label class="button" for="file-input">"Open trace…"</label>
                <input
                    id="file-input"
                    type="file"
                    multiple
                    accept=".json,.gz,.pftrace,.perfetto-trace,.pb,application/json,application/gzip"
                    node_ref=picker
                    on:change=move |_| {
                        let files = files_from(picker.get().and_then(|i| i.files()));
                        if !files.is_empty() {
                            ui.demo.set(false);
                            enqueue_batch(ui, files);
                        }
                        if let Some(i) = picker.get() {
                            i.set_value("");
                        }
                    }
                />
            </header>
            <Show when=move || ui.demo.get()>
                <p class="demo-line" id="demo-line">
                    "You are looking at built-in demo traces: RMSNorm as six eager ops, as "
                    <code>"torch.rms_norm"</code>
                    ", and under "
                    <code>"torch.compile"</code>
                    " (PyTorch 2.15, CPU), and a ROCm training step with kernels. Drop your own "
                    <code>".json"</code>
                    " / "
                    <code>".json.gz"</code>
                    " trace anywhere on the page, or use Open trace."
                </p>
            </Show>
            <StatusBar/>
            <Tabs/>
            {move || {
                if ui.compare_open.get() {
                    return Some(view! { <crate::compare_page::ComparePanel/> }.into_any());
                }
                let traces = ui.traces.get();
                let k = ui.active.get();
                traces.get(k).cloned().map(|s| view! { <TraceView summary=s/> }.into_any())
            }}
            <div class="drop-hint">"Drop trace files to open them"</div>
        </div>
    }
}

#[component]
fn StatusBar() -> impl IntoView {
    let ui: Ui = expect_context();
    move || {
        match ui.status.get() {
        Status::Idle => None,
        Status::Loading { name, bytes, total } => {
            let pct = if total > 0 { bytes as f64 * 100.0 / total as f64 } else { 0.0 };
            Some(
                view! {
                    <div class="status loading" role="status">
                        <span>{format!("Importing {name}…")}</span>
                        <progress max="100" value=pct.to_string()></progress>
                        <span class="muted">
                            {if total > 0 {
                                format!("{} of {}", table::fmt_bytes(bytes), table::fmt_bytes(total))
                            } else {
                                table::fmt_bytes(bytes)
                            }}
                        </span>
                        <button on:click=move |_| cancel(ui)>"Cancel"</button>
                    </div>
                }
                .into_any(),
            )
        }
        Status::Failed { name, message } => Some(
            view! {
                <div class="status error" role="alert" id="import-error">
                    <strong>{if name.is_empty() { "Could not open the file".to_string() } else { format!("Could not open {name}") }}</strong>
                    ": "
                    {message}
                    <button on:click=move |_| ui.status.set(Status::Idle)>"Dismiss"</button>
                </div>
            }
            .into_any(),
        ),
    }
    }
}

#[component]
fn Tabs() -> impl IntoView {
    let ui: Ui = expect_context();
    move || {
        let names: Vec<String> = ui
            .traces
            .with(|t| t.iter().map(|s| s.name.clone()).collect());
        (!names.is_empty()).then(|| {
            view! {
                <nav class="tabs" role="tablist">
                    {names
                        .into_iter()
                        .enumerate()
                        .map(|(k, name)| {
                            view! {
                                <button
                                    role="tab"
                                    class:active=move || ui.active.get() == k && !ui.compare_open.get()
                                    aria-selected=move || (ui.active.get() == k && !ui.compare_open.get()).to_string()
                                    on:click=move |_| { ui.active.set(k); ui.compare_open.set(false); }
                                >
                                    {name}
                                </button>
                            }
                        })
                        .collect_view()}
                    <button
                        id="open-compare"
                        class="compare-tab"
                        class:active=move || ui.compare_open.get()
                        aria-pressed=move || ui.compare_open.get().to_string()
                        title="Compare traces or regions side by side: eager vs fused vs torch.compile"
                        on:click=move |_| ui.compare_open.set(true)
                    >
                        "Compare…"
                    </button>
                </nav>
            }
        })
    }
}

#[component]
fn TraceView(summary: Summary) -> impl IntoView {
    let s = summary;
    let headline = format!(
        "{} events, {} in {:.2} s{}",
        table::fmt_count(s.events),
        table::fmt_bytes(s.json_bytes),
        s.import_ms / 1000.0,
        if s.phases.workers > 1 {
            " (two workers)"
        } else {
            ""
        }
    );
    let devices = if s.devices.is_empty() && s.diagnostics.format.starts_with("Perfetto") {
        "no device lanes (Perfetto tracks do not say which are devices)".to_string()
    } else if s.devices.is_empty() {
        "no device lanes (a CPU-only capture)".to_string()
    } else {
        s.devices.join(", ")
    };
    let span = table::fmt_ns(s.span_ns as f64);
    let diag = s.diagnostics.clone();
    let timeline = RwSignal::new(false);
    let s2 = s.clone();
    view! {
        <section class="trace">
            <div class="facts" id="trace-facts"
                data-parse-ms=s.phases.parse_ms data-link-ms=s.phases.link_ms data-views-ms=s.phases.views_ms
                data-merge-ms=s.phases.merge_ms data-part-wait-ms=s.phases.part_wait_ms
                data-wasm-memory-bytes=s.phases.wasm_memory_bytes data-json-bytes=s.json_bytes
                data-workers=s.phases.workers
                data-helper-wasm-memory-bytes=s.phases.helper_wasm_memory_bytes>
                <strong class="file-name">{s.name.clone()}</strong>
                <span id="import-headline">{headline}</span>
                <span>{format!("file {}", table::fmt_bytes(s.file_bytes))}</span>
                <span>{format!("span {span}")}</span>
                <span>{format!("{} slices", table::fmt_count(s.slices))}</span>
                <span class="devices">{devices}</span>
                {diag.truncated.then(|| view! { <span class="badge warn">"truncated file: complete events kept"</span> })}
            </div>
            <div class="view-switch" role="tablist">
                <button role="tab" id="show-table" class:active=move || !timeline.get() on:click=move |_| timeline.set(false)>"Op table"</button>
                <button role="tab" id="show-timeline" class:active=move || timeline.get() on:click=move |_| timeline.set(true)>"Timeline"</button>
            </div>
            {move || if timeline.get() {
                view! { <crate::timeline_page::TimelineView summary=s2.clone()/> }.into_any()
            } else {
                view! { <OpTable summary=s.clone()/> }.into_any()
            }}
            <Diagnostics diag=diag/>
        </section>
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Group {
    Name,
    Shape,
}

#[component]
pub(crate) fn OpTable(summary: Summary) -> impl IntoView {
    let totals = table::Totals {
        cpu_self_ns: summary.self_cpu_total_ns,
        device_self_ns: summary.self_device_total_ns,
    };
    let trace_id = summary.id;
    let first_sort = tracelane_core::export::default_sort(&summary.rows_by_name);
    let by_name = StoredValue::new(summary.rows_by_name);
    // By shape: asked of the worker the first time the table is grouped so.
    let by_shape = RwSignal::new(summary.rows_by_shape);
    let shape_asked = RwSignal::new(false);
    let file = summary.name;
    let query = RwSignal::new(String::new());
    let use_regex = RwSignal::new(false);
    let group = RwSignal::new(Group::Name);
    let show_device_rows = RwSignal::new(true);
    let top = RwSignal::new(0usize);
    let sort = RwSignal::new((first_sort, true));
    let selected = RwSignal::new(None::<OpRow>);
    // The timeline highlights every occurrence of the selected row.
    let ui: Ui = expect_context();
    Effect::new(move |_| {
        if let Some(r) = selected.get() {
            ui.table_highlight
                .set(Some(crate::table::highlight_for(&r)));
        }
    });
    let scroll = RwSignal::new(0.0f64);
    let regex_error = RwSignal::new(None::<String>);

    Effect::new(move |_| {
        if group.get() == Group::Shape
            && by_shape.with_untracked(Option::is_none)
            && !shape_asked.get_untracked()
        {
            shape_asked.set(true);
            leptos::task::spawn_local(async move {
                if let Ok(Answer::ShapeRows { rows }) =
                    client::ask(Ask::ShapeRows { id: trace_id }).await
                {
                    by_shape.set(Some(rows));
                }
            });
        }
    });
    let rows = Memo::new(move |_| {
        let mut rows: Vec<OpRow> = match group.get() {
            Group::Name => by_name.get_value(),
            Group::Shape => by_shape.get().unwrap_or_default(),
        };
        let q = query.get();
        let show_dev = show_device_rows.get();
        rows.retain(|r| show_dev || !r.is_device);
        if use_regex.get() && !q.is_empty() {
            match js_sys::RegExp::new(&q, "i") {
                re if re.is_object() => {
                    regex_error.set(None);
                    rows.retain(|r| re.test(&r.name));
                }
                _ => regex_error.set(Some("not a valid regular expression".into())),
            }
        } else {
            regex_error.set(None);
            rows.retain(|r| table::matches_substring(r, &q));
        }
        let (col, desc) = sort.get();
        table::sort_rows(&mut rows, col, desc);
        let n = top.get();
        if n > 0 {
            rows.truncate(n);
        }
        rows
    });
    let columns = move || {
        Column::ALL
            .into_iter()
            .filter(|&c| c != Column::Shapes || group.get() == Group::Shape)
            .collect::<Vec<_>>()
    };
    let export_csv = move |_| {
        let text = table::to_csv(&rows.get_untracked(), group.get_untracked() == Group::Shape);
        download(&format!("{file}.ops.csv"), "text/csv", &text);
    };
    let export_md = move |_| {
        let text = table::to_markdown(
            &rows.get_untracked(),
            group.get_untracked() == Group::Shape,
            totals,
        );
        let _ = window().navigator().clipboard().write_text(&text);
        download("ops.md", "text/markdown", &text);
    };
    let viewport_px = 560.0;
    view! {
        <div class="controls">
            <input
                type="search"
                id="filter"
                placeholder="Filter by name"
                aria-label="Filter rows by name"
                on:input=move |ev| query.set(event_target_value(&ev))
            />
            <label>
                <input type="checkbox" id="filter-regex" on:change=move |ev| use_regex.set(event_target_checked(&ev))/>
                "regex"
            </label>
            {move || regex_error.get().map(|e| view! { <span class="error-text">{e}</span> })}
            {move || (group.get() == Group::Shape && by_shape.with(Option::is_none)).then(|| view! {
                <span class="muted" id="shapes-loading">"grouping by input shapes…"</span>
            })}
            <label>
                "Group by "
                <select
                    id="group-by"
                    on:change=move |ev| group.set(if event_target_value(&ev) == "shape" { Group::Shape } else { Group::Name })
                >
                    <option value="name">"name"</option>
                    <option value="shape">"name + input shapes"</option>
                </select>
            </label>
            <label>
                <input type="checkbox" id="show-device" checked on:change=move |ev| show_device_rows.set(event_target_checked(&ev))/>
                "device-event rows"
            </label>
            <label>
                "Top "
                <select id="top-n" on:change=move |ev| top.set(event_target_value(&ev).parse().unwrap_or(0))>
                    <option value="0">"all"</option>
                    <option value="10">"10"</option>
                    <option value="25">"25"</option>
                    <option value="100">"100"</option>
                </select>
            </label>
            <button id="export-csv" on:click=export_csv>"Export CSV"</button>
            <button id="export-md" on:click=export_md>"Copy Markdown"</button>
            <span class="muted" id="row-count">{move || format!("{} rows", rows.with(|r| r.len()))}</span>
        </div>
        // `data-group` / `data-ready`: which grouping the rows show, and
        // whether its rows have arrived (by-shape rows come from the worker
        // when first asked for) — what tests wait on.
        <div class="table" role="table" aria-label="Operators"
            data-group=move || if group.get() == Group::Shape { "shape" } else { "name" }
            data-ready=move || (group.get() == Group::Name || by_shape.with(Option::is_some)).to_string()>
            <div class="thead" role="row">
                {move || {
                    columns()
                        .into_iter()
                        .map(|c| {
                            let arrow = move || match sort.get() {
                                (col, true) if col == c => " ▼",
                                (col, false) if col == c => " ▲",
                                _ => "",
                            };
                            view! {
                                <button
                                    class="th"
                                    class:num=c.descending_first()
                                    role="columnheader"
                                    data-col=c.title()
                                    on:click=move |_| {
                                        sort.update(|(col, desc)| {
                                            if *col == c {
                                                *desc = !*desc;
                                            } else {
                                                *col = c;
                                                *desc = c.descending_first();
                                            }
                                        })
                                    }
                                >
                                    {c.title()}
                                    {arrow}
                                </button>
                            }
                        })
                        .collect_view()
                }}
            </div>
            <div
                class="tbody"
                style=format!("height:{viewport_px}px")
                data-first-row=move || rows.with(|r| table::visible_range(scroll.get(), viewport_px, ROW_PX, r.len(), 8).0)
                on:scroll=move |ev| {
                    let el: web_sys::Element = event_target(&ev);
                    scroll.set(el.scroll_top() as f64);
                }
            >
                <div style=move || format!("height:{}px;position:relative", rows.with(|r| r.len()) as f64 * ROW_PX)>
                    {move || {
                        let cols = columns();
                        let (a, b) = rows.with(|r| table::visible_range(scroll.get(), viewport_px, ROW_PX, r.len(), 8));
                        rows.with(|r| {
                            r[a..b]
                                .iter()
                                .enumerate()
                                .map(|(k, row)| {
                                    let top_px = (a + k) as f64 * ROW_PX;
                                    let row_c = row.clone();
                                    let cells = cols
                                        .iter()
                                        .map(|&c| {
                                            view! { <span class="td" class:num=c.descending_first()>{table::cell(row, c, totals)}</span> }
                                        })
                                        .collect_view();
                                    let is_sel = selected.with(|s| s.as_ref() == Some(row));
                                    view! {
                                        <div
                                            class="tr"
                                            class:device=row.is_device
                                            class:selected=is_sel
                                            role="row"
                                            tabindex="0"
                                            style=format!("top:{top_px}px")
                                            on:click={
                                                let r = row_c.clone();
                                                move |_| selected.set(Some(r.clone()))
                                            }
                                            on:keydown=move |ev: web_sys::KeyboardEvent| {
                                                if ev.key() == "Enter" {
                                                    selected.set(Some(row_c.clone()));
                                                }
                                            }
                                        >
                                            {cells}
                                        </div>
                                    }
                                })
                                .collect_view()
                        })
                    }}
                </div>
            </div>
        </div>
        {move || selected.get().map(|r| view! { <RowDetails row=r totals=totals trace_id=trace_id/> })}
    }
}

#[component]
fn RowDetails(row: OpRow, totals: table::Totals, trace_id: u32) -> impl IntoView {
    let details_answer = RwSignal::new(None::<OpDetails>);
    let question = Ask::Details {
        id: trace_id,
        row: row.clone(),
    };
    leptos::task::spawn_local(async move {
        if let Ok(Answer::Details { details }) = client::ask(question).await {
            details_answer.set(Some(details));
        }
    });
    let details = move || details_answer.get();
    let kind = if row.is_device {
        "device event"
    } else if row.is_user_annotation {
        "annotation"
    } else {
        "host event"
    };
    let items: Vec<(&str, String)> = vec![
        ("Calls", table::fmt_count(row.calls)),
        ("CPU total", table::cell(&row, Column::CpuTotal, totals)),
        ("CPU self", table::cell(&row, Column::CpuSelf, totals)),
        ("CPU avg", table::cell(&row, Column::CpuAvg, totals)),
        (
            "Device total",
            table::cell(&row, Column::DeviceTotal, totals),
        ),
        ("Device self", table::cell(&row, Column::DeviceSelf, totals)),
        ("Device avg", table::cell(&row, Column::DeviceAvg, totals)),
    ];
    view! {
        <aside class="details" id="row-details" aria-label="Row details">
            <h2>{row.name.clone()}</h2>
            <p class="muted">{kind}</p>
            {row.input_shapes.clone().map(|s| view! { <p>"Input shapes: " <code>{s}</code></p> })}
            <dl>
                {items.into_iter().map(|(k, v)| view! { <dt>{k}</dt><dd>{v}</dd> }).collect_view()}
            </dl>
            {move || details().map(|d| view! { <DetailLists d=d is_device=row.is_device/> })}
        </aside>
    }
}

#[component]
fn Diagnostics(diag: crate::protocol::DiagnosticsView) -> impl IntoView {
    let warnings = diag.warnings.clone();
    let count: u64 = warnings.iter().map(|w| w.count).sum();
    let open = diag.truncated || count > 0;
    view! {
        <details class="diagnostics" id="diagnostics" open=open>
            <summary>{format!("Import diagnostics — {count} warning(s)")}</summary>
            <p>{format!("Format: {}", diag.format)}</p>
            <p>{diag.time_unit_decision.clone()}</p>
            <h3>"Links"</h3>
            <ul class="links">
                {diag.links.iter().map(|(k, v)| view! { <li>{format!("{}: {}", k.replace('_', " "), v)}</li> }).collect_view()}
            </ul>
            <h3>"Events"</h3>
            <p>{diag.events_by_phase.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")}</p>
            <p>{diag.events_by_category.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")}</p>
            <h3>"Warnings"</h3>
            {if warnings.is_empty() {
                view! { <p>"none"</p> }.into_any()
            } else {
                view! {
                    <ul class="warnings">
                        {warnings
                            .into_iter()
                            .map(|w| {
                                view! {
                                    <li>
                                        <strong>{format!("{} × ", w.count)}</strong>
                                        {w.message}
                                        {(!w.example.is_empty()).then(|| view! { <pre>{w.example.clone()}</pre> })}
                                    </li>
                                }
                            })
                            .collect_view()}
                    </ul>
                }
                .into_any()
            }}
        </details>
    }
}

fn stats_table(title: &'static str, stats: Vec<NamedStats>) -> impl IntoView {
    (!stats.is_empty()).then(|| {
        view! {
            <h3>{title}</h3>
            <table class="stats">
                <thead>
                    <tr><th>"Name"</th><th>"Count"</th><th>"Total"</th><th>"Avg"</th><th>"Min"</th><th>"Max"</th></tr>
                </thead>
                <tbody>
                    {stats
                        .into_iter()
                        .map(|s| {
                            let avg = s.total_ns as f64 / s.count.max(1) as f64;
                            view! {
                                <tr>
                                    <td class="name">{s.name}</td>
                                    <td>{table::fmt_count(s.count)}</td>
                                    <td>{table::fmt_ns(s.total_ns as f64)}</td>
                                    <td>{table::fmt_ns(avg)}</td>
                                    <td>{table::fmt_ns(s.min_ns as f64)}</td>
                                    <td>{table::fmt_ns(s.max_ns as f64)}</td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        }
    })
}

#[component]
fn DetailLists(d: OpDetails, is_device: bool) -> impl IntoView {
    let (launched, calls, parents) = if is_device {
        ("These device events", "Launched by", "Launching op")
    } else {
        (
            "Device events it launched",
            "Runtime calls it made",
            "Called from",
        )
    };
    let none = (d.device_events.is_empty() && !is_device)
        .then(|| view! { <p class="muted">"It launched no device work."</p> });
    view! {
        <div id="row-details-lists">
            {none}
            {stats_table(launched, d.device_events)}
            {stats_table(calls, d.runtime_calls)}
            {(!d.input_types.is_empty()).then(|| view! {
                <h3>"Input types"</h3>
                <ul>{d.input_types.into_iter().map(|(t, n)| view! { <li><code>{t}</code>{format!(" × {n}")}</li> }).collect_view()}</ul>
            })}
            <h3>{parents}</h3>
            <ul>{d.parents.into_iter().map(|(p, n)| view! { <li>{p}{format!(" × {n}")}</li> }).collect_view()}</ul>
        </div>
    }
}

//! A distributed run in the page: a pool of ranks workers (as many as
//! `navigator.hardwareConcurrency` allows, at most [`MAX_WORKERS`]; their
//! module is downloaded when the first run is opened) reduces each rank's
//! trace to its summary and keeps no model; one of them combines the
//! summaries into the report and lays it out (`shared::ranks_view`); the
//! page shows the import's progress per rank, then renders the report with
//! the generic renderer (`page::report`).
//!
//! Signals for tests: `#ranks-panel` carries `data-state` (`importing`,
//! `combining`, `ready`), `data-files`, `data-done` (files summarised,
//! failed or passed over), `data-summarised`, `data-export` (the Parquet
//! download: `writing`, `done`, `failed`), and for benchmarks
//! `data-import-ms` and `data-worker-memory` (the largest worker's wasm
//! memory, bytes).

use std::cell::RefCell;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{File, MessageEvent, Worker};

use crate::page::dom::window;
use crate::page::rank_set::{ExportState, RankEntry, RankSet, RankState};
use crate::page::state::Ui;
use crate::shared::protocol::{FromRanks, ToRanks};
use crate::shared::report_view::ReportView;
use crate::shared::table;
use crate::transfer::Transfer;

/// Workers in the pool at most: each holds one rank's model while it
/// imports it (its wasm memory stays at that peak until the run is in).
const MAX_WORKERS: usize = 8;

struct PoolWorker {
    worker: Worker,
    ready: bool,
    busy: Option<usize>,
}

/// The pool and what it works on (one run at a time).
#[derive(Default)]
struct Pool {
    generation: u32,
    workers: Vec<PoolWorker>,
    /// The run's trace files (name, file), kept to read again.
    files: Vec<(String, web_sys::Blob)>,
    /// Archives of traces being unpacked before the run opens.
    unpacking: Option<Unpacking>,
    from_folder: bool,
    /// The files to (re)import, by index, and how many were handed out.
    queue: Vec<usize>,
    next: usize,
    /// Each rank's summary as the worker sent it (JSON text, not read here).
    summaries: Vec<Option<String>>,
    /// A columnar export being written.
    export: Option<Export>,
}

/// The Parquet download of a run: each rank file's own tables (written by
/// the pool while it imports the file again), then the run's tables of
/// each rank, bundled as one tar in the export's layout.
struct Export {
    job: String,
    /// Per rank file: (table, Parquet file).
    traces: Vec<Vec<(String, web_sys::Blob)>>,
    /// The rank files whose summaries were sent for the run's tables, in
    /// that order.
    order: Vec<usize>,
    /// Per summary sent: (path, Parquet file) of the run's tables.
    run: Vec<Vec<(String, web_sys::Blob)>>,
}

/// Archives of rank traces being read, one after another, by one worker
/// of the pool, before their traces open as the run.
struct Unpacking {
    archives: Vec<File>,
    next: usize,
    /// Traces so far (name, bytes as a `Blob`): the plain files picked
    /// with the archives, then each archive's.
    traces: Vec<(String, web_sys::Blob)>,
    /// Entries not named like a trace, and archives that could not be
    /// read (name, why).
    passed_over: Vec<String>,
    failed: Vec<(String, String)>,
    job: String,
}

thread_local! {
    static POOL: RefCell<Pool> = RefCell::new(Pool::default());
}

impl Pool {
    /// Ends the workers and starts a new generation (messages of the old
    /// one are ignored).
    fn restart(&mut self) {
        for w in self.workers.drain(..) {
            w.worker.terminate();
        }
        self.generation += 1;
        self.next = 0;
    }
}

/// Workers for `files` files: as many as the browser has cores, at most
/// [`MAX_WORKERS`].
fn pool_size(files: usize) -> usize {
    let hc = window().navigator().hardware_concurrency() as usize;
    hc.clamp(1, MAX_WORKERS).min(files)
}

/// Blobs of a worker's Parquet buffers.
fn blobs(names: Vec<String>, buffers: Vec<js_sys::Uint8Array>) -> Vec<(String, web_sys::Blob)> {
    names
        .into_iter()
        .zip(buffers)
        .filter_map(|(n, b)| {
            let parts = js_sys::Array::of1(&b);
            web_sys::Blob::new_with_u8_array_sequence(&parts)
                .ok()
                .map(|blob| (n, blob))
        })
        .collect()
}

fn now_ms() -> f64 {
    window().performance().map_or(0.0, |p| p.now())
}

/// Whether a picked or dropped file is an archive of traces, by its name.
fn is_archive_name(name: &str) -> bool {
    tracelane_core::import::archive::set_stem(name).is_some()
}

/// A file's name without its directories.
fn base_name(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_string()
}

/// Opens `files` as the ranks of one run (replacing a run being opened);
/// `from_folder`: they are a picked or dropped folder's files (`folder`,
/// its name, when the files do not say it). Archives among them (`.zip`,
/// `.tar`, `.tar.gz`) are unpacked first, their traces joining the others.
pub(crate) fn open(ui: Ui, files: Vec<File>, from_folder: bool, folder: Option<String>) {
    let (archives, mut files): (Vec<File>, Vec<File>) =
        files.into_iter().partition(|f| is_archive_name(&f.name()));
    files.retain(|f| tracelane_core::import::archive::is_trace_name(&f.name()));
    // A picked folder names the run (`webkitRelativePath` is `folder/file`),
    // else the first archive does.
    let job = files
        .first()
        .and_then(|f| js_sys::Reflect::get(f, &"webkitRelativePath".into()).ok())
        .and_then(|p| p.as_string())
        .and_then(|p| p.split_once('/').map(|(d, _)| d.to_string()))
        .filter(|d| !d.is_empty())
        .or(folder)
        .or_else(|| {
            let name = archives.first()?.name();
            let stem = tracelane_core::import::archive::set_stem(&name)?;
            Some(stem.to_string()).filter(|s| !s.is_empty())
        })
        .unwrap_or_else(|| "run".to_string());
    let traces: Vec<(String, web_sys::Blob)> =
        files.into_iter().map(|f| (f.name(), f.into())).collect();
    if archives.is_empty() {
        open_traces(ui, traces, from_folder, job, Vec::new());
        return;
    }
    let generation = POOL.with(|p| {
        let mut p = p.borrow_mut();
        p.restart();
        p.queue.clear();
        p.files.clear();
        p.summaries.clear();
        p.export = None;
        p.unpacking = Some(Unpacking {
            archives: archives.clone(),
            next: 0,
            traces,
            passed_over: Vec::new(),
            failed: Vec::new(),
            job: job.clone(),
        });
        p.generation
    });
    ui.rank_set.set(Some(RankSet::new(
        archives
            .iter()
            .map(|f| RankEntry {
                name: f.name(),
                size: f.size() as u64,
                bytes: 0,
                state: RankState::Unpacking(0),
                memory: 0,
            })
            .collect(),
        1,
        job,
    )));
    show_ranks(ui);
    spawn(ui, generation, 0);
}

/// The Ranks view in front (the demo line gone).
fn show_ranks(ui: Ui) {
    ui.demo.set(false);
    ui.compare_open.set(false);
    ui.ranks_open.set(true);
}

/// Hands the next archive to the pool's worker.
fn unpack_next(ui: Ui, generation: u32) {
    let next = POOL.with(|p| {
        let p = p.borrow();
        let u = p.unpacking.as_ref()?;
        let w = p.workers.first().filter(|w| w.ready)?;
        Some((w.worker.clone(), u.archives.get(u.next)?.clone()))
    });
    let Some((worker, archive)) = next else {
        return;
    };
    if let Err(e) = (Transfer::Unpack {
        blob: archive.into(),
    })
    .post(&worker)
    {
        archive_done(ui, generation, Err(e));
    }
}

/// A trace of the archive being unpacked.
fn entry_arrived(ui: Ui, generation: u32, name: String, bytes: js_sys::Uint8Array) {
    let parts = js_sys::Array::of1(&bytes);
    let Ok(blob) = web_sys::Blob::new_with_u8_array_sequence(&parts) else {
        return;
    };
    let at = POOL.with(|p| {
        let mut p = p.borrow_mut();
        if p.generation != generation {
            return None;
        }
        let u = p.unpacking.as_mut()?;
        u.traces.push((base_name(&name), blob));
        Some((u.next, u.traces.len()))
    });
    if let Some((k, n)) = at {
        set_entry(ui, k, |e| e.state = RankState::Unpacking(n));
    }
}

/// The archive being unpacked is read (with the files it passed over), or
/// could not be; after the last one, the run opens.
fn archive_done(ui: Ui, generation: u32, r: Result<Vec<String>, String>) {
    let finished = POOL.with(|p| {
        let mut p = p.borrow_mut();
        if p.generation != generation {
            return None;
        }
        let u = p.unpacking.as_mut()?;
        let name = u.archives.get(u.next).map(|f| f.name()).unwrap_or_default();
        match r {
            Ok(passed) => u.passed_over.extend(passed),
            Err(why) => u.failed.push((name, why)),
        }
        u.next += 1;
        if u.next < u.archives.len() {
            return Some(None);
        }
        Some(p.unpacking.take())
    });
    match finished {
        None => {}
        Some(None) => unpack_next(ui, generation),
        Some(Some(u)) => {
            let mut extra: Vec<RankEntry> = u
                .failed
                .into_iter()
                .map(|(name, why)| RankEntry {
                    name,
                    size: 0,
                    bytes: 0,
                    state: RankState::Failed(why),
                    memory: 0,
                })
                .collect();
            extra.extend(u.passed_over.into_iter().map(|name| RankEntry {
                name,
                size: 0,
                bytes: 0,
                state: RankState::Skipped("not named like a trace".into()),
                memory: 0,
            }));
            open_traces(ui, u.traces, true, u.job, extra);
        }
    }
}

/// Opens `files` (name, file) as the ranks of one run; `listed`: they were
/// listed from a folder or an archive (files that are not traces are
/// passed over, not failed); `extra`: entries to show after them (files
/// passed over, archives that could not be read).
fn open_traces(
    ui: Ui,
    mut files: Vec<(String, web_sys::Blob)>,
    listed: bool,
    job: String,
    extra: Vec<RankEntry>,
) {
    tracelane_core::sort::by(&mut files, &|a, b| {
        tracelane_core::model::natural_cmp(&a.0, &b.0)
    });
    let n_workers = pool_size(files.len());
    let generation = POOL.with(|p| {
        let mut p = p.borrow_mut();
        p.restart();
        p.unpacking = None;
        p.queue = (0..files.len()).collect();
        p.export = None;
        p.summaries = vec![None; files.len()];
        p.files = files.clone();
        p.from_folder = listed;
        p.generation
    });
    let nothing = files.is_empty();
    ui.rank_set.set(Some(RankSet::new(
        files
            .iter()
            .map(|(name, f)| RankEntry {
                name: name.clone(),
                size: f.size() as u64,
                bytes: 0,
                state: RankState::Queued,
                memory: 0,
            })
            .chain(extra)
            .collect(),
        n_workers,
        job,
    )));
    show_ranks(ui);
    if nothing {
        ui.rank_set.update(|s| {
            if let Some(s) = s {
                s.imported_ms = Some(0.0);
                s.view = Some(ReportView {
                    notes: vec!["No trace to open: the files picked are not traces (.json, .json.gz, .pftrace) or archives of them.".into()],
                    tables: Vec::new(),
                });
            }
        });
        return;
    }
    for slot in 0..n_workers {
        spawn(ui, generation, slot);
    }
}

fn set_entry(ui: Ui, k: usize, f: impl FnOnce(&mut RankEntry)) {
    ui.rank_set.update(|s| {
        if let Some(e) = s.as_mut().and_then(|s| s.entries.get_mut(k)) {
            f(e);
        }
    });
}

/// Starts pool worker `slot` of run `generation`.
fn spawn(ui: Ui, generation: u32, slot: usize) {
    let Ok(worker) = Worker::new("./ranks_loader.js") else {
        ui.rank_set.update(|s| {
            for e in s.iter_mut().flat_map(|s| s.entries.iter_mut()) {
                e.state = RankState::Failed("this browser could not start a worker".into());
            }
        });
        return;
    };
    let onmessage = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        match Transfer::from_js(&e.data()) {
            Some(Transfer::Tables { id, names, buffers }) => {
                tables_arrived(generation, id as usize, blobs(names, buffers));
                return;
            }
            Some(Transfer::Entry { name, bytes }) => {
                entry_arrived(ui, generation, name, bytes);
                return;
            }
            _ => {}
        }
        let Some(text) = e.data().as_string() else {
            return;
        };
        if let Ok(msg) = serde_json::from_str::<FromRanks>(&text) {
            on_message(ui, generation, slot, msg);
        }
    });
    worker.set_onmessage(Some(onmessage.as_ref().unchecked_ref()));
    onmessage.forget();
    let onerror = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
        // A panic ends the worker: its rank failed; a new worker goes on.
        let busy = POOL.with(|p| {
            let mut p = p.borrow_mut();
            if p.generation != generation {
                return None;
            }
            let w = p.workers.get_mut(slot)?;
            w.worker.terminate();
            w.ready = false;
            w.busy.take()
        });
        if let Some(k) = busy {
            spawn(ui, generation, slot);
            finished(ui, generation, k, Err("internal error while importing this rank (please report it with the file if you can)".into()), 0);
        }
    });
    worker.set_onerror(Some(onerror.as_ref().unchecked_ref()));
    onerror.forget();
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        let w = PoolWorker {
            worker,
            ready: false,
            busy: None,
        };
        if slot < p.workers.len() {
            p.workers[slot] = w;
        } else {
            p.workers.push(w);
        }
    });
}

fn on_message(ui: Ui, generation: u32, slot: usize, msg: FromRanks) {
    if POOL.with(|p| p.borrow().generation) != generation {
        return;
    }
    let idle = || {
        POOL.with(|p| {
            if let Some(w) = p.borrow_mut().workers.get_mut(slot) {
                w.busy = None;
            }
        })
    };
    let unpacking = POOL.with(|p| p.borrow().unpacking.is_some());
    match msg {
        FromRanks::Ready => {
            POOL.with(|p| {
                if let Some(w) = p.borrow_mut().workers.get_mut(slot) {
                    w.ready = true;
                }
            });
            if unpacking {
                unpack_next(ui, generation);
            } else {
                pump(ui, generation);
            }
        }
        FromRanks::Unpacked { passed_over } => archive_done(ui, generation, Ok(passed_over)),
        FromRanks::Failed { message, .. } if unpacking => {
            archive_done(ui, generation, Err(message))
        }
        FromRanks::Progress { id, bytes } => set_entry(ui, id as usize, |e| e.bytes = bytes),
        FromRanks::Summarised {
            id,
            summary,
            wasm_memory_bytes,
        } => {
            idle();
            finished(ui, generation, id as usize, Ok(summary), wasm_memory_bytes);
        }
        FromRanks::Failed { id, message } => {
            idle();
            finished(ui, generation, id as usize, Err(message), 0);
        }
        FromRanks::Exported { ranks } => bundle_export(ui, ranks),
        FromRanks::Report { view, json } => {
            // The run is in: the pool's memory goes back.
            POOL.with(|p| {
                for w in p.borrow_mut().workers.drain(..) {
                    w.worker.terminate();
                }
            });
            ui.rank_set.update(|s| {
                if let Some(s) = s {
                    s.view = Some(*view);
                    s.json = Some(json);
                }
            });
        }
    }
}

/// Parquet files from a worker: rank file `id`'s own tables while the pool
/// imports again, then (once those are all in) the run's tables of the
/// `id`-th summary sent.
fn tables_arrived(generation: u32, id: usize, files: Vec<(String, web_sys::Blob)>) {
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        if p.generation != generation {
            return;
        }
        let Some(e) = p.export.as_mut() else { return };
        let slot = if e.order.is_empty() {
            e.traces.get_mut(id)
        } else {
            e.run.get_mut(id)
        };
        if let Some(slot) = slot {
            *slot = files;
        }
    });
}

/// Hands the next ranks to the idle workers.
fn pump(ui: Ui, generation: u32) {
    loop {
        let next = POOL.with(|p| {
            let mut p = p.borrow_mut();
            if p.generation != generation || p.next >= p.queue.len() {
                return None;
            }
            let slot = p.workers.iter().position(|w| w.ready && w.busy.is_none())?;
            let k = p.queue[p.next];
            p.next += 1;
            p.workers[slot].busy = Some(k);
            let job = p.export.as_ref().map(|e| e.job.clone());
            let (name, blob) = p.files[k].clone();
            Some((p.workers[slot].worker.clone(), k, name, blob, job))
        });
        let Some((worker, k, name, blob, job)) = next else {
            return;
        };
        if job.is_none() {
            set_entry(ui, k, |e| e.state = RankState::Importing);
        }
        let sent = Transfer::Rank {
            id: k as u32,
            name: base_name(&name),
            blob,
            job,
        }
        .post(&worker);
        if let Err(e) = sent {
            finished(ui, generation, k, Err(e), 0);
        }
    }
}

/// Rank `k` is summarised (or failed); once every rank is, the report is
/// asked for.
fn finished(ui: Ui, generation: u32, k: usize, r: Result<String, String>, memory: u64) {
    let Some((from_folder, all_in, exporting)) = POOL.with(|p| {
        let mut p = p.borrow_mut();
        if p.generation != generation {
            return None;
        }
        let exporting = p.export.is_some();
        if let (false, Ok(s), Some(slot)) = (exporting, &r, p.summaries.get_mut(k)) {
            *slot = Some(s.clone());
        }
        let all_in = p.workers.iter().all(|w| w.busy.is_none()) && p.next >= p.queue.len();
        Some((p.from_folder, all_in, exporting))
    }) else {
        return;
    };
    if exporting {
        match r {
            Err(m) => export_failed(
                ui,
                format!("could not read {} again: {m}", entry_name(ui, k)),
            ),
            Ok(_) if all_in => run_tables(ui),
            Ok(_) => {
                set_export(ui, ExportState::Writing(export_progress()));
                pump(ui, generation);
            }
        }
        return;
    }
    set_entry(ui, k, |e| {
        e.state = match r {
            Ok(_) => {
                e.bytes = e.size;
                RankState::Done
            }
            Err(m) if from_folder && m.starts_with("not a trace") => RankState::Skipped(m),
            Err(m) => RankState::Failed(m),
        };
        e.memory = memory;
    });
    if all_in {
        ui.rank_set.update(|s| {
            if let Some(s) = s {
                s.imported_ms = Some(now_ms() - s.started_ms);
            }
        });
        combine(ui, generation);
    } else {
        pump(ui, generation);
    }
}

fn entry_name(ui: Ui, k: usize) -> String {
    ui.rank_set.with_untracked(|s| {
        s.as_ref()
            .and_then(|s| s.entries.get(k))
            .map_or(String::new(), |e| e.name.clone())
    })
}

fn set_export(ui: Ui, state: ExportState) {
    ui.rank_set.update(|s| {
        if let Some(s) = s {
            s.export = Some(state);
        }
    });
}

fn export_progress() -> (usize, usize) {
    POOL.with(|p| {
        let p = p.borrow();
        let done = p
            .export
            .as_ref()
            .map_or(0, |e| e.traces.iter().filter(|t| !t.is_empty()).count());
        (done, p.queue.len())
    })
}

fn export_failed(ui: Ui, why: String) {
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        p.export = None;
        for w in p.workers.drain(..) {
            w.worker.terminate();
        }
    });
    set_export(ui, ExportState::Failed(why));
}

/// The Parquet download: every summarised rank file is imported again by
/// a fresh pool that writes its tables (the models were dropped).
pub(crate) fn start_export(ui: Ui) {
    let Some((job, done)) = ui.rank_set.with_untracked(|s| {
        let s = s.as_ref()?;
        let done: Vec<usize> = (0..s.entries.len())
            .filter(|&k| s.entries[k].state == RankState::Done)
            .collect();
        Some((s.job.clone(), done))
    }) else {
        return;
    };
    if done.is_empty() {
        return;
    }
    let n_workers = pool_size(done.len());
    let generation = POOL.with(|p| {
        let mut p = p.borrow_mut();
        p.restart();
        let n = p.files.len();
        p.export = Some(Export {
            job,
            traces: vec![Vec::new(); n],
            order: Vec::new(),
            run: vec![Vec::new(); n],
        });
        p.queue = done.clone();
        p.generation
    });
    set_export(ui, ExportState::Writing((0, done.len())));
    for slot in 0..n_workers {
        spawn(ui, generation, slot);
    }
}

/// Every rank file's tables are in: one worker writes the run's tables.
fn run_tables(ui: Ui) {
    let sent = POOL.with(|p| {
        let mut p = p.borrow_mut();
        let order: Vec<usize> = (0..p.summaries.len())
            .filter(|&k| p.summaries[k].is_some())
            .collect();
        let summaries: Vec<String> = order
            .iter()
            .filter_map(|&k| p.summaries[k].clone())
            .collect();
        let e = p.export.as_mut().ok_or("no export")?;
        e.order = order;
        let job = e.job.clone();
        let w = p
            .workers
            .iter()
            .find(|w| w.ready)
            .ok_or("the workers are gone")?;
        let text = serde_json::to_string(&ToRanks::Export { summaries, job })
            .map_err(|e| e.to_string())?;
        w.worker
            .post_message(&JsValue::from_str(&text))
            .map_err(|_| "the worker is gone".to_string())
    });
    if let Err(why) = sent {
        export_failed(ui, why.to_string());
    }
}

/// The run's tables are in: the tar of every file, in the export's layout
/// (`<table>/rank=<N>/part-0.parquet`), is downloaded.
fn bundle_export(ui: Ui, ranks: Vec<i64>) {
    use tracelane_core::columnar::table_path;
    use tracelane_core::import::archive::{tar_header, tar_padding, TAR_END};
    let built = POOL.with(|p| {
        let mut p = p.borrow_mut();
        for w in p.workers.drain(..) {
            w.worker.terminate();
        }
        let e = p.export.take()?;
        let parts = js_sys::Array::new();
        let mut files = 0;
        for (j, &k) in e.order.iter().enumerate() {
            let rank = *ranks.get(j)?;
            let own = e.traces[k].iter().map(|(t, b)| (table_path(t, rank), b));
            let run = e.run[j].iter().map(|(path, b)| (path.clone(), b));
            for (path, blob) in own.chain(run) {
                let size = blob.size() as u64;
                parts.push(&js_sys::Uint8Array::from(
                    &tar_header(&format!("{}/{path}", e.job), size)[..],
                ));
                parts.push(blob);
                parts.push(&js_sys::Uint8Array::new_with_length(
                    tar_padding(size) as u32
                ));
                files += 1;
            }
        }
        parts.push(&js_sys::Uint8Array::from(&TAR_END[..]));
        let tar = web_sys::Blob::new_with_u8_array_sequence(&parts).ok()?;
        Some((e.job, tar, files))
    });
    match built {
        Some((job, tar, files)) => {
            let name = format!("{job}.parquet.tar");
            crate::page::dom::download_blob(&name, &tar);
            set_export(
                ui,
                ExportState::Done(format!(
                    "{name}: {files} Parquet files, {}",
                    table::fmt_bytes(tar.size() as u64)
                )),
            );
        }
        None => export_failed(ui, "the tables could not be bundled".into()),
    }
}

/// Sends the summaries to one worker to combine; the others end.
fn combine(ui: Ui, generation: u32) {
    let sent = POOL.with(|p| {
        let mut p = p.borrow_mut();
        // Kept: the Parquet download sends them again.
        let summaries: Vec<String> = p.summaries.iter().flatten().cloned().collect();
        if summaries.is_empty() {
            return Err("no rank could be imported".to_string());
        }
        let mut workers = std::mem::take(&mut p.workers);
        let keep = workers.iter().position(|w| w.ready);
        let combiner = keep.map(|k| workers.swap_remove(k));
        for w in workers {
            w.worker.terminate();
        }
        let w = combiner.ok_or("the workers are gone")?;
        let text =
            serde_json::to_string(&ToRanks::Combine { summaries }).map_err(|e| e.to_string())?;
        w.worker
            .post_message(&JsValue::from_str(&text))
            .map_err(|_| "the worker is gone".to_string())?;
        p.workers.push(w);
        Ok(())
    });
    if let Err(why) = sent {
        let _ = generation;
        ui.rank_set.update(|s| {
            if let Some(s) = s {
                s.view = Some(ReportView {
                    notes: vec![why],
                    tables: Vec::new(),
                });
            }
        });
    }
}

/// The files of the report's inputs `inputs` (the summarised files, in
/// file order), each labelled by its rank.
pub(crate) fn rank_files(
    inputs: &[usize],
    ranks: &[String],
) -> Option<Vec<(String, web_sys::Blob)>> {
    POOL.with(|p| {
        let p = p.borrow();
        let summarised: Vec<usize> = (0..p.summaries.len())
            .filter(|&k| p.summaries[k].is_some())
            .collect();
        inputs
            .iter()
            .zip(ranks)
            .map(|(&j, rank)| {
                let (_, blob) = p.files.get(*summarised.get(j)?)?;
                Some((format!("rank {rank}"), blob.clone()))
            })
            .collect()
    })
}

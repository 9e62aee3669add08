//! The page's root: mounts the app, the drop zone, status bar, tabs, and
//! the view of the active trace (op table, timeline, diagnostics) or the
//! comparison. Names from a trace are always inserted as text (leptos
//! escapes them), never as HTML.

use leptos::prelude::*;
use wasm_bindgen::prelude::Closure;
use wasm_bindgen::JsCast;

use crate::page::imports;
use crate::page::op_table::OpTable;
use crate::page::sources::{self, Source};
use crate::page::state::{Status, Ui};
use crate::shared::protocol::Summary;
use crate::shared::table;

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
    let ui = new_ui();
    provide_context(ui);
    imports::spawn_worker(ui);
    imports::spawn_helper(ui);
    crate::page::offline::register(ui);
    crate::page::offline::consume_launch_files(ui);

    // A link (the hash, or an older `?url=`) opens its traces and view;
    // otherwise the demo.
    // A deployment with a team library opens on it.
    crate::page::link::keep_in_url(ui);
    if crate::page::link::open_from_location(ui) {
        crate::page::library::start(ui, false);
    } else if !crate::page::library::start(ui, true) {
        imports::open_demo(ui);
    }

    let picker: NodeRef<leptos::html::Input> = NodeRef::new();
    let folder_picker: NodeRef<leptos::html::Input> = NodeRef::new();
    let ranks_picker: NodeRef<leptos::html::Input> = NodeRef::new();
    let ranks_folder_picker: NodeRef<leptos::html::Input> = NodeRef::new();
    // `webkitdirectory` (a folder picker) is not in leptos's attribute set.
    folder_picker.on_load(|input| {
        let _ = input.set_attribute("webkitdirectory", "");
    });
    ranks_folder_picker.on_load(|input| {
        let _ = input.set_attribute("webkitdirectory", "");
    });
    let open_ranks = move |input: Option<web_sys::HtmlInputElement>, from_folder: bool| {
        let Some(input) = input else { return };
        let files: Vec<web_sys::File> = input
            .files()
            .map(|l| (0..l.length()).filter_map(|k| l.get(k)).collect())
            .unwrap_or_default();
        crate::page::ranks::open(ui, files, from_folder, None);
        input.set_value("");
    };
    let open_sources = move |files: Vec<Source>| open_sources(ui, files);
    let on_drop = move |ev: web_sys::DragEvent| on_drop(ui, ev);
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
                    accept=".json,.gz,.pftrace,.perfetto-trace,.pb,.parquet,.zip,.tar,application/json,application/gzip,application/zip"
                    node_ref=picker
                    on:change=move |_| {
                        open_sources(sources::files_from(picker.get().and_then(|i| i.files())));
                        if let Some(i) = picker.get() {
                            i.set_value("");
                        }
                    }
                />
                <label class="button" for="folder-input"
                    title="A Neuron Explorer device profile: the folder of Parquet tables neuron-explorer view writes">"Open profile folder…"</label>
                <input
                    id="folder-input"
                    type="file"
                    node_ref=folder_picker
                    on:change=move |_| {
                        open_sources(sources::files_from(folder_picker.get().and_then(|i| i.files())));
                        if let Some(i) = folder_picker.get() {
                            i.set_value("");
                        }
                    }
                />
                <label class="button" for="ranks-input"
                    title="One trace per rank of a distributed run, or a .zip / .tar.gz of them (or pick their folder with Open run folder…): stragglers, collectives and each rank's step breakdown">"Open ranks…"</label>
                <input id="ranks-input" type="file" multiple accept=".json,.gz,.tgz,.tar,.zip,application/json,application/gzip,application/zip,application/x-tar"
                    node_ref=ranks_picker on:change=move |_| open_ranks(ranks_picker.get(), false) />
                <label class="button" for="ranks-folder-input"
                    title="A folder of rank traces (rank0.json, rank1.json, …)">"Open run folder…"</label>
                <input id="ranks-folder-input" type="file"
                    node_ref=ranks_folder_picker on:change=move |_| open_ranks(ranks_folder_picker.get(), true) />
                {move || ui.library.with(Option::is_some).then(|| view! {
                    <button class="button" id="open-library" class:active=move || ui.library_open.get()
                        title="The team's trace library" on:click=move |_| ui.library_open.set(true)>"Library"</button>
                })}
                <crate::page::link::CopyLink/>
            </header>
            <Show when=move || ui.update_ready.get()>
                <div class="update-banner" id="update-banner" role="status">
                    "A new version of tracelane is available — "
                    <button id="update-reload" on:click=move |_| crate::page::offline::activate_update()>"reload"</button>
                </div>
            </Show>
            <DemoLine/>
            <crate::page::link::LinkNotice/>
            <StatusBar/>
            <Shortcuts/>
            <Tabs/>
            <DemoHint/>
            {move || {
                // A link applied mounts the views again from their state.
                ui.remount.track();
                if ui.library_open.get() {
                    return Some(view! { <crate::page::library::LibraryPanel/> }.into_any());
                }
                if ui.ranks_open.get() {
                    return Some(view! { <crate::page::ranks_panel::RanksPanel/> }.into_any());
                }
                if ui.compare_open.get() {
                    return Some(view! { <crate::page::compare::ComparePanel/> }.into_any());
                }
                let traces = ui.traces.get();
                let k = ui.active.get();
                traces.get(k).cloned().map(|s| view! { <TraceView summary=s/> }.into_any())
            }}
            <div class="drop-hint">"Drop trace files to open them"</div>
        </div>
    }
}

/// The page's state, empty: no trace, the demo line shown.
fn new_ui() -> Ui {
    Ui {
        traces: RwSignal::new(Vec::new()),
        active: RwSignal::new(0),
        status: RwSignal::new(Status::Idle),
        demo: RwSignal::new(true),
        dragging: RwSignal::new(false),
        table_highlight: RwSignal::new(None),
        compare_open: RwSignal::new(false),
        ranges: RwSignal::new(Vec::new()),
        last_batch: RwSignal::new(Vec::new()),
        focus: RwSignal::new(None),
        path_shown: RwSignal::new(None),
        lanes: RwSignal::new(Vec::new()),
        rank_set: RwSignal::new(None),
        ranks_open: RwSignal::new(false),
        update_ready: RwSignal::new(false),
        closed: RwSignal::new(None),
        view: RwSignal::new(0),
        origins: RwSignal::new(Vec::new()),
        states: RwSignal::new(Vec::new()),
        variants: RwSignal::new(Vec::new()),
        align: RwSignal::new(None),
        remount: RwSignal::new(0),
        link_note: RwSignal::new(None),
        library: RwSignal::new(None),
        library_open: RwSignal::new(false),
    }
}

/// Files picked or dropped, opened as traces (a link waiting for the
/// receiver's copies of its files takes them first).
fn open_sources(ui: Ui, files: Vec<Source>) {
    // A link waiting for the receiver's copies of its files takes them.
    let Some(files) = crate::page::link::take_files(ui, files) else {
        return;
    };
    if !files.is_empty() {
        ui.demo.set(false);
        ui.ranks_open.set(false);
        imports::enqueue_batch(ui, files);
    }
}

/// What was dropped on the page: on the Ranks view a run (files, a
/// folder, an archive of traces); elsewhere traces, a dropped folder (a
/// Neuron profile directory) walked and opened like the files in it.
fn on_drop(ui: Ui, ev: web_sys::DragEvent) {
    ev.prevent_default();
    ui.dragging.set(false);
    let Some(dt) = ev.data_transfer() else { return };
    // On the Ranks view, what is dropped (files, a folder, an archive
    // of traces) is a run.
    if ui.ranks_open.get_untracked() {
        if let Some(entries) = sources::dropped_entries(&dt) {
            leptos::task::spawn_local(async move {
                let files = sources::walk_entries(entries).await;
                let folder = files
                    .first()
                    .and_then(|(path, _)| path.split_once('/'))
                    .map(|(dir, _)| dir.to_string());
                let files = files.into_iter().map(|(_, f)| f).collect();
                crate::page::ranks::open(ui, files, true, folder);
            });
            return;
        }
        let files: Vec<web_sys::File> = dt
            .files()
            .map(|l| (0..l.length()).filter_map(|k| l.get(k)).collect())
            .unwrap_or_default();
        crate::page::ranks::open(ui, files, false, None);
        return;
    }
    // A dropped folder (a Neuron profile directory) is walked, then
    // opened like the files in it.
    if let Some(entries) = sources::dropped_entries(&dt) {
        leptos::task::spawn_local(async move {
            let files = sources::walk_entries(entries).await;
            open_sources(ui, sources::group_files(files));
        });
        return;
    }
    open_sources(ui, sources::files_from(dt.files()));
}

/// The demo's line: what the built-in traces are.
#[component]
fn DemoLine() -> impl IntoView {
    let ui: Ui = expect_context();
    view! {
    <Show when=move || ui.demo.get()>
        <p class="demo-line" id="demo-line">
            "You are looking at built-in demo traces: RMSNorm as six eager ops, as "
            <code>"torch.rms_norm"</code>
            ", and under "
            <code>"torch.compile"</code>
            " — on Trainium ("
            <code>"torchneuron_rmsnorm.json"</code>
            ", "<strong>"reconstructed from the TorchNeuron article's published figures, not a capture"</strong>
            ", in a Kineto shape no public capture attests: TorchNeuron's own trace.json holds CPU ops only, its device time is in the runtime's profile, joined through framework_mapping_*.json — drop such a run's folder to see it) and recorded by PyTorch 2.15 on CPU — and a ROCm training step with kernels. Drop your own "
            <code>".json"</code>
            " / "
            <code>".json.gz"</code>
            " trace anywhere on the page, or use Open trace."
        </p>
    </Show>
    }
}

/// One line per view of the demo: what to look at and what to click.
/// Gone once the visitor opens a trace of their own.
#[component]
fn DemoHint() -> impl IntoView {
    let ui: Ui = expect_context();
    move || {
        if !ui.demo.get() || ui.traces.with(Vec::is_empty) {
            return None;
        }
        let (key, text) = if ui.ranks_open.get() {
            return None;
        } else if ui.compare_open.get() {
            (
                "compare",
                "The TorchNeuron article's RMSNorm (reconstructed from its published figures): six eager ops take \
                 2,355 µs of device time, torch.rms_norm 403 µs, torch.compile 376 µs. The op-to-kernel map shows six \
                 dispatches becoming one; make another variant the baseline, or add a region.",
            )
        } else {
            match ui.view.get() {
                1 => (
                    "timeline",
                    "Click a kernel on the ROCm trace's stream lanes: its chain (op → launch → kernel, with the launch \
                     delay) appears below, each link a click away. Shift+drag selects a range and lists its ops.",
                ),
                2 => (
                    "analyses",
                    "Where the ROCm step's device time goes — idle gaps by cause, launch delays, the critical path — \
                     with HTA's numbers beside; a gap or a launch opens on the timeline.",
                ),
                4 => (
                    "roofline",
                    "Each op against the device's compute and memory roofs: how far below the roof it runs, and which \
                     roof bounds it.",
                ),
                3 | 6 => return None,
                5 => (
                    "summary",
                    "What to change first, ranked by the time it would save. In the eager RMSNorm traces the six ops \
                     written out are one fusion finding: open it for its ops, its evidence and the fused call to use \
                     instead, or show its events on the timeline.",
                ),
                _ => (
                    "table",
                    "PyTorch's own key_averages() numbers. In torchneuron_rmsnorm.json the three aten::mul calls take \
                     1,775 of the eager version's 2,355 µs: click the row for what they launched and where they sit.",
                ),
            }
        };
        Some(view! { <p class="demo-hint" id="demo-hint" data-view=key>{text}</p> })
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
                        <button on:click=move |_| imports::cancel(ui)>"Cancel"</button>
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

/// The keys the page answers to, listed on `?` (Esc or the button closes
/// the list). Keys typed into a text field are the field's.
#[component]
fn Shortcuts() -> impl IntoView {
    let open = RwSignal::new(false);
    let on_key =
        Closure::<dyn FnMut(web_sys::KeyboardEvent)>::new(move |ev: web_sys::KeyboardEvent| {
            let typing = ev
                .target()
                .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                .is_some_and(|e| matches!(e.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"));
            match ev.key().as_str() {
                "?" if !typing => open.update(|o| *o = !*o),
                "Escape" if open.get_untracked() => open.set(false),
                _ => {}
            }
        });
    let _ = window().add_event_listener_with_callback("keydown", on_key.as_ref().unchecked_ref());
    on_key.forget();
    const KEYS: &[(&str, &str)] = &[
        ("?", "show or hide this list"),
        (
            "Timeline: wheel, W / S",
            "zoom in / out around the pointer (keys: the middle)",
        ),
        ("Timeline: drag, A / D", "pan"),
        ("Timeline: 0 or Home", "the whole trace"),
        (
            "Timeline: Shift+drag, or drag on the ruler",
            "select a time range (its op table appears below)",
        ),
        (
            "Timeline: F",
            "fit the selected range, else the selected slice",
        ),
        ("Timeline: Esc", "clear the range and the selection"),
        (
            "Timeline search: Enter / Shift+Enter",
            "next / previous match",
        ),
        (
            "Op table: click or Enter on a row",
            "its details (what it launched, where it sits)",
        ),
        (
            "Op table: ↑ / ↓, PageUp / PageDown, Home / End",
            "move between rows",
        ),
        (
            "Timeline: show empty lanes",
            "lanes with no slices are hidden until asked for",
        ),
        ("Tabs: ×", "close a trace and free its memory"),
    ];
    view! {
        <Show when=move || open.get()>
            <div class="shortcuts" id="shortcuts" role="dialog" aria-label="Keyboard shortcuts">
                <h2>"Keyboard shortcuts"</h2>
                <table>
                    <tbody>
                        {KEYS.iter().map(|(k, what)| view! { <tr><th scope="row"><kbd>{*k}</kbd></th><td>{*what}</td></tr> }).collect_view()}
                    </tbody>
                </table>
                <button id="shortcuts-close" on:click=move |_| open.set(false)>"Close (Esc)"</button>
            </div>
        </Show>
    }
}

#[component]
fn Tabs() -> impl IntoView {
    let ui: Ui = expect_context();
    move || {
        let names: Vec<(u32, String, bool)> = ui.traces.with(|t| {
            t.iter()
                .map(|s| (s.id, s.name.clone(), s.engines))
                .collect()
        });
        let closed = move |k: usize| {
            ui.closed
                .get()
                .map(|(id, before, after)| [id as u64, before, after][k].to_string())
                .unwrap_or_default()
        };
        (!names.is_empty()).then(|| {
            view! {
                // `data-closed` / `data-heap-before` / `data-heap-after`: the
                // trace last closed and the worker's live heap around it.
                // The tab list holds the tabs only (its role asks for
                // nothing else); each tab's close button sits beside it in
                // the bar (`order`), outside the list.
                <nav class="tabs" aria-label="Open traces"
                    data-closed=move || closed(0) data-heap-before=move || closed(1) data-heap-after=move || closed(2)>
                    <div class="tab-list" role="tablist" aria-label="Traces">
                    {names
                        .iter()
                        .cloned()
                        .enumerate()
                        .map(|(k, (_, name, _))| {
                            view! {
                                <button
                                    role="tab"
                                    style=format!("order:{}", 2 * k)
                                    class:active=move || ui.active.get() == k && !ui.compare_open.get() && !ui.ranks_open.get()
                                    aria-selected=move || (ui.active.get() == k && !ui.compare_open.get() && !ui.ranks_open.get()).to_string()
                                    on:click=move |_| {
                                        // A tab opens on its trace's first view: the summary.
                                        if ui.active.get_untracked() != k || ui.compare_open.get_untracked() || ui.ranks_open.get_untracked() {
                                            ui.view.set(5);
                                        }
                                        ui.active.set(k); ui.compare_open.set(false); ui.ranks_open.set(false); ui.library_open.set(false);
                                    }
                                >
                                    {name}
                                </button>
                            }
                        })
                        .collect_view()}
                    </div>
                    {names
                        .into_iter()
                        .enumerate()
                        .map(|(k, (id, name, _))| {
                            let label = format!("Close {name}");
                            view! {
                                <button class="tab-close" style=format!("order:{}", 2 * k + 1) aria-label=label.clone() title=label
                                    on:click=move |_| imports::close(ui, id)>"×"</button>
                            }
                        })
                        .collect_view()}
                    <button
                        id="open-compare"
                        class="compare-tab"
                        style="order:100000"
                        class:active=move || ui.compare_open.get() && !ui.ranks_open.get()
                        aria-pressed=move || (ui.compare_open.get() && !ui.ranks_open.get()).to_string()
                        title="Compare traces or regions side by side: eager vs fused vs torch.compile"
                        on:click=move |_| { ui.compare_open.set(true); ui.ranks_open.set(false); ui.library_open.set(false); }
                    >
                        "Compare…"
                    </button>
                    {move || ui.rank_set.with(|s| s.is_some()).then(|| view! {
                        <button id="open-ranks" class="compare-tab" style="order:100001"
                            class:active=move || ui.ranks_open.get()
                            aria-pressed=move || ui.ranks_open.get().to_string()
                            on:click=move |_| { ui.ranks_open.set(true); ui.library_open.set(false); }>
                            "Ranks"
                        </button>
                    })}
                </nav>
            }
        })
    }
}

#[component]
fn TraceView(summary: Summary) -> impl IntoView {
    let ui: Ui = expect_context();
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
    // 0 op table, 1 timeline, 2 analyses, 3 engines, 4 roofline, 5 summary,
    // 6 memory.
    // A view that asked for this trace's timeline (a collective's ranks)
    // opens on it.
    let focused = ui.focus.get_untracked().is_some_and(|f| f.trace == s.id);
    let shown = ui.view;
    if focused {
        shown.set(1);
    } else if (shown.get_untracked() == 3 && !s.engines)
        || (shown.get_untracked() == 6 && !s.memory)
    {
        shown.set(0);
    }
    let (s2, s3, s4, s5, s6) = (s.clone(), s.clone(), s.clone(), s.clone(), s.clone());
    let s7 = s.clone();
    let (engines, memory) = (s.engines, s.memory);
    view! {
        <section class="trace">
            <div class="facts" id="trace-facts"
                data-parse-ms=s.phases.parse_ms data-link-ms=s.phases.link_ms data-views-ms=s.phases.views_ms
                data-merge-ms=s.phases.merge_ms data-part-wait-ms=s.phases.part_wait_ms data-decode-ms=s.phases.decode_ms
                data-decode-read-wait-ms=s.phases.decode_read_wait_ms
                data-wasm-memory-bytes=s.phases.wasm_memory_bytes data-json-bytes=s.json_bytes
                data-workers=s.phases.workers
                data-helper-wasm-memory-bytes=s.phases.helper_wasm_memory_bytes
                data-decoder-wasm-memory-bytes=s.phases.decoder_wasm_memory_bytes>
                <strong class="file-name">{s.name.clone()}</strong>
                <span id="import-headline">{headline}</span>
                <span>{format!("file {}", table::fmt_bytes(s.file_bytes))}</span>
                <span>{format!("span {span}")}</span>
                <span>{format!("{} slices", table::fmt_count(s.slices))}</span>
                <span class="devices">{devices}</span>
                {diag.truncated.then(|| view! { <span class="badge warn">"truncated file: complete events kept"</span> })}
            </div>
            <div class="view-switch" role="tablist">
                <button role="tab" id="show-summary" aria-selected=move || (shown.get() == 5).to_string() class:active=move || shown.get() == 5 on:click=move |_| shown.set(5)
                    title="What to change first: findings ranked by the time they would save, with their evidence">"Summary"</button>
                <button role="tab" id="show-table" aria-selected=move || (shown.get() == 0).to_string() class:active=move || shown.get() == 0 on:click=move |_| shown.set(0)>"Op table"</button>
                <button role="tab" id="show-timeline" aria-selected=move || (shown.get() == 1).to_string() class:active=move || shown.get() == 1 on:click=move |_| shown.set(1)>"Timeline"</button>
                <button role="tab" id="show-analyses" aria-selected=move || (shown.get() == 2).to_string() class:active=move || shown.get() == 2 on:click=move |_| shown.set(2)
                    title="Where device time goes: idle gaps, launch delays, kernel types, queues — with HTA's numbers beside">"Analyses"</button>
                {engines.then(|| view! {
                    <button role="tab" id="show-engines" aria-selected=move || (shown.get() == 3).to_string() class:active=move || shown.get() == 3 on:click=move |_| shown.set(3)
                        title="Inside the NeuronCore: engines, DMA queues, HLO ops">"Engines"</button>
                })}
                <button role="tab" id="show-roofline" aria-selected=move || (shown.get() == 4).to_string() class:active=move || shown.get() == 4 on:click=move |_| shown.set(4)
                    title="Each op against the device's compute and memory roofs: compute- or memory-bound, and how far from the roof">"Roofline"</button>
                {memory.then(|| view! {
                    <button role="tab" id="show-memory" aria-selected=move || (shown.get() == 6).to_string() class:active=move || shown.get() == 6 on:click=move |_| shown.set(6)
                        title="Allocated and reserved memory per device: the peak and what holds it, what is never freed">"Memory"</button>
                })}
            </div>
            {move || match shown.get() {
                1 => view! { <crate::page::timeline::TimelineView summary=s2.clone()/> }.into_any(),
                2 => view! { <crate::page::analyses::AnalysesView summary=s3.clone() show_timeline=shown/> }.into_any(),
                3 => view! { <crate::page::device::EnginesView summary=s4.clone() show_timeline=shown/> }.into_any(),
                4 => view! { <crate::page::device::RooflineView summary=s5.clone() show_timeline=shown/> }.into_any(),
                5 => view! { <crate::page::summary::SummaryView summary=s6.clone() show_timeline=shown/> }.into_any(),
                6 => view! { <crate::page::memory::MemoryView summary=s7.clone() show_timeline=shown/> }.into_any(),
                _ => view! { <OpTable summary=s.clone()/> }.into_any(),
            }}
            <Diagnostics diag=diag/>
        </section>
    }
}

#[component]
fn Diagnostics(diag: crate::shared::protocol::DiagnosticsView) -> impl IntoView {
    let warnings = diag.warnings.clone();
    let count: u64 = warnings.iter().map(|w| w.count).sum();
    let open = diag.truncated || count > 0;
    view! {
        <details class="diagnostics" id="diagnostics" open=open>
            <summary>{format!("Import diagnostics — {count} warning(s)")}</summary>
            <p>{format!("Format: {}", diag.format)}</p>
            <p>{diag.time_unit_decision.clone()}</p>
            {(!diag.readings.is_empty()).then(|| view! {
                <h3>"Read as"</h3>
                <ul class="readings" id="readings">
                    {diag.readings.iter().map(|r| view! { <li>{r.clone()}</li> }).collect_view()}
                </ul>
            })}
            {diag.distributed.clone().map(|d| view! { <p id="distributed">{format!("Distributed run: {d}")}</p> })}
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
                                    <li data-kind=w.kind.clone() data-severity=w.severity.clone()>
                                        <span class=format!("severity {}", w.severity)>{w.severity.clone()}</span>" "
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

//! Links that reopen the view. The page's state is kept in the URL's hash
//! ([`crate::shared::link`] writes and reads it): each view writes what it
//! shows into [`Ui::states`] / [`Ui::variants`] as it changes, an effect
//! writes the hash a moment after the last change — a new history entry
//! when the tab or view changed (so back / forward step through views),
//! in place otherwise — and a link opened, pasted, or stepped back to is
//! applied: its traces opened (fetched, from the demo, or dropped by the
//! receiver when the sender had opened them from disk), then the tab, view
//! and each view's state set, and the views mounted again.
//!
//! Signals for tests: `<html data-link>` is the hash last written;
//! `#copy-link` carries the copied link in `data-link`.

use std::cell::RefCell;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::page::dom::window;
use crate::page::imports;
use crate::page::sources::Source;
use crate::page::state::{Note, Ui};
use crate::shared::compare_view::VariantSpec;
use crate::shared::link::{Link, TraceRef, View};

#[derive(Default)]
struct LinkState {
    /// The page has applied the link it opened with (or had none): from
    /// then on its state is written to the hash.
    ready: bool,
    /// The hash last written, and its traces, tab and view.
    written: String,
    place: String,
    /// The hash last navigated to (back / forward fire `popstate` and
    /// `hashchange` for one step: it is applied once).
    navigated: String,
    /// The pending write (only the latest runs).
    ticket: u32,
    /// A link that waits for the receiver's files.
    waiting: Option<Link>,
}

thread_local! {
    static LINK: RefCell<LinkState> = RefCell::new(LinkState::default());
}

/// A trace's views by `Ui::view`'s number.
pub(crate) const VIEWS: [View; 7] = [
    View::Table,
    View::Timeline,
    View::Analyses,
    View::Engines,
    View::Roofline,
    View::Summary,
    View::Memory,
];

/// The page's view now, as a link (`None` with no trace open).
fn current(ui: Ui) -> Option<Link> {
    let origins = ui.origins.get();
    let (ids, shown) = ui.traces.with(|t| {
        let ids: Vec<u32> = t.iter().map(|s| s.id).collect();
        let shown = t.get(ui.active.get()).map(|s| s.id);
        (ids, shown)
    });
    let shown = shown?;
    // Traces a link cannot name (stacks of ranks) are left out of it.
    let named: Vec<(u32, TraceRef)> = ids
        .iter()
        .filter_map(|id| {
            let o = origins.iter().find(|(t, _)| t == id)?;
            Some((*id, o.1.clone()))
        })
        .collect();
    let index = |id: u32| named.iter().position(|(t, _)| *t == id);
    let view = if ui.ranks_open.get() {
        View::Ranks
    } else if ui.compare_open.get() {
        View::Compare
    } else {
        VIEWS[(ui.view.get() as usize).min(VIEWS.len() - 1)]
    };
    let tab = index(shown).unwrap_or(0);
    let state = ui
        .states
        .with(|s| s.iter().find(|(t, _)| *t == shown).map(|x| x.1.clone()))
        .unwrap_or_default();
    let variants = ui.variants.with(|v| {
        v.iter()
            .filter_map(|s| Some((index(s.trace)?, s.region.clone())))
            .collect()
    });
    let shown_named = index(shown).is_some();
    (!named.is_empty()).then(|| Link {
        traces: named.iter().map(|(_, o)| o.clone()).collect(),
        tab,
        view,
        state: if view.of_trace() && shown_named {
            state
        } else {
            Default::default()
        },
        variants: if view == View::Compare {
            variants
        } else {
            Vec::new()
        },
        align: if view == View::Compare {
            ui.align.get()
        } else {
            None
        },
    })
}

/// The traces, tab and view of a link: a change of these is a step back /
/// forward can return to.
fn place_of(link: &Link) -> String {
    let traces: Vec<&str> = link.traces.iter().map(TraceRef::name).collect();
    format!("{}|{}|{}", traces.join("/"), link.tab, link.view.key())
}

fn set_html_attr(name: &str, value: &str) {
    if let Some(html) = window().document().and_then(|d| d.document_element()) {
        let _ = html.set_attribute(name, value);
    }
}

/// This page's address with `hash`: its query kept (`?renderer=` …) but
/// for `url=`, which the hash carries now.
fn address(hash: &str) -> String {
    let loc = window().location();
    let query = web_sys::UrlSearchParams::new_with_str(&loc.search().unwrap_or_default())
        .map(|p| {
            p.delete("url");
            String::from(p.to_string())
        })
        .unwrap_or_default();
    format!(
        "{}{}{}{query}{hash}",
        loc.origin().unwrap_or_default(),
        loc.pathname().unwrap_or_default(),
        if query.is_empty() { "" } else { "?" },
    )
}

fn write_now(ui: Ui) {
    let Some(link) = untrack(|| current(ui)) else {
        return;
    };
    let hash = link.to_hash();
    let place = place_of(&link);
    let (same, push) = LINK.with(|l| {
        let l = l.borrow();
        let same_traces = l.place.split('|').next() == place.split('|').next();
        (
            l.written == hash,
            !l.place.is_empty() && l.place != place && same_traces,
        )
    });
    if same {
        return;
    }
    if let Ok(history) = window().history() {
        let url = address(&hash);
        let _ = if push {
            history.push_state_with_url(&JsValue::NULL, "", Some(&url))
        } else {
            history.replace_state_with_url(&JsValue::NULL, "", Some(&url))
        };
    }
    LINK.with(|l| {
        let mut l = l.borrow_mut();
        l.written = hash.clone();
        l.place = place;
        l.navigated.clear();
    });
    set_html_attr("data-link", &hash);
}

/// Keeps the hash following the page's state, and applies a link the
/// user steps back / forward to or pastes into this tab.
pub(crate) fn keep_in_url(ui: Ui) {
    Effect::new(move |_| {
        // Tracks what the link is made of (the write builds it, once it
        // settles: not per frame of a pan).
        ui.origins.track();
        ui.traces.track();
        ui.active.track();
        ui.view.track();
        ui.compare_open.track();
        ui.ranks_open.track();
        ui.states.track();
        ui.variants.track();
        ui.align.track();
        if !LINK.with(|l| l.borrow().ready) {
            return;
        }
        let ticket = LINK.with(|l| {
            let mut l = l.borrow_mut();
            l.ticket += 1;
            l.ticket
        });
        // Panning and zooming write once they pause, not per frame.
        let cb = Closure::once_into_js(move || {
            if LINK.with(|l| l.borrow().ticket) == ticket {
                write_now(ui);
            }
        });
        let _ =
            window().set_timeout_with_callback_and_timeout_and_arguments_0(cb.unchecked_ref(), 150);
    });
    let on_nav = Closure::<dyn FnMut()>::new(move || {
        let hash = window().location().hash().unwrap_or_default();
        let Some(read) = Link::parse(&hash, "") else {
            return;
        };
        let again = LINK.with(|l| {
            let mut l = l.borrow_mut();
            if l.navigated == hash {
                return true;
            }
            // This step of history already holds the link: a write still
            // pending from before the step is dropped, and the next one
            // replaces this entry.
            l.navigated = hash.clone();
            l.written = hash.clone();
            l.place = place_of(&read.link);
            l.ticket += 1;
            false
        });
        if !again {
            set_html_attr("data-link", &hash);
            open(ui, read.link, read.dropped, Vec::new());
        }
    });
    for event in ["popstate", "hashchange"] {
        let _ = window().add_event_listener_with_callback(event, on_nav.as_ref().unchecked_ref());
    }
    on_nav.forget();
}

/// Opens the link in the page's address, if it has one (`false`: none —
/// the page opens its demo).
pub(crate) fn open_from_location(ui: Ui) -> bool {
    let loc = window().location();
    let read = Link::parse(
        &loc.hash().unwrap_or_default(),
        &loc.search().unwrap_or_default(),
    );
    let Some(read) = read else {
        LINK.with(|l| l.borrow_mut().ready = true);
        return false;
    };
    LINK.with(|l| l.borrow_mut().place = place_of(&read.link));
    open(ui, read.link, read.dropped, Vec::new());
    true
}

/// The open import standing for each of the link's traces (each open
/// trace stands for one at most).
fn open_ids(ui: Ui, link: &Link) -> Vec<Option<u32>> {
    let origins = ui.origins.get_untracked();
    let open: Vec<u32> = ui
        .traces
        .with_untracked(|t| t.iter().map(|s| s.id).collect());
    let mut used = Vec::new();
    link.traces
        .iter()
        .map(|r| {
            let id = origins
                .iter()
                .find(|(id, o)| o == r && open.contains(id) && !used.contains(id))
                .map(|x| x.0)?;
            used.push(id);
            Some(id)
        })
        .collect()
}

/// Opens what the link names that is not open yet, then shows its view.
/// `files`: the receiver's copies of the files the sender had dropped.
fn open(ui: Ui, link: Link, dropped: Vec<String>, mut files: Vec<Source>) {
    let ids = open_ids(ui, &link);
    let missing: Vec<usize> = (0..link.traces.len())
        .filter(|&k| ids[k].is_none())
        .collect();
    let needs: Vec<String> = missing
        .iter()
        .filter_map(|&k| match &link.traces[k] {
            TraceRef::File(n) => Some(n.clone()),
            _ => None,
        })
        .collect();
    // Each missing file: the dropped one of that name, else (renamed
    // copies) the next dropped in order when as many came as are needed.
    let by_order = files.len() == needs.len();
    let mut take = |name: &str| -> Option<Source> {
        match files.iter().position(|f| f.name() == name) {
            Some(k) => Some(files.remove(k)),
            None if by_order && !files.is_empty() => Some(files.remove(0)),
            None => None,
        }
    };
    let mut sources = Vec::new();
    let mut unmet = Vec::new();
    for &k in &missing {
        match &link.traces[k] {
            TraceRef::Url(u) => sources.push(Source::Url(u.clone())),
            TraceRef::Demo(n) => match crate::DEMO_TRACES.iter().find(|d| *d == n) {
                Some(name) => sources.push(Source::Demo(name.to_string())),
                None => unmet.push(format!("{n} (not among this version's demo traces)")),
            },
            TraceRef::File(n) => match take(n) {
                Some(src) => sources.push(src),
                None => unmet.push(n.clone()),
            },
        }
    }
    let waiting_for_files = !needs.is_empty() && unmet.iter().any(|u| needs.contains(u));
    if waiting_for_files {
        ui.demo.set(false);
        ui.link_note.set(Some(Note::NeedsFiles { names: needs }));
        LINK.with(|l| l.borrow_mut().waiting = Some(link));
        return;
    }
    ui.link_note
        .set((!dropped.is_empty() || !unmet.is_empty()).then(|| {
            let mut d = dropped;
            d.extend(unmet.into_iter().map(|n| format!("could not open {n}")));
            Note::Dropped(d)
        }));
    if link.traces.iter().all(|t| matches!(t, TraceRef::Demo(_))) {
        ui.demo.set(true);
    } else if !sources.is_empty() {
        ui.demo.set(false);
    }
    imports::enqueue_then(
        ui,
        sources,
        Box::new(move |ui, new_ids| {
            let mut new_ids = new_ids.into_iter();
            let ids: Vec<Option<u32>> = ids
                .into_iter()
                .map(|id| id.or_else(|| new_ids.next().flatten()))
                .collect();
            apply(ui, &link, &ids);
        }),
    );
}

/// The receiver dropped or picked files while a link waits for them: they
/// open the link. Gives the files back when no link waits.
pub(crate) fn take_files(ui: Ui, files: Vec<Source>) -> Option<Vec<Source>> {
    let Some(link) = LINK.with(|l| l.borrow_mut().waiting.take()) else {
        return Some(files);
    };
    open(ui, link, Vec::new(), files);
    None
}

/// Shows the link's view over the imports `ids` (one per trace of the link).
fn apply(ui: Ui, link: &Link, ids: &[Option<u32>]) {
    let id_of = |k: usize| ids.get(k).copied().flatten();
    let names: Vec<(u32, String)> = ui
        .traces
        .with_untracked(|t| t.iter().map(|s| (s.id, s.name.clone())).collect());
    if let Some(shown) = id_of(link.tab) {
        if let Some(k) = names.iter().position(|(id, _)| *id == shown) {
            ui.active.set(k);
        }
        let state = link.state.clone();
        ui.update_state(shown, |s| *s = state);
        ui.ranges.update(|r| {
            r.retain(|(t, _)| *t != shown);
            r.extend(link.state.range.map(|x| (shown, x)));
        });
        if ui.focus.get_untracked().is_some_and(|f| f.trace == shown) {
            ui.focus.set(None);
        }
    }
    let variants: Vec<VariantSpec> = link
        .variants
        .iter()
        .filter_map(|(k, region)| {
            let trace = id_of(*k)?;
            let file = names.iter().find(|(id, _)| *id == trace)?.1.clone();
            Some(VariantSpec {
                trace,
                file,
                region: region.clone(),
            })
        })
        .collect();
    if !variants.is_empty() {
        ui.variants.set(variants);
    }
    ui.align.set(link.align);
    if let Some(v) = VIEWS.iter().position(|v| *v == link.view) {
        ui.view.set(v as u8);
    }
    ui.library_open.set(false);
    ui.compare_open.set(link.view == View::Compare);
    ui.ranks_open
        .set(link.view == View::Ranks && ui.rank_set.with_untracked(Option::is_some));
    ui.remount.update(|n| *n += 1);
    LINK.with(|l| l.borrow_mut().ready = true);
}

/// The link shown in the copy box, and the files it cannot carry.
fn copy(link: Link, shown: RwSignal<Option<(String, Vec<String>)>>) {
    let url = address(&link.to_hash());
    let files = link
        .traces
        .iter()
        .filter_map(|t| match t {
            TraceRef::File(n) => Some(n.clone()),
            _ => None,
        })
        .collect();
    let clipboard = window().navigator().clipboard();
    let _ = clipboard.write_text(&url);
    shown.set(Some((url, files)));
}

/// *Copy link* in the header, and the box that shows the link copied.
#[component]
pub fn CopyLink() -> impl IntoView {
    let ui: Ui = expect_context();
    let shown = RwSignal::new(None::<(String, Vec<String>)>);
    let has_trace = move || ui.traces.with(|t| !t.is_empty());
    view! {
        <Show when=has_trace>
            <button class="button" id="copy-link"
                title="A link that reopens this view: traces, tab, view, time range, selection, search, table and comparison"
                data-link=move || shown.get().map(|s| s.0).unwrap_or_default()
                on:click=move |_| {
                    if let Some(link) = current(ui) {
                        copy(link, shown);
                    }
                }>"Copy link"</button>
        </Show>
        {move || shown.get().map(|(url, files)| view! {
            <div class="copied-link" id="copied-link" role="status">
                <span>"Link copied — it reopens this view:"</span>
                <input readonly value=url.clone() aria-label="The link" on:focus=|ev| {
                    if let Some(i) = ev.target().and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok()) {
                        i.select();
                    }
                }/>
                {(!files.is_empty()).then(|| view! {
                    <p class="muted" id="copied-link-files">
                        {format!(
                            "{} came from your disk and was never uploaded, so the link cannot carry it: \
                             whoever opens the link is asked to drop their own copy, and the view then reopens.",
                            files.join(", ")
                        )}
                    </p>
                })}
                <button on:click=move |_| shown.set(None)>"Close"</button>
            </div>
        })}
    }
}

/// Copies a link to one slice of trace `trace`: the timeline fitted on
/// it, the slice selected (Perfetto's deep links do the same).
pub(crate) fn slice_link(
    ui: Ui,
    trace: u32,
    slice: u32,
    start_ns: i64,
    end_ns: i64,
) -> Option<String> {
    let mut link = current(ui)?;
    if !ui
        .origins
        .with_untracked(|o| o.iter().any(|(t, _)| *t == trace))
    {
        return None;
    }
    link.view = View::Timeline;
    let pad = (end_ns - start_ns).max(1) / 10;
    link.state.window = Some((start_ns - pad, end_ns + pad));
    link.state.selection = Some(slice);
    link.variants.clear();
    let url = address(&link.to_hash());
    let _ = window().navigator().clipboard().write_text(&url);
    Some(url)
}

/// What the page says about the link it opened with.
#[component]
pub fn LinkNotice() -> impl IntoView {
    let ui: Ui = expect_context();
    move || {
        ui.link_note.get().map(|note| match note {
            Note::NeedsFiles { names } => view! {
                <div class="link-note" id="link-needs-files" role="status" data-files=names.join("\n")>
                    <strong>"This link reopens a view of "{names.join(", ")}"."</strong>
                    " Whoever shared it opened that trace from their own disk, and tracelane never uploads traces, \
                     so the link cannot bring it. Drop your copy here (or use Open trace…) and the view reopens."
                    <button id="link-open-demo" on:click=move |_| {
                        LINK.with(|l| { let mut l = l.borrow_mut(); l.waiting = None; l.ready = true; });
                        ui.link_note.set(None);
                        crate::page::imports::open_demo(ui);
                    }>"Open the demo instead"</button>
                </div>
            }
            .into_any(),
            Note::Dropped(parts) => view! {
                <div class="link-note" id="link-dropped" role="status">
                    "The link reopened what it could; left out: "{parts.join("; ")}"."
                    <button on:click=move |_| ui.link_note.set(None)>"Dismiss"</button>
                </div>
            }
            .into_any(),
        })
    }
}

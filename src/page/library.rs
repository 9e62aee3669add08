//! A team's trace library: a deployment built with `scripts/library.mjs`
//! names its list in `<meta name="tracelane-library">`; the page then opens
//! on it — a searchable list where one trace opens in a tab, several open
//! side by side in the comparison, or as the ranks of one run — with the
//! built-in demo one click away. Its traces are fetched like `?url=` ones,
//! so a link to a view of them reopens anywhere the library is served.
//!
//! Signals for tests: `#library` carries `data-count` (entries listed) and
//! `data-shown` (entries matching the search).

use leptos::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::page::dom::window;
use crate::page::imports;
use crate::page::sources::Source;
use crate::page::state::Ui;
use crate::shared::library::{self, Entry};
use crate::shared::table;

/// The library's list, if this deployment has one.
fn list_url() -> Option<String> {
    window()
        .document()?
        .query_selector("meta[name=tracelane-library]")
        .ok()??
        .get_attribute("content")
        .filter(|c| !c.is_empty())
}

async fn fetch_text(url: &str) -> Result<String, String> {
    let resp = crate::page::dom::fetch_ok(url).await?;
    let text = JsFuture::from(
        resp.text()
            .map_err(|_| "could not read the list".to_string())?,
    )
    .await
    .map_err(|_| "could not read the list".to_string())?;
    Ok(text.as_string().unwrap_or_default())
}

/// Loads the library if the deployment has one; `true` if it has (the page
/// then opens on it rather than on the demo).
pub(crate) fn start(ui: Ui, show: bool) -> bool {
    let Some(url) = list_url() else {
        return false;
    };
    if show {
        ui.demo.set(false);
        ui.library_open.set(true);
    }
    leptos::task::spawn_local(async move {
        let list = fetch_text(&url).await.and_then(|t| library::parse(&t));
        ui.library.set(Some(list));
    });
    true
}

/// Opens entries as the ranks of one run: each fetched, then handed to the
/// ranks view as a file.
fn open_as_ranks(ui: Ui, picked: Vec<Entry>) {
    leptos::task::spawn_local(async move {
        let mut files = Vec::new();
        for e in picked {
            match imports::blob_of(Source::Url(e.url.clone())).await {
                Ok(blob) => {
                    let parts = js_sys::Array::of1(&blob);
                    if let Ok(f) = web_sys::File::new_with_blob_sequence(&parts, &e.name) {
                        files.push(f);
                    }
                }
                Err(message) => {
                    ui.status.set(crate::page::state::Status::Failed {
                        name: e.name.clone(),
                        message,
                    });
                    return;
                }
            }
        }
        ui.library_open.set(false);
        crate::page::ranks::open(ui, files, false, None);
    });
}

#[component]
pub fn LibraryPanel() -> impl IntoView {
    let ui: Ui = expect_context();
    let query = RwSignal::new(String::new());
    let picked = RwSignal::new(Vec::<usize>::new());
    let entries = move || ui.library.get().and_then(Result::ok).unwrap_or_default();
    let shown = move || -> Vec<(usize, Entry)> {
        let q = query.get();
        entries()
            .into_iter()
            .enumerate()
            .filter(|(_, e)| library::matches(e, &q))
            .collect()
    };
    let open = move |which: Vec<usize>| {
        let all = entries();
        let sources: Vec<Source> = which
            .iter()
            .filter_map(|&k| all.get(k))
            .map(|e| Source::Url(e.url.clone()))
            .collect();
        if sources.is_empty() {
            return;
        }
        ui.library_open.set(false);
        ui.demo.set(false);
        imports::enqueue_batch(ui, sources);
    };
    view! {
        <section class="library" id="library"
            data-count=move || entries().len().to_string()
            data-shown=move || shown().len().to_string()>
            <h2>"Team library"</h2>
            {move || match ui.library.get() {
                None => Some(view! { <p class="muted">"Reading the library…"</p> }.into_any()),
                Some(Err(e)) => Some(view! { <p class="error-text" id="library-error">{e}</p> }.into_any()),
                Some(Ok(_)) => None,
            }}
            <div class="controls">
                <input type="search" id="library-search" placeholder="search names, tags, descriptions"
                    aria-label="Search the library" prop:value=move || query.get()
                    on:input=move |ev| query.set(event_target_value(&ev))/>
                <button id="library-open" disabled=move || picked.with(Vec::is_empty)
                    title="One opens in a tab; several open side by side in the comparison"
                    on:click=move |_| open(picked.get_untracked())>
                    {move || match picked.with(Vec::len) {
                        0 | 1 => "Open".to_string(),
                        n => format!("Compare {n}"),
                    }}
                </button>
                <button id="library-ranks" disabled=move || picked.with(|p| p.len() < 2)
                    title="The picked traces are the ranks of one distributed run"
                    on:click=move |_| {
                        let all = entries();
                        open_as_ranks(ui, picked.get_untracked().iter().filter_map(|&k| all.get(k).cloned()).collect());
                    }>"Open as ranks"</button>
                <button id="library-demo" on:click=move |_| {
                    ui.library_open.set(false);
                    crate::page::imports::open_demo(ui);
                }>"Open the built-in demo"</button>
            </div>
            <table class="library-list">
                <thead><tr><th></th><th>"Trace"</th><th>"Tags"</th><th>"Description"</th><th>"Size"</th></tr></thead>
                <tbody>
                    {move || shown().into_iter().map(|(k, e)| {
                        let label = format!("Pick {}", e.name);
                        view! {
                            <tr class="library-row" data-name=e.name.clone()>
                                <td><input type="checkbox" class="library-pick" aria-label=label
                                    prop:checked=move || picked.with(|p| p.contains(&k))
                                    on:change=move |ev| {
                                        let on = event_target_checked(&ev);
                                        picked.update(|p| { p.retain(|x| *x != k); if on { p.push(k); } });
                                    }/></td>
                                <td><button class="library-name link-button" title="Open this trace"
                                    on:click=move |_| open(vec![k])>{e.name.clone()}</button></td>
                                <td>{e.tags.iter().map(|t| view! { <span class="tag">{t.clone()}</span> }).collect_view()}</td>
                                <td>{e.description.clone()}</td>
                                <td class="num">{e.bytes.map(table::fmt_bytes).unwrap_or_default()}</td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </section>
    }
}

//! The op table: PyTorch's `key_averages()` rows, sorted, filtered,
//! grouped by name or input shapes, virtualised; a row's details (what it
//! launched, where it sits); its exports (the core's one exporter).

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::page::client;
use crate::page::dom::{download, window};
use crate::page::state::Ui;
use crate::shared::link::TableState;
use crate::shared::protocol::{Answer, Ask, Summary};
use crate::shared::table::{self, Column};
use tracelane_core::analysis::op_details::{NamedStats, OpDetails};
use tracelane_core::analysis::ops::OpRow;

const ROW_PX: f64 = 28.0;

#[derive(Clone, Copy, PartialEq)]
enum Group {
    Name,
    Shape,
}

/// One op table's state, shared by its parts: its rows by shape (once
/// asked for), the filter, grouping, sort and selection, and the rows they
/// give (by name, kept by the `rows` memo). A `Copy` handle.
#[derive(Clone, Copy)]
struct Tbl {
    trace_id: u32,
    file: StoredValue<String>,
    totals: table::Totals,
    /// The trace recorded memory: the memory columns are shown.
    memory: bool,
    /// By shape: asked of the worker the first time the table is grouped so.
    by_shape: RwSignal<Option<Vec<OpRow>>>,
    query: RwSignal<String>,
    use_regex: RwSignal<bool>,
    regex_error: RwSignal<Option<String>>,
    group: RwSignal<Group>,
    show_device_rows: RwSignal<bool>,
    top: RwSignal<usize>,
    sort: RwSignal<(Column, bool)>,
    selected: RwSignal<Option<OpRow>>,
    scroll: RwSignal<f64>,
    /// The rows shown: filtered, sorted, cut to the top N.
    rows: Memo<Vec<OpRow>>,
}

impl Tbl {
    /// The table as trace `summary.id`'s view state last left it.
    fn new(summary: Summary, ui: Ui) -> Tbl {
        let first_sort = (
            tracelane_core::export::default_sort(&summary.rows_by_name),
            true,
        );
        let was = ui.state_of(summary.id).table;
        let memory = table::has_memory(&summary.rows_by_name);
        let by_name = StoredValue::new(summary.rows_by_name);
        let by_shape = RwSignal::new(summary.rows_by_shape);
        let query = RwSignal::new(was.query);
        let use_regex = RwSignal::new(was.regex);
        let regex_error = RwSignal::new(None::<String>);
        let group = RwSignal::new(if was.by_shape {
            Group::Shape
        } else {
            Group::Name
        });
        let show_device_rows = RwSignal::new(was.device_rows);
        let top = RwSignal::new(was.top);
        let sort = RwSignal::new(was.sort.unwrap_or(first_sort));
        // What the table shows goes into the view state (and the link).
        let id = summary.id;
        Effect::new(move |_| {
            let table = TableState {
                query: query.get(),
                regex: use_regex.get(),
                by_shape: group.get() == Group::Shape,
                device_rows: show_device_rows.get(),
                top: top.get(),
                sort: Some(sort.get()).filter(|s| *s != first_sort),
            };
            ui.update_state(id, |s| s.table = table);
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
        Tbl {
            trace_id: summary.id,
            file: StoredValue::new(summary.name),
            totals: table::Totals {
                cpu_self_ns: summary.self_cpu_total_ns,
                device_self_ns: summary.self_device_total_ns,
            },
            memory,
            by_shape,
            query,
            use_regex,
            regex_error,
            group,
            show_device_rows,
            top,
            sort,
            selected: RwSignal::new(None),
            scroll: RwSignal::new(0.0),
            rows,
        }
    }

    fn by_shape(self) -> bool {
        self.group.get_untracked() == Group::Shape
    }

    /// The columns shown (input shapes only when grouped by them).
    fn columns(self) -> Vec<Column> {
        Column::shown(self.group.get() == Group::Shape, self.memory).collect()
    }
}

/// Asks the worker for the by-shape rows the first time they are needed.
fn fetch_shape_rows(t: Tbl) {
    let asked = RwSignal::new(false);
    Effect::new(move |_| {
        if t.group.get() == Group::Shape
            && t.by_shape.with_untracked(Option::is_none)
            && !asked.get_untracked()
        {
            asked.set(true);
            let id = t.trace_id;
            leptos::task::spawn_local(async move {
                if let Ok(Answer::ShapeRows { rows }) = client::ask(Ask::ShapeRows { id }).await {
                    t.by_shape.set(Some(rows));
                }
            });
        }
    });
}

#[component]
pub(crate) fn OpTable(summary: Summary) -> impl IntoView {
    let ui: Ui = expect_context();
    let t = Tbl::new(summary, ui);
    fetch_shape_rows(t);
    // The timeline highlights every occurrence of the selected row.
    Effect::new(move |_| {
        if let Some(r) = t.selected.get() {
            ui.table_highlight
                .set(Some(crate::shared::table::highlight_for(&r)));
        }
    });
    view! {
        <Controls t=t/>
        // `data-group` / `data-ready`: which grouping the rows show, and
        // whether its rows have arrived (by-shape rows come from the worker
        // when first asked for) — what tests wait on.
        <div class="table" role="table" aria-label="Operators"
            data-group=move || if t.group.get() == Group::Shape { "shape" } else { "name" }
            data-ready=move || (t.group.get() == Group::Name || t.by_shape.with(Option::is_some)).to_string()>
            <Header t=t/>
            <Body t=t/>
        </div>
        {move || t.rows.with(|r| r.iter().any(|r| past_total(r, t.totals))).then(|| view! {
            <p class="footnote" id="device-pct-note"><sup>"†"</sup>" Device self % above 100 %: "{OVER_100}</p>
        })}
        {move || t.selected.get().map(|r| view! { <RowDetails row=r totals=t.totals trace_id=t.trace_id/> })}
    }
}

/// Why a device self % passes 100 % (PyTorch's rule, kept as PyTorch
/// reports it): the rows where it does carry this as a tooltip.
const OVER_100: &str = "the GPU-side copy of a record_function range (gpu_user_annotation; here ProfilerStep*) is a row of its own whose device time is its span — idle time included — as PyTorch's key_averages() counts it, while the % is of the kernels' total; so this row can pass 100 %. The number is PyTorch's own.";

/// A row whose device self time is more than the table's total (a GPU-side
/// annotation's span: see [`OVER_100`]).
fn past_total(row: &OpRow, totals: table::Totals) -> bool {
    totals.device_self_ns > 0 && row.device_self_ns > totals.device_self_ns
}

/// Filter, grouping, device rows, top N, exports and the row count.
#[component]
fn Controls(t: Tbl) -> impl IntoView {
    let export_csv = move |_| {
        let text = table::to_csv(&t.rows.get_untracked(), t.by_shape());
        download(
            &format!("{}.ops.csv", t.file.get_value()),
            "text/csv",
            &text,
        );
    };
    let export_md = move |_| {
        let text = table::to_markdown(&t.rows.get_untracked(), t.by_shape(), t.totals);
        let _ = window().navigator().clipboard().write_text(&text);
        download("ops.md", "text/markdown", &text);
    };
    view! {
        <div class="controls">
            <input
                type="search"
                id="filter"
                placeholder="Filter by name"
                aria-label="Filter rows by name"
                prop:value=t.query.get_untracked()
                on:input=move |ev| t.query.set(event_target_value(&ev))
            />
            <label>
                <input type="checkbox" id="filter-regex" prop:checked=t.use_regex.get_untracked() on:change=move |ev| t.use_regex.set(event_target_checked(&ev))/>
                "regex"
            </label>
            {move || t.regex_error.get().map(|e| view! { <span class="error-text">{e}</span> })}
            {move || (t.group.get() == Group::Shape && t.by_shape.with(Option::is_none)).then(|| view! {
                <span class="muted" id="shapes-loading">"grouping by input shapes…"</span>
            })}
            <label>
                "Group by "
                <select
                    id="group-by"
                    on:change=move |ev| t.group.set(if event_target_value(&ev) == "shape" { Group::Shape } else { Group::Name })
                >
                    <option value="name">"name"</option>
                    <option value="shape" selected=t.by_shape()>"name + input shapes"</option>
                </select>
            </label>
            <label>
                <input type="checkbox" id="show-device" prop:checked=t.show_device_rows.get_untracked() on:change=move |ev| t.show_device_rows.set(event_target_checked(&ev))/>
                "device-event rows"
            </label>
            <label>
                "Top "
                <select id="top-n" on:change=move |ev| t.top.set(event_target_value(&ev).parse().unwrap_or(0))>
                    {
                        // A link may ask for any N: offered beside the usual ones.
                        let now = t.top.get_untracked();
                        let mut ns = vec![0, 10, 25, 100];
                        if !ns.contains(&now) {
                            ns.push(now);
                            ns.sort_unstable();
                        }
                        ns.into_iter().map(|n| view! {
                            <option value=n.to_string() selected=n == now>{if n == 0 { "all".to_string() } else { n.to_string() }}</option>
                        }).collect_view()
                    }
                </select>
            </label>
            <button id="export-csv" on:click=export_csv>"Export CSV"</button>
            <button id="export-md" on:click=export_md>"Copy Markdown"</button>
            <span class="muted" id="row-count">{move || format!("{} rows", t.rows.with(|r| r.len()))}</span>
        </div>
    }
}

/// Column headers: a click sorts by the column, a second reverses.
#[component]
fn Header(t: Tbl) -> impl IntoView {
    view! {
        <div class="thead" role="row">
            {move || {
                t.columns()
                    .into_iter()
                    .map(|c| {
                        let arrow = move || match t.sort.get() {
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
                                    t.sort.update(|(col, desc)| {
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
    }
}

/// Rows a PageUp / PageDown moves.
const PAGE_ROWS: usize = 15;

/// Moves the keyboard focus to row `k`: scrolled into the virtual list's
/// view, then focused once it is drawn.
fn focus_row(t: Tbl, k: usize, viewport_px: f64) {
    let body = window()
        .document()
        .and_then(|d| d.query_selector(".tbody").ok().flatten());
    let mut scrolled = false;
    if let Some(body) = body {
        let top = k as f64 * ROW_PX;
        let scroll = t.scroll.get_untracked();
        let next = if top < scroll {
            top
        } else if top + ROW_PX > scroll + viewport_px {
            top + ROW_PX - viewport_px
        } else {
            scroll
        };
        if next != scroll {
            body.set_scroll_top(next as i32);
            t.scroll.set(next);
            scrolled = true;
        }
    }
    let focus = move || {
        let row = window()
            .document()?
            .query_selector(&format!(".tbody .tr[data-index=\"{k}\"]"))
            .ok()??;
        row.unchecked_into::<web_sys::HtmlElement>().focus().ok()
    };
    // A scroll draws the rows again (on the next frame): focus the new one.
    if scrolled || focus().is_none() {
        let later = wasm_bindgen::closure::Closure::once_into_js(move || {
            focus();
        });
        let _ = window().request_animation_frame(later.unchecked_ref());
    }
}

/// The rows in view only (a virtual list); a click or Enter selects one,
/// the arrows, PageUp / PageDown, Home / End move between rows.
#[component]
fn Body(t: Tbl) -> impl IntoView {
    let viewport_px = 560.0;
    let visible = move || {
        t.rows
            .with(|r| table::visible_range(t.scroll.get(), viewport_px, ROW_PX, r.len(), 8))
    };
    view! {
        <div
            class="tbody"
            style=format!("height:{viewport_px}px")
            data-first-row=move || visible().0
            on:scroll=move |ev| {
                let el: web_sys::Element = event_target(&ev);
                t.scroll.set(el.scroll_top() as f64);
            }
        >
            <div style=move || format!("height:{}px;position:relative", t.rows.with(|r| r.len()) as f64 * ROW_PX)>
                {move || {
                    let cols = t.columns();
                    let (a, b) = visible();
                    t.rows.with(|r| {
                        r[a..b]
                            .iter()
                            .enumerate()
                            .map(|(k, row)| {
                                let top_px = (a + k) as f64 * ROW_PX;
                                let row_c = row.clone();
                                let cells = cols
                                    .iter()
                                    .map(|&c| {
                                        let over = c == Column::DevicePct && past_total(row, t.totals);
                                        view! {
                                            <span class="td" role="cell" class:num=c.descending_first() class:over=over
                                                title=over.then_some(OVER_100)>{table::cell(row, c, t.totals)}</span>
                                        }
                                    })
                                    .collect_view();
                                let is_sel = t.selected.with(|s| s.as_ref() == Some(row));
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
                                            move |_| t.selected.set(Some(r.clone()))
                                        }
                                        data-index=a + k
                                        aria-selected=is_sel.to_string()
                                        on:keydown=move |ev: web_sys::KeyboardEvent| {
                                            let at = a + k;
                                            let n = t.rows.with_untracked(Vec::len);
                                            let to = match ev.key().as_str() {
                                                "Enter" | " " => {
                                                    ev.prevent_default();
                                                    t.selected.set(Some(row_c.clone()));
                                                    return;
                                                }
                                                "ArrowDown" => at + 1,
                                                "ArrowUp" => at.saturating_sub(1),
                                                "PageDown" => at + PAGE_ROWS,
                                                "PageUp" => at.saturating_sub(PAGE_ROWS),
                                                "Home" => 0,
                                                "End" => n.saturating_sub(1),
                                                _ => return,
                                            };
                                            ev.prevent_default();
                                            focus_row(t, to.min(n.saturating_sub(1)), viewport_px);
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

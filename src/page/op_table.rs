//! The op table: PyTorch's `key_averages()` rows, sorted, filtered,
//! grouped by name or input shapes, virtualised; a row's details (what it
//! launched, where it sits); its exports (the core's one exporter).

use leptos::prelude::*;

use crate::page::client;
use crate::page::dom::{download, window};
use crate::page::state::Ui;
use crate::shared::protocol::{Answer, Ask, Summary};
use crate::shared::table::{self, Column};
use tracelane_core::analysis::ops::{NamedStats, OpDetails, OpRow};

const ROW_PX: f64 = 28.0;

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
                .set(Some(crate::shared::table::highlight_for(&r)));
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

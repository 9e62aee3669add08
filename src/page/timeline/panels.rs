//! The timeline's parts: toolbar, legend, lane labels, ruler, plot,
//! tooltip, and the panels under it (a range's op table, a slice's details).

use leptos::prelude::*;
use tracelane_core::timeline::ruler_ticks;

use crate::page::op_table::OpTable;
use crate::page::state::Ui;
use crate::shared::protocol::Summary;
use crate::shared::table;
use crate::shared::timeline_view::{palette, LaneKind, LaneView, PickedSlice, LEGEND, ROW_PX};

use super::paint::paint_in_worker;
use super::state::{Drag, Tl, LABELS_PX};

/// The span the plot shows, from the trace's start (`1 ms – 2 ms
/// (showing 1 ms)`); reactive.
pub(super) fn visible_span(tl: Tl) -> String {
    let a = tl.axis.get();
    let (from, to) = (a.start_ns - tl.t0, a.time(tl.width.get()) - tl.t0);
    format!(
        "{} – {} (showing {})",
        table::fmt_ns(from as f64),
        table::fmt_ns(to as f64),
        table::fmt_ns((to - from) as f64)
    )
}

/// Visible span, search with its count, the op table's highlight, colours.
#[component]
pub(super) fn Toolbar(tl: Tl) -> impl IntoView {
    let ui: Ui = expect_context();
    let visible = move || visible_span(tl);
    view! {
        <div class="timeline-bar">
            <span id="timeline-range">{visible}</span>
            <input type="search" id="timeline-search" placeholder="search names (Enter / Shift+Enter)"
                prop:value=move || tl.search.get()
                on:input=move |ev| { tl.search.set(event_target_value(&ev)); tl.search_at.set(None); tl.search_asked.set(None); }
                on:keydown=move |ev: web_sys::KeyboardEvent| {
                    if ev.key() == "Enter" {
                        ev.prevent_default();
                        tl.find(if ev.shift_key() { -1 } else { 1 });
                    }
                }/>
            // `data-asked` / `data-answered`: the match last asked for and the
            // one shown — equal once the answer to the last question is in.
            <span id="search-count" class="muted"
                data-asked=move || tl.search_asked.get().map(|k| k.to_string()).unwrap_or_default()
                data-answered=move || tl.search_at.get().map(|(_, k)| k.to_string()).unwrap_or_default()>
                {move || match (tl.highlight.get(), tl.search_at.get()) {
                (Some(_), Some((0, _))) => "no match".to_string(),
                (Some(_), Some((n, k))) => format!("{} / {n}", k.rem_euclid(n as i64) + 1),
                (Some(h), None) if h.exact => format!("highlighting “{}”", h.text),
                _ => String::new(),
            }}</span>
            {move || ui.table_highlight.get().map(|_| view! {
                <button id="clear-highlight" on:click=move |_| ui.table_highlight.set(None)>"clear highlight"</button>
            })}
            {
                let empty = tl.lanes.with_value(|l| l.iter().filter(|x| x.empty).count());
                (empty > 0).then(|| view! {
                    <label title="Lanes with no slices (instant markers at most), and groups with only such lanes">
                        <input type="checkbox" id="show-empty" prop:checked=move || !tl.hide_empty.get()
                            on:change=move |ev| tl.hide_empty.set(!event_target_checked(&ev))/>
                        {format!("show {empty} empty lane{}", if empty == 1 { "" } else { "s" })}
                    </label>
                })
            }
            {move || ui.path_shown.get().filter(|(t, _)| *t == tl.id).map(|_| view! {
                <button id="clear-path" title="Stop drawing the critical path" on:click=move |_| ui.path_shown.set(None)>"critical path ✕"</button>
            })}
            {move || tl.selected.get().filter(|p| p.slice != tracelane_core::model::NO_SLICE).map(|p| {
                let copied = RwSignal::new(String::new());
                let (a, b) = (tl.t0 + p.start_ns, tl.t0 + p.start_ns + p.dur_ns.max(1));
                view! {
                    <button id="copy-slice-link" data-link=move || copied.get()
                        title="Copy a link that opens this timeline on this slice, selected"
                        on:click=move |_| copied.set(crate::page::link::slice_link(ui, tl.id, p.slice, a, b).unwrap_or_default())>
                        {move || if copied.with(String::is_empty) { "Link to this slice" } else { "Link copied" }}
                    </button>
                }
            })}
            <label><input type="checkbox" id="colour-by-name" prop:checked=move || tl.colour_by_name.get()
                on:change=move |ev| tl.colour_by_name.set(event_target_checked(&ev))/>" colour by name"</label>
        </div>
    }
}

#[component]
pub(super) fn Legend() -> impl IntoView {
    let items = LEGEND
        .iter()
        .map(|&(code, what)| {
            view! { <span class="legend-item"><i style=format!("background:{}", palette()[code as usize])></i>{what}</span> }
        })
        .collect_view();
    view! { <div class="legend">{items}</div> }
}

/// Group headers (fold and unfold) and a label per lane, row for row with the plot.
#[component]
fn LaneLabels(tl: Tl) -> impl IntoView {
    let lane_labels = move || {
        let l = tl.layout.get();
        let folded = tl.collapsed.get();
        tl.lanes.with_value(|lanes| {
            let mut out = Vec::new();
            for &(group, row, count) in &l.headers {
                let first = lanes.iter().position(|x| x.group == group).unwrap_or(0);
                let open = !folded.contains(&group);
                let device = lanes[first].kind == LaneKind::Device;
                let title = format!(
                    "{}{} ({count} lane{})",
                    lanes[first].group_label,
                    if device { " · device" } else { "" },
                    if count == 1 { "" } else { "s" }
                );
                out.push(
                    view! {
                        <button class="lane-group" data-row=row aria-expanded=open.to_string() title=title.clone()
                            on:click=move |_| tl.collapsed.update(|c| {
                                if let Some(k) = c.iter().position(|g| *g == group) { c.remove(k); } else { c.push(group); }
                            })>
                            {if open { "▾ " } else { "▸ " }}{title.clone()}
                        </button>
                    }
                    .into_any(),
                );
                if !open {
                    continue;
                }
                for (k, lane) in lanes.iter().enumerate().filter(|(_, x)| x.group == group) {
                    // A hidden (empty) lane has no row.
                    let Some(row) = l.lane_first_row[k] else { continue };
                    let h = lane.rows as f64 * ROW_PX;
                    let text = match lane.peak {
                        Some(peak) => format!("{} (peak {})", lane.label, table::fmt_count_f(peak)),
                        None => lane.label.clone(),
                    };
                    out.push(view! {
                        <div class="lane-label" class:device=lane.kind == LaneKind::Device class:counter=lane.kind == LaneKind::Counter
                            data-row=row data-indent=lane.indent
                            style=format!("height:{h}px;padding-left:calc(1.1rem + {}px)", 14 * lane.indent as u32) title=text.clone()>
                            {text.clone()}
                        </div>
                    }.into_any());
                }
            }
            out
        })
    };
    view! {
        // Exactly LABELS_PX wide whatever the names (long ones are cut with
        // an ellipsis): the plot's width is computed from it.
        <div class="lane-labels" style=format!("flex:0 0 {LABELS_PX}px;width:{LABELS_PX}px;min-width:0")>
            <div class="ruler-corner"></div>
            {lane_labels}
        </div>
    }
}

/// The lane labels beside the plot (ruler, the two canvases the worker
/// paints, the tooltip): what scrolls inside a timeline's box.
#[component]
pub(super) fn LanesAndPlot(tl: Tl) -> impl IntoView {
    let rects: NodeRef<leptos::html::Canvas> = NodeRef::new();
    let overlay: NodeRef<leptos::html::Canvas> = NodeRef::new();
    let no_offscreen = paint_in_worker(tl, rects, overlay);
    let width = tl.width;
    view! {
        <LaneLabels tl=tl/>
        <div class="timeline-plot" style=move || format!("width:{}px", width.get())>
            <Ruler tl=tl/>
            {move || no_offscreen.get().then(|| view! {
                <p class="error-text">"This browser cannot draw the timeline in a worker (it lacks OffscreenCanvas); use a current Chrome, Edge, Firefox or Safari."</p>
            })}
            <Plot tl=tl rects=rects overlay=overlay/>
            <Tooltip tl=tl/>
        </div>
    }
}

/// Time ticks, and the selected range with its length; a drag selects one.
#[component]
fn Ruler(tl: Tl) -> impl IntoView {
    let ui: Ui = expect_context();
    let (t0, width) = (tl.t0, tl.width);
    let selection_label = move || {
        let (a, b) = tl.range.get()?;
        let ax = tl.axis.get();
        let width = tl.width.get();
        let (x0, x1) = (ax.px(a).clamp(0.0, width), ax.px(b).clamp(0.0, width));
        Some(view! {
            <span class="ruler-selection" id=tl.dom_id("ruler-selection") style=format!("left:{x0:.1}px;width:{:.1}px", (x1 - x0).max(1.0))>
                {table::fmt_ns((b - a) as f64)}
            </span>
        })
    };
    view! {
        <div class="ruler" id=tl.dom_id("timeline-ruler") style=move || format!("width:{}px", width.get())
            on:mousedown=move |ev: web_sys::MouseEvent| { ev.prevent_default(); tl.begin_range(ev.offset_x() as f64) }
            on:mousemove=move |ev: web_sys::MouseEvent| tl.move_range(ev.offset_x() as f64)
            on:mouseup=move |ev: web_sys::MouseEvent| tl.end_drag(ev.offset_x() as f64, 0.0, ui)>
            {move || {
                ruler_ticks(&tl.axis.get(), width.get(), t0, 90.0)
                    .into_iter()
                    .map(|t| view! { <span class="tick" style=format!("left:{:.1}px", t.x_px)>{t.label}</span> })
                    .collect_view()
            }}
            {selection_label}
        </div>
    }
}

/// The two canvases the worker paints, and the pointer on them: wheel
/// zooms, drag pans, Shift+drag selects a range, hover and click pick.
#[component]
fn Plot(
    tl: Tl,
    rects: NodeRef<leptos::html::Canvas>,
    overlay: NodeRef<leptos::html::Canvas>,
) -> impl IntoView {
    let ui: Ui = expect_context();
    let width = tl.width;
    let plot_h = move || tl.layout.get().rows as f64 * ROW_PX;
    view! {
        <div class="plot-layers" style=move || format!("height:{}px", plot_h())>
            <canvas node_ref=rects class="rects" style=move || format!("width:{}px;height:{}px", width.get(), plot_h())></canvas>
            <canvas
                node_ref=overlay
                class="overlay"
                style=move || format!("width:{}px;height:{}px", width.get(), plot_h())
                on:wheel=move |ev: web_sys::WheelEvent| {
                    ev.prevent_default();
                    // Trackpads send many small deltas: zoom by their size.
                    let f = (-ev.delta_y() / 400.0).clamp(-0.5, 0.5).exp();
                    tl.axis.update(|a| *a = a.zoom(f, ev.offset_x() as f64));
                }
                on:mousedown=move |ev: web_sys::MouseEvent| {
                    let x = ev.offset_x() as f64;
                    if ev.shift_key() {
                        tl.begin_range(x);
                    } else {
                        tl.drag.set(Some(Drag::Pan { start: x, last: x }));
                    }
                }
                on:mousemove=move |ev: web_sys::MouseEvent| {
                    let (x, y) = (ev.offset_x() as f64, ev.offset_y() as f64);
                    match tl.drag.get_untracked() {
                        None => {
                            tl.hover_at.set(Some((x, y)));
                            tl.pick_at(x, y, true);
                        }
                        Some(Drag::Pan { start, last }) => {
                            if (x - start).abs() > 3.0 {
                                tl.axis.update(|a| *a = a.pan(last - x));
                            }
                            tl.drag.set(Some(Drag::Pan { start, last: x }));
                        }
                        Some(Drag::Range { .. }) => tl.move_range(x),
                    }
                }
                on:mouseup=move |ev: web_sys::MouseEvent| tl.end_drag(ev.offset_x() as f64, ev.offset_y() as f64, ui)
                on:mouseleave=move |_| {
                    tl.hover_at.set(None);
                    tl.hovers.forget();
                    tl.hovered.set(None);
                    if matches!(tl.drag.get_untracked(), Some(Drag::Pan { .. })) {
                        tl.drag.set(None);
                    }
                }
            ></canvas>
        </div>
    }
}

/// The hovered slice: name, category, start, duration, self time.
#[component]
fn Tooltip(tl: Tl) -> impl IntoView {
    move || {
        let (x, y) = tl.hover_at.get()?;
        let p = tl.hovered.get()?;
        Some(view! {
            <div class="tooltip" id=tl.dom_id("timeline-tooltip") style=format!("left:{:.0}px;top:{:.0}px", x + 14.0, y + 34.0)>
                <strong>{p.name}</strong>
                <br/>
                {format!(
                    "{} · start {} · {} (self {})",
                    p.category,
                    table::fmt_ns(p.start_ns as f64),
                    table::fmt_ns(p.dur_ns as f64),
                    table::fmt_ns(p.self_ns as f64)
                )}
            </div>
        })
    }
}

/// The op table of the selected range, or of the visible range when it
/// follows the view.
#[component]
pub(super) fn RangePanel(tl: Tl, summary: Summary) -> impl IntoView {
    let t0 = tl.t0;
    view! {
        <div class="range-panel">
            <label><input type="checkbox" id="follow-visible" prop:checked=move || tl.follow.get()
                on:change=move |ev| {
                    let on = event_target_checked(&ev);
                    tl.follow.set(on);
                    if on {
                        tl.range.set(None);
                        let a = tl.axis.get_untracked();
                        tl.ask_range(a.start_ns, a.time(tl.w()));
                    } else {
                        tl.range_ops.set(None);
                    }
                }/>" op table follows the visible range"</label>
            {move || tl.range_ops.get().map(|r| {
                let title = format!(
                    "Op table of {} – {} ({})",
                    table::fmt_ns((r.start_ns - t0) as f64),
                    table::fmt_ns((r.end_ns - t0) as f64),
                    table::fmt_ns((r.end_ns - r.start_ns) as f64)
                );
                let mut s = summary.clone();
                s.name = format!("{} (range)", summary.name);
                s.rows_by_name = r.rows_by_name;
                s.rows_by_shape = r.rows_by_shape;
                s.self_cpu_total_ns = r.self_cpu_total_ns;
                s.self_device_total_ns = r.self_device_total_ns;
                view! {
                    <section class="range-table" id="range-table">
                        <h2>{title}</h2>
                        <OpTable summary=s/>
                    </section>
                }
            })}
        </div>
    }
}

#[component]
pub(super) fn SliceDetails(
    selected: RwSignal<Option<PickedSlice>>,
    lanes: StoredValue<Vec<LaneView>>,
    select: impl Fn(u32) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let lane_name = move |lane: u32| {
        lanes.with_value(|l| {
            l.get(lane as usize)
                .map(|l| format!("{} · {}", l.group_label, l.label))
                .unwrap_or_default()
        })
    };
    move || {
        let p = selected.get()?;
        let args = p
            .args
            .iter()
            .map(|(k, v)| view! { <dt>{k.clone()}</dt><dd>{v.clone()}</dd> })
            .collect_view();
        let chain = p
            .chain
            .iter()
            .map(|c| {
                let slice = c.slice;
                let is_self = slice == p.slice;
                let delay = match (c.launch_delay_ns, c.queue_ns) {
                    (Some(d), Some(q)) => format!(
                        "launch delay {} (queued {})",
                        table::fmt_ns(d as f64),
                        table::fmt_ns(q as f64)
                    ),
                    (Some(d), None) => format!("launch delay {}", table::fmt_ns(d as f64)),
                    _ => String::new(),
                };
                view! {
                    <li class=format!("chain-{}", c.role) class:current=is_self>
                        <span class="role">{c.role.clone()}</span>
                        <a href="#" class="chain-link" on:click=move |ev| { ev.prevent_default(); select(slice); }>{c.name.clone()}</a>
                        <span class="muted">{format!(
                            " {} · at {} · {}",
                            lane_name(c.lane),
                            table::fmt_ns(c.start_ns as f64),
                            table::fmt_ns(c.dur_ns as f64)
                        )}</span>
                        {(!delay.is_empty()).then(|| view! { <span class="delay">{format!(" · {delay}")}</span> })}
                    </li>
                }
            })
            .collect_view();
        let more = (p.chain_more > 0)
            .then(|| view! { <li class="muted">{format!("… and {} more", p.chain_more)}</li> });
        let op = p
            .chain
            .iter()
            .find(|c| c.role == "op" && c.slice != p.slice)
            .map(|c| view! { <p>"Op: " <strong class="picked-op">{c.name.clone()}</strong></p> });
        let launch = p
            .chain
            .iter()
            .find(|c| c.role == "runtime" && c.slice != p.slice)
            .filter(|_| p.chain.iter().any(|c| c.slice == p.slice && c.role == "device"))
            .map(|c| view! { <p>"Launched by " <strong class="picked-launch">{c.name.clone()}</strong></p> });
        Some(view! {
            <aside class="details" id="timeline-picked">
                <h2>{p.name.clone()}</h2>
                <p class="muted">{format!(
                    "{} · {} · starts at {} · lasts {} · self {}",
                    p.category,
                    lane_name(p.lane),
                    table::fmt_ns(p.start_ns as f64),
                    table::fmt_ns(p.dur_ns as f64),
                    table::fmt_ns(p.self_ns as f64)
                )}</p>
                {launch}
                {op}
                {(p.chain.len() > 1).then(|| view! {
                    <h3>"Dependency chain (framework → runtime → device)"</h3>
                    <ol class="chain" id="timeline-chain">{chain}{more}</ol>
                })}
                {(!p.args.is_empty()).then(|| view! { <h3>"Arguments"</h3><dl class="args">{args}</dl> })}
            </aside>
        })
    }
}

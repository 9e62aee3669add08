//! The comparison view's "align by structure": the baseline and a
//! candidate lined up op by op (`tracelane diff`, in the worker, with its
//! progress shown) — the ranked differences first, then the aligned tree
//! with both sides' bars; choosing a node selects it on both traces'
//! timelines. This only renders: the worker aligns
//! (`align_view::align_traces`).

use std::collections::HashSet;

use leptos::prelude::*;

use crate::page::client;
use crate::page::dom::{download, window};
use crate::page::state::{Focus, Ui};
use crate::page::timeline::{window_of, SplitSide, SplitTimelines};
use crate::shared::align_view::AlignedView;
use crate::shared::compare_view::VariantSpec;
use crate::shared::link::AlignState;
use crate::shared::protocol::{Answer, Ask};
use tracelane_core::analysis::align::{
    kind_words as kind_word, DiffReport, Metric, NodeKind, RooflinePosition, TreeRow,
};
use tracelane_core::export::{signed, us};

/// The tree's rows are this tall (CSS: `.align-row`), its box shows this
/// many, and this many more are drawn either side of the view.
const ROW_PX: f64 = 22.0;
const VIEW_ROWS: usize = 24;
const OVERSCAN: usize = 8;

/// Where an alignment stands.
#[derive(Clone, PartialEq)]
enum Aligning {
    Waiting,
    Running { stage: String, done: f64 },
    Failed(String),
    Ready(Box<AlignedView>),
}

/// B slower (red) or faster (green) than A.
fn delta_class(delta_us: f64) -> &'static str {
    if delta_us > 0.0 {
        "align-delta slower"
    } else if delta_us < 0.0 {
        "align-delta faster"
    } else {
        "align-delta"
    }
}

fn kind_class(k: Option<NodeKind>) -> &'static str {
    k.map_or("unlinked", NodeKind::name)
}

/// The candidate aligned against the baseline (an index into `specs`).
fn candidate(ui: Ui, n: usize) -> usize {
    ui.align
        .with(|a| a.map_or(1, |a| a.candidate))
        .clamp(1, n.max(2) - 1)
}

#[component]
pub fn AlignedPanel(specs: RwSignal<Vec<VariantSpec>>) -> impl IntoView {
    let ui: Ui = expect_context();
    let state = RwSignal::new(Aligning::Waiting);
    // Progress messages heard for the alignment now shown (the tests read
    // it: the worker said how far it had come before it answered).
    let heard = RwSignal::new(0u32);
    let latest = client::Latest::default();
    let pair = Memo::new(move |_| {
        let s = specs.get();
        if s.len() < 2 {
            return None;
        }
        let k = candidate(ui, s.len());
        Some((s[0].clone(), s[k].clone()))
    });
    Effect::new(move |_| {
        let Some((a, b)) = pair.get() else {
            latest.forget();
            state.set(Aligning::Waiting);
            return;
        };
        state.set(Aligning::Running {
            stage: "starting".into(),
            done: 0.0,
        });
        heard.set(0);
        latest.ask_with_progress(
            Ask::Align { a, b },
            move |stage, done| {
                heard.update(|n| *n += 1);
                state.set(Aligning::Running { stage, done });
            },
            move |answer| {
                state.set(match answer {
                    Ok(Answer::Aligned { view }) => Aligning::Ready(view),
                    Ok(_) => Aligning::Failed("the worker gave an unexpected answer".into()),
                    Err(e) => Aligning::Failed(e),
                })
            },
        );
    });
    let choose = move || {
        let s = specs.get();
        (s.len() > 2).then(|| {
            let now = candidate(ui, s.len());
            let options = s[1..]
                .iter()
                .enumerate()
                .map(|(k, v)| {
                    let label = format!("{} · {}", v.file, v.region.label());
                    view! { <option value=(k + 1).to_string() selected=k + 1 == now>{label}</option> }
                })
                .collect_view();
            view! {
                <label>"candidate aligned against the baseline "
                    <select id="align-candidate" on:change=move |ev| {
                        let k = event_target_value(&ev).parse().unwrap_or(1);
                        ui.align.set(Some(AlignState { candidate: k, node: None }));
                    }>{options}</select>
                </label>
            }
        })
    };
    view! {
        <div class="align" id="align">
            <p class="muted">
                "The baseline (A) and a candidate (B) lined up op by op by their framework structure — steps, "
                <code>"record_function"</code>" regions, "<code>"nn.Module"</code>" scopes, the aten op tree — not by kernel names. "
                "Each side's device work reaches the aligned ops through its links; the difference is split over the aligned tree "
                "and the parts add up to it. Choosing a node selects it on both traces' timelines."
            </p>
            {choose}
            {move || match state.get() {
                Aligning::Waiting => view! { <p class="muted">"Pick two variants."</p> }.into_any(),
                Aligning::Running { stage, done } => view! {
                    <div class="align-progress" id="align-progress">
                        <progress max="1" value=done.to_string() aria-label="aligning"></progress>
                        <span class="muted">{format!(" {stage}… {:.0}%", 100.0 * done)}</span>
                    </div>
                }.into_any(),
                Aligning::Failed(message) => view! { <p class="error-text" id="align-error">{message}</p> }.into_any(),
                Aligning::Ready(v) => match pair.get_untracked() {
                    Some(p) => view! { <AlignedResult v=*v heard=heard.get_untracked() pair=p/> }.into_any(),
                    None => ().into_any(),
                },
            }}
        </div>
    }
}

#[component]
fn AlignedResult(v: AlignedView, heard: u32, pair: (VariantSpec, VariantSpec)) -> impl IntoView {
    let ui: Ui = expect_context();
    let r = v.report.clone();
    let traces = v.traces;
    let rows = StoredValue::new(r.tree.clone());
    let selected = Memo::new(move |_| ui.align.with(|a| a.and_then(|a| a.node)));
    // Rows deeper than three levels start folded, but for the ranked
    // nodes' ancestors and the selected node's.
    let collapsed = RwSignal::new(initial_folds(&r, selected.get_untracked()));
    // The rows not folded away; only those in the box's view are drawn.
    let shown = Memo::new(move |_| {
        let folded = collapsed.get();
        rows.with_value(|rows| visible(rows, &folded))
    });
    let scroll_top = RwSignal::new(0.0f64);
    let tree_box: NodeRef<leptos::html::Div> = NodeRef::new();
    let select = move |id: u32| {
        ui.align.update(|a| {
            let a = a.get_or_insert_with(Default::default);
            a.candidate = a.candidate.max(1);
            a.node = Some(id);
        });
        rows.with_value(|rows| {
            unfold_to(rows, id, collapsed);
            if let Some(row) = rows.iter().find(|x| x.id == Some(id)) {
                select_on_timelines(ui, traces, row);
            }
        });
        scroll_to(id, shown, tree_box, scroll_top);
    };
    let md = v.markdown.clone();
    let json = v.json.clone();
    let (a_name, b_name) = names(ui, traces);
    let summary = summary(&r, a_name.clone(), b_name.clone());
    let ranked = ranked(&r, select);
    let scale = r.tree.first().map_or(1.0, |x| x.a_us.max(x.b_us)).max(1e-9);
    let n_shown = move || shown.with(Vec::len);
    let first = move || ((scroll_top.get() / ROW_PX) as usize).saturating_sub(OVERSCAN);
    let tree = move || {
        let now = selected.get();
        let from = first();
        collapsed.with(|folded| {
            shown.with(|shown| {
                shown
                    .iter()
                    .skip(from)
                    .take(VIEW_ROWS + 2 * OVERSCAN)
                    .map(|(row, kids)| {
                        let fold = kids.then(|| row.id.is_some_and(|id| folded.contains(&id)));
                        tree_row(row.clone(), scale, now, fold, collapsed, select)
                    })
                    .collect_view()
            })
        })
    };
    let details = move || {
        let id = selected.get()?;
        let row = rows.with_value(|rows| rows.iter().find(|x| x.id == Some(id)).cloned())?;
        Some(selected_details(
            ui,
            traces,
            row,
            a_name.clone(),
            b_name.clone(),
        ))
    };
    let split = move || {
        let id = selected.get()?;
        let row = rows.with_value(|rows| rows.iter().find(|x| x.id == Some(id)).cloned())?;
        split_timelines(ui, traces, &row)
    };
    view! {
        <div id="align-result" data-progress-heard=heard>
            <div class="compare-actions">
                <button id="copy-align-md" on:click=move |_| {
                    let _ = window().navigator().clipboard().write_text(&md);
                }>"Copy as Markdown"</button>
                <button id="download-align-json" on:click=move |_| download("tracelane-diff.json", "application/json", &json)>"Download JSON"</button>
            </div>
            {summary}
            <h3>"Largest differences (B − A)"</h3>
            {ranked}
            <h3>"Aligned tree"</h3>
            <p class="muted">"Each node's time on A (upper bar) and B (lower bar), its subtree included; Δ: its own part of the difference. Click a node to select it on both timelines."</p>
            <div class="align-tree" id="align-tree" role="tree" aria-label="aligned op tree" node_ref=tree_box
                data-rows=n_shown
                style=move || format!("height:{}px", n_shown().min(VIEW_ROWS) as f64 * ROW_PX + 2.0)
                on:scroll=move |_| if let Some(el) = tree_box.get() { scroll_top.set(el.scroll_top() as f64) }>
                <div class="align-tree-space" style=move || format!("height:{}px", n_shown() as f64 * ROW_PX)>
                    <div style=move || format!("transform:translateY({}px)", first() as f64 * ROW_PX)>{tree}</div>
                </div>
            </div>
            <div id="align-selected">{details}</div>
            {split}
            <h3>"Kernel families"</h3>
            {families(&r)}
            {(r.metric == Metric::Device).then(|| view! { <Rooflines pair=pair device_us=r.total_us/> })}
        </div>
    }
}

/// The two traces' names (by import id).
fn names(ui: Ui, traces: [u32; 2]) -> (String, String) {
    ui.traces.with_untracked(|t| {
        let name = |id: u32| {
            t.iter()
                .find(|s| s.id == id)
                .map_or_else(String::new, |s| s.name.clone())
        };
        (name(traces[0]), name(traces[1]))
    })
}

fn summary(r: &DiffReport, a_name: String, b_name: String) -> impl IntoView {
    let metric = match r.metric {
        Metric::Device => "device time",
        Metric::Host => "host (CPU) time",
    };
    let poor = r.notes.iter().find(|n| n.contains("align poorly")).cloned();
    let notes: Vec<String> = r
        .notes
        .iter()
        .filter(|n| !n.contains("align poorly"))
        .cloned()
        .collect();
    let c = &r.counts;
    view! {
        <div class="align-summary" id="align-summary"
            data-total-a-us=r.total_us[0] data-total-b-us=r.total_us[1] data-delta-us=r.delta_us
            data-explained-us=r.explained_us data-remainder-us=r.remainder_us
            data-share-a=r.aligned_share[0] data-share-b=r.aligned_share[1]>
            {poor.map(|p| view! { <p class="align-poor" id="align-poor" role="alert">{p}</p> })}
            <dl>
                <dt>"A (baseline)"</dt><dd>{format!("{a_name} · {}", r.scope[0])}</dd>
                <dt>"B (candidate)"</dt><dd>{format!("{b_name} · {}", r.scope[1])}</dd>
                <dt>{metric}</dt><dd>{format!("A {} · B {} · B − A {}", us(r.total_us[0]), us(r.total_us[1]), signed(r.delta_us))}</dd>
                <dt>"explained"</dt><dd>{format!("{} by the differences below, {} remainder", signed(r.explained_us), signed(r.remainder_us))}</dd>
                <dt>"aligned"</dt><dd>{format!("{:.0}% of A's time, {:.0}% of B's in paired ops or short replacements", 100.0 * r.aligned_share[0], 100.0 * r.aligned_share[1])}</dd>
                <dt>"ops"</dt><dd>{format!("{} paired · {} on A and {} on B in differing runs", c.ops_paired, c.a_ops_in_segments, c.b_ops_in_segments)}</dd>
            </dl>
            <ul class="muted align-notes">{notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
        </div>
    }
}

/// The ranked differences: path, Δ, each side, the sentence.
fn ranked(r: &DiffReport, select: impl Fn(u32) + Copy + 'static) -> impl IntoView {
    let items = r
        .nodes
        .iter()
        .map(|n| {
            let id = n.id;
            let last = n.path.rsplit(" › ").next().unwrap_or(&n.path).to_string();
            let times = (n.occurrences > 1).then(|| format!(" ×{}", n.occurrences));
            let name = match id {
                Some(id) => view! { <button class="link-button align-node" title=n.path.clone() on:click=move |_| select(id)>{last}</button> }.into_any(),
                None => view! { <span class="align-node">{last}</span> }.into_any(),
            };
            view! {
                <li data-id=id.map(|x| x.to_string()) data-delta-us=n.delta_us data-kind=kind_class(n.kind)>
                    <div class="align-ranked-head">
                        {name}{times}
                        <span class=delta_class(n.delta_us)>{signed(n.delta_us)}</span>
                        <span class="muted">{format!(" {} · A {} · B {}", kind_word(n.kind), us(n.a_us), us(n.b_us))}</span>
                    </div>
                    <div class="muted align-path">{n.path.clone()}</div>
                    <div class="align-why">{n.why.clone()}</div>
                </li>
            }
        })
        .collect_view();
    view! { <ol class="align-ranked" id="align-ranked">{items}</ol> }
}

/// Rows folded at the start: those at depth 3 with children shown, but
/// for the ancestors of the ranked nodes (the first five) and `keep`.
fn initial_folds(r: &DiffReport, keep: Option<u32>) -> HashSet<u32> {
    let rows = &r.tree;
    let mut open: HashSet<u32> = HashSet::new();
    let wanted = r.nodes.iter().take(5).filter_map(|n| n.id).chain(keep);
    for id in wanted {
        open.extend(ancestors(rows, id));
    }
    rows.iter()
        .enumerate()
        .filter(|(k, x)| x.depth == 3 && has_children(rows, *k))
        .filter_map(|(_, x)| x.id)
        .filter(|id| !open.contains(id))
        .collect()
}

fn has_children(rows: &[TreeRow], k: usize) -> bool {
    rows.get(k + 1).is_some_and(|x| x.depth > rows[k].depth)
}

/// The ids of the rows above row `id`.
fn ancestors(rows: &[TreeRow], id: u32) -> Vec<u32> {
    let Some(k) = rows.iter().position(|x| x.id == Some(id)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut depth = rows[k].depth;
    for x in rows[..k].iter().rev() {
        if x.depth < depth {
            depth = x.depth;
            out.extend(x.id);
        }
    }
    out
}

fn unfold_to(rows: &[TreeRow], id: u32, collapsed: RwSignal<HashSet<u32>>) {
    let up = ancestors(rows, id);
    if collapsed.with_untracked(|c| up.iter().any(|a| c.contains(a))) {
        collapsed.update(|c| {
            up.iter().for_each(|a| {
                c.remove(a);
            })
        });
    }
}

/// The rows not under a folded row, each with whether it has rows under it.
fn visible(rows: &[TreeRow], folded: &HashSet<u32>) -> Vec<(TreeRow, bool)> {
    let mut out = Vec::new();
    let mut hide_below: Option<u32> = None;
    for (k, x) in rows.iter().enumerate() {
        if let Some(d) = hide_below {
            if x.depth > d {
                continue;
            }
            hide_below = None;
        }
        if x.id.is_some_and(|id| folded.contains(&id)) {
            hide_below = Some(x.depth);
        }
        out.push((x.clone(), has_children(rows, k)));
    }
    out
}

fn tree_row(
    row: TreeRow,
    scale: f64,
    selected: Option<u32>,
    // `None`: no rows under it; else whether they are folded.
    fold: Option<bool>,
    collapsed: RwSignal<HashSet<u32>>,
    select: impl Fn(u32) + Copy + 'static,
) -> impl IntoView {
    const BAR_W: f64 = 180.0;
    let w = |x: f64| (x.abs() / scale * BAR_W).clamp(if x != 0.0 { 1.0 } else { 0.0 }, BAR_W);
    let id = row.id;
    let is_selected = id.is_some() && id == selected;
    let pad = format!("padding-left:{}rem", 0.2 + 1.1 * row.depth as f64);
    let twisty = id.zip(fold).map(|(id, folded)| {
        let label = if folded { "▸" } else { "▾" };
        view! {
            <button class="twisty" aria-label=if folded { "unfold" } else { "fold" }
                on:click=move |ev| {
                    ev.stop_propagation();
                    collapsed.update(|c| if !c.remove(&id) { c.insert(id); });
                }>{label}</button>
        }
    });
    let hidden = (row.hidden_children > 0).then(|| {
        view! { <span class="muted align-hidden">{format!(" +{} smaller", row.hidden_children)}</span> }
    });
    let title = format!(
        "{}\n{}: A {} ({} device events), B {} ({}); own Δ {}",
        row.label,
        kind_word(row.kind),
        us(row.a_us),
        row.a_events,
        us(row.b_us),
        row.b_events,
        signed(row.own_delta_us)
    );
    view! {
        <div class=format!("align-row kind-{}", kind_class(row.kind)) role="treeitem"
            aria-selected=is_selected.to_string() attr:aria-level=(row.depth + 1).to_string()
            data-id=id.map(|x| x.to_string()) data-depth=row.depth
            data-a-us=row.a_us data-b-us=row.b_us data-own-delta-us=row.own_delta_us
            tabindex="0" title=title style=pad
            on:click=move |_| { if let Some(id) = id { select(id) } }
            on:keydown=move |ev| { if ev.key() == "Enter" { if let Some(id) = id { select(id) } } }>
            {twisty}
            <span class="align-label">{row.label.clone()}{hidden}</span>
            <svg class="align-bars" width=BAR_W height="14" aria-hidden="true">
                <rect class="bar-a" x="0" y="1" width=w(row.a_us) height="5"></rect>
                <rect class="bar-b" x="0" y="8" width=w(row.b_us) height="5"></rect>
            </svg>
            <span class="align-times muted">{format!("{} / {}", us(row.a_us), us(row.b_us))}</span>
            <span class=delta_class(row.own_delta_us)>{signed(row.own_delta_us)}</span>
        </div>
    }
}

/// Scrolls the tree's box to row `id` (drawn once in view).
fn scroll_to(
    id: u32,
    shown: Memo<Vec<(TreeRow, bool)>>,
    tree_box: NodeRef<leptos::html::Div>,
    scroll_top: RwSignal<f64>,
) {
    let Some(k) = shown.with_untracked(|s| s.iter().position(|(x, _)| x.id == Some(id))) else {
        return;
    };
    let top = scroll_top.get_untracked();
    let y = k as f64 * ROW_PX;
    let view_px = VIEW_ROWS as f64 * ROW_PX;
    if y >= top && y + ROW_PX <= top + view_px {
        return;
    }
    let to = (y - view_px / 3.0).max(0.0);
    scroll_top.set(to);
    if let Some(el) = tree_box.get_untracked() {
        el.set_scroll_top(to as i32);
    }
}

/// Writes the node's slice and window into both traces' view states: each
/// timeline opens on it.
fn select_on_timelines(ui: Ui, traces: [u32; 2], row: &TreeRow) {
    let sides = [
        (traces[0], row.a_slice, row.a_span_ns),
        (traces[1], row.b_slice, row.b_span_ns),
    ];
    for (id, slice, span) in sides {
        if slice.is_none() && span.is_none() {
            continue;
        }
        ui.update_state(id, |s| {
            s.selection = slice;
            if let Some(span) = span {
                s.window = Some(window_of(span));
            }
        });
    }
}

/// Opens trace `id`'s timeline on the node's slice.
fn open_timeline(ui: Ui, id: u32, slice: Option<u32>, span: Option<[i64; 2]>) {
    let Some(k) = ui
        .traces
        .with_untracked(|t| t.iter().position(|s| s.id == id))
    else {
        return;
    };
    let (start_ns, end_ns) = span.map_or((0, 0), |s| (s[0], s[1]));
    ui.focus.set(Some(Focus {
        trace: id,
        slice,
        start_ns,
        end_ns,
    }));
    ui.compare_open.set(false);
    ui.view.set(1);
    ui.active.set(k);
}

/// Both traces' timelines on the node (each side's window and first op).
fn split_timelines(ui: Ui, traces: [u32; 2], row: &TreeRow) -> Option<impl IntoView> {
    let summary = |id: u32| {
        ui.traces
            .with_untracked(|t| t.iter().find(|s| s.id == id).cloned())
    };
    let a = SplitSide {
        summary: summary(traces[0])?,
        span: row.a_span_ns,
        slice: row.a_slice,
    };
    let b = SplitSide {
        summary: summary(traces[1])?,
        span: row.b_span_ns,
        slice: row.b_slice,
    };
    Some(view! { <SplitTimelines a=a b=b/> })
}

fn selected_details(
    ui: Ui,
    traces: [u32; 2],
    row: TreeRow,
    a_name: String,
    b_name: String,
) -> impl IntoView {
    let side = move |which: &'static str,
                     id: u32,
                     name: String,
                     slice: Option<u32>,
                     span: Option<[i64; 2]>,
                     t_us: f64,
                     events: u64| {
        let button = (slice.is_some() || span.is_some()).then(|| {
            view! {
                <button class=format!("open-{which}") on:click=move |_| open_timeline(ui, id, slice, span)>
                    {format!("show on {which}'s timeline")}
                </button>
            }
        });
        view! {
            <div class=format!("align-side side-{which}") data-slice=slice.map(|s| s.to_string())>
                <strong>{format!("{which}: ")}</strong>{name}
                <span class="muted">{format!(" · {} · {} device events", us(t_us), events)}</span>
                " "{button}
            </div>
        }
    };
    view! {
        <div class="align-selected card" data-id=row.id.map(|x| x.to_string())>
            <h4>{row.label.clone()}</h4>
            <p class="muted">{format!("{} · own difference {}", kind_word(row.kind), signed(row.own_delta_us))}</p>
            {side("A", traces[0], a_name, row.a_slice, row.a_span_ns, row.a_us, row.a_events)}
            {side("B", traces[1], b_name, row.b_slice, row.b_span_ns, row.b_us, row.b_events)}
        </div>
    }
}

/// Each side on its own roofline, asked once the alignment is drawn (its
/// own question, so the alignment never waits for it: two 1 GB traces
/// align in 1.1 s and are placed 3.4 s later).
#[component]
fn Rooflines(pair: (VariantSpec, VariantSpec), device_us: [f64; 2]) -> impl IntoView {
    type Sides = Box<[Option<RooflinePosition>; 2]>;
    let sides = RwSignal::new(None::<Result<Sides, String>>);
    let (a, b) = pair;
    let device_ns = device_us.map(|x| (x * 1e3).round() as i64);
    let pending = client::ask(Ask::AlignRoofline { a, b, device_ns });
    leptos::task::spawn_local(async move {
        let got = match pending.await {
            Ok(Answer::AlignRoofline { sides }) => Ok(sides),
            Ok(_) => Err("the worker gave an unexpected answer".into()),
            Err(e) => Err(e),
        };
        sides.try_set(Some(got));
    });
    move || {
        match sides.get() {
        None => view! { <p class="muted" id="align-roofline-wait">"Placing each side on its roofline…"</p> }.into_any(),
        Some(Err(e)) => view! { <p class="error-text">{e}</p> }.into_any(),
        Some(Ok(s)) if s.iter().all(Option::is_none) => view! {
            <p class="muted" id="align-roofline" data-placed="0">"Neither side has device work with a FLOP count (record with shapes, or with_flops) to place on a roofline."</p>
        }.into_any(),
        Some(Ok(s)) => {
            let achieved = |k: usize| s[k].as_ref().and_then(|p| p.point.achieved_flops_per_s).map(|x| x.to_string());
            let (aa, ab) = (achieved(0), achieved(1));
            let section = tracelane_core::export::diff_roofline_section(&s);
            view! {
                <div id="align-roofline" data-placed="1" data-a-achieved=aa data-b-achieved=ab>
                    {crate::page::widgets::section_tables(vec![section])}
                </div>
            }.into_any()
        }
    }
    }
}

fn families(r: &DiffReport) -> impl IntoView {
    if r.families.is_empty() {
        return view! { <p class="muted">"No device events on both sides: compared by host time."</p> }.into_any();
    }
    let rows = r
        .families
        .iter()
        .map(|f| {
            view! {
                <tr data-family=f.family.as_str()>
                    <td>{f.family.as_str()}</td>
                    <td>{f.a_events}</td><td>{us(f.a_us)}</td>
                    <td>{f.b_events}</td><td>{us(f.b_us)}</td>
                    <td>{signed(f.b_us - f.a_us)}</td>
                    <td class="name">{f.a_top.join(", ")}</td>
                    <td class="name">{f.b_top.join(", ")}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="stats" id="align-families">
            <thead><tr>
                <th>"family"</th><th>"A events"</th><th>"A time"</th><th>"B events"</th><th>"B time"</th><th>"B − A"</th>
                <th>"A's largest kernels"</th><th>"B's largest kernels"</th>
            </tr></thead>
            <tbody>{rows}</tbody>
        </table>
    }
    .into_any()
}

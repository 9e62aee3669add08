//! The Compare view's split: the two compared traces' timelines one above
//! the other, each opened on an aligned node — its window, its first op
//! selected — at one scale, their zoom and pan linked around the node's
//! start on each side (unlink to move them apart). Both sides may be one
//! trace: each pane is its own timeline slot, with its own canvases in the
//! worker and its own frame bookkeeping.

use leptos::prelude::*;
use tracelane_core::timeline::{follow_axis, paired_windows, TimeAxis};

use crate::page::state::Ui;
use crate::shared::protocol::{Summary, TimelineSlot};
use crate::shared::table;

use super::panels::{visible_span, LanesAndPlot};
use super::state::Tl;

/// One side of the split: its trace, and the node there (its extent in
/// the trace's time, its first op).
#[derive(Clone)]
pub struct SplitSide {
    pub summary: Summary,
    pub span: Option<[i64; 2]>,
    pub slice: Option<u32>,
}

/// Both timelines, for the node chosen (mounted again for each node).
#[component]
pub fn SplitTimelines(a: SplitSide, b: SplitSide) -> impl IntoView {
    let ui: Ui = expect_context();
    let ta = Tl::new(&a.summary, ui, TimelineSlot::SplitA);
    let tb = Tl::new(&b.summary, ui, TimelineSlot::SplitB);
    let linked = RwSignal::new(true);
    let anchors = match (a.span, b.span) {
        (Some(sa), Some(sb)) => {
            let [wa, wb] = paired_windows(sa, sb);
            ta.focus_on(wa, a.slice);
            tb.focus_on(wb, b.slice);
            Some((sa[0], sb[0]))
        }
        _ => {
            // A side without the node (an op on the other side only)
            // shows its whole trace; nothing to link around.
            for (tl, side) in [(ta, &a), (tb, &b)] {
                let window = side.span.map_or((tl.t0, tl.t1), window_of);
                tl.focus_on(window, side.slice);
            }
            None
        }
    };
    if let Some((a0, b0)) = anchors {
        link(ta, tb, (a0, b0), linked);
        link(tb, ta, (b0, a0), linked);
    }
    view! {
        <section class="split-timelines" id="split-timelines" aria-label="A's and B's timelines">
            <div class="timeline-bar">
                <strong>"Both timelines"</strong>
                {anchors.is_some().then(|| view! {
                    <label title="Zoom and pan both timelines together, each around the node's start on its side">
                        <input type="checkbox" id="split-linked" prop:checked=move || linked.get()
                            on:change=move |ev| linked.set(event_target_checked(&ev))/>
                        " linked, at one scale"
                    </label>
                })}
                <span class="muted">"wheel zoom · drag pan · click a slice"</span>
            </div>
            <Pane tl=ta which="A" name=a.summary.name.clone() has_node=a.span.is_some()/>
            <Pane tl=tb which="B" name=b.summary.name.clone() has_node=b.span.is_some()/>
        </section>
    }
}

/// A node's window on one timeline: its extent and a quarter each side.
pub fn window_of(span: [i64; 2]) -> (i64, i64) {
    let pad = ((span[1] - span[0]) / 4).max(1_000);
    (span[0] - pad, span[1] + pad)
}

/// `follower` keeps `leader`'s scale and its offset from its own anchor
/// while `linked` is on.
fn link(leader: Tl, follower: Tl, (lead_at, follow_at): (i64, i64), linked: RwSignal<bool>) {
    Effect::new(move |_| {
        let axis = leader.axis.get();
        if !linked.get() {
            return;
        }
        let want: TimeAxis = follow_axis(axis, lead_at, follow_at);
        if follower.axis.get_untracked() != want {
            follower.axis.set(want);
        }
    });
}

/// One side's timeline: its head (the side, the trace, the span shown,
/// the slice selected) and the plot, in a box of its own height.
#[component]
fn Pane(tl: Tl, which: &'static str, name: String, has_node: bool) -> impl IntoView {
    let picked = move || {
        tl.selected.get().map(|p| {
            format!(
                "selected: {} · {} (self {})",
                p.name,
                table::fmt_ns(p.dur_ns as f64),
                table::fmt_ns(p.self_ns as f64)
            )
        })
    };
    let selected_slice = move || tl.selected.get().map(|p| p.slice.to_string());
    view! {
        <div class=format!("split-pane split-{which}")>
            <div class="split-head">
                <strong>{format!("{which}: ")}</strong>{name}
                " · "<span id=tl.dom_id("timeline-range")>{move || visible_span(tl)}</span>
                {(!has_node).then(|| view! { <span class="muted">{format!(" · nothing on {which}'s side of this node: the whole trace")}</span> })}
                <div class="split-picked muted" id=tl.dom_id("timeline-picked")>{picked}</div>
            </div>
            <div class="timeline split" id=tl.dom_id("timeline") tabindex="0" role="group"
                aria-label=format!("{which}'s timeline")
                on:keydown=move |ev| tl.on_key(ev) node_ref=tl.scroller
                data-view=move || tl.data_view() data-selected=selected_slice>
                <LanesAndPlot tl=tl/>
            </div>
        </div>
    }
}

//! The timeline in the page: lane labels, ruler, the WebGL2 rectangle layer
//! with a Canvas2D layer on top (names, selection, dependency arrows, the
//! selected range), and the panels under it (details with the dependency
//! chain, the op table of a range).
//!
//! One `requestAnimationFrame` loop drives it. Signals only record what is
//! wanted (a new view, an overlay change). Each frame the loop sends the
//! latest wanted view to the worker unless a draw request is in flight (so
//! a burst of wheel events costs one layout per frame, not one per event). The loop repaints the overlay when it changed. A draw list is
//! painted as soon as it arrives. `tracelane:frame` measures request →
//! worker layout → transfer → paint; `tracelane:layout` and
//! `tracelane:paint` its two working parts.
//!
//! Every scene the page wants gets a number: the rectangle canvas carries
//! the latest wanted one as `data-scene`, the last one the worker painted
//! as `data-painted`, and the last one known to be on screen as
//! `data-shown` (the worker's next animation frame after the paint: the
//! painted frame reaches the compositor only when the painting task ends).
//! `data-shown` equal to `data-scene` means what is on screen is the
//! current view — the signal tests (and anything else) wait on before
//! reading pixels.

mod paint;
mod panels;
mod split;
mod state;

pub use split::{window_of, SplitSide, SplitTimelines};

use crate::page::dom::window;
use crate::page::state::Ui;
use crate::shared::protocol::{Summary, TimelineSlot};
use leptos::prelude::*;
use tracelane_core::timeline::TimeAxis;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use panels::{LanesAndPlot, Legend, RangePanel, SliceDetails, Toolbar};
use state::Tl;

/// The op table can follow the visible range (after the view settles).
fn follow_visible_range(tl: Tl) {
    let settle = RwSignal::new(0u32);
    Effect::new(move |_| {
        let a = tl.axis.get();
        if !tl.follow.get() {
            return;
        }
        let ticket = settle.get_untracked() + 1;
        settle.set(ticket);
        let cb = Closure::once_into_js(move || {
            if settle.get_untracked() == ticket && tl.follow.get_untracked() {
                tl.ask_range(a.start_ns, a.time(tl.w()));
            }
        });
        let _ =
            window().set_timeout_with_callback_and_timeout_and_arguments_0(cb.unchecked_ref(), 250);
    });
}

#[component]
pub fn TimelineView(summary: Summary) -> impl IntoView {
    let ui: Ui = expect_context();
    let tl = Tl::new(&summary, ui, TimelineSlot::Main);
    follow_visible_range(tl);
    // Another view asked to show a slice (a gap, a launch): fit its window
    // (or the slice) and select it. Else the timeline shows what it showed
    // last (or what a link asks for).
    let focus = ui.focus.get_untracked().filter(|f| f.trace == summary.id);
    tl.restore(ui, focus.is_some());
    tl.keep_state(ui);
    if let Some(f) = focus {
        ui.focus.set(None);
        if f.end_ns > f.start_ns {
            let pad = (f.end_ns - f.start_ns) / 4;
            tl.axis
                .set(TimeAxis::fit(f.start_ns - pad, f.end_ns + pad, tl.w()));
        }
        if let Some(slice) = f.slice {
            tl.select_slice(slice);
        }
    }
    view! {
        <Toolbar tl=tl/>
        <div class="timeline-help muted">
            "wheel or W/S zoom · drag or A/D pan · 0 all · Shift+drag or drag on the ruler selects a range · F fits it · Esc clears · click a slice"
        </div>
        <Legend/>
        <div class="timeline" id="timeline" tabindex="0" on:keydown=move |ev| tl.on_key(ev) node_ref=tl.scroller data-view=move || tl.data_view()>
            <LanesAndPlot tl=tl/>
        </div>
        <SliceDetails selected=tl.selected lanes=tl.lanes select=move |s| tl.select_slice(s)/>
        <RangePanel tl=tl summary=summary/>
    }
}

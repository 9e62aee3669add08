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

use std::cell::RefCell;
use std::rc::Rc;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::HtmlCanvasElement;

use crate::page::client::{self, Latest};
use crate::page::dom::window;
use crate::page::frames::{with_frames, Frames, FRAMES};
use crate::page::op_table::OpTable;
use crate::page::state::Ui;
use crate::shared::protocol::{Answer, Ask, RangeOps, Summary, ToWorker};
use crate::shared::table;
use crate::shared::timeline_view::{
    palette, row_layout, Highlight, LaneKind, LaneView, PickedSlice, Scene, ViewRequest, LEGEND,
    ROW_PX,
};
use crate::transfer::Transfer;
use tracelane_core::timeline::{ruler_ticks, TimeAxis};

/// Width of the lane-label column, in CSS pixels.
const LABELS_PX: f64 = 240.0;

thread_local! {
    /// The shown timeline's window-resize listener (trace id, function).
    static RESIZE: RefCell<Option<(u32, js_sys::Function)>> = const { RefCell::new(None) };
}

/// A worker that has not answered for this long is assumed busy with
/// something else (an import): send the next scene anyway.
const STALE_FRAME_MS: f64 = 500.0;

/// Starts the frame loop; it stops by itself once the timeline is unmounted.
fn start_frame_loop(trace_id: u32) {
    type Loop = Rc<RefCell<Option<Closure<dyn FnMut()>>>>;
    let frame: Loop = Rc::default();
    let again = frame.clone();
    *frame.borrow_mut() = Some(Closure::new(move || {
        let alive = with_frames(|f| {
            if f.trace_id != trace_id {
                return false;
            }
            let now = window().performance().map(|p| p.now()).unwrap_or(0.0);
            let busy = f.in_flight_since.is_some_and(|t| now - t < STALE_FRAME_MS);
            if !busy {
                if let Some((frame, scene)) = f.wanted.take() {
                    let sent_ms = window()
                        .performance()
                        .map(|p| p.time_origin() + p.now())
                        .unwrap_or(0.0);
                    let msg = ToWorker::View {
                        id: trace_id,
                        frame,
                        scene: Box::new(scene),
                        sent_ms,
                    };
                    if client::post(&msg).is_ok() {
                        f.in_flight_since = Some(now);
                    }
                }
            }
            true
        })
        .unwrap_or(false);
        if alive {
            if let Some(cb) = again.borrow().as_ref() {
                let _ = window().request_animation_frame(cb.as_ref().unchecked_ref());
            }
        } else {
            // Drop the closure (and so this loop) outside its own call.
            let again = again.clone();
            wasm_bindgen_futures::spawn_local(async move {
                again.borrow_mut().take();
            });
        }
    }));
    if let Some(cb) = frame.borrow().as_ref() {
        let _ = window().request_animation_frame(cb.as_ref().unchecked_ref());
    };
}

/// Hands the two canvases to the worker, which paints them from then on.
fn attach_canvases(id: u32, rects: &HtmlCanvasElement, overlay: &HtmlCanvasElement) -> bool {
    let (Ok(r), Ok(o)) = (
        rects.transfer_control_to_offscreen(),
        overlay.transfer_control_to_offscreen(),
    ) else {
        return false;
    };
    // `?renderer=webgl2` / `?renderer=canvas2d` force a renderer.
    let renderer = window()
        .location()
        .search()
        .ok()
        .and_then(|q| web_sys::UrlSearchParams::new_with_str(&q).ok())
        .and_then(|p| p.get("renderer"))
        .unwrap_or_default();
    client::post_transfer(&Transfer::Attach {
        id,
        rects: r,
        overlay: o,
        renderer,
    })
    .is_ok()
}

/// The plot's width: the window less the page padding and the labels.
fn plot_width() -> f64 {
    let w = window()
        .inner_width()
        .ok()
        .and_then(|v| v.as_f64())
        .unwrap_or(1400.0);
    (w - LABELS_PX - 48.0).clamp(480.0, 4096.0).floor()
}

/// How the pointer is dragging over the plot or the ruler.
#[derive(Clone, Copy, PartialEq)]
enum Drag {
    Pan { start: f64, last: f64 },
    Range { from_ns: i64 },
}

/// One trace's timeline state, shared by its parts: the view, folding,
/// search, selection and range, and the questions it asks the worker (each
/// kind delivers only its latest answer). A `Copy` handle.
#[derive(Clone, Copy)]
struct Tl {
    id: u32,
    /// Start of the trace (the ruler's zero), the plot's width, the whole view.
    t0: i64,
    /// The trace's end: the whole view is `t0..t1` at the plot's width.
    t1: i64,
    /// Follows the window's width (the plot re-lays out on resize).
    width: RwSignal<f64>,
    lanes: StoredValue<Vec<LaneView>>,
    axis: RwSignal<TimeAxis>,
    collapsed: RwSignal<Vec<u32>>,
    /// Empty lanes (instant markers at most) are left out.
    hide_empty: RwSignal<bool>,
    colour_by_name: RwSignal<bool>,
    search: RwSignal<String>,
    search_at: RwSignal<Option<(usize, i64)>>,
    /// The match last asked for: Enter pressed again before the answer
    /// arrives steps on from it, not from the match shown.
    search_asked: RwSignal<Option<i64>>,
    selected: RwSignal<Option<PickedSlice>>,
    range: RwSignal<Option<(i64, i64)>>,
    follow: RwSignal<bool>,
    range_ops: RwSignal<Option<RangeOps>>,
    hover_at: RwSignal<Option<(f64, f64)>>,
    hovered: RwSignal<Option<PickedSlice>>,
    drag: RwSignal<Option<Drag>>,
    scroller: NodeRef<leptos::html::Div>,
    layout: Memo<crate::shared::timeline_view::RowLayout>,
    highlight: Memo<Option<Highlight>>,
    view: Memo<ViewRequest>,
    picks: Latest,
    hovers: Latest,
    finds: Latest,
    range_asks: Latest,
}

fn picked(answer: Result<Answer, String>) -> Option<PickedSlice> {
    match answer {
        Ok(Answer::Picked { slice }) => slice,
        _ => None,
    }
}

impl Tl {
    fn new(summary: &Summary, ui: Ui) -> Tl {
        let (t0, t1) = (summary.timeline_start_ns, summary.timeline_end_ns);
        // The lanes the analyses extended, else the import's.
        let lanes = StoredValue::new(
            ui.lanes
                .with_untracked(|l| {
                    l.iter()
                        .find(|(t, _)| *t == summary.id)
                        .map(|x| x.1.clone())
                })
                .unwrap_or_else(|| summary.lanes.clone()),
        );
        let width = RwSignal::new(plot_width());
        let axis = RwSignal::new(TimeAxis::fit(t0, t1, width.get_untracked()));
        let collapsed = RwSignal::new(Vec::<u32>::new());
        let hide_empty = RwSignal::new(true);
        let colour_by_name = RwSignal::new(false);
        let search = RwSignal::new(String::new());
        let layout = Memo::new(move |_| {
            lanes.with_value(|l| row_layout(l, &collapsed.get(), hide_empty.get()))
        });
        let highlight = Memo::new(move |_| {
            let s = search.get();
            if !s.trim().is_empty() {
                Some(Highlight {
                    text: s.trim().to_string(),
                    exact: false,
                })
            } else {
                ui.table_highlight.get()
            }
        });
        let view = Memo::new(move |_| {
            let a = axis.get();
            ViewRequest {
                start_ns: a.start_ns,
                ns_per_px: a.ns_per_px,
                width_px: width.get(),
                collapsed: collapsed.get(),
                hide_empty: hide_empty.get(),
                highlight: highlight.get(),
                colour_by_name: colour_by_name.get(),
            }
        });
        Tl {
            id: summary.id,
            t0,
            t1,
            width,
            lanes,
            axis,
            collapsed,
            hide_empty,
            colour_by_name,
            search,
            search_at: RwSignal::new(None),
            search_asked: RwSignal::new(None),
            selected: RwSignal::new(None),
            range: RwSignal::new(None),
            follow: RwSignal::new(false),
            range_ops: RwSignal::new(None),
            hover_at: RwSignal::new(None),
            hovered: RwSignal::new(None),
            drag: RwSignal::new(None),
            scroller: NodeRef::new(),
            layout,
            highlight,
            view,
            picks: Latest::new(),
            hovers: Latest::new(),
            finds: Latest::new(),
            range_asks: Latest::new(),
        }
    }

    /// Asks the worker what lies under a point of the plot.
    fn pick_at(self, x: f64, y: f64, hover: bool) {
        let row = (y / ROW_PX).floor().max(0.0) as u32;
        let question = Ask::Pick {
            id: self.id,
            view: self.view.get_untracked(),
            row,
            x_px: x,
            hover,
        };
        if hover {
            self.hovers
                .ask(question, move |a| self.hovered.set(picked(a)));
        } else {
            self.picks
                .ask(question, move |a| self.selected.set(picked(a)));
        }
    }

    /// The plot's width now.
    fn w(self) -> f64 {
        self.width.get_untracked()
    }

    /// The whole trace at the plot's width (`0`, `Home`).
    fn home(self) -> TimeAxis {
        TimeAxis::fit(self.t0, self.t1, self.w())
    }

    /// The window was resized: the plot takes the new width, showing the
    /// same span of time.
    fn resized(self) {
        let (old, new) = (self.w(), plot_width());
        if (new - old).abs() < 1.0 {
            return;
        }
        let a = self.axis.get_untracked();
        let span = a.ns_per_px * old;
        self.width.set(new);
        self.axis.set(TimeAxis {
            start_ns: a.start_ns,
            ns_per_px: span / new,
        });
    }

    /// Brings a slice into view: centred if it fits, else fitted; its lane
    /// expanded and scrolled to.
    fn reveal(self, p: &PickedSlice) {
        let (t0, width) = (self.t0, self.w());
        let (a, b) = (t0 + p.start_ns, t0 + p.start_ns + p.dur_ns.max(1));
        let cur = self.axis.get_untracked();
        let span = cur.ns_per_px * width;
        let next = if ((b - a) as f64) < span * 0.6 {
            TimeAxis {
                start_ns: a + (b - a) / 2 - (span / 2.0) as i64,
                ns_per_px: cur.ns_per_px,
            }
        } else {
            let pad = (b - a) / 5;
            TimeAxis::fit(a - pad, b + pad, width)
        };
        self.axis.set(next);
        if let Some(lane) = self.lanes.with_value(|l| l.get(p.lane as usize).cloned()) {
            self.collapsed.update(|c| c.retain(|g| *g != lane.group));
            if lane.empty {
                self.hide_empty.set(false);
            }
        }
        let row = self
            .layout
            .get_untracked()
            .lane_first_row
            .get(p.lane as usize)
            .copied()
            .flatten()
            .map(|r| r + p.lane_row as u32);
        if let (Some(row), Some(el)) = (row, self.scroller.get_untracked()) {
            let y = row as f64 * ROW_PX - el.client_height() as f64 / 2.0;
            el.set_scroll_top(y.max(0.0) as i32);
        }
    }

    /// Selects a slice by index (a chain link) and brings it into view.
    fn select_slice(self, slice: u32) {
        self.picks
            .ask(Ask::Select { id: self.id, slice }, move |a| {
                let slice = picked(a);
                if let Some(s) = &slice {
                    self.reveal(s);
                }
                self.selected.set(slice);
            });
    }

    /// Selects a slice by index without moving the view (a link's).
    fn select_in_place(self, slice: u32) {
        self.picks
            .ask(Ask::Select { id: self.id, slice }, move |a| {
                self.selected.set(picked(a))
            });
    }

    /// Shows what the trace's view state holds (the timeline as it was
    /// left, or as a link asks), unless another view asked for a slice.
    fn restore(self, ui: Ui, focused: bool) {
        let was = ui.state_of(self.id);
        if !focused {
            if let Some((a, b)) = was.window {
                self.axis.set(TimeAxis::fit(a, b, self.w()));
            }
            if let Some(slice) = was.selection {
                self.select_in_place(slice);
            }
        }
        self.search.set(was.search);
        if let Some((a, b)) = was.range {
            self.range.set(Some((a, b)));
            self.ask_range(a, b);
        }
    }

    /// Keeps the trace's view state following what the timeline shows.
    fn keep_state(self, ui: Ui) {
        Effect::new(move |_| {
            let a = self.axis.get();
            let window = (a != self.home()).then(|| (a.start_ns, a.time(self.width.get())));
            let selection = self.selected.with(|s| {
                s.as_ref()
                    .map(|p| p.slice)
                    .filter(|&k| k != tracelane_core::model::NO_SLICE)
            });
            let search = self.search.get();
            // A range being dragged is written once it is let go.
            if self.drag.with(|d| matches!(d, Some(Drag::Range { .. }))) {
                return;
            }
            let range = self.range.get();
            ui.update_state(self.id, |s| {
                s.window = window;
                s.selection = selection;
                s.search = search;
                s.range = range;
            });
        });
    }

    /// Steps `step` matches on from the one last asked for (or shown).
    fn find(self, step: i64) {
        let Some(h) = self.highlight.get_untracked() else {
            return;
        };
        let index = self
            .search_asked
            .get_untracked()
            .or(self.search_at.get_untracked().map(|(_, k)| k))
            .map_or(0, |k| k + step);
        self.search_asked.set(Some(index));
        let question = Ask::Find {
            id: self.id,
            highlight: h,
            index,
        };
        self.finds.ask(question, move |a| {
            if let Ok(Answer::Found {
                count,
                index,
                slice,
            }) = a
            {
                self.search_at.set(Some((count, index)));
                if let Some(s) = slice {
                    self.reveal(&s);
                    self.selected.set(Some(s));
                }
            }
        });
    }

    /// Asks for the op table of `[a, b)`.
    fn ask_range(self, a: i64, b: i64) {
        let question = Ask::RangeTable {
            id: self.id,
            start_ns: a,
            end_ns: b,
        };
        self.range_asks.ask(question, move |answer| {
            if let Ok(Answer::RangeTable { table }) = answer {
                self.range_ops.set(Some(*table));
            }
        });
    }

    /// `F`: fits the selected range, else the selected slice.
    fn fit_selection(self) {
        let (t0, width) = (self.t0, self.w());
        if let Some((a, b)) = self.range.get_untracked() {
            self.axis.set(TimeAxis::fit(a, b, width));
        } else if let Some(s) = self.selected.get_untracked() {
            let (a, b) = (t0 + s.start_ns, t0 + s.start_ns + s.dur_ns.max(1));
            let pad = (b - a) / 10;
            self.axis.set(TimeAxis::fit(a - pad, b + pad, width));
        }
    }

    fn on_key(self, ev: web_sys::KeyboardEvent) {
        let (a, width) = (self.axis.get_untracked(), self.w());
        let next = match ev.key().as_str() {
            "w" | "W" => a.zoom(1.25, width / 2.0),
            "s" | "S" => a.zoom(0.8, width / 2.0),
            "a" | "A" => a.pan(-width / 10.0),
            "d" | "D" => a.pan(width / 10.0),
            "0" | "Home" => self.home(),
            "f" | "F" => {
                ev.prevent_default();
                self.fit_selection();
                return;
            }
            "Escape" => {
                self.range.set(None);
                self.selected.set(None);
                return;
            }
            _ => return,
        };
        ev.prevent_default();
        self.axis.set(next);
    }

    // Pointer: drag pans; Shift+drag (or any drag on the ruler) selects a
    // range; a click picks.
    fn begin_range(self, x: f64) {
        let at = self.axis.get_untracked().time(x);
        self.drag.set(Some(Drag::Range { from_ns: at }));
        self.range.set(Some((at, at)));
    }

    fn move_range(self, x: f64) {
        if let Some(Drag::Range { from_ns }) = self.drag.get_untracked() {
            let at = self.axis.get_untracked().time(x.clamp(0.0, self.w()));
            self.range.set(Some((from_ns.min(at), from_ns.max(at))));
        }
    }

    fn end_drag(self, x: f64, y: f64, ui: Ui) {
        match self.drag.get_untracked() {
            Some(Drag::Range { .. }) => {
                self.move_range(x);
                let ax = self.axis.get_untracked();
                match self.range.get_untracked() {
                    Some((a, b)) if ax.px(b) - ax.px(a) >= 2.0 => {
                        self.follow.set(false);
                        self.ask_range(a, b);
                        // Offered as a region in the comparison view.
                        let id = self.id;
                        ui.ranges.update(|r| {
                            r.retain(|(k, _)| *k != id);
                            r.push((id, (a, b)));
                        });
                    }
                    _ => self.range.set(None),
                }
            }
            Some(Drag::Pan { start, .. }) if (x - start).abs() <= 3.0 => {
                self.pick_at(x, y, false);
            }
            _ => {}
        }
        self.drag.set(None);
    }
}

/// Hands the canvases to the worker when they mount, starts the frame loop
/// (it stops with the timeline), and marks a new scene whenever what is
/// shown changes. Returns whether the browser could not hand them over.
fn paint_in_worker(
    tl: Tl,
    rects: NodeRef<leptos::html::Canvas>,
    overlay: NodeRef<leptos::html::Canvas>,
) -> RwSignal<bool> {
    let id = tl.id;
    let ui: Ui = expect_context();
    let no_offscreen = RwSignal::new(false);
    Effect::new(move |_| {
        let (Some(r), Some(o)) = (rects.get(), overlay.get()) else {
            return;
        };
        let r: HtmlCanvasElement = r.unchecked_into();
        let o: HtmlCanvasElement = o.unchecked_into();
        if !attach_canvases(id, &r, &o) {
            no_offscreen.set(true);
            return;
        }
        FRAMES.with(|f| {
            *f.borrow_mut() = Some(Frames {
                trace_id: id,
                rects_canvas: r,
                wanted: None,
                scene_seq: 0,
                in_flight_since: None,
            })
        });
        start_frame_loop(id);
    });
    // The plot follows the window's width (one listener: the timeline
    // shown).
    let on_resize: js_sys::Function = Closure::<dyn FnMut()>::new(move || tl.resized())
        .into_js_value()
        .unchecked_into();
    RESIZE.with(|r| {
        if let Some((_, old)) = r.borrow_mut().take() {
            let _ = window().remove_event_listener_with_callback("resize", &old);
        }
        let _ = window().add_event_listener_with_callback("resize", &on_resize);
        *r.borrow_mut() = Some((id, on_resize));
    });
    on_cleanup(move || {
        FRAMES.with(|f| {
            if f.borrow().as_ref().is_some_and(|f| f.trace_id == id) {
                *f.borrow_mut() = None;
            }
        });
        RESIZE.with(|r| {
            if r.borrow().as_ref().is_some_and(|(k, _)| *k == id) {
                if let Some((_, f)) = r.borrow_mut().take() {
                    let _ = window().remove_event_listener_with_callback("resize", &f);
                }
            }
        });
    });
    Effect::new(move |_| {
        let scene = Scene {
            view: tl.view.get(),
            selected: tl.selected.get(),
            range: tl.range.get(),
            dpr: window().device_pixel_ratio(),
            critical_path: ui
                .path_shown
                .get()
                .filter(|(trace, _)| *trace == id)
                .map(|(_, mode)| mode),
            dark: dark_theme(),
        };
        with_frames(|f| {
            f.scene_seq += 1;
            f.wanted = Some((f.scene_seq, scene));
            let _ = f
                .rects_canvas
                .set_attribute("data-scene", &f.scene_seq.to_string());
        });
    });
    no_offscreen
}

/// Whether the page shows its dark theme (the browser prefers it).
pub(crate) fn dark_theme() -> bool {
    thread_local! {
        // One query list, asked on every scene (it follows the setting).
        static DARK: Option<web_sys::MediaQueryList> =
            window().match_media("(prefers-color-scheme: dark)").ok().flatten();
    }
    DARK.with(|m| m.as_ref().is_some_and(|m| m.matches()))
}

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
    let tl = Tl::new(&summary, ui);
    let rects: NodeRef<leptos::html::Canvas> = NodeRef::new();
    let overlay: NodeRef<leptos::html::Canvas> = NodeRef::new();
    let no_offscreen = paint_in_worker(tl, rects, overlay);
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
    let (t0, width) = (tl.t0, tl.width);
    let data_view = move || {
        let a = tl.axis.get();
        format!("{} {} {}", a.start_ns - t0, a.ns_per_px, width.get())
    };
    view! {
        <Toolbar tl=tl/>
        <div class="timeline-help muted">
            "wheel or W/S zoom · drag or A/D pan · 0 all · Shift+drag or drag on the ruler selects a range · F fits it · Esc clears · click a slice"
        </div>
        <Legend/>
        <div class="timeline" id="timeline" tabindex="0" on:keydown=move |ev| tl.on_key(ev) node_ref=tl.scroller data-view=data_view>
            <LaneLabels tl=tl/>
            <div class="timeline-plot" style=move || format!("width:{}px", width.get())>
                <Ruler tl=tl/>
                {move || no_offscreen.get().then(|| view! {
                    <p class="error-text">"This browser cannot draw the timeline in a worker (it lacks OffscreenCanvas); use a current Chrome, Edge, Firefox or Safari."</p>
                })}
                <Plot tl=tl rects=rects overlay=overlay/>
                <Tooltip tl=tl/>
            </div>
        </div>
        <SliceDetails selected=tl.selected lanes=tl.lanes select=move |s| tl.select_slice(s)/>
        <RangePanel tl=tl summary=summary/>
    }
}

/// Visible span, search with its count, the op table's highlight, colours.
#[component]
fn Toolbar(tl: Tl) -> impl IntoView {
    let ui: Ui = expect_context();
    let (t0, width) = (tl.t0, tl.width);
    let visible = move || {
        let a = tl.axis.get();
        let (from, to) = (a.start_ns - t0, a.time(width.get()) - t0);
        format!(
            "{} – {} (showing {})",
            table::fmt_ns(from as f64),
            table::fmt_ns(to as f64),
            table::fmt_ns((to - from) as f64)
        )
    };
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
fn Legend() -> impl IntoView {
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
            <span class="ruler-selection" id="ruler-selection" style=format!("left:{x0:.1}px;width:{:.1}px", (x1 - x0).max(1.0))>
                {table::fmt_ns((b - a) as f64)}
            </span>
        })
    };
    view! {
        <div class="ruler" id="timeline-ruler" style=move || format!("width:{}px", width.get())
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
            <div class="tooltip" id="timeline-tooltip" style=format!("left:{:.0}px;top:{:.0}px", x + 14.0, y + 34.0)>
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
fn RangePanel(tl: Tl, summary: Summary) -> impl IntoView {
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
fn SliceDetails(
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

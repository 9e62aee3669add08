//! The timeline in the page: lane labels, ruler, the WebGL2 rectangle layer
//! with a Canvas2D layer on top (names, selection, dependency arrows, the
//! selected range), and the panels under it (details with the dependency
//! chain, the op table of a range).
//!
//! One `requestAnimationFrame` loop drives it. Signals only record what is
//! wanted (a new view, an overlay change); each frame the loop sends at most
//! one draw request to the worker (never more than one in flight) and
//! repaints the overlay if it changed. A draw list is painted as soon as it
//! arrives. `tracelane:frame` measures request → worker layout → transfer
//! → paint.

use std::cell::RefCell;
use std::rc::Rc;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use crate::gl::GlRects;
use crate::protocol::{RangeOps, Summary, ToWorker};
use crate::table;
use crate::timeline_view::{
    row_layout, ChainView, Highlight, LaneKind, LaneView, PickedSlice, RowLayout, ViewRequest,
    CODE_COUNTER, CODE_HIGHLIGHT, CODE_INSTANT, NAME_COLOURS, NAME_COLOUR_BASE, RECT_STRIDE,
};
use crate::web::{ask_worker, performance_mark, performance_measure, window, OpTable, Ui};
use tracelane_core::timeline::{ruler_ticks, TimeAxis};

pub const ROW_PX: f64 = 18.0;
/// Width of the lane-label column, in CSS pixels.
const LABELS_PX: f64 = 240.0;

/// Colours by code: categories, counter, instant, highlight, then names.
fn palette() -> Vec<&'static str> {
    let mut p = vec![
        "#8c8c8c", // other
        "#4e79a7", // op
        "#9c755f", // annotation
        "#f28e2b", // runtime
        "#59a14f", // kernel
        "#e15759", // memcpy
        "#edc948", // memset
        "#bab0ac", // sync
        "#76b7b2", // device window
        "#b07aa1", // device annotation
        "#7aa6d8", // counter
        "#1d232b", // instant
        "#ffcc00", // highlight
        "#000000", "#000000", "#000000",
    ];
    p.truncate(NAME_COLOUR_BASE as usize);
    p.extend([
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
        "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd",
        "#e6550d", "#31a354", "#756bb1", "#636363", "#6baed6", "#fd8d3c", "#74c476", "#9e9ac8",
    ]);
    p.truncate(NAME_COLOUR_BASE as usize + NAME_COLOURS as usize);
    p
}

/// Legend entries: (colour code, what it means).
const LEGEND: &[(u8, &str)] = &[
    (1, "op"),
    (2, "annotation"),
    (3, "runtime"),
    (4, "kernel"),
    (5, "memcpy"),
    (6, "memset"),
    (8, "device window"),
    (9, "device annotation"),
    (CODE_COUNTER, "counter"),
    (CODE_INSTANT, "instant"),
    (CODE_HIGHLIGHT, "match"),
];

/// What the overlay draws besides names.
#[derive(Clone, Default)]
struct Overlay {
    layout: RowLayout,
    selected: Option<PickedSlice>,
    range: Option<(i64, i64)>,
    /// Trace start: chain and selection times are relative to it.
    t0: i64,
}

/// A painted frame: its view, rectangles (as transferred) and labels.
type Shown = (ViewRequest, js_sys::Float32Array, Vec<(u32, String)>);

/// The painting side of the mounted timeline (one at a time).
struct Painter {
    trace_id: u32,
    rects_canvas: HtmlCanvasElement,
    overlay_canvas: HtmlCanvasElement,
    gl: Option<GlRects>,
    width: f64,
    /// The view to request next, if it changed since the last request.
    wanted: Option<ViewRequest>,
    in_flight: Option<(u32, ViewRequest)>,
    /// Labels of the draw list in flight (they come just before it).
    labels_for: Option<(u32, Vec<(u32, String)>)>,
    /// What is on screen: its view, rectangles and labels.
    shown: Option<Shown>,
    overlay: Overlay,
    overlay_dirty: bool,
}

thread_local! {
    static PAINTER: RefCell<Option<Painter>> = const { RefCell::new(None) };
}

fn with_painter<R>(f: impl FnOnce(&mut Painter) -> R) -> Option<R> {
    PAINTER.with(|p| p.borrow_mut().as_mut().map(f))
}

/// The worker's labels for draw request `request` (its rectangles follow).
pub fn on_labels(request: u32, labels: Vec<(u32, String)>) {
    with_painter(|p| p.labels_for = Some((request, labels)));
}

/// A draw list arrived: paint it if it answers the request in flight.
pub fn on_drawn(array: js_sys::Float32Array) {
    let request = array.get_index(0) as u32;
    let n = array.get_index(1) as u32;
    with_painter(|p| {
        let Some((want, view)) = p.in_flight.take_if(|(r, _)| *r == request) else {
            return;
        };
        let labels = p
            .labels_for
            .take()
            .filter(|(r, _)| *r == want)
            .map(|(_, l)| l)
            .unwrap_or_default();
        let rects = array.subarray(2, 2 + n * RECT_STRIDE as u32);
        p.shown = Some((view, rects, labels));
        paint_rects(p);
        paint_overlay(p);
        p.overlay_dirty = false;
        performance_mark("tracelane:frame:end");
        performance_measure(
            "tracelane:frame",
            "tracelane:frame:start",
            "tracelane:frame:end",
        );
    });
}

/// Sizes a canvas's backing store for `w` × `h` CSS pixels (only when it
/// changes: resizing clears and reallocates it).
fn size_canvas(c: &HtmlCanvasElement, w: f64, h: f64) {
    let dpr = window().device_pixel_ratio().max(1.0);
    let (bw, bh) = ((w * dpr).round() as u32, (h * dpr).round().max(1.0) as u32);
    if c.width() != bw || c.height() != bh {
        c.set_width(bw);
        c.set_height(bh);
        let _ = c.set_attribute("style", &format!("width:{w}px;height:{h}px"));
    }
}

fn context_2d(c: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    c.get_context("2d").ok()??.dyn_into().ok()
}

fn paint_rects(p: &mut Painter) {
    let Some((_, rects, _)) = &p.shown else {
        return;
    };
    let h = p.overlay.layout.rows as f64 * ROW_PX;
    size_canvas(&p.rects_canvas, p.width, h);
    if let Some(gl) = &p.gl {
        gl.paint(rects, p.width, h, ROW_PX);
        return;
    }
    // Canvas2D fallback where WebGL2 is missing: batched by colour.
    let Some(ctx) = context_2d(&p.rects_canvas) else {
        return;
    };
    let floats = rects.to_vec();
    let dpr = window().device_pixel_ratio().max(1.0);
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    ctx.clear_rect(0.0, 0.0, p.width, h);
    let colours = palette();
    let n = floats.len() / RECT_STRIDE;
    let rect = |k: usize| &floats[k * RECT_STRIDE..(k + 1) * RECT_STRIDE];
    for (code, colour) in colours.iter().enumerate() {
        let mut any = false;
        for k in (0..n).filter(|&k| rect(k)[4] as usize == code) {
            if !any {
                ctx.set_fill_style_str(colour);
                any = true;
            }
            let r = rect(k);
            let (x0, x1) = (r[1] as f64, (r[2] as f64).max(r[1] as f64 + 1.0));
            let bottom = (r[0] as f64 + 1.0) * ROW_PX;
            let (top, bot) = match code as u8 {
                CODE_COUNTER => (bottom - r[5] as f64 * ROW_PX, bottom),
                CODE_HIGHLIGHT => (bottom - ROW_PX + 3.0, bottom - 3.0),
                _ => (bottom - ROW_PX + 1.0, bottom - 1.0),
            };
            ctx.fill_rect(x0, top, x1 - x0, bot - top);
        }
    }
}

/// Middle-elides `label` to about `fit` characters, or `None` if too short.
fn elide(label: &str, fit: usize) -> Option<String> {
    let n = label.chars().count();
    if n <= fit {
        return Some(label.to_string());
    }
    if fit < 5 {
        return None;
    }
    let half = (fit - 1) / 2;
    let head: String = label.chars().take(half).collect();
    let tail: String = label.chars().skip(n - half).collect();
    Some(format!("{head}…{tail}"))
}

/// Display row of a lane row, if its group is expanded.
fn display_row(o: &Overlay, lane: u32, lane_row: u16) -> Option<f64> {
    let first = (*o.layout.lane_first_row.get(lane as usize)?)?;
    Some((first + lane_row as u32) as f64)
}

fn paint_overlay(p: &mut Painter) {
    let o = &p.overlay;
    let h = o.layout.rows as f64 * ROW_PX;
    size_canvas(&p.overlay_canvas, p.width, h);
    let Some(ctx) = context_2d(&p.overlay_canvas) else {
        return;
    };
    let dpr = window().device_pixel_ratio().max(1.0);
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    ctx.clear_rect(0.0, 0.0, p.width, h);
    let Some((view, rects, labels)) = &p.shown else {
        return;
    };
    let axis = view.axis();
    // Group header rows.
    ctx.set_fill_style_str("#f1f3f6");
    for &(_, row, _) in &o.layout.headers {
        ctx.fill_rect(0.0, row as f64 * ROW_PX, p.width, ROW_PX);
    }
    // Names inside their slices.
    ctx.set_font("11px system-ui, sans-serif");
    ctx.set_fill_style_str("#fff");
    let n = rects.length() / RECT_STRIDE as u32;
    for (k, label) in labels {
        if *k >= n {
            continue;
        }
        let at = |f: u32| rects.get_index(k * RECT_STRIDE as u32 + f) as f64;
        let (row, x0, x1) = (at(0), at(1).max(0.0), at(2).min(p.width));
        // About 6.5 px a character at this size.
        let fit = ((x1 - x0 - 6.0) / 6.5).floor().max(0.0) as usize;
        if let Some(text) = elide(label, fit) {
            let _ = ctx.fill_text(&text, x0 + 3.0, row * ROW_PX + ROW_PX - 5.0);
        }
    }
    // The selected range.
    if let Some((a, b)) = o.range {
        let (x0, x1) = (axis.px(a).max(-1.0), axis.px(b).min(p.width + 1.0));
        if x1 > x0 {
            ctx.set_fill_style_str("rgba(47,111,219,0.14)");
            ctx.fill_rect(x0, 0.0, x1 - x0, h);
            ctx.set_stroke_style_str("#2f6fdb");
            ctx.set_line_width(1.0);
            ctx.stroke_rect(x0 + 0.5, 0.5, x1 - x0 - 1.0, h - 1.0);
        }
    }
    // The selection, its chain, and the launch arrows.
    let Some(sel) = &o.selected else {
        return;
    };
    let place = |lane: u32, lane_row: u16, start_rel: i64, dur: i64| {
        let row = display_row(o, lane, lane_row)?;
        let x0 = axis.px(o.t0 + start_rel);
        let x1 = axis.px(o.t0 + start_rel + dur).max(x0 + 1.0);
        Some((x0, x1, row * ROW_PX))
    };
    ctx.set_stroke_style_str("#1d232b");
    for c in &sel.chain {
        if let Some((x0, x1, y)) = place(c.lane, c.lane_row, c.start_ns, c.dur_ns) {
            ctx.set_line_width(1.0);
            ctx.stroke_rect(x0 - 0.5, y + 0.5, x1 - x0 + 1.0, ROW_PX - 1.0);
        }
    }
    if let Some((x0, x1, y)) = place(sel.lane, sel.lane_row, sel.start_ns, sel.dur_ns) {
        ctx.set_line_width(2.0);
        ctx.stroke_rect(x0 - 1.0, y + 1.0, x1 - x0 + 2.0, ROW_PX - 2.0);
    }
    // Arrows: op → runtime call (when on another lane), launch → device event.
    ctx.set_stroke_style_str("#d6336c");
    ctx.set_fill_style_str("#d6336c");
    ctx.set_line_width(1.5);
    let mut from: Option<&ChainView> = None;
    let mut op: Option<&ChainView> = None;
    for c in &sel.chain {
        let source = match c.role.as_str() {
            "op" => {
                op = Some(c);
                None
            }
            "runtime" => {
                from = Some(c);
                op.filter(|o| o.lane != c.lane)
            }
            _ => from.or(op),
        };
        let Some(s) = source else { continue };
        let (Some((_, sx1, sy)), Some((tx0, _, ty))) = (
            place(s.lane, s.lane_row, s.start_ns, s.dur_ns),
            place(c.lane, c.lane_row, c.start_ns, c.dur_ns),
        ) else {
            continue;
        };
        let (sx, sy, tx, ty) = (
            if c.role == "runtime" { tx0 } else { sx1 },
            sy + ROW_PX / 2.0,
            tx0,
            ty + ROW_PX / 2.0,
        );
        ctx.begin_path();
        ctx.move_to(sx, sy);
        let mid = (sy + ty) / 2.0;
        ctx.bezier_curve_to(sx, mid, tx, mid, tx, ty);
        ctx.stroke();
        // Arrow head pointing along the final (vertical) tangent.
        let dir = if ty >= sy { -1.0 } else { 1.0 };
        ctx.begin_path();
        ctx.move_to(tx, ty - dir * 0.0);
        ctx.line_to(tx - 4.0, ty + dir * 7.0);
        ctx.line_to(tx + 4.0, ty + dir * 7.0);
        ctx.close_path();
        ctx.fill();
    }
}

/// Starts the frame loop; it stops by itself once the painter is gone.
fn start_frame_loop(trace_id: u32) {
    type Loop = Rc<RefCell<Option<Closure<dyn FnMut()>>>>;
    let frame: Loop = Rc::default();
    let again = frame.clone();
    *frame.borrow_mut() = Some(Closure::new(move || {
        let alive = with_painter(|p| {
            if p.trace_id != trace_id {
                return false;
            }
            if p.in_flight.is_none() {
                if let Some(view) = p.wanted.take() {
                    performance_mark("tracelane:frame:start");
                    let trace = p.trace_id;
                    let v = view.clone();
                    if let Some(request) = ask_worker(|request| ToWorker::Draw {
                        id: trace,
                        request,
                        view: v,
                    }) {
                        p.in_flight = Some((request, view));
                    }
                }
            }
            if p.overlay_dirty {
                p.overlay_dirty = false;
                paint_overlay(p);
            }
            true
        })
        .unwrap_or(false);
        if alive {
            if let Some(f) = again.borrow().as_ref() {
                let _ = window().request_animation_frame(f.as_ref().unchecked_ref());
            }
        } else {
            // Drop the closure (and this loop) on the next turn.
            let again = again.clone();
            wasm_bindgen_futures::spawn_local(async move {
                again.borrow_mut().take();
            });
        }
    }));
    if let Some(f) = frame.borrow().as_ref() {
        let _ = window().request_animation_frame(f.as_ref().unchecked_ref());
    };
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

#[component]
pub fn TimelineView(summary: Summary) -> impl IntoView {
    let ui: Ui = expect_context();
    let id = summary.id;
    let (t0, t1) = (summary.timeline_start_ns, summary.timeline_end_ns);
    let lanes = StoredValue::new(summary.lanes.clone());
    let width = plot_width();
    let home = TimeAxis::fit(t0, t1, width);
    let axis = RwSignal::new(home);
    let collapsed = RwSignal::new(Vec::<u32>::new());
    let colour_by_name = RwSignal::new(false);
    let search = RwSignal::new(String::new());
    let search_at = RwSignal::new(None::<(usize, i64)>);
    let selected = RwSignal::new(None::<PickedSlice>);
    let range = RwSignal::new(None::<(i64, i64)>);
    let follow = RwSignal::new(false);
    let range_ops = RwSignal::new(None::<RangeOps>);
    let rects: NodeRef<leptos::html::Canvas> = NodeRef::new();
    let overlay: NodeRef<leptos::html::Canvas> = NodeRef::new();
    let scroller: NodeRef<leptos::html::Div> = NodeRef::new();
    let layout = Memo::new(move |_| lanes.with_value(|l| row_layout(l, &collapsed.get())));
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
            width_px: width,
            collapsed: collapsed.get(),
            highlight: highlight.get(),
            colour_by_name: colour_by_name.get(),
        }
    });

    // Mount: the painter and its frame loop; unmount drops them.
    Effect::new(move |_| {
        let (Some(r), Some(o)) = (rects.get(), overlay.get()) else {
            return;
        };
        let r: HtmlCanvasElement = r.unchecked_into();
        let o: HtmlCanvasElement = o.unchecked_into();
        let gl = GlRects::new(&r, &palette());
        let _ = r.set_attribute(
            "data-renderer",
            if gl.is_some() { "webgl2" } else { "canvas2d" },
        );
        PAINTER.with(|p| {
            *p.borrow_mut() = Some(Painter {
                trace_id: id,
                rects_canvas: r,
                overlay_canvas: o,
                gl,
                width,
                wanted: Some(view.get_untracked()),
                in_flight: None,
                labels_for: None,
                shown: None,
                overlay: Overlay {
                    layout: layout.get_untracked(),
                    t0,
                    ..Default::default()
                },
                overlay_dirty: true,
            })
        });
        start_frame_loop(id);
    });
    on_cleanup(move || {
        PAINTER.with(|p| {
            if p.borrow().as_ref().is_some_and(|p| p.trace_id == id) {
                *p.borrow_mut() = None;
            }
        })
    });
    // Signals only mark what the next frame must do.
    Effect::new(move |_| {
        let v = view.get();
        with_painter(|p| p.wanted = Some(v));
    });
    Effect::new(move |_| {
        let (l, s, r) = (layout.get(), selected.get(), range.get());
        with_painter(|p| {
            p.overlay.layout = l;
            p.overlay.selected = s;
            p.overlay.range = r;
            p.overlay_dirty = true;
        });
    });

    // Asks the worker what lies under a point of the plot.
    let pick_at = move |x: f64, y: f64, hover: bool| {
        let row = (y / ROW_PX).floor().max(0.0) as u32;
        let v = view.get_untracked();
        ask_worker(|request| ToWorker::Pick {
            id,
            request,
            view: v,
            row,
            x_px: x,
            hover,
        })
    };
    let last_pick = RwSignal::new(None::<u32>);
    let reveal_next = RwSignal::new(None::<u32>);
    let last_find = RwSignal::new(None::<u32>);
    let last_hover = RwSignal::new(None::<u32>);
    let last_range = RwSignal::new(None::<u32>);
    let hover_at = RwSignal::new(None::<(f64, f64)>);

    // Brings a slice into view: centred if it fits, else fitted; its lane
    // expanded and scrolled to.
    let reveal = move |p: &PickedSlice| {
        let (a, b) = (t0 + p.start_ns, t0 + p.start_ns + p.dur_ns.max(1));
        let cur = axis.get_untracked();
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
        axis.set(next);
        if let Some(lane) = lanes.with_value(|l| l.get(p.lane as usize).cloned()) {
            collapsed.update(|c| c.retain(|g| *g != lane.group));
        }
        let row = layout
            .get_untracked()
            .lane_first_row
            .get(p.lane as usize)
            .copied()
            .flatten()
            .map(|r| r + p.lane_row as u32);
        if let (Some(row), Some(el)) = (row, scroller.get_untracked()) {
            let y = row as f64 * ROW_PX - el.client_height() as f64 / 2.0;
            el.set_scroll_top(y.max(0.0) as i32);
        }
    };
    Effect::new(move |_| {
        ui.picked.with(|p| {
            let Some((req, slice)) = p else { return };
            if Some(*req) == last_pick.get_untracked() {
                selected.set(slice.clone());
                if reveal_next.get_untracked() == Some(*req) {
                    if let Some(s) = slice {
                        reveal(s);
                    }
                }
            }
        });
    });
    Effect::new(move |_| {
        ui.found.with(|f| {
            let Some((req, count, index, slice)) = f else {
                return;
            };
            if Some(*req) == last_find.get_untracked() {
                search_at.set(Some((*count, *index)));
                if let Some(s) = slice {
                    selected.set(Some(s.clone()));
                    reveal(s);
                }
            }
        });
    });
    Effect::new(move |_| {
        ui.range_ops.with(|r| {
            if let Some((req, table)) = r {
                if Some(*req) == last_range.get_untracked() {
                    range_ops.set(Some(table.clone()));
                }
            }
        });
    });
    let select_slice = move |slice: u32| {
        let req = ask_worker(|request| ToWorker::Select { id, request, slice });
        last_pick.set(req);
        reveal_next.set(req);
    };
    let find = move |step: i64| {
        let Some(h) = highlight.get_untracked() else {
            return;
        };
        let index = search_at.get_untracked().map_or(0, |(_, k)| k + step);
        last_find.set(ask_worker(|request| ToWorker::Find {
            id,
            request,
            highlight: h,
            index,
        }));
    };
    let ask_range = move |a: i64, b: i64| {
        last_range.set(ask_worker(|request| ToWorker::RangeTable {
            id,
            request,
            start_ns: a,
            end_ns: b,
        }));
    };
    // The op table can follow the visible range (after the view settles).
    let settle = RwSignal::new(0u32);
    Effect::new(move |_| {
        let a = axis.get();
        if !follow.get() {
            return;
        }
        let ticket = settle.get_untracked() + 1;
        settle.set(ticket);
        let cb = Closure::once_into_js(move || {
            if settle.get_untracked() == ticket && follow.get_untracked() {
                ask_range(a.start_ns, a.time(width));
            }
        });
        let _ =
            window().set_timeout_with_callback_and_timeout_and_arguments_0(cb.unchecked_ref(), 250);
    });

    let hovered = move || {
        ui.hovered.with(|p| {
            p.as_ref()
                .filter(|(r, _)| Some(*r) == last_hover.get())
                .and_then(|(_, s)| s.clone())
        })
    };
    let visible = move || {
        let a = axis.get();
        let (from, to) = (a.start_ns - t0, a.time(width) - t0);
        format!(
            "{} – {} (showing {})",
            table::fmt_ns(from as f64),
            table::fmt_ns(to as f64),
            table::fmt_ns((to - from) as f64)
        )
    };
    let fit_selection = move || {
        if let Some((a, b)) = range.get_untracked() {
            axis.set(TimeAxis::fit(a, b, width));
        } else if let Some(s) = selected.get_untracked() {
            let (a, b) = (t0 + s.start_ns, t0 + s.start_ns + s.dur_ns.max(1));
            let pad = (b - a) / 10;
            axis.set(TimeAxis::fit(a - pad, b + pad, width));
        }
    };
    let on_key = move |ev: web_sys::KeyboardEvent| {
        let a = axis.get_untracked();
        let next = match ev.key().as_str() {
            "w" | "W" => a.zoom(1.25, width / 2.0),
            "s" | "S" => a.zoom(0.8, width / 2.0),
            "a" | "A" => a.pan(-width / 10.0),
            "d" | "D" => a.pan(width / 10.0),
            "0" | "Home" => home,
            "f" | "F" => {
                ev.prevent_default();
                fit_selection();
                return;
            }
            "Escape" => {
                range.set(None);
                selected.set(None);
                return;
            }
            _ => return,
        };
        ev.prevent_default();
        axis.set(next);
    };

    // Pointer: drag pans; Shift+drag (or any drag on the ruler) selects a
    // range; a click picks.
    #[derive(Clone, Copy, PartialEq)]
    enum Drag {
        Pan { start: f64, last: f64 },
        Range { from_ns: i64 },
    }
    let drag = RwSignal::new(None::<Drag>);
    let begin_range = move |x: f64| {
        let at = axis.get_untracked().time(x);
        drag.set(Some(Drag::Range { from_ns: at }));
        range.set(Some((at, at)));
    };
    let move_range = move |x: f64| {
        if let Some(Drag::Range { from_ns }) = drag.get_untracked() {
            let at = axis.get_untracked().time(x.clamp(0.0, width));
            range.set(Some((from_ns.min(at), from_ns.max(at))));
        }
    };
    let end_drag = move |x: f64, y: f64| {
        match drag.get_untracked() {
            Some(Drag::Range { .. }) => {
                move_range(x);
                match range.get_untracked() {
                    Some((a, b))
                        if axis.get_untracked().px(b) - axis.get_untracked().px(a) >= 2.0 =>
                    {
                        follow.set(false);
                        ask_range(a, b);
                    }
                    _ => range.set(None),
                }
            }
            Some(Drag::Pan { start, .. }) if (x - start).abs() <= 3.0 => {
                last_pick.set(pick_at(x, y, false));
            }
            _ => {}
        }
        drag.set(None);
    };

    let lane_labels = move || {
        let l = layout.get();
        let folded = collapsed.get();
        lanes.with_value(|lanes| {
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
                            on:click=move |_| collapsed.update(|c| {
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
                    let h = lane.rows as f64 * ROW_PX;
                    let text = match lane.peak {
                        Some(peak) => format!("{} (peak {})", lane.label, table::fmt_count_f(peak)),
                        None => lane.label.clone(),
                    };
                    let row = l.lane_first_row[k].unwrap_or(0);
                    out.push(view! {
                        <div class="lane-label" class:device=lane.kind == LaneKind::Device class:counter=lane.kind == LaneKind::Counter
                            data-row=row style=format!("height:{h}px") title=text.clone()>
                            {text.clone()}
                        </div>
                    }.into_any());
                }
            }
            out
        })
    };
    let plot_h = move || layout.get().rows as f64 * ROW_PX;
    let selection_label = move || {
        let (a, b) = range.get()?;
        let ax = axis.get();
        let (x0, x1) = (ax.px(a).clamp(0.0, width), ax.px(b).clamp(0.0, width));
        Some(view! {
            <span class="ruler-selection" id="ruler-selection" style=format!("left:{x0:.1}px;width:{:.1}px", (x1 - x0).max(1.0))>
                {table::fmt_ns((b - a) as f64)}
            </span>
        })
    };
    let data_view = move || {
        let a = axis.get();
        format!("{} {} {}", a.start_ns - t0, a.ns_per_px, width)
    };
    let legend = LEGEND
        .iter()
        .map(|&(code, what)| {
            view! { <span class="legend-item"><i style=format!("background:{}", palette()[code as usize])></i>{what}</span> }
        })
        .collect_view();

    view! {
        <div class="timeline-bar">
            <span id="timeline-range">{visible}</span>
            <input type="search" id="timeline-search" placeholder="search names (Enter / Shift+Enter)"
                prop:value=move || search.get()
                on:input=move |ev| { search.set(event_target_value(&ev)); search_at.set(None); }
                on:keydown=move |ev: web_sys::KeyboardEvent| {
                    if ev.key() == "Enter" {
                        ev.prevent_default();
                        find(if ev.shift_key() { -1 } else { 1 });
                    }
                }/>
            <span id="search-count" class="muted">{move || match (highlight.get(), search_at.get()) {
                (Some(_), Some((0, _))) => "no match".to_string(),
                (Some(_), Some((n, k))) => format!("{} / {n}", k.rem_euclid(n as i64) + 1),
                (Some(h), None) if h.exact => format!("highlighting “{}”", h.text),
                _ => String::new(),
            }}</span>
            {move || ui.table_highlight.get().map(|_| view! {
                <button id="clear-highlight" on:click=move |_| ui.table_highlight.set(None)>"clear highlight"</button>
            })}
            <label><input type="checkbox" id="colour-by-name" prop:checked=move || colour_by_name.get()
                on:change=move |ev| colour_by_name.set(event_target_checked(&ev))/>" colour by name"</label>
        </div>
        <div class="timeline-help muted">
            "wheel or W/S zoom · drag or A/D pan · 0 all · Shift+drag or drag on the ruler selects a range · F fits it · Esc clears · click a slice"
        </div>
        <div class="legend">{legend}</div>
        <div class="timeline" id="timeline" tabindex="0" on:keydown=on_key node_ref=scroller data-view=data_view>
            <div class="lane-labels" style=format!("flex-basis:{LABELS_PX}px")>
                <div class="ruler-corner"></div>
                {lane_labels}
            </div>
            <div class="timeline-plot" style=format!("width:{width}px")>
                <div class="ruler" id="timeline-ruler" style=format!("width:{width}px")
                    on:mousedown=move |ev: web_sys::MouseEvent| { ev.prevent_default(); begin_range(ev.offset_x() as f64) }
                    on:mousemove=move |ev: web_sys::MouseEvent| move_range(ev.offset_x() as f64)
                    on:mouseup=move |ev: web_sys::MouseEvent| end_drag(ev.offset_x() as f64, 0.0)>
                    {move || {
                        ruler_ticks(&axis.get(), width, t0, 90.0)
                            .into_iter()
                            .map(|t| view! { <span class="tick" style=format!("left:{:.1}px", t.x_px)>{t.label}</span> })
                            .collect_view()
                    }}
                    {selection_label}
                </div>
                <div class="plot-layers" style=move || format!("height:{}px", plot_h())>
                    <canvas node_ref=rects class="rects"></canvas>
                    <canvas
                        node_ref=overlay
                        class="overlay"
                        on:wheel=move |ev: web_sys::WheelEvent| {
                            ev.prevent_default();
                            // Trackpads send many small deltas: zoom by their size.
                            let f = (-ev.delta_y() / 400.0).clamp(-0.5, 0.5).exp();
                            axis.update(|a| *a = a.zoom(f, ev.offset_x() as f64));
                        }
                        on:mousedown=move |ev: web_sys::MouseEvent| {
                            let x = ev.offset_x() as f64;
                            if ev.shift_key() {
                                begin_range(x);
                            } else {
                                drag.set(Some(Drag::Pan { start: x, last: x }));
                            }
                        }
                        on:mousemove=move |ev: web_sys::MouseEvent| {
                            let (x, y) = (ev.offset_x() as f64, ev.offset_y() as f64);
                            match drag.get_untracked() {
                                None => {
                                    hover_at.set(Some((x, y)));
                                    last_hover.set(pick_at(x, y, true));
                                }
                                Some(Drag::Pan { start, last }) => {
                                    if (x - start).abs() > 3.0 {
                                        axis.update(|a| *a = a.pan(last - x));
                                    }
                                    drag.set(Some(Drag::Pan { start, last: x }));
                                }
                                Some(Drag::Range { .. }) => move_range(x),
                            }
                        }
                        on:mouseup=move |ev: web_sys::MouseEvent| end_drag(ev.offset_x() as f64, ev.offset_y() as f64)
                        on:mouseleave=move |_| {
                            hover_at.set(None);
                            last_hover.set(None);
                            if matches!(drag.get_untracked(), Some(Drag::Pan { .. })) {
                                drag.set(None);
                            }
                        }
                    ></canvas>
                </div>
                {move || {
                    let (x, y) = hover_at.get()?;
                    let p = hovered()?;
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
                }}
            </div>
        </div>
        <SliceDetails selected=selected lanes=lanes select=select_slice/>
        <div class="range-panel">
            <label><input type="checkbox" id="follow-visible" prop:checked=move || follow.get()
                on:change=move |ev| {
                    let on = event_target_checked(&ev);
                    follow.set(on);
                    if on {
                        range.set(None);
                        let a = axis.get_untracked();
                        ask_range(a.start_ns, a.time(width));
                    } else {
                        range_ops.set(None);
                    }
                }/>" op table follows the visible range"</label>
            {move || range_ops.get().map(|r| {
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

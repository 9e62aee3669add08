//! The frame loop: scenes sent to the worker one per frame, the canvases
//! handed over, what was painted and shown recorded for the tests.

use std::cell::RefCell;
use std::rc::Rc;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::HtmlCanvasElement;

use crate::page::client::{self};
use crate::page::dom::window;
use crate::page::frames::{with_frames, Frames, FRAMES};
use crate::page::state::Ui;
use crate::shared::protocol::ToWorker;
use crate::shared::timeline_view::Scene;
use crate::transfer::Transfer;

use super::state::{Tl, STALE_FRAME_MS};

thread_local! {
    /// The shown timeline's window-resize listener (trace id, function).
    static RESIZE: RefCell<Option<(u32, js_sys::Function)>> = const { RefCell::new(None) };
}

/// Starts the frame loop; it stops by itself once the timeline is unmounted.
pub(super) fn start_frame_loop(trace_id: u32) {
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
pub(super) fn attach_canvases(
    id: u32,
    rects: &HtmlCanvasElement,
    overlay: &HtmlCanvasElement,
) -> bool {
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

/// Hands the canvases to the worker when they mount, starts the frame loop
/// (it stops with the timeline), and marks a new scene whenever what is
/// shown changes. Returns whether the browser could not hand them over.
pub(super) fn paint_in_worker(
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

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
use crate::shared::protocol::{TimelineSlot, ToWorker};
use crate::shared::timeline_view::Scene;
use crate::transfer::Transfer;

use super::state::{Tl, STALE_FRAME_MS};

thread_local! {
    /// Each shown timeline's window-resize listener (slot, mounting,
    /// function).
    static RESIZE: RefCell<Vec<(TimelineSlot, u32, js_sys::Function)>> =
        const { RefCell::new(Vec::new()) };
    /// Mountings of timelines so far (each gets the next number).
    static MOUNTS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Starts the frame loop of timeline `slot`'s mounting `mount`; it stops
/// by itself once that mounting is gone.
pub(super) fn start_frame_loop(slot: TimelineSlot, mount: u32) {
    type Loop = Rc<RefCell<Option<Closure<dyn FnMut()>>>>;
    let frame: Loop = Rc::default();
    let again = frame.clone();
    *frame.borrow_mut() = Some(Closure::new(move || {
        let alive = with_frames(slot, |f| {
            if f.mount != mount {
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
                        id: f.trace_id,
                        slot,
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
    (id, slot): (u32, TimelineSlot),
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
        slot,
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
    let (id, slot) = (tl.id, tl.slot);
    let mount = MOUNTS.with(|m| {
        m.set(m.get() + 1);
        m.get()
    });
    let ui: Ui = expect_context();
    let no_offscreen = RwSignal::new(false);
    // The latest scene, for the canvases if they are handed over after it
    // was wanted.
    let latest = StoredValue::new(None::<Scene>);
    Effect::new(move |_| {
        let (Some(r), Some(o)) = (rects.get(), overlay.get()) else {
            return;
        };
        let r: HtmlCanvasElement = r.unchecked_into();
        let o: HtmlCanvasElement = o.unchecked_into();
        if !attach_canvases((id, slot), &r, &o) {
            no_offscreen.set(true);
            return;
        }
        FRAMES.with(|f| {
            let mut f = f.borrow_mut();
            f.retain(|x| x.slot != slot);
            f.push(Frames {
                slot,
                mount,
                trace_id: id,
                rects_canvas: r,
                wanted: None,
                scene_seq: 0,
                in_flight_since: None,
            })
        });
        if let Some(scene) = latest.get_value() {
            want(slot, mount, scene);
        }
        start_frame_loop(slot, mount);
    });
    // The plot follows the window's width (one listener per timeline
    // shown).
    let on_resize: js_sys::Function = Closure::<dyn FnMut()>::new(move || tl.resized())
        .into_js_value()
        .unchecked_into();
    RESIZE.with(|r| {
        let mut r = r.borrow_mut();
        for (_, _, old) in r.iter().filter(|x| x.0 == slot) {
            let _ = window().remove_event_listener_with_callback("resize", old);
        }
        r.retain(|x| x.0 != slot);
        let _ = window().add_event_listener_with_callback("resize", &on_resize);
        r.push((slot, mount, on_resize));
    });
    on_cleanup(move || {
        FRAMES.with(|f| f.borrow_mut().retain(|x| x.mount != mount));
        RESIZE.with(|r| {
            let mut r = r.borrow_mut();
            for (_, _, f) in r.iter().filter(|x| x.1 == mount) {
                let _ = window().remove_event_listener_with_callback("resize", f);
            }
            r.retain(|x| x.1 != mount);
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
        latest.set_value(Some(scene.clone()));
        want(slot, mount, scene);
    });
    no_offscreen
}

/// Marks `scene` as the next one to send for timeline `slot`'s mounting
/// `mount` (not an earlier mounting's, still there until its cleanup).
fn want(slot: TimelineSlot, mount: u32, scene: Scene) {
    with_frames(slot, |f| {
        if f.mount != mount {
            return;
        }
        f.scene_seq += 1;
        f.wanted = Some((f.scene_seq, scene));
        let _ = f
            .rects_canvas
            .set_attribute("data-scene", &f.scene_seq.to_string());
    });
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

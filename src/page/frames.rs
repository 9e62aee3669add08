//! The timeline's frame bookkeeping, shared by the timeline view (which
//! asks for scenes) and the import's worker channel (which hears that a
//! scene was painted, then shown): the scene numbers the tests wait on
//! (`data-painted`, `data-shown` on the rectangle canvas) and the measures
//! of each frame.

use std::cell::RefCell;

use web_sys::HtmlCanvasElement;

use crate::page::dom::{performance_span, window};
use crate::shared::timeline_view::Scene;

/// The page's side of the mounted timeline (one at a time): the scene to
/// send next and whether the worker is still painting the last one.
pub(crate) struct Frames {
    pub(crate) trace_id: u32,
    pub(crate) rects_canvas: HtmlCanvasElement,
    pub(crate) wanted: Option<(u32, Scene)>,
    /// The number of the latest scene wanted.
    pub(crate) scene_seq: u32,
    /// When the scene being painted was sent (`performance.now()`).
    pub(crate) in_flight_since: Option<f64>,
}

thread_local! {
    pub(crate) static FRAMES: RefCell<Option<Frames>> = const { RefCell::new(None) };
}

pub(crate) fn with_frames<R>(f: impl FnOnce(&mut Frames) -> R) -> Option<R> {
    FRAMES.with(|p| p.borrow_mut().as_mut().map(f))
}

/// Records a painted frame's measures (durations as the worker timed
/// them) and lets the next scene go.
pub fn on_painted(frame: u32, frame_ms: f64, layout_ms: f64, paint_ms: f64, renderer: &str) {
    let Some(perf) = window().performance() else {
        return;
    };
    let now = perf.now();
    for (name, ms) in [
        ("tracelane:frame", frame_ms),
        ("tracelane:layout", layout_ms),
        ("tracelane:paint", paint_ms),
    ] {
        performance_span(name, now - ms, now);
    }
    with_frames(|f| {
        f.in_flight_since = None;
        let _ = f.rects_canvas.set_attribute("data-renderer", renderer);
        let _ = f
            .rects_canvas
            .set_attribute("data-painted", &frame.to_string());
    });
}

/// Scene `frame` is on screen.
pub fn on_shown(frame: u32) {
    with_frames(|f| {
        let _ = f
            .rects_canvas
            .set_attribute("data-shown", &frame.to_string());
    });
}

//! The timeline's frame bookkeeping, shared by the timeline view (which
//! asks for scenes) and the import's worker channel (which hears that a
//! scene was painted, then shown): the scene numbers the tests wait on
//! (`data-painted`, `data-shown` on the rectangle canvas) and the measures
//! of each frame. Each timeline on the page (its slot: the trace's own,
//! the Compare view's two) has its own.

use std::cell::RefCell;

use web_sys::HtmlCanvasElement;

use crate::page::dom::{performance_span, window};
use crate::shared::protocol::TimelineSlot;
use crate::shared::timeline_view::Scene;

/// The page's side of a mounted timeline: the scene to send next and
/// whether the worker is still painting the last one.
pub(crate) struct Frames {
    pub(crate) slot: TimelineSlot,
    /// Which mounting of the slot this is (its frame loop stops when the
    /// slot is mounted again, even on the same trace).
    pub(crate) mount: u32,
    pub(crate) trace_id: u32,
    pub(crate) rects_canvas: HtmlCanvasElement,
    pub(crate) wanted: Option<(u32, Scene)>,
    /// The number of the latest scene wanted.
    pub(crate) scene_seq: u32,
    /// When the scene being painted was sent (`performance.now()`).
    pub(crate) in_flight_since: Option<f64>,
}

thread_local! {
    /// The mounted timelines, one per slot at most.
    pub(crate) static FRAMES: RefCell<Vec<Frames>> = const { RefCell::new(Vec::new()) };
}

pub(crate) fn with_frames<R>(slot: TimelineSlot, f: impl FnOnce(&mut Frames) -> R) -> Option<R> {
    FRAMES.with(|p| p.borrow_mut().iter_mut().find(|x| x.slot == slot).map(f))
}

/// Records a painted frame's measures (durations as the worker timed
/// them) and lets the next scene go.
pub fn on_painted(
    slot: TimelineSlot,
    frame: u32,
    frame_ms: f64,
    layout_ms: f64,
    paint_ms: f64,
    renderer: &str,
) {
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
    with_frames(slot, |f| {
        f.in_flight_since = None;
        let _ = f.rects_canvas.set_attribute("data-renderer", renderer);
        let _ = f
            .rects_canvas
            .set_attribute("data-painted", &frame.to_string());
    });
}

/// Scene `frame` of timeline `slot` is on screen.
pub fn on_shown(slot: TimelineSlot, frame: u32) {
    with_frames(slot, |f| {
        let _ = f
            .rects_canvas
            .set_attribute("data-shown", &frame.to_string());
    });
}

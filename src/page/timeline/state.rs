//! The timeline's state in the page: the view wanted, the drag under way,
//! the selection, the overlay; what the panels and the frame loop read.

use leptos::prelude::*;
use tracelane_core::timeline::TimeAxis;

use crate::page::client::Latest;
use crate::page::dom::window;
use crate::page::state::Ui;
use crate::shared::protocol::{Answer, Ask, RangeOps, Summary, TimelineSlot};
use crate::shared::timeline_view::{
    row_layout, Highlight, LaneView, PickedSlice, ViewRequest, ROW_PX,
};

/// Width of the lane-label column, in CSS pixels.
pub(super) const LABELS_PX: f64 = 240.0;

/// A worker that has not answered for this long is assumed busy with
/// something else (an import): send the next scene anyway.
pub(super) const STALE_FRAME_MS: f64 = 500.0;

/// The plot's width: the window less the page padding and the labels.
pub(super) fn plot_width() -> f64 {
    let w = window()
        .inner_width()
        .ok()
        .and_then(|v| v.as_f64())
        .unwrap_or(1400.0);
    (w - LABELS_PX - 48.0).clamp(480.0, 4096.0).floor()
}

/// How the pointer is dragging over the plot or the ruler.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Drag {
    Pan { start: f64, last: f64 },
    Range { from_ns: i64 },
}

/// One trace's timeline state, shared by its parts: the view, folding,
/// search, selection and range, and the questions it asks the worker (each
/// kind delivers only its latest answer). A `Copy` handle.
#[derive(Clone, Copy)]
pub(super) struct Tl {
    pub(super) id: u32,
    /// Which of the page's timelines this is (its DOM ids, its canvases
    /// in the worker).
    pub(super) slot: TimelineSlot,
    /// Start of the trace (the ruler's zero), the plot's width, the whole view.
    pub(super) t0: i64,
    /// The trace's end: the whole view is `t0..t1` at the plot's width.
    pub(super) t1: i64,
    /// Follows the window's width (the plot re-lays out on resize).
    pub(super) width: RwSignal<f64>,
    pub(super) lanes: StoredValue<Vec<LaneView>>,
    pub(super) axis: RwSignal<TimeAxis>,
    pub(super) collapsed: RwSignal<Vec<u32>>,
    /// Empty lanes (instant markers at most) are left out.
    pub(super) hide_empty: RwSignal<bool>,
    pub(super) colour_by_name: RwSignal<bool>,
    pub(super) search: RwSignal<String>,
    pub(super) search_at: RwSignal<Option<(usize, i64)>>,
    /// The match last asked for: Enter pressed again before the answer
    /// arrives steps on from it, not from the match shown.
    pub(super) search_asked: RwSignal<Option<i64>>,
    pub(super) selected: RwSignal<Option<PickedSlice>>,
    pub(super) range: RwSignal<Option<(i64, i64)>>,
    pub(super) follow: RwSignal<bool>,
    pub(super) range_ops: RwSignal<Option<RangeOps>>,
    pub(super) hover_at: RwSignal<Option<(f64, f64)>>,
    pub(super) hovered: RwSignal<Option<PickedSlice>>,
    pub(super) drag: RwSignal<Option<Drag>>,
    pub(super) scroller: NodeRef<leptos::html::Div>,
    pub(super) layout: Memo<crate::shared::timeline_view::RowLayout>,
    pub(super) highlight: Memo<Option<Highlight>>,
    pub(super) view: Memo<ViewRequest>,
    pub(super) picks: Latest,
    pub(super) hovers: Latest,
    pub(super) finds: Latest,
    pub(super) range_asks: Latest,
}

pub(super) fn picked(answer: Result<Answer, String>) -> Option<PickedSlice> {
    match answer {
        Ok(Answer::Picked { slice }) => slice,
        _ => None,
    }
}

impl Tl {
    pub(super) fn new(summary: &Summary, ui: Ui, slot: TimelineSlot) -> Tl {
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
            slot,
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
    pub(super) fn pick_at(self, x: f64, y: f64, hover: bool) {
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
    pub(super) fn w(self) -> f64 {
        self.width.get_untracked()
    }

    /// The whole trace at the plot's width (`0`, `Home`).
    pub(super) fn home(self) -> TimeAxis {
        TimeAxis::fit(self.t0, self.t1, self.w())
    }

    /// The window was resized: the plot takes the new width, showing the
    /// same span of time.
    pub(super) fn resized(self) {
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

    /// The view as the box's `data-view` says it (tests read it): start
    /// after the trace's start (ns), ns per pixel, width (px); reactive.
    pub(super) fn data_view(self) -> String {
        let a = self.axis.get();
        format!(
            "{} {} {}",
            a.start_ns - self.t0,
            a.ns_per_px,
            self.width.get()
        )
    }

    /// A DOM id inside this timeline (the main one's as they are, the
    /// split's suffixed).
    pub(super) fn dom_id(self, name: &str) -> String {
        format!("{name}{}", self.slot.id_suffix())
    }

    /// Brings a slice into view: centred if it fits, else fitted; its lane
    /// expanded and scrolled to.
    pub(super) fn reveal(self, p: &PickedSlice) {
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
        self.show_lane(p);
    }

    /// Expands a slice's lane (and shows it if empty) and scrolls its row
    /// into the middle of the box.
    pub(super) fn show_lane(self, p: &PickedSlice) {
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

    /// Selects slice `slice` (by index) once the worker has described it,
    /// first doing `then` with it (bringing it into view).
    fn select_then(self, slice: u32, then: impl Fn(Tl, &PickedSlice) + 'static) {
        self.picks
            .ask(Ask::Select { id: self.id, slice }, move |a| {
                let slice = picked(a);
                if let Some(s) = &slice {
                    then(self, s);
                }
                self.selected.set(slice);
            });
    }

    /// Selects a slice by index (a chain link) and brings it into view.
    pub(super) fn select_slice(self, slice: u32) {
        self.select_then(slice, |tl, s| tl.reveal(s));
    }

    /// Shows `[a, b)` and selects a slice there (the Compare view's node:
    /// its window, its first op), its lane brought into view.
    pub(super) fn focus_on(self, (a, b): (i64, i64), slice: Option<u32>) {
        self.axis.set(TimeAxis::fit(a, b, self.w()));
        if let Some(slice) = slice {
            self.select_then(slice, |tl, s| tl.show_lane(s));
        }
    }

    /// Selects a slice by index without moving the view (a link's).
    pub(super) fn select_in_place(self, slice: u32) {
        self.select_then(slice, |_, _| {});
    }

    /// Shows what the trace's view state holds (the timeline as it was
    /// left, or as a link asks), unless another view asked for a slice.
    pub(super) fn restore(self, ui: Ui, focused: bool) {
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
    pub(super) fn keep_state(self, ui: Ui) {
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
    pub(super) fn find(self, step: i64) {
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
    pub(super) fn ask_range(self, a: i64, b: i64) {
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
    pub(super) fn fit_selection(self) {
        let (t0, width) = (self.t0, self.w());
        if let Some((a, b)) = self.range.get_untracked() {
            self.axis.set(TimeAxis::fit(a, b, width));
        } else if let Some(s) = self.selected.get_untracked() {
            let (a, b) = (t0 + s.start_ns, t0 + s.start_ns + s.dur_ns.max(1));
            let pad = (b - a) / 10;
            self.axis.set(TimeAxis::fit(a - pad, b + pad, width));
        }
    }

    pub(super) fn on_key(self, ev: web_sys::KeyboardEvent) {
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
    pub(super) fn begin_range(self, x: f64) {
        let at = self.axis.get_untracked().time(x);
        self.drag.set(Some(Drag::Range { from_ns: at }));
        self.range.set(Some((at, at)));
    }

    pub(super) fn move_range(self, x: f64) {
        if let Some(Drag::Range { from_ns }) = self.drag.get_untracked() {
            let at = self.axis.get_untracked().time(x.clamp(0.0, self.w()));
            self.range.set(Some((from_ns.min(at), from_ns.max(at))));
        }
    }

    pub(super) fn end_drag(self, x: f64, y: f64, ui: Ui) {
        match self.drag.get_untracked() {
            Some(Drag::Range { .. }) => {
                self.move_range(x);
                let ax = self.axis.get_untracked();
                match self.range.get_untracked() {
                    Some((a, b)) if ax.px(b) - ax.px(a) >= 2.0 => {
                        self.follow.set(false);
                        // Only the main timeline shows a range's op table.
                        if self.slot == TimelineSlot::Main {
                            self.ask_range(a, b);
                        }
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

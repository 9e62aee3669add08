//! The timeline as the worker serves it: lanes in display order, draw lists
//! for a viewport, picking, search and dependency chains. Pure (no
//! browser), tested natively; the page only paints what comes back.
//!
//! Rows: every lane group (a process's host threads, or a device) starts
//! with a header row, then its lanes unless the group is collapsed. A thread
//! or stream lane has a row of instants (when it has any) and a row per
//! nesting depth; a counter lane is two rows tall, drawn as an area chart.
//! [`row_layout`] computes the rows from the lanes and the collapsed groups;
//! page and worker call the same function, so a row number means the same
//! thing on both sides.

mod args;
mod rects;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use tracelane_core::analysis::chain::dependency_chain;
use tracelane_core::category::Category;
use tracelane_core::model::{Trace, TrackKind, NO_SLICE};
use tracelane_core::timeline::{
    counter_columns, hit_test, layout_points, layout_slices, DrawRect, TimeAxis, TimelineIndex,
};

use args::{args_of, format_value, slice_args};
pub use args::{kept_args, ArgsOf, ArgsText};
pub use rects::{
    category_code, encode_rects, name_colour_code, palette, RectView, CODE_COUNTER, CODE_HIGHLIGHT,
    CODE_INSTANT, LEGEND, NAME_COLOURS, NAME_COLOUR_BASE, RECT_STRIDE,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LaneKind {
    Thread,
    Device,
    Counter,
}

/// One lane (a thread, a device stream, or a counter) and how many rows it takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneView {
    pub label: String,
    pub kind: LaneKind,
    pub rows: u16,
    /// Lanes of one group (a process's host side, or one device) share it.
    pub group: u32,
    pub group_label: String,
    /// A counter's highest value (the top of its chart).
    pub peak: Option<f64>,
    /// Levels under other tracks of its process (Perfetto nests tracks).
    pub indent: u8,
    /// No slices and no counter samples (instant markers at most, like the
    /// "Traces" process's lone `Iteration Start`): hidden unless asked for.
    #[serde(default)]
    pub empty: bool,
}

/// Where each lane and group header sits, for a set of collapsed groups.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RowLayout {
    /// First row of each lane; `None` when its group is collapsed.
    pub lane_first_row: Vec<Option<u32>>,
    /// (group, header row, lanes in the group).
    pub headers: Vec<(u32, u32, u32)>,
    pub rows: u32,
}

/// Rows for `lanes` with the groups in `collapsed` folded to their header,
/// and (`hide_empty`) the empty lanes left out — a group with only empty
/// lanes has no header either.
pub fn row_layout(lanes: &[LaneView], collapsed: &[u32], hide_empty: bool) -> RowLayout {
    let mut out = RowLayout::default();
    let mut row = 0u32;
    let mut last_group = None;
    for lane in lanes {
        if hide_empty && lane.empty {
            out.lane_first_row.push(None);
            continue;
        }
        if last_group != Some(lane.group) {
            last_group = Some(lane.group);
            out.headers.push((lane.group, row, 0));
            row += 1;
        }
        if let Some(h) = out.headers.last_mut() {
            h.2 += 1;
        }
        if collapsed.contains(&lane.group) {
            out.lane_first_row.push(None);
        } else {
            out.lane_first_row.push(Some(row));
            row += lane.rows as u32;
        }
    }
    out.rows = row;
    out
}

/// What a display row shows: (lane, row within the lane), or a header.
pub fn row_at(lanes: &[LaneView], layout: &RowLayout, row: u32) -> Option<(usize, u16)> {
    layout
        .lane_first_row
        .iter()
        .enumerate()
        .find_map(|(lane, first)| {
            let first = (*first)?;
            (row >= first && row < first + lanes[lane].rows as u32)
                .then(|| (lane, (row - first) as u16))
        })
}

/// Smallest width, in pixels, at which a name is printed inside its slice.
const LABEL_MIN_PX: f32 = 36.0;

/// What to highlight: slices whose name contains `text` (any case), or
/// whose name is exactly `text`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Highlight {
    pub text: String,
    pub exact: bool,
}

/// The view the page asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ViewRequest {
    pub start_ns: i64,
    pub ns_per_px: f64,
    pub width_px: f64,
    pub collapsed: Vec<u32>,
    /// Empty lanes (see [`LaneView::empty`]) are left out.
    #[serde(default)]
    pub hide_empty: bool,
    pub highlight: Option<Highlight>,
    pub colour_by_name: bool,
}

impl ViewRequest {
    pub fn axis(&self) -> TimeAxis {
        TimeAxis {
            start_ns: self.start_ns,
            ns_per_px: self.ns_per_px,
        }
    }
}

/// Everything a frame shows: the view, and what the overlay marks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Scene {
    pub view: ViewRequest,
    pub selected: Option<PickedSlice>,
    pub range: Option<(i64, i64)>,
    /// Device pixels per CSS pixel.
    pub dpr: f64,
    /// Draw the critical path the worker last computed under these rules.
    #[serde(default)]
    pub critical_path: Option<tracelane_core::analysis::frame::Mode>,
    /// The page is in its dark theme (`prefers-color-scheme: dark`): the
    /// overlay's headers and outlines follow it (the category colours read
    /// on both).
    #[serde(default)]
    pub dark: bool,
}

/// One edge of a critical path placed on the timeline: the row it runs
/// along (its event's, else the previous edge's) and its time span
/// (absolute ns); `span` for an op or kernel's own time, else a wait or a
/// dependency between rows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PathMark {
    pub lane: u32,
    pub lane_row: u16,
    pub start_ns: i64,
    pub end_ns: i64,
    pub span: bool,
}

/// One item of a dependency chain, placed for the page to draw and link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChainView {
    pub slice: u32,
    /// `op`, `runtime` or `device`.
    pub role: String,
    pub name: String,
    pub lane: u32,
    /// Row within the lane.
    pub lane_row: u16,
    pub start_ns: i64,
    pub dur_ns: i64,
    pub launch_delay_ns: Option<i64>,
    pub queue_ns: Option<i64>,
    /// The item an arrow comes from (its slice), if any: the op for a
    /// runtime call, the launch (else the op) for device work, the flow's
    /// previous slice along a flow chain.
    pub from: Option<u32>,
}

/// A picked slice (or instant, or counter value), for the tooltip and the
/// details panel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PickedSlice {
    /// The slice index ([`NO_SLICE`] for an instant or a counter).
    pub slice: u32,
    pub name: String,
    pub category: String,
    pub lane: u32,
    pub lane_row: u16,
    /// Start relative to the trace start, and duration.
    pub start_ns: i64,
    pub dur_ns: i64,
    /// Duration minus the children nested directly inside it.
    pub self_ns: i64,
    /// Arguments as (key, value) text: the event's `args` and the columns
    /// the importer parsed (shapes, stream, ids).
    pub args: Vec<(String, String)>,
    /// Framework → runtime → device (see [`tracelane_core::analysis::chain`]).
    pub chain: Vec<ChainView>,
    pub chain_more: usize,
}

/// Matches of the current highlight.
struct Matches {
    key: Highlight,
    /// Per timeline index row, the matching slices in start order.
    per_row: Vec<Vec<u32>>,
    /// All matches in start order (for stepping through them).
    all: Vec<u32>,
}

/// What a lane's rows hold.
enum LaneRows {
    /// A track's index rows, below its instants (sorted by time) when it has any.
    Track {
        instants: Vec<u32>,
        instant_ts: Vec<i64>,
        rows: std::ops::Range<usize>,
    },
    Counter {
        ts: Vec<i64>,
        values: Vec<f64>,
        peak: f64,
    },
}

pub struct TimelineModel {
    index: TimelineIndex,
    lane_rows: Vec<LaneRows>,
    /// For each track: its lane, if it has one.
    track_lane: Vec<Option<u32>>,
    pub lanes: Vec<LaneView>,
    pub start_ns: i64,
    pub end_ns: i64,
    matches: RefCell<Option<Matches>>,
    /// Flow arrows by source and by target slice.
    flow_next: FlowEdges,
    flow_prev: FlowEdges,
}

/// Counter series per process: (process, series name, sample indices by time).
fn counter_series(t: &Trace) -> Vec<(usize, String, Vec<usize>)> {
    let mut by_key: std::collections::BTreeMap<(u32, u32), Vec<usize>> = Default::default();
    for k in 0..t.counters.ts_ns.len() {
        by_key
            .entry((t.counters.process[k].0, t.counters.series[k].0))
            .or_default()
            .push(k);
    }
    by_key
        .into_iter()
        .map(|((p, s), mut ks)| {
            tracelane_core::sort::by_key(&mut ks, &|&k| (t.counters.ts_ns[k], k));
            (
                p as usize,
                t.str(tracelane_core::model::StrId(s)).to_string(),
                ks,
            )
        })
        .collect()
}

/// Flow edges from each slice, as (from, to) pairs sorted by `from` (in
/// flow order within one `from`): built in one sort, where a map of vectors
/// cost a tenth of a second on a trace with 300,000 flows.
#[derive(Debug, Default)]
struct FlowEdges(Vec<(u32, u32)>);

impl FlowEdges {
    fn new(mut pairs: Vec<(u32, u32)>) -> FlowEdges {
        tracelane_core::sort::by_key(&mut pairs, &|&(from, _)| from);
        FlowEdges(pairs)
    }

    /// The slices `from` leads to, in flow order.
    fn of(&self, from: u32) -> impl Iterator<Item = u32> + '_ {
        let lo = self.0.partition_point(|&(a, _)| a < from);
        self.0[lo..]
            .iter()
            .take_while(move |&&(a, _)| a == from)
            .map(|&(_, b)| b)
    }

    fn any(&self, from: u32) -> bool {
        self.of(from).next().is_some()
    }
}

impl TimelineModel {
    pub fn new(t: &Trace) -> TimelineModel {
        let index = TimelineIndex::build(t);
        let mut instants_of: Vec<Vec<u32>> = vec![Vec::new(); t.tracks.len()];
        for k in 0..t.instants.ts_ns.len() {
            instants_of[t.instants.track[k].idx()].push(k as u32);
        }
        let series = counter_series(t);
        let mut lanes = Vec::new();
        let mut lane_rows = Vec::new();
        let mut track_lane = vec![None; t.tracks.len()];
        let mut groups: Vec<(usize, bool)> = Vec::new();
        let mut group_of = |p: usize, device: bool| -> u32 {
            match groups.iter().position(|&g| g == (p, device)) {
                Some(g) => g as u32,
                None => {
                    groups.push((p, device));
                    (groups.len() - 1) as u32
                }
            }
        };
        let order = t.lane_order();
        let add_counters =
            |p: usize, lanes: &mut Vec<LaneView>, lane_rows: &mut Vec<LaneRows>, group: u32| {
                for (_, name, ks) in series.iter().filter(|(sp, _, _)| *sp == p) {
                    let ts: Vec<i64> = ks.iter().map(|&k| t.counters.ts_ns[k]).collect();
                    let values: Vec<f64> = ks.iter().map(|&k| t.counters.value[k]).collect();
                    let peak = values.iter().copied().fold(0.0f64, f64::max);
                    lanes.push(LaneView {
                        label: name.clone(),
                        kind: LaneKind::Counter,
                        rows: 2,
                        group,
                        group_label: t.process_label(p),
                        peak: Some(peak),
                        indent: 0,
                        empty: false,
                    });
                    lane_rows.push(LaneRows::Counter { ts, values, peak });
                }
            };
        let mut counters_done: Vec<usize> = Vec::new();
        for (k, &tr) in order.iter().enumerate() {
            let track = &t.tracks[tr.idx()];
            let p = track.process.0 as usize;
            let rows = index.track_rows[tr.idx()].clone();
            let instants = std::mem::take(&mut instants_of[tr.idx()]);
            if !rows.is_empty() || !instants.is_empty() {
                let device = track.kind == TrackKind::DeviceStream;
                let tname = t.track_label(tr.idx());
                let mut instants = instants;
                tracelane_core::sort::by_key(&mut instants, &|&i| {
                    (t.instants.ts_ns[i as usize], i)
                });
                let instant_ts: Vec<i64> = instants
                    .iter()
                    .map(|&i| t.instants.ts_ns[i as usize])
                    .collect();
                track_lane[tr.idx()] = Some(lanes.len() as u32);
                lanes.push(LaneView {
                    label: tname,
                    kind: if device {
                        LaneKind::Device
                    } else {
                        LaneKind::Thread
                    },
                    rows: (rows.len() + usize::from(!instants.is_empty())) as u16,
                    group: group_of(p, device),
                    group_label: t.process_label(p),
                    peak: None,
                    indent: track.nesting,
                    empty: rows.is_empty(),
                });
                lane_rows.push(LaneRows::Track {
                    instants,
                    instant_ts,
                    rows,
                });
            }
            // A process's counters follow its host lanes.
            let next_p = order
                .get(k + 1)
                .map(|n| (t.tracks[n.idx()].process.0 as usize, t.tracks[n.idx()].kind));
            if track.kind != TrackKind::DeviceStream
                && next_p != Some((p, track.kind))
                && !counters_done.contains(&p)
            {
                counters_done.push(p);
                let g = group_of(p, false);
                add_counters(p, &mut lanes, &mut lane_rows, g);
            }
        }
        // Processes with counters and no host lanes come last.
        let mut rest: Vec<usize> = series
            .iter()
            .map(|(p, _, _)| *p)
            .filter(|p| !counters_done.contains(p))
            .collect();
        rest.dedup();
        for p in rest {
            let g = group_of(p, false);
            add_counters(p, &mut lanes, &mut lane_rows, g);
        }
        let (start_ns, end_ns) = t.time_span_ns().unwrap_or((0, 1));
        let edges: Vec<(u32, u32)> = (0..t.flows.id.len())
            .map(|k| (t.flows.from[k], t.flows.to[k]))
            .filter(|&(a, b)| a != NO_SLICE && b != NO_SLICE && a != b)
            .collect();
        TimelineModel {
            flow_prev: FlowEdges::new(edges.iter().map(|&(a, b)| (b, a)).collect()),
            flow_next: FlowEdges::new(edges),
            index,
            lane_rows,
            track_lane,
            lanes,
            start_ns,
            end_ns,
            matches: RefCell::new(None),
        }
    }

    /// Index row and row-within-lane of every slice row of a lane.
    /// A critical path's edges placed on lanes (see [`PathMark`]).
    pub fn place_path(
        &self,
        t: &Trace,
        edges: &[tracelane_core::analysis::critical_path::PathEdge],
    ) -> Vec<PathMark> {
        use tracelane_core::analysis::critical_path::EdgeKind;
        let mut out: Vec<PathMark> = Vec::with_capacity(edges.len());
        for e in edges {
            let placed = (e.slice != NO_SLICE)
                .then(|| self.lane_row_of_slice(t, e.slice as usize))
                .flatten()
                .or_else(|| out.last().map(|m| (m.lane, m.lane_row)));
            if let Some((lane, lane_row)) = placed {
                out.push(PathMark {
                    lane,
                    lane_row,
                    start_ns: e.from_ns,
                    end_ns: e.to_ns,
                    span: e.kind == EdgeKind::Span,
                });
            }
        }
        out
    }

    fn lane_row_of_slice(&self, t: &Trace, s: usize) -> Option<(u32, u16)> {
        let tr = t.slices.track[s];
        let lane = self.track_lane[tr.idx()]?;
        let LaneRows::Track { instants, .. } = &self.lane_rows[lane as usize] else {
            return None;
        };
        Some((lane, t.slices.depth[s] + u16::from(!instants.is_empty())))
    }

    fn ensure_matches(&self, t: &Trace, h: &Highlight) {
        if self.matches.borrow().as_ref().is_some_and(|m| &m.key == h) {
            return;
        }
        // Decide once per distinct name, then filter each row.
        let needle = h.text.to_lowercase();
        let hit: Vec<bool> = (0..t.strings.len())
            .map(|k| {
                let name = t.str(tracelane_core::model::StrId(k as u32));
                if h.exact {
                    name == h.text
                } else if needle.is_empty() {
                    false
                } else if name.is_ascii() && needle.is_ascii() {
                    name.as_bytes()
                        .windows(needle.len())
                        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
                } else {
                    name.to_lowercase().contains(&needle)
                }
            })
            .collect();
        let matches = |s: u32| {
            let id = t.slices.name[s as usize].0 as usize;
            hit.get(id).copied().unwrap_or(false)
        };
        let per_row: Vec<Vec<u32>> = self
            .index
            .rows
            .iter()
            .map(|r| r.slices.iter().copied().filter(|&s| matches(s)).collect())
            .collect();
        let mut all: Vec<u32> = per_row.iter().flatten().copied().collect();
        tracelane_core::sort::by_key(&mut all, &|&s| (t.slices.start_ns[s as usize], s));
        *self.matches.borrow_mut() = Some(Matches {
            key: h.clone(),
            per_row,
            all,
        });
    }

    /// How many slices match `h`, and the `k`-th of them (in start order,
    /// `k` taken modulo the count).
    pub fn find(
        &self,
        t: &Trace,
        h: &Highlight,
        k: i64,
        args: ArgsText,
    ) -> (usize, Option<PickedSlice>) {
        self.ensure_matches(t, h);
        let m = self.matches.borrow();
        let all = &m.as_ref().expect("just computed").all;
        if all.is_empty() {
            return (0, None);
        }
        let s = all[k.rem_euclid(all.len() as i64) as usize];
        (all.len(), self.describe(t, s as usize, args))
    }

    /// The rectangles of every visible row.
    pub fn draw(&self, t: &Trace, view: &ViewRequest) -> Vec<RectView> {
        let axis = view.axis();
        let width = view.width_px;
        let layout = row_layout(&self.lanes, &view.collapsed, view.hide_empty);
        if let Some(h) = &view.highlight {
            self.ensure_matches(t, h);
        }
        let matches = self.matches.borrow();
        let highlight = view
            .highlight
            .as_ref()
            .and(matches.as_ref())
            .filter(|m| Some(&m.key) == view.highlight.as_ref());
        let mut out = Vec::new();
        let mut lit = Vec::new();
        let mut rects: Vec<DrawRect> = Vec::new();
        for (lane, first) in layout.lane_first_row.iter().enumerate() {
            let Some(first) = *first else { continue };
            match &self.lane_rows[lane] {
                LaneRows::Track {
                    instant_ts,
                    instants,
                    rows,
                    ..
                } => {
                    let mut row = first;
                    if !instant_ts.is_empty() {
                        for m in layout_points(instant_ts, &axis, width) {
                            out.push(RectView {
                                row,
                                x0: m.x_px as f32 - 1.0,
                                x1: m.x_px as f32 + 2.0,
                                count: m.count,
                                code: if view.colour_by_name {
                                    name_colour_code(
                                        t.str(t.instants.name[instants[m.first as usize] as usize]),
                                    )
                                } else {
                                    CODE_INSTANT
                                },
                                height: 1.0,
                                label: None,
                            });
                        }
                        row += 1;
                    }
                    for index_row in rows.clone() {
                        rects.clear();
                        layout_slices(
                            t,
                            &self.index.rows[index_row].slices,
                            row,
                            &axis,
                            width,
                            &mut rects,
                        );
                        for r in &rects {
                            let (x0, x1) = (r.x0_px as f32, r.x1_px as f32);
                            let name = t.slice_name(r.slice as usize);
                            out.push(RectView {
                                row,
                                x0,
                                x1,
                                count: r.count,
                                code: if view.colour_by_name {
                                    name_colour_code(name)
                                } else {
                                    category_code(r.category)
                                },
                                height: 1.0,
                                label: (r.count == 1 && x1 - x0 >= LABEL_MIN_PX)
                                    .then(|| name.to_string()),
                            });
                        }
                        if let Some(m) = highlight {
                            rects.clear();
                            layout_slices(t, &m.per_row[index_row], row, &axis, width, &mut rects);
                            lit.extend(rects.iter().map(|r| RectView {
                                row,
                                x0: r.x0_px as f32,
                                x1: r.x1_px as f32,
                                count: r.count,
                                code: CODE_HIGHLIGHT,
                                height: 1.0,
                                label: None,
                            }));
                        }
                        row += 1;
                    }
                }
                LaneRows::Counter { ts, values, peak } => {
                    for c in counter_columns(ts, values, &axis, width) {
                        let frac = if *peak > 0.0 {
                            (c.value / peak).clamp(0.0, 1.0)
                        } else {
                            0.0
                        };
                        out.push(RectView {
                            row: first + 1,
                            x0: c.x0_px as f32,
                            x1: c.x1_px as f32,
                            count: 1,
                            code: CODE_COUNTER,
                            height: (2.0 * frac) as f32,
                            label: None,
                        });
                    }
                }
            }
        }
        // Highlights paint over the slices they mark.
        out.extend(lit);
        out
    }

    /// What lies under `x_px` on display row `row`.
    pub fn pick(
        &self,
        t: &Trace,
        view: &ViewRequest,
        row: u32,
        x_px: f64,
        args: ArgsText,
    ) -> Option<PickedSlice> {
        let layout = row_layout(&self.lanes, &view.collapsed, view.hide_empty);
        let (lane, lane_row) = row_at(&self.lanes, &layout, row)?;
        let axis = view.axis();
        match &self.lane_rows[lane] {
            LaneRows::Track {
                instants,
                instant_ts,
                rows,
                ..
            } => {
                let has_instants = !instants.is_empty();
                if has_instants && lane_row == 0 {
                    let at = axis.time(x_px);
                    let slop = (3.0 * axis.ns_per_px).ceil() as i64;
                    let k = instant_ts.partition_point(|&ts| ts < at.saturating_sub(slop));
                    let i = *instants.get(k).filter(|_| instant_ts[k] <= at + slop)? as usize;
                    return Some(PickedSlice {
                        slice: NO_SLICE,
                        name: t.str(t.instants.name[i]).to_string(),
                        category: t.str(t.instants.cat[i]).to_string(),
                        lane: lane as u32,
                        lane_row: 0,
                        start_ns: t.instants.ts_ns[i] - self.start_ns,
                        dur_ns: 0,
                        self_ns: 0,
                        args: args_of(&args(ArgsOf::Instant(i))),
                        chain: Vec::new(),
                        chain_more: 0,
                    });
                }
                let index_row = rows.start + (lane_row - u16::from(has_instants)) as usize;
                let s = hit_test(t, &self.index, index_row, &axis, x_px, 3.0)?;
                self.describe(t, s as usize, args)
            }
            LaneRows::Counter { ts, values, .. } => {
                let at = axis.time(x_px);
                let k = ts.partition_point(|&x| x <= at).checked_sub(1)?;
                Some(PickedSlice {
                    slice: NO_SLICE,
                    name: self.lanes[lane].label.clone(),
                    category: "counter".into(),
                    lane: lane as u32,
                    lane_row,
                    start_ns: ts[k] - self.start_ns,
                    dur_ns: ts.get(k + 1).map_or(0, |n| n - ts[k]),
                    self_ns: 0,
                    args: vec![("value".into(), format_value(values[k]))],
                    chain: Vec::new(),
                    chain_more: 0,
                })
            }
        }
    }

    /// Everything the page shows about slice `s`.
    pub fn describe(&self, t: &Trace, s: usize, args: ArgsText) -> Option<PickedSlice> {
        if s >= t.slices.len() {
            return None;
        }
        let (lane, lane_row) = self.lane_row_of_slice(t, s)?;
        let chain = dependency_chain(t, s);
        let mut chain_more = chain.more;
        let members: Vec<u32> = chain.items.iter().map(|c| c.slice).collect();
        let in_chain = |x: u32| (x != NO_SLICE && members.contains(&x)).then_some(x);
        let mut items: Vec<ChainView> = chain
            .items
            .iter()
            .filter_map(|c| {
                let k = c.slice as usize;
                let from = match c.role {
                    tracelane_core::analysis::chain::Role::Op => None,
                    tracelane_core::analysis::chain::Role::Runtime => in_chain(t.links.op[k]),
                    tracelane_core::analysis::chain::Role::Device => {
                        in_chain(t.links.launch[k]).or(in_chain(t.links.op[k]))
                    }
                };
                self.chain_view(t, k, c.role.as_str(), from, c.launch_delay_ns, c.queue_ns)
            })
            .collect();
        // No links (a Perfetto or plain Chrome trace): follow its flows.
        let has_flows = self.flow_next.any(s as u32) || self.flow_prev.any(s as u32);
        if items.len() <= 1 && has_flows {
            let (flow_items, more) = self.flow_chain(t, s as u32);
            items = flow_items;
            chain_more = more;
        }
        let chain = items;
        Some(PickedSlice {
            slice: s as u32,
            name: t.slice_name(s).to_string(),
            category: t.str(t.slices.cat[s]).to_string(),
            lane,
            lane_row,
            start_ns: t.slices.start_ns[s] - self.start_ns,
            dur_ns: t.slices.dur_ns[s],
            self_ns: t.slices.dur_ns[s] - self.children_ns(t, s),
            args: slice_args(t, s, &args(ArgsOf::Slice(s))),
            chain,
            chain_more,
        })
    }

    fn chain_view(
        &self,
        t: &Trace,
        k: usize,
        role: &str,
        from: Option<u32>,
        launch_delay_ns: Option<i64>,
        queue_ns: Option<i64>,
    ) -> Option<ChainView> {
        let (lane, lane_row) = self.lane_row_of_slice(t, k)?;
        Some(ChainView {
            slice: k as u32,
            role: role.into(),
            name: t.slice_name(k).to_string(),
            lane,
            lane_row,
            start_ns: t.slices.start_ns[k] - self.start_ns,
            dur_ns: t.slices.dur_ns[k],
            launch_delay_ns,
            queue_ns,
            from,
        })
    }

    /// The slices joined to `s` by flow events: back to the first, then
    /// every slice reached from it, in order of reaching (at most
    /// [`tracelane_core::analysis::chain::MAX_CHAIN_ITEMS`]; the second value counts
    /// the rest).
    fn flow_chain(&self, t: &Trace, s: u32) -> (Vec<ChainView>, usize) {
        let mut root = s;
        let mut seen = vec![s];
        while let Some(p) = self.flow_prev.of(root).next() {
            if seen.contains(&p) || seen.len() > 64 {
                break;
            }
            seen.push(p);
            root = p;
        }
        let mut order: Vec<(u32, Option<u32>)> = vec![(root, None)];
        let mut k = 0;
        let mut more = 0;
        while k < order.len() {
            let (x, _) = order[k];
            for n in self.flow_next.of(x) {
                if order.iter().any(|(y, _)| *y == n) {
                    continue;
                }
                if order.len() >= tracelane_core::analysis::chain::MAX_CHAIN_ITEMS {
                    more += 1;
                } else {
                    order.push((n, Some(x)));
                }
            }
            k += 1;
        }
        let items = order
            .into_iter()
            .filter_map(|(x, from)| {
                let k = x as usize;
                let role = match t.slices.category[k] {
                    Category::Runtime => "runtime",
                    c if c.is_device() => "device",
                    Category::CpuOp | Category::UserAnnotation => "op",
                    _ => "flow",
                };
                self.chain_view(t, k, role, from, None, None)
            })
            .collect();
        (items, more)
    }

    /// Total duration of the slices nested directly inside `s`.
    fn children_ns(&self, t: &Trace, s: usize) -> i64 {
        let tr = t.slices.track[s].idx();
        let next = self.index.track_rows[tr].start + t.slices.depth[s] as usize + 1;
        if next >= self.index.track_rows[tr].end {
            return 0;
        }
        let row = &self.index.rows[next].slices;
        let (a, b) = (t.slices.start_ns[s], t.slices.end_ns(s));
        let first = row.partition_point(|&k| t.slices.start_ns[k as usize] < a);
        row[first..]
            .iter()
            .take_while(|&&k| t.slices.start_ns[k as usize] < b)
            .filter(|&&k| t.slices.parent[k as usize] == s as u32)
            .map(|&k| t.slices.dur_ns[k as usize])
            .sum()
    }
}

/// Height of one timeline row, in CSS pixels (page and worker alike).
pub const ROW_PX: f64 = 18.0;

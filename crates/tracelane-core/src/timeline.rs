//! Timeline layout and level of detail: from a viewport to a draw list.
//!
//! Each track's slices are split into rows by nesting depth. Slices of one
//! row never overlap, so within a row both starts and ends are sorted, and
//! the visible part of a row is found by binary search. Walking a row, a
//! slice at least a pixel wide becomes its own rectangle; slices narrower
//! than a pixel are merged into one rectangle per pixel column that
//! remembers how many slices it holds (`count`), and the walk jumps past
//! the column with another binary search. So a row costs
//! O(visible pixels × log n), never O(slices), and at most a couple of
//! rectangles per pixel column come out — however far out the view is.
//!
//! Positions are `f64` pixels computed from `i64` nanoseconds *relative to
//! the view start*, so nanosecond zoom stays exact on traces whose clocks
//! are at epoch-microsecond values.

use crate::category::Category;
use crate::model::{Trace, TrackIdx};

/// Maps time to pixels for one view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeAxis {
    /// Time at pixel 0.
    pub start_ns: i64,
    /// Nanoseconds per pixel (> 0).
    pub ns_per_px: f64,
}

impl TimeAxis {
    /// An axis showing `[start_ns, end_ns)` across `width_px` pixels.
    pub fn fit(start_ns: i64, end_ns: i64, width_px: f64) -> TimeAxis {
        let span = (end_ns.saturating_sub(start_ns)).max(1) as f64;
        TimeAxis {
            start_ns,
            ns_per_px: span / width_px.max(1.0),
        }
    }
    pub fn px(&self, t_ns: i64) -> f64 {
        t_ns.saturating_sub(self.start_ns) as f64 / self.ns_per_px
    }
    pub fn time(&self, px: f64) -> i64 {
        self.start_ns
            .saturating_add((px * self.ns_per_px).round() as i64)
    }
    /// Zooms by `factor` (> 1 zooms in) keeping the time under `anchor_px` fixed.
    pub fn zoom(&self, factor: f64, anchor_px: f64) -> TimeAxis {
        // Work relative to the view start: absolute epoch nanoseconds do not
        // fit an f64 exactly.
        let ns_per_px = (self.ns_per_px / factor).max(1e-3);
        let shift = (anchor_px * (self.ns_per_px - ns_per_px)).round() as i64;
        TimeAxis {
            start_ns: self.start_ns.saturating_add(shift),
            ns_per_px,
        }
    }
    /// Moves the view by `dx_px` pixels (positive: later times).
    pub fn pan(&self, dx_px: f64) -> TimeAxis {
        TimeAxis {
            start_ns: self
                .start_ns
                .saturating_add((dx_px * self.ns_per_px).round() as i64),
            ns_per_px: self.ns_per_px,
        }
    }
}

/// Two timelines shown one above the other, each around an event of its
/// own (a compared op on trace A and on trace B): their windows at one
/// scale, so equal durations are equal widths. Each window starts a
/// quarter of the longer event before its own event and is as long as
/// the longer event plus a quarter each side (at least 1 µs of margin).
pub fn paired_windows(a: [i64; 2], b: [i64; 2]) -> [(i64, i64); 2] {
    let len = (a[1] - a[0]).max(b[1] - b[0]).max(0);
    let pad = (len / 4).max(1_000);
    [a, b].map(|s| (s[0] - pad, s[0] + len + pad))
}

/// The view of a timeline following another one: the same scale, and the
/// same offset from its own anchor as the leader's view has from the
/// leader's anchor (linked zoom and pan around two compared events).
pub fn follow_axis(leader: TimeAxis, leader_anchor: i64, anchor: i64) -> TimeAxis {
    TimeAxis {
        start_ns: anchor.saturating_add(leader.start_ns.saturating_sub(leader_anchor)),
        ns_per_px: leader.ns_per_px,
    }
}

/// One row of the timeline: the slices of one track at one depth.
#[derive(Clone, Debug)]
pub struct Row {
    pub track: TrackIdx,
    pub depth: u16,
    /// Slice indices, sorted by start (and so by end).
    pub slices: Vec<u32>,
}

/// Rows of every track, built once per trace.
#[derive(Clone, Debug, Default)]
pub struct TimelineIndex {
    pub rows: Vec<Row>,
    /// For each track (by index), the range of `rows` it owns.
    pub track_rows: Vec<std::ops::Range<usize>>,
}

impl TimelineIndex {
    pub fn build(t: &Trace) -> TimelineIndex {
        let mut rows = Vec::new();
        let mut track_rows = Vec::with_capacity(t.tracks.len());
        for (k, tr) in t.tracks.iter().enumerate() {
            let first = rows.len();
            let depths = if tr.slices.is_empty() {
                0
            } else {
                tr.max_depth as usize + 1
            };
            let mut per_depth: Vec<Vec<u32>> = vec![Vec::new(); depths];
            for i in tr.slices.clone() {
                per_depth[t.slices.depth[i as usize] as usize].push(i);
            }
            for (d, slices) in per_depth.into_iter().enumerate() {
                rows.push(Row {
                    track: TrackIdx(k as u32),
                    depth: d as u16,
                    slices,
                });
            }
            track_rows.push(first..rows.len());
        }
        TimelineIndex { rows, track_rows }
    }
}

/// One rectangle to paint.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrawRect {
    /// Index into [`TimelineIndex::rows`].
    pub row: u32,
    pub x0_px: f64,
    pub x1_px: f64,
    /// A slice it stands for (the first one when merged).
    pub slice: u32,
    /// How many slices it stands for (1: a real slice drawn at its size).
    pub count: u32,
    pub category: Category,
}

/// First position in `row` whose slice ends after `t`.
fn first_ending_after(t: &Trace, row: &[u32], t_ns: i64) -> usize {
    row.partition_point(|&i| t.slices.end_ns(i as usize) <= t_ns)
}

/// First position at or after `from` whose slice starts at or after `t`.
/// Gallops from `from` (the answer is usually a few slices away) before
/// bisecting, so memory is touched near where the walk already is.
fn first_starting_at(t: &Trace, row: &[u32], from: usize, t_ns: i64) -> usize {
    let before = |k: usize| t.slices.start_ns[row[k] as usize] < t_ns;
    let mut lo = from;
    let mut step = 1;
    while lo + step < row.len() && before(lo + step) {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step + 1).min(row.len());
    lo + row[lo..hi].partition_point(|&i| t.slices.start_ns[i as usize] < t_ns)
}

/// Lays out one row for `[0, width_px)`, appending to `out`.
pub fn layout_row(
    t: &Trace,
    index: &TimelineIndex,
    row: usize,
    axis: &TimeAxis,
    width_px: f64,
    out: &mut Vec<DrawRect>,
) {
    layout_slices(t, &index.rows[row].slices, row as u32, axis, width_px, out);
}

/// Lays out any list of non-overlapping slices sorted by start (a row, or
/// the matches of a search within a row) as row `row_id`, appending to `out`.
pub fn layout_slices(
    t: &Trace,
    slices: &[u32],
    row_id: u32,
    axis: &TimeAxis,
    width_px: f64,
    out: &mut Vec<DrawRect>,
) {
    let row = row_id;
    let (t0, t1) = (axis.start_ns, axis.time(width_px));
    let mut i = first_ending_after(t, slices, t0);
    while i < slices.len() {
        let s = slices[i] as usize;
        let start = t.slices.start_ns[s];
        if start >= t1 {
            break;
        }
        let x0 = axis.px(start).max(0.0);
        let x1 = axis.px(t.slices.end_ns(s)).min(width_px);
        if x1 - x0 >= 1.0 {
            out.push(DrawRect {
                row,
                x0_px: x0,
                x1_px: x1,
                slice: s as u32,
                count: 1,
                category: t.slices.category[s],
            });
            i += 1;
            continue;
        }
        // Narrower than a pixel: everything starting in this pixel column
        // becomes one rectangle.
        let column = x0.floor();
        let column_end_t = axis.time(column + 1.0).max(start + 1);
        let j = first_starting_at(t, slices, i + 1, column_end_t).max(i + 1);
        let last = slices[j - 1] as usize;
        out.push(DrawRect {
            row,
            x0_px: column,
            x1_px: axis
                .px(t.slices.end_ns(last))
                .min(width_px)
                .max(column + 1.0),
            slice: s as u32,
            count: (j - i) as u32,
            category: t.slices.category[s],
        });
        i = j;
    }
}

/// The draw list for the given rows.
pub fn draw_list(
    t: &Trace,
    index: &TimelineIndex,
    rows: impl IntoIterator<Item = usize>,
    axis: &TimeAxis,
    width_px: f64,
) -> Vec<DrawRect> {
    let mut out = Vec::new();
    for r in rows {
        layout_row(t, index, r, axis, width_px, &mut out);
    }
    out
}

/// One pixel-column mark for point events (instants): where, and how many
/// events it stands for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointMark {
    pub x_px: f64,
    pub count: u32,
    /// The first event it stands for (an index into the caller's list).
    pub first: u32,
}

/// Marks for time-sorted points across `[0, width_px)`: one per pixel
/// column that holds any, found by binary search and galloping (never a
/// scan of every point).
pub fn layout_points(ts_ns: &[i64], axis: &TimeAxis, width_px: f64) -> Vec<PointMark> {
    let mut out = Vec::new();
    let mut i = ts_ns.partition_point(|&t| t < axis.start_ns);
    while i < ts_ns.len() {
        let x = axis.px(ts_ns[i]);
        if x >= width_px {
            break;
        }
        let column = x.floor();
        let column_end_t = axis.time(column + 1.0).max(ts_ns[i] + 1);
        let j = (i + ts_ns[i..].partition_point(|&t| t < column_end_t)).max(i + 1);
        out.push(PointMark {
            x_px: column,
            count: (j - i) as u32,
            first: i as u32,
        });
        i = j;
    }
    out
}

/// One column of a counter's area chart: the highest value the counter
/// holds anywhere in `[x0_px, x1_px)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CounterColumn {
    pub x0_px: f64,
    pub x1_px: f64,
    pub value: f64,
}

/// A counter's samples (sorted by time; each value holds until the next
/// sample, the last one for a pixel) as area-chart columns: a sample at
/// least a pixel wide is its own column; narrower ones merge per pixel
/// column into their maximum, so a spike is never lost.
pub fn counter_columns(
    ts_ns: &[i64],
    values: &[f64],
    axis: &TimeAxis,
    width_px: f64,
) -> Vec<CounterColumn> {
    let n = ts_ns.len().min(values.len());
    let mut out = Vec::new();
    if n == 0 {
        return out;
    }
    let end_of = |k: usize| {
        if k + 1 < n {
            ts_ns[k + 1]
        } else {
            ts_ns[k]
        }
    };
    // The sample in force at the view start, else the first one after it.
    let mut i = ts_ns[..n]
        .partition_point(|&t| t <= axis.start_ns)
        .saturating_sub(1);
    while i < n {
        let x0 = axis.px(ts_ns[i]).max(0.0);
        if x0 >= width_px {
            break;
        }
        let x1 = axis.px(end_of(i)).min(width_px);
        if x1 - x0 >= 1.0 {
            out.push(CounterColumn {
                x0_px: x0,
                x1_px: x1,
                value: values[i],
            });
            i += 1;
            continue;
        }
        let column = x0.floor();
        let column_end_t = axis.time(column + 1.0);
        let j = (i + ts_ns[i..n].partition_point(|&t| t < column_end_t)).max(i + 1);
        let value = values[i..j].iter().copied().fold(f64::MIN, f64::max);
        out.push(CounterColumn {
            x0_px: column,
            x1_px: column + 1.0,
            value,
        });
        i = j;
    }
    out
}

/// The slice of `row` under pixel `x_px`, or the nearest one within
/// `slop_px` pixels (so hair-thin slices can be clicked).
pub fn hit_test(
    t: &Trace,
    index: &TimelineIndex,
    row: usize,
    axis: &TimeAxis,
    x_px: f64,
    slop_px: f64,
) -> Option<u32> {
    let slices = &index.rows.get(row)?.slices;
    let at = axis.time(x_px);
    let slop = (slop_px * axis.ns_per_px).ceil() as i64;
    let k = first_ending_after(t, slices, at.saturating_sub(slop));
    let mut best: Option<(i64, u32)> = None;
    for &s in slices[k..].iter().take(64) {
        let (a, b) = (t.slices.start_ns[s as usize], t.slices.end_ns(s as usize));
        if a > at.saturating_add(slop) {
            break;
        }
        let dist = if at < a {
            a - at
        } else if at > b {
            at - b
        } else {
            0
        };
        if dist <= slop && best.is_none_or(|(d, _)| dist < d) {
            best = Some((dist, s));
        }
    }
    best.map(|(_, s)| s)
}

/// A tick of the time ruler.
#[derive(Clone, Debug, PartialEq)]
pub struct Tick {
    pub x_px: f64,
    /// Time since `origin_ns`, e.g. `1.5 ms`.
    pub label: String,
}

/// The tick step for a view: 1, 2 or 5 × 10^k nanoseconds, so that ticks
/// are at least `min_gap_px` apart.
pub fn tick_step_ns(axis: &TimeAxis, min_gap_px: f64) -> i64 {
    let want = (axis.ns_per_px * min_gap_px).max(1.0);
    let mut decade: i64 = 1;
    loop {
        for m in [1, 2, 5] {
            let step = decade.saturating_mul(m);
            if step as f64 >= want {
                return step;
            }
        }
        if decade > i64::MAX / 10 {
            return i64::MAX;
        }
        decade *= 10;
    }
}

/// Formats a duration with the unit the step calls for (`ns`, `µs`, `ms`, `s`)
/// and just enough decimals to tell neighbouring ticks apart.
pub fn format_offset(ns: i64, step_ns: i64) -> String {
    // The largest unit of which the step is at least a tenth.
    let (unit, scale) = match step_ns {
        s if s >= 100_000_000 => ("s", 1e9),
        s if s >= 100_000 => ("ms", 1e6),
        s if s >= 100 => ("µs", 1e3),
        _ => ("ns", 1.0),
    };
    let step_in_unit = step_ns as f64 / scale;
    let decimals = if step_in_unit >= 1.0 {
        0
    } else {
        (-step_in_unit.log10()).ceil() as usize
    };
    format!("{:.*} {unit}", decimals, ns as f64 / scale)
}

/// Ruler ticks across `[0, width_px)`, labelled relative to `origin_ns`
/// (the trace start), at least `min_gap_px` apart.
pub fn ruler_ticks(axis: &TimeAxis, width_px: f64, origin_ns: i64, min_gap_px: f64) -> Vec<Tick> {
    let step = tick_step_ns(axis, min_gap_px);
    let first_rel = axis.start_ns.saturating_sub(origin_ns);
    // First multiple of `step` (relative to the origin) at or after the view start.
    let mut rel = first_rel.div_euclid(step).saturating_mul(step);
    if rel < first_rel {
        rel = rel.saturating_add(step);
    }
    let mut out = Vec::new();
    loop {
        let x = axis.px(origin_ns.saturating_add(rel));
        if x >= width_px || out.len() > 10_000 {
            break;
        }
        out.push(Tick {
            x_px: x,
            label: format_offset(rel, step),
        });
        rel = rel.saturating_add(step);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn paired_windows_share_one_scale_each_at_its_own_event() {
        let [a, b] = super::paired_windows([10_000, 14_000], [500_000, 516_000]);
        // The longer event (16 µs) sets both lengths, 4 µs margin each side.
        assert_eq!(a, (6_000, 30_000));
        assert_eq!(b, (496_000, 520_000));
        // A zero-length event still gets a window.
        let [z, _] = super::paired_windows([5, 5], [7, 7]);
        assert_eq!(z, (-995, 1_005));
    }

    #[test]
    fn following_axis_keeps_the_offset_and_returns_to_the_leader() {
        let leader = super::TimeAxis {
            start_ns: 9_000,
            ns_per_px: 2.5,
        };
        let b = super::follow_axis(leader, 10_000, 500_000);
        assert_eq!(b.start_ns, 499_000);
        assert_eq!(b.ns_per_px, 2.5);
        // Following back gives the leader's view exactly: linked views settle.
        assert_eq!(super::follow_axis(b, 500_000, 10_000), leader);
    }

    use super::*;
    use crate::{import_bytes, ImportOptions};

    fn trace_of(events: &[(i64, i64)]) -> Trace {
        // One thread, back-to-back top-level slices given as (start ns, dur ns);
        // timestamps are written as decimal microseconds.
        let body: Vec<String> = events
            .iter()
            .enumerate()
            .map(|(k, (ts, dur))| {
                format!(
                    r#"{{"ph":"X","cat":"cpu_op","name":"s{k}","pid":1,"tid":1,"ts":{}.{:03},"dur":{}.{:03}}}"#,
                    ts / 1000,
                    ts % 1000,
                    dur / 1000,
                    dur % 1000
                )
            })
            .collect();
        import_bytes(
            format!("[{}]", body.join(",")).as_bytes(),
            ImportOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn time_pixel_round_trips_at_nanosecond_zoom_on_epoch_clocks() {
        // 2024 in epoch nanoseconds: f32 could not hold a nanosecond here.
        let base = 1_700_000_000_123_456_789i64;
        let axis = TimeAxis {
            start_ns: base,
            ns_per_px: 0.25,
        };
        for dt in [0i64, 1, 7, 1_000, 123_457] {
            let px = axis.px(base + dt);
            assert_eq!(px, dt as f64 * 4.0);
            assert_eq!(axis.time(px), base + dt);
        }
        // Zooming keeps the time under the pointer (to the nanosecond: the
        // view start is a whole nanosecond).
        let zoomed = axis.zoom(2.0, 100.0);
        assert!((zoomed.time(100.0) - axis.time(100.0)).abs() <= 1);
        let far = axis.zoom(1e-6, 640.0).zoom(1e6, 640.0);
        assert!((far.time(640.0) - axis.time(640.0)).abs() <= 1);
    }

    #[test]
    fn a_slice_narrower_than_a_pixel_still_shows() {
        let t = trace_of(&[(1_000, 1), (5_000_000, 1_000)]);
        let index = TimelineIndex::build(&t);
        let axis = TimeAxis::fit(0, 10_000_000, 1000.0); // 10 µs a pixel
        let list = draw_list(&t, &index, 0..index.rows.len(), &axis, 1000.0);
        assert_eq!(list.len(), 2);
        assert!(list.iter().all(|r| r.x1_px - r.x0_px >= 1.0));
        assert_eq!(list[0].slice, 0);
    }

    #[test]
    fn no_slice_is_lost_at_any_zoom_and_columns_stay_few() {
        // 20,000 slices of varied widths and gaps.
        let mut ev = Vec::new();
        let mut ts = 1_000_000_000i64;
        for k in 0..20_000i64 {
            let dur = 1 + (k * 7919) % 5_000;
            ev.push((ts, dur));
            ts += dur + (k * 104_729) % 3_000;
        }
        let t = trace_of(&ev);
        let index = TimelineIndex::build(&t);
        let (lo, hi) = t.time_span_ns().unwrap();
        for width in [200.0, 1000.0, 3000.0] {
            for (a, b) in [
                (lo, hi),
                (lo + (hi - lo) / 3, lo + (hi - lo) / 2),
                (lo + 5_000, lo + 60_000),
            ] {
                let axis = TimeAxis::fit(a, b, width);
                let list = draw_list(&t, &index, 0..1, &axis, width);
                let want = (0..t.slices.len())
                    .filter(|&i| t.slices.end_ns(i) > a && t.slices.start_ns[i] < axis.time(width))
                    .count();
                let got: u32 = list.iter().map(|r| r.count).sum();
                assert_eq!(got as usize, want, "width {width} view {a}..{b}");
                assert!(
                    list.len() as f64 <= 2.0 * width + 2.0,
                    "{} rects for {width} px",
                    list.len()
                );
            }
        }
    }

    #[test]
    fn hit_testing_returns_the_slice_under_the_pointer() {
        let t = trace_of(&[(0, 1_000), (2_000, 10), (3_000, 1_000)]);
        let index = TimelineIndex::build(&t);
        let axis = TimeAxis::fit(0, 4_000, 400.0); // 10 ns a pixel
        assert_eq!(hit_test(&t, &index, 0, &axis, 50.0, 0.0), Some(0));
        assert_eq!(hit_test(&t, &index, 0, &axis, 350.0, 0.0), Some(2));
        // The 10 ns slice is one pixel wide: reachable with a little slop.
        assert_eq!(hit_test(&t, &index, 0, &axis, 201.5, 2.0), Some(1));
        assert_eq!(hit_test(&t, &index, 0, &axis, 150.0, 2.0), None);
    }

    #[test]
    fn ruler_ticks_are_round_and_spaced_at_every_zoom() {
        let origin = 1_700_000_000_000_000_000i64;
        for (span, width) in [
            (13_690_000_000i64, 1100.0),
            (1_000_000, 1000.0),
            (37, 800.0),
            (86_400_000_000_000, 1600.0),
        ] {
            let axis = TimeAxis::fit(origin + span / 3, origin + span / 3 + span, width);
            let ticks = ruler_ticks(&axis, width, origin, 80.0);
            assert!(
                ticks.len() >= 2 && ticks.len() <= (width / 80.0) as usize + 1,
                "{span}: {}",
                ticks.len()
            );
            for w in ticks.windows(2) {
                assert!(w[1].x_px - w[0].x_px >= 79.9);
            }
            assert!(ticks[0].x_px >= 0.0 && ticks[0].x_px < 80.0 + 1e-9 * width);
        }
        assert_eq!(format_offset(1_500_000, 500_000), "1.5 ms");
        assert_eq!(format_offset(2_000_000_000, 1_000_000_000), "2 s");
        assert_eq!(format_offset(40, 20), "40 ns");
        assert_eq!(format_offset(1_250, 50), "1250 ns");
        assert_eq!(format_offset(1_200, 200), "1.2 µs");
    }

    #[test]
    fn rows_follow_nesting_depth() {
        let t = crate::import_bytes(
            br#"[{"ph":"X","name":"outer","pid":1,"tid":1,"ts":0,"dur":10},{"ph":"X","name":"inner","pid":1,"tid":1,"ts":1,"dur":2}]"#,
            ImportOptions::default(),
        )
        .unwrap();
        let index = TimelineIndex::build(&t);
        assert_eq!(index.rows.len(), 2);
        assert_eq!((index.rows[0].depth, index.rows[1].depth), (0, 1));
        assert_eq!(t.slice_name(index.rows[1].slices[0] as usize), "inner");
    }

    #[test]
    fn point_marks_merge_per_pixel_and_lose_no_point() {
        // 10,000 points, 1 µs apart, seen at 10 µs a pixel and at 0.1 µs a pixel.
        let ts: Vec<i64> = (0..10_000)
            .map(|k| 1_700_000_000_000_000_000 + k * 1_000)
            .collect();
        for ns_per_px in [10_000.0, 100.0] {
            let axis = TimeAxis {
                start_ns: ts[0],
                ns_per_px,
            };
            let width = 1000.0;
            let marks = layout_points(&ts, &axis, width);
            let visible = ts.iter().filter(|&&t| axis.px(t) < width).count();
            assert_eq!(
                marks.iter().map(|m| m.count as usize).sum::<usize>(),
                visible
            );
            assert!(marks.windows(2).all(|w| w[1].x_px >= w[0].x_px + 1.0));
        }
    }

    #[test]
    fn counter_columns_keep_the_peak_of_merged_samples() {
        // A counter that is 1 everywhere except one 1 ns spike to 50.
        let ts: Vec<i64> = (0..1_000).map(|k| k * 1_000).collect();
        let mut values = vec![1.0; 1_000];
        values[500] = 50.0;
        let axis = TimeAxis::fit(0, 1_000_000, 100.0); // 10 samples a pixel
        let cols = counter_columns(&ts, &values, &axis, 100.0);
        assert!(cols.len() <= 101);
        let peak = cols
            .iter()
            .find(|c| c.value == 50.0)
            .expect("the spike shows");
        assert_eq!(peak.x0_px, 50.0);
        // Zoomed in, each sample is its own column holding its value.
        let near = TimeAxis::fit(499_000, 503_000, 400.0);
        let cols = counter_columns(&ts, &values, &near, 400.0);
        assert_eq!(cols[0].x0_px, 0.0);
        assert_eq!(cols[0].value, 1.0);
        assert!(cols
            .iter()
            .any(|c| c.value == 50.0 && c.x0_px == 100.0 && c.x1_px == 200.0));
    }
}

//! The timeline as the worker serves it: lanes in display order, draw lists
//! for a viewport, and picking. Pure (no browser), tested natively; the
//! page only paints what comes back.

use serde::{Deserialize, Serialize};
use tracelane_core::category::Category;
use tracelane_core::model::{Trace, TrackKind, NO_SLICE};
use tracelane_core::timeline::{draw_list, hit_test, TimeAxis, TimelineIndex};

/// One lane (a thread or a device stream) and how many rows it takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneView {
    pub label: String,
    pub device: bool,
    pub rows: u16,
}

/// One rectangle: display row, pixel span, category, merged count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RectView {
    pub row: u32,
    pub x0: f32,
    pub x1: f32,
    pub count: u32,
    pub category: u8,
    /// The name, when the rectangle is wide enough to print it.
    pub label: Option<String>,
}

/// A picked slice, for the details panel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PickedSlice {
    pub name: String,
    pub category: String,
    /// Start relative to the trace start, and duration.
    pub start_ns: i64,
    pub dur_ns: i64,
    /// Duration minus the children nested directly inside it.
    pub self_ns: i64,
    /// The runtime call that launched it (device events).
    pub launched_by: Option<String>,
    /// The op it belongs to (device events and runtime calls).
    pub op: Option<String>,
    /// Device events it launched (ops), by name.
    pub launched: Vec<String>,
}

/// Floats per rectangle in the binary draw list: row, x0, x1, count, category.
pub const RECT_STRIDE: usize = 5;

/// Packs a draw list for transfer: `[request, n, (row, x0, x1, count,
/// category) × n]` as `f32`, and the labels by rectangle index.
pub fn encode_rects(request: u32, rects: Vec<RectView>) -> (Vec<f32>, Vec<(u32, String)>) {
    let mut floats = Vec::with_capacity(2 + rects.len() * RECT_STRIDE);
    floats.push(request as f32);
    floats.push(rects.len() as f32);
    let mut labels = Vec::new();
    for (k, r) in rects.into_iter().enumerate() {
        floats.extend([r.row as f32, r.x0, r.x1, r.count as f32, r.category as f32]);
        if let Some(l) = r.label {
            labels.push((k as u32, l));
        }
    }
    (floats, labels)
}

/// Category codes the page colours by.
pub fn category_code(c: Category) -> u8 {
    match c {
        Category::CpuOp => 1,
        Category::UserAnnotation => 2,
        Category::Runtime => 3,
        Category::Kernel => 4,
        Category::Memcpy => 5,
        Category::Memset => 6,
        Category::DeviceSync => 7,
        Category::DeviceWindow => 8,
        Category::DeviceAnnotation => 9,
        _ => 0,
    }
}

/// Smallest width, in pixels, at which a name is printed inside its slice.
const LABEL_MIN_PX: f32 = 36.0;

pub struct TimelineModel {
    index: TimelineIndex,
    /// Index rows in display order (lanes host-first, then depth).
    display_rows: Vec<usize>,
    pub lanes: Vec<LaneView>,
    pub start_ns: i64,
    pub end_ns: i64,
}

impl TimelineModel {
    pub fn new(t: &Trace) -> TimelineModel {
        let index = TimelineIndex::build(t);
        let mut display_rows = Vec::new();
        let mut lanes = Vec::new();
        for tr in t.lane_order() {
            let rows = index.track_rows[tr.idx()].clone();
            if rows.is_empty() {
                continue;
            }
            let track = &t.tracks[tr.idx()];
            let process = &t.processes[track.process.0 as usize];
            let pname = process
                .labels
                .or(process.name)
                .map(|s| t.str(s).to_string())
                .unwrap_or_else(|| t.lane_label(process.pid));
            let tname = track
                .name
                .map(|s| t.str(s).trim().to_string())
                .unwrap_or_else(|| t.lane_label(track.tid));
            lanes.push(LaneView {
                label: format!("{pname} · {tname}"),
                device: track.kind == TrackKind::DeviceStream,
                rows: rows.len() as u16,
            });
            display_rows.extend(rows);
        }
        let (start_ns, end_ns) = t.time_span_ns().unwrap_or((0, 1));
        TimelineModel {
            index,
            display_rows,
            lanes,
            start_ns,
            end_ns,
        }
    }

    /// The rectangles of every row for a view `width_px` wide.
    pub fn draw(&self, t: &Trace, axis: &TimeAxis, width_px: f64) -> Vec<RectView> {
        let mut out = Vec::new();
        for (display, &row) in self.display_rows.iter().enumerate() {
            for r in draw_list(t, &self.index, [row], axis, width_px) {
                let (x0, x1) = (r.x0_px as f32, r.x1_px as f32);
                out.push(RectView {
                    row: display as u32,
                    x0,
                    x1,
                    count: r.count,
                    category: category_code(r.category),
                    label: (r.count == 1 && x1 - x0 >= LABEL_MIN_PX)
                        .then(|| t.slice_name(r.slice as usize).to_string()),
                });
            }
        }
        out
    }

    /// The slice under `x_px` on display row `row` (a few pixels of slop).
    pub fn pick(&self, t: &Trace, row: usize, axis: &TimeAxis, x_px: f64) -> Option<PickedSlice> {
        let index_row = *self.display_rows.get(row)?;
        let s = hit_test(t, &self.index, index_row, axis, x_px, 3.0)? as usize;
        let name_of = |i: u32| (i != NO_SLICE).then(|| t.slice_name(i as usize).to_string());
        let launched = (0..t.slices.len())
            .filter(|&k| t.links.op[k] == s as u32 && t.slices.category[k].is_device())
            .map(|k| t.slice_name(k).to_string())
            .take(20)
            .collect();
        // Direct children sit in the next row of the same track.
        let mut children_ns = 0;
        if let Some(next) = self.display_rows.get(row + 1).map(|&r| &self.index.rows[r]) {
            if next.track == self.index.rows[index_row].track {
                let (a, b) = (t.slices.start_ns[s], t.slices.end_ns(s));
                let first = next
                    .slices
                    .partition_point(|&k| t.slices.start_ns[k as usize] < a);
                for &k in &next.slices[first..] {
                    if t.slices.start_ns[k as usize] >= b {
                        break;
                    }
                    if t.slices.parent[k as usize] == s as u32 {
                        children_ns += t.slices.dur_ns[k as usize];
                    }
                }
            }
        }
        Some(PickedSlice {
            self_ns: t.slices.dur_ns[s] - children_ns,
            name: t.slice_name(s).to_string(),
            category: t.str(t.slices.cat[s]).to_string(),
            start_ns: t.slices.start_ns[s] - self.start_ns,
            dur_ns: t.slices.dur_ns[s],
            launched_by: name_of(t.links.launch[s]),
            op: name_of(t.links.op[s]),
            launched,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn triton() -> Trace {
        let bytes = include_bytes!("../tests/fixtures/public/hta_triton_example.json.gz");
        tracelane_core::import_bytes(bytes, Default::default()).unwrap()
    }

    #[test]
    fn lanes_are_host_first_and_cover_every_row() {
        let t = triton();
        let m = TimelineModel::new(&t);
        let first_device = m.lanes.iter().position(|l| l.device).unwrap();
        assert!(m.lanes[..first_device].iter().all(|l| !l.device));
        assert!(m.lanes[first_device..].iter().all(|l| l.device));
        let rows: usize = m.lanes.iter().map(|l| l.rows as usize).sum();
        assert_eq!(rows, m.display_rows.len());
    }

    #[test]
    fn the_kernel_can_be_picked_and_names_its_launch_and_op() {
        let t = triton();
        let m = TimelineModel::new(&t);
        let k = (0..t.slices.len())
            .find(|&i| t.slices.category[i] == Category::Kernel)
            .unwrap();
        // Zoom onto the kernel and click its middle.
        let (a, b) = (t.slices.start_ns[k], t.slices.end_ns(k));
        let axis = TimeAxis::fit(a - 1_000, b + 1_000, 1000.0);
        let row = m
            .display_rows
            .iter()
            .position(|&r| m.index.rows[r].slices.contains(&(k as u32)))
            .unwrap();
        let picked = m.pick(&t, row, &axis, axis.px((a + b) / 2)).unwrap();
        assert_eq!(picked.name, "triton_poi_fused_add_cos_sin_0");
        assert_eq!(picked.launched_by.as_deref(), Some("cuLaunchKernel"));
        assert_eq!(picked.op.as_deref(), Some("triton_poi_fused_add_cos_sin_0"));
        assert_eq!(picked.self_ns, 1_760);
        // The compiled region's self time excludes the op nested in it.
        let region = (0..t.slices.len())
            .find(|&i| t.slice_name(i) == "Torch-Compiled Region: 0/0")
            .unwrap();
        let (a, b) = (t.slices.start_ns[region], t.slices.end_ns(region));
        let axis_r = TimeAxis::fit(a, b, 1000.0);
        let row_r = m
            .display_rows
            .iter()
            .position(|&r| m.index.rows[r].slices.contains(&(region as u32)))
            .unwrap();
        let p = m.pick(&t, row_r, &axis_r, 500.0).unwrap();
        assert_eq!(p.name, "Torch-Compiled Region: 0/0");
        let children: i64 = (0..t.slices.len())
            .filter(|&i| t.slices.parent[i] == region as u32)
            .map(|i| t.slices.dur_ns[i])
            .sum();
        assert!(children > 0);
        assert_eq!(p.self_ns, p.dur_ns - children);
        let rects = m.draw(&t, &axis, 1000.0);
        assert!(rects
            .iter()
            .any(|r| r.row == row as u32
                && r.label.as_deref() == Some("triton_poi_fused_add_cos_sin_0")));
    }
}

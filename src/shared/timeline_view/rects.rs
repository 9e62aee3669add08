//! The draw list as the painter reads it: rectangles packed into numbers
//! (a colour code per category or name), the palette and its legend.

use serde::{Deserialize, Serialize};
use tracelane_core::category::Category;

/// One rectangle: display row, pixel span, merged count, colour code, and
/// height in rows measured up from the bottom of the row (1: a slice).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RectView {
    pub row: u32,
    pub x0: f32,
    pub x1: f32,
    pub count: u32,
    pub code: u8,
    pub height: f32,
    /// The name, when the rectangle is wide enough to print it.
    pub label: Option<String>,
}

/// Colour codes: categories 0–9, then these, then name colours from
/// [`NAME_COLOUR_BASE`] (one of [`NAME_COLOURS`], from a hash of the name).
pub const CODE_COUNTER: u8 = 10;

pub const CODE_INSTANT: u8 = 11;

pub const CODE_HIGHLIGHT: u8 = 12;

pub const NAME_COLOUR_BASE: u8 = 16;

pub const NAME_COLOURS: u8 = 24;

/// Floats per rectangle in the binary draw list: row, x0, x1, count, code, height.
pub const RECT_STRIDE: usize = 6;

/// Packs a draw list for transfer: `[request, n, (row, x0, x1, count, code,
/// height) × n]` as `f32`, and the labels by rectangle index.
pub fn encode_rects(request: u32, rects: Vec<RectView>) -> (Vec<f32>, Vec<(u32, String)>) {
    let mut floats = Vec::with_capacity(2 + rects.len() * RECT_STRIDE);
    floats.push(request as f32);
    floats.push(rects.len() as f32);
    let mut labels = Vec::new();
    for (k, r) in rects.into_iter().enumerate() {
        floats.extend([
            r.row as f32,
            r.x0,
            r.x1,
            r.count as f32,
            r.code as f32,
            r.height,
        ]);
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

/// A colour code from the name alone (FNV-1a), so a name keeps its colour
/// across zoom levels, tabs and traces.
pub fn name_colour_code(name: &str) -> u8 {
    let mut h: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        h = (h ^ b as u32).wrapping_mul(0x0100_0193);
    }
    NAME_COLOUR_BASE + (h % NAME_COLOURS as u32) as u8
}

/// Colours by code: categories, counter, instant, highlight, then names.
pub fn palette() -> Vec<&'static str> {
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
        "#6b7585", // instant (a grey readable on the light and the dark theme)
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
pub const LEGEND: &[(u8, &str)] = &[
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

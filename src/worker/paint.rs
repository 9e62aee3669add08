//! Painting the timeline, in the worker: the page hands over its two
//! canvases (`transferControlToOffscreen`), and each view message is laid out
//! and painted right here, next to the model — no draw list crosses threads
//! and the page's main thread is never in the path of a frame.
//!
//! The rectangle layer is WebGL2: the packed draw list goes to the GPU as
//! one instance buffer (a view of wasm memory, no copy) and one instanced
//! draw call paints it (Canvas2D batched by colour where WebGL2 is missing).
//! Names, group header bands, the selected range, the selection, its
//! dependency chain and the launch arrows go on a Canvas2D layer above it.

use wasm_bindgen::JsCast;
use web_sys::{OffscreenCanvas, OffscreenCanvasRenderingContext2d as Ctx};

use crate::shared::timeline_view::{
    encode_rects, palette, row_layout, PathMark, RowLayout, Scene, TimelineModel, CODE_COUNTER,
    CODE_HIGHLIGHT, RECT_STRIDE, ROW_PX,
};
use crate::worker::gl::GlRects;
use tracelane_core::Trace;

/// Where a frame is painted: the page's two canvases, handed over.
pub struct Surface {
    pub id: u32,
    rects: OffscreenCanvas,
    overlay: OffscreenCanvas,
    gl: Option<GlRects>,
}

fn context_2d(c: &OffscreenCanvas) -> Option<Ctx> {
    c.get_context("2d").ok()??.dyn_into().ok()
}

/// Sizes a canvas's backing store (only when it changes: resizing clears
/// and reallocates it).
fn size_canvas(c: &OffscreenCanvas, w: f64, h: f64, dpr: f64) {
    let (bw, bh) = ((w * dpr).round() as u32, (h * dpr).round().max(1.0) as u32);
    if c.width() != bw || c.height() != bh {
        c.set_width(bw);
        c.set_height(bh);
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
/// The critical path's colour (in no palette, so a test can count its pixels).
pub const PATH_COLOUR: &str = "#e64980";

fn display_row(layout: &RowLayout, lane: u32, lane_row: u16) -> Option<f64> {
    let first = (*layout.lane_first_row.get(lane as usize)?)?;
    Some((first + lane_row as u32) as f64)
}

impl Surface {
    /// A surface on the page's canvases. `renderer`: `webgl2` or
    /// `canvas2d` to force one; anything else picks WebGL2 on a hardware
    /// GPU and Canvas2D otherwise.
    pub fn new(
        id: u32,
        rects: OffscreenCanvas,
        overlay: OffscreenCanvas,
        renderer: &str,
    ) -> Surface {
        let gl = match renderer {
            "canvas2d" => None,
            "webgl2" => GlRects::new(&rects, &palette(), false),
            _ => GlRects::new(&rects, &palette(), true),
        };
        Surface {
            id,
            rects,
            overlay,
            gl,
        }
    }

    pub fn renderer(&self) -> &'static str {
        if self.gl.is_some() {
            "webgl2"
        } else {
            "canvas2d"
        }
    }

    /// Lays out and paints one frame; returns the milliseconds spent laying
    /// out and painting.
    pub fn paint(
        &self,
        t: &Trace,
        m: &TimelineModel,
        scene: &Scene,
        path: Option<&[PathMark]>,
        now_ms: impl Fn() -> f64,
    ) -> (f64, f64) {
        let began = now_ms();
        let rects = m.draw(t, &scene.view);
        let (floats, labels) = encode_rects(0, rects);
        let layout = row_layout(&m.lanes, &scene.view.collapsed, scene.view.hide_empty);
        let laid_out = now_ms();
        let (w, h, dpr) = (
            scene.view.width_px,
            layout.rows as f64 * ROW_PX,
            scene.dpr.max(1.0),
        );
        let packed = &floats[2..];
        size_canvas(&self.rects, w, h, dpr);
        match &self.gl {
            Some(gl) => gl.paint(packed, w, h, ROW_PX),
            None => self.paint_rects_2d(packed, w, h, dpr),
        }
        self.paint_overlay(packed, &labels, &layout, m.start_ns, scene);
        if let Some(path) = path {
            self.paint_path(path, &layout, scene);
        }
        (laid_out - began, now_ms() - laid_out)
    }

    fn paint_rects_2d(&self, floats: &[f32], w: f64, h: f64, dpr: f64) {
        let Some(ctx) = context_2d(&self.rects) else {
            return;
        };
        let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
        ctx.clear_rect(0.0, 0.0, w, h);
        let n = floats.len() / RECT_STRIDE;
        let rect = |k: usize| &floats[k * RECT_STRIDE..(k + 1) * RECT_STRIDE];
        // One fill style per colour: switching it per rectangle costs more
        // than the rectangles.
        for (code, colour) in palette().iter().enumerate() {
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
    /// The critical path over the overlay: a thick line along each op or
    /// kernel span on it, a thin one along waits, and a connector where
    /// it changes rows.
    fn paint_path(&self, path: &[PathMark], layout: &RowLayout, scene: &Scene) {
        let Some(ctx) = context_2d(&self.overlay) else {
            return;
        };
        let axis = scene.view.axis();
        let w = scene.view.width_px;
        let y_of = |m: &PathMark| {
            display_row(layout, m.lane, m.lane_row).map(|r| r * ROW_PX + ROW_PX - 2.0)
        };
        ctx.set_stroke_style_str(PATH_COLOUR);
        let mut prev: Option<(f64, f64)> = None;
        for m in path {
            let (x0, x1) = (axis.px(m.start_ns), axis.px(m.end_ns));
            let Some(y) = y_of(m) else {
                prev = None;
                continue;
            };
            if x1 < -2.0 || x0 > w + 2.0 {
                prev = Some((x1, y));
                continue;
            }
            ctx.set_line_width(if m.span { 3.0 } else { 1.5 });
            ctx.begin_path();
            match prev {
                Some((px, py)) if (py - y).abs() > 0.5 => {
                    ctx.move_to(px, py);
                    ctx.line_to(x0, y);
                }
                _ => ctx.move_to(x0, y),
            }
            ctx.line_to(x1.max(x0 + 1.0), y);
            ctx.stroke();
            prev = Some((x1, y));
        }
    }

    fn paint_overlay(
        &self,
        rects: &[f32],
        labels: &[(u32, String)],
        layout: &RowLayout,
        t0: i64,
        scene: &Scene,
    ) {
        let (w, dpr) = (scene.view.width_px, scene.dpr.max(1.0));
        let h = layout.rows as f64 * ROW_PX;
        size_canvas(&self.overlay, w, h, dpr);
        let Some(ctx) = context_2d(&self.overlay) else {
            return;
        };
        let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
        ctx.clear_rect(0.0, 0.0, w, h);
        let view = &scene.view;
        let axis = view.axis();
        // Group header rows.
        ctx.set_fill_style_str(if scene.dark { "#232a33" } else { "#f1f3f6" });
        for &(_, row, _) in &layout.headers {
            ctx.fill_rect(0.0, row as f64 * ROW_PX, w, ROW_PX);
        }
        // Names inside their slices.
        ctx.set_font("11px system-ui, sans-serif");
        ctx.set_fill_style_str("#fff");
        for (k, label) in labels {
            let Some(r) = rects.get(*k as usize * RECT_STRIDE..(*k as usize + 1) * RECT_STRIDE)
            else {
                continue;
            };
            let (row, x0, x1) = (r[0] as f64, (r[1] as f64).max(0.0), (r[2] as f64).min(w));
            // About 6.5 px a character at this size.
            let fit = ((x1 - x0 - 6.0) / 6.5).floor().max(0.0) as usize;
            if let Some(text) = elide(label, fit) {
                let _ = ctx.fill_text(&text, x0 + 3.0, row * ROW_PX + ROW_PX - 5.0);
            }
        }
        // The selected range.
        if let Some((a, b)) = scene.range {
            let (x0, x1) = (axis.px(a).max(-1.0), axis.px(b).min(w + 1.0));
            if x1 > x0 {
                ctx.set_fill_style_str("rgba(47,111,219,0.14)");
                ctx.fill_rect(x0, 0.0, x1 - x0, h);
                ctx.set_stroke_style_str("#2f6fdb");
                ctx.set_line_width(1.0);
                ctx.stroke_rect(x0 + 0.5, 0.5, x1 - x0 - 1.0, h - 1.0);
            }
        }
        // The selection, its chain, and the launch arrows.
        let Some(sel) = &scene.selected else {
            return;
        };
        let place = |lane: u32, lane_row: u16, start_rel: i64, dur: i64| {
            let row = display_row(layout, lane, lane_row)?;
            let x0 = axis.px(t0 + start_rel);
            let x1 = axis.px(t0 + start_rel + dur).max(x0 + 1.0);
            Some((x0, x1, row * ROW_PX))
        };
        ctx.set_stroke_style_str(if scene.dark { "#e8ebf0" } else { "#1d232b" });
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
        // Arrows: from each item to the one it comes from (op → runtime
        // call, launch → device work, or along a flow).
        ctx.set_stroke_style_str("#d6336c");
        ctx.set_fill_style_str("#d6336c");
        ctx.set_line_width(1.5);
        for c in &sel.chain {
            let Some(s) = c.from.and_then(|f| sel.chain.iter().find(|x| x.slice == f)) else {
                continue;
            };
            let (Some((sx0, sx1, sy)), Some((tx0, _, ty))) = (
                place(s.lane, s.lane_row, s.start_ns, s.dur_ns),
                place(c.lane, c.lane_row, c.start_ns, c.dur_ns),
            ) else {
                continue;
            };
            if s.lane == c.lane && (sy - ty).abs() <= ROW_PX {
                // Nested right under its source: the outlines say enough.
                continue;
            }
            // Leave the source where the target begins if it begins inside
            // it (a call made during the op), else from its end.
            let sx = if tx0 >= sx0 && tx0 <= sx1 { tx0 } else { sx1 };
            let (sy, tx, ty) = (sy + ROW_PX / 2.0, tx0, ty + ROW_PX / 2.0);
            ctx.begin_path();
            ctx.move_to(sx, sy);
            let mid = (sy + ty) / 2.0;
            ctx.bezier_curve_to(sx, mid, tx, mid, tx, ty);
            ctx.stroke();
            // Arrow head pointing along the final (vertical) tangent.
            let dir = if ty >= sy { -1.0 } else { 1.0 };
            ctx.begin_path();
            ctx.move_to(tx, ty);
            ctx.line_to(tx - 4.0, ty + dir * 7.0);
            ctx.line_to(tx + 4.0, ty + dir * 7.0);
            ctx.close_path();
            ctx.fill();
        }
    }
}

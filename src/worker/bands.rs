//! The Memory view's allocation bands, painted on the canvas the page
//! handed over: built by the core for a device and a range (kept until
//! another is asked), rastered at the view's cells for each window, the
//! cells coloured (`shared::bands_view`) and put on the canvas in one
//! call. The last raster stays for hovering.

use tracelane_core::memory_snapshot::bands::{clock_of, BandOptions, BandView, Bands, Clock};
use wasm_bindgen::{Clamped, JsCast};
use web_sys::{ImageData, OffscreenCanvas, OffscreenCanvasRenderingContext2d as Ctx};

use crate::shared::bands_view::{band_text, rgba, BandsFrame};
use crate::shared::protocol::Answer;

use super::kept::{with_model, Models};
use super::runtime::now_ms;

/// What painting the bands needs of the worker's shared state.
pub(super) struct BandsContext<'a> {
    pub(super) slot: &'a std::cell::RefCell<Option<BandsCanvas>>,
    pub(super) models: &'a Models,
    pub(super) scope: &'a web_sys::DedicatedWorkerGlobalScope,
}

/// Frames past this many cells are refused (a canvas of 4096 × 2048).
const MAX_CELLS: u64 = 1 << 23;

/// The bands canvas of one trace, what was built for it and the last
/// raster.
pub(super) struct BandsCanvas {
    id: u32,
    canvas: OffscreenCanvas,
    built: Option<Built>,
    builds: u32,
    cells: Vec<u32>,
    pixels: Vec<u8>,
    width: u32,
    /// Where hover times count from, on the bands' clock.
    start: i64,
    entries: bool,
}

struct Built {
    device: u32,
    range: Option<(i64, i64)>,
    bands: Bands,
    build_ms: f64,
}

impl BandsCanvas {
    pub(super) fn new(id: u32, canvas: OffscreenCanvas) -> BandsCanvas {
        BandsCanvas {
            id,
            canvas,
            built: None,
            builds: 0,
            cells: Vec::new(),
            pixels: Vec::new(),
            width: 0,
            start: 0,
            entries: false,
        }
    }

    pub(super) fn id(&self) -> u32 {
        self.id
    }
}

/// Builds (if the device or range changed), rasters and paints a frame.
pub(super) fn paint(
    sh: BandsContext<'_>,
    id: u32,
    device: u32,
    range: Option<(i64, i64)>,
    view: Option<(i64, i64)>,
    (width, height): (u32, u32),
) -> Result<Answer, String> {
    if u64::from(width) * u64::from(height) > MAX_CELLS || width == 0 || height == 0 {
        return Err(format!(
            "a bands canvas of {width} × {height} cells cannot be drawn"
        ));
    }
    let mut slot = sh.slot.borrow_mut();
    let c = slot
        .as_mut()
        .filter(|c| c.id == id)
        .ok_or("the bands canvas was not handed over")?;
    let answer = with_model(sh.models, id, |k| -> Result<Answer, String> {
        let t = &k.trace;
        let snap = t
            .memory_snapshot
            .as_deref()
            .ok_or("this trace has no allocator snapshot")?;
        let d = snap
            .devices
            .get(device as usize)
            .ok_or("the snapshot has no such device")?;
        let offset = t.clock_offset_ns;
        let stale = !c
            .built
            .as_ref()
            .is_some_and(|b| b.device == device && b.range == range);
        if stale {
            let t0 = now_ms(sh.scope);
            // The range comes on the trace's clock; an untimed snapshot's
            // bands are on entry numbers, which the page then uses.
            let on_band_clock = |(a, z): (i64, i64)| match clock_of(snap, device as usize) {
                Clock::EpochNs => (a.saturating_add(offset), z.saturating_add(offset)),
                Clock::Entry => (a, z),
            };
            let bands = Bands::build(
                snap,
                device as usize,
                BandOptions {
                    range: range.map(on_band_clock),
                    ..BandOptions::default()
                },
            );
            c.builds += 1;
            c.built = Some(Built {
                device,
                range,
                bands,
                build_ms: now_ms(sh.scope) - t0,
            });
        }
        let built = c.built.as_ref().ok_or("nothing built")?;
        let b = &built.bands;
        let entries = b.clock == Clock::Entry;
        let shift = if entries { 0 } else { offset };
        let view = view.unwrap_or((b.from.saturating_sub(shift), b.to.saturating_sub(shift)));
        let t0 = now_ms(sh.scope);
        b.raster_into(
            &BandView {
                from: view.0.saturating_add(shift),
                to: view.1.saturating_add(shift),
                width,
                height,
                top: b.peak.max(1),
            },
            &mut c.cells,
        );
        let t1 = now_ms(sh.scope);
        rgba(&c.cells, &mut c.pixels);
        put(&c.canvas, &c.pixels, width, height)?;
        c.width = width;
        // Hover times count from the trace's start, as the view's typed
        // moments do.
        c.start = if entries {
            0
        } else {
            shift.saturating_add(t.time_span_ns().map_or(0, |x| x.0))
        };
        c.entries = entries;
        let mut frame = BandsFrame::of(b, format!("CUDA:{}", d.device), shift, view, b.peak);
        frame.builds = c.builds;
        frame.build_ms = if stale { built.build_ms } else { 0.0 };
        frame.raster_ms = t1 - t0;
        frame.paint_ms = now_ms(sh.scope) - t1;
        Ok(Answer::MemoryBands {
            frame: Box::new(frame),
        })
    });
    answer.unwrap_or_else(|| Err("the trace is closed".into()))
}

/// Puts RGBA pixels on the canvas, sized to them.
fn put(canvas: &OffscreenCanvas, pixels: &[u8], width: u32, height: u32) -> Result<(), String> {
    if canvas.width() != width || canvas.height() != height {
        canvas.set_width(width);
        canvas.set_height(height);
    }
    let ctx: Ctx = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into().ok())
        .ok_or("no 2d context for the bands canvas")?;
    let image = ImageData::new_with_u8_clamped_array_and_sh(Clamped(pixels), width, height)
        .map_err(|_| "the bands could not be made an image")?;
    ctx.put_image_data(&image, 0.0, 0.0)
        .map_err(|_| "the bands could not be painted".to_string())
}

/// What the last raster shows at cell (`x`, `y`).
pub(super) fn at(sh: BandsContext<'_>, id: u32, x: u32, y: u32) -> Result<Answer, String> {
    let slot = sh.slot.borrow();
    let c = slot
        .as_ref()
        .filter(|c| c.id == id)
        .ok_or("the bands canvas was not handed over")?;
    let (Some(built), true) = (c.built.as_ref(), x < c.width) else {
        return Ok(Answer::MemoryBand { band: None });
    };
    let cell = c
        .cells
        .get(y as usize * c.width as usize + x as usize)
        .copied()
        .unwrap_or_default();
    let band = with_model(sh.models, id, |k| {
        let snap = k.trace.memory_snapshot.as_deref()?;
        let info = built.bands.describe(snap, cell, 12)?;
        Some(band_text(info, c.start, c.entries))
    })
    .flatten();
    Ok(Answer::MemoryBand { band })
}

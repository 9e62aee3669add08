//! The Memory view's allocation bands: what a painted frame says about
//! itself, what hovering a band shows, and the cells' colours. The core
//! builds and rasters the bands (`memory_snapshot::bands`); the worker
//! paints the raster with these colours on the canvas the page handed it.

use serde::{Deserialize, Serialize};
use tracelane_core::export::fmt_mem;
use tracelane_core::memory_snapshot::bands::{BandInfo, Bands, Clock, CELL_EMPTY, CELL_SUMMARY};

/// A painted frame of bands. Times are the trace's clock in ns, or entry
/// numbers where the snapshot has no times (`entries`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandsFrame {
    /// `CUDA:0` and so on.
    pub device: String,
    pub entries: bool,
    /// The range built, and the window painted.
    pub range: (i64, i64),
    pub view: (i64, i64),
    /// Bytes at the canvas's top edge.
    pub top: u64,
    pub allocations: u64,
    pub bands: u64,
    pub summarised: u64,
    pub smallest_drawn: u64,
    pub pieces: u64,
    /// Builds so far for this canvas (a new range builds; a new window
    /// only paints).
    pub builds: u32,
    pub build_ms: f64,
    pub raster_ms: f64,
    pub paint_ms: f64,
}

impl BandsFrame {
    pub fn of(b: &Bands, device: String, offset_ns: i64, view: (i64, i64), top: u64) -> BandsFrame {
        let on_trace = |t: i64| match b.clock {
            Clock::EpochNs => t.saturating_sub(offset_ns),
            Clock::Entry => t,
        };
        BandsFrame {
            device,
            entries: b.clock == Clock::Entry,
            range: (on_trace(b.from), on_trace(b.to)),
            view,
            top,
            allocations: b.allocations,
            bands: b.bands.len() as u64,
            summarised: b.summarised,
            smallest_drawn: b.smallest_drawn,
            pieces: b.piece_count() as u64,
            builds: 0,
            build_ms: 0.0,
            raster_ms: 0.0,
            paint_ms: 0.0,
        }
    }
}

/// A frame in words: what was built, how much is drawn alone, the top and
/// the window (µs from `start_ns`, or entry numbers).
pub fn caption(f: &BandsFrame, start_ns: i64) -> String {
    let when = |t: i64| {
        if f.entries {
            format!("entry {t}")
        } else {
            format!("{:.1} µs", (t - start_ns) as f64 / 1e3)
        }
    };
    let summary = if f.summarised == 0 {
        "every one drawn alone".to_string()
    } else {
        format!(
            "{} drawn alone, {} summarised as one grey band (each {} or less)",
            f.bands,
            f.summarised,
            fmt_mem(f.smallest_drawn as i64)
        )
    };
    format!(
        "{} allocations live from {} to {}: {summary}; top {}; window {} – {}",
        f.allocations,
        when(f.range.0),
        when(f.range.1),
        fmt_mem(f.top as i64),
        when(f.view.0),
        when(f.view.1),
    )
}

/// What hovering a cell shows: a title and lines of text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandText {
    /// The band's number (`None`: the summary band).
    pub band: Option<u32>,
    pub title: String,
    pub lines: Vec<String>,
}

/// A band in words, times as µs from `start` on the band's clock
/// (`entries`: entry numbers).
pub fn band_text(info: BandInfo, start: i64, entries: bool) -> BandText {
    let when = |t: i64| {
        if entries {
            format!("entry {}", t - start)
        } else {
            format!("{:.1} µs", (t - start) as f64 / 1e3)
        }
    };
    if info.band.is_none() {
        return BandText {
            band: None,
            title: "Summarised allocations".into(),
            lines: info.frames,
        };
    }
    let made = info.from.map_or("made before the trace".into(), |t| {
        format!("made at {}", when(t))
    });
    let gone = match (info.to, info.freed) {
        (None, _) => "live at the end".to_string(),
        (Some(t), true) => format!("freed at {}", when(t)),
        (Some(t), false) => format!("replaced at {} (an alloc at its address)", when(t)),
    };
    let mut lines = vec![
        format!(
            "{} requested, at 0x{:x}",
            fmt_mem(info.requested as i64),
            info.address
        ),
        format!("{made}, {gone}"),
    ];
    lines.extend(info.frames);
    BandText {
        band: info.band,
        title: format!("{} block", fmt_mem(info.size as i64)),
        lines,
    }
}

/// Band colours (Tableau 10, memory_viz's scheme, less its grey: grey is
/// the summary's), by band number.
const COLOURS: [[u8; 3]; 9] = [
    [0x4e, 0x79, 0xa7],
    [0xf2, 0x8e, 0x2b],
    [0xe1, 0x57, 0x59],
    [0x76, 0xb7, 0xb2],
    [0x59, 0xa1, 0x4f],
    [0xed, 0xc9, 0x48],
    [0xb0, 0x7a, 0xa1],
    [0xff, 0x9d, 0xa7],
    [0x9c, 0x75, 0x5f],
];
const SUMMARY_COLOUR: [u8; 3] = [0x8c, 0x8c, 0x8c];

/// The raster's cells as RGBA pixels (empty cells transparent).
pub fn rgba(cells: &[u32], out: &mut Vec<u8>) {
    let colour = |c: u32| match c {
        CELL_EMPTY => [0, 0, 0, 0],
        CELL_SUMMARY => [SUMMARY_COLOUR[0], SUMMARY_COLOUR[1], SUMMARY_COLOUR[2], 255],
        k => {
            let [r, g, b] = COLOURS[(k as usize - 1) % COLOURS.len()];
            [r, g, b, 255]
        }
    };
    out.clear();
    out.resize(cells.len() * 4, 0);
    // Runs of one cell value are common (a band across a row): the colour
    // is looked up once per run.
    let (mut last, mut px) = (CELL_EMPTY, [0u8; 4]);
    for (o, &c) in out.chunks_exact_mut(4).zip(cells) {
        if c != last {
            last = c;
            px = colour(c);
        }
        o.copy_from_slice(&px);
    }
}

/// A window `f` times as wide around `at` (0..1 across), inside `range`.
pub fn zoomed((a, z): (i64, i64), f: f64, at: f64, (ra, rz): (i64, i64)) -> (i64, i64) {
    let span = (z - a) as f64;
    let new = (span * f).clamp(1.0, (rz - ra) as f64);
    let pivot = a as f64 + span * at;
    let from = (pivot - new * at).clamp(ra as f64, rz as f64 - new);
    (from as i64, (from + new) as i64)
}

/// A window moved by `dx` of its width, inside `range`.
pub fn panned((a, z): (i64, i64), dx: f64, (ra, rz): (i64, i64)) -> (i64, i64) {
    let span = z - a;
    let from = (a - (span as f64 * dx) as i64).clamp(ra, (rz - span).max(ra));
    (from, from + span)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_band_reads_as_its_block_its_times_and_its_stack() {
        let info = BandInfo {
            band: Some(3),
            size: 2 << 20,
            requested: 2_000_000,
            address: 0x7f00,
            from: Some(1_500),
            to: Some(4_000),
            freed: true,
            frames: vec!["train.py:12 step".into()],
        };
        let t = band_text(info, 500, false);
        assert_eq!(t.title, "2.00 MB block");
        assert_eq!(t.lines[1], "made at 1.0 µs, freed at 3.5 µs");
        assert_eq!(t.lines[2], "train.py:12 step");
        let mut px = Vec::new();
        rgba(&[CELL_EMPTY, CELL_SUMMARY, 1], &mut px);
        assert_eq!(px.len(), 12);
        assert_eq!((px[3], px[7], &px[8..11]), (0, 255, &COLOURS[0][..]));
    }

    #[test]
    fn a_frame_says_what_is_drawn_alone_and_what_is_summarised() {
        let mut f = BandsFrame {
            device: "CUDA:0".into(),
            entries: false,
            range: (1_000, 5_001_000),
            view: (1_000, 2_001_000),
            top: 3 << 30,
            allocations: 12,
            bands: 12,
            summarised: 0,
            smallest_drawn: 512,
            pieces: 30,
            builds: 1,
            build_ms: 0.0,
            raster_ms: 0.0,
            paint_ms: 0.0,
        };
        assert_eq!(
            caption(&f, 1_000),
            "12 allocations live from 0.0 µs to 5000.0 µs: every one drawn alone; top 3.00 GB; window 0.0 µs – 2000.0 µs"
        );
        (f.bands, f.summarised, f.entries, f.range, f.view) = (10, 2, true, (0, 40), (0, 40));
        assert_eq!(
            caption(&f, 1_000),
            "12 allocations live from entry 0 to entry 40: 10 drawn alone, 2 summarised as one grey band (each 512 B or less); top 3.00 GB; window entry 0 – entry 40"
        );
    }

    #[test]
    fn a_window_zooms_around_the_pointer_and_pans_inside_the_range() {
        let full = (0, 1000);
        assert_eq!(zoomed((0, 1000), 0.5, 0.5, full), (250, 750));
        assert_eq!(zoomed((0, 1000), 0.5, 0.0, full), (0, 500));
        assert_eq!(zoomed((0, 500), 4.0, 0.5, full), (0, 1000));
        assert_eq!(panned((250, 750), 0.5, full), (0, 500));
        assert_eq!(panned((250, 750), -1.0, full), (500, 1000));
    }
}

//! Each allocation a band over real time: memory_viz's "Active Memory
//! Timeline" (`process_alloc_data` in `torch/utils/viz/MemoryViz.js`) on
//! the entries' epoch time instead of their numbers.
//!
//! As in memory_viz, live allocations are stacked in the order they were
//! made (those live before the trace at the bottom, in address order); a
//! free moves every allocation above it down by its size, and the largest
//! allocations are drawn one band each while the rest are summarised as
//! one band on top (memory_viz: the `max_entries` largest; here as many of
//! the largest as fit [`BandOptions`]'s budgets). A band's size is its
//! block's (the rounded request the allocator replay gives it,
//! [`super::replay`]), so the stack's top is the allocated curve.
//!
//! A range chosen before building keeps only what is live in it: the
//! budgets then go to that range's allocations (memory_viz draws every
//! entry of the file before anything can be chosen). Drawing is a raster
//! of band numbers at the view's pixel grid ([`Bands::raster`]): its cost
//! is the pixels and the bands' pieces in view, not the allocations.

use rustc_hash::FxHashMap;

use super::columns::{Action, MemorySnapshot};
use super::replay::{LiveBlock, Replay, BEFORE_TRACE};

/// What a build may keep.
#[derive(Clone, Copy, Debug)]
pub struct BandOptions {
    /// Only what is live in `[from, to)`, on the build's clock ([`Bands::clock`]).
    pub range: Option<(i64, i64)>,
    /// Allocations drawn one band each (memory_viz's `max_entries`,
    /// 15000 by default).
    pub max_bands: usize,
    /// Pieces (a band's run at one height) kept in all: a free moves every
    /// band above it, so pieces can grow as allocations × live ones.
    pub max_pieces: usize,
}

impl Default for BandOptions {
    fn default() -> BandOptions {
        BandOptions {
            range: None,
            max_bands: 200_000,
            max_pieces: 2_000_000,
        }
    }
}

/// The time axis of a build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// Epoch nanoseconds (`time_us` × 1000).
    EpochNs,
    /// The entry's number in the device's trace: the snapshot has no
    /// `time_us` (PyTorch before 2.1), as memory_viz's axis.
    Entry,
}

/// One allocation drawn as a band.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Band {
    /// The block's bytes (what `memory_allocated()` counts).
    pub size: u64,
    pub requested: u64,
    pub address: u64,
    /// The `alloc` entry ([`BEFORE_TRACE`]: live before the trace).
    pub entry: u32,
    pub stack: u32,
    /// Made and freed (`free_completed`), on the build's clock
    /// ([`LIVE_AT_END`]: never freed in the trace); `freed` false with a
    /// `to` is a block an `alloc` at its address replaced (the replay
    /// counts it as a conflict).
    pub from: i64,
    pub to: i64,
    pub freed: bool,
    pieces: (u32, u32),
    /// Where it is drawn: from and to on the sweep's clock, which never
    /// runs back (the same as `from` and `to` in a file in time order,
    /// clipped to the range).
    drawn: (i64, i64),
}

/// A band's run at one height, from `from` to the next piece (or the
/// band's end).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub from: i64,
    pub offset: u64,
}

/// The pieces at a level of detail: the build's range in `columns`
/// columns, of each band's pieces that start in one column only the first
/// — drawn when a cell is at least half a column wide, so a frame visits at
/// most a band's columns in view, not its every move (the timeline's
/// level of detail: what is narrower than a pixel is merged). A band only
/// ever moves down, so the first is its highest in the column: every band
/// is drawn where it was at the column's start (a column's stack is one
/// moment's, its cells drawn once), the stack's highest top in the
/// column is the summary's.
#[derive(Clone, Debug)]
struct Level {
    columns: u64,
    runs: Vec<Piece>,
    /// Band `k`'s runs are `runs[starts[k]..starts[k + 1]]`.
    starts: Vec<u32>,
}

/// The finest level's columns; each coarser has half as many.
const FINEST_COLUMNS: u64 = 1 << 16;
/// The coarsest: narrower than any view.
const COARSEST_COLUMNS: u64 = 1 << 9;

/// Summary columns: per column of the build's range, the summarised
/// allocations' band (lowest base, highest top).
pub const SUMMARY_COLUMNS: usize = 1 << 16;

/// A device's allocations as bands over a range.
#[derive(Clone, Debug)]
pub struct Bands {
    pub device: i64,
    pub clock: Clock,
    /// The range built, `[from, to)` on [`Bands::clock`].
    pub from: i64,
    pub to: i64,
    pub bands: Vec<Band>,
    pieces: Vec<Piece>,
    /// Coarser copies of the pieces, finest first ([`Level`]).
    levels: Vec<Level>,
    /// (lowest base, highest top, anything summarised) of the summary
    /// band per column of the range ([`SUMMARY_COLUMNS`]).
    summary: Vec<(u64, u64, bool)>,
    /// Allocations live in the range, drawn and summarised.
    pub allocations: u64,
    pub summarised: u64,
    /// The smallest band drawn alone (summarised ones are smaller or
    /// equal, past the budget).
    pub smallest_drawn: u64,
    /// The highest top of the stack in the range.
    pub peak: u64,
}

/// What a raster cell shows ([`Bands::raster`]): nothing, the summary, or
/// band `k` as `k + 1`.
pub const CELL_EMPTY: u32 = 0;
pub const CELL_SUMMARY: u32 = u32::MAX;

/// [`Band::to`] of an allocation live at the trace's end.
pub const LIVE_AT_END: i64 = i64::MAX;

/// One allocation's lifetime, as the replay gives it.
struct Life {
    size: u64,
    requested: u64,
    address: u64,
    entry: u32,
    stack: u32,
    from: i64,
    to: i64,
    freed: bool,
}

impl Life {
    /// Live at some moment of `[from, to)`.
    fn live_in(&self, from: i64, to: i64) -> bool {
        self.from < to && self.to > from
    }
}

/// Lifetimes as the replay opens and closes them.
#[derive(Default)]
struct Lives {
    lives: Vec<Life>,
    /// Opens and closes in order: a life's number, the top bit a close.
    order: Vec<u32>,
    /// The open life at each address.
    open: FxHashMap<u64, u32>,
}

impl Lives {
    fn open(&mut self, address: u64, b: &LiveBlock, from: i64) {
        let k = self.lives.len() as u32;
        self.open.insert(address, k);
        self.order.push(k);
        self.lives.push(Life {
            size: b.size,
            requested: b.requested,
            address,
            entry: b.entry,
            stack: b.stack,
            from,
            to: LIVE_AT_END,
            freed: false,
        });
    }

    /// The block at `address` ends at `to`: freed, or replaced by an
    /// `alloc` at its address.
    fn close(&mut self, address: u64, to: i64, freed: bool) {
        if let Some(k) = self.open.remove(&address) {
            self.lives[k as usize].to = to;
            self.lives[k as usize].freed = freed;
            self.order.push(k | 1 << 31);
        }
    }
}

/// The axis device `d`'s bands are on: epoch time, or entry numbers
/// where every entry has the same `time_us` (none recorded).
pub fn clock_of(snap: &MemorySnapshot, d: usize) -> Clock {
    let rows = snap.devices[d].entries.clone();
    let t = &snap.entries.time_us;
    if rows
        .clone()
        .any(|r| t[r as usize] != t[rows.start as usize])
    {
        Clock::EpochNs
    } else {
        Clock::Entry
    }
}

/// Every allocation of device `d` (an index into `snap.devices`), made
/// and freed in the replay's order, and the axis it is on.
fn lifetimes(snap: &MemorySnapshot, d: usize) -> (Vec<Life>, Vec<u32>, Clock, i64, i64) {
    let replay = Replay::new(snap, d);
    let e = &snap.entries;
    let rows = replay.rows.clone();
    let first_row = rows.start;
    let clock = clock_of(snap, d);
    let at = |r: u32| match clock {
        Clock::EpochNs => e.time_us[r as usize].saturating_mul(1000),
        Clock::Entry => i64::from(r - first_row),
    };
    let start = rows.clone().map(at).min().unwrap_or(0);
    let end = rows.clone().map(at).max().unwrap_or(0);
    let mut l = Lives::default();
    let mut st = replay.initial.clone();
    for (&address, b) in &st.blocks {
        l.open(address, b, start);
    }
    let mut counts = replay.counts.clone();
    for r in rows {
        let (action, address) = (e.action[r as usize], e.addr[r as usize]);
        if matches!(action, Action::Alloc | Action::FreeCompleted) {
            l.close(address, at(r), action == Action::FreeCompleted);
        }
        replay.apply(&mut st, r, &mut counts);
        if action == Action::Alloc {
            if let Some(b) = st.blocks.get(&address) {
                l.open(address, b, at(r));
            }
        }
    }
    let Lives { lives, order, .. } = l;
    (lives, order, clock, start, end)
}

/// The size from which allocations are drawn alone: the `n`-th largest
/// (ties past `n` summarised in the order they come).
fn threshold(sizes: &mut [u64], n: usize) -> u64 {
    if n == 0 {
        return u64::MAX;
    }
    if sizes.len() <= n {
        return 0;
    }
    let (_, nth, _) = sizes.select_nth_unstable_by(n - 1, |a, b| b.cmp(a));
    *nth
}

impl Bands {
    /// Builds the bands of device `d` (an index into `snap.devices`).
    pub fn build(snap: &MemorySnapshot, d: usize, opts: BandOptions) -> Bands {
        let (lives, order, clock, start, end) = lifetimes(snap, d);
        let whole = (start, end.saturating_add(1));
        let (from, to) = opts.range.unwrap_or(whole);
        let from = from.clamp(whole.0, whole.1 - 1);
        let to = to.clamp(from + 1, whole.1);
        let mut sizes: Vec<u64> = lives
            .iter()
            .filter(|l| l.live_in(from, to))
            .map(|l| l.size)
            .collect();
        let allocations = sizes.len() as u64;
        let mut max_bands = opts.max_bands;
        loop {
            let cut = threshold(&mut sizes, max_bands);
            let drawn_at_cut = max_bands.saturating_sub(sizes.iter().filter(|&&s| s > cut).count());
            if let Some(b) = Bands::sweep(
                &lives,
                &order,
                Sweep {
                    clock,
                    device: snap.devices[d].device,
                    from,
                    to,
                    cut,
                    drawn_at_cut,
                    max_pieces: opts.max_pieces,
                },
            ) {
                return Bands { allocations, ..b };
            }
            // Too many pieces: half the bands, the smallest summarised.
            max_bands /= 2;
        }
    }

    fn sweep(lives: &[Life], order: &[u32], s: Sweep) -> Option<Bands> {
        let span = s.to.saturating_sub(s.from).max(1) as f64;
        let column = |t: i64| {
            ((t.max(s.from).saturating_sub(s.from) as f64 / span * SUMMARY_COLUMNS as f64) as usize)
                .min(SUMMARY_COLUMNS - 1)
        };
        let mut out = Bands {
            device: s.device,
            clock: s.clock,
            from: s.from,
            to: s.to,
            bands: Vec::new(),
            pieces: Vec::new(),
            levels: Vec::new(),
            summary: vec![(0, 0, false); SUMMARY_COLUMNS],
            allocations: 0,
            summarised: 0,
            smallest_drawn: u64::MAX,
            peak: 0,
        };
        // Pieces as made, (band, piece), grouped by band at the end; per
        // band its current offset and its last piece in `made`.
        let mut made: Vec<(u32, Piece)> = Vec::new();
        let mut current: Vec<(u64, u32)> = Vec::new();
        let mut band_of: FxHashMap<u32, u32> = FxHashMap::default();
        let mut stack: Vec<u32> = Vec::new();
        let (mut drawn, mut summary) = (0u64, 0u64);
        let mut at_cut = s.drawn_at_cut;
        let mut col = 0usize;
        let mut last_t = s.from;
        for &o in order {
            let (k, close) = (o & !(1 << 31), o & 1 << 31 != 0);
            let l = &lives[k as usize];
            if !l.live_in(s.from, s.to) {
                continue;
            }
            // A clock that never runs back (entries out of time order are
            // counted by the reader).
            let t = if close { l.to } else { l.from }.max(s.from).max(last_t);
            if t >= s.to {
                break;
            }
            last_t = t;
            // Columns before this one hold the state carried into them.
            let c = column(t);
            while col < c {
                col += 1;
                out.summary[col] = (drawn, drawn.saturating_add(summary), summary > 0);
            }
            if !close {
                let alone = l.size > s.cut
                    || l.size == s.cut && {
                        let take = at_cut > 0;
                        at_cut = at_cut.saturating_sub(1);
                        take
                    };
                if alone {
                    let b = out.bands.len() as u32;
                    band_of.insert(k, b);
                    current.push((drawn, made.len() as u32));
                    made.push((
                        b,
                        Piece {
                            from: t,
                            offset: drawn,
                        },
                    ));
                    out.bands.push(Band {
                        size: l.size,
                        requested: l.requested,
                        address: l.address,
                        entry: l.entry,
                        stack: l.stack,
                        from: l.from,
                        to: l.to,
                        freed: l.freed,
                        pieces: (0, 0),
                        drawn: (t, LIVE_AT_END),
                    });
                    out.smallest_drawn = out.smallest_drawn.min(l.size);
                    stack.push(b);
                    drawn = drawn.saturating_add(l.size);
                } else {
                    summary = summary.saturating_add(l.size);
                    out.summarised += 1;
                }
            } else if let Some(b) = band_of.remove(&k) {
                out.bands[b as usize].drawn.1 = t;
                if let Some(i) = stack.iter().rposition(|&x| x == b) {
                    stack.remove(i);
                    for &above in &stack[i..] {
                        let (offset, last) = &mut current[above as usize];
                        *offset = offset.saturating_sub(l.size);
                        if made[*last as usize].1.from == t {
                            made[*last as usize].1.offset = *offset;
                        } else {
                            *last = made.len() as u32;
                            made.push((
                                above,
                                Piece {
                                    from: t,
                                    offset: *offset,
                                },
                            ));
                        }
                    }
                    if made.len() > s.max_pieces {
                        return None;
                    }
                }
                drawn = drawn.saturating_sub(l.size);
            } else {
                summary = summary.saturating_sub(l.size);
            }
            let cell = &mut out.summary[c];
            let top = drawn.saturating_add(summary);
            *cell = (cell.0.min(drawn), cell.1.max(top), cell.2 || summary > 0);
            out.peak = out.peak.max(top);
        }
        while col + 1 < SUMMARY_COLUMNS {
            col += 1;
            out.summary[col] = (drawn, drawn.saturating_add(summary), summary > 0);
        }
        out.finish(made);
        Some(out)
    }

    /// Groups the pieces by band, in time order within each.
    fn finish(&mut self, made: Vec<(u32, Piece)>) {
        let mut start = vec![0u32; self.bands.len() + 1];
        for (b, _) in &made {
            start[*b as usize + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        for (b, band) in self.bands.iter_mut().enumerate() {
            band.pieces = (start[b], start[b + 1]);
        }
        let mut pieces = vec![Piece { from: 0, offset: 0 }; made.len()];
        let mut next = start;
        // `made` is in time order, so each band's pieces stay in it.
        for (b, p) in made {
            pieces[next[b as usize] as usize] = p;
            next[b as usize] += 1;
        }
        self.pieces = pieces;
        if self.bands.is_empty() {
            self.smallest_drawn = 0;
        }
        self.levels = self.build_levels();
    }

    /// Levels from the finest down, each kept only where it has at most
    /// three quarters of the runs of the one finer (else that one serves
    /// its views): at most three times the pieces in all.
    fn build_levels(&self) -> Vec<Level> {
        let mut levels: Vec<Level> = Vec::new();
        let mut finer = self.pieces.len();
        let mut columns = FINEST_COLUMNS;
        while columns >= COARSEST_COLUMNS {
            let level = self.level(columns, levels.last());
            if level.runs.len() * 4 <= finer * 3 {
                finer = level.runs.len();
                levels.push(level);
            }
            columns /= 2;
        }
        levels.reverse();
        levels
    }

    /// The runs of one level, from the exact pieces or a finer level.
    fn level(&self, columns: u64, finer: Option<&Level>) -> Level {
        let span = self.to.saturating_sub(self.from).max(1) as f64;
        let column = |t: i64| (t.saturating_sub(self.from) as f64 / span * columns as f64) as u64;
        let mut runs: Vec<Piece> = Vec::new();
        let mut starts = Vec::with_capacity(self.bands.len() + 1);
        for k in 0..self.bands.len() {
            let first = runs.len();
            starts.push(first as u32);
            let mut merge = |r: Piece| {
                let len = runs.len();
                match runs.last() {
                    Some(last) if len > first && column(last.from) == column(r.from) => {}
                    _ => runs.push(r),
                }
            };
            match finer {
                Some(f) => f.runs[f.starts[k] as usize..f.starts[k + 1] as usize]
                    .iter()
                    .for_each(|&r| merge(r)),
                None => self.pieces(k).iter().for_each(|&p| merge(p)),
            }
        }
        starts.push(runs.len() as u32);
        Level {
            columns,
            runs,
            starts,
        }
    }

    /// A band's pieces, in time order.
    pub fn pieces(&self, b: usize) -> &[Piece] {
        let (a, z) = self.bands[b].pieces;
        &self.pieces[a as usize..z as usize]
    }

    /// Pieces kept in all.
    pub fn piece_count(&self) -> usize {
        self.pieces.len()
    }

    /// Where band `b` is at `t` (its bottom, bytes from the stack's base),
    /// if it is live then.
    pub fn offset_at(&self, b: usize, t: i64) -> Option<u64> {
        let band = &self.bands[b];
        if t < band.drawn.0 || t >= self.end_of(band) {
            return None;
        }
        let pieces = self.pieces(b);
        let i = pieces.partition_point(|p| p.from <= t);
        pieces.get(i.checked_sub(1)?).map(|p| p.offset)
    }

    /// A band's end in the range (the range's end for one live at it).
    fn end_of(&self, band: &Band) -> i64 {
        band.drawn.1.min(self.to)
    }
}

/// Calls `each(piece, its end)` for the pieces (in time order, each until
/// the next, the last until `end`) that overlap the view.
fn in_view(items: &[Piece], end: i64, v: &BandView, mut each: impl FnMut(&Piece, i64)) {
    let first = items
        .partition_point(|p| p.from <= v.from)
        .saturating_sub(1);
    for (i, p) in items.iter().enumerate().skip(first) {
        if p.from >= v.to {
            break;
        }
        let p_end = items.get(i + 1).map_or(end, |n| n.from);
        if p_end > v.from {
            each(p, p_end);
        }
    }
}

/// A view of a build: a time window and the bytes at the top edge, on a
/// grid of `width` × `height` cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BandView {
    pub from: i64,
    pub to: i64,
    pub width: u32,
    pub height: u32,
    pub top: u64,
}

impl Bands {
    /// What each cell of the view shows, row by row from the top
    /// ([`CELL_EMPTY`], [`CELL_SUMMARY`], or band `k` as `k + 1`). A piece
    /// or a band thinner than a cell still takes one, the way the
    /// timeline draws a slice narrower than a pixel; the bands are drawn
    /// over the summary.
    pub fn raster(&self, v: &BandView) -> Vec<u32> {
        let mut cells = Vec::new();
        self.raster_into(v, &mut cells);
        cells
    }

    /// [`Bands::raster`] into a buffer kept from frame to frame.
    pub fn raster_into(&self, v: &BandView, cells: &mut Vec<u32>) {
        let (w, h) = (v.width as usize, v.height as usize);
        cells.clear();
        cells.resize(w * h, CELL_EMPTY);
        if w == 0 || h == 0 || v.to <= v.from {
            return;
        }
        let span = v.to.saturating_sub(v.from) as f64;
        let cells_per_ns = w as f64 / span;
        let x = |t: i64| t.saturating_sub(v.from) as f64 * cells_per_ns;
        let rows_per_byte = h as f64 / v.top.max(1) as f64;
        let rows = |lo: u64, hi: u64| {
            let r0 = ((lo as f64 * rows_per_byte) as usize).min(h);
            let r1 = ((hi as f64 * rows_per_byte).ceil() as usize)
                .max(r0 + 1)
                .min(h);
            (r0, r1)
        };
        let mut fill = |(c0, c1): (usize, usize), (r0, r1): (usize, usize), value: u32| {
            for r in r0..r1 {
                let row = (h - 1 - r) * w;
                for cell in &mut cells[row + c0..row + c1] {
                    *cell = value;
                }
            }
        };
        // `as usize` of a negative float is 0.
        let columns = |t0: i64, t1: i64| {
            let c0 = (x(t0) as usize).min(w - 1);
            (c0, (x(t1).ceil() as usize).clamp(c0 + 1, w))
        };
        self.raster_summary(v, &mut |c, lo, hi| {
            fill((c, c + 1), rows(lo, hi), CELL_SUMMARY)
        });
        // The coarsest level whose columns are at most two cells wide
        // (none: the exact pieces): a move is drawn at most two cells late.
        let cell_ns = span / w as f64;
        let build_ns = self.to.saturating_sub(self.from).max(1) as f64;
        let level = self
            .levels
            .iter()
            .find(|l| build_ns / l.columns as f64 <= 2.0 * cell_ns);
        for (k, band) in self.bands.iter().enumerate() {
            let end = self.end_of(band);
            if band.drawn.0 >= v.to || end <= v.from {
                continue;
            }
            let value = k as u32 + 1;
            let pieces = match level {
                Some(l) => &l.runs[l.starts[k] as usize..l.starts[k + 1] as usize],
                None => self.pieces(k),
            };
            in_view(pieces, end, v, |p, t1| {
                let bytes = rows(p.offset, p.offset.saturating_add(band.size));
                fill(columns(p.from, t1), bytes, value)
            });
        }
    }

    /// The summary band per view column: `each(column, base, top)` where
    /// anything is summarised.
    fn raster_summary(&self, v: &BandView, each: &mut dyn FnMut(usize, u64, u64)) {
        let w = v.width as usize;
        let span = self.to.saturating_sub(self.from).max(1) as f64;
        let col =
            |t: i64| (t.saturating_sub(self.from) as f64 / span * SUMMARY_COLUMNS as f64).floor();
        let view_span = v.to.saturating_sub(v.from) as f64;
        for c in 0..w {
            let t0 = v
                .from
                .saturating_add((view_span * c as f64 / w as f64) as i64);
            let t1 = v
                .from
                .saturating_add((view_span * (c + 1) as f64 / w as f64) as i64);
            if t1 <= self.from || t0 >= self.to {
                continue;
            }
            let s0 = (col(t0).max(0.0) as usize).min(SUMMARY_COLUMNS - 1);
            let s1 = (col(t1).ceil() as usize).clamp(s0 + 1, SUMMARY_COLUMNS);
            let (mut lo, mut hi, mut any) = (u64::MAX, 0, false);
            for &(base, top, some) in &self.summary[s0..s1] {
                if some {
                    lo = lo.min(base);
                    hi = hi.max(top);
                    any = true;
                }
            }
            if any {
                each(c, lo, hi);
            }
        }
    }

    /// What a cell of [`Bands::raster`] shows, in words.
    pub fn describe(&self, snap: &MemorySnapshot, cell: u32, frames: usize) -> Option<BandInfo> {
        if cell == CELL_EMPTY {
            return None;
        }
        if cell == CELL_SUMMARY {
            return Some(BandInfo {
                band: None,
                size: 0,
                requested: 0,
                address: 0,
                from: None,
                to: None,
                freed: false,
                frames: vec![format!(
                    "{} allocations of {} bytes or less, drawn as one band (the {} largest of {} are drawn alone); choose a shorter range to draw them alone",
                    self.summarised,
                    self.smallest_drawn,
                    self.bands.len(),
                    self.allocations
                )],
            });
        }
        let k = cell as usize - 1;
        let b = self.bands.get(k)?;
        let mut stack: Vec<String> = snap
            .stack(b.stack)
            .iter()
            .take(frames)
            .map(|&f| snap.frame_text(f))
            .collect();
        if stack.is_empty() {
            stack.push("(no stack recorded)".into());
        }
        Some(BandInfo {
            band: Some(k as u32),
            size: b.size,
            requested: b.requested,
            address: b.address,
            from: (b.entry != BEFORE_TRACE).then_some(b.from),
            to: (b.to != LIVE_AT_END).then_some(b.to),
            freed: b.freed,
            frames: stack,
        })
    }
}

/// One band (or the summary) in words: what hovering it shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BandInfo {
    /// The band's number (`None`: the summary band).
    pub band: Option<u32>,
    pub size: u64,
    pub requested: u64,
    pub address: u64,
    /// Made at (`None`: before the trace), on the build's clock.
    pub from: Option<i64>,
    /// Freed at (`None`: live at the end), on the build's clock.
    pub to: Option<i64>,
    pub freed: bool,
    /// The stack, innermost first (for the summary, what it holds).
    pub frames: Vec<String>,
}

/// A sweep's fixed inputs.
struct Sweep {
    clock: Clock,
    device: i64,
    from: i64,
    to: i64,
    /// Sizes above are drawn alone; at it, the first `drawn_at_cut`.
    cut: u64,
    drawn_at_cut: usize,
    max_pieces: usize,
}

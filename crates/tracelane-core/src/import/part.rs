//! A later part of a Chrome-JSON file, parsed somewhere else and carried
//! over as bytes.
//!
//! In a browser a second core is only reachable through a second Web Worker
//! with its own wasm memory, so the part it parses cannot be handed over by
//! reference as the native two-thread import does: it is encoded here into
//! one byte buffer (posted between the workers without a copy in JS), then
//! decoded and merged exactly as the native import merges its second half.
//!
//! What travels is the parser *before* `finish` — columns of rows, strings,
//! lanes, pending flows and open `B` events, counts and warnings — not the
//! caches that only speed parsing up. The format is private to one build of
//! tracelane (both ends are the same wasm); anything unreadable decodes to
//! `None`, and the caller then parses those bytes itself.

use super::append::Remap;
use super::builder::{Builder, FlowEvent, PartRows, Row};
use super::chrome::Position;
use crate::category::Category;
use crate::error::Warning;
use crate::model::*;

const MAGIC: &[u8; 8] = b"TLPART04";

/// Where a part lies in its file: it starts at byte `start` inside the
/// event list (`bare`: of a bare array) and holds `json_bytes` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) start: u64,
    pub(super) bare: bool,
    pub(super) json_bytes: u64,
}

/// The index in `window` of the first `{` that follows a `,` and a line
/// break, both inside the window: there a new object of an array begins
/// (a raw line break never occurs inside a JSON string). Kineto writes one
/// event per line, so in a trace this is the start of an event — unless the
/// file is pretty-printed with nested objects on their own lines; the merge
/// ([`super::Importer::absorb_part`]) then finds the first part stopped
/// inside an event and does not use the part.
pub fn event_boundary(window: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < window.len() {
        let nl = i + memchr::memchr(b'\n', &window[i..])?;
        let before = window[..nl].iter().rposition(|c| !c.is_ascii_whitespace());
        let after = nl + window[nl..].iter().position(|c| !c.is_ascii_whitespace())?;
        if before.is_some_and(|k| window[k] == b',') && window[after] == b'{' {
            return Some(after);
        }
        i = nl + 1;
    }
    None
}

pub(super) struct Writer(pub(super) Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn opt_i64(&mut self, v: Option<i64>) {
        self.u8(v.is_some() as u8);
        self.i64(v.unwrap_or(0));
    }
    fn opt_str(&mut self, v: Option<StrId>) {
        self.u32(v.map_or(u32::MAX, |s| s.0));
    }
    fn lane(&mut self, l: LaneId) {
        match l {
            LaneId::Int(v) => {
                self.u8(0);
                self.i64(v);
            }
            LaneId::Str(s) => {
                self.u8(1);
                self.i64(s.0 as i64);
            }
        }
    }
    /// A column: its length, then each value's fixed-size little-endian form.
    fn col<T: Copy, const N: usize>(&mut self, v: &[T], f: impl Fn(T) -> [u8; N]) {
        self.rows(v.iter().copied(), f);
    }
    /// A [`DefaultColumn`], every row written as [`Self::col`] writes them.
    fn default_col<T: Copy + PartialEq, const N: usize>(
        &mut self,
        v: &DefaultColumn<T>,
        f: impl Fn(T) -> [u8; N],
    ) {
        self.rows(v.iter(), f);
    }
    fn rows<T, const N: usize>(
        &mut self,
        v: impl ExactSizeIterator<Item = T>,
        f: impl Fn(T) -> [u8; N],
    ) {
        self.u64(v.len() as u64);
        self.0.reserve(v.len() * N);
        for x in v {
            self.0.extend_from_slice(&f(x));
        }
    }
}

pub(super) struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.b.get(self.at..end)?;
        self.at = end;
        Some(s)
    }
    fn arr<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn bool(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    fn u32(&mut self) -> Option<u32> {
        self.arr().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.arr().map(u64::from_le_bytes)
    }
    fn i64(&mut self) -> Option<i64> {
        self.arr().map(i64::from_le_bytes)
    }
    fn len(&mut self) -> Option<usize> {
        usize::try_from(self.u64()?).ok()
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.len()?;
        self.take(n)
    }
    fn string(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }
    fn opt_i64(&mut self) -> Option<Option<i64>> {
        let some = self.bool()?;
        let v = self.i64()?;
        Some(some.then_some(v))
    }
    fn opt_str(&mut self) -> Option<Option<StrId>> {
        let v = self.u32()?;
        Some((v != u32::MAX).then_some(StrId(v)))
    }
    fn lane(&mut self) -> Option<LaneId> {
        match self.u8()? {
            0 => Some(LaneId::Int(self.i64()?)),
            1 => Some(LaneId::Str(StrId(u32::try_from(self.i64()?).ok()?))),
            _ => None,
        }
    }
    /// A column's encoded values, each accepted by `ok`; with `n`, it must
    /// hold that many (a column of the same table as the first).
    fn raw_col<const N: usize>(
        &mut self,
        n: Option<usize>,
        ok: impl Fn([u8; N]) -> bool,
    ) -> Option<&'a [u8]> {
        let len = self.len()?;
        if n.is_some_and(|n| n != len) {
            return None;
        }
        let raw = self.take(len.checked_mul(N)?)?;
        vals(raw).all(ok).then_some(raw)
    }
    fn col<T, const N: usize>(&mut self, f: impl Fn([u8; N]) -> Option<T>) -> Option<Vec<T>> {
        let n = self.len()?;
        let raw = self.take(n.checked_mul(N)?)?;
        // Sized once: collecting into `Option<Vec<_>>` would grow the vector
        // by doubling (its size hint is 0).
        let mut out = Vec::with_capacity(n);
        for c in raw.chunks_exact(N) {
            out.push(f(c.try_into().expect("chunks of N"))?);
        }
        Some(out)
    }
}

/// The fixed-size values of an encoded column.
fn vals<const N: usize>(raw: &[u8]) -> impl ExactSizeIterator<Item = [u8; N]> + '_ {
    raw.chunks_exact(N)
        .map(|c| c.try_into().expect("chunks of N bytes"))
}

/// Ids as a part's encoding writes them, re-numbered.
impl Remap<'_> {
    fn str(&self, a: [u8; 4]) -> StrId {
        match u32::from_le_bytes(a) {
            u32::MAX => NO_STR,
            k => self.strings[k as usize],
        }
    }
    fn track(&self, a: [u8; 4]) -> TrackIdx {
        self.tracks[u32::from_le_bytes(a) as usize]
    }
    fn args(&self, a: [u8; 12]) -> (u64, u32) {
        let (off, len) = unpair(a);
        if len == 0 {
            (off, len)
        } else {
            (off + self.arena_base, len)
        }
    }
}

struct RawSlices<'a> {
    track: &'a [u8],
    start_ns: &'a [u8],
    dur_ns: &'a [u8],
    name: &'a [u8],
    cat: &'a [u8],
    category: &'a [u8],
    external_id: &'a [u8],
    correlation: &'a [u8],
    stream: &'a [u8],
    input_dims: &'a [u8],
    sequence_nr: &'a [u8],
    device: &'a [u8],
    fwd_thread: &'a [u8],
    input_types: &'a [u8],
    concrete_inputs: &'a [u8],
    args_range: &'a [u8],
    source: &'a [u8],
    file_order: &'a [u8],
}

struct RawInstants<'a> {
    track: &'a [u8],
    ts_ns: &'a [u8],
    name: &'a [u8],
    cat: &'a [u8],
    args_range: &'a [u8],
    source: &'a [u8],
}

struct RawCounters<'a> {
    process: &'a [u8],
    series: &'a [u8],
    ts_ns: &'a [u8],
    value: &'a [u8],
}

/// A decoded part's columns, still in its encoding (already checked).
pub(super) struct RawColumns<'a> {
    slices: RawSlices<'a>,
    instants: RawInstants<'a>,
    counters: RawCounters<'a>,
    arena: &'a [u8],
}

impl PartRows for RawColumns<'_> {
    /// Appends the part's rows to `t`'s columns, re-numbered by `m` — what
    /// `Builder::absorb` does with an in-memory part, without building the
    /// part's own columns first.
    fn append_to(self, t: &mut Trace, m: &Remap) {
        let i64s = |raw| vals(raw).map(i64::from_le_bytes);
        let (s, r) = (&mut t.slices, &self.slices);
        s.track.extend(vals(r.track).map(|a| m.track(a)));
        s.start_ns.extend(i64s(r.start_ns));
        s.dur_ns.extend(i64s(r.dur_ns));
        s.name.extend(vals(r.name).map(|a| m.str(a)));
        s.cat.extend(vals(r.cat).map(|a| m.str(a)));
        s.category
            .extend(vals(r.category).map(|[c]: [u8; 1]| Category::ALL[c as usize]));
        s.external_id.extend(i64s(r.external_id));
        s.correlation.extend(i64s(r.correlation));
        s.stream.extend(i64s(r.stream));
        s.input_dims.extend(vals(r.input_dims).map(|a| m.str(a)));
        s.sequence_nr.extend(i64s(r.sequence_nr));
        s.device.extend(i64s(r.device));
        s.fwd_thread.extend(i64s(r.fwd_thread));
        s.input_types.extend(vals(r.input_types).map(|a| m.str(a)));
        s.concrete_inputs
            .extend(vals(r.concrete_inputs).map(|a| m.str(a)));
        s.args_range.extend(vals(r.args_range).map(|a| m.args(a)));
        s.source.extend(vals(r.source).map(unpair));
        s.file_order
            .extend(vals(r.file_order).map(|a| u32::from_le_bytes(a) + m.order_base));
        let (i, r) = (&mut t.instants, &self.instants);
        i.track.extend(vals(r.track).map(|a| m.track(a)));
        i.ts_ns.extend(i64s(r.ts_ns));
        i.name.extend(vals(r.name).map(|a| m.str(a)));
        i.cat.extend(vals(r.cat).map(|a| m.str(a)));
        i.args_range.extend(vals(r.args_range).map(|a| m.args(a)));
        i.source.extend(vals(r.source).map(unpair));
        let (c, r) = (&mut t.counters, &self.counters);
        c.process
            .extend(vals(r.process).map(|a| m.processes[u32::from_le_bytes(a) as usize]));
        c.series.extend(vals(r.series).map(|a| m.str(a)));
        c.ts_ns.extend(i64s(r.ts_ns));
        c.value.extend(vals(r.value).map(f64::from_le_bytes));
        t.args_arena.extend_from_slice(self.arena);
    }
}

fn category_code(c: Category) -> u8 {
    Category::ALL
        .iter()
        .position(|&k| k == c)
        .expect("every category is in Category::ALL") as u8
}

fn category_of(code: u8) -> Option<Category> {
    Category::ALL.get(code as usize).copied()
}

fn pair(r: (u64, u32)) -> [u8; 12] {
    let mut a = [0u8; 12];
    a[..8].copy_from_slice(&r.0.to_le_bytes());
    a[8..].copy_from_slice(&r.1.to_le_bytes());
    a
}

fn unpair(a: [u8; 12]) -> (u64, u32) {
    let [o0, o1, o2, o3, o4, o5, o6, o7, l0, l1, l2, l3] = a;
    (
        u64::from_le_bytes([o0, o1, o2, o3, o4, o5, o6, o7]),
        u32::from_le_bytes([l0, l1, l2, l3]),
    )
}

fn write_row(w: &mut Writer, r: &Row) {
    w.i64(r.start_ns);
    w.u32(r.name.0);
    w.u32(r.cat.0);
    w.u8(category_code(r.category));
    w.0.extend_from_slice(&pair(r.args));
    for v in [r.ext, r.corr, r.stream] {
        w.i64(v);
    }
    w.u32(r.dims.0);
    w.u32(r.types.0);
    w.u32(r.concrete.0);
    for v in [r.seq, r.device, r.fwd_thread] {
        w.i64(v);
    }
    w.u32(r.order);
    w.0.extend_from_slice(&pair(r.source));
}

fn read_row(r: &mut Reader) -> Option<Row> {
    Some(Row {
        start_ns: r.i64()?,
        name: StrId(r.u32()?),
        cat: StrId(r.u32()?),
        category: category_of(r.u8()?)?,
        args: unpair(r.arr()?),
        ext: r.i64()?,
        corr: r.i64()?,
        stream: r.i64()?,
        dims: StrId(r.u32()?),
        types: StrId(r.u32()?),
        concrete: StrId(r.u32()?),
        seq: r.i64()?,
        device: r.i64()?,
        fwd_thread: r.i64()?,
        order: r.u32()?,
        source: unpair(r.arr()?),
    })
}

/// Encodes what a parser that has read a part of a file (and not finished)
/// built — `b`, its position `at` — with `rest`, the bytes at its end it
/// could not use (kept for the truncation warning's excerpt).
pub(super) fn encode(b: &Builder, at: Position, span: Span, rest: &[u8]) -> Vec<u8> {
    let t = &b.trace;
    debug_assert!(t.links.op.is_empty() && t.flows.id.is_empty() && t.slices.depth.is_empty());
    let mut w = Writer(Vec::with_capacity(
        64 + t.slices.len() * 160 + t.args_arena.len() + t.strings.heap_bytes(),
    ));
    w.0.extend_from_slice(MAGIC);
    w.u64(span.start);
    w.u8(span.bare as u8);
    w.u64(span.json_bytes);
    w.u8(at.state);
    w.u64(at.consumed);
    w.u8(at.saw_trace_events as u8);
    w.bytes(&rest[..rest.len().min(4096)]);

    w.u64(t.strings.len() as u64);
    for k in 0..t.strings.len() {
        w.bytes(t.strings.get(StrId(k as u32)).as_bytes());
    }
    w.u64(t.processes.len() as u64);
    for pr in &t.processes {
        w.lane(pr.pid);
        w.opt_str(pr.name);
        w.opt_str(pr.labels);
        w.opt_i64(pr.sort_index);
    }
    w.u64(t.tracks.len() as u64);
    for tr in &t.tracks {
        w.u32(tr.process.0);
        w.lane(tr.tid);
        w.u8(matches!(tr.kind, TrackKind::DeviceStream) as u8);
        w.opt_str(tr.name);
        w.opt_i64(tr.sort_index);
        w.u8(tr.nesting);
    }
    let s = &t.slices;
    w.col(&s.track, |x| x.0.to_le_bytes());
    w.col(&s.start_ns, i64::to_le_bytes);
    w.col(&s.dur_ns, i64::to_le_bytes);
    w.col(&s.name, |x| x.0.to_le_bytes());
    w.col(&s.cat, |x| x.0.to_le_bytes());
    w.col(&s.category, |c| [category_code(c)]);
    w.default_col(&s.external_id, i64::to_le_bytes);
    w.default_col(&s.correlation, i64::to_le_bytes);
    w.default_col(&s.stream, i64::to_le_bytes);
    w.default_col(&s.input_dims, |x| x.0.to_le_bytes());
    w.default_col(&s.sequence_nr, i64::to_le_bytes);
    w.default_col(&s.device, i64::to_le_bytes);
    w.default_col(&s.fwd_thread, i64::to_le_bytes);
    w.default_col(&s.input_types, |x| x.0.to_le_bytes());
    w.default_col(&s.concrete_inputs, |x| x.0.to_le_bytes());
    w.default_col(&s.args_range, pair);
    w.default_col(&s.source, pair);
    w.col(&s.file_order, u32::to_le_bytes);
    let i = &t.instants;
    w.col(&i.track, |x| x.0.to_le_bytes());
    w.col(&i.ts_ns, i64::to_le_bytes);
    w.col(&i.name, |x| x.0.to_le_bytes());
    w.col(&i.cat, |x| x.0.to_le_bytes());
    w.col(&i.args_range, pair);
    w.col(&i.source, pair);
    let c = &t.counters;
    w.col(&c.process, |x| x.0.to_le_bytes());
    w.col(&c.series, |x| x.0.to_le_bytes());
    w.col(&c.ts_ns, i64::to_le_bytes);
    w.col(&c.value, f64::to_le_bytes);
    w.bytes(&t.args_arena);
    w.u64(t.header.len() as u64);
    for (k, v) in &t.header {
        w.bytes(k.as_bytes());
        w.bytes(v.as_bytes());
    }

    w.u8(b.diag.truncated as u8);
    w.u64(b.diag.warnings.len() as u64);
    for (kind, warning) in &b.diag.warnings {
        w.bytes(kind.as_bytes());
        w.u64(warning.count);
        w.bytes(warning.example.as_bytes());
    }
    w.u64(b.flows.len() as u64);
    for f in &b.flows {
        w.u32(f.cat.0);
        w.u64(f.id);
        w.u8(f.ph);
        w.u32(f.track.0);
        w.i64(f.ts_ns);
        w.u8(f.enclosing as u8);
        w.u8(f.named as u8);
    }
    // Open `B` events in file order, so the decoded map is the same whatever
    // the hash map's iteration order.
    let mut open: Vec<(&TrackIdx, &Vec<Row>)> = b.open_b.iter().collect();
    open.sort_by_key(|(t, _)| **t);
    w.u64(open.len() as u64);
    for (track, rows) in open {
        w.u32(track.0);
        w.u64(rows.len() as u64);
        for r in rows {
            write_row(&mut w, r);
        }
    }
    w.u64(b.events_seen);
    w.u64(b.non_object_entries);
    w.col(&b.device_marked, |x| [x as u8]);
    w.col(&b.phase_counts, u64::to_le_bytes);
    w.col(&b.cat_counts, u64::to_le_bytes);
    w.opt_i64(b.base_time_ns);
    w.i64(b.max_ts_ns);
    w.u8(b.keep_op_args as u8);
    w.u8(b.args_in_source as u8);
    w.0
}

/// A part as [`decode`] reads it back.
pub(super) struct Decoded<'a> {
    pub(super) builder: Builder,
    pub(super) at: Position,
    pub(super) span: Span,
    pub(super) rest: Vec<u8>,
    pub(super) raw: RawColumns<'a>,
}

/// What a part's parser built (its model's columns left in `bytes`, as
/// [`RawColumns`]), its position, span and unused tail that [`encode`]
/// wrote; `None` if the bytes are not such an encoding or do not hang
/// together.
pub(super) fn decode(bytes: &[u8]) -> Option<Decoded<'_>> {
    let mut r = Reader { b: bytes, at: 0 };
    if r.take(MAGIC.len())? != MAGIC {
        return None;
    }
    let span = Span {
        start: r.u64()?,
        bare: r.bool()?,
        json_bytes: r.u64()?,
    };
    let at = Position {
        state: r.u8()?,
        consumed: r.u64()?,
        saw_trace_events: r.bool()?,
    };
    let rest = r.bytes()?.to_vec();

    let mut b = Builder::default();
    let t = &mut b.trace;
    for _ in 0..r.len()? {
        let s = std::str::from_utf8(r.bytes()?).ok()?;
        t.strings.intern(s);
    }
    let n_strings = t.strings.len() as u32;
    let known = |s: StrId| s == NO_STR || s.0 < n_strings;
    read_lanes(&mut r, t)?;
    let n_tracks = t.tracks.len() as u32;
    let n_processes = t.processes.len() as u32;
    // Columns are checked value by value here but not copied: the merge
    // reads them straight from the encoding into the model's columns.
    let track = |a: [u8; 4]| u32::from_le_bytes(a) < n_tracks;
    let string = |a: [u8; 4]| known(StrId(u32::from_le_bytes(a)));
    let any8 = |_: [u8; 8]| true;
    let any12 = |_: [u8; 12]| true;
    let any4 = |_: [u8; 4]| true;
    let s_track = r.raw_col(None, track)?;
    let n = Some(s_track.len() / 4);
    let slices = RawSlices {
        track: s_track,
        start_ns: r.raw_col(n, any8)?,
        dur_ns: r.raw_col(n, any8)?,
        name: r.raw_col(n, string)?,
        cat: r.raw_col(n, string)?,
        category: r.raw_col(n, |[c]: [u8; 1]| category_of(c).is_some())?,
        external_id: r.raw_col(n, any8)?,
        correlation: r.raw_col(n, any8)?,
        stream: r.raw_col(n, any8)?,
        input_dims: r.raw_col(n, string)?,
        sequence_nr: r.raw_col(n, any8)?,
        device: r.raw_col(n, any8)?,
        fwd_thread: r.raw_col(n, any8)?,
        input_types: r.raw_col(n, string)?,
        concrete_inputs: r.raw_col(n, string)?,
        args_range: r.raw_col(n, any12)?,
        source: r.raw_col(n, any12)?,
        file_order: r.raw_col(n, any4)?,
    };
    let i_track = r.raw_col(None, track)?;
    let n = Some(i_track.len() / 4);
    let instants = RawInstants {
        track: i_track,
        ts_ns: r.raw_col(n, any8)?,
        name: r.raw_col(n, string)?,
        cat: r.raw_col(n, string)?,
        args_range: r.raw_col(n, any12)?,
        source: r.raw_col(n, any12)?,
    };
    let c_process = r.raw_col(None, |a: [u8; 4]| u32::from_le_bytes(a) < n_processes)?;
    let n = Some(c_process.len() / 4);
    let counters = RawCounters {
        process: c_process,
        series: r.raw_col(n, string)?,
        ts_ns: r.raw_col(n, any8)?,
        value: r.raw_col(n, any8)?,
    };
    let arena = r.bytes()?;
    let in_arena = |a: [u8; 12]| {
        let (off, len) = unpair(a);
        len == 0
            || off
                .checked_add(len as u64)
                .is_some_and(|end| end <= arena.len() as u64)
    };
    if !vals(slices.args_range).all(in_arena) || !vals(instants.args_range).all(in_arena) {
        return None;
    }
    let raw = RawColumns {
        slices,
        instants,
        counters,
        arena,
    };
    for _ in 0..r.len()? {
        let k = r.string()?;
        let v = r.string()?;
        t.header.push((k, v));
    }

    read_pending(&mut r, &mut b, &in_arena)?;
    b.events_seen = r.u64()?;
    b.non_object_entries = r.u64()?;
    b.device_marked = r.col(|[x]: [u8; 1]| Some(x != 0))?;
    b.phase_counts = r.col(|a| Some(u64::from_le_bytes(a)))?;
    b.cat_counts = r.col(|a| Some(u64::from_le_bytes(a)))?;
    b.base_time_ns = r.opt_i64()?;
    b.max_ts_ns = r.i64()?;
    b.keep_op_args = r.bool()?;
    b.args_in_source = r.bool()?;
    let counts_ok = b.device_marked.len() == b.trace.tracks.len()
        && (b.phase_counts.is_empty() || b.phase_counts.len() == 256)
        && b.cat_counts.len() <= n_strings as usize;
    if !counts_ok || r.at != bytes.len() {
        return None;
    }
    Some(Decoded {
        builder: b,
        at,
        span,
        rest,
        raw,
    })
}

/// The processes and tracks of a part, their names checked against its
/// strings.
fn read_lanes(r: &mut Reader, t: &mut Trace) -> Option<()> {
    let n_strings = t.strings.len() as u32;
    let known = |s: StrId| s == NO_STR || s.0 < n_strings;
    let known_lane = |l: LaneId| match l {
        LaneId::Str(s) => known(s),
        LaneId::Int(_) => true,
    };
    for _ in 0..r.len()? {
        let pid = r.lane()?;
        let (name, labels, sort_index) = (r.opt_str()?, r.opt_str()?, r.opt_i64()?);
        if !known_lane(pid) || !name.is_none_or(known) || !labels.is_none_or(known) {
            return None;
        }
        t.processes.push(Process {
            pid,
            name,
            labels,
            sort_index,
        });
    }
    for _ in 0..r.len()? {
        let process = ProcessIdx(r.u32()?);
        let tid = r.lane()?;
        let kind = if r.bool()? {
            TrackKind::DeviceStream
        } else {
            TrackKind::HostThread
        };
        let (name, sort_index, nesting) = (r.opt_str()?, r.opt_i64()?, r.u8()?);
        if process.0 as usize >= t.processes.len() || !known_lane(tid) || !name.is_none_or(known) {
            return None;
        }
        t.tracks.push(Track {
            process,
            tid,
            kind,
            name,
            sort_index,
            slices: 0..0,
            max_depth: 0,
            nesting,
        });
    }
    Some(())
}

/// What the part's builder holds beyond its columns: truncation, warnings,
/// flows not yet bound, and `B` events still open per track — each checked
/// against the part's strings, tracks and args arena.
fn read_pending(
    r: &mut Reader,
    b: &mut Builder,
    in_arena: &dyn Fn([u8; 12]) -> bool,
) -> Option<()> {
    let n_strings = b.trace.strings.len() as u32;
    let n_tracks = b.trace.tracks.len() as u32;
    let known = |s: StrId| s == NO_STR || s.0 < n_strings;
    b.diag.truncated = r.bool()?;
    for _ in 0..r.len()? {
        // A kind this build does not know: the part is not merged.
        let kind = crate::warnings::by_name(std::str::from_utf8(r.bytes()?).ok()?)?;
        let count = r.u64()?;
        let example = r.string()?;
        b.diag.warnings.insert(
            kind.name,
            Warning {
                kind,
                count,
                example,
            },
        );
    }
    for _ in 0..r.len()? {
        let f = FlowEvent {
            cat: StrId(r.u32()?),
            id: r.u64()?,
            ph: r.u8()?,
            track: TrackIdx(r.u32()?),
            ts_ns: r.i64()?,
            enclosing: r.bool()?,
            named: r.bool()?,
        };
        let named_ok = !f.named || known(StrId(f.id as u32));
        if !known(f.cat) || f.track.0 >= n_tracks || !named_ok {
            return None;
        }
        b.flows.push(f);
    }
    for _ in 0..r.len()? {
        let track = TrackIdx(r.u32()?);
        if track.0 >= n_tracks {
            return None;
        }
        let mut rows = Vec::new();
        for _ in 0..r.len()? {
            let row = read_row(r)?;
            let strings_ok = [row.name, row.cat, row.dims, row.types, row.concrete]
                .into_iter()
                .all(known);
            if !strings_ok || !in_arena(pair(row.args)) {
                return None;
            }
            rows.push(row);
        }
        b.open_b.insert(track, rows);
    }
    Some(())
}

//! Chrome trace-event JSON as PyTorch's profiler (Kineto) writes it.
//!
//! Supported: the object form `{"traceEvents": [...], ...}` with header keys
//! in any order and the bare-array form `[...]`; phases `X`, `B`/`E`, `i`/`I`/`R`,
//! `C`, `s`/`t`/`f`, `M`; `pid`/`tid` as integers or strings. `ts`/`dur` are
//! microseconds whatever `displayTimeUnit` says; they become integer
//! nanoseconds exactly from their decimal text. Other phases (async `b`/`e`/`n`,
//! samples, object snapshots) are counted in the diagnostics and skipped.
//!
//! The parser is push-based: bytes arrive in chunks ([`ChromeParser::feed`]),
//! each complete event is turned into model rows at once, and only the
//! incomplete tail of the input is kept between chunks.

use rustc_hash::FxHashMap;

use super::scan::{self, decode, int_text, micros_text_to_ns, Scan, StrSpan};
use crate::category::{self, Category};
use crate::error::{excerpt, Diagnostics, ImportError, Warning};
use crate::model::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    Start,
    ObjectKey,
    Events {
        bare: bool,
    },
    Done,
    /// Broken JSON after some events: the rest of the input is ignored
    /// (already reported once).
    Abandoned,
}

/// The header keys worth keeping (others are skipped without parsing).
const KEPT_HEADER_KEYS: &[&str] = &[
    "schemaVersion",
    "displayTimeUnit",
    "baseTimeNanoseconds",
    "deviceProperties",
    "distributedInfo",
    "traceName",
    "record_shapes",
    "profile_memory",
    "with_stack",
    "cupti_version",
    "cuda_runtime_version",
    "cuda_driver_version",
    "hostname",
    "host_name",
];

/// One event's fields as spans into the current buffer.
#[derive(Default)]
struct RawEvent {
    ph: u8,
    name: Option<StrSpan>,
    cat: Option<StrSpan>,
    pid: Option<RawLane>,
    tid: Option<RawLane>,
    ts: Option<(usize, usize)>,
    dur: Option<(usize, usize)>,
    id: Option<RawLane>,
    bp_enclosing: bool,
    args: Option<(usize, usize)>,
    external_id: Option<i64>,
    correlation: Option<i64>,
    stream: Option<i64>,
    seq: Option<i64>,
    device: Option<i64>,
    fwd_thread: Option<i64>,
    input_dims: Option<(usize, usize)>,
    input_types: Option<(usize, usize)>,
    arg_name: Option<StrSpan>,
    arg_labels: Option<StrSpan>,
    sort_index: Option<i64>,
}

#[derive(Clone, Copy)]
enum RawLane {
    Int(i64),
    Str(StrSpan),
}

/// A slice row waiting for its duration (an open `B`, or an `X` being added).
pub(super) struct Row {
    pub(super) start_ns: i64,
    pub(super) name: StrId,
    pub(super) cat: StrId,
    pub(super) category: Category,
    pub(super) args: (u64, u32),
    pub(super) ext: i64,
    pub(super) corr: i64,
    pub(super) stream: i64,
    pub(super) dims: StrId,
    pub(super) types: StrId,
    pub(super) seq: i64,
    pub(super) device: i64,
    pub(super) fwd_thread: i64,
    pub(super) order: u32,
    pub(super) source: (u64, u32),
}

pub(super) struct FlowEvent {
    pub(super) cat: StrId,
    pub(super) id: u64,
    pub(super) ph: u8,
    pub(super) track: TrackIdx,
    pub(super) ts_ns: i64,
    pub(super) enclosing: bool,
    /// `id` is a string id (bit 63 set) standing for a non-numeric flow id;
    /// a merge must re-map it with the other strings.
    pub(super) named: bool,
}

/// Streaming Chrome-JSON parser that builds the model as events arrive.
pub struct ChromeParser {
    pub(super) state: State,
    pub(crate) b: Builder,
    /// Bytes consumed before the current buffer (for error offsets).
    pub(super) consumed: u64,
    pub(super) saw_trace_events: bool,
}

impl Default for ChromeParser {
    fn default() -> Self {
        Self::new()
    }
}

impl ChromeParser {
    pub fn new() -> Self {
        ChromeParser {
            state: State::Start,
            b: Builder::default(),
            consumed: 0,
            saw_trace_events: false,
        }
    }

    /// Parses as much of `buf` as forms complete values and returns how many
    /// bytes were consumed; the caller keeps the rest and passes it again
    /// with more bytes appended. `last` says no more bytes will come.
    pub fn feed(&mut self, buf: &[u8], last: bool) -> Result<usize, ImportError> {
        let mut i = 0usize;
        loop {
            let step = self.step(buf, i, last);
            match step {
                Ok(Some(next)) => i = next,
                Ok(None) => break,
                Err(Scan::Incomplete) => break,
                Err(Scan::Syntax(msg)) => {
                    let at = self.consumed + i as u64;
                    if self.b.events_seen > 0 {
                        // Keep what was read; the rest of the file is unreadable.
                        self.b.diag.warn(
                            "syntax_after_events",
                            || format!("broken JSON at byte {at} ({msg}); events after it were not read"),
                            || excerpt(&buf[i..]),
                        );
                        self.b.diag.truncated = true;
                        self.state = State::Abandoned;
                        self.consumed += buf.len() as u64;
                        return Ok(buf.len());
                    }
                    return Err(ImportError::Syntax {
                        offset: at,
                        message: msg.to_string(),
                    });
                }
            }
        }
        self.consumed += i as u64;
        Ok(i)
    }

    /// A parser that starts inside the event list, at byte `offset` of the
    /// input (for parsing the second half of a file on another thread).
    pub(crate) fn in_events(bare: bool, offset: u64) -> Self {
        ChromeParser {
            state: State::Events { bare },
            b: Builder::default(),
            consumed: offset,
            saw_trace_events: true,
        }
    }

    /// Whether the parser stands between events of the event list.
    pub(crate) fn between_events(&self) -> bool {
        matches!(self.state, State::Events { .. }) && self.b.open_b.values().all(|v| v.is_empty())
    }

    /// Appends what `later` parsed from the bytes right after this parser's
    /// last event, and takes over its position in the file. A decoded
    /// part's columns still in its encoding (`raw`) go straight into this
    /// model's columns.
    pub(super) fn absorb_with(
        &mut self,
        later: ChromeParser,
        raw: Option<super::part::RawColumns>,
    ) {
        self.state = later.state;
        self.consumed = later.consumed;
        self.b.absorb(later.b, raw);
    }

    /// Whether this parser, started mid-file, met an `E` whose `B` may lie
    /// before its start (then its work cannot be merged).
    pub(crate) fn needs_earlier_context(&self) -> bool {
        self.b.diag.warning_count("e_without_b") > 0
    }

    /// Called once all bytes were fed; `rest` is what `feed` did not consume.
    pub fn finish(mut self, rest: &[u8]) -> Result<Trace, ImportError> {
        match self.state {
            State::Done | State::Abandoned => {}
            State::Start => return Err(ImportError::Empty),
            State::ObjectKey if !self.saw_trace_events => {
                return Err(ImportError::NotATrace {
                    reason: "the JSON ends before a traceEvents array was found".into(),
                })
            }
            _ if self.b.events_seen == 0 => {
                return Err(ImportError::NotATrace {
                    reason: "the JSON is cut off before the first complete event".into(),
                })
            }
            _ => {
                self.b.diag.truncated = true;
                let events = self.b.events_seen;
                self.b.diag.warn(
                    "truncated",
                    || format!("the file is cut off after {events} complete events; kept what was complete (a job killed while writing its trace?)"),
                    || excerpt(rest.trim_ascii_start()),
                );
            }
        }
        if !self.saw_trace_events {
            return Err(ImportError::NotATrace {
                reason: "a JSON object without a traceEvents array".into(),
            });
        }
        if self.b.events_seen == 0 && self.b.non_object_entries > 0 {
            return Err(ImportError::NotATrace {
                reason: "the event list holds no event objects".into(),
            });
        }
        Ok(self.b.finish())
    }

    /// One step of the top-level state machine. `Ok(Some(i))`: progress to
    /// `i`; `Ok(None)`: nothing more to do in this buffer.
    fn step(&mut self, b: &[u8], i: usize, last: bool) -> Result<Option<usize>, Scan> {
        let i = scan::skip_ws(b, i);
        if i >= b.len() {
            return Ok(None);
        }
        match self.state {
            State::Start => {
                let i = if b[i..].starts_with(b"\xEF\xBB\xBF") {
                    i + 3
                } else {
                    i
                };
                if i >= b.len() {
                    return Ok(None);
                }
                match b[i] {
                    b'{' => self.state = State::ObjectKey,
                    b'[' => {
                        self.state = State::Events { bare: true };
                        self.saw_trace_events = true;
                    }
                    _ => return Err(Scan::Syntax("the JSON is neither an object nor an array")),
                }
                Ok(Some(i + 1))
            }
            State::ObjectKey => match b[i] {
                b'}' => {
                    self.state = State::Done;
                    Ok(Some(i + 1))
                }
                b',' => Ok(Some(i + 1)),
                b'"' => {
                    let (key, j) = scan::string(b, i)?;
                    let j = scan::skip_ws(b, j);
                    if j >= b.len() {
                        return Err(Scan::Incomplete);
                    }
                    if b[j] != b':' {
                        return Err(Scan::Syntax("expected ':' after a key"));
                    }
                    let v = scan::skip_ws(b, j + 1);
                    if v >= b.len() {
                        return Err(Scan::Incomplete);
                    }
                    let key_text = decode(b, key).text;
                    if key_text == "traceEvents" {
                        if b[v] == b'[' {
                            self.saw_trace_events = true;
                            self.state = State::Events { bare: false };
                            return Ok(Some(v + 1));
                        }
                        let end = scan::skip_value(b, v, last)?;
                        self.b.diag.warn(
                            "trace_events_not_array",
                            || "traceEvents is not an array; ignored".into(),
                            || excerpt(&b[v..end]),
                        );
                        return Ok(Some(end));
                    }
                    let end = scan::skip_value(b, v, last)?;
                    if KEPT_HEADER_KEYS.contains(&key_text.as_ref()) {
                        self.b.header_value(&key_text, &b[v..end]);
                    } else if matches!(key_text.as_ref(), "trace_event" | "trace_events")
                        && !self.saw_trace_events
                    {
                        return Err(Scan::Syntax(
                            "this looks like a Neuron Explorer system profile (trace_event list), which is not supported yet",
                        ));
                    }
                    Ok(Some(end))
                }
                _ => Err(Scan::Syntax("expected a key in the top-level object")),
            },
            State::Events { bare } => match b[i] {
                b',' => Ok(Some(i + 1)),
                b']' => {
                    self.state = if bare { State::Done } else { State::ObjectKey };
                    Ok(Some(i + 1))
                }
                b'{' => {
                    let mut ev = RawEvent::default();
                    let end = parse_event(b, i, last, &mut ev)?;
                    self.b.add_event(b, &ev, i, end, self.consumed);
                    Ok(Some(end))
                }
                _ => {
                    let end = scan::skip_value(b, i, last)?;
                    self.b.non_object_entries += 1;
                    self.b.diag.warn(
                        "non_object_event",
                        || "an entry of traceEvents is not an object; skipped".into(),
                        || excerpt(&b[i..end]),
                    );
                    Ok(Some(end))
                }
            },
            State::Abandoned => Ok(Some(b.len())),
            State::Done => {
                let end = b.len();
                // Once, however the bytes after the end arrive (in chunks or
                // not): it is one stretch of data, not one per chunk.
                if self.b.diag.warning_count("trailing_data") == 0 {
                    self.b.diag.warn(
                        "trailing_data",
                        || "data after the end of the JSON; ignored".into(),
                        || excerpt(&b[i..end]),
                    );
                }
                Ok(Some(end))
            }
        }
    }
}

/// The `args` object's text of one event's JSON (`event`: the bytes of its
/// `source` range), or `None` if it has none or the bytes are not an event.
pub fn event_args(event: &[u8]) -> Option<&[u8]> {
    let at = scan::skip_ws(event, 0);
    if event.get(at) != Some(&b'{') {
        return None;
    }
    let mut ev = RawEvent::default();
    parse_event(event, at, true, &mut ev).ok()?;
    ev.args.map(|(s, e)| &event[s..e])
}

#[inline(always)]
fn lane(b: &[u8], i: usize, last: bool) -> Result<(RawLane, usize), Scan> {
    if b[i] == b'"' {
        let (s, e) = scan::string(b, i)?;
        Ok((RawLane::Str(s), e))
    } else {
        let (s, e) = scan::scalar(b, i, last)?;
        match int_text(&b[s..e]) {
            Some(v) => Ok((RawLane::Int(v), e)),
            None => Ok((
                RawLane::Str(StrSpan {
                    start: s,
                    end: e,
                    escaped: false,
                }),
                e,
            )),
        }
    }
}

fn int_value(b: &[u8], i: usize, last: bool) -> Result<(Option<i64>, usize), Scan> {
    if b[i] == b'"' {
        let (s, e) = scan::string(b, i)?;
        let t = &b[s.start..s.end];
        let v = int_text(t).or_else(|| {
            let h = t.strip_prefix(b"0x")?;
            i64::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
        });
        return Ok((v, e));
    }
    if b[i] == b'{' || b[i] == b'[' {
        return Ok((None, scan::skip_value(b, i, last)?));
    }
    let (s, e) = scan::scalar(b, i, last)?;
    Ok((int_text(&b[s..e]), e))
}

#[inline(always)]
fn number_span(b: &[u8], i: usize, last: bool) -> Result<((usize, usize), usize), Scan> {
    if b[i] == b'"' {
        let (s, e) = scan::string(b, i)?;
        return Ok(((s.start, s.end), e));
    }
    if b[i] == b'{' || b[i] == b'[' {
        let e = scan::skip_value(b, i, last)?;
        return Ok(((i, i), e));
    }
    let (s, e) = scan::scalar(b, i, last)?;
    Ok(((s, e), e))
}

/// Iterates the `"key": value` pairs of an object starting at `b[i] == '{'`,
/// calling `f(key, value_start) -> value_end` for each. Returns the end.
#[inline]
fn object<F>(b: &[u8], i: usize, mut f: F) -> Result<usize, Scan>
where
    F: FnMut(&[u8], StrSpan, usize) -> Result<usize, Scan>,
{
    let mut j = i + 1;
    loop {
        j = scan::skip_ws(b, j);
        if j >= b.len() {
            return Err(Scan::Incomplete);
        }
        match b[j] {
            b'}' => return Ok(j + 1),
            b',' => {
                j += 1;
                continue;
            }
            b'"' => {}
            _ => return Err(Scan::Syntax("expected a key in an object")),
        }
        let (key, k) = scan::string(b, j)?;
        let k = scan::skip_ws(b, k);
        if k >= b.len() {
            return Err(Scan::Incomplete);
        }
        if b[k] != b':' {
            return Err(Scan::Syntax("expected ':' after a key"));
        }
        let v = scan::skip_ws(b, k + 1);
        if v >= b.len() {
            return Err(Scan::Incomplete);
        }
        j = f(b, key, v)?;
    }
}

#[derive(Clone, Copy)]
enum TopKey {
    Ph,
    Name,
    Cat,
    Pid,
    Tid,
    Ts,
    Dur,
    Id,
    Bp,
    Args,
    Other,
}

/// Classifies an event's key by length first, like [`arg_key`].
#[inline]
fn top_key(k: &[u8]) -> TopKey {
    match k.len() {
        2 if is(k, b"ph") => TopKey::Ph,
        2 if is(k, b"ts") => TopKey::Ts,
        2 if is(k, b"id") => TopKey::Id,
        2 if is(k, b"bp") => TopKey::Bp,
        3 if is(k, b"cat") => TopKey::Cat,
        3 if is(k, b"pid") => TopKey::Pid,
        3 if is(k, b"tid") => TopKey::Tid,
        3 if is(k, b"dur") => TopKey::Dur,
        4 if is(k, b"name") => TopKey::Name,
        4 if is(k, b"args") => TopKey::Args,
        _ => TopKey::Other,
    }
}

/// Whether `k` is the key `lit`, compared as a fixed-size array (no
/// `memcmp` call for these few bytes).
#[inline]
fn is<const N: usize>(k: &[u8], lit: &[u8; N]) -> bool {
    <&[u8; N]>::try_from(k).is_ok_and(|a| a == lit)
}

fn parse_event(b: &[u8], i: usize, last: bool, ev: &mut RawEvent) -> Result<usize, Scan> {
    object(b, i, |b, key, v| match top_key(&b[key.start..key.end]) {
        TopKey::Ph => {
            if b[v] == b'"' {
                let (s, e) = scan::string(b, v)?;
                ev.ph = if s.end > s.start { b[s.start] } else { 0 };
                Ok(e)
            } else {
                scan::skip_value(b, v, last)
            }
        }
        TopKey::Name if b[v] == b'"' => {
            let (s, e) = scan::string(b, v)?;
            ev.name = Some(s);
            Ok(e)
        }
        TopKey::Cat if b[v] == b'"' => {
            let (s, e) = scan::string(b, v)?;
            ev.cat = Some(s);
            Ok(e)
        }
        TopKey::Pid => {
            let (l, e) = lane(b, v, last)?;
            ev.pid = Some(l);
            Ok(e)
        }
        TopKey::Tid => {
            let (l, e) = lane(b, v, last)?;
            ev.tid = Some(l);
            Ok(e)
        }
        TopKey::Ts => {
            let (s, e) = number_span(b, v, last)?;
            ev.ts = Some(s);
            Ok(e)
        }
        TopKey::Dur => {
            let (s, e) = number_span(b, v, last)?;
            ev.dur = Some(s);
            Ok(e)
        }
        TopKey::Id => {
            let (l, e) = lane(b, v, last)?;
            ev.id = Some(l);
            Ok(e)
        }
        TopKey::Bp if b[v] == b'"' => {
            let (s, e) = scan::string(b, v)?;
            ev.bp_enclosing = &b[s.start..s.end] == b"e";
            Ok(e)
        }
        TopKey::Args if b[v] == b'{' => {
            let e = parse_args(b, v, last, ev)?;
            ev.args = Some((v, e));
            Ok(e)
        }
        _ => scan::skip_value(b, v, last),
    })
}

#[derive(Clone, Copy)]
enum ArgKey {
    ExternalId,
    Correlation,
    Stream,
    SequenceNr,
    Device,
    FwdThread,
    SortIndex,
    InputDims,
    InputType,
    Name,
    Labels,
    Other,
}

/// Classifies an args key by length first, then as a fixed-size array, so
/// the many keys no analysis needs are rejected without calling `memcmp`.
#[inline]
fn arg_key(k: &[u8]) -> ArgKey {
    match k.len() {
        4 if is(k, b"name") => ArgKey::Name,
        6 if is(k, b"labels") => ArgKey::Labels,
        10 if is(k, b"Input Dims") => ArgKey::InputDims,
        10 if is(k, b"Input type") => ArgKey::InputType,
        6 if is(k, b"stream") => ArgKey::Stream,
        6 if is(k, b"device") => ArgKey::Device,
        10 if is(k, b"sort_index") => ArgKey::SortIndex,
        11 if is(k, b"External id") || is(k, b"external id") => ArgKey::ExternalId,
        11 if is(k, b"correlation") => ArgKey::Correlation,
        13 if is(k, b"Fwd thread id") => ArgKey::FwdThread,
        15 if is(k, b"Sequence number") => ArgKey::SequenceNr,
        _ => ArgKey::Other,
    }
}

fn parse_args(b: &[u8], i: usize, last: bool, ev: &mut RawEvent) -> Result<usize, Scan> {
    object(b, i, |b, key, v| {
        let int_slot = match arg_key(&b[key.start..key.end]) {
            ArgKey::ExternalId => &mut ev.external_id,
            ArgKey::Correlation => &mut ev.correlation,
            ArgKey::Stream => &mut ev.stream,
            ArgKey::SequenceNr => &mut ev.seq,
            ArgKey::Device => &mut ev.device,
            ArgKey::FwdThread => &mut ev.fwd_thread,
            ArgKey::SortIndex => &mut ev.sort_index,
            ArgKey::InputDims => {
                let e = scan::skip_value(b, v, last)?;
                ev.input_dims = Some((v, e));
                return Ok(e);
            }
            ArgKey::InputType => {
                let e = scan::skip_value(b, v, last)?;
                ev.input_types = Some((v, e));
                return Ok(e);
            }
            ArgKey::Name if b[v] == b'"' => {
                let (s, e) = scan::string(b, v)?;
                ev.arg_name = Some(s);
                return Ok(e);
            }
            ArgKey::Labels if b[v] == b'"' => {
                let (s, e) = scan::string(b, v)?;
                ev.arg_labels = Some(s);
                return Ok(e);
            }
            _ => return scan::skip_value(b, v, last),
        };
        let (x, e) = int_value(b, v, last)?;
        *int_slot = x;
        Ok(e)
    })
}

/// Accumulates model rows while events stream in; [`Builder::finish`] sorts,
/// nests and links them.
#[derive(Default)]
pub(crate) struct Builder {
    pub(crate) trace: Trace,
    pub(crate) diag: Diagnostics,
    pub(super) proc_map: FxHashMap<LaneId, ProcessIdx>,
    pub(super) track_map: FxHashMap<(LaneId, LaneId), TrackIdx>,
    pub(super) open_b: FxHashMap<TrackIdx, Vec<Row>>,
    pub(super) flows: Vec<FlowEvent>,
    pub(crate) events_seen: u64,
    pub(super) non_object_entries: u64,
    /// Category classification by category string id (few distinct ones).
    pub(super) cat_cache: Vec<Option<Category>>,
    /// Raw bytes of plain strings already interned (names, categories).
    pub(super) raw_strings: FxHashMap<Box<[u8]>, StrId>,
    /// Raw `Input Dims` / `Input type` text → its compact interned form.
    pub(super) compact_cache: FxHashMap<Box<[u8]>, StrId>,
    /// The last (pid, tid) → track lookup: consecutive events share a lane.
    pub(super) last_track: Option<((LaneId, LaneId), TrackIdx)>,
    /// Tracks that hold an event of a device-only category.
    pub(super) device_marked: Vec<bool>,
    pub(super) phase_counts: Vec<u64>,
    /// Events by category string id.
    pub(super) cat_counts: Vec<u64>,
    pub(super) base_time_ns: Option<i64>,
    pub(super) max_ts_ns: i64,
    /// Keep every event's args text, ops' too (translated formats: their
    /// source text is not the user's file).
    pub(crate) keep_op_args: bool,
    /// Keep no args text: the caller reads it back from the source.
    pub(crate) args_in_source: bool,
}

impl Builder {
    /// Appends another builder's rows (parsed from later bytes of the same
    /// file), re-interning its strings and re-numbering its lanes.
    fn absorb(&mut self, o: Builder, raw: Option<super::part::RawColumns>) {
        let ids: Vec<StrId> = (0..o.trace.strings.len())
            .map(|k| {
                self.trace
                    .strings
                    .intern(o.trace.strings.get(StrId(k as u32)))
            })
            .collect();
        let map = |id: StrId| {
            if id == NO_STR {
                NO_STR
            } else {
                ids[id.0 as usize]
            }
        };
        let lane = |l: LaneId| match l {
            LaneId::Str(s) => LaneId::Str(map(s)),
            int => int,
        };
        let procs: Vec<ProcessIdx> = o
            .trace
            .processes
            .iter()
            .map(|p| {
                let me = self.process(lane(p.pid));
                let mine = &mut self.trace.processes[me.0 as usize];
                mine.name = p.name.map(map).or(mine.name);
                mine.labels = p.labels.map(map).or(mine.labels);
                mine.sort_index = p.sort_index.or(mine.sort_index);
                me
            })
            .collect();
        let tracks: Vec<TrackIdx> = o
            .trace
            .tracks
            .iter()
            .enumerate()
            .map(|(k, tr)| {
                let pid = self.trace.processes[procs[tr.process.0 as usize].0 as usize].pid;
                let me = self.track(pid, lane(tr.tid));
                let mine = &mut self.trace.tracks[me.idx()];
                mine.name = tr.name.map(map).or(mine.name);
                mine.sort_index = tr.sort_index.or(mine.sort_index);
                self.device_marked[me.idx()] |= o.device_marked[k];
                me
            })
            .collect();
        let order_base = self.events_seen as u32;
        let arena_base = self.trace.args_arena.len() as u64;
        let shift = |r: (u64, u32)| if r.1 == 0 { r } else { (r.0 + arena_base, r.1) };
        if let Some(raw) = raw {
            raw.append_to(
                &mut self.trace,
                &super::part::Remap {
                    strings: &ids,
                    tracks: &tracks,
                    processes: &procs,
                    arena_base,
                    order_base,
                },
            );
        } else {
            let (a, b) = (&mut self.trace.slices, o.trace.slices);
            a.track.extend(b.track.iter().map(|t| tracks[t.idx()]));
            a.start_ns.extend(b.start_ns);
            a.dur_ns.extend(b.dur_ns);
            a.name.extend(b.name.iter().map(|&x| map(x)));
            a.cat.extend(b.cat.iter().map(|&x| map(x)));
            a.category.extend(b.category);
            a.external_id.extend(b.external_id);
            a.correlation.extend(b.correlation);
            a.stream.extend(b.stream);
            a.input_dims.extend(b.input_dims.iter().map(|&x| map(x)));
            a.input_types.extend(b.input_types.iter().map(|&x| map(x)));
            a.sequence_nr.extend(b.sequence_nr);
            a.device.extend(b.device);
            a.fwd_thread.extend(b.fwd_thread);
            a.args_range.extend(b.args_range.iter().map(|&r| shift(r)));
            a.source.extend(b.source);
            a.file_order
                .extend(b.file_order.iter().map(|&x| x + order_base));
            let (a, b) = (&mut self.trace.instants, o.trace.instants);
            a.track.extend(b.track.iter().map(|t| tracks[t.idx()]));
            a.ts_ns.extend(b.ts_ns);
            a.name.extend(b.name.iter().map(|&x| map(x)));
            a.cat.extend(b.cat.iter().map(|&x| map(x)));
            a.args_range.extend(b.args_range.iter().map(|&r| shift(r)));
            a.source.extend(b.source);
            let (a, b) = (&mut self.trace.counters, o.trace.counters);
            a.process
                .extend(b.process.iter().map(|p| procs[p.0 as usize]));
            a.series.extend(b.series.iter().map(|&x| map(x)));
            a.ts_ns.extend(b.ts_ns);
            a.value.extend(b.value);
            self.trace.args_arena.extend_from_slice(&o.trace.args_arena);
        }
        self.trace.header.extend(o.trace.header);
        self.flows.extend(o.flows.into_iter().map(|f| FlowEvent {
            cat: map(f.cat),
            track: tracks[f.track.idx()],
            id: if f.named {
                map(StrId(f.id as u32)).0 as u64 | (1 << 63)
            } else {
                f.id
            },
            ..f
        }));
        for (t, rows) in o.open_b {
            let mine = self.open_b.entry(tracks[t.idx()]).or_default();
            mine.extend(rows.into_iter().map(|r| Row {
                name: map(r.name),
                cat: map(r.cat),
                dims: map(r.dims),
                types: map(r.types),
                args: shift(r.args),
                order: r.order + order_base,
                ..r
            }));
        }
        self.events_seen += o.events_seen;
        self.non_object_entries += o.non_object_entries;
        if self.phase_counts.len() < o.phase_counts.len() {
            self.phase_counts.resize(o.phase_counts.len(), 0);
        }
        for (k, n) in o.phase_counts.iter().enumerate() {
            self.phase_counts[k] += n;
        }
        for (k, &n) in o.cat_counts.iter().enumerate().filter(|(_, &n)| n > 0) {
            let id = ids[k].0 as usize;
            if self.cat_counts.len() <= id {
                self.cat_counts.resize(id + 1, 0);
            }
            self.cat_counts[id] += n;
        }
        self.base_time_ns = o.base_time_ns.or(self.base_time_ns);
        self.max_ts_ns = self.max_ts_ns.max(o.max_ts_ns);
        self.diag.truncated |= o.diag.truncated;
        for (k, w) in o.diag.warnings {
            let mine = self.diag.warnings.entry(k).or_insert_with(|| Warning {
                count: 0,
                ..w.clone()
            });
            mine.count += w.count;
        }
    }

    /// Sizes the columns for about `json_bytes` of Kineto JSON (~250 bytes
    /// an event). Untouched capacity costs address space, not memory.
    pub(crate) fn reserve_for(&mut self, json_bytes: u64) {
        let slices = (json_bytes / 250).min(64 << 20) as usize;
        let s = &mut self.trace.slices;
        s.track.reserve(slices);
        s.start_ns.reserve(slices);
        s.dur_ns.reserve(slices);
        s.name.reserve(slices);
        s.cat.reserve(slices);
        s.category.reserve(slices);
        s.external_id.reserve(slices);
        s.correlation.reserve(slices);
        s.stream.reserve(slices);
        s.input_dims.reserve(slices);
        s.input_types.reserve(slices);
        s.sequence_nr.reserve(slices);
        s.device.reserve(slices);
        s.fwd_thread.reserve(slices);
        s.args_range.reserve(slices);
        s.source.reserve(slices);
        s.file_order.reserve(slices);
        self.trace
            .args_arena
            .reserve((json_bytes / 4).min(1 << 32) as usize);
    }

    fn header_value(&mut self, key: &str, raw: &[u8]) {
        let text = String::from_utf8_lossy(raw).into_owned();
        if key == "baseTimeNanoseconds" {
            match int_text(raw.trim_ascii()) {
                Some(v) => self.base_time_ns = Some(v),
                None => self.diag.warn(
                    "bad_base_time",
                    || "baseTimeNanoseconds is not an integer; ignored".into(),
                    || text.clone(),
                ),
            }
        }
        self.trace.header.push((key.to_string(), text));
    }

    fn intern_span(&mut self, b: &[u8], s: StrSpan) -> StrId {
        // Names repeat: find a plain (unescaped) one by its bytes, skipping
        // UTF-8 validation after the first time.
        if !s.escaped {
            if let Some(&id) = self.raw_strings.get(&b[s.start..s.end]) {
                return id;
            }
        }
        let d = decode(b, s);
        if d.lossy {
            self.diag.warn(
                "invalid_utf8",
                || "a string is not valid UTF-8 (or has a bad escape); shown with U+FFFD".into(),
                || excerpt(&b[s.start..s.end]),
            );
        }
        let id = self.trace.strings.intern(&d.text);
        if !s.escaped && !d.lossy {
            self.raw_strings.insert(b[s.start..s.end].into(), id);
        }
        id
    }

    fn lane_id(&mut self, b: &[u8], l: Option<RawLane>) -> LaneId {
        match l {
            None => LaneId::Int(0),
            Some(RawLane::Int(v)) => LaneId::Int(v),
            Some(RawLane::Str(s)) => {
                let raw = &b[s.start..s.end];
                match int_text(raw) {
                    Some(v) if !raw.contains(&b'.') => LaneId::Int(v),
                    _ => LaneId::Str(self.intern_span(b, s)),
                }
            }
        }
    }

    fn process(&mut self, pid: LaneId) -> ProcessIdx {
        if let Some(&p) = self.proc_map.get(&pid) {
            return p;
        }
        let p = ProcessIdx(self.trace.processes.len() as u32);
        self.trace.processes.push(Process {
            pid,
            name: None,
            labels: None,
            sort_index: None,
        });
        self.proc_map.insert(pid, p);
        p
    }

    fn track(&mut self, pid: LaneId, tid: LaneId) -> TrackIdx {
        if let Some((key, t)) = self.last_track {
            if key == (pid, tid) {
                return t;
            }
        }
        if let Some(&t) = self.track_map.get(&(pid, tid)) {
            self.last_track = Some(((pid, tid), t));
            return t;
        }
        let process = self.process(pid);
        let t = TrackIdx(self.trace.tracks.len() as u32);
        self.trace.tracks.push(Track {
            process,
            tid,
            kind: TrackKind::HostThread,
            name: None,
            sort_index: None,
            slices: 0..0,
            max_depth: 0,
        });
        self.device_marked.push(false);
        self.track_map.insert((pid, tid), t);
        t
    }

    fn store_args(&mut self, b: &[u8], span: Option<(usize, usize)>) -> (u64, u32) {
        match span {
            Some((s, e)) if e > s + 2 => {
                let off = self.trace.args_arena.len() as u64;
                let len = (e - s).min(u32::MAX as usize);
                self.trace.args_arena.extend_from_slice(&b[s..s + len]);
                (off, len as u32)
            }
            _ => (0, 0),
        }
    }

    fn category(&mut self, cat: StrId) -> Category {
        let k = cat.0 as usize;
        if let Some(Some(c)) = self.cat_cache.get(k) {
            return *c;
        }
        let c = Category::from_cat(self.trace.strings.get(cat));
        if self.cat_cache.len() <= k {
            self.cat_cache.resize(k + 1, None);
        }
        self.cat_cache[k] = Some(c);
        c
    }

    fn time(
        &mut self,
        b: &[u8],
        span: Option<(usize, usize)>,
        what: &'static str,
        ev: &[u8],
    ) -> Option<i64> {
        let (s, e) = span?;
        let v = micros_text_to_ns(&b[s..e]);
        let finite = || {
            std::str::from_utf8(&b[s..e])
                .ok()
                .and_then(|t| t.parse::<f64>().ok())
                .is_some_and(f64::is_finite)
        };
        if v.is_none() && what == "bad_dur" && finite() {
            self.diag.warn(
                "huge_dur",
                || "an event lasts longer than a year; skipped as implausible".into(),
                || excerpt(ev),
            );
            return None;
        }
        if v.is_none() {
            self.diag.warn(
                what,
                || {
                    format!(
                        "an event has an unreadable {}; the event was skipped",
                        if what == "bad_ts" { "ts" } else { "dur" }
                    )
                },
                || excerpt(ev),
            );
        }
        v
    }

    fn add_event(&mut self, b: &[u8], ev: &RawEvent, start: usize, end: usize, buf_offset: u64) {
        let order = self.events_seen as u32;
        let source = (
            buf_offset + start as u64,
            (end - start).min(u32::MAX as usize) as u32,
        );
        self.events_seen += 1;
        if self.phase_counts.is_empty() {
            self.phase_counts = vec![0; 256];
        }
        self.phase_counts[ev.ph as usize] += 1;
        let raw = &b[start..end];
        match ev.ph {
            b'X' | b'B' | b'E' | b'i' | b'I' | b'R' | b'C' | b's' | b't' | b'f' | b'M' => {}
            _ => {
                let ph = ev.ph;
                self.diag.warn(
                    "unknown_phase",
                    || "events of a phase tracelane does not read (async b/e/n, samples, objects…) were skipped".into(),
                    || format!("ph {:?}: {}", ph as char, excerpt(raw)),
                );
                return;
            }
        }
        let pid = self.lane_id(b, ev.pid);
        let tid = self.lane_id(b, ev.tid);
        if ev.ph == b'M' {
            self.metadata(b, ev, pid, tid);
            return;
        }
        let Some(ts) = self.time(b, ev.ts, "bad_ts", raw) else {
            if ev.ts.is_none() {
                self.diag.warn(
                    "missing_ts",
                    || "an event has no ts; skipped".into(),
                    || excerpt(raw),
                );
            }
            return;
        };
        let name = match ev.name {
            Some(s) => self.intern_span(b, s),
            None => self.trace.strings.intern(""),
        };
        let cat = match ev.cat {
            Some(s) => self.intern_span(b, s),
            None => self.trace.strings.intern(""),
        };
        if ev.ph != b'C' && ev.ph != b's' && ev.ph != b't' && ev.ph != b'f' {
            let k = cat.0 as usize;
            if self.cat_counts.len() <= k {
                self.cat_counts.resize(k + 1, 0);
            }
            self.cat_counts[k] += 1;
        }
        let track = self.track(pid, tid);
        self.max_ts_ns = self.max_ts_ns.max(ts);
        match ev.ph {
            b'X' => {
                let dur = match ev.dur {
                    None => {
                        self.diag.warn(
                            "missing_dur",
                            || "a complete (X) event has no dur; taken as 0".into(),
                            || excerpt(raw),
                        );
                        0
                    }
                    Some(_) => match self.time(b, ev.dur, "bad_dur", raw) {
                        Some(d) => d,
                        None => return,
                    },
                };
                let Some(dur) = self.check_dur(ts, dur, raw) else {
                    return;
                };
                let row = self.row(b, ev, ts, name, cat, order, source);
                self.push_row(track, row, dur);
            }
            b'B' => {
                let row = self.row(b, ev, ts, name, cat, order, source);
                self.open_b.entry(track).or_default().push(row);
            }
            b'E' => {
                let open = self.open_b.get_mut(&track).and_then(|s| s.pop());
                match open {
                    None => self.diag.warn(
                        "e_without_b",
                        || {
                            "an end (E) event has no matching begin (B) on its thread; skipped"
                                .into()
                        },
                        || excerpt(raw),
                    ),
                    Some(o) => {
                        let Some(dur) = self.check_dur(o.start_ns, ts - o.start_ns, raw) else {
                            return;
                        };
                        self.push_row(track, o, dur);
                    }
                }
            }
            b'i' | b'I' | b'R' => {
                let args = if self.args_in_source {
                    (0, 0)
                } else {
                    self.store_args(b, ev.args)
                };
                self.trace.instants.source.push(source);
                let t = &mut self.trace.instants;
                t.track.push(track);
                t.ts_ns.push(ts);
                t.name.push(name);
                t.cat.push(cat);
                t.args_range.push(args);
            }
            b'C' => self.counter(b, ev, pid, ts, name, raw),
            _ => {
                let mut named = false;
                let id = match ev.id {
                    Some(RawLane::Int(v)) => v as u64,
                    Some(RawLane::Str(s)) => {
                        let t = &b[s.start..s.end];
                        let hex = t.strip_prefix(b"0x").and_then(|h| {
                            u64::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
                        });
                        hex.or_else(|| int_text(t).map(|v| v as u64))
                            .unwrap_or_else(|| {
                                named = true;
                                self.trace.strings.intern(&String::from_utf8_lossy(t)).0 as u64
                                    | (1 << 63)
                            })
                    }
                    None => {
                        self.diag.warn(
                            "flow_without_id",
                            || "a flow event has no id; skipped".into(),
                            || excerpt(raw),
                        );
                        return;
                    }
                };
                self.flows.push(FlowEvent {
                    cat,
                    id,
                    ph: ev.ph,
                    track,
                    ts_ns: ts,
                    enclosing: ev.bp_enclosing,
                    named,
                });
            }
        }
    }

    fn check_dur(&mut self, ts: i64, dur: i64, raw: &[u8]) -> Option<i64> {
        if dur < 0 {
            self.diag.warn(
                "negative_dur",
                || "an event has a negative duration; taken as 0".into(),
                || excerpt(raw),
            );
            return Some(0);
        }
        // A year of nanoseconds: no profiler capture is longer.
        const MAX_DUR_NS: i64 = 365 * 24 * 3600 * 1_000_000_000;
        if dur > MAX_DUR_NS || ts.checked_add(dur).is_none() {
            self.diag.warn(
                "huge_dur",
                || "an event lasts longer than a year; skipped as implausible".into(),
                || excerpt(raw),
            );
            return None;
        }
        Some(dur)
    }

    fn compact(&mut self, b: &[u8], span: Option<(usize, usize)>) -> StrId {
        match span {
            Some((s, e)) => {
                let raw = &b[s..e];
                if let Some(&id) = self.compact_cache.get(raw) {
                    return id;
                }
                let id = self.trace.strings.intern(&scan::compact_json(raw));
                self.compact_cache.insert(raw.into(), id);
                id
            }
            None => NO_STR,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn row(
        &mut self,
        b: &[u8],
        ev: &RawEvent,
        ts: i64,
        name: StrId,
        cat: StrId,
        order: u32,
        source: (u64, u32),
    ) -> Row {
        let category = self.category(cat);
        // Ops keep shapes and types; their other args stay in the source.
        let args = match category {
            _ if self.args_in_source => (0, 0),
            Category::CpuOp | Category::UserAnnotation | Category::PythonFunction
                if !self.keep_op_args =>
            {
                (0, 0)
            }
            _ => self.store_args(b, ev.args),
        };
        Row {
            start_ns: ts,
            name,
            cat,
            category,
            args,
            ext: ev.external_id.unwrap_or(NONE_I64),
            corr: ev.correlation.unwrap_or(NONE_I64),
            stream: ev.stream.unwrap_or(NONE_I64),
            dims: self.compact(b, ev.input_dims),
            types: self.compact(b, ev.input_types),
            seq: ev.seq.unwrap_or(NONE_I64),
            device: ev.device.unwrap_or(NONE_I64),
            fwd_thread: ev.fwd_thread.unwrap_or(NONE_I64),
            order,
            source,
        }
    }

    fn push_row(&mut self, track: TrackIdx, r: Row, dur: i64) {
        if r.category.is_device() && Category::marks_device_lane(self.trace.strings.get(r.cat)) {
            self.device_marked[track.idx()] = true;
        }
        self.max_ts_ns = self.max_ts_ns.max(r.start_ns.saturating_add(dur));
        let s = &mut self.trace.slices;
        s.track.push(track);
        s.start_ns.push(r.start_ns);
        s.dur_ns.push(dur);
        s.name.push(r.name);
        s.cat.push(r.cat);
        s.category.push(r.category);
        s.external_id.push(r.ext);
        s.correlation.push(r.corr);
        s.stream.push(r.stream);
        s.input_dims.push(r.dims);
        s.input_types.push(r.types);
        s.sequence_nr.push(r.seq);
        s.device.push(r.device);
        s.fwd_thread.push(r.fwd_thread);
        s.args_range.push(r.args);
        s.source.push(r.source);
        s.file_order.push(r.order);
    }

    fn metadata(&mut self, b: &[u8], ev: &RawEvent, pid: LaneId, tid: LaneId) {
        let Some(name) = ev.name else { return };
        let key = &b[name.start..name.end];
        let arg_name = ev.arg_name.map(|s| self.intern_span(b, s));
        match key {
            b"process_name" => {
                let p = self.process(pid);
                if let Some(n) = arg_name {
                    self.trace.processes[p.0 as usize].name = Some(n);
                }
            }
            b"process_labels" => {
                let p = self.process(pid);
                if let Some(l) = ev.arg_labels.map(|s| self.intern_span(b, s)) {
                    let before = self.trace.processes[p.0 as usize].labels.replace(l);
                    if let Some(before) = before.filter(|&x| x != l) {
                        let (a, z) = (self.trace.strings.get(before), self.trace.strings.get(l));
                        let example = format!("\"{a}\" then \"{z}\"");
                        self.diag.warn(
                            "process_labels_conflict",
                            || "a process is labelled twice, differently (Kineto labels each device \
                                by a pid equal to its id, which can be a host pid too): the later \
                                label is shown; its lanes are classified by their events"
                                .into(),
                            || example,
                        );
                    }
                }
            }
            b"process_sort_index" => {
                let p = self.process(pid);
                self.trace.processes[p.0 as usize].sort_index = ev.sort_index;
            }
            b"thread_name" => {
                let t = self.track(pid, tid);
                if let Some(n) = arg_name {
                    self.trace.tracks[t.idx()].name = Some(n);
                }
            }
            b"thread_sort_index" => {
                let t = self.track(pid, tid);
                self.trace.tracks[t.idx()].sort_index = ev.sort_index;
            }
            _ => {}
        }
    }

    fn counter(&mut self, b: &[u8], ev: &RawEvent, pid: LaneId, ts: i64, name: StrId, raw: &[u8]) {
        let process = self.process(pid);
        let Some((s, e)) = ev.args else { return };
        let parsed: Result<serde_json::Map<String, serde_json::Value>, _> =
            serde_json::from_slice(&b[s..e]);
        let Ok(map) = parsed else {
            self.diag.warn(
                "bad_counter",
                || "a counter (C) event has unreadable args; skipped".into(),
                || excerpt(raw),
            );
            return;
        };
        let base = self.trace.strings.get(name).to_string();
        let single = map.len() == 1;
        for (k, v) in map {
            let Some(x) = v
                .as_f64()
                .or_else(|| v.as_str().and_then(|t| t.parse().ok()))
            else {
                continue;
            };
            let series = if single {
                base.clone()
            } else {
                format!("{base}.{k}")
            };
            let id = self.trace.strings.intern(&series);
            let c = &mut self.trace.counters;
            c.process.push(process);
            c.series.push(id);
            c.ts_ns.push(ts);
            c.value.push(x);
        }
    }

    /// Sorts, nests, binds flows and links; produces the finished model.
    pub(crate) fn finish(mut self) -> Trace {
        self.close_open_b();
        self.diag.events_by_phase = self
            .phase_counts
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(p, &n)| {
                (
                    (if p == 0 {
                        "(none)".to_string()
                    } else {
                        (p as u8 as char).to_string()
                    }),
                    n,
                )
            })
            .collect();
        for (cat, &n) in self.cat_counts.iter().enumerate().filter(|(_, &n)| n > 0) {
            let label = self.trace.strings.get(StrId(cat as u32));
            let label = if label.is_empty() { "(none)" } else { label };
            self.diag.events_by_category.insert(label.to_string(), n);
        }
        self.trace.clock_offset_ns = self.base_time_ns.unwrap_or(0);
        self.diag.time_unit_decision = match self.base_time_ns {
            Some(b) => format!("ts and dur read as microseconds (displayTimeUnit is only a display hint); ts is relative to baseTimeNanoseconds = {b}"),
            None => "ts and dur read as microseconds (displayTimeUnit is only a display hint); ts is absolute (no baseTimeNanoseconds)".to_string(),
        };
        // Phase timings for `TRACELANE_TIMING=1` (native only: wasm32 has no clock in std).
        let mut t0 = (cfg!(not(target_arch = "wasm32"))
            && std::env::var_os("TRACELANE_TIMING").is_some())
        .then(std::time::Instant::now);
        let mut lap = |what: &str| {
            if let Some(t) = t0.as_mut() {
                eprintln!("  {what}: {:.3}s", t.elapsed().as_secs_f64());
                *t = std::time::Instant::now();
            }
        };
        self.classify_tracks();
        sort_slices(&mut self.trace);
        lap("sort");
        nest(&mut self.trace, &mut self.diag);
        lap("nest");
        let flows = std::mem::take(&mut self.flows);
        bind_flows(&mut self.trace, &mut self.diag, flows);
        lap("flows");
        crate::link::link(&mut self.trace, &mut self.diag);
        lap("link");
        self.trace.args_in_source = self.args_in_source;
        self.trace.diagnostics = self.diag;
        self.trace
    }

    fn close_open_b(&mut self) {
        let mut open: Vec<(TrackIdx, Row)> = Vec::new();
        for (t, stack) in std::mem::take(&mut self.open_b) {
            open.extend(stack.into_iter().map(|o| (t, o)));
        }
        open.sort_by_key(|(_, o)| o.order);
        let end = self.max_ts_ns;
        for (t, o) in open {
            let n = self.trace.strings.get(o.name).to_string();
            self.diag.warn(
                "unclosed_b",
                || "a begin (B) event never ends; closed at the end of the trace".into(),
                || n,
            );
            let dur = (end - o.start_ns).max(0);
            self.push_row(t, o, dur);
        }
    }

    /// Host or device lane. A lane's own events decide first: categories
    /// that are device work by definition (kernels, copies, sets, syncs,
    /// device annotations) make a device lane; categories that are host by
    /// definition (ops, annotations, Python frames, runtime and driver
    /// calls, profiler overhead — Kineto records them on the CPU whatever
    /// process they are filed under) make a host lane. Only a lane with
    /// neither (`privateuse1_driver`, unknown categories, no slices) is
    /// decided by `process_labels` and its thread name. Kineto writes one
    /// `process_labels` per device id with the device id as pid, which
    /// collides with a host pid of 1 in a container: those host threads
    /// stay host, and the conflict is counted.
    fn classify_tracks(&mut self) {
        let s = &self.trace.slices;
        let mut host_marked = vec![false; self.trace.tracks.len()];
        for i in 0..s.len() {
            if s.category[i].host_by_definition(self.trace.strings.get(s.cat[i])) {
                host_marked[s.track[i].idx()] = true;
            }
        }
        let mut conflicts: Vec<String> = Vec::new();
        for (t, track) in self.trace.tracks.iter_mut().enumerate() {
            let p = &self.trace.processes[track.process.0 as usize];
            let labels = p
                .labels
                .map(|l| self.trace.strings.get(l).to_ascii_lowercase());
            let label_says_device = labels.as_deref().is_some_and(|l| {
                [
                    "gpu",
                    "cuda",
                    "device",
                    "neuron",
                    "xpu",
                    "mtia",
                    "hpu",
                    "npu",
                    "tpu",
                    "accelerator",
                ]
                .iter()
                .any(|k| l.contains(k))
            });
            let thread_name = track
                .name
                .map(|n| self.trace.strings.get(n).to_ascii_lowercase());
            let tid_name = match track.tid {
                LaneId::Str(s) => Some(self.trace.strings.get(s).to_ascii_lowercase()),
                LaneId::Int(_) => None,
            };
            let stream_named = [thread_name, tid_name].iter().flatten().any(|n| {
                n.starts_with("stream") || n.contains("neuroncore") || n.starts_with("queue")
            });
            let named_device = label_says_device || stream_named;
            let device = if self.device_marked[t] {
                true
            } else if host_marked[t] {
                false
            } else {
                named_device
            };
            if device {
                track.kind = TrackKind::DeviceStream;
            }
            if host_marked[t] && named_device && !self.device_marked[t] {
                let label = p.labels.map_or("", |l| self.trace.strings.get(l));
                let pid = match p.pid {
                    LaneId::Int(v) => v.to_string(),
                    LaneId::Str(s) => self.trace.strings.get(s).to_string(),
                };
                let tid = match track.tid {
                    LaneId::Int(v) => v.to_string(),
                    LaneId::Str(s) => self.trace.strings.get(s).to_string(),
                };
                let name = track.name.map_or("", |n| self.trace.strings.get(n));
                conflicts.push(format!(
                    "pid {pid} (labels \"{label}\"), thread {tid} \"{name}\""
                ));
            }
        }
        if let Some(first) = conflicts.first() {
            self.diag.warn_n(
                "lane_label_conflict",
                conflicts.len() as u64,
                "a lane named or labelled as a device holds host events (ops, runtime calls): \
                 kept as a host lane (its events decide, as in PyTorch)"
                    .into(),
                first.clone(),
            );
        }
        let s = &mut self.trace.slices;
        for i in 0..s.len() {
            if s.category[i] == Category::Runtime
                && self.trace.tracks[s.track[i].idx()].kind == TrackKind::DeviceStream
                && self.trace.strings.get(s.cat[i]) == category::PRIVATEUSE1_DRIVER
            {
                s.category[i] = Category::DeviceWindow;
            }
        }
    }
}

/// Orders slices by (track, start, longest first, file order) and records
/// each track's range.
fn sort_slices(t: &mut Trace) {
    let s = &mut t.slices;
    let n = s.len();
    // Bucket by track (a stable counting sort keeps file order inside each
    // track), then sort a track only if its events are out of order: most
    // producers write each thread's events in time order already.
    let mut offsets = vec![0usize; t.tracks.len() + 1];
    for tr in &s.track {
        offsets[tr.idx() + 1] += 1;
    }
    for k in 1..offsets.len() {
        offsets[k] += offsets[k - 1];
    }
    let mut perm: Vec<u32> = vec![0; n];
    let mut next = offsets.clone();
    for (i, tr) in s.track.iter().enumerate() {
        perm[next[tr.idx()]] = i as u32;
        next[tr.idx()] += 1;
    }
    let key = |i: u32| {
        let i = i as usize;
        (
            s.start_ns[i],
            std::cmp::Reverse(s.dur_ns[i]),
            host_rank(s.category[i]),
            s.file_order[i],
        )
    };
    for w in offsets.windows(2) {
        let bucket = &mut perm[w[0]..w[1]];
        if !bucket.windows(2).all(|p| key(p[0]) <= key(p[1])) {
            bucket.sort_unstable_by_key(|&i| key(i));
        }
    }
    fn apply<T: Copy>(v: &mut Vec<T>, perm: &[u32]) {
        let out: Vec<T> = perm.iter().map(|&i| v[i as usize]).collect();
        *v = out;
    }
    apply(&mut s.track, &perm);
    apply(&mut s.start_ns, &perm);
    apply(&mut s.dur_ns, &perm);
    apply(&mut s.name, &perm);
    apply(&mut s.cat, &perm);
    apply(&mut s.category, &perm);
    apply(&mut s.external_id, &perm);
    apply(&mut s.correlation, &perm);
    apply(&mut s.stream, &perm);
    apply(&mut s.input_dims, &perm);
    apply(&mut s.sequence_nr, &perm);
    apply(&mut s.device, &perm);
    apply(&mut s.fwd_thread, &perm);
    apply(&mut s.args_range, &perm);
    apply(&mut s.source, &perm);
    apply(&mut s.input_types, &perm);
    apply(&mut s.file_order, &perm);
    // Tracks are numbered in sort order, so each range starts where the
    // previous one ended (empty tracks get an empty range there).
    let mut i = 0usize;
    for (k, track) in t.tracks.iter_mut().enumerate() {
        let start = i;
        while i < n && s.track[i].idx() == k {
            i += 1;
        }
        track.slices = start as u32..i as u32;
    }
}

/// For identical intervals, PyTorch's own order decides the parent: its ops
/// and annotations (in recording order, which the file keeps) come before the
/// runtime calls Kineto adds.
fn host_rank(c: Category) -> u8 {
    match c {
        Category::Runtime => 1,
        _ => 0,
    }
}

/// Depth and parent per slice: a child lies entirely inside its parent;
/// partial overlaps make no edge and are counted.
fn nest(t: &mut Trace, diag: &mut Diagnostics) {
    let s = &mut t.slices;
    s.depth = vec![0; s.len()];
    s.parent = vec![NO_SLICE; s.len()];
    let mut overlaps = 0u64;
    let mut example = String::new();
    let mut stack: Vec<usize> = Vec::new();
    for track in t.tracks.iter_mut() {
        stack.clear();
        let mut max_depth = 0u16;
        for i in track.slices.start as usize..track.slices.end as usize {
            let (st, en) = (s.start_ns[i], s.end_ns(i));
            while let Some(&top) = stack.last() {
                let top_end = s.end_ns(top);
                if st >= top_end || en > top_end {
                    if st < top_end && en > top_end && s.dur_ns[top] > 0 {
                        overlaps += 1;
                        if example.is_empty() {
                            example = format!(
                                "{} [{}, {}) overlaps {} [{}, {})",
                                t.strings.get(s.name[i]),
                                st,
                                en,
                                t.strings.get(s.name[top]),
                                s.start_ns[top],
                                top_end
                            );
                        }
                    }
                    stack.pop();
                } else {
                    break;
                }
            }
            if let Some(&p) = stack.last() {
                s.parent[i] = p as u32;
            }
            let d = stack.len().min(u16::MAX as usize) as u16;
            s.depth[i] = d;
            max_depth = max_depth.max(d);
            stack.push(i);
        }
        track.max_depth = max_depth;
    }
    diag.warn_n(
        "partial_overlap",
        overlaps,
        "slices on the same thread overlap without nesting; drawn on separate rows, no parent/child link".into(),
        example,
    );
}

/// The deepest slice on `track` whose span holds `ts`.
pub(crate) fn enclosing_slice(t: &Trace, track: TrackIdx, ts: i64) -> Option<usize> {
    let r = &t.tracks[track.idx()].slices;
    let starts = &t.slices.start_ns[r.start as usize..r.end as usize];
    let k = starts.partition_point(|&s| s <= ts);
    if k == 0 {
        return None;
    }
    let mut i = r.start as usize + k - 1;
    loop {
        if t.slices.end_ns(i) >= ts {
            return Some(i);
        }
        let p = t.slices.parent[i];
        if p == NO_SLICE {
            return None;
        }
        i = p as usize;
    }
}

/// The first slice on `track` starting at or after `ts`.
fn next_slice(t: &Trace, track: TrackIdx, ts: i64) -> Option<usize> {
    let r = &t.tracks[track.idx()].slices;
    let starts = &t.slices.start_ns[r.start as usize..r.end as usize];
    let k = starts.partition_point(|&s| s < ts);
    (k < starts.len()).then_some(r.start as usize + k)
}

fn bind_flows(t: &mut Trace, diag: &mut Diagnostics, mut flows: Vec<FlowEvent>) {
    flows.sort_by_key(|f| (f.cat, f.id, f.ts_ns, f.ph != b's'));
    let mut unmatched = 0u64;
    let mut out = Flows::default();
    let mut i = 0;
    while i < flows.len() {
        let mut j = i;
        while j < flows.len() && flows[j].cat == flows[i].cat && flows[j].id == flows[i].id {
            j += 1;
        }
        let group = &flows[i..j];
        let bind = |f: &FlowEvent| -> Option<usize> {
            if f.ph == b'f' && !f.enclosing {
                next_slice(t, f.track, f.ts_ns)
            } else {
                enclosing_slice(t, f.track, f.ts_ns)
            }
        };
        let mut prev: Option<usize> = None;
        let mut has_start = false;
        let mut ends = 0;
        for f in group {
            let here = bind(f);
            match f.ph {
                b's' => {
                    has_start = true;
                    prev = here;
                }
                _ => {
                    if f.ph == b'f' {
                        ends += 1;
                    }
                    match (prev, here) {
                        (Some(a), Some(b)) => {
                            out.cat.push(f.cat);
                            out.id.push(f.id);
                            out.from.push(a as u32);
                            out.to.push(b as u32);
                        }
                        _ => unmatched += 1,
                    }
                    prev = here;
                }
            }
        }
        if has_start && ends == 0 && group.iter().all(|f| f.ph == b's') {
            unmatched += 1;
        }
        i = j;
    }
    t.flows = out;
    diag.links.flows_unmatched = unmatched;
    diag.warn_n(
        "flow_unmatched",
        unmatched,
        "flow arrows with an end but no start (or a start but no end), or not on any slice; not drawn".into(),
        String::new(),
    );
}

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

use super::builder::{Builder, EventIn, Fields, FlowEvent, PartRows};
use super::scan::{self, decode, int_text, micros_text_to_ns, Scan, StrSpan};
use crate::error::{excerpt, ImportError};
use crate::model::*;
use crate::warnings::{self, WarningKind};

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
    concrete_inputs: Option<(usize, usize)>,
    has_flops: bool,
    arg_name: Option<StrSpan>,
    arg_labels: Option<StrSpan>,
    sort_index: Option<i64>,
}

#[derive(Clone, Copy)]
enum RawLane {
    Int(i64),
    Str(StrSpan),
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

/// Where a parser stands in its file — what a part parsed elsewhere carries
/// so that it resumes there ([`ChromeParser::position`], [`ChromeParser::resume`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Position {
    /// The state, as a code that survives a byte encoding.
    pub(super) state: u8,
    pub(super) consumed: u64,
    pub(super) saw_trace_events: bool,
}

impl State {
    fn code(self) -> u8 {
        match self {
            State::Start => 0,
            State::ObjectKey => 1,
            State::Events { bare } => 2 + bare as u8,
            State::Done => 4,
            State::Abandoned => 5,
        }
    }

    fn of_code(code: u8) -> Option<State> {
        Some(match code {
            0 => State::Start,
            1 => State::ObjectKey,
            2 => State::Events { bare: false },
            3 => State::Events { bare: true },
            4 => State::Done,
            5 => State::Abandoned,
            _ => return None,
        })
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
                        self.b.diag.warn(warnings::SYNTAX_AFTER_EVENTS, || {
                            format!("at byte {at} ({msg}): {}", excerpt(&buf[i..]))
                        });
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

    /// Where this parser stands, for [`ChromeParser::resume`].
    pub(super) fn position(&self) -> Position {
        Position {
            state: self.state.code(),
            consumed: self.consumed,
            saw_trace_events: self.saw_trace_events,
        }
    }

    /// A parser that goes on from `at` with what `b` holds; `None` when
    /// `at` is not a position a parser can stand at.
    pub(super) fn resume(b: Builder, at: Position) -> Option<ChromeParser> {
        Some(ChromeParser {
            state: State::of_code(at.state)?,
            b,
            consumed: at.consumed,
            saw_trace_events: at.saw_trace_events,
        })
    }

    /// Whether the parser stands between events of the event list.
    pub(crate) fn between_events(&self) -> bool {
        matches!(self.state, State::Events { .. }) && self.b.open_b.values().all(|v| v.is_empty())
    }

    /// Appends what `later` parsed from the bytes right after this parser's
    /// last event, and takes over its position in the file. A decoded
    /// part's columns still in its encoding (`raw`) go straight into this
    /// model's columns.
    pub(super) fn absorb_with(&mut self, later: ChromeParser, raw: Option<impl PartRows>) {
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
                self.b.diag.warn(warnings::TRUNCATED, || {
                    format!(
                        "cut off after {events} complete events: {}",
                        excerpt(rest.trim_ascii_start())
                    )
                });
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
                        self.b
                            .diag
                            .warn(warnings::TRACE_EVENTS_NOT_ARRAY, || excerpt(&b[v..end]));
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
                    self.b
                        .diag
                        .warn(warnings::NON_OBJECT_EVENT, || excerpt(&b[i..end]));
                    Ok(Some(end))
                }
            },
            State::Abandoned => Ok(Some(b.len())),
            State::Done => {
                let end = b.len();
                // Once, however the bytes after the end arrive (in chunks or
                // not): it is one stretch of data, not one per chunk.
                if self.b.diag.warning_count("trailing_data") == 0 {
                    self.b
                        .diag
                        .warn(warnings::TRAILING_DATA, || excerpt(&b[i..end]));
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
    ConcreteInputs,
    Flops,
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
        5 if is(k, b"flops") => ArgKey::Flops,
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
        15 if is(k, b"Concrete Inputs") => ArgKey::ConcreteInputs,
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
            ArgKey::Flops => {
                ev.has_flops = true;
                return scan::skip_value(b, v, last);
            }
            ArgKey::ConcreteInputs => {
                let e = scan::skip_value(b, v, last)?;
                ev.concrete_inputs = Some((v, e));
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

/// The args fields every importer parses eagerly (`External id`,
/// `correlation`, `stream`, shapes…), read from args JSON text — one
/// definition for every format that carries Kineto-style args.
pub(super) fn args_fields(b: &mut Builder, args: &[u8]) -> Fields {
    let mut ev = RawEvent::default();
    if parse_args(args, 0, true, &mut ev).is_err() {
        return Fields::default();
    }
    fields_of(b, &ev, args)
}

/// The parsed args fields of an event whose spans point into `buf`.
fn fields_of(b: &mut Builder, ev: &RawEvent, buf: &[u8]) -> Fields {
    let span = |s: Option<(usize, usize)>| s.map(|(s, e)| &buf[s..e]);
    Fields {
        external_id: ev.external_id,
        correlation: ev.correlation,
        stream: ev.stream,
        seq: ev.seq,
        device: ev.device,
        fwd_thread: ev.fwd_thread,
        input_dims: b.compact(span(ev.input_dims)),
        input_types: b.compact(span(ev.input_types)),
        concrete_inputs: b.compact(span(ev.concrete_inputs)),
        has_flops: ev.has_flops,
    }
}

/// The JSON side of the builder: an event's spans in the input resolved
/// into the builder's typed calls.
impl Builder {
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
            self.diag
                .warn(warnings::INVALID_UTF8, || excerpt(&b[s.start..s.end]));
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

    fn time(
        &mut self,
        b: &[u8],
        span: Option<(usize, usize)>,
        kind: &'static WarningKind,
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
        if v.is_none() && kind == warnings::BAD_DUR && finite() {
            self.diag.warn(warnings::HUGE_DUR, || excerpt(ev));
            return None;
        }
        if v.is_none() {
            self.diag.warn(kind, || excerpt(ev));
        }
        v
    }

    /// One event of the input: its spans resolved, then handed to the
    /// builder's typed methods.
    fn add_event(&mut self, b: &[u8], ev: &RawEvent, start: usize, end: usize, buf_offset: u64) {
        let order = self.count_event(ev.ph);
        let source = (
            buf_offset + start as u64,
            (end - start).min(u32::MAX as usize) as u32,
        );
        let raw = &b[start..end];
        match ev.ph {
            b'X' | b'B' | b'E' | b'i' | b'I' | b'R' | b'C' | b's' | b't' | b'f' | b'M' => {}
            _ => {
                let ph = ev.ph;
                self.diag.warn(warnings::UNKNOWN_PHASE, || {
                    format!("ph {:?}: {}", ph as char, excerpt(raw))
                });
                return;
            }
        }
        let pid = self.lane_id(b, ev.pid);
        let tid = self.lane_id(b, ev.tid);
        if ev.ph == b'M' {
            self.metadata(b, ev, pid, tid);
            return;
        }
        let Some(ts) = self.time(b, ev.ts, warnings::BAD_TS, raw) else {
            if ev.ts.is_none() {
                self.diag.warn(warnings::MISSING_TS, || excerpt(raw));
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
            self.count_category(cat);
        }
        let track = self.track(pid, tid);
        self.max_ts_ns = self.max_ts_ns.max(ts);
        let span = |s: Option<(usize, usize)>| s.map(|(s, e)| &b[s..e]);
        let event = |me: &mut Builder, with_fields: bool| EventIn {
            name,
            cat,
            args: span(ev.args),
            fields: if with_fields {
                fields_of(me, ev, b)
            } else {
                Fields::default()
            },
            order,
            source,
        };
        match ev.ph {
            b'X' => {
                let dur = match ev.dur {
                    None => {
                        self.diag.warn(warnings::MISSING_DUR, || excerpt(raw));
                        0
                    }
                    Some(_) => match self.time(b, ev.dur, warnings::BAD_DUR, raw) {
                        Some(d) => d,
                        None => return,
                    },
                };
                let Some(dur) = self.check_dur(ts, dur, raw) else {
                    return;
                };
                let e = event(self, true);
                self.slice(track, ts, dur, &e);
            }
            b'B' => {
                let e = event(self, true);
                self.begin(track, ts, &e);
            }
            b'E' => self.end(track, ts, raw),
            b'i' | b'I' | b'R' => {
                let e = event(self, false);
                self.instant(track, ts, &e);
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
                        self.diag.warn(warnings::FLOW_WITHOUT_ID, || excerpt(raw));
                        return;
                    }
                };
                self.flow(FlowEvent {
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

    fn metadata(&mut self, b: &[u8], ev: &RawEvent, pid: LaneId, tid: LaneId) {
        let Some(name) = ev.name else { return };
        let key = &b[name.start..name.end];
        let arg_name = ev.arg_name.map(|s| self.intern_span(b, s));
        match key {
            b"process_name" => match arg_name {
                Some(n) => self.set_process_name(pid, n),
                None => {
                    self.process(pid);
                }
            },
            b"process_labels" => match ev.arg_labels.map(|s| self.intern_span(b, s)) {
                Some(l) => self.set_process_labels(pid, l),
                None => {
                    self.process(pid);
                }
            },
            b"process_sort_index" => self.set_process_sort_index(pid, ev.sort_index),
            b"thread_name" => match arg_name {
                Some(n) => self.set_thread_name(pid, tid, n),
                None => {
                    self.track(pid, tid);
                }
            },
            b"thread_sort_index" => self.set_thread_sort_index(pid, tid, ev.sort_index),
            _ => {}
        }
    }

    /// A counter event: one sample per numeric arg (`name.key` when it has
    /// several).
    fn counter(&mut self, b: &[u8], ev: &RawEvent, pid: LaneId, ts: i64, name: StrId, raw: &[u8]) {
        let process = self.process(pid);
        let Some((s, e)) = ev.args else { return };
        let parsed: Result<serde_json::Map<String, serde_json::Value>, _> =
            serde_json::from_slice(&b[s..e]);
        let Ok(map) = parsed else {
            self.diag.warn(warnings::BAD_COUNTER, || excerpt(raw));
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
            self.counter_sample(process, id, ts, x);
        }
    }
}

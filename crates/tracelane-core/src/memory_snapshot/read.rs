//! Reads an allocator snapshot pickle into [`MemorySnapshot`]: the decoder's
//! [`Sink`] takes every stack frame and every trace entry as soon as its
//! dict is filled (frames interned, entries into columns); the few
//! segments, blocks and settings are read from the decoded tree at the end.

use std::rc::Rc;

use rustc_hash::FxHashMap;

use super::columns::{
    Action, Annotation, Block, BlockState, DeviceTrace, Frame, MemorySnapshot, Segment,
};
use crate::ids::{Interner, StrId};
use crate::pickle::{self, Context, Decoder, Dict, Items, List, PickleError, Sink, Value};

/// Handle kinds the sink puts in place of what it consumed.
const FRAME: u8 = 1;
const ENTRY: u8 = 2;
const STACK: u8 = 3;

/// Whether bytes are a pickle (an allocator snapshot is the pickle
/// tracelane reads).
pub fn looks_like(head: &[u8]) -> bool {
    pickle::looks_like(head)
}

/// Reads a whole snapshot held in memory.
pub fn read(bytes: &[u8]) -> Result<MemorySnapshot, PickleError> {
    let mut r = SnapshotReader::default();
    for chunk in bytes.chunks(1 << 20) {
        r.push(chunk)?;
    }
    r.finish()
}

/// Reads a snapshot pushed in chunks.
#[derive(Default)]
pub struct SnapshotReader {
    decoder: Decoder,
    sink: Columns,
}

impl SnapshotReader {
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), PickleError> {
        self.decoder.push(chunk, &mut self.sink)
    }

    /// Ends the input. A truncated file keeps the entries read (on the
    /// devices in the order their lists were open) and says so.
    pub fn finish(mut self) -> Result<MemorySnapshot, PickleError> {
        let top = match self.decoder.finish() {
            Ok(v) => Some(v),
            Err(e) if self.sink.snap.entries.is_empty() => return Err(e),
            Err(e) => {
                self.sink.snap.diagnostics.truncated = Some(e.to_string());
                None
            }
        };
        let mut snap = std::mem::take(&mut self.sink.snap);
        snap.diagnostics.protocol = self.decoder.protocol();
        snap.diagnostics.bytes = self.decoder.offset() + self.decoder.trailing;
        let mut walk = Walk {
            snap: &mut snap,
            strings: &self.decoder.strings,
            stacks: &mut self.sink.stacks,
        };
        match &top {
            Some(Value::Dict(d)) => walk.top(d)?,
            Some(_) => {
                return Err(PickleError {
                    offset: 0,
                    message: "a pickle that is not an allocator snapshot (its top value is \
                              not a dict with segments and device_traces)"
                        .into(),
                })
            }
            None => {
                let open: Vec<Value> = self.decoder.stack().to_vec();
                walk.truncated_devices(&open);
            }
        }
        drop(top);
        self.decoder.clear();
        shrink(&mut snap);
        snap.strings = std::mem::take(&mut self.decoder.strings);
        if snap.devices.is_empty() && snap.segments.is_empty() && !snap.has_segments {
            return Err(PickleError {
                offset: 0,
                message: "a pickle that is not an allocator snapshot (no segments, no \
                          device_traces)"
                    .into(),
            });
        }
        Ok(snap)
    }
}

/// Stacks interned by their frames.
#[derive(Default)]
struct Stacks {
    ids: FxHashMap<Box<[u32]>, u32>,
    /// The frame ids of the list being interned (kept to save an
    /// allocation per entry).
    scratch: Vec<u32>,
}

/// The sink: frames and entries straight into the snapshot's columns.
#[derive(Default)]
struct Columns {
    snap: MemorySnapshot,
    frames: FxHashMap<Frame, u32>,
    streams: FxHashMap<u64, u16>,
    stacks: Stacks,
    words: Words,
}

/// What a string is to the sink: a key it reads, an action's name, or
/// neither — worked out once per interned string, so that each of the
/// millions of dicts is read by table lookups, not string comparisons.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Word {
    Unseen,
    Other,
    Filename,
    Line,
    Name,
    Action,
    Addr,
    Size,
    Time,
    Stream,
    Frames,
    Note,
    Act(Action),
}

#[derive(Default)]
struct Words(Vec<Word>);

impl Words {
    fn of(&mut self, strings: &Interner, v: &Value) -> Word {
        let Some(id) = v.as_str_id() else {
            return Word::Other;
        };
        let i = id.0 as usize;
        if i >= self.0.len() {
            self.0.resize(i + 1, Word::Unseen);
        }
        if self.0[i] == Word::Unseen {
            self.0[i] = match strings.get(id) {
                "filename" => Word::Filename,
                "line" => Word::Line,
                "name" => Word::Name,
                "action" => Word::Action,
                "addr" | "device_free" => Word::Addr,
                "size" => Word::Size,
                "time_us" => Word::Time,
                "stream" => Word::Stream,
                "frames" => Word::Frames,
                "user_metadata" | "compile_context" => Word::Note,
                s => match Action::parse(s) {
                    Action::Other => Word::Other,
                    a => Word::Act(a),
                },
            };
        }
        self.0[i]
    }
}

/// The fields of one dict the sink reads.
#[derive(Default)]
struct Fields<'a> {
    file: Option<StrId>,
    line: Option<i64>,
    name: Option<StrId>,
    action: Option<&'a Value>,
    addr: Option<u64>,
    size: Option<u64>,
    time: i64,
    stream: u64,
    frames: Option<&'a Value>,
    notes: [Option<StrId>; 2],
}

impl Sink for Columns {
    fn dict(&mut self, cx: &mut Context<'_>, dict: &Dict) -> Option<Value> {
        let items = dict.items.borrow();
        let mut f = Fields::default();
        for (k, v) in items.iter() {
            match self.words.of(cx.strings, k) {
                Word::Filename => f.file = v.as_str_id(),
                Word::Line => f.line = v.as_int(),
                Word::Name => f.name = v.as_str_id(),
                Word::Action => f.action = Some(v),
                Word::Addr => f.addr = v.as_u64(),
                Word::Size => f.size = v.as_u64(),
                Word::Time => f.time = v.as_int().unwrap_or(0),
                Word::Stream => f.stream = v.as_u64().unwrap_or(0),
                Word::Frames => f.frames = Some(v),
                Word::Note => {
                    let free = f.notes.iter().position(Option::is_none);
                    if let (Some(s), Some(i)) = (v.as_str_id(), free) {
                        let text = cx.strings.get(s);
                        if !text.is_empty() && text != "N/A" {
                            f.notes[i] = Some(s);
                        }
                    }
                }
                _ => {}
            }
        }
        if (3..=6).contains(&items.len()) {
            if let (Some(filename), Some(line), Some(name)) = (f.file, f.line, f.name) {
                return Some(Value::Handle(FRAME, self.frame(filename, line, name)));
            }
        }
        let action = match self.words.of(cx.strings, f.action?) {
            Word::Act(a) => a,
            _ if f.action?.as_str_id().is_some() => Action::Other,
            _ => return None,
        };
        let row = self.entry(cx, action, &f)?;
        Some(Value::Handle(ENTRY, row))
    }
}

impl Columns {
    fn frame(&mut self, filename: StrId, line: i64, name: StrId) -> u32 {
        let f = Frame {
            filename,
            line,
            name,
        };
        let next = self.snap.frames.len() as u32;
        let id = *self.frames.entry(f).or_insert(next);
        if id == next {
            self.snap.frames.push(f);
        }
        id
    }

    /// Adds a trace entry to the columns; its row.
    fn entry(&mut self, cx: &mut Context<'_>, action: Action, f: &Fields) -> Option<u32> {
        let snap = &mut self.snap;
        if action == Action::Other {
            snap.diagnostics.unknown_actions += 1;
        }
        let (Some(addr), Some(size)) = (f.addr, f.size) else {
            snap.diagnostics.malformed_entries += 1;
            return None;
        };
        let stack = match f.frames {
            Some(frames) => self.stacks.of(cx, frames, snap),
            None => 0,
        };
        let next = snap.streams.len() as u16;
        let s = *self.streams.entry(f.stream).or_insert(next);
        if s == next && snap.streams.len() < u16::MAX as usize {
            snap.streams.push(f.stream);
        }
        let e = &mut snap.entries;
        let row = e.len() as u32;
        for note in f.notes.iter().flatten() {
            snap.entry_notes.push((row, *note));
        }
        e.action.push(action);
        e.addr.push(addr);
        e.size.push(size);
        e.time_us.push(f.time);
        e.stream.push(s);
        e.stack.push(stack);
        Some(row)
    }
}

impl Stacks {
    /// The stack id of a `frames` value (a list of frames, or a list the
    /// memo already gave up for its id).
    fn of(&mut self, cx: &mut Context<'_>, frames: &Value, snap: &mut MemorySnapshot) -> u32 {
        match frames {
            Value::Handle(STACK, id) => *id,
            Value::List(l) => {
                if l.tag.get() != u32::MAX {
                    return l.tag.get();
                }
                let id = self.intern(l, snap);
                l.tag.set(id);
                cx.retire_list(l, Value::Handle(STACK, id));
                id
            }
            _ => 0,
        }
    }

    /// A list of frames (without a context: at the end of the file).
    fn of_value(&mut self, frames: &Value, snap: &mut MemorySnapshot) -> u32 {
        match frames {
            Value::Handle(STACK, id) => *id,
            Value::List(l) if l.tag.get() != u32::MAX => l.tag.get(),
            Value::List(l) => {
                let id = self.intern(l, snap);
                l.tag.set(id);
                id
            }
            _ => 0,
        }
    }

    fn intern(&mut self, l: &Rc<List>, snap: &mut MemorySnapshot) -> u32 {
        if snap.stack_starts.is_empty() {
            snap.stack_starts.extend([0, 0]);
            self.ids.insert(Box::new([]), 0);
        }
        let mut ids = std::mem::take(&mut self.scratch);
        ids.clear();
        match &*l.items.borrow() {
            Items::Values(v) => ids.extend(v.iter().filter_map(|f| match f {
                Value::Handle(FRAME, id) => Some(*id),
                _ => None,
            })),
            Items::Handles { kind, start, end } if *kind == FRAME => ids.extend(*start..*end),
            Items::Handles { .. } => {}
        }
        let id = match self.ids.get(ids.as_slice()) {
            Some(&id) => id,
            None => {
                let id = (snap.stack_starts.len() - 1) as u32;
                snap.stack_frames.extend_from_slice(&ids);
                snap.stack_starts.push(snap.stack_frames.len() as u32);
                self.ids.insert(ids.as_slice().into(), id);
                id
            }
        };
        self.scratch = ids;
        id
    }
}

/// Reads the decoded top dict (segments, device lists, settings).
struct Walk<'a> {
    snap: &'a mut MemorySnapshot,
    strings: &'a Interner,
    stacks: &'a mut Stacks,
}

impl Walk<'_> {
    fn get(&self, d: &Dict, key: &str) -> Option<Value> {
        get(self.strings, d, key)
    }

    fn text(&self, v: &Value) -> Option<StrId> {
        v.as_str_id()
    }

    fn top(&mut self, d: &Rc<Dict>) -> Result<(), PickleError> {
        let segments = self.get(d, "segments");
        let traces = self.get(d, "device_traces");
        if segments.is_none() && traces.is_none() {
            return Err(PickleError {
                offset: 0,
                message: "a pickle that is not an allocator snapshot (its dict has no \
                          segments and no device_traces)"
                    .into(),
            });
        }
        if let Some(Value::List(l)) = &segments {
            self.snap.has_segments = true;
            for s in l.values() {
                if let Value::Dict(s) = s {
                    self.segment(&s);
                }
            }
        }
        if let Some(Value::List(l)) = &traces {
            for (device, list) in l.values().iter().enumerate() {
                if let Value::List(list) = list {
                    self.device(device as i64, list);
                }
            }
        }
        if let Some(Value::Dict(s)) = self.get(d, "allocator_settings") {
            for (k, v) in s.items.borrow().iter() {
                let Some(k) = k.as_str_id() else { continue };
                let key = self.strings.get(k).to_string();
                let value = self.setting_text(v);
                if key == "trace_alloc_overflowed" {
                    self.snap.overflowed = matches!(v, Value::Bool(true));
                }
                self.snap.settings.push((key, value));
            }
        }
        if let Some(Value::List(l)) = self.get(d, "external_annotations") {
            for a in l.values() {
                if let Value::Dict(a) = a {
                    self.annotation(&a);
                }
            }
        }
        if let Some(Value::List(l)) = self.get(d, "host_traces") {
            for t in l.values() {
                if let Value::List(t) = t {
                    self.snap.diagnostics.host_entries += t.len() as u64;
                }
            }
        }
        Ok(())
    }

    fn setting_text(&self, v: &Value) -> String {
        match v {
            Value::Str(s) => self.strings.get(*s).to_string(),
            Value::Int(i) => i.to_string(),
            Value::UInt(i) => i.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::None => "None".into(),
            Value::Dict(d) => {
                let parts: Vec<String> = d
                    .items
                    .borrow()
                    .iter()
                    .map(|(k, v)| format!("{}: {}", self.setting_text(k), self.setting_text(v)))
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
            _ => "…".into(),
        }
    }

    /// A device's entries: a run of consumed dicts, in order.
    fn device(&mut self, device: i64, list: &List) {
        let rows: Vec<u32> = match &*list.items.borrow() {
            Items::Handles { kind, start, end } if *kind == ENTRY => (*start..*end).collect(),
            Items::Handles { .. } => Vec::new(),
            Items::Values(v) => v
                .iter()
                .filter_map(|e| match e {
                    Value::Handle(ENTRY, id) => Some(*id),
                    _ => None,
                })
                .collect(),
        };
        let (Some(&lo), Some(&hi)) = (rows.iter().min(), rows.iter().max()) else {
            self.snap.devices.push(DeviceTrace {
                device,
                entries: 0..0,
            });
            return;
        };
        if (hi - lo + 1) as usize != rows.len() || rows.windows(2).any(|w| w[1] != w[0] + 1) {
            self.snap.diagnostics.out_of_order += rows.len() as u64;
        }
        self.snap.devices.push(DeviceTrace {
            device,
            entries: lo..hi + 1,
        });
    }

    /// A truncated file: the entries still on the decoder's stack — in the
    /// device lists already filled, the list being filled, and the entries
    /// read since its last `APPENDS` — each list a device, in order.
    fn truncated_devices(&mut self, open: &[Value]) {
        let mut groups: Vec<Vec<u32>> = Vec::new();
        let entries_of = |l: &List| -> Vec<u32> {
            l.values()
                .iter()
                .filter_map(|v| match v {
                    Value::Handle(ENTRY, id) => Some(*id),
                    _ => None,
                })
                .collect()
        };
        for v in open {
            match v {
                Value::List(l) => {
                    let items = l.values();
                    if items.iter().any(|i| matches!(i, Value::List(_))) {
                        for item in items {
                            if let Value::List(inner) = item {
                                groups.push(entries_of(&inner));
                            }
                        }
                    } else if matches!(items.first(), Some(Value::Handle(ENTRY, _)))
                        || items.is_empty()
                    {
                        groups.push(entries_of(l));
                    }
                }
                Value::Handle(ENTRY, id) => match groups.last_mut() {
                    Some(g) => g.push(*id),
                    None => groups.push(vec![*id]),
                },
                _ => {}
            }
        }
        for g in groups.into_iter().filter(|g| !g.is_empty()) {
            let (lo, hi) = (g[0], g[g.len() - 1]);
            let device = self.snap.devices.len() as i64;
            self.snap.devices.push(DeviceTrace {
                device,
                entries: lo..hi + 1,
            });
        }
    }

    fn segment(&mut self, s: &Dict) {
        let strings = self.strings;
        let num = |k: &str| get(strings, s, k).and_then(|v| v.as_u64()).unwrap_or(0);
        let device = self.get(s, "device").and_then(|v| v.as_int()).unwrap_or(0);
        let seg_type = self.get(s, "segment_type").and_then(|v| self.text(&v));
        let small = seg_type.map(|t| self.strings.get(t) == "small");
        let pool = match self.get(s, "segment_pool_id") {
            Some(Value::Tuple(t)) if t.items.len() == 2 => (
                t.items[0].as_int().unwrap_or(0),
                t.items[1].as_int().unwrap_or(0),
            ),
            _ => (0, 0),
        };
        let frames = self.get(s, "frames").unwrap_or(Value::None);
        let stack = self.stacks.of_value(&frames, self.snap);
        let total = num("total_size");
        let expandable = matches!(self.get(s, "is_expandable"), Some(Value::Bool(true)));
        let first = self.snap.blocks.len() as u32;
        if let Some(Value::List(blocks)) = self.get(s, "blocks") {
            for b in blocks.values() {
                if let Value::Dict(b) = b {
                    self.block(&b);
                }
            }
        }
        let seg = Segment {
            device,
            address: num("address"),
            total_size: total,
            allocated_size: num("allocated_size"),
            stream: num("stream"),
            small: small.unwrap_or(total == SMALL_BUFFER && !expandable),
            expandable,
            pool,
            stack,
            blocks: first..self.snap.blocks.len() as u32,
        };
        self.snap.segments.push(seg);
    }

    fn block(&mut self, b: &Dict) {
        let strings = self.strings;
        let num = |k: &str| get(strings, b, k).and_then(|v| v.as_u64());
        let state = match self.get(b, "state").and_then(|v| self.text(&v)) {
            Some(s) => match self.strings.get(s) {
                "active_allocated" => BlockState::ActiveAllocated,
                "active_pending_free" => BlockState::ActivePendingFree,
                _ => BlockState::Inactive,
            },
            None => BlockState::Inactive,
        };
        let mut frames = self.get(b, "frames");
        let mut requested = num("requested_size");
        // Snapshots before `frames` / `requested_size` kept a `history`
        // of {addr, real_size, frames} (`_block_extra_legacy` in
        // `torch/cuda/_memory_viz.py`).
        if frames.is_none() {
            if let Some(Value::List(h)) = self.get(b, "history") {
                if let Some(Value::Dict(last)) = h.values().last() {
                    frames = self.get(last, "frames");
                    requested = requested.or(self.get(last, "real_size").and_then(|v| v.as_u64()));
                }
            }
        }
        let stack = match &frames {
            Some(f) => self.stacks.of_value(f, self.snap),
            None => 0,
        };
        let size = num("size").unwrap_or(0);
        self.snap.blocks.push(Block {
            address: num("address").unwrap_or(0),
            size,
            requested_size: requested.unwrap_or(size),
            state,
            stack,
        });
    }

    fn annotation(&mut self, a: &Dict) {
        let Some(name) = self.get(a, "name").and_then(|v| v.as_str_id()) else {
            return;
        };
        let stage = self.get(a, "stage").and_then(|v| v.as_str_id());
        self.snap.annotations.push(Annotation {
            name,
            start: stage.map(|s| self.strings.get(s)) == Some("START"),
            device: self.get(a, "device").and_then(|v| v.as_int()).unwrap_or(0),
            time_us: self.get(a, "time_us").and_then(|v| v.as_int()).unwrap_or(0),
        });
    }
}

/// Columns grew by doubling while read: give back what is not used.
fn shrink(snap: &mut MemorySnapshot) {
    let e = &mut snap.entries;
    e.action.shrink_to_fit();
    e.addr.shrink_to_fit();
    e.size.shrink_to_fit();
    e.time_us.shrink_to_fit();
    e.stream.shrink_to_fit();
    e.stack.shrink_to_fit();
    snap.stack_frames.shrink_to_fit();
    snap.stack_starts.shrink_to_fit();
    snap.frames.shrink_to_fit();
}

fn get(strings: &Interner, d: &Dict, key: &str) -> Option<Value> {
    d.items
        .borrow()
        .iter()
        .find(|(k, _)| k.as_str_id().map(|s| strings.get(s)) == Some(key))
        .map(|(_, v)| v.clone())
}

/// `kSmallBuffer`: the small pool's segment size (`CUDACachingAllocator.cpp`).
pub(crate) const SMALL_BUFFER: u64 = 2 << 20;

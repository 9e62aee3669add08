//! The one columnar trace model every importer produces.
//!
//! Slices are stored struct-of-arrays, grouped by track and sorted by start
//! time within a track, so a track is a contiguous index range
//! (`Track::slices`). Strings are interned once (`StrId`); time is `i64`
//! nanoseconds on the trace's own clock (`Trace::clock_offset_ns` turns it
//! into epoch nanoseconds where the file says how).

use std::borrow::Cow;
use std::ops::Range;

use crate::category::Category;
pub use crate::default_column::DefaultColumn;
pub use crate::ids::{Interner, ProcessIdx, SliceIdx, StrId, TrackIdx, NONE_I64, NO_SLICE, NO_STR};

/// A member name looked for in many slices' args ([`Trace::args_key`]).
pub struct ArgsKey {
    quoted: String,
    packed: crate::packed_args::KeyIds,
}

/// A `pid` or `tid` as the file wrote it: an integer, or a string that is not
/// one (`"Spans"`, `"stream 7"`). A string holding only an integer (`"25738"`
/// in 2021 traces) is stored as that integer, so it names the same lane as
/// the integer form used elsewhere in the same file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LaneId {
    Int(i64),
    Str(StrId),
}

/// What a track carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TrackKind {
    /// A host thread: ops, annotations, runtime calls.
    HostThread,
    /// A device stream / queue / NeuronCore lane: kernels, copies, device windows.
    DeviceStream,
}

#[derive(Clone, Debug)]
pub struct Process {
    pub pid: LaneId,
    pub name: Option<StrId>,
    /// `process_labels` (e.g. `CPU`, `GPU 0`, `NeuronCore 0`).
    pub labels: Option<StrId>,
    pub sort_index: Option<i64>,
}

#[derive(Clone, Debug)]
pub struct Track {
    pub process: ProcessIdx,
    pub tid: LaneId,
    pub kind: TrackKind,
    pub name: Option<StrId>,
    pub sort_index: Option<i64>,
    /// The slices of this track: a contiguous range of [`Slices`], sorted by
    /// start (then longest first).
    pub slices: Range<u32>,
    /// Deepest nesting level on this track (0 = top level only).
    pub max_depth: u16,
    /// How deep this track sits under other tracks of its process (Perfetto
    /// nests tracks under tracks; 0 everywhere else).
    pub nesting: u8,
}

/// All duration events (`X` and matched `B`/`E`), struct-of-arrays. The
/// columns one format fills and others leave absent store nothing while
/// every row is absent ([`DefaultColumn`]).
#[derive(Debug, Clone)]
pub struct Slices {
    pub track: Vec<TrackIdx>,
    pub start_ns: Vec<i64>,
    pub dur_ns: Vec<i64>,
    pub name: Vec<StrId>,
    pub cat: Vec<StrId>,
    pub category: Vec<Category>,
    pub depth: Vec<u16>,
    /// Enclosing slice on the same track ([`NO_SLICE`] at top level).
    pub parent: Vec<u32>,
    /// `args["External id"]` (or legacy `external id`), [`NONE_I64`] if absent.
    pub external_id: DefaultColumn<i64>,
    /// `args.correlation`, [`NONE_I64`] if absent.
    pub correlation: DefaultColumn<i64>,
    /// `args.stream` (device events), [`NONE_I64`] if absent or not an integer.
    pub stream: DefaultColumn<i64>,
    /// `args["Input Dims"]` as compact JSON, [`NO_STR`] if absent.
    pub input_dims: DefaultColumn<StrId>,
    /// `args["Sequence number"]`, [`NONE_I64`] if absent.
    pub sequence_nr: DefaultColumn<i64>,
    /// `args.device` (device events' device index), [`NONE_I64`] if absent.
    pub device: DefaultColumn<i64>,
    /// `args["Fwd thread id"]` (backward ops: the forward's thread), [`NONE_I64`] if absent.
    pub fwd_thread: DefaultColumn<i64>,
    /// `args["Input type"]` as compact JSON, [`NO_STR`] if absent.
    pub input_types: DefaultColumn<StrId>,
    /// `args["Concrete Inputs"]` as compact JSON (scalar arguments such as
    /// a convolution's stride and padding), [`NO_STR`] if absent.
    pub concrete_inputs: DefaultColumn<StrId>,
    /// Raw `args` JSON text, `args_arena[off .. off + len]`, kept for device
    /// events, runtime calls and unknown categories (grid, block, bytes,
    /// stream…). Ops, annotations and Python frames keep their shapes and
    /// types above; the rest of their args is read back from `source`.
    pub args_range: DefaultColumn<(u64, u32)>,
    /// Where the whole event's JSON text sits in the (decompressed) input:
    /// byte offset and length, for the details panel to read it back.
    pub source: DefaultColumn<(u64, u32)>,
    /// Position of the event in the file (0-based among all events), for
    /// stable ordering and for pointing at the source in diagnostics.
    pub file_order: Vec<u32>,
}

impl Default for Slices {
    fn default() -> Self {
        Slices {
            track: Vec::new(),
            start_ns: Vec::new(),
            dur_ns: Vec::new(),
            name: Vec::new(),
            cat: Vec::new(),
            category: Vec::new(),
            depth: Vec::new(),
            parent: Vec::new(),
            external_id: DefaultColumn::new(NONE_I64),
            correlation: DefaultColumn::new(NONE_I64),
            stream: DefaultColumn::new(NONE_I64),
            input_dims: DefaultColumn::new(NO_STR),
            sequence_nr: DefaultColumn::new(NONE_I64),
            device: DefaultColumn::new(NONE_I64),
            fwd_thread: DefaultColumn::new(NONE_I64),
            input_types: DefaultColumn::new(NO_STR),
            concrete_inputs: DefaultColumn::new(NO_STR),
            args_range: DefaultColumn::new((0, 0)),
            source: DefaultColumn::new((0, 0)),
            file_order: Vec::new(),
        }
    }
}

impl Slices {
    pub fn len(&self) -> usize {
        self.start_ns.len()
    }
    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }
    pub fn end_ns(&self, i: usize) -> i64 {
        self.start_ns[i].saturating_add(self.dur_ns[i])
    }
    pub fn heap_bytes(&self) -> usize {
        let n = self.start_ns.len();
        // track, start, duration, name, cat, category, depth, parent, order.
        n * (4 + 8 + 8 + 4 + 4 + 1 + 2 + 4 + 4)
            + self.external_id.heap_bytes()
            + self.correlation.heap_bytes()
            + self.stream.heap_bytes()
            + self.sequence_nr.heap_bytes()
            + self.device.heap_bytes()
            + self.fwd_thread.heap_bytes()
            + self.input_dims.heap_bytes()
            + self.input_types.heap_bytes()
            + self.concrete_inputs.heap_bytes()
            + self.args_range.heap_bytes()
            + self.source.heap_bytes()
    }
}

/// Instant events (`i`/`I`), e.g. `[memory]`.
#[derive(Default, Debug, Clone)]
pub struct Instants {
    pub track: Vec<TrackIdx>,
    pub ts_ns: Vec<i64>,
    pub name: Vec<StrId>,
    pub cat: Vec<StrId>,
    pub args_range: Vec<(u64, u32)>,
    /// Offset and length of the event's JSON text in the input.
    pub source: Vec<(u64, u32)>,
}

/// Counter samples (`C`): one row per (event, series).
#[derive(Default, Debug, Clone)]
pub struct Counters {
    pub process: Vec<ProcessIdx>,
    /// Series name: `"<event name>.<arg key>"` or the event name for `value`.
    pub series: Vec<StrId>,
    pub ts_ns: Vec<i64>,
    pub value: Vec<f64>,
}

impl Counters {
    /// Room for exactly `n` more samples in every column.
    pub fn reserve_exact(&mut self, n: usize) {
        self.process.reserve_exact(n);
        self.series.reserve_exact(n);
        self.ts_ns.reserve_exact(n);
        self.value.reserve_exact(n);
    }
}

/// Flow arrows resolved to slices (`s`/`t`/`f` with the same id and category).
#[derive(Default, Debug, Clone)]
pub struct Flows {
    pub cat: Vec<StrId>,
    pub id: Vec<u64>,
    pub from: Vec<u32>,
    pub to: Vec<u32>,
}

/// How a device event found the op that launched it, or why it did not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkState {
    /// Not a device event (or not a runtime call, for the launch column).
    NotApplicable,
    /// Linked through `args` ids (correlation, External id).
    ByArgs,
    /// Linked through an `ac2g` / `launch` flow because the args were missing.
    ByFlow,
    /// Linked by time containment on the launching thread (old Kineto's
    /// `External id == correlation` "not linked" marker, or no External id).
    ByContainment,
    /// The event names a correlation id that no runtime call carries.
    Dangling,
    /// No launch could be found at all.
    Unlinked,
}

/// CPU op ↔ runtime call ↔ device event links, resolved once at import.
#[derive(Default, Debug, Clone)]
pub struct Links {
    /// For device events: the runtime/driver call that launched it ([`NO_SLICE`] if none).
    pub launch: Vec<u32>,
    /// For runtime calls and device events: the CPU op they belong to ([`NO_SLICE`] if none).
    /// For `gpu_user_annotation`: the `user_annotation` it mirrors.
    pub op: Vec<u32>,
    /// How `op` was found for device events and runtime calls.
    pub state: Vec<LinkState>,
}

impl Links {
    /// The host slice a device event's work goes to: the op it is linked
    /// to, else its launch's op, else its launch ([`NO_SLICE`]: none).
    pub fn host_slice(&self, d: u32) -> u32 {
        let at = |v: &[u32], i: u32| v.get(i as usize).copied().unwrap_or(NO_SLICE);
        match (at(&self.op, d), at(&self.launch, d)) {
            (NO_SLICE, NO_SLICE) => NO_SLICE,
            (NO_SLICE, r) => match at(&self.op, r) {
                NO_SLICE => r,
                op => op,
            },
            (op, _) => op,
        }
    }
}

/// The imported trace.
#[derive(Default, Debug, Clone)]
pub struct Trace {
    pub strings: Interner,
    pub processes: Vec<Process>,
    pub tracks: Vec<Track>,
    pub slices: Slices,
    pub instants: Instants,
    pub counters: Counters,
    pub flows: Flows,
    pub links: Links,
    /// Raw `args` texts, indexed by `Slices::args_range` / `Instants::args_range`:
    /// JSON, or packed stats ([`crate::packed_args`]) written out as JSON
    /// when read.
    pub args_arena: Vec<u8>,
    /// The names packed args need, per process.
    pub packed_args: crate::packed_args::PackedArgs,
    /// No args text was kept (the caller keeps the input: see
    /// [`crate::ImportOptions::args_in_source`]); every event's args are in
    /// the input at its `source` range, read with [`crate::import::event_args`].
    pub args_in_source: bool,
    /// Add to a timestamp to get epoch nanoseconds (`baseTimeNanoseconds`,
    /// or 0 when timestamps are already absolute).
    pub clock_offset_ns: i64,
    /// Header keys other than `traceEvents` that the importer kept
    /// (`schemaVersion`, `displayTimeUnit`, `deviceProperties`, …) as JSON text.
    pub header: Vec<(String, String)>,
    /// What the importer and linker counted, repaired and decided.
    pub diagnostics: crate::error::Diagnostics,
    /// A Neuron device profile's typed tables (Parquet import only).
    pub device_profile: Option<Box<crate::device_profile::DeviceProfile>>,
    /// A Neuron system profile's tables beside its events (HBM usage,
    /// metadata, the device profiles it lists, summary counters).
    pub neuron_system: Option<Box<crate::neuron_system::NeuronSystemInfo>>,
    /// PyTorch's raw memory timelines read beside the trace (one per
    /// device it was exported for).
    pub memory_timelines: Vec<crate::memory_timeline::MemoryTimeline>,
    /// A PyTorch allocator snapshot of the same run (or alone); its curves
    /// are counter lanes of the trace.
    pub memory_snapshot: Option<Box<crate::memory_snapshot::MemorySnapshot>>,
    /// The snapshot's report at its peak (times epoch µs).
    pub memory_snapshot_report: Option<Box<crate::memory_snapshot::report::SnapshotReport>>,
    /// An XPlane profile's HLO modules, devices and wall clock.
    pub xla: Option<Box<crate::xla::XlaInfo>>,
}

impl Trace {
    pub fn str(&self, id: StrId) -> &str {
        if id == NO_STR {
            ""
        } else {
            self.strings.get(id)
        }
    }
    pub fn slice_name(&self, i: usize) -> &str {
        self.str(self.slices.name[i])
    }
    /// The `args` JSON of a slice as kept at import (`{}` when it had
    /// none or when it was left in the source; see [`Slices::source`]).
    pub fn slice_args_json(&self, i: usize) -> Cow<'_, str> {
        let (off, len) = self.slices.args_range[i];
        self.arena_text(off, len, self.slices.track[i])
    }
    pub fn instant_args_json(&self, i: usize) -> Cow<'_, str> {
        let (off, len) = self.instants.args_range[i];
        self.arena_text(off, len, self.instants.track[i])
    }
    /// What [`Trace::slice_args_have`] looks for: a member named `key`.
    pub fn args_key(&self, key: &str) -> ArgsKey {
        ArgsKey {
            quoted: format!("\"{key}\""),
            packed: self.packed_args.key(key),
        }
    }
    /// Whether a slice's args may have the member: exact for packed args,
    /// for JSON whether the quoted key occurs in the text (a reader parses
    /// it next) — without writing packed args out.
    pub fn slice_args_have(&self, i: usize, key: &ArgsKey) -> bool {
        let (off, len) = self.slices.args_range[i];
        let Some(bytes) = self.arena_bytes(off, len) else {
            return false;
        };
        if bytes[0] == crate::packed_args::TAG {
            let p = self.tracks[self.slices.track[i].idx()].process;
            return key.packed.in_entry(p, bytes);
        }
        let quoted = key.quoted.as_bytes();
        memchr::memmem::find(bytes, quoted).is_some()
    }
    /// Slice `i`'s member `key` read from its packed args without
    /// writing them out ([`Stat::Json`](crate::packed_args::Stat): only
    /// its JSON says — args not packed, or the member may come from its
    /// event metadata).
    pub fn slice_packed_stat(&self, i: usize, key: &ArgsKey) -> crate::packed_args::Stat<'_> {
        use crate::packed_args::{Stat, TAG};
        let (off, len) = self.slices.args_range[i];
        match self.arena_bytes(off, len) {
            None => Stat::Missing,
            Some(bytes) if bytes[0] == TAG => {
                let p = self.tracks[self.slices.track[i].idx()].process;
                key.packed.stat(p, bytes)
            }
            Some(_) => Stat::Json,
        }
    }
    fn arena_bytes(&self, off: u64, len: u32) -> Option<&[u8]> {
        if len == 0 {
            return None;
        }
        self.args_arena
            .get(off as usize..off as usize + len as usize)
    }
    fn arena_text(&self, off: u64, len: u32, track: TrackIdx) -> Cow<'_, str> {
        let Some(bytes) = self.arena_bytes(off, len) else {
            return Cow::Borrowed("{}");
        };
        let p = self
            .tracks
            .get(track.idx())
            .map_or(ProcessIdx(0), |t| t.process);
        crate::packed_args::text(&self.packed_args, p, bytes)
    }
    /// First start and last end over all slices, instants and counters.
    pub fn time_span_ns(&self) -> Option<(i64, i64)> {
        let mut lo = i64::MAX;
        let mut hi = i64::MIN;
        for i in 0..self.slices.len() {
            lo = lo.min(self.slices.start_ns[i]);
            hi = hi.max(self.slices.end_ns(i));
        }
        for &t in self.instants.ts_ns.iter().chain(self.counters.ts_ns.iter()) {
            lo = lo.min(t);
            hi = hi.max(t);
        }
        (lo <= hi).then_some((lo, hi))
    }

    /// The first of a list of slices as `[start, end)` (where a view opens
    /// the timeline on them).
    pub fn first_span(&self, slices: &[u32]) -> Option<(i64, i64)> {
        let &s = slices.first()?;
        let s = s as usize;
        Some((self.slices.start_ns[s], self.slices.end_ns(s)))
    }

    /// Whether a slice is host-side work. Its category decides where that
    /// is definite (ops, annotations, runtime and driver calls, Python
    /// frames, profiler overhead are CPU events in PyTorch whatever lane
    /// they sit on; kernels, copies, sets, syncs and device windows are
    /// device work); its lane decides the rest.
    pub fn on_host(&self, slice: usize) -> bool {
        match self.slices.category[slice] {
            Category::CpuOp
            | Category::UserAnnotation
            | Category::PythonFunction
            | Category::Overhead
            | Category::Runtime => true,
            Category::Other => self.track_of(slice).kind == TrackKind::HostThread,
            _ => false,
        }
    }
    pub fn track_of(&self, slice: usize) -> &Track {
        &self.tracks[self.slices.track[slice].idx()]
    }
    /// Bytes the model's data occupies (lengths, not reserved capacity).
    pub fn heap_bytes(&self) -> usize {
        self.strings.heap_bytes()
            + self.slices.heap_bytes()
            + self.args_arena.len()
            + self.packed_args.heap_bytes()
            + self.instants.ts_ns.len() * (4 + 8 + 4 + 4 + 12 + 12)
            + self.counters.ts_ns.len() * (4 + 4 + 8 + 8)
            + self.flows.id.len() * (4 + 8 + 4 + 4)
            + self.links.launch.len() * (4 + 4 + 1)
    }
    /// Tracks in display order: host lanes before device lanes, then by
    /// `process_sort_index` (else pid), `thread_sort_index` (else tid).
    pub fn lane_order(&self) -> Vec<TrackIdx> {
        let mut order: Vec<TrackIdx> = (0..self.tracks.len() as u32).map(TrackIdx).collect();
        let lane_key = |id: LaneId| match id {
            LaneId::Int(v) => (0u8, v, Natural(String::new())),
            LaneId::Str(s) => (1u8, 0, Natural(self.str(s).to_string())),
        };
        order.sort_by_cached_key(|t| {
            let tr = &self.tracks[t.idx()];
            let p = &self.processes[tr.process.0 as usize];
            (
                tr.kind == TrackKind::DeviceStream,
                p.sort_index.unwrap_or(i64::MAX),
                lane_key(p.pid),
                tr.sort_index.unwrap_or(i64::MAX),
                lane_key(tr.tid),
            )
        });
        order
    }

    /// Adds a counter series (an analysis's derived counter: queue
    /// length, copy bandwidth) to a process; shown like the file's own.
    pub fn add_counter_series(&mut self, process: ProcessIdx, series: &str, points: &[(i64, f64)]) {
        let name = self.strings.intern(series);
        for &(ts, value) in points {
            self.counters.process.push(process);
            self.counters.series.push(name);
            self.counters.ts_ns.push(ts);
            self.counters.value.push(value);
        }
    }

    /// A process as people name it: its `process_labels` (`GPU 0`), else
    /// its name, else `process <pid>`.
    pub fn process_label(&self, p: usize) -> String {
        let process = &self.processes[p];
        process
            .labels
            .or(process.name)
            .map(|s| self.str(s).to_string())
            .unwrap_or_else(|| format!("process {}", self.lane_label(process.pid)))
    }

    /// A track as people name it: its name, else an id that says what it is
    /// (`TID:0`, `NC0:1`), else `stream <tid>` on a device, `thread <tid>`.
    pub fn track_label(&self, track: usize) -> String {
        let tr = &self.tracks[track];
        if let Some(name) = tr.name {
            return self.str(name).trim().to_string();
        }
        let id = self.lane_label(tr.tid);
        match tr.tid {
            LaneId::Str(_) if id.chars().any(|c| c.is_alphabetic()) => id,
            _ if tr.kind == TrackKind::DeviceStream => format!("stream {id}"),
            _ => format!("thread {id}"),
        }
    }

    pub fn lane_label(&self, id: LaneId) -> String {
        match id {
            LaneId::Int(v) => v.to_string(),
            LaneId::Str(s) => self.str(s).to_string(),
        }
    }
}

/// A string ordered with its numbers as numbers (`NC:2` before `NC:10`).
#[derive(PartialEq, Eq)]
struct Natural(String);

impl Ord for Natural {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        natural_cmp(&self.0, &other.0)
    }
}

impl PartialOrd for Natural {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Compares two strings with runs of digits compared as numbers
/// (`stream 2` < `stream 10`), then as text where they tie.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let n = x.iter().take_while(|c| c.is_ascii_digit()).count();
                let m = y.iter().take_while(|c| c.is_ascii_digit()).count();
                let (p, q) = (&x[..n], &y[..m]);
                let strip = |s: &'_ [u8]| -> usize { s.iter().take_while(|&&c| c == b'0').count() };
                let (p0, q0) = (&p[strip(p)..], &q[strip(q)..]);
                let ord = p0.len().cmp(&q0.len()).then_with(|| p0.cmp(q0));
                if ord != Ordering::Equal {
                    return ord;
                }
                x = &x[n..];
                y = &y[m..];
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(d);
                }
                x = &x[1..];
                y = &y[1..];
            }
        }
    }
}

#[cfg(test)]
mod natural_tests {
    use super::natural_cmp;
    use std::cmp::Ordering;

    #[test]
    fn numbers_sort_as_numbers() {
        let mut v = vec![
            "NC:10",
            "NC:2",
            "NC:1",
            "stream 007",
            "stream 7b",
            "stream 10",
            "a",
        ];
        crate::sort::by(&mut v, &|a, b| natural_cmp(a, b));
        assert_eq!(
            v,
            [
                "NC:1",
                "NC:2",
                "NC:10",
                "a",
                "stream 007",
                "stream 7b",
                "stream 10"
            ]
        );
        assert_eq!(natural_cmp("x", "x"), Ordering::Equal);
    }
}

//! The model builder every importer writes into: lanes by (pid, tid),
//! slices (complete, or begin/end paired per lane as a stack), instants,
//! counter samples, flows and lane metadata, with strings interned and time
//! in nanoseconds. [`Builder::finish`] closes what is open, classifies
//! lanes (host or device), sorts, nests, binds flows and links.
//!
//! The Chrome/Kineto tokenizer (`chrome.rs`) and the Perfetto reader
//! (`perfetto.rs`) call the same methods; the split-import codec
//! (`part.rs`) carries a builder's state between workers.

use crate::warnings;
use rustc_hash::FxHashMap;

use crate::category::{self, Category};
use crate::error::{excerpt, Diagnostics, Warning};
use crate::model::*;

use super::append::{append_slices, Remap};
use super::sort::sort_slices;

/// What an event says besides its lane and time: its interned name and
/// category, its args text (a JSON object), the fields analyses need, its
/// order in the input and where it sits there.
pub(crate) struct EventIn<'a> {
    pub(crate) name: StrId,
    pub(crate) cat: StrId,
    pub(crate) args: Option<&'a [u8]>,
    pub(crate) fields: Fields,
    pub(crate) order: u32,
    pub(crate) source: (u64, u32),
}

impl<'a> EventIn<'a> {
    /// An event a translating importer (Neuron, Parquet tables) writes:
    /// its args as given, no parsed fields, no source range in the user's
    /// file.
    pub(crate) fn translated(name: StrId, cat: StrId, args: &'a [u8], order: u32) -> Self {
        EventIn {
            name,
            cat,
            args: Some(args),
            fields: Fields::default(),
            order,
            source: (0, 0),
        }
    }
}

/// The args fields the importer parses eagerly (`External id`,
/// `correlation`, …; shapes and types already compact and interned).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fields {
    pub(crate) external_id: Option<i64>,
    pub(crate) correlation: Option<i64>,
    pub(crate) stream: Option<i64>,
    pub(crate) seq: Option<i64>,
    pub(crate) device: Option<i64>,
    pub(crate) fwd_thread: Option<i64>,
    pub(crate) input_dims: StrId,
    pub(crate) input_types: StrId,
    /// `args["Concrete Inputs"]` (scalar arguments: conv strides, …).
    pub(crate) concrete_inputs: StrId,
    /// The args hold a `flops` count: kept with the event whatever its
    /// category (the roofline reads it; few events have one).
    pub(crate) has_flops: bool,
}

impl Default for Fields {
    fn default() -> Fields {
        Fields {
            external_id: None,
            correlation: None,
            stream: None,
            seq: None,
            device: None,
            fwd_thread: None,
            input_dims: NO_STR,
            input_types: NO_STR,
            concrete_inputs: NO_STR,
            has_flops: false,
        }
    }
}

/// A slice row waiting for its duration (an open `B`, or an `X` being added).
pub(crate) struct Row {
    pub(crate) start_ns: i64,
    pub(crate) name: StrId,
    pub(crate) cat: StrId,
    pub(crate) category: Category,
    pub(crate) args: (u64, u32),
    pub(crate) ext: i64,
    pub(crate) corr: i64,
    pub(crate) stream: i64,
    pub(crate) dims: StrId,
    pub(crate) types: StrId,
    pub(crate) concrete: StrId,
    pub(crate) seq: i64,
    pub(crate) device: i64,
    pub(crate) fwd_thread: i64,
    pub(crate) order: u32,
    pub(crate) source: (u64, u32),
}

pub(crate) struct FlowEvent {
    pub(crate) cat: StrId,
    pub(crate) id: u64,
    pub(crate) ph: u8,
    pub(crate) track: TrackIdx,
    pub(crate) ts_ns: i64,
    pub(crate) enclosing: bool,
    /// `id` is a string id (bit 63 set) standing for a non-numeric flow id;
    /// a merge must re-map it with the other strings.
    pub(crate) named: bool,
}

/// Calls `$method($n)` on each slice column a builder fills (not `depth`
/// and `parent`: `finish` makes those whole).
macro_rules! each_column {
    ($s:ident, $method:ident, $n:expr) => {{
        let n = $n;
        $s.track.$method(n);
        $s.start_ns.$method(n);
        $s.dur_ns.$method(n);
        $s.name.$method(n);
        $s.cat.$method(n);
        $s.category.$method(n);
        $s.external_id.$method(n);
        $s.correlation.$method(n);
        $s.stream.$method(n);
        $s.input_dims.$method(n);
        $s.input_types.$method(n);
        $s.concrete_inputs.$method(n);
        $s.sequence_nr.$method(n);
        $s.device.$method(n);
        $s.fwd_thread.$method(n);
        $s.args_range.$method(n);
        $s.source.$method(n);
        $s.file_order.$method(n);
    }};
}

/// Accumulates model rows while events stream in; [`Builder::finish`] sorts,
/// nests and links them.
#[derive(Default)]
pub(crate) struct Builder {
    pub(crate) trace: Trace,
    pub(crate) diag: Diagnostics,
    pub(crate) proc_map: FxHashMap<LaneId, ProcessIdx>,
    pub(crate) track_map: FxHashMap<(LaneId, LaneId), TrackIdx>,
    pub(crate) open_b: FxHashMap<TrackIdx, Vec<Row>>,
    pub(crate) flows: Vec<FlowEvent>,
    pub(crate) events_seen: u64,
    pub(crate) non_object_entries: u64,
    /// Category classification by category string id (few distinct ones).
    pub(crate) cat_cache: Vec<Option<Category>>,
    /// Raw bytes of plain strings already interned (names, categories).
    pub(crate) raw_strings: FxHashMap<Box<[u8]>, StrId>,
    /// Raw `Input Dims` / `Input type` text → its compact interned form.
    pub(crate) compact_cache: FxHashMap<Box<[u8]>, StrId>,
    /// The last (pid, tid) → track lookup: consecutive events share a lane.
    pub(crate) last_track: Option<((LaneId, LaneId), TrackIdx)>,
    /// Tracks that hold an event of a device-only category.
    pub(crate) device_marked: Vec<bool>,
    pub(crate) phase_counts: Vec<u64>,
    /// Events by category string id.
    pub(crate) cat_counts: Vec<u64>,
    pub(crate) base_time_ns: Option<i64>,
    pub(crate) max_ts_ns: i64,
    /// Keep every event's args text, ops' too (translated formats: their
    /// source text is not the user's file).
    pub(crate) keep_op_args: bool,
    /// Keep no args text: the caller reads it back from the source.
    pub(crate) args_in_source: bool,
    /// A Neuron system profile's tables, moved to the trace at the end.
    pub(crate) neuron_system: Option<crate::neuron_system::NeuronSystemInfo>,
}

/// A later part's rows kept in another form than a builder's columns (the
/// bytes of a part parsed in another worker), appended straight into the
/// model's columns as [`Builder::absorb`] re-numbers them.
pub(super) trait PartRows {
    fn append_to(self, t: &mut Trace, m: &Remap);
}

impl Builder {
    /// Appends another builder's rows (parsed from later bytes of the same
    /// file), re-interning its strings and re-numbering its lanes.
    pub(super) fn absorb(&mut self, mut o: Builder, raw: Option<impl PartRows>) {
        let ids: Vec<StrId> = (0..o.trace.strings.len() as u32)
            .map(|k| self.trace.strings.intern(o.trace.strings.get(StrId(k))))
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
        let packed = std::mem::take(&mut o.trace.packed_args);
        self.trace
            .packed_args
            .absorb(packed, |p| procs[p.0 as usize]);
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
        let remap = Remap {
            strings: &ids,
            tracks: &tracks,
            processes: &procs,
            arena_base,
            order_base,
        };
        if let Some(raw) = raw {
            raw.append_to(&mut self.trace, &remap);
        } else {
            let arena = &mut self.trace.args_arena;
            append_slices(
                &mut self.trace.slices,
                arena,
                o.trace.slices,
                std::mem::take(&mut o.trace.args_arena),
                &remap,
            );
            let (a, b) = (&mut self.trace.instants, o.trace.instants);
            a.track.extend(b.track.iter().map(|t| tracks[t.idx()]));
            a.ts_ns.extend(b.ts_ns);
            a.name.extend(b.name.iter().map(|&x| map(x)));
            a.cat.extend(b.cat.iter().map(|&x| map(x)));
            a.args_range
                .extend(b.args_range.iter().map(|&r| remap.arena_range(r)));
            a.source.extend(b.source);
            let (a, b) = (&mut self.trace.counters, o.trace.counters);
            a.process
                .extend(b.process.iter().map(|p| procs[p.0 as usize]));
            a.series.extend(b.series.iter().map(|&x| map(x)));
            a.ts_ns.extend(b.ts_ns);
            a.value.extend(b.value);
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
                concrete: map(r.concrete),
                args: remap.arena_range(r.args),
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
        self.reserve_slices((json_bytes / 250).min(64 << 20) as usize);
        self.trace
            .args_arena
            .reserve((json_bytes / 4).min(1 << 32) as usize);
    }

    pub(crate) fn header_value(&mut self, key: &str, raw: &[u8]) {
        let text = String::from_utf8_lossy(raw).into_owned();
        if key == "baseTimeNanoseconds" {
            match super::scan::int_text(raw.trim_ascii()) {
                Some(v) => self.base_time_ns = Some(v),
                None => self.diag.warn(warnings::BAD_BASE_TIME, || text.clone()),
            }
        }
        self.trace.header.push((key.to_string(), text));
    }

    pub(crate) fn process(&mut self, pid: LaneId) -> ProcessIdx {
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

    pub(crate) fn track(&mut self, pid: LaneId, tid: LaneId) -> TrackIdx {
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
            nesting: 0,
        });
        self.device_marked.push(false);
        self.track_map.insert((pid, tid), t);
        t
    }

    /// An empty builder with this one's args policy, for a part of the
    /// same input translated apart and then [absorbed](Builder::absorb).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    pub(crate) fn for_part(&self) -> Builder {
        Builder {
            keep_op_args: self.keep_op_args,
            args_in_source: self.args_in_source,
            ..Builder::default()
        }
    }

    /// Keeps an event's args text (a JSON object) in the arena; `{}` and
    /// none keep nothing.
    pub(crate) fn store_args(&mut self, args: Option<&[u8]>) -> (u64, u32) {
        match args {
            Some(text) if text.len() > 2 => {
                let off = self.trace.args_arena.len() as u64;
                let len = text.len().min(u32::MAX as usize);
                self.trace.args_arena.extend_from_slice(&text[..len]);
                (off, len as u32)
            }
            _ => (0, 0),
        }
    }

    pub(crate) fn category(&mut self, cat: StrId) -> Category {
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

    pub(crate) fn check_dur(&mut self, ts: i64, dur: i64, raw: &[u8]) -> Option<i64> {
        if dur < 0 {
            self.diag.warn(warnings::NEGATIVE_DUR, || excerpt(raw));
            return Some(0);
        }
        // A year of nanoseconds: no profiler capture is longer.
        const MAX_DUR_NS: i64 = 365 * 24 * 3600 * 1_000_000_000;
        if dur > MAX_DUR_NS || ts.checked_add(dur).is_none() {
            self.diag.warn(warnings::HUGE_DUR, || excerpt(raw));
            return None;
        }
        Some(dur)
    }

    /// Sizes the slice columns and the args arena for about `events` more
    /// XPlane events (packed args: ~16 bytes an event).
    pub(crate) fn reserve_events(&mut self, events: usize) {
        let s = &self.trace.slices;
        let held = s.len();
        if s.start_ns.capacity() - held < events {
            // This plane's rows and half the rows so far again (room for
            // more planes), not `Vec::reserve`'s doubling: a plane's
            // count is exact, and doubling past it held twice the rows —
            // in wasm, of 4 GiB of address space, and a realloc there
            // copies the whole old capacity, touched or not.
            let s = &mut self.trace.slices;
            each_column!(s, reserve_exact, events + held / 2);
        }
        self.trace.args_arena.reserve(events.saturating_mul(16));
    }

    /// Sizes the slice columns for about `slices` more rows.
    pub(crate) fn reserve_slices(&mut self, slices: usize) {
        let s = &mut self.trace.slices;
        each_column!(s, reserve, slices);
    }

    /// `Input Dims` / `Input type` JSON text in its compact interned form.
    pub(crate) fn compact(&mut self, raw: Option<&[u8]>) -> StrId {
        let Some(raw) = raw else { return NO_STR };
        if let Some(&id) = self.compact_cache.get(raw) {
            return id;
        }
        let id = self.trace.strings.intern(&super::scan::compact_json(raw));
        self.compact_cache.insert(raw.into(), id);
        id
    }

    pub(crate) fn push_row(&mut self, track: TrackIdx, r: Row, dur: i64) {
        if r.category.is_device() && self.category(r.cat).marks_device_lane() {
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
        s.concrete_inputs.push(r.concrete);
        s.sequence_nr.push(r.seq);
        s.device.push(r.device);
        s.fwd_thread.push(r.fwd_thread);
        s.args_range.push(r.args);
        s.source.push(r.source);
        s.file_order.push(r.order);
    }

    /// Counts an event read, returns its order in the input.
    pub(crate) fn count_event(&mut self, ph: u8) -> u32 {
        let order = self.events_seen as u32;
        self.events_seen += 1;
        if self.phase_counts.is_empty() {
            self.phase_counts = vec![0; 256];
        }
        self.phase_counts[ph as usize] += 1;
        order
    }

    /// Counts a slice or instant under its category string.
    pub(crate) fn count_category(&mut self, cat: StrId) {
        let k = cat.0 as usize;
        if self.cat_counts.len() <= k {
            self.cat_counts.resize(k + 1, 0);
        }
        self.cat_counts[k] += 1;
    }

    /// A slice row for an event starting at `ts` (its args kept or not, by
    /// its category and the builder's args policy).
    pub(crate) fn row(&mut self, ts: i64, e: &EventIn) -> Row {
        let category = self.category(e.cat);
        // Ops keep shapes and types; their other args stay in the source,
        // but for `record_param_comms`: its args say what a collective was
        // (few events; the ranks and collectives analyses read them).
        let args = match category {
            _ if e.fields.has_flops => self.store_args(e.args),
            _ if self.args_in_source => (0, 0),
            Category::CpuOp if self.trace.strings.get(e.name) == "record_param_comms" => {
                self.store_args(e.args)
            }
            Category::CpuOp | Category::UserAnnotation | Category::PythonFunction
                if !self.keep_op_args =>
            {
                (0, 0)
            }
            _ => self.store_args(e.args),
        };
        let f = &e.fields;
        Row {
            start_ns: ts,
            name: e.name,
            cat: e.cat,
            category,
            args,
            ext: f.external_id.unwrap_or(NONE_I64),
            corr: f.correlation.unwrap_or(NONE_I64),
            stream: f.stream.unwrap_or(NONE_I64),
            dims: f.input_dims,
            types: f.input_types,
            concrete: f.concrete_inputs,
            seq: f.seq.unwrap_or(NONE_I64),
            device: f.device.unwrap_or(NONE_I64),
            fwd_thread: f.fwd_thread.unwrap_or(NONE_I64),
            order: e.order,
            source: e.source,
        }
    }

    /// A complete slice (`X`): `[ts, ts + dur)` on `track`.
    pub(crate) fn slice(&mut self, track: TrackIdx, ts: i64, dur: i64, e: &EventIn) {
        let row = self.row(ts, e);
        self.push_row(track, row, dur);
    }

    /// A slice begins (`B`); [`Builder::end`] closes the innermost open one.
    pub(crate) fn begin(&mut self, track: TrackIdx, ts: i64, e: &EventIn) {
        let row = self.row(ts, e);
        self.open_b.entry(track).or_default().push(row);
    }

    /// The innermost open slice on `track` ends at `ts` (`E`); `raw` is the
    /// event, for a warning's example.
    pub(crate) fn end(&mut self, track: TrackIdx, ts: i64, raw: &[u8]) {
        let open = self.open_b.get_mut(&track).and_then(|s| s.pop());
        match open {
            None => self.diag.warn(warnings::E_WITHOUT_B, || excerpt(raw)),
            Some(o) => {
                let Some(dur) = self.check_dur(o.start_ns, ts - o.start_ns, raw) else {
                    return;
                };
                self.push_row(track, o, dur);
            }
        }
    }

    /// An instant (`i`, `I`, `R`).
    pub(crate) fn instant(&mut self, track: TrackIdx, ts: i64, e: &EventIn) {
        // `[memory]` records keep their args whatever the policy: their
        // bytes are the op table's memory columns and the memory view's
        // series (small: a few numbers each).
        let args = if self.args_in_source && self.trace.strings.get(e.name) != "[memory]" {
            (0, 0)
        } else {
            self.store_args(e.args)
        };
        let t = &mut self.trace.instants;
        t.source.push(e.source);
        t.track.push(track);
        t.ts_ns.push(ts);
        t.name.push(e.name);
        t.cat.push(e.cat);
        t.args_range.push(args);
    }

    /// One sample of a counter series of a process.
    pub(crate) fn counter_sample(
        &mut self,
        process: ProcessIdx,
        series: StrId,
        ts: i64,
        value: f64,
    ) {
        let c = &mut self.trace.counters;
        c.process.push(process);
        c.series.push(series);
        c.ts_ns.push(ts);
        c.value.push(value);
    }

    /// A flow event (`s`, `t`, `f`), bound to slices when the model is finished.
    pub(crate) fn flow(&mut self, f: FlowEvent) {
        self.flows.push(f);
    }

    pub(crate) fn set_process_name(&mut self, pid: LaneId, name: StrId) {
        let p = self.process(pid);
        self.trace.processes[p.0 as usize].name = Some(name);
    }

    /// A process's `process_labels`; a second, different one is counted.
    pub(crate) fn set_process_labels(&mut self, pid: LaneId, labels: StrId) {
        let p = self.process(pid);
        let before = self.trace.processes[p.0 as usize].labels.replace(labels);
        if let Some(before) = before.filter(|&x| x != labels) {
            let (a, z) = (
                self.trace.strings.get(before),
                self.trace.strings.get(labels),
            );
            let example = format!("\"{a}\" then \"{z}\"");
            self.diag
                .warn(warnings::PROCESS_LABELS_CONFLICT, || example);
        }
    }

    pub(crate) fn set_process_sort_index(&mut self, pid: LaneId, index: Option<i64>) {
        let p = self.process(pid);
        self.trace.processes[p.0 as usize].sort_index = index;
    }

    pub(crate) fn set_thread_name(&mut self, pid: LaneId, tid: LaneId, name: StrId) {
        let t = self.track(pid, tid);
        self.trace.tracks[t.idx()].name = Some(name);
    }

    pub(crate) fn set_thread_sort_index(&mut self, pid: LaneId, tid: LaneId, index: Option<i64>) {
        let t = self.track(pid, tid);
        self.trace.tracks[t.idx()].sort_index = index;
    }

    /// Places a track `nesting` levels under other tracks of its process.
    pub(crate) fn set_track_nesting(&mut self, track: TrackIdx, nesting: u8) {
        self.trace.tracks[track.idx()].nesting = nesting;
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
        self.trace.neuron_system = self.neuron_system.take().map(Box::new);
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
            self.diag.warn(warnings::UNCLOSED_B, || n);
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
                warnings::LANE_LABEL_CONFLICT,
                conflicts.len() as u64,
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
    diag.warn_n(warnings::PARTIAL_OVERLAP, overlaps, example);
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
    diag.warn_n(warnings::FLOW_UNMATCHED, unmatched, String::new());
}

//! One XPlane into the model: its lines as lanes, its events as slices
//! (see the module above for what goes where).

use rustc_hash::FxHashMap as HashMap;

use crate::model::{LaneId, StrId};
use crate::packed_args::{self, StatName, StatNames, Value};
use crate::warnings;
use crate::xla::{XlaDevice, XlaInfo};

use super::super::builder::{Builder, EventIn, Fields};
use super::hlo;
use super::proto::{XStat, XStatValue};
use super::wire::{owned_stat, EventView, LineView, PlaneView, StatValue};

/// What the reader counted rather than imported.
#[derive(Default)]
pub(crate) struct Counts {
    /// `num_occurrences` events: aggregates, not occurrences in time.
    pub aggregated: u64,
    /// Events naming an event metadata id their plane does not define.
    pub unknown_metadata: u64,
    /// Stats naming a stat metadata id their plane does not define.
    pub unknown_stats: u64,
    /// Top-level XSpace fields that are not planes, hostnames or messages.
    pub other_fields: u64,
    /// Events before 1970 or past 2262 on a nanosecond clock.
    pub out_of_range: u64,
}

impl Counts {
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    pub(super) fn add(&mut self, o: &Counts) {
        self.aggregated += o.aggregated;
        self.unknown_metadata += o.unknown_metadata;
        self.unknown_stats += o.unknown_stats;
        self.other_fields += o.other_fields;
        self.out_of_range += o.out_of_range;
    }

    pub(super) fn report(&self, b: &mut Builder) {
        let mut n = |k, c: u64, what: &str| {
            if c > 0 {
                b.diag.warn_n(k, c, what.to_string());
            }
        };
        n(
            warnings::XPLANE_AGGREGATED,
            self.aggregated,
            "events with num_occurrences instead of a time",
        );
        n(
            warnings::XPLANE_UNKNOWN_METADATA,
            self.unknown_metadata + self.unknown_stats,
            "events or stats whose metadata id their plane does not define",
        );
        n(
            warnings::XPLANE_OTHER_FIELDS,
            self.other_fields,
            "top-level XSpace fields other than planes, hostnames, errors and warnings",
        );
        n(
            warnings::XPLANE_OUT_OF_RANGE,
            self.out_of_range,
            "events whose time does not fit in 64-bit nanoseconds",
        );
    }
}

/// What a plane is, by its name (`xplane_schema.cc`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum PlaneKind {
    Host,
    Metadata,
    TaskEnvironment,
    /// `/device:GPU:N`, `/device:TPU:N`, `/device:CUSTOM:…`: its index.
    Device {
        tpu: bool,
        index: i64,
    },
}

fn plane_kind(name: &str) -> PlaneKind {
    if name == "/host:metadata" {
        return PlaneKind::Metadata;
    }
    if name == "Task Environment" {
        return PlaneKind::TaskEnvironment;
    }
    if let Some(rest) = name.strip_prefix("/device:") {
        // `TPU:3`, also `TPU:0 SparseCore 1` (a chip's SparseCore).
        let index = rest
            .rsplit(':')
            .next()
            .and_then(|s| s.split(' ').next())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
        return PlaneKind::Device {
            tpu: rest.starts_with("TPU"),
            index,
        };
    }
    PlaneKind::Host
}

/// What a device plane's name says after its index: ` SparseCore 1` of
/// `/device:TPU:0 SparseCore 1` (its label must not be the chip's).
fn core_suffix(name: &str) -> &str {
    let last = name.rsplit(':').next().unwrap_or("");
    last.find(' ').map_or("", |k| &last[k..])
}

/// Lines xprof derives from device events (or a TPU records itself).
const DERIVED_LINES: &[(&str, &str)] = &[
    ("Steps", "xla_step"),
    ("XLA Modules", "xla_module"),
    ("XLA Ops", "xla_op"),
    ("Async XLA Ops", "xla_op"),
    ("XLA TraceMe", "xla_traceme"),
    ("Framework Ops", "framework_op"),
    ("TensorFlow Ops", "framework_op"),
    ("Framework Name Scope", "framework_name_scope"),
    ("TensorFlow Name Scope", "framework_name_scope"),
    ("Source code", "source_code"),
    ("Launch Stats", "launch_stats"),
    ("Host Offload Ops", "xla_op"),
    ("Sparse Core Steps", "xla_step"),
    ("Sparse Core Ops", "xla_op"),
    ("Sparse Core Modules", "xla_module"),
];

/// A line's events' category, or `None` to read each event's own.
fn line_cat(kind: PlaneKind, name: &str) -> Option<&'static str> {
    if let PlaneKind::Device { tpu, .. } = kind {
        // A TPU's own ops are its device work; a GPU's `XLA Ops` are
        // derived from its kernels and would count them twice.
        if tpu && (name == "XLA Ops" || name == "Sparse Core Ops") {
            return Some("kernel");
        }
        let name = crate::xla::derived_line_base(name);
        return DERIVED_LINES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, cat)| cat);
    }
    None
}

/// Translates one plane (its bytes: a top-level field's value), its lines'
/// events by `run`. `Err`
/// with the number of events read when its bytes break off in a line
/// (the events before that point stay).
pub(super) fn translate(
    bytes: &[u8],
    order: u32,
    info: &mut XlaInfo,
    counts: &mut Counts,
    b: &mut Builder,
    run: Run,
) -> Result<(), Broken> {
    let Some(p) = PlaneView::read(bytes) else {
        return Err(Broken { events: 0 });
    };
    let kind = plane_kind(&p.name);
    let stat_names: HashMap<i64, &str> = p
        .stat_metadata
        .iter()
        .map(|(&id, m)| (id, m.name.as_str()))
        .collect();
    match kind {
        PlaneKind::Metadata => {
            modules(&p, &stat_names, info);
            return Ok(());
        }
        PlaneKind::TaskEnvironment => {
            for s in &p.stats {
                let v = owned_stat(s).and_then(stat_int);
                match stat_names.get(&s.metadata_id).copied() {
                    Some("profile_start_time") => info.profile_start_ns = v,
                    Some("profile_stop_time") => info.profile_stop_ns = v,
                    _ => {}
                }
            }
            return Ok(());
        }
        PlaneKind::Device { .. } => info.devices.push(XlaDevice {
            plane: p.name.clone(),
            stats: p
                .stats
                .iter()
                .map(|s| {
                    let name = stat_names.get(&s.metadata_id).copied().unwrap_or("");
                    (name.to_string(), stat_text(s, &stat_names))
                })
                .collect(),
        }),
        PlaneKind::Host => {}
    }
    let mut lines = Vec::with_capacity(p.lines.len());
    for l in &p.lines {
        lines.push(LineView::read(l).ok_or(Broken { events: 0 })?);
    }
    if lines.iter().all(|l| l.events == 0) {
        return Ok(());
    }
    let parts: Vec<Part> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.events > 0)
        .map(|(line, l)| Part {
            line,
            bytes: 0..l.bytes.len(),
        })
        .collect();
    let plane = Plane {
        view: &p,
        kind,
        order,
        lines: &lines,
    };
    run(&plane, parts, counts, b)
}

/// How a plane's parts are translated: in order on this thread, or split
/// (the reader decides).
pub(super) type Run<'r> =
    &'r dyn Fn(&Plane, Vec<Part>, &mut Counts, &mut Builder) -> Result<(), Broken>;

/// A plane ready to translate: its tables, lines and place.
pub(super) struct Plane<'a> {
    pub view: &'a PlaneView<'a>,
    kind: PlaneKind,
    order: u32,
    pub lines: &'a [LineView<'a>],
}

/// Some of a line's events: a range of its bytes that starts and ends
/// between fields.
#[derive(Clone)]
pub(super) struct Part {
    pub line: usize,
    pub bytes: std::ops::Range<usize>,
}

impl Plane<'_> {
    /// About how many events `parts` hold (a part of a line: its share of
    /// the line's bytes), to size the columns once.
    pub(super) fn events_in(&self, parts: &[Part]) -> usize {
        parts
            .iter()
            .map(|part| {
                let line = &self.lines[part.line];
                let share = part.bytes.len() as u128 * line.events as u128;
                (share / line.bytes.len().max(1) as u128) as usize + 1
            })
            .sum()
    }

    /// Translates `parts` into `b` (its process declared first); the
    /// number of events read, or where the bytes broke off.
    pub(super) fn translate(
        &self,
        parts: &[Part],
        counts: &mut Counts,
        b: &mut Builder,
    ) -> Result<u64, Broken> {
        let name = &self.view.name;
        let pid = LaneId::Str(b.trace.strings.intern(name));
        let process_name = b.trace.strings.intern(name);
        b.set_process_name(pid, process_name);
        if let PlaneKind::Device { tpu, index } = self.kind {
            let label = b.trace.strings.intern(&format!(
                "{} {index}{}",
                if tpu { "TPU" } else { "GPU" },
                core_suffix(name)
            ));
            b.set_process_labels(pid, label);
            b.set_process_sort_index(pid, Some(self.order as i64));
        } else {
            b.set_process_sort_index(pid, Some(-1_000_000 + self.order as i64));
        }
        b.reserve_events(self.events_in(parts));
        let (keys, roles) = stat_keys(self.view);
        let mut state = PlaneState {
            names: StatNames {
                keys,
                metas: HashMap::default(),
            },
            roles,
            p: self.view,
            kind: self.kind,
            metas: ById::default(),
            cats: Vec::new(),
            args: Vec::new(),
            pid,
            events: 0,
        };
        let read = parts
            .iter()
            .try_for_each(|part| state.line(&self.lines[part.line], part.bytes.clone(), counts, b));
        // The names the plane's packed args are written out with (also
        // for the events read before it broke off).
        let process = b.process(pid);
        b.trace.packed_args.add(process, state.names);
        read.map(|()| state.events)
    }
}

/// A plane whose bytes break off: how many of its events were read.
pub(super) struct Broken {
    pub events: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum StatRole {
    Correlation,
    MemcpyDetails,
    /// A TPU op's `symbol_id`: 0 is its program's run, not an op.
    SymbolId,
    Other,
}

/// Values by metadata id: a table indexed by id where ids are small (they
/// are numbered from 1 in the files seen), a map beyond — a lookup per
/// event and per stat of every event.
struct ById<T> {
    dense: Vec<Option<T>>,
    sparse: HashMap<i64, T>,
}

impl<T> Default for ById<T> {
    fn default() -> Self {
        ById {
            dense: Vec::new(),
            sparse: HashMap::default(),
        }
    }
}

const DENSE_IDS: i64 = 1 << 16;

impl<T> ById<T> {
    fn insert(&mut self, id: i64, value: T) {
        if (0..DENSE_IDS).contains(&id) {
            let k = id as usize;
            if self.dense.len() <= k {
                self.dense.resize_with(k + 1, || None);
            }
            self.dense[k] = Some(value);
        } else {
            self.sparse.insert(id, value);
        }
    }

    #[inline]
    fn get(&self, id: i64) -> Option<&T> {
        match usize::try_from(id) {
            Ok(k) if id < DENSE_IDS => self.dense.get(k).and_then(Option::as_ref),
            _ => self.sparse.get(&id),
        }
    }
}

type Roles = ById<StatRole>;

/// A plane's stat names as JSON, and which of them the linker or the
/// categories read.
fn stat_keys(p: &PlaneView) -> (HashMap<i64, StatName>, Roles) {
    let mut roles = Roles::default();
    let keys = p
        .stat_metadata
        .iter()
        .map(|(&id, m)| {
            let role = match m.name.as_str() {
                "correlation_id" => StatRole::Correlation,
                "memcpy_details" => StatRole::MemcpyDetails,
                "symbol_id" => StatRole::SymbolId,
                _ => StatRole::Other,
            };
            roles.insert(id, role);
            (id, StatName::new(&m.name))
        })
        .collect();
    (keys, roles)
}

/// What every event of one event metadata shares, worked out at its first
/// event: its name in the model, whether its metadata's stats make args
/// (they come first: kept in the plane's [`StatNames`]), the linker's
/// fields they set, a device event's category by its name.
struct EventMeta {
    name: StrId,
    has_args: bool,
    fields: StatFields,
    unknown_stats: u64,
    memcpy_details: bool,
    device_cat: &'static str,
    python: bool,
    /// Its `symbol_id` is 0: a TPU program's run on its op line, around
    /// the ops (xprof's `kRootSymbolId`), not device work of its own.
    program_run: bool,
}

/// The stats the linker reads; the last one of a name wins. (A host
/// call's `device_id` is its runtime's handle, not an index: not read.)
#[derive(Clone, Copy, Default)]
struct StatFields {
    correlation: Option<i64>,
}

struct PlaneState<'a> {
    p: &'a PlaneView<'a>,
    kind: PlaneKind,
    names: StatNames,
    roles: Roles,
    metas: ById<EventMeta>,
    /// Category names interned, by the address of their static text (a
    /// handful: a list).
    cats: Vec<(usize, StrId)>,
    args: Vec<u8>,
    pid: LaneId,
    /// Events translated so far (said when the plane breaks off).
    events: u64,
}

impl PlaneState<'_> {
    fn line(
        &mut self,
        line: &LineView,
        range: std::ops::Range<usize>,
        counts: &mut Counts,
        b: &mut Builder,
    ) -> Result<(), Broken> {
        let tid_num = if line.display_id != 0 {
            line.display_id
        } else {
            line.id
        };
        let tid = LaneId::Int(tid_num);
        let track = b.track(self.pid, tid);
        let lane_name = if line.display_name.is_empty() {
            &line.name
        } else {
            &line.display_name
        };
        let lane_name = b.trace.strings.intern(lane_name);
        b.set_thread_name(self.pid, tid, lane_name);
        let device = match self.kind {
            PlaneKind::Device { index, .. } => Some(index),
            _ => None,
        };
        if device.is_some() {
            b.device_marked[track.idx()] = true;
        }
        let lane = Lane {
            track,
            stream: device.map(|_| tid_num),
            device,
            fixed: line_cat(self.kind, &line.name),
            timestamp_ns: line.timestamp_ns,
            base_ps: line.timestamp_ns.checked_mul(1000),
        };
        let read = line.events(range, |e| self.event(e, &lane, counts, b));
        read.ok_or(Broken {
            events: self.events,
        })
    }

    fn event(&mut self, e: &EventView, lane: &Lane, counts: &mut Counts, b: &mut Builder) {
        self.events += 1;
        if e.num_occurrences.is_some() {
            counts.aggregated += 1;
            return;
        }
        let Some((start, end)) = times_ns(lane, e.offset_ps, e.duration_ps) else {
            counts.out_of_range += 1;
            return;
        };
        if self.metas.get(e.metadata_id).is_none() {
            self.add_meta(e.metadata_id, counts, b);
        }
        let Some(m) = self.metas.get(e.metadata_id) else {
            return;
        };
        counts.unknown_stats += m.unknown_stats;
        let args = &mut self.args;
        let times = lane.device.map(|_| (e.offset_ps, e.duration_ps));
        packed_args::begin(args, e.metadata_id, times);
        let mut f = m.fields;
        let mut memcpy = m.memcpy_details;
        let mut program_run = m.program_run;
        let mut stats = 0;
        for &(id, value) in &e.stats {
            let Some(&role) = self.roles.get(id) else {
                counts.unknown_stats += 1;
                continue;
            };
            memcpy |= role == StatRole::MemcpyDetails;
            let Some(value) = value else { continue };
            if role == StatRole::Correlation {
                f.correlation = stat_int(value);
            }
            program_run |= role == StatRole::SymbolId && stat_int(value) == Some(0);
            packed_args::stat(args, id, packed(value));
            stats += 1;
        }
        let has_args = m.has_args || stats > 0 || times.is_some();
        let cat = match lane.fixed {
            Some("kernel") if program_run => "xla_module",
            Some(fixed) => fixed,
            None => match lane.device {
                Some(_) if memcpy => "gpu_memcpy",
                Some(_) => m.device_cat,
                // A runtime / driver API call that launched device work.
                None if f.correlation.is_some() => "cuda_runtime",
                // The Python tracer's frames: `$file:line function`.
                None if m.python => "python_function",
                None => "user_annotation",
            },
        };
        let name = m.name;
        let cat = match self.cats.iter().find(|c| c.0 == cat.as_ptr() as usize) {
            Some(&(_, id)) => id,
            None => {
                let id = b.trace.strings.intern(cat);
                self.cats.push((cat.as_ptr() as usize, id));
                id
            }
        };
        b.count_category(cat);
        let order = b.count_event(b'X');
        let event = EventIn {
            name,
            cat,
            args: has_args.then_some(self.args.as_slice()),
            fields: Fields {
                correlation: f.correlation,
                stream: lane.stream,
                // Host calls' `device_id` is the runtime's handle, not an
                // index: only a device plane says which device.
                device: lane.device,
                ..Fields::default()
            },
            order,
            source: (0, 0),
        };
        b.slice(lane.track, start, end - start, &event);
    }

    /// Works out what the events of metadata `id` share, at its first.
    fn add_meta(&mut self, id: i64, counts: &mut Counts, b: &mut Builder) {
        let metadata = self.p.event_metadata.get(&id);
        // The name xprof shows: the display name, else the name.
        let text = match metadata {
            Some(m) if !m.display_name.is_empty() => m.display_name.clone(),
            Some(m) => m.name.clone(),
            None => {
                counts.unknown_metadata += 1;
                format!("(event metadata {id})")
            }
        };
        // A derived op's metadata name says its program (`3/fusion.1`):
        // kept beside the display name for the op tables.
        let mut args = Vec::new();
        let derived_op = |m: &&super::proto::XEventMetadata| {
            !m.display_name.is_empty()
                && m.name.len() > m.display_name.len()
                && m.name.ends_with(&m.display_name)
                && m.name[..m.name.len() - m.display_name.len()].ends_with('/')
        };
        if let Some(md) = metadata.filter(derived_op) {
            args.extend_from_slice(b"\"metadata_name\":");
            packed_args::json_string(&mut args, &md.name);
        }
        let mut m = EventMeta {
            name: b.trace.strings.intern(&text),
            has_args: false,
            fields: StatFields::default(),
            unknown_stats: 0,
            memcpy_details: false,
            device_cat: device_cat(&text),
            python: text.starts_with('$'),
            program_run: false,
        };
        for s in metadata.map(|m| m.stats.as_slice()).unwrap_or(&[]) {
            let Some(&role) = self.roles.get(s.metadata_id) else {
                m.unknown_stats += 1;
                continue;
            };
            m.memcpy_details |= role == StatRole::MemcpyDetails;
            let Some(value) = owned_stat(s) else { continue };
            if role == StatRole::Correlation {
                m.fields.correlation = stat_int(value);
            }
            m.program_run |= role == StatRole::SymbolId && stat_int(value) == Some(0);
            let name = &self.names.keys[&s.metadata_id];
            packed_args::write_member(&mut args, &self.names.keys, name, packed(value));
        }
        if !args.is_empty() {
            m.has_args = true;
            self.names.metas.insert(id, args.into());
        }
        self.metas.insert(id, m);
    }
}

/// Where a line's events go and how their times are made.
struct Lane {
    track: crate::model::TrackIdx,
    stream: Option<i64>,
    device: Option<i64>,
    fixed: Option<&'static str>,
    timestamp_ns: i64,
    /// `timestamp_ns × 1000` when it fits (64-bit arithmetic is most of
    /// the time).
    base_ps: Option<i64>,
}

/// An event's start and end in nanoseconds: `timestamp_ns × 1000 +
/// offset_ps` and that plus `duration_ps` (negative: 0), floored; `None`
/// when they do not fit in 64-bit nanoseconds.
fn times_ns(lane: &Lane, offset_ps: i64, duration_ps: i64) -> Option<(i64, i64)> {
    let dur = duration_ps.max(0);
    if let Some(ts) = lane.base_ps.and_then(|b| b.checked_add(offset_ps)) {
        if let Some(end) = ts.checked_add(dur) {
            return Some((ts.div_euclid(1000), end.div_euclid(1000)));
        }
    }
    let ts = i128::from(lane.timestamp_ns) * 1000 + i128::from(offset_ps);
    let end = ts + i128::from(dur);
    Some((
        i64::try_from(ts.div_euclid(1000)).ok()?,
        i64::try_from(end.div_euclid(1000)).ok()?,
    ))
}

/// A device event's category by its name.
fn device_cat(name: &str) -> &'static str {
    let lower = name.to_ascii_lowercase();
    if lower.contains("memcpy") {
        "gpu_memcpy"
    } else if lower.contains("memset") {
        "gpu_memset"
    } else {
        "kernel"
    }
}

/// A stat's value as packed args keep it.
fn packed(v: StatValue) -> Value {
    match v {
        StatValue::Double(v) => Value::F64(v),
        StatValue::Uint64(v) => Value::U64(v),
        StatValue::Int64(v) => Value::I64(v),
        StatValue::Str(v) => Value::Str(v),
        StatValue::Ref(r) => Value::Ref(r),
        StatValue::Bytes(v) => Value::Bytes(v.len()),
    }
}

fn stat_int(v: StatValue) -> Option<i64> {
    match v {
        StatValue::Int64(v) => Some(v),
        StatValue::Uint64(v) => i64::try_from(v).ok(),
        _ => None,
    }
}

fn stat_text(s: &XStat, names: &HashMap<i64, &str>) -> String {
    match &s.value {
        Some(XStatValue::Double(v)) => v.to_string(),
        Some(XStatValue::Uint64(v)) => v.to_string(),
        Some(XStatValue::Int64(v)) => v.to_string(),
        Some(XStatValue::Str(v)) => v.clone(),
        Some(XStatValue::Ref(r)) => i64::try_from(*r)
            .ok()
            .and_then(|r| names.get(&r))
            .map(|s| s.to_string())
            .unwrap_or_default(),
        Some(XStatValue::Bytes(v)) => format!("({} bytes)", v.len()),
        None => String::new(),
    }
}

/// `/host:metadata`: each event metadata is a program, its `Hlo Proto`
/// stat the compiled module.
fn modules(p: &PlaneView, stat_names: &HashMap<i64, &str>, info: &mut XlaInfo) {
    for (&program_id, m) in &p.event_metadata {
        for s in &m.stats {
            if stat_names.get(&s.metadata_id).copied() != Some("Hlo Proto") {
                continue;
            }
            let Some(XStatValue::Bytes(bytes)) = &s.value else {
                continue;
            };
            match hlo::decode(bytes) {
                Some(module) => {
                    info.modules.insert(program_id, module);
                }
                None => info.undecoded_modules += 1,
            }
        }
    }
}

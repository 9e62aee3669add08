//! One XPlane into the model: its lines as lanes, its events as slices
//! (see the module above for what goes where).

use std::io::Write;

use rustc_hash::FxHashMap as HashMap;

use crate::model::{LaneId, StrId};
use crate::warnings;
use crate::xla::{XlaDevice, XlaInfo};

use super::super::builder::{Builder, EventIn, Fields};
use super::hlo;
use super::proto::{XEvent, XEventData, XLine, XPlane, XStat, XStatValue};

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
        let index = rest
            .rsplit(':')
            .next()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
        return PlaneKind::Device {
            tpu: rest.starts_with("TPU"),
            index,
        };
    }
    PlaneKind::Host
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
fn line_cat(kind: PlaneKind, line: &XLine) -> Option<&'static str> {
    let name = line.name.as_str();
    if let PlaneKind::Device { tpu, .. } = kind {
        // A TPU's own ops are its device work; a GPU's `XLA Ops` are
        // derived from its kernels and would count them twice.
        if tpu && (name == "XLA Ops" || name == "Sparse Core Ops") {
            return Some("kernel");
        }
        return DERIVED_LINES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, cat)| cat);
    }
    None
}

pub(super) fn translate(
    p: XPlane,
    order: u32,
    info: &mut XlaInfo,
    counts: &mut Counts,
    b: &mut Builder,
) {
    let kind = plane_kind(&p.name);
    let stat_names: HashMap<i64, &str> = p
        .stat_metadata
        .iter()
        .map(|(&id, m)| (id, m.name.as_str()))
        .collect();
    match kind {
        PlaneKind::Metadata => return modules(&p, &stat_names, info),
        PlaneKind::TaskEnvironment => {
            for s in &p.stats {
                let v = stat_int(s);
                match stat_names.get(&s.metadata_id).copied() {
                    Some("profile_start_time") => info.profile_start_ns = v,
                    Some("profile_stop_time") => info.profile_stop_ns = v,
                    _ => {}
                }
            }
            return;
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
    if p.lines.iter().all(|l| l.events.is_empty()) {
        return;
    }
    let pid = LaneId::Str(b.trace.strings.intern(&p.name));
    let process_name = b.trace.strings.intern(&p.name);
    b.set_process_name(pid, process_name);
    if let PlaneKind::Device { tpu, index } = kind {
        let label = b
            .trace
            .strings
            .intern(&format!("{} {index}", if tpu { "TPU" } else { "GPU" }));
        b.set_process_labels(pid, label);
        b.set_process_sort_index(pid, Some(order as i64));
    } else {
        b.set_process_sort_index(pid, Some(-1_000_000 + order as i64));
    }
    let mut plane = PlaneState {
        p: &p,
        kind,
        stat_names,
        names: HashMap::default(),
        cats: HashMap::default(),
        args: Vec::new(),
        pid,
    };
    for line in &p.lines {
        if !line.events.is_empty() {
            plane.line(line, counts, b);
        }
    }
}

struct PlaneState<'a> {
    p: &'a XPlane,
    kind: PlaneKind,
    stat_names: HashMap<i64, &'a str>,
    /// Event metadata id → its name in the model.
    names: HashMap<i64, StrId>,
    cats: HashMap<&'static str, StrId>,
    args: Vec<u8>,
    pid: LaneId,
}

impl PlaneState<'_> {
    fn line(&mut self, line: &XLine, counts: &mut Counts, b: &mut Builder) {
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
        let device = matches!(self.kind, PlaneKind::Device { .. });
        if device {
            b.device_marked[track.idx()] = true;
        }
        let fixed = line_cat(self.kind, line);
        let base_ps = i128::from(line.timestamp_ns) * 1000;
        for e in &line.events {
            let offset = match e.data {
                Some(XEventData::NumOccurrences(_)) => {
                    counts.aggregated += 1;
                    continue;
                }
                Some(XEventData::OffsetPs(o)) => o,
                None => 0,
            };
            let ts_ps = base_ps + i128::from(offset);
            let end_ps = ts_ps + i128::from(e.duration_ps.max(0));
            let (Ok(start), Ok(end)) = (
                i64::try_from(ts_ps.div_euclid(1000)),
                i64::try_from(end_ps.div_euclid(1000)),
            ) else {
                counts.out_of_range += 1;
                continue;
            };
            let name = self.name(e, counts, b);
            let fields = self.args(e, device, counts);
            let cat = fixed.unwrap_or_else(|| self.event_cat(e, &fields, b, name));
            let cat = self.cat(cat, b);
            b.count_category(cat);
            let order = b.count_event(b'X');
            let event = EventIn {
                name,
                cat,
                args: Some(&self.args),
                fields: Fields {
                    stream: device.then_some(tid_num),
                    // Host calls' `device_id` is the runtime's handle, not
                    // an index: only a device plane says which device.
                    device: match self.kind {
                        PlaneKind::Device { index, .. } => Some(index),
                        _ => None,
                    },
                    ..fields
                },
                order,
                source: (0, 0),
            };
            b.slice(track, start, end - start, &event);
        }
    }

    /// The event's name as xprof shows it: its metadata's display name,
    /// else its name.
    fn name(&mut self, e: &XEvent, counts: &mut Counts, b: &mut Builder) -> StrId {
        if let Some(&id) = self.names.get(&e.metadata_id) {
            return id;
        }
        let id = match self.p.event_metadata.get(&e.metadata_id) {
            Some(m) if !m.display_name.is_empty() => b.trace.strings.intern(&m.display_name),
            Some(m) => b.trace.strings.intern(&m.name),
            None => {
                counts.unknown_metadata += 1;
                b.trace
                    .strings
                    .intern(&format!("(event metadata {})", e.metadata_id))
            }
        };
        self.names.insert(e.metadata_id, id);
        id
    }

    fn cat(&mut self, cat: &'static str, b: &mut Builder) -> StrId {
        *self
            .cats
            .entry(cat)
            .or_insert_with(|| b.trace.strings.intern(cat))
    }

    /// The category of an event on a host thread or a device stream.
    fn event_cat(&self, e: &XEvent, f: &Fields, b: &Builder, name: StrId) -> &'static str {
        let name = b.trace.strings.get(name);
        if matches!(self.kind, PlaneKind::Device { .. }) {
            let has = |stat: &str| self.has_stat(e, stat);
            let lower = name.to_ascii_lowercase();
            if has("memcpy_details") || lower.contains("memcpy") {
                return "gpu_memcpy";
            }
            if lower.contains("memset") {
                return "gpu_memset";
            }
            return "kernel";
        }
        if f.correlation.is_some() {
            // A runtime / driver API call that launched device work.
            return "cuda_runtime";
        }
        if name.starts_with('$') {
            // The Python tracer's frames: `$file:line function`.
            return "python_function";
        }
        "user_annotation"
    }

    fn has_stat(&self, e: &XEvent, stat: &str) -> bool {
        let metadata = self.p.event_metadata.get(&e.metadata_id);
        let meta_stats = metadata.map(|m| m.stats.as_slice()).unwrap_or(&[]);
        meta_stats
            .iter()
            .chain(&e.stats)
            .any(|s| self.stat_names.get(&s.metadata_id).copied() == Some(stat))
    }

    /// Writes the event's stats as its args JSON (metadata stats first)
    /// into `self.args`, and returns the fields the linker reads.
    fn args(&mut self, e: &XEvent, device: bool, counts: &mut Counts) -> Fields {
        let mut f = Fields::default();
        self.args.clear();
        self.args.push(b'{');
        let metadata = self.p.event_metadata.get(&e.metadata_id);
        let meta_stats = metadata.map(|m| m.stats.as_slice()).unwrap_or(&[]);
        for s in meta_stats.iter().chain(&e.stats) {
            let Some(&name) = self.stat_names.get(&s.metadata_id) else {
                counts.unknown_stats += 1;
                continue;
            };
            let Some(value) = &s.value else { continue };
            if self.args.len() > 1 {
                self.args.push(b',');
            }
            json_string(&mut self.args, name);
            self.args.push(b':');
            match value {
                XStatValue::Double(v) if v.is_finite() => {
                    let _ = write!(self.args, "{v}");
                }
                XStatValue::Double(_) => self.args.extend_from_slice(b"null"),
                XStatValue::Uint64(v) => {
                    let _ = write!(self.args, "{v}");
                }
                XStatValue::Int64(v) => {
                    let _ = write!(self.args, "{v}");
                }
                XStatValue::Str(v) => json_string(&mut self.args, v),
                XStatValue::Ref(r) => {
                    let text = i64::try_from(*r)
                        .ok()
                        .and_then(|r| self.stat_names.get(&r))
                        .copied()
                        .unwrap_or("");
                    json_string(&mut self.args, text);
                }
                XStatValue::Bytes(v) => {
                    let _ = write!(self.args, "\"({} bytes)\"", v.len());
                }
            }
            let int = stat_int(s);
            match name {
                "correlation_id" => f.correlation = int,
                "device_id" => f.device = int,
                _ => {}
            }
        }
        if device {
            // Exact picoseconds for the op tables (the model keeps ns).
            if self.args.len() > 1 {
                self.args.push(b',');
            }
            let offset = match e.data {
                Some(XEventData::OffsetPs(o)) => o,
                _ => 0,
            };
            let _ = write!(
                self.args,
                "\"offset_ps\":{offset},\"duration_ps\":{}",
                e.duration_ps
            );
        }
        self.args.push(b'}');
        f
    }
}

fn json_string(out: &mut Vec<u8>, s: &str) {
    // Most stat names and values need no escaping: copied as they are.
    if s.bytes().all(|c| c >= 0x20 && c != b'"' && c != b'\\') {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
        return;
    }
    let _ = serde_json::to_writer(&mut *out, s);
}

fn stat_int(s: &XStat) -> Option<i64> {
    match s.value {
        Some(XStatValue::Int64(v)) => Some(v),
        Some(XStatValue::Uint64(v)) => i64::try_from(v).ok(),
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
fn modules(p: &XPlane, stat_names: &HashMap<i64, &str>, info: &mut XlaInfo) {
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

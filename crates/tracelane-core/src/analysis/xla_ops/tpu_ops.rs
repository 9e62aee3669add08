//! A TPU profile's device ops, as xprof counts them: a TPU records its
//! ops itself (the `XLA Ops` line), each op's identity in its event
//! metadata's stats, where a GPU's kernels carry `hlo_op` stats.
//!
//! Rules, from xprof (`convert/xplane_to_op_metrics_db.cc`
//! `ConvertTensorCoreDeviceTraceXPlaneToOpMetricsDb`,
//! `utils/op_metrics_db_utils.cc`, `convert/xplane_to_op_stats.cc`):
//!
//! - a profile with any `/device:TPU:` plane is a TPU profile: its GPU
//!   planes are not read; SparseCore planes (`/device:TPU:N SparseCore M`)
//!   only add children to TensorCore ops (op profile): in no table;
//! - per TensorCore plane, on each op line (`XLA Ops`, `Framework Ops`,
//!   `Sparse Core Ops`), in line order: an event is nested under the
//!   events before it that include it; its op's **self time** is its time
//!   less its direct children's; an event is one **occurrence** of the op
//!   its metadata's `program_id` and `symbol_id` name (events without
//!   both, or of symbol 0 — the program's root — count for no op);
//! - the op's name is its metadata's display name, else its name (the HLO
//!   text `%name = …` cut to `name`); its category the `hlo_category`
//!   stat, its framework op the `tf_op` stat; FLOPs and bytes its stats',
//!   once an occurrence;
//! - the plane's **total time** runs from the first to the last end of
//!   the events of its op lines and step lines (`Steps`, `Sparse Core
//!   Steps`), by their times (line timestamp + offset, or the device's
//!   own `device_offset_ps` and `device_duration_ps` where an event has
//!   both: its time for the tables too); when xprof derives the
//!   framework-op lines itself (the profile is not grouped yet: see
//!   [`derives_lines`]), every event with a `tf_op` stat, on any line,
//!   that is not asynchronous (`_a`) spans it too (`DeriveLinesFromStats`);
//!   **idle** is that less the ops' self time.
//!
//! Checked against xprof 2.24.2 on `tests/fixtures/xplane/tpu_rules.xplane.pb`
//! (`tools/make_xplane_tpu_fixture.py`: one event a rule).
//! Not read: `time_scale_multiplier` (a normalized time the tables here
//! do not show), `self_duration_ps` / `min_duration_ps` of aggregated
//! events (the reader counts aggregated events and passes them over).

use serde_json::Value;

use super::device_events::int;
use super::op_db::{OpDb, OpFromStats};
use crate::model::{ProcessIdx, Trace, Track, NO_STR};

const TPU_PREFIX: &str = "/device:TPU:";

/// Whether the profile has a TPU plane (xprof then reads only those).
pub fn is_tpu_profile(t: &Trace) -> bool {
    t.processes
        .iter()
        .any(|p| t.str(p.name.unwrap_or(NO_STR)).starts_with(TPU_PREFIX))
}

/// `/device:TPU:N SparseCore M` (tsl's `kSparseCorePlaneRegex`).
fn is_sparse_core(plane: &str) -> bool {
    let Some(rest) = plane.strip_prefix(TPU_PREFIX) else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    rest.split_once(" SparseCore ")
        .is_some_and(|(chip, core)| digits(chip) && digits(core))
}

fn is_op_line(name: &str) -> bool {
    matches!(name, "XLA Ops" | "Framework Ops" | "Sparse Core Ops")
}

fn is_step_line(name: &str) -> bool {
    matches!(name, "Steps" | "Sparse Core Steps")
}

/// Whether xprof derives the framework-op lines: it groups a profile's
/// events (and derives those lines) unless the profile is grouped
/// already. A profile as captured declares no `group_id` on its host
/// plane (xprof's grouping adds them): derived. Where the `/host:CPU`
/// plane does declare one (a profile xprof processed), xprof 2.24.2 was
/// seen to derive or not by which other planes declare it too; read here
/// as not derived — tested on the captured shape only.
fn derives_lines(t: &Trace) -> bool {
    let host = t
        .processes
        .iter()
        .position(|p| t.str(p.name.unwrap_or(NO_STR)) == "/host:CPU");
    let declares = |p: usize| t.packed_args.declares(ProcessIdx(p as u32), "group_id");
    match host {
        Some(h) => !declares(h),
        None => !(0..t.processes.len()).any(declares),
    }
}

/// An event's time in picoseconds: its line's timestamp and its offset
/// (the model's start is their sum floored to nanoseconds).
fn span_ps(start_ns: i64, args: &Value) -> Option<(i64, i64)> {
    let offset = int(args, "offset_ps")?;
    let dur = int(args, "duration_ps").unwrap_or(0).max(0);
    let line_ns = start_ns.checked_sub(offset.div_euclid(1000))?;
    let start = line_ns.checked_mul(1000)?.checked_add(offset)?;
    Some((start, start.saturating_add(dur)))
}

/// The device's own times of an event where it gives both
/// (`device_offset_ps`, absolute, and `device_duration_ps`: tsl's
/// `GetDeviceEventTimespan`).
fn device_span_ps(args: &Value) -> Option<(i64, i64)> {
    let start = int(args, "device_offset_ps")?;
    let dur = int(args, "device_duration_ps")?.max(0);
    Some((start, start.saturating_add(dur)))
}

/// The TensorCore planes' processes (not SparseCore planes).
fn tensor_core_planes(t: &Trace) -> impl Iterator<Item = usize> + '_ {
    t.processes.iter().enumerate().filter_map(|(p, process)| {
        let plane = t.str(process.name.unwrap_or(NO_STR));
        (plane.starts_with(TPU_PREFIX) && !is_sparse_core(plane)).then_some(p)
    })
}

/// A plane's lanes, with their names.
fn lanes(t: &Trace, p: usize) -> impl Iterator<Item = (&Track, &str)> + '_ {
    t.tracks
        .iter()
        .filter(move |k| k.process.0 as usize == p)
        .map(|k| (k, t.str(k.name.unwrap_or(NO_STR))))
}

/// An event of a TPU plane: its stats, its own times, and the times the
/// tables take (the device's own where it gives them).
struct Event {
    args: Value,
    raw: (i64, i64),
    span: (i64, i64),
}

impl Event {
    fn of(t: &Trace, i: usize) -> Option<Event> {
        let args: Value = serde_json::from_str(&t.slice_args_json(i)).unwrap_or(Value::Null);
        let raw = span_ps(t.slices.start_ns[i], &args)?;
        let span = device_span_ps(&args).unwrap_or(raw);
        Some(Event { args, raw, span })
    }
}

/// An open event of an op line: its span, its children's time, its op.
struct Open {
    span: (i64, i64),
    children_ps: u64,
    op: Option<Op>,
}

struct Op {
    program: i64,
    name: String,
    stats: OpFromStats,
    flops: Option<u64>,
    bytes: Option<u64>,
}

impl Op {
    /// The op an event's stats name (`GetOpKeyFromXEvent`), if any.
    fn of(name: &str, args: &Value) -> Option<Op> {
        let program = int(args, "program_id")?;
        let symbol = int(args, "symbol_id")?;
        if symbol == 0 {
            return None;
        }
        let text = |k: &str| {
            args.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        // `GetHloOpNameFromExpression`: `%name = …` → `name`.
        let head = name.split(" = ").next().unwrap_or(name);
        Some(Op {
            program,
            name: head.strip_prefix('%').unwrap_or(head).to_string(),
            stats: OpFromStats {
                category: text("hlo_category"),
                provenance: text("tf_op"),
            },
            flops: int(args, "flops").map(|v| v.max(0) as u64),
            bytes: int(args, "bytes_accessed").map(|v| v.max(0) as u64),
        })
    }
}

/// The TensorCore planes' times, summed.
#[derive(Default)]
pub(super) struct PlaneTimes {
    pub planes: usize,
    pub total_ps: u64,
    pub idle_ps: u64,
}

/// Adds each TensorCore plane's ops to `db`; the planes' times.
pub(super) fn tensor_core_ops(t: &Trace, db: &mut OpDb) -> PlaneTimes {
    let derived = derives_lines(t);
    let mut out = PlaneTimes::default();
    for p in tensor_core_planes(t) {
        let mut span: Option<(i64, i64)> = None;
        let mut widen = |s: (i64, i64)| {
            span = Some(span.map_or(s, |(a, z)| (a.min(s.0), z.max(s.1))));
        };
        let mut op_ps = 0u64;
        for (track, lane) in lanes(t, p) {
            let (ops, steps) = (is_op_line(lane), is_step_line(lane));
            if !ops && !steps && !derived {
                continue;
            }
            let mut stack: Vec<Open> = Vec::new();
            for i in track.slices.clone() {
                let i = i as usize;
                let Some(Event { args, raw, span: s }) = Event::of(t, i) else {
                    continue;
                };
                if ops || steps {
                    widen(s);
                }
                // The framework-op line xprof derives has the event's own
                // times.
                let tf_op = args.get("tf_op").and_then(Value::as_str);
                let asynchronous = int(&args, "_a").is_some_and(|a| a != 0);
                if derived && tf_op.is_some_and(|s| !s.is_empty()) && !asynchronous {
                    widen(raw);
                }
                if !ops {
                    continue;
                }
                while stack
                    .last()
                    .is_some_and(|top| !(top.span.0 <= s.0 && s.1 <= top.span.1))
                {
                    op_ps = op_ps.saturating_add(close(stack.pop(), db));
                }
                if let Some(parent) = stack.last_mut() {
                    // Saturating: times from stats can be anything.
                    parent.children_ps = parent.children_ps.saturating_add((s.1 - s.0) as u64);
                }
                let op = Op::of(t.slice_name(i), &args);
                stack.push(Open {
                    span: s,
                    children_ps: 0,
                    op,
                });
            }
            while let Some(open) = stack.pop() {
                op_ps = op_ps.saturating_add(close(Some(open), db));
            }
        }
        out.planes += 1;
        let total = span.map_or(0, |(a, z)| z.saturating_sub(a).max(0) as u64);
        out.total_ps = out.total_ps.saturating_add(total);
        out.idle_ps = out.idle_ps.saturating_add(total.saturating_sub(op_ps));
    }
    out
}

/// A TPU profile's device ops for the structural alignment: on each
/// TensorCore plane's `XLA Ops` lines, every event of an op (as the
/// tables key it) not inside another such event — a loop with its body,
/// never both — in line order: (its slice, its op's name, its framework
/// op's full name).
pub(super) fn outermost_ops(t: &Trace) -> Vec<(u32, String, String)> {
    let mut out = Vec::new();
    for p in tensor_core_planes(t) {
        for (track, _) in lanes(t, p).filter(|(_, lane)| *lane == "XLA Ops") {
            // The end of the op event open around this one, if any.
            let mut open_until: Option<i64> = None;
            for i in track.slices.clone() {
                let Some(Event { args, span: s, .. }) = Event::of(t, i as usize) else {
                    continue;
                };
                if open_until.is_some_and(|end| s.1 <= end) {
                    continue;
                }
                if let Some(op) = Op::of(t.slice_name(i as usize), &args) {
                    open_until = Some(s.1);
                    out.push((i, op.name, op.stats.provenance));
                }
            }
        }
    }
    out
}

/// Enters a finished event as one occurrence of its op; its self time
/// (0 for an event of no op).
fn close(open: Option<Open>, db: &mut OpDb) -> u64 {
    let Some(Open {
        span,
        children_ps,
        op: Some(op),
    }) = open
    else {
        return 0;
    };
    let time = (span.1 - span.0) as u64;
    let self_ps = time.saturating_sub(children_ps);
    let m = db.entry(op.program, &op.name);
    m.add_occurrence(time, self_ps, op.flops, op.bytes);
    m.from_stats.get_or_insert(op.stats);
    self_ps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_core_planes_are_named_as_tsl_names_them() {
        assert!(is_sparse_core("/device:TPU:0 SparseCore 3"));
        assert!(!is_sparse_core("/device:TPU:0"));
        assert!(!is_sparse_core("/device:TPU:x SparseCore 1"));
        assert!(!is_sparse_core("/device:GPU:0 SparseCore 1"));
    }

    #[test]
    fn an_events_picoseconds_are_its_lines_timestamp_and_offset() {
        let args: Value = serde_json::json!({"offset_ps": 2_500, "duration_ps": 1_000});
        // Line at 7 ns: the model's start is 7 + 2 ns.
        assert_eq!(span_ps(9, &args), Some((9_500, 10_500)));
        let args: Value = serde_json::json!({"offset_ps": -1_500, "duration_ps": 10});
        assert_eq!(span_ps(5, &args), Some((5_500, 5_510)));
    }
}

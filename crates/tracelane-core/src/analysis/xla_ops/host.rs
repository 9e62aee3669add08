//! Host framework ops (xprof's `ConvertHostThreadsXPlaneToOpMetricsDb`):
//! on every host thread, each event whose name reads as a framework op
//! (`name:type`, [`super::tf_op::parse`]) and each event carrying a
//! `tf_op` stat opens an op at its start and closes it at its end; the
//! opens and closes, sorted by time, nest as a stack (a close pops down
//! to its own open), and an op's self time is its time less its
//! children's. A thread's total time runs from its first open to its
//! last close; what no op covers is its idle time.

use rustc_hash::FxHashMap as HashMap;
use serde_json::Value;

use crate::category::Category;
use crate::model::{Trace, TrackKind, NO_STR};

use super::rows::{rank, FrameworkOpRow};
use super::tf_op::{self, OpCategory};

/// An op opening or closing: (time ps, op number, open?, op).
type Activity = (i64, u32, bool, usize);

/// The host rows, the host's total time and its idle time (ps).
pub(super) fn framework_rows(t: &Trace) -> (Vec<FrameworkOpRow>, u64, u64) {
    let mut rows: Vec<FrameworkOpRow> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::default();
    let (mut total, mut idle) = (0u64, 0u64);
    let mut threads = 0;
    let tf_op_key = t.args_key("tf_op");
    for track in &t.tracks {
        let plane = t.str(t.processes[track.process.0 as usize].name.unwrap_or(NO_STR));
        if track.kind != TrackKind::HostThread || !plane.starts_with("/host:") {
            continue;
        }
        threads += 1;
        let mut ops: Vec<tf_op::TfOp> = Vec::new();
        let mut acts: Vec<Activity> = Vec::new();
        for i in track.slices.clone() {
            let i = i as usize;
            let start = t.slices.start_ns[i].saturating_mul(1000);
            let end = t.slices.end_ns(i).saturating_mul(1000);
            let mut open = |op: tf_op::TfOp| {
                let n = acts.len() as u32 / 2 + 1;
                ops.push(op);
                acts.push((start, n, true, ops.len() - 1));
                acts.push((end, n, false, ops.len() - 1));
            };
            let named = tf_op::parse(t.slice_name(i));
            if named.category != OpCategory::Unknown {
                open(named);
            }
            // Only a `tf_op` stat is read: most events have none, and
            // their args are not parsed.
            if has_args(t, i) && t.slice_args_have(i, &tf_op_key) {
                let args: Value =
                    serde_json::from_str(&t.slice_args_json(i)).unwrap_or(Value::Null);
                if let Some(full) = args.get("tf_op").and_then(Value::as_str) {
                    if !full.is_empty() {
                        open(tf_op::parse(full));
                    }
                }
            }
        }
        if acts.is_empty() {
            continue;
        }
        acts.sort_by_key(|a| a.0);
        let line_total = (acts[acts.len() - 1].0 - acts[0].0).max(0) as u64;
        let mut op_time = 0u64;
        // (op number, start, children's time)
        let mut stack: Vec<(u32, i64, u64)> = Vec::new();
        for &(ts, n, is_open, op) in &acts {
            if is_open {
                stack.push((n, ts, 0));
                continue;
            }
            let mut found = None;
            while let Some(top) = stack.pop() {
                if top.0 == n {
                    found = Some(top);
                    break;
                }
            }
            let Some((_, start, children)) = found else {
                continue;
            };
            let time = (ts - start).max(0) as u64;
            let own = time.saturating_sub(children);
            let op = &ops[op];
            let k = *index.entry(op.name.clone()).or_insert_with(|| {
                rows.push(FrameworkOpRow {
                    host_or_device: "Host".into(),
                    op_type: op.op_type.clone(),
                    operation: op.name.clone(),
                    ..FrameworkOpRow::default()
                });
                rows.len() - 1
            });
            rows[k].occurrences += 1;
            rows[k].total_time_ps += time;
            rows[k].self_time_ps += own;
            op_time += own;
            if let Some(parent) = stack.last_mut() {
                parent.2 += time;
            }
        }
        total += line_total;
        idle += line_total.saturating_sub(op_time);
    }
    // xprof adds an idle op for every host thread it reads, so a host
    // with threads has an IDLE row, even of nothing.
    if threads == 0 {
        return (rows, 0, 0);
    }
    rows.push(FrameworkOpRow {
        host_or_device: "Host".into(),
        op_type: "IDLE".into(),
        operation: "IDLE".into(),
        total_time_ps: idle,
        self_time_ps: idle,
        ..FrameworkOpRow::default()
    });
    rank(&mut rows, total);
    (rows, total, idle)
}

fn has_args(t: &Trace, i: usize) -> bool {
    !matches!(t.slices.category[i], Category::PythonFunction)
}

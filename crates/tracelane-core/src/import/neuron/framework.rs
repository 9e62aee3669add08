//! TorchNeuron's join: PyTorch's ops (the run's Kineto `trace.json`) →
//! the runtime executions that ran them (the Neuron profile), through the
//! framework mapping ([`super::mapping`]).
//!
//! A mapping entry names an execution by its `nrta_seq_id` and the ops it
//! ran by `(seq_nr, th_id)`, taken when the op was submitted to a Neuron
//! stream: `seq_nr = at::sequence_number::peek()`,
//! `th_id = RecordFunction::currentThreadId()` (torch-neuronx
//! `NeuronStream.cpp`, `SubmitOperationContext`). Entries come in
//! submission order (`nrta_seq_id` increases as the runtime schedules).
//!
//! PyTorch records an op's `Sequence number` as `peek()` when the op is
//! dispatched with autograd keys and grad mode on
//! (`Dispatcher::sequenceNumberForRunningRecordFunction`), before its own
//! autograd node, if it makes one, takes that number; ops in backward and
//! under `no_grad` record none, and autograd's node events (`Fwd thread
//! id` set) record their node's number, not `peek()`. So the `peek()` an op
//! submitted with is the number the next op dispatched after it records:
//! an op's *submission number* is read as the `Sequence number` of the
//! first op with one, not a node event, that starts at or after it ends on
//! its thread (when nothing follows, the last number recorded before its
//! end, or one more).
//!
//! The ops that can submit are those dispatched from user code: ops that
//! recorded a sequence number (dispatched with autograd keys), and, where
//! none is recorded (backward, `no_grad`), the outermost ops — not ops a
//! kernel called internally, and not autograd's node events. Each entry is
//! given, on its thread, the latest of those that started no later than
//! the execution was scheduled (the runtime
//! event carrying its `nrta_seq_id`, else its launch) and no earlier than
//! the op given to the entry before it — among those, the latest whose
//! submission number is the entry's `seq_nr`, else the latest (counted:
//! joined by time only; backward ops all share one number). Both clocks
//! are the epoch clock (Kineto's `baseTimeNanoseconds`, the runtime's
//! timestamps).
//!
//! `th_id` counts threads as `RecordFunction` meets them, not as the
//! system does; each `th_id` is read as the trace thread where most of its
//! entries' numbers are submission numbers.
//!
//! The execution's device time then counts for that op (its hardware
//! execution's link to the op is set; the runtime's own events stay on
//! their lanes and out of the op's CPU time, as PyTorch's table has none
//! of them). What cannot be joined is counted by kind and said.

use rustc_hash::FxHashMap;

use super::mapping::{Mapping, OpExec};
use crate::category::Category;
use crate::model::{LinkState, Trace, NONE_I64, NO_SLICE};

/// What the join found, for the diagnostics.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MappingJoin {
    pub entries: u64,
    /// Entries whose `nrta_seq_id` no hardware execution of the profile
    /// carries.
    pub entries_without_execution: u64,
    /// Op submissions the mapping names that no op of the trace matches.
    pub ops_not_found: u64,
    /// … joined by time only: no op in its window had its number.
    pub ops_by_time_only: u64,
    /// Hardware executions joined to an op.
    pub executions_joined: u64,
    /// Executions the profile carries an `nrta_seq_id` for that the
    /// mapping does not name.
    pub executions_not_mapped: u64,
    /// Entries naming several ops (their device time counts for the first).
    pub shared_executions: u64,
    /// Leaf ops with a sequence number on a mapped thread, inside the
    /// mapped ops' time span, that no entry names.
    pub ops_not_mapped: u64,
    /// How each `th_id` was read.
    pub threads: Vec<String>,
}

/// An op dispatched from user code: one that may have submitted work.
#[derive(Clone, Copy)]
struct Op {
    slice: u32,
    start: i64,
    /// The submission numbers it may have used (see the module doc).
    sub: [i64; 2],
}

/// Joins the ops of `host` tracks (the Kineto part) to the hardware
/// executions of `device` tracks (the Neuron part) through `mapping`.
pub fn join(
    t: &mut Trace,
    mapping: &Mapping,
    host: std::ops::Range<usize>,
    device: std::ops::Range<usize>,
) -> MappingJoin {
    let mut out = MappingJoin {
        entries: mapping.entries.len() as u64,
        ..MappingJoin::default()
    };
    let (executions, scheduled) = executions_by_sequence(t, device);
    let ops_by_track = ops_by_track(t, host);
    let thread_of = threads(mapping, &ops_by_track, t, &mut out);
    let mut used: FxHashMap<u32, ()> = FxHashMap::default();
    let mut named_seqs: FxHashMap<i64, ()> = FxHashMap::default();
    let mut joined_ops: Vec<u32> = Vec::new();
    // Per thread, where the previous entry's op started.
    let mut after: FxHashMap<usize, i64> = FxHashMap::default();
    for entry in &mapping.entries {
        named_seqs.insert(entry.nrta_seq_id, ());
        let Some(execs) = executions.get(&entry.nrta_seq_id) else {
            out.entries_without_execution += 1;
            out.ops_not_found += entry.ops.len() as u64;
            continue;
        };
        if entry.ops.len() > 1 {
            out.shared_executions += 1;
        }
        // When the runtime scheduled it: the op had submitted it by then.
        let when = scheduled
            .get(&entry.nrta_seq_id)
            .copied()
            .unwrap_or_else(|| {
                execs
                    .iter()
                    .map(|&d| match t.links.launch[d as usize] {
                        NO_SLICE => t.slices.start_ns[d as usize],
                        l => t.slices.start_ns[l as usize],
                    })
                    .min()
                    .unwrap_or(i64::MAX)
            });
        // An entry's ops were submitted in the order it lists them: the
        // last first, each before the one after it.
        let mut chosen: Vec<Option<Op>> = vec![None; entry.ops.len()];
        let mut upper: FxHashMap<usize, i64> = FxHashMap::default();
        let mut last_of: FxHashMap<usize, i64> = FxHashMap::default();
        for (j, op) in entry.ops.iter().enumerate().rev() {
            let Some(&track) = thread_of.get(&op.th_id) else {
                out.ops_not_found += 1;
                continue;
            };
            let since = after.get(&track).copied().unwrap_or(i64::MIN);
            let until = upper.get(&track).copied().unwrap_or(when);
            match choose(&ops_by_track[&track], op, until, since, &mut out) {
                Some(o) => {
                    chosen[j] = Some(o);
                    used.insert(o.slice, ());
                    joined_ops.push(o.slice);
                    upper.insert(track, o.start - 1);
                    last_of.entry(track).or_insert(o.start);
                }
                None => out.ops_not_found += 1,
            }
        }
        after.extend(last_of);
        let Some(op) = chosen.iter().flatten().next().map(|o| o.slice) else {
            continue;
        };
        for &d in execs {
            let d = d as usize;
            if t.links.op[d] == NO_SLICE {
                t.diagnostics.links.device_without_op =
                    t.diagnostics.links.device_without_op.saturating_sub(1);
            }
            t.links.op[d] = op;
            t.links.state[d] = LinkState::ByArgs;
            out.executions_joined += 1;
        }
    }
    out.executions_not_mapped = executions
        .keys()
        .filter(|s| !named_seqs.contains_key(s))
        .map(|s| executions[s].len() as u64)
        .sum();
    out.ops_not_mapped = unmapped_leaves(t, &ops_by_track, &thread_of, &used, &joined_ops);
    t.diagnostics.links.device_by_mapping += out.executions_joined;
    let without = t.diagnostics.links.device_without_op;
    t.diagnostics
        .set_count(crate::warnings::DEVICE_WITHOUT_OP, without);
    out
}

/// Hardware executions by the `nrta_seq_id` the profile's reader gave
/// them (in their args), and when the runtime scheduled each: the
/// earliest start of a runtime event carrying that id.
#[allow(clippy::type_complexity)]
fn executions_by_sequence(
    t: &Trace,
    device: std::ops::Range<usize>,
) -> (FxHashMap<i64, Vec<u32>>, FxHashMap<i64, i64>) {
    let mut by: FxHashMap<i64, Vec<u32>> = FxHashMap::default();
    let mut scheduled: FxHashMap<i64, i64> = FxHashMap::default();
    for tr in &t.tracks[device] {
        for i in tr.slices.clone() {
            let i = i as usize;
            let c = t.slices.category[i];
            if c != Category::Kernel && c != Category::Runtime {
                continue;
            }
            let args = t.slice_args_json(i);
            if !args.contains("nrta_seq_id") && !args.contains("nrt_sequence_id") {
                continue;
            }
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&args) else {
                continue;
            };
            let seq = super::value::integer(v.get("nrta_seq_id"))
                .or_else(|| super::value::integer(v.get("nrt_sequence_id")));
            let Some(seq) = seq else { continue };
            if c == Category::Kernel {
                by.entry(seq).or_default().push(i as u32);
            } else {
                let at = scheduled.entry(seq).or_insert(i64::MAX);
                *at = (*at).min(t.slices.start_ns[i]);
            }
        }
    }
    (by, scheduled)
}

/// Ops dispatched from user code per track, by start, each with the
/// submission numbers it may have used.
fn ops_by_track(t: &Trace, host: std::ops::Range<usize>) -> FxHashMap<usize, Vec<Op>> {
    let s = &t.slices;
    let mut out = FxHashMap::default();
    for k in host {
        let tr = &t.tracks[k];
        let range = tr.slices.start as usize..tr.slices.end as usize;
        let is_op = |i: usize| s.category[i] == Category::CpuOp;
        // Numbers recorded as peek(): dispatched ops, not autograd's node
        // events (which carry their node's number and a Fwd thread id).
        let peeks: Vec<(i64, i64)> = range
            .clone()
            .filter(|&i| is_op(i) && s.sequence_nr[i] != NONE_I64 && s.fwd_thread[i] <= 0)
            .map(|i| (s.start_ns[i], s.sequence_nr[i]))
            .collect();
        let node_event =
            |i: usize| s.fwd_thread[i] > 0 || t.slice_name(i).starts_with("autograd::");
        // The nearest op enclosing an op (annotations are not ops).
        let op_parent = |i: usize| {
            let mut p = s.parent[i];
            while p != NO_SLICE && !is_op(p as usize) {
                p = s.parent[p as usize];
            }
            p
        };
        let user_level = |i: usize| {
            is_op(i)
                && !node_event(i)
                && (s.sequence_nr[i] != NONE_I64 || {
                    let p = op_parent(i);
                    p == NO_SLICE || node_event(p as usize)
                })
        };
        let mut ops: Vec<Op> = Vec::new();
        for i in range.clone() {
            if !user_level(i) {
                continue;
            }
            let end = s.end_ns(i);
            let next = peeks.partition_point(|&(st, _)| st < end);
            // Nothing recorded after it: the last number recorded before
            // its end, or one more (a node made since).
            let sub = match (peeks.get(next), next.checked_sub(1).map(|p| peeks[p])) {
                (Some(&(_, n)), _) => [n, n],
                (None, Some((_, last))) => [last, last + 1],
                (None, None) => [NONE_I64, NONE_I64],
            };
            ops.push(Op {
                slice: i as u32,
                start: s.start_ns[i],
                sub,
            });
        }
        if !ops.is_empty() {
            ops.sort_by_key(|o| (o.start, o.slice));
            out.insert(k, ops);
        }
    }
    out
}

/// Reads each `th_id` as the trace thread where most of its entries'
/// submission numbers are found.
fn threads(
    mapping: &Mapping,
    ops: &FxHashMap<usize, Vec<Op>>,
    t: &Trace,
    out: &mut MappingJoin,
) -> FxHashMap<i64, usize> {
    let mut by_thread: FxHashMap<i64, Vec<i64>> = FxHashMap::default();
    for e in &mapping.entries {
        for op in &e.ops {
            by_thread.entry(op.th_id).or_default().push(op.seq_nr);
        }
    }
    let mut th_ids: Vec<i64> = by_thread.keys().copied().collect();
    th_ids.sort_unstable();
    let mut tracks: Vec<usize> = ops.keys().copied().collect();
    tracks.sort_unstable();
    let mut chosen = FxHashMap::default();
    for th in th_ids {
        let seqs = &by_thread[&th];
        let best = tracks
            .iter()
            .map(|&k| {
                let subs: FxHashMap<i64, ()> = ops[&k]
                    .iter()
                    .flat_map(|o| o.sub)
                    .map(|s| (s, ()))
                    .collect();
                let found = seqs.iter().filter(|s| subs.contains_key(s)).count();
                (found, ops[&k].len(), std::cmp::Reverse(k))
            })
            .max();
        let Some((found, _, std::cmp::Reverse(k))) = best else {
            continue;
        };
        out.threads.push(format!(
            "th_id {th} read as {} ({found} of its {} submissions' numbers found there)",
            t.track_label(k),
            seqs.len()
        ));
        if found > 0 {
            chosen.insert(th, k);
        }
    }
    chosen
}

/// The op that submitted `op`, scheduled at `scheduled`, on a thread
/// whose previous entry went to the op starting at `after`: see the module
/// doc.
fn choose(
    ops: &[Op],
    op: &OpExec,
    scheduled: i64,
    after: i64,
    out: &mut MappingJoin,
) -> Option<Op> {
    let upto = ops.partition_point(|o| o.start <= scheduled);
    let from = ops[..upto].partition_point(|o| o.start < after);
    let window = &ops[from..upto];
    if let Some(o) = window.iter().rev().find(|o| o.sub.contains(&op.seq_nr)) {
        return Some(*o);
    }
    out.ops_by_time_only += 1;
    window.last().or_else(|| ops[..upto].last()).copied()
}

/// Ops dispatched from user code on mapped threads, between the first and
/// last op joined, that no entry names.
fn unmapped_leaves(
    t: &Trace,
    ops: &FxHashMap<usize, Vec<Op>>,
    thread_of: &FxHashMap<i64, usize>,
    used: &FxHashMap<u32, ()>,
    joined: &[u32],
) -> u64 {
    let s = &t.slices;
    let (Some(lo), Some(hi)) = (
        joined.iter().map(|&o| s.start_ns[o as usize]).min(),
        joined.iter().map(|&o| s.start_ns[o as usize]).max(),
    ) else {
        return 0;
    };
    let mut tracks: Vec<usize> = thread_of.values().copied().collect();
    tracks.sort_unstable();
    tracks.dedup();
    let mut n = 0;
    for k in tracks {
        n += ops[&k]
            .iter()
            .filter(|o| (lo..=hi).contains(&o.start) && !used.contains_key(&o.slice))
            .count() as u64;
    }
    n
}

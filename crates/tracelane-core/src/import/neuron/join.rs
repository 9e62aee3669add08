//! Framework → runtime → hardware joins of a Neuron system profile, made
//! once every event is in, and written as Kineto's ids (an `External id`
//! per framework op, a `correlation` per runtime event) so the linker joins
//! them exactly as it joins a CUDA launch.
//!
//! In the order they are tried:
//! 1. **LNC = 2**: one logical core's execution is one `nc_exec_running`
//!    per physical core (cores 2k, 2k+1, same `exec_id`; scripts that read
//!    real captures count 8 events for 4 ranks × 2 cores). Both stay on
//!    their physical lanes, out of the device time; one logical execution
//!    (first start to last end) on the logical core's lane carries it, so
//!    the op's device time counts it once.
//! 2. **`flow_id`**: each id joins the events carrying it, in layer then
//!    time order (Neuron Explorer's flows: framework → runtime → hardware).
//! 3. **Sequence id**: a framework event's `nrt_sequence_id` equals the
//!    `nrta_seq_id` of the runtime events of its execution.
//! 4. **Execution key**: (process, logical core, `exec_id`, model) joins a
//!    hardware execution to the runtime stages of its execution, as
//!    scripts written against real captures do (`kbl_exec_pre` ↔
//!    `nc_exec_running` by `exec_id` and `model_name` within a process);
//!    filtered exports drop the events that carry flows. The launch is the
//!    stage first in [`super::event`]'s launch order, nearest before the
//!    execution. Each join made this way is marked in the event's args
//!    (`linked_by`).

use std::num::NonZeroI64;

use rustc_hash::FxHashMap;
use serde_json::Value;

/// An id a record takes (an `External id`, a `correlation`): ids count
/// from 1, so `None` costs nothing.
type Id = Option<NonZeroI64>;

fn nz(v: i64) -> Id {
    NonZeroI64::new(v)
}

use super::counts::NeuronCounts;
use super::event::{Events, ExecKind, ExecRec, Layer, Rec, GHOST};
use crate::category::Category;
use crate::import::builder::{Builder, EventIn};
use crate::model::{LaneId, NONE_I64};

/// Makes every join and writes the ids into the builder's slices.
pub(super) fn join(ev: &mut Events, b: &mut Builder, counts: &mut NeuronCounts) {
    counts.lnc_executions = logical_executions(ev, b);
    let n = ev.recs.len();
    let mut id_of = vec![NONE_I64; n];
    let mut next_id = 1i64;
    for (k, r) in ev.recs.iter().enumerate() {
        if r.layer < Layer::Hardware {
            id_of[k] = next_id;
            next_id += 1;
        }
    }
    let mut ext_of: Vec<Id> = vec![None; n];
    let mut corr_of: Vec<Id> = vec![None; n];
    counts.flow_links = flows(ev, &id_of, &mut ext_of, &mut corr_of);
    // Runtime events a hardware event points at carry a correlation.
    let mut launches = vec![false; n];
    let rec_of_id: Vec<u32> = (0..n as u32)
        .filter(|&k| id_of[k as usize] != NONE_I64)
        .collect();
    for c in corr_of.iter().flatten() {
        launches[rec_of_id[(c.get() - 1) as usize] as usize] = true;
    }
    let mut marks: Vec<(u32, String)> = Vec::new();
    counts.sequence_links = sequences(ev, &id_of, &mut ext_of, &mut marks);
    let mut ids = Ids {
        of: &id_of,
        ext: &mut ext_of,
        corr: &mut corr_of,
        launches: &mut launches,
    };
    counts.exec_key_links = executions(ev, &mut ids, &mut marks);
    let sequence_ids = execution_sequences(ev, &corr_of, &ext_of, &rec_of_id);
    let mut with_own = sequence_ids.clone();
    with_own.extend(ev.seqs.iter().filter_map(|&(seq, rec)| {
        let hw = ev.recs[rec as usize].layer == Layer::Hardware;
        hw.then_some((rec, seq, "its own nrta_seq_id"))
    }));
    counts.sequence_links += ops_by_sequence(ev, &with_own, &id_of, &mut ext_of, &mut marks);
    spread_in_executions(ev, &mut ext_of);
    let s = &mut b.trace.slices;
    for (k, r) in ev.recs.iter().enumerate() {
        if r.slice == GHOST {
            continue;
        }
        let i = r.slice as usize;
        match r.layer {
            Layer::Framework => s.external_id.set(i, id_of[k]),
            Layer::Runtime => {
                if let Some(x) = ext_of[k] {
                    s.external_id.set(i, x.get());
                }
                if ext_of[k].is_some() || launches[k] {
                    s.correlation.set(i, id_of[k]);
                }
            }
            Layer::Hardware => {
                if let Some(x) = ext_of[k] {
                    s.external_id.set(i, x.get());
                }
                if let Some(c) = corr_of[k] {
                    s.correlation.set(i, c.get());
                }
            }
            Layer::Unknown => {}
        }
    }
    for (rec, how) in marks {
        let slice = ev.recs[rec as usize].slice;
        if slice != GHOST {
            add_arg(b, slice as usize, "linked_by", &Value::from(how));
        }
    }
    let named = sequence_ids.len();
    for (rec, seq, how) in sequence_ids {
        let slice = ev.recs[rec as usize].slice as usize;
        add_arg(b, slice, "nrta_seq_id", &Value::from(seq));
        add_arg(b, slice, "nrta_seq_id_from", &Value::from(how));
    }
    if named > 0 {
        counts.readings.push(format!(
            "{named} hardware executions given the nrta_seq_id of their execution (from their launch, a stage of their exec_id, their framework op's nrt_sequence_id, the runtime call carrying it that encloses their launch, or — inferred: the runtime's async queue runs a core's executions in the order they were scheduled — the k-th scheduled execution of their model on their core; each says which in nrta_seq_id_from): what a TorchNeuron framework mapping joins"
        ));
    }
    if counts.lnc_executions > 0 {
        counts.readings.push(format!(
            "LNC = 2: {} executions ran on two physical cores each (same exec_id); both cores' events stay on their lanes, and one logical execution per pair, first start to last end, on the logical core's lane carries the device time",
            counts.lnc_executions
        ));
    }
    if counts.exec_key_links + counts.sequence_links > 0 {
        counts.readings.push(format!(
            "{} joins by (process, logical core, exec_id, model) and {} by sequence id, as scripts reading real captures join them (marked linked_by in the event's args); {} by flow_id",
            counts.exec_key_links, counts.sequence_links, counts.flow_links
        ));
    }
}

/// Makes one logical execution of each `nc_exec_running` group that ran
/// on several physical cores; returns how many.
fn logical_executions(ev: &mut Events, b: &mut Builder) -> u64 {
    let mut groups: FxHashMap<(u32, i64, i64, i64), Vec<usize>> = FxHashMap::default();
    for (k, x) in ev.execs.iter().enumerate() {
        if x.kind == ExecKind::Execution && x.core != NONE_I64 {
            let model = if x.model_id != NONE_I64 {
                x.model_id
            } else {
                x.model_name as i64
            };
            groups
                .entry((x.process, x.nc, x.exec_id, model))
                .or_default()
                .push(k);
        }
    }
    let mut keys: Vec<_> = groups.into_iter().collect();
    keys.sort_unstable_by_key(|(key, _)| *key);
    let part_cat = b.trace.strings.intern("neuron_hw_core");
    let mut made = 0;
    // Each part's logical execution, for moving their flows at the end.
    let mut logical_of: FxHashMap<u32, u32> = FxHashMap::default();
    for ((process, nc, exec_id, _), members) in keys {
        let mut cores: Vec<i64> = members.iter().map(|&k| ev.execs[k].core).collect();
        cores.sort_unstable();
        cores.dedup();
        if cores.len() < 2 {
            continue;
        }
        let slices: Vec<usize> = members
            .iter()
            .map(|&k| ev.recs[ev.execs[k].rec as usize].slice as usize)
            .collect();
        let s = &b.trace.slices;
        let start = slices.iter().map(|&i| s.start_ns[i]).min().unwrap_or(0);
        let end = slices.iter().map(|&i| s.end_ns(i)).max().unwrap_or(start);
        let order = slices.iter().map(|&i| s.file_order[i]).min().unwrap_or(0);
        let name = s.name[slices[0]];
        let cat = s.cat[slices[0]];
        let durations: Vec<i64> = slices.iter().map(|&i| s.dur_ns[i]).collect();
        let mut args = serde_json::Map::new();
        args.insert("exec_id".into(), Value::from(exec_id));
        let first = &ev.execs[members[0]];
        if first.model_id != NONE_I64 {
            args.insert("model_id".into(), Value::from(first.model_id));
        }
        args.insert("nc_idx".into(), Value::from(nc));
        args.insert("physical_cores".into(), Value::from(cores.clone()));
        args.insert("physical_durations_ns".into(), Value::from(durations));
        args.insert(
            "device_time".into(),
            Value::from(format!(
                "counted once: first start to last end of the {} physical cores' events (LNC = 2)",
                cores.len()
            )),
        );
        let args = serde_json::to_vec(&args).unwrap_or_default();
        let process_name = ev
            .hw_process
            .get(&process)
            .cloned()
            .unwrap_or_else(|| "neuron_hw".into());
        let pid = LaneId::Str(b.trace.strings.intern(&process_name));
        let tid = LaneId::Str(b.trace.strings.intern(&format!("NC{nc}")));
        let track = b.track(pid, tid);
        b.device_marked[track.idx()] = true;
        let slice = b.trace.slices.len() as u32;
        b.slice(
            track,
            start,
            end - start,
            &EventIn::translated(name, cat, &args, order),
        );
        let logical = ev.recs.len() as u32;
        ev.recs.push(Rec {
            layer: Layer::Hardware,
            slice,
            start,
            end,
        });
        // The parts leave the joins: their flows and key go to the logical
        // execution; they stay on their lanes as its physical share.
        for &k in &members {
            logical_of.insert(ev.execs[k].rec, logical);
        }
        for (&k, &i) in members.iter().zip(&slices) {
            ev.execs[k].kind = ExecKind::Other;
            ev.recs[ev.execs[k].rec as usize].layer = Layer::Unknown;
            // Its category (neuron_hw_core) says what it is; the logical
            // execution's args list the cores and say how it is counted.
            b.trace.slices.category[i] = Category::Other;
            b.trace.slices.cat[i] = part_cat;
        }
        let template = &ev.execs[members[0]];
        ev.execs.push(ExecRec {
            rec: logical,
            process,
            nc,
            exec_id,
            model_id: template.model_id,
            model_name: template.model_name,
            core: NONE_I64,
            kind: ExecKind::Execution,
        });
        made += 1;
    }
    if !logical_of.is_empty() {
        for m in &mut ev.flow_members {
            if let Some(&l) = logical_of.get(&m.1) {
                m.1 = l;
            }
        }
    }
    made
}

/// Joins by `flow_id`; returns the edges made.
fn flows(ev: &mut Events, id_of: &[i64], ext_of: &mut [Id], corr_of: &mut [Id]) -> u64 {
    let recs = &ev.recs;
    ev.flow_members.sort_unstable();
    let mut edges: Vec<(u32, u32)> = Vec::new();
    for members in ev.flow_members.chunk_by(|a, b| a.0 == b.0) {
        let mut m: Vec<u32> = members
            .iter()
            .map(|&(_, r)| r)
            .filter(|&r| recs[r as usize].layer != Layer::Unknown)
            .collect();
        m.sort_by_key(|&r| (recs[r as usize].layer, recs[r as usize].start, r));
        m.dedup();
        for w in m.windows(2) {
            if recs[w[0] as usize].layer < recs[w[1] as usize].layer {
                edges.push((w[0], w[1]));
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    for &(a, z) in edges
        .iter()
        .filter(|(a, _)| recs[*a as usize].layer == Layer::Framework)
    {
        ext_of[z as usize] = nz(id_of[a as usize]);
    }
    for &(a, z) in edges
        .iter()
        .filter(|(a, _)| recs[*a as usize].layer == Layer::Runtime)
    {
        corr_of[z as usize] = nz(id_of[a as usize]);
        if let Some(x) = ext_of[a as usize] {
            ext_of[z as usize].get_or_insert(x);
        }
    }
    edges.len() as u64
}

/// Joins runtime events to the framework op whose `nrt_sequence_id` they
/// carry; returns how many were joined.
fn sequences(ev: &Events, id_of: &[i64], ext_of: &mut [Id], marks: &mut Vec<(u32, String)>) -> u64 {
    let carried: Vec<(u32, i64, &'static str)> = ev
        .seqs
        .iter()
        .filter(|&&(_, rec)| ev.recs[rec as usize].layer == Layer::Runtime)
        .map(|&(seq, rec)| (rec, seq, "carried"))
        .collect();
    ops_by_sequence(ev, &carried, id_of, ext_of, marks)
}

/// Whether two records may belong to one model's execution: equal model
/// ids where both have one, equal NEFF file names where both have one.
fn same_model(a: &ExecRec, b: &ExecRec) -> bool {
    (a.model_id == NONE_I64 || b.model_id == NONE_I64 || a.model_id == b.model_id)
        && (a.model_name == 0 || b.model_name == 0 || a.model_name == b.model_name)
}

/// Joins hardware executions (and model switches) without a launch to the
/// runtime stages of their execution; the stages without an op take the
/// op of any stage of it. Returns the hardware events joined.
/// The ids the joins write: each record's own id, and the External id and
/// correlation it takes; which runtime records are launches.
struct Ids<'a> {
    of: &'a [i64],
    ext: &'a mut [Id],
    corr: &'a mut [Id],
    launches: &'a mut [bool],
}

fn executions(ev: &Events, ids: &mut Ids, marks: &mut Vec<(u32, String)>) -> u64 {
    let Ids {
        of: id_of,
        ext: ext_of,
        corr: corr_of,
        launches,
    } = ids;
    let mut stages: FxHashMap<(u32, i64, i64), Vec<usize>> = FxHashMap::default();
    for (k, x) in ev.execs.iter().enumerate() {
        if matches!(x.kind, ExecKind::Stage(_)) {
            stages
                .entry((x.process, x.nc, x.exec_id))
                .or_default()
                .push(k);
        }
    }
    let start = |x: &ExecRec| ev.recs[x.rec as usize].start;
    let mut made = 0;
    for x in &ev.execs {
        if !matches!(x.kind, ExecKind::Execution | ExecKind::Switch) {
            continue;
        }
        let h = x.rec as usize;
        let Some(group) = stages.get(&(x.process, x.nc, x.exec_id)) else {
            continue;
        };
        let group: Vec<&ExecRec> = group
            .iter()
            .map(|&k| &ev.execs[k])
            .filter(|s| same_model(s, x))
            .collect();
        // The group's op, from any stage that has one.
        let op = group.iter().find_map(|s| ext_of[s.rec as usize]);
        if corr_of[h].is_none() {
            let launch = group.iter().min_by_key(|s| {
                let ExecKind::Stage(rank) = s.kind else {
                    unreachable!()
                };
                (rank, start(s) > start(x), start(s).abs_diff(start(x)))
            });
            if let Some(l) = launch {
                let r = l.rec as usize;
                corr_of[h] = nz(id_of[r]);
                launches[r] = true;
                if ext_of[h].is_none() {
                    ext_of[h] = ext_of[r].or(op);
                }
                marks.push((
                    x.rec,
                    format!(
                        "exec_id {} on logical core {}{}",
                        x.exec_id,
                        x.nc,
                        if x.model_id != NONE_I64 {
                            format!(", model {}", x.model_id)
                        } else {
                            String::new()
                        }
                    ),
                ));
                made += 1;
            }
        }
        if let Some(op) = op.or(ext_of[h]) {
            for s in &group {
                let r = s.rec as usize;
                // The stage's op comes with its execution's: the hardware
                // event says which key joined them (marking every stage
                // would copy their args again).
                ext_of[r].get_or_insert(op);
            }
        }
    }
    made
}

/// Adds one field to a slice's args text (a JSON object).
pub(super) fn add_arg(b: &mut Builder, slice: usize, key: &str, value: &Value) {
    let (off, len) = b.trace.slices.args_range[slice];
    let old = &b.trace.args_arena[off as usize..off as usize + len as usize];
    let mut text = match old.iter().rposition(|&c| c == b'}') {
        Some(end) if len > 0 => old[..end].to_vec(),
        _ => b"{".to_vec(),
    };
    if text.iter().any(|c| !c.is_ascii_whitespace() && *c != b'{') {
        text.push(b',');
    }
    let _ = serde_json::to_writer(&mut text, key);
    text.push(b':');
    let _ = serde_json::to_writer(&mut text, value);
    text.push(b'}');
    let args = b.store_args(Some(&text));
    b.trace.slices.args_range.set(slice, args);
}

/// The runtime's sequence id (`nrta_seq_id`) of each hardware execution
/// that does not carry one itself: its launch's, else that of a stage of
/// its `exec_id`, else its framework op's `nrt_sequence_id`, else that of
/// the runtime call carrying one whose span holds its whole launch on the
/// same process and logical core (the fetch JSON's `nrt_execute` encloses
/// `kbl_exec_pre`), else (inferred) the FIFO order of its model's
/// schedules on its core. Returns (record, id, how).
fn execution_sequences(
    ev: &Events,
    corr_of: &[Id],
    ext_of: &[Id],
    rec_of_id: &[u32],
) -> Vec<(u32, i64, &'static str)> {
    let (start, end) = (|r: usize| ev.recs[r].start, |r: usize| ev.recs[r].end);
    let mut seq_of: FxHashMap<u32, i64> = FxHashMap::default();
    let mut framework_seq: FxHashMap<u32, i64> = FxHashMap::default();
    for &(seq, rec) in &ev.seqs {
        if ev.recs[rec as usize].layer >= Layer::Runtime {
            seq_of.entry(rec).or_insert(seq);
        } else {
            framework_seq.entry(rec).or_insert(seq);
        }
    }
    if seq_of.is_empty() && framework_seq.is_empty() {
        return Vec::new();
    }
    // Runtime calls carrying a sequence id, by (process, logical core).
    // (start, end, sequence id) by (process, logical core).
    type Spans = Vec<(i64, i64, i64)>;
    let mut carriers: FxHashMap<(u32, i64), Spans> = FxHashMap::default();
    for (&rec, &seq) in &seq_of {
        if let Some(&key) = ev.nc_of.get(&rec) {
            let r = rec as usize;
            carriers
                .entry(key)
                .or_default()
                .push((start(r), end(r), seq));
        }
    }
    for v in carriers.values_mut() {
        v.sort_unstable();
    }
    // The shortest carrier whose span holds the whole launch.
    let enclosing = |key: (u32, i64), from: i64, to: i64| -> Option<i64> {
        let v = carriers.get(&key)?;
        let upto = v.partition_point(|c| c.0 <= from);
        v[..upto]
            .iter()
            .rev()
            .take(64)
            .filter(|c| c.1 >= to)
            .min_by_key(|c| c.1 - c.0)
            .map(|c| c.2)
    };
    let mut stage_seq: FxHashMap<(u32, i64, i64), i64> = FxHashMap::default();
    for x in &ev.execs {
        if let (ExecKind::Stage(_), Some(&seq)) = (x.kind, seq_of.get(&x.rec)) {
            stage_seq.entry((x.process, x.nc, x.exec_id)).or_insert(seq);
        }
    }
    // The inferred FIFO reading: per (process, core, model), the k-th
    // runtime call carrying a sequence id and the k-th execution.
    let mut queued: FxHashMap<(u32, i64, i64), Vec<(i64, i64)>> = FxHashMap::default();
    for (&rec, &seq) in &seq_of {
        if let (Some(&(process, nc)), Some(&model)) = (ev.nc_of.get(&rec), ev.model_of.get(&rec)) {
            queued
                .entry((process, nc, model))
                .or_default()
                .push((start(rec as usize), seq));
        }
    }
    let mut runs: FxHashMap<(u32, i64, i64), Vec<(i64, u32)>> = FxHashMap::default();
    for x in &ev.execs {
        if x.kind == ExecKind::Execution {
            for model in [x.model_id, x.model_name as i64] {
                if model != NONE_I64 && model != 0 {
                    runs.entry((x.process, x.nc, model))
                        .or_default()
                        .push((start(x.rec as usize), x.rec));
                }
            }
        }
    }
    let mut fifo: FxHashMap<u32, i64> = FxHashMap::default();
    for (key, mut q) in queued {
        let Some(r) = runs.get_mut(&key) else {
            continue;
        };
        q.sort_unstable();
        r.sort_unstable();
        if q.len() == r.len() {
            for (&(_, seq), &(_, rec)) in q.iter().zip(r.iter()) {
                fifo.insert(rec, seq);
            }
        }
    }
    let mut out = Vec::new();
    for x in &ev.execs {
        if x.kind != ExecKind::Execution || seq_of.contains_key(&x.rec) {
            continue;
        }
        let launch = corr_of[x.rec as usize].map(|c| rec_of_id[(c.get() - 1) as usize]);
        let found = launch
            .and_then(|l| seq_of.get(&l).map(|&s| (s, "its launch")))
            .or_else(|| {
                stage_seq
                    .get(&(x.process, x.nc, x.exec_id))
                    .map(|&s| (s, "a runtime stage of its exec_id"))
            })
            .or_else(|| {
                let op = rec_of_id[(ext_of[x.rec as usize]?.get() - 1) as usize];
                framework_seq
                    .get(&op)
                    .map(|&s| (s, "its framework op's nrt_sequence_id"))
            })
            .or_else(|| {
                let l = launch?;
                let key = *ev.nc_of.get(&l)?;
                let (from, to) = (start(l as usize), end(l as usize));
                enclosing(key, from, to).map(|s| (s, "the runtime call enclosing its launch"))
            })
            .or_else(|| {
                fifo.get(&x.rec).map(|&s| {
                    (
                        s,
                        "the k-th scheduled execution of its model on its core (inferred)",
                    )
                })
            });
        if let Some((seq, how)) = found {
            out.push((x.rec, seq, how));
        }
    }
    out
}

/// Hardware executions (and the runtime stages of their execution) still
/// without an op take the framework op whose `nrt_sequence_id` is their
/// execution's sequence id. Returns the hardware events joined so.
fn ops_by_sequence(
    ev: &Events,
    sequence_ids: &[(u32, i64, &'static str)],
    id_of: &[i64],
    ext_of: &mut [Id],
    marks: &mut Vec<(u32, String)>,
) -> u64 {
    let op_of = framework_ops(ev);
    let mut made = 0;
    for &(rec, seq, how) in sequence_ids {
        let r = rec as usize;
        if ext_of[r].is_some() {
            continue;
        }
        if let Some(&op) = op_of.get(&seq) {
            ext_of[r] = nz(id_of[op as usize]);
            marks.push((rec, format!("sequence id {seq} ({how})")));
            made += 1;
        }
    }
    made
}

/// Every event of one execution — the runtime stages and hardware events
/// of one (process, logical core, `exec_id`) — takes the op any of them
/// reached (by flow, sequence id or launch), where it has none.
fn spread_in_executions(ev: &Events, ext_of: &mut [Id]) {
    let mut op_of: FxHashMap<(u32, i64, i64), NonZeroI64> = FxHashMap::default();
    for x in &ev.execs {
        if x.kind == ExecKind::Other {
            continue;
        }
        if let Some(op) = ext_of[x.rec as usize] {
            op_of.entry((x.process, x.nc, x.exec_id)).or_insert(op);
        }
    }
    for x in &ev.execs {
        if x.kind == ExecKind::Other {
            continue;
        }
        if let Some(&op) = op_of.get(&(x.process, x.nc, x.exec_id)) {
            ext_of[x.rec as usize].get_or_insert(op);
        }
    }
}

/// Framework records by the `nrt_sequence_id` they carry (the first of
/// each).
fn framework_ops(ev: &Events) -> FxHashMap<i64, u32> {
    let mut op_of: FxHashMap<i64, u32> = FxHashMap::default();
    for &(seq, rec) in &ev.seqs {
        if ev.recs[rec as usize].layer == Layer::Framework {
            op_of.entry(seq).or_insert(rec);
        }
    }
    op_of
}

//! Several traces as one model: the ranks of a distributed run stacked in
//! one timeline, each rank's processes labelled with it and every clock
//! put on the epoch clock (the way Perfetto shows merged traces, without
//! rewriting the files first).
//!
//! Each part is a whole imported model; stacking only renumbers what
//! points into the model (strings, processes, tracks, slices) and shifts
//! time, so every analysis that takes a [`Trace`] runs on the stack as
//! it does on one rank. Parts must keep their args in the model
//! (`ImportOptions::args_in_source == false`): a stack has no one source
//! file to read them back from.

use crate::error::Diagnostics;
use crate::model::{LaneId, Process, ProcessIdx, StrId, Trace, Track, TrackIdx, NO_SLICE, NO_STR};

/// One trace to stack and the label its processes get (`rank 3`).
pub struct Part {
    pub label: String,
    pub trace: Trace,
}

/// Processes per part at most; a part's processes sort within its block.
const PROCESS_BLOCK: i64 = 1 << 20;

/// Stacks `parts` in their order into one model whose time is epoch
/// nanoseconds − `base_ns` (each part's `clock_offset_ns` puts its own
/// times on the epoch clock). Processes are labelled `<label> · <its
/// label>` and sort part by part: the timeline shows every part's host
/// lanes, in part order, then every part's device lanes.
pub fn stack(parts: Vec<Part>, base_ns: i64) -> Trace {
    let mut out = Trace {
        clock_offset_ns: base_ns,
        ..Trace::default()
    };
    let mut clocks = Vec::new();
    for (pos, part) in parts.into_iter().enumerate() {
        let label = part.label;
        let t = part.trace;
        let shift = t.clock_offset_ns - base_ns;
        clocks.push(format!("{label} {:+.3} ms", shift as f64 / 1e6));
        let strings: Vec<StrId> = (0..t.strings.len() as u32)
            .map(|k| out.strings.intern(t.strings.get(StrId(k))))
            .collect();
        let s = |id: StrId| {
            if id == NO_STR {
                NO_STR
            } else {
                strings[id.0 as usize]
            }
        };
        let opt = |id: Option<StrId>| id.map(s);
        let lane = |id: LaneId| match id {
            LaneId::Str(x) => LaneId::Str(s(x)),
            int => int,
        };
        let process0 = out.processes.len() as u32;
        let track0 = out.tracks.len() as u32;
        let slice0 = out.slices.len() as u32;
        let at = |k: u32| if k == NO_SLICE { NO_SLICE } else { k + slice0 };
        let arena0 = out.args_arena.len() as u64;
        let order0 = out.slices.file_order.iter().max().map_or(0, |m| m + 1);

        // Processes in the part's own order, then numbered within its block.
        let mut own: Vec<usize> = (0..t.processes.len()).collect();
        crate::sort::by_key(&mut own, &|&p| {
            (t.processes[p].sort_index.unwrap_or(i64::MAX), p)
        });
        let mut rank_in_part = vec![0i64; t.processes.len()];
        for (j, &p) in own.iter().enumerate() {
            rank_in_part[p] = j as i64;
        }
        for (p, pr) in t.processes.iter().enumerate() {
            let named = format!("{label} · {}", t.process_label(p));
            out.processes.push(Process {
                pid: lane(pr.pid),
                name: opt(pr.name),
                labels: Some(out.strings.intern(&named)),
                sort_index: Some(
                    pos as i64 * PROCESS_BLOCK + rank_in_part[p].min(PROCESS_BLOCK - 1),
                ),
            });
        }
        for tr in &t.tracks {
            out.tracks.push(Track {
                process: ProcessIdx(tr.process.0 + process0),
                tid: lane(tr.tid),
                kind: tr.kind,
                name: opt(tr.name),
                sort_index: tr.sort_index,
                slices: tr.slices.start + slice0..tr.slices.end + slice0,
                max_depth: tr.max_depth,
                nesting: tr.nesting,
            });
        }

        let a = &t.slices;
        let o = &mut out.slices;
        o.track
            .extend(a.track.iter().map(|k| TrackIdx(k.0 + track0)));
        o.start_ns.extend(a.start_ns.iter().map(|v| v + shift));
        o.dur_ns.extend_from_slice(&a.dur_ns);
        o.name.extend(a.name.iter().map(|&x| s(x)));
        o.cat.extend(a.cat.iter().map(|&x| s(x)));
        o.category.extend_from_slice(&a.category);
        o.depth.extend_from_slice(&a.depth);
        o.parent.extend(a.parent.iter().map(|&k| at(k)));
        o.external_id.extend_mapped(&a.external_id, |v| v);
        o.correlation.extend_mapped(&a.correlation, |v| v);
        o.stream.extend_mapped(&a.stream, |v| v);
        o.input_dims.extend_mapped(&a.input_dims, s);
        o.sequence_nr.extend_mapped(&a.sequence_nr, |v| v);
        o.device.extend_mapped(&a.device, |v| v);
        o.fwd_thread.extend_mapped(&a.fwd_thread, |v| v);
        o.input_types.extend_mapped(&a.input_types, s);
        o.concrete_inputs.extend_mapped(&a.concrete_inputs, s);
        // An empty range (no args) stays the default.
        o.args_range.extend_mapped(&a.args_range, |(off, len)| {
            (if len == 0 { off } else { off + arena0 }, len)
        });
        // No one file holds a stack's events.
        o.source.extend(std::iter::repeat_n((0, 0), a.len()));
        o.file_order.extend(a.file_order.iter().map(|k| k + order0));

        let i = &t.instants;
        let oi = &mut out.instants;
        oi.track
            .extend(i.track.iter().map(|k| TrackIdx(k.0 + track0)));
        oi.ts_ns.extend(i.ts_ns.iter().map(|v| v + shift));
        oi.name.extend(i.name.iter().map(|&x| s(x)));
        oi.cat.extend(i.cat.iter().map(|&x| s(x)));
        oi.args_range
            .extend(i.args_range.iter().map(|&(off, len)| (off + arena0, len)));
        oi.source.extend(std::iter::repeat_n((0, 0), i.ts_ns.len()));

        let c = &t.counters;
        let oc = &mut out.counters;
        oc.process
            .extend(c.process.iter().map(|p| ProcessIdx(p.0 + process0)));
        oc.series.extend(c.series.iter().map(|&x| s(x)));
        oc.ts_ns.extend(c.ts_ns.iter().map(|v| v + shift));
        oc.value.extend_from_slice(&c.value);

        let f = &t.flows;
        let of = &mut out.flows;
        of.cat.extend(f.cat.iter().map(|&x| s(x)));
        // Flow ids are the part's own: kept apart by the part's position.
        of.id
            .extend(f.id.iter().map(|&id| id ^ ((pos as u64) << 48)));
        of.from.extend(f.from.iter().map(|&k| at(k)));
        of.to.extend(f.to.iter().map(|&k| at(k)));

        let l = &t.links;
        let ol = &mut out.links;
        ol.launch.extend(l.launch.iter().map(|&k| at(k)));
        ol.op.extend(l.op.iter().map(|&k| at(k)));
        ol.state.extend_from_slice(&l.state);

        out.args_arena.extend_from_slice(&t.args_arena);
        out.packed_args
            .absorb(t.packed_args, |p| ProcessIdx(p.0 + process0));
        if let Some(x) = t.xla {
            merge_xla(out.xla.get_or_insert_with(Default::default), *x);
        }

        add_diagnostics(&mut out.diagnostics, &t.diagnostics, &label);
    }
    let n = clocks.len();
    out.diagnostics.format = format!(
        "{n} ranks stacked in one timeline ({})",
        out.diagnostics.format
    );
    out.diagnostics.time_unit_decision = format!(
        "each rank's times put on the epoch clock (its baseTimeNanoseconds, or absolute timestamps); shown from the earliest rank's clock: {}",
        clocks.join(", ")
    );
    out
}

/// Several hosts' XPlane tables as one: their modules (a program compiled
/// on every host is the same module), devices and hostnames.
fn merge_xla(into: &mut crate::xla::XlaInfo, x: crate::xla::XlaInfo) {
    for (id, m) in x.modules {
        into.modules.entry(id).or_insert(m);
    }
    into.devices.extend(x.devices);
    into.hostnames.extend(x.hostnames);
    into.undecoded_modules += x.undecoded_modules;
    into.profile_start_ns = match (into.profile_start_ns, x.profile_start_ns) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    into.profile_stop_ns = into.profile_stop_ns.max(x.profile_stop_ns);
}

/// A part's diagnostics added to the stack's: counts summed, each warning's
/// example prefixed with the part's label, formats listed once each.
fn add_diagnostics(od: &mut Diagnostics, d: &Diagnostics, label: &str) {
    for (k, v) in &d.events_by_phase {
        *od.events_by_phase.entry(k.clone()).or_default() += v;
    }
    for (k, v) in &d.events_by_category {
        *od.events_by_category.entry(k.clone()).or_default() += v;
    }
    for w in d.warnings.values() {
        let example = if w.example.is_empty() {
            String::new()
        } else {
            format!("{label}: {}", w.example)
        };
        od.warn_n(w.kind, w.count, example);
    }
    od.links.add(&d.links);
    od.bytes_read += d.bytes_read;
    od.truncated |= d.truncated;
    if od.format.is_empty() {
        od.format = d.format.clone();
    } else if !od.format.contains(&d.format) {
        od.format = format!("{}; {}", od.format, d.format);
    }
}

//! One rank's trace reduced to a [`RankSummary`]: its steps' time
//! breakdown, its collective calls with their arrivals, HTA's own figures
//! beside — small and serialisable, what a worker sends back (the rules
//! are the parent module's).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::analysis::collectives::{self, dtype_bytes};
use crate::analysis::frame::{exact_kernel_type, KernelType, Mode};
use crate::analysis::intervals::{self, Interval};
use crate::analysis::scope::{numbered_steps, step_at, Scope};
use crate::category::Category;
use crate::model::{Trace, NO_SLICE};

/// What a rank's breakdown is measured on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The rank's device work (kernels, copies).
    Device,
    /// The host (no device work in the trace).
    Host,
}

/// One `ProfilerStep#N` of one rank. Times on the epoch clock; the five
/// parts sum to `wall_ns`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepTimes {
    pub step: u64,
    pub start_ns: i64,
    pub wall_ns: i64,
    pub compute_ns: i64,
    pub exposed_comm_ns: i64,
    pub exposed_memcpy_ns: i64,
    pub exposed_other_ns: i64,
    pub idle_ns: i64,
    /// Communication time (union) and the part of it under computation.
    pub comm_ns: i64,
    pub comm_overlapped_ns: i64,
}

/// HTA's whole-trace figures for a rank, in HTA's units and rounding (the
/// fields of `tracelane analyze --hta --format json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HtaRank {
    pub temporal_breakdown: serde_json::Value,
    pub comm_comp_overlap_pct: Option<f64>,
}

/// One collective call of one rank.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CollectiveCall {
    /// Normalised kind: `allreduce`, `allgather`, `broadcast`, …
    pub name: String,
    /// Process group name (`Process Group Name`), `?` where the trace
    /// does not say.
    pub group: String,
    /// `Seq` from the args where the trace has it.
    pub seq: Option<u64>,
    /// A send's or recv's other rank (global), where the trace says.
    #[serde(default)]
    pub peer: Option<i64>,
    /// Buffer size S (bytes) by nccl-tests' definition, where known.
    pub bytes: Option<u64>,
    pub arrival_ns: i64,
    pub end_ns: i64,
    /// The step the call arrived in.
    pub step: Option<u64>,
    /// The model slice (kernel or work range), for the timeline.
    pub slice: u32,
}

/// One rank's trace reduced to what [`super::ranks`] needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankSummary {
    /// Where the trace came from (file name).
    pub source: String,
    pub rank: Option<i64>,
    pub world_size: Option<i64>,
    pub backend: Option<String>,
    /// Added to the trace's timestamps to put them on the epoch clock.
    pub clock_offset_ns: i64,
    pub basis: Basis,
    pub steps: Vec<StepTimes>,
    /// Over the steps (the whole trace without steps).
    pub comm_comp_overlap_pct: Option<f64>,
    pub hta: Option<HtaRank>,
    pub collectives: Vec<CollectiveCall>,
    /// Calls whose kind comes from a name only (no `Collective name`, no
    /// group): matched by order in the group.
    pub collectives_without_metadata: u64,
    /// Collective work tied to no call, by kind: kernels no collective
    /// range launched and whose args do not say, host calls without their
    /// kernels.
    #[serde(default)]
    pub unmatched: BTreeMap<String, u64>,
    pub notes: Vec<String>,
}

/// Collective ops on the calling thread: not compute.
fn is_collective_op(name: &str) -> bool {
    name.starts_with("c10d::")
        || name == "record_param_comms"
        || name.starts_with("c10d_functional::")
        || name.starts_with("_c10d_functional::")
}

impl RankSummary {
    /// Reduces one rank's trace. `source` names it (the file name);
    /// `args` reads a slice's args JSON (collective kernels and the ops
    /// that launched them).
    pub fn of(t: &Trace, source: &str, args: &dyn Fn(usize) -> String) -> RankSummary {
        let dist = t.distributed();
        let s = &t.slices;
        let off = t.clock_offset_ns;
        let mut notes = Vec::new();
        let device_rows: Vec<usize> = (0..s.len())
            .filter(|&i| {
                !t.on_host(i)
                    && matches!(
                        s.category[i],
                        Category::Kernel
                            | Category::Memcpy
                            | Category::Memset
                            | Category::DeviceWindow
                    )
            })
            .collect();
        let basis = if device_rows.is_empty() {
            Basis::Host
        } else {
            Basis::Device
        };
        let group_default = dist
            .as_ref()
            .and_then(|d| match d.process_groups.as_slice() {
                [only] => Some(only.name.clone()),
                _ => None,
            });
        let Kinds {
            comp,
            comm,
            mem,
            other,
            mut collectives,
            without_metadata,
            unmatched,
        } = match basis {
            Basis::Device => device_kinds(t, &device_rows, args, &group_default),
            Basis::Host => {
                let world = dist.as_ref().and_then(|d| d.world_size);
                host_kinds(t, args, &group_default, world, &mut notes)
            }
        };
        let comp = intervals::union(comp);
        let comm = intervals::union(comm);
        let mem = intervals::union(mem);
        let other = intervals::union(other);
        let numbered = numbered_steps(t);
        let steps: Vec<StepTimes> = numbered
            .iter()
            .map(|st| StepTimes {
                step: st.n,
                start_ns: st.start_ns + off,
                ..breakdown(&comp, &comm, &mem, &other, (st.start_ns, st.end_ns))
            })
            .collect();
        for c in collectives.iter_mut() {
            c.step = step_at(&numbered, c.arrival_ns - off);
        }
        // In the order issued (as found).
        let (comm_total, overlapped) = if steps.is_empty() {
            let span = t.time_span_ns().unwrap_or((0, 0));
            let b = breakdown(&comp, &comm, &mem, &other, span);
            (b.comm_ns, b.comm_overlapped_ns)
        } else {
            steps.iter().fold((0, 0), |(a, b), s| {
                (a + s.comm_ns, b + s.comm_overlapped_ns)
            })
        };
        let comm_comp_overlap_pct =
            (comm_total > 0).then(|| 100.0 * overlapped as f64 / comm_total as f64);
        let hta = (basis == Basis::Device)
            .then(|| crate::analysis::device_time::device_time(t, &Scope::Whole, Mode::Hta).ok())
            .flatten()
            .map(|r| {
                let j = r.hta_json(None);
                HtaRank {
                    temporal_breakdown: j["temporal_breakdown"].clone(),
                    comm_comp_overlap_pct: j["comm_comp_overlap_pct"].as_f64(),
                }
            });
        if steps.is_empty() {
            notes.push("no ProfilerStep#N in the trace: no per-step times".into());
        }
        if without_metadata > 0 {
            notes.push(format!(
                "{without_metadata} collective calls carry no Collective name / Process Group Name (neither on a record_param_comms op nor on the kernel): their kind is their op's name, matched by order"
            ));
        }
        RankSummary {
            source: source.to_string(),
            rank: dist.as_ref().and_then(|d| d.rank),
            world_size: dist.as_ref().and_then(|d| d.world_size),
            backend: dist.as_ref().and_then(|d| d.backend.clone()),
            clock_offset_ns: off,
            basis,
            steps,
            comm_comp_overlap_pct,
            hta,
            collectives,
            collectives_without_metadata: without_metadata,
            unmatched,
            notes,
        }
    }
}

/// A rank's busy intervals by kind, on the trace's clock, and its
/// collective calls.
#[derive(Default)]
struct Kinds {
    comp: Vec<Interval>,
    comm: Vec<Interval>,
    mem: Vec<Interval>,
    other: Vec<Interval>,
    collectives: Vec<CollectiveCall>,
    without_metadata: u64,
    unmatched: BTreeMap<String, u64>,
}

/// A rank with device work: its kernels by type, its collectives from the
/// CPU side tied to their kernels.
fn device_kinds(
    t: &Trace,
    device_rows: &[usize],
    args: &dyn Fn(usize) -> String,
    group_default: &Option<String>,
) -> Kinds {
    let s = &t.slices;
    let off = t.clock_offset_ns;
    let mut k = Kinds::default();
    let Kinds {
        comp,
        comm,
        mem,
        other,
        collectives,
        without_metadata,
        unmatched,
    } = &mut k;
    for &i in device_rows {
        let iv = (s.start_ns[i], s.end_ns(i));
        let name = t.slice_name(i);
        match exact_kernel_type(s.category[i], name) {
            KernelType::Computation => comp.push(iv),
            KernelType::Memory => mem.push(iv),
            KernelType::Other => other.push(iv),
            KernelType::Communication => comm.push(iv),
        }
    }
    let found = collectives::device_collectives(t, args);
    *without_metadata = found.without_metadata;
    for (kind, n) in found.unmatched_kernels {
        *unmatched.entry(kind).or_default() += n;
    }
    for (kind, n) in found.without_device_work {
        *unmatched.entry(kind).or_default() += n;
    }
    collectives.extend(
        found
            .calls
            .into_iter()
            .map(|c| call_of(c, group_default, off)),
    );
    k
}

/// A CPU-only rank: top-level ops as compute, collective work as
/// communication, its collectives from the CPU side.
fn host_kinds(
    t: &Trace,
    args: &dyn Fn(usize) -> String,
    group_default: &Option<String>,
    world: Option<i64>,
    notes: &mut Vec<String>,
) -> Kinds {
    let s = &t.slices;
    let off = t.clock_offset_ns;
    let mut k = Kinds::default();
    let mut ops = Vec::new();
    let mut coll_ops = Vec::new();
    for i in 0..s.len() {
        if !t.on_host(i) {
            continue;
        }
        let name = t.slice_name(i);
        if s.category[i] == Category::CpuOp {
            if is_collective_op(name) {
                coll_ops.push((s.start_ns[i], s.end_ns(i)));
            } else if s.parent[i] == NO_SLICE || s.category[s.parent[i] as usize] != Category::CpuOp
            {
                ops.push((s.start_ns[i], s.end_ns(i)));
            }
        }
    }
    let ops = intervals::union(ops);
    let coll_ops = intervals::union(coll_ops);
    k.comp = subtract(&ops, &coll_ops);
    let found =
        collectives::host_collectives(t, args, &|w, kind| host_work_bytes(t, w, kind, world));
    k.comm
        .extend(found.works.iter().map(|&w| (s.start_ns[w], s.end_ns(w))));
    for (kind, n) in found.unmatched_work {
        *k.unmatched.entry(kind).or_default() += n;
    }
    k.collectives.extend(
        found
            .calls
            .into_iter()
            .map(|c| call_of(c, group_default, off)),
    );
    if group_default.is_none() && !k.collectives.is_empty() {
        notes.push("the trace does not say which process group each call belongs to (several groups or none listed): matched by order per kind as group \"?\"".into());
    }
    k
}

/// The slices whose args text [`RankSummary::of`] reads (collective
/// kernels and `record_param_comms` ops), for a caller that keeps args in
/// the file to read them in one pass.
pub fn args_read_by_summary(t: &Trace) -> Vec<usize> {
    let s = &t.slices;
    (0..s.len())
        .filter(|&i| {
            let name = t.slice_name(i);
            (!t.on_host(i)
                && matches!(s.category[i], Category::Kernel | Category::DeviceWindow)
                && exact_kernel_type(s.category[i], name) == KernelType::Communication)
                || name == "record_param_comms"
        })
        .collect()
}

/// A backend work range's buffer from its `Input Dims` / `Input type`
/// (all-gather's output is `world` inputs).
fn host_work_bytes(t: &Trace, i: usize, kind: &str, world: Option<i64>) -> Option<u64> {
    let dims: serde_json::Value = serde_json::from_str(t.str(t.slices.input_dims[i])).ok()?;
    let types: serde_json::Value = serde_json::from_str(t.str(t.slices.input_types[i])).ok()?;
    let first = dims.as_array()?.first()?.as_array()?;
    let elems: u64 = first.iter().map(|d| d.as_u64().unwrap_or(0)).product();
    let elem = dtype_bytes(types.as_array()?.first()?.as_str()?)?;
    let n = if kind == "allgather" {
        elems * world.filter(|&w| w > 0)? as u64
    } else {
        elems
    };
    Some(n * elem)
}

/// A found call as the summary keeps it: on the epoch clock, its group
/// the trace's only process group when its args do not name one.
fn call_of(c: collectives::Call, group_default: &Option<String>, off: i64) -> CollectiveCall {
    CollectiveCall {
        name: c.kind,
        group: c
            .group
            .or_else(|| group_default.clone())
            .unwrap_or_else(|| "?".into()),
        seq: c.seq,
        peer: c.peer,
        bytes: c.bytes,
        arrival_ns: c.start_ns + off,
        end_ns: c.end_ns + off,
        step: None,
        slice: c.slice,
    }
}

/// `x` less `y` (both merged).
fn subtract(x: &[Interval], y: &[Interval]) -> Vec<Interval> {
    let mut out = Vec::new();
    let mut j = 0;
    for &(a, b) in x {
        let mut cur = a;
        while j < y.len() && y[j].1 <= cur {
            j += 1;
        }
        let mut k = j;
        while k < y.len() && y[k].0 < b {
            if y[k].0 > cur {
                out.push((cur, y[k].0));
            }
            cur = cur.max(y[k].1);
            k += 1;
        }
        if cur < b {
            out.push((cur, b));
        }
    }
    out
}

/// The breakdown of a window (merged inputs); times relative to nothing
/// (`start_ns` and `step` are the caller's).
fn breakdown(
    comp: &[Interval],
    comm: &[Interval],
    mem: &[Interval],
    other: &[Interval],
    w: Interval,
) -> StepTimes {
    let comp = intervals::clip(comp, w);
    let comm = intervals::clip(comm, w);
    let mem = intervals::clip(mem, w);
    let other = intervals::clip(other, w);
    let comp_comm = intervals::union([comp.clone(), comm.clone()].concat());
    let comp_comm_mem = intervals::union([comp_comm.clone(), mem.clone()].concat());
    let all = intervals::union([comp_comm_mem.clone(), other.clone()].concat());
    let exposed = |x: &[Interval], under: &[Interval]| {
        intervals::total(x) - intervals::total(&intervals::intersect(x, under))
    };
    let wall = w.1 - w.0;
    StepTimes {
        step: 0,
        start_ns: w.0,
        wall_ns: wall,
        compute_ns: intervals::total(&comp),
        exposed_comm_ns: exposed(&comm, &comp),
        exposed_memcpy_ns: exposed(&mem, &comp_comm),
        exposed_other_ns: exposed(&other, &comp_comm_mem),
        idle_ns: wall - intervals::total(&all),
        comm_ns: intervals::total(&comm),
        comm_overlapped_ns: intervals::total(&intervals::intersect(&comm, &comp)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_breakdown_sums_to_its_wall_time() {
        let b = breakdown(
            &[(0, 40)],
            &[(30, 70)],
            &[(60, 80), (90, 95)],
            &[],
            (0, 100),
        );
        assert_eq!(b.compute_ns, 40);
        assert_eq!(b.exposed_comm_ns, 30);
        assert_eq!(b.exposed_memcpy_ns, 15);
        assert_eq!(b.idle_ns, 15);
        assert_eq!(b.comm_overlapped_ns, 10);
        assert_eq!(
            b.compute_ns + b.exposed_comm_ns + b.exposed_memcpy_ns + b.exposed_other_ns + b.idle_ns,
            b.wall_ns
        );
    }

    #[test]
    fn subtract_removes_the_collective_ops_from_compute() {
        assert_eq!(
            subtract(&[(0, 10), (20, 30)], &[(2, 4), (8, 22)]),
            vec![(0, 2), (4, 8), (22, 30)]
        );
        assert_eq!(subtract(&[(0, 10)], &[]), vec![(0, 10)]);
        assert_eq!(subtract(&[(5, 6)], &[(0, 10)]), Vec::<Interval>::new());
    }
}

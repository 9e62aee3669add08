//! rocprofv3's `memory_allocation` records (`--memory-allocation-trace`,
//! in `--sys-trace`) as the memory each agent holds over time: a counter
//! series `ALLOCATE BYTES` per agent, the running sum rocprofv3's own
//! Perfetto output draws (rocprofiler-sdk `source/lib/output/
//! generatePerfetto.cpp`, its "memory allocation counter track"),
//! reproduced step for step:
//!
//! - an `ALLOCATE` or `VMEM_ALLOCATE` record puts two endpoints on its
//!   agent, at its start and its end, each with its size and address; the
//!   first allocation seen at an address gives that address its agent
//!   and size;
//! - a `FREE` or `VMEM_FREE` record carries no agent or size: it takes
//!   those of the first allocation at its address (a null address or one
//!   never allocated is left out — counted here, logged there), two
//!   endpoints likewise;
//! - endpoints are kept per agent by timestamp, the first at a timestamp
//!   winning (`std::map::emplace`); in time order each endpoint's value
//!   is the previous one's plus its size (an allocation), less it (a
//!   free, when that does not go below zero; else its own size), or the
//!   previous value (the second endpoint of the same record);
//! - every agent's series starts 5 µs before the earliest endpoint of
//!   any agent and ends 5 µs after the latest, at zero.
//!
//! Where allocations overlap in time that sum counts one twice (the
//! second endpoint of an allocation adds its size again when another
//! record's endpoint came between), and a free of a reused address
//! subtracts the first allocation's size. Beside it, a second series,
//! `allocated bytes (live)`: each allocation adds its size when it ends,
//! each free subtracts the size of the allocation live at its address
//! when it ends — what the agent holds.
//!
//! Values are bytes (rocprofv3 shows them in KiB, integer-divided). The
//! records themselves are on no lane: the HIP calls that made them
//! (`hipMalloc`, `hipFree`) are. What rocprofv3 passes over silently —
//! endpoints lost to another at the same timestamp, frees it cannot pair —
//! is counted in the diagnostics.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap as HashMap;
use serde_json::Value;

use crate::model::LaneId;
use crate::warnings;

use super::super::builder::Builder;
use super::process::{Allocation, MemoryCounts, Process};

/// Keeps a record for the running sums (`false`: it has no times —
/// counted by the caller as a bad record). Its operation is told by its
/// name in the process's strings where they give one, else by
/// rocprofiler-sdk's numbering (1, 2: allocate; 3, 4: free).
pub(super) fn keep(v: &Value, p: &mut Process, c: &mut MemoryCounts) -> bool {
    let (Some(start), Some(end)) = (v["start_timestamp"].as_i64(), v["end_timestamp"].as_i64())
    else {
        return false;
    };
    c.records += 1;
    let op = v["operation"].as_u64();
    let named = p
        .kinds
        .get(v["kind"].as_u64().unwrap_or(u64::MAX) as usize)
        .zip(op)
        .and_then(|((_, ops), op)| ops.get(op as usize));
    let alloc = match (named.map(String::as_str), op) {
        (Some(n), _) if n.ends_with("_FREE") => Some(false),
        (Some(n), _) if n.ends_with("ALLOCATE") => Some(true),
        (Some(_), _) => None,
        (None, Some(1 | 2)) => Some(true),
        (None, Some(3 | 4)) => Some(false),
        (None, _) => None,
    };
    let Some(alloc) = alloc else {
        c.other_operations += 1;
        return true;
    };
    p.allocations.push(Allocation {
        alloc,
        agent: v["agent_id"]["handle"].as_u64(),
        address: address(&v["address"]).unwrap_or(0),
        size: v["allocation_size"].as_u64().unwrap_or(0),
        start,
        end,
    });
    true
}

/// An address as rocprofiler-sdk writes it (`"0x00007f…"`), or a number,
/// or `{"handle": n}`.
fn address(v: &Value) -> Option<u64> {
    match v {
        Value::String(s) => {
            let hex = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
            u64::from_str_radix(hex, 16).ok()
        }
        Value::Number(n) => n.as_u64(),
        Value::Object(_) => v["handle"].as_u64(),
        _ => None,
    }
}

/// How far before the first endpoint and after the last each series
/// runs at zero (rocprofv3's `extremes_endpoint_buffer`).
const EDGE_NS: i64 = 5_000;

/// One endpoint: the value it carries (its record's size, then the
/// running sum), its address, whether its record allocates.
#[derive(Clone, Copy)]
struct Endpoint {
    bytes: u64,
    address: u64,
    alloc: bool,
}

/// Both endpoints of a record on `agent`'s map; the second of a
/// timestamp is lost, as `std::map::emplace` loses it (a record that
/// starts and ends at one time has one endpoint: nothing lost).
fn emplace(map: &mut BTreeMap<i64, Endpoint>, times: [i64; 2], e: Endpoint, c: &mut MemoryCounts) {
    let times = if times[0] == times[1] {
        &times[..1]
    } else {
        &times[..]
    };
    for &t in times {
        match map.entry(t) {
            std::collections::btree_map::Entry::Occupied(_) => c.same_time += 1,
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(e);
            }
        }
    }
}

/// Each agent's running sum, by timestamp (agents in handle order).
fn running_sums(allocs: &[Allocation], c: &mut MemoryCounts) -> BTreeMap<u64, BTreeMap<i64, u64>> {
    let mut ends: BTreeMap<u64, BTreeMap<i64, Endpoint>> = BTreeMap::new();
    let mut owner: HashMap<u64, (u64, u64)> = HashMap::default();
    for a in allocs.iter().filter(|a| a.alloc) {
        let Some(agent) = a.agent else {
            c.no_agent += 1;
            continue;
        };
        let e = Endpoint {
            bytes: a.size,
            address: a.address,
            alloc: true,
        };
        emplace(ends.entry(agent).or_default(), [a.start, a.end], e, c);
        owner.entry(a.address).or_insert((agent, a.size));
    }
    for f in allocs.iter().filter(|a| !a.alloc) {
        let Some(&(agent, size)) = owner.get(&f.address) else {
            if f.address == 0 {
                c.null_frees += 1;
            } else {
                c.unpaired_frees += 1;
            }
            continue;
        };
        let e = Endpoint {
            bytes: size,
            address: f.address,
            alloc: false,
        };
        emplace(ends.entry(agent).or_default(), [f.start, f.end], e, c);
    }
    let first = ends.values().filter_map(|m| m.keys().next()).min().copied();
    let last = ends
        .values()
        .filter_map(|m| m.keys().next_back())
        .max()
        .copied();
    let mut out = BTreeMap::new();
    for (agent, map) in ends {
        let mut sums: BTreeMap<i64, u64> = BTreeMap::new();
        let mut prev: Option<Endpoint> = None;
        for (t, mut e) in map {
            if let Some(p) = prev {
                if p.address != e.address || p.alloc != e.alloc {
                    if e.alloc {
                        e.bytes = e.bytes.saturating_add(p.bytes);
                    } else if p.bytes >= e.bytes {
                        e.bytes = p.bytes - e.bytes;
                    }
                } else {
                    e.bytes = p.bytes;
                }
            }
            sums.insert(t, e.bytes);
            prev = Some(e);
        }
        if let (Some(first), Some(last)) = (first, last) {
            sums.entry(first.saturating_sub(EDGE_NS)).or_insert(0);
            sums.entry(last.saturating_add(EDGE_NS)).or_insert(0);
        }
        out.insert(agent, sums);
    }
    out
}

/// Each agent's live bytes, by timestamp: records taken in the order
/// they end (file order among equals), the value at a timestamp the last
/// one's.
fn live_sums(allocs: &[Allocation]) -> BTreeMap<u64, BTreeMap<i64, u64>> {
    let mut order: Vec<usize> = (0..allocs.len()).collect();
    order.sort_by_key(|&k| allocs[k].end);
    let mut live: HashMap<u64, (u64, u64)> = HashMap::default();
    let mut held: HashMap<u64, u64> = HashMap::default();
    let mut out: BTreeMap<u64, BTreeMap<i64, u64>> = BTreeMap::new();
    for a in order.into_iter().map(|k| &allocs[k]) {
        let agent = if a.alloc {
            let Some(agent) = a.agent else { continue };
            // A second allocation at a live address replaces the first.
            if let Some((was, size)) = live.insert(a.address, (agent, a.size)) {
                let w = held.entry(was).or_default();
                *w = w.saturating_sub(size);
                out.entry(was).or_default().insert(a.end, *w);
            }
            let now = held.entry(agent).or_default();
            *now = now.saturating_add(a.size);
            agent
        } else {
            let Some((agent, size)) = live.remove(&a.address) else {
                continue;
            };
            let now = held.entry(agent).or_default();
            *now = now.saturating_sub(size);
            agent
        };
        out.entry(agent).or_default().insert(a.end, held[&agent]);
    }
    out
}

/// The process's allocations as an `ALLOCATE BYTES` series on each
/// agent's process (a GPU's, where its kernels are; a CPU agent's: the
/// host process).
pub(super) fn write(p: &Process, c: &mut MemoryCounts, b: &mut Builder) {
    if p.allocations.is_empty() {
        return;
    }
    let series = [
        (
            b.trace.strings.intern("ALLOCATE BYTES"),
            running_sums(&p.allocations, c),
        ),
        (
            b.trace.strings.intern("allocated bytes (live)"),
            live_sums(&p.allocations),
        ),
    ];
    for (name, by_agent) in series {
        for (agent, sums) in by_agent {
            let lane = match p.agents.get(&agent) {
                Some(a) if a.gpu => super::records::gpu_process(a, b),
                Some(_) => {
                    super::records::host_names(p, b);
                    LaneId::Int(p.pid)
                }
                None => LaneId::Str(b.trace.strings.intern(&format!("agent {agent}"))),
            };
            let process = b.process(lane);
            for (t, bytes) in sums {
                b.counter_sample(process, name, t, bytes as f64);
            }
        }
    }
}

/// What the running sums passed over, in the diagnostics.
pub(super) fn report(c: &MemoryCounts, b: &mut Builder) {
    let said = [
        (c.other_operations, "memory_allocation records of no allocate or free operation"),
        (c.no_agent, "allocations without an agent_id (rocprofv3 stops on one)"),
        (c.null_frees, "frees of a null address (HSA frees them; nothing to subtract)"),
        (c.unpaired_frees, "frees of an address no allocation in the file holds"),
        (
            c.same_time,
            "allocation endpoints at a timestamp another one of their agent already holds (lost, as rocprofv3 loses them)",
        ),
    ];
    for (n, what) in said {
        if n > 0 {
            b.diag.warn_n(
                warnings::ROCPROF_MEMORY_PASSED_OVER,
                n,
                format!("{n} {what}"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(alloc: bool, address: u64, size: u64, start: i64, end: i64) -> Allocation {
        Allocation {
            alloc,
            agent: alloc.then_some(7),
            address,
            size,
            start,
            end,
        }
    }

    #[test]
    fn an_instant_allocation_loses_no_endpoint() {
        let mut c = MemoryCounts::default();
        let sums = running_sums(
            &[
                record(true, 0x10, 100, 50, 50),
                record(false, 0x10, 0, 80, 90),
            ],
            &mut c,
        );
        assert_eq!(c.same_time, 0);
        let want: Vec<(i64, u64)> = vec![(-4950, 0), (50, 100), (80, 0), (90, 0), (5090, 0)];
        assert_eq!(
            sums[&7].iter().map(|(&t, &v)| (t, v)).collect::<Vec<_>>(),
            want
        );
    }

    #[test]
    fn a_free_of_a_reused_address_takes_the_live_allocation_in_the_live_sum() {
        // rocprofv3's sum pairs the second free with the first allocation
        // (100 bytes); what the agent holds pairs it with the live one.
        let recs = [
            record(true, 0x10, 100, 10, 20),
            record(false, 0x10, 0, 30, 40),
            record(true, 0x10, 30, 50, 60),
            record(false, 0x10, 0, 70, 80),
        ];
        let live = live_sums(&recs);
        let want: Vec<(i64, u64)> = vec![(20, 100), (40, 0), (60, 30), (80, 0)];
        assert_eq!(
            live[&7].iter().map(|(&t, &v)| (t, v)).collect::<Vec<_>>(),
            want
        );
        let mut c = MemoryCounts::default();
        let rocprof = running_sums(&recs, &mut c);
        // 30 − 100 would go below zero: the free's endpoint keeps its own
        // size, as generatePerfetto.cpp's sum does.
        assert_eq!(rocprof[&7][&70], 100);
    }
}

//! One rank's collective calls, found from the CPU side and tied to the
//! device work they launched.
//!
//! Rules:
//! - **A call** is the outermost collective range on a host thread: a
//!   `c10d::*` op (`c10d::allreduce_`, `c10d::alltoall_base_`, …), a
//!   functional collective (`_c10d_functional::*`), `record_param_comms`,
//!   or a backend's range (`nccl:all_to_all`, `gloo:*`, …). Waits
//!   (`c10d::wait`, `wait_tensor`) are not calls.
//! - **What it is** (in this order): the `Collective name` of a
//!   `record_param_comms` inside the call (PyTorch's own record of what it
//!   issued, with `Process Group Name`, `Seq`, message sizes, `dtype` and,
//!   for send / recv, `Dst Rank` / `Src Rank`), else the call's own name
//!   (`c10d::alltoall_base_` → all-to-all), else the args of its first
//!   kernel. A kernel's name is never what decides the kind of a call
//!   that has a CPU side: NCCL runs all-to-all (and, at scale, other
//!   collectives) as `ncclKernel_SendRecv_*`.
//! - **Its device work**: the collective kernels (NCCL / RCCL / device
//!   collectives) launched by a runtime call inside it, through the
//!   import's launch links. The call *arrives* when its first kernel
//!   starts and ends when its last one ends.
//! - **Kernels no call launched** (no launch link, or launched outside any
//!   collective range — a CUDA graph replay) are calls of their own when
//!   their args carry the metadata (`Collective name`, newer Kineto puts
//!   it on the kernel), else counted per the kind their name says and not
//!   matched: a `SendRecv` kernel alone may be an all-to-all or a send.
//! - **Calls without device work** on a rank that has some (a capture
//!   that ended before the kernel, a collective on another device) are
//!   counted per kind.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::frame::{exact_kernel_type, KernelType};
use crate::category::Category;
use crate::model::{Trace, NO_SLICE};

/// Names a backend's work ranges start with (`gloo:all_reduce`).
pub const WORK_PREFIXES: &[&str] = &["gloo:", "nccl:", "rccl:", "mpi:", "ucc:", "xccl:"];

/// Function-collective namespaces (`_c10d_functional::all_reduce`).
const OP_PREFIXES: &[&str] = &["c10d::", "_c10d_functional::", "c10d_functional::"];

/// `all_reduce`, `AllReduce`, `allreduce_coalesced`, `_allgather_base`,
/// `alltoall_base`, `all_to_allv`, `recv_any_source` → `allreduce`,
/// `allgather`, `alltoall`, `recv`, … .
pub fn normalise_collective(name: &str) -> String {
    let lower: String = name
        .chars()
        .filter(|c| *c != '_' && *c != ' ')
        .flat_map(|c| c.to_lowercase())
        .collect();
    for kind in [
        "allreduce",
        "allgather",
        "reducescatter",
        "alltoall",
        "broadcast",
        "reduce",
        "sendrecv",
        "send",
        "recv",
        "barrier",
        "gather",
        "scatter",
    ] {
        if lower.starts_with(kind) {
            return kind.to_string();
        }
    }
    lower
}

/// The collective kind in a kernel name (`ncclDevKernel_AllReduce_Sum_f32…`,
/// `ncclKernel_Broadcast_RING_LL…`).
pub fn kind_from_kernel(name: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    let kinds = [
        ("allreduce", "allreduce"),
        ("allgather", "allgather"),
        ("reducescatter", "reducescatter"),
        ("alltoall", "alltoall"),
        ("sendrecv", "sendrecv"),
        ("broadcast", "broadcast"),
        ("_reduce", "reduce"),
    ];
    kinds
        .iter()
        .find(|(k, _)| lower.contains(k))
        .map(|(_, v)| v.to_string())
}

/// Send, recv and their fused form: calls between two ranks.
pub fn is_point_to_point(kind: &str) -> bool {
    matches!(kind, "send" | "recv" | "sendrecv")
}

/// nccl-tests' bus-bandwidth factor for `n` ranks (`doc/PERFORMANCE.md`):
/// all-reduce 2(n−1)/n; all-gather, reduce-scatter and all-to-all
/// (n−1)/n; broadcast, reduce and send/recv 1.
pub fn bus_factor(kind: &str, n: usize) -> f64 {
    let n = n.max(1) as f64;
    match kind {
        "allreduce" => 2.0 * (n - 1.0) / n,
        "allgather" | "reducescatter" | "alltoall" => (n - 1.0) / n,
        _ => 1.0,
    }
}

/// Bytes per element of a `dtype` arg / an input type.
pub fn dtype_bytes(dtype: &str) -> Option<u64> {
    let d = dtype.to_ascii_lowercase();
    Some(match d.as_str() {
        "float" | "float32" | "int" | "int32" | "uint32" => 4,
        "double" | "float64" | "long" | "int64" | "long int" | "uint64" => 8,
        "half" | "float16" | "bfloat16" | "short" | "int16" | "c10::half" | "c10::bfloat16" => 2,
        "byte" | "char" | "bool" | "int8" | "uint8" | "signed char" | "unsigned char" => 1,
        _ if d.contains("float8") => 1,
        _ if d.contains("complexfloat") => 8,
        _ if d.contains("complexdouble") => 16,
        _ => return None,
    })
}

/// S, the buffer size nccl-tests' bandwidths are defined on (all-gather:
/// the output; reduce-scatter: the input; the rest: the input).
pub fn buffer_bytes(
    kind: &str,
    in_nelems: Option<u64>,
    out_nelems: Option<u64>,
    elem: Option<u64>,
) -> Option<u64> {
    let elem = elem?;
    let n = match kind {
        "allgather" => out_nelems.or(in_nelems)?,
        "reducescatter" => in_nelems.or(out_nelems)?,
        _ => in_nelems.or(out_nelems)?,
    };
    Some(n * elem)
}

fn arg_u64(v: &serde_json::Value, key: &str) -> Option<u64> {
    match v.get(key)? {
        serde_json::Value::Number(n) => n.as_u64().or_else(|| n.as_f64().map(|f| f as u64)),
        serde_json::Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn arg_i64(v: &serde_json::Value, key: &str) -> Option<i64> {
    match v.get(key)? {
        serde_json::Value::Number(n) => n.as_i64(),
        serde_json::Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn arg_str(v: &serde_json::Value, key: &str) -> Option<String> {
    match v.get(key)? {
        serde_json::Value::String(s) => Some(s.trim_matches('"').to_string()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// `Process Group Ranks`: a list, or its text (`"[0, 1]"`).
fn group_ranks(v: &serde_json::Value) -> Option<Vec<i64>> {
    let list = match v.get("Process Group Ranks")? {
        serde_json::Value::String(s) => serde_json::from_str::<serde_json::Value>(s).ok()?,
        other => other.clone(),
    };
    list.as_array()?.iter().map(|x| x.as_i64()).collect()
}

/// What a `record_param_comms` op's (or a kernel's) args say about a
/// collective (the keys of PyTorch's `saveNcclMeta`; HTA 0.6 reads `Seq`
/// as `seq_num`).
#[derive(Clone, Debug, PartialEq)]
pub struct CommsMeta {
    pub kind: String,
    pub group: Option<String>,
    pub seq: Option<u64>,
    pub bytes: Option<u64>,
    /// The other rank of a send or recv (global rank): `Dst Rank` /
    /// `Src Rank`, else `Rank` (the group's) through `Process Group Ranks`.
    pub peer: Option<i64>,
}

/// A collective's metadata from args that carry a `Collective name`.
pub fn comms_meta(args: &serde_json::Value) -> Option<CommsMeta> {
    let name = arg_str(args, "Collective name")?;
    let kind = normalise_collective(&name);
    let elem = arg_str(args, "dtype").and_then(|d| dtype_bytes(&d));
    let bytes = buffer_bytes(
        &kind,
        arg_u64(args, "In msg nelems"),
        arg_u64(args, "Out msg nelems"),
        elem,
    );
    let peer = match kind.as_str() {
        "send" => arg_i64(args, "Dst Rank"),
        "recv" => arg_i64(args, "Src Rank"),
        _ => None,
    }
    .or_else(|| {
        if !is_point_to_point(&kind) {
            return None;
        }
        let local = arg_i64(args, "Rank")?;
        match group_ranks(args) {
            Some(r) => r.get(usize::try_from(local).ok()?).copied(),
            None => Some(local),
        }
    });
    Some(CommsMeta {
        kind,
        group: arg_str(args, "Process Group Name").filter(|g| !g.is_empty()),
        seq: arg_u64(args, "Seq"),
        bytes,
        peer,
    })
}

/// The kind a collective range's name says: `Some("")` for
/// `record_param_comms` (its args say), `None` for what is not one.
pub fn range_kind(t: &Trace, i: usize) -> Option<String> {
    let name = t.slice_name(i);
    match t.slices.category[i] {
        Category::CpuOp => {
            if name == "record_param_comms" {
                return Some(String::new());
            }
            let rest = OP_PREFIXES.iter().find_map(|p| name.strip_prefix(p))?;
            (!rest.contains("wait")).then(|| normalise_collective(rest))
        }
        Category::UserAnnotation => match WORK_PREFIXES.iter().find_map(|p| name.strip_prefix(p)) {
            Some(rest) => Some(normalise_collective(rest)),
            None => library_call_kind(name),
        },
        _ => None,
    }
}

/// NCCL / RCCL API entry points that issue a collective or a transfer
/// (`ncclAllReduce`, `ncclBcast`, `ncclSend`, … — `nccl.h`), as a tracer
/// of the library's API records them (rocprofv3's `rccl_api`); its
/// other calls (`ncclGroupStart`, `ncclCommInitRank`, …) are not
/// collectives.
fn library_call_kind(name: &str) -> Option<String> {
    let verb = name.strip_prefix("nccl")?;
    let kind = match verb {
        "AllReduce" | "Broadcast" | "Reduce" | "AllGather" | "ReduceScatter" | "AllToAll"
        | "AllToAllv" | "Send" | "Recv" | "Gather" | "Scatter" => normalise_collective(verb),
        "Bcast" => "broadcast".to_string(),
        _ => return None,
    };
    Some(kind)
}

/// How a call's kind and group were found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    /// A collective range on the host (and its `record_param_comms`).
    CpuRange,
    /// The kernel's own args (no CPU side linked).
    KernelArgs,
}

/// One collective call of a rank.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub kind: String,
    pub group: Option<String>,
    pub seq: Option<u64>,
    pub peer: Option<i64>,
    pub bytes: Option<u64>,
    /// When the rank arrived and when its part ended (the trace's clock):
    /// with device work its first kernel's start and last kernel's end;
    /// on the host the call's start and its last work range's end.
    pub start_ns: i64,
    pub end_ns: i64,
    /// The first kernel, or the host call's range.
    pub slice: u32,
    /// The outermost collective range on the host ([`NO_SLICE`] for a
    /// kernel matched by its own args).
    pub range: u32,
    /// Its kernels, or its backend work ranges.
    pub parts: u32,
    pub by: MatchedBy,
}

/// A rank's device collectives.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceCollectives {
    /// In the order issued.
    pub calls: Vec<Call>,
    /// Collective kernels tied to no call, by the kind their name says.
    pub unmatched_kernels: BTreeMap<String, u64>,
    /// Host calls whose device work is not in the trace, by kind.
    pub without_device_work: BTreeMap<String, u64>,
    /// Calls whose kind comes from a name only (no `Collective name`, no
    /// group): matched by order.
    pub without_metadata: u64,
}

/// The outermost collective range at or above `i` ([`NO_SLICE`] if none).
fn outermost_range(t: &Trace, i: u32, kinds: &mut HashMap<u32, Option<String>>) -> u32 {
    let mut found = NO_SLICE;
    let mut p = i;
    while p != NO_SLICE {
        let is_range = kinds
            .entry(p)
            .or_insert_with(|| range_kind(t, p as usize))
            .is_some();
        if is_range {
            found = p;
        }
        p = t.slices.parent[p as usize];
    }
    found
}

/// What one host call gathered.
#[derive(Default)]
struct Gathered {
    meta: Option<CommsMeta>,
    /// The kind the shallowest range with a telling name says
    /// (`c10d::alltoall_base_` over `nccl:all_to_all`), with its depth.
    named: Option<(u16, String)>,
    kernels: Vec<usize>,
}

/// Every outermost collective range on the host and what the ranges
/// inside it say (their names' kind, the first `record_param_comms` with
/// a `Collective name`); `keep(top)` decides which outermost ranges are
/// calls, the others are returned apart (backend work ranges on the host).
fn gather_ranges(
    t: &Trace,
    args: &dyn Fn(usize) -> String,
    kinds: &mut HashMap<u32, Option<String>>,
    keep: impl Fn(u32) -> bool,
) -> (BTreeMap<u32, Gathered>, Vec<usize>) {
    let s = &t.slices;
    let mut calls: BTreeMap<u32, Gathered> = BTreeMap::new();
    let mut apart = Vec::new();
    let mut rpc: Vec<usize> = Vec::new();
    for i in 0..s.len() {
        if !t.on_host(i) || range_kind(t, i).is_none() {
            continue;
        }
        let top = outermost_range(t, i as u32, kinds);
        if !keep(top) {
            if top == i as u32 {
                apart.push(i);
            }
            continue;
        }
        let g = calls.entry(top).or_default();
        match kinds.get(&(i as u32)) {
            Some(Some(k)) if !k.is_empty() => {
                if g.named.as_ref().is_none_or(|(d, _)| s.depth[i] < *d) {
                    g.named = Some((s.depth[i], k.clone()));
                }
            }
            _ => rpc.push(i),
        }
    }
    crate::sort::by_key(&mut rpc, &|&i| (s.start_ns[i], s.depth[i]));
    for i in rpc {
        let top = outermost_range(t, i as u32, kinds);
        let g = calls.entry(top).or_default();
        if g.meta.is_none() {
            g.meta = serde_json::from_str::<serde_json::Value>(&args(i))
                .ok()
                .and_then(|a| comms_meta(&a));
        }
    }
    (calls, apart)
}

/// A rank's collective calls with device work; `args` reads a slice's args
/// JSON (kernels and `record_param_comms` ops).
pub fn device_collectives(t: &Trace, args: &dyn Fn(usize) -> String) -> DeviceCollectives {
    let s = &t.slices;
    let mut kinds: HashMap<u32, Option<String>> = HashMap::new();
    let (mut calls, _) = gather_ranges(t, args, &mut kinds, |_| true);
    let mut out = DeviceCollectives::default();
    let parse = |i: usize| serde_json::from_str::<serde_json::Value>(&args(i)).ok();
    for i in 0..s.len() {
        if t.on_host(i)
            || s.category[i] != Category::Kernel
            || exact_kernel_type(s.category[i], t.slice_name(i)) != KernelType::Communication
        {
            continue;
        }
        let launch = t.links.launch[i];
        let top = if launch == NO_SLICE {
            NO_SLICE
        } else {
            outermost_range(t, launch, &mut kinds)
        };
        if top != NO_SLICE {
            calls.entry(top).or_default().kernels.push(i);
            continue;
        }
        match parse(i).and_then(|a| comms_meta(&a)) {
            Some(m) => out.calls.push(Call {
                kind: m.kind,
                group: m.group,
                seq: m.seq,
                peer: m.peer,
                bytes: m.bytes,
                start_ns: s.start_ns[i],
                end_ns: s.end_ns(i),
                slice: i as u32,
                range: NO_SLICE,
                parts: 1,
                by: MatchedBy::KernelArgs,
            }),
            None => {
                let kind = kind_from_kernel(t.slice_name(i)).unwrap_or_else(|| "other".into());
                *out.unmatched_kernels.entry(kind).or_default() += 1;
            }
        }
    }
    for (range, g) in calls {
        let name_kind = g.named.map_or_else(|| "unknown".to_string(), |(_, k)| k);
        let Some(&first) = g.kernels.iter().min_by_key(|&&k| (s.start_ns[k], k)) else {
            let kind = g.meta.map(|m| m.kind).unwrap_or(name_kind);
            *out.without_device_work.entry(kind).or_default() += 1;
            continue;
        };
        let meta = g.meta.or_else(|| parse(first).and_then(|a| comms_meta(&a)));
        let end = g.kernels.iter().map(|&k| s.end_ns(k)).max().unwrap_or(0);
        let call = match meta {
            Some(m) => Call {
                kind: m.kind,
                group: m.group,
                seq: m.seq,
                peer: m.peer,
                bytes: m.bytes,
                start_ns: s.start_ns[first],
                end_ns: end,
                slice: first as u32,
                range,
                parts: g.kernels.len() as u32,
                by: MatchedBy::CpuRange,
            },
            None => {
                out.without_metadata += 1;
                Call {
                    kind: name_kind,
                    group: None,
                    seq: None,
                    peer: None,
                    bytes: None,
                    start_ns: s.start_ns[first],
                    end_ns: end,
                    slice: first as u32,
                    range,
                    parts: g.kernels.len() as u32,
                    by: MatchedBy::CpuRange,
                }
            }
        };
        out.calls.push(call);
    }
    // In the order issued: a host call's start (streams may run calls of
    // different groups out of that order); a kernel alone, its start.
    crate::sort::by_key(&mut out.calls, &|c| {
        let issued = if c.range == NO_SLICE {
            c.start_ns
        } else {
            s.start_ns[c.range as usize]
        };
        (issued, c.start_ns, c.slice)
    });
    out
}

/// A rank's host collectives.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostCollectives {
    /// In the order issued.
    pub calls: Vec<Call>,
    /// Backend work ranges issued before any call, by kind.
    pub unmatched_work: BTreeMap<String, u64>,
    /// The backend work ranges (`gloo:*` …) outside any call.
    pub works: Vec<usize>,
}

/// The peer of `c10d::send` / `c10d::recv_` from its scalar inputs
/// (`tensors, process_group, dst|src, tag`): the group's rank.
fn peer_from_inputs(t: &Trace, i: usize) -> Option<i64> {
    let v: serde_json::Value = serde_json::from_str(t.str(t.slices.concrete_inputs[i])).ok()?;
    v.as_array()?.get(2)?.as_str()?.trim().parse().ok()
}

/// A rank's collective calls on the host: every outermost `c10d::*` /
/// `record_param_comms` range is a call (its kind from its
/// `record_param_comms`, else its name — gloo runs a reduce-scatter as
/// all-reduces, so the work ranges' names do not say what was issued);
/// each backend work range belongs to the last call issued before it
/// starts (the backend's queue runs in issue order). `work_bytes` gives a
/// work range's buffer for a kind.
pub fn host_collectives(
    t: &Trace,
    args: &dyn Fn(usize) -> String,
    work_bytes: &dyn Fn(usize, &str) -> Option<u64>,
) -> HostCollectives {
    let s = &t.slices;
    let mut kinds: HashMap<u32, Option<String>> = HashMap::new();
    let (mut calls, works) = gather_ranges(t, args, &mut kinds, |top| {
        s.category[top as usize] != Category::UserAnnotation
    });
    let mut out = HostCollectives {
        works,
        ..Default::default()
    };
    let mut order: Vec<u32> = calls.keys().copied().collect();
    crate::sort::by_key(&mut order, &|&c| (s.start_ns[c as usize], c));
    crate::sort::by_key(&mut out.works, &|&w| (s.start_ns[w], w));
    let mut works_of: HashMap<u32, Vec<usize>> = HashMap::new();
    for &w in &out.works {
        let k = order.partition_point(|&c| s.start_ns[c as usize] <= s.start_ns[w]);
        match k.checked_sub(1) {
            Some(k) => works_of.entry(order[k]).or_default().push(w),
            None => {
                let name = t.slice_name(w);
                let kind = normalise_collective(name.split_once(':').map_or(name, |x| x.1));
                *out.unmatched_work.entry(kind).or_default() += 1;
            }
        }
    }
    for c in order {
        let g = calls.remove(&c).unwrap_or_default();
        let works = works_of.remove(&c).unwrap_or_default();
        let i = c as usize;
        let named = g.named.map(|(_, k)| k);
        let (kind, group, seq, mut peer, mut bytes) = match g.meta {
            Some(m) => (m.kind, m.group, m.seq, m.peer, m.bytes),
            None => (
                named.unwrap_or_else(|| "unknown".into()),
                None,
                None,
                None,
                None,
            ),
        };
        if peer.is_none() && is_point_to_point(&kind) {
            peer = peer_from_inputs(t, i);
        }
        if bytes.is_none() {
            bytes = works.first().and_then(|&w| {
                let name = t.slice_name(w);
                let work_kind = normalise_collective(name.split_once(':').map_or(name, |x| x.1));
                (work_kind == kind).then(|| work_bytes(w, &kind)).flatten()
            });
        }
        let end = works
            .iter()
            .map(|&w| s.end_ns(w))
            .chain(std::iter::once(s.end_ns(i)))
            .max()
            .unwrap_or(s.end_ns(i));
        out.calls.push(Call {
            kind,
            group,
            seq,
            peer,
            bytes,
            start_ns: s.start_ns[i],
            end_ns: end,
            slice: c,
            range: c,
            parts: works.len() as u32,
            by: MatchedBy::CpuRange,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collective_names_normalise_across_backends() {
        assert_eq!(normalise_collective("all_reduce"), "allreduce");
        assert_eq!(normalise_collective("allreduce_coalesced"), "allreduce");
        assert_eq!(normalise_collective("_allgather_base"), "allgather");
        assert_eq!(
            normalise_collective("allgather_into_tensor_coalesced_"),
            "allgather"
        );
        assert_eq!(
            normalise_collective("reduce_scatter_tensor"),
            "reducescatter"
        );
        assert_eq!(normalise_collective("alltoall_base_"), "alltoall");
        assert_eq!(normalise_collective("all_to_allv"), "alltoall");
        assert_eq!(normalise_collective("recv_any_source_"), "recv");
        assert_eq!(normalise_collective("broadcast"), "broadcast");
        assert_eq!(
            kind_from_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)").as_deref(),
            Some("allreduce")
        );
        assert_eq!(
            kind_from_kernel("ncclDevKernel_Broadcast_RING_LL").as_deref(),
            Some("broadcast")
        );
    }

    #[test]
    fn bus_factors_are_nccl_tests() {
        assert_eq!(bus_factor("allreduce", 4), 1.5);
        assert_eq!(bus_factor("allgather", 4), 0.75);
        assert_eq!(bus_factor("alltoall", 8), 0.875);
        assert_eq!(bus_factor("broadcast", 4), 1.0);
    }

    #[test]
    fn a_send_names_its_peer_by_global_rank() {
        let a = serde_json::json!({
            "Collective name": "send", "Rank": 1, "Process Group Ranks": "[4, 6]",
            "Process Group Name": "3", "In msg nelems": 10, "dtype": "Float"
        });
        let m = comms_meta(&a).unwrap();
        assert_eq!(
            (m.kind.as_str(), m.peer, m.bytes),
            ("send", Some(6), Some(40))
        );
        let b = serde_json::json!({"Collective name": "recv", "Src Rank": "2", "Rank": 0});
        assert_eq!(comms_meta(&b).unwrap().peer, Some(2));
    }
}

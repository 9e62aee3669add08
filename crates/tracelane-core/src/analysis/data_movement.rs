//! Data movement: copies and sets by kind, with bytes and achieved
//! bandwidth, and the ops that caused them — including the copy kernels a
//! `.contiguous()` or `.to()` launches, which a "memcpy" label never shows.
//!
//! Rules:
//! - A *copy* is device work of category memcpy or memset, or a kernel
//!   launched (through the import's links) from inside a copy-family op
//!   (`aten::copy_`, `aten::to`, `aten::_to_copy`, `aten::contiguous`,
//!   `aten::clone`, `aten::to_dense`, `aten::_to_dense`, `aten::to_mkldnn`,
//!   `aten::reshape`, `aten::_reshape_alias`), or a layout-conversion kernel
//!   by name (`nchwToNhwc`, `nhwcToNchw`, `transpose`, `permute`).
//!   Each device event counts once.
//! - Kind, from Kineto's name: `Memcpy HtoD (Pageable -> Device)` is HtoD
//!   from pageable memory, `(Pinned -> Device)` from pinned; DtoH, DtoD,
//!   PtoP alike; `Memset`; other copies are `copy kernel` or
//!   `layout kernel`. Bytes from `args.bytes` where the event has it.
//! - Achieved bandwidth = bytes ÷ device time of the events that have both.
//! - Cause: walk up from the op that launched the copy while the parent is
//!   a copy-family op: the outermost one is the cause (`aten::to` over
//!   `aten::_to_copy` over `aten::copy_`); its own parent (a module's op or
//!   an annotation) is the context. A copy with no op is `(no op)`.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::category::Category;
use crate::model::{Trace, NO_SLICE};

use super::scope::{Occurrence, Scope, ScopeError};

/// Ops whose device work moves data rather than computes.
pub const COPY_OPS: [&str; 10] = [
    "aten::copy_",
    "aten::to",
    "aten::_to_copy",
    "aten::contiguous",
    "aten::clone",
    "aten::to_dense",
    "aten::_to_dense",
    "aten::to_mkldnn",
    "aten::reshape",
    "aten::_reshape_alias",
];

/// Kernel names that convert layouts.
const LAYOUT_KERNELS: [&str; 4] = ["nchwToNhwc", "nhwcToNchw", "transpose", "permute"];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KindRow {
    /// `HtoD`, `DtoH`, `DtoD`, `PtoP`, `Memset`, `copy kernel`, `layout kernel`.
    pub kind: String,
    /// `pageable`, `pinned`, or empty where the name does not say.
    pub memory: String,
    pub count: u64,
    pub bytes: u64,
    pub time_ns: i64,
    /// Bytes ÷ time over the events with both, in GB/s.
    pub gbps: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CauseRow {
    pub op: String,
    /// The cause's own parent (the op or annotation it ran under).
    pub context: String,
    pub count: u64,
    pub bytes: u64,
    pub time_ns: i64,
    /// Of all device time in the scope, percent.
    pub device_share_pct: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataMovementReport {
    pub scope: String,
    pub by_kind: Vec<KindRow>,
    pub by_cause: Vec<CauseRow>,
    /// All device work in the scope (kernels, copies, sets, windows).
    pub device_ns: i64,
    /// Copies' share of it, percent.
    pub copy_share_pct: f64,
}

/// Kineto's copy name → (kind, memory).
pub fn copy_kind(name: &str) -> (String, String) {
    if name.starts_with("Memset") || name.starts_with("hipMemset") {
        return ("Memset".into(), String::new());
    }
    let rest = name
        .strip_prefix("Memcpy ")
        .or_else(|| name.strip_prefix("hipMemcpy"))
        .unwrap_or(name);
    let kind = ["HtoD", "DtoH", "DtoD", "PtoP", "HtoH"]
        .iter()
        .find(|k| rest.contains(*k))
        .map_or("Memcpy", |k| k);
    let memory = if rest.contains("Pageable") {
        "pageable"
    } else if rest.contains("Pinned") {
        "pinned"
    } else {
        ""
    };
    (kind.into(), memory.into())
}

/// `args.bytes` of a copy or set, read from its args JSON text.
pub fn bytes_of(args: &str) -> Option<u64> {
    let k = args.find("\"bytes\"")?;
    let rest = args[k + 7..].trim_start().strip_prefix(':')?.trim_start();
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// The scope's windows as a membership test on a start time.
fn inside(occ: &[Occurrence]) -> impl Fn(i64) -> bool + '_ {
    move |ns| {
        let k = occ.partition_point(|o| o.start_ns <= ns);
        k > 0 && ns < occ[k - 1].end_ns
    }
}

/// One copy, set or copy kernel (the module's rules).
#[derive(Clone, Debug, PartialEq)]
pub struct CopyEvent {
    /// The device event (a model slice).
    pub slice: u32,
    pub kind: String,
    pub memory: String,
    pub bytes: Option<u64>,
    /// The outermost copy-family op above the launching op (`NO_SLICE`
    /// when none), and the launching op itself.
    pub cause: u32,
    pub op: u32,
}

/// Every copy, set and copy kernel in a scope, in slice order, and all
/// device work's time there. A device event belongs to the scope when its
/// launch (else itself) starts inside it. `args` reads a slice's args JSON.
pub fn copy_events(
    t: &Trace,
    scope: &Scope,
    args: &dyn Fn(usize) -> String,
) -> Result<(Vec<CopyEvent>, i64), ScopeError> {
    let occ = scope.occurrences(t)?;
    let whole = *scope == Scope::Whole;
    let in_scope = inside(&occ);
    let s = &t.slices;
    let copy_op: Vec<Option<crate::model::StrId>> =
        COPY_OPS.iter().map(|n| t.strings.lookup(n)).collect();
    let is_copy_op = |i: usize| copy_op.contains(&Some(s.name[i]));
    let mut device_ns = 0i64;
    let mut out = Vec::new();
    for i in 0..s.len() {
        let cat = s.category[i];
        if !cat.is_device_work() || t.on_host(i) {
            continue;
        }
        let launch = t.links.launch[i];
        let at = if launch != NO_SLICE {
            s.start_ns[launch as usize]
        } else {
            s.start_ns[i]
        };
        if !whole && !in_scope(at) {
            continue;
        }
        device_ns += s.dur_ns[i];
        let op = t.links.op[i];
        // The outermost copy-family op above the launching op.
        let mut cause = NO_SLICE;
        let mut k = op;
        while k != NO_SLICE && is_copy_op(k as usize) {
            cause = k;
            k = s.parent[k as usize];
        }
        let name = t.slice_name(i);
        let (kind, memory) = match cat {
            Category::Memcpy | Category::Memset => copy_kind(name),
            _ if cause != NO_SLICE => ("copy kernel".to_string(), String::new()),
            _ if LAYOUT_KERNELS.iter().any(|p| name.contains(p)) => {
                ("layout kernel".to_string(), String::new())
            }
            _ => continue,
        };
        let bytes = if matches!(cat, Category::Memcpy | Category::Memset) {
            bytes_of(&args(i))
        } else {
            None
        };
        out.push(CopyEvent {
            slice: i as u32,
            kind,
            memory,
            bytes,
            cause,
            op,
        });
    }
    Ok((out, device_ns))
}

/// Data movement in a scope ([`copy_events`] by kind and by cause).
pub fn data_movement(
    t: &Trace,
    scope: &Scope,
    args: &dyn Fn(usize) -> String,
) -> Result<DataMovementReport, ScopeError> {
    let (events, device_ns) = copy_events(t, scope, args)?;
    let s = &t.slices;
    let mut kinds: FxHashMap<(String, String), KindRow> = FxHashMap::default();
    let mut causes: FxHashMap<(String, String), CauseRow> = FxHashMap::default();
    for e in events {
        let CopyEvent {
            slice,
            kind,
            memory,
            bytes,
            cause,
            op,
        } = e;
        let dur = s.dur_ns[slice as usize];
        let row = kinds
            .entry((kind.clone(), memory.clone()))
            .or_insert(KindRow {
                kind,
                memory,
                count: 0,
                bytes: 0,
                time_ns: 0,
                gbps: None,
            });
        row.count += 1;
        row.time_ns += dur;
        if let Some(b) = bytes {
            row.bytes += b;
        }
        let (cause_name, context) = if cause != NO_SLICE {
            let p = s.parent[cause as usize];
            (
                t.slice_name(cause as usize).to_string(),
                if p == NO_SLICE {
                    String::new()
                } else {
                    t.slice_name(p as usize).to_string()
                },
            )
        } else if op != NO_SLICE {
            (t.slice_name(op as usize).to_string(), String::new())
        } else {
            ("(no op)".to_string(), String::new())
        };
        let c = causes
            .entry((cause_name.clone(), context.clone()))
            .or_insert(CauseRow {
                op: cause_name,
                context,
                count: 0,
                bytes: 0,
                time_ns: 0,
                device_share_pct: 0.0,
            });
        c.count += 1;
        c.time_ns += dur;
        c.bytes += bytes.unwrap_or(0);
    }
    // Bandwidth over the events that carry bytes (copies and sets do).
    let mut by_kind: Vec<KindRow> = kinds.into_values().collect();
    for k in &mut by_kind {
        k.gbps = (k.bytes > 0 && k.time_ns > 0).then(|| k.bytes as f64 / k.time_ns as f64);
    }
    crate::sort::by(&mut by_kind, &|a, b| {
        b.time_ns.cmp(&a.time_ns).then(a.kind.cmp(&b.kind))
    });
    let mut by_cause: Vec<CauseRow> = causes.into_values().collect();
    for c in &mut by_cause {
        c.device_share_pct = if device_ns > 0 {
            100.0 * c.time_ns as f64 / device_ns as f64
        } else {
            0.0
        };
    }
    crate::sort::by(&mut by_cause, &|a, b| {
        b.time_ns.cmp(&a.time_ns).then(a.op.cmp(&b.op))
    });
    let copy_ns: i64 = by_kind.iter().map(|k| k.time_ns).sum();
    Ok(DataMovementReport {
        scope: scope.label(),
        by_kind,
        by_cause,
        device_ns,
        copy_share_pct: if device_ns > 0 {
            100.0 * copy_ns as f64 / device_ns as f64
        } else {
            0.0
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{import_bytes, ImportOptions};

    #[test]
    fn kinds_come_from_kinetos_names() {
        assert_eq!(
            copy_kind("Memcpy HtoD (Pageable -> Device)"),
            ("HtoD".into(), "pageable".into())
        );
        assert_eq!(
            copy_kind("Memcpy DtoH (Device -> Pinned)"),
            ("DtoH".into(), "pinned".into())
        );
        assert_eq!(copy_kind("Memcpy PtoP (Device -> Device)").0, "PtoP");
        assert_eq!(copy_kind("Memset (Device)").0, "Memset");
        assert_eq!(
            bytes_of(r#"{"device": 0, "bytes": 92928, "x": 1}"#),
            Some(92928)
        );
    }

    #[test]
    fn a_contiguous_copy_kernel_is_data_movement_caused_by_contiguous() {
        let json = br#"{"traceEvents":[
          {"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":0,"dur":100,"args":{"External id":1}},
          {"ph":"X","cat":"cpu_op","name":"aten::contiguous","pid":1,"tid":1,"ts":10,"dur":30,"args":{"External id":2}},
          {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":1,"ts":12,"dur":20,"args":{"External id":3}},
          {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":14,"dur":5,"args":{"External id":3,"correlation":7}},
          {"ph":"X","cat":"kernel","name":"direct_copy_kernel_cuda","pid":0,"tid":7,"ts":40,"dur":8,"args":{"stream":7,"correlation":7,"External id":3}},
          {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":50,"dur":5,"args":{"External id":1,"correlation":8}},
          {"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":60,"dur":32,"args":{"stream":7,"correlation":8,"External id":1}}
        ]}"#;
        let t = import_bytes(json, ImportOptions::default()).unwrap();
        let r = data_movement(&t, &Scope::Whole, &|i| t.slice_args_json(i).to_string()).unwrap();
        assert_eq!(r.device_ns, 40_000);
        assert_eq!(r.by_kind.len(), 1);
        assert_eq!(r.by_kind[0].kind, "copy kernel");
        assert_eq!(r.by_cause[0].op, "aten::contiguous");
        assert_eq!(r.by_cause[0].context, "aten::linear");
        assert!((r.by_cause[0].device_share_pct - 20.0).abs() < 1e-9);
        assert!((r.copy_share_pct - 20.0).abs() < 1e-9);
    }
}

//! Blocking calls: the host stops until the device (or something the
//! device waits on) is done — a synchronising runtime call, a synchronous
//! copy, or the ops that make one (`.item()`, `nonzero`, `.cpu()`).
//!
//! Per call: the op that made it (the nearest op that implies a sync, else
//! the op the runtime call is under), its Python caller, how long the host
//! waited, how long the device sat idle while it did and after it until
//! the host queued the next work. When nothing queued before the call was
//! still running on the device, the wait is on work not in this trace:
//! another stream or process, another rank, or a capture that started
//! mid-flight — said so, not taken for a slow host.

use super::cx::{tally, us, Cx};
use super::report::{Evidence, Finding};
use super::rules::MAX_EVIDENCE;
use crate::analysis::intervals::{self, Interval};
use crate::category::Category;
use crate::model::{Trace, NO_SLICE};

/// Runtime calls that return only when the device is done (CUDA's and
/// HIP's synchronisation calls; their synchronous copies, which wait for
/// the stream's earlier work first — CUDA runtime API, "API
/// synchronization behavior").
pub(crate) fn is_blocking_call(name: &str) -> bool {
    matches!(
        name,
        "cudaDeviceSynchronize"
            | "cudaStreamSynchronize"
            | "cudaEventSynchronize"
            | "cudaMemcpy"
            | "cudaMemcpy2D"
            | "cudaMemcpyFromSymbol"
            | "cudaMemcpyToSymbol"
            | "cuCtxSynchronize"
            | "cuStreamSynchronize"
            | "cuEventSynchronize"
            | "cuMemcpyDtoH_v2"
            | "cuMemcpyHtoD_v2"
            | "cuMemcpy"
            | "hipDeviceSynchronize"
            | "hipStreamSynchronize"
            | "hipEventSynchronize"
            | "hipMemcpy"
            | "hipMemcpy2D"
            | "hipMemcpyDtoH"
            | "hipMemcpyHtoD"
            | "hipMemcpyWithStream"
            | "hipMemcpyFromSymbol"
            | "hipMemcpyToSymbol"
    )
}

/// Ops whose result the host needs, so they wait for the device: the
/// reason a blocking call was made, named before the call's own op.
fn implies_sync(name: &str) -> bool {
    matches!(
        name,
        "aten::item"
            | "aten::_local_scalar_dense"
            | "aten::nonzero"
            | "aten::nonzero_static"
            | "aten::masked_select"
            | "aten::unique"
            | "aten::_unique2"
            | "aten::unique_consecutive"
            | "aten::is_nonzero"
            | "aten::equal"
            | "aten::tolist"
            | "aten::repeat_interleave"
    ) || name.starts_with("aten::_assert")
}

/// A copy to the host (`.cpu()`, `.to("cpu")`, `.numpy()`): the op reads
/// as that.
fn is_copy_op(name: &str) -> bool {
    matches!(name, "aten::to" | "aten::_to_copy" | "aten::copy_")
}

/// One blocking call.
pub(crate) struct BlockingCall {
    pub call: usize,
    /// The op that made it (the implying op, else the op it is under).
    pub op: u32,
    /// The nearest Python frame above it.
    pub caller: u32,
    pub wait_ns: i64,
    /// The device idle while the host waited.
    pub idle_during_ns: i64,
    /// The device idle from the call's return to the next queued work.
    pub idle_after_ns: i64,
    /// No work queued before the call was still running when it began.
    pub nothing_queued: bool,
}

/// A wait this long with nothing queued is more than the call's own cost
/// (a synchronisation call with nothing to wait for returns in
/// microseconds; our own cut-off).
const ELSEWHERE_MIN_NS: i64 = 100_000;

impl BlockingCall {
    /// The wait is on work not in this trace: nothing queued before it
    /// was running, the device idle through most of a wait longer than the
    /// call's own cost.
    pub fn waits_elsewhere(&self) -> bool {
        self.nothing_queued
            && self.idle_during_ns * 2 >= self.wait_ns
            && self.wait_ns >= ELSEWHERE_MIN_NS
    }

    /// What the device lost to it: its idle time from the call's start to
    /// the next work, at most the host's wait (without the call the host
    /// would have queued that work at most that much earlier).
    pub fn stall_ns(&self) -> i64 {
        (self.idle_during_ns + self.idle_after_ns).min(self.wait_ns)
    }
}

/// The nearest ancestor of `i` (itself excluded) that `f` accepts.
fn ancestor(t: &Trace, i: usize, f: impl Fn(usize) -> bool) -> u32 {
    let mut p = t.slices.parent[i];
    while p != NO_SLICE {
        if f(p as usize) {
            return p;
        }
        p = t.slices.parent[p as usize];
    }
    NO_SLICE
}

/// Every blocking call in the scope.
pub(crate) fn blocking_calls(cx: &Cx) -> Vec<BlockingCall> {
    let t = cx.t;
    let s = &t.slices;
    let device: Vec<usize> = (0..s.len())
        .filter(|&i| s.category[i].is_device_work() && !t.on_host(i))
        .collect();
    if device.is_empty() {
        return Vec::new();
    }
    let busy = intervals::union(
        device
            .iter()
            .map(|&d| (s.start_ns[d], s.end_ns(d)))
            .collect(),
    );
    let mut starts: Vec<i64> = device.iter().map(|&d| s.start_ns[d]).collect();
    starts.sort_unstable();
    let mut out = Vec::new();
    for i in 0..s.len() {
        if s.category[i] != Category::Runtime
            || !is_blocking_call(t.slice_name(i))
            || !cx.inside(s.start_ns[i])
        {
            continue;
        }
        let (start, end) = (s.start_ns[i], s.end_ns(i));
        let during = intervals::total(&intervals::clip(&busy, (start, end)));
        let next = starts[starts.partition_point(|&x| x < end)..]
            .first()
            .copied()
            .unwrap_or(end);
        let after = (next - end) - intervals::total(&intervals::clip(&busy, (end, next)));
        // Work launched before the call and still running when it began.
        let nothing_queued = !device.iter().any(|&d| {
            t.links.launch[d] != i as u32
                && s.start_ns[d] < end
                && s.end_ns(d) > start
                && t.links.launch[d] != NO_SLICE
                && s.start_ns[t.links.launch[d] as usize] < start
        });
        let implied = ancestor(t, i, |p| {
            s.category[p] == Category::CpuOp && implies_sync(t.slice_name(p))
        });
        let op = if implied != NO_SLICE {
            implied
        } else {
            t.links.op[i]
        };
        out.push(BlockingCall {
            call: i,
            op,
            caller: ancestor(t, i, |p| s.category[p] == Category::PythonFunction),
            wait_ns: s.dur_ns[i],
            idle_during_ns: (end - start) - during,
            idle_after_ns: after.max(0),
            nothing_queued,
        });
    }
    out
}

/// How an op reads in a finding: `aten::copy_ (.cpu() / .to())`.
fn op_words(t: &Trace, op: u32) -> String {
    if op == NO_SLICE {
        return "(no op)".into();
    }
    let name = t.slice_name(op as usize);
    if is_copy_op(name) {
        format!("{name} (a copy to or from the host: .cpu(), .to(), .numpy())")
    } else {
        name.to_string()
    }
}

/// The rule: blocking calls that stall the device.
pub(super) fn blocking_syncs(cx: &Cx) -> (Vec<Finding>, String) {
    let t = cx.t;
    let s = &t.slices;
    let calls = blocking_calls(cx);
    let found: Vec<&BlockingCall> = calls.iter().filter(|c| c.stall_ns() > 0).collect();
    if found.is_empty() {
        return (
            Vec::new(),
            if calls.is_empty() {
                "no blocking calls".into()
            } else {
                format!(
                    "{} blocking calls, the device busy through each and right after",
                    calls.len()
                )
            },
        );
    }
    let mut by_op: Vec<(String, usize)> = Vec::new();
    let mut by_call: Vec<(String, usize)> = Vec::new();
    let mut callers: Vec<(String, usize)> = Vec::new();
    let (mut wait, mut during, mut after, mut stall, mut elsewhere) = (0, 0, 0, 0, 0usize);
    let mut ranges: Vec<Interval> = Vec::new();
    for c in &found {
        wait += c.wait_ns;
        during += c.idle_during_ns;
        after += c.idle_after_ns;
        stall += c.stall_ns();
        if c.waits_elsewhere() {
            elsewhere += 1;
        }
        tally(&mut by_call, t.slice_name(c.call).to_string());
        tally(&mut by_op, op_words(t, c.op));
        if c.caller != NO_SLICE {
            tally(&mut callers, t.slice_name(c.caller as usize).to_string());
        }
        ranges.push((s.start_ns[c.call], s.end_ns(c.call) + c.idle_after_ns));
    }
    // The longest first: it is the one to look at.
    let mut order: Vec<&&BlockingCall> = found.iter().collect();
    crate::sort::by_key(&mut order, &|c| (-c.stall_ns(), c.call));
    let top = order[0];
    let fmt = |v: &[(String, usize)]| {
        v.iter()
            .map(|(n, k)| format!("{n} ×{k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut numbers = vec![
        ("blocking calls".into(), found.len().to_string()),
        ("calls".into(), fmt(&by_call)),
        ("made by".into(), fmt(&by_op)),
    ];
    if !callers.is_empty() {
        numbers.push(("Python callers".into(), fmt(&callers)));
    }
    numbers.extend([
        ("host time waiting in them".into(), us(wait)),
        ("device idle while the host waited".into(), us(during)),
        (
            "device idle after them, until the next work".into(),
            us(after),
        ),
        (
            "device stalled by them (at most their wait)".into(),
            us(stall),
        ),
    ]);
    if elsewhere > 0 {
        numbers.push((
            "waiting on work not in this trace".into(),
            format!(
                "{elsewhere} of {}: nothing queued on the device before the call was still running, and the device sat idle through most of a wait of 100 µs or more — the wait is on another stream, process or rank, or on work queued before the capture started",
                found.len()
            ),
        ));
    }
    // A call made outside any op (straight from Python) is named alone.
    let under = if top.op == NO_SLICE {
        String::new()
    } else {
        format!(" under {}", op_words(t, top.op))
    };
    let top_words = format!(
        "{}{under}{}",
        t.slice_name(top.call),
        if top.caller != NO_SLICE {
            format!(" in {}", t.slice_name(top.caller as usize))
        } else {
            String::new()
        }
    );
    let title = match (found.len(), top.waits_elsewhere()) {
        (1, true) => format!(
            "A blocking call, {top_words}, stalls host and device: it waits {} while the device has nothing queued",
            us(top.wait_ns)
        ),
        (1, false) => format!(
            "A blocking call, {top_words}, stalls the device {}",
            us(top.stall_ns())
        ),
        (n, true) => format!(
            "{n} blocking calls stall host and device; the longest, {top_words}, waits {} while the device has nothing queued",
            us(top.wait_ns)
        ),
        (n, false) => format!(
            "{n} blocking calls stall the device; the longest, {top_words}, stalls it {}",
            us(top.stall_ns())
        ),
    };
    let bounded = cx.bounded(stall, &ranges);
    let mut slices: Vec<u32> = order.iter().map(|c| c.call as u32).collect();
    let slice_count = slices.len();
    slices.truncate(MAX_EVIDENCE);
    let shown: Vec<Interval> = order
        .iter()
        .take(MAX_EVIDENCE)
        .map(|c| (s.start_ns[c.call], s.end_ns(c.call) + c.idle_after_ns))
        .collect();
    let f = cx.finding(
        "blocking_sync",
        by_call.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join("+"),
        title,
        bounded,
        Evidence {
            numbers,
            ops: by_op.into_iter().map(|(n, _)| n).collect(),
            slices,
            slice_count,
            ranges: shown,
        },
        "remove the wait from the hot loop: keep values on the device instead of .item() / .cpu() / printing them, copy results with non_blocking=True into pinned memory and read them after the step, avoid ops whose output size depends on the data (nonzero, masked_select, unique) or give them a static size, and drop torch.cuda.synchronize() outside timing code; when the device had nothing queued, find what it waits on (another stream, process or rank) in that lane's or rank's trace",
    );
    (vec![f], String::new())
}

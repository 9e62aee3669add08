//! The profiler's `[memory]` instants (`profile_memory=True`) as PyTorch's
//! `key_averages()` reads them for its memory columns
//! (`torch/autograd/profiler.py`, `_parse_kineto_results`, PyTorch 2.11):
//! a CPU event is given the signed `Bytes` of every `[memory]` record with
//! `start ≤ ts ≤ end` (`MemRecordsAcc.in_interval`: both ends, any thread),
//! as CPU memory when the record's `Device Type` is CPU, MKLDNN or IDEEP
//! (0, 2, 5) and as device memory when it is CUDA, HIP, XPU or PrivateUse1
//! (1, 6, 12, 20). Frees are negative, so a column is net bytes.

use crate::model::*;

/// CPU and device bytes, in that order.
pub type MemBytes = [i64; 2];

/// The `[memory]` instants of a window, sorted by time, with prefix sums.
#[derive(Default)]
pub(crate) struct MemoryEvents {
    pub ts_ns: Vec<i64>,
    pub bytes: Vec<MemBytes>,
    /// `prefix[k]`: the sum of `bytes[..k]`.
    prefix: Vec<MemBytes>,
}

impl MemoryEvents {
    /// The `[memory]` instants `keep` accepts (by time).
    pub fn of(t: &Trace, keep: &dyn Fn(i64) -> bool) -> MemoryEvents {
        let Some(mem) = t.strings.lookup("[memory]") else {
            return MemoryEvents::default();
        };
        let inst = &t.instants;
        let mut all: Vec<(i64, MemBytes)> = (0..inst.ts_ns.len())
            .filter(|&k| inst.name[k] == mem && keep(inst.ts_ns[k]))
            .map(|k| (inst.ts_ns[k], bytes_of(t.instant_args_json(k))))
            .collect();
        crate::sort::by_key(&mut all, &|&(ts, _)| ts);
        let mut prefix = Vec::with_capacity(all.len() + 1);
        let mut run = [0i64; 2];
        prefix.push(run);
        for (_, b) in &all {
            run = [run[0] + b[0], run[1] + b[1]];
            prefix.push(run);
        }
        MemoryEvents {
            ts_ns: all.iter().map(|a| a.0).collect(),
            bytes: all.iter().map(|a| a.1).collect(),
            prefix,
        }
    }

    /// The bytes of the instants in `[start, end]`.
    pub fn within(&self, start: i64, end: i64) -> MemBytes {
        if self.ts_ns.is_empty() {
            return [0, 0];
        }
        let lo = self.ts_ns.partition_point(|&x| x < start);
        let hi = self.ts_ns.partition_point(|&x| x <= end);
        if lo >= hi {
            return [0, 0];
        }
        let (a, b) = (self.prefix[lo], self.prefix[hi]);
        [b[0] - a[0], b[1] - a[1]]
    }
}

/// A record's bytes by the device type it names.
fn bytes_of(args: &str) -> MemBytes {
    let v: serde_json::Value = serde_json::from_str(args).unwrap_or_default();
    let n = v.get("Bytes").and_then(|b| b.as_i64()).unwrap_or(0);
    match v.get("Device Type").and_then(|d| d.as_i64()) {
        Some(0 | 2 | 5) => [n, 0],
        Some(1 | 6 | 12 | 20) => [0, n],
        _ => [0, 0],
    }
}

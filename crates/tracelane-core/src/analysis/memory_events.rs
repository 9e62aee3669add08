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

/// One `[memory]` record: what the allocator did, on which device, and
/// its totals after it (Kineto's `reportMemoryUsage` args).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemoryRecord {
    /// The instant it is.
    pub instant: u32,
    pub ts_ns: i64,
    /// Signed: negative on a free.
    pub bytes: i64,
    /// c10's `DeviceType` (0 CPU, 1 CUDA, 6 HIP, 12 XPU, 20 PrivateUse1…).
    pub device_type: i64,
    pub device_id: i64,
    pub addr: u64,
    /// `Total Allocated` / `Total Reserved` after it (absent in some
    /// captures: CPU records of older versions).
    pub total_allocated: Option<i64>,
    pub total_reserved: Option<i64>,
}

impl MemoryRecord {
    /// CPU and device bytes as PyTorch's memory columns split them.
    pub fn split(&self) -> MemBytes {
        match self.device_type {
            0 | 2 | 5 => [self.bytes, 0],
            1 | 6 | 12 | 20 => [0, self.bytes],
            _ => [0, 0],
        }
    }
}

/// The `[memory]` records `keep` accepts (by time), in time order (ties in
/// the trace's order).
pub fn memory_records(t: &Trace, keep: &dyn Fn(i64) -> bool) -> Vec<MemoryRecord> {
    let Some(mem) = t.strings.lookup("[memory]") else {
        return Vec::new();
    };
    let inst = &t.instants;
    let mut all: Vec<MemoryRecord> = (0..inst.ts_ns.len())
        .filter(|&k| inst.name[k] == mem && keep(inst.ts_ns[k]))
        .map(|k| record(k, inst.ts_ns[k], &t.instant_args_json(k)))
        .collect();
    crate::sort::by_key(&mut all, &|r| (r.ts_ns, r.instant));
    all
}

fn record(instant: usize, ts_ns: i64, args: &str) -> MemoryRecord {
    let v: serde_json::Value = serde_json::from_str(args).unwrap_or_default();
    let int = |k: &str| {
        v.get(k)
            .and_then(|x| x.as_i64().or_else(|| x.as_f64().map(|f| f as i64)))
    };
    MemoryRecord {
        instant: instant as u32,
        ts_ns,
        bytes: int("Bytes").unwrap_or(0),
        device_type: int("Device Type").unwrap_or(-1),
        device_id: int("Device Id").unwrap_or(-1),
        addr: v
            .get("Addr")
            .and_then(|x| x.as_u64().or_else(|| x.as_i64().map(|i| i as u64)))
            .unwrap_or(0),
        total_allocated: int("Total Allocated"),
        total_reserved: int("Total Reserved"),
    }
}

impl MemoryEvents {
    /// The `[memory]` instants `keep` accepts (by time).
    pub fn of(t: &Trace, keep: &dyn Fn(i64) -> bool) -> MemoryEvents {
        let all = memory_records(t, keep);
        let mut prefix = Vec::with_capacity(all.len() + 1);
        let mut run = [0i64; 2];
        prefix.push(run);
        for r in &all {
            let b = r.split();
            run = [run[0] + b[0], run[1] + b[1]];
            prefix.push(run);
        }
        MemoryEvents {
            ts_ns: all.iter().map(|r| r.ts_ns).collect(),
            bytes: all.iter().map(|r| r.split()).collect(),
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

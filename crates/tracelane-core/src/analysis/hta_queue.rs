//! HTA's launch queue: the runtime calls it counts as launches and its
//! queue-length series, which both the device-time report (queue length)
//! and HTA's critical path (a launch edge when the stream was empty) read.

use rustc_hash::FxHashMap as HashMap;

use crate::model::Trace;

use super::frame::{Frame, Mode};

/// Runtime calls HTA's queue length and critical path count as launches
/// (`get_runtime_launch_events_query`; 0.6's `..._mask` adds
/// `cuLaunchKernelEx`, the last).
pub(crate) fn hta_queue_names(mode: Mode) -> &'static [&'static str] {
    match mode {
        Mode::Hta05 => &HTA_QUEUE_NAMES[..11],
        _ => &HTA_QUEUE_NAMES,
    }
}

const HTA_QUEUE_NAMES: [&str; 12] = [
    "cudaMemsetAsync",
    "cudaMemcpyAsync",
    "cudaLaunchKernel",
    "cudaLaunchKernelExC",
    "cuLaunchKernel",
    "runFunction - job_prep_and_submit_for_execution",
    "hipLaunchKernel",
    "hipExtModuleLaunchKernel",
    "hipMemcpyAsync",
    "hipMemsetAsync",
    "hipMemcpyWithStream",
    "cuLaunchKernelEx",
];

/// One change of a lane's queue: (time, 0 for a device start / 1 for a
/// launch, ±1, frame row).
pub(crate) type QueueEvent = (i64, u8, i64, usize);

/// HTA's queue-length series (`_get_queue_length_time_series_for_rank`):
/// +1 at each launch call (HTA's launch names, paired) on its kernel's
/// stream, −1 at each kernel start, by lane; `None` where HTA's check that
/// the two sides are as many fails.
pub(crate) fn hta_queue_events(t: &Trace, f: &Frame) -> Option<HashMap<i64, Vec<QueueEvent>>> {
    let names: Vec<_> = hta_queue_names(f.mode)
        .iter()
        .filter_map(|n| t.strings.lookup(n))
        .collect();
    let runtime: Vec<usize> = (0..f.len())
        .filter(|&r| f.partner_positive[r] && names.contains(&f.name_id(t, r)))
        .collect();
    let mut dev_by_corr: HashMap<i64, Vec<usize>> = HashMap::default();
    for r in (0..f.len()).filter(|&r| f.is_device(r)) {
        dev_by_corr.entry(f.correlation[r]).or_default().push(r);
    }
    let runtime_corr: rustc_hash::FxHashSet<i64> =
        runtime.iter().map(|&r| f.correlation[r]).collect();
    let mut by_lane: HashMap<i64, Vec<QueueEvent>> = HashMap::default();
    let mut ups = 0usize;
    let mut downs = 0usize;
    for &r in &runtime {
        match dev_by_corr.get(&f.correlation[r]) {
            Some(devs) => {
                for &d in devs {
                    by_lane
                        .entry(f.lane[d])
                        .or_default()
                        .push((f.ts[r], 1, 1, r));
                    ups += 1;
                }
            }
            // A left join keeps the call with no stream; HTA's groupby
            // then leaves it out, but it counts in the length check.
            None => ups += 1,
        }
    }
    for r in (0..f.len()).filter(|&r| f.is_device(r)) {
        if runtime_corr.contains(&f.correlation[r]) {
            by_lane
                .entry(f.lane[r])
                .or_default()
                .push((f.ts[r], 0, -1, r));
            downs += 1;
        }
    }
    (ups == downs).then_some(by_lane)
}

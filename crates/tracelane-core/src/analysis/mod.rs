//! Analyses: each a function of a [`Trace`](crate::Trace) (and, where it
//! has one, a [`Scope`]) that returns a report — plain data, serialisable,
//! which the CLI prints and the page renders as it is.
//!
//! | module | what it answers |
//! |---|---|
//! | [`ops`] | PyTorch's `key_averages()` table: CPU and device time per op |
//! | [`align`] | two traces of one workload lined up op by op, the difference explained node by node |
//! | [`chain`] | what a slice launched or was launched by, with launch delays |
//! | [`collectives`] | a rank's collective calls from the CPU side, tied to their kernels, every kind |
//! | [`compare`] | variants (traces × scopes) side by side against a baseline |
//! | [`critical_path`] | the longest chain of dependent work, each edge labelled by what bounds it (HTA's model) |
//! | [`data_movement`] | copies and sets by kind with bandwidth, and the ops that caused them |
//! | [`device_time`] | where device time goes: idle, kernel types, launch delays, queues (HTA's numbers under `Mode::Hta` and `Mode::Hta05`) |
//! | [`frame`] | the event table the time analyses read, under tracelane's or HTA's rules |
//! | [`info`] | what was imported: counts, lanes, links, warnings |
//! | [`neuron_runtime`] | what the Neuron runtime's events say: submission, host waits, copies, model switches, barriers, clock alignment, HBM spill |
//! | [`insights`] | what to change first: findings ranked by estimated gain, with evidence and action |
//! | [`gate`] | a candidate trace against a baseline of the same workload: verdict, what got slower, new findings |
//! | [`memory`] | memory over time per device from `[memory]` records: peak, what is live then (by op, module, Python caller and — with a raw memory timeline beside the trace — PyTorch's category), never freed, churn |
//! | [`memory_categories`] | PyTorch's memory categories over time, from a raw memory timeline joined to the `[memory]` records |
//! | [`xla_ops`] | an XPlane profile's HLO and framework op tables, equal to xprof's `hlo_stats` and `framework_op_stats` |
//! | [`warmup`] | each step's duration with warm-up flagged; the steady median |
//! | [`ranks`] | many ranks of one run: per-step breakdowns, collectives matched across ranks, skew, stragglers |
//! | [`scope`] | which part of a trace an analysis looks at |
//! | [`intervals`] | union, gaps, intersection and overlap of time intervals |
//!
//! A new analysis is a module here with one public function
//! `fn name(t: &Trace, scope: &Scope, …) -> Result<Report, ScopeError>`
//! (or without the scope when it always looks at the whole trace), its
//! rules documented at the top of the module and where a reference tool
//! defines a number, which one.

pub mod align;
pub mod chain;
pub mod collectives;
pub mod compare;
pub mod critical_path;
pub mod data_movement;
pub mod device_time;
pub mod engines;
pub mod flops;
pub mod frame;
pub mod gate;
pub mod hta_kernel_types;
pub(crate) mod hta_queue;
pub mod info;
pub mod insights;
pub mod intervals;
pub mod memory;
pub mod memory_categories;
pub mod memory_events;
pub mod memory_hbm;
pub mod neuron_runtime;
pub mod op_details;
pub mod ops;
pub mod profiler_overhead;
pub mod ranks;
pub mod regions;
pub mod roofline;
pub mod scope;
pub mod warmup;
pub mod xla_ops;

pub use scope::{Occurrence, Scope, ScopeError};

/// Why is it slow, for one scope under one set of rules: where device time
/// goes, the critical path, data movement and warm-up.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WhySlow {
    pub device: device_time::DeviceTimeReport,
    /// Or why there is none (no work in the scope; HTA's own failures).
    pub critical_path: Result<critical_path::CriticalPathReport, String>,
    /// Not an HTA analysis: `None` under HTA's rules.
    pub data_movement: Option<data_movement::DataMovementReport>,
    /// Or why there is none (no steps in the trace); `None` under HTA's rules.
    pub warmup: Option<Result<warmup::WarmupReport, String>>,
    /// What the Neuron runtime's events say (a trace with Neuron runtime
    /// or hardware events; `None` under HTA's rules).
    pub neuron: Option<neuron_runtime::NeuronRuntimeReport>,
    /// An XPlane profile's HLO and framework op tables, as xprof computes
    /// them (always the whole profile; `None` for other traces and under
    /// HTA's rules).
    #[serde(default)]
    pub xla_ops: Option<xla_ops::XlaOpStats>,
}

/// The slices whose args text [`why_slow`] reads: copies and sets (their
/// bytes) and device syncs (the events they wait on) — for a caller that
/// keeps args in the file to read them in one pass.
pub fn args_read_by_why_slow(t: &crate::Trace) -> Vec<usize> {
    use crate::category::Category;
    (0..t.slices.len())
        .filter(|&i| {
            matches!(
                t.slices.category[i],
                Category::Memcpy | Category::Memset | Category::DeviceSync
            )
        })
        .collect()
}

/// Every "why is it slow" analysis of one scope, from one frame (built
/// once for the device-time report and the critical path). `args` reads a
/// slice's args JSON (sync and copy details the model keeps as text).
pub fn why_slow(
    t: &crate::Trace,
    scope: &Scope,
    mode: frame::Mode,
    args: &dyn Fn(usize) -> String,
) -> Result<WhySlow, ScopeError> {
    let whole = frame::Frame::build(t, &Scope::Whole, mode)?;
    let exact = mode == frame::Mode::Exact;
    // What needs no args text (device time, warm-up) and what does (the
    // critical path, data movement); natively the first runs on a second
    // thread while the second runs here.
    let no_args = || -> Result<_, ScopeError> {
        let scoped = whole.scoped_ref(t, scope)?;
        let device = device_time::device_time_of(t, scoped.as_ref().unwrap_or(&whole), scope);
        let warmup = exact.then(|| warmup::warmup(t, scope).map_err(|e| e.to_string()));
        Ok((device, warmup))
    };
    let with_args = || -> Result<_, ScopeError> {
        let critical_path = critical_path::critical_path_of(t, &whole, scope, args);
        let data_movement = if exact {
            Some(data_movement::data_movement(t, scope, args)?)
        } else {
            None
        };
        Ok((critical_path, data_movement))
    };
    #[cfg(not(target_arch = "wasm32"))]
    let (first, second) = std::thread::scope(|s| {
        let h = s.spawn(no_args);
        let second = with_args();
        (h.join().expect("device-time thread"), second)
    });
    #[cfg(target_arch = "wasm32")]
    let (first, second) = (no_args(), with_args());
    let ((device, warmup), (critical_path, data_movement)) = (first?, second?);
    let neuron = if exact && neuron_runtime::has_neuron_events(t) {
        Some(neuron_runtime::neuron_runtime(t, scope)?)
    } else {
        None
    };
    let xla_ops = if exact {
        xla_ops::xla_op_stats(t)
    } else {
        None
    };
    Ok(WhySlow {
        device,
        critical_path,
        data_movement,
        warmup,
        neuron,
        xla_ops,
    })
}

//! The event table the time analyses (`device_time`) read, built under one
//! of two sets of rules.
//!
//! **Exact** (tracelane's own): nanoseconds as the file wrote them; device
//! work is what the model's categories say runs on a device (kernels,
//! copies, sets, NeuronCore execution windows — not syncs, not annotations
//! mirrored on a stream); a lane is a device track (a CUDA/HIP stream, a
//! NeuronCore queue); a device event's launch is the runtime call the
//! import linked it to (correlation ids, flows or containment — so
//! `cuLaunchKernel` from Triton, CUDA-graph launches, HIP launches and
//! TorchNeuron's `privateuse1_runtime` dispatch all count); kernel types by
//! category first, then name.
//!
//! **Hta** and **Hta05**: Holistic Trace Analysis's dataframe, quirks
//! included, the same in 0.6.1 and 0.5.0 but for the kernel types
//! ([`hta_kernel_type`]) (`hta/common/trace_parser.py`, `hta/common/trace.py`):
//! - a row per event with a `dur` and a `cat` other than `Trace`;
//! - when any timestamp in the file has a fraction of a µs, `ts` is rounded
//!   up and `ts + dur` down to whole µs (`round_down_time_stamps`), in
//!   `float64` as HTA computes it;
//! - a device event is any row with a `stream` other than -1 (so
//!   `gpu_user_annotation` rows count as kernels, `cuda_sync` rows too);
//! - `index_correlation` pairs host and device rows by equal `correlation`
//!   (`transform_correlation_to_index`; the last match wins);
//! - with two or more distinct `ProfilerStep` names, host rows from the
//!   start of the last step on are dropped, and a device row is kept once
//!   per kept host row sharing its correlation
//!   (`_filter_irrelevant_gpu_kernels`).
//!
//! Times are `i64` nanoseconds in both; under `Hta` they are whole µs
//! whenever HTA rounds.

use rustc_hash::FxHashMap;

use serde::{Deserialize, Serialize};

use crate::category::Category;
use crate::import::scan::ns_to_micros_text;
use crate::model::{StrId, Trace, NO_SLICE};

use super::scope::{Occurrence, Scope, ScopeError};

/// Which definitions the analyses follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// tracelane's: exact nanoseconds, every launch the import linked.
    #[default]
    Exact,
    /// Holistic Trace Analysis 0.6.1's (`traceinsight`, HTA's current
    /// release), quirks included.
    Hta,
    /// HolisticTraceAnalysis 0.5.0's, quirks included: the rules 0.6
    /// changed (kernel types, the critical path) as 0.5.0 had them.
    Hta05,
}

impl Mode {
    /// Either release of HTA's rules.
    pub fn is_hta(self) -> bool {
        matches!(self, Mode::Hta | Mode::Hta05)
    }

    /// The rules in words, for a report's title.
    pub fn describe(self) -> &'static str {
        match self {
            Mode::Exact => "exact",
            Mode::Hta => "HTA 0.6 rules",
            Mode::Hta05 => "HTA 0.5 rules",
        }
    }
}

/// "No row" in row-index columns.
pub const NO_ROW: u32 = u32::MAX;

/// HTA's kernel types (`hta/utils/utils.py` `KernelType`), which the exact
/// mode uses too (with its own classifier).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum KernelType {
    Computation,
    Communication,
    Memory,
    Other,
}

impl KernelType {
    pub const ALL: [KernelType; 4] = [
        KernelType::Computation,
        KernelType::Communication,
        KernelType::Memory,
        KernelType::Other,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            KernelType::Computation => "COMPUTATION",
            KernelType::Communication => "COMMUNICATION",
            KernelType::Memory => "MEMORY",
            KernelType::Other => "OTHER",
        }
    }
}

/// The first line of a name: Python's `.` does not match a newline, so
/// HTA's `.*X` patterns only look there.
fn first_line(name: &str) -> &str {
    name.split('\n').next().unwrap_or("")
}

/// HTA's `get_kernel_type` under either release's patterns.
pub fn hta_kernel_type(mode: Mode, name: &str) -> KernelType {
    match mode {
        Mode::Hta05 => hta05_kernel_type(name),
        _ => hta06_kernel_type(name),
    }
}

/// HTA 0.5.0 `get_kernel_type`: `^nccl.*Kernel` is communication;
/// `^Memcpy|^Memset|^dma` memory; anything matching
/// `(^nccl.*Kernel)|(.*Memcpy)|(Memset)|(.*Sync)` (anchored at the start,
/// first line only) is not computation, so it is other.
fn hta05_kernel_type(name: &str) -> KernelType {
    let line = first_line(name);
    let nccl_kernel = line.starts_with("nccl") && line[4..].contains("Kernel");
    if nccl_kernel {
        return KernelType::Communication;
    }
    if name.starts_with("Memcpy") || name.starts_with("Memset") || name.starts_with("dma") {
        return KernelType::Memory;
    }
    if line.contains("Memcpy") || name.starts_with("Memset") || line.contains("Sync") {
        return KernelType::Other;
    }
    KernelType::Computation
}

/// HTA 0.6.1 `get_kernel_type` (`hta/common/types.py`'s grouping patterns,
/// matched with `re.match`, so anchored at the start; `.` stops at a
/// newline): communication `(^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*)`
/// (so every `hip*` name, copies too, is communication); memory
/// `(^(hip)?Memcpy)|(^(hip)?Memset)|(^dma)`; computation whatever does not
/// match `(^nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|(^.*Sync)|(^Stream Wait
/// Event)|(cuda.*LaunchKernel)|(^runFunction)|(^hip)|(^job_exe)|(^packet)|
/// (^pe_exe)|(^cpum_exe_subgraph)|(^hccl)|(^collective_subgraph_execution)`;
/// the rest other.
fn hta06_kernel_type(name: &str) -> KernelType {
    let line = first_line(name);
    let starts = |p: &str| name.starts_with(p);
    if starts("nccl") || starts("hip") || starts("hccl") || line.contains("ncclKernel") {
        return KernelType::Communication;
    }
    if starts("Memcpy") || starts("Memset") || starts("dma") {
        return KernelType::Memory;
    }
    let cuda_launch = starts("cuda") && line[4..].contains("LaunchKernel");
    let not_compute = ["Memcpy", "Memset", "dma", "Sync"]
        .iter()
        .any(|p| line.contains(p))
        || cuda_launch
        || [
            "Stream Wait Event",
            "runFunction",
            "job_exe",
            "packet",
            "pe_exe",
            "cpum_exe_subgraph",
            "collective_subgraph_execution",
        ]
        .iter()
        .any(|p| starts(p));
    if not_compute {
        KernelType::Other
    } else {
        KernelType::Computation
    }
}

/// Collective kernels by name: NCCL / RCCL kernels and the collective
/// names their device functions carry.
pub fn is_collective_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("nccl")
        || lower.starts_with("rccl")
        // Neuron's collectives on the device and their barrier (hardware
        // events of the system profile).
        || lower == "cc_running"
        || lower == "cc_exec_barrier"
        || [
            "allreduce",
            "allgather",
            "reducescatter",
            "alltoall",
            "sendrecv",
        ]
        .iter()
        .any(|k| lower.contains(k))
}

/// Exact mode's kernel type: copies and sets are memory by category (and
/// DMA / memcpy kernels by name), collectives communication, the rest of
/// the device work computation.
pub fn exact_kernel_type(category: Category, name: &str) -> KernelType {
    match category {
        Category::Memcpy | Category::Memset => KernelType::Memory,
        Category::Kernel | Category::DeviceWindow => {
            if is_collective_name(name) {
                KernelType::Communication
            } else if name.starts_with("Memcpy")
                || name.starts_with("Memset")
                || name.starts_with("dma")
                || name.starts_with("hipMemcpy")
                || name.starts_with("hipMemset")
            {
                KernelType::Memory
            } else {
                KernelType::Computation
            }
        }
        _ => KernelType::Other,
    }
}

/// The rows the analyses read.
#[derive(Clone, Debug, Default)]
pub struct Frame {
    pub mode: Mode,
    /// The model slice each row stands for.
    pub slice: Vec<u32>,
    pub ts: Vec<i64>,
    pub end: Vec<i64>,
    /// A device row's lane (HTA: `stream`; exact: its track index); -1 on the host.
    pub lane: Vec<i64>,
    pub correlation: Vec<i64>,
    /// The row paired with this one: a device row's launch, a launch's
    /// device row (HTA's `index_correlation`; exact: the import's link).
    pub partner: Vec<u32>,
    /// HTA's `index_correlation > 0`: paired, and the partner is not the
    /// file's first event.
    pub partner_positive: Vec<bool>,
    /// The event's position in the file (HTA's `index`).
    pub index: Vec<i64>,
    /// HTA's `index_correlation` as computed before its filter: the
    /// partner's `index`, else 0 for a correlated event without one, else -1.
    pub index_corr: Vec<i64>,
    /// The device (exact: the device track's process; HTA: 0, one rank per file).
    pub device: Vec<u32>,
    /// Device rows: the kernel type.
    pub kernel_type: Vec<KernelType>,
    /// Device rows HTA's idle breakdown reads (`cat` in its kernel
    /// categories); exact: every device row.
    pub idle_lane: Vec<bool>,
    /// What HTA's rules left out (its last-step drop), for the report's notes.
    pub dropped_host: usize,
    pub dropped_device: usize,
    /// What lies outside the scope.
    pub outside_host: usize,
    pub outside_device: usize,
    /// Under `Hta`: whether HTA rounds this file's times to whole µs.
    pub rounded_to_us: bool,
    /// Under `Hta`: the `ProfilerStep` HTA drops with everything after it.
    pub dropped_from_step: Option<String>,
}

impl Frame {
    pub fn len(&self) -> usize {
        self.ts.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ts.is_empty()
    }
    pub fn is_device(&self, r: usize) -> bool {
        self.lane[r] != -1
    }

    /// Builds the table for a scope. A device row belongs to a scope's
    /// window when its launch starts inside it (work launched in a step is
    /// that step's, wherever it ran), or, without a launch, when it starts
    /// inside it; a host row when it starts inside it.
    pub fn build(t: &Trace, scope: &Scope, mode: Mode) -> Result<Frame, ScopeError> {
        let whole = match mode {
            Mode::Exact => exact(t),
            Mode::Hta | Mode::Hta05 => hta(t, mode),
        };
        whole.scoped(t, scope)
    }

    /// A whole-trace frame narrowed to a scope (itself for the whole trace).
    pub fn scoped(self, t: &Trace, scope: &Scope) -> Result<Frame, ScopeError> {
        Ok(self.scoped_ref(t, scope)?.unwrap_or(self))
    }

    /// [`Frame::scoped`] without giving the frame up: `None` where the
    /// scope is the whole trace (the frame itself).
    pub fn scoped_ref(&self, t: &Trace, scope: &Scope) -> Result<Option<Frame>, ScopeError> {
        if *scope == Scope::Whole {
            return Ok(None);
        }
        let occ = scope.occurrences(t)?;
        Ok(Some(self.restricted(&occ)))
    }

    fn restricted(&self, occ: &[Occurrence]) -> Frame {
        let inside = |ns: i64| {
            let k = occ.partition_point(|o| o.start_ns <= ns);
            k > 0 && ns < occ[k - 1].end_ns
        };
        let keep: Vec<bool> = (0..self.len())
            .map(|r| {
                let at = if self.is_device(r) && self.partner[r] != NO_ROW {
                    self.ts[self.partner[r] as usize]
                } else {
                    self.ts[r]
                };
                inside(at)
            })
            .collect();
        let mut out = Frame {
            mode: self.mode,
            rounded_to_us: self.rounded_to_us,
            dropped_from_step: self.dropped_from_step.clone(),
            dropped_host: self.dropped_host,
            dropped_device: self.dropped_device,
            ..Frame::default()
        };
        let mut new_index = vec![NO_ROW; self.len()];
        for r in 0..self.len() {
            if keep[r] {
                new_index[r] = out.len() as u32;
                out.push_row(self, r);
            } else if self.is_device(r) {
                out.outside_device += 1;
            } else {
                out.outside_host += 1;
            }
        }
        for p in out.partner.iter_mut() {
            if *p != NO_ROW {
                *p = new_index[*p as usize];
            }
        }
        out
    }

    fn push_row(&mut self, from: &Frame, r: usize) {
        self.slice.push(from.slice[r]);
        self.ts.push(from.ts[r]);
        self.end.push(from.end[r]);
        self.lane.push(from.lane[r]);
        self.correlation.push(from.correlation[r]);
        self.partner.push(from.partner[r]);
        self.partner_positive.push(from.partner_positive[r]);
        self.index.push(from.index[r]);
        self.index_corr.push(from.index_corr[r]);
        self.device.push(from.device[r]);
        self.kernel_type.push(from.kernel_type[r]);
        self.idle_lane.push(from.idle_lane[r]);
    }

    pub fn name<'a>(&self, t: &'a Trace, r: usize) -> &'a str {
        t.slice_name(self.slice[r] as usize)
    }
    pub fn name_id(&self, t: &Trace, r: usize) -> StrId {
        t.slices.name[self.slice[r] as usize]
    }
}

fn exact(t: &Trace) -> Frame {
    let s = &t.slices;
    let mut f = Frame {
        mode: Mode::Exact,
        ..Frame::default()
    };
    let is_device_work = |i: usize| {
        matches!(
            s.category[i],
            Category::Kernel | Category::Memcpy | Category::Memset | Category::DeviceWindow
        ) && !t.on_host(i)
    };
    // A TPU records its ops nested on its op line (a loop's body inside
    // the loop, fused computations inside their fusion): its device work is
    // each outermost op, once — as the comparison counts it
    // (`xla_ops::tpu_ops::outermost_ops`). Rows inside one would count its
    // time twice in the kernel tables and make the critical path's lane
    // order go back in time (a cycle).
    let nested_ops = crate::analysis::xla_ops::is_tpu_profile(t);
    let inside_device_work = |i: usize| {
        let mut p = s.parent[i];
        while p != NO_SLICE {
            if is_device_work(p as usize) {
                return true;
            }
            p = s.parent[p as usize];
        }
        false
    };
    let mut row_of = vec![NO_ROW; s.len()];
    for (i, row) in row_of.iter_mut().enumerate() {
        let cat = s.category[i];
        let device_work = is_device_work(i) && !(nested_ops && inside_device_work(i));
        let host = t.on_host(i) && cat.is_counted_host();
        if !device_work && !host {
            continue;
        }
        *row = f.len() as u32;
        let track = s.track[i];
        f.slice.push(i as u32);
        f.ts.push(s.start_ns[i]);
        f.end.push(s.end_ns(i));
        f.lane.push(if device_work { track.0 as i64 } else { -1 });
        f.correlation
            .push(if s.correlation[i] == crate::model::NONE_I64 {
                -1
            } else {
                s.correlation[i]
            });
        f.partner.push(NO_ROW);
        f.partner_positive.push(false);
        f.index.push(s.file_order[i] as i64);
        f.index_corr.push(-1);
        f.device.push(if device_work {
            t.tracks[track.idx()].process.0
        } else {
            0
        });
        f.kernel_type.push(if device_work {
            exact_kernel_type(cat, t.slice_name(i))
        } else {
            KernelType::Other
        });
        f.idle_lane.push(device_work);
    }
    for r in 0..f.len() {
        if !f.is_device(r) {
            continue;
        }
        let launch = t.links.launch[f.slice[r] as usize];
        if launch != NO_SLICE && row_of[launch as usize] != NO_ROW {
            let h = row_of[launch as usize];
            f.partner[r] = h;
            f.partner_positive[r] = true;
            f.partner[h as usize] = r as u32;
            f.partner_positive[h as usize] = true;
            f.index_corr[r] = f.index[h as usize];
            f.index_corr[h as usize] = f.index[r];
        }
    }
    f
}

/// HTA's `ts` and `end` for a slice, in ns (see the module comment).
struct HtaClock {
    rounded: bool,
}

impl HtaClock {
    fn new(t: &Trace) -> HtaClock {
        let frac = |ns: &i64| ns.rem_euclid(1000) != 0;
        let rounded = t.slices.start_ns.iter().any(frac)
            || t.instants.ts_ns.iter().any(frac)
            || t.counters.ts_ns.iter().any(frac);
        HtaClock { rounded }
    }
    /// The float64 value Python's json reads for the decimal µs text.
    fn us_f64(ns: i64) -> f64 {
        if ns.rem_euclid(1000) == 0 {
            (ns / 1000) as f64
        } else {
            ns_to_micros_text(ns).parse().unwrap_or(f64::NAN)
        }
    }
    fn times(&self, start_ns: i64, dur_ns: i64) -> (i64, i64) {
        if !self.rounded {
            return (start_ns, start_ns.saturating_add(dur_ns));
        }
        let ts = Self::us_f64(start_ns);
        let end = ts + Self::us_f64(dur_ns);
        ((ts.ceil() as i64) * 1000, (end.floor() as i64) * 1000)
    }
}

/// Whether `args.stream` is written as a JSON number. HTA's `int()` turns
/// HIP runtime calls' `"stream": "0x0"` into -1 (a host row) where the
/// import reads the pointer as stream 0. A runtime call whose args text was
/// not kept counts as a string: HIP's hex pointers are the streams runtime
/// calls carry (CUDA's carry none). Ops keep theirs: Triton's `cpu_op`
/// rows carry an integer stream, which makes them device rows to HTA.
fn stream_is_a_number(args: &str) -> bool {
    let Some(k) = args.find("\"stream\"") else {
        return false;
    };
    let rest = args[k + 8..].trim_start();
    let Some(rest) = rest.strip_prefix(':') else {
        return false;
    };
    rest.trim_start()
        .starts_with(|c: char| c.is_ascii_digit() || c == '-')
}

fn hta(t: &Trace, mode: Mode) -> Frame {
    let s = &t.slices;
    let clock = HtaClock::new(t);
    let trace_cat = t.strings.lookup("Trace");
    let empty = t.strings.lookup("");
    let event_sync = t.strings.lookup("Event Sync");
    let context_sync = t.strings.lookup("Context Sync");
    // Rows in file order, as HTA's dataframe index.
    let mut order: Vec<u32> = (0..s.len() as u32)
        .filter(|&i| {
            let c = Some(s.cat[i as usize]);
            c != trace_cat && c != empty
        })
        .collect();
    crate::sort::by_key(&mut order, &|&i| s.file_order[i as usize]);

    let mut f = Frame {
        mode,
        rounded_to_us: clock.rounded,
        ..Frame::default()
    };
    let kernel_cats: Vec<Option<StrId>> = [
        "kernel",
        "Kernel",
        "gpu_memset",
        "Memset",
        "gpu_memcpy",
        "Memcpy",
        "mtia_ccp_events",
    ]
    .iter()
    .map(|c| t.strings.lookup(c))
    .collect();
    let mut gpu_like: Vec<bool> = Vec::with_capacity(order.len());
    for &i in &order {
        let i = i as usize;
        let (ts, end) = clock.times(s.start_ns[i], s.dur_ns[i]);
        let stream = if s.stream[i] == crate::model::NONE_I64
            || (s.category[i] == Category::Runtime && !stream_is_a_number(&t.slice_args_json(i)))
        {
            -1
        } else {
            s.stream[i]
        };
        let corr = if s.correlation[i] == crate::model::NONE_I64 {
            -1
        } else {
            s.correlation[i]
        };
        f.slice.push(i as u32);
        f.ts.push(ts);
        f.end.push(end);
        f.lane.push(stream);
        f.correlation.push(corr);
        f.partner.push(NO_ROW);
        f.partner_positive.push(false);
        f.index.push(s.file_order[i] as i64);
        f.index_corr.push(corr.min(0));
        f.device.push(0);
        f.kernel_type.push(hta_kernel_type(mode, t.slice_name(i)));
        f.idle_lane
            .push(stream != -1 && kernel_cats.contains(&Some(s.cat[i])));
        let name = Some(s.name[i]);
        gpu_like.push(
            (stream >= 0 && corr >= 0)
                || (name.is_some() && (name == event_sync || name == context_sync)),
        );
    }

    pair_correlations(&mut f, &gpu_like);

    // _filter_irrelevant_gpu_kernels.
    // Per string: 0 not seen, 1 names a step, 2 does not.
    let mut is_step = vec![0u8; t.strings.len()];
    let mut step_symbols = 0usize;
    for r in 0..f.len() {
        let i = f.slice[r] as usize;
        for id in [s.name[i], s.cat[i]] {
            let k = id.0 as usize;
            if k < is_step.len() && is_step[k] == 0 {
                let yes = t.str(id).contains("ProfilerStep");
                is_step[k] = if yes { 1 } else { 2 };
                step_symbols += usize::from(yes);
            }
        }
    }
    if step_symbols < 2 {
        return f;
    }
    let names_step = |r: usize| is_step.get(s.name[f.slice[r] as usize].0 as usize) == Some(&1);
    let last_step = (0..f.len())
        .filter(|&r| !gpu_like[r] && names_step(r))
        .max_by_key(|&r| f.ts[r]);
    let last_start = last_step.map(|r| f.ts[r]);
    f.dropped_from_step = last_step.map(|r| f.name(t, r).to_string());
    let kept_host = |r: usize| !gpu_like[r] && last_start.is_some_and(|ls| f.ts[r] < ls);
    let mut kept_corr: FxHashMap<i64, usize> = FxHashMap::default();
    for r in 0..f.len() {
        if kept_host(r) {
            *kept_corr.entry(f.correlation[r]).or_default() += 1;
        }
    }
    let mut out = Frame {
        mode: f.mode,
        rounded_to_us: f.rounded_to_us,
        dropped_from_step: f.dropped_from_step.clone(),
        ..Frame::default()
    };
    let mut new_index = vec![NO_ROW; f.len()];
    // HTA concatenates the kept device rows before the host rows.
    for r in 0..f.len() {
        if gpu_like[r] {
            let n = kept_corr.get(&f.correlation[r]).copied().unwrap_or(0);
            if n == 0 {
                out.dropped_device += 1;
            }
            for _ in 0..n {
                new_index[r] = out.len() as u32;
                out.push_row(&f, r);
            }
        }
    }
    for r in 0..f.len() {
        if !gpu_like[r] {
            if kept_host(r) {
                new_index[r] = out.len() as u32;
                out.push_row(&f, r);
            } else {
                out.dropped_host += 1;
            }
        }
    }
    // HTA keeps `index_correlation` from before the filter; a partner that
    // was dropped is missing from the joins that read it.
    for r in 0..out.len() {
        let p = out.partner[r];
        if p != NO_ROW {
            out.partner[r] = new_index[p as usize];
        }
    }
    out
}

/// HTA's `transform_correlation_to_index`: every host/device pair with the
/// same correlation (not -1); in merge order the last assignment wins, so a
/// host row takes its last device match and a device row its last host.
/// Each row's `index_corr` is then its partner's index.
fn pair_correlations(f: &mut Frame, gpu_like: &[bool]) {
    let mut last: FxHashMap<i64, (u32, u32)> = FxHashMap::default();
    for (r, &gpu) in gpu_like.iter().enumerate() {
        if f.correlation[r] == -1 {
            continue;
        }
        let e = last.entry(f.correlation[r]).or_insert((NO_ROW, NO_ROW));
        if gpu {
            e.1 = r as u32;
        } else {
            e.0 = r as u32;
        }
    }
    for (r, &gpu) in gpu_like.iter().enumerate() {
        if let Some(&(h, d)) = last
            .get(&f.correlation[r])
            .filter(|_| f.correlation[r] != -1)
        {
            if h != NO_ROW && d != NO_ROW {
                f.partner[r] = if gpu { h } else { d };
            }
        }
    }
    for r in 0..f.len() {
        let p = f.partner[r];
        if p != NO_ROW {
            f.index_corr[r] = f.index[p as usize];
        }
        f.partner_positive[r] = f.index_corr[r] > 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hta_kernel_types_follow_each_releases_regexes() {
        use KernelType::*;
        // (name, 0.5.0, 0.6.1)
        for (name, v05, v06) in [
            (
                "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)",
                Communication,
                Communication,
            ),
            ("ncclAllReduce", Computation, Communication),
            ("void ncclKernel_AllGather(x)", Computation, Communication),
            ("Memcpy HtoD (Pageable -> Device)", Memory, Memory),
            ("Memset (Device)", Memory, Memory),
            ("dma_copy", Memory, Memory),
            ("hipMemcpyAsync", Other, Communication),
            ("hccl_all_reduce", Computation, Communication),
            ("Stream Sync", Other, Other),
            ("Stream Wait Event", Computation, Other),
            ("pe_exe_42", Computation, Other),
            ("job_exe", Computation, Other),
            ("cudaLaunchKernel", Computation, Other),
            ("ProfilerStep#2", Computation, Computation),
            // `.` stops at a newline: a Sync on the second line does not count.
            ("gemm\nSync", Computation, Computation),
        ] {
            assert_eq!(hta_kernel_type(Mode::Hta05, name), v05, "0.5 {name}");
            assert_eq!(hta_kernel_type(Mode::Hta, name), v06, "0.6 {name}");
        }
    }

    #[test]
    fn exact_kernel_types_read_the_category_first() {
        for (category, name, kind) in [
            (Category::Memcpy, "anything", KernelType::Memory),
            (
                Category::Kernel,
                "ncclDevKernel_AllGather_RING_LL",
                KernelType::Communication,
            ),
            (
                Category::Kernel,
                "rcclGenericKernel",
                KernelType::Communication,
            ),
            (
                Category::DeviceWindow,
                "nc_exec_running",
                KernelType::Computation,
            ),
            (Category::DeviceSync, "Stream Sync", KernelType::Other),
        ] {
            assert_eq!(exact_kernel_type(category, name), kind, "{name}");
        }
    }

    #[test]
    fn hta_reads_a_hex_stream_string_as_no_stream() {
        assert!(stream_is_a_number(r#"{"stream": 7, "correlation": 1}"#));
        assert!(!stream_is_a_number(
            r#"{"stream": "0x0", "correlation": 1}"#
        ));
        assert!(!stream_is_a_number("{}"));
    }

    #[test]
    fn hta_rounds_start_up_and_end_down_in_float64() {
        let c = HtaClock { rounded: true };
        assert_eq!(c.times(1_500, 2_000), (2_000, 3_000));
        assert_eq!(c.times(1_200, 500), (2_000, 1_000));
        let exact = HtaClock { rounded: false };
        assert_eq!(exact.times(1_500, 2_000), (1_500, 3_500));
    }
}

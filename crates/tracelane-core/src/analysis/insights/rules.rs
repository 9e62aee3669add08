//! Every rule of the insights, what it looks for, and its thresholds with
//! where each comes from: the catalogue the report quotes ([`RULES`]).

/// A finding's share of the scope's wall time at or above which it is
/// `high`, and `medium` (our own cut-offs: a tenth of the run is worth a
/// change today; a fiftieth is worth a look).
pub const HIGH_SHARE: f64 = 0.10;
pub const MEDIUM_SHARE: f64 = 0.02;
/// At most this many slices and ranges per finding.
pub const MAX_EVIDENCE: usize = 64;

/// Fusion: at least this many eager ops in a chain.
pub const FUSION_MIN_OPS: usize = 3;
/// Launch-bound: the critical path's CPU, launch and kernel–kernel share,
/// and the device's idle share, at or above which a scope is launch-bound.
pub const LAUNCH_BOUND_HOST_SHARE: f64 = 0.5;
pub const LAUNCH_BOUND_IDLE_SHARE: f64 = 0.5;
/// Launch-bound: the share of launches whose kernel is shorter than its
/// launch call (HTA's "short kernel") at or above which launches dominate.
pub const LAUNCH_BOUND_SHORT_SHARE: f64 = 0.5;
/// Launch-bound: at least this many launches in the scope (our own: fewer
/// cannot add up to overhead worth capturing in a graph).
pub const LAUNCH_BOUND_MIN_LAUNCHES: u64 = 100;
/// Host-bound: the device idle at least this share of the scope, and at
/// least this share of its idle time host wait (HTA's idle-time
/// categories: no work queued when the previous kernel ended), our own
/// cut-offs as for launch-bound.
pub const HOST_BOUND_IDLE_SHARE: f64 = 0.5;
pub const HOST_BOUND_WAIT_SHARE: f64 = 0.5;
/// …and the runtime is synchronous when at least this share of launch
/// calls return only after their device work ends, the call either one of
/// [`SYNCHRONOUS_CALLS`] or that work at least half of it.
pub const HOST_BOUND_SYNC_SHARE: f64 = 0.5;
/// Runtime entries documented as synchronous: Neuron's `nrt_execute`
/// returns after the execution it submits (Neuron Runtime performance
/// tips: synchronous by default), whatever its own overhead around it.
pub const SYNCHRONOUS_CALLS: &[&str] = &["nrt_execute"];

/// Runtime calls that wait for an execution rather than start it
/// (Neuron's `kbl_exec_wait`: "host waiting for NC execution to finish",
/// Neuron Explorer's glossary): they outlast it by definition and say
/// nothing about whether the submission was synchronous.
pub const WAIT_CALLS: &[&str] = &["kbl_exec_wait"];
/// One-time work (lazy kernel loading, profiler buffers) with at least
/// this share of the scope's wall time on the critical path is a finding
/// (the medium-severity share: less does not change what the trace says).
pub const ONE_TIME_MIN_SHARE: f64 = MEDIUM_SHARE;
/// Layout conversions: their share of device time at or above which they
/// are a finding (Neuron Explorer's cut-off for transpose FLOPs, 10 %).
pub const LAYOUT_SHARE: f64 = 0.10;
/// Exposed communication: share of the device's span.
pub const EXPOSED_COMM_SHARE: f64 = 0.10;
/// Collective outliers: longer than this many times their name's median,
/// among at least [`COLLECTIVE_MIN_COUNT`] of that name.
pub const COLLECTIVE_OUTLIER_FACTOR: f64 = 2.0;
pub const COLLECTIVE_MIN_COUNT: usize = 4;
/// …and they are at most a tenth of their name: more is two populations
/// (message sizes) sharing a name, not outliers.
pub const COLLECTIVE_OUTLIER_MAX_SHARE_INV: usize = 10;
/// Neuron: transpose FLOPs' share of the Tensor engine's FLOPs.
pub const NEURON_TRANSPOSE_SHARE: f64 = 0.10;
/// Neuron: spill and reload bytes' share of HBM reads.
pub const NEURON_SPILL_SHARE: f64 = 0.25;
/// Neuron: MFU and MBU both below this (percent): neither roof is near.
pub const NEURON_LOW_UTILIZATION_PCT: f64 = 50.0;
/// Neuron: model FLOPs below this share of the Tensor engine's active
/// FLOPs (Neuron Explorer Summary Viewer: "Low Model FLOPS relative to
/// Active FLOPS (< 50%)").
pub const NEURON_MODEL_ACTIVE_SHARE: f64 = 0.5;
/// Neuron: DMA transfers smaller than this many bytes on average (the NKI
/// DMA bandwidth guide: payloads of ≥ 4 KiB are what saturate HBM
/// bandwidth; smaller ones pay the per-packet cost more often than they
/// move bytes).
pub const NEURON_DMA_MIN_BYTES: f64 = 4096.0;
/// Neuron engine imbalance: the busiest engine of a kind (DMA engines;
/// the elementwise engines Vector, Scalar, GpSimd) at least this many times
/// the median of its kind (our own cut-off: twice the median is work one
/// engine carries while its peers wait).
pub const NEURON_IMBALANCE_FACTOR: f64 = 2.0;
/// …and the busiest DMA engine busy for at least this share of the
/// execution window (our own: less is not what bounds the run).
pub const NEURON_DMA_IMBALANCE_BUSY_SHARE: f64 = 0.25;

/// Memory: one op, module or line of the program holding at least this
/// share of a device's peak dominates it (our own cut-off: more than
/// everything else at the peak together).
pub const MEMORY_PEAK_SHARE: f64 = 0.5;
/// Memory: a finding about fewer bytes than this (16 MiB) is not one
/// (our own floor: less is noise beside any accelerator's memory, and a
/// CPU capture's few allocations would otherwise "dominate" its peak).
pub const MEMORY_MIN_BYTES: i64 = 16 << 20;
/// Memory: the reserved peak at least this many times the allocated peak
/// is reserved memory the program never used at once (our own cut-off for
/// PyTorch's out-of-memory advice "If reserved but unallocated memory is
/// large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
/// `c10/cuda/CUDACachingAllocator.cpp`: a third of reserved left unused)…
pub const MEMORY_RESERVED_FACTOR: f64 = 1.5;
/// …and at least this many bytes (256 MiB, our own: less is small beside
/// any accelerator's memory and a few 20 MiB large-pool segments).
pub const MEMORY_RESERVED_MIN_BYTES: i64 = 256 << 20;
/// Memory: reserved memory released at least this many times in the scope
/// is a loop releasing it (our own cut-off: once is a deliberate cleanup;
/// the caching allocator itself releases only on empty_cache(), before
/// retrying a failed allocation, or past garbage_collection_threshold).
pub const MEMORY_CHURN_MIN_RELEASES: u64 = 2;
/// Memory: activations (PyTorch's memory-timeline category) at least this
/// share of the peak are worth recomputing (our own cut-off: a quarter of
/// the peak is what a checkpointed model typically gives back or more).
pub const MEMORY_ACTIVATION_SHARE: f64 = 0.25;

/// One rule: its id, what it looks for and where its thresholds come from.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    pub id: &'static str,
    pub name: &'static str,
    pub condition: &'static str,
}

/// Every rule, in the order the report lists its verdicts.
pub const RULES: &[Rule] = &[
    Rule {
        id: "fusion",
        name: "Fusion candidates",
        condition: "≥ 3 consecutive eager pointwise / reduction ops on one thread under the same annotation, called from Python (no op above them), one device event each (CPU-only captures: one dispatch each), input shapes broadcast-compatible (our own rule: what torch.compile's inductor fuses into one kernel)",
    },
    Rule {
        id: "launch_bound",
        name: "Launch-bound",
        condition: "CPU, launch-overhead and kernel–kernel edges ≥ 50 % of the critical path (HTA's edge labels), the device idle ≥ 50 % of the scope, ≥ 50 % of kernels shorter than their launch call (HTA's short kernels), ≥ 100 launches (our own cut-offs)",
    },
    Rule {
        id: "host_bound",
        name: "Host-bound",
        condition: "not launch-bound; the device idle ≥ 50 % of the scope and ≥ 50 % of its idle time host wait (HTA's idle-time category: nothing queued when the previous kernel ended) (our own cut-offs); a synchronous runtime when ≥ 50 % of launch calls return after their device work ends, the call nrt_execute (Neuron Runtime performance tips: synchronous by default) or that work at least half the call",
    },
    Rule {
        id: "pageable_copy",
        name: "Pageable copies",
        condition: "any host↔device copy from or to pageable memory (Nsight Systems' expert rule on pageable memcpy: the copy is staged and blocks the host)",
    },
    Rule {
        id: "blocking_sync",
        name: "Blocking calls",
        condition: "a call that blocks the host until the device is done (cuda/hip Device-, Stream-, EventSynchronize; synchronous copies such as cudaMemcpy, hipMemcpyWithStream), wherever it is, after or during which the device sits idle (Nsight Systems' synchronous-API rule); named by the op that made it (.item(), nonzero, .cpu()) and its Python caller; a wait with nothing queued on the device is said to be on work not in this trace",
    },
    Rule {
        id: "layout_conversion",
        name: "Layout conversions",
        condition: "copy and layout kernels (data movement's rules: copy-family ops' kernels, nchwToNhwc / transpose / permute) ≥ 10 % of device time (Neuron Explorer's cut-off for transpose FLOPs)",
    },
    Rule {
        id: "exposed_communication",
        name: "Exposed communication",
        condition: "communication not under computation ≥ 10 % of a device's span (our own cut-off; overlap as HTA's comm_comp_overlap)",
    },
    Rule {
        id: "collective_outlier",
        name: "Collective outliers",
        condition: "a collective longer than 2× the median of its name, among ≥ 4 of that name, the long ones at most a tenth of them (our own cut-offs; Neuron Explorer marks collective outliers against their group)",
    },
    Rule {
        id: "straggler_rank",
        name: "Straggler rank",
        condition: "in a run of several ranks, one rank the last to arrive at collectives in half the steps or more, and at least two (our own cut-off: a rank late that often is slow, not unlucky; the ranks report's straggler per step)",
    },
    Rule {
        id: "warmup",
        name: "Warm-up and compile",
        condition: "leading steps longer than 1.5× the steady median (tracelane's warm-up rule, analysis::warmup)",
    },
    Rule {
        id: "one_time_work",
        name: "One-time loading in the capture",
        condition: "Kineto's overhead records (the CUDA driver's lazy module and function loading on a kernel's first launch, the profiler's activity buffers) with ≥ 2 % of the scope's wall time on the critical path (our own cut-off: the medium-severity share); every other rule's gain leaves this time out",
    },
    Rule {
        id: "neuron_transpose",
        name: "Transpose FLOPs",
        condition: "transpose FLOPs > 10 % of the hardware (Tensor-engine) FLOPs: the engine moves data instead of computing (Neuron Explorer Summary Viewer)",
    },
    Rule {
        id: "neuron_spill",
        name: "Spill and reload",
        condition: "spill and reload bytes > 25 % of HBM reads (Neuron Explorer Summary Viewer)",
    },
    Rule {
        id: "neuron_active_flops",
        name: "Model vs active FLOPs",
        condition: "model FLOPs (Tensor-engine FLOPs less transposes) < 50 % of the active FLOPs (peak FLOP/s × the Tensor engine's active time, ActiveTime) (Neuron Explorer Summary Viewer)",
    },
    Rule {
        id: "neuron_dma_size",
        name: "Small DMA transfers",
        condition: "average DMA packet < 4 KiB (the Summary's average_dma_size; 4 KiB from the NKI DMA bandwidth guide: smaller payloads leave the DMA engines paying per-packet cost instead of moving bytes)",
    },
    Rule {
        id: "neuron_engine_imbalance",
        name: "Engine imbalance",
        condition: "the busiest DMA engine ≥ 2× the median of the core's DMA engines and busy ≥ 25 % of the window; or an elementwise engine (Vector, Scalar, GpSimd) busier than the Tensor engine and ≥ 2× the median of the other elementwise engines (our own cut-offs)",
    },
    Rule {
        id: "neuron_utilization",
        name: "Low utilisation",
        condition: "MFU and MBU both < 50 % (the Summary table's definitions): neither the compute nor the memory roof is near, the engines wait (our own cut-off)",
    },
    Rule {
        id: "neuron_model_switch",
        name: "Model switching",
        condition: "model switches (nc_model_switch / nrt_model_switch: a NEFF swapped onto a NeuronCore) in the scope with time on the critical path (any: a compiled graph switches none)",
    },
    Rule {
        id: "neuron_host_copies",
        name: "Host copies on the critical path",
        condition: "host↔device copies (dmem_buf_copyin / copyout, nrt_tensor_write / read) with ≥ 2 % of the scope's wall time on the critical path (our own cut-off: the medium-severity share)",
    },
    Rule {
        id: "neuron_barrier_wait",
        name: "Collective barrier waits",
        condition: "collective barrier waits (cc_exec_barrier on the device, enc_barrier on the host) with ≥ 2 % of the scope's wall time on the critical path (our own cut-off)",
    },
    Rule {
        id: "neuron_hbm_spill",
        name: "HBM spill",
        condition: "DRAM spill in the system profile's HBM usage (device_mem_usage dram_spill_bytes or dma_rings_spill_bytes > 0: SBUF evicted to HBM, Neuron Explorer's glossary); gain: each spilled byte saved and reloaded once per execution at Trainium's HBM bandwidth, a lower bound",
    },
    Rule {
        id: "memory_peak_holder",
        name: "Peak held by one op",
        condition: "at a device's peak of allocated memory, one op's (else one nn.Module's) live allocations, or one line of the program's in an allocator snapshot, hold ≥ 50 % of it and ≥ 16 MiB (our own cut-offs: more than all the rest, and not noise); its temporaries when the peak falls while the op runs",
    },
    Rule {
        id: "memory_reserved_unused",
        name: "Reserved but never allocated",
        condition: "the allocator's reserved peak ≥ 1.5× its allocated peak and ≥ 256 MiB beyond it (our own cut-offs for PyTorch's out-of-memory advice: \"If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\")",
    },
    Rule {
        id: "memory_segment_churn",
        name: "Reserved memory released and reserved again",
        condition: "reserved memory released ≥ 2 times on a device (Total Reserved falling between [memory] records, or a run of segment_free / segment_unmap entries in an allocator snapshot; the caching allocator releases only on empty_cache(), an allocation retry or garbage_collection_threshold) (our own cut-off); its time: cudaMalloc / cudaFree calls on the critical path",
    },
    Rule {
        id: "memory_oom",
        name: "Out of memory",
        condition: "an oom entry in an allocator snapshot, explained: the request against the free bytes inside reserved segments and the largest free block (fragmentation, capacity of the device or of this process, or a pool the request could not use)",
    },
    Rule {
        id: "memory_recompute",
        name: "Activations to recompute",
        condition: "activations (PyTorch's memory-timeline category, from export_memory_timeline's raw file) ≥ 25 % of a device's peak and ≥ 16 MiB (our own cut-offs): activation checkpointing would recompute them in backward instead",
    },
];

//! A deterministic generator of Kineto-shaped traces for benchmarks: training
//! steps of nested ops on a host thread, `cudaLaunchKernel` calls with
//! correlation ids, kernels and copies on device streams, `ac2g` flows,
//! `[memory]` instants — the shapes and proportions of a real GPU trace.

use std::io::{self, Write};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const OPS: &[(&str, &str, &str)] = &[
    ("aten::linear", "aten::addmm", "ampere_sgemm_128x64_tn"),
    ("aten::layer_norm", "aten::native_layer_norm", "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)"),
    ("aten::gelu", "aten::gelu", "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)"),
    ("aten::add", "aten::add", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"),
    ("aten::softmax", "aten::_softmax", "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(float*, float const*, int, int, int, bool const*, int, bool)"),
    ("aten::mul", "aten::mul", "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3>)"),
];

/// Writes a trace of about `target_bytes` bytes; returns the bytes written.
pub fn write_kineto_trace(out: &mut impl Write, target_bytes: u64, seed: u64) -> io::Result<u64> {
    let mut w = Counting { inner: out, n: 0 };
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let (pid, tid) = (4242u32, 4242u32);
    write!(
        w,
        "{{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [{{\"id\": 0, \"name\": \"NVIDIA H100\", \"totalGlobalMem\": 85000000000}}],\n  \"record_shapes\": 1,\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": 1700000000000000000,\n  \"traceEvents\": [\n"
    )?;
    let meta = [
        format!(
            r#"{{"ph": "M", "name": "process_name", "pid": {pid}, "tid": 0, "args": {{"name": "python"}}}}"#
        ),
        format!(
            r#"{{"ph": "M", "name": "process_labels", "pid": {pid}, "tid": 0, "args": {{"labels": "CPU"}}}}"#
        ),
        format!(
            r#"{{"ph": "M", "name": "thread_name", "pid": {pid}, "tid": {tid}, "args": {{"name": "thread {tid} (python)"}}}}"#
        ),
        r#"{"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "python"}}"#
            .to_string(),
        r#"{"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}}"#
            .to_string(),
        r#"{"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}}"#
            .to_string(),
    ];
    for m in &meta {
        writeln!(w, "  {m},")?;
    }
    let mut ts_ns: u64 = 5_000_000_000_000;
    let mut gpu_ns: u64 = ts_ns;
    let mut ext: u64 = 1;
    let mut corr: u64 = 1;
    let mut step = 0u64;
    let us = |ns: u64| format!("{}.{:03}", ns / 1000, ns % 1000);
    while w.n < target_bytes {
        let step_start = ts_ns;
        let step_ext = ext;
        ext += 1;
        let mut body: Vec<String> = Vec::new();
        ts_ns += 2_000;
        for _ in 0..40 {
            let (outer, inner, kernel) = OPS[rng.below(OPS.len() as u64) as usize];
            let (m, k) = (64 * (1 + rng.below(32)), 64 * (1 + rng.below(64)));
            let outer_start = ts_ns;
            let outer_ext = ext;
            ext += 1;
            ts_ns += 1_000 + rng.below(3_000);
            let inner_start = ts_ns;
            let inner_ext = ext;
            ext += 1;
            ts_ns += 500 + rng.below(1_000);
            let launch_start = ts_ns;
            let launch_dur = 3_000 + rng.below(4_000);
            let c = corr;
            corr += 1;
            ts_ns += launch_dur + 300;
            let inner_dur = ts_ns - inner_start;
            ts_ns += 200 + rng.below(800);
            let outer_dur = ts_ns - outer_start;
            gpu_ns = gpu_ns.max(launch_start + 5_000) + rng.below(2_000);
            let kdur = 2_000 + rng.below(60_000);
            body.push(format!(
                r#"{{"ph": "X", "cat": "cpu_op", "name": "{outer}", "pid": {pid}, "tid": {tid}, "ts": {}, "dur": {}, "args": {{"External id": {outer_ext}, "Record function id": 0, "Sequence number": {}, "Fwd thread id": 0, "Input type": ["float", "float"], "Input Strides": [[{k}, 1], [1, {k}]], "Input Dims": [[{m}, {k}], [{k}, {m}]], "Ev Idx": {}}}}}"#,
                us(outer_start), us(outer_dur), outer_ext, outer_ext
            ));
            body.push(format!(
                r#"{{"ph": "X", "cat": "cpu_op", "name": "{inner}", "pid": {pid}, "tid": {tid}, "ts": {}, "dur": {}, "args": {{"External id": {inner_ext}, "Record function id": 0, "Input type": ["float", "float"], "Input Strides": [[{k}, 1], [1, {k}]], "Input Dims": [[{m}, {k}], [{k}, {m}]], "Ev Idx": {}}}}}"#,
                us(inner_start), us(inner_dur), inner_ext
            ));
            body.push(format!(
                r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": {pid}, "tid": {tid}, "ts": {}, "dur": {}, "args": {{"External id": {inner_ext}, "cbid": 211, "correlation": {c}}}}}"#,
                us(launch_start), us(launch_dur)
            ));
            body.push(format!(
                r#"{{"ph": "s", "id": {c}, "pid": {pid}, "tid": {tid}, "ts": {}, "cat": "ac2g", "name": "ac2g"}}"#,
                us(launch_start)
            ));
            body.push(format!(
                r#"{{"ph": "X", "cat": "kernel", "name": "{kernel}", "pid": 0, "tid": 7, "ts": {}, "dur": {}, "args": {{"External id": {inner_ext}, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": {c}, "registers per thread": 64, "shared memory": 16384, "blocks per SM": 1.2, "warps per SM": 4.8, "grid": [{}, 1, 1], "block": [256, 1, 1], "est. achieved occupancy %": 50}}}}"#,
                us(gpu_ns), us(kdur), m / 64
            ));
            body.push(format!(
                r#"{{"ph": "f", "id": {c}, "pid": 0, "tid": 7, "ts": {}, "cat": "ac2g", "name": "ac2g", "bp": "e"}}"#,
                us(gpu_ns)
            ));
            if rng.below(4) == 0 {
                body.push(format!(
                    r#"{{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": {pid}, "tid": {tid}, "ts": {}, "args": {{"Total Reserved": 2097152, "Total Allocated": {}, "Bytes": {}, "Addr": {}, "Device Id": 0, "Device Type": 1}}}}"#,
                    us(inner_start + 100),
                    rng.below(1 << 30),
                    m * k * 4,
                    140_000_000_000_000u64 + rng.below(1 << 30)
                ));
            }
            gpu_ns += kdur;
        }
        ts_ns += 5_000;
        let step_dur = ts_ns - step_start;
        writeln!(
            w,
            r#"  {{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{step}", "pid": {pid}, "tid": {tid}, "ts": {}, "dur": {}, "args": {{"External id": {step_ext}, "Record function id": 0, "Ev Idx": {step_ext}}}}},"#,
            us(step_start),
            us(step_dur)
        )?;
        for e in &body {
            writeln!(w, "  {e},")?;
        }
        step += 1;
    }
    write!(
        w,
        "  {{\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"\", \"tid\": \"\", \"ts\": {}}}\n  ],\n  \"traceName\": \"synthetic.json\"\n}}\n",
        us(ts_ns)
    )?;
    Ok(w.n)
}

struct Counting<'a, W: Write> {
    inner: &'a mut W,
    n: u64,
}

impl<W: Write> Write for Counting<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let k = self.inner.write(buf)?;
        self.n += k as u64;
        Ok(k)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A data-parallel training run of `ranks` GPUs for [`write_rank_set`]:
/// every rank runs the same steps — an input copy, a forward pass, a
/// backward pass whose gradient buckets are all-reduced on a
/// communication stream while the next bucket computes (DDP's overlap), an
/// all-gather, the optimizer waiting on the gradients, and a `loss.item()`
/// that synchronises the host — with rank `straggler`'s kernels
/// `straggler_factor` times slower, so that every other rank's collective
/// kernels start early and wait for it.
#[derive(Clone, Debug)]
pub struct RankSet {
    pub ranks: usize,
    /// Steps are added until rank 0's file reaches this size (at least
    /// `min_steps`).
    pub bytes_per_rank: u64,
    pub min_steps: usize,
    pub seed: u64,
    pub straggler: usize,
    pub straggler_factor: f64,
}

impl RankSet {
    pub fn new(ranks: usize, bytes_per_rank: u64, seed: u64) -> RankSet {
        RankSet {
            ranks,
            bytes_per_rank,
            min_steps: 4,
            seed,
            straggler: ranks.saturating_sub(1) / 2 + usize::from(ranks > 2),
            straggler_factor: 1.6,
        }
        .clamped()
    }

    fn clamped(mut self) -> RankSet {
        self.straggler = self.straggler.min(self.ranks.saturating_sub(1));
        self
    }
}

/// The collectives of one step: (Collective name, kernel name, elements).
const STEP_COLLECTIVES: &[(&str, &str, u64)] = &[
    (
        "allreduce",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
        6_553_600,
    ),
    (
        "allreduce",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
        6_553_600,
    ),
    (
        "allreduce",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
        3_276_800,
    ),
    (
        "allgather",
        "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
        262_144,
    ),
];

/// Link speed the collectives' transfer times are drawn from (bus bytes/s).
const SYNTH_BUS_BYTES_PER_S: f64 = 100e9;

struct RankWriter {
    rank: usize,
    pid: u32,
    tid: u32,
    /// Host clock, compute stream (7) free at, communication stream (20) free at.
    cpu: u64,
    compute: u64,
    comm: u64,
    ext: u64,
    corr: u64,
    rng: Rng,
    /// The pending collective's (launch start, kernel start).
    pending: Option<(u64, u64)>,
    body: Vec<String>,
    written: u64,
}

fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

impl RankWriter {
    fn next_ext(&mut self) -> u64 {
        self.ext += 1;
        self.ext
    }
    fn next_corr(&mut self) -> u64 {
        self.corr += 1;
        self.corr
    }

    fn cpu_op(&mut self, name: &str, start: u64, end: u64, ext: u64, dims: &str) {
        let (pid, tid) = (self.pid, self.tid);
        self.body.push(format!(
            r#"{{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": {pid}, "tid": {tid}, "ts": {}, "dur": {}, "args": {{"External id": {ext}, "Record function id": 0, "Input Dims": {dims}, "Ev Idx": {ext}}}}}"#,
            us(start),
            us(end - start)
        ));
    }

    fn runtime(&mut self, name: &str, cbid: u32, start: u64, dur: u64, ext: u64, corr: u64) {
        let (pid, tid) = (self.pid, self.tid);
        self.body.push(format!(
            r#"{{"ph": "X", "cat": "cuda_runtime", "name": "{name}", "pid": {pid}, "tid": {tid}, "ts": {}, "dur": {}, "args": {{"External id": {ext}, "cbid": {cbid}, "correlation": {corr}}}}}"#,
            us(start),
            us(dur)
        ));
    }

    /// A device event with its flow from the launch.
    #[allow(clippy::too_many_arguments)]
    fn device(
        &mut self,
        cat: &str,
        name: &str,
        stream: u32,
        launch: u64,
        start: u64,
        dur: u64,
        ext: u64,
        corr: u64,
        extra: &str,
    ) {
        let (pid, tid) = (self.pid, self.tid);
        self.body.push(format!(
            r#"{{"ph": "s", "id": {corr}, "pid": {pid}, "tid": {tid}, "ts": {}, "cat": "ac2g", "name": "ac2g"}}"#,
            us(launch)
        ));
        self.body.push(format!(
            r#"{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": 0, "tid": {stream}, "ts": {}, "dur": {}, "args": {{"External id": {ext}, "device": 0, "context": 1, "stream": {stream}, "correlation": {corr}{extra}}}}}"#,
            us(start),
            us(dur)
        ));
        self.body.push(format!(
            r#"{{"ph": "f", "id": {corr}, "pid": 0, "tid": {stream}, "ts": {}, "cat": "ac2g", "name": "ac2g", "bp": "e"}}"#,
            us(start)
        ));
    }

    /// An op launching one kernel on the compute stream (after `after`).
    fn compute_op(&mut self, op: usize, kernel_ns: u64, after: u64) {
        let (outer, inner, kernel) = OPS[op % OPS.len()];
        let (outer_ext, inner_ext) = (self.next_ext(), self.next_ext());
        let outer_start = self.cpu;
        let inner_start = outer_start + 1_000 + self.rng.below(2_000);
        let launch = inner_start + 500 + self.rng.below(800);
        let launch_dur = 3_000 + self.rng.below(2_000);
        let inner_end = launch + launch_dur + 300;
        let outer_end = inner_end + 200 + self.rng.below(500);
        self.cpu = outer_end;
        let dims = "[[1024, 1024], [1024, 1024]]";
        self.cpu_op(outer, outer_start, outer_end, outer_ext, dims);
        self.cpu_op(inner, inner_start, inner_end, inner_ext, dims);
        let corr = self.next_corr();
        self.runtime("cudaLaunchKernel", 211, launch, launch_dur, inner_ext, corr);
        let start = self.compute.max(after).max(launch + 4_000);
        self.device(
            "kernel",
            kernel,
            7,
            launch,
            start,
            kernel_ns,
            inner_ext,
            corr,
            r#", "registers per thread": 64, "shared memory": 16384, "grid": [132, 1, 1], "block": [256, 1, 1], "est. achieved occupancy %": 50"#,
        );
        self.compute = start + kernel_ns;
    }

    /// `aten::copy_` of a batch to the device or of a scalar back.
    fn copy(&mut self, name: &str, bytes: u64, gbps: f64, sync: bool) {
        let ext = self.next_ext();
        let start = self.cpu;
        let launch = start + 2_000;
        let corr = self.next_corr();
        let dev_start = self.compute.max(launch + 3_000);
        let dur = ((bytes as f64 / gbps) as u64).max(1_000);
        let launch_dur = 8_000;
        let mut end = launch + launch_dur;
        self.runtime("cudaMemcpyAsync", 41, launch, launch_dur, ext, corr);
        self.device(
            "gpu_memcpy",
            name,
            7,
            launch,
            dev_start,
            dur,
            ext,
            corr,
            &format!(r#", "bytes": {bytes}, "memory bandwidth (GB/s)": {gbps:.3}"#),
        );
        self.compute = dev_start + dur;
        if sync {
            let sync_ext = self.next_ext();
            let sync_corr = self.next_corr();
            let sync_end = (end + 2_000).max(self.compute + 3_000);
            self.runtime(
                "cudaStreamSynchronize",
                131,
                end + 1_000,
                sync_end - end - 1_000,
                sync_ext,
                sync_corr,
            );
            end = sync_end;
        }
        end += 1_000;
        self.cpu_op("aten::copy_", start, end, ext, "[[]]");
        self.cpu = end + 2_000;
    }

    /// The host side of a collective and the kernel's arrival; the kernel
    /// is written by [`RankWriter::finish_collective`] once every rank's
    /// arrival is known.
    fn launch_collective(&mut self) -> u64 {
        let launch = self.cpu + 9_000;
        let arrival = self.comm.max(self.compute).max(launch + 5_000);
        self.pending = Some((launch, arrival));
        arrival
    }

    #[allow(clippy::too_many_arguments)]
    fn finish_collective(
        &mut self,
        name: &str,
        kernel: &str,
        nelems: u64,
        world: usize,
        ranks_list: &str,
        end: u64,
        c10d: &str,
    ) {
        let (launch, arrival) = self.pending.take().expect("a launched collective");
        let out = if name == "allgather" {
            nelems * world as u64
        } else {
            nelems
        };
        let meta = format!(
            r#""Collective name": "{name}", "dtype": "Float", "In msg nelems": {nelems}, "Out msg nelems": {out}, "Group size": {world}, "In split size": "[]", "Out split size": "[]", "Global rank start": 0, "Global rank stride": 1, "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "{ranks_list}""#
        );
        let (c10d_ext, rpc_ext) = (self.next_ext(), self.next_ext());
        let c10d_start = self.cpu;
        let rpc_start = c10d_start + 3_000;
        let launch_dur = 6_000;
        let rpc_end = launch + launch_dur + 1_000;
        let c10d_end = rpc_end + 2_000;
        let (pid, tid) = (self.pid, self.tid);
        self.cpu_op(c10d, c10d_start, c10d_end, c10d_ext, "[[[]]]");
        self.body.push(format!(
            r#"{{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": {pid}, "tid": {tid}, "ts": {}, "dur": {}, "args": {{"External id": {rpc_ext}, "Record function id": 0, {meta}, "Ev Idx": {rpc_ext}}}}}"#,
            us(rpc_start),
            us(rpc_end - rpc_start)
        ));
        let corr = self.next_corr();
        self.runtime("cudaLaunchKernel", 211, launch, launch_dur, rpc_ext, corr);
        self.device(
            "kernel",
            kernel,
            20,
            launch,
            arrival,
            end - arrival,
            rpc_ext,
            corr,
            &format!(
                r#", "registers per thread": 96, "shared memory": 87568, "grid": [16, 1, 1], "block": [640, 1, 1], "est. achieved occupancy %": 0, {meta}"#
            ),
        );
        self.comm = end;
        self.cpu = c10d_end + 1_000;
    }

    fn flush_step(
        &mut self,
        out: &mut impl Write,
        step: usize,
        start: u64,
        end: u64,
    ) -> io::Result<()> {
        let ext = self.next_ext();
        let (pid, tid) = (self.pid, self.tid);
        let mut n = 0u64;
        let line = format!(
            r#"  {{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{step}", "pid": {pid}, "tid": {tid}, "ts": {}, "dur": {}, "args": {{"External id": {ext}, "Record function id": 0, "Ev Idx": {ext}}}}},"#,
            us(start),
            us(end - start)
        );
        writeln!(out, "{line}")?;
        n += line.len() as u64 + 1;
        for e in self.body.drain(..) {
            writeln!(out, "  {e},")?;
            n += e.len() as u64 + 4;
        }
        self.written += n;
        Ok(())
    }
}

/// Writes one Kineto trace per rank of a [`RankSet`] (`outs[r]` is rank
/// r's, with `distributedInfo`): the collectives are consistent across
/// ranks (a kernel ends when the last rank's has arrived plus its transfer
/// time), so the set has one straggler others wait for. Returns the bytes
/// written per rank.
pub fn write_rank_set<W: Write>(outs: &mut [W], spec: &RankSet) -> io::Result<Vec<u64>> {
    let world = outs.len();
    let ranks_list = format!(
        "[{}]",
        (0..world)
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let base_ns: u64 = 1_790_000_000_000_000_000;
    let mut writers: Vec<RankWriter> = (0..world)
        .map(|rank| {
            let mut rng = Rng((spec.seed ^ (rank as u64 + 1).wrapping_mul(0x9E37_79B9))
                .wrapping_mul(0x2545_F491)
                | 1);
            let start = 5_000_000_000_000 + rng.below(200_000);
            RankWriter {
                rank,
                pid: 1000 + rank as u32,
                tid: 1000 + rank as u32,
                cpu: start,
                compute: start,
                comm: start,
                ext: 0,
                corr: 0,
                rng,
                pending: None,
                body: Vec::new(),
                written: 0,
            }
        })
        .collect();
    for (w, out) in writers.iter_mut().zip(outs.iter_mut()) {
        let header = format!(
            "{{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [{{\"id\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85031714816, \"computeMajor\": 9, \"computeMinor\": 0, \"numSms\": 132}}],\n  \"distributedInfo\": {{\"backend\": \"nccl\", \"rank\": {}, \"world_size\": {world}, \"pg_count\": 1, \"pg_config\": [{{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", \"pg_size\": {world}, \"ranks\": {ranks_list}}}], \"nccl_version\": \"2.21.5\"}},\n  \"record_shapes\": 1,\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": {base_ns},\n  \"traceEvents\": [\n",
            w.rank
        );
        out.write_all(header.as_bytes())?;
        w.written += header.len() as u64;
        let (pid, tid) = (w.pid, w.tid);
        for m in [
            format!(r#"{{"ph": "M", "name": "process_name", "pid": {pid}, "tid": 0, "args": {{"name": "python"}}}}"#),
            format!(r#"{{"ph": "M", "name": "thread_name", "pid": {pid}, "tid": {tid}, "args": {{"name": "thread {tid} (python)"}}}}"#),
            r#"{"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "python"}}"#.to_string(),
            r#"{"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}}"#.to_string(),
            r#"{"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}}"#.to_string(),
            r#"{"ph": "M", "name": "thread_name", "pid": 0, "tid": 20, "args": {"name": "stream 20"}}"#.to_string(),
        ] {
            writeln!(out, "  {m},")?;
            w.written += m.len() as u64 + 4;
        }
    }
    let slow = |r: usize| {
        if r == spec.straggler {
            spec.straggler_factor
        } else {
            1.0
        }
    };
    let mut step = 0usize;
    while step < spec.min_steps || writers[0].written < spec.bytes_per_rank {
        // The model's kernels: the same on every rank, with a little
        // per-rank jitter; drawn per step from the seed alone.
        let mut model =
            Rng((spec.seed ^ (step as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03)) | 1);
        let forward: Vec<(usize, u64)> = (0..12)
            .map(|_| {
                (
                    model.below(OPS.len() as u64) as usize,
                    20_000 + model.below(180_000),
                )
            })
            .collect();
        let backward: Vec<Vec<(usize, u64)>> = (0..3)
            .map(|_| {
                (0..6)
                    .map(|_| {
                        (
                            model.below(OPS.len() as u64) as usize,
                            40_000 + model.below(300_000),
                        )
                    })
                    .collect()
            })
            .collect();
        let starts: Vec<u64> = writers.iter().map(|w| w.cpu).collect();
        for (r, w) in writers.iter_mut().enumerate() {
            w.copy("Memcpy HtoD (Pageable -> Device)", 8 << 20, 12.0, false);
            for &(op, ns) in &forward {
                let jitter = 1.0 + w.rng.below(30) as f64 / 1000.0;
                w.compute_op(op, (ns as f64 * slow(r) * jitter) as u64, 0);
            }
        }
        for (c, bucket) in backward.iter().enumerate() {
            for (r, w) in writers.iter_mut().enumerate() {
                for &(op, ns) in bucket {
                    let jitter = 1.0 + w.rng.below(30) as f64 / 1000.0;
                    w.compute_op(op, (ns as f64 * slow(r) * jitter) as u64, 0);
                }
            }
            collective(&mut writers, c, &ranks_list)?;
        }
        collective(&mut writers, 3, &ranks_list)?;
        for (r, w) in writers.iter_mut().enumerate() {
            // The optimizer waits for the gradients (the comm stream).
            let ext = w.next_ext();
            let corr = w.next_corr();
            let at = w.cpu;
            w.runtime("cudaStreamWaitEvent", 147, at, 2_000, ext, corr);
            w.cpu += 3_000;
            let after = w.comm;
            for _ in 0..2 {
                let jitter = 1.0 + w.rng.below(30) as f64 / 1000.0;
                w.compute_op(3, (30_000.0 * slow(r) * jitter) as u64, after);
            }
            w.copy("Memcpy DtoH (Device -> Pageable)", 4, 0.5, true);
        }
        for (w, out) in writers.iter_mut().zip(outs.iter_mut()) {
            let end = w.cpu;
            w.flush_step(out, step, starts[w.rank], end)?;
            w.cpu += 20_000;
        }
        step += 1;
    }
    let mut sizes = Vec::with_capacity(world);
    for (w, out) in writers.iter_mut().zip(outs.iter_mut()) {
        let tail = format!(
            "  {{\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"\", \"tid\": \"\", \"ts\": {}}}\n  ],\n  \"traceName\": \"synthetic_rank{}.json\"\n}}\n",
            us(w.cpu),
            w.rank
        );
        out.write_all(tail.as_bytes())?;
        sizes.push(w.written + tail.len() as u64);
    }
    Ok(sizes)
}

/// Collective `c` of a step on every rank: each kernel starts when its
/// rank arrives and ends when the last rank has arrived plus the transfer
/// (ring all-reduce moves 2(n−1)/n of the buffer, all-gather (n−1)/n of
/// its output).
fn collective(writers: &mut [RankWriter], c: usize, ranks_list: &str) -> io::Result<()> {
    let world = writers.len();
    let (name, kernel, nelems) = STEP_COLLECTIVES[c];
    let last = writers
        .iter_mut()
        .map(|w| w.launch_collective())
        .max()
        .unwrap_or(0);
    let n = world as f64;
    let bus_bytes = match name {
        "allgather" => nelems as f64 * 4.0 * n * (n - 1.0) / n,
        _ => nelems as f64 * 4.0 * 2.0 * (n - 1.0) / n,
    };
    let transfer = (bus_bytes / SYNTH_BUS_BYTES_PER_S * 1e9) as u64 + 8_000;
    let c10d = if name == "allgather" {
        "c10d::allgather_"
    } else {
        "c10d::allreduce_"
    };
    for w in writers.iter_mut() {
        w.finish_collective(
            name,
            kernel,
            nelems,
            world,
            ranks_list,
            last + transfer,
            c10d,
        );
    }
    Ok(())
}

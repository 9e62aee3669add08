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

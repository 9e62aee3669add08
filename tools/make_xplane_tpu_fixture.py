#!/usr/bin/env python3
"""Writes tests/fixtures/xplane/tpu_rules.xplane.pb: a small XSpace shaped
like a JAX TPU profile, each event placed to exercise one rule of xprof's
TPU op tables (`ConvertTensorCoreDeviceTraceXPlaneToOpMetricsDb`), so that
xprof's own answer for it (tools/xprof_oracle.py, tpu_rules.xprof.json
beside it) checks tracelane's reading of each rule. No public TPU
XPlane file could be found to test on; the plane and stat names are
tsl's (`xplane_schema.cc`), the op events carry their op's identity in
their metadata's stats, as the TPU runtime writes them.

- /device:TPU:0 (a TensorCore):
  - `Steps`: a step that starts before the first op and ends after the
    last (a plane's time spans its steps and its op lines' events);
  - `XLA Modules`: the program's run (not an op line: not read);
  - `XLA Ops`: a root event (`symbol_id` 0: not an op) enclosing them
    all; a fusion run twice; a while loop whose children and grandchild
    are ops too (self time: less its direct children's time); an op
    without a `symbol_id` (not counted, its time still spans the plane);
    a custom call with FLOPs and bytes (summed, not multiplied); an
    op whose metadata has no display name (its name is the op's name),
    with its device's own times (`device_offset_ps`,
    `device_duration_ps`: its time and span for the tables);
  - `Framework Ops`: an op line too: its event (no program) starts the
    plane's time;
  - `XLA TraceMe` and `Async XLA Ops`: not op lines, their events
    outside the others (must not widen the plane's time).
- /device:TPU:1: the fusion once more (planes add up).
- /device:TPU:0 SparseCore 0: SparseCore ops without their modules
  (xprof keeps them only as a TensorCore op's children: in no table).
- /host:CPU: a TensorFlow-named host op and a Python frame.

Run from the repository root: python3 tools/make_xplane_tpu_fixture.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_xplane_gpu_fixture import PROGRAM, US, Plane, f, msg  # noqa: E402

OUT = "tests/fixtures/xplane/tpu_rules.xplane.pb"


class TpuPlane(Plane):
    """A plane whose event metadata carry a display name and stats."""

    def op(self, name, display=None, **stats):
        key = (name, display)
        if key not in self.event_ids:
            eid = len(self.event_ids) + 1
            self.event_ids[key] = eid
            body = msg(f(1, eid), f(2, name), f(4, display) if display else b"",
                       *[f(5, self.stat(k, v)) for k, v in stats.items()])
            self.event_meta.append(f(4, msg(f(1, eid), f(2, body))))
        return self.event_ids[key]

    def op_line(self, lid, name, ts_ns, events):
        """events: (metadata id, offset_ps, duration_ps[, event stats])."""
        body = msg(f(1, lid), f(2, name), f(3, ts_ns))
        for eid, off_ps, dur_ps, *stats in events:
            stats = stats[0] if stats else {}
            body += f(4, msg(f(1, eid), f(2, off_ps), f(3, dur_ps),
                             *[f(4, self.stat(k, v)) for k, v in stats.items()]))
        self.lines.append(f(3, body))


def hlo(p, name, symbol, category, tf_op, display=True, **extra):
    text = f"%{name} = f32[8,32]{{1,0}} {category}(f32[8,32]{{1,0}} %p0)"
    return p.op(text if display else name, name if display else None,
                program_id=PROGRAM, symbol_id=symbol, hlo_category=category,
                tf_op=tf_op, **extra)


def tensor_core_0():
    tpu = TpuPlane(1, "/device:TPU:0")
    tpu.plane_stats = [tpu.stat("peak_teraflops_per_second", 197.0),
                       tpu.stat("peak_hbm_bw_gigabytes_per_second", 819.0)]
    step = tpu.op("1", group_id=1, step_num=1)
    tpu.op_line(1, "Steps", 1_000, [(step, 6 * US, 190 * US)])
    module = tpu.op("jit_step(3)", program_id=PROGRAM)
    tpu.op_line(2, "XLA Modules", 1_000, [(module, 9 * US, 170 * US)])
    root = tpu.op("jit_step", program_id=PROGRAM, symbol_id=0)
    dot = hlo(tpu, "ynn_fusion.2", 11, "convolution fusion", "jit(step)/jvp()/dot_general",
              flops=1_048_576, bytes_accessed=40_960, model_flops=1_000_000)
    loop = hlo(tpu, "while.1", 12, "while", "jit(step)/while")
    body = hlo(tpu, "multiply_add_fusion", 13, "loop fusion",
               "jit(step)/transpose(jvp(jit(log_softmax)))/add_any", flops=2048, bytes_accessed=8192)
    reduce = hlo(tpu, "wrapped_reduce", 14, "reduction", "jit(step)/jvp(jit(log_softmax))/reduce_max")
    inner = hlo(tpu, "dot", 15, "convolution", "jit(step)/transpose(jvp())/transpose", flops=4096)
    no_symbol = tpu.op("copy.5", program_id=PROGRAM, hlo_category="data formatting")
    custom = hlo(tpu, "custom-call.1", 16, "custom-call", "jit(step)/pallas_call",
                 flops=500_000, bytes_accessed=30_000)
    plain = hlo(tpu, "negate_divide_fusion", 17, "loop fusion",
                "jit(step)/transpose(jvp(jit(log_softmax)))/div", display=False)
    tpu.op_line(3, "XLA Ops", 1_000, [
        (root, 9 * US, 170 * US),
        (dot, 10 * US, 20 * US),
        (loop, 35 * US, 50 * US),
        (body, 40 * US, 10 * US),
        (reduce, 55 * US, 12 * US),
        (inner, 56 * US, 4 * US),
        (reduce, 70 * US, 8 * US),
        (dot, 90 * US, 20 * US),
        (no_symbol, 112 * US, 3 * US),
        (custom, 120 * US, 15 * US),
        (custom, 140 * US, 5 * US),
        # Its device's own times (absolute picoseconds) count, not the
        # event's: 6 µs from 151.5 µs.
        (plain, 150 * US, 7 * US,
         {"device_offset_ps": 151_500_000, "device_duration_ps": 6 * US}),
    ])
    fw = tpu.op("dot_general")
    # Its own timestamp: xprof spans a TPU plane by times, not offsets.
    tpu.op_line(4, "Framework Ops", 0, [(fw, 4 * US, 27 * US)])
    traceme = tpu.op("ThunkExecute")
    tpu.op_line(5, "XLA TraceMe", 1_000, [(traceme, 1 * US, 300 * US)])
    tpu.op_line(6, "Async XLA Ops", 1_000, [(dot, 250 * US, 5 * US)])
    return tpu


def tensor_core_1():
    tpu = TpuPlane(2, "/device:TPU:1")
    step = tpu.op("1", group_id=1, step_num=1)
    tpu.op_line(1, "Steps", 2_000, [(step, 10 * US, 50 * US)])
    dot = hlo(tpu, "ynn_fusion.2", 11, "convolution fusion", "jit(step)/jvp()/dot_general",
              flops=1_048_576, bytes_accessed=40_960, model_flops=1_000_000)
    tpu.op_line(3, "XLA Ops", 2_000, [(dot, 12 * US, 18 * US)])
    return tpu


def sparse_core():
    sc = TpuPlane(3, "/device:TPU:0 SparseCore 0")
    op = hlo(sc, "sparse_gather.1", 21, "gather", "jit(step)/gather")
    sc.op_line(1, "Sparse Core Ops", 1_000, [(op, 20 * US, 30 * US)])
    return sc


def host():
    cpu = TpuPlane(0, "/host:CPU")
    tf = cpu.op("model/MatMul:MatMul")
    py = cpu.op("$train.py:10 main")
    cpu.op_line(100, "Host Threads/100", 1_000, [(tf, 2 * US, 30 * US)])
    cpu.op_line(101, "python", 1_000, [(py, 0, 200 * US)])
    return cpu


def main():
    planes = (tensor_core_0(), tensor_core_1(), sparse_core(), host())
    space = b"".join(f(1, p.encode()) for p in planes) + f(4, "tpu-host-0")
    with open(OUT, "wb") as fh:
        fh.write(space)
    print(OUT, len(space))


if __name__ == "__main__":
    main()

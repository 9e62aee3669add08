#!/usr/bin/env python3
"""Writes tests/fixtures/xplane/gpu_rules.xplane.pb: a small XSpace shaped
like a JAX GPU profile, each event placed to exercise one rule of xprof's
op tables, so that xprof's own answer for it (tools/xprof_oracle.py,
gpu_rules.xprof.json beside it) checks tracelane's reading of each rule.
Encoded by the wire rules of XLA's xplane.proto and hlo.proto.

- no /host:metadata (see the note at the end): the events name
  instructions of program 3 of tests/fixtures/jax-cpu/mlp_train.xplane.pb,
  which no module here defines;
- /device:GPU:0, line 1: kernels of one op with the same group id (one
  occurrence), the same op without a group id (one each), a nested
  `while.9::dot` op name, an instruction of a fused computation, an op no module defines, an event with only
  a tf_op stat, one with no stats, flops/bytes stats;
- /device:GPU:0, line 2: its own timestamp_ns (xprof spans a plane by
  event offsets, not times);
- /device:GPU:1: one more occurrence of the fusion;
- /host:CPU: launch calls with correlation ids and tf_op stats, nested
  TensorFlow-named ops (self time), an aggregated event;
- Task Environment: the profile's wall clock.

Run from the repository root: python3 tools/make_xplane_gpu_fixture.py
"""
import gzip
import os
import sys


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def f(num, value, wire=None):
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int):
        return varint(num << 3) + varint(value)
    if isinstance(value, str):
        value = value.encode()
    return varint(num << 3 | 2) + varint(len(value)) + value


def msg(*parts):
    return b"".join(parts)


# --- HLO -----------------------------------------------------------------
# A real HloProto: program 3 (`jit_step`, a small MLP's training step)
# from tests/fixtures/jax-cpu/mlp_train.xplane.pb, recorded with jax[cpu]
# (xprof rejects hand-made modules: it rebuilds each one with XLA).
PROGRAM = 3


def read_varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    i, out = 0, []
    while i < len(b):
        key, i = read_varint(b, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = read_varint(b, i)
        elif wire == 2:
            n, i = read_varint(b, i)
            v, i = b[i:i + n], i + n
        elif wire == 1:
            v, i = b[i:i + 8], i + 8
        else:
            v, i = b[i:i + 4], i + 4
        out.append((num, v))
    return out


def real_hlo_proto():
    space = open("tests/fixtures/jax-cpu/mlp_train.xplane.pb", "rb").read()
    for num, plane in fields(space):
        pf = fields(plane)
        if num != 1 or (2, b"/host:metadata") not in pf:
            continue
        names = {}
        for n, v in pf:
            if n == 5:
                e = dict(fields(v))
                names[e[1]] = dict(fields(e[2])).get(2, b"")
        for n, v in pf:
            if n != 4:
                continue
            e = dict(fields(v))
            if e[1] != PROGRAM:
                continue
            for m, st in fields(e[2]):
                st = dict(fields(st)) if m == 5 else {}
                if names.get(st.get(1)) == b"Hlo Proto":
                    return st[6]
    raise SystemExit("no HloProto for program 3 in mlp_train.xplane.pb")


hlo_proto = real_hlo_proto()

# Stats JAX writes as int64 (the others as uint64).
SIGNED = {"program_id", "group_id", "core_count", "clock_rate"}


# --- XPlane helpers --------------------------------------------------------
class Plane:
    def __init__(self, pid, name):
        self.pid, self.name = pid, name
        self.stat_ids, self.event_ids = {}, {}
        self.lines, self.plane_stats, self.event_meta = [], [], []

    def stat_id(self, name):
        if name not in self.stat_ids:
            self.stat_ids[name] = len(self.stat_ids) + 1
        return self.stat_ids[name]

    def stat(self, name, value):
        sid = self.stat_id(name)
        if isinstance(value, float):
            import struct
            return msg(f(1, sid), varint(2 << 3 | 1) + struct.pack("<d", value))
        if isinstance(value, bytes):
            return msg(f(1, sid), f(6, value))
        if isinstance(value, tuple):  # ("ref", text): an interned string
            return msg(f(1, sid), f(7, self.stat_id(value[1])))
        if isinstance(value, str):
            return msg(f(1, sid), f(5, value))
        if value < 0 or name in SIGNED:
            return msg(f(1, sid), f(4, value))
        return msg(f(1, sid), f(3, value))

    def event_id(self, name, meta_stats=()):
        if name not in self.event_ids:
            eid = len(self.event_ids) + 1
            self.event_ids[name] = eid
            stats = b"".join(f(5, self.stat(k, v)) for k, v in meta_stats)
            self.event_meta.append(f(4, msg(f(1, eid), f(2, msg(f(1, eid), f(2, name), stats)))))
        return self.event_ids[name]

    def line(self, lid, name, ts_ns, events):
        body = msg(f(1, lid), f(2, name), f(3, ts_ns))
        for e in events:
            name, off_ps, dur_ps, stats = e[:4]
            ev = msg(f(1, self.event_id(name)),
                     f(5, off_ps) if len(e) > 4 and e[4] == "aggregate" else f(2, off_ps),
                     f(3, dur_ps), *[f(4, self.stat(k, v)) for k, v in stats])
            body += f(4, ev)
        self.lines.append(f(3, body))

    def encode(self):
        stat_meta = b"".join(f(5, msg(f(1, i), f(2, msg(f(1, i), f(2, n)))))
                             for n, i in self.stat_ids.items())
        return msg(f(1, self.pid) if self.pid else b"", f(2, self.name), *self.lines,
                   *self.event_meta, stat_meta, *[f(6, s) for s in self.plane_stats])


US = 1_000_000  # ps


def k(op, group=None, extra=()):
    s = [("hlo_op", ("ref", op)), ("hlo_module", ("ref", "jit_step")), ("program_id", PROGRAM),
         ("correlation_id", 0)]
    if group is not None:
        s.append(("group_id", group))
    return s + list(extra)



def main():
    meta = Plane(0, "/host:metadata")
    # Event metadata ids are program ids.
    meta.event_meta = [f(4, msg(f(1, PROGRAM), f(2, msg(f(1, PROGRAM), f(2, "jit_step(28)"),
                                                    f(5, meta.stat("Hlo Proto", hlo_proto))))))]

    gpu0 = Plane(0, "/device:GPU:0")
    gpu0.plane_stats = [gpu0.stat("device_vendor", "NVIDIA"), gpu0.stat("core_count", 132),
                        gpu0.stat("clock_rate", 1980000)]
    gpu0.line(1, "Stream #1(Kernel)", 1_000, [
        ("reduce_kernel", 10 * US, 5 * US, k("wrapped_reduce", 1, [("flops", 1000), ("bytes_accessed", 4096)])),
        ("gemm_a", 20 * US, 7 * US, k("ynn_fusion.2", 1)),
        ("gemm_b", 28 * US, 3 * US, k("ynn_fusion.2", 1)),
        ("gemm_a", 40 * US, 6 * US, k("ynn_fusion.2")),
        ("gemm_b", 47 * US, 2 * US, k("ynn_fusion.2")),
        ("dot_kernel", 60 * US, 4 * US, k("while.9::dot", 2)),
        ("mystery_kernel", 70 * US, 9 * US, k("not-in-module.99", 2)),
        ("tf_only_kernel", 90 * US, 8 * US, [("tf_op", "jit(step)/foo:"), ("correlation_id", 0)]),
        ("plain_kernel", 100 * US, 1 * US, []),
        ("multiply_kernel", 120 * US, 2 * US, k("multiply.1", 3)),
        ("select_kernel", 130 * US, 2 * US, k("compare_select_fusion", 3)),
        ("reduce_kernel", 140 * US, 5 * US, k("wrapped_reduce", 3)),
    ])
    gpu0.line(2, "Stream #2(Kernel)", 500_000, [
        ("exp_kernel", 5 * US, 3 * US, k("subtract_exponential_fusion", 1)),
        ("reduce_kernel", 300 * US, 2 * US, k("wrapped_reduce", 4)),
    ])
    gpu1 = Plane(1, "/device:GPU:1")
    gpu1.line(3, "Stream #3(Kernel)", 1_000, [
        ("reduce_kernel", 15 * US, 5 * US, k("wrapped_reduce", 1)),
    ])

    host = Plane(0, "/host:CPU")
    host.line(100, "Host Threads/100", 1_000, [
        ("model/MatMul:MatMul", 1 * US, 30 * US, []),
        ("model/Relu:Relu", 5 * US, 10 * US, []),
        ("cuLaunchKernel", 8 * US, 2 * US, [("correlation_id", 1), ("tf_op", "XlaModule:")]),
        ("cuLaunchKernel", 40 * US, 3 * US, [("correlation_id", 2), ("tf_op", "XlaModule:")]),
        ("aggregate_op", 3, 50 * US, [], "aggregate"),
        ("$train.py:12 step", 50 * US, 20 * US, []),
    ])
    host.line(101, "python", 1_000, [
        ("$train.py:10 main", 0, 200 * US, []),
    ])
    env = Plane(0, "Task Environment")
    env.plane_stats = [env.stat("profile_start_time", 1_764_000_000_000_000_000),
                       env.stat("profile_stop_time", 1_764_000_001_000_000_000)]

    # xprof does not resolve a CPU-compiled module's instructions under a GPU
    # plane (its HLO table stays empty with the metadata plane present), so
    # the file carries no module: its HLO events are unresolved for both
    # tools, and the HLO rules are checked on the public GPU profiles.
    planes = (gpu0, gpu1, host, env)
    # The same run seen from two hosts, as jax.profiler writes a session:
    # plugins/profile/<run>/<host>.xplane.pb (plus the lossy JSON beside them).
    RUN = "tests/fixtures/xplane/run/plugins/profile/2026_12_06_04_00_00"
    os.makedirs(RUN, exist_ok=True)
    for path, host in [("tests/fixtures/xplane/gpu_rules.xplane.pb", "gpu-host-0"),
                       (f"{RUN}/gpu-host-0.xplane.pb", "gpu-host-0"),
                       (f"{RUN}/gpu-host-1.xplane.pb", "gpu-host-1")]:
        space = b"".join(f(1, p.encode()) for p in planes) + f(4, host)
        with open(path, "wb") as fh:
            fh.write(space)
        print(path, len(space))
    with open(f"{RUN}/perfetto_trace.json.gz", "wb") as fh:
        fh.write(gzip.compress(b'{"traceEvents": []}', mtime=0))


if __name__ == "__main__":
    main()

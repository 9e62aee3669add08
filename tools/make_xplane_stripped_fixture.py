#!/usr/bin/env python3
"""Writes a pair of GPU XPlane files with the same kernels, for the op
tables' reading of kernels whose HLO stats a converter stripped:

- tests/fixtures/xplane/stripped_full.xplane.pb: each kernel with its
  `hlo_op`, `hlo_module`, `program_id`, `correlation_id` and `group_id`
  stats, and the compiled module (/host:metadata, program 3 of
  tests/fixtures/jax-cpu/mlp_train.xplane.pb, a real HloProto);
- tests/fixtures/xplane/stripped.xplane.pb: the same kernels with only
  `group_id` left (xprof >= 2.20.8 strips `hlo_op` and `correlation_id`,
  TraceLens#456), and the lines xprof derives from the full stats, as
  `xprof/utils/derived_timeline.cc` writes them: per stream, `XLA Ops -
  from #<stream line id>` (event metadata `<program id>/<op>`, display
  name `<op>`; consecutive kernels of one op and group id are one event;
  a nested `while.9::dot` is two levels) and `XLA Modules - from #<id>`
  (`<module>(<program id>)`).

tracelane's tables for both files must be equal (tests/xplane.rs): the
full file's reading is xprof's (checked on the public profiles), the
stripped one's op comes from the XLA Ops event around each kernel.

Run from the repository root: python3 tools/make_xplane_stripped_fixture.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_xplane_gpu_fixture import PROGRAM, US, Plane, f, hlo_proto, msg  # noqa: E402


class DerivedPlane(Plane):
    """A plane whose event metadata may carry a display name."""

    def event_id(self, name, meta_stats=(), display=None):
        if name not in self.event_ids:
            eid = len(self.event_ids) + 1
            self.event_ids[name] = eid
            body = msg(f(1, eid), f(2, name), f(4, display) if display else b"")
            self.event_meta.append(f(4, msg(f(1, eid), f(2, body))))
        return self.event_ids[name]

    def derived_line(self, lid, name, ts_ns, events):
        """events: (metadata name, display name, offset_ps, duration_ps)."""
        body = msg(f(1, lid), f(2, name), f(3, ts_ns))
        for meta_name, display, off, dur in events:
            body += f(4, msg(f(1, self.event_id(meta_name, display=display)), f(2, off), f(3, dur)))
        self.lines.append(f(3, body))


MODULE = "jit_step"
# (stream line id, line timestamp_ns, [(kernel, offset µs, duration µs, op, group)])
STREAMS = [
    (1, 1_000, [
        ("reduce_kernel", 10, 5, "wrapped_reduce", 1),
        ("gemm_a", 20, 7, "ynn_fusion.2", 1),
        ("gemm_b", 28, 3, "ynn_fusion.2", 1),
        ("gemm_a", 40, 6, "ynn_fusion.2", None),
        ("gemm_b", 47, 2, "ynn_fusion.2", None),
        ("dot_kernel", 60, 4, "while.9::dot", 2),
        ("multiply_kernel", 120, 2, "multiply.1", 3),
        ("select_kernel", 130, 2, "compare_select_fusion", 3),
        ("reduce_kernel", 140, 5, "wrapped_reduce", 3),
    ]),
    (2, 500_000, [
        ("exp_kernel", 5, 3, "subtract_exponential_fusion", 1),
        ("reduce_kernel", 300, 2, "wrapped_reduce", 4),
    ]),
]


def metadata_plane():
    meta = Plane(0, "/host:metadata")
    meta.event_meta = [f(4, msg(f(1, PROGRAM), f(2, msg(
        f(1, PROGRAM), f(2, f"{MODULE}(28)"), f(5, meta.stat("Hlo Proto", hlo_proto))))))]
    return meta


def kernel_stats(op, group, stripped):
    s = [] if stripped else [("hlo_op", ("ref", op)), ("hlo_module", ("ref", MODULE)),
                             ("program_id", PROGRAM), ("correlation_id", 0)]
    return s + ([("group_id", group)] if group is not None else [])


def derive(ts_ns, kernels, base_ns):
    """xprof's XLA Ops events for one stream's kernels: a level per `::`
    part; an event grows while the next kernel has the same op and group."""
    levels = {}  # level -> list of [meta name, display, start ps, end ps, group]
    for _, off, dur, op, group in kernels:
        start = (ts_ns - base_ns) * 1000 + off * US
        end = start + dur * US
        for level, part in enumerate(op.split("::")):
            events = levels.setdefault(level, [])
            last = events[-1] if events else None
            if last and last[1] == part and last[4] == group:
                last[3] = max(last[3], end)
            else:
                events.append([f"{PROGRAM}/{part}", part, start, end, group])
    out = []
    for level in sorted(levels):
        out += [(m, d, s, e - s) for m, d, s, e, _ in levels[level]]
    return sorted(out, key=lambda e: (e[2], -e[3]))


def gpu_plane(stripped):
    gpu = DerivedPlane(0, "/device:GPU:0")
    for lid, ts, kernels in STREAMS:
        gpu.line(lid, f"Stream #{lid}(Kernel)", ts,
                 [(name, off * US, dur * US, kernel_stats(op, group, stripped))
                  for name, off, dur, op, group in kernels])
    if stripped:
        base = min(ts for _, ts, _ in STREAMS)
        for lid, ts, kernels in STREAMS:
            gpu.derived_line(10_000 + lid, f"XLA Ops - from #{lid}", base, derive(ts, kernels, base))
            first = (ts - base) * 1000 + kernels[0][1] * US
            last = max((ts - base) * 1000 + (o + d) * US for _, o, d, _, _ in kernels)
            gpu.derived_line(20_000 + lid, f"XLA Modules - from #{lid}", base,
                             [(f"{MODULE}({PROGRAM})", None, first, last - first)])
    return gpu


def main():
    for path, stripped in [("tests/fixtures/xplane/stripped_full.xplane.pb", False),
                           ("tests/fixtures/xplane/stripped.xplane.pb", True)]:
        planes = (metadata_plane(), gpu_plane(stripped))
        space = b"".join(f(1, p.encode()) for p in planes) + f(4, "gpu-host-0")
        with open(path, "wb") as fh:
            fh.write(space)
        print(path, len(space))


if __name__ == "__main__":
    main()

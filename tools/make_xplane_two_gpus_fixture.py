#!/usr/bin/env python3
"""Writes tests/fixtures/xplane/two_gpus.xplane.pb: the program of
tests/fixtures/xplane/stripped_full.xplane.pb (its kernels with their
`hlo_op` stats, the compiled module in /host:metadata) run on two GPUs,
as an SPMD run of one JAX process shows it: a plane per device, each with
the same ops on its own streams. Device 1's kernels start 3 µs later and
each takes 1 µs more, so the two devices' device times differ.

For the alignment's rule (tests/align.rs): a run of two devices against a
run of one compares one device of it, not both devices' work summed.

Run from the repository root: python3 tools/make_xplane_two_gpus_fixture.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_xplane_gpu_fixture import US, f  # noqa: E402
from make_xplane_stripped_fixture import STREAMS, DerivedPlane, kernel_stats, metadata_plane  # noqa: E402

OUT = "tests/fixtures/xplane/two_gpus.xplane.pb"


def device_plane(index, shift_us, longer_us):
    gpu = DerivedPlane(index + 1, f"/device:GPU:{index}")
    for lid, ts, kernels in STREAMS:
        line = 100 * index + lid
        gpu.line(line, f"Stream #{line}(Kernel)", ts,
                 [(name, (off + shift_us) * US, (dur + longer_us) * US,
                   kernel_stats(op, group, False))
                  for name, off, dur, op, group in kernels])
    return gpu


def main():
    planes = (metadata_plane(), device_plane(0, 0, 0), device_plane(1, 3, 1))
    space = b"".join(f(1, p.encode()) for p in planes) + f(4, "gpu-host-0")
    with open(OUT, "wb") as fh:
        fh.write(space)
    print(OUT, len(space))


if __name__ == "__main__":
    main()

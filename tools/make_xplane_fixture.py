#!/usr/bin/env python3
"""Writes tests/fixtures/edge/jax_profile.xplane.pb: a small XSpace, the
protobuf that the JAX / TensorFlow profilers save as `*.xplane.pb`, encoded
by the wire rules from XLA's `tsl/profiler/protobuf/xplane.proto`:

  XSpace  { repeated XPlane planes = 1; repeated string hostnames = 4; }
  XPlane  { int64 id = 1; string name = 2; repeated XLine lines = 3;
            map<int64, XEventMetadata> event_metadata = 4; }
  XLine   { int64 id = 1; string name = 11; int64 timestamp_ns = 3;
            repeated XEvent events = 4; }
  XEvent  { int64 metadata_id = 1; int64 offset_ps = 2; int64 duration_ps = 3; }
  XEventMetadata { int64 id = 1; string name = 2; }

It opens in XProf/TensorBoard; tracelane must name it, not import it as an
empty Perfetto trace (both start with a length-delimited field 1).
Run from the repository root: python3 tools/make_xplane_fixture.py
"""


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num, value):
    if isinstance(value, int):
        return varint(num << 3) + varint(value)
    if isinstance(value, str):
        value = value.encode()
    return varint(num << 3 | 2) + varint(len(value)) + value


def plane(pid, name, line_name, ops):
    meta = b"".join(field(4, field(1, k + 1) + field(2, field(1, k + 1) + field(2, op)))
                    for k, op in enumerate(ops))
    events = b"".join(field(4, field(1, k + 1) + field(2, k * 2_000_000) + field(3, 1_500_000))
                      for k in range(len(ops)))
    line = field(1, 1) + field(11, line_name) + field(3, 1_700_000_000_000_000_000) + events
    return (field(1, pid) if pid else b"") + field(2, name) + field(3, line) + meta


space = (field(1, plane(1, "/host:CPU", "python3", ["jit_train_step", "dispatch"]))
         + field(1, plane(0, "/device:GPU:0", "XLA Ops", ["fusion.1", "dot.2", "reduce.3"]))
         + field(4, "worker-0"))
with open("tests/fixtures/edge/jax_profile.xplane.pb", "wb") as f:
    f.write(space)

#!/usr/bin/env python3
"""Writes tests/fixtures/perfetto/sdk_clocks_defaults.pftrace and its
.expected.json: the Perfetto features the SDK uses to keep traces small,
encoded with Perfetto's own protos (the PyPI `perfetto` package):

- a ClockSnapshot relating BOOTTIME (the trace clock), MONOTONIC and an
  incremental sequence-scoped clock 64 in microseconds;
- TracePacketDefaults: packets on clock 64 (timestamps are deltas), events
  on a default track, extra counter values on default counter tracks;
- a second sequence timed on MONOTONIC (converted through the snapshot);
- an incremental counter track with a unit multiplier;
- nested tracks: a process track with child tracks named "NC:10", "NC:2",
  "NC:1" written in that order (their display order), a grandchild under
  "NC:2";
- one packet with a field no TracePacket has (999) and a TrackEvent field
  tracelane does not read (log_message, 21).

Every expected time is computed here from the values written.
usage: python3 tools/gen_perfetto_clocks.py   (pip install perfetto)
"""
import json

from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import (
    ClockSnapshot, Trace, TracePacket, TrackDescriptor, TrackEvent)

BOOT, MONO, SEQCLK = 6, 3, 64
trace = Trace()


def packet(seq=1):
    p = trace.packet.add()
    p.trusted_packet_sequence_id = seq
    return p


exp = {"slices": [], "counters": [], "unread_fields": 2, "lane_order": []}

# Sequence 1: snapshot, defaults, tracks.
p = packet()
p.incremental_state_cleared = True
cs = p.clock_snapshot
for cid, ts, incr, mult in [(BOOT, 1_000_000_000, False, 0), (MONO, 400_000_000, False, 0),
                            (SEQCLK, 500_000, True, 1000)]:
    c = cs.clocks.add()
    c.clock_id = cid
    c.timestamp = ts
    if incr:
        c.is_incremental = True
    if mult:
        c.unit_multiplier_ns = mult
cs.primary_trace_clock = BOOT

PROC, T_MAIN, C_DEF, C_INCR = 1, 2, 3, 4
NC10, NC2, NC1, NC2_SUB = 10, 11, 12, 13
d = packet().track_descriptor
d.uuid = PROC
d.process.pid = 7
d.process.process_name = "device"
d = packet().track_descriptor
d.uuid = T_MAIN
d.thread.pid = 7
d.thread.tid = 70
d.thread.thread_name = "main"
d = packet().track_descriptor
d.uuid = C_DEF
d.name = "queue depth"
d.parent_uuid = PROC
d.counter.SetInParent()
d = packet().track_descriptor
d.uuid = C_INCR
d.name = "bytes sent"
d.parent_uuid = PROC
d.counter.is_incremental = True
d.counter.unit_multiplier = 1024
for uuid, name, parent in [(NC10, "NC:10", PROC), (NC2, "NC:2", PROC), (NC1, "NC:1", PROC), (NC2_SUB, "engine", NC2)]:
    d = packet().track_descriptor
    d.uuid = uuid
    d.name = name
    d.parent_uuid = parent
    d.child_ordering = TrackDescriptor.ChildTracksOrdering.CHRONOLOGICAL
exp["lane_order"] = ["main", "NC:10", "NC:2", "engine", "NC:1"]

p = packet()
p.trace_packet_defaults.timestamp_clock_id = SEQCLK
p.trace_packet_defaults.track_event_defaults.track_uuid = T_MAIN
p.trace_packet_defaults.track_event_defaults.extra_counter_track_uuids.append(C_DEF)

# Events on sequence 1: timestamps are µs deltas on clock 64.
clock64_us = 500_000          # its value at the snapshot
boot_at_snapshot = 1_000_000_000


def seq1_event(delta_us, fill):
    global clock64_us
    clock64_us += delta_us
    p = packet()
    p.timestamp = delta_us
    fill(p.track_event)
    return boot_at_snapshot + (clock64_us - 500_000) * 1000, p


def begin(name, extra=None):
    def f(e):
        e.type = TrackEvent.TYPE_SLICE_BEGIN
        e.name = name
        if extra is not None:
            e.extra_counter_values.append(extra)
    return f


def end(e):
    e.type = TrackEvent.TYPE_SLICE_END


t0, _ = seq1_event(10, begin("step", 5))
exp["counters"].append(["queue depth", t0, 5.0])
t1, _ = seq1_event(20, begin("inner", 7))
exp["counters"].append(["queue depth", t1, 7.0])
t2, pk = seq1_event(5, end)
t3, _ = seq1_event(15, end)
exp["slices"].append(["main", "inner", t1, t2 - t1])
exp["slices"].append(["main", "step", t0, t3 - t0])


# Events on the nested tracks, explicit track, same clock.
def on_track(track, name):
    def f(e):
        e.type = TrackEvent.TYPE_SLICE_BEGIN
        e.track_uuid = track
        e.name = name
    return f


def end_on(track):
    def f(e):
        e.type = TrackEvent.TYPE_SLICE_END
        e.track_uuid = track
    return f


for track, lane in [(NC10, "NC:10"), (NC2, "NC:2"), (NC1, "NC:1"), (NC2_SUB, "engine")]:
    a, _ = seq1_event(1, on_track(track, f"work {lane}"))
    z, _ = seq1_event(3, end_on(track))
    exp["slices"].append([lane, f"work {lane}", a, z - a])

# Incremental counter: deltas 2 and 3 (×1024 bytes) -> 2048, 5120.
for v in [2, 3]:
    def f(e, v=v):
        e.type = TrackEvent.TYPE_COUNTER
        e.track_uuid = C_INCR
        e.counter_value = v
    t, _ = seq1_event(1, f)
    exp["counters"].append(["bytes sent", t, None])
exp["counters"][-2][2] = 2048.0
exp["counters"][-1][2] = 5120.0

# Sequence 2: absolute MONOTONIC timestamps -> BOOTTIME through the snapshot.
for ts_mono, kind in [(400_100_000, TrackEvent.TYPE_SLICE_BEGIN), (400_150_000, TrackEvent.TYPE_SLICE_END)]:
    p = packet(seq=2)
    p.timestamp = ts_mono
    p.timestamp_clock_id = MONO
    e = p.track_event
    e.type = kind
    e.track_uuid = T_MAIN
    if kind == TrackEvent.TYPE_SLICE_BEGIN:
        e.name = "mono"
exp["slices"].append(["main", "mono", 1_000_100_000, 50_000])

# Unread fields: field 999 on a packet, log_message (21) in a TrackEvent.
unread_packet = len(trace.packet)
p = packet()
p.timestamp = 1
e = p.track_event
e.type = TrackEvent.TYPE_INSTANT
e.name = "marker"
e.log_message.body_iid = 1
clock64_us += 1
exp["instant"] = ["main", "marker", boot_at_snapshot + (clock64_us - 500_000) * 1000]

out = bytearray()


def varint(n):
    b = bytearray()
    while True:
        c = n & 0x7f
        n >>= 7
        b.append(c | (0x80 if n else 0))
        if not n:
            return bytes(b)


for k, pk in enumerate(trace.packet):
    body = pk.SerializeToString()
    if k == unread_packet:
        body += varint(999 << 3) + varint(1)   # field 999, varint 1
    out += varint(1 << 3 | 2) + varint(len(body)) + body
open("tests/fixtures/perfetto/sdk_clocks_defaults.pftrace", "wb").write(bytes(out))
json.dump(exp, open("tests/fixtures/perfetto/sdk_clocks_defaults.expected.json", "w"), indent=1)

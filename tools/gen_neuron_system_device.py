#!/usr/bin/env python3
"""A Neuron Explorer system profile in Parquet next to the device profile it
lists (DeviceProfileList), for the joined view: the device profile's engine
lanes placed at its hardware execution in the system timeline.

Provisional, like the fixtures it builds on (no public Neuron capture exists):
the tables and columns follow AWS's `profile-schema-reference.rst` (7.4.0):
SystemProfileEvents (id, name, start_ts, end_ts, duration_ns,
trace_event_source, instance_id, process_id, thread_id, nc_idx, pcore_idx,
worker_gid, flow_id list<string>, framework_stream_id,
extra_attributes_json), SystemProfileMetadata and DeviceProfileList. The
device profile is tests/fixtures/neuron-provisional/device_profile (made by
../shared/tools/gen_neuron_device_profile.py), copied unchanged under
device/<device_profile_name>/.

Three iterations of aten::rms_norm → nrt_execute → nc_exec_running on
NeuronCore 4 run the same model; the device profile is of the second
(its Metadata.first_ts, a µs wall clock, falls at that execution's start).

    python3 tools/gen_neuron_system_device.py tests/fixtures/neuron-provisional
"""
import datetime
import json
import os
import shutil
import sys

import pyarrow as pa
import pyarrow.parquet as pq

root = sys.argv[1]
src = os.path.join(root, "device_profile")
out = os.path.join(root, "system_device")
shutil.rmtree(out, ignore_errors=True)
os.makedirs(os.path.join(out, "system"))

NAME = "rmsnorm_proj"
INSTANCE = "i-0f207fb2a99bd2d08"
PID = 1113579
NC = 4
MODEL = 605291374318702
# The device profile's Metadata.first_ts is 2025-08-13 20:05:07.555400 UTC:
# the second execution starts 250 ns before that microsecond.
HW_START = [1755115507555399750 + (k - 1) * 700_000 for k in range(3)]
HW_DUR = 39_000

rows = []


def event(name, source, start, dur, thread, flows, nc=None, extra=None):
    rows.append({
        "id": len(rows) + 1,
        "name": name,
        "start_ts": start,
        "end_ts": start + dur,
        "duration_ns": dur,
        "trace_event_source": source,
        "instance_id": INSTANCE,
        "process_id": PID,
        "thread_id": thread,
        "nc_idx": nc,
        "pcore_idx": 0 if source == "neuron_hw" else None,
        "worker_gid": 35 if nc is not None else None,
        "flow_id": flows,
        "framework_stream_id": "0" if source != "neuron_hw" else None,
        "extra_attributes_json": json.dumps(extra) if extra else None,
    })


for k, hw in enumerate(HW_START):
    op = hw - 40_000
    event("aten::rms_norm", "framework", op, 120_000, PID, [str(2 * k + 1)])
    event("nrt_execute", "neuron_rt", op + 20_000, 90_000, 7,
          [str(2 * k + 1), str(2 * k + 2)], nc=NC,
          extra={"model_id": MODEL, "exec_id": k + 1})
    event("nc_exec_running", "neuron_hw", hw, HW_DUR, 7, [str(2 * k + 2)], nc=NC,
          extra={"model_id": MODEL, "model_name": f"{NAME}.neff", "exec_id": k + 1,
                 "device_core_idx": 0})

i64, s = pa.int64(), pa.string()
types = {
    "id": i64, "name": s, "start_ts": i64, "end_ts": i64, "duration_ns": i64,
    "trace_event_source": s, "instance_id": s, "process_id": i64,
    "thread_id": i64, "nc_idx": i64, "pcore_idx": i64, "worker_gid": i64,
    "flow_id": pa.list_(s), "framework_stream_id": s,
    "extra_attributes_json": s,
}
events = pa.table({k: pa.array([r[k] for r in rows], t) for k, t in types.items()})
pq.write_table(events, os.path.join(out, "system", "SystemProfileEvents.parquet"))

def wall(ns):
    """Neuron Explorer's human-readable form: `2025-12-18 15:35:56.592459482 +0000 UTC`."""
    t = datetime.datetime.fromtimestamp(ns // 1_000_000_000, datetime.timezone.utc)
    return f"{t:%Y-%m-%d %H:%M:%S}.{ns % 1_000_000_000:09d} +0000 UTC"


first, last = min(r["start_ts"] for r in rows), max(r["end_ts"] for r in rows)
pq.write_table(pa.table({
    "first_ts": pa.array([wall(first)], s),
    "last_ts": pa.array([wall(last)], s),
    "first_ts_ns": pa.array([str(first)], s),
    "last_ts_ns": pa.array([str(last)], s),
    "ntff_version": pa.array([6], i64),
    "hbm_capacity_bytes": pa.array([24 << 30], i64),
}), os.path.join(out, "system", "SystemProfileMetadata.parquet"))

pq.write_table(pa.table({
    "device_profile_name": pa.array([NAME], s),
    "instance_id": pa.array([INSTANCE], s),
    "process_id": pa.array([PID], i64),
    "nc_id": pa.array([NC], i64),
    "session_id": pa.array([None], i64),
    "model_id": pa.array([MODEL], i64),
}), os.path.join(out, "system", "DeviceProfileList.parquet"))

shutil.copytree(src, os.path.join(out, "device", NAME))

instr = pq.read_table(os.path.join(src, "Instruction.parquet")).to_pydict()
meta = pq.read_table(os.path.join(src, "ExecutionInfo.parquet")).to_pydict()
exec_start = meta["execution_start_ts"][0]
offset = HW_START[1] - exec_start
with open(os.path.join(root, "system_device.expected.json"), "w") as f:
    json.dump({
        "device_profile_name": NAME,
        "placed_at_exec_id": 2,
        "hardware_start_ns": HW_START[1],
        "hardware_duration_ns": HW_DUR,
        "execution_start_ts": exec_start,
        "offset_ns": offset,
        "first_instruction_ns": min(instr["start_ts"]) + offset,
        "last_instruction_end_ns": max(instr["end_ts"]) + offset,
        "instructions": len(instr["start_ts"]),
        "system_events": len(rows),
        "flow_links": 6,
    }, f, indent=1)
print("wrote", out)

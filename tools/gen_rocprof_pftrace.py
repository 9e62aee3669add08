#!/usr/bin/env python3
"""Writes tests/fixtures/rocprof/sys_trace.pftrace: the events of
tests/fixtures/rocprof/sys_trace.json as rocprofv3's Perfetto output
(`-f pftrace`) lays them out — per rocprofiler-sdk's
source/lib/output/generatePerfetto.cpp (research/formats-turn3.md §2.3):
host API calls on `THREAD <n> (<tid>)` tracks, kernels on `COMPUTE AGENT
[<node>] STREAM [<s>] (GPU)`, copies on `COPY to AGENT [<node>] STREAM
[<s>] (GPU)`; categories `hip_api`, `hsa_api`, `marker_api`, `rccl_api`,
`kernel_dispatch`, `memory_copy`, interned as the SDK interns them; the
debug args `begin_ns`, `end_ns`, `delta_ns`, `tid`, `kind`, `operation`,
`corr_id` (kernels also `agent`, `queue`, `kernel_id`), and a flow per
correlation id. Encoded with Perfetto's own protos (pip install perfetto).
Its answer: the same kernels as the JSON's oracle, linked to their HIP
calls by `corr_id`.

Run from the repository root: python3 tools/gen_rocprof_pftrace.py
"""
import json

from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TrackEvent

doc = json.load(open("tests/fixtures/rocprof/sys_trace.json"))["rocprofiler-sdk-tool"][0]
kinds = doc["strings"]["buffer_records"]
symbols = {s["kernel_id"]: s["formatted_kernel_name"] for s in doc["kernel_symbols"]}
agents = {a["id"]["handle"]: a for a in doc["agents"]}
markers = {m["key"]: m["value"] for m in doc["strings"]["marker_api"]}
pid = doc["metadata"]["pid"]

trace = Trace()
SEQ = 7
names, cats = {}, {}


def packet():
    p = trace.packet.add()
    p.trusted_packet_sequence_id = SEQ
    return p


first = packet()
first.incremental_state_cleared = True
first.sequence_flags = 1  # SEQ_INCREMENTAL_STATE_CLEARED
PROC = 1
d = packet().track_descriptor
d.uuid = PROC
d.process.pid = pid
d.process.process_name = "python3 train.py"
tracks = {}


def track(name, thread=None):
    if name in tracks:
        return tracks[name]
    uuid = 100 + len(tracks)
    t = packet().track_descriptor
    t.uuid = uuid
    t.name = name
    t.parent_uuid = PROC
    if thread is not None:
        t.thread.pid = pid
        t.thread.tid = thread
        t.thread.thread_name = name
    tracks[name] = uuid
    return uuid


def iid(table, key, field):
    if key in table:
        return table[key], None
    table[key] = len(table) + 1
    return table[key], (field, table[key], key)


def slice_(track_uuid, start, end, name, cat, args, flow):
    n, new_name = iid(names, name, "event_names")
    c, new_cat = iid(cats, cat, "event_categories")
    p = packet()
    p.timestamp = start
    if new_name or new_cat:
        for new in (new_name, new_cat):
            if new:
                entry = getattr(p.interned_data, new[0]).add()
                entry.iid, entry.name = new[1], new[2]
    p.sequence_flags = 2  # SEQ_NEEDS_INCREMENTAL_STATE
    e = p.track_event
    e.type = TrackEvent.TYPE_SLICE_BEGIN
    e.track_uuid = track_uuid
    e.name_iid = n
    e.category_iids.append(c)
    for k, v in args.items():
        a = e.debug_annotations.add()
        a.name = k
        if isinstance(v, str):
            a.string_value = v
        else:
            a.uint_value = v
    e.flow_ids.append(flow)
    q = packet()
    q.timestamp = end
    q.sequence_flags = 2
    q.track_event.type = TrackEvent.TYPE_SLICE_END
    q.track_event.track_uuid = track_uuid


threads = {}
recs = doc["buffer_records"]
for list_name in ["hip_api", "hsa_api", "marker_api", "rccl_api"]:
    for r in recs[list_name]:
        tid = r["thread_id"]
        threads.setdefault(tid, len(threads))
        t = track(f"THREAD {threads[tid]} ({tid})", thread=tid)
        name = kinds[r["kind"]]["operations"][r["operation"]]
        corr = r["correlation_id"]["internal"]
        if list_name == "marker_api":
            name = markers.get(corr, name)
        args = {"begin_ns": r["start_timestamp"], "end_ns": r["end_timestamp"],
                "delta_ns": r["end_timestamp"] - r["start_timestamp"], "tid": tid,
                "kind": r["kind"], "operation": r["operation"], "corr_id": corr}
        slice_(t, r["start_timestamp"], r["end_timestamp"], name, list_name, args, corr)
for r in recs["kernel_dispatch"]:
    info = r["dispatch_info"]
    node = agents[info["agent_id"]["handle"]]["logical_node_type_id"]
    t = track(f"COMPUTE AGENT [{node}] STREAM [{r['stream_id']['handle']}] (GPU)")
    corr = r["correlation_id"]["internal"]
    args = {"begin_ns": r["start_timestamp"], "end_ns": r["end_timestamp"],
            "delta_ns": r["end_timestamp"] - r["start_timestamp"], "kind": r["kind"],
            "agent": node, "corr_id": corr, "queue": info["queue_id"]["handle"],
            "tid": r["thread_id"], "kernel_id": info["kernel_id"],
            "workgroup_size": info["workgroup_size"]["x"], "grid_size": info["grid_size"]["x"]}
    slice_(t, r["start_timestamp"], r["end_timestamp"], symbols[info["kernel_id"]],
           "kernel_dispatch", args, corr)
for r in recs["memory_copy"]:
    node = agents[r["dst_agent_id"]["handle"]]["logical_node_type_id"]
    t = track(f"COPY to AGENT [{node}] STREAM [0] (GPU)")
    corr = r["correlation_id"]["internal"]
    name = kinds[r["kind"]]["operations"][r["operation"]]
    args = {"begin_ns": r["start_timestamp"], "end_ns": r["end_timestamp"],
            "delta_ns": r["end_timestamp"] - r["start_timestamp"], "corr_id": corr,
            "src_agent": 0, "dst_agent": node, "copy_bytes": r["bytes"]}
    slice_(t, r["start_timestamp"], r["end_timestamp"], name, "memory_copy", args, corr)

with open("tests/fixtures/rocprof/sys_trace.pftrace", "wb") as f:
    f.write(trace.SerializeToString())

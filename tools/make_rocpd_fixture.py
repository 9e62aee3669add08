#!/usr/bin/env python3
"""Writes tests/fixtures/rocprof/sys_trace.rocpd.db: the run of
tests/fixtures/rocprof/sys_trace.json as rocprofv3's rocpd SQLite database
(its default output since ROCm 7) stores it — schema version 3 as
rocprofiler-sdk's `source/share/rocprofiler-sdk-rocpd/rocpd_tables.sql`
declares it (research/formats-turn3.md §2.4): every table suffixed with
the run's uuid, times in `rocpd_timestamp` rows that regions, dispatches
and copies point at (`start_id`, `end_id`), names in `rocpd_string`,
threads / agents / queues in `rocpd_info_*`, each event's correlation id
in `rocpd_event`. Only the columns a reader needs are declared here.
Its answer is the JSON's (sys_trace.oracle.json).

Also tests/fixtures/rocprof/memory_allocation.rocpd.db from
memory_allocation.json: its HIP calls as regions and its allocation
records in `rocpd_memory_allocate` (type ALLOC / FREE, level REAL /
VIRTUAL, address, size; an allocation's track names its agent, a free's
none), whose counter series must equal the JSON's.

Run from the repository root: python3 tools/make_rocpd_fixture.py [SRC OUT]
"""
import json
import os
import sqlite3
import sys

SRC, OUT = (sys.argv[1:3] if len(sys.argv) == 3 else
            ("tests/fixtures/rocprof/sys_trace.json", "tests/fixtures/rocprof/sys_trace.rocpd.db"))
U = "_0195c0de_7a08_7373_dca3_64ee48cb6458"

doc = json.load(open(SRC))["rocprofiler-sdk-tool"][0]
if os.path.exists(OUT):
    os.remove(OUT)
db = sqlite3.connect(OUT)
c = db.cursor()
c.executescript(f"""
CREATE TABLE "rocpd_metadata{U}" (id INTEGER PRIMARY KEY AUTOINCREMENT, tag TEXT NOT NULL, value TEXT NOT NULL);
CREATE TABLE "rocpd_string{U}" (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, string TEXT NOT NULL UNIQUE);
CREATE TABLE "rocpd_info_node{U}" (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, hash BIGINT, machine_id TEXT, hostname TEXT);
CREATE TABLE "rocpd_info_process{U}" (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, nid INTEGER NOT NULL, ppid INTEGER, pid INTEGER NOT NULL, init BIGINT, fini BIGINT, command TEXT);
CREATE TABLE "rocpd_info_thread{U}" (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, nid INTEGER NOT NULL, ppid INTEGER, pid INTEGER NOT NULL, tid INTEGER NOT NULL, name TEXT);
CREATE TABLE "rocpd_info_agent{U}" (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, nid INTEGER NOT NULL, pid INTEGER NOT NULL, type TEXT, absolute_index INTEGER, logical_index INTEGER, type_index INTEGER, uuid INTEGER, name TEXT, model_name TEXT, vendor_name TEXT, product_name TEXT);
CREATE TABLE "rocpd_info_queue{U}" (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, nid INTEGER NOT NULL, pid INTEGER NOT NULL, name TEXT);
CREATE TABLE "rocpd_info_kernel_symbol{U}" (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, nid INTEGER NOT NULL, pid INTEGER NOT NULL, code_object_id INTEGER NOT NULL, kernel_name TEXT, display_name TEXT);
CREATE TABLE "rocpd_track{U}" (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, nid INTEGER NOT NULL, ppid INTEGER, pid INTEGER, tid INTEGER, agent_id INTEGER, queue_id INTEGER, stream_id INTEGER, name_id INTEGER);
CREATE TABLE "rocpd_timestamp{U}" (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, value BIGINT NOT NULL, phase INTEGER, track_id INTEGER);
CREATE TABLE "rocpd_event{U}" (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, category_id INTEGER, stack_id INTEGER, parent_stack_id INTEGER, correlation_id INTEGER);
CREATE TABLE "rocpd_region{U}" (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, track_id INTEGER NOT NULL, name_id INTEGER NOT NULL, start_id INTEGER NOT NULL, end_id INTEGER NOT NULL, event_id INTEGER);
CREATE TABLE "rocpd_kernel_dispatch{U}" (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, track_id INTEGER NOT NULL, kernel_id INTEGER NOT NULL, dispatch_id INTEGER NOT NULL, start_id INTEGER NOT NULL, end_id INTEGER NOT NULL, private_segment_size INTEGER, group_segment_size INTEGER, workgroup_size_x INTEGER NOT NULL, workgroup_size_y INTEGER NOT NULL, workgroup_size_z INTEGER NOT NULL, grid_size_x INTEGER NOT NULL, grid_size_y INTEGER NOT NULL, grid_size_z INTEGER NOT NULL, region_name_id INTEGER, event_id INTEGER);
CREATE TABLE "rocpd_memory_copy{U}" (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, track_id INTEGER NOT NULL, start_id INTEGER NOT NULL, end_id INTEGER NOT NULL, name_id INTEGER NOT NULL, dst_agent_id INTEGER, dst_address INTEGER, src_agent_id INTEGER, src_address INTEGER, size INTEGER NOT NULL, region_name_id INTEGER, event_id INTEGER);
CREATE TABLE "rocpd_memory_allocate{U}" (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, track_id INTEGER NOT NULL, type TEXT, level TEXT, start_id INTEGER NOT NULL, end_id INTEGER NOT NULL, name_id INTEGER NOT NULL, address INTEGER, size INTEGER NOT NULL, event_id INTEGER);
""")
c.execute(f'INSERT INTO "rocpd_metadata{U}" (tag, value) VALUES ("schema_version", "3")')
strings = {}


def s(text):
    if text not in strings:
        c.execute(f'INSERT INTO "rocpd_string{U}" (string) VALUES (?)', (text,))
        strings[text] = c.lastrowid
    return strings[text]


def ins(table, **cols):
    names = ", ".join(cols)
    marks = ", ".join("?" for _ in cols)
    c.execute(f'INSERT INTO "{table}{U}" ({names}) VALUES ({marks})', tuple(cols.values()))
    return c.lastrowid


meta = doc["metadata"]
nid = ins("rocpd_info_node", hash=1, machine_id="m0", hostname=meta["node"]["hostname"])
pid = ins("rocpd_info_process", nid=nid, pid=meta["pid"], init=meta["init_time"], fini=meta["fini_time"],
          command=" ".join(meta["command"]))
agents = {}
for a in doc["agents"]:
    agents[a["id"]["handle"]] = ins("rocpd_info_agent", nid=nid, pid=pid,
                                    type="GPU" if a["type"] == 2 else "CPU",
                                    type_index=a["logical_node_type_id"], name=a["name"],
                                    product_name=a["product_name"])
symbols = {}
for k in doc["kernel_symbols"]:
    symbols[k["kernel_id"]] = ins("rocpd_info_kernel_symbol", nid=nid, pid=pid, code_object_id=1,
                                  kernel_name=k["kernel_name"], display_name=k["formatted_kernel_name"])
threads, queues, tracks = {}, {}, {}


def thread(tid):
    if tid not in threads:
        threads[tid] = ins("rocpd_info_thread", nid=nid, pid=pid, tid=tid)
    return threads[tid]


def track(tid=None, agent=None, queue=None):
    key = (tid, agent, queue)
    if key not in tracks:
        tracks[key] = ins("rocpd_track", nid=nid, pid=pid, tid=tid, agent_id=agent, queue_id=queue)
    return tracks[key]


def times(r, trk):
    a = ins("rocpd_timestamp", value=r["start_timestamp"], phase=1, track_id=trk)
    b = ins("rocpd_timestamp", value=r["end_timestamp"], phase=2, track_id=trk)
    return a, b


kinds = doc["strings"]["buffer_records"]
markers = {m["key"]: m["value"] for m in doc["strings"]["marker_api"]}
category = {"hip_api": "HIP_RUNTIME_API_EXT", "hsa_api": "HSA_CORE_API",
            "marker_api": "MARKER_CORE_RANGE_API", "rccl_api": "RCCL_API"}
recs = doc["buffer_records"]
for list_name, cat in category.items():
    for r in recs.get(list_name, []):
        trk = track(tid=thread(r["thread_id"]))
        corr = r["correlation_id"]["internal"]
        name = kinds[r["kind"]]["operations"][r["operation"]]
        if list_name == "marker_api":
            name = markers.get(corr, name)
        ev = ins("rocpd_event", category_id=s(cat), correlation_id=corr)
        st, en = times(r, trk)
        ins("rocpd_region", track_id=trk, name_id=s(name), start_id=st, end_id=en, event_id=ev)
for r in recs.get("kernel_dispatch", []):
    info = r["dispatch_info"]
    q = info["queue_id"]["handle"]
    if q not in queues:
        queues[q] = ins("rocpd_info_queue", nid=nid, pid=pid, name=f"queue {q}")
    trk = track(tid=thread(r["thread_id"]), agent=agents[info["agent_id"]["handle"]], queue=queues[q])
    ev = ins("rocpd_event", category_id=s("KERNEL_DISPATCH"), correlation_id=r["correlation_id"]["internal"])
    st, en = times(r, trk)
    wg, gr = info["workgroup_size"], info["grid_size"]
    ins("rocpd_kernel_dispatch", track_id=trk, kernel_id=symbols[info["kernel_id"]],
        dispatch_id=info["dispatch_id"], start_id=st, end_id=en, workgroup_size_x=wg["x"],
        workgroup_size_y=wg["y"], workgroup_size_z=wg["z"], grid_size_x=gr["x"], grid_size_y=gr["y"],
        grid_size_z=gr["z"], event_id=ev)
for r in recs.get("memory_copy", []):
    dst = agents[r["dst_agent_id"]["handle"]]
    trk = track(tid=thread(r["thread_id"]), agent=dst)
    ev = ins("rocpd_event", category_id=s("MEMORY_COPY"), correlation_id=r["correlation_id"]["internal"])
    st, en = times(r, trk)
    name = kinds[r["kind"]]["operations"][r["operation"]]
    ins("rocpd_memory_copy", track_id=trk, start_id=st, end_id=en, name_id=s(name), dst_agent_id=dst,
        src_agent_id=agents[r["src_agent_id"]["handle"]], size=r["bytes"], event_id=ev)
for r in recs.get("memory_allocation", []):
    name = kinds[r["kind"]]["operations"][r["operation"]]
    handle = r.get("agent_id", {}).get("handle", 0)
    trk = track(tid=thread(r["thread_id"]), agent=agents.get(handle))
    st, en = times(r, trk)
    address = r.get("address")
    ins("rocpd_memory_allocate", track_id=trk, type="FREE" if name.endswith("_FREE") else "ALLOC",
        level="VIRTUAL" if "VMEM" in name else "REAL", start_id=st, end_id=en, name_id=s(name),
        address=int(address, 16) if address is not None else None,
        size=r.get("allocation_size", 4096))
db.commit()
db.execute("VACUUM")
db.close()
print(OUT, os.path.getsize(OUT))

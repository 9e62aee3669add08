#!/usr/bin/env python3
"""Writes tests/fixtures/rocprof/memory_allocation.json: rocprofv3's JSON
(`rocprofv3 --memory-allocation-trace --hip-trace -f json`) for a small
made-up run with memory_allocation records in rocprofiler-sdk's layout
(serialization.hpp, `save(rocprofiler_buffer_tracing_memory_allocation_record_t)`:
size, kind, operation, thread_id, correlation_id, start/end_timestamp,
agent_id {handle}, address as 16 hex digits, allocation_size), the
operations numbered as its enum (NONE, ALLOCATE, VMEM_ALLOCATE, FREE,
VMEM_FREE). Frees carry no agent and no size, as rocprofiler-sdk writes
them. Provisional: no public file holds these records.

The cases the running sum of allocated bytes must get right: two GPUs
and the CPU agent; a VMEM allocation and its free; a free of a null
address and one of an address never allocated; an address freed and
allocated again with another size (rocprofv3 pairs every free with the
first allocation at its address); two allocations ending at one
timestamp on one agent (rocprofv3 keeps the first endpoint).

Then: python3 tools/rocprof_oracle.py tests/fixtures/rocprof/memory_allocation.json

Run from the repository root: python3 tools/make_rocprof_memory_fixture.py
"""
import json

KINDS = ["NONE", "HIP_RUNTIME_API", "MEMORY_ALLOCATION"]
OPS = {
    "HIP_RUNTIME_API": ["hipMalloc", "hipFree"],
    "MEMORY_ALLOCATION": ["MEMORY_ALLOCATION_NONE", "MEMORY_ALLOCATION_ALLOCATE",
                          "MEMORY_ALLOCATION_VMEM_ALLOCATE", "MEMORY_ALLOCATION_FREE",
                          "MEMORY_ALLOCATION_VMEM_FREE"],
}
K = {k: i for i, k in enumerate(KINDS)}
T0 = 71_000_000_000
PID = TID = 5151
CPU, GPU0, GPU1 = 81920, 81922, 81923
MiB = 1 << 20

hip, mem = [], []
corr = 0


def agent(handle, typ, name, index):
    return {"size": 312, "id": {"handle": handle}, "type": typ, "name": name,
            "product_name": "AMD Instinct MI300X" if typ == 2 else "AMD EPYC 9654",
            "node_id": index + 1, "logical_node_id": index + 1, "logical_node_type_id": index}


def record(op, t, dur, agent=None, address=0, size=0):
    """A HIP call and the memory_allocation record it made."""
    global corr
    corr += 1
    free = "FREE" in op
    # Three threads: the records that overlap in time are on different ones.
    tid = TID + corr % 3
    hip.append({"size": 48, "kind": K["HIP_RUNTIME_API"],
                "operation": OPS["HIP_RUNTIME_API"].index("hipFree" if free else "hipMalloc"),
                "thread_id": tid, "correlation_id": {"internal": corr, "external": 0},
                "start_timestamp": T0 + t, "end_timestamp": T0 + t + dur})
    r = {"size": 64, "kind": K["MEMORY_ALLOCATION"],
         "operation": OPS["MEMORY_ALLOCATION"].index("MEMORY_ALLOCATION_" + op),
         "thread_id": tid, "correlation_id": {"internal": corr, "external": 0},
         "start_timestamp": T0 + t, "end_timestamp": T0 + t + dur,
         "agent_id": {"handle": agent if agent is not None and not free else 0},
         "address": "0x%016x" % address, "allocation_size": 0 if free else size}
    mem.append(r)


record("ALLOCATE", 1_000, 2_000, GPU0, 0x7F0000100000, 64 * MiB)
record("ALLOCATE", 5_000, 1_000, GPU0, 0x7F0004100000, 16 * MiB)
record("ALLOCATE", 6_000, 1_500, GPU1, 0x7E0000100000, 32 * MiB)
record("ALLOCATE", 7_000, 1_000, CPU, 0x55AA00001000, 4 * MiB)
record("VMEM_ALLOCATE", 9_000, 3_000, GPU0, 0x7F1000000000, 256 * MiB)
record("FREE", 20_000, 1_000, address=0x7F0004100000)
record("FREE", 22_000, 500, address=0)                       # null: HSA frees it
record("FREE", 23_000, 500, address=0x7D0000000000)          # never allocated
record("ALLOCATE", 30_000, 1_000, GPU0, 0x7F0004100000, 8 * MiB)   # the address again
record("ALLOCATE", 31_000, 1_000, GPU1, 0x7E0002100000, 2 * MiB)   # ends where the next…
record("ALLOCATE", 31_500, 500, GPU1, 0x7E0003100000, 1 * MiB)     # …ends: one endpoint lost
record("FREE", 40_000, 1_000, address=0x7F0004100000)              # paired with the 16 MiB
record("VMEM_FREE", 45_000, 2_000, address=0x7F1000000000)
record("FREE", 50_000, 1_000, address=0x55AA00001000)

doc = {"rocprofiler-sdk-tool": [{
    "metadata": {"node": {"id": 0, "hostname": "mi300-node-0"}, "pid": PID,
                 "init_time": T0 - 1_000_000, "fini_time": T0 + 1_000_000,
                 "command": ["python3", "alloc.py"], "config": {"json_output": True}},
    "agents": [agent(CPU, 1, "AMD EPYC", 0), agent(GPU0, 2, "gfx942", 0),
               agent(GPU1, 2, "gfx942", 1)],
    "counters": [],
    "strings": {"callback_records": [{"kind": k, "operations": OPS.get(k, [])} for k in KINDS],
                "buffer_records": [{"kind": k, "operations": OPS.get(k, [])} for k in KINDS],
                "marker_api": [], "correlation_id": {"external": []}},
    "code_objects": [],
    "kernel_symbols": [],
    "host_functions": [],
    "summary": [],
    "callback_records": {"counter_collection": []},
    "buffer_records": {"hip_api": hip, "memory_allocation": mem},
}]}
with open("tests/fixtures/rocprof/memory_allocation.json", "w") as f:
    json.dump(doc, f)
print("tests/fixtures/rocprof/memory_allocation.json")

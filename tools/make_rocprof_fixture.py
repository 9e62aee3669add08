#!/usr/bin/env python3
"""Writes tests/fixtures/rocprof/sys_trace.json: rocprofv3's JSON
(`rocprofv3 --sys-trace -f json`) for a small made-up run, shaped as the
public MI350X file (AMD-AGI/TraceLens tests/rocprof/908_results.json.gz:
its top-level keys in their order, its agent, symbol and dispatch record
fields) with the record kinds that file lacks — hip_api, hsa_api,
marker_api, rccl_api, memory_copy, memory_allocation — in the same record
layout (kind / operation indexing strings.buffer_records, correlation_id
{internal, external}, start/end_timestamp), as rocprofiler-sdk documents
them. Provisional: no public file holds those kinds.

Run from the repository root: python3 tools/make_rocprof_fixture.py
"""
import json

KINDS = ["NONE", "HSA_CORE_API", "HSA_AMD_EXT_API", "HSA_IMAGE_EXT_API", "HSA_FINALIZE_EXT_API",
         "HIP_RUNTIME_API", "HIP_COMPILER_API", "MARKER_CORE_API", "MARKER_CONTROL_API",
         "MARKER_NAME_API", "MEMORY_COPY", "KERNEL_DISPATCH", "SCRATCH_MEMORY",
         "CORRELATION_ID_RETIREMENT", "RCCL_API", "OMPT", "MEMORY_ALLOCATION"]
OPS = {
    "HSA_CORE_API": ["hsa_init", "hsa_shut_down", "hsa_signal_wait_scacquire"],
    "HIP_RUNTIME_API": ["hipDeviceSynchronize", "hipLaunchKernel", "hipMemcpyAsync",
                        "hipExtModuleLaunchKernel"],
    "MARKER_CORE_API": ["roctxMarkA", "roctxRangePushA", "roctxRangePop"],
    "MEMORY_COPY": ["MEMORY_COPY_NONE", "MEMORY_COPY_HOST_TO_HOST", "MEMORY_COPY_HOST_TO_DEVICE",
                    "MEMORY_COPY_DEVICE_TO_HOST", "MEMORY_COPY_DEVICE_TO_DEVICE"],
    "KERNEL_DISPATCH": ["KERNEL_DISPATCH_NONE", "KERNEL_DISPATCH_ENQUEUE", "KERNEL_DISPATCH_COMPLETE"],
    "RCCL_API": ["ncclAllReduce", "ncclBroadcast"],
    "MEMORY_ALLOCATION": ["MEMORY_ALLOCATION_NONE", "MEMORY_ALLOCATION_ALLOCATE", "MEMORY_ALLOCATION_FREE"],
}
K = {k: i for i, k in enumerate(KINDS)}


def op(kind, name):
    return OPS[kind].index(name)


def agent(handle, typ, name, product, index):
    a = {"size": 312, "id": {"handle": handle}, "type": typ, "cu_count": 256 if typ == 2 else 0,
         "name": name, "vendor_name": "AMD", "product_name": product, "node_id": index + 1,
         "logical_node_id": index + 1, "logical_node_type_id": index}
    return a


def symbol(kid, name, formatted):
    return {"size": 88, "kernel_id": kid, "code_object_id": 1, "kernel_name": name,
            "formatted_kernel_name": formatted, "demangled_kernel_name": name,
            "truncated_kernel_name": name, "sgpr_count": 32, "arch_vgpr_count": 8}


T0 = 63_857_982_592_000
PID, TID = 4242, 4242
recs = {k: [] for k in ["kernel_dispatch", "hip_api", "hsa_api", "marker_api", "rccl_api",
                        "memory_copy", "memory_allocation", "scratch_memory"]}
corr = 0


def api(list_name, kind, name, t, dur, c=None, tid=TID):
    global corr
    if c is None:
        corr += 1
        c = corr
    recs[list_name].append({"size": 48, "kind": K[kind], "operation": op(kind, name), "thread_id": tid,
                            "correlation_id": {"internal": c, "external": 0},
                            "start_timestamp": T0 + t, "end_timestamp": T0 + t + dur})
    return c


def dispatch(c, t, dur, kernel_id, agent=37946, queue=16):
    recs["kernel_dispatch"].append({
        "size": 184, "kind": K["KERNEL_DISPATCH"], "operation": 2, "thread_id": TID,
        "correlation_id": {"internal": c, "external": 0},
        "start_timestamp": T0 + t, "end_timestamp": T0 + t + dur,
        "dispatch_info": {"size": 72, "agent_id": {"handle": agent}, "queue_id": {"handle": queue},
                          "kernel_id": kernel_id, "dispatch_id": c, "private_segment_size": 0,
                          "group_segment_size": 0, "workgroup_size": {"x": 256, "y": 1, "z": 1},
                          "grid_size": {"x": 65536, "y": 1, "z": 1}},
        "stream_id": {"handle": 0}})


# A step: a ROCTX range over three launches, a copy, an all-reduce on GPU 1.
marker_strings = []
for step in range(3):
    base = step * 1_000_000
    c = api("marker_api", "MARKER_CORE_API", "roctxRangePushA", base, 400_000)
    marker_strings.append({"key": c, "value": f"train_step {step}"})
    for k, (kid, dur) in enumerate([(1, 50_000), (2, 120_000), (1, 45_000)]):
        c = api("hip_api", "HIP_RUNTIME_API", "hipLaunchKernel", base + 10_000 + k * 20_000, 8_000)
        dispatch(c, base + 30_000 + k * 150_000, dur, kid)
    c = api("hip_api", "HIP_RUNTIME_API", "hipMemcpyAsync", base + 100_000, 12_000)
    recs["memory_copy"].append({"size": 64, "kind": K["MEMORY_COPY"],
                                "operation": op("MEMORY_COPY", "MEMORY_COPY_HOST_TO_DEVICE"),
                                "thread_id": TID, "correlation_id": {"internal": c, "external": 0},
                                "start_timestamp": T0 + base + 500_000,
                                "end_timestamp": T0 + base + 540_000,
                                "dst_agent_id": {"handle": 37946}, "src_agent_id": {"handle": 37944},
                                "bytes": 8 << 20})
    rc = api("rccl_api", "RCCL_API", "ncclAllReduce", base + 600_000, 60_000, tid=TID + 1)
    c = api("hip_api", "HIP_RUNTIME_API", "hipExtModuleLaunchKernel", base + 610_000, 9_000, tid=TID + 1)
    dispatch(c, base + 650_000, 200_000, 3, agent=37947, queue=24)
api("hsa_api", "HSA_CORE_API", "hsa_signal_wait_scacquire", 2_900_000, 50_000)
api("memory_allocation", "MEMORY_ALLOCATION", "MEMORY_ALLOCATION_ALLOCATE", 5_000, 1_000)

doc = {"rocprofiler-sdk-tool": [{
    "metadata": {"node": {"id": 0, "hostname": "mi350-node-0"}, "pid": PID,
                 "init_time": T0 - 1_000_000, "fini_time": T0 + 10_000_000,
                 "command": ["python3", "train.py"], "config": {"json_output": True}},
    "agents": [agent(37944, 1, "AMD EPYC", "AMD EPYC 9575F", 0),
               agent(37946, 2, "gfx950", "AMD Instinct MI350X", 0),
               agent(37947, 2, "gfx950", "AMD Instinct MI350X", 1)],
    "counters": [],
    "strings": {"callback_records": [{"kind": k, "operations": OPS.get(k, [])} for k in KINDS],
                "buffer_records": [{"kind": k, "operations": OPS.get(k, [])} for k in KINDS],
                "marker_api": marker_strings, "correlation_id": {"external": []}},
    "code_objects": [],
    "kernel_symbols": [symbol(0, "", "0"),
                       symbol(1, "elementwise_kernel.kd", "void at::native::elementwise_kernel<128, 4>(int)"),
                       symbol(2, "Cijk_Ailk_Bljk_BBS_BH.kd", "Cijk_Ailk_Bljk_BBS_BH_MT64x32x256"),
                       symbol(3, "ncclDevKernel_Generic_1.kd", "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)")],
    "host_functions": [],
    "summary": [],
    "callback_records": {"counter_collection": []},
    "buffer_records": recs,
}]}
with open("tests/fixtures/rocprof/sys_trace.json", "w") as f:
    json.dump(doc, f)

#!/usr/bin/env python3
"""Writes tests/fixtures/neuron-wild/: one small Neuron file per shape that
public code written against real captures attests (shared/research/
neuron-wild.md and neuron-wild-examples/), each with an .expected.json whose
figures this script computes from the events it writes — never by tracelane.

Shapes:
  system_profile.explorer.json  neuron-explorer view --output-format json:
      keys sorted (Go's encoder), a cpu_util list past 64 KiB before
      trace_event, device_mem_usage / system_profile_metadata /
      device_profile_list, flow_id lists of strings, LNC = 2 (one
      nc_exec_running per physical core, same exec_id), the runtime's stage
      events, model switches, collectives, timestamp_sync_point, names
      suffixed with their source ("aten::mm [trace.json]").
  system_profile.heavy.json     the Explorer export with long host copies
      and collective barriers (the runtime rules' firing case).
  system_profile.beta.json      the Profiler 2.0 beta export: trace_events,
      type (11 runtime, 99999 framework) and group, no trace_event_source
      or timestamp_unit, sizes as strings; one event no field places.
  system_profile.filtered.json  an export filtered to a few event types: no
      flow_id anywhere; joins by exec_id (runtime stage <-> execution) and by
      sequence id (framework nrt_sequence_id <-> runtime nrta_seq_id); the
      profiler's "N trace events were dropped" warning.
  nrt_sys_trace_fetch.json      nrt_sys_trace_fetch_events: start/stop halves
      drained per NeuronCore ring (not in time order), paired by
      (nc_idx, tracking_id); one start whose stop never came.
  nrt_sys_trace_fetch.cut.json  the same, cut off in the middle of a record.
  summary.json                  --output-format summary-json: s_/n_ keys,
      *_percent as 0-1 fractions.
  metadata_only.json            a system profile export with its tables and
      no events (cannot be opened: the message names what it held).

Every value is illustrative; every field name and shape is attested where
the research says so (its .md files cite each one).

Usage: python3 tools/gen_neuron_wild.py tests/fixtures/neuron-wild
"""
import json
import os
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/neuron-wild"
INSTANCE = "i-0b1ea78ca2865fd32"
PID = "1765325"
RT_TID = 1765400
BASE = 1766072157000000000  # epoch ns
MODELS = [
    (605291374318702, "/var/tmp/neuron-compile-cache/neuronxcc-2.21/MODULE_5d1e2b7c9a0f4e3d8c7b6a5f4e3d2c1b/model.neff"),
    (605291374318799, "/var/tmp/neuron-compile-cache/neuronxcc-2.21/MODULE_9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d/model.neff"),
]
HBM_CATEGORIES = [
    "tensors", "weights", "scratchpad", "shared_scratchpad", "collectives", "io",
    "dram_spill", "dma_rings_runtime", "dma_rings_spill", "dma_rings_io",
    "dma_rings_collectives", "profiler_buffers", "generic", "tensor_instructions",
    "scalar_instructions", "vector_instructions", "gpsimd_instructions",
    "sync_instructions", "scalar_table", "ucode_lib", "gpsimd_stdio", "unknown",
]


def write(name, obj, sort_keys=True):
    path = os.path.join(OUT, name)
    with open(path, "w") as f:
        json.dump(obj, f, sort_keys=sort_keys, separators=(",", ":"))
        f.write("\n")


def expect(name, obj):
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")


def common(ev, source):
    ev.update({
        "instance_id": INSTANCE,
        "process_id": PID,
        "timestamp_unit": "ns",
        "trace_event_source": source,
    })
    return ev


# --------------------------------------------------------------------------
# The Explorer export.

OPS = ["aten::mm", "aten::add", "aten::mse_loss", "aten::mm", "aten::add", "aten::mse_loss"]


def explorer(flows=True, seq_ids=False, dropped=None, copy_in=27_094, barrier=31_000, enc=45_000):
    """Six executions on logical core 0 (physical cores 0 and 1): one per
    op, alternating between two models (a model switch before each
    execution whose model differs from the last one). Returns the file's
    object and what it holds, per op."""
    events = []
    ev_id = [3377699720529000]
    hw_id = [1125899906844000]
    flow_hw = [1]

    def nid(counter):
        counter[0] += 1
        return counter[0]

    per_op = []
    last_model = None
    for k, op in enumerate(OPS):
        t0 = BASE + 39_500_000 + k * (1_000_000 + copy_in - 27_094)
        seq = 281474976710685 + k
        model_id, model_name = MODELS[k % 2] if k < 3 else MODELS[(k + 1) % 2]
        exec_id = 101 + k
        fw = common({
            "duration": 41000 + 1000 * k,
            "framework_stream_id": 0,
            "id": 4611686018427390672 + k,
            "name": f"{op} [trace.json]",
            "neff_cache_key": f"{op.split('::')[1]}--_[128,1024]:BFloat16:S(C)_i{k}:3f1f594c35ab",
            "nrt_sequence_id": seq,
            "pcore_idx": 0,
            "thread_id": 0,
            "timestamp": t0,
        }, "framework")
        if flows:
            fw["flow_id"] = [str(seq)]
        events.append(fw)
        rt = lambda name, start, dur, **kw: common({  # noqa: E731
            "duration": dur, "id": nid(ev_id), "lnc_idx": "0", "name": name, "nc_idx": 0,
            "thread_id": RT_TID, "timestamp": start, "worker_gid": 0, **kw}, "neuron_rt")
        events.append(rt("dmem_buf_copyin", t0 + 20_000 - (copy_in - 27_094), copy_in, mem_type=2, size=4194304))
        events.append(rt("nrt_model_submit", t0 + 50_000, 71_000, model_id=model_id, model_name=model_name))
        sched = rt("nrta_execute_schedule", t0 + 60_000, 4_000, model_id=model_id)
        if seq_ids:
            sched["nrta_seq_id"] = seq
        events.append(sched)
        events.append(rt("kbl_exec_pre", t0 + 125_000, 2_000, exec_id=exec_id, model_id=model_id, model_name=model_name))
        wait = rt("kbl_exec_wait", t0 + 130_000, 270_000, exec_id=exec_id, model_id=model_id)
        hw_flow = str(flow_hw[0])
        flow_hw[0] += 1
        if flows:
            wait["flow_id"] = [str(seq), hw_flow]
        events.append(wait)
        events.append(rt("kbl_exec_post", t0 + 400_000, 3_000, exec_id=exec_id, model_id=model_id))
        events.append(rt("nrt_tensor_read", t0 + 405_000, 20_000, size=1048576, tensor_id=str(9000 + k)))
        events.append(rt("dmem_buf_copyout", t0 + 410_000, 12_000, mem_type=2, size=1048576))
        switch = 0
        hw = lambda name, start, dur, **kw: common({  # noqa: E731
            "duration": dur, "exec_id": exec_id, "id": nid(hw_id), "model_id": model_id,
            "name": name, "nc_idx": 0, "timestamp": start, "worker_gid": 0, **kw}, "neuron_hw")
        if model_id != last_model and last_model is not None:
            switch = 12_000
            events.append(hw("nc_model_switch", t0 + 135_000, switch, device_core_idx=0, pcore_idx=0))
        last_model = model_id
        starts = []
        ends = []
        for core, (skew, dur) in enumerate([(0, 228_496 + 500 * k), (308, 228_100 + 400 * k)]):
            start = t0 + 160_000 + skew
            nc_start = 1_543_032_702 + k * 1_000_000 + skew
            e = hw("nc_exec_running", start, dur, device_core_idx=core, model_name="model.neff",
                   nc_start_timestamp_ns=nc_start, nc_stop_timestamp_ns=nc_start + dur, pcore_idx=core)
            if flows:
                e["flow_id"] = [hw_flow]
            events.append(e)
            starts.append(start)
            ends.append(start + dur)
        events.append(hw("cc_exec_barrier", t0 + 170_000, barrier))
        events.append(hw("cc_running", t0 + 270_000, 68_300, algorithm="Ring", gid=0, op_id=3))
        events.append(hw("timestamp_sync_point", max(ends) + 2_000, 0,
                         cpu_timestamp_ns=max(ends) + 2_000, nc_timestamp_ns=1_543_261_500 + k * 1_000_000))
        per_op.append({
            "op": op,
            "start": t0,
            "execution_ns": max(ends) - min(starts),
            "switch_ns": switch,
            "cores": [0, 1],
            "exec_id": exec_id,
            "nrta_seq_id": seq,
        })
    # The runtime's collective barrier once, on the host.
    events.append(common({"duration": enc, "id": nid(ev_id), "lnc_idx": "0", "name": "enc_barrier",
                          "nc_idx": 0, "thread_id": RT_TID, "timestamp": BASE + 45_600_000,
                          "worker_gid": 0}, "neuron_rt"))
    cpu = []
    for s in range(12):
        for c in range(96):
            cpu.append({"cpu_id": str(c), "duration": 1, "instance_id": INSTANCE,
                        "timestamp": BASE + s * 500_000, "util": round((c * 7 + s * 3) % 100 + 0.25, 4)})
    hbm_rows = []
    for s in range(5):
        row = {"device_idx": 0, "hbm_idx": "0" if s % 2 else 0, "instance_id": INSTANCE,
               "timestamp": BASE + s * 2_000_000}
        values = {
            "tensors": 2147483648 + s * 1048576, "weights": 7516192768, "scratchpad": 1073741824,
            "collectives": 268435456, "io": 33554432, "profiler_buffers": 536870912,
            "dma_rings_runtime": 2097152, "dma_rings_io": 1048576, "dma_rings_collectives": 4194304,
            "dram_spill": 0 if s < 2 else 16777216 * (s - 1), "dma_rings_spill": 5000000,
            "generic": 0,
        }
        for c, v in values.items():
            row[f"{c}_bytes"] = v
        row["total_bytes"] = sum(values.values())
        hbm_rows.append(row)
    doc = {
        "cpu_util": cpu,
        "device_mem_usage": hbm_rows,
        "device_profile_list": [{"device_profile_name": f"{INSTANCE}_pid_{PID}_nc_0_session_0",
                                 "instance_id": INSTANCE, "model_id": MODELS[0][0], "nc_id": 0,
                                 "process_id": PID, "session_id": 0}],
        "mem_usage": [{"duration": 1, "instance_id": INSTANCE, "percent_usage": 9.728179797845964,
                       "timestamp": BASE + s * 2_000_000, "usage": 51805806592 + s * 4096} for s in range(4)],
        "system_profile_metadata": [{"first_ts_ns": str(BASE), "hbm_capacity_bytes": 103079215104,
                                     "last_ts_ns": str(BASE + 1_000_000_000), "ntff_version": 5}],
        "trace_event": events,
        "warnings": [{"message": f"Warning: {dropped} trace events were dropped"}] if dropped else [],
    }
    return doc, per_op, hbm_rows


def expected_explorer(doc, per_op, hbm_rows, flows):
    events = doc["trace_event"]
    by = {}
    for e in events:
        by[e["trace_event_source"]] = by.get(e["trace_event_source"], 0) + 1
    markers = sum(1 for e in events if e["name"] == "timestamp_sync_point")
    lnc = len(per_op)
    device_by_op = {}
    for p in per_op:
        device_by_op[p["op"]] = device_by_op.get(p["op"], 0) + p["execution_ns"] + p["switch_ns"]
    peaks = {}
    for c in HBM_CATEGORIES:
        vals = [r[f"{c}_bytes"] for r in hbm_rows if f"{c}_bytes" in r]
        if vals and max(vals) > 0:
            peaks[c] = max(vals)
    collectives = [e for e in events if e["name"] in ("cc_running", "cc_exec_barrier")]
    families = {
        "submit": ["nrt_model_submit", "nrta_execute_schedule"],
        "host_blocked": ["kbl_exec_pre", "kbl_exec_post", "kbl_exec_wait"],
        "copies": ["dmem_buf_copyin", "dmem_buf_copyout", "nrt_tensor_write", "nrt_tensor_read"],
        "model_switch": ["nc_model_switch"],
        "collective": ["cc_running"],
        "barrier": ["cc_exec_barrier", "enc_barrier"],
    }
    by_family = {}
    for fam, names in families.items():
        mine = [e for e in events if e["name"] in names]
        if mine:
            by_family[fam] = {"count": len(mine), "total_ns": sum(e["duration"] for e in mine)}
    copy_bytes = {}
    for e in events:
        if e["name"] in families["copies"] and "size" in e:
            copy_bytes[e["name"]] = copy_bytes.get(e["name"], 0) + int(e["size"])
    return {
        "about": "computed by tools/gen_neuron_wild.py from the events it wrote",
        "events": len(events),
        "by_source": by,
        "markers_as_instants": markers,
        # Slices: every event but the markers, plus one logical execution
        # per LNC = 2 pair.
        "slices": len(events) - markers + lnc,
        "lnc_executions": lnc,
        "framework_ops": len(per_op),
        # An op's device time: its execution, first start to last end of
        # its two physical cores' events, plus the model switch before it.
        "device_self_ns_by_op": device_by_op,
        "device_total_ns_of_ops": sum(device_by_op.values()),
        "collective_events_without_op": len(collectives),
        "collective_ns_without_op": sum(e["duration"] for e in collectives),
        "model_switches": sum(1 for e in events if e["name"] == "nc_model_switch"),
        "cpu_util_samples": len(doc["cpu_util"]),
        "mem_usage_samples": len(doc["mem_usage"]),
        "hbm_rows": len(hbm_rows),
        "hbm_peak_bytes": peaks,
        "hbm_capacity_bytes": doc["system_profile_metadata"][0]["hbm_capacity_bytes"],
        "ntff_version": 5,
        "flows": flows,
        "nrta_seq_id_by_op_start": {str(p["start"]): p["nrta_seq_id"] for p in per_op},
        "families": by_family,
        "copy_bytes": copy_bytes,
        "dram_spill_peak": peaks.get("dram_spill", 0),
    }


# --------------------------------------------------------------------------
# The Profiler 2.0 beta export (no trace_event_source, no timestamp_unit).

def beta():
    t = 1729888371056597613
    events = [
        {"duration": 3758079, "group": "framework-80375131", "instance_id": "i-0f207fb2a99bd2d08",
         "name": "PjitFunction(matmul_allgather)", "process_id": "701", "thread_id": 80375131,
         "timestamp": 1729888382798557372, "type": 99999},
        {"duration": 27094, "group": "nrt-nc-000", "id": 1, "instance_id": "i-0f207fb2a99bd2d08", "lnc_idx": "0",
         "name": "nrt_tensor_write", "parent_id": 0, "process_id": "1627711", "size": "4",
         "tensor_id": "4900392441224765051", "tensor_name": "_unknown_", "thread_id": 1627711,
         "timestamp": t, "type": 11},
        {"duration": 310000, "group": "nrt-nc-000", "id": 2, "instance_id": "i-0f207fb2a99bd2d08",
         "name": "nrt_execute", "parent_id": 0, "process_id": "1627711", "thread_id": 1627711,
         "timestamp": t + 100000, "type": 11},
        # A hardware event: its name tells its layer.
        {"duration": 250000, "device_core_idx": 0, "exec_id": 7, "instance_id": "i-0f207fb2a99bd2d08",
         "name": "nc_exec_running", "nc_idx": 0, "process_id": "1627711", "timestamp": t + 120000},
        # Nothing places this one.
        {"duration": 1000, "group": "misc", "instance_id": "i-0f207fb2a99bd2d08", "name": "mystery",
         "process_id": "1627711", "timestamp": t + 500000, "type": 5},
    ]
    doc = {
        "cpu_util": [{"cpu_id": "47", "duration": 1, "instance_id": "i-0f207fb2a99bd2d08",
                      "timestamp": 1729888371287337243, "util": 2.3255813}],
        "mem_usage": [{"duration": 1, "instance_id": "i-0f207fb2a99bd2d08", "percent_usage": 9.728179797845964,
                       "timestamp": 1729888369286687792, "usage": 51805806592}],
        "trace_events": events,
    }
    exp = {
        "about": "computed by tools/gen_neuron_wild.py from the events it wrote",
        "events": len(events),
        "by_type_group": 3,
        "by_name": 1,
        "unknown_layer": 1,
        "framework_thread": "TID:80375131",
        "runtime_lane": "NC:0",
        "sizes_as_strings": True,
    }
    return doc, exp


# --------------------------------------------------------------------------
# The runtime's fetched trace.

def fetch(cut=False):
    """Two logical cores (nc 0, nc 1), two executions each under LNC = 2.
    Records are drained per NeuronCore ring: nc 1's ring first, each ring
    in its own order; one nrt_execute start on nc 1 never stops."""
    rings = {0: [], 1: []}
    rid = [16]
    track = [1125899906842640]
    per_exec = []

    def rec(nc, event_type, phase, tracking, ts, data, seq=None):
        rid[0] += 1
        r = {"data": data, "event_type": event_type, "id": rid[0], "nc_idx": nc, "nc_local_id": rid[0],
             "phase": phase, "thread_id": 1765400 + nc, "timestamp_ns": ts, "tracking_id": tracking,
             "worker_gid": nc}
        if seq is not None:
            r["nrta_seq_id"] = seq
        rings[nc].append(r)

    def tid():
        track[0] += 1
        return track[0]

    for nc in (0, 1):
        for k in range(2):
            t0 = 1766072157039500000 + nc * 5_000_000 + k * 1_000_000
            seq = 281474976710685 + nc * 10 + k
            exec_id = 23 + k + nc * 10
            model = {"model_id": 10 + nc, "model_name": f"ctx_model_{nc}/whole.neff"}
            ex = tid()
            rec(nc, "nrt_execute", "start", ex, t0, dict(model), seq)
            pre = tid()
            rec(nc, "kbl_exec_pre", "start", pre, t0 + 10_000, {"exec_id": exec_id, **model})
            rec(nc, "kbl_exec_pre", "stop", pre, t0 + 12_000, {})
            cin = tid()
            rec(nc, "dmem_buf_copyin", "start", cin, t0 + 13_000,
                {"mem_type": 2, "mem_handle": 140230000000000, "offset": 0, "size": 4194304})
            rec(nc, "dmem_buf_copyin", "stop", cin, t0 + 40_000, {})
            starts, ends = [], []
            for core, skew, dur in ((2 * nc, 0, 228_496 + k * 100), (2 * nc + 1, 300, 228_100 + k * 90)):
                h = tid()
                nc_start = 1543032702 + nc * 9_000_000 + k * 1_000_000 + skew
                host = t0 + 189_700 + skew
                rec(nc, "nc_exec_running", "start", h, host,
                    {"device_core_idx": core, "exec_id": exec_id, "model_id": 10 + nc, "nc_timestamp_ns": nc_start})
                # The host time of the stop is the synchronised clock's; the
                # device clock's pair gives the duration.
                rec(nc, "nc_exec_running", "stop", h, host + dur + 7, {"nc_timestamp_ns": nc_start + dur})
                starts.append(host)
                ends.append(host + dur)
            rec(nc, "timestamp_sync_point", "instant", tid(), t0 + 420_000,
                {"exec_id": exec_id, "nc_timestamp_ns": 1543261500, "cpu_timestamp_ns": t0 + 420_000})
            rec(nc, "nrt_execute", "stop", ex, t0 + 450_000, {})
            per_exec.append({"nc": nc, "exec_id": exec_id, "nrta_seq_id": seq,
                             "execution_ns": max(ends) - min(starts),
                             "durations": [228_496 + k * 100, 228_100 + k * 90]})
    # A start whose stop never came (the ring was drained mid-execution).
    rec(1, "nrt_execute", "start", tid(), 1766072157049500000, {"model_id": 11}, 281474976710999)
    events = rings[1] + rings[0]
    doc = {"data_version": 2, "events": events}
    pairs = sum(1 for e in events if e["phase"] == "stop")
    instants = sum(1 for e in events if e["phase"] == "instant")
    exp = {
        "about": "computed by tools/gen_neuron_wild.py from the records it wrote",
        "records": len(events),
        "pairs": pairs,
        "instants": instants,
        "unpaired": len(events) - 2 * pairs - instants,
        "lnc_executions": len(per_exec),
        "executions": per_exec,
        # Slices: one per pair, plus one logical execution per LNC pair.
        "slices": pairs + len(per_exec),
    }
    text = json.dumps(doc, separators=(",", ":"))
    if cut:
        # Cut inside the record after the tenth one.
        at = 0
        for _ in range(10):
            at = text.index('{"data"', at + 1)
        text = text[: at + 25]
        complete = json.loads(text[: text.rindex("},{") + 1] + "]}")
        done = complete["events"]
        starts = {(e["nc_idx"], e["tracking_id"]) for e in done if e["phase"] == "start"}
        stops = {(e["nc_idx"], e["tracking_id"]) for e in done if e["phase"] == "stop"}
        exp = {
            "about": "computed by tools/gen_neuron_wild.py: the records complete before the cut",
            "records": len(done),
            "pairs": len(starts & stops),
            "instants": sum(1 for e in done if e["phase"] == "instant"),
            "unpaired": len(starts ^ stops),
            "truncated": True,
        }
    return text, exp


def main():
    os.makedirs(OUT, exist_ok=True)
    doc, per_op, hbm = explorer()
    write("system_profile.explorer.json", doc)
    expect("system_profile.explorer.expected.json", expected_explorer(doc, per_op, hbm, True))

    doc, per_op, hbm = explorer(flows=False, seq_ids=True, dropped=1234)
    # A filtered export: only some event types (as neuron-explorer
    # --system-trace-filter-event-type writes it), and no flows.
    keep = {"nc_exec_running", "nrt_model_submit", "nrta_execute_schedule", "kbl_exec_pre",
            "kbl_exec_post", "kbl_exec_wait", "nc_model_switch", "cc_exec_barrier"}
    doc["trace_event"] = [e for e in doc["trace_event"]
                          if e["name"] in keep or e["trace_event_source"] == "framework"]
    doc["cpu_util"] = doc["cpu_util"][:4]
    write("system_profile.filtered.json", doc)
    exp = expected_explorer(doc, per_op, hbm, False)
    exp["dropped_by_profiler"] = 1234
    expect("system_profile.filtered.expected.json", exp)

    # The same run with long host copies and barrier waits: the host's
    # copy-in before each execution and the ranks' rendezvous dominate.
    doc, per_op, hbm = explorer(copy_in=900_000, barrier=150_000, enc=2_000_000)
    write("system_profile.heavy.json", doc)
    expect("system_profile.heavy.expected.json", expected_explorer(doc, per_op, hbm, True))

    doc, exp = beta()
    write("system_profile.beta.json", doc)
    expect("system_profile.beta.expected.json", exp)

    text, exp = fetch()
    with open(os.path.join(OUT, "nrt_sys_trace_fetch.json"), "w") as f:
        f.write(text + "\n")
    expect("nrt_sys_trace_fetch.expected.json", exp)
    text, exp = fetch(cut=True)
    with open(os.path.join(OUT, "nrt_sys_trace_fetch.cut.json"), "w") as f:
        f.write(text)
    expect("nrt_sys_trace_fetch.cut.expected.json", exp)

    summary = {
        "s_2b34ee2866d9218f6a487d2535f8008b7e887e99": {
            "total_duration_ns": 1786270865722793417,
            "message_count": {"Cpu_Util_Message_Count": 0, "Host_Mem_Usage_Message_Count": 0,
                              "Trace_Events_Message_Count": 9634},
            "event_type_count": {"kbl_exec_post": 20, "nrta_execute_schedule": 20, "cc_exec_barrier": 20,
                                 "dmem_buf_copyin": 1082, "nc_exec_running": 40, "cc_running": 720},
        },
        "n_7792fe1daf87c456c04c96497296393233c1c7b1": {
            "activate_instruction_count": 5220,
            "hardware_dynamic_dma_size_percent": 0.041778316085653945,
            "throttle_activity_0_avg_util_limit_nc4_percent": 1,
            "total_time": 0.029915778256,
            "hbm_read_bytes": 10785258698,
            "dma_active_time_percent": 0.893,
            "tensor_engine_active_time_percent": 0.18,
            "mbu_estimated_percent": 0.71,
            "spill_save_bytes": 0,
            "spill_reload_bytes": 0,
        },
    }
    write("summary.json", summary, sort_keys=False)
    expect("summary.expected.json", {
        "about": "computed by tools/gen_neuron_wild.py from the counters it wrote",
        "profiles": 2,
        "scale": "fraction",
        "dma_active_time_percent_shown": 89.3,
        "event_type_count.cc_running": 720,
    })

    write("metadata_only.json", {
        "device_mem_usage": hbm[:2],
        "system_profile_metadata": [{"first_ts_ns": str(BASE), "hbm_capacity_bytes": 103079215104,
                                     "last_ts_ns": str(BASE + 1), "ntff_version": 5}],
    })
    expect("metadata_only.expected.json", {
        "about": "a profile of tables and no events: refused, naming what it held",
        "error_mentions": ["no events", "2 HBM usage rows"],
    })


if __name__ == "__main__":
    main()

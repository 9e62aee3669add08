#!/usr/bin/env python3
"""A TorchNeuron run directory for tracelane's join test, around a REAL
PyTorch capture:

  trace.json                      torch.profiler on CPU (PyTorch 2.15), two
                                  training steps of a small MLP: plain Kineto,
                                  as torch-neuronx's trace.json is (its Kineto
                                  plugin writes no device events).
  framework_mapping_<ts>.json     what torch-neuronx writes beside it
                                  (profiling.py / NeuronBindings.cpp):
                                  nrta_seq_id -> [{seq_nr, th_id, stream_id}].
  system_profile.json             the runtime's profile as neuron-explorer
                                  view --output-format json writes it: sorted
                                  keys, the framework ops copied from
                                  trace.json ("aten::addmm [trace.json]"),
                                  nrta_execute_schedule carrying each
                                  execution's nrta_seq_id, the exec stages,
                                  and LNC = 2 executions (one nc_exec_running
                                  per physical core).
  summary.json                    a summary-json of the system profile.
Beside the directory (not in it: a run directory holds no oracle):
  <dir>.key_averages.json         PyTorch's own key_averages() of the run.
  <dir>.expected.json             what the join must give, computed here.

No Trainium ran: the mapping and the profile are written as the runtime
would write them for these ops. Which ops submit work, and the number each
submits with, follow PyTorch's and torch-neuronx's rules, derived here from
the capture independently of tracelane's join:

- an op submits when a Neuron kernel runs for it: an op of DEVICE_OPS
  below with no such op around it (the CPU helpers PyTorch's CPU kernels
  call inside, such as addmm's copy_, would not run on a Neuron stream);
- it submits at its end (SubmitOperationContext runs in its kernel) with
  seq_nr = at::sequence_number::peek() then. The counter advances only
  when an autograd node is made; a node's number is recorded on its
  backward event ("AddmmBackward0", "Sequence number") and its forward op
  recorded the same number (PyTorch records peek() at dispatch, before the
  node takes it). So peek() at time t = the highest of: every number
  recorded as peek() by an op dispatched by t, and every node's number + 1
  whose forward op was dispatched by t;
- th_id = RecordFunction::currentThreadId() of the submitting thread, which
  the trace records as "Fwd thread id" on backward events of ops that
  thread ran forward (one thread here);
- the runtime schedules each submission as its op's kernel ends, 1 us
  before the op's end (nrta_execute_schedule, which returns the
  nrta_seq_id), in submission order; the device runs
  them in order, each as one execution on two physical cores (LNC = 2);
- the two parameter updates of the first layer (weight, bias) of each
  optimizer step go in one execution (torch-neuronx concatenates ops): the
  mapping lists both ops under one nrta_seq_id, and its device time counts
  for the first.

Run (PyTorch from PyPI): python3 tools/gen_torchneuron_run.py tests/fixtures/neuron-wild/torchneuron_run
"""
import json
import os
import re
import sys

import torch
from torch.profiler import ProfilerActivity, profile

OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/neuron-wild/torchneuron_run"
DEVICE_OPS = {
    "aten::addmm", "aten::mm", "aten::relu", "aten::mse_loss", "aten::ones_like",
    "aten::mse_loss_backward", "aten::threshold_backward", "aten::sum", "aten::add_",
}
INSTANCE = "i-0a1b2c3d4e5f60718"
PID = "4242"
RT_TID = 4300


def record():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 16))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, foreach=False)
    x, y = torch.randn(32, 64), torch.randn(32, 16)

    def step():
        out = model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    step()  # warm-up outside the capture
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(2):
            step()
    os.makedirs(OUT, exist_ok=True)
    prof.export_chrome_trace(os.path.join(OUT, "trace.json"))
    rows = {}
    for e in prof.key_averages():
        rows[e.key] = {
            "count": e.count,
            "cpu_time_total_us": e.cpu_time_total,
            "self_cpu_time_total_us": e.self_cpu_time_total,
        }
    with open(OUT.rstrip("/") + ".key_averages.json", "w") as f:
        json.dump({"torch": torch.__version__, "rows": rows}, f, indent=1, sort_keys=True)


def snake(camel):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", camel).lower()


def main():
    record()
    with open(os.path.join(OUT, "trace.json")) as f:
        doc = json.load(f)
    base = int(doc["baseTimeNanoseconds"])
    # Ops, and the annotations PyTorch's table nests them in (Optimizer.step#…).
    ops = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")
           and not e["name"].startswith("ProfilerStep")]
    for e in ops:
        e["start"] = round(e["ts"] * 1000)
        e["end"] = e["start"] + round(e["dur"] * 1000)
    tids = {e["tid"] for e in ops}
    assert len(tids) == 1, tids
    ops.sort(key=lambda e: (e["start"], -e["end"]))
    # Containment (one thread): parent = innermost op enclosing it.
    stack = []
    for e in ops:
        while stack and not (stack[-1]["start"] <= e["start"] and e["end"] <= stack[-1]["end"]):
            stack.pop()
        e["parent"] = stack[-1] if stack else None
        e["children"] = 0
        if stack:
            stack[-1]["children"] += 1
        stack.append(e)

    def seq(e):
        return e.get("args", {}).get("Sequence number")

    def fwd_tid(e):
        return e.get("args", {}).get("Fwd thread id", 0)

    # Autograd's nodes, from their backward events: (number, forward op).
    nodes = set()
    th_ids = set()
    for e in ops:
        m = re.fullmatch(r"([A-Za-z]+?)Backward\d+", e["name"])
        if m and seq(e) is not None and fwd_tid(e):
            nodes.add((seq(e), "aten::" + snake(m.group(1))))
            th_ids.add(fwd_tid(e))
    assert len(th_ids) == 1, th_ids
    th_id = th_ids.pop()
    # peek() over time: numbers recorded as peek() by dispatched ops, and
    # node numbers + 1 once their forward op was dispatched.
    marks = []
    for e in ops:
        s = seq(e)
        if s is None or fwd_tid(e):
            continue
        marks.append((e["start"], s))
        if (s, e["name"]) in nodes:
            marks.append((e["start"], s + 1))
    marks.sort()

    def peek(t):
        best = None
        for at, v in marks:
            if at > t:
                break
            best = v if best is None else max(best, v)
        return best

    def submits(e):
        if e["name"] not in DEVICE_OPS or e["cat"] != "cpu_op":
            return False
        p = e["parent"]
        while p is not None:
            if p["name"] in DEVICE_OPS:
                return False
            p = p["parent"]
        return True

    subs = [e for e in ops if submits(e)]
    # Group the first layer's two parameter updates per optimizer step:
    # the first two aten::add_ after each step's backward.
    submissions = []
    for e in subs:
        submissions.append({"op": e, "seq_nr": peek(e["end"]), "at": e["end"]})
    groups = []
    i = 0
    updates_seen = 0
    while i < len(submissions):
        s = submissions[i]
        if s["op"]["name"] == "aten::add_" and updates_seen % 4 == 0 and i + 1 < len(submissions) \
                and submissions[i + 1]["op"]["name"] == "aten::add_":
            groups.append([s, submissions[i + 1]])
            updates_seen += 2
            i += 2
            continue
        if s["op"]["name"] == "aten::add_":
            updates_seen += 1
        groups.append([s])
        i += 1

    # The runtime: schedule each submission group 3 us after its last op
    # ends; the device runs executions in order, two physical cores each.
    mapping = []
    events = []
    ev_id = [3377699720530000]
    nrta = 281474976710700
    exec_id = 500
    device_free = 0
    per_exec = []
    for g in groups:
        nrta += 1
        exec_id += 1
        last = g[-1]
        sched = base + max(last["op"]["start"], last["at"] - 1_000)
        first_op = g[0]["op"]
        dev = 15_000 + (first_op["end"] - first_op["start"]) // 2
        hw_start = max(sched + 4_000 + 25_000, device_free + 2_000)
        core0 = (hw_start, dev)
        core1 = (hw_start + 250, dev - 400)
        end = max(core0[0] + core0[1], core1[0] + core1[1])
        device_free = end
        mapping.append({
            "nrta_seq_id": nrta,
            "framework_op_exec_ids": [{"seq_nr": s["seq_nr"], "th_id": th_id, "stream_id": 0} for s in g],
        })

        def ev(name, source, start, dur, **kw):
            ev_id[0] += 1
            e = {"duration": dur, "id": ev_id[0], "instance_id": INSTANCE, "name": name,
                 "process_id": PID, "timestamp": start, "timestamp_unit": "ns",
                 "trace_event_source": source}
            e.update(kw)
            return e

        rt = dict(lnc_idx="0", nc_idx=0, thread_id=RT_TID, worker_gid=0)
        for s in g:
            o = s["op"]
            events.append(ev(f"{o['name']} [trace.json]", "framework", base + o["start"], o["end"] - o["start"],
                             flow_id=[str(nrta)], framework_stream_id=0, nrt_sequence_id=nrta,
                             thread_id=0))
        events.append(ev("nrta_execute_schedule", "neuron_rt", sched, 4_000, model_id=700 + len(g),
                         nrta_seq_id=nrta, **rt))
        events.append(ev("kbl_exec_pre", "neuron_rt", hw_start - 15_000, 2_000, exec_id=exec_id,
                         model_id=700 + len(g), **rt))
        events.append(ev("kbl_exec_wait", "neuron_rt", hw_start - 12_000, end - hw_start + 12_000,
                         exec_id=exec_id, model_id=700 + len(g), flow_id=[str(nrta), str(exec_id)], **rt))
        events.append(ev("kbl_exec_post", "neuron_rt", end + 1_000, 2_000, exec_id=exec_id,
                         model_id=700 + len(g), **rt))
        for core, (start, dur) in enumerate((core0, core1)):
            events.append(ev("nc_exec_running", "neuron_hw", start, dur, device_core_idx=core, exec_id=exec_id,
                             model_id=700 + len(g), nc_idx=0, pcore_idx=core,
                             nc_start_timestamp_ns=start - base, nc_stop_timestamp_ns=start - base + dur,
                             flow_id=[str(exec_id)]))
        per_exec.append({
            "nrta_seq_id": nrta,
            "ops": [{"name": s["op"]["name"], "start_ns": s["op"]["start"], "seq_nr": s["seq_nr"]} for s in g],
            "device_ns": end - hw_start,
            "scheduled_ns": sched - base,
        })
    profile_doc = {
        "cpu_util": [{"cpu_id": "0", "duration": 1, "instance_id": INSTANCE,
                      "timestamp": base + ops[0]["start"], "util": 42.5}],
        "mem_usage": [{"duration": 1, "instance_id": INSTANCE, "percent_usage": 10.5,
                       "timestamp": base + ops[0]["start"], "usage": 1 << 33}],
        "system_profile_metadata": [{"first_ts_ns": str(base + ops[0]["start"]),
                                     "hbm_capacity_bytes": 103079215104,
                                     "last_ts_ns": str(device_free), "ntff_version": 5}],
        "trace_event": events,
        "warnings": [],
    }
    with open(os.path.join(OUT, "system_profile.json"), "w") as f:
        json.dump(profile_doc, f, sort_keys=True, separators=(",", ":"))
    stamp = "20261203_083100_000"
    with open(os.path.join(OUT, f"framework_mapping_{stamp}.json"), "w") as f:
        json.dump({"version": 1, "data": mapping}, f, indent=2)
    with open(os.path.join(OUT, "summary.json"), "w") as f:
        json.dump({"s_0f0e0d0c0b0a09080706050403020100ffeeddcc": {
            "total_duration_ns": device_free - base - ops[0]["start"],
            "event_type_count": {"nc_exec_running": 2 * len(groups), "nrta_execute_schedule": len(groups)},
            "message_count": {"Trace_Events_Message_Count": len(events)},
        }}, f, indent=1)

    # Expected: device time per op name (self: an op's own executions;
    # total: its own and those of the ops recorded inside it).
    device_of = {}
    for x in per_exec:
        o = x["ops"][0]
        device_of[(o["name"], o["start_ns"])] = device_of.get((o["name"], o["start_ns"]), 0) + x["device_ns"]
    dev_self = {}
    dev_total = {}
    for e in ops:
        own = device_of.get((e["name"], e["start"]), 0)
        dev_self[e["name"]] = dev_self.get(e["name"], 0) + own
        if own:
            p = e
            while p is not None:
                dev_total[p["name"]] = dev_total.get(p["name"], 0) + own
                p = p["parent"]
    with open(OUT.rstrip("/") + ".expected.json", "w") as f:
        json.dump({
            "about": "computed by tools/gen_torchneuron_run.py from the capture and what it wrote; CPU columns are PyTorch's key_averages.json",
            "th_id": th_id,
            "executions": per_exec,
            "device_self_ns_by_name": dev_self,
            "device_total_ns_by_name": dev_total,
            "device_ns": sum(x["device_ns"] for x in per_exec),
            "shared_executions": sum(1 for g in groups if len(g) > 1),
            "framework_copies": sum(len(g) for g in groups),
        }, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A large Neuron Explorer system profile for the streaming benchmark: the
attested shape of tests/fixtures/neuron-wild/system_profile.explorer.json
(keys sorted, a long cpu_util list before trace_event, device_mem_usage,
LNC = 2, flow_id lists) with its events repeated, each copy shifted in time
and given fresh ids, until the file reaches --mb megabytes.

Usage: python3 bench/gen_neuron_big.py OUT.json --mb 220
"""
import argparse
import json

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--mb", type=float, default=220)
ap.add_argument("--template", default="tests/fixtures/neuron-wild/system_profile.explorer.json")
a = ap.parse_args()

doc = json.load(open(a.template))
events = doc.pop("trace_event")
lo = min(e["timestamp"] for e in events)
hi = max(e["timestamp"] + e["duration"] for e in events)
period = hi - lo + 1_000_000
target = int(a.mb * 1e6)
with open(a.out, "w") as f:
    # Keys in sorted order, as the Explorer writes them: the tables first.
    head = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    before = {k: v for k, v in doc.items() if k < "trace_event"}
    after = {k: v for k, v in doc.items() if k > "trace_event"}
    f.write("{")
    for k in sorted(before):
        f.write(json.dumps(k) + ":" + json.dumps(before[k], separators=(",", ":")) + ",")
    f.write('"trace_event":[')
    written, copy, first = 0, 0, True
    while written < target:
        shift = copy * period
        for e in events:
            e2 = dict(e)
            e2["timestamp"] = e["timestamp"] + shift
            e2["id"] = e["id"] + copy * 1_000_000
            if "exec_id" in e2:
                e2["exec_id"] = e["exec_id"] + copy * 100
            if "nrt_sequence_id" in e2:
                e2["nrt_sequence_id"] = e["nrt_sequence_id"] + copy * 100
            if "flow_id" in e2:
                e2["flow_id"] = [str(int(x) + copy * 100) for x in e["flow_id"]]
            for k in ("nc_start_timestamp_ns", "nc_stop_timestamp_ns"):
                if k in e2:
                    e2[k] = e[k] + shift
            text = ("" if first else ",") + json.dumps(e2, sort_keys=True, separators=(",", ":"))
            first = False
            f.write(text)
            written += len(text)
        copy += 1
    f.write("]")
    for k in sorted(after):
        f.write("," + json.dumps(k) + ":" + json.dumps(after[k], separators=(",", ":")))
    f.write("}\n")
print(f"{a.out}: {copy} copies of {len(events)} events")

#!/usr/bin/env python3
"""Edge-case fixtures derived from real traces by re-labelling lanes only.

Every event's name, category, time and args stay as the profiler wrote them;
only pids/tids (and the metadata naming them) are rewritten, to reproduce a
lane layout seen in the field without a capture of our own:

- rocm_container_pid1.json.gz — from public/hta_amd_mi250_rocm.json.gz
  (HolisticTraceAnalysis, MIT): the host process renumbered to pid 1 and its
  threads to 1 (python3) and 58 (pt_autograd_0), as a run inside a container
  records them. Kineto writes one `process_labels: "GPU n"` per device with
  the device id as pid, so pid 1 is labelled both "CPU" and, later, "GPU 1".
  The op table must equal the original trace's.
- mtia_submission_queue.json — from the same trace: the host's runtime calls
  moved onto a "Stream 0 Submission Queue" thread of the device's pid and
  their category renamed `mtia_runtime`, as MTIA traces file them. PyTorch
  counts them as CPU-side runtime rows.

Run from the repository root: python3 tools/make_edge_from_real.py
"""
import gzip
import json

SRC = "tests/fixtures/public/hta_amd_mi250_rocm.json.gz"
HOST_PID, MAIN_TID, AUTOGRAD_TID = 597913, 597913, 598009


def load():
    with gzip.open(SRC, "rt") as f:
        return json.load(f)


def rocm_container():
    d = load()
    tids = {MAIN_TID: 1, AUTOGRAD_TID: 58}
    for e in d["traceEvents"]:
        if e.get("pid") == HOST_PID:
            e["pid"] = 1
            if e.get("tid") in tids:
                e["tid"] = tids[e["tid"]]
            if e.get("name") == "thread_name":
                e["args"]["name"] = e["args"]["name"].replace("598009", "58").replace("597913", "1")
            if e.get("name") in ("thread_sort_index", "process_sort_index"):
                e["args"]["sort_index"] = tids.get(e["args"]["sort_index"], 1)
    # Kineto writes the host process's metadata first, then the devices'.
    meta = [e for e in d["traceEvents"] if e.get("ph") == "M" and e.get("pid") == 1 and e["name"].startswith("process_")]
    host = [e for e in meta if e["args"].get("labels") == "CPU" or e["args"].get("sort_index") == 1 or e["args"].get("name") == "python3"][:3]
    rest = [e for e in d["traceEvents"] if not any(e is h for h in host)]
    d["traceEvents"] = host + rest
    with gzip.open("tests/fixtures/edge/rocm_container_pid1.json.gz", "wt") as f:
        json.dump(d, f)


def mtia_queue():
    d = load()
    for e in d["traceEvents"]:
        if e.get("cat") == "cuda_runtime":
            e["cat"] = "mtia_runtime"
            e["pid"], e["tid"] = 2, 1000
    d["traceEvents"].append({"name": "thread_name", "ph": "M", "ts": 0, "pid": 2, "tid": 1000,
                             "args": {"name": "Stream 0 Submission Queue"}})
    with open("tests/fixtures/edge/mtia_submission_queue.json", "w") as f:
        json.dump(d, f)


if __name__ == "__main__":
    rocm_container()
    mtia_queue()

#!/usr/bin/env python3
"""An independent reading of rocprofv3 JSON (`rocprofv3 -f json`, gzip
too): per kernel name (its symbol's formatted_kernel_name), the dispatch
count and total time (end - start, ns); per HIP API call name the count.
Written as FILE.oracle.json beside each file (or into --out DIR). The op
table's kernel rows must equal it.

    python3 tools/rocprof_oracle.py [--out DIR] FILE...
"""
import argparse, gzip, json, os
from collections import defaultdict


def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        return json.load(f)


def oracle(doc):
    kernels = defaultdict(lambda: {"count": 0, "total_ns": 0})
    api = defaultdict(int)
    copies = {"count": 0, "total_ns": 0, "bytes": 0}
    for proc in doc["rocprofiler-sdk-tool"]:
        names = {}
        for s in proc.get("kernel_symbols", []):
            names[s["kernel_id"]] = (s.get("formatted_kernel_name") or s.get("demangled_kernel_name")
                                     or s.get("kernel_name") or "")
        kinds = proc.get("strings", {}).get("buffer_records", [])
        recs = proc.get("buffer_records", {})
        for r in recs.get("kernel_dispatch", []):
            k = kernels[names.get(r["dispatch_info"]["kernel_id"], "kernel_id %d" % r["dispatch_info"]["kernel_id"])]
            k["count"] += 1
            k["total_ns"] += r["end_timestamp"] - r["start_timestamp"]
        for r in recs.get("hip_api", []):
            api[kinds[r["kind"]]["operations"][r["operation"]]] += 1
        for r in recs.get("memory_copy", []):
            copies["count"] += 1
            copies["total_ns"] += r["end_timestamp"] - r["start_timestamp"]
            copies["bytes"] += r.get("bytes", 0)
    return {"kernels": dict(sorted(kernels.items())), "hip_api": dict(sorted(api.items())),
            "memory_copy": copies}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    for f in a.files:
        base = os.path.basename(f).removesuffix(".gz").removesuffix(".json")
        dest = os.path.join(a.out or os.path.dirname(f), base + ".oracle.json")
        with open(dest, "w") as fh:
            json.dump(oracle(load(f)), fh, indent=1, sort_keys=True)
        print(dest)


if __name__ == "__main__":
    main()

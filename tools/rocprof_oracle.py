#!/usr/bin/env python3
"""An independent reading of rocprofv3 JSON (`rocprofv3 -f json`, gzip
too): per kernel name (its symbol's formatted_kernel_name), the dispatch
count and total time (end - start, ns); per HIP API call name the count;
per agent the bytes its memory_allocation records hold over time, as
rocprofv3's own Perfetto output sums them (rocprofiler-sdk
source/lib/output/generatePerfetto.cpp, "memory allocation counter
track": a std::map of endpoints per agent, emplace keeping the first at a
timestamp, frees taking the agent and size of the first allocation at
their address). Written as FILE.oracle.json beside each file (or into
--out DIR). The op table's kernel rows and the counter series must equal
it.

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
    out = {"kernels": dict(sorted(kernels.items())), "hip_api": dict(sorted(api.items())),
           "memory_copy": copies}
    allocated = {}
    for proc in doc["rocprofiler-sdk-tool"]:
        allocated.update(allocated_bytes(proc))
    if allocated:
        out["allocated_bytes"] = allocated
        live = {}
        for proc in doc["rocprofiler-sdk-tool"]:
            live.update(live_bytes(proc))
        out["live_bytes"] = live
    return out


def live_bytes(proc):
    """What each agent holds: records in the order they end (file order
    among equals); an allocation adds its size (replacing one live at its
    address), a free subtracts the live one's; the value at a timestamp
    is the last record's."""
    ops = proc.get("strings", {}).get("buffer_records", [])
    recs = proc.get("buffer_records", {}).get("memory_allocation", [])
    order = sorted(range(len(recs)), key=lambda k: recs[k]["end_timestamp"])
    live, held, out = {}, {}, {}

    for k in order:
        r = recs[k]
        name = ops[r["kind"]]["operations"][r["operation"]]
        a, end = addr(r.get("address", 0)), r["end_timestamp"]
        if name.endswith("ALLOCATE"):
            if "agent_id" not in r:
                continue
            agent = r["agent_id"]["handle"]
            if a in live:
                was, size = live[a]
                held[was] = max(0, held.get(was, 0) - size)
                out.setdefault(str(was), {})[end] = held[was]
            live[a] = (agent, r["allocation_size"])
            held[agent] = held.get(agent, 0) + r["allocation_size"]
        elif name.endswith("_FREE"):
            if a not in live:
                continue
            agent, size = live.pop(a)
            held[agent] = max(0, held.get(agent, 0) - size)
        else:
            continue
        out.setdefault(str(agent), {})[end] = held[agent]
    return {agent: [[t, v] for t, v in sorted(m.items())] for agent, m in out.items()}


def addr(a):
    """An address as rocprofiler-sdk writes it (hex text), a number or {handle}."""
    return int(a, 16) if isinstance(a, str) else (a["handle"] if isinstance(a, dict) else a)


def allocated_bytes(proc):
    """generatePerfetto.cpp's memory allocation counter, per agent handle:
    [[timestamp, bytes], ...] in time order."""
    ops = proc.get("strings", {}).get("buffer_records", [])
    endpoints = {}       # agent -> {ts: [size, address, is_alloc]}
    owner = {}           # address -> (agent, size), the first allocation's
    frees = []

    def emplace(agent, ts, value):
        m = endpoints.setdefault(agent, {})
        if ts not in m:
            m[ts] = value

    for r in proc.get("buffer_records", {}).get("memory_allocation", []):
        name = ops[r["kind"]]["operations"][r["operation"]]
        a = addr(r.get("address", 0))
        if name in ("MEMORY_ALLOCATION_ALLOCATE", "MEMORY_ALLOCATION_VMEM_ALLOCATE"):
            if "agent_id" not in r:
                continue  # rocprofv3 stops on it (LOG_IF(FATAL))
            agent = r["agent_id"]["handle"]
            emplace(agent, r["start_timestamp"], [r["allocation_size"], a, True])
            emplace(agent, r["end_timestamp"], [r["allocation_size"], a, True])
            owner.setdefault(a, (agent, r["allocation_size"]))
        elif name in ("MEMORY_ALLOCATION_FREE", "MEMORY_ALLOCATION_VMEM_FREE"):
            frees.append((r["start_timestamp"], r["end_timestamp"], a))
    for start, end, a in frees:
        if a not in owner:
            continue
        agent, size = owner[a]
        emplace(agent, start, [size, a, False])
        emplace(agent, end, [size, a, False])
    stamps = [t for m in endpoints.values() for t in m]
    out = {}
    for agent, m in endpoints.items():
        keys = sorted(m)
        for prev, cur in zip(keys, keys[1:]):
            p, c = m[prev], m[cur]
            if p[1] != c[1] or p[2] != c[2]:
                if c[2]:
                    c[0] += p[0]
                elif p[0] >= c[0]:
                    c[0] = p[0] - c[0]
            else:
                c[0] = p[0]
        series = {t: m[t][0] for t in keys}
        series.setdefault(min(stamps) - 5000, 0)
        series.setdefault(max(stamps) + 5000, 0)
        out[str(agent)] = [[t, series[t]] for t in sorted(series)]
    return out


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

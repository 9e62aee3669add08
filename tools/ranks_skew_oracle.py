#!/usr/bin/env python3
"""An independent check of `tracelane ranks` on NCCL runs: the skew of each
collective and each step's straggler, from the traces' kernel starts alone.

Usage: tools/ranks_skew_oracle.py OUT.json RANK_TRACE...

Shares no code with tracelane. Per rank (`distributedInfo.rank`), times on
the epoch clock (µs text read exactly, `baseTimeNanoseconds` added): its
NCCL kernels (`ncclKernel*` / `ncclDevKernel*`) in start order, the i-th of
every rank being one collective (one process group, one kernel per call:
what the synthetic and simple data-parallel runs have). A collective's
step is the `ProfilerStep#N` window holding the last-arriving rank's
kernel start; skew = latest start − earliest; the last rank arrived
latest (ties: the lower rank). A step's straggler: the rank with the largest sum of skews of the
collectives it was last at (ties: the lower rank); others waited = over
those collectives, the mean of the other ranks' (latest − own start).
Writes {"collectives": [{"seq", "step", "skew_ns", "last_rank"}],
"stragglers": [{"step", "rank", "blame_ns", "others_waited_ns"}]}.
"""
import gzip
import json
import sys
from decimal import Decimal


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=Decimal)


def ns(us, base):
    return int(Decimal(us) * 1000) + base


def rank_view(path):
    d = load(path)
    rank = int(d["distributedInfo"]["rank"])
    base = int(d.get("baseTimeNanoseconds", 0))
    kernels, steps = [], []
    for e in d["traceEvents"]:
        if e.get("ph") != "X":
            continue
        name = e.get("name", "")
        if e.get("cat") == "kernel" and (name.startswith("ncclKernel") or name.startswith("ncclDevKernel")):
            kernels.append(ns(e["ts"], base))
        elif name.startswith("ProfilerStep#"):
            start = ns(e["ts"], base)
            steps.append((int(name.split("#")[1]), start, start + int(Decimal(e["dur"]) * 1000)))
    return rank, sorted(kernels), steps


def main():
    out, paths = sys.argv[1], sys.argv[2:]
    views = sorted(rank_view(p) for p in paths)
    n = min(len(v[1]) for v in views)
    collectives = []
    blame = {}
    for i in range(n):
        starts = [(v[1][i], v[0]) for v in views]
        latest = max(s for s, _ in starts)
        last_rank = min(r for s, r in starts if s == latest)
        earliest = min(s for s, _ in starts)
        steps = next(v[2] for v in views if v[0] == last_rank)
        step = next((s for s, a, b in steps if a <= latest < b), None)
        collectives.append({"seq": i, "step": step, "skew_ns": latest - earliest, "last_rank": last_rank})
        if step is None:
            continue
        waited = sum(latest - s for s, r in starts if r != last_rank) / (len(starts) - 1)
        b = blame.setdefault(step, {}).setdefault(last_rank, [0, 0.0])
        b[0] += latest - earliest
        b[1] += waited
    stragglers = []
    for step in sorted(blame):
        rank, (skews, waited) = max(blame[step].items(), key=lambda kv: (kv[1][0], -kv[0]))
        stragglers.append({"step": step, "rank": rank, "blame_ns": skews, "others_waited_ns": round(waited)})
    json.dump({"collectives": collectives, "stragglers": stragglers}, open(out, "w"), indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""HTA's per-rank answers for a set of rank traces: the golden file
`tracelane ranks` is checked against.

Usage:
    python -m venv /tmp/hta && /tmp/hta/bin/pip install HolisticTraceAnalysis==0.5.0 'pandas<3'
    /tmp/hta/bin/python tools/hta_ranks_oracle.py TRACE_DIR OUT.json

Loads TRACE_DIR as one HTA TraceAnalysis (every rank; HTA reads each
trace's distributedInfo.rank) and writes, per rank,
get_temporal_breakdown's row and get_comm_comp_overlap's percentage, with
the fields and units of `tracelane ranks --format json`'s `hta` object:
    {"meta": {...}, "ranks": {"<rank>": {"temporal_breakdown": {...},
                                         "comm_comp_overlap_pct": x}}}
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# HTA imported (and its logging silenced) by the single-rank oracle.
from hta_oracle import TraceAnalysis, hta, num  # noqa: E402


def main():
    trace_dir, out = sys.argv[1], sys.argv[2]
    a = TraceAnalysis(trace_dir=trace_dir)
    ranks = {}
    tb = a.get_temporal_breakdown(visualize=False)
    for r in tb.to_dict("records"):
        ranks.setdefault(str(int(r["rank"])), {})["temporal_breakdown"] = {
            "idle_us": num(r["idle_time(us)"]),
            "compute_us": num(r["compute_time(us)"]),
            "non_compute_us": num(r["non_compute_time(us)"]),
            "kernel_span_us": num(r["kernel_time(us)"]),
            "idle_pct": num(r["idle_time_pctg"]),
            "compute_pct": num(r["compute_time_pctg"]),
            "non_compute_pct": num(r["non_compute_time_pctg"]),
        }
    ov = a.get_comm_comp_overlap(visualize=False)
    for r in ov.to_dict("records"):
        ranks.setdefault(str(int(r["rank"])), {})["comm_comp_overlap_pct"] = num(r["comp_comm_overlap_pctg"])
    meta = {
        "tool": "HolisticTraceAnalysis",
        "version": getattr(hta, "__version__", None)
        or __import__("importlib.metadata").metadata.version("HolisticTraceAnalysis"),
        "pandas": __import__("pandas").__version__,
        "trace_dir": trace_dir.rstrip("/").split("/")[-1],
        "ranks": len(ranks),
    }
    with open(out, "w") as f:
        json.dump({"meta": meta, "ranks": ranks}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps(ranks)[:400], file=sys.stderr)


if __name__ == "__main__":
    main()

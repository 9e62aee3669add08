#!/usr/bin/env python3
"""HTA's own answers for a trace: the golden files `tracelane analyze --hta`
is checked against.

Usage (HTA 0.6.1, PyPI's `traceinsight`, which `--hta` follows):
    python -m venv /tmp/hta6 && /tmp/hta6/bin/pip install traceinsight==0.6.1 'pandas<3'
    /tmp/hta6/bin/python tools/hta_oracle.py OUT_DIR TRACE...
or HolisticTraceAnalysis 0.5.0 (`--hta-version 0.5`):
    python -m venv /tmp/hta && /tmp/hta/bin/pip install HolisticTraceAnalysis==0.5.0 'pandas<3'

For each TRACE (Kineto JSON, `.json` or `.json.gz`) this writes
OUT_DIR/<name>.hta.json:
    {"meta": {...}, "expected": <the object `tracelane analyze --hta --format json`
     prints, field for field>, "detail": {...more of HTA's tables, for diagnosis}}

Every value comes from HTA's public API on the trace's own rank, with
its defaults: get_temporal_breakdown, get_gpu_kernel_breakdown,
get_idle_time_breakdown (consecutive_kernel_delay=30),
get_cuda_kernel_launch_stats (runtime_cutoff=50, launch_delay_cutoff=100;
the three counts are the filters of HTA's own launch-stats plots),
get_comm_comp_overlap, get_queue_length_summary and
critical_path_analysis(annotation="") -> get_critical_path_breakdown.
An analysis that raises is recorded as {"error": "..."} in the detail and
null in expected, so the file says what HTA could not answer.
"""
import json
import math
import os
import shutil
import sys
import tempfile
import traceback
import logging

logging.disable(logging.CRITICAL)

import hta  # noqa: E402
from hta.trace_analysis import TraceAnalysis  # noqa: E402


def num(x):
    """A JSON number from a pandas/numpy scalar; NaN becomes null."""
    if x is None:
        return None
    x = float(x)
    if math.isnan(x):
        return None
    return int(x) if x.is_integer() else x


def guarded(detail, key, fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - recorded, not hidden
        detail[key] = {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc(limit=3)}
        return None


def analyse(path):
    tmp = tempfile.mkdtemp()
    name = os.path.basename(path)
    if not (name.endswith(".json") or name.endswith(".gz")):
        name += ".json"
    shutil.copy(path, os.path.join(tmp, name))
    detail = {}
    try:
        a = TraceAnalysis(trace_dir=tmp)
        rank = sorted(a.t.traces.keys())[0]
        out = {}

        def temporal():
            df = a.get_temporal_breakdown(visualize=False)
            r = df.iloc[0]
            return {
                "idle_us": num(r["idle_time(us)"]),
                "compute_us": num(r["compute_time(us)"]),
                "non_compute_us": num(r["non_compute_time(us)"]),
                "kernel_span_us": num(r["kernel_time(us)"]),
                "idle_pct": num(r["idle_time_pctg"]),
                "compute_pct": num(r["compute_time_pctg"]),
                "non_compute_pct": num(r["non_compute_time_pctg"]),
            }

        out["temporal_breakdown"] = guarded(detail, "temporal_breakdown", temporal)

        def kernels():
            types, per_kernel = a.get_gpu_kernel_breakdown(visualize=False)
            detail["kernels_top"] = [
                {k: (num(v) if k not in ("name", "kernel_type") else v) for k, v in row.items()}
                for row in per_kernel.to_dict("records")
            ]
            return [
                {"kernel_type": r["kernel_type"], "sum_us": num(r["sum"]), "percentage": num(r["percentage"])}
                for r in types.to_dict("records")
            ]

        out["kernel_types"] = guarded(detail, "kernel_types", kernels)

        def idle():
            df, stats = a.get_idle_time_breakdown(ranks=[rank], visualize=False, show_idle_interval_stats=True)
            detail["idle_interval_stats"] = [
                {k: (num(v) if k != "idle_category" else v) for k, v in row.items()}
                for row in stats.reset_index().to_dict("records")
            ]
            return [
                {
                    "stream": int(r["stream"]),
                    "category": r["idle_category"],
                    "idle_us": num(r["idle_time"]),
                    "ratio": num(r["idle_time_ratio"]),
                }
                for r in df.to_dict("records")
            ]

        out["idle_breakdown"] = guarded(detail, "idle_breakdown", idle)

        def launches():
            df = a.get_cuda_kernel_launch_stats(ranks=[rank], visualize=False)[rank]
            short = df[(df["cpu_duration"] <= 50) & (df["gpu_duration"] < df["cpu_duration"])]
            return {
                "launches": int(len(df)),
                "launch_delay_sum_us": num(df["launch_delay"].sum()),
                "launch_delay_max_us": num(df["launch_delay"].max()) if len(df) else 0,
                "short_kernels": int(len(short)),
                "runtime_outliers": int((df["cpu_duration"] > 50).sum()),
                "launch_delay_outliers": int((df["launch_delay"] > 100).sum()),
            }

        out["launch_stats"] = guarded(detail, "launch_stats", launches)

        def overlap():
            df = a.get_comm_comp_overlap(visualize=False)
            return num(df.iloc[0]["comp_comm_overlap_pctg"])

        out["comm_comp_overlap_pct"] = guarded(detail, "comm_comp_overlap_pct", overlap)

        def queue():
            df = a.get_queue_length_summary(ranks=[rank])
            if df is None:
                return []
            df = df.reset_index()
            rows = []
            for r in df.to_dict("records"):
                rows.append({
                    "stream": int(r[("stream", "")]),
                    "mean": num(r[("queue_length", "mean")]),
                    "max": num(r[("queue_length", "max")]),
                })
            detail["queue_length_count"] = {str(int(r[("stream", "")])): num(r[("queue_length", "count")]) for r in df.to_dict("records")}
            return rows

        out["queue_length"] = guarded(detail, "queue_length", queue)

        def critical():
            res = a.critical_path_analysis(rank=rank, annotation="", instance_id=None)
            if res is None:
                raise RuntimeError("critical_path_analysis returned None")
            g, ok = res
            detail["critical_path_ok"] = bool(ok)
            edf = g.get_critical_path_breakdown()
            if edf is None or len(edf) == 0:
                return {"length_us": 0, "bound_by_pct": {}}
            total = edf.duration.sum()
            by = edf.groupby("bound_by").duration.sum()
            detail["critical_path_edges"] = int(len(edf))
            detail["critical_path_bound_by_us"] = {k: num(v) for k, v in by.items()}
            return {
                "length_us": num(total),
                "bound_by_pct": {k: num(v / total * 100) for k, v in by.items() if not (k == "" and v == 0)},
            }

        out["critical_path"] = guarded(detail, "critical_path", critical)
        meta = {
            "tool": "HolisticTraceAnalysis",
            "version": getattr(hta, "__version__", None) or __import__("importlib.metadata").metadata.version("HolisticTraceAnalysis"),
            "pandas": __import__("pandas").__version__,
            "trace": os.path.basename(path),
            "rank": int(rank),
        }
        return {"meta": meta, "expected": out, "detail": detail}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for path in sys.argv[2:]:
        base = os.path.basename(path)
        for suffix in (".json.gz", ".json", ".gz"):
            if base.endswith(suffix):
                base = base[: -len(suffix)]
                break
        if os.path.basename(os.path.dirname(path)) == "hta_compare_pair":
            base = "hta_compare_pair_" + base
        res = analyse(path)
        with open(os.path.join(out_dir, base + ".hta.json"), "w") as f:
            json.dump(res, f, indent=1, sort_keys=False)
            f.write("\n")
        print(base, json.dumps(res["expected"])[:300], file=sys.stderr)


if __name__ == "__main__":
    main()

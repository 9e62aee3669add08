"""PyTorch's key_averages() rows as the oracle files hold them (the layout
../shared/tools/gen_torch_traces.py writes), shared by the oracle scripts."""
import gzip
import json
import os
import shutil
import tempfile


def avg_rows(events, by_shape=False, flops=False, memory=False):
    """One dict per FunctionEventAvg: key, count, CPU and device totals and
    self times in µs; `input_shapes` when grouped by shape, `flops` when
    recorded with_flops, the four memory columns (bytes) when recorded with
    profile_memory."""
    rows = []
    for e in events:
        row = {
            "key": e.key,
            "count": e.count,
            "cpu_time_total_us": e.cpu_time_total,
            "self_cpu_time_total_us": e.self_cpu_time_total,
        }
        if flops:
            row["flops"] = e.flops
        else:
            row["device_time_total_us"] = getattr(e, "device_time_total", 0.0)
            row["self_device_time_total_us"] = getattr(e, "self_device_time_total", 0.0)
        if memory:
            for col in ("cpu_memory_usage", "self_cpu_memory_usage",
                        "device_memory_usage", "self_device_memory_usage"):
                row[col] = getattr(e, col)
        if by_shape:
            row["input_shapes"] = str(e.input_shapes)
        rows.append(row)
    return rows


def write_oracle(prof, out, name, meta, sort_by, memory=False):
    """<name>.pt.trace.json.gz (export_chrome_trace, gzipped),
    <name>.key_averages{,_by_shape}.json and <name>.table.txt."""
    tmp = tempfile.mktemp(suffix=".json")
    prof.export_chrome_trace(tmp)
    with open(tmp, "rb") as src, gzip.open(os.path.join(out, f"{name}.pt.trace.json.gz"), "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.remove(tmp)
    for suffix, by_shape in (("key_averages", False), ("key_averages_by_shape", True)):
        ka = prof.key_averages(group_by_input_shape=by_shape)
        with open(os.path.join(out, f"{name}.{suffix}.json"), "w") as f:
            json.dump({"meta": meta, "rows": avg_rows(ka, by_shape, memory=memory)}, f, indent=1)
    with open(os.path.join(out, f"{name}.table.txt"), "w") as f:
        f.write(prof.key_averages().table(sort_by=sort_by, row_limit=-1))

"""PyTorch's key_averages() rows as the oracle files hold them (the layout
../shared/tools/gen_torch_traces.py writes), shared by the oracle scripts."""


def avg_rows(events, by_shape=False, flops=False):
    """One dict per FunctionEventAvg: key, count, CPU and device totals and
    self times in µs; `input_shapes` when grouped by shape, `flops` when
    recorded with_flops."""
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
        if by_shape:
            row["input_shapes"] = str(e.input_shapes)
        rows.append(row)
    return rows

#!/usr/bin/env python3
"""Real PyTorch CPU traces recorded with with_flops=True (and record_shapes),
with PyTorch's own key_averages() `flops` column as the oracle for
tracelane's FLOP counts (the trace's `flops` arg, and the formulas computed
from `Input Dims` when the arg is absent).

Each case writes, into OUT_DIR:
  <case>.pt.trace.json.gz          export_chrome_trace, gzipped
  <case>.key_averages.json         key_averages(): count, times, flops per key
  <case>.key_averages_by_shape.json  the same, group_by_input_shape=True
  <case>.table.txt                 PyTorch's printed table (with its FLOPs column)

Usage: python gen_flops_oracles.py OUT_DIR   (needs torch; CPU is enough)
"""
import gzip, json, os, shutil, sys, tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import profile, ProfilerActivity, record_function

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle_rows import avg_rows  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def rows(ka, by_shape=False):
    return avg_rows(ka, by_shape, flops=True)


def record(name, run):
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_flops=True) as prof:
        run()
    tmp = tempfile.mktemp(suffix=".json")
    prof.export_chrome_trace(tmp)
    with open(tmp, "rb") as src, gzip.open(os.path.join(out, f"{name}.pt.trace.json.gz"), "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.remove(tmp)
    meta = {"torch": torch.__version__, "case": name, "activities": ["ProfilerActivity.CPU"],
            "profile_kwargs": {"record_shapes": "True", "with_flops": "True"}}
    ka = prof.key_averages()
    json.dump({"meta": meta, "rows": rows(ka)}, open(os.path.join(out, f"{name}.key_averages.json"), "w"), indent=1)
    json.dump({"meta": meta, "rows": rows(prof.key_averages(group_by_input_shape=True), True)},
              open(os.path.join(out, f"{name}.key_averages_by_shape.json"), "w"), indent=1)
    open(os.path.join(out, f"{name}.table.txt"), "w").write(ka.table(sort_by="self_cpu_time_total", row_limit=-1))
    print(name, len(ka), sum(e.flops for e in ka))


torch.manual_seed(0)


def matmuls():
    a, b = torch.randn(128, 256), torch.randn(256, 64)
    bias = torch.randn(64)
    x3, y3 = torch.randn(4, 32, 48), torch.randn(4, 48, 16)
    acc = torch.randn(4, 32, 16)
    for _ in range(2):
        with record_function("matmuls"):
            torch.mm(a, b)
            torch.addmm(bias, a, b)
            torch.bmm(x3, y3)
            torch.baddbmm(acc, x3, y3)
            torch.matmul(a, b)          # dispatches to aten::mm
            torch.matmul(x3, y3)        # dispatches to aten::bmm
            a.square().sum()


def elementwise():
    x, y = torch.randn(64, 4096), torch.randn(64, 4096)
    w = torch.randn(4096)
    for _ in range(3):
        x * y                           # aten::mul (Tensor)
        x * 2.0                         # aten::mul (Scalar)
        x + y                           # aten::add
        x + w                           # aten::add, broadcast (flops: numel of the first input)
        w * x                           # aten::mul, the smaller input first
        torch.add(x, y, alpha=2)
        x.mul(y).add(y)
        x.sub(y)                        # no formula in PyTorch
        torch.rsqrt(x.abs() + 1e-6)


def convs():
    conv = nn.Conv2d(3, 16, 3, stride=2, padding=1)
    grouped = nn.Conv2d(16, 32, 3, padding=2, dilation=2, groups=4, bias=False)
    conv1d = nn.Conv1d(8, 16, 5)
    x = torch.randn(2, 3, 32, 32)
    s = torch.randn(2, 8, 100)
    with torch.no_grad():
        for _ in range(2):
            y = conv(x)
            grouped(y)
            conv1d(s)
            F.conv2d(x, torch.randn(4, 3, 5, 5), stride=(1, 2), padding=(2, 0))


def transformer():
    torch.manual_seed(0)
    lin = nn.Linear(256, 512)
    q = torch.randn(2, 4, 64, 32)
    k = torch.randn(2, 4, 64, 32)
    v = torch.randn(2, 4, 64, 32)
    x = torch.randn(8, 16, 256)
    with torch.no_grad():
        for _ in range(2):
            lin(x)                       # aten::linear over a 3-D input (matmul → mm)
            lin(x[0])                    # 2-D input: aten::addmm
            F.scaled_dot_product_attention(q, k, v)
            F.scaled_dot_product_attention(q, k, v, is_causal=True)


def train_step():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 128), torch.randint(0, 10, (32,))
    for _ in range(2):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()


for name, fn in [("flops_matmuls", matmuls), ("flops_elementwise", elementwise), ("flops_convs", convs),
                 ("flops_transformer", transformer), ("flops_train_step", train_step)]:
    fn()  # warm-up
    record(name + "_cpu", fn)

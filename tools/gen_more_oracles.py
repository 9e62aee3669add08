#!/usr/bin/env python3
"""More real PyTorch traces with PyTorch's own key_averages() as the oracle,
for behaviours the shared fixtures do not cover: TensorList inputs grouped by
shape, profile_memory ([memory] rows), with_stack (Python frames), ops on
several threads, and ProfilerStep#N from a schedule.

Usage: python gen_more_oracles.py OUT_DIR   (needs torch; CPU is enough)
Reuses avg_rows() from the shared gen_torch_traces.py (path below).
"""
import sys, os, gzip, json, shutil, tempfile, threading
sys.path.insert(0, os.environ.get('TRACELANE_SHARED_TOOLS', os.path.join(os.path.dirname(__file__), '..', '..', 'shared', 'tools')))
import torch, torch.nn as nn, torch.nn.functional as F
from torch.profiler import profile, ProfilerActivity, record_function, schedule
import gen_torch_traces as g

out = sys.argv[1]

def record(name, run, **kw):
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, **kw) as prof:
        run(prof)
    tmp = tempfile.mktemp(suffix=".json")
    prof.export_chrome_trace(tmp)
    with open(tmp, "rb") as src, gzip.open(os.path.join(out, f"{name}.pt.trace.json.gz"), "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.remove(tmp)
    meta = {"torch": torch.__version__, "case": name, "activities": ["ProfilerActivity.CPU"], "profile_kwargs": {k: str(v) for k, v in kw.items()}}
    ka = prof.key_averages()
    json.dump({"meta": meta, "rows": g.avg_rows(ka)}, open(os.path.join(out, f"{name}.key_averages.json"), "w"), indent=1)
    json.dump({"meta": meta, "rows": g.avg_rows(prof.key_averages(group_by_input_shape=True), True)}, open(os.path.join(out, f"{name}.key_averages_by_shape.json"), "w"), indent=1)
    open(os.path.join(out, f"{name}.table.txt"), "w").write(ka.table(sort_by="self_cpu_time_total", row_limit=-1))
    print(name, len(ka))

torch.manual_seed(0)
x = torch.randn(256, 256)

def tensor_lists(prof):
    for i in range(3):
        with record_function("lists"):
            a = torch.cat([x, x, x], dim=0)
            b = torch.stack([x, x])
            c = torch.split(a, 100)
            d = torch.cat(list(c[:2]))
            e = x.clone().div_(2.0).div_(3.0)
record("tensor_lists_cpu", tensor_lists)

def memory(prof):
    ys = []
    for i in range(3):
        with record_function("alloc"):
            ys.append(torch.empty(1024, 1024))
        ys.append(x * 2)
    del ys
record("profile_memory_cpu", memory, profile_memory=True)

def stacks(prof):
    m = nn.Sequential(nn.Linear(256, 256), nn.ReLU())
    for i in range(2):
        m(x).sum().backward()
record("with_stack_cpu", stacks, with_stack=True)

def threads(prof):
    def work():
        for i in range(3):
            with record_function("worker"):
                torch.mm(x, x).relu_()
    ts = [threading.Thread(target=work) for _ in range(2)]
    for t in ts: t.start()
    work()
    for t in ts: t.join()
record("threads_cpu", threads)

def stepped(prof):
    m = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 256))
    opt = torch.optim.AdamW(m.parameters())
    for i in range(5):
        loss = F.mse_loss(m(x), x)
        opt.zero_grad(); loss.backward(); opt.step()
        prof.step()
record("profiler_steps_cpu", stepped, schedule=schedule(wait=0, warmup=1, active=3, repeat=1))

def nested_same_name(prof):
    for i in range(3):
        with record_function("outer"):
            with record_function("outer"):
                with record_function("inner"):
                    y = x.add(1).div_(2)
            with record_function("outer"):
                y = y.mul(2)

record("nested_same_name_cpu", nested_same_name)

def conv_lstm_train(prof):
    torch.manual_seed(0)
    conv = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
    lstm = nn.LSTM(8, 16, batch_first=True)
    opt = torch.optim.AdamW(list(conv.parameters()) + list(lstm.parameters()), foreach=True)
    img = torch.randn(4, 3, 32, 32)
    for step in range(2):
        with record_function(f"## step {step} ##"):
            feat = conv(img).flatten(1).unsqueeze(1).repeat(1, 5, 1)
            out, _ = lstm(feat)
            loss = out.pow(2).mean()
            opt.zero_grad(); loss.backward(); opt.step()

record("conv_lstm_train_cpu", conv_lstm_train)

def compiled_mlp(prof):
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(256, 256), nn.GELU(), nn.Linear(256, 256))
    cm = torch.compile(m)
    for _ in range(2):
        cm(x)  # compile outside the profile window would be ideal; warm here
    for i in range(3):
        with record_function("compiled_mlp"):
            cm(x).sum()

# warm-up compile before profiling
_m = None
record("compiled_mlp_cpu", compiled_mlp)

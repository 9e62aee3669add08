#!/usr/bin/env python3
"""Real memory captures with PyTorch's own answers (issue 34).

Profiler traces recorded with profile_memory=True, each with
  <case>.pt.trace.json.gz              torch's export_chrome_trace, gzipped
  <case>.key_averages{,_by_shape}.json key_averages() with the memory columns
                                       (cpu_memory_usage, self_cpu_memory_usage,
                                       device_memory_usage, self_device_memory_usage)
  <case>.memory_timeline.raw.json.gz   export_memory_timeline's raw file
                                       ([t_ns, action, bytes, category])
and, with --cuda, allocator snapshots (torch.cuda.memory._dump_snapshot):
  snap_train_cuda.pickle               a training run, recorded together with
                                       snap_train_cuda.pt.trace.json.gz (one clock)
  snap_train_cuda.protocol{2,3,4,5}.pickle  the same snapshot, each pickle protocol
  snap_oom_fragmented_cuda.pickle      an OOM with enough free bytes, none contiguous
  snap_oom_capacity_cuda.pickle        an OOM asking more than the cap
  snap_expandable_cuda.pickle          expandable_segments:True (segment_map/unmap)
  snapshots.json                       what each snapshot should say (requests, caps)

Usage: gen_memory_oracles.py OUT_DIR [--cuda] [--case NAME]   (one process per snapshot case)
"""
import argparse, gzip, json, os, pickle, shutil, subprocess, sys, tempfile, traceback

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import profile, ProfilerActivity, record_function

from oracle_rows import write_oracle

MiB = 1 << 20


def write_profile(prof, out, name, acts, dev):
    meta = {"torch": torch.__version__, "python": sys.version.split()[0], "case": name,
            "activities": [str(a) for a in acts], "profile_memory": True}
    sort = "self_cuda_memory_usage" if dev == "cuda" else "self_cpu_memory_usage"
    write_oracle(prof, out, name, meta, sort, memory=True)
    try:
        prof.export_memory_timeline(os.path.join(out, f"{name}.memory_timeline.raw.json.gz"),
                                    device="cuda:0" if dev == "cuda" else "cpu")
    except Exception:
        traceback.print_exc()
    print(name, "ok", flush=True)


def record(out, name, dev, run):
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev == "cuda" else [])
    with profile(activities=acts, record_shapes=True, profile_memory=True, with_stack=True) as prof:
        run()
    write_profile(prof, out, name, acts, dev)


def mlp(dev):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(512, 1024), nn.GELU(), nn.Linear(1024, 1024), nn.ReLU(),
                         nn.Linear(1024, 10)).to(dev)


def train_steps(dev, steps=3):
    model = mlp(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(256, 512, device=dev)
    y = torch.randint(0, 10, (256,), device=dev)

    def run():
        for i in range(steps):
            with record_function(f"## step {i} ##"):
                opt.zero_grad(set_to_none=True)
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
        if dev == "cuda":
            torch.cuda.synchronize()
    return run


def infer_temporaries(dev):
    torch.manual_seed(0)
    conv = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(inplace=True),
                         nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64)).to(dev).eval()
    x = torch.randn(8, 3, 64, 64, device=dev)
    made_before = [torch.randn(256, 256, device=dev) for _ in range(4)]

    def run():
        with torch.no_grad():
            for i in range(2):
                with record_function("forward"):
                    h = conv(x)
                    h = h.relu_().mul_(0.5)
                    s = (h * h).sum(dim=(2, 3))
                    _ = s.softmax(dim=1)
            made_before.clear()  # frees tensors allocated before the profile
        if dev == "cuda":
            torch.cuda.synchronize()
    return run


def churn(dev):
    base = torch.randn(128, 128, device=dev)

    def run():
        acc = torch.zeros(128, 128, device=dev)
        for i in range(20):
            with record_function("churn"):
                t = base * float(i)
                acc.add_(t)
                acc = acc + 1
        if dev == "cuda":
            torch.cuda.synchronize()
    return run


def activations(dev, steps=2):
    """Training where activations dominate the peak: a deep, wide MLP on a
    large batch (each layer's output, 4096 x 1024 fp32 = 16 MiB, is saved
    for backward), plain SGD so no optimizer state competes."""
    torch.manual_seed(0)
    layers = []
    for _ in range(8):
        layers += [nn.Linear(1024, 1024), nn.ReLU()]
    model = nn.Sequential(*layers, nn.Linear(1024, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(4096, 1024, device=dev)
    y = torch.randint(0, 10, (4096,), device=dev)

    def run():
        for i in range(steps):
            with record_function(f"## step {i} ##"):
                opt.zero_grad(set_to_none=True)
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
        if dev == "cuda":
            torch.cuda.synchronize()
    return run


PROFILE_CASES = (("mem_train", train_steps), ("mem_infer", infer_temporaries), ("mem_churn", churn),
                 ("mem_activations", activations))


def profile_cases(out, dev, only=None):
    for name, make in PROFILE_CASES:
        if only and name != only:
            continue
        try:
            record(out, f"{name}_{dev}", dev, make(dev))
        except Exception:
            traceback.print_exc()


# --- allocator snapshots (CUDA only), one fresh process each -----------------

def snap_train(out, facts):
    torch.cuda.memory._record_memory_history(max_entries=200_000, context="all", stacks="python")
    run = train_steps("cuda", steps=3)
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    with profile(activities=acts, record_shapes=True, profile_memory=True, with_stack=True) as prof:
        run()
    torch.cuda.memory._dump_snapshot(os.path.join(out, "snap_train_cuda.pickle"))
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    for p in (2, 3, 4, 5):
        with open(os.path.join(out, f"snap_train_cuda.protocol{p}.pickle"), "wb") as f:
            pickle.dump(snap, f, protocol=p)
    prof_tmp = tempfile.mktemp(suffix=".json")
    prof.export_chrome_trace(prof_tmp)
    with open(prof_tmp, "rb") as src, gzip.open(os.path.join(out, "snap_train_cuda.pt.trace.json.gz"), "wb") as dst:
        shutil.copyfileobj(src, dst)
    facts["snap_train_cuda"] = {
        "default_pickle_protocol": pickle.DEFAULT_PROTOCOL,
        "max_memory_allocated": torch.cuda.max_memory_allocated(),
        "max_memory_reserved": torch.cuda.max_memory_reserved(),
        "memory_allocated_at_dump": torch.cuda.memory_allocated(),
        "memory_reserved_at_dump": torch.cuda.memory_reserved(),
        "device_traces_entries": [len(d) for d in snap["device_traces"]],
        "segments": len(snap["segments"]),
    }


def cap_allocator(total_bytes):
    free, total = torch.cuda.mem_get_info()
    torch.cuda.set_per_process_memory_fraction(total_bytes / total)
    return total


def oom_case(out, facts, name, cap, request, hold):
    """Record allocator history, `hold()` what stays allocated, then ask for
    `request` bytes under a cap of `cap` bytes: the OOM and its snapshot."""
    device_total = cap_allocator(cap)
    torch.cuda.memory._record_memory_history(max_entries=100_000, context="all", stacks="python")
    held = hold()
    err = None
    try:
        torch.empty(request, dtype=torch.uint8, device="cuda")
    except torch.OutOfMemoryError as e:
        err = str(e)
    torch.cuda.memory._dump_snapshot(os.path.join(out, f"{name}.pickle"))
    torch.cuda.memory._record_memory_history(enabled=None)
    facts[name] = {"request_bytes": request, "cap_bytes": cap, "device_total_bytes": device_total,
                   "error": err, "held_bytes": sum(h.numel() for h in held)}


def snap_oom_fragmented(out, facts):
    """A 512 MiB segment cut into 20 MiB blocks, every other one freed: 240+
    MiB free inside reserved memory, no free block over 32 MiB; a 200 MiB
    request cannot fit and the cap forbids a new segment."""
    def hold():
        big = torch.empty(512 * MiB, dtype=torch.uint8, device="cuda")
        del big  # the segment stays cached, free
        pieces = [torch.empty(20 * MiB, dtype=torch.uint8, device="cuda") for _ in range(25)]
        keep = pieces[1::2]
        del pieces
        return keep + [torch.empty(400 * MiB, dtype=torch.uint8, device="cuda")]
    oom_case(out, facts, "snap_oom_fragmented_cuda", 1024 * MiB, 200 * MiB, hold)


def snap_oom_capacity(out, facts):
    """300 MiB held, 400 MiB asked, a 512 MiB cap: nothing reserved is free."""
    def hold():
        return [torch.empty(100 * MiB, dtype=torch.uint8, device="cuda") for _ in range(3)]
    oom_case(out, facts, "snap_oom_capacity_cuda", 512 * MiB, 400 * MiB, hold)


def snap_expandable(out, facts):
    torch.cuda.memory._record_memory_history(max_entries=100_000, context="all", stacks="python")
    train_steps("cuda", steps=2)()
    xs = [torch.empty(n * MiB, dtype=torch.uint8, device="cuda") for n in (64, 3, 130, 7)]
    del xs[1:3]
    torch.cuda.empty_cache()
    torch.cuda.memory._dump_snapshot(os.path.join(out, "snap_expandable_cuda.pickle"))
    torch.cuda.memory._record_memory_history(enabled=None)
    facts["snap_expandable_cuda"] = {"alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF")}


SNAPSHOTS = {"snap_train": snap_train, "snap_oom_fragmented": snap_oom_fragmented,
             "snap_oom_capacity": snap_oom_capacity, "snap_expandable": snap_expandable}


def run_snapshot_case(out, case):
    facts = {}
    SNAPSHOTS[case](out, facts)
    path = os.path.join(out, "snapshots.json")
    have = json.load(open(path)) if os.path.exists(path) else {}
    have.update(facts)
    have["meta"] = {"torch": torch.__version__, "python": sys.version.split()[0],
                    "device": torch.cuda.get_device_name(0)}
    json.dump(have, open(path, "w"), indent=1)
    print(case, "ok", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--cuda", action="store_true")
    ap.add_argument("--snapshot-case")
    ap.add_argument("--case", help="only this profile case (mem_train, mem_activations, …)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.snapshot_case:
        run_snapshot_case(a.out, a.snapshot_case)
        return
    profile_cases(a.out, "cpu", a.case)
    if a.cuda:
        profile_cases(a.out, "cuda", a.case)
        for case in SNAPSHOTS:
            env = dict(os.environ)
            if case == "snap_expandable":
                env["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
            r = subprocess.run([sys.executable, __file__, a.out, "--snapshot-case", case], env=env, timeout=120)
            print(case, "exit", r.returncode, flush=True)


if __name__ == "__main__":
    main()

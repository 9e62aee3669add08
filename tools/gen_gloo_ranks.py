#!/usr/bin/env python3
"""Record a real multi-rank run on CPU: torch.distributed with the gloo
backend, one profiler trace per rank, plus each rank's key_averages().

WORLD processes (default 4) on this machine each run STEPS profiled steps
(`prof.step()` → ProfilerStep#N) of: an all_reduce, an all_gather and a
broadcast of a small tensor, then a DDP training step of a small MLP (its
gradient all_reduce buckets run inside backward). Rank SLOW (default 2)
computes longer before its collectives each step (an extra matmul loop,
on purpose): the others wait for it inside their collectives — the
straggler the ranks view must name.

Writes OUT/gloo_rank<r>_cpu.pt.trace.json.gz (export_chrome_trace, gzipped;
Kineto puts `distributedInfo` with the rank, world size and process groups
in it) and OUT/gloo_rank<r>_cpu.key_averages{,_by_shape}.json (the oracles,
as ../shared/tools/gen_torch_traces.py writes them).

    python tools/gen_gloo_ranks.py tests/fixtures/torch-gloo [--world 4] [--steps 3]
"""
import argparse
import gzip
import json
import os
import shutil
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import ProfilerActivity, profile, record_function

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle_rows import avg_rows  # noqa: E402


def run(rank, world, steps, slow, out, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(rank)
    model = DDP(nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 16)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(64, 256), torch.randn(64, 16)
    t = torch.full((1 << 16,), float(rank))
    work = torch.randn(256, 256)

    def step():
        with record_function("compute"):
            for _ in range(40 if rank == slow else 4):
                work.matmul(work)
        with record_function("collectives"):
            dist.all_reduce(t)
            gathered = [torch.empty_like(t) for _ in range(world)]
            dist.all_gather(gathered, t)
            dist.broadcast(t, src=0)
        with record_function("ddp_step"):
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()

    for _ in range(2):
        step()  # warm-up (gloo connections, DDP buckets)
    dist.barrier()
    every = torch.profiler.schedule(wait=0, warmup=0, active=steps, repeat=1)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, schedule=every) as prof:
        for _ in range(steps):
            step()
            prof.step()
    name = f"gloo_rank{rank}_cpu"
    tmp = tempfile.mktemp(suffix=".json")
    prof.export_chrome_trace(tmp)
    dest = os.path.join(out, f"{name}.pt.trace.json.gz")
    with open(tmp, "rb") as f, open(dest, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as g:
        shutil.copyfileobj(f, g)
    os.remove(tmp)
    meta = {"torch": torch.__version__, "case": name, "rank": rank, "world": world,
            "activities": ["ProfilerActivity.CPU"]}
    with open(os.path.join(out, f"{name}.key_averages.json"), "w") as f:
        json.dump({"meta": meta, "rows": avg_rows(prof.key_averages())}, f, indent=1)
    with open(os.path.join(out, f"{name}.key_averages_by_shape.json"), "w") as f:
        json.dump({"meta": meta, "rows": avg_rows(prof.key_averages(group_by_input_shape=True), True)}, f, indent=1)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--world", type=int, default=4)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--slow", type=int, default=2)
    ap.add_argument("--port", type=int, default=29517)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    mp.spawn(run, args=(a.world, a.steps, a.slow, a.out, a.port), nprocs=a.world, join=True)
    print("wrote", a.out)

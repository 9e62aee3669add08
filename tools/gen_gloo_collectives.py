#!/usr/bin/env python3
"""Record a real multi-rank run on CPU with every kind of collective:
torch.distributed on gloo, one profiler trace per rank.

WORLD processes (default 4) each run STEPS profiled steps of, in order:
all_reduce, all_reduce_coalesced, all_gather, all_gather_into_tensor,
reduce_scatter, reduce_scatter_tensor, all_to_all_single, all_to_all,
broadcast, reduce, gather, scatter, a ring of send/recv (rank r sends to
r+1 and receives from r−1; even ranks send first), then barrier. Rank SLOW
(default 1) computes longer just before its all_to_all_single each step:
the others wait for it there, so the largest skew of every step is at the
first all-to-all (the shape of the 8-rank DLRM run in issue 32).

Writes OUT/gloo_kinds_rank<r>_cpu.pt.trace.json.gz (export_chrome_trace,
gzipped) and OUT/expected.json: per rank, what the script issued (kinds in
order, per step) — the oracle the collective matching is checked against.

    python tools/gen_gloo_collectives.py tests/fixtures/torch-gloo-kinds [--world 4] [--steps 2]
"""
import argparse
import gzip
import json
import os
import shutil
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.profiler import ProfilerActivity, profile, record_function

# What the step issues, in order: (kind as tracelane names it, call).
def issued(rank, world, x):
    def ring():
        nxt, prv = (rank + 1) % world, (rank - 1) % world
        buf = torch.empty_like(x)
        if rank % 2 == 0:
            dist.send(x, nxt)
            dist.recv(buf, prv)
        else:
            dist.recv(buf, prv)
            dist.send(x, nxt)

    parts = [torch.ones(x.numel() // world) for _ in range(world)]
    return [
        ("allreduce", lambda: dist.all_reduce(x)),
        ("allreduce", lambda: dist.all_reduce_coalesced([x, torch.ones(5)])),
        ("allgather", lambda: dist.all_gather([torch.empty_like(x) for _ in range(world)], x)),
        ("allgather", lambda: dist.all_gather_into_tensor(torch.empty(x.numel() * world), x)),
        ("reducescatter", lambda: dist.reduce_scatter(torch.empty(x.numel() // world), parts)),
        ("reducescatter", lambda: dist.reduce_scatter_tensor(torch.empty(x.numel() // world), x)),
        ("alltoall", lambda: dist.all_to_all_single(torch.empty_like(x), x)),
        ("alltoall", lambda: dist.all_to_all([torch.empty_like(p) for p in parts], parts)),
        ("broadcast", lambda: dist.broadcast(x, src=0)),
        ("reduce", lambda: dist.reduce(x, dst=0)),
        ("gather", lambda: dist.gather(x, [torch.empty_like(x) for _ in range(world)] if rank == 0 else None, dst=0)),
        ("scatter", lambda: dist.scatter(torch.empty_like(x), [x.clone() for _ in range(world)] if rank == 0 else None, src=0)),
        ("send/recv", ring),
        ("barrier", lambda: dist.barrier()),
    ]


def run(rank, world, steps, slow, out, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    x = torch.full((1 << 14,), float(rank))
    work = torch.randn(256, 256)

    def step():
        for kind, call in issued(rank, world, x):
            if kind == "alltoall" and call is not None and rank == slow:
                for _ in range(30):
                    work.matmul(work)
            with record_function(f"issue {kind}"):
                call()

    step()  # warm-up: gloo's connections
    dist.barrier()
    # One step of warm-up inside the profile: every rank starts recording
    # before the first recorded step, so its first collective is not
    # skewed by when each rank's profiler started.
    every = torch.profiler.schedule(wait=0, warmup=1, active=steps, repeat=1)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, schedule=every) as prof:
        for _ in range(steps + 1):
            step()
            prof.step()
    name = f"gloo_kinds_rank{rank}_cpu"
    tmp = tempfile.mktemp(suffix=".json")
    prof.export_chrome_trace(tmp)
    dest = os.path.join(out, f"{name}.pt.trace.json.gz")
    with open(tmp, "rb") as f, open(dest, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as g:
        shutil.copyfileobj(f, g)
    os.remove(tmp)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--world", type=int, default=4)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--slow", type=int, default=1)
    ap.add_argument("--port", type=int, default=29541)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    mp.spawn(run, args=(a.world, a.steps, a.slow, a.out, a.port), nprocs=a.world, join=True)
    kinds = [k for k, _ in issued(0, a.world, torch.ones(a.world * 4))]
    meta = {"torch": torch.__version__, "world": a.world, "steps": a.steps, "slow": a.slow,
            "issued_per_step": kinds}
    with open(os.path.join(a.out, "expected.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print("wrote", a.out)

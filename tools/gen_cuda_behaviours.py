#!/usr/bin/env python3
"""Real CUDA traces of the behaviours issue 32 is about, each with PyTorch's
own key_averages() (same layout as the shared gen_torch_traces.py):

  cuda_graph_cuda     a small MLP captured in a CUDA graph, replayed 4 times
                      (cudaGraphLaunch: one launch, many kernels)
  blocking_cuda       blocking calls: .item(), .cpu(), nonzero(), .tolist(),
                      torch.cuda.synchronize(), an event synchronize
  multistream_cuda    work on two streams joined by wait_stream / record_event
                      (cudaStreamWaitEvent)

Usage: gen_cuda_behaviours.py OUT_DIR      (needs a CUDA GPU)
"""
import os, sys, traceback

import torch
import torch.nn as nn
from torch.profiler import profile, ProfilerActivity, record_function

from oracle_rows import write_oracle


def record(out, name, run):
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    with profile(activities=acts, record_shapes=True, with_stack=True) as prof:
        run()
    meta = {"torch": torch.__version__, "python": sys.version.split()[0], "case": name,
            "device": torch.cuda.get_device_name(0), "activities": [str(a) for a in acts]}
    write_oracle(prof, out, name, meta, "self_cuda_time_total")
    print(name, "ok", flush=True)


def cuda_graph():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 256)).cuda().eval()
    static_x = torch.randn(64, 256, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        for _ in range(3):  # warm-up before capture, as the docs require
            model(static_x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g), torch.no_grad():
        static_y = model(static_x)

    def run():
        for i in range(4):
            with record_function(f"replay {i}"):
                static_x.copy_(torch.randn(64, 256, device="cuda"))
                g.replay()
                _ = static_y.sum()
        torch.cuda.synchronize()
    return run


def blocking():
    torch.manual_seed(0)
    a = torch.randn(2048, 2048, device="cuda")

    def run():
        with record_function("item"):
            v = (a @ a).sum().item()
        with record_function("cpu copy"):
            host = (a * v).cpu()
        with record_function("nonzero"):
            nz = (a > 2.5).nonzero()
        with record_function("tolist"):
            _ = a[:4, 0].tolist()
        with record_function("device synchronize"):
            b = a @ a
            torch.cuda.synchronize()
        with record_function("event synchronize"):
            e = torch.cuda.Event()
            c = b @ a
            e.record()
            e.synchronize()
        return host, nz, c
    return run


def multistream():
    torch.manual_seed(0)
    a = torch.randn(1024, 1024, device="cuda")
    side = torch.cuda.Stream()

    def run():
        for i in range(3):
            with record_function(f"step {i}"):
                main = torch.cuda.current_stream()
                x = a @ a
                side.wait_stream(main)
                with torch.cuda.stream(side):
                    y = (x * 2).relu()
                    done = torch.cuda.Event()
                    done.record(side)
                z = a + 1
                main.wait_event(done)
                w = y + z
                x.record_stream(side)
        torch.cuda.synchronize()
        return w
    return run


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, make in (("cuda_graph_cuda", cuda_graph), ("blocking_cuda", blocking),
                       ("multistream_cuda", multistream)):
        try:
            record(out, name, make())
        except Exception:
            traceback.print_exc()


if __name__ == "__main__":
    main()

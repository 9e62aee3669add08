#!/usr/bin/env python3
"""Writes a synthetic PyTorch allocator snapshot of about --mb megabytes
with Python's own pickle (any --protocol 2-5), shaped as
torch.cuda.memory._snapshot() documents it (torch/cuda/memory.py): segments
with blocks, device_traces of alloc / free_requested / free_completed /
segment_alloc entries with time_us and shared stack frames, allocator
settings. No GPU needed: for decoding benchmarks and scale tests (the real
snapshots are tests/fixtures/memory-snapshots/, recorded on an H200).

The allocations are replayable: a bump allocator in 1 GiB segments, each
block the request rounded to 512 bytes, frees in random order.
"""
import argparse
import pickle
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--mb", type=float, default=10)
    ap.add_argument("--protocol", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    files = [f"/srv/model/layer_{i}.py" for i in range(40)] + [
        "/usr/lib/python3.12/site-packages/torch/nn/modules/module.py",
        "/usr/lib/python3.12/site-packages/torch/nn/functional.py",
    ]
    frames = [
        {"name": f"fn_{i}", "filename": rng.choice(files), "line": rng.randint(1, 2000)}
        for i in range(1400)
    ]
    stacks = [rng.sample(frames, rng.randint(6, 30)) for _ in range(300)]
    # ~150 bytes of pickle per entry once frames are memoized.
    n = max(10, int(a.mb * 1e6 / 150))
    seg_size = 1 << 30
    segments = []  # [address, used]
    live = {}  # addr -> (size, requested, stack)
    trace = []
    t = 1_796_400_000_000_000
    base = 0x7F0000000000

    def new_segment():
        addr = base + len(segments) * (seg_size + (2 << 20))
        segments.append([addr, 0])
        trace.append(entry("segment_alloc", addr, seg_size, stacks[0]))

    def entry(action, addr, size, stack):
        nonlocal t
        t += rng.randint(1, 50)
        return {
            "action": action,
            "addr": addr,
            "size": size,
            "stream": 0,
            "time_us": t,
            "compile_context": "N/A",
            "user_metadata": "",
            # A list per entry, of frame dicts shared through the memo (as
            # _snapshot() writes them).
            "frames": list(stack),
        }

    new_segment()
    while len(trace) < n:
        if live and (rng.random() < 0.45 or len(live) > 5000):
            addr = rng.choice(list(live)) if len(live) < 64 else next(iter(live))
            size, req, stack = live.pop(addr)
            trace.append(entry("free_requested", addr, req, stack))
            trace.append(entry("free_completed", addr, req, stack))
            continue
        req = rng.choice([4, 512, 4096, 1 << 16, 1 << 20, 3 << 20, 16 << 20])
        size = max(512, (req + 511) // 512 * 512)
        if segments[-1][1] + size > seg_size:
            new_segment()
        seg = segments[-1]
        addr = seg[0] + seg[1]
        seg[1] += size
        stack = rng.choice(stacks)
        live[addr] = (size, req, stack)
        trace.append(entry("alloc", addr, req, stack))
    segs = []
    for addr, used in segments:
        blocks = []
        at = addr
        for b in sorted(x for x in live if addr <= x < addr + seg_size):
            if b > at:
                blocks.append({"address": at, "size": b - at, "requested_size": 0, "state": "inactive", "frames": []})
            size, req, stack = live[b]
            blocks.append({"address": b, "size": size, "requested_size": req, "state": "active_allocated", "frames": stack})
            at = b + size
        if at < addr + seg_size:
            blocks.append({"address": at, "size": addr + seg_size - at, "requested_size": 0, "state": "inactive", "frames": []})
        allocated = sum(b["size"] for b in blocks if b["state"] != "inactive")
        segs.append({
            "device": 0, "address": addr, "total_size": seg_size,
            "allocated_size": allocated, "active_size": allocated,
            "requested_size": allocated, "stream": 0, "segment_type": "large",
            "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
            "blocks": blocks,
        })
    snap = {
        "segments": segs,
        "device_traces": [trace],
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                               "expandable_segments": False},
        "external_annotations": [],
    }
    with open(a.out, "wb") as f:
        pickle.dump(snap, f, protocol=a.protocol)


if __name__ == "__main__":
    main()

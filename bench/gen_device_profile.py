#!/usr/bin/env python3
"""A large Neuron device profile for the Parquet import benchmark
(bench/profile.sh): ROWS instructions over the five engines and ROWS/2 DMA
packets, in the columns of AWS's profile-schema-reference (7.4.0), with
Metadata and ExecutionInfo; deterministic (seeded), snappy-compressed as
pyarrow writes by default.

    python3 bench/gen_device_profile.py 1000000 bench/out/profile_1m
"""
import os
import random
import sys

import pyarrow as pa
import pyarrow.parquet as pq

rows, out = int(sys.argv[1]), sys.argv[2]
os.makedirs(out, exist_ok=True)
rnd = random.Random(1)
engines = ["Tensor", "Vector", "Scalar", "GpSimd", "Sync"]
opcodes = {"Tensor": ["MATMUL", "TRANSPOSE"], "Vector": ["TENSOR_TENSOR", "TENSOR_REDUCE"],
           "Scalar": ["ACTIVATE", "TENSOR_SCALAR"], "GpSimd": ["IOTA", "SHUFFLE"],
           "Sync": ["EVENT_SEMAPHORE", "NOP"]}
clock = {e: 0 for e in engines}
cols = {k: [] for k in ["start_ts", "end_ts", "duration_ns", "engine", "timeline_track", "opcode",
                        "hlo_name", "layer", "hbm_read_bytes", "hbm_write_bytes", "raw_flops"]}
for i in range(rows):
    e = engines[i % 5]
    start = clock[e] + rnd.randrange(0, 40)
    dur = rnd.randrange(20, 400)
    clock[e] = start + dur
    op = rnd.choice(opcodes[e])
    cols["start_ts"].append(start)
    cols["end_ts"].append(start + dur)
    cols["duration_ns"].append(dur)
    cols["engine"].append(e)
    cols["timeline_track"].append(e)
    cols["opcode"].append(op)
    cols["hlo_name"].append(f"op.{i // 500}")
    cols["layer"].append(f"model/layer{i // 20000}")
    cols["hbm_read_bytes"].append(rnd.randrange(0, 1 << 16))
    cols["hbm_write_bytes"].append(rnd.randrange(0, 1 << 16))
    cols["raw_flops"].append(2 * 128 * 128 * 512 if op == "MATMUL" else 0)
pq.write_table(pa.table(cols), os.path.join(out, "Instruction.parquet"))
end = max(clock.values())

dma = {k: [] for k in ["start_ts", "end_ts", "duration_ns", "engine_idx", "queue_name",
                       "variable", "transfer_bytes"]}
t = 0
for i in range(rows // 2):
    t += rnd.randrange(0, 2 * end // max(rows, 1) + 1)
    dur = rnd.randrange(100, 2000)
    dma["start_ts"].append(t)
    dma["end_ts"].append(t + dur)
    dma["duration_ns"].append(dur)
    dma["engine_idx"].append(64 + i % 16)
    dma["queue_name"].append(f"qSyncIO{i % 4}")
    dma["variable"].append(f"input{i % 8}")
    dma["transfer_bytes"].append(rnd.randrange(64, 1 << 16))
pq.write_table(pa.table(dma), os.path.join(out, "DmaPacket.parquet"))

pq.write_table(pa.table({
    "profile_schema_version": ["7.4.0"], "first_hw_timestamp": [0], "last_hw_timestamp": [end],
    "first_ts": ["2025-08-13 20:05:07.555400+00:00"], "dma_ddr_bandwidth": [437.5e9],
    "hbm_ddr_bandwidth": [725e9], "neuroncore_idx": [0], "neff_name": ["bench.neff"],
}), os.path.join(out, "Metadata.parquet"))
pq.write_table(pa.table({
    "execution_index": [0], "execution_start_ts": [0], "execution_end_ts": [end],
}), os.path.join(out, "ExecutionInfo.parquet"))
print(out, rows, "instructions")

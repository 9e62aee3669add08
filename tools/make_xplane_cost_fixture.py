#!/usr/bin/env python3
"""Writes tests/fixtures/xplane/cost.xplane.pb: XLA modules compiled here
by jax[cpu] (real HloProtos: convolutions with padding and strides, dots
with batch dimensions, fusions of elementwise ops and reductions,
concatenates, slices, in-place updates, gathers, scatters, sorts,
reduce-windows), embedded in /host:metadata as a JAX GPU profile embeds
them, and a /device:GPU:0 plane with kernels naming each instruction of
each module's entry (two occurrences each). xprof's answers
(tools/xprof_oracle.py, cost.xprof.json beside it) price every
instruction with its GPU cost analysis: the op profile's FLOPs and HBM
bytes per op, which tracelane's XLA cost model must equal
(tests/xplane.rs).

    V/bin/python tools/make_xplane_cost_fixture.py   (V: a venv with jax[cpu])
    V/bin/python tools/xprof_oracle.py tests/fixtures/xplane/cost.xplane.pb
"""
import os
import sys

import jax
import jax.numpy as jnp
from jax import lax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_xplane_gpu_fixture import US, Plane, f, msg  # noqa: E402

OUT = "tests/fixtures/xplane/cost.xplane.pb"


def conv(x, w):
    return lax.conv_general_dilated(x, w, window_strides=(2, 2), padding=((1, 1), (1, 1)),
                                    dimension_numbers=("NCHW", "OIHW", "NCHW"))


def dilated_grouped_conv(x, w):
    return lax.conv_general_dilated(x, w, window_strides=(1, 1), padding="SAME",
                                    rhs_dilation=(2, 2), feature_group_count=2,
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))


def softmax_matmul(q, k):
    s = jnp.einsum("bqd,bkd->bqk", q, k) / 8.0
    return jax.nn.softmax(s, axis=-1).astype(jnp.bfloat16)


def shuffle(x, idx, upd):
    y = jnp.concatenate([x, x * 2.0], axis=1)[:, 3:40]
    y = lax.dynamic_update_slice(y, upd, (1, 2))
    g = jnp.take(x, idx, axis=0)
    s = jnp.zeros((16, 24)).at[idx].add(g)
    return y.sum() + s.sum()


def pool_sort(x):
    p = lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    c = jnp.cumsum(x, axis=1)
    return jnp.sort(p.reshape(-1)), c.max()


def mlp(x, w1, w2):
    h = jax.nn.gelu(x @ w1)
    return jnp.mean((h @ w2) ** 2)


CASES = [
    ("conv", conv, (jnp.ones((2, 8, 30, 52), jnp.bfloat16), jnp.ones((16, 8, 3, 3), jnp.bfloat16))),
    ("dilated_grouped_conv", dilated_grouped_conv,
     (jnp.ones((1, 20, 20, 8)), jnp.ones((3, 3, 4, 6)))),
    ("softmax_matmul", softmax_matmul, (jnp.ones((4, 64, 32)), jnp.ones((4, 48, 32)))),
    ("shuffle", shuffle, (jnp.ones((16, 24)), jnp.array([3, 1, 7, 7, 0]), jnp.ones((5, 6)))),
    ("pool_sort", pool_sort, (jnp.ones((1, 17, 17, 4)),)),
    ("mlp", jax.grad(mlp, argnums=(1, 2)),
     (jnp.ones((32, 64)), jnp.ones((64, 128)), jnp.ones((128, 16)))),
]

# Entry instructions that launch no kernel.
NO_KERNEL = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast"}


def entry_ops(module_text):
    """(name, opcode) of the ENTRY computation's instructions."""
    ops, inside = [], False
    for line in module_text.splitlines():
        if line.startswith("ENTRY"):
            inside = True
            continue
        if inside and line.startswith("}"):
            break
        if inside and "=" in line:
            lhs, rhs = line.split("=", 1)
            name = lhs.replace("ROOT", "").strip().lstrip("%")
            rhs = rhs.strip()
            if rhs.startswith("("):  # a tuple shape: skip to its closing paren
                depth = 0
                for i, c in enumerate(rhs):
                    depth += c == "("
                    depth -= c == ")"
                    if depth == 0:
                        rhs = rhs[i + 1:]
                        break
            else:
                rhs = rhs.split(" ", 1)[1]
            ops.append((name, rhs.split("(", 1)[0].strip()))
    return ops


def main():
    meta = Plane(0, "/host:metadata")
    gpu = Plane(0, "/device:GPU:0")
    gpu.plane_stats = [gpu.stat("device_vendor", "NVIDIA"), gpu.stat("core_count", 132),
                       gpu.stat("clock_rate", 1980000)]
    events, at = [], 10 * US
    for program, (name, fn, args) in enumerate(CASES, start=1):
        module = jax.jit(fn).lower(*args).compile().runtime_executable().hlo_modules()[0]
        proto = f(1, module.as_serialized_hlo_module_proto())  # xla.HloProto{hlo_module}
        meta.event_meta.append(f(4, msg(f(1, program), f(2, msg(
            f(1, program), f(2, f"{module.name}({program})"),
            f(5, meta.stat("Hlo Proto", proto)))))))
        for group in (2 * program, 2 * program + 1):
            for op, opcode in entry_ops(module.to_string()):
                if opcode in NO_KERNEL:
                    continue
                stats = [("hlo_op", ("ref", op)), ("hlo_module", ("ref", module.name)),
                         ("program_id", program), ("group_id", group), ("correlation_id", 0)]
                events.append((f"{opcode}_kernel", at, 3 * US, stats))
                at += 5 * US
    gpu.line(1, "Stream #1(Kernel)", 1_000, events)
    space = f(1, meta.encode()) + f(1, gpu.encode()) + f(4, "gpu-host-0")
    with open(OUT, "wb") as fh:
        fh.write(space)
    print(OUT, len(space), len(events), "kernels")


if __name__ == "__main__":
    main()

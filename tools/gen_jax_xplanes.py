#!/usr/bin/env python3
"""Records real XPlane files with jax[cpu]: each case runs under
jax.profiler.trace and its `<host>.xplane.pb` is copied to
OUT/<case>.xplane.pb. CPU-only, but real: the host plane (TraceMe, the
Python tracer, PjRt) and XLA's CPU executable events.

    python3 -m venv V && V/bin/pip install "jax[cpu]" xprof
    V/bin/python tools/gen_jax_xplanes.py tests/fixtures/jax-cpu
    V/bin/python tools/xprof_oracle.py tests/fixtures/jax-cpu/*.xplane.pb

Versions used are written to OUT/versions.json.
"""
import glob, json, os, shutil, sys, tempfile

import jax
import jax.numpy as jnp


def case_matmul():
    a = jnp.ones((256, 256), jnp.float32)
    b = jnp.ones((256, 256), jnp.float32)
    f = jax.jit(lambda a, b: jnp.dot(a, b))
    f(a, b).block_until_ready()  # compile outside the trace
    return lambda: [f(a, b).block_until_ready() for _ in range(5)]


def case_mlp_train():
    key = jax.random.PRNGKey(0)
    k1, k2, k3 = jax.random.split(key, 3)
    params = {
        "w1": jax.random.normal(k1, (64, 128)) * 0.1,
        "w2": jax.random.normal(k2, (128, 10)) * 0.1,
    }
    x = jax.random.normal(k3, (32, 64))
    y = jnp.zeros((32,), jnp.int32)

    def loss(p, x, y):
        h = jax.nn.relu(x @ p["w1"])
        logits = h @ p["w2"]
        return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(32), y])

    @jax.jit
    def step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g), l

    step(params, x, y)[1].block_until_ready()

    def run():
        p = params
        for i in range(4):
            with jax.profiler.StepTraceAnnotation("train", step_num=i):
                p, l = step(p, x, y)
                l.block_until_ready()
    return run


def case_rmsnorm():
    x = jnp.ones((64, 512), jnp.float32)
    w = jnp.ones((512,), jnp.float32)

    @jax.jit
    def rms(x, w):
        with jax.named_scope("rmsnorm"):
            return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w

    rms(x, w).block_until_ready()
    return lambda: [rms(x, w).block_until_ready() for _ in range(8)]


def case_conv_eager():
    x = jnp.ones((4, 8, 32, 32), jnp.float32)
    k = jnp.ones((16, 8, 3, 3), jnp.float32)
    conv = lambda: jax.lax.conv(x, k, (1, 1), "SAME")
    jnp.tanh(conv()).block_until_ready()
    return lambda: [jnp.tanh(conv()).block_until_ready() for _ in range(3)]


CASES = {
    "matmul": case_matmul,
    "mlp_train": case_mlp_train,
    "rmsnorm": case_rmsnorm,
    "conv_eager": case_conv_eager,
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, make in CASES.items():
        run = make()
        with tempfile.TemporaryDirectory() as d:
            with jax.profiler.trace(d):
                run()
            files = glob.glob(os.path.join(d, "plugins/profile/*/*.xplane.pb"))
            assert len(files) == 1, files
            shutil.copy(files[0], os.path.join(out, f"{name}.xplane.pb"))
            print(name, os.path.getsize(files[0]))
    import xprof  # noqa: F401  (the oracle's converter; its version recorded)
    from importlib.metadata import version
    json.dump({p: version(p) for p in ("jax", "jaxlib", "xprof")},
              open(os.path.join(out, "versions.json"), "w"), indent=1)


if __name__ == "__main__":
    main()

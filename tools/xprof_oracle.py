#!/usr/bin/env python3
"""xprof's own answers for XPlane files: for each FILE.xplane.pb, writes
FILE.xprof.json beside it (or into --out DIR) with xprof's
`framework_op_stats`, `hlo_stats`, `op_profile`, `kernel_stats` and
`roofline_model` tool data, converted offline by xprof's C++ converter
(`pip install xprof`; no server, no network).

xprof treats every .xplane.pb in a folder as one session and caches its
op stats there, so each file is converted alone, from a copy in a
temporary folder of its own, with no saved result reused.

    V/bin/python tools/xprof_oracle.py [--out DIR] FILE.xplane.pb...
    V/bin/python tools/xprof_oracle.py --run RUN_DIR --out OUT.xprof.json

`--run`: a profile run's folder (plugins/profile/<run>/, one file per
host), converted as one session, as xprof serves it.
"""
import argparse, json, os, shutil, tempfile
from importlib.metadata import version

from xprof.convert import raw_to_tool_data

TOOLS = ["framework_op_stats", "hlo_stats", "op_profile", "kernel_stats", "roofline_model"]


def convert(path, hosts=None):
    hosts = hosts or [path]
    out = {"xprof_version": version("xprof"), "file": os.path.basename(path)}
    with tempfile.TemporaryDirectory() as d:
        copies = []
        for h in hosts:
            copies.append(os.path.join(d, os.path.basename(h)))
            shutil.copy(h, copies[-1])
        for tool in TOOLS:
            data, _ = raw_to_tool_data.xspace_to_tool_data(
                copies, tool, {"use_saved_result": False})
            if isinstance(data, bytes):
                data = data.decode()
            out[tool] = json.loads(data) if data else None
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--run")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    if a.run:
        import glob
        hosts = sorted(glob.glob(os.path.join(a.run, "*.xplane.pb")))
        with open(a.out, "w") as fh:
            json.dump(convert(a.run.rstrip("/"), hosts), fh, indent=0, sort_keys=True)
        print(a.out)
        return
    for f in a.files:
        name = os.path.basename(f).removesuffix(".pb").removesuffix(".xplane") + ".xprof.json"
        dest = os.path.join(a.out or os.path.dirname(f), name)
        with open(dest, "w") as fh:
            json.dump(convert(f), fh, indent=0, sort_keys=True)
        print(dest)


if __name__ == "__main__":
    main()

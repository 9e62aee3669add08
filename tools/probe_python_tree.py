#!/usr/bin/env python3
"""Which PyTorch versions put Python frames in the profiler's event tree.

Records one small training step under record_function with
with_stack=True and profile_memory=True, then prints, for the torch it
runs with: whether the range's cpu_children include Python frames (so its
self CPU time excludes them), how many key_averages() rows are Python
frames, and the trace's top-level keys (host_name) and Python-frame args
(CallFrom). tracelane's analysis::ops::python_frames_in_tree reads
host_name from what this printed for 2.11 … 2.15:

  2.11  children: ops only        python rows: 0     host_name: no   CallFrom: no
  2.12  children: Python frames   python rows: 104   host_name: yes  CallFrom: no
  2.13  children: Python frames   python rows: 149   host_name: yes  CallFrom: no
  2.14  children: Python frames   python rows: 0     host_name: yes  CallFrom: yes
  2.15  children: Python frames   python rows: 0     host_name: yes  CallFrom: yes

Each version from PyPI without its CUDA dependencies (a CPU run needs
only curand's library to import):
  pip download torch==2.12.0 --no-deps -d W && pip install --no-deps --target T W/torch-*.whl nvidia-curand
  PYTHONPATH=T python tools/probe_python_tree.py
"""
import json, tempfile

import torch
import torch.nn as nn
from torch.profiler import profile, ProfilerActivity, record_function

m = nn.Sequential(nn.Linear(64, 64), nn.ReLU())
x = torch.randn(32, 64)
with profile(activities=[ProfilerActivity.CPU], with_stack=True, profile_memory=True) as prof:
    with record_function("## step ##"):
        m(x).sum().backward()
step = [e for e in prof.events() if e.name == "## step ##"][0]
python = lambda name: ".py(" in name or name.startswith(("nn.Module", "<built-in"))
f = tempfile.mktemp(suffix=".json")
prof.export_chrome_trace(f)
d = json.load(open(f))
args = set()
for e in d["traceEvents"]:
    if e.get("cat") == "python_function":
        args |= set(e.get("args", {}))
print(torch.__version__,
      "children:", "Python frames" if any(python(c.name) for c in step.cpu_children) else "ops only",
      "python rows:", sum(python(k.key) for k in prof.key_averages()),
      "host_name:", "yes" if "host_name" in d else "no",
      "CallFrom:", "yes" if "CallFrom" in args else "no")

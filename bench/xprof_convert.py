#!/usr/bin/env python3
"""Times xprof's own converter on an XPlane file (the baseline of
bench/xplane.sh): each tool converted from a copy of the file in a folder
of its own, no saved result reused. Prints `tool,seconds` lines."""
import os, shutil, sys, tempfile, time

from xprof.convert import raw_to_tool_data

for tool in sys.argv[2:]:
    with tempfile.TemporaryDirectory() as d:
        copy = os.path.join(d, os.path.basename(sys.argv[1]))
        shutil.copy(sys.argv[1], copy)
        t = time.perf_counter()
        data, _ = raw_to_tool_data.xspace_to_tool_data([copy], tool, {"use_saved_result": False})
        print(f"{tool},{time.perf_counter() - t:.3f},{len(data or b'')}", flush=True)

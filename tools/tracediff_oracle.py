#!/usr/bin/env python3
"""TraceLens' TraceDiff on a pair of traces: each device event with the
lowest common ancestor TraceDiff gives it — the oracle `tracelane diff`'s
alignment is checked against (tests/align.rs).

Usage (TraceLens at commit 171dd747, the commit the pairs come from; its
Python package only — the whole tree has LFS blobs):
    git clone https://github.com/AMD-AGI/TraceLens && cd TraceLens
    git checkout 171dd747 && git archive HEAD TraceLens setup.py | tar -x -C /tmp/tl
    python -m venv /tmp/tlvenv
    /tmp/tlvenv/bin/pip install pandas tqdm openpyxl tabulate orjson PyYAML
    PYTHONPATH=/tmp/tl /tmp/tlvenv/bin/python tools/tracediff_oracle.py A B OUT.json

Writes OUT.json:
    {"meta": {...}, "sides": [[[ts_ns, name, lca], ...], [...]]}
one row per device event (kernel, memcpy, memset) of A (`sides[0]`) and
B, in start order: its start in integer nanoseconds (the trace's µs × 1000,
rounded), its name, and the name of the op TraceDiff calls its lowest
common ancestor (`lowest_common_ancestor_name` of
`TraceDiff.get_diff_stats_df()` after `merge_trees()` and
`generate_diff_stats()`: the op itself when it pairs, else the pair above
the point of difference).
"""
import json
import sys

from TraceLens import TreePerfAnalyzer
from TraceLens.TraceDiff import TraceDiff


def main():
    a, b, out = sys.argv[1:4]
    pa = TreePerfAnalyzer.from_file(a)
    pb = TreePerfAnalyzer.from_file(b)
    td = TraceDiff(pa.tree, pb.tree)
    td.merge_trees()
    td.generate_diff_stats()
    df = td.get_diff_stats_df()
    sides = [[], []]
    for tree, source, rows in ((pa.tree, "trace1", sides[0]), (pb.tree, "trace2", sides[1])):
        by_uid = tree.events_by_uid
        for r in df[df["source"] == source].itertuples(index=False):
            e = by_uid[r.gpu_op_uid]
            rows.append([round(float(e["ts"]) * 1000), e["name"], r.lowest_common_ancestor_name])
        rows.sort()
    meta = {
        "tool": "TraceLens TraceDiff (AMD-AGI/TraceLens 171dd747)",
        "a": a.split("/")[-1],
        "b": b.split("/")[-1],
        "events": [len(sides[0]), len(sides[1])],
    }
    with open(out, "w") as f:
        json.dump({"meta": meta, "sides": sides}, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()

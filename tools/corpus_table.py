#!/usr/bin/env python3
"""The corpus table of tests/corpus.md: per trace its device, the top
finding of `tracelane insights` in one line, and how `analyze --hta`
compares with HTA's own answers kept in DIR/hta/.

Usage: tools/corpus_table.py TRACELANE_BIN DIR [DIR ...]
Prints a Markdown table. The comparison itself is the test
`TRACELANE_HTA_CORPUS=DIR cargo test --release -p tracelane-core --test hta_oracle`;
this script only reads whether HTA could answer (its `expected` nulls).
"""
import gzip
import json
import os
import subprocess
import sys


def device_of(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", errors="replace") as f:
        d = json.load(f)
    props = d.get("deviceProperties") or []
    names = sorted({p.get("name", "?") for p in props if isinstance(p, dict)})
    if names:
        return ", ".join(names) + (f" (node of {len(props)})" if len(props) > 1 else "")
    cats = {e.get("cat") for e in d.get("traceEvents", []) if isinstance(e, dict)}
    if "mtia_ccp_events" in cats or any("mtia" in str(c) for c in cats):
        return "MTIA"
    return "no device" if "kernel" not in cats else "GPU (no deviceProperties)"


def top_finding(tracelane, path):
    out = subprocess.run(
        [tracelane, "insights", path, "--format", "json"],
        capture_output=True, text=True, timeout=600,
    )
    if out.returncode != 0:
        return "error: " + out.stderr.strip().splitlines()[-1]
    r = json.loads(out.stdout)
    if not r["findings"]:
        return "no finding"
    f = r["findings"][0]
    return f"{f['severity']}: {f['title']} ({f['rule']})"


def hta_unanswered(dir_, stem):
    p = os.path.join(dir_, "hta", stem + ".hta.json")
    if not os.path.exists(p):
        return "no oracle"
    e = json.load(open(p))["expected"]
    missing = [k for k, v in e.items() if v is None]
    return "HTA could not answer: " + ", ".join(missing) if missing else ""


def main():
    tracelane, dirs = sys.argv[1], sys.argv[2:]
    print("| trace | device | top finding (tracelane insights) | analyze --hta vs HTA 0.6.1 and 0.5.0 |")
    print("|---|---|---|---|")
    for d in dirs:
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if not os.path.isfile(path) or not name.endswith((".json", ".json.gz")):
                continue
            stem = name.removesuffix(".gz").removesuffix(".json")
            note = hta_unanswered(d, stem)
            hta = "equal" + (f" ({note})" if note else "")
            top = top_finding(tracelane, path).replace("|", "\\|")
            print(f"| `{name}` | {device_of(path)} | {top} | {hta} |")


if __name__ == "__main__":
    main()

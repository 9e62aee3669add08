#!/usr/bin/env python3
"""The longest source files and functions, for keeping rooms small.

    tools/longest.py [--files N] [--functions M]

Lists every tracked (or new, not ignored) non-test Rust file over N lines
(default 1000) and every function over M lines (default 150), longest
first. A function's length runs from its `fn` line to its closing brace,
found by counting braces outside strings, chars and line comments.
"""
import argparse
import os
import re
import subprocess

FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(\w+)")


def code(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return re.sub(r"//.*", "", line)


def functions(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        m = FN.match(line)
        if not m:
            continue
        depth, opened = 0, False
        for j in range(i, len(lines)):
            c = code(lines[j])
            if j == i and ";" in c and "{" not in c:
                break  # a declaration without a body
            for ch in c:
                if ch == "{":
                    depth, opened = depth + 1, True
                elif ch == "}":
                    depth -= 1
            if opened and depth == 0:
                yield j - i + 1, m.group(1), i + 1
                break


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--functions", type=int, default=150)
    a = ap.parse_args()
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    names = subprocess.check_output(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.rs"], text=True
    ).split()
    names = [n for n in names if not n.startswith(("fuzz/", "tests/")) and "/tests/" not in n]
    files, fns = [], []
    for n in names:
        if not os.path.exists(n):
            continue
        count = sum(1 for _ in open(n, encoding="utf-8"))
        if count > a.files:
            files.append((count, n))
        fns += [(length, name, f"{n}:{line}") for length, name, line in functions(n) if length > a.functions]
    print(f"files over {a.files} lines: {len(files)}")
    for count, n in sorted(files, reverse=True):
        print(f"  {count:5d}  {n}")
    print(f"functions over {a.functions} lines: {len(fns)}")
    for length, name, at in sorted(fns, reverse=True):
        print(f"  {length:5d}  {name}  {at}")


main()

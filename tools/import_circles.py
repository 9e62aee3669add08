#!/usr/bin/env python3
"""Import circles between the source files of each crate.

Every `use crate::…` / `use super::…` / `use self::…` tree and every inline
`crate::…` / `super::…` path (tests included) becomes an edge from the file
to the file that defines the module it names; a name a `mod.rs` only
re-exports (`pub use x::Y`) resolves to the file that defines it. A circle is
a strongly connected component of more than one file. Prints each and exits
1 when there is any.

    tools/import_circles.py            # every crate of the workspace
    tools/import_circles.py --edges    # also every edge, for a drawing
"""
import os
import re
import sys

CRATES = {
    "tracelane-core": "crates/tracelane-core/src/lib.rs",
    "tracelane-cli": "crates/tracelane-cli/src/main.rs",
    "tracelane-app": "src/lib.rs",
}


def strip(text):
    """Drops comments, string and char literals (not paths)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == "r" and re.match(r'r#*"', text[i:]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            i = n if j < 0 else j + len(end)
            out.append('""')
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            out.append('""')
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:]):
            i += len(re.match(r"'(\\.|[^\\'])'", text[i:]).group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


class Crate:
    def __init__(self, root):
        self.files = {}  # module path tuple -> file
        self.text = {}  # file -> stripped text
        self.reexports = {}  # (module, name) -> module path of the origin
        self._walk((), root)

    def _walk(self, module, path):
        if not os.path.exists(path):
            return
        self.files[module] = path
        text = strip(open(path, encoding="utf-8").read())
        self.text[path] = text
        base = os.path.dirname(path)
        stem = os.path.splitext(os.path.basename(path))[0]
        here = base if stem in ("mod", "lib", "main") else os.path.join(base, stem)
        for m in re.finditer(r"(?m)^\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", text):
            name = m.group(1)
            for cand in (os.path.join(here, name + ".rs"), os.path.join(here, name, "mod.rs")):
                if os.path.exists(cand):
                    self._walk(module + (name,), cand)
                    break
        for m in re.finditer(r"pub(?:\([^)]*\))?\s+use\s+([^;]+);", text):
            for full in expand(m.group(1)):
                segs = [s for s in full.split("::") if s]
                origin = self.absolute(module, segs)
                if origin:
                    alias = segs[-1]
                    self.reexports[(module, alias)] = origin

    def absolute(self, module, segs):
        if not segs:
            return None
        if segs[0] == "crate":
            return list(segs[1:])
        if segs[0] in ("self",):
            return list(module) + list(segs[1:])
        if segs[0] == "super":
            up = list(module)
            while segs and segs[0] == "super":
                up = up[:-1]
                segs = segs[1:]
            return up + list(segs)
        if tuple(module) + (segs[0],) in self.files:
            return list(module) + list(segs)
        return None

    def resolve(self, segs):
        """The file defining the module (or item) that an absolute path names."""
        segs = list(segs)
        for _ in range(8):
            best = ()
            for k in range(len(segs), -1, -1):
                if tuple(segs[:k]) in self.files:
                    best = tuple(segs[:k])
                    break
            rest = segs[len(best):]
            if rest and (best, rest[0]) in self.reexports:
                segs = self.reexports[(best, rest[0])] + rest[1:]
                continue
            return self.files[best]
        return self.files[()]


def expand(tree):
    """`a::{b, c::{d, e as f}}` -> ['a::b', 'a::c::d', 'a::c::e']."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+\w+", "", tree))

    def go(prefix, t):
        if "{" not in t:
            return [prefix + t]
        i = t.index("{")
        head, body = t[:i], t[i + 1 : t.rindex("}")]
        parts, depth, cur = [], 0, ""
        for ch in body:
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
                continue
            depth += ch == "{"
            depth -= ch == "}"
            cur += ch
        if cur:
            parts.append(cur)
        out = []
        for p in parts:
            if p in ("self",):
                out.append(prefix + head.rstrip(":"))
            else:
                out += go(prefix + head, p)
        return out

    return go("", tree)


def inline_modules(text):
    """(start, end, name) of each `mod name { … }` written inside a file."""
    spans = []
    for m in re.finditer(r"\bmod\s+(\w+)\s*\{", text):
        depth, i = 0, m.end() - 1
        while i < len(text):
            depth += text[i] == "{"
            depth -= text[i] == "}"
            if depth == 0:
                break
            i += 1
        spans.append((m.start(), i, m.group(1)))
    return spans


def edges(crate):
    found = {}
    for module, path in crate.files.items():
        text = crate.text[path]
        spans = inline_modules(text)
        targets = set()
        paths = []
        for m in re.finditer(r"\buse\s+([^;]+);", text):
            paths += [(m.start(), p) for p in expand(m.group(1))]
        paths += [(m.start(), m.group(1)) for m in re.finditer(r"\b((?:crate|super|self)(?:::\w+)+)", text)]
        # A child module named without a prefix (`child::f()` in its parent).
        children = [m[-1] for m in crate.files if len(m) == len(module) + 1 and m[: len(module)] == module]
        if children:
            alt = "|".join(map(re.escape, children))
            paths += [
                (m.start(), m.group(1))
                for m in re.finditer(r"(?<![\w:])((?:" + alt + r")(?:::\w+)+)", text)
            ]
        for at, p in paths:
            inner = tuple(name for start, end, name in spans if start < at < end)
            segs = [s for s in p.split("::") if s and s != "*"]
            absolute = crate.absolute(module + inner, segs)
            if absolute is None:
                continue
            target = crate.resolve(absolute)
            if target != path:
                targets.add(target)
        found[path] = targets
    return found


def circles(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    show_edges = "--edges" in sys.argv
    total = 0
    for name, root in CRATES.items():
        crate = Crate(root)
        graph = edges(crate)
        found = circles(graph)
        total += len(found)
        print(f"{name}: {len(crate.files)} files, {sum(map(len, graph.values()))} edges, {len(found)} circles")
        for comp in found:
            print("  circle: " + " <-> ".join(comp))
            members = set(comp)
            for v in comp:
                for w in sorted(graph[v] & members):
                    print(f"    {v} -> {w}")
        if show_edges:
            for v in sorted(graph):
                for w in sorted(graph[v]):
                    print(f"  {v} -> {w}")
    sys.exit(1 if total else 0)


if __name__ == "__main__":
    main()

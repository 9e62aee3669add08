#!/usr/bin/env python3
"""Makes a large XPlane file for the benchmark from a real one, in the
shape real large profiles have: the same planes (a host's, its devices'),
each line holding many more events. Every line's events are repeated,
copy k shifted k × span later (span: past the source's last event), until
the file reaches --mb MB; the HLO modules and other planes appear once.

    python3 bench/make_big_xplane.py tests/fixtures/jax-cpu/mlp_train.xplane.pb OUT --mb 300
"""
import argparse


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def read_varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field number, wire type, raw bytes of the whole field, value)."""
    i, out = 0, []
    while i < len(b):
        start = i
        key, i = read_varint(b, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = read_varint(b, i)
        elif wire == 2:
            n, i = read_varint(b, i)
            v, i = b[i:i + n], i + n
        elif wire == 1:
            v, i = b[i:i + 8], i + 8
        else:
            v, i = b[i:i + 4], i + 4
        out.append((num, wire, b[start:i], v))
    return out


def field(num, wire, body):
    return varint(num << 3 | wire) + (varint(len(body)) + body if wire == 2 else body)


class Line:
    """A line's fields but its events, and each event as (its fields but
    offset_ps, offset_ps, duration_ps)."""

    def __init__(self, raw):
        self.head, self.events = bytearray(), []
        for num, _, fraw, v in fields(raw):
            if num != 4:
                self.head += fraw
                continue
            rest, offset, dur = bytearray(), 0, 0
            for enum, _, eraw, ev in fields(v):
                if enum == 2:
                    offset = ev
                    continue
                if enum == 3:
                    dur = ev
                rest += eraw
            self.events.append((bytes(rest), offset, dur))

    def last_ps(self):
        return max((o + d for _, o, d in self.events), default=0)

    def copy(self, shift_ps):
        out = bytearray()
        for rest, offset, _ in self.events:
            body = rest + field(2, 0, varint(offset + shift_ps))
            out += field(4, 2, body)
        return bytes(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--mb", type=int, default=300)
    a = ap.parse_args()
    src = open(a.src, "rb").read()
    top = fields(src)
    planes = []  # (plane fields but lines, [Line])
    for num, _, _, v in top:
        if num != 1:
            continue
        head, lines = bytearray(), []
        for pnum, _, praw, pv in fields(v):
            if pnum == 3:
                lines.append(Line(pv))
            else:
                head += praw
        planes.append((bytes(head), lines))
    rest = b"".join(raw for num, _, raw, _ in top if num != 1)
    lines = [l for _, ls in planes for l in ls]
    one_copy = sum(len(l.copy(0)) for l in lines)
    fixed = len(src) - one_copy
    copies = max(1, ((a.mb << 20) - fixed) // max(one_copy, 1))
    # Copies follow each other with a gap (lines start at different times).
    span_ps = max((l.last_ps() for l in lines), default=0) + 1_000_000_000
    with open(a.out, "wb") as f:
        for head, plane_lines in planes:
            body = bytearray(head)
            for l in plane_lines:
                events = b"".join(l.copy(k * span_ps) for k in range(copies))
                body += field(3, 2, bytes(l.head) + events)
            f.write(field(1, 2, bytes(body)))
        f.write(rest)
    events = copies * sum(len(l.events) for l in lines)
    print(a.out, f"{copies} copies, {events} events")


if __name__ == "__main__":
    main()

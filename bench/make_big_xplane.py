#!/usr/bin/env python3
"""Makes a large XPlane file for the benchmark by repeating the planes of
a real one (its HLO modules once) (each repeat's lines shifted later, so the events of the copies
follow each other on the same lanes) until the file reaches --mb MB.

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


def shifted_plane(plane, shift_ns):
    """The plane with every line's timestamp_ns moved by shift_ns."""
    out = bytearray()
    for num, wire, raw, v in fields(plane):
        if num != 3:
            out += raw
            continue
        line = bytearray()
        for lnum, lwire, lraw, lv in fields(v):
            if lnum == 3:
                line += varint(3 << 3) + varint(lv + shift_ns)
            else:
                line += lraw
        out += varint(3 << 3 | 2) + varint(len(line)) + line
    return bytes(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--mb", type=int, default=300)
    a = ap.parse_args()
    src = open(a.src, "rb").read()
    top = fields(src)
    planes = [v for num, _, _, v in top if num == 1]
    rest = b"".join(raw for num, _, raw, _ in top if num != 1)
    span_ns = 50_000_000  # each copy 50 ms after the last
    with open(a.out, "wb") as f:
        size, k = 0, 0
        while size < a.mb << 20:
            for p in planes:
                # One copy of the compiled modules, as a real run has.
                if k > 0 and (2, 2, varint(2 << 3 | 2) + varint(14) + b"/host:metadata",
                              b"/host:metadata") in fields(p)[:2]:
                    continue
                body = shifted_plane(p, k * span_ns)
                chunk = varint(1 << 3 | 2) + varint(len(body)) + body
                f.write(chunk)
                size += len(chunk)
            k += 1
        f.write(rest)
    print(a.out, size, "bytes,", k, "copies")


if __name__ == "__main__":
    main()

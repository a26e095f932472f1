#!/usr/bin/env python3
"""Makes a fleet of real-shaped pprof profiles from real ones (issue 16, bench/fleet.sh).

Each output is one of the SOURCE profiles (pprof, gzipped or not) with its samples drawn again
at random (with replacement, in proportion to their weight: a different 200 to 3,000-sample
recording of the same program), its own code renamed to the service's (`RENAME=FROM:TO`,
`{svc}` replaced by the service name) and a `service` string label on every sample, written
to OUT/svc-NN/YYYYMMDD/host-NN.pb (a third of the Go ones gzipped). The tables (functions,
locations, mappings) are kept whole, so files are 20-200 KB like a service's real profiles.

    make_fleet.py OUT COUNT SOURCE[,RENAME...] SOURCE[,RENAME...] ...

Only the standard library: the protobuf is read and written field by field.
"""

import gzip
import os
import random
import sys


def varint(buf, pos):
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


def put_varint(out, v):
    if v < 0:
        v += 1 << 64
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return


def fields(buf):
    """(number, wire type, value, raw bytes of the whole field) of each field of a message."""
    pos = 0
    while pos < len(buf):
        start = pos
        key, pos = varint(buf, pos)
        num, wt = key >> 3, key & 7
        if wt == 0:
            val, pos = varint(buf, pos)
        elif wt == 1:
            val, pos = buf[pos:pos + 8], pos + 8
        elif wt == 2:
            n, pos = varint(buf, pos)
            val, pos = buf[pos:pos + n], pos + n
        elif wt == 5:
            val, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"wire type {wt} at {start}")
        yield num, wt, val, buf[start:pos]


def ints(wt, val):
    """A repeated int64 field's values, packed or not."""
    if wt == 0:
        return [val]
    out, pos = [], 0
    while pos < len(val):
        v, pos = varint(val, pos)
        out.append(v)
    return out


def put_bytes(out, num, data):
    put_varint(out, (num << 3) | 2)
    put_varint(out, len(data))
    out.extend(data)


def put_packed(out, num, values):
    body = bytearray()
    for v in values:
        put_varint(body, v)
    put_bytes(out, num, body)


class Source:
    def __init__(self, spec):
        path, *renames = spec.split(",")
        data = open(path, "rb").read()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        self.path = path
        self.renames = [r.split(":", 1) for r in renames]
        self.other = bytearray()  # every field but samples and strings, as it was
        self.strings = []
        self.samples = []  # (locations, values, raw labels)
        for num, wt, val, raw in fields(data):
            if num == 2:
                locs, values, labels = [], [], bytearray()
                for n, w, v, r in fields(val):
                    if n == 1:
                        locs += ints(w, v)
                    elif n == 2:
                        values += ints(w, v)
                    elif n == 3:
                        labels += r
                self.samples.append((locs, values, bytes(labels)))
            elif num == 6:
                self.strings.append(val.decode("utf-8", "replace"))
            else:
                self.other += raw
        self.weights = [max(v[-1], 0) for _, v, _ in self.samples]

    def write(self, svc, rng):
        strings = list(self.strings)
        for i, s in enumerate(strings):
            for old, new in self.renames:
                s = s.replace(old, new.replace("{svc}", svc))
            strings[i] = s
        key, value = len(strings), len(strings) + 1
        strings += ["service", svc]
        draws = rng.choices(range(len(self.samples)), weights=self.weights, k=rng.randint(200, 3000))
        counts = {}
        for d in draws:
            counts[d] = counts.get(d, 0) + 1
        out = bytearray(self.other)
        for i in sorted(counts):
            locs, values, labels = self.samples[i]
            body = bytearray()
            put_packed(body, 1, locs)
            put_packed(body, 2, [v * counts[i] for v in values])
            body += labels
            label = bytearray()
            put_varint(label, 1 << 3)
            put_varint(label, key)
            put_varint(label, 2 << 3)
            put_varint(label, value)
            put_bytes(body, 3, label)
            put_bytes(out, 2, body)
        for s in strings:
            put_bytes(out, 6, s.encode())
        return bytes(out)


def main():
    out_dir, count, specs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    sources = [Source(s) for s in specs]
    rng = random.Random(16)
    services = max(4, count // 250)
    for n in range(count):
        svc = f"svc-{n % services:03d}"
        # a service runs one program: its source is fixed by its number
        src_index = (n % services) % len(sources)
        src = sources[src_index]
        day = f"202611{1 + (n // services) % 28:02d}"
        host = f"host-{(n // (services * 28)) % 100:02d}"
        data = src.write(svc, rng)
        folder = os.path.join(out_dir, svc, day)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{host}-{n:05d}.pb")
        if src_index == 0 and (n // services) % 3 == 0:
            data, path = gzip.compress(data, 6), path + ".gz"
        with open(path, "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()

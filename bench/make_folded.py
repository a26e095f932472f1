#!/usr/bin/env python3
"""Writes a large folded-stack file resampled from the real stacks of ../shared/corpus.

Stacks come from the corpus's own recordings: the perf script dumps (JVM service, Rust and C
programs) collapsed here the way inferno/FlameGraph collapse them (leaf last, `+0x..` offsets
dropped), the py-spy raw output and the seed's async-profiler allocation stacks. Lines are
drawn at random, weighted by each stack's real count, with counts 1..1000, until the file
reaches the requested size.

usage: make_folded.py CORPUS_DIR OUT_FILE SIZE_MB
"""
import os
import random
import re
import sys

OFF = re.compile(r"\+0x[0-9a-fA-F]+$")
JAVA = re.compile(r"^(\S+) ([^\s(]+)\(")


def frame_name(sym, dso):
    """The symbol as inferno-collapse-perf writes it, JIT signatures reduced to the method
    (as the oracle and whose normalise perf-map names)."""
    sym = OFF.sub("", sym)
    if os.path.basename(dso).startswith("perf-"):
        m = JAVA.match(sym)
        if m:
            sym = m.group(2)
    return sym.replace(";", ":")


def collapse_perf_script(path):
    stacks = {}
    frames = []
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith(("\t", " ")):
                s = line.strip()
                if not s:
                    continue
                _, _, rest = s.partition(" ")
                i = rest.rfind(" (")
                sym, dso = (rest[:i], rest[i + 2:-1]) if i >= 0 else (rest, "")
                frames.append(frame_name(sym, dso))
            elif frames or not line.strip():
                if frames:
                    key = ";".join(reversed(frames))
                    stacks[key] = stacks.get(key, 0) + 1
                frames = []
    if frames:
        key = ";".join(reversed(frames))
        stacks[key] = stacks.get(key, 0) + 1
    return stacks


def read_folded(path):
    stacks = {}
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            stack, _, count = line.rstrip("\n").rpartition(" ")
            stacks[stack] = stacks.get(stack, 0) + int(count)
    return stacks


def main():
    corpus, out, size_mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sources = {}
    for rel in ("jvm-shop/jvm-shop.perf-script.txt", "rust-native/perf-fp.perf-script.txt",
                "c-malloc/churn.perf-script.txt"):
        sources.update(collapse_perf_script(os.path.join(corpus, rel)))
    for rel in ("py-app/app.folded", "seed-ktor-alloc/ktor-typeinfo-stacks.txt"):
        sources.update(read_folded(os.path.join(corpus, rel)))
    stacks = list(sources)
    weights = [sources[s] for s in stacks]
    rng = random.Random(42)
    target = size_mb * 1024 * 1024
    written = 0
    with open(out, "w") as f:
        while written < target:
            chunk = []
            for stack in rng.choices(stacks, weights, k=20000):
                chunk.append("%s %d\n" % (stack, rng.randint(1, 1000)))
            text = "".join(chunk)
            f.write(text)
            written += len(text)
    print("%s: %d distinct stacks, %.0f MB" % (out, len(stacks), written / 1e6))


if __name__ == "__main__":
    main()

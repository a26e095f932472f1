"""Steady Python workload for bench/calibrate.sh (issue 54, item 7): the program's own code
(module `pyload`, user) builds and checks records; textlib (an owner of its own by
bench/calib/py/rules.toml) tokenizes and encodes them. Runs for SECONDS (default 5).

    python3 pyload.py SECONDS
"""
import random
import sys
import time

import textlib

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]


def make_lines(rng, n):
    lines = []
    for i in range(n):
        words = [rng.choice(WORDS) for _ in range(8)]
        lines.append(f"{i:06d} " + " ".join(words) + f" {rng.randrange(10**6)}")
    return lines


def checksum(lines):
    h = 0
    for line in lines:
        for ch in line:
            h = (h * 31 + ord(ch)) & 0xFFFFFFFF
    return h


def run(seconds):
    rng = random.Random(11)
    deadline = time.time() + seconds
    rounds = 0
    while time.time() < deadline:
        lines = make_lines(rng, 400)
        h = checksum(lines[::4])
        counts = textlib.word_counts(lines)
        blob = textlib.to_json({"h": h, "counts": counts, "lines": lines[:100]})
        rounds += 1 if blob else 0
    return rounds


if __name__ == "__main__":
    print("rounds", run(float(sys.argv[1]) if len(sys.argv) > 1 else 5.0))

"""Writes N distinct folded stacks `main;run;fn_I COUNT` (two shared frames, one distinct
frame a line; COUNT = I % 7 + 1): the distinct-heavy input of bench/memory.sh and
bench/speed.sh.

    python3 bench/make_distinct.py OUT N
"""
import sys

path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as out:
    for i in range(n):
        out.write(f"main;run;fn_{i} {i % 7 + 1}\n")

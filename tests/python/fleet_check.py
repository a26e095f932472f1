#!/usr/bin/env python3
"""Fleet roll-ups checked against `whose report --merge` (issue 16): the DuckDB recipe of docs/fleet.md
over `--each --format parquet` rows, and the Spark job (examples/spark/owner_rollup.py) in
local mode, must both give, per service, exactly the integers of `--merge` over that
service's files.

    fleet_check.py --whose BIN [--dir DIR] [--count N] [--spark] [--duckdb]
                   [--source PROFILE,RENAME...]...

Without --dir, a fleet of --count profiles is made (bench/make_fleet.py) from the sources
(default: the Go CPU profile in fixtures/ and the JVM service's perf script in fixtures/ turned
into pprof by `whose convert`). Exit 0 when every check agrees, 1 otherwise.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LABELS = r"(?P<service>svc-[0-9]+)/(?P<date>[0-9]{8})/"
# the rules every run of a comparison shares: presets named and the services' own code
# claimed, so that one file alone and a service's files merged are classified alike
PINNED = [
    "--preset", "go", "--preset", "jvm", "--preset", "native", "--preset", "allocators",
    "--preset", "kernel",
    "--user", "main.", "--user", "example.com/", "--user", "com.acme.",
]


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def make_fleet(whose, out, count, sources):
    if not sources:
        jvm = os.path.join(out, "jvm.pb")
        run([whose, "convert", "--to", "pprof", "--jit-map-dir", os.path.join(ROOT, "fixtures/perf"),
             "-o", jvm, os.path.join(ROOT, "fixtures/perf/jvm-shop.perf.perf-script.txt.gz")])
        sources = [
            os.path.join(ROOT, "fixtures/pprof/cpu.pb.gz") + ",whose/gosvc:example.com/{svc}",
            jvm + ",shop.:com.acme.{svc}.",
        ]
    fleet = os.path.join(out, "fleet")
    run([sys.executable, os.path.join(ROOT, "bench/make_fleet.py"), fleet, str(count)] + sources)
    return fleet


def profiles(fleet):
    found = []
    for dirpath, _, files in os.walk(fleet):
        found += [os.path.join(dirpath, f) for f in files]
    return sorted(found)


def merged(whose, paths):
    """{(service, metric, unit): {"total": int, "owners": {(owner, view): int}}} from one
    `whose report --merge` per service (a service's files share one metric)."""
    by_service = {}
    for p in paths:
        by_service.setdefault(re.search(LABELS, p).group("service"), []).append(p)
    result = {}
    for service, files in sorted(by_service.items()):
        doc = json.loads(run([whose, "report", "--merge", "--format", "json"] + PINNED + files).stdout)
        inp = doc["inputs"][0]
        owners = {}
        for o in inp["owners"]:
            for view in ("self", "owner", "anywhere"):
                owners[(o["name"], view)] = o[view]
        if inp.get("stackless", 0):
            for view in ("self", "owner", "anywhere"):
                owners[("(no stack)", view)] = inp["stackless"]
        result[(service, inp["metric"]["name"], inp["metric"]["unit"])] = {
            "total": inp["total"], "owners": owners}
    return result


def duckdb_sql():
    """The documented DuckDB recipe (docs/fleet.md): the ```sql block after `<!-- fleet-duckdb -->`."""
    text = open(os.path.join(ROOT, "docs", "fleet.md")).read()
    block = text.split("<!-- fleet-duckdb -->", 1)[1]
    return block.split("```sql", 1)[1].split("```", 1)[0]


def check_duckdb(rows_glob, want):
    import duckdb

    sql = duckdb_sql().replace("rows/*.parquet", rows_glob)
    con = duckdb.connect()
    got = {}
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description]
    for row in cursor.fetchall():
        r = dict(zip(names, row))
        g = got.setdefault((r["service"], r["metric"], r["unit"]), {"total": int(r["total"]), "owners": {}})
        g["owners"][(r["owner"], "owner")] = int(r["weight"])
    # the recipe shows the owner view
    want_owner = {
        k: {"total": v["total"], "owners": {ov: w for ov, w in v["owners"].items() if ov[1] == "owner" and w > 0}}
        for k, v in want.items()
    }
    for g in got.values():
        g["owners"] = {ov: w for ov, w in g["owners"].items() if w > 0}
    return compare("duckdb", got, want_owner)


def check_spark(whose, paths, out, want):
    listing = os.path.join(out, "paths.txt")
    with open(listing, "w") as f:
        f.write("\n".join(paths) + "\n")
    result = os.path.join(out, "spark.json")
    cmd = [
        sys.executable, os.path.join(ROOT, "examples/spark/owner_rollup.py"),
        "--whose", os.path.abspath(whose), "--paths", listing,
        "--label-from-path", LABELS, "--group", "service", "--out", result, "--",
    ] + PINNED
    env = dict(os.environ, PYSPARK_SUBMIT_ARGS="--master local[2] pyspark-shell")
    started = time.monotonic()
    job = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if job.returncode != 0:
        print(f"spark: the job failed ({job.returncode}):\n{job.stderr[-3000:]}", file=sys.stderr)
        return False
    seconds = time.monotonic() - started
    doc = json.load(open(result))
    got = {}
    for g in doc["groups"]:
        got[(g["group"][0], g["metric"], g["unit"])] = {
            "total": g["total"],
            "owners": {(o["owner"], o["view"]): o["weight"] for o in g["owners"]},
        }
    ok = compare("spark", got, want) and not doc["errors"]
    print(f"spark: {len(paths)} profiles in {seconds:.1f} s (local[2], start-up included)")
    return ok


def compare(what, got, want):
    if got == want:
        groups = len(want)
        owners = sum(len(v["owners"]) for v in want.values())
        print(f"{what}: equal to --merge: {groups} services, {owners} (owner, view) sums")
        return True
    for k in sorted(set(got) | set(want), key=str):
        if got.get(k) != want.get(k):
            print(f"{what}: {k}: got {got.get(k)}\n  --merge {want.get(k)}", file=sys.stderr)
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--whose", required=True)
    ap.add_argument("--dir")
    ap.add_argument("--count", type=int, default=24)
    ap.add_argument("--source", action="append", default=[])
    ap.add_argument("--spark", action="store_true")
    ap.add_argument("--duckdb", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        fleet = args.dir or make_fleet(args.whose, tmp, args.count, args.source)
        paths = profiles(fleet)
        want = merged(args.whose, paths)
        ok = True
        if args.duckdb:
            rows = os.path.join(tmp, "rows")
            os.makedirs(rows)
            run([args.whose, "report", "--each", fleet, "--format", "parquet", "-o",
                 os.path.join(rows, "part-0.parquet"), "--label-from-path", LABELS] + PINNED)
            ok &= check_duckdb(os.path.join(rows, "*.parquet"), want)
        if args.spark:
            ok &= check_spark(args.whose, paths, tmp, want)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

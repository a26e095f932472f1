#!/usr/bin/env python3
"""Owner roll-up of a fleet's profiles on Spark (issue 16): whose runs on the executors, Spark
sums its rows.

The profile paths (a file of paths, one a line, readable by every executor: a shared file
system, or object storage mounted the same way everywhere) are spread over PARTITIONS
partitions; each partition pipes its paths into one `whose report --each @- --format ndjson`
(RDD.pipe), which reads them in parallel on the executor's cores and writes one JSON row per
(input, owner, view). The job sums the exact integer weights per (labels, metric, owner, view)
in Python integers, so nothing is rounded however large the fleet, and prints (or writes with
--out, as JSON) the roll-up with each owner's share of its group's total.

Local mode (what bench/fleet.sh and the test run):

    spark-submit --master 'local[2]' examples/spark/owner_rollup.py \\
        --whose target/release/whose --paths profiles.txt \\
        --label-from-path '(?P<service>svc-[^/]+)/(?P<date>\\d{8})/' --group service

On a cluster the whose binary must be on every executor; ship it with the job
(`spark-submit --files target/release/whose ...` and `--whose whose`: the job then finds it
with SparkFiles), bake it into the executors' image, or give a path on a shared file system.
whose is one static-enough Linux binary with no runtime dependency but glibc.

Bad profiles do not stop the job: whose writes an error row for each, which the job counts
and lists (and whose exits 2, which RDD.pipe does not treat as a failure).
"""

import argparse
import json
import os
import shlex
import sys

from pyspark import SparkFiles
from pyspark.sql import SparkSession


def whose_command(args):
    """The command each partition runs: its paths arrive on standard input."""
    binary = args.whose
    if os.path.sep not in binary:
        shipped = SparkFiles.get(binary)
        if os.path.exists(shipped):
            binary = shipped
    cmd = [binary, "report", "--each", "@-", "--format", "ndjson"]
    if args.label_from_path:
        cmd += ["--label-from-path", args.label_from_path]
    for label in args.label or []:
        cmd += ["--label", label]
    return cmd + args.whose_args


def rollup(spark, args):
    """{(group values, metric, unit): {"total": int, "owners": {(owner, view): int}}} and the
    error rows."""
    paths = [
        line.strip()
        for line in open(args.paths)
        if line.strip() and not line.startswith("#")
    ]
    sc = spark.sparkContext
    partitions = args.partitions or max(1, sc.defaultParallelism)
    rows = (
        sc.parallelize(paths, partitions)
        .pipe(shlex.join(whose_command(args)))
        .map(json.loads)
        .cache()
    )
    group = args.group or []

    def key(row):
        return tuple(row.get(g) for g in group), row["metric"], row["unit"]

    good = rows.filter(lambda r: r["error"] is None)
    weights = (
        good.filter(lambda r: r["owner"] is not None)
        .map(lambda r: ((key(r), r["owner"], r["view"]), r["weight"]))
        .reduceByKey(lambda a, b: a + b)
        .collect()
    )
    # an input's total is on each of its rows: counted once per path
    totals = (
        good.map(lambda r: (r["path"], (key(r), r["total"])))
        .reduceByKey(lambda a, b: a)
        .map(lambda kv: kv[1])
        .reduceByKey(lambda a, b: a + b)
        .collect()
    )
    errors = rows.filter(lambda r: r["error"] is not None).map(
        lambda r: (r["path"], r["error"])
    ).collect()
    inputs = good.map(lambda r: r["path"]).distinct().count()
    result = {}
    for k, total in totals:
        result[k] = {"total": total, "owners": {}}
    for (k, owner, view), weight in weights:
        result[k]["owners"][(owner, view)] = weight
    missing = len(paths) - inputs - len(errors)
    return result, errors, missing


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--whose", default="whose", help="the whose binary (default: shipped with --files, or on PATH)")
    parser.add_argument("--paths", required=True, help="a file of profile paths, one a line")
    parser.add_argument("--label-from-path", help="whose --label-from-path REGEX")
    parser.add_argument("--label", action="append", help="whose --label KEY=VALUE")
    parser.add_argument("--group", action="append", help="a label to group by (repeatable)")
    parser.add_argument("--view", default="owner", help="the view to print (self, owner, anywhere)")
    parser.add_argument("--partitions", type=int, help="default: Spark's default parallelism")
    parser.add_argument("--out", help="write the whole roll-up as JSON here")
    parser.add_argument("whose_args", nargs="*", help="more whose options, after --")
    args = parser.parse_args()

    spark = SparkSession.builder.appName("whose owner roll-up").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    result, errors, missing = rollup(spark, args)
    spark.stop()

    for (group, metric, unit), g in sorted(result.items(), key=lambda kv: str(kv[0])):
        print(f"{' '.join(str(v) for v in group)} {metric} ({unit}): total {g['total']}")
        owners = sorted(
            ((w, o) for (o, v), w in g["owners"].items() if v == args.view), reverse=True
        )
        for weight, owner in owners:
            share = 100 * weight / g["total"] if g["total"] else 0.0
            print(f"  {owner:<24} {share:6.1f}%  {weight}")
    for path, reason in sorted(errors):
        print(f"error: {reason}", file=sys.stderr)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(
                {
                    "groups": [
                        {
                            "group": list(group),
                            "metric": metric,
                            "unit": unit,
                            "total": g["total"],
                            "owners": [
                                {"owner": o, "view": v, "weight": w}
                                for (o, v), w in sorted(g["owners"].items())
                            ],
                        }
                        for (group, metric, unit), g in sorted(result.items(), key=lambda kv: str(kv[0]))
                    ],
                    "errors": [{"path": p, "error": e} for p, e in sorted(errors)],
                },
                f,
                indent=1,
            )
    if missing:
        print(f"error: {missing} inputs have neither rows nor an error row", file=sys.stderr)
        return 2
    return 2 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

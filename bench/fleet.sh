#!/usr/bin/env bash
# Benchmark (issue 16): a fleet of real-shaped profiles into rows, three ways, in one run:
#   --each   one `whose report --each` process (Parquet rows)
#   per-file one `whose report FILE --format ndjson` process per profile, two at a time
#   spark    examples/spark/owner_rollup.py in Spark's local mode (local[2]), start-up included
# on 1,000 and 10,000 profiles made by bench/make_fleet.py from the corpus's Go CPU profile
# (go-svc) and JVM service (jvm-shop, its perf script turned into pprof by `whose convert`):
# resampled, renamed per service, dated per day, 20-200 KB each, written under $FLEET_DIR
# (default /tmp/whose-fleet, removed at the end unless KEEP=1). Prints wall time, profiles per
# second, CPU time (user + system: what a busy shared machine does not distort) and peak RSS
# (/usr/bin/time), and checks that the Spark roll-up and the README's DuckDB
# query equal `whose report --merge` of each service's files (tests/python/fleet_check.py).
# Installs pyspark and duckdb with pip when missing (Spark needs Java 17).
#
#   bash bench/fleet.sh
#   COUNTS="1000" SPARK_COUNTS="1000" bash bench/fleet.sh
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${CORPUS:-$(cd ../shared/corpus 2> /dev/null && pwd || { cd ../../shared/corpus && pwd; })}
dir=${FLEET_DIR:-/tmp/whose-fleet}
counts=${COUNTS:-1000 10000}
spark_counts=${SPARK_COUNTS:-1000 10000}
python3 -c 'import pyspark, duckdb' 2> /dev/null || python3 -m pip install -q pyspark duckdb
cargo build --release --quiet
whose=$PWD/target/release/whose
export NO_COLOR=1
mkdir -p "$dir"
# the same rules in every run, so that each file alone and a service's files merged are
# classified alike (see README "Fleet rows")
pinned=(--preset go --preset jvm --preset native --preset allocators --preset kernel
        --user main. --user example.com/ --user com.acme.)
labels='(?P<service>svc-[0-9]+)/(?P<date>[0-9]{8})/'

"$whose" convert --to pprof --jit-map-dir "$corpus/jvm-shop" -o "$dir/jvm.pb" \
  "$corpus/jvm-shop/jvm-shop.perf-script.txt"
sources=("$corpus/go-svc/cpu.pb.gz,whose/gosvc:example.com/{svc}" "$dir/jvm.pb,shop.:com.acme.{svc}.")

timed() { # name command...: wall time, peak RSS and CPU time (user + system) of one run
  local name=$1; shift
  /usr/bin/time -f "%e %M %U %S" -o "$dir/time.$name" "$@" > "$dir/out.$name" 2> "$dir/err.$name" || {
    echo "$name failed:" >&2; tail -5 "$dir/err.$name" >&2; return 1; }
  tail -1 "$dir/time.$name"
}

report() { # name count "seconds kB user system"
  awk -v n="$1" -v c="$2" -v t="$3" 'BEGIN { split(t, a, " "); cpu = a[3] + a[4];
    printf "  %-9s %6d profiles %8.2f s %6.0f profiles/s   CPU %7.2f s %5.0f profiles/CPU-s   peak RSS %6.1f MB\n",
      n, c, a[1], c / a[1], cpu, c / cpu, a[2] / 1024 }'
}

for n in $counts; do
  fleet=$dir/fleet-$n
  [ -d "$fleet" ] || python3 bench/make_fleet.py "$fleet" "$n" "${sources[@]}"
  find "$fleet" -type f | sort > "$dir/paths-$n.txt"
  size=$(du -sm "$fleet" | cut -f1)
  echo "fleet of $n profiles, $size MB ($(find "$fleet" -type f -size -20k | wc -l) under 20 KB, $(find "$fleet" -type f -size +200k | wc -l) over 200 KB):"
  cat "$fleet"/*/*/* > /dev/null # the same page-cache state for every run
  t=$(timed each-$n "$whose" report --each "$fleet" --format parquet -o "$dir/rows-$n.parquet" \
        --label-from-path "$labels" "${pinned[@]}")
  report "--each" "$n" "$t"
  each=$t
  t=$(timed perfile-$n xargs -P 2 -I{} "$whose" report --format ndjson "${pinned[@]}" {} < "$dir/paths-$n.txt")
  report "per-file" "$n" "$t"
  if [[ " $spark_counts " == *" $n "* ]]; then
    each=${each%% *}
    python3 tests/python/fleet_check.py --whose "$whose" --dir "$fleet" --spark --duckdb \
      > "$dir/out.spark-$n"
    sed 's/^/    /' "$dir/out.spark-$n"
    awk -v c="$n" -v each="$each" '/^spark: [0-9]+ profiles in/ { printf "  %-9s %6d profiles %8.2f s %8.0f profiles/s   overhead over --each %.2f s\n", "spark", c, $5, c / $5, $5 - each }' "$dir/out.spark-$n"
  fi
done
[ -n "${KEEP:-}" ] || rm -rf "$dir"

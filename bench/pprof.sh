#!/usr/bin/env bash
# Benchmark: `whose report` against `go tool pprof -top` on the same large pprof inputs, in
# one run: wall time and peak RSS (/usr/bin/time) of each, best of $REPEATS runs.
#   /tmp/whose-bench/big-addr.pb.gz    perf script of a JVM service converted like
#                                      perf_to_profile (one location per address)
#   /tmp/whose-bench/big-go-cpu.pb.gz  a real Go CPU profile (1000 Hz, 60 s)
# Both are made by ../shared/corpus/make-bench.sh (run here when missing: it records for a
# few minutes and needs perf, a JDK, Go and inferno). Installs golang-go when `go` is missing.
#
#   bash bench/pprof.sh
#   REPEATS=5 bash bench/pprof.sh
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=$(cd ../shared/corpus && pwd)
dir=/tmp/whose-bench
repeats=${REPEATS:-3}
if ! command -v go > /dev/null; then
  apt-get update -qq && apt-get install -y -qq golang-go > /dev/null
fi
if [ ! -s "$dir/big-addr.pb.gz" ] || [ ! -s "$dir/big-go-cpu.pb.gz" ]; then
  bash "$corpus/make-bench.sh"
fi
cargo build --release --quiet
export HOME=${HOME:-/tmp} PPROF_TMPDIR=$dir/pprof-tmp NO_COLOR=1

measure() { # name input command...: best wall time and its peak RSS over $repeats runs
  local name=$1 input=$2; shift 2
  local best="" line
  for _ in $(seq "$repeats"); do
    cat "$input" > /dev/null # same page-cache state for every run
    /usr/bin/time -f "%e %M" -o "$dir/time.$name" "$@" > "$dir/out.$name" 2> "$dir/err.$name"
    line=$(tail -1 "$dir/time.$name")
    if [ -z "$best" ] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN{exit !(a < b)}'; then
      best=$line
    fi
  done
  echo "$best" > "$dir/best.$name"
  awk -v n="$name" '{printf "  %-14s %7.2f s   peak RSS %7.1f MB\n", n, $1, $2 / 1024}' "$dir/best.$name"
}

for input in "$dir/big-addr.pb.gz" "$dir/big-go-cpu.pb.gz"; do
  base=$(basename "$input" .pb.gz)
  echo "$input ($(stat -c %s "$input") bytes gzipped)"
  measure "whose-$base" "$input" ./target/release/whose report "$input" --format json
  measure "pprof-$base" "$input" go tool pprof -top "$input"
  read -r ws wk < "$dir/best.whose-$base"
  read -r ps pk < "$dir/best.pprof-$base"
  awk -v ws="$ws" -v ps="$ps" -v wk="$wk" -v pk="$pk" 'BEGIN {
    printf "  whose is %.1fx faster than go tool pprof -top and uses %.1fx less memory\n",
      ps / (ws > 0.005 ? ws : 0.005), pk / wk }'
done
go version

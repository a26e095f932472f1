#!/usr/bin/env bash
# Benchmark: whose on perf.data and on `perf script` text, against the usual pipelines, in one
# run on the same input (issue 4). Not a test: prints a table of wall time and peak RSS.
#
#   bench/perf.sh [BENCH_DIR]      (default /tmp/whose-bench)
#
# Inputs come from shared/corpus/make-bench.sh: big.perf.data (two JVMs, JIT maps
# perf-<pid>.map next to it and in /tmp) and big.perf-script.txt (its `perf script`).
# Compared:
#   1. whose report big.perf.data                      vs  perf script | inferno-collapse-perf
#   2. whose report big.perf.data                      vs  perf report --stdio --no-children --sort dso
#   3. whose report big.perf-script.txt (MB/s)         vs  inferno-collapse-perf big.perf-script.txt
# Targets (issue 4): 1. >= 25x faster, 2. >= 5x faster, peak RSS <= 150 MB, 3. >= inferno's MB/s.
set -euo pipefail
B="${1:-/tmp/whose-bench}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WHOSE="$ROOT/target/release/whose"
(cd "$ROOT" && cargo build --release --quiet) # always: a stale binary measures old code
command -v inferno-collapse-perf >/dev/null || cargo install inferno
for f in big.perf.data big.perf-script.txt; do
  [ -s "$B/$f" ] || { echo "missing $B/$f: run shared/corpus/make-bench.sh first" >&2; exit 2; }
done
# perf resolves JIT frames through /tmp/perf-<pid>.map; whose is told where they are
for m in "$B"/perf-*.map; do [ -e "/tmp/$(basename "$m")" ] || cp "$m" /tmp/; done

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# run NAME CMD...: median wall seconds of RUNS runs and the largest peak RSS (KiB) of CMD (a
# pipeline goes through bash -c; /usr/bin/time then reports its largest process, the one
# that matters). The machine is shared, so single runs vary; the median is what is compared.
RUNS=${RUNS:-3}
run() {
  local name=$1; shift
  : > "$OUT/$name.times"
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f "%e %M" -o "$OUT/$name.time" "$@" > "$OUT/$name.out" 2> "$OUT/$name.err" || {
      echo "$name failed:" >&2; tail -5 "$OUT/$name.err" >&2; exit 1; }
    tail -1 "$OUT/$name.time" >> "$OUT/$name.times"
  done
  local secs kib
  secs=$(sort -n "$OUT/$name.times" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  kib=$(sort -k2 -n "$OUT/$name.times" | tail -1 | cut -d' ' -f2)
  printf '%-34s %8.2f s %8.1f MB   (runs: %s)\n' "$name" "$secs" "$(echo "$kib / 1024" | bc -l)" \
    "$(cut -d' ' -f1 "$OUT/$name.times" | tr '\n' ' ')"
  eval "T_${name//-/_}=$secs"
}

echo "input: $B/big.perf.data ($(du -m "$B/big.perf.data" | cut -f1) MB), big.perf-script.txt ($(du -m "$B/big.perf-script.txt" | cut -f1) MB)"
echo "machine: $(nproc) CPUs, $(uname -r), perf $(perf --version | awk '{print $3}')"
echo
run whose-perf-data "$WHOSE" report "$B/big.perf.data" --jit-map-dir "$B" --rules "$ROOT/fixtures/rules/jvm-shop.toml"
run perf-script-inferno bash -c "perf script -i '$B/big.perf.data' 2>/dev/null | inferno-collapse-perf"
run perf-report-dso perf report -i "$B/big.perf.data" --stdio --no-children --sort dso
run whose-perf-script "$WHOSE" report "$B/big.perf-script.txt" --rules "$ROOT/fixtures/rules/jvm-shop.toml"
run inferno-collapse bash -c "inferno-collapse-perf '$B/big.perf-script.txt'"

MB=$(du -m "$B/big.perf-script.txt" | cut -f1)
echo
printf 'whose vs perf script | inferno-collapse-perf: %6.1fx faster (target >= 25x)\n' "$(echo "$T_perf_script_inferno / $T_whose_perf_data" | bc -l)"
printf 'whose vs perf report --sort dso:              %6.1fx faster (target >= 5x)\n' "$(echo "$T_perf_report_dso / $T_whose_perf_data" | bc -l)"
printf 'perf script text: whose %.0f MB/s, inferno-collapse-perf %.0f MB/s\n' \
  "$(echo "$MB / $T_whose_perf_script" | bc -l)" "$(echo "$MB / $T_inferno_collapse" | bc -l)"
echo
echo "whose on big.perf.data (head):"
head -14 "$OUT/whose-perf-data.out"
grep -h "warning" "$OUT/whose-perf-data.err" | cut -c1-300 || true

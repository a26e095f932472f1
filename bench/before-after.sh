#!/usr/bin/env bash
# Did a change make whose slower? Times an OLD whose binary and this checkout's release build
# on the same large inputs, in one run, interleaved (old, new, old, new, ...) so that the other
# work on a shared machine weighs on both alike; prints the median wall time and peak RSS of
# each and NEW/OLD. Not a test: the numbers go into the README with the change.
#
#   git worktree add /tmp/whose-old <commit> && (cd /tmp/whose-old && cargo build --release)
#   bash bench/before-after.sh /tmp/whose-old/target/release/whose [ROUNDS]   (default 5)
#
# Inputs, in BENCH_DIR (default /tmp/whose-bench), are those of the other scripts here:
# big.perf.data with its perf-PID.map files and big.perf-script.txt (shared/corpus/make-bench.sh),
# dwarf.perf.data (bench/dwarf.sh), resampled.folded (bench/folded.sh), big-addr.pb.gz (`whose convert big.perf.data --to pprof`).
# A missing input skips its rows with a note.
set -euo pipefail
OLD=${1:?usage: bench/before-after.sh OLD_WHOSE [ROUNDS]}
ROUNDS=${2:-5}
B=${BENCH_DIR:-/tmp/whose-bench}
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
(cd "$ROOT" && cargo build --release --quiet)
NEW="$ROOT/target/release/whose"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# name | input file | whose arguments (INPUT stands for the input's path). Outputs go to standard
# output, redirected: never `-o /dev/null`, which binaries before the -o fix of issue 17 replace
# with a regular file when run as root.
cases=(
  "report perf.data|big.perf.data|report INPUT --jit-map-dir $B"
  "explain perf.data|big.perf.data|explain INPUT --jit-map-dir $B"
  "flame perf.data|big.perf.data|flame INPUT --jit-map-dir $B"
  "convert perf.data to pprof|big.perf.data|convert INPUT --jit-map-dir $B --to pprof"
  "report perf.data dwarf|dwarf.perf.data|report INPUT"
  "report perf script text|big.perf-script.txt|report INPUT"
  "report folded|resampled.folded|report INPUT"
  "report pprof|big-addr.pb.gz|report INPUT"
)

# one timed run: prints "seconds kilobytes"
run() {
  local bin=$1 args=$2
  /usr/bin/time -f "%e %M" -o "$TMP/time" "$bin" $args > /dev/null 2> "$TMP/stderr" \
    || { echo "failed: $bin $args" >&2; cat "$TMP/stderr" >&2; exit 1; }
  cat "$TMP/time"
}

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

printf '%-28s %10s %10s %8s %10s %10s\n' case "old s" "new s" new/old "old MB" "new MB"
for c in "${cases[@]}"; do
  IFS='|' read -r name file args <<< "$c"
  if [ ! -s "$B/$file" ]; then
    printf '%-28s skipped: no %s\n' "$name" "$B/$file"
    continue
  fi
  args=${args//INPUT/$B/$file}
  cat "$B/$file" > /dev/null # the same page-cache state for both
  : > "$TMP/old" && : > "$TMP/new"
  for _ in $(seq "$ROUNDS"); do
    run "$OLD" "$args" >> "$TMP/old"
    run "$NEW" "$args" >> "$TMP/new"
  done
  old_s=$(cut -d' ' -f1 "$TMP/old" | median)
  new_s=$(cut -d' ' -f1 "$TMP/new" | median)
  old_mb=$(cut -d' ' -f2 "$TMP/old" | median | awk '{printf "%.0f", $1/1024}')
  new_mb=$(cut -d' ' -f2 "$TMP/new" | median | awk '{printf "%.0f", $1/1024}')
  ratio=$(awk -v o="$old_s" -v n="$new_s" 'BEGIN {printf "%.2f", (o > 0) ? n/o : 0}')
  printf '%-28s %10s %10s %8s %10s %10s\n' "$name" "$old_s" "$new_s" "$ratio" "$old_mb" "$new_mb"
done

#!/usr/bin/env bash
# Memory per distinct frame and stack, and time against stack depth (issue 17). Generates
#   - distinct-N.folded: N distinct stacks `main;run;fn_I COUNT` (two shared frames and one
#     distinct frame per line: N + 2 distinct frames), N = 100 k, 400 k, 1 M, 5 M (105 MB);
#   - deep-D.folded: one stack of D distinct frames (plus a one-frame line), D = 1 k .. 1 M;
# and runs, on each, in the same run: `whose report`, `inferno-flamegraph` (what users draw
# folded files with) and, when given, an older whose (OLD=/path/to/whose). Prints wall time,
# peak RSS and RSS per distinct stack (RSS / N, everything included: binary, rules, output).
# The 5 M file also runs under a 2 GB address-space limit (`prlimit --as`), as the issue did.
#
#   bash bench/memory.sh                 # OLD=/tmp/whose-base bash bench/memory.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT=${OUT:-/tmp/whose-memory-bench}
TOOLS=${TOOLS:-/tmp/whose-flame-tools}
OLD=${OLD:-}
mkdir -p "$OUT"
cd "$ROOT"
INFERNO="$(command -v inferno-flamegraph || echo "$TOOLS/bin/inferno-flamegraph")"
if [ ! -x "$INFERNO" ]; then
  cargo install inferno --version 0.12.8 --root "$TOOLS"
fi
cargo build --release --quiet
WHOSE="$ROOT/target/release/whose"

for n in 100000 400000 1000000 5000000; do
  f="$OUT/distinct-$n.folded"
  [ -s "$f" ] || python3 -c "
import sys
with open(sys.argv[1], 'w') as out:
    for i in range(int(sys.argv[2])):
        out.write(f'main;run;fn_{i} {i % 7 + 1}\n')
" "$f" "$n"
done
for d in 1000 10000 100000 1000000; do
  f="$OUT/deep-$d.folded"
  [ -s "$f" ] || python3 -c "
import sys
d = int(sys.argv[2])
with open(sys.argv[1], 'w') as out:
    out.write(';'.join(f'fn_{i}' for i in range(d)) + ' 3\nfn_0 1\n')
" "$f" "$d"
done

# one timed run: "seconds peak_kB exit", stdout to a file (never -o /dev/null: see
# bench/before-after.sh); exit is 128+N for a run killed by signal N (6: an aborted
# allocation), which time's own %x reports as 0
run() {
  local limit=$1; shift
  local pre=()
  [ "$limit" = - ] || pre=(prlimit "--as=$limit" --)
  local code=0
  /usr/bin/time -f "%e %M" -o "$OUT/time" "${pre[@]}" "$@" > "$OUT/stdout" 2> "$OUT/stderr" || code=$?
  echo "$(tail -n 1 "$OUT/time") $code"
}

row() { # label N limit command...
  local label=$1 n=$2 limit=$3; shift 3
  read -r secs kb code <<< "$(run "$limit" "$@")"
  awk -v l="$label" -v s="$secs" -v kb="$kb" -v n="$n" -v c="$code" 'BEGIN {
    printf "%-34s %8.2f s %8.0f MB %9.0f B %6s\n", l, s, kb / 1024, kb * 1024 / n, (c == 0) ? "ok" : "exit " c }'
}

echo "== distinct stacks (N + 2 distinct frames): time, peak RSS, RSS / N"
printf '%-34s %10s %11s %11s %6s\n' "tool, input" wall "peak RSS" "RSS / N" exit
for n in 100000 400000 1000000 5000000; do
  f="$OUT/distinct-$n.folded"
  row "whose report, $n" "$n" - "$WHOSE" report "$f"
  [ -z "$OLD" ] || row "old whose report, $n" "$n" - "$OLD" report "$f"
  row "inferno-flamegraph, $n" "$n" - "$INFERNO" "$f"
done
f="$OUT/distinct-5000000.folded"
row "whose report, 5 M, --as 2 GB" 5000000 $((2 << 30)) "$WHOSE" report "$f"
[ -z "$OLD" ] || row "old whose report, 5 M, --as 2 GB" 5000000 $((2 << 30)) "$OLD" report "$f"

echo
echo "== one stack D distinct frames deep: time, peak RSS, RSS / D"
printf '%-34s %10s %11s %11s %6s\n' "tool, depth" wall "peak RSS" "RSS / D" exit
for d in 1000 10000 100000 1000000; do
  f="$OUT/deep-$d.folded"
  row "whose report, $d" "$d" - "$WHOSE" report "$f"
  row "whose flame, $d" "$d" - "$WHOSE" flame "$f"
  [ -z "$OLD" ] || row "old whose report, $d" "$d" - "$OLD" report "$f"
  row "inferno-flamegraph, $d" "$d" - "$INFERNO" "$f"
done

#!/usr/bin/env bash
# Benchmark for DWARF unwinding (issue 7): `whose report` on a `perf record --call-graph
# dwarf` recording of at least 100k samples, against `perf script | inferno-collapse-perf`
# on the same file, in one run; and how much of whose's time is unwinding (WHOSE_TIMINGS=1
# prints stage times on stderr).
#
# The program is the corpus's malloc-heavy churn.c (shared/corpus/c-malloc), built -O2 without
# frame pointers, so every caller inside glibc needs the unwinder. Everything goes to
# /tmp/whose-bench/ (override with OUT=). ROUNDS= sets the program's length (default 16: about
# 12 s, 120k samples at 10 kHz); KEEP=1 reuses an existing recording. Each sample carries 4 KiB
# of stack, so the file is about 0.5 GB.
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${OUT:-/tmp/whose-bench}"
ROUNDS="${ROUNDS:-16}"
SRC="${CHURN_C:-$HERE/../shared/corpus/c-malloc/churn.c}"
[ -f "$SRC" ] || { echo "$SRC not found: run from a checkout with ../shared beside it, or set CHURN_C" >&2; exit 1; }
mkdir -p "$OUT"
DATA="$OUT/dwarf.perf.data"

command -v perf >/dev/null || { echo "perf not found" >&2; exit 1; }
command -v inferno-collapse-perf >/dev/null || cargo install inferno
(cd "$HERE" && cargo build --release -q)
WHOSE="$HERE/target/release/whose"

if [ "${KEEP:-0}" != 1 ] || [ ! -f "$DATA" ]; then
    gcc -O2 -g -o "$OUT/churn-dwarf" "$SRC"
    # a minimal environment keeps the copied stack top free of a large environment
    (cd "$OUT" && env -i PATH=/usr/bin:/bin HOME="$OUT" \
        perf record -q -m 16M -F 10000 --call-graph dwarf,4096 -o "$DATA" -- ./churn-dwarf "$ROUNDS" >/dev/null)
fi
ls -la "$DATA"


# best of 5 runs each: the machine is shared, the minimum is the least disturbed run
best() { sort -n | head -1; }
run_whose() {
    local start end
    start=$(date +%s.%N)
    WHOSE_TIMINGS=1 "$WHOSE" report "$DATA" --binary-path "$OUT" --preset native \
        >"$OUT/whose-dwarf.txt" 2>"$OUT/whose-dwarf.err"
    end=$(date +%s.%N)
    echo "$end - $start" | bc -l
}
run_perf() {
    local start end
    start=$(date +%s.%N)
    perf script -i "$DATA" 2>/dev/null | inferno-collapse-perf >"$OUT/inferno-dwarf.folded"
    end=$(date +%s.%N)
    echo "$end - $start" | bc -l
}
# one untimed run each first: page cache, binaries and CPU caches warm for both tools
run_whose >/dev/null
run_perf >/dev/null
echo "== whose report (release, WHOSE_TIMINGS=1), best of 5"
whose_s=$(for i in 1 2 3 4 5; do run_whose; done | best)
cat "$OUT/whose-dwarf.err"
sed -n 1,8p "$OUT/whose-dwarf.txt"
unwind_s=$(sed -n 's/.*timings: unwinding \([0-9.]*\) s.*/\1/p' "$OUT/whose-dwarf.err")
symb_s=$(sed -n 's/.*timings: symbolisation \([0-9.]*\) s.*/\1/p' "$OUT/whose-dwarf.err")
rss=$(/usr/bin/time -f "%M" "$WHOSE" report "$DATA" --binary-path "$OUT" --preset native 2>&1 >/dev/null | tail -1)
samples=$(sed -n 's/^  \([0-9]*\) samples,.*/\1/p' "$OUT/whose-dwarf.txt")

echo "== perf script | inferno-collapse-perf, best of 5"
perf_s=$(for i in 1 2 3 4 5; do run_perf; done | best)

printf '\n%s samples, %s MB\n' "$samples" "$(( $(stat -c %s "$DATA") / 1000000 ))"
printf 'whose report:                      %8.2f s (peak RSS %s KB)\n' "$whose_s" "$rss"
printf '  unwinding (CPU, folding thread):  %8.3f s (%.1f%% of the wall time)\n' "$unwind_s" "$(echo "100 * $unwind_s / $whose_s" | bc -l)"
printf '  symbolisation:                   %8.3f s\n' "$symb_s"
printf 'perf script | inferno-collapse-perf: %6.2f s\n' "$perf_s"
printf 'speed-up:                          %8.1f x\n' "$(echo "$perf_s / $whose_s" | bc -l)"

#!/usr/bin/env bash
# Issue 24: where whose was behind, against the tool users would otherwise run, in one run on
# the same inputs, and the ratio the issue asks for:
#   1. 1 M distinct folded stacks (`main;run;fn_I N`, 21 MB): `whose report` and
#      `whose flame` against `inferno-flamegraph`; peak RSS per distinct stack
#      (targets: report no slower than inferno, flame within 1.5x of report's time and 2x its
#      memory, at most 120 B per distinct stack)
#   2. big.perf.data (../shared/corpus/make-bench.sh: two JVMs, frame pointers, 100 s):
#      `whose report` against `samply import --save-only --unstable-presymbolicate`
#      (target: 10x faster); skipped with a note when the recording is absent
#   3. 1,000 real-shaped pprof files (bench/make_fleet.py): `whose report --each` into Parquet
#      rows (target: 1,000 profiles/s, peak RSS flat in the number of files)
# Each timing is the best of $RUNS (default 3) wall-clock runs; RSS is that run's peak.
# OLD=/path/to/whose adds an older build's line under each of whose's, in the same run.
#
#   bash bench/speed.sh                  # RUNS=5 OLD=/tmp/whose-old bash bench/speed.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT=${OUT:-/tmp/whose-speed-bench}
RUNS=${RUNS:-3}
OLD=${OLD:-}
BIG=${BIG:-/tmp/whose-bench}
corpus=${CORPUS:-$(cd "$ROOT/../shared/corpus" 2> /dev/null && pwd || true)}
mkdir -p "$OUT"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH" NO_COLOR=1
command -v inferno-flamegraph > /dev/null || cargo install inferno --version 0.12.8
command -v samply > /dev/null || cargo install samply --version 0.13.1
cargo build --release --quiet
WHOSE="$ROOT/target/release/whose"

# best of $RUNS: "seconds peak_kB" of the fastest run; stdout to a file, as users write it
best() {
  local name=$1; shift
  local best_s="" best_kb=""
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f "%e %M" -o "$OUT/time.$name" "$@" > "$OUT/out.$name" 2> "$OUT/err.$name" || {
      echo "$name failed:" >&2; tail -3 "$OUT/err.$name" >&2; exit 1; }
    read -r s kb < "$OUT/time.$name"
    if [ -z "$best_s" ] || awk -v a="$s" -v b="$best_s" 'BEGIN { exit !(a < b) }'; then
      best_s=$s best_kb=$kb
    fi
  done
  echo "$best_s $best_kb"
}
line() { # label "seconds kB" [N]
  awk -v l="$1" -v t="$2" -v n="${3:-0}" 'BEGIN { split(t, a, " ");
    printf "  %-44s %7.2f s %8.1f MB", l, a[1], a[2] / 1024;
    if (n > 0) printf " %7.0f B per distinct stack", a[2] * 1024 / n; printf "\n" }'
}
ratio() { # label a b target-words
  awk -v l="$1" -v a="$2" -v b="$3" -v t="$4" 'BEGIN { printf "  %-44s %7.2fx   (%s)\n", l, a / b, t }'
}

n=1000000
f="$OUT/distinct-$n.folded"
[ -s "$f" ] || python3 bench/make_distinct.py "$f" "$n"
echo "== 1. $n distinct folded stacks ($(($(stat -c %s "$f") / 1000000)) MB), best of $RUNS"
report=$(best report "$WHOSE" report "$f")
flame=$(best flame "$WHOSE" flame "$f" -o "$OUT/whose.svg")
inferno=$(best inferno inferno-flamegraph "$f")
line "whose report" "$report" "$n"
[ -z "$OLD" ] || line "old whose report" "$(best old-report "$OLD" report "$f")" "$n"
line "whose flame -o" "$flame" "$n"
[ -z "$OLD" ] || line "old whose flame -o" "$(best old-flame "$OLD" flame "$f" -o "$OUT/old.svg")" "$n"
line "inferno-flamegraph" "$inferno" "$n"
ratio "report time / inferno time" "${report%% *}" "${inferno%% *}" "target <= 1"
ratio "flame time / report time" "${flame%% *}" "${report%% *}" "target <= 1.5"
ratio "flame RSS / report RSS" "${flame##* }" "${report##* }" "target <= 2"

echo
data=$BIG/big.perf.data
if [ -s "$data" ]; then
  echo "== 2. big.perf.data ($(($(stat -c %s "$data") / 1000000)) MB), best of $RUNS"
  for m in "$BIG"/perf-*.map; do [ -e "/tmp/$(basename "$m")" ] || cp "$m" /tmp/; done
  whose_perf=$(best perf "$WHOSE" report "$data")
  samply=$(best samply samply import --save-only --unstable-presymbolicate -o "$OUT/samply.json.gz" "$data")
  line "whose report" "$whose_perf"
  [ -z "$OLD" ] || line "old whose report" "$(best old-perf "$OLD" report "$data")"
  line "samply import --save-only --unstable-presymbolicate" "$samply"
  ratio "samply time / whose time" "${samply%% *}" "${whose_perf%% *}" "target >= 10"
else
  echo "== 2. skipped: no $data (run ../shared/corpus/make-bench.sh to record it)"
fi

echo
if [ -n "$corpus" ] && [ -d "$corpus/go-svc" ]; then
  fleet=$OUT/fleet-1000
  if [ ! -d "$fleet" ]; then
    "$WHOSE" convert --to pprof --jit-map-dir "$corpus/jvm-shop" -o "$OUT/jvm.pb" \
      "$corpus/jvm-shop/jvm-shop.perf-script.txt"
    python3 bench/make_fleet.py "$fleet" 1000 "$corpus/go-svc/cpu.pb.gz,whose/gosvc:example.com/{svc}" \
      "$OUT/jvm.pb,shop.:com.acme.{svc}."
  fi
  echo "== 3. report --each over 1000 pprof files ($(du -sm "$fleet" | cut -f1) MB), best of $RUNS"
  cat "$fleet"/*/*/* > /dev/null
  each=$(best each "$WHOSE" report --each "$fleet" --format parquet -o "$OUT/rows.parquet" \
    --label-from-path '(?P<service>svc-[0-9]+)/(?P<date>[0-9]{8})/' \
    --preset go --preset jvm --preset native --preset allocators --preset kernel \
    --user main. --user example.com/ --user com.acme.)
  line "whose report --each" "$each"
  [ -z "$OLD" ] || line "old whose report --each" "$(best old-each "$OLD" report --each "$fleet" \
    --format parquet -o "$OUT/old-rows.parquet" \
    --label-from-path '(?P<service>svc-[0-9]+)/(?P<date>[0-9]{8})/' \
    --preset go --preset jvm --preset native --preset allocators --preset kernel \
    --user main. --user example.com/ --user com.acme.)"
  awk -v t="$each" 'BEGIN { split(t, a, " "); printf "  %-44s %7.0f profiles/s (target >= 1000)\n", "throughput", 1000 / a[1] }'
else
  echo "== 3. skipped: no ../shared/corpus beside the checkout (CORPUS=path to set it)"
fi

#!/usr/bin/env bash
# Is drawing the bottleneck? Times, on the same folded input,
#   A: whose flame INPUT                       (read, classify, fold by owner, inferno, legend)
#   B: whose report INPUT  +  inferno-flamegraph INPUT   (the report, then inferno's own CLI)
# and prints A / B in CPU time (the issue asks for at most 1.5). Inputs:
#   - /tmp/whose-bench/big.folded when present (shared/corpus/make-bench.sh): few distinct
#     stacks repeated over 260k very long lines, 1.2 GB;
#   - a generated file of many distinct stacks (written to $OUT/distinct.folded), where
#     inferno's sort and merge of distinct lines dominate.
# Usage: bench/flame-bench.sh [EXTRA.folded ...]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT=${OUT:-/tmp/whose-flame-bench}
TOOLS=${TOOLS:-/tmp/whose-flame-tools}
mkdir -p "$OUT"
cd "$ROOT"

INFERNO="$(command -v inferno-flamegraph || echo "$TOOLS/bin/inferno-flamegraph")"
if [ ! -x "$INFERNO" ]; then
  cargo install inferno --version 0.12.8 --root "$TOOLS"
fi
cargo build --release --quiet
WHOSE="$ROOT/target/release/whose"
RULES="$ROOT/fixtures/rules/flame-mini.toml"

if [ ! -s "$OUT/distinct.folded" ]; then
  # 200k distinct stacks, 8–40 frames, names of the flame-mini owners plus unclassified ones.
  python3 - "$OUT/distinct.folded" <<'EOF'
import random, sys
random.seed(7)
prefixes = ["app.Orders", "server.Handler", "json.Codec", "db.Query", "yaml.Doc", "gc.Mark",
            "lib.Other", "vendor.Thing"]
names = [f"{random.choice(prefixes)}{i}.m{j}" for i in range(400) for j in range(12)]
with open(sys.argv[1], "w") as out:
    seen = set()
    while len(seen) < 200_000:
        depth = random.randint(8, 40)
        stack = ["main"] + [random.choice(names) for _ in range(depth)]
        if random.random() < 0.2:
            stack.append("malloc")
        if random.random() < 0.1:
            stack.append("copy_[k]")
        line = ";".join(stack)
        if line in seen:
            continue
        seen.add(line)
        out.write(f"{line} {random.randint(1, 1000)}\n")
EOF
fi

inputs=("$OUT/distinct.folded")
[ -s /tmp/whose-bench/big.folded ] && inputs+=(/tmp/whose-bench/big.folded)
inputs+=("$@")

# Best of 3 runs of a shell command: "wall cpu" seconds (cpu = user + sys). The ratio is
# taken on CPU time: on a shared machine wall time mostly measures the neighbours.
best() {
  local best_wall="" best_cpu=""
  for _ in 1 2 3; do
    /usr/bin/time -o "$OUT/time" -f "%e %U %S" bash -c "$1" >/dev/null 2>&1
    read -r wall user sys < <(tail -1 "$OUT/time")
    local cpu
    cpu=$(awk "BEGIN{print $user + $sys}")
    if [ -z "$best_cpu" ] || awk "BEGIN{exit !($cpu < $best_cpu)}"; then best_cpu=$cpu; fi
    if [ -z "$best_wall" ] || awk "BEGIN{exit !($wall < $best_wall)}"; then best_wall=$wall; fi
  done
  echo "$best_wall $best_cpu"
}

echo "best of 3; seconds as wall/cpu; ratio = flame cpu / (report cpu + inferno cpu)"
printf '%-20s %12s %12s %12s %8s\n' input "flame" "report" "inferno" "ratio"
for in in "${inputs[@]}"; do
  rules=(--rules "$RULES" --no-presets)
  read -r aw ac < <(best "'$WHOSE' flame '$in' ${rules[*]} > '$OUT/whose.svg'")
  read -r rw rc < <(best "'$WHOSE' report '$in' ${rules[*]} > '$OUT/report.txt'")
  read -r iw ic < <(best "'$INFERNO' '$in' > '$OUT/inferno.svg'")
  printf '%-20s %12s %12s %12s %8.2f\n' "$(basename "$in")" "$aw/$ac" "$rw/$rc" "$iw/$ic" \
    "$(awk "BEGIN{print $ac / ($rc + $ic)}")"
done
/usr/bin/time -f "whose flame peak RSS %M KiB on $(basename "${inputs[0]}")" \
  "$WHOSE" flame "${inputs[0]}" --rules "$RULES" --no-presets > "$OUT/whose.svg"
/usr/bin/time -f "inferno-flamegraph peak RSS %M KiB on $(basename "${inputs[0]}")" \
  "$INFERNO" "${inputs[0]}" > "$OUT/inferno.svg"

# The issue's own measure: on /tmp/whose-bench/big.perf.data (shared/corpus/make-bench.sh),
# `whose flame` against `whose report` on the same recording plus inferno-flamegraph on the
# equivalent folded file (make-bench's big.folded, from perf script | inferno-collapse-perf).
B=/tmp/whose-bench
if [ -s "$B/big.perf.data" ] && [ -s "$B/big.folded" ]; then
  perf_opts="--jit-map-dir '$B' --preset jvm"
  read -r aw ac < <(best "'$WHOSE' flame '$B/big.perf.data' $perf_opts > '$OUT/big.svg'")
  read -r rw rc < <(best "'$WHOSE' report '$B/big.perf.data' $perf_opts > '$OUT/big.txt'")
  read -r iw ic < <(best "'$INFERNO' '$B/big.folded' > '$OUT/big-inferno.svg'")
  printf '%-20s %12s %12s %12s %8.2f   (wall ratio %.2f)\n' big.perf.data "$aw/$ac" "$rw/$rc" \
    "$iw/$ic" "$(awk "BEGIN{print $ac / ($rc + $ic)}")" "$(awk "BEGIN{print $aw / ($rw + $iw)}")"
fi

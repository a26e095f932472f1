#!/usr/bin/env bash
# Benchmark: `whose report` on a >= 1 GB folded file against the corpus oracle (a Python
# equivalent of the harness users write today), in the same run, on the same input.
# Prints wall time, MB/s and peak RSS of each. Needs ../shared beside the checkout.
#
#   bash bench/folded.sh            # 1100 MB input
#   SIZE_MB=200 bash bench/folded.sh
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=../shared/corpus
size_mb=${SIZE_MB:-1100}
dir=/tmp/whose-bench
input=$dir/resampled.folded # not big.folded: make-bench.sh writes that one
mkdir -p "$dir"
if [ ! -s "$input" ] || [ "$(stat -c %s "$input")" -lt $((size_mb * 1000000)) ]; then
  python3 bench/make_folded.py "$corpus" "$input" "$size_mb"
fi
cargo build --release --quiet
bytes=$(stat -c %s "$input")
# the oracle's rules, in both syntaxes, for the JVM stacks that dominate the input
rules_oracle=$corpus/rules/jvm-shop.rules
rules_toml=fixtures/rules/jvm-shop.toml

measure() { # name, command...
  local name=$1; shift
  cat "$input" > /dev/null # same page-cache state for both
  /usr/bin/time -f "%e %M" -o "$dir/time.$name" "$@" > "$dir/out.$name"
  read -r secs kb < "$dir/time.$name"
  python3 - "$name" "$secs" "$kb" "$bytes" <<'PY'
import sys
name, secs, kb, size = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
print(f"{name:<10} {secs:8.2f} s  {size / 1e6 / max(secs, 1e-9):8.1f} MB/s  peak RSS {kb / 1024:7.1f} MB")
PY
}

echo "input: $input ($((bytes / 1000000)) MB)"
measure whose ./target/release/whose report "$input" --rules "$rules_toml" --no-presets --format json
measure oracle python3 "$corpus/oracle.py" "$input" --rules "$rules_oracle" --format folded --json
w=$(cut -d' ' -f1 "$dir/time.whose"); o=$(cut -d' ' -f1 "$dir/time.oracle")
python3 -c "print(f'whose is {float($o) / max(float($w), 1e-9):.1f}x faster than the oracle')"
# the two must agree on the owner shares
python3 - "$dir/out.whose" "$dir/out.oracle" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))["inputs"][0]
o = json.load(open(sys.argv[2]))
worst = 0.0
for owner in w["owners"]:
    name = "other" if owner["name"] == "unclassified" else owner["name"]
    want = o["shares"].get(name, {}).get("owner", 0.0)
    worst = max(worst, abs(100.0 * owner["owner"] / w["total"] - want))
print(f"largest owner-share difference whose vs oracle: {worst:.6f} pp")
PY

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
  [ -s "$f" ] || python3 bench/make_distinct.py "$f" "$n"
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

# ---------------------------------------------------------------------------------- issue 23
# The bomb shapes of issue 23, each under a 2 GB address-space limit (exit 0 or 2, never an
# abort: "exit 134" in the last column is one): evented speedscope nested D deep, a pprof of
# 10 M samples over three stacks, a pprof of 100 M empty strings, the 5 M-stack file through
# every command, and a fleet folder holding it. WHOSE=path/to/whose runs another build.
WHOSE=${WHOSE_23:-$WHOSE}
AS=$((2 << 30))
for d in 10000 20000 40000; do
  f="$OUT/evented-$d.speedscope.json"
  [ -s "$f" ] || python3 - "$f" "$d" <<'PY'
import sys
path, d = sys.argv[1], int(sys.argv[2])
with open(path, "w") as out:
    out.write('{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[')
    out.write(",".join('{"name":"f%d"}' % i for i in range(d)))
    out.write(']},\n"profiles":[{"type":"evented","name":"t","unit":"none","startValue":0,')
    out.write('"endValue":%d,"events":[' % (2 * d - 1))
    ev = ['{"type":"O","frame":%d,"at":%d}' % (i, i) for i in range(d)]
    ev += ['{"type":"C","frame":%d,"at":%d}' % (i, d + k) for k, i in enumerate(reversed(range(d)))]
    out.write(",\n".join(ev) + "]}]}\n")
PY
done
python3 - "$OUT" <<'PY'
import gzip, os, sys
out = sys.argv[1]
def varint(n):
    b = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        b.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(b)
def field(num, payload):  # length-delimited
    return varint(num << 3 | 2) + varint(len(payload)) + payload
def uint(num, v):
    return varint(num << 3) + varint(v)
def head(strings, functions):
    p = field(1, uint(1, 1) + uint(2, 2))                   # sample_type samples/count
    for i in range(1, functions + 1):
        p += field(4, uint(1, i) + field(4, uint(1, i) + uint(2, 1)))  # location i -> func i
        p += field(5, uint(1, i) + uint(2, 2 + i))                     # function i, name 2+i
    return p + b"".join(field(6, s.encode()) for s in strings)
# 10 M samples over three stacks (sample i: depth i % 3 + 1, value i % 7 + 1)
f = os.path.join(out, "samples-10m.pb.gz")
if not os.path.exists(f):
    body = [head(["", "samples", "count", "main.a", "main.b", "main.c"], 3)]
    enc = [field(2, field(1, b"".join(varint(l) for l in range(1, i % 3 + 2))) + field(2, varint(i % 7 + 1)))
           for i in range(21)]
    body += [enc[i % 21] for i in range(10_000_000)]
    with gzip.open(f, "wb", 6) as g:
        g.write(b"".join(body))
# 100 M empty strings after one sample of main.main
f = os.path.join(out, "strings-100m.pb.gz")
if not os.path.exists(f):
    with gzip.open(f, "wb", 6) as g:
        g.write(head(["", "samples", "count", "main.main"], 1) + field(2, field(1, varint(1)) + field(2, varint(7))))
        block = b"\x32\x00" * (1 << 20)
        for _ in range(100_000_000 >> 20):
            g.write(block)
        g.write(b"\x32\x00" * (100_000_000 % (1 << 20)))
PY
mkdir -p "$OUT/fleet"
ln -sf "$OUT/distinct-5000000.folded" "$OUT/fleet/distinct-5m.folded"
cp "$ROOT/fixtures/folded/py-app.folded" "$OUT/fleet/py.folded"

echo
echo "== issue 23: under --as 2 GB: time, peak RSS, RSS / N, exit (0 or 2; never 134)"
printf '%-34s %10s %11s %11s %6s\n' "command, input" wall "peak RSS" "RSS / N" exit
for d in 10000 20000 40000; do
  row "report, evented $d deep" "$d" $AS "$WHOSE" report "$OUT/evented-$d.speedscope.json"
done
p="$OUT/samples-10m.pb.gz"
row "report, pprof 10 M samples" 10000000 $AS "$WHOSE" report "$p"
row "convert --to folded, 10 M samples" 10000000 $AS "$WHOSE" convert "$p" --to folded
row "convert --to pprof, 10 M samples" 10000000 $AS "$WHOSE" convert "$p" --to pprof -o "$OUT/out.pb.gz"
s="$OUT/strings-100m.pb.gz"
row "report, 100 M empty strings" 100000000 $AS "$WHOSE" report "$s"
row "convert --to pprof, 100 M strings" 100000000 $AS "$WHOSE" convert "$s" --to pprof -o "$OUT/out.pb.gz"
f="$OUT/distinct-5000000.folded"
row "report, 5 M distinct" 5000000 $AS "$WHOSE" report "$f"
row "flame, 5 M distinct" 5000000 $AS "$WHOSE" flame "$f" -o "$OUT/out.svg"
row "convert --to folded, 5 M distinct" 5000000 $AS "$WHOSE" convert "$f" --to folded
row "convert --to pprof, 5 M distinct" 5000000 $AS "$WHOSE" convert "$f" --to pprof -o "$OUT/out.pb.gz"
row "report --each, folder with 5 M" 5000000 $AS "$WHOSE" report --each "$OUT/fleet" --format ndjson -o "$OUT/rows.ndjson"

#!/usr/bin/env bash
# Reading a 100 MB JFR recording (issue 26): whose's release build against `jfr print --json`
# (the JDK's own reader, which prints every event) on the same file, in one run. Prints wall time
# and peak RSS of each. Not a test: the numbers go into docs/jfr.md.
#
#   bash bench/jfr.sh [MB]        (default 100; needs javac, java, jfr and GNU time)
#
# The recording: fixtures/src/jfr/JfrMix.java in `alloc` mode for 20 s with every allocation
# event on and the execution sampler at 1 ms, which gives a few MB of chunks; JFR recordings are
# sequences of self-contained chunks (what `jfr assemble` writes), so copies of those chunks
# are concatenated up to the size asked for.
set -euo pipefail
MB=${1:-100}
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
B=${BENCH_DIR:-/tmp/whose-bench}/jfr
mkdir -p "$B" && cd "$B"
(cd "$ROOT" && cargo build --release --quiet)
W="$ROOT/target/release/whose"
if [ ! -f one.jfr ]; then
    javac -d classes "$ROOT/fixtures/src/jfr/JfrMix.java"
    jfr configure --input profile jdk.ObjectAllocationInNewTLAB#enabled=true \
        jdk.ObjectAllocationOutsideTLAB#enabled=true jdk.ObjectAllocationSample#throttle=100000/s \
        jdk.ExecutionSample#period=1ms --output bench.jfc >/dev/null
    java -XX:StartFlightRecording:settings="$B/bench.jfc",filename=one.jfr \
        -cp classes demo.jfrmix.JfrMix alloc 20 >/dev/null
fi
rm -f big.jfr
while [ "$(stat -c %s big.jfr 2>/dev/null || echo 0)" -lt $((MB << 20)) ]; do
    cat one.jfr >> big.jfr
done
echo "recording: $(stat -c %s big.jfr) bytes, $(jfr summary big.jfr | awk '/Chunks:/ {print $2}') chunks"
t() { # LABEL CMD...
    /usr/bin/time -f "$1: %e s wall, %M KiB peak RSS" "${@:2}" >/dev/null
}
t "whose report --metric alloc-bytes" "$W" report big.jfr --metric alloc-bytes
t "whose report (cpu-samples)" "$W" report big.jfr
t "jfr print --json" jfr print --json big.jfr

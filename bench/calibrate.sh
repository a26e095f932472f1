#!/usr/bin/env bash
# Calibration bench for whose's intervals (issue 54, item 7). Not a test, and CI never runs it.
#
#   bench/calibrate.sh [DATA_DIR]        (default /tmp/whose-calib)
#
# Records three programs whose sources are in bench/calib/, one at a time:
#   jvm     the jvm-shop HTTP service (package shop) under a loopback load generator, perf -F 999
#           -g with frame pointers and a JIT map (perf-PID.map moved next to each recording)
#   native  calib_native.c (own code + snprintf/qsort/malloc in glibc + zlib), perf -F 499
#           --call-graph dwarf,4096
#   py      pyload.py + textlib.py under py-spy at 400 Hz, saved as raw and as speedscope
# For each: one long steady recording (LONG_SECS, cut into SEGMENTS equal consecutive segments:
# perf through whose's `--time P%/k` slices; py-spy, which has no timestamps, by attaching
# 2 x SEGMENTS times in a row to one running process, alternating raw and speedscope) and
# REPEATS fresh runs of SECS seconds each (py-spy: one raw and one speedscope run per repeat). Then
# bench/calibrate.py reports (a) the single-recording interval's coverage of the rest of the
# long recording and its width against the segments' spread, (b) the 5-repeat interval's
# coverage of the mean of all runs.
#
# Recordings stay in DATA_DIR and are reused: a program is recorded again only when its
# DATA_DIR/<program>/DONE is missing or RERECORD=1, so the analysis alone re-runs against a new
# binary (about 8 minutes on 2 busy cores with all 252 sets; SETS=50 or JOBS=2 for less).
# Recording takes about 14 minutes. Keep recordings under /tmp; never commit them.
#
# Environment:
#   WHOSE      the binary to calibrate (default target/release/whose; no build is run)
#   RERECORD=1 record again even when recordings exist
#   PROGRAMS   which programs (default "jvm native py")
#   REPEATS    fresh runs per program (default 10)      SECS       seconds per run (default 5)
#   LONG_SECS  the long recording (default 100)          SEGMENTS   segments of it (default 20;
#              the analysis takes the count recorded in meta.txt unless SEGMENTS is set)
#   WARMUP     JVM warm-up seconds under load before each run (default 10, as
#              shared/corpus/jvm-shop/record.sh); LONG_WARMUP before the long recording (default
#              30: C2 compilation must be over for the recording to be steady)
#   SETS       repeat sets of 5 for (b): all C(REPEATS,5) when at most this many, else this many
#              drawn at random with SEED (default SETS=252, SEED=54)
#   JOBS       whose processes at a time in the analysis (default 1: the machine is shared)
#   PORT       the JVM service's loopback port (default 18093)
# Needs perf (run as root, or kernel.perf_event_paranoid=-1), javac/java 17+, gcc with zlib
# headers, /usr/bin/python3, py-spy (pip install py-spy), curl.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
D="$(mkdir -p "${1:-/tmp/whose-calib}" && cd "${1:-/tmp/whose-calib}" && pwd)"
WHOSE="${WHOSE:-$ROOT/target/release/whose}"
PROGRAMS="${PROGRAMS:-jvm native py}"
REPEATS="${REPEATS:-10}"
SECS="${SECS:-5}"
LONG_SECS="${LONG_SECS:-100}"
SEGMENTS="${SEGMENTS:-20}"
WARMUP="${WARMUP:-10}"
LONG_WARMUP="${LONG_WARMUP:-30}"
PORT="${PORT:-18093}"
PYTHON="${PYTHON:-/usr/bin/python3}"
export WHOSE SETS="${SETS:-252}" SEED="${SEED:-54}"

[ -x "$WHOSE" ] || { echo "no whose binary at $WHOSE (set WHOSE=...)" >&2; exit 2; }

runs() { seq -f 'run%02g' 1 "$REPEATS"; }

# background processes of the recording under way, ended if a step fails
LIVE=()
cleanup() { local p; for p in "${LIVE[@]}"; do kill "$p" 2> /dev/null || true; done; }
trap cleanup EXIT

# meta DIR: what was recorded, when, where (read back by calibrate.py)
meta() {
    {
        echo "recorded $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "machine nproc $(nproc), $(uname -srm)"
        echo "loadavg before $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "repeats $REPEATS x ${SECS}s, long ${LONG_SECS}s in $SEGMENTS segments"
        [ "${2:-}" != jvm ] || echo "jvm warm-up ${WARMUP}s per run, ${LONG_WARMUP}s before the long one"
    } > "$1/meta.txt"
}

# ------------------------------------------------------------------------------------- jvm
# As shared/corpus/jvm-shop/record.sh: a fresh JVM per recording, warmed up under load so the
# hot paths are C2-compiled, then recorded while a second load generator runs.
jvm_one() { # NAME SECONDS WARMUP
    local d="$D/jvm" name=$1 secs=$2 warmup=$3 cls="$D/jvm/classes" spid lpid
    java -XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit \
         -Xmx256m -Dsun.net.httpserver.nodelay=true -cp "$cls" shop.ShopServer "$PORT" \
         > "$d/$name.server.log" 2>&1 &
    spid=$!
    LIVE=("$spid")
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.1; done
    java -cp "$cls" load.LoadGen "$PORT" 2 "$warmup" > /dev/null
    java -cp "$cls" load.LoadGen "$PORT" 2 $((secs + 4)) > "$d/$name.load.log" 2>&1 &
    lpid=$!
    LIVE=("$spid" "$lpid")
    sleep 2
    perf record -q -F 999 -g -p "$spid" -o "$d/$name.perf.data" -- sleep "$secs" 2> "$d/$name.perf.log"
    wait "$lpid"
    curl -s -o /dev/null "http://127.0.0.1:$PORT/quit" || true
    wait "$spid" || true
    LIVE=()
    mv "/tmp/perf-$spid.map" "$d/perf-$spid.map"   # --jit-map-dir $d
    echo "  jvm $name: pid $spid, $(cat "$d/$name.load.log")"
}

record_jvm() {
    local d="$D/jvm"
    rm -rf "$d" && mkdir -p "$d/classes" && meta "$d" jvm
    javac -d "$d/classes" "$HERE"/calib/jvm/shop/*.java "$HERE"/calib/jvm/load/*.java
    if curl -s -o /dev/null "http://127.0.0.1:$PORT/"; then
        echo "port $PORT is taken: set PORT=" >&2; exit 2
    fi
    jvm_one long "$LONG_SECS" "$LONG_WARMUP"
    for r in $(runs); do jvm_one "$r" "$SECS" "$WARMUP"; done
}

# ---------------------------------------------------------------------------------- native
native_one() { # NAME SECONDS
    # a minimal environment keeps the copied stack top free of a large environment
    (cd "$D/native" && env -i PATH=/usr/bin:/bin HOME="$D/native" \
        perf record -q -F 499 --call-graph dwarf,4096 -o "$1.perf.data" -- ./calib_native "$2" \
        > "$1.out" 2> "$1.perf.log")
    echo "  native $1: $(cat "$D/native/$1.out")"
}

record_native() {
    local d="$D/native"
    rm -rf "$d" && mkdir -p "$d" && meta "$d"
    gcc -O2 -g -o "$d/calib_native" "$HERE/calib/native/calib_native.c" -lz
    native_one long "$LONG_SECS"
    for r in $(runs); do native_one "$r" "$SECS"; done
}

# -------------------------------------------------------------------------------------- py
record_py() {
    local d="$D/py" pid k seg
    rm -rf "$d" && mkdir -p "$d/long" && meta "$d"
    cp "$HERE/calib/py/pyload.py" "$HERE/calib/py/textlib.py" "$d/"
    cd "$d"
    # long: one process, attached 2 x SEGMENTS times in a row, alternating raw and speedscope,
    # LONG_SECS/SEGMENTS seconds each (py-spy has no timestamps to slice one recording by)
    seg=$((LONG_SECS / SEGMENTS))
    "$PYTHON" pyload.py $((2 * LONG_SECS + 60)) > long/run.out &
    pid=$!
    LIVE=("$pid")
    sleep 1
    for k in $(seq -f '%02g' 1 "$SEGMENTS"); do
        py-spy record --pid "$pid" -r 400 -d "$seg" --format raw -o "long/seg$k.raw.txt" > /dev/null 2>> long/py-spy.log
        py-spy record --pid "$pid" -r 400 -d "$seg" --format speedscope -o "long/seg$k.speedscope.json" > /dev/null 2>> long/py-spy.log
    done
    kill "$pid"; wait "$pid" 2>/dev/null || true
    LIVE=()
    echo "  py long: $SEGMENTS x 2 segments of ${seg}s from pid $pid"
    # repeats: a fresh interpreter per recording, started by py-spy
    for r in $(runs); do
        py-spy record -r 400 -d "$SECS" --format raw -o "$r.raw.txt" -- "$PYTHON" pyload.py $((SECS + 1)) > /dev/null 2>> py-spy.log
        py-spy record -r 400 -d "$SECS" --format speedscope -o "$r.speedscope.json" -- "$PYTHON" pyload.py $((SECS + 1)) > /dev/null 2>> py-spy.log
    done
    echo "  py runs: $REPEATS x (raw, speedscope) of ${SECS}s"
    cd - > /dev/null
}

# ------------------------------------------------------------------------------------ main
for p in $PROGRAMS; do
    case $p in jvm|native|py) ;; *) echo "unknown program $p (jvm native py)" >&2; exit 2;; esac
    if [ "${RERECORD:-0}" = 1 ] || [ ! -f "$D/$p/DONE" ]; then
        echo "recording $p into $D/$p ..."
        t0=$(date +%s)
        "record_$p"
        echo "  $p recorded in $(( $(date +%s) - t0 )) s"
        echo "loadavg after $(cut -d' ' -f1-3 /proc/loadavg), took $(( $(date +%s) - t0 ))s" >> "$D/$p/meta.txt"
        touch "$D/$p/DONE"
    fi
done

trap - EXIT
exec python3 "$HERE/calibrate.py" "$D" $PROGRAMS

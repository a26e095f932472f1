#!/usr/bin/env bash
# Renders the README's picture of the HTML page with headless Chromium (Debian's package,
# installed here when missing):
#   docs/html-report.png   `whose report --format html` of the Kotlin/JVM recording
#                          fixtures/perf/kotlin-orders.perf-script.txt.gz: the warm-up shaded
#                          under the chart, the owner table, the flame graph by owner
# Run from anywhere: ./docs/html-screenshots.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
if ! command -v chromium >/dev/null; then
  apt-get update && apt-get install -y chromium
fi
cargo build --quiet
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
target/debug/whose report fixtures/perf/kotlin-orders.perf-script.txt.gz --format html \
  -o "$WORK/page.html"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --hide-scrollbars --user-data-dir="$WORK/profile" --window-size=1400,1000 \
  --virtual-time-budget=5000 --screenshot="$ROOT/docs/html-report.png" \
  "file://$WORK/page.html" 2>/dev/null
echo "wrote docs/html-report.png"

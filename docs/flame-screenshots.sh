#!/usr/bin/env bash
# Renders the README's pictures with headless Chromium (Debian's package, installed here when
# missing):
#   docs/flame-py-app.png      `whose flame` of the py-spy profile fixtures/folded/py-app.folded
#                              (frames under 0.2 % left out: the import machinery is 44 frames deep and 2 samples wide)
#   docs/flame-split-index.png the index.html of `whose flame --split` on fixtures/folded/flame-mini.folded
#   docs/flame-jvm-shop.png    `whose flame --color-by self` of the jvm-shop perf.data: four runtime
#                              owners (jvm, jdk, glibc, ld.so) in four shades of one hue
#   docs/report-table.png      `whose report` of the same recording in an 80-column terminal,
#                              in colour (the ANSI colours turned into HTML here)
# Run from anywhere: ./docs/flame-screenshots.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

if ! command -v chromium >/dev/null; then
  apt-get update && apt-get install -y chromium
fi

cargo build --quiet
WHOSE=target/debug/whose

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# Renders $1 (an SVG or HTML file) into the PNG $2 at width $3 and height $4.
shoot() {
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --hide-scrollbars --user-data-dir="$(mktemp -d -p "$WORK")" \
    --screenshot="$2" --window-size="$3,$4" "file://$1" 2>/dev/null
}

# The height inferno (plus the legend) gave the SVG, read from its root element.
svg_height() {
  grep -o '<svg version="1.1" width="[0-9]*" height="[0-9]*"' "$1" | grep -o 'height="[0-9]*"' | tr -dc 0-9
}

"$WHOSE" flame fixtures/folded/py-app.folded --rules fixtures/rules/py-app.toml --no-presets \
  --width 1200 --min-width 0.2 -o "$WORK/py-app.svg"
shoot "$WORK/py-app.svg" "$ROOT/docs/flame-py-app.png" 1200 "$(svg_height "$WORK/py-app.svg")"

"$WHOSE" flame fixtures/folded/flame-mini.folded --rules fixtures/rules/flame-mini.toml \
  --no-presets --split "$WORK/split"
shoot "$WORK/split/index.html" "$ROOT/docs/flame-split-index.png" 900 420

# jvm-shop's recording with only the fixtures' symbols (as tests/it/hermetic.rs runs it)
mkdir -p "$WORK/symfs"
JVM=(fixtures/perf/jvm-shop.perf.data --symfs "$WORK/symfs" --binary-path fixtures/perf/bin
  --jit-map-dir fixtures/perf --kallsyms fixtures/perf/jvm-shop.kallsyms)
"$WHOSE" flame "${JVM[@]}" --color-by self --width 1200 --min-width 0.3% -o "$WORK/jvm.svg" 2>/dev/null
shoot "$WORK/jvm.svg" "$ROOT/docs/flame-jvm-shop.png" 1200 "$(svg_height "$WORK/jvm.svg")"

# The table as an 80-column terminal shows it: 24-bit colours, bold titles
{
  printf '<!DOCTYPE html><html><head><meta charset="utf-8"><style>'
  printf 'body{margin:0;background:#1e1e1e}pre{margin:12px;color:#ddd;'
  printf 'font:13px/1.35 "DejaVu Sans Mono",monospace}</style></head><body><pre>'
  COLUMNS=80 COLORTERM=truecolor "$WHOSE" report "${JVM[@]}" --color always --top 3 2>/dev/null |
    perl -pe 's/&/&amp;/g; s/</&lt;/g; s/>/&gt;/g;
      s/\e\[38;2;(\d+);(\d+);(\d+)m/<span style="color:rgb($1,$2,$3)">/g;
      s/\e\[1m/<span style="font-weight:bold">/g; s/\e\[0m/<\/span>/g'
  printf '</pre></body></html>\n'
} > "$WORK/table.html"
shoot "$WORK/table.html" "$ROOT/docs/report-table.png" 680 900

ls -l docs/*.png

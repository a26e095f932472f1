#!/usr/bin/env bash
# Renders the README's flame graph pictures with headless Chromium (Debian's package,
# installed here when missing):
#   docs/flame-py-app.png      `whose flame` of the py-spy profile fixtures/folded/py-app.folded
#                              (frames under 0.2 % left out: the import machinery is 44 frames deep and 2 samples wide)
#   docs/flame-split-index.png the index.html of `whose flame --split` on fixtures/folded/flame-mini.folded
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

ls -l docs/*.png

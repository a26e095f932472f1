#!/usr/bin/env bash
# Benchmark: how fast the HTML page (`report --format html`, issue 27) becomes interactive on
# a large call tree, in headless Chromium: a generated folded profile of 20,000 stacks of 14
# frames (201,112 tree nodes: each stack is 1/20,000 of the total, so none is pruned), and the corpus JVM recording when present.
# Prints the page's size, the time from navigation to interactive, and one zoom's redraw.
# Needs chromium, chromium-driver and python3-selenium (Debian).
#
#   bash bench/html.sh
set -euo pipefail
cd "$(dirname "$0")/.."
dir=/tmp/whose-bench
mkdir -p "$dir"
cargo build --release --quiet
tree=$dir/tree200k.folded
[ -s "$tree" ] || python3 - "$tree" <<'PY'
import sys
with open(sys.argv[1], "w") as out:
    for i in range(20000):
        frames = ["main", f"a{i % 10}", f"b{i % 100}", f"c{i % 1000}"] + [f"d{i}_{k}" for k in range(10)]
        out.write(";".join(frames) + " 1\n")
PY
pages=()
./target/release/whose report "$tree" --format html -o "$dir/tree.html"
pages+=("$dir/tree.html")
if [ -f fixtures/perf/jvm-shop.perf.data ]; then
  ./target/release/whose report fixtures/perf/jvm-shop.perf.data --jit-map-dir fixtures/perf \
    --format html -o "$dir/jvm-shop.html" 2>/dev/null
  pages+=("$dir/jvm-shop.html")
fi
/usr/bin/python3 - "${pages[@]}" <<'PY'
import json, os, sys
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait
options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for a in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000", "--disable-dev-shm-usage"):
    options.add_argument(a)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
try:
    for page in sys.argv[1:]:
        best = None
        for _ in range(3):
            driver.get("file://" + page)
            WebDriverWait(driver, 60).until(lambda d: d.execute_script(
                "return document.documentElement.getAttribute('data-ready')"))
            ready = driver.execute_script("return whosePage.readyMs")
            nodes = driver.execute_script("return whosePage.data.inputs[0].nodes.parent.length")
            zoom = driver.execute_script(
                "var t = performance.now(); whosePage.state.zoom = 5; whosePage.render();"
                "return performance.now() - t")
            best = min(best or (1e9, 0, 0), (ready, zoom, nodes))
        size = os.path.getsize(page)
        print(f"{os.path.basename(page):<16} {size / 1e6:6.2f} MB  {best[2]:>7} nodes  "
              f"interactive {best[0]:6.0f} ms  zoom redraw {best[1]:5.0f} ms")
finally:
    driver.quit()
PY

#!/usr/bin/python3
"""Opens a `whose report --format html` page in headless Chromium (Selenium, chromedriver) and
checks what it shows against `whose report --format json` (issue 27):

- the owner table, every owner and view, and the category roll-up, to the integer;
- clicking an owner lists its heaviest functions and fades the other owners' frames;
- clicking a frame in the flame graph zooms to it and lists the stacks through it;
- a search reports what it matched;
- dragging a time range under the chart makes the table that range's sums of the
  `report --by time` buckets.

usage: html_check.py PAGE REPORT_JSON BY_TIME_JSON|- [SCREENSHOT.png]
       html_check.py --inputs PAGE REPORT_JSON   (a page of several inputs: each input's
       table, and the diff against the first drawn without errors)
(`-`: the input has no sample times, so there is no chart to drag)
Needs Debian's python3-selenium, chromium and chromium-driver. Exit 1 on the first mismatch.
"""
import json
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

VIEWS = ("self", "owner", "anywhere")
checks = 0


def check(ok, what):
    global checks
    if not ok:
        sys.exit(f"html_check: {what}")
    checks += 1


def at_viewport(driver, x, y, act):
    """Moves the pointer to (x, y) in the viewport and does `act` with it."""
    builder = ActionBuilder(driver)
    builder.pointer_action.move_to_location(int(x), int(y))
    act(builder.pointer_action)
    builder.perform()


def table(driver):
    """{(row name, view): weight} and the total, as the page's table holds them."""
    rows = {}
    for tr in driver.find_elements(By.CSS_SELECTOR, "#owners tr.row"):
        name = tr.get_attribute("data-name")
        for td in tr.find_elements(By.CSS_SELECTOR, "td[data-view]"):
            w = int(float(td.get_attribute("data-weight")))
            if w:
                rows[(name, td.get_attribute("data-view"))] = w
    total = int(float(driver.find_element(By.ID, "owners").get_attribute("data-total")))
    return rows, total


def expected(entries, total_key="total"):
    rows = {}
    for o in entries:
        for v in VIEWS:
            if o[v]:
                rows[(o["name"], v)] = o[v]
    return rows


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000",
                "--disable-dev-shm-usage", "--no-first-run", "--disable-background-networking"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def open_page(driver, page):
    driver.get("file://" + page)
    WebDriverWait(driver, 30).until(
        lambda d: d.execute_script("return document.documentElement.getAttribute('data-ready')"))


def several_inputs(page, report_path):
    """Each input's table against its JSON input; the diff drawn without a script error."""
    inputs = json.load(open(report_path))["inputs"]
    driver = browser()
    try:
        open_page(driver, page)
        for i, report in enumerate(inputs):
            Select(driver.find_element(By.ID, "input")).select_by_value(str(i))
            rows, total = table(driver)
            check(total == report["total"], f"input {i}: total {total} != {report['total']}")
            want = expected(report["owners"])
            check(rows == want, f"input {i}: owners differ")
        driver.find_element(By.ID, "diff").click()
        drawn = int(driver.find_element(By.ID, "flame").get_attribute("data-drawn"))
        check(drawn > 1, f"the diff drew {drawn} frames")
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        check(not errors, f"script errors: {errors}")
    finally:
        driver.quit()
    print(f"html_check: {checks} checks passed")


def main():
    if sys.argv[1] == "--inputs":
        return several_inputs(sys.argv[2], sys.argv[3])
    page, report_path, by_time_path = sys.argv[1:4]
    shot = sys.argv[4] if len(sys.argv) > 4 else None
    report = json.load(open(report_path))["inputs"][0]
    by_time = None if by_time_path == "-" else json.load(open(by_time_path))["inputs"][0]["timeline"]

    driver = browser()
    try:
        open_page(driver, page)

        # the owner table, every owner and view, and the categories
        rows, total = table(driver)
        check(total == report["total"], f"total {total} != {report['total']}")
        want = expected(report["owners"])
        check(rows == want, f"owners differ:\n page {sorted(rows.items())}\n json {sorted(want.items())}")
        Select(driver.find_element(By.ID, "by")).select_by_value("category")
        rows, _ = table(driver)
        want = expected(report["categories"])
        check(rows == want, f"categories differ:\n page {sorted(rows.items())}\n json {sorted(want.items())}")
        Select(driver.find_element(By.ID, "by")).select_by_value("owner")

        # an owner: its heaviest functions, the other owners faded
        heaviest = max(report["owners"], key=lambda o: o["owner"])["name"]
        row = driver.find_element(By.CSS_SELECTOR, f"#owners tr.row[data-name='{heaviest}']")
        row.click()
        details = driver.find_element(By.ID, "details").text
        check(details.startswith(f"heaviest functions of {heaviest}"), f"owner details: {details[:200]}")
        top = report["top_owner_frames"][0]
        check(top["frame"] in details or top["owner"] != heaviest,
              f"{top['frame']} not among {heaviest}'s functions: {details[:400]}")
        driver.find_element(By.CSS_SELECTOR, f"#owners tr.row[data-name='{heaviest}']").click()

        # a frame: zoom, and the stacks through it
        frame = top["frame"]
        rect = driver.execute_script("return whosePage.frameRect(arguments[0])", frame)
        check(rect is not None, f"{frame} is not drawn")
        canvas = driver.find_element(By.ID, "flame")
        size = canvas.size
        # bring the frame into the viewport, then click it where it is on the screen
        top = driver.execute_script(
            "var r = arguments[0].getBoundingClientRect();"
            "window.scrollBy(0, r.top + arguments[1] - window.innerHeight / 2);"
            "r = arguments[0].getBoundingClientRect(); return [r.left, r.top];", canvas, rect["y"])
        at_viewport(driver, top[0] + rect["x"] + rect["w"] / 2, top[1] + rect["y"] + rect["h"] / 2,
                    lambda p: p.click())
        zoom = int(canvas.get_attribute("data-zoom"))
        check(zoom == rect["node"], f"clicking {frame} zoomed to node {zoom}, not {rect['node']}")
        details = driver.find_element(By.ID, "details").text
        check(details.startswith(f"stacks through {frame}"), f"frame details: {details[:200]}")
        after = driver.execute_script("return whosePage.frameRect(arguments[0])", frame)
        check(after["w"] > size["width"] * 0.99, f"the zoomed frame is {after['w']} px wide")
        driver.find_element(By.ID, "reset").click()

        # search
        search = driver.find_element(By.ID, "search")
        search.send_keys(frame.split(".")[-1])
        matched = driver.find_element(By.ID, "matched").get_attribute("data-matched")
        check(matched and float(matched) > 0, f"searching {frame} matched {matched!r}")
        search.clear()
        driver.execute_script("document.getElementById('search').dispatchEvent(new Event('input'))")

        if by_time is None:
            chart = driver.find_element(By.ID, "time-panel").is_displayed()
            check(not chart, "a chart for an input without sample times")
            finish(driver, shot)
            return
        # a time range: drag from the warm-up's end to the last bucket
        buckets = by_time["buckets"]
        first = (by_time.get("warmup") or {}).get("end_bucket", len(buckets) // 2)
        svg = driver.find_element(By.CSS_SELECTOR, "#timeline svg")
        left, top, width, height = driver.execute_script(
            "window.scrollTo(0, 0); var r = arguments[0].getBoundingClientRect();"
            "return [r.left, r.top, r.width, r.height];", svg)
        pad = 6
        x_of = lambda i: left + pad + (width - 2 * pad) * (i + 0.5) / len(buckets)
        y = top + height / 3
        builder = ActionBuilder(driver)
        builder.pointer_action.move_to_location(int(x_of(first)), int(y))
        builder.pointer_action.pointer_down()
        builder.pointer_action.move_to_location(int(x_of(len(buckets) - 1)), int(y))
        builder.pointer_action.pointer_up()
        builder.perform()
        selection = svg.get_attribute("data-selection")
        check(selection == f"{first}-{len(buckets) - 1}", f"dragged selection {selection!r}")
        rows, total = table(driver)
        want, want_total = {}, 0
        for b in buckets[first:]:
            want_total += b["total"]
            for o in b["owners"]:
                for v in VIEWS:
                    if o[v]:
                        want[(o["name"], v)] = want.get((o["name"], v), 0) + o[v]
        check(total == want_total, f"selected total {total} != {want_total}")
        check(rows == want, f"selected owners differ:\n page {sorted(rows.items())}\n json {sorted(want.items())}")
        finish(driver, shot)
    finally:
        driver.quit()


def finish(driver, shot):
    if shot:
        driver.find_element(By.TAG_NAME, "body").send_keys("\ue00c")  # Escape: whole range
        driver.save_screenshot(shot)
    print(f"html_check: {checks} checks passed")


if __name__ == "__main__":
    main()

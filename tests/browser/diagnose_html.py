#!/usr/bin/python3
"""diagnose's HTML report rendered in a real browser (issue 35 item 6; docs/TESTING.md).

Writes `ropesim diagnose --framework hf,vllm ... --out REPORT.html`, opens it in headless
Chromium (Debian's chromium + chromium-driver, driven by python3-selenium) at 1400 x 1000 CSS
pixels, and requires, from the rendered DOM:
  * no console message of level SEVERE (a script error, a resource that failed to load);
  * the "Frameworks side by side" table with one "<framework> max_rel_error" column per
    framework asked for, and the ranking table after it with a row per ranked path;
  * per framework, both figures (div.figure.error, div.figure.collision) headed by its name, each
    an <svg> laid out with a non-empty box (width and height > 50 px) that draws at least one
    path and has text (axes, legend);
  * nothing wider than the window (document scrollWidth <= innerWidth: no column off the right
    edge, issue 35's "nonfinite column off the right edge at 1400 px").
Then it breaks the report four ways and requires each broken copy to FAIL the same check (a
check that cannot fail is no check): a script error, one figure's drawing removed, one
framework's column renamed, a block wider than the window.

Usage: diagnose_html.py ROPESIM_BINARY WORK_DIR
Exit 0: every check passed. Exit 1: a check failed (the reason on stderr). Exit 77 (ctest:
skipped, never passed): selenium, chromium or chromedriver missing, or Chromium cannot start.
"""
import os
import re
import shutil
import subprocess
import sys

SKIP = 77
FRAMEWORKS = ("hf", "vllm")


def skip(reason):
    print(f"diagnose-browser: SKIPPED: {reason}", file=sys.stderr)
    sys.exit(SKIP)


try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError as e:  # pragma: no cover - depends on the machine
    skip(f"python3-selenium is not installed ({e}); scripts/setup --deps installs it")


def browser():
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    for path, package in ((chromium, "chromium"), (driver_path, "chromium-driver")):
        if not os.access(path, os.X_OK):
            skip(f"{path} not found; install Debian's {package} (scripts/setup --deps)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000", "--force-device-scale-factor=1"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        return webdriver.Chrome(service=Service(driver_path), options=options)
    except Exception as e:  # noqa: BLE001 - any start failure means "cannot run here"
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        skip(f"Chromium could not start: {first}")


def problems(driver, path):
    """Every failed requirement of the report at `path` (an empty list: it passes)."""
    driver.get("file://" + os.path.abspath(path))
    found = []
    for entry in driver.get_log("browser"):
        if entry.get("level") == "SEVERE":
            found.append(f"console error: {entry.get('message')}")
    headings = [h.text.strip() for h in driver.find_elements(By.TAG_NAME, "h2")]
    if "Frameworks side by side" not in headings:
        found.append("no 'Frameworks side by side' section")
    tables = driver.find_elements(By.TAG_NAME, "table")
    if len(tables) < 2:
        found.append(f"{len(tables)} tables, expected the frameworks and ranking tables first")
    else:
        columns = [th.text.strip() for th in tables[0].find_elements(By.TAG_NAME, "th")]
        for framework in FRAMEWORKS:
            if f"{framework} max_rel_error" not in columns:
                found.append(f"frameworks table has no '{framework} max_rel_error' column "
                             f"(columns: {columns})")
        ranking_rows = tables[1].find_elements(By.TAG_NAME, "tr")
        if len(ranking_rows) < 2:
            found.append("ranking table has no row")
    for kind in ("error", "collision"):
        figures = driver.find_elements(By.CSS_SELECTOR, f"div.figure.{kind}")
        names = [f.find_element(By.TAG_NAME, "h3").text.strip() for f in figures]
        if sorted(names) != sorted(FRAMEWORKS):
            found.append(f"{kind} figures for {names}, expected one per framework {FRAMEWORKS}")
        for figure, name in zip(figures, names):
            svgs = figure.find_elements(By.TAG_NAME, "svg")
            if not svgs:
                found.append(f"{name}'s {kind} figure has no <svg>")
                continue
            box = driver.execute_script(
                "const r = arguments[0].getBoundingClientRect();"
                "return [r.width, r.height,"
                " arguments[0].querySelectorAll('path, polyline, rect').length,"
                " arguments[0].querySelectorAll('text').length];", svgs[0])
            width, height, drawn, texts = box
            if width <= 50 or height <= 50:
                found.append(f"{name}'s {kind} figure is laid out {width} x {height} px")
            if drawn == 0 or texts == 0:
                found.append(f"{name}'s {kind} figure draws {drawn} shapes and {texts} texts")
    scroll, inner = driver.execute_script(
        "return [document.documentElement.scrollWidth, window.innerWidth];")
    if scroll > inner:
        found.append(f"the page is {scroll} px wide in a {inner} px window (something runs off "
                     "the right edge)")
    return found


def broken_copies(page):
    """(what was broken, the broken page): each must fail problems()."""
    script = page.replace("</body>", "<script>undefined_function_of_the_test()</script></body>")
    first = page.find('<div class="figure collision">')
    start, end = page.find("<svg", first), page.find("</svg>", first)
    undrawn = page[:start] + "<svg width='600' height='300'></svg>" + page[end + 6:] \
        if first >= 0 and 0 <= start < end else None
    renamed = page.replace("<th>vllm max_rel_error</th>", "<th>vlm max_rel_error</th>")
    wide = page.replace("</table>", "</table><div style='width:2400px'>wide</div>", 1)
    return [("a script error", script), ("one figure's drawing removed", undrawn),
            ("vllm's column renamed", renamed), ("a block wider than the window", wide)]


def main():
    if len(sys.argv) != 3:
        print("usage: diagnose_html.py ROPESIM_BINARY WORK_DIR", file=sys.stderr)
        return 2
    binary, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    report = os.path.join(work, "diagnose.html")
    # two bands (context > 1024) so that the error figure has points; one draw keeps it quick
    command = [binary, "diagnose", "--schedule", "llama3-8b", "--dtype", "bf16", "--context",
               "1100", "--draws", "1", "--horizon-limit", "200", "--framework",
               ",".join(FRAMEWORKS), "--out", report]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"diagnose-browser: {' '.join(command)} exited {done.returncode}: "
              f"{done.stderr.strip()}", file=sys.stderr)
        return 1
    with open(report, encoding="utf-8") as f:
        page = f.read()
    driver = browser()
    try:
        found = problems(driver, report)
        if found:
            print("diagnose-browser: the report fails in Chromium:", file=sys.stderr)
            for line in found:
                print("  " + line, file=sys.stderr)
            return 1
        print(f"diagnose-browser: {report} passes in Chromium "
              f"({driver.capabilities.get('browserVersion')})")
        for what, broken in broken_copies(page):
            if broken is None or broken == page:
                print(f"diagnose-browser: could not break the report by {what} (its markup "
                      "changed: update the test)", file=sys.stderr)
                return 1
            path = os.path.join(work, "broken-" + re.sub(r"\W+", "-", what) + ".html")
            with open(path, "w", encoding="utf-8") as f:
                f.write(broken)
            caught = problems(driver, path)
            if not caught:
                print(f"diagnose-browser: the check passed a report broken by {what}",
                      file=sys.stderr)
                return 1
            print(f"diagnose-browser: broken by {what}: caught ({caught[0]})")
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())

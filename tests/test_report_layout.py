"""The HTML report's layout at common widths, in a real headless Chromium: the page never gets wider than the
window, the matrix scrolls in its own box with its item column in view, column headers wrap between words only,
the summary line comes first and failures come first in every list; and no path of the machine that wrote it.

Twenty implementations make the Reactive Streams matrix wider than a 1400 px window (the tests check that it is,
so that they can fail). Each test saves what it saw as report-WIDTH.png in its tmp_path and names it in its
failures.
"""

from __future__ import annotations

import json
import pathlib
import re
import xml.etree.ElementTree as ET

import pytest

from rstck.cli import main
from rstck.reports.items import by_implementation, failed_items, item_verdicts
from rstck.reports.project_paths import project_relative
from tests.test_report_browser import CHROMEDRIVER, CHROMIUM, NO_BROWSER, result_row

WIDTHS = (1400, 1024)
ITEMS = ("1.1", "1.9", "2.1", "2.13", "3.4", "3.9", "4.2.cancel-upstream")
CLIENT = "{project}/.venv/bin/python -m rstck.reference.network.client_command"
CLIENT_ITEMS = ("net.transport.1", "net.handshake.1")
# Not conformant (most failed items first), then incomplete, then the conformant by name: the page's order, which
# their names' order is not.
FAILING = {"zeta broken publisher": {"1.1": "fail", "3.9": "fail"}, "yak broken subscriber": {"2.13": "fail"},
           "omega erring subscriber": {"2.1": "error"}}
CONFORMANT = ["reference sync publisher", "reference threaded publisher", "reference asyncio publisher",
              "reference sync subscriber", "reference buffered subscriber",
              "reference map processor (processor as publisher)", "reference map processor (processor as subscriber)",
              "reference Spark DataFrame publisher", "reference Spark Parquet sink",
              "node:rstck/reference/js/reactive_streams.js", "node-stream:rstck/reference/js/streams.js",
              "draft publisher", "draft subscriber", "draft processor", "mypkg.tck:publisher", "mypkg.tck:subscriber",
              "an implementation with a rather long name of many words"]


def many_implementations(project: pathlib.Path) -> list[dict]:
    """Rows of twenty implementations of Reactive Streams, three of them failing, and of the reference client of
    the network protocol, whose command is planted as an absolute path under `project`."""
    rows = [result_row(name, item_id, FAILING.get(name, {}).get(item_id, "pass"))
            for name in [*FAILING, *CONFORMANT] for item_id in ITEMS]
    command = CLIENT.format(project=project)
    rows += [result_row(f"client: {command}", item_id, "pass", loaded_as=f"client-cmd:{command}",
                        trace=f"    1  (run: {command} tcp://127.0.0.1:58153 rstck/range/3)")
             for item_id in CLIENT_ITEMS]
    return rows


def expected_order(rows: list[dict]) -> list[str]:
    conformant = sorted(project_relative(row["implementation"]) for row in rows)
    return [*FAILING, *(name for name in dict.fromkeys(conformant) if name not in FAILING)]


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if NO_BROWSER is not None:
        pytest.skip(NO_BROWSER)
    webdriver = pytest.importorskip("selenium.webdriver",
                                    reason="selenium is a dev dependency: pip install -e '.[dev]'")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                     f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    yield driver
    driver.quit()


@pytest.fixture
def project(tmp_path, monkeypatch) -> pathlib.Path:
    """A project directory, the current one, as when `make check` runs in a checkout."""
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def report(project) -> tuple[pathlib.Path, list[dict], pathlib.Path]:
    """The page and the JUnit XML `rstck report` writes from the rows, named by absolute paths as a CI job may."""
    rows = many_implementations(project)
    results = project / "rstck-results" / "rows.jsonl"
    results.parent.mkdir()
    results.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    page, junit = project / "rstck-report" / "index.html", project / "rstck-report" / "junit.xml"
    assert main(["report", str(results), "-o", str(page), "--junit", str(junit)]) == 0
    return page, rows, junit


def show(driver, page: pathlib.Path, width: int, tmp_path: pathlib.Path) -> str:
    """Opens the page in a window `width` CSS pixels wide; returns where its screenshot is, for the failures."""
    driver.set_window_size(width, 900)
    inner = driver.execute_script("return window.innerWidth")
    driver.set_window_size(2 * width - inner, 900)  # the window's frame, if any, outside the page's width
    driver.get(page.as_uri())
    assert driver.execute_script("return window.innerWidth") == width
    shot = tmp_path / f"report-{width}.png"
    assert driver.save_screenshot(str(shot))
    return f"(screenshot: {shot})"


@pytest.mark.parametrize("width", WIDTHS)
def test_the_page_never_overflows_and_the_item_column_stays_in_view(browser, report, tmp_path, width):
    page, _, _ = report
    seen = show(browser, page, width, tmp_path)
    scroll_width, client_width, inner_width = browser.execute_script(
        "var page = document.documentElement; return [page.scrollWidth, page.clientWidth, window.innerWidth]")
    assert scroll_width <= client_width <= inner_width, f"the page is {scroll_width} px wide in {client_width} {seen}"

    # The first item of the Reactive Streams matrix, in view; then its box scrolled right to the end.
    moved = browser.execute_script("""
        var box = document.querySelector('section.profile[data-profile="reactive-streams"] .matrix-scroll');
        var id = box.querySelector('tr.item td.id');
        id.scrollIntoView({block: 'center', inline: 'start'});
        var before = box.scrollLeft;
        box.scrollLeft = box.scrollWidth;
        var shown = box.getBoundingClientRect(), cell = id.getBoundingClientRect();
        var last = box.querySelector('thead th.implementation:last-child').getBoundingClientRect();
        var top = document.elementFromPoint(cell.left + cell.width / 2, cell.top + cell.height / 2);
        return {scrolled: box.scrollLeft - before, box: [shown.left, shown.right], cell: [cell.left, cell.right],
                last: [last.left, last.right], onTop: top === id || id.contains(top)};""")
    seen = f"{seen}, after scrolling: " + str(moved)
    browser.save_screenshot(str(tmp_path / f"report-{width}-scrolled.png"))
    assert moved["scrolled"] > 0, f"the matrix fits its box: this test could not fail {seen}"
    assert abs(moved["cell"][0] - moved["box"][0]) <= 2 and moved["onTop"], f"the item column scrolled away {seen}"
    assert moved["last"][1] <= moved["box"][1] + 1, f"the last column is out of reach {seen}"


@pytest.mark.parametrize("width", WIDTHS)
def test_column_headers_break_between_words_only(browser, report, tmp_path, width):
    page, _, _ = report
    seen = show(browser, page, width, tmp_path)
    # Each word of each header (its text split at white space): on one line box, or it broke inside.
    headers = browser.execute_script("""
        return Array.from(document.querySelectorAll('th.implementation')).map(function (th) {
            var walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT), node, words = [];
            while ((node = walker.nextNode())) {
                var pattern = /\\S+/g, found;
                while ((found = pattern.exec(node.data))) {
                    var range = document.createRange();
                    range.setStart(node, found.index);
                    range.setEnd(node, found.index + found[0].length);
                    var tops = Array.from(range.getClientRects()).filter(function (r) { return r.width > 0; })
                        .map(function (r) { return Math.round(r.top); });
                    words.push([found[0], new Set(tops).size]);
                }
            }
            var style = getComputedStyle(th);
            return {text: th.textContent, title: th.title, words: words,
                    css: [style.wordBreak, style.overflowWrap, style.hyphens]};
        });""")
    assert len(headers) > len(CONFORMANT), seen
    broken = [(h["text"], word) for h in headers for word, lines in h["words"] if lines != 1]
    assert broken == [], f"headers broken inside a word {seen}"
    assert {tuple(h["css"]) for h in headers} == {("normal", "normal", "none")}, seen
    # Shortened words keep the whole name in the header's title.
    for header in headers:
        assert header["title"] and all(part in header["title"] for word, _ in header["words"]
                                       for part in word.split("…")), header
    assert "node:…/reactive_streams.js" in {h["text"] for h in headers}, seen


def test_the_summary_comes_first_and_failures_first_in_every_list(browser, report, tmp_path):
    page, rows, junit = report
    seen = show(browser, page, WIDTHS[0], tmp_path)
    from selenium.webdriver.common.by import By

    rows_of = by_implementation(rows)
    failed = sum(len(failed_items(item_verdicts(of))) for of in rows_of.values())
    junit_failed = sum(int(suite.get("failures")) for suite in ET.parse(junit).getroot().iter("testsuite"))
    assert (failed, junit_failed) == (3, 3)  # one count everywhere: the rows' failed items, as JUnit counts them
    summary = browser.find_element(By.CSS_SELECTOR, "h1 + p.summary")
    total = len(rows_of)
    assert summary.text.startswith(f"{total - len(FAILING)} of {total} implementations conformant "
                                   f"(2 not conformant, 1 incomplete) · {failed} failed items (3 fail)"), seen

    order = expected_order(rows)
    cards = [card.get_attribute("data-implementation")
             for card in browser.find_elements(By.CSS_SELECTOR, "section.headline")]
    assert cards == order, seen
    columns = [th.get_attribute("title") for th in browser.find_elements(
        By.CSS_SELECTOR, 'section.profile[data-profile="reactive-streams"] th.implementation')]
    assert columns == [name for name in order if not name.startswith("client: ")], seen
    verdicts = [option.get_attribute("value") for option in browser.find_elements(By.CSS_SELECTOR, "#f-verdict option")]
    assert verdicts[:3] == ["", "fail", "error"] and verdicts[-1] == "pass", seen
    # Cells keep their verdict's colour under the matrix's own (opaque, sticky) cells.
    fills = browser.execute_script("""return ['fail', 'error', 'pass'].map(function (verdict) {
        var cell = document.querySelector('td.cell[data-verdict="' + verdict + '"]');
        return getComputedStyle(cell).backgroundColor; });""")
    assert len(set(fills)) == 3 and not {"rgb(255, 255, 255)", "rgba(0, 0, 0, 0)"} & set(fills), (fills, seen)
    # Cards sit in a grid: those of one row start at the same height.
    tops = browser.execute_script("return Array.from(document.querySelectorAll('section.headline')).slice(0, 3)"
                                  ".map(function (card) { return card.getBoundingClientRect().top; })")
    assert len(set(tops)) == 1 and browser.execute_script(
        "return getComputedStyle(document.querySelector('.headlines')).display") == "grid", seen


def test_commands_and_names_are_relative_to_the_project(browser, report, project, tmp_path):
    page, rows, _ = report
    seen = show(browser, page, WIDTHS[0], tmp_path)
    from selenium.webdriver.common.by import By

    text = page.read_text(encoding="utf-8")
    assert str(project) in json.dumps(rows)  # planted: the rows name the client by its absolute path
    assert re.findall(re.escape(str(project)) + r"\S*", text) == [], "the machine's path in the page"
    relative = CLIENT.format(project=".").removeprefix("./")
    assert browser.find_element(By.CSS_SELECTOR, f'section.headline[data-implementation="client: {relative}"]'), seen
    commands = [code.get_attribute("textContent") for code in browser.find_elements(By.CSS_SELECTOR, "dd code")]
    assert f"rstck check --client '{relative}' --rules {CLIENT_ITEMS[0]}" in commands, seen
    assert "rstck-results/rows.jsonl" in browser.find_element(By.CSS_SELECTOR, "details.meta").get_attribute(
        "textContent"), seen


@pytest.mark.parametrize("text, shown", [
    ("{p}/.venv/bin/python -m x", ".venv/bin/python -m x"),
    ("cd {p} && make", "cd . && make"),
    ("'{p}/a b/c' {p}", "'a b/c' ."),
    ("{p}-old/x {p}x/y /elsewhere{p}/z file://{p}/f", "{p}-old/x {p}x/y /elsewhere{p}/z file://{p}/f"),
])
def test_only_paths_under_the_project_become_relative(text, shown):
    project = "/home/ci/src"
    assert project_relative(text.format(p=project), project) == shown.format(p=project)

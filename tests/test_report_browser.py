"""The HTML report as a person sees it, in a real headless Chromium: the filters, the evidence behind a
verdict, and hostile text shown as text.

Debian's chromium and chromedriver are used as they are (Selenium Manager cannot download anything in
CI); `make test` installs them with .ci/install-browser, which leaves the reason in
.rstck-browser-unavailable when it cannot.
"""

from __future__ import annotations

import os
import pathlib
import re
import textwrap

import pytest

from rstck.reports.html import write_report
from rstck.execution.rows import upgrade
from rstck.core.catalog import load_catalog
from rstck.core.signals import escape_controls

from .debian_packages import why_missing

CHROMIUM = pathlib.Path("/usr/bin/chromium")
CHROMEDRIVER = pathlib.Path("/usr/bin/chromedriver")
UNAVAILABLE_NOTE = pathlib.Path(__file__).resolve().parent.parent / ".rstck-browser-unavailable"


def why_no_browser() -> str | None:
    return why_missing([str(CHROMIUM), str(CHROMEDRIVER)], needs="the report's browser test",
                       what="Debian's chromium and chromedriver", installer=".ci/install-browser", note=UNAVAILABLE_NOTE,
                       present=lambda path: os.path.isfile(path) and os.access(path, os.X_OK))


NO_BROWSER = why_no_browser()
pytestmark = pytest.mark.skipif(NO_BROWSER is not None, reason=NO_BROWSER or "")
pytest.importorskip("selenium", reason="selenium is a dev dependency: pip install -e '.[dev]'")

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

TITLE = "rstck conformance report"
SHOULD_LEVELS = {"SHOULD", "SHOULD NOT", "RECOMMENDED", "NOT RECOMMENDED"}
# Item -> (alpha's verdict, beta's verdict): items of three sections, a SHOULD item among them.
VERDICTS = {
    "1.1": ("pass", "fail"),
    "1.9": ("pass", "pass"),
    "2.1": ("warn", "pass"),
    "3.4": ("pass", "warn"),
    "3.9": ("fail", "pass"),
}
IMPLEMENTATIONS = ("alpha", "beta")
# Markup, a cell's end, a terminal escape and both quotes: each must reach the reader as text.
PAYLOAD = '<script>window.__pwned=1</script> "><img src=x onerror="window.__pwned=1"> </td> \x1b[31mred \'it\'s\''
HOSTILE = f"evil{PAYLOAD}"


def finding_of(implementation: str, item_id: str) -> str:
    return f"{implementation} on {item_id}: request(0) was answered by onNext#7 instead of onError"


def trace_of(implementation: str, item_id: str) -> str:
    return f"1 onSubscribe ({implementation}, {item_id})\n2 request(0)\n3 onNext#7 <- violation"


def runner_message(finding: str, trace: str) -> str:
    """A message as the runner writes it: the finding, then the numbered trace (rstck/execution/runner.py)."""
    return f"{finding}\n  trace:\n{textwrap.indent(trace, '  ')}"


def result_row(implementation: str, item_id: str, verdict: str, **fields: str) -> dict:
    item = load_catalog()[item_id]
    evidence = {} if verdict == "pass" else {
        "message": runner_message(finding_of(implementation, item_id), trace_of(implementation, item_id)),
        "trace": trace_of(implementation, item_id),
        "reason": f"{implementation} saw onNext#7"}
    return upgrade({
        "target": implementation, "implementation": implementation, "rule": item_id, "verdict": verdict,
        "spec": item.spec, "section": item.section, "level": item.level, "text": item.text,
        "check": f"check_{item_id.replace('.', '_')}", "role": item.section.lower(),
        "loaded_as": f"mypkg.tck:{implementation}", "node_id": f"tests/test_tck.py::test_{item_id}[{implementation}]",
        "duration_s": 0.25, **evidence, **fields})


def two_implementations() -> list[dict]:
    return [result_row(name, item_id, verdicts[column])
            for item_id, verdicts in VERDICTS.items() for column, name in enumerate(IMPLEMENTATIONS)]


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--no-first-run",
                     "--disable-dev-shm-usage",  # a container's small /dev/shm crashes tabs
                     "--window-size=1400,1000",
                     f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # for console errors
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    yield driver
    driver.quit()


def open_report(driver, rows: list[dict], directory: pathlib.Path) -> None:
    path = write_report(rows, directory / "report.html")
    driver.get_log("browser")  # drops what an earlier page logged
    driver.get(path.as_uri())


def console_errors(driver) -> list[dict]:
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def item_rows(driver) -> list:
    return driver.find_elements(By.CSS_SELECTOR, "#matrix tr.item")


def visible_items(driver) -> set[str]:
    return {row.get_attribute("data-item") for row in item_rows(driver) if row.is_displayed()}


def count_text(driver) -> str:
    return driver.find_element(By.ID, "f-count").text


def wait_for_count(driver, shown: int) -> None:
    total = len(item_rows(driver))
    WebDriverWait(driver, 5).until(lambda d: count_text(d) == f"{shown} of {total} items shown",
                                   message=f"the count should say {shown} of {total} items shown")


def section_headings_follow_their_items(driver) -> list[str]:
    """The section headings shown: each must be shown exactly when one of its items is."""
    shown = []
    heading, items = None, []

    def settle():
        if heading is not None:
            name = heading.text if heading.is_displayed() else heading.get_attribute("textContent")
            assert heading.is_displayed() == any(row.is_displayed() for row in items), name
            if heading.is_displayed():
                shown.append(name)

    for row in driver.find_elements(By.CSS_SELECTOR, "#matrix tbody tr.section, #matrix tbody tr.item"):
        if "section" in row.get_attribute("class").split():
            settle()
            heading, items = row, []
        else:
            items.append(row)
    settle()
    return shown


def cell_link(driver, item_id: str, implementation: str):
    [cell] = [cell for cell in driver.find_elements(By.CSS_SELECTOR, f'tr.item[data-item="{item_id}"] td.cell')
              if cell.get_attribute("data-implementation") == escape_controls(implementation)]
    return cell.find_element(By.TAG_NAME, "a")


def open_detail(driver, item_id: str, implementation: str):
    """Clicks the verdict of `implementation` for the item, as a reader does, and returns the panel it shows."""
    link = cell_link(driver, item_id, implementation)
    panel = driver.find_element(By.ID, link.get_dom_attribute("href").removeprefix("#"))
    assert not panel.is_displayed(), "a detail panel shows only once its verdict is clicked"
    # Scrolled to the middle, as a reader would: WebDriver scrolls it to the top, under the sticky filters.
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", link)
    link.click()
    WebDriverWait(driver, 5).until(lambda d: panel.is_displayed(), message=f"{item_id} of {implementation}: no panel")
    return panel


def reader_text(panel) -> str:
    """The panel's text once every fold in it (a long text's rest, a trace) is opened, as a reader would."""
    for fold in panel.find_elements(By.CSS_SELECTOR, "details"):
        if fold.get_dom_attribute("open") is None:
            fold.find_element(By.TAG_NAME, "summary").click()
    WebDriverWait(panel.parent, 5).until(
        lambda d: all(f.get_dom_attribute("open") is not None for f in panel.find_elements(By.CSS_SELECTOR, "details")))
    return panel.text


def word_only_in(item_id: str, rows: list[dict]) -> str:
    """A word of the item's sentence found in no other item's sentence nor in any row: typing it must leave
    that item alone. As written in the sentence: the filter is meant to ignore case."""
    catalog = load_catalog()
    elsewhere = " ".join([*(item.text for item in catalog.items if item.id != item_id),
                          *(str(value) for row in rows if row["rule"] != item_id for value in row.values())]).lower()
    for word in re.findall(r"[A-Za-z]{5,}", catalog[item_id].text):
        if word.lower() not in elsewhere:
            return word
    raise AssertionError(f"every word of {item_id}'s sentence occurs elsewhere")


def test_all_items_are_shown_at_first_and_the_page_logs_no_error(browser, tmp_path):
    open_report(browser, two_implementations(), tmp_path)
    assert browser.title == TITLE
    rows = item_rows(browser)
    assert visible_items(browser) == {row.get_attribute("data-item") for row in rows}
    assert set(VERDICTS) <= visible_items(browser)
    assert count_text(browser) == f"{len(rows)} of {len(rows)} items shown"
    assert all(len(row.find_elements(By.CSS_SELECTOR, "td.cell")) == len(IMPLEMENTATIONS) for row in rows)
    assert console_errors(browser) == []


def test_the_verdict_filter_leaves_the_items_with_such_a_verdict_and_their_headings(browser, tmp_path):
    open_report(browser, two_implementations(), tmp_path)
    all_headings = section_headings_follow_their_items(browser)
    Select(browser.find_element(By.ID, "f-verdict")).select_by_value("fail")
    failed = {item_id for item_id, verdicts in VERDICTS.items() if "fail" in verdicts}
    wait_for_count(browser, len(failed))
    assert visible_items(browser) == failed
    shown_headings = section_headings_follow_their_items(browser)
    assert shown_headings == ["Publisher", "Subscription"] and "Subscriber" in all_headings


def test_a_word_of_one_rule_leaves_that_item_and_clearing_it_restores_all(browser, tmp_path):
    rows = two_implementations()
    open_report(browser, rows, tmp_path)
    everything = visible_items(browser)
    word = word_only_in("3.9", rows)
    field = browser.find_element(By.ID, "f-text")
    field.send_keys(word)
    wait_for_count(browser, 1)
    assert visible_items(browser) == {"3.9"}
    field.send_keys(Keys.BACKSPACE * len(word))  # as a reader deletes it: each key an input event
    wait_for_count(browser, len(everything))
    assert visible_items(browser) == everything


def test_the_should_level_shows_only_should_and_recommended_items(browser, tmp_path):
    open_report(browser, two_implementations(), tmp_path)
    catalog = load_catalog()
    should = {row.get_attribute("data-item") for row in item_rows(browser)
              if catalog[row.get_attribute("data-item")].level in SHOULD_LEVELS}
    assert "3.4" in should
    Select(browser.find_element(By.ID, "f-level")).select_by_value("SHOULD")
    wait_for_count(browser, len(should))
    assert visible_items(browser) == should


def test_clicking_a_failed_cell_shows_its_evidence_and_how_to_reproduce_it(browser, tmp_path):
    open_report(browser, two_implementations(), tmp_path)
    panel = open_detail(browser, "3.9", "alpha")
    assert load_catalog()["3.9"].text in panel.find_element(By.CSS_SELECTOR, "p.rule").text
    message = panel.find_element(By.CSS_SELECTOR, ".message pre")
    assert message.text.startswith(finding_of("alpha", "3.9"))
    commands = [code.text for code in panel.find_elements(By.TAG_NAME, "code")]
    assert "rstck check mypkg.tck:alpha --rules 3.9" in commands
    assert "pytest 'tests/test_tck.py::test_3.9[alpha]'" in commands
    shown = reader_text(panel)
    assert all(line in shown for line in trace_of("alpha", "3.9").splitlines())
    others = [other.get_attribute("id") for other in browser.find_elements(By.CSS_SELECTOR, "section.detail")
              if other != panel and other.is_displayed()]
    assert others == []


LONG_NAME = "alpha" + "-long" * 50  # over the 200 characters a name is shown with


@pytest.mark.parametrize("name", ["alpha", LONG_NAME], ids=["name", "long-name"])
def test_a_finding_in_the_headline_opens_the_same_evidence_as_its_cell(browser, tmp_path, name):
    rows = [result_row(name, item_id, verdicts[0]) for item_id, verdicts in VERDICTS.items()]
    open_report(browser, rows, tmp_path)
    [headline] = browser.find_elements(By.CSS_SELECTOR, "section.headline")
    [finding] = [link for link in headline.find_elements(By.CSS_SELECTOR, ".findings a") if "3.9" in link.text]
    [cell] = browser.find_elements(By.CSS_SELECTOR, 'tr.item[data-item="3.9"] td.cell a')  # one implementation
    expected = cell.get_dom_attribute("href")
    assert finding.get_dom_attribute("href") == expected
    finding.click()
    panel = browser.find_element(By.ID, expected.removeprefix("#"))
    WebDriverWait(browser, 5).until(lambda d: panel.is_displayed(), message="the finding's link shows no evidence")


def test_hostile_text_is_shown_as_text_and_runs_nothing(browser, tmp_path):
    # A failure whose message carries its trace (as the runner writes it), and an error with a trace alone.
    failure = result_row(HOSTILE, "1.1", "fail", target=HOSTILE, reason=f"reason {PAYLOAD}",
                         message=runner_message(f"message {PAYLOAD}", f"trace {PAYLOAD}"), trace=f"trace {PAYLOAD}")
    error = result_row(HOSTILE, "1.9", "error", target=HOSTILE, reason=f"reason {PAYLOAD}", message="",
                       trace=f"lone trace {PAYLOAD}")
    open_report(browser, [*two_implementations(), failure, error], tmp_path)
    shown = escape_controls(PAYLOAD)
    assert "\x1b" not in shown and "\\x1b[31m" in shown  # the escape is shown, never sent raw
    # The payload's `</td>` and quotes leave the table whole: every item keeps one cell per implementation.
    assert all(len(row.find_elements(By.CSS_SELECTOR, "td.cell")) == len(IMPLEMENTATIONS) + 1
               for row in item_rows(browser))
    for item_id, texts in (("1.1", ["message", "trace", "reason"]), ("1.9", ["lone trace", "reason"])):
        panel = open_detail(browser, item_id, HOSTILE)
        assert f"evil{shown}" in panel.find_element(By.TAG_NAME, "h3").text
        seen = reader_text(panel)
        assert [text for text in texts if f"{text} {shown}" not in seen] == [], seen
    assert browser.execute_script("return window.__pwned") is None
    assert browser.title == TITLE
    assert len(browser.find_elements(By.TAG_NAME, "img")) == 0, "a row's markup became an element"
    assert len(browser.find_elements(By.TAG_NAME, "script")) == 1, "a row's markup became an element"
    # Markup that slipped through would be blocked by the page's policy, which logs it as an error.
    assert console_errors(browser) == []


# --- the pictures: verdicts by section per implementation, the pass rate over time ---------------------------

def png_pixels(data: bytes) -> tuple[int, int, list[bytes], int]:
    """Width, height, the rows of pixels and the bytes per pixel (RGB or RGBA) of an 8-bit PNG, decoded with
    the standard library (the five filters of the PNG specification undone row by row)."""
    import struct
    import zlib

    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    position, idat, header = 8, b"", None
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        position += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, f"a PNG this decoder does not read: {header}"
    channels = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up, corner = previous[x], previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                estimate = left + up - corner
                nearest = min((abs(estimate - left), 0, left), (abs(estimate - up), 1, up),
                              (abs(estimate - corner), 2, corner))[2]
                line[x] = (line[x] + nearest) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, rows, channels


def colours_in(pixels, box: dict) -> set[bytes]:
    """The distinct colours (RGB) of the screenshot's pixels inside `box` (device pixels)."""
    width, height, rows, channels = pixels
    left, top = max(0, int(box["left"])), max(0, int(box["top"]))
    right, bottom = min(width, int(box["right"])), min(height, int(box["bottom"]))
    return {rows[y][x * channels:x * channels + 3] for y in range(top, bottom) for x in range(left, right)}


def two_profiles_with_history(directory: pathlib.Path) -> pathlib.Path:
    """Two runs of alpha and beta (Reactive Streams) and of streams (the Node stream contract), oldest first:
    the second run passes more. The report of both, with their history."""
    import json

    from rstck.cli import main

    runs = []
    for number, verdicts in enumerate((("fail", "warn"), ("pass", "pass"))):
        rows = [{**row, "recorded_at": f"2024-05-0{number + 1}T10:00:00.000+00:00"} for row in
                [*two_implementations(), result_row("streams", "node.base.1", verdicts[0]),
                 result_row("streams", "node.base.2", verdicts[1]),
                 result_row("alpha", "1.10", verdicts[0])]]
        run = directory / f"run{number}"
        run.mkdir()
        (run / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        runs.append(str(run))
    out = directory / "report.html"
    assert main(["report", "--history", *runs, "-o", str(out)]) == 0
    return out


def test_each_implementation_shows_its_pictures_and_they_render(browser, tmp_path):
    page = two_profiles_with_history(tmp_path)
    browser.get_log("browser")
    browser.get(page.as_uri())

    headlines = browser.find_elements(By.CSS_SELECTOR, "section.headline")
    assert {h.get_attribute("data-implementation") for h in headlines} == {"alpha", "beta", "streams"}
    for headline in headlines:
        for kind in ("svg.bars", "svg.trend"):
            [picture] = headline.find_elements(By.CSS_SELECTOR, kind)
            size = picture.size
            assert size["width"] > 0 and size["height"] > 0, (headline.get_attribute("data-implementation"), kind)
        segments = headline.find_elements(By.CSS_SELECTOR, "svg.bars rect")
        assert segments and all(s.size["width"] > 0 for s in segments), "a segment drawn with no width"
    # A matrix per profile, each of its own implementations only.
    columns = {group.get_attribute("data-profile"):
               [th.text for th in group.find_elements(By.CSS_SELECTOR, "th.implementation")]
               for group in browser.find_elements(By.CSS_SELECTOR, "section.profile")}
    assert columns == {"reactive-streams": ["alpha", "beta"], "node-stream-contract": ["streams"]}

    bars = browser.find_element(By.CSS_SELECTOR, 'section.headline[data-implementation="alpha"] svg.bars')
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", bars)
    box = browser.execute_script("var r = arguments[0].getBoundingClientRect(); var k = window.devicePixelRatio;"
                                 "return {left: r.left * k, top: r.top * k, right: r.right * k, bottom: r.bottom * k}",
                                 bars)
    shot = tmp_path / "report.png"
    assert browser.save_screenshot(str(shot))  # kept in tmp_path: what the reader saw
    pixels = png_pixels(shot.read_bytes())
    assert len(colours_in(pixels, {"left": 0, "top": 0, "right": pixels[0], "bottom": pixels[1]})) > 1
    # The bars themselves are painted: the pass fill, a failure's hatching and the text on white.
    assert len(colours_in(pixels, box)) >= 3, "the verdict bars did not render"
    assert console_errors(browser) == []


def test_the_profile_filter_leaves_that_profiles_matrix_alone(browser, tmp_path):
    page = two_profiles_with_history(tmp_path)
    browser.get(page.as_uri())
    groups = {g.get_attribute("data-profile"): g for g in browser.find_elements(By.CSS_SELECTOR, "section.profile")}
    assert all(group.is_displayed() for group in groups.values())

    Select(browser.find_element(By.ID, "f-profile")).select_by_value("node-stream-contract")

    wait_for_count(browser, 2)
    assert groups["node-stream-contract"].is_displayed() and not groups["reactive-streams"].is_displayed()

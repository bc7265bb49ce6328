"""The report's pictures, drawn here as inline SVG: the page needs no script, no network and no image to show them.

Per implementation and profile, a bar per section of the catalogue split by item verdict; per implementation
with a history of runs, its pass rate over time. Every segment and point has a <title> (what a screen reader
says and a pointer shows), every bar its counts in words, and fills differ in lightness and pattern as well
as hue, so a greyscale print still tells them apart. All text is escaped here.
"""

from __future__ import annotations

import dataclasses
from html import escape
from typing import Any, Iterable

from markupsafe import Markup

# The verdicts a bar is split by, in this order; a verdict this version does not know is drawn as "other".
BAR_VERDICTS = ["pass", "fail", "error", "allowed", "warn", "blocked", "n/a", "unsupported", "untested"]
OTHER = "other"

_LABEL_WIDTH = 150  # of a section's name, left of its bar
_BAR_WIDTH = 200
_ROW_HEIGHT = 30  # a section: its name and counts above, its bar below
_BAR_HEIGHT = 12
_NAME_CHARS = 22  # of a section's name in the picture (the whole name is in its <title>)

_CHART_WIDTH, _CHART_HEIGHT = 360, 120
_CHART_LEFT, _CHART_RIGHT, _CHART_TOP, _CHART_BOTTOM = 36, 10, 8, 22


@dataclasses.dataclass
class SectionBar:
    section: str
    counts: dict[str, int]  # verdict -> items, in BAR_VERDICTS order (then OTHER)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def words(self) -> str:
        return ", ".join(f"{n} {verdict}" for verdict, n in self.counts.items())


def section_bars(verdicts: dict[str, str], section_of: dict[str, str]) -> list[SectionBar]:
    """Item verdicts (item -> verdict) counted per section, sections in the order their first item comes."""
    counted: dict[str, dict[str, int]] = {}
    for item_id, verdict in verdicts.items():
        kind = verdict if verdict in BAR_VERDICTS else OTHER
        section = counted.setdefault(section_of[item_id], {})
        section[kind] = section.get(kind, 0) + 1
    order = [*BAR_VERDICTS, OTHER]
    return [SectionBar(name, {v: counts[v] for v in order if v in counts}) for name, counts in counted.items()]


def verdict_bars(title: str, bars: list[SectionBar]) -> Markup:
    """One profile's sections of one implementation: a labelled bar each, split by verdict."""
    height = _ROW_HEIGHT * len(bars)
    width = _LABEL_WIDTH + _BAR_WIDTH
    parts = [f'<svg class="bars" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
             f'aria-label="{escape(title)}: item verdicts by section">']  # each section's <title> has its counts
    for row, bar in enumerate(bars):
        top = row * _ROW_HEIGHT
        name = bar.section if len(bar.section) <= _NAME_CHARS else bar.section[:_NAME_CHARS - 1] + "…"
        parts.append(f'<g data-section="{escape(bar.section)}"><title>{escape(bar.section)}: {escape(bar.words)}'
                     f'</title><text x="0" y="{top + 11}">{escape(name)}</text>'
                     f'<text class="counts" x="{_LABEL_WIDTH}" y="{top + 11}">{escape(bar.words)}</text>')
        x = 0.0
        for verdict, count in bar.counts.items():
            share = _BAR_WIDTH * count / bar.total
            parts.append(f'<rect class="s-{_css(verdict)}" data-verdict="{escape(verdict)}" data-count="{count}" '
                         f'x="{_LABEL_WIDTH + x:.1f}" y="{top + 15}" width="{share:.1f}" height="{_BAR_HEIGHT}">'
                         f'<title>{escape(bar.section)}: {count} {escape(verdict)}</title></rect>')
            x += share
        parts.append("</g>")
    parts.append("</svg>")
    return Markup("".join(parts))


def _css(verdict: str) -> str:
    return "na" if verdict == "n/a" else verdict


# Shared once per page: the patterns that keep fail, error and blocked apart from the rest without colour.
PATTERNS = Markup(
    '<svg width="0" height="0" aria-hidden="true" style="position:absolute"><defs>'
    '<pattern id="p-fail" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
    '<rect width="6" height="6" fill="#c62828"/><rect width="2" height="6" fill="#5d0000"/></pattern>'
    '<pattern id="p-error" width="6" height="6" patternUnits="userSpaceOnUse">'
    '<rect width="6" height="6" fill="#8e24aa"/><path d="M0 0L6 6M6 0L0 6" stroke="#2a0033" stroke-width="1.2"/>'
    '</pattern>'
    '<pattern id="p-blocked" width="5" height="5" patternUnits="userSpaceOnUse">'
    '<rect width="5" height="5" fill="#ffab91"/><circle cx="2.5" cy="2.5" r="1.2" fill="#6d2b14"/></pattern>'
    '</defs></svg>')


@dataclasses.dataclass
class Point:
    """One run (or day) of an implementation: passes among its decisive verdicts."""

    label: str
    passed: int
    decided: int

    @property
    def rate(self) -> float:
        return self.passed / self.decided if self.decided else 0.0

    @property
    def words(self) -> str:
        return f"{self.label}: {self.passed} of {self.decided} passed ({self.rate:.0%})"


def trend_chart(implementation: str, points: list[Point]) -> Markup:
    """The pass rate over time of one implementation: a line through a point per run, 0 to 100 %."""
    inner_w = _CHART_WIDTH - _CHART_LEFT - _CHART_RIGHT
    inner_h = _CHART_HEIGHT - _CHART_TOP - _CHART_BOTTOM
    step = inner_w / (len(points) - 1) if len(points) > 1 else 0.0
    xy = [(_CHART_LEFT + (i * step if len(points) > 1 else inner_w / 2), _CHART_TOP + inner_h * (1 - p.rate))
          for i, p in enumerate(points)]
    summary = "; ".join(p.words for p in points)
    parts = [f'<svg class="trend" role="img" width="{_CHART_WIDTH}" height="{_CHART_HEIGHT}" '
             f'viewBox="0 0 {_CHART_WIDTH} {_CHART_HEIGHT}" aria-label="{escape(implementation)}, pass rate over '
             f'time: {escape(summary)}">']
    for rate in (0, 50, 100):
        y = _CHART_TOP + inner_h * (1 - rate / 100)
        parts.append(f'<line class="grid" x1="{_CHART_LEFT}" x2="{_CHART_WIDTH - _CHART_RIGHT}" y1="{y:.1f}" '
                     f'y2="{y:.1f}"/><text class="axis" x="{_CHART_LEFT - 4}" y="{y + 4:.1f}">{rate}%</text>')
    parts.append(f'<text class="axis start" x="{_CHART_LEFT}" y="{_CHART_HEIGHT - 6}">{escape(points[0].label)}'
                 f'</text>')
    if len(points) > 1:
        parts.append(f'<text class="axis end" x="{_CHART_WIDTH - _CHART_RIGHT}" y="{_CHART_HEIGHT - 6}">'
                     f'{escape(points[-1].label)}</text>')
        parts.append('<polyline class="line" points="' + " ".join(f"{x:.1f},{y:.1f}" for x, y in xy) + '"/>')
    for (x, y), point in zip(xy, points):
        parts.append(f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="3.5" data-passed="{point.passed}" '
                     f'data-decided="{point.decided}"><title>{escape(point.words)}</title></circle>')
    parts.append("</svg>")
    return Markup("".join(parts))


def points_by_day(counts: Iterable[tuple[str, str, str, int, int]]) -> dict[str, list[Point]]:
    """The Spark engine's pass rates (implementation, item, day, passed, decided) summed per implementation
    and day, days oldest first."""
    summed: dict[str, dict[str, list[int]]] = {}
    for implementation, _item, day, passed, decided in counts:
        cell = summed.setdefault(implementation, {}).setdefault(day, [0, 0])
        cell[0] += passed
        cell[1] += decided
    return {name: [Point(day, *days[day]) for day in sorted(days)] for name, days in summed.items()}


def points_by_run(runs: list[tuple[str, list[dict[str, Any]]]], decisive: Iterable[str]) -> dict[str, list[Point]]:
    """Runs in time order (a label, its merged rows) as a point per run for every implementation in it."""
    decisive = set(decisive)
    points: dict[str, list[Point]] = {}
    for label, rows in runs:
        counted: dict[str, list[int]] = {}
        for row in rows:
            if row["rule"] and row["verdict"] in decisive:
                cell = counted.setdefault(row["implementation"], [0, 0])
                cell[0] += row["verdict"] == "pass"
                cell[1] += 1
        for name, (passed, decided) in counted.items():
            points.setdefault(name, []).append(Point(label, passed, decided))
    return points


@dataclasses.dataclass
class RunHistory:
    """A local history: the pass rate of each implementation per run, runs in the order they were given."""

    points: dict[str, list[Point]]


def run_history(paths: list[str]) -> RunHistory:
    """`rstck report --history RUN...`: each path (a results directory or file) is one run, oldest first; a
    run's rows are merged as the report merges them, and its point is labelled by its newest row's time."""
    from rstck.execution.rows import read_rows
    from rstck.reports.spark import DECISIVE

    runs = []
    for path in paths:
        rows = read_rows([path]).rows
        newest = max((str(row["recorded_at"]) for row in rows), default="")
        runs.append((newest[:16].replace("T", " ") or str(path), rows))
    return RunHistory(points_by_run(runs, DECISIVE))

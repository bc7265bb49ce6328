"""The examples docs/ shows are what the pages say they are: `fixed` of docs/examples/lenient_range.py is
conformant, fuzz phase included, and the only defect of `target` is the one the page is about (3.9)."""

from __future__ import annotations

import pathlib

from rstck.cli import main

from docs.examples.lenient_range import StrictRange


class Recorder:
    """Requests `demand` inside on_subscribe and records every signal."""

    def __init__(self, demand: int):
        self.demand, self.signals = demand, []

    def on_subscribe(self, subscription) -> None:
        self.signals.append("on_subscribe")
        subscription.request(self.demand)

    def on_next(self, item) -> None:
        self.signals.append(item)

    def on_error(self, error) -> None:
        self.signals.append("on_error")

    def on_complete(self) -> None:
        self.signals.append("on_complete")


def test_an_empty_range_asked_for_elements_inside_on_subscribe_only_completes():
    """It once delivered on_next without end: its loop stopped at the n-th element, and an empty range has none."""
    recorder = Recorder(demand=5)
    StrictRange(0).subscribe(recorder)
    assert recorder.signals == ["on_subscribe", "on_complete"]


def test_the_fixed_range_is_conformant_and_the_lenient_one_breaks_only_3_9(capsys):
    code = main(["check", "docs.examples.lenient_range:fixed", "--fuzz-examples", "50"])
    assert code == 0, capsys.readouterr().out
    capsys.readouterr()
    assert main(["check", "docs.examples.lenient_range:target", "--no-fuzz"]) == 1
    out = capsys.readouterr().out
    assert {line.split()[2] for line in out.splitlines() if line.startswith("--- fail:")} == {"3.9"}, out


def test_the_readmes_failure_is_what_rstck_check_prints(capsys):
    """The quick start shows a failure of docs/examples/lenient_range.py as `rstck check` prints it, the two commands
    that follow it included."""
    readme = (pathlib.Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index("--- fail: 3.9 request_zero_signals_on_error"):]
    block = block[:block.index("\n```")]
    assert main(["check", "docs.examples.lenient_range:target", "--rules", "3.9"]) == 1
    assert block in capsys.readouterr().out

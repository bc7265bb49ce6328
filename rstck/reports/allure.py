"""Allure labels and attachments for rstck's pytest items (used when allure-pytest is installed).

Labels are plain markers that allure-pytest reads (`allure_label`, `allure_link`), so the kit needs
no import of Allure to carry them; the trace is attached only where allure-pytest is active.
"""

from __future__ import annotations

from typing import Any

import pytest

from rstck.core.catalog import Item
from rstck.core.verdict import LEVEL_VERDICTS, Verdict

# Registered by the kit too, so --strict-markers accepts them with or without allure-pytest.
ALLURE_MARKERS = {
    "allure_label(*values, label_type)": "an Allure label (epic, feature, story, severity) of an rstck item",
    "allure_link(url, link_type, name)": "an Allure link of an rstck item (the rule's text)",
    "allure_description(text)": "the Allure description of an rstck item (the rule's sentence, the check's doc)",
}
_SEVERITY = {Verdict.FAIL: "critical", Verdict.WARN: "normal", Verdict.UNSUPPORTED: "minor"}


def allure_markers(item: Item, *, target: str, role: str, doc: str = "") -> list[pytest.MarkDecorator]:
    """epic = spec, feature = section, story = rule id, severity from the level, a link to the rule's text;
    suites by target and role (Allure's own split of our node ids is meaningless); the rule as description."""
    description = f"{item.id} {item.level}: {item.text}" + (f"\n\n{doc}" if doc else "")
    markers = [pytest.mark.allure_label(target, label_type="suite"),
               pytest.mark.allure_label(role, label_type="subSuite"),
               pytest.mark.allure_description(description),
               pytest.mark.allure_label(item.spec, label_type="epic"),
               pytest.mark.allure_label(item.section, label_type="feature"),
               pytest.mark.allure_label(item.id, label_type="story"),
               pytest.mark.allure_label(_SEVERITY[LEVEL_VERDICTS[item.level]], label_type="severity")]
    if item.url:
        markers.append(pytest.mark.allure_link(item.url, link_type="link", name=f"{item.id} {item.level}: "
                                                                                f"{item.text[:80]}"))
    return markers


def attach_to_allure(config: pytest.Config, result: Any) -> None:
    """The check's message and numbered trace as text attachments of the running Allure test."""
    if not config.pluginmanager.hasplugin("allure_pytest"):
        return
    import allure

    if result.message:
        allure.attach(result.message, name=f"{result.verdict.value}: {result.rule}",
                      attachment_type=allure.attachment_type.TEXT)
    if result.trace:
        allure.attach(result.trace, name="trace", attachment_type=allure.attachment_type.TEXT)

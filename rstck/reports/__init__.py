"""What a run leaves for people and CI: result rows (rows.py), item verdicts (items.py), the HTML
report (html.py), JUnit XML (junit.py) and the allowlist of known deviations (allowlist.py)."""

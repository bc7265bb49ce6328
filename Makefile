# The two quick-start commands: `make check` and `make test`.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Reinstalls only when pyproject.toml changes.
INSTALLED := $(VENV)/.installed-pyproject
RESULTS := rstck-results
REPORT := rstck-report/index.html

# The shipped reference targets (rstck/reference/targets.py); `make check` runs each.
REFERENCE_TARGETS := \
	rstck.reference.targets:sync_publisher \
	rstck.reference.targets:threaded_publisher \
	rstck.reference.targets:asyncio_publisher \
	rstck.reference.targets:sync_subscriber \
	rstck.reference.targets:buffered_subscriber \
	rstck.reference.targets:map_processor

.PHONY: check test

check: $(INSTALLED)
	@rm -rf $(RESULTS); failed=""; \
	for target in $(REFERENCE_TARGETS); do \
		echo "== rstck check $$target"; \
		$(BIN)/rstck check "$$target" --results $(RESULTS) || failed="$$failed $$target"; \
	done; \
	$(BIN)/rstck report $(RESULTS) -o $(REPORT) --junit $(dir $(REPORT))junit.xml || exit 2; \
	echo "results: $(RESULTS)/"; \
	echo "open the report: file://$(abspath $(REPORT))"; \
	if [ -n "$$failed" ]; then echo "not conformant or incomplete:$$failed" >&2; exit 1; fi

test: $(INSTALLED)
	@.ci/install-browser  # Debian's chromium and chromedriver, for the report's browser test
	$(BIN)/pytest -n 2

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(INSTALLED): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	$(BIN)/python -m compileall -q rstck  # an editable install is not compiled; start-up counts
	@touch $@

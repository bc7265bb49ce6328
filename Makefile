# The quick-start commands: `make check` and `make test`; `make soak` gates a release (docs/testing.md).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Reinstalls only when pyproject.toml changes.
INSTALLED := $(VENV)/.installed-pyproject
# The real-world Node streams tests/node_stream/test_baselines.py checks (readable-stream, pinned by its lock);
# reinstalled only when the lock changes; skipped, as those tests are, where there is no npm.
BASELINES := tests/node_stream/baselines
BASELINES_INSTALLED := $(BASELINES)/node_modules/.installed-lock
RESULTS := rstck-results
REPORT := rstck-report/index.html
# Four workers on CI's two cores: the suite's tests spend about half their time waiting (deadlines waited out, quiet
# windows, subprocesses and JVMs starting), so four overlap what two leave idle (docs/testing.md has the figures).
TEST_WORKERS ?= 4
# The soak run waits more still (twenty checks in a row of each network and Node zoo member, at a load average under 1
# with two workers), so it runs six; its busy-core tests add their two spinning processes on top.
SOAK_WORKERS ?= 6

# The shipped reference targets (rstck/reference/targets.py; the Spark-backed ones, docs/spark.md; the JavaScript
# one, docs/node.md); `make check` runs each, then the reference server and client of the network protocol
# (docs/network.md).
REFERENCE_TARGETS := \
	rstck.reference.targets:sync_publisher \
	rstck.reference.targets:threaded_publisher \
	rstck.reference.targets:asyncio_publisher \
	rstck.reference.targets:sync_subscriber \
	rstck.reference.targets:buffered_subscriber \
	rstck.reference.targets:map_processor \
	rstck.reference.spark_targets:spark_publisher \
	rstck.reference.spark_targets:spark_sink \
	node:rstck/reference/js/reactive_streams.js \
	node-stream:rstck/reference/js/streams.js
# The shipped references of the early SPI draft, checked under its opt-in profile (docs/spi-draft.md).
SPI_DRAFT_TARGETS := \
	rstck.reference.spi_draft:draft_publisher \
	rstck.reference.spi_draft:draft_subscriber \
	rstck.reference.spi_draft:draft_processor

.PHONY: check test soak

check: $(INSTALLED)
	@rm -rf $(RESULTS); failed=""; \
	for target in $(REFERENCE_TARGETS); do \
		echo "== rstck check $$target"; \
		$(BIN)/rstck check "$$target" --results $(RESULTS) || failed="$$failed $$target"; \
	done; \
	for target in $(SPI_DRAFT_TARGETS); do \
		echo "== rstck check $$target --profile spi-draft"; \
		$(BIN)/rstck check "$$target" --profile spi-draft --results $(RESULTS) || failed="$$failed $$target"; \
	done; \
	echo "== rstck check tcp://… (the reference server, rstck serve)"; \
	serve_out=$$(mktemp); $(BIN)/rstck serve --listen 127.0.0.1:0 > $$serve_out 2> /dev/null & serving=$$!; \
	url=""; for attempt in $$(seq 200); do \
		url=$$(sed -n 's/^rstck serve: listening on //p' $$serve_out); [ -n "$$url" ] && break; sleep 0.05; \
	done; rm -f $$serve_out; \
	$(BIN)/rstck check "$$url" --results $(RESULTS) || failed="$$failed rstck-serve"; \
	kill -INT $$serving; wait $$serving; \
	echo "== rstck check --client (the reference client)"; \
	$(BIN)/rstck check --client "$(abspath $(BIN))/python -m rstck.reference.network.client_command" \
		--results $(RESULTS) || failed="$$failed reference-client"; \
	$(BIN)/rstck report $(RESULTS) -o $(REPORT) --junit $(dir $(REPORT))junit.xml || exit 2; \
	echo "results: $(RESULTS)/"; \
	echo "open the report: file://$(abspath $(REPORT))"; \
	if [ -n "$$failed" ]; then echo "not conformant or incomplete:$$failed" >&2; exit 1; fi

test: $(INSTALLED) $(BASELINES_INSTALLED)
	@.ci/install-browser  # Debian's chromium and chromedriver, for the report's browser test
	$(BIN)/pytest -n $(TEST_WORKERS) --durations=20

# Repetition and deliberate load: the stability tests twenty times each, the busy-core runs, the long streams, the
# slowest reproducer confirmations (tests/stability.py; docs/testing.md lists what and why).
soak: $(INSTALLED) $(BASELINES_INSTALLED)
	RSTCK_STABILITY_RUNS=20 $(BIN)/pytest -n $(SOAK_WORKERS) --soak --durations=20

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(INSTALLED): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	$(BIN)/python -m compileall -q rstck  # an editable install is not compiled; start-up counts
	@touch $@

$(BASELINES_INSTALLED): $(BASELINES)/package-lock.json $(BASELINES)/package.json
	@if command -v npm > /dev/null; then \
		out=$$(npm ci --prefix $(BASELINES) --no-audit --no-fund --ignore-scripts 2>&1) \
			|| { echo "$$out" >&2; exit 1; }; touch $@; \
	else echo "npm is not on PATH: $(BASELINES) is not installed (the tests that need it skip)"; fi

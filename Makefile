# The quick-start commands: `make check` and `make test`; `make soak` gates a release (docs/testing.md); `make dist`
# builds the wheel and sdist a user installs.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Each reinstalls only when pyproject.toml changes. `make test` and `make soak` need the development extra;
# `make check` only the kit and its spark extra (the Node references need only `node` on PATH).
INSTALLED := $(VENV)/.installed-pyproject
CHECK_INSTALLED := $(VENV)/.installed-check
# The real-world Node streams tests/node_stream/test_baselines.py checks (readable-stream, pinned by its lock);
# reinstalled only when the lock changes; skipped, as those tests are, where there is no npm.
BASELINES := tests/node_stream/baselines
BASELINES_INSTALLED := $(BASELINES)/node_modules/.installed-lock
RESULTS := rstck-results
REPORT := rstck-report/index.html
CHECK_LOGS := $(dir $(REPORT))logs
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

# The JVM reference publisher (rstck/reference/jvm/, docs/jvm.md), compiled with javac by `make check` and checked
# when `java` and `javac` are on PATH; skipped with a line saying so where they are not.
JVM_REFERENCE_SOURCES := rstck/reference/jvm/RangePublishers.java
JVM_REFERENCE_CLASSES := $(dir $(REPORT))jvm-reference-classes
JVM_REFERENCE_TARGETS := jvm:RangePublishers\$$Range jvm:RangePublishers\$$Async

.PHONY: check test soak docs dist

# One line per check run: its verdict and summary; the whole output of each goes to $(CHECK_LOGS)/.
check: $(CHECK_INSTALLED)
	@rm -rf $(RESULTS) $(CHECK_LOGS); mkdir -p $(CHECK_LOGS); failed=""; \
	gate() { \
		label=$$1; shift; log=$(CHECK_LOGS)/$$(printf %s "$$label" | tr -c 'A-Za-z0-9._-' _).log; \
		if $(BIN)/rstck check "$$@" --results $(RESULTS) > $$log 2>&1; then verdict=ok; \
		else verdict=FAIL; failed="$$failed $$label"; fi; \
		summary=$$(sed -n 's/^rstck: //p' $$log | tail -n 1); \
		printf '%-4s %-50s %s\n' $$verdict "$$label" "$${summary:-(no summary)}"; \
		[ $$verdict = ok ] || echo "     its output: $$log"; \
	}; \
	for target in $(REFERENCE_TARGETS); do gate "$$target" "$$target"; done; \
	for target in $(SPI_DRAFT_TARGETS); do gate "$$target --profile spi-draft" "$$target" --profile spi-draft; done; \
	if command -v java > /dev/null && command -v javac > /dev/null; then \
		classes=$(JVM_REFERENCE_CLASSES); rm -rf $$classes; mkdir -p $$classes; \
		if javac -nowarn -d $$classes $(JVM_REFERENCE_SOURCES); then \
			for name in $(JVM_REFERENCE_TARGETS); do gate "$$name" "$$name" --classpath $$classes; done; \
		else failed="$$failed jvm:(javac)"; fi; \
	else echo "skip jvm: (the JVM reference publisher): java and javac are not on PATH"; fi; \
	serve_out=$$(mktemp); $(BIN)/rstck serve --listen 127.0.0.1:0 > $$serve_out 2> /dev/null & serving=$$!; \
	url=""; for attempt in $$(seq 200); do \
		url=$$(sed -n 's/^rstck serve: listening on //p' $$serve_out); [ -n "$$url" ] && break; sleep 0.05; \
	done; rm -f $$serve_out; \
	gate "tcp:// (the reference server, rstck serve)" "$$url"; \
	kill -INT $$serving; wait $$serving; \
	gate "--client (the reference client)" --client "$(abspath $(BIN))/python -m rstck.reference.network.client_command"; \
	$(BIN)/rstck report $(RESULTS) -o $(REPORT) --junit $(dir $(REPORT))junit.xml > /dev/null || exit 2; \
	echo "results: $(RESULTS)/, each check's output: $(CHECK_LOGS)/"; \
	echo "open the report: file://$(abspath $(REPORT))"; \
	if [ -n "$$failed" ]; then echo "not conformant or incomplete:$$failed" >&2; exit 1; fi

test: $(INSTALLED) $(BASELINES_INSTALLED)
	@.ci/install-browser  # Debian's chromium and chromedriver, for the report's browser test
	@.ci/install-java-packages  # Debian's reactive-streams and Netty jars, for tests/jvm/real/
	$(BIN)/pytest -n $(TEST_WORKERS) --durations=20

# Repetition and deliberate load: the stability tests twenty times each, the busy-core runs, the long streams, the
# slowest reproducer confirmations (tests/stability.py; docs/testing.md lists what and why).
soak: $(INSTALLED) $(BASELINES_INSTALLED)
	@.ci/install-java-packages  # Debian's reactive-streams and Netty jars, for tests/jvm/real/
	RSTCK_STABILITY_RUNS=20 $(BIN)/pytest -n $(SOAK_WORKERS) --soak --durations=20

# The documentation site, from docs/ into site/ (mkdocs.yml): a link to a missing page or anchor fails it.
docs: $(INSTALLED)
	$(BIN)/mkdocs build --strict --site-dir site

# The wheel and the sdist, into dist/; the wheel is built from the sdist, as an installer builds it, so that what the
# sdist leaves out shows. Bytecode is not shipped: PYTHONDONTWRITEBYTECODE would only make the build warn.
dist: | $(BIN)/python
	@$(BIN)/python -m pip install --quiet "setuptools>=77"
	@rm -rf dist build/sdist; mkdir -p build/sdist
	@env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -c \
		'from setuptools import build_meta; build_meta.build_sdist("dist")' > build/dist.log 2>&1 \
		|| { cat build/dist.log >&2; exit 1; }
	@tar -xzf dist/rstck-*.tar.gz -C build/sdist
	@cd build/sdist/rstck-* && env -u PYTHONDONTWRITEBYTECODE $(abspath $(BIN))/python -c \
		'from setuptools import build_meta; build_meta.build_wheel("$(abspath dist)")' >> $(abspath build/dist.log) 2>&1 \
		|| { cat $(abspath build/dist.log) >&2; exit 1; }
	@grep -i "warning" build/dist.log >&2 || true  # the whole build's output: build/dist.log
	@ls dist/*

$(BIN)/python:
	@$(PYTHON) -m venv $(VENV)

$(INSTALLED): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	$(BIN)/python -m compileall -q rstck  # an editable install is not compiled; start-up counts
	@touch $@

$(CHECK_INSTALLED): pyproject.toml | $(BIN)/python
	@echo "installing rstck and its spark extra into $(VENV)"
	@$(BIN)/python -m pip install --quiet --quiet -e ".[spark]"  # errors only
	@$(BIN)/python -m compileall -q rstck
	@touch $@

$(BASELINES_INSTALLED): $(BASELINES)/package-lock.json $(BASELINES)/package.json
	@if command -v npm > /dev/null; then \
		out=$$(npm ci --prefix $(BASELINES) --no-audit --no-fund --ignore-scripts 2>&1) \
			|| { echo "$$out" >&2; exit 1; }; touch $@; \
	else echo "npm is not on PATH: $(BASELINES) is not installed (the tests that need it skip)"; fi

# Quick start: `make demo` (the main job on embedded defaults), `make test` (the test suite).
# Both bootstrap uv if it is missing and install the locked dependencies.
SHELL := /bin/bash
export UV_PYTHON_DOWNLOADS := never
export LITELLM_LOCAL_MODEL_COST_MAP := True
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export DEEPEVAL_TELEMETRY_OPT_OUT := YES
export STREAMLIT_BROWSER_GATHER_USAGE_STATS := false
export PREFECT_HOME := $(CURDIR)/.prefect
export DEEPEVAL_CACHE_FOLDER := $(CURDIR)/.deepeval

UV ?= $(shell command -v uv 2>/dev/null)
ifeq ($(UV),)
UV := python3 -m uv
endif

.PHONY: install demo test test-fast lint typecheck serve lab

install:
	@$(UV) --version >/dev/null 2>&1 || python3 -m pip install --quiet uv \
		|| python3 -m pip install --quiet --user --break-system-packages uv
	$(UV) sync --frozen --all-extras --compile-bytecode --python python3

demo: install
	$(UV) run --frozen membank demo

test: install
	$(UV) run --frozen ruff check .
	$(UV) run --frozen ruff format --check .
	$(UV) run --frozen mypy memory
	$(UV) run --frozen pytest

# The fast tier while you work: every test not marked slow/process/server/browser/s3, in
# parallel (pytest-xdist), with its wall time printed. `make test` is the full suite.
FAST := not slow and not process and not server and not browser and not s3
test-fast: install
	@start=$$(date +%s); $(UV) run --frozen pytest -m "$(FAST)" -n auto; status=$$?; \
		echo "test-fast: $$(( $$(date +%s) - start )) s (load $$(cut -d' ' -f1 /proc/loadavg))"; \
		exit $$status

lint: install
	$(UV) run --frozen ruff check .
	$(UV) run --frozen ruff format --check .

typecheck: install
	$(UV) run --frozen mypy memory

# Local Prefect server + `membank` process work pool + prefect.yaml deployments + a worker.
# Ctrl-C stops all of it. PORT=4200 by default; storage from MEMBANK_URI (default .membank).
serve: install
	$(UV) run --frozen membank serve --port $(or $(PORT),4200)

# The Streamlit lab on http://127.0.0.1:$(PORT) (default 8501); storage from MEMBANK_URI.
lab: install
	$(UV) run --frozen membank lab --port $(or $(PORT),8501)

# Transcript Assembler: `make run` and `make test` set up a fresh machine and are idempotent.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
JS_STAMP := node_modules/.js-deps-stamp

.PHONY: setup run test test-fast build dist browser-deps site-deps js-deps lint bench bench-browser clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade "pip>=25.1"
	$(BIN)/python -m pip install -q -e ".[server,publish,cloud]" --group dev
	touch $(STAMP)

# The JavaScript toolchain (TypeScript, ESLint) and the Pyodide runtime, pinned by package-lock.json.
js-deps: $(JS_STAMP)

$(JS_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $(JS_STAMP)

browser-deps:
	bash scripts/install_browser.sh

# Debian's nginx: the published-site test (tests/browser/test_publish.py) serves a `publish` output with it.
site-deps:
	bash scripts/install_nginx.sh

build: setup browser-deps js-deps
	$(BIN)/python scripts/build_site.py

# The wheel and sdist, carrying build/site as package data (assembler/_site/): `pip install dist/*.whl` serves the
# viewer with no npm, Chromium or network.
dist: setup build
	$(BIN)/python scripts/build_dist.py

PORT ?= 8765

run: setup build
	$(BIN)/python -m perf.demo build/demo/demo-session.jsonl
	$(BIN)/transcript-assembler stats build/demo/demo-session.jsonl
	@echo "Viewer: http://127.0.0.1:$(PORT)/#session=demo-session  (offline; Ctrl-C stops the server)"
	$(BIN)/transcript-assembler serve build/demo --port $(PORT)

test: setup build site-deps lint
	$(BIN)/python -m pytest -q

test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow" tests/unit tests/property tests/conformance

lint: setup js-deps
	$(BIN)/ruff check assembler definitions tests perf scripts
	$(BIN)/mypy
	npm run --silent lint

bench: setup
	$(BIN)/python -m perf.run --json build/perf/results.json --plots build/perf

bench-browser: setup build
	$(BIN)/python -m perf.run --json build/perf/results.json --plots build/perf --browser

clean:
	rm -rf build dist .pytest_cache

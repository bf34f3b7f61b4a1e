# Quick start: `make demo`, `make test`. Both create .venv when it is absent.
# `make test PYTHON=python3.13` (or a path to an interpreter) uses a venv of its own, named
# after the interpreter: .venv-python3.13; the default python3 uses .venv.
PYTHON ?= python3
VENV := $(if $(filter python3,$(PYTHON)),.venv,.venv-$(notdir $(PYTHON)))
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast lint bench clean fuzz realcode hunt

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) samples/quickstart.py
	$(PY) samples/_summary.py

test: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider

# The edit-test loop: the suite without the tests marked `slow` (fuzzing campaigns, real-code
# corpora, notebooks, subprocesses, samples, deep nesting); `make test` runs everything.
test-fast: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider -m "not slow"

# ruff's checks and formatting (configured in pyproject.toml); `.ci/run` runs it first.
lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

# A long differential fuzzing campaign: `make fuzz N=10000 [SEED=1234]` (random seed when
# SEED is not given; the seed and a summary of failures by class are printed).
N ?= 1000
SEED ?=
fuzz: $(STAMP)
	LAXIFY_FUZZ_N=$(N) LAXIFY_FUZZ_SEED=$(SEED) $(PY) tests/fuzz/campaign.py

# The real-code corpus (tests/realcode): public functions with their own examples, eagerly and
# through to_static; per collection (algorithms, fluids) a table by class (converted, fell
# back, located error, ..., WRONG). `make realcode ARGS="--collection fluids"` runs one.
realcode: $(STAMP)
	$(PY) tests/realcode/run.py $(ARGS)

# The hunt for silent differences in Python numbers (tests/hunt): textbook numeric functions eagerly, through to_static and
# through laxify.checked(jax.jit(laxify.convert(f))); a table by class (same, fallback-same,
# located, crash, hang, WRONG) and every row that is not the same.
hunt: $(STAMP)
	$(PY) tests/hunt/run.py --quiet

# The split fallback's table runs at N = 100 only here (`$(PY) benchmarks/split.py` for both N).
bench: $(STAMP)
	$(PY) benchmarks/run.py
	$(PY) benchmarks/conversion.py
	$(PY) benchmarks/split.py --quick

clean:
	rm -rf .venv .venv-* build *.egg-info

# Quick start: `make demo`, `make test`. Both create .venv when it is absent.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) samples/quickstart.py

test: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider

bench: $(STAMP)
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) build *.egg-info

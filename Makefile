# normbench developer targets. `make setup` then `make test` on a fresh machine.
VENV ?= .venv
PY := $(VENV)/bin/python
NB := $(VENV)/bin/normbench

.PHONY: setup test smoke lint bench bench-compare gpu-check clean

setup:
	bash scripts/setup.sh

test:
	$(PY) -m pytest -q

smoke:
	$(NB) run suites/quick.toml --quiet
	$(NB) report latest

lint:
	$(PY) -m ruff check normbench tests
	$(PY) -m ruff format --check normbench tests

clean:
	rm -rf .pytest_cache build *.egg-info

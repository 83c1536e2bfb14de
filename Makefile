# normbench developer targets. `make setup` then `make test` on a fresh machine.
VENV ?= .venv
PY := $(VENV)/bin/python
NB := $(VENV)/bin/normbench

.PHONY: setup test smoke lint bench bench-compare bench-ray gpu-check clean selfcheck selfcheck-bench process-state

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

# Micro-benchmarks (pytest-benchmark): every norm at a CI shape and normbench's hot paths. `bench` saves a
# JSON under .benchmarks/; `bench-compare` fails when a median is more than BENCH_FAIL slower than the
# last saved run.
BENCH_FAIL ?= median:25%
bench:
	$(PY) -m pytest -q -m bench tests/test_microbench.py --benchmark-enable --benchmark-autosave --benchmark-columns=median,iqr,rounds

bench-compare:
	$(PY) -m pytest -q -m bench tests/test_microbench.py --benchmark-enable --benchmark-compare --benchmark-compare-fail=$(BENCH_FAIL) --benchmark-columns=median,iqr,rounds

# On a machine with a GPU: a short GPU suite and the GPU-only tests (exit 2 without CUDA).
gpu-check:
	VENV=$(VENV) bash scripts/gpu_check.sh

# Scale-out benchmark: one suite under the local and the Ray executor, wall times and speedup (idle machine).
bench-ray:
	$(PY) scripts/bench_ray.py

# Can latency numbers be trusted here? normbench's timer vs torch.utils.benchmark in fresh processes, forward
# and reversed op order (agreement, order-dependence, run-to-run spread). A benchmark, not a test.
selfcheck:
	$(NB) selfcheck

# Issue 16's goals in one command (~3 minutes on 2 cores): agreement, five-run CV, forward vs reversed,
# the 12-case grid's wall time vs a blocked_autorange script, defaults and fast preset.
selfcheck-bench:
	$(PY) scripts/latency_trust.py

# What moves a CPU latency inside one process (history, alignment, cache state, placement), A/B alternating.
process-state:
	$(PY) scripts/process_state.py

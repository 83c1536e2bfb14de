#!/usr/bin/env bash
# make gpu-check: on a machine with a CUDA GPU, run the short GPU suite (suites/gpu-check.toml) and the
# GPU-only tests (pytest -m cuda), then print the report. A few minutes, most of it torch.compile's first
# compilations. Without a GPU it stops with exit 2 (set GPU_CHECK_ALLOW_CPU=1 to run anyway: every case
# is then skipped and every test skipped, which checks only the script itself).
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PY=${PY:-$VENV/bin/python}
RESULTS=${RESULTS:-results}
NB=("$PY" -m normbench)

if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
  echo "gpu-check: torch sees no CUDA device on $(hostname); nothing to check here." >&2
  [ "${GPU_CHECK_ALLOW_CPU:-0}" = 1 ] || exit 2
fi
"$PY" -c 'import torch; print("gpu-check:", torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU", "| torch", torch.__version__, "| CUDA", torch.version.cuda)'

status=0
start=$(date +%s)
"${NB[@]}" run suites/gpu-check.toml --results "$RESULTS" --quiet || status=$?
"${NB[@]}" report latest --results "$RESULTS" || status=$?
"$PY" -m pytest -q -m cuda -rs tests/ || status=$?
echo "gpu-check: finished in $(( $(date +%s) - start )) s, exit $status"
exit $status

#!/usr/bin/env bash
# make setup: create .venv and install normbench editable with its dev extras.
# torch policy: an importable torch >= 2.4 (a user's CUDA build, say) is kept by building the venv on top of
# the interpreter's site-packages; otherwise a CPU build of torch $TORCH_VERSION is installed first, from
# pip's configured wheel folders when they hold one, else from PyTorch's CPU index. Either way the later
# `pip install -e .` sees torch>=2.4 satisfied and never pulls a CUDA build.
set -euo pipefail
PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
TORCH_VERSION=${TORCH_VERSION:-2.13.0}
TORCH_CPU_INDEX=${TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}

torch_ok() {  # $1 = python; true when it imports torch >= 2.4
  "$1" - <<'PYCODE' 2>/dev/null
import sys, torch
major, minor = (int(p) for p in torch.__version__.split(".")[:2])
sys.exit(0 if (major, minor) >= (2, 4) else 1)
PYCODE
}

if [ ! -x "$VENV/bin/python" ]; then
  if torch_ok "$PY"; then
    echo "setup: keeping the torch already installed for $PY ($("$PY" -c 'import torch; print(torch.__version__)'))"
    "$PY" -m venv --system-site-packages "$VENV"
  else
    "$PY" -m venv "$VENV"
  fi
fi
PIP=("$VENV/bin/python" -m pip)
"${PIP[@]}" install -q --upgrade pip >/dev/null 2>&1 || true
if ! torch_ok "$VENV/bin/python"; then
  # A wheel in pip's configured wheel folders (find-links) is a CPU build here: take it without its
  # dependencies (offline), then let pip fetch only those from the index.
  if "${PIP[@]}" install -q --no-index --no-deps "torch==$TORCH_VERSION" 2>/dev/null; then
    "${PIP[@]}" install -q "torch==$TORCH_VERSION"
    echo "setup: installed torch $TORCH_VERSION from a local wheel"
  else
    echo "setup: installing CPU torch $TORCH_VERSION from $TORCH_CPU_INDEX"
    "${PIP[@]}" install -q "torch==$TORCH_VERSION" --index-url "$TORCH_CPU_INDEX" --extra-index-url https://pypi.org/simple
  fi
fi
"${PIP[@]}" install -q -e ".[dev]"
"$VENV/bin/python" -c 'import torch, normbench; print(f"setup: normbench {normbench.__version__}, torch {torch.__version__}")'

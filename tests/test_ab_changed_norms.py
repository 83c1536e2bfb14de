"""Which cases `normbench ab` times: none when the norms package is byte-identical at base, the norms a
changed norm file registers when only such files differ, and every norm when a file that registers none
changes (the registry, the inputs, a private helper) - those can change every implementation's time."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from normbench.ab.sides import changed_norms

NORMS = Path(importlib.util.find_spec("normbench.norms").origin).parent


@pytest.fixture
def base(tmp_path, monkeypatch) -> Path:
    """A base worktree whose normbench/norms is a copy of this tree's (no plugins)."""
    monkeypatch.delenv("NORMBENCH_PLUGINS", raising=False)
    shutil.copytree(NORMS, tmp_path / "normbench" / "norms", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def _edit(base: Path, name: str) -> None:
    path = base / "normbench" / "norms" / name
    path.write_text(path.read_text() + "\n# changed at base\n")


def test_identical_norms_time_nothing(base):
    assert changed_norms(base, base) == set()


def test_a_changed_norm_file_times_the_norms_it_registers(base):
    _edit(base, "rmsnorm.py")
    assert changed_norms(base, base) == {"rmsnorm"}


@pytest.mark.parametrize(
    "shared", ["registry.py", "inputs.py", "closed_form.py", "_variants.py", "__init__.py"]
)
def test_a_changed_shared_file_times_every_norm(base, shared):
    _edit(base, shared)
    assert changed_norms(base, base) is None


def test_a_norm_file_only_at_base_names_its_norm(base):
    (base / "normbench" / "norms" / "oldnorm.py").write_text("# a norm head no longer has\n")
    assert changed_norms(base, base) == {"oldnorm"}

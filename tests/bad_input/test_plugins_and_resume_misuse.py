"""Hostile and careless use of plugins, implementations and resume after change ends as one clear line (or a
failed case), never exit 0 with nothing run or a wrong number stored ok: plugins taking built-in names or
exiting at import, outputs of the wrong shape, sys.exit inside a case, case ids that drifted."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from _stores import create_store
from conftest import tiny_latency_suite

from normbench.core.errors import NormbenchError

PLUGIN = {"NORMBENCH_PLUGINS": "normbench_careless_plugins"}


def _suite(tmp_path: Path, norms: str = '["layernorm:module"]') -> Path:
    path = tmp_path / "s.toml"
    path.write_text("threads = 1\n" + tiny_latency_suite(norms=norms))
    return path


# -- 4. a plugin may not silently replace a built-in ----------------------------------------------------
def test_a_plugin_taking_a_builtin_name_is_refused_unless_allowed_and_recorded(tmp_path, normbench_proc):
    _suite(tmp_path)
    refused = normbench_proc("run", "s.toml", "--quiet", extra_env={**PLUGIN, "NB_SHADOW": "1"})
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert (
        "error: plugin 'normbench_careless_plugins' (from NORMBENCH_PLUGINS) registers norm 'layernorm', "
        "a name normbench registers: refused" in refused.stderr
    )
    assert not (tmp_path / "results").exists()

    allowed = normbench_proc(
        "run", "s.toml", "--quiet", "--allow-override", extra_env={**PLUGIN, "NB_SHADOW": "1"}
    )
    assert allowed.returncode == 0, allowed.stderr
    (run,) = (tmp_path / "results").iterdir()
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["overrides"] == [
        "norm 'layernorm': normbench's replaced by plugin 'normbench_careless_plugins' (from NORMBENCH_PLUGINS)"
    ]
    # resuming without the plugin would finish the run with the real LayerNorm: refused
    resumed = normbench_proc("run", "--resume", run.name)
    assert (
        resumed.returncode == 2 and "cannot resume: plugin overrides differ from the run's" in resumed.stderr
    )


def test_sys_exit_at_a_plugins_import_is_an_error_not_a_green_run(tmp_path, normbench_proc):
    _suite(tmp_path)
    done = normbench_proc("run", "s.toml", extra_env={**PLUGIN, "NB_EXIT_AT_IMPORT": "1"})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        "plugin 'normbench_careless_plugins' (from NORMBENCH_PLUGINS) called sys.exit(0) while importing"
        in (done.stderr)
    )
    assert not (tmp_path / "results").exists()


def test_a_plugin_parsing_argv_at_import_sees_only_its_own_name(tmp_path, normbench_proc):
    _suite(tmp_path)
    done = normbench_proc("run", "s.toml", "--quiet", extra_env={**PLUGIN, "NB_ARGPARSE": "1"})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        "normbench_careless_plugins: error: the following arguments are required: --checkpoint" in done.stderr
    )
    assert "normbench: error" not in done.stderr  # it does not speak as normbench
    assert "called sys.exit(2) while importing" in done.stderr


# -- 5, 6. the implementation contract, and sys.exit inside a case ----------------------------------------
@pytest.fixture
def careless_norm():
    """A norm without a float64 reference whose implementations break the output contract, and one whose
    build calls sys.exit(0); registered for one test."""
    from normbench.norms.registry import NORMS, Built, Norm, impl, register_norm

    @register_norm
    class Careless(Norm):
        name = "careless"

        @impl("first_row", baseline=True)
        def first_row(self, hidden, *, eps, dtype, device):
            return Built(lambda x: x[:1] * 1.0, [])

        @impl("total")
        def total(self, hidden, *, eps, dtype, device):
            return Built(lambda x: x.sum(), [])

        @impl("upcast")
        def upcast(self, hidden, *, eps, dtype, device):
            return Built(lambda x: x.double(), [])

        @impl("exits")
        def exits(self, hidden, *, eps, dtype, device):
            sys.exit(0)

        def bytes_moved(self, impl, tokens, hidden, itemsize, mode):
            return 2 * tokens * hidden * itemsize

    yield
    NORMS.remove("careless")


def test_wrong_outputs_and_sys_exit_in_a_case_are_failed_cases(careless_norm, tmp_path, cli):
    from normbench.results.store import read_runs

    suite = _suite(tmp_path, norms='["careless"]')
    done = cli("run", suite, "--quiet", "--results", tmp_path / "results")
    assert done.exit_code == 1, done.output
    frame, (manifest,) = read_runs(tmp_path / "results", ["latest"])
    errors = frame.drop_duplicates("case_id").set_index("impl")["error"]
    assert set(frame["status"]) == {"failed"} and manifest["status"] == "complete"
    assert errors["first_row"] == (
        "ValueError: the implementation returned a (1, 16) float32 tensor on cpu; an implementation must "
        "return its input's shape, dtype and device ((8, 16) float32 on cpu)"
    )
    assert "returned a () float32 tensor" in errors["total"]
    assert "returned a (8, 16) float64 tensor" in errors["upcast"]
    assert errors["exits"] == "the case called sys.exit(0)"
    assert not (frame["metric"] == "time").any()  # nothing was timed


# -- 2. resume keyed on the recorded case ids: data that changed -------------------------------------------
def _corpus(folder: Path, word: str) -> None:
    folder.mkdir(exist_ok=True)
    for i in range(10):
        (folder / f"f{i}.txt").write_text(f"{word} of text. " * 120)


def _stored_stability_run(tmp_path: Path, corpus_dir: str) -> tuple[Path, str]:
    """A run of one stability case on `corpus_dir`, stored (manifest only) as `run` would create it."""
    from normbench.executors.session import new_manifest, plan_run

    text = 'name = "c"\n[[bench]]\nkind = "stability"\nnorms = ["layernorm"]\n[bench.params]\n'
    (tmp_path / "c.toml").write_text(text + f'depth = 1\nd = 8\nheads = 1\ncorpus_dir = "{corpus_dir}"\n')
    results = tmp_path / "results"
    plan = plan_run(str(tmp_path / "c.toml"), results, resume=None, shard=None, only=None, say=print)
    manifest = new_manifest(plan, "RUN", {}, "2026-12-01T00:00:00+00:00")
    manifest.sessions = [{"threads": 1}]
    create_store(results, manifest.to_dict())
    return results, "RUN"


def test_resume_refuses_when_the_text_under_corpus_dir_changed(tmp_path):
    from normbench.data import corpus
    from normbench.executors.session import plan_run

    _corpus(tmp_path / "corpus", "words")
    results, run_id = _stored_stability_run(tmp_path, str(tmp_path / "corpus"))
    _corpus(tmp_path / "corpus", "other words")
    corpus.read_digest.cache_clear()
    with pytest.raises(NormbenchError) as info:
        plan_run(None, results, resume=run_id, shard=None, only=None, say=print)
    message = str(info.value)
    assert "cannot resume: 1 of 1 recorded cases no longer expand to the ids the run recorded" in message
    assert "same parameters, but what else defines the case changed: now {'data': '" in message
    assert f"(the text under corpus_dir '{tmp_path / 'corpus'}')" in message


def test_resume_from_another_folder_names_the_relative_corpus_dir(tmp_path, monkeypatch):
    from normbench.executors.session import plan_run

    monkeypatch.chdir(tmp_path)
    _corpus(tmp_path / "corpus", "words")
    results, run_id = _stored_stability_run(tmp_path, "corpus")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with pytest.raises(NormbenchError) as info:
        plan_run(None, results, resume=run_id, shard=None, only=None, say=print)
    assert "bench[0].params.corpus_dir: cannot read the corpus in corpus" in str(info.value)


def test_resume_refuses_other_plugin_overrides(tmp_path):
    from normbench.executors.resume import check_overrides
    from normbench.results.manifest import Manifest

    with pytest.raises(NormbenchError, match="recorded: norm 'layernorm': x; now: none"):
        check_overrides(Manifest("RUN", overrides=["norm 'layernorm': x"]), tmp_path)
    check_overrides(Manifest("RUN"), tmp_path)

"""The page state is chosen once per process before torch allocates (a fresh `normbench run` gets huge pages for a
16 MiB case under --pages huge and none under base), the share of huge pages is the closed form of smaps'
counts, the THP settings are read as the kernel writes them, `pages` validates like `threads`, a pages
difference makes timings incomparable, the report warns where huge pages were asked for and not got, and
`run --resume` keeps the run's page state unless --pages says otherwise, as --threads does."""

from __future__ import annotations

import glob
import subprocess
import sys

import pytest

from normbench.analysis.compare.comparability import timing_differences
from normbench.core.errors import NormbenchError
from normbench.timing import pages

MIB = 2**20


def test_share_is_the_overlap_weighted_by_each_mapping_huge_bytes():
    maps = [
        (0, 4 * MIB, 4 * MIB, 4 * MIB),  # all huge
        (4 * MIB, 8 * MIB, 2 * MIB, 4 * MIB),  # half huge, spread evenly
        (8 * MIB, 12 * MIB, 0, 4 * MIB),  # base pages
    ]
    assert pages.huge_share([(0, 4 * MIB)], maps) == 1.0
    assert pages.huge_share([(4 * MIB, 4 * MIB)], maps) == 0.5
    assert pages.huge_share([(8 * MIB, 4 * MIB)], maps) == 0.0
    # 2 MiB all-huge + 4 MiB half-huge + 2 MiB base = (2 + 2 + 0) / 8
    assert pages.huge_share([(2 * MIB, 8 * MIB)], maps) == pytest.approx(0.5)
    assert pages.huge_share([], maps) is None


def test_kernel_settings_are_the_bracketed_choices(tmp_path, monkeypatch):
    (tmp_path / "khugepaged").mkdir()
    (tmp_path / "enabled").write_text("always [madvise] never\n")
    (tmp_path / "defrag").write_text("always defer defer+madvise [madvise] never\n")
    (tmp_path / "khugepaged" / "defrag").write_text("1\n")
    monkeypatch.setattr(pages, "THP_DIR", tmp_path)
    assert pages.kernel_thp() == {
        "thp_enabled": "madvise",
        "thp_defrag": "madvise",
        "thp_khugepaged_defrag": "1",
    }
    assert pages.default_state() == "huge"
    (tmp_path / "enabled").write_text("always madvise [never]\n")
    assert pages.default_state() == "base"
    monkeypatch.setattr(pages, "THP_DIR", tmp_path / "absent")
    assert pages.kernel_thp()["thp_enabled"] == "unknown" and pages.default_state() == "base"


def test_option_then_environment_then_stored_then_suite_then_default(monkeypatch):
    monkeypatch.delenv(pages.ENV_VAR, raising=False)
    monkeypatch.setattr(pages, "default_state", lambda: "huge")
    assert pages.chosen_state() == "huge"
    assert pages.chosen_state(suite="base") == "base"
    assert pages.chosen_state(stored="huge", suite="base") == "huge"  # a resumed run keeps its own
    monkeypatch.setenv(pages.ENV_VAR, "base")
    assert pages.chosen_state(stored="huge", suite="huge") == "base"
    assert pages.chosen_state("huge", stored="base", suite="base") == "huge"
    monkeypatch.setenv(pages.ENV_VAR, "hug")
    with pytest.raises(NormbenchError, match="NORMBENCH_PAGES: 'hug' is not one of huge, base"):
        pages.chosen_state()


def test_suite_key_pages_validates_with_its_key_path(tmp_path):
    from normbench.core.errors import SuiteError
    from normbench.suite.load import load_suite

    path = tmp_path / "bad.toml"
    body = '[[bench]]\nkind = "latency"\nnorms = ["layernorm"]\n[bench.params]\ntokens = 8\nd = 8\n'
    path.write_text('name = "bad"\npages = "hug"\n' + body)
    with pytest.raises(SuiteError) as err:
        load_suite(path)
    assert "pages" in str(err.value) and "hug" in str(err.value)
    path.write_text('name = "ok"\npages = "base"\n' + body)
    assert load_suite(path).pages == "base"


def test_a_pages_difference_is_a_timing_difference():
    base = {"cpu": "x", "pages": "huge"}
    assert timing_differences(base, dict(base, pages="base"), set()) == ["pages: huge -> base"]
    assert timing_differences(base, dict(base, pages="base"), {"pages"}) == []
    assert timing_differences(base, dict(base), set()) == []


def _run_case(tmp_path, child_env, state: str, **env) -> dict:
    results = tmp_path / state
    args = ["run", "--bench", "latency", "--norms", "identity:copy", "--tokens", "2048", "--d", "2048"]
    args += ["--accuracy-rows", "0", "--memory", "false", "--copy-probe", "false"]  # full preset, little else
    args += ["--samples", "3", "--min-run-s", "0", "--pages", state, "--quiet"]
    proc = subprocess.run(
        [sys.executable, "-m", "normbench", *args, "--results", str(results)],
        env=child_env(**env),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    import pandas as pd

    frame = pd.concat(pd.read_parquet(p) for p in glob.glob(f"{results}/*/parts/*.parquet"))
    rows = frame[frame["metric"] == "huge_page_share"]
    assert len(rows) == 1
    return {"share": float(rows["value"].iloc[0]), "label": rows["pages"].iloc[0]}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="smaps and prctl are Linux's")
def test_fresh_run_gets_the_page_state_it_asks_for(tmp_path, child_env):
    # torch's variable inherited as 1 (a huge parent): base must still win, before the first allocation
    base = _run_case(tmp_path, child_env, "base", THP_MEM_ALLOC_ENABLE="1")
    assert base == {"share": 0.0, "label": "base"}
    if pages.kernel_thp()["thp_enabled"] not in ("always", "madvise"):
        pytest.skip(f"the kernel gives no huge pages (enabled = {pages.kernel_thp()['thp_enabled']})")
    huge = _run_case(tmp_path, child_env, "huge")
    # 16 MiB tensors: a 2 MiB-unaligned block still has 7 of its 9 frames whole (share 0.875); a share
    # above 0 can only come from THP_MEM_ALLOC_ENABLE read before the process's first allocation
    assert huge["label"] == "huge" and huge["share"] > 0.5, huge


def test_report_warns_where_huge_pages_were_asked_for_and_not_obtained():
    import pandas as pd
    from latency_helpers import make_case

    from normbench.benches.latency import Latency
    from normbench.core.tables import ReportOptions

    case = make_case("latency", "rmsnorm", "module", tokens=8, d=16)
    base = {
        **case.params,
        "case_id": "c",
        "norm": "rmsnorm",
        "impl": "module",
        "status": "ok",
        "sample": None,
    }
    rows = [("time_median", 2e-6), ("time_min", 1e-6), ("time_iqr", 0.0), ("huge_pages_low", 1.0)]
    frame = pd.DataFrame([{**base, "unit": "", "metric": m, "value": v} for m, v in rows])
    notes = Latency().report(frame, ReportOptions(machine="test"))[0].notes
    assert any(n.startswith("⚠ Huge pages asked for") and "rmsnorm:module 8x16" in n for n in notes)
    frame.loc[frame["metric"] == "huge_pages_low", "value"] = 0.0
    notes = Latency().report(frame, ReportOptions(machine="test"))[0].notes
    assert not any("Huge pages" in n for n in notes)


def test_a_bad_page_state_is_a_one_line_error(cli):
    result = cli("run", "quick", "--pages", "hug", "--dry-run")
    assert result.exit_code == 2 and "--pages: 'hug' is not one of huge, base" in result.stderr
    result = cli("run", "quick", "--dry-run", env={"NORMBENCH_PAGES": "x"})
    assert result.exit_code == 2 and "NORMBENCH_PAGES: 'x' is not one of huge, base" in result.stderr


def _normbench(child_env, *args, **env):
    proc = subprocess.run(
        [sys.executable, "-m", "normbench", *map(str, args)],
        env=child_env(**env),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def _recorded_states(results) -> dict[str, set[str]]:
    import pandas as pd

    frame = pd.concat(pd.read_parquet(p) for p in glob.glob(f"{results}/*/parts/*.parquet"))
    labelled = frame[frame["pages"].notna()]
    return {case: set(group["pages"]) for case, group in labelled.groupby("case_id")}


@pytest.mark.parametrize("asked", ["suite", "option"])
def test_resume_restores_the_runs_page_state(tmp_path, tiny_suite, child_env, asked):
    """Resumed in a process whose default would be huge (the kernel's madvise), a base run (`pages =
    "base"`, or --pages base) stays base in every case; an explicit --pages is used, recorded per session
    and warned about."""
    from normbench.results.store import RunStore

    suite = tmp_path / "base.toml"
    key = 'pages = "base"\n' if asked == "suite" else ""
    suite.write_text(key + tiny_suite(name="base", sweep="tokens = [8]\nd = [16, 32]"))
    results = tmp_path / "results"
    option = ["--pages", "base"] if asked == "option" else []
    _normbench(child_env, "run", suite, *option, "--quiet", "--results", results)
    (run_dir,) = results.iterdir()
    parts = sorted((run_dir / "parts").glob("*.parquet"))
    for part in parts[: len(parts) // 2]:
        part.unlink()
    proc = _normbench(child_env, "run", "--resume", run_dir.name, "--results", results)
    assert "different environment" not in proc.stderr, proc.stderr
    states = _recorded_states(results)
    assert len(states) == len(parts) and all(s == {"base"} for s in states.values()), states
    store = RunStore.open(results, run_dir.name)
    assert [s["pages"] for s in store.manifest["sessions"]] == ["base", "base"]

    parts[0].unlink()
    proc = _normbench(child_env, "run", "--resume", run_dir.name, "--pages", "huge", "--results", results)
    assert "pages: base -> huge" in proc.stderr, proc.stderr
    assert _recorded_states(results)[parts[0].stem] == {"huge"}
    store = RunStore.open(results, run_dir.name)
    assert [s["pages"] for s in store.manifest["sessions"]] == ["base", "base", "huge"]

"""The machine-speed canary: reference() is the fastest reading of the process, a CPU latency case stores the
slower of its two readings and that over the reference (exactly, under scripted readings), the fast preset
stores neither, and the report and summary name the cases timed at a slowdown of 1.25 or more, not 1.15,
pointing to a section of the methodology that exists."""

from __future__ import annotations

import math
import subprocess
import sys

import pandas as pd
import pytest
from latency_helpers import make_case, run

from normbench.timing import canary


@pytest.fixture
def scripted(monkeypatch):
    """measure_canary returns the given readings in turn; the process has seen none before."""

    def script(*readings: float):
        values = iter(readings)
        monkeypatch.setattr(canary, "measure_canary", lambda: next(values))
        monkeypatch.setattr(canary, "_fastest", {})

    return script


def test_reference_is_the_fastest_reading_and_the_first_use_takes_three(scripted):
    scripted(5e-5, 3e-5, 4e-5, 2e-5, 6e-5)
    assert canary.reference() == 3e-5  # the three first readings: 5, 3, 4
    assert canary.reference() == 3e-5  # no more readings once there is a reference
    assert canary.read() == 2e-5 and canary.reference() == 2e-5  # a faster reading lowers it
    assert canary.read() == 6e-5 and canary.reference() == 2e-5  # a slower one does not raise it


def test_a_cpu_case_stores_the_slower_reading_over_the_process_best(scripted):
    # 3 reference readings (best 4e-5), then the case's before and after
    scripted(5e-5, 4e-5, 4.5e-5, 6e-5, 5e-5)
    m, rows, status, error = run("latency", "layernorm", "module", tokens=8, d=16)
    assert status == "ok", error
    assert m["canary_time"] == 6e-5
    assert m["machine_slowdown"] == pytest.approx(6e-5 / 4e-5)
    units = {r["metric"]: r["unit"] for r in rows}
    assert units["canary_time"] == "s" and units["machine_slowdown"] == "ratio"
    # the canary's input and parameters stay alive beside the case: counted as the harness's own bytes
    assert m["resident_extra_bytes"] >= (512 * 256 + 2 * 256) * 4


def test_a_real_reading_is_finite_and_never_below_the_process_best():
    m, _, status, error = run("latency", "rmsnorm", "module", tokens=8, d=16)
    assert status == "ok", error
    assert 0 < m["canary_time"] < 1 and math.isfinite(m["machine_slowdown"])
    assert m["machine_slowdown"] >= 1.0
    assert m["canary_time"] / m["machine_slowdown"] == pytest.approx(canary.reference())


def test_the_fast_preset_stores_no_canary(scripted):
    scripted()  # any reading would raise StopIteration and fail the case
    m, _, status, error = run("latency", "layernorm", "module", tokens=8, d=16, preset="fast")
    assert status == "ok", error
    assert "canary_time" not in m and "machine_slowdown" not in m


def test_the_canary_module_is_torch_free_at_import():
    code = "import sys, normbench.timing.canary; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _frame(slowdowns: dict[str, float]) -> pd.DataFrame:
    """A latency frame with one ok case per implementation and its machine_slowdown."""
    rows = []
    for impl, slowdown in slowdowns.items():
        case = make_case("latency", "layernorm", impl, tokens=8, d=16)
        base = {**case.params, "case_id": impl, "norm": "layernorm", "impl": impl, "status": "ok"}
        base["sample"] = None
        for metric, value in (
            ("time_median", 2e-6),
            ("time_min", 1e-6),
            ("time_iqr", 0.0),
            ("machine_slowdown", slowdown),
        ):
            rows.append({**base, "unit": "", "metric": metric, "value": value})
    return pd.DataFrame(rows)


def _notes_and_headline(frame):
    from normbench.benches.latency import Latency
    from normbench.core.tables import ReportOptions

    opts = ReportOptions(machine="test")
    return Latency().report(frame, opts)[0].notes, Latency().headline(frame, opts)


def test_report_names_the_cases_timed_on_a_slowed_machine():
    notes, headline = _notes_and_headline(_frame({"module": 1.3, "functional": 1.15}))
    slowed = [n for n in notes if "slower than its own best" in n]
    assert len(slowed) == 1
    line = slowed[0]
    assert line.startswith("⚠ 1 of 2 cases") and "worst 1.30×" in line
    assert "layernorm:module 8x16 1.30×" in line and "functional" not in line
    assert "docs/methodology.md, Machine speed" in line
    assert any("1 on a slowed machine (up to 1.30×)" in h for h in headline)


def test_report_is_silent_below_the_flag():
    notes, headline = _notes_and_headline(_frame({"module": 1.2, "functional": 1.0}))
    assert not any("slower than its own best" in n for n in notes)
    assert not any("slowed machine" in h for h in headline)


def test_the_section_the_report_points_to_exists():
    from conftest import REPO

    assert "\n### Machine speed\n" in (REPO / "docs" / "methodology.md").read_text()


@pytest.mark.parametrize("device,preset", [("cuda", "full"), ("cpu", "fast")])
def test_no_reading_on_a_gpu_or_under_the_fast_preset(scripted, device, preset):
    from normbench.benches._latency.process import machine_speed_reading, machine_speed_rows

    scripted()  # a reading would raise StopIteration
    reading = machine_speed_reading({"device": device, "preset": preset})
    assert reading is None and machine_speed_rows(reading, reading) == []


def test_the_fast_preset_stores_no_page_rows(scripted):
    """`fast` times only: the huge-page rows (a read of /proc/self/smaps, ~12 ms) are left out like the canary."""
    m, _, status, error = run("latency", "layernorm", "module", tokens=8, d=16, preset="fast")
    assert status == "ok", error
    assert "huge_page_share" not in m and "time_median" in m

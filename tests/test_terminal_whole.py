"""What a terminal shows is never cut: at 80 and 120 columns no line of `report`, `list`, `compare` or an
ad-hoc run's summary ends in '…' (or has a cell cut before its '|'), and the report's lines fit the width;
the default view follows the README's question table (head to head, then Latency, within 80 lines)."""

from __future__ import annotations

import re

import _plot_frames as frames
import pytest
from _stores import create_store
from typer.testing import CliRunner

from normbench.cli import app
from normbench.core.case import Case, case_id

CUT = re.compile(r"…\s*(\|\s*)?$")  # a line, or a table cell, that ends where text was cut
WIDTHS = (80, 120)
LONG_REASON = (
    "apex.normalization not importable: ModuleNotFoundError: No module named 'apex' (install NVIDIA Apex "
    "with its C++ extensions to time FusedLayerNorm and FusedRMSNorm)"
)


def _invoke(*args, width: int) -> str:
    result = CliRunner().invoke(app, [*map(str, args)], env={"COLUMNS": str(width)})
    assert result.exit_code in (0, 1, 3), result.output
    return result.stdout


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """The figures' latency and init rows (nine implementations, four panels, one-shape settings), a run
    of unavailable kernels whose reason is long, and a real three-shape ad-hoc latency run beside them."""
    root = tmp_path_factory.mktemp("whole")
    store = create_store(root, {"run_id": "figs", "suite": "figs", "env": frames.ENV})
    frames._latency(store)
    frames._init(store)
    store = create_store(root, {"run_id": "figs-more", "suite": "figs", "env": frames.ENV})
    for impl in ("apex", "liger"):
        params = {"tokens": 512, "d": 256, "dtype": "fp32", "mode": "fwd"}
        case = Case("latency", "layernorm", impl, params, 0, case_id("latency", "layernorm", impl, params))
        store.write_case(case, [], "unavailable", LONG_REASON)
    adhoc = CliRunner().invoke(
        app,
        ["run", "--bench", "latency", "--norms", "layernorm:module,rmsnorm:module", "--tokens", "8"]
        + ["--d", "16,32,64", "--samples", "3", "--results", str(root)],
        env={"COLUMNS": "80"},
    )
    assert adhoc.exit_code == 0, adhoc.output
    return root, adhoc.stdout


@pytest.mark.parametrize("width", WIDTHS)
def test_no_report_line_is_cut_or_wider_than_the_terminal(results, width):
    root, _ = results
    adhoc = _invoke("list", "runs", "--results", root, width=width).split()
    adhoc = next(w for w in adhoc if "adhoc" in w)
    for runs in (["figs", "figs-more"], [adhoc]):
        text = _invoke("report", *runs, "--results", root, width=width)
        lines = text.splitlines()
        assert not [line for line in lines if CUT.search(line)], text
        assert max(map(len, lines)) <= width, [line for line in lines if len(line) > width]
        assert len(lines) <= 80
    summary = _invoke("report", "figs", "figs-more", "--results", root, width=width)
    assert "No module named 'apex' (install NVIDIA" in " ".join(summary.split())  # the whole reason


def test_list_compare_and_an_adhoc_summary_are_never_cut(results):
    root, adhoc_summary = results
    assert not [line for line in adhoc_summary.splitlines() if CUT.search(line)], adhoc_summary
    for width in WIDTHS:
        for args in (["list"], ["list", "runs", "--results", root], ["compare", "figs", "figs-more"]):
            extra = ["--results", root] if args[0] == "compare" else []
            text = _invoke(*args, *extra, width=width)
            assert not [line for line in text.splitlines() if CUT.search(line)], text


def test_the_default_view_answers_the_readme_questions_first(results):
    """Norms head to head, then Latency: the README's first two questions, within the 80 lines."""
    root, _ = results
    text = _invoke("report", "figs", "--results", root, width=120)
    titles = re.findall(r"^### (.*)$", text, re.M)
    assert titles[0].startswith("Norms head to head") and titles[1].startswith("Latency"), titles
    assert len(text.splitlines()) <= 80


def test_the_readme_question_table_is_the_view_order():
    """The README's "which table answers which question" lists its tables in TABLE_ORDER's order."""
    from pathlib import Path

    from normbench.analysis.terminal import TABLE_ORDER

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    block = readme.split("**Which table answers which question**")[1].split("\n\n")[1]
    tables = [row.split("|")[3].strip() for row in block.splitlines()[2:]]
    ranks = [next(i for i, p in enumerate(TABLE_ORDER) if t.startswith(p)) for t in tables]
    assert ranks == sorted(ranks) and len(ranks) == len(tables), tables

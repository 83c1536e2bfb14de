"""Fitting tables to a terminal: the github width is counted exactly as tabulate renders it, a unit in a
header gets its own line, a chosen table too tall for the budget shows its first rows (and says so), and a
column of seconds is printed in one unit with three significant figures."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from normbench.analysis.fit import fit_table, rendered_width
from normbench.analysis.terminal import LINE_BUDGET, Selection, terminal_report
from normbench.core.tables import Table, column_unit, in_unit


def test_the_counted_width_is_the_rendered_one():
    tabulate = pytest.importorskip("tabulate")
    rng = random.Random(1)
    for _ in range(200):
        columns = {
            "".join(rng.choice("ab: µ⚠\n") for _ in range(rng.randint(1, 14))) + str(j): [
                "".join(rng.choice("xy µ—⚠ ") for _ in range(rng.randint(0, 20))) for _ in range(3)
            ]
            for j in range(rng.randint(1, 5))
        }
        frame = pd.DataFrame(columns)
        text = tabulate.tabulate(
            frame, headers="keys", tablefmt="github", showindex=False, disable_numparse=True
        )
        assert rendered_width(frame) == max(map(len, text.splitlines()))


def test_a_unit_in_a_header_gets_its_own_line():
    table = Table(
        "t", pd.DataFrame({"shape": ["512×256"], "layernorm:functional (µs)": ["32.0"]}), keys=["shape"]
    )
    (part,) = fit_table(table, 120)
    assert "layernorm:\nfunctional\n(µs)" in part.frame.columns


def test_a_chosen_table_too_tall_shows_its_first_rows():
    frame = pd.DataFrame({"case": [f"c{i}" for i in range(200)], "value": [str(i) for i in range(200)]})
    text = terminal_report(
        [Table("Big: rows", frame, keys=["case"])], [], "github", 80, Selection(tables=["big"])
    )
    lines = text.splitlines()
    assert len(lines) <= LINE_BUDGET and "| c0 " in text and "| c199 " not in text
    assert "of 200 rows (`--full`: every row)" in text


def test_one_unit_per_column_at_three_significant_figures():
    unit, scale = column_unit([18e-3, 562e-6, 1.44e-3, None])
    assert (unit, scale) == ("ms", 1e-3)
    assert [in_unit(v, scale) for v in (18.045e-3, 562e-6, 1.4399e-3, None, 99.96e-3)] == [
        "18.0",
        "0.562",
        "1.44",
        "—",
        "100",
    ]

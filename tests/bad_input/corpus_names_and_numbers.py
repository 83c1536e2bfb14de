"""Bad-input attempts on names and numbers that one command shows (names, numbers that would switch the gate
off, a manifest's declared types, JSON exports of NaN), as data for test_bad_input_corpus.py. Outputs onto
devices, pipes and links, concurrent upgrades, empty settings and signals need real files or processes:
test_output_rule.py, test_upgrade_lock.py, test_empty_settings.py, test_ray_sigterm_at_connect.py."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from corpus import SUITE, Attempt, edit_manifest, no_results, run_untouched

NAME_RULE = "it names a folder under --results: letters, digits and . _ - + = @ only"


def _bad_name(option: str, value: str, why: str) -> Attempt:
    return Attempt(
        f"name{option}-{why}",
        ["run", "s.toml", "--quiet", option, value],
        2,
        f"error: {option} '{value}': {NAME_RULE}",
        files={"s.toml": SUITE},
        disk=no_results,
    )


def _gate_off(option: str, value: str, wanted: str) -> Attempt:
    """An option value that would make every comparison pass; refused before any run is read."""
    return Attempt(
        f"compare{option}={value}",
        ["compare", "RUN", "RUN", option, value],
        2,
        f"error: {option} {float(value)!r}: expected a finite number {wanted}",
        needs_run=True,
        disk=run_untouched,
    )


def _latency_stat_nan(cwd: Path, run: Path) -> None:
    """One case's spread (time_iqr, time_p20) and another case's median set to NaN in place (the parts
    rewritten with their metadata and checksums): what a failed statistic stores."""
    parts = sorted((run / "parts").glob("*.parquet"))
    for part, metrics in ((parts[0], {"time_iqr", "time_p20"}), (parts[1], {"time_median"})):
        table = pq.read_table(part)
        values = [
            math.nan if m in metrics else v
            for m, v in zip(
                table.column("metric").to_pylist(), table.column("value").to_pylist(), strict=True
            )
        ]
        column = table.column_names.index("value")
        table = table.set_column(column, table.schema.field("value"), pa.array(values, pa.float64()))
        pq.write_table(table, part, write_page_checksum=True)


def _strict_json(name: str):
    """The file is JSON by RFC 8259: no NaN or Infinity tokens (json.loads accepts them by default)."""

    def check(cwd: Path) -> None:
        def refuse(token):
            raise AssertionError(f"{name} holds {token}, which is not JSON")

        json.loads((cwd / name).read_text(), parse_constant=refuse)

    return check


NAMES_AND_NUMBERS = [
    _bad_name("--run-id", "   ", "blank"),
    _bad_name("--run-id", " pr-17", "leading-space"),
    _bad_name("--run-id", "-rf", "leading-dash"),
    _bad_name("--run-id", "a,b", "comma"),
    _bad_name("--run-id", "a b", "space"),
    _bad_name("--tag", " ", "blank"),
    _bad_name("--tag", "main branch", "space"),
    _gate_off("--alpha", "0", "> 0 and < 1"),
    _gate_off("--alpha", "-1", "> 0 and < 1"),
    _gate_off("--alpha", "nan", "> 0 and < 1"),
    _gate_off("--alpha", "1", "> 0 and < 1"),
    _gate_off("--factor", "1", "> 1"),
    _gate_off("--factor", "0.5", "> 1"),
    _gate_off("--factor", "inf", "> 1"),
    _gate_off("--factor", "nan", "> 1"),
    *(
        Attempt(
            f"selfcheck-min-run-time={value}",
            ["selfcheck", "--min-run-time", value],
            2,
            f"error: --min-run-time {value}: expected a finite number >= 0.01 and <= 600",
        )
        for value in ("nan", "inf")
    ),
    Attempt(
        "manifest-declares-value-a-string-report",
        ["report", "RUN"],
        2,
        "damaged manifest: 'columns.value' is declared string; the result schema's value is float64",
        needs_run=True,
        prepare=lambda cwd, run: _declare(run, value="string"),
    ),
    Attempt(
        "manifest-declares-value-a-string-compare",
        ["compare", "RUN", "RUN"],
        2,
        "damaged manifest: 'columns.value' is declared string; the result schema's value is float64",
        needs_run=True,
        prepare=lambda cwd, run: _declare(run, value="string"),
    ),
    Attempt(
        "manifest-declares-sample-a-float",
        ["report", "RUN", "--format", "json"],
        2,
        "'columns.sample' is declared float64; the result schema's sample is int64",
        needs_run=True,
        prepare=lambda cwd, run: _declare(run, sample="float64"),
    ),
    Attempt(
        "export-gab-of-nan-statistics",
        ["export", "RUN", "-r", "results", "-f", "gab", "-o", "out.json"],
        0,
        "not exported: 1 latency cases (median time not finite)",
        needs_run=True,
        prepare=_latency_stat_nan,
        disk=_strict_json("out.json"),
    ),
    Attempt(
        "export-bmf-of-nan-statistics",
        ["export", "RUN", "-r", "results", "-f", "bmf", "-o", "out.json"],
        0,
        "wrote out.json",
        needs_run=True,
        prepare=_latency_stat_nan,
        disk=_strict_json("out.json"),
    ),
]


def _declare(run: Path, **types: str) -> None:
    manifest = json.loads((run / "manifest.json").read_text())
    edit_manifest(columns={**manifest["columns"], **types})(run.parent.parent, run)

"""Write the rows of one or several runs (shards combined) as one tidy file: every measured value with its
case's parameters as typed columns, numbers as numbers. Parquet keeps the declared types; csv and jsonl
hold plain numbers (null = empty in csv). gab (github-action-benchmark customSmallerIsBetter) and bmf (Bencher
Metric Format) hold each timed case's median time per call in ns with its spread."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from normbench.analysis import ci_exports
from normbench.cli._common import RESULTS_DIR, ExportFormat, cli_errors, err, results_option, runs_argument
from normbench.core.errors import NormbenchError
from normbench.core.jsondata import json_text
from normbench.results.outputs import output_file, write_output
from normbench.results.store import read_runs

NAME = "export"
PANEL = "Results"
FORMATS = ("parquet", "csv", "jsonl", "gab", "bmf")


@cli_errors
def command(
    runs: Annotated[list[str] | None, runs_argument()] = None,
    output: Annotated[Path, typer.Option("--output", "-o", help="The file to write ('-' = stdout).")] = ...,
    fmt: Annotated[
        ExportFormat | None,
        typer.Option(
            "--format",
            "-f",
            help="parquet | csv | jsonl (default: from the file's extension) | gab (github-action-benchmark "
            "customSmallerIsBetter) | bmf (Bencher Metric Format): timed cases, median ns and spread.",
        ),
    ] = None,
    results: Annotated[Path, results_option()] = RESULTS_DIR,
) -> None:
    fmt = fmt or {".parquet": "parquet", ".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl"}.get(
        output.suffix.lower()
    )
    if fmt not in FORMATS:
        raise NormbenchError(f"--format {fmt!r}: one of {', '.join(FORMATS)} (or an -o FILE ending in one)")
    target = output_file(output, "--output", binary=fmt == "parquet")  # before any work

    frame, manifests = read_runs(results, runs or ["latest"])
    note = f"{len(frame)} rows x {frame.shape[1]} columns"
    if fmt in ("gab", "bmf"):
        text, note = _service_json(frame, manifests, fmt)
        data = text.encode()
    elif fmt == "parquet":
        data = _parquet(frame)
    else:
        write_output(target, lambda f: _write_text(frame, fmt, f))
        data = None
    if data is not None:
        write_output(target, lambda f: f.write(data))
    if target.path is None:
        err.print(note, markup=False)
        return
    ids = ", ".join(m["run_id"] for m in manifests)
    err.print(f"wrote {output}: {note} from {ids}", markup=False)


def _parquet(frame) -> bytes:
    """The frame as Parquet bytes: a pipe or a device cannot seek, so the file is made in memory first."""
    import io

    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def _service_json(frame, manifests, fmt: str) -> tuple[str, str]:
    """The gab or bmf JSON text (analysis/ci_exports.py) and what it holds, for the closing line."""

    exported = ci_exports.timings(frame, manifests)
    data = (
        ci_exports.to_github_action_benchmark(exported) if fmt == "gab" else ci_exports.to_bencher(exported)
    )
    return json_text(data, indent=2, ensure_ascii=False) + "\n", exported.summary()


ROWS_AT_ONCE = 20_000  # rows made text at a time: the file's text is never held whole


def _write_text(frame, fmt: str, f) -> None:
    """csv or jsonl, written a slice of rows at a time (one header); the same text as of the whole frame."""
    for start in range(0, max(len(frame), 1), ROWS_AT_ONCE):
        f.write(_text(frame.iloc[start : start + ROWS_AT_ONCE], fmt, header=start == 0).encode())


def _text(frame, fmt: str, header: bool = True) -> str:
    if fmt == "csv":
        return frame.to_csv(index=False, header=header)
    import pyarrow as pa

    rows = pa.Table.from_pandas(frame, preserve_index=False).to_pylist()
    return "".join(json_text(r) + "\n" for r in rows)  # NaN (a failed measurement) is null

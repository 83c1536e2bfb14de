"""Write the rows of one or several runs (shards combined) as one tidy file: every measured value with its
case's parameters as typed columns, numbers as numbers. Parquet keeps the declared types; csv and jsonl
hold plain numbers (null = empty in csv). gab (github-action-benchmark customSmallerIsBetter) and bmf (Bencher
Metric Format) hold each timed case's median time per call in ns with its spread."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from normbench.analysis import ci_exports
from normbench.cli._common import RESULTS_DIR, ExportFormat, cli_errors, complete_runs, err
from normbench.core.errors import NormbenchError
from normbench.results.paths import check_output_file
from normbench.results.store import read_runs

NAME = "export"
PANEL = "Results"
FORMATS = ("parquet", "csv", "jsonl", "gab", "bmf")


@cli_errors
def command(
    runs: Annotated[
        list[str] | None,
        typer.Argument(
            help="Run ids, or 'latest' (default).", show_default=False, autocompletion=complete_runs
        ),
    ] = None,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The file to write ('-' = stdout for csv/jsonl).")
    ] = ...,
    fmt: Annotated[
        ExportFormat | None,
        typer.Option(
            "--format",
            "-f",
            help="parquet | csv | jsonl (default: from the file's extension) | gab (github-action-benchmark "
            "customSmallerIsBetter) | bmf (Bencher Metric Format): timed cases, median ns and spread.",
        ),
    ] = None,
    results: Annotated[Path, typer.Option("--results", "-r", help="Results directory.")] = RESULTS_DIR,
) -> None:
    fmt = fmt or {".parquet": "parquet", ".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl"}.get(
        output.suffix.lower()
    )
    if fmt not in FORMATS:
        raise NormbenchError(f"--format {fmt!r}: one of {', '.join(FORMATS)} (or an -o FILE ending in one)")
    if str(output) == "-" and fmt == "parquet":
        raise NormbenchError("-o -: parquet is binary; give a file name")
    if str(output) != "-":
        check_output_file(output, "--output")  # before any work; never a file of a stored run

    frame, manifests = read_runs(results, runs or ["latest"])
    note = f"{len(frame)} rows x {frame.shape[1]} columns"
    if fmt in ("gab", "bmf"):
        text, note = _service_json(frame, manifests, fmt)
    else:
        text = None if fmt == "parquet" else _text(frame, fmt)
    if str(output) == "-":
        typer.echo(text, nl=False)
        err.print(f"{note}", markup=False)
        return
    tmp = output.with_name(f".{output.name}.tmp")
    try:
        if fmt == "parquet":
            frame.to_parquet(tmp, index=False)
        else:
            tmp.write_text(text)
        os.replace(tmp, output)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise NormbenchError(f"{output}: cannot write ({exc.strerror or exc})") from None
    ids = ", ".join(m["run_id"] for m in manifests)
    err.print(f"wrote {output}: {note} from {ids}", markup=False)


def _service_json(frame, manifests, fmt: str) -> tuple[str, str]:
    """The gab or bmf JSON text (analysis/ci_exports.py) and what it holds, for the closing line."""
    import json

    exported = ci_exports.timings(frame, manifests)
    data = (
        ci_exports.to_github_action_benchmark(exported) if fmt == "gab" else ci_exports.to_bencher(exported)
    )
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n", exported.summary()


def _text(frame, fmt: str) -> str:
    if fmt == "csv":
        return frame.to_csv(index=False)
    import json
    import math

    import pyarrow as pa

    def clean(v):  # NaN (a failed measurement) is not JSON: null
        return None if isinstance(v, float) and not math.isfinite(v) else v

    rows = pa.Table.from_pandas(frame, preserve_index=False).to_pylist()
    return "".join(json.dumps({k: clean(v) for k, v in r.items()}) + "\n" for r in rows)

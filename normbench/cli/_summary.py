"""The report's summary printed after an ad-hoc run (`run --bench ...`): the answer without a second command."""

from __future__ import annotations

from pathlib import Path

from normbench.cli._common import out, terminal_width
from normbench.results.store import read_runs


def print_summary(results: Path, run_id: str) -> None:
    from normbench.analysis.summary import build_summary, summary_text

    frame, manifests = read_runs(results, [run_id])
    if frame.empty:
        return
    lines = summary_text(build_summary(frame, manifests), terminal_width())
    out.print("\n".join(lines), markup=False)

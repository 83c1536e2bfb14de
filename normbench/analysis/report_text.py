"""`normbench report` in one call below its options: read the runs, derive what the summary and the tables
share once, and render them in the chosen format (tables fitted to a width, Markdown with figures, or numeric
records). pandas is imported inside the functions: `normbench --help` never loads it."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from normbench.analysis.derived import with_derived
from normbench.analysis.plots import plot_run
from normbench.core.errors import NormbenchError
from normbench.results.env import machines_of
from normbench.results.outputs import Output
from normbench.results.paths import check_output_dir
from normbench.results.store import read_runs

Say = Callable[[str], None]


def _stderr(text: str) -> None:
    print(text, file=sys.stderr)


@dataclass
class ReportRequest:
    """What the report shows: format, --full, the --bench/--table/--columns selection, the speedup
    reference (norm:impl, else each bench's), the folder for figures (md) and the width to fit."""

    fmt: str = "github"
    full: bool = False
    benches: list[str] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    columns: str | None = None
    speedup_vs: str | None = None
    plots: Path | None = None
    width: int = 120


def report_text(
    results: Path, runs: list[str], request: ReportRequest, target: Output | None = None, say: Say = _stderr
) -> str:
    """The report of `runs` (shards combine) as one text; `target`: where it goes (results/outputs.py's
    output_file, decided before any work), which decides where figures go and how they are linked;
    `say`: where a csv report's warnings go (they cannot go beside its records)."""
    from normbench.analysis.report import build_tables, check_baseline, report_options
    from normbench.analysis.summary import build_summary, summary_text
    from normbench.analysis.terminal import Selection, choose_tables, terminal_report
    from normbench.core.tables import MACHINE_FORMATS, render

    r, fmt, vs, width = request, request.fmt, request.speedup_vs, request.width
    to_file = target is not None and target.path is not None  # not `-o -` (stdout)
    if r.plots is not None and fmt != "md":
        raise NormbenchError("--plots: figures are linked only from a Markdown report (--format md)")
    beside = to_file and target.how != "in_place" and fmt == "md"  # a file, not a device or pipe
    plot_dir = r.plots or (target.path.parent / "plots" if beside else None)
    if plot_dir is not None:
        check_output_dir(plot_dir, "--plots")
    frame, manifests = read_runs(results, runs)
    check_baseline(frame, vs)  # once: the tables below are built with the options made here
    opts = report_options(manifests, vs)  # one per report: the summary and the tables share it
    summary = build_summary(frame, manifests, baseline=vs, opts=opts)
    if r.benches:
        summary = [s for s in summary if s.section in (*r.benches, "run", "warning", "not ok")]
    choice = Selection(r.benches, r.tables, [c for c in (r.columns or "").split(",") if c])
    if fmt in MACHINE_FORMATS:
        text = _records(frame, manifests, fmt, vs, summary, opts, say)
    elif fmt in ("github", "plain") and not r.full:
        tables = build_tables(frame, manifests, baseline=vs, warnings=False, opts=opts)
        text = terminal_report(tables, summary_text(summary, width), fmt, width, choice)
    else:
        tables = build_tables(frame, manifests, baseline=vs, opts=opts)
        chosen = choose_tables(tables, choice) if choice.any else tables
        text = render(chosen, fmt, width)  # --full keeps every column; the notes wrap at the width
        if fmt != "latex" and not choice.tables:  # --table: the tables asked for, nothing else
            text = _summary_block(summary_text(summary, width), fmt) + text
    if fmt == "md":
        text = _markdown(text, frame, manifests, target.path if to_file else None, plot_dir, width)
    return without_local_paths(text)


def _summary_block(lines: list[str], fmt: str) -> str:
    """The summary above the full tables, as the terminal shows it (md: in a text block, aligned)."""
    if fmt == "md":
        return "## Summary\n\n```text\n" + "\n".join(lines) + "\n```\n\n"
    return "Summary\n" + "\n".join(lines) + "\n\n"


def _records(frame, manifests, fmt: str, speedup_vs: str | None, summary, opts, say: Say) -> str:
    """csv/json: one numeric record per case (analysis/records.py); warnings on stderr (csv) or beside
    the records (json), claims verdicts and the summary lines too (json); what the summary derived
    already (opts) is not derived again."""
    from normbench.analysis.records import case_records
    from normbench.analysis.report import claims_table, one_copy_per_case, report_warnings
    from normbench.analysis.summary import summary_records
    from normbench.core.tables import plain_records, write_records

    warnings = opts.once("warnings", lambda: report_warnings(frame, manifests))
    frame = opts.once("one copy per case", lambda: one_copy_per_case(frame))

    records = with_derived(case_records(frame, speedup_vs), frame)
    if fmt == "csv":
        for w in warnings:
            say(f"warning: {w}")
        return write_records(records, fmt)
    claims = opts.once("claims", lambda: claims_table(frame, manifests))
    return write_records(
        records,
        fmt,
        runs=[m["run_id"] for m in manifests],
        warnings=warnings,
        summary=summary_records(summary),
        claims=plain_records(claims.frame) if claims is not None else [],
    )


def _markdown(
    tables_text: str, frame, manifests, output: Path | None, plot_dir: Path | None, width: int
) -> str:
    """One Markdown file for a paper appendix or a pull request: header, tables, claims, and the figures
    when there is a folder for them (--plots, or plots/ beside -o FILE), linked relative to the file."""
    from normbench.analysis.report import markdown_header

    figures = ""
    if plot_dir is not None:
        paths = plot_run(frame, plot_dir, machine=machines_of(manifests))
        base = output.parent if output else Path.cwd()
        figures = "".join(f"![{p.stem}]({Path(os.path.relpath(p, base)).as_posix()})\n\n" for p in paths)
    header = "\n".join(
        "\n".join(textwrap.wrap(line, width, subsequent_indent="  ", break_on_hyphens=False)) or line
        for line in markdown_header(manifests).split("\n")
    )
    return header + tables_text + ("\n## Figures\n\n" + figures if figures else "")


def without_local_paths(text: str) -> str:
    """The report as it may be shared: this machine's working folder and home folder left out of every
    path in it (a case's reason can quote a file)."""
    here = str(Path.cwd())
    home = os.path.expanduser("~")
    if len(here) > 1:
        text = text.replace(here + os.sep, "")
    if len(home) > 1:
        text = text.replace(home + os.sep, "~" + os.sep)
    return text

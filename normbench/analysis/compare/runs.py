"""`normbench compare` in one call: open both sides (run ids, or a run and its saved baseline), read them,
refuse what cannot be compared, compare and render. The command prints what `compare_runs` returns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from normbench.analysis.compare.comment import render_compare_comment
from normbench.analysis.compare.comparability import pooled_env
from normbench.analysis.compare.frames import compare_frames
from normbench.analysis.compare.groups import ORDER_COLUMNS
from normbench.analysis.compare.options import CompareRunsOptions
from normbench.analysis.compare.verdict import (
    comparison_records,
    comparison_table,
    counts,
    exit_code,
    not_compared,
    regressions,
    summary_line,
    verdict_line,
)
from normbench.core.errors import NormbenchError
from normbench.core.tables import Table, render, write_records
from normbench.results import baselines as saved
from normbench.results.store import RunStore, read_stores

# What compare reads of a run: the rest (most of a wide run's columns, parameters copied out of `params` for
# the report's tables) is never decoded; at 3,000 cases reading whole runs was most of compare's time.
COMPARE_COLUMNS = (
    *("run_id", "case_id", "bench", "norm", "impl", "status", "error", "params"),
    *("metric", "unit", "value", "round_set", "data_sha256"),
    *ORDER_COLUMNS,
)


@dataclass
class CompareAnswer:
    text: str  # for stdout, as is
    notes: list[str]  # for stderr, after the text
    exit_code: int
    markdown: str = ""  # the comparison as a pull-request comment (--format md, --markdown)


def compare_runs(base: str | None, new: str | None, opts: CompareRunsOptions, say: Callable[[str], None]):
    """The comparison of BASE with NEW (comma-joined run ids each; with `opts.baseline`, BASE is the new run).
    `say` gets the lines due before the runs are read (which baseline was found)."""
    base_runs, new_runs, base_name = _open_runs(base, new, opts, say)
    new_name = ",".join(s.run_id for s in new_runs)
    base_frame, _ = read_stores(base_runs, COMPARE_COLUMNS)
    new_frame, _ = read_stores(new_runs, COMPARE_COLUMNS)
    _check_distinct(base_runs, new_runs)  # after reading: an old run's refusal says how to upgrade it
    _check_something_in_common(base_frame, new_frame, base_runs[0], new_runs[0])
    result = compare_frames(
        base_frame,
        new_frame,
        pooled_env([_compared_env(s) for s in base_runs]),
        pooled_env([_compared_env(s) for s in new_runs]),
        opts.gate,
    )
    rows, fmt, allowed = result.rows, opts.fmt, opts.allow_incomparable
    verdict = verdict_line(result, allow_incomparable=allowed)
    code = exit_code(result, allow_incomparable=allowed)
    title = f"{base_name} -> {new_name} (factor {opts.gate.factor}, alpha {opts.gate.alpha})"
    notes = []
    markdown = render_compare_comment(rows, verdict, code, title, result.notes)
    if fmt == "csv":  # the records alone on stdout; the verdict and noise notes on stderr
        text = write_records(comparison_records(rows, only_changed=opts.only_changed), fmt)
        notes = [verdict, title, *result.notes]
    elif fmt == "json":
        text = write_records(
            comparison_records(rows, only_changed=opts.only_changed),
            fmt,
            verdict=verdict,
            exit_code=code,
            counts=counts(rows),
            regressions=regressions(rows),
            not_compared=not_compared(rows),
            undetectable=result.undetectable,
            base=base_name.split(","),
            new=new_name.split(","),
            factor=opts.gate.factor,
            alpha=opts.gate.alpha,
            summary=summary_line(rows),
            notes=result.notes,
        )
    elif fmt == "md":  # a pull-request comment or job summary (analysis/compare/comment.py)
        text = markdown
    else:
        shown = comparison_table(rows, only_changed=opts.only_changed)
        table = Table(title, shown, [summary_line(rows), *result.notes])
        text = f"{verdict}\n{render([table], fmt)}\n"
    if code:
        notes.append(verdict.split(";")[0])
    return CompareAnswer(text, notes, code, markdown)


def _compared_env(store) -> dict:
    """The run's environment plus the plugin overrides it ran with (`run --allow-override`): a name a
    plugin replaced holds another implementation's numbers, so runs with other overrides do not compare."""
    return {**store.manifest.get("env", {}), "overrides": tuple(store.manifest.get("overrides") or ())}


def _open_runs(base, new, opts: CompareRunsOptions, say):
    """(base stores, new stores, the base's name): two run lists, or the new run and its saved baseline."""
    results = opts.results
    if not opts.baseline:
        if base is None or new is None:
            raise NormbenchError("compare needs BASE and NEW run ids, or --baseline [NEW]")
        base_runs = _open_side(results, base, "BASE")
        new_runs = _open_side(results, new, "NEW")
        return base_runs, new_runs, base
    if new is not None:
        raise NormbenchError("with --baseline, give only the new run (the baseline is the base)")
    new_runs = _open_side(results, base or "latest", "NEW")
    found = saved.find(
        opts.baselines or saved.BASELINES_DIR,
        new_runs[0].manifest.get("env", {}),
        new_runs[0].manifest.get("suite"),
        any_machine=opts.any_machine,
    )
    mine = saved.machine_fingerprint(new_runs[0].manifest.get("env", {}))
    where = "" if found.fingerprint == mine else f"; another machine than this run's {mine}"
    say(f"baseline: {found.run_id} (machine {found.fingerprint}, suite {found.suite}{where})")
    return [found.store], new_runs, f"baseline {found.run_id}"


def _open_side(results: Path, runs: str, side: str) -> list[RunStore]:
    """One side's runs, each once: a run listed twice (or an alias naming a listed run) would count its
    samples twice, and doubled ties move the rank test (a planted slowdown can pass)."""
    stores = [RunStore.open(results, r) for r in runs.split(",")]
    seen: dict[str, str] = {}
    for given, store in zip(runs.split(","), stores, strict=True):
        if store.run_id in seen:
            also = "" if given == store.run_id else f" (as {given})"
            raise NormbenchError(
                f"{side} {runs}: run {store.run_id} is listed twice{also}; list each run of a side once"
            )
        seen[store.run_id] = given
    return stores


def _check_distinct(base_runs, new_runs) -> None:
    """A run compared with itself passes whatever it holds: a gate built that way can never fail."""
    same = sorted({s.run_id for s in base_runs} & {s.run_id for s in new_runs})
    if same:
        raise NormbenchError(
            f"run {same[0]} is on both sides: compare needs two different runs (a run against itself always "
            "passes); for timings on a pull request, `normbench ab BASE` times base and head in one job"
        )


def _check_something_in_common(base, new, base_store, new_store) -> None:
    """Two runs that share no case (and no bench kind whose cases pool over seeds) have nothing to compare:
    that is bad input, not a pass and not an inconclusive gate."""
    shared_cases = set(base["case_id"].dropna().unique()) & set(new["case_id"].dropna().unique())
    if shared_cases:
        return
    shared_kinds = set(base["bench"].dropna().unique()) & set(new["bench"].dropna().unique())
    if shared_kinds and not base.empty and not new.empty:
        return  # cases pooled over seeds match by parameters; compare names what it could not match
    raise NormbenchError(
        f"runs {base_store.run_id} (suite {base_store.manifest.get('suite')!r}) and {new_store.run_id} "
        f"(suite {new_store.manifest.get('suite')!r}) have no case in common: nothing to compare"
    )

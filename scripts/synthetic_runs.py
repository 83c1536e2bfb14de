"""Two large runs for timing normbench's own commands at scale (compare, report, export, load), without timing
thousands of real cases: a small real run is the template, and each of its cases is written again N/len
times through the run store's own API (RunStore.create, write_case), with one parameter changed so every
case has its own id and rows. The second run is the first's copy with its timing samples moved by a little
noise (deterministic values identical), so `compare` runs its tests on every timed case.

    python scripts/synthetic_runs.py TEMPLATE_RUN_FOLDER OUT_RESULTS --cases 3000

TEMPLATE_RUN_FOLDER: a stored run with cases of the kinds wanted (latency, block, jacobian, init, stability);
OUT_RESULTS gets runs `synthetic-<cases>-base`, `synthetic-<cases>-copy` and `synthetic-<cases>-changed` (the
copy with planted changes: slower, faster, moved deterministic values, failed and missing cases), for
checking that two versions of `compare` mark every case alike. Each run ends with its one-file table, as a
completed `normbench run` does (results/table.py); `--parts-only` leaves it out (a run stopped before the end,
or one an older normbench wrote)."""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from normbench.core.case import Case, case_id  # noqa: E402
from normbench.results.schema import FIXED_COLUMNS  # noqa: E402
from normbench.results.store import RunStore  # noqa: E402

# The parameter each kind varies from copy to copy (any value keeps the case valid for its report).
VARIED = {"latency": "tokens", "block": "tokens", "jacobian": "d", "init": "batches", "stability": "lr"}
MIX = "latency=70,block=10,jacobian=15,init=2,stability=3"  # percent of the cases, as in suites/quick.toml
KEPT = {"metric", "unit", "value", "sample", "step", "session", "node"}


def template_cases(folder: Path) -> list[tuple[dict, list[dict]]]:
    """(first row, rows) of every case of the template run, rows reduced to what a bench returns."""
    store = RunStore.open(folder.parent, folder.name)
    frame = store.read()
    cases = []
    for _, rows in frame.groupby("case_id", sort=True):
        params = json.loads(rows["params"].iloc[0])
        labels = [c for c in rows.columns if c not in FIXED_COLUMNS and c not in params]
        kept = []
        for row in rows.to_dict("records"):
            out = {k: _plain(row[k]) for k in KEPT | set(labels) if k in row}
            kept.append({k: v for k, v in out.items() if v is not None or k in ("value", "sample", "step")})
        cases.append(({k: _plain(v) for k, v in rows.iloc[0].to_dict().items()}, kept))
    return cases


def _plain(v):
    import pandas as pd

    if v is None or v is pd.NA or (isinstance(v, float) and v != v):
        return None
    return v.item() if hasattr(v, "item") else v


def varied(params: dict, kind: str, k: int) -> dict:
    name = VARIED.get(kind)
    if name is None or name not in params:
        return {**params, "copy": k}
    value = params[name]
    if kind == "stability":
        return {**params, "seed": k % 3, name: value * (1 + (k // 3) * 1e-3)}
    return {**params, name: value + k}


def mixed(templates, cases: int, mix: dict[str, float]) -> list:
    """The template cases repeated so that each kind has its share of `cases` (round robin within a kind)."""
    by_kind: dict[str, list] = {}
    for t in templates:
        by_kind.setdefault(t[0]["bench"], []).append(t)
    total = sum(mix.get(k, 0) for k in by_kind)
    out = []
    for kind, items in by_kind.items():
        n = round(cases * mix.get(kind, 0) / total)
        out += [items[i % len(items)] for i in range(n)]
    return out[:cases] + [templates[0]] * max(0, cases - len(out))


def planted(k: int, rows: list[dict], status: str) -> tuple[list[dict], str] | None:
    """The changes of the `-changed` run, by case number: slower (every 7th), faster (11th), a moved
    deterministic value (13th), failed (17th), missing (19th: None). Values only; the ids stay."""
    if k % 19 == 0:
        return None
    if k % 17 == 0:
        return rows, "failed"
    timed = k % 7 == 0 and 1.5 or k % 11 == 0 and 0.6 or None
    out = []
    for r in rows:
        v = r.get("value")
        if v is not None and timed and r.get("unit") == "s" and r.get("sample") is not None:
            r = {**r, "value": v * timed}
        elif v is not None and k % 13 == 0 and r.get("unit") != "s" and r.get("metric") in DETERMINISTIC:
            r = {**r, "value": v * (1 + 1e-3)}
        out.append(r)
    return out, status


DETERMINISTIC = {"rel_err", "final_loss", "output_change", "ffn_grad_norm_of_mean"}


def write_run(
    results: Path,
    run_id: str,
    template: Path,
    cases: int,
    noise: float,
    seed: int,
    mix: dict[str, float],
    plant: bool = False,
    table: bool = True,
) -> None:
    source = RunStore.open(template.parent, template.name)
    templates = mixed(template_cases(template), cases, mix)
    rng = random.Random(seed)
    planned = []
    manifest = {
        k: v for k, v in source.manifest.items() if k not in ("run_id", "cases", "sessions", "status")
    }
    made = []
    for k, (first, rows) in enumerate(templates):
        params = varied(json.loads(first["params"]), first["bench"], k)
        case = Case(
            first["bench"],
            first["norm"],
            first["impl"],
            params,
            0,
            case_id(first["bench"], first["norm"], first["impl"], params),
        )
        planned.append({"case_id": case.case_id, "label": case.label})
        made.append((case, rows, first["status"], first["error"]))
    store = RunStore.create(
        results,
        {**manifest, "run_id": run_id, "cases": planned, "sessions": [], "status": "complete"},
        columns=source.manifest["columns"],
    )
    for k, (case, rows, status, error) in enumerate(made):
        if plant:
            if (changed := planted(k, rows, status)) is None:
                continue
            rows, status = changed
            error = "planted" if status == "failed" else error
        moved = [
            {**r, "value": r["value"] * (1 + rng.gauss(0, noise))}
            if noise and r.get("unit") == "s" and r.get("sample") is not None and r.get("value") is not None
            else r
            for r in rows
        ]
        store.write_case(case, moved, status, error if isinstance(error, str) else None)
    if table:
        store.write_table()  # as a completed `normbench run` does (results/table.py)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("template", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--noise", type=float, default=0.01, help="relative noise of the copy's samples")
    parser.add_argument(
        "--mix",
        default=MIX,
        help="kind=share,...: the cases of each kind (default: about the quick suite's mix)",
    )
    parser.add_argument(
        "--parts-only",
        action="store_true",
        help="no one-file table: the runs as a normbench before it, or an interrupted run, leave them",
    )
    args = parser.parse_args()
    mix = {k: float(v) for k, v in (item.split("=") for item in args.mix.split(","))}
    args.out.mkdir(parents=True, exist_ok=True)
    table = not args.parts_only
    base, copy = f"synthetic-{args.cases}-base", f"synthetic-{args.cases}-copy"
    write_run(args.out, base, args.template, args.cases, 0.0, 0, mix, table=table)
    write_run(args.out, copy, args.template, args.cases, args.noise, 1, mix, table=table)
    changed = f"synthetic-{args.cases}-changed"
    write_run(args.out, changed, args.template, args.cases, args.noise, 2, mix, plant=True, table=table)
    for run_id in (base, copy, changed):
        print(args.out / run_id)


if __name__ == "__main__":
    main()

"""Tables: what a bench's report() returns, and how they are rendered (tabulate for github, latex and
plain; csv and json write the table's cells as they are)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pandas as pd

FORMATS = ("github", "plain", "latex", "csv", "json", "md")


@dataclass
class ReportOptions:
    baseline: str | None = None  # "norm:impl" for speedup columns
    machine: str = ""  # one-line machine summary for captions


@dataclass
class Table:
    title: str
    frame: pd.DataFrame
    notes: list[str] = field(default_factory=list)


def render(tables: list[Table], fmt: str) -> str:
    from tabulate import tabulate

    if fmt == "json":
        return json.dumps(
            [{"title": t.title, "rows": t.frame.to_dict(orient="records"), "notes": t.notes} for t in tables],
            indent=2,
            default=str,
        )
    chunks = []
    for t in tables:
        if fmt == "csv":
            chunks.append(f"# {t.title}\n" + t.frame.to_csv(index=False))
            continue
        body = tabulate(
            t.frame,
            headers="keys",
            tablefmt={"md": "github"}.get(fmt, fmt),
            showindex=False,
            disable_numparse=True,
        )
        if fmt == "latex":
            chunks.append(f"% {t.title}\n{body}" + "".join(f"\n% {n}" for n in t.notes))
        elif fmt in ("github", "md"):
            chunks.append(f"### {t.title}\n\n{body}" + "".join(f"\n\n{n}" for n in t.notes))
        else:
            chunks.append(f"{t.title}\n{body}" + "".join(f"\n{n}" for n in t.notes))
    return "\n\n".join(chunks) + "\n"


def failures_table(frame: pd.DataFrame) -> Table | None:
    """Cases whose status is not ok (failed, skipped, unavailable, diverged ...), with the reason."""
    bad = frame[frame["status"] != "ok"]
    if bad.empty:
        return None
    from normbench.analysis.compare import describe_case
    from normbench.benches import all_benches

    benches = all_benches()
    cases = bad.drop_duplicates("case_id")
    rows = pd.DataFrame(
        {
            "bench": cases["bench"],
            "case": [  # norm:impl and the parameters that differ from the bench's defaults
                describe_case(n, i, json.loads(p), benches[b]) if b in benches else f"{n}:{i} {p}"
                for b, n, i, p in zip(
                    cases["bench"], cases["norm"], cases["impl"], cases["params"], strict=True
                )
            ],
            "status": cases["status"],
            "reason": cases["error"].fillna(""),
        }
    )
    return Table("Cases not ok", rows.sort_values(["status", "bench"]).reset_index(drop=True))


def format_seconds(seconds: float) -> str:
    if pd.isna(seconds):
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"

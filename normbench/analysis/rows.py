"""One line of a comparison (`CompareRow`) and how a case is named in it: the types the compare metrics,
the per-case status rows (compare/case_rows.py) and the failures table share."""

from __future__ import annotations

import json
from dataclasses import dataclass

NOT_RUN = {"skipped", "unavailable"}


@dataclass
class CompareRow:
    mark: str
    bench: str
    case: str
    metric: str
    base: float | None = None
    new: float | None = None
    ratio: float | None = None
    p: float | None = None
    note: str = ""
    unit: str = ""
    case_ids: frozenset[str] = frozenset()  # the stored cases this row speaks for
    shift: float | None = (
        None  # its round set's common change, which the row is judged beyond (compare/round_sets.py)
    )
    round_set: str | None = None  # the round set (base run's label) of a paired ratio

    @property
    def regression(self) -> bool:
        return self.mark in ("+", "!")

    @property
    def judged_ratio(self) -> float | None:
        """The ratio the marks judge: the change beyond the round set's common shift, where there is one."""
        if self.ratio is None or not self.shift:
            return self.ratio
        return self.ratio / self.shift


def describe_case(norm, impl, params: dict, bench, varying: frozenset[str] = frozenset()) -> str:
    """norm:impl and the parameters a reader needs to tell the case apart: those that differ from the
    bench's defaults, and those that vary among the cases shown with it (`varying`), even at their default
    (placement=post beside placement=pre)."""
    head = f"{norm}:{impl} " if isinstance(norm, str) else ""
    return head + " ".join(f"{k}={v}" for k, v in shown_params(params, bench, varying).items())


def shown_params(params: dict, bench, varying: frozenset[str] = frozenset()) -> dict:
    """The parameters that differ from the bench's defaults (and those named in `varying`)."""
    return {
        k: v
        for k, v in params.items()
        if k in varying or k not in bench.params or bench.params[k].required or bench.params[k].default != v
    }


def varying_params(params_json) -> frozenset[str]:
    """The parameter names whose values differ among these cases (a column of params JSON strings)."""
    import pandas as pd

    seen: dict[str, set[str]] = {}
    for text in pd.unique(pd.Series(params_json, dtype=object)):  # distinct texts, not every row in Python
        for k, v in json.loads(text).items():
            seen.setdefault(k, set()).add(json.dumps(v, sort_keys=True))
    return frozenset(k for k, values in seen.items() if len(values) > 1)

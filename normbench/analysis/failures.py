"""The report's table of cases whose status is not ok, each labelled by the parameters that tell it apart."""

from __future__ import annotations

import json

import pandas as pd

from normbench.analysis.rows import describe_case, varying_params
from normbench.benches import all_benches
from normbench.core.tables import Table


def failures_table(frame: pd.DataFrame) -> Table | None:
    """Cases whose status is not ok (failed, skipped, unavailable, diverged ...), with the reason."""
    bad = frame[frame["status"] != "ok"]
    if bad.empty:
        return None

    benches = all_benches()
    cases = bad.drop_duplicates("case_id")
    # a parameter that varies among a bench kind's cases in the run is always shown, even at its default
    every = frame.drop_duplicates("case_id")
    varying = {b: varying_params(every.loc[every["bench"] == b, "params"]) for b in set(cases["bench"])}
    rows = pd.DataFrame(
        {
            "bench": cases["bench"],
            "case": [  # norm:impl and the parameters that tell the case apart
                describe_case(n, i, json.loads(p), benches[b], varying[b]) if b in benches else f"{n}:{i} {p}"
                for b, n, i, p in zip(
                    cases["bench"], cases["norm"], cases["impl"], cases["params"], strict=True
                )
            ],
            "status": cases["status"],
            "reason": cases["error"].fillna(""),
        }
    )
    return Table("Cases not ok", rows.sort_values(["status", "bench"]).reset_index(drop=True))

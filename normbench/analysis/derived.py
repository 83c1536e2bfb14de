"""Tables the report derives across bench kinds or from a bench's time series, which no single bench's
report() builds: the norms' trade-off table (training runs next to block times) and the batch-statistics
fluctuation table. Each builder returns None (table) or an empty frame (records) when its rows are absent.

In csv/json, their records follow the cases' records with `bench` naming the table ("tradeoff",
"fluctuation") and null run_id/case_id: they summarize several cases."""

from __future__ import annotations

from typing import TYPE_CHECKING

from normbench.analysis.fluctuation import fluctuation_records, fluctuation_table
from normbench.analysis.tradeoff import tradeoff_records, tradeoff_table

if TYPE_CHECKING:
    import pandas as pd

    from normbench.core.tables import Table


def derived_tables(frame: pd.DataFrame, tradeoff: pd.DataFrame | None = None) -> list[Table]:
    """`tradeoff`: tradeoff_records(frame) when the caller has it already (the summary reads it too)."""
    tables = (tradeoff_table(frame, tradeoff), fluctuation_table(frame))
    return [t for t in tables if t is not None]


def derived_records(frame: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    parts = [
        rec.assign(bench=kind)
        for kind, rec in (("tradeoff", tradeoff_records(frame)), ("fluctuation", fluctuation_records(frame)))
        if not rec.empty
    ]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def with_derived(records: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """The cases' records, then the derived ones (columns in the cases' order first)."""
    import pandas as pd

    extra = derived_records(frame)
    if extra.empty:
        return records
    merged = pd.concat([records, extra], ignore_index=True)
    return merged[[*records.columns, *[c for c in merged.columns if c not in records.columns]]]

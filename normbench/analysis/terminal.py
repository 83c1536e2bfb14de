"""The report as a person reads it in a terminal (github and plain, unless --full): the summary first, then
as many tables as fit in LINE_BUDGET lines, each fitted to the width (analysis/fit.py), then one line
naming the tables left out and how to see them. `--bench`, `--table` and `--columns` choose what to show;
a choice is shown whole (no line budget). `--full` and the file formats (md, latex, csv, json) keep every
table with its notes."""

from __future__ import annotations

from dataclasses import dataclass, field

from normbench.analysis.fit import fit_table, select_columns, wrap
from normbench.core.errors import NormbenchError
from normbench.core.tables import Table, render

LINE_BUDGET = 80


@dataclass
class Selection:
    benches: list[str] = field(default_factory=list)  # --bench
    tables: list[str] = field(default_factory=list)  # --table: words of the title
    columns: list[str] = field(default_factory=list)  # --columns: result columns to keep

    @property
    def any(self) -> bool:
        return bool(self.benches or self.tables or self.columns)


def choose_tables(tables: list[Table], choice: Selection) -> list[Table]:
    """The tables --bench/--table/--columns select; a choice that selects nothing is an error that names
    what there is."""
    chosen = tables
    if choice.benches:
        kinds = sorted({t.bench for t in tables if t.bench})
        unknown = [b for b in choice.benches if b not in kinds]
        if unknown:
            raise NormbenchError(
                f"--bench {', '.join(unknown)}: not in the run (bench kinds: {', '.join(kinds)})"
            )
        chosen = [t for t in chosen if t.bench in choice.benches]
    if choice.tables:
        words = [w.lower() for w in choice.tables]
        chosen = [t for t in chosen if any(w in t.title.lower() for w in words)]
        if not chosen:
            titles = "; ".join(t.title for t in tables)
            raise NormbenchError(
                f"--table {', '.join(choice.tables)}: no table title contains it (tables: {titles})"
            )
    if choice.columns:
        chosen = [s for t in chosen if (s := select_columns(t, choice.columns)) is not None]
        if not chosen:
            raise NormbenchError(f"--columns {','.join(choice.columns)}: no table has such a column")
    return chosen


def terminal_report(tables: list[Table], summary: list[str], fmt: str, width: int, choice: Selection) -> str:
    """The summary and the fitted tables as text, every line at most `width` characters."""
    shown = choose_tables(tables, choice)
    fitted = [fit_table(t, width) for t in shown]
    # each part rendered once: its lines are counted and the same text is printed
    texts = {id(p): render([p], fmt) for parts in fitted for p in parts}
    head = ["Summary", *summary] if summary and not choice.tables else []
    if choice.any:
        return _join(head, [p for parts in fitted for p in parts], texts)
    budget = LINE_BUDGET - len(head) - 4  # 4: the line naming what is left out, wrapped, and its blank
    kept, left = [], []
    for table, parts in zip(shown, fitted, strict=True):
        size = sum(texts[id(p)].count("\n") + 1 for p in parts)
        if size <= budget:
            kept.extend(parts)
            budget -= size
        else:
            left.append(table)
    text = _join(head, kept, texts)
    if left:
        text += "\n" + "\n".join(wrap(_left_out(left), width, indent="")) + "\n"
    return text


def _join(head: list[str], tables: list[Table], texts: dict[int, str]) -> str:
    """The summary and the tables as render(tables) prints them, from each table's own rendering."""
    chunks = ["\n".join(head) + "\n"] if head else []
    if tables:
        chunks.append("\n\n".join(texts[id(t)][:-1] for t in tables) + "\n")  # each ends in one "\n"
    return "\n".join(chunks)


def _left_out(tables: list[Table]) -> str:
    """'Not shown: Bandwidth, Jacobian σ_max ×5, ...': each title up to its colon, counted."""
    names: dict[str, int] = {}
    for t in tables:
        name = t.title.split(":")[0]
        names[name] = names.get(name, 0) + 1
    listed = ", ".join(f"{n} ×{k}" if k > 1 else n for n, k in names.items())
    return (
        f"Not shown ({len(tables)} tables): {listed}. `--table WORD` shows the tables whose title has WORD, "
        "`--bench KIND` one bench kind's, `--full` every table with its notes."
    )

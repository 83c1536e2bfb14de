"""The report as a person reads it in a terminal (github and plain, unless --full): the summary first, then
as many tables as fit in LINE_BUDGET lines, in the order of the README's "which table answers which
question" (TABLE_ORDER), each fitted to the width (analysis/fit.py), then the tables left out. `--bench`, `--table` and `--columns` choose what to show,
within the same budget. `--full` and the file formats (md, latex, csv, json) keep every table with its
notes."""

from __future__ import annotations

from dataclasses import dataclass, field

from normbench.analysis.fit import fit_table, select_columns, wrap
from normbench.core.errors import NormbenchError
from normbench.core.tables import Table, render

LINE_BUDGET = 80
# The default view's order: the README's "which table answers which question", title by title (a table
# whose title starts with none of these follows, in the order the benches built it).
TABLE_ORDER = (
    "Norms head to head",
    "Latency",
    "Bandwidth",
    "Accuracy",
    "Block",
    "Jacobian σ_max: summary",
    "Stability",
    "Encoder–decoder",
    "Norms: what each costs",
    "Claims",
)
# What `report --table <TAB>` offers: a word of each kind of table title (the first that is not shared).
TABLE_WORDS = (
    "head",
    "latency",
    "bandwidth",
    "accuracy",
    "memory",
    "block",
    "jacobian",
    "init",
    "stability",
    "encoder",
    "cnn",
    "costs",
    "fluctuation",
    "claims",
    "cases",
)


def in_question_order(tables: list[Table]) -> list[Table]:
    """The tables in TABLE_ORDER (sorted is stable: the benches' own order within a kind of title)."""

    def rank(table: Table) -> int:
        return next((i for i, p in enumerate(TABLE_ORDER) if table.title.startswith(p)), len(TABLE_ORDER))

    return sorted(tables, key=rank)


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
    """The summary and the fitted tables as text, every line at most `width` characters, at most
    LINE_BUDGET lines. A table is fitted only when it may fit the lines left (its rows alone are a lower
    bound of its height); a table too wide for one part shows the leading parts that fit, the rest named
    below; a chosen table (--bench, --table) too high for the budget on its own shows its first rows."""
    shown = choose_tables(tables, choice)
    if not choice.tables:
        shown = in_question_order(shown)
    texts: dict[int, str] = {}  # each part rendered once: its lines counted and the same text printed
    head = ["Summary", *summary] if summary and not choice.tables else []
    # room for the lines naming what is left out (at most every table), wrapped at the width, and a blank
    room = wrap(_left_out([(t, 0, 2) for t in shown]), width, indent="")
    budget = LINE_BUDGET - len(head) - 1 - len(room)
    kept: list[Table] = []
    left: list[tuple[Table, int, int]] = []  # (table, parts shown, parts in all)
    for table in shown:
        if len(table.frame) + MIN_TABLE_LINES > budget:
            left.append((table, 0, 1))
            continue
        parts = fit_table(table, width)
        fits = 0
        for part in parts:
            size = _lines(part, fmt, width, texts) + 1
            if size > budget:
                break
            budget -= size
            fits += 1
        kept.extend(parts[:fits])
        if fits < len(parts):
            left.append((table, fits, len(parts)))
    if choice.any and not kept and shown:  # what was asked for shows, if only its first rows
        kept, budget = _first_rows(shown[0], fmt, width, budget, texts), 0
        left = [(t, 0, 1) for t in shown[1:]]
    text = _join(head, kept, fmt, width, texts)
    if left:
        text += "\n" + "\n".join(wrap(_left_out(left), width, indent="")) + "\n"
    return text


MIN_TABLE_LINES = 2  # a table's height beyond its rows in any format: at least a title and a header


def _first_rows(table: Table, fmt: str, width: int, budget: int, texts: dict[int, str]) -> list[Table]:
    """The table's fitted parts cut to the rows that fit `budget` lines (at least one), the cut said in
    the caption."""
    parts = fit_table(table, width)
    overhead = (
        sum(_lines(p, fmt, width, texts) + 1 - len(p.frame) for p in parts) + 1
    )  # +1: the caption's line
    rows = max(1, (budget - overhead) // len(parts))
    if rows >= len(table.frame):
        return parts
    said = f"the first {rows} of {len(table.frame)} rows (`--full`: every row)"
    return [
        Table(
            p.title,
            p.frame.head(rows),
            [],
            p.keys,
            p.bench,
            caption="; ".join(filter(None, [p.caption, said])),
        )
        for p in parts
    ]


def _join(head: list[str], tables: list[Table], fmt: str, width: int, texts: dict[int, str]) -> str:
    """The summary and the tables as render(tables) prints them, from each table's own rendering."""
    chunks = ["\n".join(head) + "\n"] if head else []
    if tables:
        parts = [_text(t, fmt, width, texts)[:-1] for t in tables]  # each ends in one "\n"
        chunks.append("\n\n".join(parts) + "\n")
    return "\n".join(chunks)


def _text(table: Table, fmt: str, width: int, texts: dict[int, str]) -> str:
    if id(table) not in texts:
        texts[id(table)] = render([table], fmt, width)
    return texts[id(table)]


def _lines(table: Table, fmt: str, width: int, texts: dict[int, str]) -> int:
    return _text(table, fmt, width, texts).count("\n")


def _left_out(tables: list[tuple[Table, int, int]]) -> str:
    """'Not shown: Bandwidth, Jacobian σ_max ×5, Latency parts 2–3 of 3, ...': each title up to its
    colon, counted; of a table shown in part, the parts left out."""
    names: dict[str, int] = {}
    for t, shown, parts in tables:
        name = t.title.split(":")[0]
        if shown:
            name += (
                f" parts {shown + 1}–{parts} of {parts}" if shown + 1 < parts else f" part {parts} of {parts}"
            )
        names[name] = names.get(name, 0) + 1
    listed = ", ".join(f"{n} ×{k}" if k > 1 else n for n, k in names.items())
    return (
        f"Not shown ({len(tables)} tables): {listed}. `--table WORD` shows the tables whose title has WORD, "
        "`--bench KIND` one bench kind's, `--full` every table with its notes."
    )

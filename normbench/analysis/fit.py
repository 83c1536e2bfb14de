"""Tables that fit a terminal: the report's default view. A table keeps every row and every number; what
changes is the layout. Key columns (shape, settings) constant in every row move to the caption; the result
columns that do not fit beside the keys go to a continuation table with the same keys (as
torch.utils.benchmark's Compare and pytest-benchmark do, never a line wider than the terminal); a cell
still too wide, and a title, wrap onto more lines: nothing is cut. The notes under each table are left to
`--full`: the view says so once."""

from __future__ import annotations

import fnmatch
import re

import pandas as pd

from normbench.core.tables import Table

MIN_CELL = 12  # a wrapped cell is at least this many characters wide


def select_columns(table: Table, patterns: list[str]) -> Table | None:
    """`--columns`: the table's key columns and the result columns matching any pattern (substring or
    glob, case-insensitive); None when no result column matches."""
    keys = key_columns(table)
    wanted = [c for c in table.frame.columns if c not in keys and any(_matches(str(c), p) for p in patterns)]
    if not wanted:
        return None
    return Table(table.title, table.frame[[*keys, *wanted]], table.notes, keys, table.bench)


def _matches(name: str, pattern: str) -> bool:
    name, pattern = name.lower(), pattern.lower()
    return fnmatch.fnmatchcase(name, pattern) if any(c in pattern for c in "*?[") else pattern in name


def key_columns(table: Table) -> list[str]:
    columns = list(table.frame.columns)
    keys = [k for k in table.keys if k in columns]
    return keys or columns[:1]


def fit_table(table: Table, width: int) -> list[Table]:
    """The table as one or more tables whose github rendering is at most `width` characters wide."""
    frame = table.frame.map(lambda v: "" if v is None or v is pd.NA or v != v else str(v))  # v != v: NaN
    keys = key_columns(table)
    caption = [table.caption] if table.caption else []
    if len(frame) > 1:
        constant = [k for k in keys if frame[k].nunique() == 1]
        if len(constant) == len(keys):  # a row still needs a name: keep the last key
            constant = constant[:-1]
        caption = [f"{k}={frame[k].iloc[0]}" for k in constant]
        frame = frame.drop(columns=constant)
        keys = [k for k in keys if k not in constant]
    if len(keys) > 2 or {"tokens", "d"} <= set(keys):
        # one label column, "512×1024 bf16 fwd", named in the caption: the keys' widths add up
        names = [k for k in keys if k not in ("tokens", "d")]
        parts = [frame[k] for k in names]
        if {"tokens", "d"} <= set(keys):
            parts.insert(0, frame["tokens"] + "×" + frame["d"])
            names.insert(0, "tokens×d")
        frame.insert(0, "case", [" ".join(filter(None, row)) for row in zip(*parts, strict=True)])
        frame = frame.drop(columns=keys)
        caption.append(f"case = {' '.join(names)}")
        keys = ["case"]
    frame = frame.rename(columns={c: _stacked(str(c), frame[c]) for c in frame.columns if c not in keys})
    values = [c for c in frame.columns if c not in keys]
    # a github table's width is its columns' widths added up (each column is padded on its own): measure
    # each column once, not every growing chunk again (a 2,000-row table rendered hundreds of times)
    own = {c: rendered_width(frame[[c]]) for c in frame.columns}
    chunks: list[list[str]] = []
    for column in values:
        if chunks and joined_width([own[c] for c in (*keys, *chunks[-1], column)]) <= width:
            chunks[-1].append(column)
        else:
            chunks.append([column])
    chunks = chunks or [[]]
    out = []
    for i, chunk in enumerate(chunks):
        columns = [*keys, *chunk]
        part = _wrap_to_width(frame[columns], width, joined_width([own[c] for c in columns]))
        part_of = f" ({i + 1}/{len(chunks)})" if len(chunks) > 1 else ""
        # 4: the heading's "### "; its next lines under the title's first word
        title = "\n".join(wrap(table.title + part_of, width - 4, indent="    "))
        shared = "; ".join(caption) if i == 0 else ""  # render() prints it as "All rows: ...", wrapped
        out.append(Table(title, part, [], keys, table.bench, caption=shared))
    return out


def _stacked(name: str, cells: pd.Series) -> str:
    """A header wider than its cells on two or more lines ("layernorm:" over "functional"), split after a
    colon or at spaces, so that a column is as narrow as its numbers; a unit in brackets at the end
    ("(µs)") gets a line of its own."""
    import textwrap

    room = max(int(cells.map(len).max() if len(cells) else 0), 10)
    if len(name) <= room:
        return name
    base, unit = _unit_suffix(name)
    if unit and len(base) <= room:
        return f"{base}\n{unit}"
    words = re.sub(r":(?=\S)", ": ", base)  # a break after "norm:" is allowed; the space goes again below
    while len(lines := textwrap.wrap(words, room, break_long_words=False, break_on_hyphens=False)) > 2:
        room += 1  # at most two header lines (and the unit's)
    lines = [line.replace(": ", ":") if ": " not in base else line for line in lines]
    return "\n".join([*lines, unit] if unit else lines)


_UNIT = re.compile(r"^(.*\S) (\([^()]{1,6}\))$")


def _unit_suffix(name: str) -> tuple[str, str]:
    """("layernorm:module", "(µs)") from "layernorm:module (µs)"; (name, "") without a unit."""
    found = _UNIT.match(name)
    return (found.group(1), found.group(2)) if found else (name, "")


def rendered_width(frame: pd.DataFrame) -> int:
    """The widest line of the frame as a github table (what render() prints), counted without rendering
    it: a column is as wide as its widest cell (stripped, as tabulate does) or its widest header line + 2
    (tabulate pads headers), and a line is "| " + the columns joined by " | " + " |"."""
    if frame.shape[1] == 0:
        return 0
    widths = [
        max(_widest(str(name)) + 2, max((_widest(str(v).strip()) for v in frame[name]), default=0))
        for name in frame.columns
    ]
    return sum(widths) + 3 * len(widths) + 1


def _widest(text: str) -> int:
    return max(map(len, text.split("\n")))


def joined_width(widths: list[int]) -> int:
    """The width of a github table from its columns' own widths (each rendered alone): every column adds
    its cell and padding and one '|' (rendered_width of one column counts two)."""
    return 1 + sum(w - 1 for w in widths) if widths else 0


def _wrap_to_width(frame: pd.DataFrame, width: int, measured: int) -> pd.DataFrame:
    """Wrap the widest column's cells onto more lines (never narrower than MIN_CELL characters) until the
    rendering fits (`measured`: the frame's width as it is, known from its columns); every character stays."""
    if measured <= width:
        return frame
    frame = frame.copy()
    while (excess := rendered_width(frame) - width) > 0:
        widest = max(frame.columns, key=lambda c: _column_widest(frame, c))
        limit = _column_widest(frame, widest) - excess
        if limit < MIN_CELL:
            break
        frame[widest] = frame[widest].map(lambda s, n=limit: _wrapped_cell(s, n))
        if _widest(str(widest)) > limit:
            frame = frame.rename(columns={widest: _wrapped_cell(str(widest), limit)})
        if rendered_width(frame) - width >= excess:  # a header's padding: no narrower than this
            break
    return frame


def _column_widest(frame: pd.DataFrame, column) -> int:
    return max(_widest(str(column)), max((_widest(str(v)) for v in frame[column]), default=0))


def _wrapped_cell(text: str, width: int) -> str:
    """A cell's lines each wrapped at `width` (a word longer than that is broken, not cut)."""
    import textwrap

    return "\n".join(
        "\n".join(textwrap.wrap(line, width, break_on_hyphens=False)) or line for line in text.split("\n")
    )


def wrap(text: str, width: int, indent: str = "  ") -> list[str]:
    """A line of prose wrapped to `width` (continuation lines indented)."""
    import textwrap

    return textwrap.wrap(text, width, subsequent_indent=indent, break_on_hyphens=False) or [""]

"""Tables: what a bench's report() returns, and how they are rendered: tabulate for github, md, plain and
latex (every non-ASCII symbol mapped to LaTeX, so pdflatex compiles it). The machine formats csv and json
do not render these display tables: they write numeric records (analysis/records.py, write_records)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from normbench.core.jsondata import finite_or_none, json_text

FORMATS = ("github", "plain", "latex", "csv", "json", "md")
MACHINE_FORMATS = ("csv", "json")

# Symbols the tables use, as LaTeX (text mode). Anything else outside ASCII becomes '?' (never raw UTF-8,
# which pdflatex without inputenc rejects).
LATEX_SYMBOLS = {
    "µ": r"\textmu{}",
    "μ": r"$\mu$",
    "—": "---",
    "–": "--",
    "−": "-",
    "σ": r"$\sigma$",
    "ε": r"$\varepsilon$",
    "γ": r"$\gamma$",
    "‖": r"$\|$",
    "√": r"$\surd$",
    "≤": r"$\leq$",
    "≥": r"$\geq$",
    "≈": r"$\approx$",
    "±": r"$\pm$",
    "×": r"$\times$",
    "→": r"$\rightarrow$",
    "²": r"\textsuperscript{2}",
    "₂": r"$_2$",
    "₀": r"$_0$",
    "⚠": "",  # the text beside it ("above copy") is the mark
    "·": r"$\cdot$",
}
_LATEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"} | {
    "\\": r"\textbackslash{}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_text(text) -> str:
    """A cell or header as LaTeX: special characters escaped, symbols mapped, pure ASCII."""
    out = []
    for ch in str(text):
        if ch in _LATEX_SPECIAL:
            out.append(_LATEX_SPECIAL[ch])
        elif ch in LATEX_SYMBOLS:
            out.append(LATEX_SYMBOLS[ch])
        elif ord(ch) < 128:
            out.append(ch)
        else:
            out.append("?")
    return "".join(out).replace("  ", " ").strip() if str(text).strip() else ""


@dataclass
class ReportOptions:
    baseline: str | None = None  # "norm:impl" for speedup columns
    machine: str = ""  # one-line machine summary for captions
    # What several parts of one report derive from the same rows (each bench kind's rows, the trade-off
    # records, the claims' verdicts, the latency case table): computed on first use, once per report. One
    # ReportOptions serves one report's rows, never two.
    memo: dict = field(default_factory=dict, repr=False, compare=False)

    def once(self, key, compute):
        """compute(), the first time `key` is asked for in this report; the same value after that."""
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]


@dataclass
class Table:
    title: str
    frame: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    # The columns that name a row (shape, settings) rather than hold a result: the terminal view repeats
    # them when it splits a wide table, and moves those constant in every row to the caption. Empty: the
    # first column.
    keys: list[str] = field(default_factory=list)
    bench: str = ""  # the bench kind whose report() built it ("" for tables across kinds)
    # What every row shares ("cpu, fp32, samples=10"): under the table in every view, "All rows: ...".
    caption: str = ""


NOTE_WIDTH = 120  # notes of a table rendered for a file (md, latex) wrap here


def render(tables: list[Table], fmt: str, width: int = NOTE_WIDTH) -> str:
    """The display tables as github/md/plain/latex text (csv/json: see write_records); the caption and the
    notes under each wrapped at `width`."""
    from tabulate import tabulate

    if fmt in MACHINE_FORMATS:
        raise ValueError(f"{fmt} is a machine format: write records, not display tables")
    chunks = []
    for t in tables:
        frame = t.frame
        notes = [f"All rows: {t.caption}." if t.caption else "", *t.notes]
        notes = [wrapped(n, width - (2 if fmt == "latex" else 0)) for n in notes if n]
        if fmt == "latex":
            frame = frame.rename(columns=latex_text).map(latex_text)
        body = tabulate(
            frame,
            headers="keys",
            tablefmt={"md": "github", "latex": "latex_raw"}.get(fmt, fmt),
            showindex=False,
            disable_numparse=True,
        )
        if fmt == "latex":
            comments = ["% " + latex_text(line) for n in notes for line in n.splitlines()]
            chunks.append(f"% {latex_text(t.title)}\n{body}" + "".join(f"\n{c}" for c in comments))
        elif fmt in ("github", "md"):
            chunks.append(f"### {t.title}\n\n{body}" + "".join(f"\n\n{n}" for n in notes))
        else:
            chunks.append(f"{t.title}\n{body}" + "".join(f"\n{n}" for n in notes))
    return "\n\n".join(chunks) + "\n"


def wrapped(text: str, width: int) -> str:
    """Prose wrapped at `width`, its own line breaks kept (a note a table's fitting already wrapped)."""
    import textwrap

    return "\n".join(
        "\n".join(textwrap.wrap(line, width, break_on_hyphens=False, break_long_words=False)) or line
        for line in text.splitlines()
    )


def plain_records(frame: pd.DataFrame) -> list[dict]:
    """Rows as dicts of plain Python values: numbers as numbers, NaN and <NA> as None."""

    def plain(v):
        return None if v is pd.NA else finite_or_none(v.item() if hasattr(v, "item") else v)

    return [{k: plain(v) for k, v in row.items()} for row in frame.astype(object).to_dict("records")]


def write_records(records: pd.DataFrame, fmt: str, **extra) -> str:
    """csv: the records alone (one header line, no comments; pd.read_csv reads it). json: an object with
    the records under "records" and `extra` (warnings, notes, run ids) beside them."""
    if fmt == "csv":
        return records.to_csv(index=False)
    return json_text({**extra, "records": plain_records(records)}, indent=1) + "\n"


def format_seconds(seconds: float) -> str:
    if pd.isna(seconds):
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


SECONDS = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9))
BYTES = (("GiB", 2.0**30), ("MiB", 2.0**20), ("KiB", 2.0**10), ("B", 1.0))


def column_unit(values, units=SECONDS) -> tuple[str, float]:
    """One unit for a column of numbers (seconds, or bytes with units=BYTES): the largest unit in which
    the column's median is at least 1, so that its cells compare digit by digit (torch.utils.benchmark's
    Compare does the same per table)."""
    import statistics

    finite = [float(v) for v in values if v is not None and v == v and float(v) > 0]
    middle = statistics.median(finite) if finite else 1.0
    return next(((u, s) for u, s in units if middle >= s), units[-1])


def in_unit(value, scale: float, digits: int = 3) -> str:
    """A number in its column's unit, rounded to `digits` significant figures and never in e-notation:
    562, 1440, 18000, 0.523; "—" for a missing one."""
    if value is None or value != value:
        return "—"
    x = float(value) / scale
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    places = digits - 1 - math.floor(math.log10(abs(x)))
    x = round(x, places)  # 99.96 -> 100.0: three figures of the rounded value are "100"
    places = digits - 1 - math.floor(math.log10(abs(x)))
    return f"{round(x, places):.{max(0, places)}f}"


def times(factor: float) -> str:
    """A factor to 3 significant figures, never in e-notation: 1.25×, 12.9×, 1738×."""
    return f"{factor:.0f}×" if factor >= 100 else f"{factor:.3g}×"


def versus_words(
    ratio: float,
    lo: float = float("nan"),
    hi: float = float("nan"),
    ref: str = "",
    bounds: str = "interval",
) -> str:
    """A time ratio (this time over `ref`'s) in words, with its bounds where there are any. Brackets mean
    one thing in every command, a 95% interval: "2.40× slower than layernorm:module [2.37, 2.43]", "1.12×
    faster than ... [1.08, 1.15]" (the interval in the same direction as the words), "as fast as ... (time
    ratio [0.98, 1.05])" when the interval holds 1 (or the ratio, without an interval, rounds to 1.00).
    bounds="range": lo and hi are the smallest and largest of several ratios, written "(range 1.08–1.15)".
    Without `ref`: "1.12× faster", "as fast"."""
    if pd.isna(ratio) or ratio <= 0:
        return "—"
    than = f" than {ref}" if ref else ""
    if ratio == 1 and lo == hi == 1:  # the reference itself
        return "—"
    same = f"as fast as {ref}" if ref else "as fast"
    if pd.notna(lo) and pd.notna(hi) and lo <= 1 <= hi:
        if bounds == "range":
            return f"{same} (time ratio range {lo:.3g}–{hi:.3g})"
        return f"{same} (time ratio [{lo:.3g}, {hi:.3g}])"
    if pd.isna(lo) and round(ratio, 2) == 1:  # no interval, and within rounding of 1: no direction to name
        return same
    word, factor, a, b = ("slower", ratio, lo, hi) if ratio > 1 else ("faster", 1 / ratio, 1 / hi, 1 / lo)
    text = f"{times(factor)} {word}{than}"
    if pd.notna(a) and pd.notna(b):
        text += f" (range {a:.3g}–{b:.3g})" if bounds == "range" else f" [{a:.3g}, {b:.3g}]"
    return text

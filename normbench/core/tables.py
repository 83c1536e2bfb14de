"""Tables: what a bench's report() returns, and how they are rendered: tabulate for github, md, plain and
latex (every non-ASCII symbol mapped to LaTeX, so pdflatex compiles it). The machine formats csv and json
do not render these display tables: they write numeric records (analysis/records.py, write_records)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from normbench.core.jsondata import json_text

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


def render(tables: list[Table], fmt: str) -> str:
    """The display tables as github/md/plain/latex text (csv/json: see write_records)."""
    from tabulate import tabulate

    if fmt in MACHINE_FORMATS:
        raise ValueError(f"{fmt} is a machine format: write records, not display tables")
    chunks = []
    for t in tables:
        frame = t.frame
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
            chunks.append(
                f"% {latex_text(t.title)}\n{body}" + "".join(f"\n% {latex_text(n)}" for n in t.notes)
            )
        elif fmt in ("github", "md"):
            chunks.append(f"### {t.title}\n\n{body}" + "".join(f"\n\n{n}" for n in t.notes))
        else:
            chunks.append(f"{t.title}\n{body}" + "".join(f"\n{n}" for n in t.notes))
    return "\n\n".join(chunks) + "\n"


def plain_records(frame: pd.DataFrame) -> list[dict]:
    """Rows as dicts of plain Python values: numbers as numbers, NaN and <NA> as None."""
    import math

    def plain(v):
        if v is None or v is pd.NA or (isinstance(v, float) and not math.isfinite(v)):
            return None
        if hasattr(v, "item"):  # numpy scalars
            v = v.item()
            return None if isinstance(v, float) and not math.isfinite(v) else v
        return v

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


def times(factor: float) -> str:
    """A factor to 3 significant figures, never in e-notation: 1.25×, 12.9×, 1738×."""
    return f"{factor:.0f}×" if factor >= 100 else f"{factor:.3g}×"


def versus_words(ratio: float, lo: float = float("nan"), hi: float = float("nan"), ref: str = "") -> str:
    """A time ratio (this time over `ref`'s) in words, with its interval where there is one: "2.40× slower
    than layernorm:module [2.37, 2.43]", "1.12× faster than ... [1.08, 1.15]" (the interval in the same
    direction as the words), and "as fast as ... (time ratio 0.98–1.05)" when the interval holds 1."""
    if pd.isna(ratio) or ratio <= 0:
        return "—"
    than = f" than {ref}" if ref else ""
    if ratio == 1 and lo == hi == 1:  # the reference itself
        return "—"
    if pd.notna(lo) and pd.notna(hi) and lo <= 1 <= hi:
        return " ".join(filter(None, ["as fast as", ref, f"(time ratio {lo:.3g}–{hi:.3g})"]))
    word, factor, a, b = ("slower", ratio, lo, hi) if ratio > 1 else ("faster", 1 / ratio, 1 / hi, 1 / lo)
    text = f"{times(factor)} {word}{than}"
    if pd.notna(a) and pd.notna(b):
        text += f" [{a:.3g}, {b:.3g}]"
    return text

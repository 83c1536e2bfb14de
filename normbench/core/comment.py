"""The pieces of a GitHub pull-request comment in GitHub-flavoured markdown, shared by `ab --format md` and
`compare --format md`: an alert callout, a table whose rows stay within ROW_CHARS (the widest cell shortened
with an ellipsis), folded <details>, and the whole kept within GitHub's comment limit. The layout:
docs/ci.md, "The pull-request comment"."""

from __future__ import annotations

import html

ROW_CHARS = 120  # a table row a reader sees whole on a laptop screen, without scrolling sideways
COMMENT_CHARS = 65_536  # GitHub's limit on an issue or pull-request comment body
MAX_ROWS = 40  # per table; the rest is counted, and the artifact's JSON holds every row
CALLOUT = {0: "TIP", 1: "CAUTION", 3: "WARNING"}  # exit code -> GitHub alert type (anything else: WARNING)


def callout(code: int, text: str) -> str:
    """A GitHub alert (> [!CAUTION] ...) whose colour says the verdict."""
    return f"> [!{CALLOUT.get(code, 'WARNING')}]\n> {text}"


def cell(text) -> str:
    """A table cell: pipes escaped, no line breaks."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def table(headers: list[str], rows: list[list], right: set[int] = frozenset()) -> str:
    """A GFM table; columns in `right` align right. A row longer than ROW_CHARS has its longest cells
    shortened to fit, from the end, with "…". Rows past MAX_ROWS are counted under the table."""
    shown = rows[:MAX_ROWS]
    align = ["--:" if i in right else ":--" for i in range(len(headers))]
    lines = [_row(headers), _row(align)]
    for r in shown:
        cells = [cell(c) for c in r]
        while (over := len(_row(cells)) - ROW_CHARS) > 0:
            wide = max(range(len(cells)), key=lambda i: len(cells[i]))
            if len(cells[wide]) <= 2:
                break
            keep = max(1, len(cells[wide]) - over - 1)
            cells[wide] = cells[wide][:keep].rstrip("\\") + "…"
        lines.append(_row(cells))
    if len(rows) > len(shown):
        lines.append(f"\n… and {len(rows) - len(shown)} more (every row: the JSON in the run's artifact)")
    return "\n".join(lines)


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def details(summary: str, body: str) -> str:
    return f"<details><summary>{html.escape(summary)}</summary>\n\n{body}\n\n</details>"


def fit(parts: list[str], limit: int = COMMENT_CHARS) -> str:
    """The parts joined by blank lines; when the whole is over `limit`, the last parts give way (the verdict,
    the counts and the regressions come first) to a line saying so."""
    note = "\n\n*(shortened to fit GitHub's comment limit: every row is in the run's artifact)*"
    text = "\n\n".join(parts)
    while len(text) > limit and len(parts) > 1:
        parts = parts[:-1]
        text = "\n\n".join(parts) + note
    return text[:limit] + "\n"

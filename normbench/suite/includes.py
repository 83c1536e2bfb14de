"""Suite files on disk and `include`: reading a file (a regular UTF-8 file of bounded size), the rule for
an included path (only files under the including suite's folder, a bounded depth, no cycles) and merging
the included suites' benches. Loading them (which parses each, recursively) is in load.py."""

from __future__ import annotations

import os
from pathlib import Path

from normbench.core.errors import Problem, SuiteError
from normbench.suite.expand import spec_cases
from normbench.suite.spec import Suite

MAX_SUITE_BYTES = 16 * 2**20
MAX_INCLUDE_DEPTH = 16  # distinct files, each including the next: no cycle, but Python's stack has an end


def read_suite_text(path: Path) -> str:
    """The file's text; anything but UTF-8 (TOML's encoding) is a SuiteError naming the first bad byte.
    Only a regular file of at most MAX_SUITE_BYTES: /dev/zero or a FIFO would never end."""
    path = Path(path)
    if path.exists() and not path.is_dir() and not path.is_file():
        raise SuiteError(str(path), [Problem("", "not a regular file")])
    with open(path, "rb") as f:
        data = f.read(MAX_SUITE_BYTES + 1)
    if len(data) > MAX_SUITE_BYTES:
        raise SuiteError(str(path), [Problem("", f"larger than {MAX_SUITE_BYTES // 2**20} MiB; not a suite")])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problem = f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        raise SuiteError(str(path), [Problem("", problem)]) from None


class IncludeCycle(Exception):
    """Raised through nested includes up to the top file, which reports the chain."""

    def __init__(self, chain: list[str]):
        self.chain = chain
        self.index = 0


def inside_folder(folder: Path, path: str, *, resolve: bool) -> bool:
    """Is `path` a file under `folder`? On disk symlinks are followed; a stored text (a resumed run) is
    judged by its normalised name."""
    if resolve:
        return Path(path).resolve().is_relative_to(folder.resolve())
    return os.path.abspath(path).startswith(os.path.abspath(folder) + os.sep)


def merge_includes(suite: Suite, included: list[Suite]) -> Suite:
    if not included:
        return suite
    benches = [b for s in included for b in s.benches] + suite.benches
    seen: set[str] = set()
    for spec in benches:
        ids = {c.case_id for c in spec_cases(spec)}
        if ids & seen:
            raise SuiteError(
                suite.source, [Problem("include", f"{spec.label!r} repeats cases of an included suite")]
            )
        seen |= ids
    claims = list(dict.fromkeys([c for s in included for c in s.claims] + suite.claims))
    threads = suite.threads or next((s.threads for s in included if s.threads), None)
    texts = {k: v for s in included for k, v in ({s.source: s.text} | s.includes).items()}
    # pages: the including suite's own only (an included file's page state is not the run's)
    processes = suite.processes or next((s.processes for s in included if s.processes), None)
    return Suite(
        suite.name,
        suite.description,
        suite.source,
        suite.text,
        benches,
        claims,
        threads,
        texts,
        suite.pages,
        processes,
    )

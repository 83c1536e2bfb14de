"""Suite files on disk and `include`: reading a file (a regular UTF-8 file of bounded size), and loading
the suites it includes under the rule: only files under the including suite's folder, no cycles, a bounded
depth. Parsing and validation are in load.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from normbench.core.errors import Problem, SuiteError

if TYPE_CHECKING:
    from normbench.suite.load import Suite

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


def load_includes(
    data: dict[str, Any], source: str, texts: dict[str, str] | None, chain: tuple[str, ...]
) -> tuple[list[Suite], list[Problem], list[SuiteError]]:
    """`include = ["stability.toml"]`: other suites whose benches and claims run first, lm-eval style.
    Only files under the including suite's folder (paths relative to it; no absolute paths, no way out
    through '..' or a symlink), and no cycles. Each included file is validated on its own, so its
    problems name it. Returns the included suites, this file's problems with its `include` key and the
    errors of the included files: all of them are reported with the rest of this file's problems."""
    from normbench.suite.load import parse_suite

    paths = data.get("include", [])
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        return [], [Problem("include", "must be a list of suite file paths")], []
    if paths and len(chain) > MAX_INCLUDE_DEPTH:
        return [], [Problem("include", f"includes nest more than {MAX_INCLUDE_DEPTH} deep")], []
    folder = Path(source).parent
    suites, problems, nested = [], [], []
    for j, rel in enumerate(paths):
        path = str(folder / rel)
        if not _inside(folder, path, resolve=texts is None or path not in texts):
            problems.append(
                Problem(
                    f"include[{j}]",
                    f"{rel!r} is outside this suite's folder ({folder}/); a suite includes only "
                    "files under its own folder",
                )
            )
            continue
        key = os.path.normpath(os.path.abspath(path))
        try:
            if key in chain:
                raise IncludeCycle([*chain[chain.index(key) :], key])
            if texts is not None and path in texts:
                text = texts[path]
            else:
                try:
                    text = read_suite_text(Path(path))
                except OSError:
                    problems.append(Problem(f"include[{j}]", f"cannot read {path}"))
                    continue
            suites.append(parse_suite(text, path, texts, chain))
        except IncludeCycle as cycle:
            cycle.index = j  # the outermost file's index wins: that is where the error is reported
            raise
        except SuiteError as exc:
            nested.append(exc)
    return suites, problems, nested


def _inside(folder: Path, path: str, *, resolve: bool) -> bool:
    """Is `path` a file under `folder`? On disk symlinks are followed; a stored text (a resumed run) is
    judged by its normalised name."""
    if resolve:
        return Path(path).resolve().is_relative_to(folder.resolve())
    return os.path.abspath(path).startswith(os.path.abspath(folder) + os.sep)


def merge_includes(suite: Suite, included: list[Suite]) -> Suite:
    from normbench.suite.load import Suite

    if not included:
        return suite
    benches = [b for s in included for b in s.benches] + suite.benches
    seen: set[str] = set()
    from normbench.suite.expand import spec_cases

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
    return Suite(suite.name, suite.description, suite.source, suite.text, benches, claims, threads, texts)

"""Read a suite file: parse its TOML, load the suites it includes (each parsed here too, recursively) and
validate it (validate.py). Every problem of the file and its includes is reported at once."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any

from normbench.core.errors import NormbenchError, Problem, SuiteError
from normbench.suite.includes import (
    MAX_INCLUDE_DEPTH,
    IncludeCycle,
    inside_folder,
    merge_includes,
    read_suite_text,
)
from normbench.suite.spec import Suite
from normbench.suite.validate import validate_suite


def load_suite(path: str | Path) -> Suite:
    path = Path(path)
    try:
        text = read_suite_text(path)
    except FileNotFoundError:
        raise NormbenchError(f"{path}: no such suite file") from None
    except IsADirectoryError:
        raise NormbenchError(f"{path}: is a folder, not a suite file") from None
    except OSError as exc:
        raise NormbenchError(f"{path}: cannot read: {exc.strerror}") from None
    return parse_suite(text, str(path))


def parse_suite(
    text: str, source: str = "<suite>", includes: dict[str, str] | None = None, _chain: tuple[str, ...] = ()
) -> Suite:
    """Parse and validate a suite. `includes` supplies included files' texts (a resumed run uses the texts
    stored in its manifest, not whatever the files say now); without it they are read from disk."""
    chain = (*_chain, os.path.normpath(os.path.abspath(source)))
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise SuiteError(
            source, [Problem("", "TOML syntax error: arrays or tables nested too deeply")]
        ) from None
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        where = f"line {m.group(1)}, column {m.group(2)}" if m else ""
        raise SuiteError(
            source, [Problem(where, "TOML syntax error: " + re.sub(r"\s*\(at .*\)$", "", msg))]
        ) from None
    try:
        included, include_problems, nested = load_includes(data, source, includes, chain)
    except IncludeCycle as cycle:
        if _chain:
            raise
        root = os.path.dirname(chain[0])
        names = " -> ".join(os.path.relpath(c, root) for c in cycle.chain)
        raise SuiteError(source, [Problem(f"include[{cycle.index}]", f"cycle {names}")]) from None
    try:  # a bad include is reported together with every other problem of the file
        suite = validate_suite(
            data,
            source,
            text,
            included_benches=sum(len(s.benches) for s in included) + len(include_problems) + len(nested),
        )
    except SuiteError as exc:
        raise SuiteError(source, [*include_problems, *exc.problems], nested) from None
    if include_problems or nested:
        raise SuiteError(source, include_problems, nested)
    return merge_includes(suite, included)


def load_includes(
    data: dict[str, Any], source: str, texts: dict[str, str] | None, chain: tuple[str, ...]
) -> tuple[list[Suite], list[Problem], list[SuiteError]]:
    """`include = ["stability.toml"]`: other suites whose benches and claims run first, lm-eval style.
    Only files under the including suite's folder (paths relative to it; no absolute paths, no way out
    through '..' or a symlink), and no cycles. Each included file is validated on its own, so its
    problems name it. Returns the included suites, this file's problems with its `include` key and the
    errors of the included files: all of them are reported with the rest of this file's problems."""
    paths = data.get("include", [])
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        return [], [Problem("include", "must be a list of suite file paths")], []
    if paths and len(chain) > MAX_INCLUDE_DEPTH:
        return [], [Problem("include", f"includes nest more than {MAX_INCLUDE_DEPTH} deep")], []
    folder = Path(source).parent
    suites, problems, nested = [], [], []
    for j, rel in enumerate(paths):
        path = str(folder / rel)
        if not inside_folder(folder, path, resolve=texts is None or path not in texts):
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

"""Where suites come from: a path, or the name of a suite shipped with normbench (`normbench run quick` runs
the packaged quick.toml). The shipped suites are package data (normbench/suites, the repository's suites/
folder), found with importlib.resources so they work from a wheel as from a checkout."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from normbench.benches import all_benches
from normbench.core.errors import NormbenchError
from normbench.core.params import did_you_mean
from normbench.norms import all_norms
from normbench.suite.expand import expand
from normbench.suite.load import load_suite


def registered() -> tuple[dict, dict]:
    """(norms, bench kinds) by name that a suite can name: the built-in ones and every plugin's."""
    return all_norms(), all_benches()


def packaged_dir() -> Path:
    return Path(str(files("normbench").joinpath("suites")))


def packaged_suites() -> dict[str, Path]:
    """name -> path of every suite shipped with normbench."""
    folder = packaged_dir()
    return {p.stem: p for p in sorted(folder.glob("*.toml"))} if folder.is_dir() else {}


def resolve(name_or_path: str | Path) -> Path:
    """An existing file is itself; otherwise a bare name (`quick`, `quick.toml`) names a shipped suite."""
    path = Path(name_or_path)
    if path.exists():
        return path
    if path.parent != Path("."):
        return path  # a path that does not exist: the loader says so
    shipped = packaged_suites()
    stem = path.name.removesuffix(".toml")
    if stem in shipped:
        return shipped[stem]
    names = ", ".join(shipped) or "none"
    raise NormbenchError(
        f"{name_or_path}: no such suite file, and no shipped suite of that name"
        f"{did_you_mean(stem, list(shipped))} (shipped: {names})"
    )


@dataclass(frozen=True)
class SuiteInfo:
    name: str
    path: Path
    origin: str  # "shipped" or "local"
    description: str
    cases: int | None  # None when the suite does not validate
    problem: str = ""


# a sentence ends at ". " before a capital, but not after an abbreviation ("Shen et al. (2020)", "e.g. The")
_SENTENCE_END = re.compile(r"(?<!\bal\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<=[.?])\s+(?=[A-Z])")


def describe(path: Path, origin: str) -> SuiteInfo:
    """The first line of a suite's description and its case count (or why it has none)."""
    try:
        suite = load_suite(path)
    except NormbenchError as exc:
        first = str(exc).splitlines()[0]
        return SuiteInfo(path.stem, path, origin, "", None, first)
    text = " ".join((suite.description or "").split())
    sentence = _SENTENCE_END.split(text, maxsplit=1)[0].rstrip(".")  # whole: `list` wraps it
    return SuiteInfo(suite.name, path, origin, sentence, len(expand(suite)))


def all_suites(local_dir: Path = Path("suites")) -> list[SuiteInfo]:
    """Shipped suites, then the suites in ./suites that are not the same files."""
    infos = [describe(p, "shipped") for p in packaged_suites().values()]
    shipped = {p.resolve() for p in packaged_suites().values()}
    if local_dir.is_dir():
        infos += [
            describe(p, "local") for p in sorted(local_dir.glob("*.toml")) if p.resolve() not in shipped
        ]
    return infos

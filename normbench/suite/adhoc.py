"""A suite from command-line flags: `normbench run --bench latency --norms layernorm,rmsnorm:composite
--tokens 4096 --d 1024 --dtype bf16 --mode fwd`. The flags are the bench kind's own parameter names
(its Param specs, so a new bench kind gets flags for free); a comma-separated value is a sweep, a single
value a parameter. The flags become a TOML suite text that goes through the same parser and validator as
a suite file (the same checks and messages, with the flag named instead of the key path) and is stored in
the run's manifest like any suite, so `--resume`, `report` and `compare` treat the run as any other.
"""

from __future__ import annotations

import json
import re
from typing import Any

from normbench.benches import all_benches
from normbench.core.errors import NormbenchError, Problem, SuiteError
from normbench.core.params import Param, did_you_mean
from normbench.core.renames import renamed, retired
from normbench.suite.load import parse_suite

SOURCE = "<command line>"


def adhoc_run_suite(kind: str | None, norms: str | None, flags: list[str], suite, resume):
    """`run`'s --bench/--norms: the ad-hoc Suite, or the error when they are combined with what they replace."""
    if kind is None:
        raise NormbenchError("--norms needs --bench KIND (a suite file names its norms itself)")
    if suite is not None or resume is not None:
        raise NormbenchError(
            "--bench builds the suite from flags: give no suite file and no --resume with it"
        )
    return adhoc_suite(kind, norms, flags)


def adhoc_suite(kind: str, norms: str | None, flags: list[str]):
    """The Suite the flags describe (suite/load.Suite); a SuiteError names the flags at fault."""
    text, problems = adhoc_toml(kind, norms, flags)
    try:
        suite = parse_suite(text, SOURCE)
    except SuiteError as exc:
        problems += [_as_flag(p) for p in exc.problems]
    if problems:  # every problem at once: the flags' own and the validator's
        raise SuiteError(SOURCE, problems)
    return suite


def adhoc_toml(kind: str, norms: str | None, flags: list[str]) -> tuple[str, list[Problem]]:
    """The suite text of `--bench KIND [--norms A,B] --PARAM VALUE[,VALUE...] ...`, and the flags that
    name no parameter (left out of the text)."""
    benches = all_benches()
    if kind not in benches:
        raise NormbenchError(
            f"--bench {kind!r}: unknown bench kind; one of {', '.join(sorted(benches))}"
            + did_you_mean(kind, sorted(benches))
        )
    specs = benches[kind].params
    values, problems = parse_flags(flags, specs, kind)
    words = " ".join(["--bench", kind, *(["--norms", norms] if norms else []), *flags])
    lines = [f"name = {_toml(f'adhoc-{kind}')}", f"description = {_toml('normbench run ' + words)}", ""]
    lines += ["[[bench]]", f"kind = {_toml(kind)}", f"label = {_toml(words)}"]
    if norms is not None:
        lines.append(f"norms = {_toml([n.strip() for n in norms.split(',') if n.strip()])}")
    sweep = {k: v for k, v in values.items() if isinstance(v, list)}
    params = {k: v for k, v in values.items() if not isinstance(v, list)}
    for section, table in (("sweep", sweep), ("params", params)):
        if table:
            lines.append(f"[bench.{section}]")
            lines += [f"{k} = {_toml(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n", problems


def parse_flags(flags: list[str], specs: dict[str, Param], kind: str) -> tuple[dict[str, Any], list[Problem]]:
    """`--name value` or `--name=value` pairs -> {param: value or [values]}; unknown names and missing
    values are problems. Values are converted by the parameter's type where they read as one; otherwise
    kept as text, so that the validator says what is wrong with them."""
    values: dict[str, Any] = {}
    problems: list[Problem] = []
    i = 0
    while i < len(flags):
        flag = flags[i]
        name, eq, value = flag.partition("=")
        i += 1
        if not name.startswith("--") or len(name) < 3:
            problems.append(Problem(flag, "expected --PARAMETER VALUE"))
            continue
        if not eq:
            if i >= len(flags) or flags[i].startswith("--"):
                problems.append(Problem(name, "needs a value"))
                continue
            value, i = flags[i], i + 1
        key = name[2:].replace("-", "_")
        # a name from before schema 3 (core/renames.py) reads as today's
        key = renamed(kind).get(key, key) if key not in specs else key
        if key not in specs and (gone := retired(kind, key)):
            if value != str(gone[0]):  # the value every case now has reads as before
                problems.append(Problem(name, gone[1]))
            continue
        if key not in specs:
            hint = did_you_mean(f"--{key}", [f"--{k}" for k in specs])
            problems.append(
                Problem(name, f"not a parameter of bench kind {kind!r}{hint}; it takes {', '.join(specs)}")
            )
            continue
        items = [_convert(v.strip(), specs[key]) for v in value.split(",")]
        values[key] = items if len(items) > 1 else items[0]
    return values, problems


def _convert(text: str, spec: Param) -> Any:
    try:
        if spec.type is bool:
            return {"true": True, "false": False}[text.lower()]
        if spec.type is int:
            return int(text)
        if spec.type is float:
            return float(text)
    except (KeyError, ValueError):
        pass
    return text


def _toml(value: Any) -> str:
    """A TOML value: JSON's strings, integers and lists are TOML's; booleans lower case; floats by repr."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(map(_toml, value)) + "]"
    return json.dumps(value, ensure_ascii=False)


def _as_flag(problem: Problem) -> Problem:
    """A validator's key path as the flag that set it: bench[0].sweep.tokens[1] -> --tokens."""
    where = re.sub(r"^bench\[0\]\.(?:sweep|params)\.(\w+)(?:\[\d+\])?$", lambda m: "--" + m[1], problem.where)
    where = re.sub(r"^bench\[0\]\.norms(?:\[\d+\])?$", "--norms", where)
    message = problem.message
    if where == "bench[0]" and (m := re.match(r"missing required parameter '(\w+)'", message)):
        where, message = f"--{m[1]}", "required for this bench kind"
    return Problem(where, message)

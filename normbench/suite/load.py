"""Read a suite file and validate it against the bench kinds' parameter specs.

Every problem is collected and reported at once, each with the file and its key path:
    suites/x.toml: bench[1].sweep.dtype[0]: 'bf17' is not one of fp32, bf16, fp16, fp64 (did you mean 'bf16'?)
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from normbench.core.case import Case
from normbench.core.errors import NormbenchError, Problem, SuiteError, printable
from normbench.core.params import Param, did_you_mean
from normbench.core.renames import renamed
from normbench.suite.includes import IncludeCycle, load_includes, merge_includes, read_suite_text

TOP_KEYS = {"name", "description", "bench", "claims", "threads", "include", "timeout_s"}
BENCH_KEYS = {"kind", "label", "norms", "impls", "sweep", "params", "timeout_s"}
# A suite expands to at most this many cases (NORMBENCH_MAX_CASES overrides): the count is a product of
# list lengths, checked before anything is expanded, so a typo'd sweep is refused in milliseconds.
MAX_CASES = int(os.environ.get("NORMBENCH_MAX_CASES", "100000"))
# Values from the suite file outside the bench parameters go through the same validator as those.
MAX_THREADS = 1024  # torch.set_num_threads(10**8) segfaults (torch 2.13, measured); 1024 ran fine
THREADS = Param(int, minimum=1, check=lambda n: f"must be <= {MAX_THREADS}" if n > MAX_THREADS else None)
# A limit beyond ~116 days is no limit, and setitimer cannot take 1e308 (every case would fail on it).
MAX_TIMEOUT_S = 1e7
TIMEOUT = Param(
    float,
    exclusive_minimum=0.0,
    check=lambda s: f"must be <= {MAX_TIMEOUT_S:g} s (about 116 days)" if s > MAX_TIMEOUT_S else None,
)


@dataclass
class BenchSpec:
    """One validated [[bench]] table: which (norm, impl) pairs, the sweep lists and the fixed params."""

    index: int
    kind: str
    label: str
    norm_impls: list[tuple[str | None, str | None]]
    sweep: dict[str, list[Any]]
    params: dict[str, Any]
    timeout_s: float | None = None  # per case; the bench's own, else the suite's `timeout_s`
    # Its cases, expanded once while the suite is validated (a bench's `identity` may hash a corpus), then
    # passed along: includes, `validate`, `list suites` and `run` read these instead of expanding again.
    cases: list[Case] | None = field(default=None, repr=False, compare=False)


@dataclass
class Suite:
    name: str
    description: str
    source: str
    text: str
    benches: list[BenchSpec]
    claims: list[str] = field(default_factory=list)
    threads: int | None = None  # torch CPU threads for the run (--threads overrides); None = torch's default
    includes: dict[str, str] = field(default_factory=dict)  # path -> text of every included suite

    @property
    def sha256(self) -> str:
        blob = self.text + "".join(f"\0{k}\0{v}" for k, v in sorted(self.includes.items()))
        return hashlib.sha256(blob.encode()).hexdigest()


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


def validate_suite(data: dict[str, Any], source: str, text: str = "", included_benches: int = 0) -> Suite:
    problems: list[Problem] = []
    for key in data:
        if key not in TOP_KEYS:
            problems.append(Problem(key, "unknown key" + did_you_mean(key, sorted(TOP_KEYS))))
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.append(Problem("name", "required: a non-empty string naming the suite"))
    elif printable(name) != name:  # it reaches terminals, reports and file names
        problems.append(Problem("name", f"{name!r} holds control characters"))
    description = data.get("description", "")
    if not isinstance(description, str):
        problems.append(Problem("description", "must be a string"))
    elif printable(description, keep_newlines=True) != description:
        problems.append(Problem("description", "holds control characters (other than newlines)"))
    claims = _validate_claims(data.get("claims", []), problems)
    threads = _scalar(data, "threads", THREADS, "", problems)
    timeout = _scalar(data, "timeout_s", TIMEOUT, "", problems)
    tables = data.get("bench")
    specs: list[BenchSpec] = []
    if included_benches and tables is None:
        tables = []
    if (
        not isinstance(tables, list)
        or not (tables or included_benches)
        or not all(isinstance(t, dict) for t in tables)
    ):
        problems.append(Problem("bench", "required: one or more [[bench]] tables"))
    else:
        for i, table in enumerate(tables):
            spec = _validate_bench(i, table, problems)
            if spec is not None:
                spec.timeout_s = spec.timeout_s or timeout
                specs.append(spec)
    _check_size(specs, problems)
    if not problems:
        _check_cases(specs, problems)
    if problems:
        raise SuiteError(source, problems)
    return Suite(name.strip(), description, source, text, specs, claims, threads)


def _scalar(table: dict[str, Any], key: str, spec: Param, where: str, problems: list[Problem]) -> Any:
    """A scalar key outside a bench's parameters, through the same validator as the parameters."""
    if key not in table:
        return None
    value, msg = spec.coerce(table[key])
    if msg:
        problems.append(Problem(f"{where}{key}", msg))
    return value


def _check_size(specs: list[BenchSpec], problems: list[Problem]) -> None:
    """Refuse a suite above MAX_CASES from the product of its list lengths, before expanding anything."""
    sizes = [len(s.norm_impls) * math.prod(len(v) for v in s.sweep.values()) for s in specs]
    total = sum(sizes)
    if total > MAX_CASES:
        biggest = max(range(len(specs)), key=sizes.__getitem__)
        spec = specs[biggest]
        factors = " × ".join(f"{len(v)} {k}" for k, v in spec.sweep.items())
        problems.append(
            Problem(
                f"bench[{spec.index}]",
                f"the suite expands to {total:,} cases (this bench: {sizes[biggest]:,} = "
                f"{len(spec.norm_impls)} implementation(s) × {factors or '1'}); the cap is {MAX_CASES:,} "
                "(NORMBENCH_MAX_CASES raises it)",
            )
        )


def _validate_claims(claims: Any, problems: list[Problem]) -> list[str]:
    if not isinstance(claims, list) or not all(isinstance(c, str) for c in claims):
        problems.append(Problem("claims", "must be a list of claim names"))
        return []
    if not claims:  # the claims registry imports pandas: not worth it for a suite without claims
        return []
    try:
        from normbench.analysis.claims import all_claims
    except ImportError:  # no claims registry in this build
        return list(claims)
    known = all_claims()
    for j, claim in enumerate(claims):
        if claim not in known:
            problems.append(
                Problem(f"claims[{j}]", f"unknown claim {claim!r}" + did_you_mean(claim, sorted(known)))
            )
    return list(claims)


def _validate_bench(i: int, table: dict[str, Any], problems: list[Problem]) -> BenchSpec | None:
    from normbench.benches import all_benches

    where = f"bench[{i}]"
    before = len(problems)
    for key in table:
        if key not in BENCH_KEYS:
            problems.append(Problem(f"{where}.{key}", "unknown key" + did_you_mean(key, sorted(BENCH_KEYS))))
    kind = table.get("kind")
    benches = all_benches()
    if not isinstance(kind, str):
        problems.append(Problem(f"{where}.kind", "required: one of " + ", ".join(sorted(benches))))
        return None
    if kind not in benches:
        problems.append(
            Problem(
                f"{where}.kind",
                f"unknown bench kind {kind!r}; one of {', '.join(sorted(benches))}"
                + did_you_mean(kind, sorted(benches)),
            )
        )
        return None
    bench = benches[kind]
    label = table.get("label", kind)
    if not isinstance(label, str):
        problems.append(Problem(f"{where}.label", "must be a string"))
    elif printable(label) != label:
        problems.append(Problem(f"{where}.label", f"{label!r} holds control characters"))
    timeout = _scalar(table, "timeout_s", TIMEOUT, f"{where}.", problems)
    norm_impls = _validate_norms(where, bench, table, problems)
    table = _current_names(where, kind, bench.params, table, problems)
    sweep = _validate_values(where, "sweep", bench.params, table.get("sweep", {}), problems, as_list=True)
    params = _validate_values(where, "params", bench.params, table.get("params", {}), problems, as_list=False)
    for key in sorted(set(sweep) & set(params)):
        problems.append(Problem(f"{where}.params.{key}", "also given in sweep; give it in one place"))
    # "Missing" means not written at all: a key given with a bad value already has its own problem.
    given = {
        k for section in ("sweep", "params") if isinstance(table.get(section), dict) for k in table[section]
    }
    for key, spec in bench.params.items():
        if spec.required and key not in given:
            problems.append(Problem(f"{where}", f"missing required parameter {key!r} (in sweep or params)"))
    if len(problems) > before:
        return None
    resolved = {k: v.default for k, v in bench.params.items() if not v.required and k not in sweep}
    resolved.update(params)
    return BenchSpec(i, kind, label, norm_impls, sweep, resolved, timeout)


def _validate_norms(where, bench, table, problems) -> list[tuple[str | None, str | None]]:
    if not bench.uses_norms:
        for key in ("norms", "impls"):
            if key in table:
                problems.append(Problem(f"{where}.{key}", f"the {bench.kind} bench takes no {key}"))
        return [(None, None)]
    from normbench.norms import all_norms

    norms = all_norms()
    names = table.get("norms")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        problems.append(
            Problem(f"{where}.norms", "required: a list of norms, e.g. ['layernorm', 'rmsnorm:composite']")
        )
        return []
    impl_filter = table.get("impls")
    if impl_filter is not None and (
        not isinstance(impl_filter, list) or not all(isinstance(s, str) for s in impl_filter)
    ):
        problems.append(Problem(f"{where}.impls", "must be a list of implementation names"))
        impl_filter = None
    pairs: list[tuple[str | None, str | None]] = []
    for j, entry in enumerate(names):
        norm_name, _, impl_name = entry.partition(":")
        if norm_name not in norms:
            problems.append(
                Problem(
                    f"{where}.norms[{j}]",
                    f"unknown norm {norm_name!r}; one of {', '.join(sorted(norms))}"
                    + did_you_mean(norm_name, sorted(norms)),
                )
            )
            continue
        norm = norms[norm_name]
        if impl_name:
            if impl_name not in norm.impls:
                problems.append(
                    Problem(
                        f"{where}.norms[{j}]",
                        f"{norm_name} has no implementation {impl_name!r}; "
                        f"it has {', '.join(norm.impls)}" + did_you_mean(impl_name, list(norm.impls)),
                    )
                )
                continue
            chosen = [impl_name]
        elif impl_filter is not None:
            chosen = [i for i in norm.impls if i in impl_filter]
        else:
            # every implementation but those marked default=False (compiled, third-party): name them to run them
            defaults = [i for i, info in norm.impls.items() if info.default]
            chosen = defaults if bench.all_impls_by_default else [norm.baseline]
        pairs.extend((norm_name, i) for i in chosen if (norm_name, i) not in pairs)
    if impl_filter is not None:
        offered = {i for n in names for i in norms.get(n.partition(":")[0], norms["identity"]).impls}
        for j, impl_name in enumerate(impl_filter):
            if impl_name not in offered:
                problems.append(
                    Problem(
                        f"{where}.impls[{j}]",
                        f"no norm listed offers {impl_name!r}" + did_you_mean(impl_name, sorted(offered)),
                    )
                )
    return pairs


def _current_names(where, kind, specs, table, problems) -> dict[str, Any]:
    """The bench table with renamed parameters under their current names (core/renames.py): the old
    spelling is an alias, so suites written before, and the suite text stored in older runs that
    `run --resume` reads again, keep working. Both spellings at once is a problem."""
    aliases = {old: new for old, new in renamed(kind).items() if old not in specs}
    out = dict(table)
    for section in ("sweep", "params"):
        values = table.get(section)
        if not isinstance(values, dict) or not aliases.keys() & values.keys():
            continue
        out[section] = {}
        for key, value in values.items():
            new = aliases.get(key, key)
            if new != key and new in values:
                problems.append(Problem(f"{where}.{section}.{key}", f"the old name of {new!r}; give one"))
            out[section][new] = value
    return out


def _validate_values(where, section, specs, values, problems, *, as_list: bool) -> dict[str, Any]:
    if not isinstance(values, dict):
        problems.append(Problem(f"{where}.{section}", "must be a table"))
        return {}
    out: dict[str, Any] = {}
    for key, value in values.items():
        path = f"{where}.{section}.{key}"
        if key not in specs:
            problems.append(
                Problem(
                    path,
                    "unknown parameter for this bench kind"
                    + did_you_mean(key, sorted(specs))
                    + f"; it takes {', '.join(sorted(specs))}",
                )
            )
            continue
        if as_list:
            if not isinstance(value, list) or not value:
                problems.append(Problem(path, "sweep values must be a non-empty list"))
                continue
            if len(value) > MAX_CASES:
                problems.append(
                    Problem(path, f"{len(value):,} values; a suite runs at most {MAX_CASES:,} cases")
                )
                continue
            good, seen = [], set()  # a set: a list's `in` made a 10⁵-value sweep take minutes
            for j, item in enumerate(value):
                coerced, msg = specs[key].coerce(item)
                if msg:
                    problems.append(Problem(f"{path}[{j}]", msg))
                elif coerced in seen:
                    problems.append(Problem(f"{path}[{j}]", f"{item!r} is listed twice"))
                else:
                    good.append(coerced)
                    seen.add(coerced)
            out[key] = good
        else:
            if isinstance(value, (list, dict)):
                problems.append(Problem(path, "params are scalars; put lists under sweep"))
                continue
            coerced, msg = specs[key].coerce(value)
            if msg:
                problems.append(Problem(path, msg))
            else:
                out[key] = coerced
    return out


def _check_cases(specs: list[BenchSpec], problems: list[Problem]) -> None:
    """Run each bench's cross-parameter rules on every expanded case, and refuse duplicate cases."""
    from normbench.benches import all_benches
    from normbench.suite.expand import expand_bench

    seen: dict[str, int] = {}
    for spec in specs:
        bench = all_benches()[spec.kind]
        messages: dict[Problem, None] = {}
        duplicates = 0
        spec.cases = list(expand_bench(spec))
        for case in spec.cases:
            for key, msg in bench.check_case(case.params, case.norm, case.impl):
                section = "" if key in BENCH_KEYS else "sweep." if key in spec.sweep else "params."
                messages[Problem(f"bench[{spec.index}].{section}{key}", msg)] = None
            if case.case_id in seen and seen[case.case_id] != spec.index:
                duplicates += 1
                first = seen[case.case_id]
            seen.setdefault(case.case_id, spec.index)
        problems.extend(messages)
        if duplicates:
            problems.append(
                Problem(f"bench[{spec.index}]", f"repeats {duplicates} case(s) of bench[{first}]")
            )

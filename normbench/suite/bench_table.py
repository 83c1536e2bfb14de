"""Validate one [[bench]] table of a suite: its kind, its norms and implementations, and its sweep and
params against the bench's parameter specs (validate.py validates the suite around it)."""

from __future__ import annotations

import math
from typing import Any

from normbench.benches import all_benches
from normbench.core.errors import Problem, printable
from normbench.core.params import Param, did_you_mean
from normbench.core.renames import MOVES, renamed, retired
from normbench.core.settings import env_number
from normbench.norms import all_norms
from normbench.suite.expand import expand_bench
from normbench.suite.spec import BenchSpec

BENCH_KEYS = {"kind", "label", "norms", "impls", "sweep", "params", "timeout_s"}


def validate_bench(
    i: int, table: dict[str, Any], problems: list[Problem], defaults: dict[str, Any] | None = None
) -> BenchSpec | None:
    """defaults: suite-level values of bench parameters (the top-level `reference`), used by every bench
    that has the parameter and does not set it itself."""
    where = f"bench[{i}]"
    before = len(problems)
    for key in table:
        if key not in BENCH_KEYS:
            problems.append(Problem(f"{where}.{key}", "unknown key" + did_you_mean(key, sorted(BENCH_KEYS))))
    kind, table = _current_kind(where, table.get("kind"), table, problems)
    benches = all_benches()
    if not isinstance(kind, str):
        problems.append(Problem(f"{where}.kind", "required: one of " + ", ".join(sorted(benches))))
        return None
    if kind not in benches:
        problems.append(Problem(f"{where}.kind", _unknown("bench kind", kind, benches)))
        return None
    bench = benches[kind]
    label = table.get("label", kind)
    if not isinstance(label, str):
        problems.append(Problem(f"{where}.label", "must be a string"))
    elif printable(label) != label:
        problems.append(Problem(f"{where}.label", f"{label!r} holds control characters"))
    timeout = scalar_value(table, "timeout_s", TIMEOUT, f"{where}.", problems)
    norm_impls = _validate_norms(where, bench, table, problems)
    table = _current_names(where, kind, bench.params, table, problems)
    sweep = _validate_values(
        where, "sweep", kind, bench.params, table.get("sweep", {}), problems, as_list=True
    )
    params = _validate_values(
        where, "params", kind, bench.params, table.get("params", {}), problems, as_list=False
    )
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
    defaults = defaults or {}
    resolved = {
        k: defaults.get(k, v.default) for k, v in bench.params.items() if not v.required and k not in sweep
    }
    resolved.update(params)
    return BenchSpec(i, kind, label, norm_impls, sweep, resolved, timeout)


def _validate_norms(where, bench, table, problems) -> list[tuple[str | None, str | None]]:
    if not bench.uses_norms:
        for key in ("norms", "impls"):
            if key in table:
                problems.append(Problem(f"{where}.{key}", f"the {bench.kind} bench takes no {key}"))
        return [(None, None)]
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
            problems.append(Problem(f"{where}.norms[{j}]", _unknown("norm", norm_name, norms)))
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


def _current_kind(where, kind, table, problems) -> tuple[Any, dict[str, Any]]:
    """The kind of a table whose cases moved to another (core/renames.py MOVES), the table in its terms:
    kind = "stability" with model = "encdec" is kind = "encdec" (the old spelling is an alias, as a renamed
    parameter's: suites written before, and the suite text an older run's `run --resume` reads)."""
    for move in (m for version in sorted(MOVES) for m in MOVES[version] if m.old == kind):
        sweep, params = table.get("sweep"), table.get("params")
        if isinstance(sweep, dict) and move.key in sweep:
            new = f'{move.key} = "{move.value}" is bench kind "{move.new}" now: one table of each kind'
            problems.append(Problem(f"{where}.sweep.{move.key}", new))
            table = {**table, "sweep": {k: v for k, v in sweep.items() if k != move.key}}
        if isinstance(params, dict) and params.get(move.key) in (move.value, move.stays):
            first = move.first if params[move.key] == move.value else {}
            rest = {k: v for k, v in params.items() if k != move.key and not (k in first and first[k] == v)}
            return (move.new if first else kind), {**table, "params": rest}
    return kind, table


def _unknown(what: str, name: str, known) -> str:
    return f"unknown {what} {name!r}; one of {', '.join(sorted(known))}" + did_you_mean(name, sorted(known))


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


def _validate_values(where, section, kind, specs, values, problems, *, as_list: bool) -> dict[str, Any]:
    if not isinstance(values, dict):
        problems.append(Problem(f"{where}.{section}", "must be a table"))
        return {}
    out: dict[str, Any] = {}
    for key, value in values.items():
        path = f"{where}.{section}.{key}"
        if key not in specs and (gone := retired(kind, key)):
            if (value if as_list and isinstance(value, list) else [value]) != [gone[0]]:
                problems.append(Problem(path, gone[1]))
            continue
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
            if len(value) > (cap := max_cases()):
                problems.append(Problem(path, f"{len(value):,} values; a suite runs at most {cap:,} cases"))
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


# A limit beyond ~116 days is no limit, and setitimer cannot take 1e308 (every case would fail on it).
MAX_TIMEOUT_S = 1e7


TIMEOUT = Param(
    float,
    exclusive_minimum=0.0,
    check=lambda s: f"must be <= {MAX_TIMEOUT_S:g} s (about 116 days)" if s > MAX_TIMEOUT_S else None,
)


def scalar_value(table: dict[str, Any], key: str, spec: Param, where: str, problems: list[Problem]) -> Any:
    """A scalar key outside a bench's parameters, through the same validator as the parameters."""
    if key not in table:
        return None
    value, msg = spec.coerce(table[key])
    if msg:
        problems.append(Problem(f"{where}{key}", msg))
    return value


# A suite expands to at most this many cases (NORMBENCH_MAX_CASES overrides): the count is a product of
# list lengths, checked before anything is expanded, so a typo'd sweep is refused in milliseconds.
MAX_CASES = 100_000


def max_cases() -> int:
    """The cap: NORMBENCH_MAX_CASES when set (empty is unset; not a positive integer: one line), else
    MAX_CASES. Read when a suite is checked, not at import, so a bad value is an error, not a crash."""
    return int(env_number("NORMBENCH_MAX_CASES", MAX_CASES, above=0, integer=True))


def check_size(specs: list[BenchSpec], problems: list[Problem]) -> None:
    """Refuse a suite above MAX_CASES from the product of its list lengths, before expanding anything."""
    sizes = [len(s.norm_impls) * math.prod(len(v) for v in s.sweep.values()) for s in specs]
    total = sum(sizes)
    if total > (cap := max_cases()):
        biggest = max(range(len(specs)), key=sizes.__getitem__)
        spec = specs[biggest]
        factors = " × ".join(f"{len(v)} {k}" for k, v in spec.sweep.items())
        problems.append(
            Problem(
                f"bench[{spec.index}]",
                f"the suite expands to {total:,} cases (this bench: {sizes[biggest]:,} = "
                f"{len(spec.norm_impls)} implementation(s) × {factors or '1'}); the cap is {cap:,} "
                "(NORMBENCH_MAX_CASES raises it)",
            )
        )


def check_cases(specs: list[BenchSpec], problems: list[Problem]) -> None:
    """Run each bench's cross-parameter rules on every expanded case, and refuse duplicate cases."""

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

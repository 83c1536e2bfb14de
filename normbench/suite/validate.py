"""Validate a parsed suite against the bench kinds' parameter specs, the norm registry and the claims.

Every problem is collected and reported at once, each with the file and its key path:
    suites/x.toml: bench[1].sweep.dtype[0]: 'bf17' is not one of fp32, bf16, fp16, fp64 (did you mean 'bf16'?)
"""

from __future__ import annotations

from typing import Any

from normbench.analysis.claims import all_claims
from normbench.benches import get_bench
from normbench.core.errors import Problem, SuiteError, printable
from normbench.core.params import Param, did_you_mean
from normbench.suite.bench_table import TIMEOUT, check_cases, check_size, scalar_value, validate_bench
from normbench.suite.spec import BenchSpec, Suite

TOP_KEYS = {
    "name",
    "description",
    "bench",
    "claims",
    "threads",
    "processes",
    "include",
    "timeout_s",
    "pages",
    "reference",
}


# Values from the suite file outside the bench parameters go through the same validator as those.
MAX_THREADS = 1024  # torch.set_num_threads(10**8) segfaults (torch 2.13, measured); 1024 ran fine


THREADS = Param(int, minimum=1, check=lambda n: f"must be <= {MAX_THREADS}" if n > MAX_THREADS else None)
MAX_PROCESSES = 64  # fresh processes per CPU timing case (executors/processes.py): beyond, imports dominate
PROCESSES = Param(
    int, minimum=1, check=lambda n: f"must be <= {MAX_PROCESSES}" if n > MAX_PROCESSES else None
)
# CPU page state of the timing process (timing/pages.py); applied when the run starts, before torch does
PAGES = Param(str, choices=("huge", "base"))
# The implementation every latency case is timed against in the same rounds, for the whole suite (a bench
# may set its own in [bench.params]); the latency bench's own parameter spec checks it.


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
    threads = scalar_value(data, "threads", THREADS, "", problems)
    pages = scalar_value(data, "pages", PAGES, "", problems)
    processes = scalar_value(data, "processes", PROCESSES, "", problems)
    timeout = scalar_value(data, "timeout_s", TIMEOUT, "", problems)
    reference = scalar_value(data, "reference", _reference_param(), "", problems)
    defaults = {"reference": reference} if reference is not None else {}
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
            spec = validate_bench(i, table, problems, defaults)
            if spec is not None:
                spec.timeout_s = spec.timeout_s or timeout
                specs.append(spec)
    check_size(specs, problems)
    if not problems:
        check_cases(specs, problems)
    if problems:
        raise SuiteError(source, problems)
    return Suite(
        name.strip(), description, source, text, specs, claims, threads, pages=pages, processes=processes
    )


def _reference_param() -> Param:
    return get_bench("latency").params["reference"]


def _validate_claims(claims: Any, problems: list[Problem]) -> list[str]:
    if not isinstance(claims, list) or not all(isinstance(c, str) for c in claims):
        problems.append(Problem("claims", "must be a list of claim names"))
        return []
    if not claims:  # discovering the claims imports their modules (and pandas): not for a suite without any
        return []
    known = all_claims()
    for j, claim in enumerate(claims):
        if claim not in known:
            problems.append(
                Problem(f"claims[{j}]", f"unknown claim {claim!r}" + did_you_mean(claim, sorted(known)))
            )
    return list(claims)

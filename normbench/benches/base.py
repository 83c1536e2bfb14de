"""What a bench kind is: its parameters (validated before anything runs), how it runs one case, and how
its stored rows become report tables.

Details: docs/extending.md, "Adding a bench kind"."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from normbench.core.params import Param
from normbench.core.registry import Registry

if TYPE_CHECKING:
    import pandas as pd

    from normbench.core.case import Case
    from normbench.core.tables import ReportOptions, Table
    from normbench.core.tolerance import Tolerance


@dataclass
class CaseResult:
    """What one case produced. rows: dicts with at least metric, unit, value; optional sample (raw
    sample index), step (training step) and any label columns (layer, ...). status: ok, or a
    bench-specific outcome such as diverged; `failed`/`skipped` are set by the runner from exceptions."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    status: str = "ok"
    error: str | None = None


@dataclass
class RunContext:
    """Shared across the cases of one run: a memo for work several cases reuse (the training corpus),
    and run-wide settings.

    upcoming: the cases this process runs after the current one, in order (the local executor sets it;
    empty under Ray, where each task runs one case). A bench may measure some of them together with the
    current case (latency: every implementation at one shape in one set of paired rounds) and leave their
    results in `ready` (case_id -> CaseResult, or the exception the case raised); the runner then returns
    that result when the case's turn comes (runner.run_one) and the local executor runs such cases next."""

    threads: int
    memo: dict[Any, Any] = field(default_factory=dict)
    upcoming: list[Case] = field(default_factory=list)
    ready: dict[str, Any] = field(default_factory=dict)
    processes: int = 1  # fresh processes each CPU timing case is timed in (executors/processes.py)
    pages: str | None = None  # the page state those processes start in (timing/pages.py)
    quiet: bool = False  # --quiet: no line per timing process


class Bench:
    kind: ClassVar[str]
    description: ClassVar[str] = ""
    params: ClassVar[dict[str, Param]] = {}
    # Label columns the rows of this bench may carry besides metric/unit/value (layer, tensor, ...), with
    # their types: declared so that every part of a run has every column (results/schema.py).
    labels: ClassVar[dict[str, type]] = {}
    uses_norms: ClassVar[bool] = True
    # True for benches that time something: under a parallel executor such a case runs alone on its node
    # (no other case shares its CPUs, memory bandwidth or GPU while it is timed).
    exclusive_node: ClassVar[bool] = False
    # When a suite names a norm without an impl: expand every impl (latency) or only the baseline one.
    all_impls_by_default: ClassVar[bool] = True
    # What `normbench compare` tests: metric -> "lower" or "higher" is better ("lower_abs": smaller magnitude). Raw samples (rows with a
    # sample index) or values pooled over the `compare_pool` parameters (seeds) feed the significance test.
    compare_metrics: ClassVar[dict[str, str]] = {}
    # Timing metrics compared only with `compare --absolute` (seconds move with the machine's speed; the
    # paired ratios in compare_metrics do not)
    absolute_metrics: ClassVar[dict[str, str]] = {}
    # Compare metrics that are paired ratios (timing/paired.py): load and the machine's name do not
    # make them incomparable (analysis/compare/comparability.py)
    paired_metrics: ClassVar[tuple[str, ...]] = ()
    compare_pool: ClassVar[tuple[str, ...]] = ("seed",)

    def compare_tolerance(self, metric: str, params: dict[str, Any]) -> Tolerance | None:
        """None for a timing metric (same machine, unloaded only: analysis/compare/comparability.py).
        A deterministic metric returns how far two machines may put its values apart (core/tolerance.py):
        within it `compare` calls them equal, whatever the load or the hostname."""
        return None

    def check_case(self, params: dict[str, Any], norm: str | None, impl: str | None) -> list[tuple[str, str]]:
        """Cross-parameter rules for one resolved case: (param key, message) per problem."""
        return []

    def identity(self, params: dict[str, Any]) -> dict[str, Any]:
        """What else defines a case beyond its parameters (e.g. the SHA-256 of the data it trains on): it
        enters the case id, so results on different inputs never share one."""
        return {}

    def run_case(self, case: Case, ctx: RunContext) -> CaseResult:
        raise NotImplementedError

    # True for benches whose cases `normbench ab` times side by side (time_sides)
    times_sides: ClassVar[bool] = False

    def case_norms(self, case: Case) -> set[str]:
        """The registry norms whose code a case runs (`normbench ab` skips a case none of them changed in)."""
        return {case.norm} if case.norm else set()

    def time_sides(self, case: Case, norms: dict[str, Any], seed: int) -> dict[str, Any]:
        """`normbench ab`: the case's implementation built from each registry in `norms` (side name ->
        get_norm of that side), timed in the same paired rounds, order shuffled by `seed`: side -> Samples."""
        raise NotImplementedError(f"bench kind {self.kind!r} is not timed by normbench ab")

    def process_share(self, params: dict[str, Any], index: int, k: int) -> dict[str, Any]:
        """A timing case's parameters in process `index` of the k fresh processes that time it
        (executors/processes.py; the benches that time sides): its share of the rounds."""
        from normbench.benches._processes import process_share

        return process_share(params, index, k)

    def merge_processes(self, results: list) -> tuple[list[dict[str, Any]], str, str | None]:
        """(rows, status, error) of a case from its k processes' (index, rows, status, error)."""
        from normbench.benches._processes import merge_processes

        return merge_processes(results)

    def report(self, frame: pd.DataFrame, opts: ReportOptions) -> list[Table]:
        return []

    def headline(self, rows: pd.DataFrame, opts: ReportOptions) -> list[str]:
        """The report summary's lines for this kind (its rows, every status): the answer in a few lines
        of prose, each at most ~110 characters, and what to distrust. [] = no summary lines."""
        return []

    def per_case(self, rows: pd.DataFrame) -> pd.DataFrame:
        """One row per case: the summary numbers claims about this kind read. Analysis asks for it through
        the registry (get_bench(kind).per_case) instead of importing the bench's module."""
        raise NotImplementedError(f"bench kind {self.kind!r} has no per-case summary")


class TimingBench(Bench):
    """A bench that times what it compares in paired rounds (latency, block): alone on its node under a
    parallel executor, gated by `compare` on its paired ratios, which cancel the machine's speed (timing/
    paired.py; the absolute time only with `compare --absolute`), and timed side by side by `normbench ab`."""

    exclusive_node = True
    compare_metrics = {"time_vs_ref": "lower", "time_vs_copy": "lower"}
    absolute_metrics = {"time": "lower"}
    paired_metrics = ("time_vs_ref", "time_vs_copy")
    compare_pool = ()
    times_sides = True


BENCHES: Registry[Bench] = Registry("bench kind", "normbench.benches")


def register_bench(cls: type[Bench]) -> type[Bench]:
    BENCHES.add(cls.kind, cls())
    return cls


def all_benches() -> dict[str, Bench]:
    return BENCHES.all()


def get_bench(kind: str) -> Bench:
    return BENCHES.get(kind)

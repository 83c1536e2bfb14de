"""Bench kinds, one module each, registered with @register_bench. Modules import torch only inside
run_case, so validation and reports stay fast.

Details: docs/architecture.md, "Where does X go?"."""

from normbench.benches.base import Bench, CaseResult, RunContext, all_benches, get_bench, register_bench

__all__ = ["Bench", "CaseResult", "RunContext", "all_benches", "get_bench", "register_bench"]

"""Bench kinds, one module each, registered with @register_bench. Modules import torch only inside
run_case, so validation and reports stay fast.

Where a bench's code lives (tests/test_layers.py holds the rule):
    benches/<kind>.py     the kind: its parameters, run_case, report and headline hooks
    benches/_<kind>/      helpers of that kind alone, imported by benches/<kind>.py and each other
    benches/_<name>.py    helpers several kinds share: _tensors (device/dtype checks, the timed step),
                          _memory (peak memory of a call), _samples (timing samples into rows)
    benches/_lm/          the language model and data that the init and stability benches share
"""

from normbench.benches.base import Bench, CaseResult, RunContext, all_benches, get_bench, register_bench

__all__ = ["Bench", "CaseResult", "RunContext", "all_benches", "get_bench", "register_bench"]

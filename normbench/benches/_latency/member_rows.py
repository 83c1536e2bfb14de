"""A latency case's rows once its round set is timed (_latency/round_set.py): the re-check after timing,
raw times, the paired ratios to the reference and the copy probe, bandwidth, page state, process state,
peak memory."""

from __future__ import annotations

from dataclasses import dataclass

from normbench.benches._latency.accuracy import recheck, recheck_stateful, run_outputs
from normbench.benches._latency.copy_probe import bandwidth_rows
from normbench.benches._latency.placement import placement_rows
from normbench.benches._latency.process import page_rows, process_rows, resident_extra_bytes
from normbench.benches._latency.round_set import COPY, Member, others_bytes
from normbench.benches._memory import peak_memory_row
from normbench.benches._samples import ratio_rows, sample_stat, timing_rows
from normbench.benches.base import CaseResult
from normbench.timing.paired import paired_ratios


@dataclass
class RoundSet:
    """What every member of one timed round set shares."""

    p: dict
    x: object
    copies: list  # the input and its placements
    members: list[Member]
    measured: dict  # label -> Samples
    reference: str | None  # the reference's label where it was timed
    copy: str | None  # the copy probe's label where it was timed
    timer: object
    reset: object  # the cache-reset buffer, or None
    speed_rows: list[dict]  # the machine's speed around the timed section (the same for every member)
    owner: str  # the case id of the case that timed the set
    seed: int  # the order within rounds
    threads: int
    memo: dict
    grad_context: object

    def steps_of(self, label: str) -> list:
        return next(m.steps for m in self.members if m.label == label)


def member_result(m: Member, s: RoundSet) -> CaseResult:
    p = s.p
    samples = s.measured[m.label]
    is_copy = m.label == s.copy
    copy_samples = s.measured[s.copy] if s.copy else None
    rows = [*m.rows, *s.speed_rows]
    m.check("after timing")  # a kernel that corrupts its output under repetition is caught here
    t = sample_stat(samples.times, p["stat"])
    if t <= 0:
        raise RuntimeError(f"{p['stat']} time {t:.3g} s: the flush's cost swamps the call (graph mode)")
    if m.acc is not None:
        impl_cmp, acc_rows, (xa, dya) = m.acc
        if m.norm.stateful:  # its output moves with its state: re-judged against the reference instead
            err = recheck_stateful(m.norm, m.case.impl, m.built, impl_cmp, xa, dya, p)
            rows += acc_rows + [{"metric": "recheck_err_abs", "unit": "abs", "value": err}]
        else:
            change = recheck(impl_cmp, run_outputs(m.norm, m.built, xa, dya, p["mode"]))
            rows += acc_rows + [{"metric": "recheck_max_change", "unit": "abs", "value": change}]
    rows += timing_rows("time", samples)
    if s.reference and s.reference != m.label:
        ratios = paired_ratios(samples, s.measured[s.reference])
        rows += ratio_rows("time_vs_ref", ratios, reference=s.reference)
    if copy_samples is not None and not is_copy:
        rows += ratio_rows("time_vs_copy", paired_ratios(samples, copy_samples), reference=COPY)
    step = m.steps[0]
    # fast: times only (smaps costs ~12 ms a case); lean: a process after the first of k (_processes.py)
    if p["device"] == "cpu" and p.get("preset") != "fast" and not p.get("lean"):
        with s.grad_context():  # one more call: its output and gradients sit where the timed calls' did
            output = step()
        grads = [g.grad for g in (*step.own_tensors, *m.built.params) if g.grad is not None]
        rows += page_rows(p["device"], s.x, list(m.built.params), step.own_tensors, grads, output)
    rows += placement_rows(samples, len(s.copies))
    rows += bandwidth_rows(m.norm, m.case.impl, s.x, p, t, copy_samples)
    copy_steps = None if is_copy or not s.copy else s.steps_of(s.copy)
    extra = resident_extra_bytes(
        m.acc, copy_steps, s.timer, s.memo, s.reset, placed=(s.copies[1:], m.steps[1:])
    )
    probe = None if is_copy else copy_samples
    rows += process_rows({"norm": samples, "copy": probe}, extra + others_bytes(s.members, m))
    rows.append({"metric": "cache_reset", "unit": "bool", "value": float(s.reset is not None)})
    rows += [{"metric": k, "unit": "MHz", "value": v} for k, v in samples.extra.items() if k.endswith("_mhz")]
    rows += [
        {"metric": "inner_loops", "unit": "calls", "value": float(samples.inner)},
        {"metric": "threads", "unit": "threads", "value": float(s.threads)},
        {"metric": "round_seed", "unit": "seed", "value": float(s.seed)},
        {"metric": "round_members", "unit": "implementations", "value": float(len(s.members))},
    ]
    if p["memory"]:
        rows.append(peak_memory_row(step, p["device"], s.grad_context))
    for row in rows:
        row.setdefault("timer", samples.timer)
        row.setdefault("round_set", s.owner)
    return CaseResult(rows)

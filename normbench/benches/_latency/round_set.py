"""A latency round set: the implementations timed together in paired rounds (a case, its `reference`,
the copy probe and, under `pairing = "shape"`, every later case at the same parameters), within
ROUND_SET_BYTES and MAX_MEMBERS. Why pairing and the rules of a set: docs/methodology.md, "Paired rounds"."""

from __future__ import annotations

from dataclasses import dataclass, field

from normbench.benches._latency.accuracy import measure_accuracy
from normbench.benches._latency.first_call import first_call
from normbench.benches._tensors import copy_step, make_step
from normbench.core.errors import UnavailableCase
from normbench.norms import get_norm
from normbench.timing.process import tensor_bytes

COPY = "identity:copy"
MAX_MEMBERS = 24  # implementations in one round set at most (each round times every one of them)
ROUND_SET_BYTES = 512 * 2**20  # the set's own tensors resident while it is timed, at most (estimate)


@dataclass
class Member:
    """One implementation in a round set. case is None for a member timed only for the others' ratios
    (the reference or the copy probe when the run has no case of its own for it)."""

    label: str  # norm:impl
    case: object | None
    steps: list  # one step per placement (copies of the input)
    norm: object = None
    built: object = None
    check: object = None
    rows: list = field(default_factory=list)  # the first call's rows
    acc: tuple | None = None

    def own_tensors(self) -> list:
        kept = [getattr(s, "own_tensors", []) for s in self.steps]
        if self.built is not None:
            kept.append(list(self.built.params))
        if self.acc is not None:
            kept.append(self.acc[0].outputs)
        return kept


def peers_of(case, ctx, p: dict, x) -> list:
    """The later cases of this process (RunContext.upcoming) that share every parameter of `case` and can
    join its round set: none under pairing = "case", with a time limit, or beyond the budgets."""
    if p["pairing"] != "shape" or case.timeout_s is not None:
        return []
    per_member = tensor_bytes(x) * (1 if p["mode"] == "fwd" else 4) * p["placements"]
    room = min(MAX_MEMBERS - 3, ROUND_SET_BYTES // max(1, per_member) - 3)
    peers = [
        c
        for c in ctx.upcoming
        if c.kind == case.kind
        and c.params == case.params
        and c.timeout_s is None
        and c.case_id not in ctx.ready
    ]
    return peers[: max(0, room)]


def label_of(case) -> str:
    return f"{case.norm}:{case.impl}"


def prepare(case, p: dict, x, copies: list, grad_context, memo) -> Member:
    """Build a case's implementation, time its first call, check its accuracy, and make one step per copy
    of the input: everything a case does before it is timed."""
    norm = get_norm(case.norm)
    if missing := norm.impls[case.impl].missing_requirement():
        raise UnavailableCase(missing)
    built, step, check, rows = first_call(norm, case.impl, p, x, grad_context)
    acc = measure_accuracy(norm, case.impl, built, x, p, memo) if p["accuracy_rows"] else None
    return Member(label_of(case), case, _steps(built, step, copies, p), norm, built, check, rows, acc)


def timed_only(label: str, p: dict, x, copies: list, grad_context) -> Member:
    """The reference or the copy probe as a member of no case of its own: built and checked, not stored."""
    if label == COPY:
        dy = None
        steps = []
        for xi in copies:
            s = copy_step(xi, p["mode"], dy=dy)
            dy = getattr(s, "dy", None)  # every copy's upstream gradient has the same values
            steps.append(s)
        return Member(COPY, None, steps)
    name, impl = label.split(":", 1)
    norm = get_norm(name)
    if missing := norm.impls[impl].missing_requirement():
        raise UnavailableCase(missing)
    built, step, check, _ = first_call(norm, impl, p, x, grad_context)
    return Member(label, None, _steps(built, step, copies, p), norm, built, check)


def place(member: Member, copies: list, p: dict) -> list:
    """The member's steps on every copy of the input (its first step stays the one on the input)."""
    return _steps(member.built, member.steps[0], copies, p)


def _steps(built, step, copies: list, p: dict) -> list:
    dy = getattr(step, "dy", None)  # fwd+bwd: every copy's upstream gradient has the same values
    return [step] + [make_step(built, xi, p["mode"], dy=dy)[0] for xi in copies[1:]]


def others_bytes(members: list[Member], member: Member) -> int:
    """Bytes of the other members' own tensors: resident beside this member's while the set is timed."""
    return tensor_bytes(*(m.own_tensors() for m in members if m is not member))


def round_seed(case) -> int:
    """The seed of the order within each round: from the case id of the case that timed the set, so the
    same case shuffles the same way in every run (and it is recorded as `round_seed`)."""
    return int(case.case_id[:8], 16)

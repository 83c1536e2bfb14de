"""What `run --resume` checks before it runs anything: the run is finished under the case ids its manifest
recorded, never under ids today's code and files make up. The stored suite text must hash to the recorded
`suite_sha256` (an edited manifest is refused), and every recorded case must come out of that text again with
the same id; when one does not (a default changed in an upgrade, the text under `corpus_dir` changed, a
relative `corpus_dir` read from another folder) the refusal names the parameter or the data that changed.
Cases the suite gains today (a new default implementation) are not part of the run and are left out."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from normbench.benches import get_bench
from normbench.core.case import Case
from normbench.core.errors import NormbenchError, printable
from normbench.core.plugins import OVERRIDES

Say = Callable[[str], None]


def check_suite_hash(manifest, suite, where: Path) -> None:
    """The stored suite text (and its includes) must hash to what the run recorded when it started."""
    recorded = manifest.suite_sha256
    if recorded is not None and recorded != suite.sha256:
        raise NormbenchError(
            f"{where}: cannot resume: the stored suite text hashes to {suite.sha256[:16]}…, but the run "
            f"recorded suite_sha256 {recorded[:16]}… (suite_text or suite_includes edited?); start a new run"
        )


def recorded_cases(manifest, cases: list[Case], where: Path, say: Say) -> list[Case]:
    """The cases of `cases` the manifest recorded, in order; refused when a recorded one is missing."""
    recorded = [c["case_id"] for c in manifest.cases or []]
    by_id = {c.case_id: c for c in cases}
    missing = [cid for cid in recorded if cid not in by_id]
    if missing:
        labels = {c["case_id"]: str(c.get("label", "")) for c in manifest.cases}
        raise NormbenchError(printable(drift_message(missing, labels, cases, manifest, where)))
    extra = len(cases) - len(recorded)
    if extra > 0:
        say(
            f"note: the suite now expands to {extra} more case(s) than the run planned; --resume leaves them out"
        )
    return [by_id[cid] for cid in recorded]


def drift_message(missing: list[str], labels: dict[str, str], cases: list[Case], manifest, where) -> str:
    old_label = labels.get(missing[0], "")
    change = what_changed(old_label, cases)
    version = (manifest.env or {}).get("normbench")
    started = f" (it started under normbench {version})" if version else ""
    return (
        f"{where}: cannot resume: {len(missing)} of {len(labels)} recorded cases no longer expand to the ids "
        f"the run recorded{started}; first: {missing[0]} '{old_label}': {change}. Finishing it would "
        "run them again under new ids; start a new run (or resume with what it started with)"
    )


def what_changed(old_label: str, cases: list[Case]) -> str:
    """The parameters that differ between a recorded case's label and today's closest case of the same
    kind and implementation, or, with equal parameters, what the bench adds to the id (its data)."""
    head, old = split_label(old_label)
    same_head = [c for c in cases if split_label(c.label)[0] == head]
    if not same_head:
        return f"no case of {head or 'that kind'} comes out of the suite any more"
    best = max(same_head, key=lambda c: sum(split_label(c.label)[1].get(k) == v for k, v in old.items()))
    new = split_label(best.label)[1]
    diffs = [f"{k}: {old[k]} -> {new[k]}" for k in old if k in new and old[k] != new[k]]
    diffs += [f"new parameter {k} = {new[k]}" for k in new if k not in old]
    diffs += [f"parameter {k} = {old[k]} no longer exists" for k in old if k not in new]
    if diffs:
        return "; ".join(diffs)
    return identity_change(best)


def identity_change(case: Case) -> str:
    identity = get_bench(case.kind).identity(case.params)
    text = f"same parameters, but what else defines the case changed: now {identity}"
    corpus = case.params.get("corpus_dir")
    if corpus:
        place = "" if os.path.isabs(corpus) else f", read relative to the current folder {os.getcwd()}"
        text += f" (the text under corpus_dir {corpus!r}{place})"
    return text


_PAIR = re.compile(r" (?=[A-Za-z_][A-Za-z0-9_]*=)")


def split_label(label: str) -> tuple[str, dict[str, str]]:
    """'latency layernorm:module tokens=8 d=16' -> ('latency layernorm:module', {tokens: '8', ...});
    a value with spaces stays whole (a pair starts only where `name=` follows a space)."""
    pieces = _PAIR.split(label)
    head, params = pieces[0], {}
    for piece in pieces[1:]:
        key, _, value = piece.partition("=")
        params[key] = value
    return head, params


def check_overrides(manifest, where: Path) -> None:
    """A run whose results came from plugins replacing built-ins is finished by the same replacements."""
    recorded = sorted(manifest.overrides or [])
    if recorded != sorted(OVERRIDES):
        now = "; ".join(sorted(OVERRIDES)) or "none"
        then = "; ".join(recorded) or "none"
        raise NormbenchError(
            f"{where}: cannot resume: plugin overrides differ from the run's (recorded: {then}; now: {now})"
        )

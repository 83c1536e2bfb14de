"""The note under the claims table: how many claims are in each state, and how to read the columns."""

from __future__ import annotations


def claims_note(verdicts) -> list[str]:
    counts = verdicts["verdict"].value_counts()
    states = ", ".join(f"{n} {state}" for state, n in counts.items())
    return [
        f"{len(verdicts)} claims: {states}.",
        "NOT REPRODUCED: the check fails inside a documented, measured disagreement with the paper (its "
        "quantity in the stated range; the numbers and the known reason follow); FAIL: any other failure, "
        "including one outside that range. REPORTED: measured, with no threshold to judge. seeds: the seeds pooled; CI: 95% interval (t over "
        "seeds, or a seed bootstrap for slopes) of the quantity the threshold applies to. Every threshold is "
        "normbench's reading of the source, with its reason; none was tuned to the results.",
    ]

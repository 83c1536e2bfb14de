"""A claim from outside normbench: ScaleNorm's output has RMS exactly g/sqrt(d) * sqrt(d) = 1 at init,
whatever the input's shift and scale (Nguyen & Salazar 2019, eq. 6 with g = sqrt(d))."""

from __future__ import annotations

from normbench.analysis.claims import FAIL, NO_DATA, PASS, Verdict, claim, ok_rows


@claim(
    "scalenorm_unit_rms",
    source="Nguyen & Salazar 2019, eq. 6 (g initialised to sqrt(d))",
    statement="ScaleNorm's output RMS is 1 at init for any input shift and scale",
    threshold="max |RMS - 1| < 1e-5: fp32 rounding of a row norm over <= 1e4 elements stays far below it",
)
def scalenorm_unit_rms(frame):
    rows = ok_rows(frame, "outstats", "out_rms")
    rows = rows[rows["norm"] == "scalenorm"]
    if rows.empty:
        return Verdict(NO_DATA, "no outstats rows for scalenorm")
    worst = float((rows["value"] - 1.0).abs().max())
    return Verdict(PASS if worst < 1e-5 else FAIL, f"max |RMS - 1| = {worst:.2e} over {len(rows)} cases")

"""The latency report's notes on what to distrust: cases without a float64 reference, the fast preset, page
faults while timing, huge pages asked for and not obtained, and cases timed on a slowed machine."""

from __future__ import annotations

# machine_slowdown (timing/canary.py) from which a case is named in the report: above the canary's own spread
# (on the 2-core VM at 2 threads its median reading is ~1.10x its fastest, so 1.10 named 74 of 80 quick cases)
# and below the slow phases seen there (+35%); docs/methodology.md, Machine speed
SLOWDOWN_FLAG = 1.25
SLOWDOWN_NAMED = 3  # cases named in the note, the slowest first


def without_exact(ok) -> str:
    """norm:impl of the cases that asked for an accuracy check (full preset, accuracy_rows > 0) and got no
    error rows: their norm declares no `exact`. Said, not silently dropped."""
    asked = ok
    if "preset" in ok.columns:
        asked = asked[asked["preset"] != "fast"]
    if "accuracy_rows" in ok.columns:
        asked = asked[asked["accuracy_rows"].fillna(0) > 0]
    judged = set(ok.loc[ok["metric"] == "err_abs", "case_id"])
    missing = asked[~asked["case_id"].isin(judged)].drop_duplicates("case_id")
    return ", ".join(sorted({f"{n}:{i}" for n, i in zip(missing["norm"], missing["impl"], strict=True)}))


def process_notes(ok, cases) -> list[str]:
    """The fast preset, said plainly; the cases whose timed calls took page faults (timing/process.py); those
    that asked for huge pages and did not get them (timing/pages.py); those timed on a slowed machine."""
    notes = []
    if "preset" in ok.columns and (ok["preset"] == "fast").any():
        n = ok.loc[ok["preset"] == "fast", "case_id"].nunique()
        notes.append(
            f"Preset fast ({n} of {len(cases)} cases): times only; no accuracy check, peak memory or copy probe."
        )
    if "faulted" in cases.columns and (cases["faulted"] == 1).any():
        hit = cases[cases["faulted"] == 1]
        mode_of = ok.drop_duplicates("case_id").set_index("case_id")["mode"] if "mode" in ok.columns else {}
        modes = [mode_of.get(c, "") for c in hit["case_id"]]
        labels = ", ".join(
            f"{c} {m} {t}x{h}".replace("  ", " ")
            for c, m, t, h in zip(hit["label"], modes, hit["tokens"], hit["d"], strict=True)
        )
        notes.append(
            "⚠ Page faults in a quarter or more of the timed samples (memory mapped afresh while timing; "
            f"see docs/methodology.md, Measuring honestly): {labels}."
        )
    if "huge_pages_low" in cases.columns and (cases["huge_pages_low"] == 1).any():
        hit = cases[cases["huge_pages_low"] == 1]
        labels = ", ".join(
            f"{c} {t}x{h}" for c, t, h in zip(hit["label"], hit["tokens"], hit["d"], strict=True)
        )
        notes.append(
            "⚠ Huge pages asked for and under half of the case's tensor bytes got them (`huge_page_share`; "
            f"docs/methodology.md, Pages): {labels}."
        )
    if slowed := _slowed_machine_note(cases):
        notes.append(slowed)
    return notes


def _slowed_machine_note(cases) -> str:
    """One line on the cases timed while the machine ran SLOWDOWN_FLAG or more times slower than its own best
    (`machine_slowdown`, timing/canary.py): how many, the worst factor, the worst few by name."""
    if "machine_slowdown" not in cases.columns:
        return ""
    hit = cases[cases["machine_slowdown"] >= SLOWDOWN_FLAG].sort_values("machine_slowdown", ascending=False)
    if hit.empty:
        return ""
    named = [
        f"{c} {t}x{h} {f:.2f}×"
        for c, t, h, f in zip(hit["label"], hit["tokens"], hit["d"], hit["machine_slowdown"], strict=True)
    ]
    labels = ", ".join(named[:SLOWDOWN_NAMED]) + (", …" if len(named) > SLOWDOWN_NAMED else "")
    measured = int(cases["machine_slowdown"].notna().sum())
    return (
        f"⚠ {len(hit)} of {measured} cases timed at machine_slowdown ≥ {SLOWDOWN_FLAG:.2f} "
        f"(worst {hit['machine_slowdown'].iloc[0]:.2f}×: {labels}): the machine ran slower than its own best "
        "while these were timed (a fixed canary kernel timed before and after; other jobs or the host): "
        "compare their times with care — docs/methodology.md, Machine speed."
    )

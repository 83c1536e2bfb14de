"""The trade-off table and the fluctuation table on synthetic rows: loss means and t-intervals over seeds,
status counts, block times matched to the norm (folded where stored), medians after the burn-in, the csv
records as numbers, and nothing when a run lacks one of the bench kinds."""

from __future__ import annotations

import math

import pytest
from _norms_support import block_case, frame, training_run
from scipy.stats import t

from normbench.analysis.derived import derived_records, derived_tables, with_derived
from normbench.analysis.fluctuation import fluctuation_records
from normbench.analysis.tradeoff import tradeoff_records

LOSSES = {"layernorm": [2.00, 2.02, 2.04], "batchnorm": [2.30, 2.20, 2.40], "powernorm": [2.10, 2.12, 2.08]}


def blocks():
    return frame(
        block_case("linear", 100e-6, 0.0, 100e-6),
        block_case("layernorm", 150e-6, 0.5, 100e-6),
        block_case("batchnorm", 130e-6, 0.3, 100e-6),
        block_case("batchnorm_folded", 101e-6, 0.01, 100e-6),
        block_case("layernorm", 9e-3, 0.2, 7e-3, d=1024, tokens=4096),  # another shape: not shown
    )


def runs(extra=()):
    return frame(
        *[training_run(n, s, v) for n, vs in LOSSES.items() for s, v in enumerate(vs)],
        *extra,
    )


def test_tradeoff_records_hold_means_intervals_counts_and_matching_block_times():
    import pandas as pd

    rec = tradeoff_records(pd.concat([runs(), blocks()], ignore_index=True)).set_index("norm")
    assert list(rec.index) == ["layernorm", "batchnorm", "powernorm"]
    bn = rec.loc["batchnorm"]
    half = t.ppf(0.975, 2) * 0.1 / math.sqrt(3)  # sd of (2.3, 2.2, 2.4) is 0.1
    assert bn["final_loss_mean"] == pytest.approx(2.3)
    assert bn["final_loss_ci_high"] - bn["final_loss_mean"] == pytest.approx(half)
    assert (bn["seeds"], bn["ok"], bn["stuck"], bn["diverged"]) == (3, 3, 0, 0)
    assert bn["block_time_s"] == pytest.approx(130e-6) and bn["folded_time_s"] == pytest.approx(101e-6)
    assert bn["block_over_linear"] == pytest.approx(0.3) and bn["linear_time_s"] == pytest.approx(100e-6)
    assert rec.loc["layernorm", "block_d"] == 64  # the model's d, not the other shape
    assert math.isnan(rec.loc["layernorm", "folded_time_s"])
    assert math.isnan(rec.loc["powernorm", "block_time_s"])  # no powernorm block in this run


def test_diverged_runs_are_counted_and_left_out_of_the_mean():
    import pandas as pd

    extra = [training_run("layernorm", 3, 50.0, status="diverged")]
    rec = tradeoff_records(pd.concat([runs(extra), blocks()], ignore_index=True)).set_index("norm")
    ln = rec.loc["layernorm"]
    assert (ln["seeds"], ln["runs_in_mean"], ln["diverged"]) == (4, 3, 1)
    assert ln["final_loss_mean"] == pytest.approx(2.02)


def test_objectives_and_placements_are_separate_rows():
    import pandas as pd

    extra = [training_run("layernorm", s, 1.5, objective="causal") for s in range(3)]
    rec = tradeoff_records(pd.concat([runs(extra), blocks()], ignore_index=True))
    ln = rec[rec["norm"] == "layernorm"].set_index("objective")
    assert ln.loc["causal", "final_loss_mean"] == pytest.approx(1.5)
    assert ln.loc["masked", "final_loss_mean"] == pytest.approx(2.02)


def test_the_table_needs_both_bench_kinds():
    assert tradeoff_records(runs()).empty and tradeoff_records(blocks()).empty
    assert derived_tables(blocks()) == []


def test_table_shows_microseconds_and_the_records_stay_numeric():
    import pandas as pd

    both = pd.concat([runs(), blocks()], ignore_index=True)
    (table,) = derived_tables(both)
    row = table.frame.set_index("norm").loc["batchnorm"]
    assert row["block µs"] == "130.0 (+30%)" and row["folded µs"] == "101.0 (+1%)"
    assert row["final loss (nats)"].startswith("2.300 ± ") and row["ok/stuck/diverged"] == "3/0/0"
    merged = with_derived(pd.DataFrame({"bench": ["x"], "case_id": ["c"]}), both)
    trade = merged[merged["bench"] == "tradeoff"]
    assert len(trade) == 3 and trade["final_loss_mean"].dtype.kind == "f"


def fluct(mean, iid, var, steps=30):
    """Per-step values: the first 2 steps (of 30, every 10: steps 10, 20 < 10% of 300) are burn-in."""
    return {
        (1, "attn"): {
            "bn_mean_rel_dist": [100.0, 100.0] + [mean] * (steps - 2),
            "bn_mean_rel_dist_iid": [1.0, 1.0] + [iid] * (steps - 2),
            "bn_var_rel_dist": [100.0, 100.0] + [var] * (steps - 2),
        }
    }


def test_fluctuation_medians_skip_the_burn_in_and_average_seeds():
    rows = frame(
        training_run("batchnorm", 0, 2.3, fluctuation=fluct(0.3, 0.1, 0.5)),
        training_run("batchnorm", 1, 2.3, fluctuation=fluct(0.5, 0.1, 0.7)),
        training_run("layernorm", 0, 2.0),
    )
    rec = fluctuation_records(rows)
    assert len(rec) == 1
    r = rec.iloc[0]
    assert (r["norm"], r["layer"], r["site"], r["seeds"]) == ("batchnorm", 1, "attn", 2)
    assert r["bn_mean_rel_dist"] == pytest.approx(0.4)
    assert r["mean_over_iid"] == pytest.approx(4.0)
    assert r["bn_var_rel_dist"] == pytest.approx(0.6)
    assert set(derived_records(rows)["bench"]) == {"fluctuation"}


def test_fluctuation_plot_is_written(tmp_path):
    from normbench.analysis.plots.fluctuation import batch_statistics_fluctuation

    rows = frame(
        *[training_run("batchnorm", s, 2.3, fluctuation=fluct(0.3 + s / 10, 0.1, 0.5)) for s in range(2)]
    )
    (path,) = batch_statistics_fluctuation(rows, tmp_path, machine="test", fmt="png")
    assert path.exists() and path.stat().st_size > 10_000
    assert (
        batch_statistics_fluctuation(
            frame(training_run("layernorm", 0, 2.0)), tmp_path, machine="t", fmt="png"
        )
        == []
    )


def test_a_real_run_of_stability_and_block_reports_the_trade_off(dataset_runs):
    """Through the CLI on stored rows (the shared every-bench run): the table is printed and its csv record
    carries the stored final loss and the block's stored time."""
    import io

    import pandas as pd
    from typer.testing import CliRunner

    from normbench.cli import app
    from normbench.results.store import RunStore

    results, mixed, _ = dataset_runs
    shown = CliRunner().invoke(app, ["report", mixed, "--full", "--results", str(results)])
    assert shown.exit_code == 0 and "Norms: what each costs at inference" in shown.stdout
    csv = CliRunner().invoke(app, ["report", mixed, "--format", "csv", "--results", str(results)])
    (rec,) = pd.read_csv(io.StringIO(csv.stdout)).query("bench == 'tradeoff'").to_dict("records")
    stored = RunStore.open(results, mixed).read()
    loss = stored[(stored["bench"] == "stability") & (stored["metric"] == "final_loss")]["value"]
    block = stored[(stored["block"] == "layernorm") & (stored["metric"] == "time_median")]["value"]
    assert rec["norm"] == "layernorm" and rec["seeds"] == 1
    assert rec["final_loss_mean"] == pytest.approx(float(loss.iloc[0]))
    assert rec["block_time_s"] == pytest.approx(float(block.iloc[0]))

"""Latency of one norm implementation on a (tokens, hidden) tensor: forward-only under
torch.inference_mode, or forward+backward (gradients for the input and the parameters, reset before
every call as an optimizer's zero_grad(set_to_none=True) would).

Alongside the raw time samples each case stores GB/s from the norm's byte model and the copy probe
(identity.copy, same tensor, same mode, same timer, same run) so that `copy_fraction` says how close the
norm comes to the bandwidth this machine actually delivers."""

from __future__ import annotations

from normbench.analysis.tables import Table, format_seconds
from normbench.benches.base import Bench, CaseResult, register_bench
from normbench.suite.params import Param

DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "fp64": "float64"}
MODES = ("fwd", "fwd+bwd")


@register_bench
class Latency(Bench):
    kind = "latency"
    description = "time per call, GB/s and fraction of a copy, per norm implementation"
    compare_metrics = {"time": "lower"}
    compare_pool = ()
    params = {
        "tokens": Param(int, minimum=1, help="rows of the input (batch x sequence)"),
        "hidden": Param(int, minimum=1, help="normalized dimension"),
        "dtype": Param(str, "fp32", choices=tuple(DTYPES)),
        "mode": Param(str, "fwd", choices=MODES, help="fwd = inference_mode forward; fwd+bwd = forward and backward"),
        "device": Param(str, "cpu", choices=("cpu", "cuda")),
        "eps": Param(float, 1e-5, exclusive_minimum=0.0),
        "samples": Param(int, 15, minimum=3, help="timed samples kept raw"),
        "warmup": Param(int, 3, minimum=0, help="untimed calls before calibration"),
        "min_sample_s": Param(float, 2e-3, exclusive_minimum=0.0, help="each sample's inner loop lasts at least this"),
        "seed": Param(int, 0),
        "copy_probe": Param(bool, True, help="also time identity.copy on the same tensor"),
    }

    def run_case(self, case, ctx):
        import torch

        from normbench.benches._tensors import check_device, make_step
        from normbench.errors import SkipCase, UnavailableCase
        from normbench.norms import get_norm
        from normbench.timing import timer_for

        p = case.params
        check_device(p["device"])
        norm = get_norm(case.norm)
        if missing := norm.impls[case.impl].missing_requirement():
            raise UnavailableCase(missing)
        dtype = getattr(torch, DTYPES[p["dtype"]])
        torch.manual_seed(p["seed"])
        x = torch.randn(p["tokens"], p["hidden"], dtype=dtype, device=p["device"])
        try:
            built = norm.build(case.impl, p["hidden"], eps=p["eps"], dtype=dtype, device=p["device"])
            step, check = make_step(built, x, p["mode"])
            check("before timing")
        except (NotImplementedError, RuntimeError) as exc:
            if "not implemented" in str(exc).lower() or isinstance(exc, NotImplementedError):
                raise SkipCase(f"{p['dtype']} on {p['device']}: {str(exc).splitlines()[0]}") from None
            raise
        timer = timer_for(p["device"], warmup=p["warmup"], samples=p["samples"], min_sample_s=p["min_sample_s"])
        with torch.inference_mode(p["mode"] == "fwd"):
            samples = timer.measure(step)
        check("after timing")  # a kernel that corrupts its output under repetition is caught here

        rows = timing_rows("time", samples)
        median = _median(samples.times)
        nbytes = norm.bytes_moved(case.impl, p["tokens"], p["hidden"], x.element_size(), p["mode"])
        rows += [
            {"metric": "bytes", "unit": "B", "value": float(nbytes)},
            {"metric": "gbps", "unit": "GB/s", "value": nbytes / median / 1e9},
            {"metric": "inner_loops", "unit": "calls", "value": float(samples.inner)},
            {"metric": "threads", "unit": "threads", "value": float(ctx.threads)},
        ]
        if p["copy_probe"]:
            copy_median, copy_gbps = copy_probe(ctx, x, p, timer)
            rows += [
                {"metric": "copy_time_median", "unit": "s", "value": copy_median},
                {"metric": "copy_gbps", "unit": "GB/s", "value": copy_gbps},
                {"metric": "copy_fraction", "unit": "ratio", "value": (nbytes / median / 1e9) / copy_gbps},
            ]
        for row in rows:
            row.setdefault("timer", samples.timer)
        return CaseResult(rows)

    def report(self, frame, opts):
        return latency_tables(frame, opts)


def _median(times):
    from statistics import median

    return median(times)


def timing_rows(prefix: str, samples) -> list[dict]:
    """Raw samples (one row each, with its index) and their summary statistics."""
    from normbench.analysis.stats import summarize

    rows = [{"metric": prefix, "unit": "s", "value": t, "sample": i} for i, t in enumerate(samples.times)]
    stats = summarize(samples.times)
    rows += [{"metric": f"{prefix}_{k}", "unit": "s", "value": stats[k]} for k in ("median", "p20", "p80", "iqr", "min")]
    return rows


def copy_probe(ctx, x, p, timer) -> tuple[float, float]:
    """Median time and GB/s of identity.copy on a tensor like x, measured once per run and shape."""
    import torch

    from normbench.benches._tensors import make_step
    from normbench.norms import get_norm

    key = ("copy", tuple(x.shape), x.dtype, str(x.device), p["mode"], p["samples"], p["min_sample_s"])
    if key not in ctx.memo:
        ident = get_norm("identity")
        step, _ = make_step(ident.build("copy", x.shape[-1], eps=0.0, dtype=x.dtype, device=x.device), x, p["mode"])
        with torch.inference_mode(p["mode"] == "fwd"):
            t = _median(timer.measure(step).times)
        nbytes = ident.bytes_moved("copy", x.shape[0], x.shape[1], x.element_size(), p["mode"])
        ctx.memo[key] = (t, nbytes / t / 1e9)
    return ctx.memo[key]


def latency_tables(frame, opts) -> list[Table]:
    """Rows = device/dtype/mode/shape, columns = norm:impl, cells = median time ('!' when the IQR is over
    10% of the median), then the fastest implementation and its speedup over the baseline."""
    import pandas as pd

    from normbench.analysis.stats import high_spread

    ok = frame[frame["status"] == "ok"]
    if ok.empty:
        return []
    ok = ok.assign(column=ok["norm"] + ":" + ok["impl"])
    keys = ["device", "dtype", "mode", "tokens", "hidden"]
    wide = ok[ok["metric"].isin(["time_median", "time_iqr", "gbps", "copy_fraction"])].pivot_table(
        index=keys + ["column"], columns="metric", values="value", aggfunc="first").reset_index()
    columns = sorted(wide["column"].unique())
    baseline = opts.baseline or next((c for c in ("layernorm:module", "rmsnorm:module") if c in columns), columns[0])
    time_rows, bw_rows = [], []
    for key, group in wide.groupby(keys, sort=True):
        cells = group.set_index("column")
        row = dict(zip(keys, key, strict=True))
        bw = dict(row)
        for c in columns:
            if c in cells.index:
                r = cells.loc[c]
                row[c] = format_seconds(r["time_median"]) + (" !" if high_spread(r["time_median"], r["time_iqr"]) else "")
                frac = r.get("copy_fraction")
                bw[c] = f"{r['gbps']:.1f}" + (f" ({frac:.0%})" if pd.notna(frac) else "")
            else:
                row[c] = bw[c] = "—"
        contenders = cells.drop(index=[c for c in cells.index if c.startswith("identity:")])
        if not contenders.empty:
            best = contenders["time_median"].idxmin()
            row["fastest"] = best
            if baseline in cells.index:
                row[f"speedup vs {baseline}"] = f"{cells.loc[baseline, 'time_median'] / cells.loc[best, 'time_median']:.2f}x"
        time_rows.append(row)
        bw_rows.append(bw)
    notes = [f"Median of raw samples; ! = IQR above 10% of the median. Machine: {opts.machine}."]
    return [
        Table("Latency: median time per call", pd.DataFrame(time_rows), notes),
        Table("Bandwidth: GB/s from the byte model (fraction of the copy probe, same run)", pd.DataFrame(bw_rows)),
    ]

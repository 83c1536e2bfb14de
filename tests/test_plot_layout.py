"""Every built-in figure, drawn at its default size from a run with rows for all of them: no two texts
(tick labels, titles, axis labels, legend entries, annotations) overlap, none leaves the canvas, no
annotation leaves its axes, and legends are at 8 pt or more; log ticks read as numbers ("20", not
"2×10¹"), axis labels as symbols (no raw "_l", "θ_t"); the speedup panels share one ratio axis, and one
norm's implementations sit apart in a row."""

from __future__ import annotations

import pytest
from _plot_frames import every_figure_run

pytest.importorskip("matplotlib")


def _texts(fig, renderer):
    """(text artist, its box on the canvas) of every visible, non-empty text the figure draws. Tick labels
    are those of the ticks the axis draws (matplotlib keeps spare ticks outside the view it never draws)."""
    from matplotlib.axis import Tick
    from matplotlib.text import Text

    def shown(text) -> bool:
        return text.get_visible() and bool(text.get_text().strip())

    in_ticks = {id(t) for tick in fig.findobj(Tick) for t in (tick.label1, tick.label2)}
    texts = [t for t in fig.findobj(Text) if id(t) not in in_ticks and shown(t)]
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis._update_ticks():  # the ticks inside the view: what draw() draws
                texts += [t for t in (tick.label1, tick.label2) if tick.get_visible() and shown(t)]
    unique = list({id(t): t for t in texts}.values())
    return [(t, t.get_window_extent(renderer)) for t in unique]


def _name(text) -> str:
    return repr(text.get_text()[:40])


def _problems(fig) -> list[str]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)  # a canvas again: save() closed the figure's window
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    canvas = fig.bbox
    texts = _texts(fig, renderer)
    problems = []
    for text, box in texts:
        if (
            box.x0 < canvas.x0 - 1
            or box.y0 < canvas.y0 - 1
            or box.x1 > canvas.x1 + 1
            or box.y1 > canvas.y1 + 1
        ):
            problems.append(f"{_name(text)} leaves the canvas")
        if text.axes is not None and text in text.axes.texts:  # an annotation: inside its axes
            frame = text.axes.get_window_extent(renderer)
            if (
                box.x0 < frame.x0 - 1
                or box.x1 > frame.x1 + 1
                or box.y0 < frame.y0 - 1
                or box.y1 > frame.y1 + 1
            ):
                problems.append(f"{_name(text)} leaves its axes")
    for i, (a, box_a) in enumerate(texts):
        for b, box_b in texts[i + 1 :]:
            shrunk_a = box_a.expanded(1, 1).padded(-1)
            if shrunk_a.overlaps(box_b.padded(-1)):
                problems.append(f"{_name(a)} overlaps {_name(b)}")
    for legend in [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]:
        for text in legend.get_texts():
            if text.get_fontsize() < 8:
                problems.append(f"legend entry {_name(text)} at {text.get_fontsize()} pt")
    return problems


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    """(file name, figure) of every figure plot_run draws for the run, at the moment it is saved."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from normbench.analysis.plots import plot_run
    from normbench.results.store import read_runs

    results = tmp_path_factory.mktemp("figs")
    every_figure_run(results)
    frame, _ = read_runs(results, ["figs"])
    drawn = []
    original = Figure.savefig

    def keep(fig, path, *args, **kwargs):
        drawn.append((fig.get_label(), fig))  # save() names the figure after its file

    Figure.savefig = keep
    try:
        plot_run(frame, results / "plots", machine="AMD EPYC 7B13, 2 threads, torch 2.13.0+cpu")
    finally:
        Figure.savefig = original
    return drawn


def test_every_kind_of_figure_is_drawn(figures):
    names = " ".join(name for name, _ in figures)
    for stem in ("speedup", "bandwidth", "jacobian", "init", "stability_loss", "stuck_phase", "batch_stat"):
        assert stem in names, names


def test_no_text_overlaps_another_or_leaves_the_figure(figures):
    problems = {name: p for name, fig in figures if (p := _problems(fig))}
    assert problems == {}


def _drawn(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig


def test_log_ticks_are_numbers_and_labels_are_symbols(figures):
    for name, fig in figures:
        for ax in _drawn(fig).axes:
            ticks = [
                t.get_text() for t in (*ax.get_xticklabels(which="both"), *ax.get_yticklabels(which="both"))
            ]
            assert not [t for t in ticks if "times10^" in t or "10^{" in t], (name, ticks)
            for label in (ax.get_xlabel(), ax.get_ylabel()):
                words = label.replace("$", " ").split()  # mathtext ($x_l$) renders; raw text would not
                raw = [
                    w for w in words if any(m in w for m in ("_l", "_F", "θ_t", "_t")) and "$" not in label
                ]
                assert not raw, (name, label)


def test_speedup_panels_share_one_ratio_axis_and_dodge_implementations(figures):
    (fig,) = [f for name, f in figures if name.startswith("speedup")]
    panels = [ax for ax in _drawn(fig).axes if ax.get_visible() and ax.has_data()]
    assert len(panels) > 1 and len({tuple(ax.get_xlim()) for ax in panels}) == 1
    from normbench.analysis.plots.latency import dodge

    labels = [
        "layernorm:module",
        "layernorm:functional",
        "layernorm:composite",
        "rmsnorm:module",
        "identity:copy",
    ]
    offsets = [dodge(labels, x) for x in labels[:3]]
    assert len(set(offsets)) == 3 and min(abs(a - b) for a in offsets for b in offsets if a != b) >= 0.1
    assert dodge(labels, "rmsnorm:module") == 0.0 == dodge(labels, "identity:copy")  # alone in its norm

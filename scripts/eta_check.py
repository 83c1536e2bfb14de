"""How far the run's ETA (cli/_eta.py) is from the truth: a first run of a suite in an empty results folder;
a second run there stopped part-way (SIGINT after --stop-after cases) and resumed; and in another empty
folder a run stopped and resumed with no other run to learn from. At every case the ETA shown is set
against the session's actual remaining wall; printed per session: the ratio at its first case and the worst
while at least --floor seconds were left. docs/methodology.md, "The run's ETA".

    python scripts/eta_check.py quick --results /tmp/eta   # heavy: three runs' worth of the suite"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import time
from pathlib import Path

from normbench.cli._progress import RunProgress
from normbench.executors.service import RunOptions, run


class Recorder(RunProgress):
    """The progress the CLI shows, quiet, recording (time, ETA) as each case starts and ends."""

    points: list[tuple[float, float]] = []
    stop_after: int | None = None

    def start_case(self, case) -> None:
        super().start_case(case)
        Recorder.points.append((time.monotonic(), self.estimate.remaining()))

    def end_case(self, case, status: str) -> None:
        super().end_case(case, status)
        now = time.monotonic()
        Recorder.points.append((now, self.estimate.remaining(now)))
        if Recorder.stop_after is not None and self.done - self.finished_before == Recorder.stop_after:
            os.kill(os.getpid(), signal.SIGINT)  # stops after this case, as Ctrl-C does


def session(suite: str | None, results: Path, resume: str | None = None, stop_after: int | None = None):
    Recorder.points, Recorder.stop_after = [], stop_after

    def progress(todo, finished, history):
        shown = Recorder(todo, quiet=True, finished=finished, history=history)
        shown.finished_before = finished
        return shown

    result = run(
        suite, RunOptions(results=results, resume=resume, quiet=True), progress=progress, say=lambda s: None
    )
    return result.store.run_id, list(Recorder.points)


def judge(name: str, points: list[tuple[float, float]], floor: float, trace: bool = False) -> None:
    end = points[-1][0]
    if trace:
        print("  ".join(f"{end - t:.1f}:{eta:.1f}" for t, eta in points[::2]))
    ratios = [(eta / (end - t), end - t) for t, eta in points if end - t >= floor]
    first_eta, first_true = points[0][1], end - points[0][0]
    worst = max(ratios, key=lambda r: max(r[0], 1 / r[0])) if ratios else (float("nan"), 0.0)
    print(
        f"{name}: {len(points) // 2} cases, {first_true:.1f} s from the first case; ETA then {first_eta:.1f} s "
        f"(×{first_eta / first_true:.2f}); worst while ≥ {floor:g} s left: ×{worst[0]:.2f} "
        f"({worst[1]:.1f} s left)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", nargs="?", default="quick")
    parser.add_argument("--results", type=Path, required=True, help="an empty folder (emptied first)")
    parser.add_argument("--stop-after", type=int, default=40, help="cases before the interruption")
    parser.add_argument("--floor", type=float, default=2.0, help="seconds left below which ratios are noise")
    parser.add_argument("--trace", action="store_true", help="print every case's (true left: ETA)")
    parser.add_argument("--alone", action="store_true", help="only the stopped run without history")
    args = parser.parse_args()
    alone = args.results.with_name(args.results.name + "-alone")
    for folder in (args.results, alone):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    if not args.alone:
        _, first = session(args.suite, args.results)
        judge("first run (no history)", first, args.floor, args.trace)
        run_id, _ = session(args.suite, args.results, stop_after=args.stop_after)  # stopped: not judged
        _, after = session(None, args.results, resume=run_id)
        judge(f"a second run stopped after {args.stop_after} cases, resumed", after, args.floor, args.trace)
    run_id, _ = session(args.suite, alone, stop_after=args.stop_after)
    _, after = session(None, alone, resume=run_id)
    judge("a first run stopped and resumed (history: its own cases)", after, args.floor, args.trace)


if __name__ == "__main__":
    main()

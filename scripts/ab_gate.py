"""Does `normbench ab` gate a shared machine? (a benchmark, not a test; run it on a quiet machine).

In a temporary clone of this checkout it makes four commits on top of the working tree's code and runs
`normbench ab HEAD~1` against each, REPEATS times:

  unchanged   a commit that changes no norm (the README): expected exit 0 (ab times no case)
  comment     a comment added to rmsnorm.py: the same work, every rmsnorm case timed: expected exit 0
  plant F     rmsnorm's `functional` normalizes F x the rows per call (F = 1.3 and 1.1): expected exit 1 naming
              rmsnorm:functional at 1.3; at 1.1 flagged or inconclusive, never a pass

--all-cases times every case of the unchanged commit too (not only the norms whose code changed); --busy N keeps
N cores busy meanwhile (N Python processes spinning at normal priority; --busy alone: 1). Prints one line per ab
run: exit code, the cases marked + and ?, the second look, the A/A spreads, wall time, load. --save DIR keeps
each run's JSON (per-process ratios: scripts/experiments/ab_rescore.py re-scores them); --time-quick times one
`normbench run quick` before the series (the wall-time yardstick).

    python scripts/ab_gate.py [--repeats 10] [--processes 5] [--busy [N]] [--all-cases] [--suite quick]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PLANT = (
    "return Built(lambda x: (_rms_norm(x[: max(1, round({extra} * x.shape[0]))], w, eps), "
    "_rms_norm(x, w, eps))[1], [w])"
)


def git(repo: Path, *args: str) -> None:
    cmd = ["git", "-c", "user.email=ab@example.com", "-c", "user.name=ab", *args]
    subprocess.run(cmd, cwd=repo, check=True, capture_output=True)


def clone() -> Path:
    """A clone whose HEAD is this working tree's code (committed, uncommitted changes included)."""
    where = Path(tempfile.mkdtemp(prefix="ab-gate-")) / "repo"
    subprocess.run(["git", "clone", "-q", str(REPO), str(where)], check=True)
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    for rel in files:
        src, dst = REPO / rel, where / rel
        if src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(src.read_bytes())
    git(where, "add", "-A")
    git(where, "commit", "-qm", "the working tree", "--allow-empty")
    git(where, "tag", "ab-gate-base")
    return where


def commit(repo: Path, what: str, extra: float | None) -> None:
    """Reset to the working tree's commit, then one commit: README only, a comment in rmsnorm.py (the same
    work, but every rmsnorm case is timed: an A/A of those cases), or the rmsnorm plant."""
    git(repo, "reset", "-q", "--hard", "ab-gate-base")
    if extra is None:
        (repo / "README.md").write_text((repo / "README.md").read_text() + "\n")
    elif extra == 0:
        path = repo / "normbench" / "norms" / "rmsnorm.py"
        path.write_text(path.read_text() + "\n# the same work\n")
    else:
        path = repo / "normbench" / "norms" / "rmsnorm.py"
        text = path.read_text()
        old = "return Built(lambda x: _rms_norm(x, w, eps), [w])"
        assert old in text, "rmsnorm.functional's body moved: update scripts/ab_gate.py"
        path.write_text(text.replace(old, PLANT.format(extra=extra), 1))
    git(repo, "commit", "-qam", what)


def ab(repo: Path, args) -> tuple[int, dict, float]:
    cmd = [
        sys.executable,
        "-m",
        "normbench",
        "ab",
        "HEAD~1",
        args.suite,
        "-k",
        str(args.processes),
        "--format",
        "json",
        "--results",
        str(repo / "results"),
        *(["--all-cases"] if args.all_cases else []),
        *args.ab_args.split(),
    ]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, check=False)
    data = json.loads(done.stdout) if done.stdout.strip().startswith("{") else {"error": done.stderr[-300:]}
    return done.returncode, data, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--processes", type=int, default=5)
    parser.add_argument("--suite", default="quick")
    parser.add_argument("--busy", type=int, nargs="?", const=1, default=0)
    parser.add_argument("--save", type=Path)
    parser.add_argument("--time-quick", action="store_true")
    parser.add_argument("--ab-args", default="", help="extra options for ab, e.g. '--no-second-look'")
    parser.add_argument("--all-cases", action="store_true")
    parser.add_argument("--only", choices=("unchanged", "comment", "1.3", "1.1"), action="append")
    args = parser.parse_args()
    repo = clone()
    if args.time_quick:
        start = time.perf_counter()
        cmd = [
            sys.executable,
            "-m",
            "normbench",
            "run",
            "quick",
            "--quiet",
            "--results",
            str(repo.parent / "quick-results"),
        ]
        subprocess.run(cmd, cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)}, capture_output=True)
        print(
            f"one quick run: {time.perf_counter() - start:.0f} s; load {os.getloadavg()[0]:.1f}", flush=True
        )
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        for what, extra in (("unchanged", None), ("comment", 0.0), ("1.3", 0.3), ("1.1", 0.1)):
            if args.only and what not in args.only:
                continue
            commit(repo, f"plant {what}", extra)
            for i in range(args.repeats):
                code, data, wall = ab(repo, args)
                if args.save:
                    args.save.mkdir(parents=True, exist_ok=True)
                    (args.save / f"{what}-{i + 1}-busy{args.busy}.json").write_text(json.dumps(data))
                slower = sorted(c["case"].split()[0] for c in data.get("cases", []) if c["mark"] == "+")
                unsure = sorted(c["case"].split()[0] for c in data.get("cases", []) if c["mark"] == "?")
                marks = {}
                for c in data.get("cases", []):
                    marks[c["mark"]] = marks.get(c["mark"], 0) + 1
                # no case timed (the unchanged commit changes no norm): the spreads are null in the JSON
                spread, widest = (
                    data.get(k) if data.get(k) is not None else float("nan")
                    for k in ("aa_spread", "max_spread")
                )
                print(
                    f"{what} #{i + 1}: exit {code}; + {slower[:4]}{'…' if len(slower) > 4 else ''}; "
                    f"? {unsure[:4]}{'…' if len(unsure) > 4 else ''}; marks {marks}; "
                    f"second look {data.get('second_look')}; "
                    f"A/A spread {spread:.3f} (widest {widest:.3f}); "
                    f"{wall:.0f} s; load {os.getloadavg()[0]:.1f}; busy {args.busy}"
                    + (f"; {data['error'].strip()}" if "error" in data else ""),
                    flush=True,
                )
    finally:
        for spinner in spinners:
            spinner.kill()
        shutil.rmtree(repo.parent, ignore_errors=True)


if __name__ == "__main__":
    main()

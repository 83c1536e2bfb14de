"""How much of normbench's CUDA-only code the CPU stand-in of the CUDA API executes (docs/methodology.md,
"GPU check"). CUDA-only code: every statement of timing/cuda.py, the bodies of `if ... == "cuda"` (and the
`else` of `!= "cuda"`) and of `if torch.cuda.is_available()` anywhere in normbench, and every function whose
name says cuda or gpu. Runs the stand-in's tests under coverage.py (or, with --all, the whole suite) and prints
each file's CUDA-only statements, how many ran, the lines that did not, and the total.

    python scripts/gpu_coverage.py [--all] [--min 90]
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "normbench"
WHOLE_FILES = ("timing/cuda.py",)


def _mentions_cuda(test: ast.expr) -> str | None:
    """'body' when the test holds on CUDA only, 'orelse' when its negation does, else None."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        values = [test.left, *test.comparators]
        if any(isinstance(v, ast.Constant) and v.value == "cuda" for v in values):
            return (
                "body"
                if isinstance(test.ops[0], ast.Eq)
                else "orelse"
                if isinstance(test.ops[0], ast.NotEq)
                else None
            )
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return "body" if any(_mentions_cuda(v) == "body" for v in test.values) else None
    text = ast.unparse(test)
    if "torch.cuda.is_available()" in text and not text.startswith("not "):
        return "body"
    return None


def _span(nodes: list[ast.stmt]) -> set[int]:
    return set(range(nodes[0].lineno, nodes[-1].end_lineno + 1)) if nodes else set()


def cuda_lines(path: Path) -> set[int]:
    """The line numbers of `path` that run on CUDA only (statements are intersected later)."""
    tree = ast.parse(path.read_text())
    rel = path.relative_to(PACKAGE).as_posix()
    if rel in WHOLE_FILES:
        return set(range(1, len(path.read_text().splitlines()) + 1))
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (side := _mentions_cuda(node.test)):
            out |= _span(node.body if side == "body" else node.orelse)
        elif isinstance(node, ast.FunctionDef) and ("cuda" in node.name or "gpu_" in node.name):
            out |= _span(node.body)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--all", action="store_true", help="measure the whole test suite, not the stand-in's tests"
    )
    ap.add_argument("--min", type=float, default=90.0, help="exit 1 below this percentage")
    args = ap.parse_args()
    import coverage

    data_file = REPO / ".coverage.gpu"
    tests = ["tests"] if args.all else ["tests/test_cuda_standin.py"]
    cmd = [sys.executable, "-m", "coverage", "run", f"--data-file={data_file}", "--source=normbench"]
    cmd += ["-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:randomly", *tests]
    subprocess.run(cmd, cwd=REPO, check=True)
    cov = coverage.Coverage(data_file=str(data_file))
    cov.load()
    total = ran = 0
    for path in sorted(PACKAGE.rglob("*.py")):
        wanted = cuda_lines(path)
        if not wanted:
            continue
        _, statements, _, missing, _ = cov.analysis2(str(path))
        lines = wanted & set(statements)
        if not lines:
            continue
        missed = sorted(lines & set(missing))
        total += len(lines)
        ran += len(lines) - len(missed)
        print(
            f"{path.relative_to(REPO)}: {len(lines) - len(missed)}/{len(lines)}"
            + (f" missed {missed}" if missed else "")
        )
    share = 100.0 * ran / total if total else 0.0
    print(f"CUDA-only statements executed: {ran}/{total} = {share:.1f}%")
    data_file.unlink(missing_ok=True)
    return 0 if share >= args.min else 1


if __name__ == "__main__":
    sys.exit(main())

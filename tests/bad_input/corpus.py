"""The bad-input corpus: each attempt a user or an attacker made, as data. An attempt writes
its files, optionally prepares a stored run, runs one `normbench` command, and states the exit code, a
text the output must contain, and a check of what is on disk afterwards."""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

LATENCY = """[[bench]]
kind = "latency"
norms = ["layernorm:module"]
[bench.sweep]
tokens = [8]
d = [16]
[bench.params]
samples = 3
warmup_calls = 0
min_sample_s = 1e-4
copy_probe = false
"""
SUITE = 'name = "ok"\n' + LATENCY


def bench(
    sweep: str = "", params: str = "", kind: str = "latency", norms: str = '["layernorm:module"]'
) -> str:
    return f'name = "b"\n[[bench]]\nkind = "{kind}"\nnorms = {norms}\n[bench.sweep]\n{sweep}\n[bench.params]\n{params}\n'


@dataclass
class Attempt:
    id: str
    args: list[str]
    code: int
    says: str  # a text stdout + stderr must contain
    files: dict[str, str | bytes] = field(default_factory=dict)
    prepare: Callable[[Path, Path], None] | None = None  # (cwd, stored run folder): spoil the run
    disk: Callable[[Path], None] | None = None  # (cwd): what must (not) be there afterwards
    needs_run: bool = False  # copy the shared tiny run to results/RUN first


# -- checks on disk ----------------------------------------------------------------------------------
def no_results(cwd: Path) -> None:
    assert not (cwd / "results").exists() or not any((cwd / "results").iterdir())


def run_untouched(cwd: Path) -> None:
    """The stored run still has all its parts and no foreign folder appeared anywhere in cwd."""
    run = cwd / "results" / "RUN"
    assert len(list((run / "parts").glob("*.parquet"))) == 12
    assert [p.name for p in cwd.iterdir()] == ["results"] and [p.name for p in run.parent.iterdir()] == [
        "RUN"
    ]
    assert not (cwd.parent.parent / "other").exists() and not (Path("/etc") / "parts").exists()


def every_case_once(cwd: Path) -> None:
    """After the command, every planned case of RUN has exactly one readable part of its own."""
    run = cwd / "results" / "RUN"
    planned = {c["case_id"] for c in json.loads((run / "manifest.json").read_text())["cases"]}
    parts = list((run / "parts").glob("*.parquet"))
    assert {p.stem for p in parts} == planned and len(parts) == len(planned)
    for part in parts:
        table = pq.read_table(part)
        assert set(table.column("case_id").to_pylist()) == {part.stem}
        assert set(table.column("run_id").to_pylist()) == {"RUN"}


def moved_aside(cwd: Path) -> None:
    every_case_once(cwd)
    assert len(list((cwd / "results" / "RUN" / "rejected").iterdir())) == 1


def timed_out(cwd: Path) -> None:
    (run,) = (cwd / "results").iterdir()
    frame = pq.read_table(run / "parts").to_pandas().drop_duplicates("case_id")
    assert sorted(frame["status"]) == ["failed", "ok"]
    assert list(frame.loc[frame["status"] == "failed", "error"]) == ["timed out after 0.5 s"]


def both_failed_overflow(cwd: Path) -> None:
    (run,) = (cwd / "results").iterdir()
    frame = pq.read_table(run / "parts").to_pandas().drop_duplicates("case_id")
    assert list(frame["status"]) == ["failed", "failed"]
    assert all("statistics overflow fp32" in e for e in frame["error"])


# -- ways to spoil a stored run -----------------------------------------------------------------------
def first_part(run: Path) -> Path:
    return sorted((run / "parts").glob("*.parquet"))[0]


def truncate_part(cwd: Path, run: Path) -> None:
    part = first_part(run)
    part.write_bytes(part.read_bytes()[:100])


def foreign_part(cwd: Path, run: Path) -> None:
    """A part of another run (same case id) copied in: its rows say run OTHER."""
    import pyarrow as pa

    part = first_part(run)
    table = pq.read_table(part)
    column = table.column_names.index("run_id")
    other = table.set_column(column, "run_id", pa.array(["OTHER"] * table.num_rows))
    pq.write_table(other, part)


def stray_file(cwd: Path, run: Path) -> None:
    shutil.copy(first_part(run), run / "parts" / "zzzzzzzzzzzz.parquet")


def edit_manifest(**changes):
    def spoil(cwd: Path, run: Path) -> None:
        path = run / "manifest.json"
        m = json.loads(path.read_text())
        for key, value in changes.items():
            if value is None:
                m.pop(key)
            else:
                m[key] = value
        path.write_text(json.dumps(m))

    return spoil


def write_manifest(text: str):
    def spoil(cwd: Path, run: Path) -> None:
        (run / "manifest.json").write_text(text)

    return spoil


def stale_lock(cwd: Path, run: Path) -> None:
    (run / ".lock").write_text(f"{2**22 + 12345} {socket.gethostname()}\n")  # above Linux's pid_max default
    edit_manifest(status="running")(cwd, run)
    os.remove(first_part(run))


def parts_is_a_file(cwd: Path, run: Path) -> None:
    shutil.rmtree(run / "parts")
    (run / "parts").write_text("")
    edit_manifest(status="interrupted")(cwd, run)


def symlink_outside(cwd: Path, run: Path) -> None:
    (cwd / "sub" / "link.toml").symlink_to(cwd / "outside.toml")


NOT_UTF8 = b'name="a"\n\xff\xfe\n'
ESC = "\x1b[31m"

ATTEMPTS = [
    # -- suites ------------------------------------------------------------------------------------
    Attempt(
        "include-cycle",
        ["run", "a.toml"],
        2,
        "a.toml: include[0]: cycle a.toml -> b.toml -> a.toml",
        files={
            "a.toml": 'name = "a"\ninclude = ["b.toml"]\n',
            "b.toml": 'name = "b"\ninclude = ["a.toml"]\n',
        },
        disk=no_results,
    ),
    Attempt(
        "self-include",
        ["validate", "c.toml"],
        2,
        "c.toml: include[0]: cycle c.toml -> c.toml",
        files={"c.toml": 'name = "c"\ninclude = ["c.toml"]\n' + LATENCY},
    ),
    Attempt(
        "include-absolute-path",
        ["run", "sub/s.toml"],
        2,
        "sub/s.toml: include[0]: '/etc/passwd' is outside this suite's folder (sub/)",
        files={"sub/s.toml": 'name = "s"\ninclude = ["/etc/passwd"]\n'},
        disk=no_results,
    ),
    Attempt(
        "include-dotdot",
        ["run", "sub/s.toml"],
        2,
        "sub/s.toml: include[0]: '../outside.toml' is outside this suite's folder",
        files={"sub/s.toml": 'name = "s"\ninclude = ["../outside.toml"]\n', "outside.toml": SUITE},
        disk=no_results,
    ),
    Attempt(
        "include-symlink-out",
        ["run", "sub/s.toml"],
        2,
        "sub/s.toml: include[0]: 'link.toml' is outside this suite's folder",
        files={"sub/s.toml": 'name = "s"\ninclude = ["link.toml"]\n', "outside.toml": SUITE},
        prepare=symlink_outside,
    ),
    Attempt(
        "include-chain-too-deep",
        ["validate", "d0.toml"],
        2,
        "d16.toml: include: includes nest more than 16 deep",
        files={f"d{i}.toml": f'name = "d{i}"\ninclude = ["d{i + 1}.toml"]\n' for i in range(40)},
    ),
    Attempt(
        "sweep-of-ten-million",
        ["validate", "big.toml"],
        2,
        "big.toml: bench[0]: the suite expands to 10,000,000 cases",
        files={
            "big.toml": bench(
                "tokens = [{r}]\nd = [{r}]\nsamples = [{s}]\nwarmup_calls = [{w}]".format(
                    r=",".join(map(str, range(1, 101))),
                    s=",".join(map(str, range(3, 103))),
                    w=",".join(map(str, range(10))),
                )
            )
        },
    ),
    Attempt(
        "not-utf8",
        ["validate", "x.toml"],
        2,
        "x.toml: not UTF-8 text (byte 0xff at offset 9)",
        files={"x.toml": NOT_UTF8},
    ),
    Attempt(
        "not-utf8-in-suites-folder",
        ["list", "suites"],
        0,
        "not UTF-8 text (byte 0xff at offset 9)",
        files={"suites/x.toml": NOT_UTF8, "suites/ok.toml": SUITE},
    ),
    Attempt(
        "include-not-utf8",
        ["validate", "i.toml"],
        2,
        "x.toml: not UTF-8 text (byte 0xff at offset 9)",
        files={"i.toml": 'name = "i"\ninclude = ["x.toml"]\n', "x.toml": NOT_UTF8},
    ),
    Attempt(
        "eps-nan",
        ["validate", "s.toml"],
        2,
        "bench[0].sweep.eps[0]: nan is not a finite number",
        files={"s.toml": bench("tokens = [8]\nd = [16]\neps = [nan]")},
    ),
    Attempt(
        "eps-inf",
        ["validate", "s.toml"],
        2,
        "bench[0].params.eps: inf is not a finite number",
        files={"s.toml": bench("tokens = [8]\nd = [16]", "eps = inf")},
    ),
    Attempt(
        "min-sample-inf",
        ["validate", "s.toml"],
        2,
        "bench[0].params.min_sample_s: inf is not a finite number",
        files={"s.toml": bench("tokens = [8]\nd = [16]", "min_sample_s = inf")},
    ),
    Attempt(
        "lr-nan",
        ["validate", "s.toml"],
        2,
        "bench[0].params.lr: nan is not a finite number",
        files={"s.toml": bench("depth = [2]", "lr = nan", kind="stability", norms='["layernorm"]')},
    ),
    Attempt(
        "jacobian-eps-nan",
        ["validate", "s.toml"],
        2,
        "bench[0].params.eps: nan is not a finite number",
        files={"s.toml": bench("d = [4]", "eps = nan", kind="jacobian")},
    ),
    Attempt(
        "int-beyond-int64",
        ["validate", "s.toml"],
        2,
        "bench[0].params.tokens: 99999999999999999999 does not fit a 64-bit integer",
        files={"s.toml": bench("d = [16]", "tokens = 99999999999999999999")},
    ),
    Attempt(
        "timeout-negative",
        ["validate", "s.toml"],
        2,
        "s.toml: timeout_s: -1.0 must be > 0",
        files={"s.toml": "timeout_s = -1\n" + SUITE},
    ),
    Attempt(
        "timeout-nan-in-bench",
        ["validate", "s.toml"],
        2,
        "s.toml: bench[0].timeout_s: nan is not a finite number",
        files={"s.toml": SUITE.replace('kind = "latency"', 'kind = "latency"\ntimeout_s = nan')},
    ),
    Attempt(
        "threads-zero",
        ["validate", "s.toml"],
        2,
        "s.toml: threads: 0 must be >= 1",
        files={"s.toml": "threads = 0\n" + SUITE},
    ),
    Attempt(
        "processes-zero",
        ["validate", "s.toml"],
        2,
        "s.toml: processes: 0 must be >= 1",
        files={"s.toml": "processes = 0\n" + SUITE},
    ),
    Attempt(
        "processes-option-not-a-number",
        ["run", "s.toml", "--processes", "1.5"],
        2,
        "--processes: '1.5' is not a whole number of processes (1..64)",
        files={"s.toml": SUITE},
        disk=no_results,
    ),
    Attempt(
        "timeout-stops-a-case",
        ["run", "s.toml", "--quiet"],
        1,
        "failed: latency layernorm:module tokens=8 d=16: timed out after 0.5 s",
        files={
            "s.toml": SUITE.replace('kind = "latency"', 'kind = "latency"\ntimeout_s = 0.5').replace(
                "samples = 3", "samples = 1000000000"
            )
            + LATENCY.replace('["layernorm:module"]', '["rmsnorm:module"]')
        },
        disk=timed_out,
    ),
    Attempt(
        "jacobian-overflow",
        ["run", "j.toml", "--quiet"],
        1,
        "the input's statistics overflow fp32",
        files={
            "j.toml": bench(
                'd = [16]\ndtype = ["fp32"]\nscale = [1e30]',
                kind="jacobian",
                norms='["layernorm", "rmsnorm"]',
            )
        },
        disk=both_failed_overflow,
    ),
    Attempt(
        "escape-in-include-name",
        ["validate", "e.toml"],
        2,
        "cannot read \\x1b[31mred.toml",
        files={"e.toml": 'name = "e"\ninclude = ["\\u001b[31mred.toml"]\n'},
    ),
    # -- options -----------------------------------------------------------------------------------
    Attempt(
        "results-is-a-file",
        ["run", "tiny.toml", "--results", "afile"],
        2,
        "error: --results afile: not a folder",
        files={"afile": ""},
        disk=lambda c: (c / "afile").read_text() == "",
    ),
    Attempt(
        "report-results-is-a-file",
        ["report", "--results", "afile"],
        2,
        "error: --results afile: not a folder",
        files={"afile": ""},
    ),
    Attempt(
        "list-runs-results-is-a-file",
        ["list", "runs", "--results", "afile"],
        2,
        "error: --results afile: not a folder",
        files={"afile": ""},
    ),
    Attempt(
        "report-output-missing-dir",
        ["report", "RUN", "-o", "/missing/dir/r.md"],
        2,
        "error: --output /missing/dir/r.md: folder /missing/dir does not exist",
        needs_run=True,
    ),
    Attempt(
        "report-output-over-the-manifest",
        ["report", "RUN", "-o", "results/RUN/manifest.json"],
        2,
        "error: --output results/RUN/manifest.json: would write inside stored run RUN",
        needs_run=True,
        disk=every_case_once,
    ),
    Attempt(
        "report-output-is-a-folder",
        ["report", "RUN", "-o", "sub"],
        2,
        "error: --output sub: is a folder",
        files={"sub/x": ""},
        needs_run=True,
    ),
    Attempt(
        "plot-out-existing-file",
        ["plot", "RUN", "--out", "afile"],
        2,
        "error: --out afile: exists and is not a folder",
        files={"afile": "keep"},
        needs_run=True,
        disk=lambda c: (c / "afile").read_text() == "keep",
    ),
    # -- run ids and steering ------------------------------------------------------------------------
    Attempt(
        "resume-dotdot",
        ["run", "--resume", "../../../other/RUN"],
        2,
        "'../../../other/RUN' is not a run id",
        needs_run=True,
        disk=run_untouched,
    ),
    Attempt(
        "resume-absolute",
        ["run", "--resume", "/etc"],
        2,
        "'/etc' is not a run id",
        needs_run=True,
        disk=run_untouched,
    ),
    Attempt("report-dotdot", ["report", "../results/RUN"], 2, "is not a run id", needs_run=True),
    Attempt(
        "manifest-steers-plot",
        ["plot", "RUN"],
        2,
        "run_id '../../../../x/pwn' does not match its folder 'RUN'",
        needs_run=True,
        prepare=edit_manifest(run_id="../../../../x/pwn"),
        disk=lambda c: not (c.parent.parent / "x").exists() and not list(c.rglob("plots")),
    ),
    # -- damaged manifests ---------------------------------------------------------------------------
    Attempt(
        "manifest-is-a-list",
        ["report", "RUN"],
        2,
        "manifest.json: damaged manifest: expected an object, found list",
        needs_run=True,
        prepare=write_manifest("[]"),
    ),
    Attempt(
        "manifest-without-suite-text",
        ["run", "--resume", "RUN"],
        2,
        "manifest.json: cannot resume: 'suite_text' is missing",
        needs_run=True,
        prepare=edit_manifest(suite_text=None),
    ),
    Attempt(
        "manifest-sessions-string",
        ["run", "--resume", "RUN"],
        2,
        "damaged manifest: 'sessions' must be a list, found str",
        needs_run=True,
        prepare=edit_manifest(sessions="x"),
    ),
    Attempt(
        "manifest-threads-huge",
        ["run", "--resume", "RUN"],
        2,
        "damaged manifest: sessions[0].threads: must be <= 1024",
        needs_run=True,
        prepare=edit_manifest(sessions=[{"pid": 1, "threads": 10**8}]),
    ),
    Attempt(
        "manifest-processes-huge",
        ["run", "--resume", "RUN"],
        2,
        "damaged manifest: sessions[0].processes: 1000 processes; expected 1..64",
        needs_run=True,
        prepare=edit_manifest(sessions=[{"pid": 1, "threads": 1, "processes": 1000}]),
    ),
    Attempt(
        "manifest-cases-malformed",
        ["report", "RUN"],
        2,
        "damaged manifest: 'cases[0]' is malformed",
        needs_run=True,
        prepare=edit_manifest(cases=[1, 2]),
    ),
    Attempt(
        "manifest-truncated-list-runs",
        ["list", "runs"],
        0,
        "RUN ",
        needs_run=True,
        prepare=write_manifest('{"schema_version": 1, "run_id": "RU'),
    ),
    # -- parts ---------------------------------------------------------------------------------------
    Attempt(
        "truncated-part-report",
        ["report", "RUN"],
        2,
        "unreadable result part",
        needs_run=True,
        prepare=truncate_part,
    ),
    Attempt(
        "truncated-part-report-says-resume",
        ["report", "RUN"],
        2,
        "`normbench run --resume RUN --results results` moves it aside",
        needs_run=True,
        prepare=truncate_part,
    ),
    Attempt(
        "truncated-part-resume",
        ["run", "--resume", "RUN"],
        0,
        "1 of 12 cases to run",
        needs_run=True,
        prepare=truncate_part,
        disk=moved_aside,
    ),
    Attempt(
        "foreign-part-report",
        ["report", "RUN"],
        2,
        "its rows belong to run OTHER, not RUN",
        needs_run=True,
        prepare=foreign_part,
    ),
    Attempt(
        "foreign-part-resume",
        ["run", "--resume", "RUN"],
        0,
        "1 of 12 cases to run",
        needs_run=True,
        prepare=foreign_part,
        disk=moved_aside,
    ),
    Attempt(
        "stray-file-report",
        ["report", "RUN"],
        2,
        "zzzzzzzzzzzz.parquet: not a case of this run",
        needs_run=True,
        prepare=stray_file,
    ),
    Attempt(
        "stray-file-resume",
        ["run", "--resume", "RUN"],
        0,
        "0 of 12 cases to run",
        needs_run=True,
        prepare=stray_file,
        disk=moved_aside,
    ),
    Attempt(
        "unwritable-parts",
        ["run", "--resume", "RUN"],
        2,
        "error: cannot write results/RUN/parts: Not a directory",
        needs_run=True,
        prepare=parts_is_a_file,
        disk=lambda c: (
            (c / "results/RUN/parts").read_text() == ""
            and json.loads((c / "results/RUN/manifest.json").read_text())["status"] == "interrupted"
        ),
    ),
    # -- locks and status ------------------------------------------------------------------------------
    Attempt(
        "stale-lock-taken-over",
        ["run", "--resume", "RUN"],
        0,
        "which has ended; taking it over",
        needs_run=True,
        prepare=stale_lock,
        disk=every_case_once,
    ),
    Attempt(
        "dead-writer-listed-interrupted",
        ["list", "runs"],
        0,
        "interrupted  11/12 cases",
        needs_run=True,
        prepare=stale_lock,
    ),
]

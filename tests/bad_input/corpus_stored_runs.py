"""Bad-input attempts on stored runs and the files around them (export, resume after change,
the store's own files, part checks, corpus_dir, include, manifests), as data for test_bad_input_corpus.py.
Plugins, the output contract, Ray and signals need real processes or registered norms: test_plugins_and_resume_misuse.py, test_ray_misuse.py."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow.parquet as pq
from corpus import SUITE, Attempt, bench, edit_manifest, every_case_once, first_part, moved_aside

MANIFEST = "results/RUN/manifest.json"


# -- checks on disk ----------------------------------------------------------------------------------
def run_intact(cwd: Path) -> None:
    """Every case of RUN once, its manifest still a manifest, nothing else written into the run folder (the
    completed run's own one-file table is there)."""
    every_case_once(cwd)
    run = cwd / "results" / "RUN"
    assert json.loads((run / "manifest.json").read_text())["run_id"] == "RUN"
    assert sorted(p.name for p in run.iterdir()) == [".lock", "_table.parquet", "manifest.json", "parts"]


def nothing_outside(cwd: Path) -> None:
    """The user's files beside a symlinked parts/ are all still there, untouched."""
    elsewhere = cwd / "elsewhere"
    assert (elsewhere / ".notes.tmp").read_text() == "my notes"
    assert (elsewhere / "mydata.parquet").read_bytes() == b"my data"
    assert len(list(elsewhere.glob("*.parquet"))) == 13  # RUN's 12 parts and mydata


# -- ways to spoil a stored run -----------------------------------------------------------------------
def link_to_manifest(cwd: Path, run: Path) -> None:
    (cwd / "out.csv").symlink_to(run / "manifest.json")


def edit_suite_text(old: str, new: str, *, rehash: bool):
    """Change the stored suite text, as an upgrade changing a default does (rehash: the hash matches the
    new text, so only the case ids can tell) or as a hand edit does (the recorded hash stays)."""

    def spoil(cwd: Path, run: Path) -> None:
        path = run / "manifest.json"
        m = json.loads(path.read_text())
        assert old in m["suite_text"]
        m["suite_text"] = m["suite_text"].replace(old, new)
        if rehash:
            m["suite_sha256"] = hashlib.sha256(m["suite_text"].encode()).hexdigest()
        path.write_text(json.dumps(m))

    return spoil


def symlinked_parts(cwd: Path, run: Path) -> None:
    """parts/ is a link to a folder of the user's that also holds their own files (a `.notes.tmp`, a
    `mydata.parquet`): a resume would clean up and move aside files there."""
    elsewhere = cwd / "elsewhere"
    (run / "parts").rename(elsewhere)
    (elsewhere / ".notes.tmp").write_text("my notes")
    (elsewhere / "mydata.parquet").write_bytes(b"my data")
    (run / "parts").symlink_to(elsewhere)
    edit_manifest(status="interrupted")(cwd, run)


def user_temporary_files(cwd: Path, run: Path) -> None:
    """A user's `.notes.tmp` beside normbench's own stale temporary (a killed writer's)."""
    (run / ".notes.tmp").write_text("keep")
    (run / "parts" / ".0123abcd.parquet.4242.deadbeef.tmp").write_bytes(b"half a part")
    (run / "parts" / "write-check").write_text("my file, not a probe")


def lock_links_to_user_file(cwd: Path, run: Path) -> None:
    (cwd / "precious.txt").write_text("precious")
    (run / ".lock").unlink(missing_ok=True)
    (run / ".lock").symlink_to(cwd / "precious.txt")


def corrupt_value_page(cwd: Path, run: Path) -> None:
    """One byte of the `value` column's data page flipped: the part's footer, run_id and case_id still
    read (what the shallow check looked at), its numbers do not."""
    part = first_part(run)
    meta = pq.ParquetFile(part).metadata
    column = meta.schema.names.index("value")
    chunk = meta.row_group(0).column(column)
    end = chunk.data_page_offset + chunk.total_compressed_size
    data = bytearray(part.read_bytes())
    data[end - 3] ^= 0xFF
    part.write_bytes(bytes(data))
    assert pq.read_table(part, columns=["run_id", "case_id"]).num_rows > 0  # the old check passed this


def set_part_metadata(**changes: str):
    def spoil(cwd: Path, run: Path) -> None:
        part = first_part(run)
        table = pq.read_table(part)
        meta = {**table.schema.metadata, **{k.encode(): v.encode() for k, v in changes.items()}}
        pq.write_table(table.replace_schema_metadata(meta), part)

    return spoil


def nested_manifest(cwd: Path, run: Path) -> None:
    (run / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)


BIG_FILES = {f"corpus/f{i}.txt": "some words of text. " * 60 for i in range(10)}  # 10 x 1200 bytes
STABILITY = "depth = [1]\n", "d = 8\nheads = 1\nffn = 8\nbatch = 1\nsteps = 2\nevery = 1\neval_batches = 1\n"

STORED_RUNS = [
    # -- 1. one rule for every output path: never a file of a stored run --------------------------------
    Attempt(
        "export-over-the-manifest",
        ["export", "RUN", "-o", MANIFEST, "--format", "jsonl"],
        2,
        f"error: --output {MANIFEST}: would write inside stored run RUN",
        needs_run=True,
        disk=run_intact,
    ),
    Attempt(
        "export-over-a-part",
        ["export", "RUN", "-o", "results/RUN/parts/x.parquet"],
        2,
        "would write inside stored run RUN",
        needs_run=True,
        disk=run_intact,
    ),
    Attempt(
        "export-through-a-symlink-to-the-manifest",
        ["export", "RUN", "-o", "out.csv"],
        2,
        "error: --output out.csv: would write inside stored run RUN",
        needs_run=True,
        prepare=link_to_manifest,
        disk=run_intact,
    ),
    Attempt(
        "report-into-the-run-folder",
        ["report", "RUN", "-o", "results/RUN/notes.md"],
        2,
        "would write inside stored run RUN",
        needs_run=True,
        disk=run_intact,
    ),
    Attempt(
        "plot-into-parts",
        ["plot", "RUN", "--out", "results/RUN/parts"],
        2,
        "error: --out results/RUN/parts: would write inside stored run RUN",
        needs_run=True,
        disk=run_intact,
    ),
    Attempt(
        "run-with-results-inside-a-run",
        ["run", "s.toml", "--results", "results/RUN/parts"],
        2,
        "error: --results results/RUN/parts: would write inside stored run RUN",
        files={"s.toml": SUITE},
        needs_run=True,
        disk=run_intact,
    ),
    # -- 2. resume keyed on what the manifest recorded ---------------------------------------------------
    Attempt(
        "resume-suite-text-edited",
        ["run", "--resume", "RUN"],
        2,
        "cannot resume: the stored suite text hashes to",
        needs_run=True,
        prepare=edit_suite_text("samples = 3", "samples = 4", rehash=False),
        disk=run_intact,
    ),
    Attempt(
        "resume-after-a-default-changed",
        ["run", "--resume", "RUN"],
        2,
        "cannot resume: 12 of 12 recorded cases no longer expand to the ids the run recorded",
        needs_run=True,
        prepare=edit_suite_text("samples = 3", "samples = 4", rehash=True),
        disk=run_intact,
    ),
    Attempt(
        "resume-after-a-default-changed-names-it",
        ["run", "--resume", "RUN"],
        2,
        "samples: 3 -> 4",
        needs_run=True,
        prepare=edit_suite_text("samples = 3", "samples = 4", rehash=True),
    ),
    # -- 3. the store touches only what it made ------------------------------------------------------------
    Attempt(
        "resume-through-a-symlinked-parts",
        ["run", "--resume", "RUN"],
        2,
        "results/RUN/parts is a symbolic link",
        needs_run=True,
        prepare=symlinked_parts,
        disk=nothing_outside,
    ),
    Attempt(
        "resume-keeps-a-users-temporary-files",
        ["run", "--resume", "RUN"],
        0,
        "0 of 12 cases to run",
        needs_run=True,
        prepare=user_temporary_files,
        disk=lambda c: (
            (c / "results/RUN/.notes.tmp").read_text() == "keep"
            and (c / "results/RUN/parts/write-check").read_text() == "my file, not a probe"
            and not list((c / "results/RUN/parts").glob(".*.tmp"))
        ),
    ),
    Attempt(
        "resume-with-a-lock-linking-to-a-users-file",
        ["run", "--resume", "RUN"],
        2,
        "results/RUN/.lock is a symbolic link",
        needs_run=True,
        prepare=lock_links_to_user_file,
        disk=lambda c: (c / "precious.txt").read_text() == "precious",
    ),
    # -- 8. a part is checked deeply before it counts as finished --------------------------------------------
    Attempt(
        "corrupt-page-report-says-resume",
        ["report", "RUN"],
        2,
        "`normbench run --resume RUN --results results` moves it aside",
        needs_run=True,
        prepare=corrupt_value_page,
    ),
    Attempt(
        "corrupt-page-resume-reruns-it",
        ["run", "--resume", "RUN"],
        0,
        "1 of 12 cases to run",
        needs_run=True,
        prepare=corrupt_value_page,
        disk=moved_aside,
    ),
    Attempt(
        "part-metadata-of-another-run-resume",
        ["run", "--resume", "RUN"],
        0,
        "schema metadata: written for run OTHER, not RUN",
        needs_run=True,
        prepare=set_part_metadata(run_id="OTHER"),
        disk=moved_aside,
    ),
    Attempt(
        "part-metadata-version-garbage-report",
        ["report", "RUN"],
        2,
        "not a normbench result (no schema_version)",
        needs_run=True,
        prepare=set_part_metadata(normbench_schema_version="abc"),
    ),
    # -- 10. messages ----------------------------------------------------------------------------------------
    Attempt(
        "manifest-columns-of-a-wrong-type",
        ["report", "RUN"],
        2,
        "damaged manifest: 'columns.value' must be one of string, float64, int64, bool, found 5",
        needs_run=True,
        prepare=edit_manifest(columns={"value": 5}),
    ),
    Attempt(
        "manifest-nested-deep-report",
        ["report", "RUN"],
        2,
        "unreadable manifest: JSON nested too deeply",
        needs_run=True,
        prepare=nested_manifest,
    ),
    Attempt(
        "manifest-nested-deep-list-runs",
        ["list", "runs"],
        0,
        "RUN ",
        needs_run=True,
        prepare=nested_manifest,
    ),
    Attempt(
        "validate-missing-corpus-dir",
        ["validate", "s.toml"],
        2,
        "s.toml: bench[0].params.corpus_dir: cannot read the corpus in nowhere",
        files={
            "s.toml": bench("depth = [1]", 'corpus_dir = "nowhere"', kind="stability", norms='["layernorm"]')
        },
    ),
    Attempt(
        "timeout-1e308",
        ["validate", "s.toml"],
        2,
        "s.toml: timeout_s: must be <= 1e+07 s (about 116 days)",
        files={"s.toml": "timeout_s = 1e308\n" + SUITE},
    ),
    Attempt(
        "bad-include-and-another-problem",
        ["validate", "s.toml"],
        2,
        "s.toml: bench[0].sweep.tokens[0]: 0 must be >= 1",
        files={"s.toml": 'include = ["missing.toml"]\n' + SUITE.replace("tokens = [8]", "tokens = [0]")},
    ),
    Attempt(
        "bad-include-is-reported-too",
        ["validate", "s.toml"],
        2,
        "s.toml: include[0]: cannot read missing.toml",
        files={"s.toml": 'include = ["missing.toml"]\n' + SUITE.replace("tokens = [8]", "tokens = [0]")},
    ),
    Attempt(
        "escape-in-suite-name",
        ["validate", "s.toml"],
        2,
        "s.toml: name: '\\x1b[31mred' holds control characters",
        files={"s.toml": SUITE.replace('name = "ok"', 'name = "\\u001b[31mred"')},
    ),
    Attempt(
        "fp16-underflow-at-eps-0",
        ["run", "j.toml", "--quiet"],
        1,
        "at eps = 0 the input's statistics underflow fp16",
        files={
            "j.toml": bench(
                "d = [16]",
                'dtype = "fp16"\nscale = 1e-30\neps = 0\nmethod = "matrix_free"\ntol = 4e-3',
                kind="jacobian",
                norms='["rmsnorm"]',
            )
        },
    ),
    Attempt(
        "seq-longer-than-the-held-out-text",
        ["run", "s.toml", "--quiet"],
        1,
        "seq = 2000 needs windows of 2001 tokens, but the held-out text has 1200",
        files={
            "s.toml": bench(
                STABILITY[0],
                STABILITY[1] + 'seq = 2000\ncorpus_dir = "corpus"',
                kind="stability",
                norms='["layernorm"]',
            ),
            **BIG_FILES,
        },
    ),
]

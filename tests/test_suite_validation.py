"""Malformed suites are refused before anything runs: every problem at once, each with file, key path and an exact message."""

from __future__ import annotations

from pathlib import Path

import pytest

from normbench.benches import all_benches
from normbench.core.errors import NormbenchError, SuiteError
from normbench.norms import all_norms, get_norm
from normbench.suite.load import load_suite, parse_suite

SRC = "suites/x.toml"
NAME = 'name = "x"\n'
BENCH = '[[bench]]\nkind = "latency"\nnorms = ["layernorm"]\n'
SHAPE = "[bench.sweep]\ntokens = [8]\nd = [16]\n"


def problems_of(text: str) -> list[str]:
    with pytest.raises(SuiteError) as info:
        parse_suite(text, SRC)
    lines = str(info.value).splitlines()
    assert len(lines) == len(info.value.problems)
    return lines


def kinds() -> str:
    return ", ".join(sorted(all_benches()))


def norm_names() -> str:
    return ", ".join(sorted(all_norms()))


# (id, suite text, the exact lines of the error). Lists of kinds/norms/impls are read from the registry so
# that adding a norm or a bench kind does not break these tests.
MALFORMED = [
    (
        "unknown top-level key",
        'nmae = "x"\n' + BENCH + SHAPE,
        lambda: [
            f"{SRC}: nmae: unknown key (did you mean 'name'?)",
            f"{SRC}: name: required: a non-empty string naming the suite",
        ],
    ),
    (
        "unknown bench key",
        NAME + BENCH + "sweeep = 1\n" + SHAPE,
        lambda: [f"{SRC}: bench[0].sweeep: unknown key (did you mean 'sweep'?)"],
    ),
    (
        "unknown kind",
        NAME + '[[bench]]\nkind = "latncy"\n',
        lambda: [
            f"{SRC}: bench[0].kind: unknown bench kind 'latncy'; one of {kinds()} (did you mean 'latency'?)"
        ],
    ),
    (
        "missing kind",
        NAME + '[[bench]]\nnorms = ["layernorm"]\n',
        lambda: [f"{SRC}: bench[0].kind: required: one of {kinds()}"],
    ),
    (
        "unknown norm",
        NAME + '[[bench]]\nkind = "latency"\nnorms = ["layernrom"]\n' + SHAPE,
        lambda: [
            f"{SRC}: bench[0].norms[0]: unknown norm 'layernrom'; one of {norm_names()} (did you mean 'layernorm'?)"
        ],
    ),
    (
        "unknown impl in norm:impl",
        NAME + '[[bench]]\nkind = "latency"\nnorms = ["rmsnorm", "layernorm:modul"]\n' + SHAPE,
        lambda: [
            f"{SRC}: bench[0].norms[1]: layernorm has no implementation 'modul'; it has "
            f"{', '.join(get_norm('layernorm').impls)} (did you mean 'module'?)"
        ],
    ),
    (
        "impls filter naming nothing",
        NAME + BENCH + 'impls = ["composit"]\n' + SHAPE,
        lambda: [f"{SRC}: bench[0].impls[0]: no norm listed offers 'composit' (did you mean 'composite'?)"],
    ),
    (
        "norms missing",
        NAME + '[[bench]]\nkind = "latency"\n' + SHAPE,
        lambda: [
            f"{SRC}: bench[0].norms: required: a list of norms, e.g. ['layernorm', 'rmsnorm:composite']"
        ],
    ),
    (
        "sweep value not a list",
        NAME + BENCH + "[bench.sweep]\ntokens = 8\nd = [16]\n",
        lambda: [f"{SRC}: bench[0].sweep.tokens: sweep values must be a non-empty list"],
    ),
    (
        "empty sweep list",
        NAME + BENCH + "[bench.sweep]\ntokens = [8]\nd = []\n",
        lambda: [f"{SRC}: bench[0].sweep.d: sweep values must be a non-empty list"],
    ),
    (
        "bad choice",
        NAME + BENCH + SHAPE + BENCH + '[bench.sweep]\ndtype = ["bf17"]\ntokens = [8]\nd = [16]\n',
        lambda: [
            f"{SRC}: bench[1].sweep.dtype[0]: 'bf17' is not one of fp32, bf16, fp16, fp64 (did you mean 'bf16'?)"
        ],
    ),
    (
        "wrong types",
        NAME + BENCH + '[bench.sweep]\ntokens = ["8"]\nd = [16]\n[bench.params]\nsamples = 2.5\n',
        lambda: [
            f"{SRC}: bench[0].sweep.tokens[0]: '8' is not an integer",
            f"{SRC}: bench[0].params.samples: 2.5 is not an integer",
        ],
    ),
    (
        "below minimum",
        NAME + BENCH + "[bench.sweep]\ntokens = [0]\nd = [16]\n[bench.params]\nsamples = 2\neps = 0\n",
        lambda: [
            f"{SRC}: bench[0].sweep.tokens[0]: 0 must be >= 1",
            f"{SRC}: bench[0].params.samples: 2 must be >= 3",
            f"{SRC}: bench[0].params.eps: 0.0 must be > 0",
        ],
    ),
    (
        "param in sweep and params",
        NAME + BENCH + SHAPE + "[bench.params]\nd = 16\n",
        lambda: [f"{SRC}: bench[0].params.d: also given in sweep; give it in one place"],
    ),
    (
        "list in params",
        NAME + BENCH + "[bench.sweep]\ntokens = [8]\n[bench.params]\nd = [16]\n",
        lambda: [f"{SRC}: bench[0].params.d: params are scalars; put lists under sweep"],
    ),
    (
        "missing required param",
        NAME + BENCH + "[bench.sweep]\ntokens = [8]\n",
        lambda: [f"{SRC}: bench[0]: missing required parameter 'd' (in sweep or params)"],
    ),
    (
        "unknown param",
        NAME + BENCH + SHAPE.replace("d = [16]", "d = [16]\ndtpye = [3]"),
        lambda: [
            f"{SRC}: bench[0].sweep.dtpye: unknown parameter for this bench kind (did you mean 'dtype'?); "
            f"it takes {', '.join(sorted(all_benches()['latency'].params))}"
        ],
    ),
    (
        "duplicate values",
        NAME + BENCH + "[bench.sweep]\ntokens = [8]\nd = [16, 32, 16]\neps = [1, 1.0]\n",
        lambda: [
            f"{SRC}: bench[0].sweep.d[2]: 16 is listed twice",
            f"{SRC}: bench[0].sweep.eps[1]: 1.0 is listed twice",
        ],
    ),
    (
        "duplicate cases across benches",
        NAME + BENCH + SHAPE + '[[bench]]\nkind = "latency"\nnorms = ["layernorm:module", "rmsnorm"]\n'
        "[bench.sweep]\nd = [16]\n[bench.params]\ntokens = 8\n",
        lambda: [f"{SRC}: bench[1]: repeats 1 case(s) of bench[0]"],
    ),
    (
        "TOML syntax error",
        NAME + "[[bench]]\nkind = latency\n",
        lambda: [f"{SRC}: line 3, column 8: TOML syntax error: Invalid value"],
    ),
    ("missing name", BENCH + SHAPE, lambda: [f"{SRC}: name: required: a non-empty string naming the suite"]),
    (
        "blank name",
        'name = "  "\n' + BENCH + SHAPE,
        lambda: [f"{SRC}: name: required: a non-empty string naming the suite"],
    ),
    (
        "no bench",
        NAME + 'description = "nothing to run"\n',
        lambda: [f"{SRC}: bench: required: one or more [[bench]] tables"],
    ),
    (
        "bench not a table",
        NAME + "bench = 3\n",
        lambda: [f"{SRC}: bench: required: one or more [[bench]] tables"],
    ),
    (
        "sweep not a table",
        NAME + BENCH + "sweep = 3\n[bench.params]\ntokens = 8\nd = 16\n",
        lambda: [f"{SRC}: bench[0].sweep: must be a table"],
    ),
    (
        "description and label not strings",
        "description = 3\n" + NAME + BENCH + "label = 4\n" + SHAPE,
        lambda: [f"{SRC}: description: must be a string", f"{SRC}: bench[0].label: must be a string"],
    ),
]


@pytest.mark.parametrize(("text", "expected"), [pytest.param(t, e, id=i) for i, t, e in MALFORMED])
def test_malformed_suite_names_each_problem_exactly(text, expected):
    assert problems_of(text) == expected()


def test_every_problem_of_a_suite_is_reported_at_once():
    text = (
        'nmae = "x"\n'
        + BENCH
        + 'labl = "a"\n[bench.sweep]\ntokens = [0]\nd = [16]\n[bench.params]\nsamples = 2\n'
        + '[[bench]]\nkind = "latncy"\n'
        + '[[bench]]\nkind = "latency"\nnorms = ["layernrom"]\n[bench.sweep]\ntokens = [8]\ndtype = ["bf17"]\n'
    )
    lines = problems_of(text)
    assert lines == [
        f"{SRC}: nmae: unknown key (did you mean 'name'?)",
        f"{SRC}: name: required: a non-empty string naming the suite",
        f"{SRC}: bench[0].labl: unknown key (did you mean 'label'?)",
        f"{SRC}: bench[0].sweep.tokens[0]: 0 must be >= 1",
        f"{SRC}: bench[0].params.samples: 2 must be >= 3",
        f"{SRC}: bench[1].kind: unknown bench kind 'latncy'; one of {kinds()} (did you mean 'latency'?)",
        f"{SRC}: bench[2].norms[0]: unknown norm 'layernrom'; one of {norm_names()} (did you mean 'layernorm'?)",
        f"{SRC}: bench[2].sweep.dtype[0]: 'bf17' is not one of fp32, bf16, fp16, fp64 (did you mean 'bf16'?)",
        f"{SRC}: bench[2]: missing required parameter 'd' (in sweep or params)",
    ]


def test_valid_suite_resolves_defaults_and_keeps_the_text():
    suite = parse_suite(NAME + BENCH + SHAPE + '[bench.params]\ndtype = "bf16"\n', SRC)
    (spec,) = suite.benches
    assert spec.norm_impls == [
        ("layernorm", i) for i, info in get_norm("layernorm").impls.items() if info.default
    ]
    assert spec.sweep == {"tokens": [8], "d": [16]}
    defaults = {k: p.default for k, p in all_benches()["latency"].params.items() if not p.required}
    assert spec.params == {**defaults, "dtype": "bf16"}
    assert suite.text.startswith(NAME) and len(suite.sha256) == 64


def test_missing_suite_file_is_one_clear_error(tmp_path):
    with pytest.raises(NormbenchError, match=r"nope\.toml: no such suite file$"):
        load_suite(tmp_path / "nope.toml")


def test_the_shipped_quick_suite_is_valid():
    assert load_suite(Path(__file__).resolve().parent.parent / "suites" / "quick.toml").benches


BAD_SUITE = (
    NAME + BENCH + '[bench.sweep]\ntokens = [8]\nd = [16]\ndtype = ["bf17"]\n[bench.params]\nsamples = 2\n'
)
BAD_LINES = [
    "bad.toml: bench[0].sweep.dtype[0]: 'bf17' is not one of fp32, bf16, fp16, fp64 (did you mean 'bf16'?)",
    "bad.toml: bench[0].params.samples: 2 must be >= 3",
    "bad.toml: 2 problems; nothing was run",
]


def test_cli_reports_a_bad_suite_with_exit_2_and_no_traceback(normbench_proc, tmp_path):
    (tmp_path / "bad.toml").write_text(BAD_SUITE)
    proc = normbench_proc("validate", "bad.toml")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == BAD_LINES + ["(set NORMBENCH_DEBUG=1 for the traceback)"]
    assert "Traceback" not in proc.stderr + proc.stdout


def test_run_refuses_a_bad_suite_before_running_anything(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.toml").write_text(BAD_SUITE)
    result = cli("run", "bad.toml", "--results", tmp_path / "results")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[:3] == BAD_LINES
    assert not (tmp_path / "results").exists()


def test_normbench_debug_shows_the_traceback(normbench_proc, tmp_path):
    (tmp_path / "bad.toml").write_text(BAD_SUITE)
    proc = normbench_proc("validate", "bad.toml", extra_env={"NORMBENCH_DEBUG": "1"})
    assert proc.returncode != 0
    assert "Traceback (most recent call last)" in proc.stderr
    assert "normbench.core.errors.SuiteError" in proc.stderr
    assert BAD_LINES[0] in proc.stderr

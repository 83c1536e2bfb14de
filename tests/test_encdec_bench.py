"""The encdec bench: a 2L-2L copy task learns, each side's diagnostics are stored, bad input is one line at its key, and resume and report work on its runs."""

import pyarrow.parquet as pq
import pytest

from normbench.benches import RunContext
from normbench.core.errors import SuiteError
from normbench.runner import run_one
from normbench.suite.expand import expand
from normbench.suite.load import parse_suite

TINY = {
    "task": "copy",
    "task_words": 8,
    "min_len": 2,
    "max_len": 6,
    "depth": 2,
    "d": 16,
    "ffn": 32,
    "batch": 4,
    "steps": 12,
    "every": 5,
    "eval_batches": 2,
}
CTX = RunContext(threads=1)  # shared: its memo keeps the generated pairs between tests


@pytest.fixture(autouse=True)
def one_thread():
    """One torch thread, as a suite with threads = 1 runs: two threads on a loaded 2-core machine wait on
    each other at every small op (_lm/training.py notes 118 s against 16 s)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def suite(norms='["layernorm"]', name="t", kind="encdec", **params) -> str:
    """A one-bench suite of tiny encoder-decoder runs; params override TINY (None removes a key)."""
    merged = {k: v for k, v in {**TINY, **params}.items() if v is not None}
    lines = "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in merged.items())
    return (
        f'name = "{name}"\nthreads = 1\n[[bench]]\nkind = "{kind}"\nnorms = {norms}\n[bench.params]\n{lines}'
    )


def run(text: str):
    return [run_one(case, CTX) for case in expand(parse_suite(text))]


def values(rows, metric, **labels):
    return [
        r["value"] for r in rows if r["metric"] == metric and all(r.get(k) == v for k, v in labels.items())
    ]


def test_a_2l_2l_copy_task_learns():
    # Pre-LN, 8 words, sources of 2-6: 200 steps of batch 32 at lr 3e-3 (about 3 s on one core)
    text = suite(
        placement="pre", d=32, ffn=64, batch=32, lr=3e-3, steps=200, every=200, eval_batches=4, seed=0
    )
    ((rows, status, _),) = run(text)
    assert status == "ok"
    assert values(rows, "token_accuracy")[0] > 0.95
    assert values(rows, "final_loss")[0] < 0.2 < 2.0 < values(rows, "unigram_loss")[0]


def test_each_side_is_measured_and_the_data_identified():
    ((rows, status, _),) = run(suite(placement="deepnorm", init="deepnorm"))
    assert status in ("ok", "stuck")
    sites = {r["site"] for r in rows if r["metric"] == "ln_input_norm" and r["step"] == 0}
    assert sites == {"enc.1.attn", "enc.1.ffn", "enc.2.attn", "enc.2.ffn"} | {
        f"dec.{i}.{s}" for i in (1, 2) for s in ("attn", "cross", "ffn")
    }
    layers = {(r["site"], r["layer"]) for r in rows if r["metric"] == "grad_norm" and r["step"] == 1}
    assert layers == {
        ("enc_embed", 0),
        ("enc", 1),
        ("enc", 2),
        ("dec_embed", 0),
        ("dec", 1),
        ("dec", 2),
        ("head", 3),
    }
    for metric in ("model_update", "enc_update", "dec_update_via_enc"):
        assert values(rows, metric, step=0) == [0.0] and values(rows, metric, step=1)[0] > 0
    assert values(rows, "residual_alpha", site="dec") == [pytest.approx(6**0.25)]
    (pairs,) = [r for r in rows if r["metric"] == "data_pairs"]
    assert len(pairs["data_sha256"]) == 64
    assert {"token_accuracy", "sequence_accuracy", "final_loss", "unigram_loss"} <= {
        r["metric"] for r in rows
    }


def test_case_ids_name_the_model_and_the_task_and_the_old_spelling_is_an_alias():
    (lm,) = expand(
        parse_suite(suite(kind="stability", task=None, task_words=None, min_len=None, max_len=None))
    )
    (copy,) = expand(parse_suite(suite()))
    (rev,) = expand(parse_suite(suite(task="reverse")))
    assert len({lm.case_id, copy.case_id, rev.case_id}) == 3
    assert "model" not in lm.label and "model" not in copy.label
    # as written before it was its own kind (core/renames.py): the same case, the same id
    (old,) = expand(parse_suite(suite(kind="stability", model="encdec")))
    assert (old.kind, old.case_id, old.params) == ("encdec", copy.case_id, copy.params)
    (lm_old,) = expand(
        parse_suite(
            suite(kind="stability", model="lm", task=None, task_words=None, min_len=None, max_len=None)
        )
    )
    assert lm_old.case_id == lm.case_id


@pytest.mark.parametrize(
    "params, where",
    [
        ({"kind": "stability"}, "bench[0].params.task: unknown parameter for this bench kind"),
        ({"objective": "masked"}, "bench[0].params.objective: unknown parameter for this bench kind"),
        ({"data": "markov"}, "bench[0].params.data: unknown parameter for this bench kind"),
        ({"min_len": 7}, "bench[0].params.min_len: 7 is above max_len = 6"),
        ({"task": "rot13"}, "bench[0].params.task: 'rot13' is not one of"),
        ({"heads": 3}, "bench[0].params.heads: 3 heads do not divide d=16"),
    ],
)
def test_bad_input_is_one_line_at_its_key(params, where):
    with pytest.raises(SuiteError) as info:
        parse_suite(suite(**params))
    assert where in str(info.value)


def test_sweeping_the_old_model_key_names_the_new_kind():
    text = suite(kind="stability").replace(
        "[bench.params]", '[bench.sweep]\nmodel = ["lm", "encdec"]\n[bench.params]'
    )
    with pytest.raises(SuiteError) as info:
        parse_suite(text)
    assert 'bench[0].sweep.model: model = "encdec" is bench kind "encdec" now: one table of each kind' in str(
        info.value
    )


def test_batch_statistics_norms_go_in_the_encoder_but_not_with_subln():
    parse_suite(suite(norms='["batchnorm", "powernorm:official"]'))  # the encoder's; the decoder keeps LN
    with pytest.raises(SuiteError) as info:
        parse_suite(suite(norms='["batchnorm"]', placement="subln"))
    assert "bench[0].params.placement: batchnorm normalizes over the batch, and Sub-LN's inner norms" in str(
        info.value
    )


def test_resume_runs_only_the_missing_case_and_report_shows_both_sides(tmp_path, cli):
    path = tmp_path / "encdec.toml"
    path.write_text(
        suite(name="encdec-resume").replace(
            "[bench.params]", "[bench.sweep]\nseed = [0, 1, 2]\n[bench.params]"
        )
    )
    results = tmp_path / "results"
    first = cli("run", path, "--quiet", "--results", results)
    assert first.exit_code == 0, first.output
    run_id = first.stdout.strip().splitlines()[-1]
    parts = sorted((results / run_id / "parts").glob("*.parquet"))
    assert len(parts) == 3
    parts[1].unlink()  # as if the run had stopped before this case was stored
    again = cli("run", "--resume", run_id, "--quiet", "--results", results)
    assert again.exit_code == 0, again.output
    sessions = {
        p.name: set(pq.read_table(p, columns=["session"]).column(0).to_pylist())
        for p in sorted((results / run_id / "parts").glob("*.parquet"))
    }
    assert len(sessions) == 3 and sessions[parts[1].name] == {1}
    assert all(s == {0} for name, s in sessions.items() if name != parts[1].name)
    report = cli("report", run_id, "--results", results, "--full")
    assert report.exit_code == 0, report.output
    assert "Encoder–decoder: loss, accuracy, and the update and norm inputs by side" in report.stdout


@pytest.mark.parametrize("words, lengths", [(2, (1, 1)), (32, (1, 2))])
def test_too_few_sources_for_a_held_out_set_are_refused_and_the_draw_is_bounded(words, lengths):
    with pytest.raises(SuiteError) as info:
        parse_suite(suite(task_words=words, min_len=lengths[0], max_len=lengths[1]))
    assert "bench[0].params.max_len: task_words = " in str(info.value) and "cannot be drawn" in str(
        info.value
    )
    from normbench.data.seq2seq_pairs import generate_pairs

    with pytest.raises(ValueError, match="held-out sources unseen in training after"):
        generate_pairs("copy", words, *lengths, seed=0)  # past validation (an old run resumed): fails, ends

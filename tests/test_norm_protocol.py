"""The declared norm protocol: registration refuses inconsistent declarations, every built-in norm declares
what the benches read (and `list norms` shows it), a norm without a float64 `exact` gets no accuracy rows
with the latency report saying so, and an old plugin's `reference` / `reference_grads` still count (warned)."""

from __future__ import annotations

import pytest
from _stores import create_store
from latency_helpers import run

from normbench.norms import registry
from normbench.norms.registry import Built, Norm, impl, register_norm


def _copy(self, hidden, *, eps, dtype, device):
    """y = x * 1.0"""
    return Built(lambda x: x * 1.0)


def _copy_norm(name: str, **attrs):
    body = {
        "name": name,
        "description": "test only",
        "_copy": impl("copy", baseline=True)(_copy),
        "bytes_moved": lambda self, impl, tokens, hidden, itemsize, mode: 2 * tokens * hidden * itemsize,
        **attrs,
    }
    return type(f"T{name}", (Norm,), body)


@pytest.fixture
def registered():
    names = []
    yield names
    for name in names:
        registry.NORMS.remove(name)


@pytest.mark.parametrize(
    "attrs,message",
    [
        ({"module_impl": "nope"}, "module_impl 'nope'"),
        ({"inference_impl": "nope"}, "inference_impl 'nope'"),
        ({"gain_name": "gamma"}, "gain_name 'gamma'"),
        ({"folds_into_linear": True}, "defines no fold_into_linear"),
    ],
)
def test_inconsistent_declarations_are_refused(attrs, message):
    with pytest.raises(TypeError, match=message):
        register_norm(_copy_norm("t_bad", **attrs))
    assert "t_bad" not in registry.NORMS.all()


def test_defaults_follow_what_the_norm_has(registered):
    register_norm(_copy_norm("t_plain"))
    registered.append("t_plain")
    norm = registry.get_norm("t_plain")
    assert norm.module_impl is None and norm.gain_name is None and norm.block_impl is None
    assert norm.capabilities() == dict.fromkeys(
        ("exact", "jacobian", "module", "fold", "mixes_tokens"), False
    )
    assert norm.eager_impl("copy") == "copy"


def test_builtin_capabilities():
    caps = {name: n.capabilities() for name, n in registry.all_norms().items()}
    assert caps["batchnorm"] == dict.fromkeys(caps["batchnorm"], True)
    assert caps["layernorm"] == {
        "exact": True,
        "jacobian": True,
        "module": True,
        "fold": False,
        "mixes_tokens": False,
    }
    assert caps["identity"]["module"] is False and caps["identity"]["jacobian"] is False
    assert registry.get_norm("batchnorm").block_impl == "eval"


def test_list_norms_shows_the_capability_column(cli):
    result = cli("list", "norms")
    assert result.exit_code == 0
    line = next(ln for ln in result.output.splitlines() if ln.strip().startswith("batchnorm "))
    assert "ref jac mod fold mix" in line
    line = next(ln for ln in result.output.splitlines() if ln.strip().startswith("identity "))
    assert "ref --- --- ---- ---" in line


def test_a_norm_without_reference_is_named_in_the_latency_report(registered, tmp_path):
    from normbench.benches import RunContext
    from normbench.benches.latency import Latency
    from normbench.core.tables import ReportOptions
    from normbench.runner import run_one
    from normbench.suite.expand import expand
    from normbench.suite.load import parse_suite

    register_norm(_copy_norm("t_noref"))
    registered.append("t_noref")
    m, rows, status, error = run("latency", "t_noref", "copy", tokens=8, d=8)
    assert status == "ok", error
    assert not [r for r in rows if r["metric"] == "err_abs"]
    suite = parse_suite(
        'name = "n"\n[[bench]]\nkind = "latency"\nnorms = ["t_noref", "rmsnorm"]\n[bench.params]\n'
        "tokens = 8\nd = 8\nsamples = 3\nwarmup_calls = 1\nmin_sample_s = 2e-4\n"
    )
    store = create_store(tmp_path, {"run_id": "r"})
    for case in expand(suite):
        store.write_case(case, *run_one(case, RunContext(threads=1)))
    tables = Latency().report(store.read(), ReportOptions(machine="test"))
    notes = " ".join(n for t in tables for n in t.notes)
    assert "No float64 reference, so no accuracy rows (the norm declares none): t_noref:copy." in notes


def test_an_old_plugin_reference_is_its_exact_with_a_warning(registered):
    def old_reference(self, impl, x, params, built, *, eps):
        return x * 1.0

    def old_grads(self, impl, x, dy, params, built, *, eps):
        return {"dx": dy * 1.0}

    with pytest.warns(DeprecationWarning) as caught:
        cls = register_norm(_copy_norm("t_oldref", reference=old_reference, reference_grads=old_grads))
    registered.append("t_oldref")
    said = [str(w.message) for w in caught]  # in the order of OLD_NAMES
    assert len(said) == 2 and all("2027-06-01" in m for m in said)
    assert "`reference` is now called `exact`" in said[0] and "`reference_grads`" in said[1]
    assert cls.exact is old_reference and cls.exact_grads is old_grads
    norm = registry.get_norm("t_oldref")
    assert norm.capabilities()["exact"]
    m, rows, status, error = run("latency", "t_oldref", "copy", tokens=8, d=8)
    assert status == "ok", error
    assert [r for r in rows if r["metric"] == "err_abs"]  # the old formula is used, not silently dropped


def test_the_new_name_wins_over_an_inherited_old_one(registered, recwarn):
    def new_exact(self, impl, x, params, built, *, eps):
        return x * 1.0

    old = _copy_norm("t_oldbase", reference=lambda self, impl, x, params, built, *, eps: x)
    with pytest.warns(DeprecationWarning):
        register_norm(old)
    registered.append("t_oldbase")
    child = type("Tchild", (old,), {"name": "t_newchild", "exact": new_exact})
    recwarn.clear()
    register_norm(child)
    registered.append("t_newchild")
    assert child.exact is new_exact
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


def test_a_norm_without_closed_form_is_measured_against_the_bounds(registered, tmp_path):
    from normbench.benches.jacobian import Jacobian
    from normbench.core.tables import ReportOptions
    from normbench.norms.closed_form import Formula

    def measured_only(self, impl):
        return Formula(self.name, None, "row", None, "no closed form")

    register_norm(_copy_norm("t_nocf", jacobian_closed_form=measured_only))
    registered.append("t_nocf")
    assert registry.get_norm("t_nocf").capabilities()["jacobian"]
    m, rows, status, error = run("jacobian", "t_nocf", "copy", d=5, inputs=2)
    assert status == "ok", error
    metrics = {r["metric"] for r in rows}
    assert "sigma_max" in metrics and "ratio_xiong" in metrics
    assert not metrics & {"closed_form", "rel_err"}
    sigma = [r["value"] for r in rows if r["metric"] == "sigma_max"]
    assert sigma == pytest.approx([1.0, 1.0], rel=1e-12)  # y = x: J = I
    assert {r["closed_form_kind"] for r in rows if r["metric"] == "sigma_max"} == {"none"}
    from normbench.benches import RunContext
    from normbench.runner import run_one
    from normbench.suite.expand import expand
    from normbench.suite.load import parse_suite

    suite = parse_suite(
        'name = "j"\n[[bench]]\nkind = "jacobian"\nnorms = ["t_nocf"]\n[bench.params]\nd = 5\n'
    )
    store = create_store(tmp_path, {"run_id": "r"})
    for case in expand(suite):
        store.write_case(case, *run_one(case, RunContext(threads=1)))
    frame = store.read()
    tables = Jacobian().report(frame, ReportOptions(machine="test"))
    assert tables[1].frame.loc[0, "vs closed form (max rel err)"] == "no closed form"

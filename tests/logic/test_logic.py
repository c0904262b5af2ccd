"""Formulas, knowledge bases and the DFL loss (Section 4, Eq. "lossrl", Section 9.2)."""

from __future__ import annotations

import math
import re

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from dfl_bench.kb_formulas import FORMULAS, check_one_spelling
from dfl_bench.logic import (
    AndOver,
    Exists,
    Family,
    Forall,
    Index,
    KnowledgeBase,
    Not,
    OrOver,
    Predicate,
    build_kb,
    dfl_loss,
)
from dfl_bench.logic.compiler import _select_columns
from dfl_bench.logic.formulas import IndexExpr
from dfl_bench.logic.predicates import d, digit, x, y
from dfl_bench.operators import KINDS, OperatorSet

DTYPE = torch.float64


def ops_set(t: str, s: str, i: str | dict, a: str | dict, e: str | dict) -> OperatorSet:
    """An operator set from names, or {"name": ..., **params} dicts (Hydra's layout)."""
    cfg = dict(zip(KINDS, (t, s, i, a, e), strict=True))
    return OperatorSet.from_config(
        {k: v if isinstance(v, dict) else {"name": v} for k, v in cfg.items()}
    )


OPS = {
    "product": ops_set("product", "product", "reichenbach", "log_product", "probabilistic_sum"),
    "godel": ops_set("godel", "godel", "kleene_dienes", "minimum", "maximum"),
    "lukasiewicz": ops_set("lukasiewicz", "lukasiewicz", "lukasiewicz", "rmse", "generalized_mean"),
    "mixed": ops_set(
        "product", "godel", "goguen", "product", {"name": "generalized_mean", "p": 2.0}
    ),
    "yager": ops_set(
        {"name": "yager", "p": 2.0},
        {"name": "yager", "p": 3.0},
        {"name": "sigmoidal", "base": "reichenbach", "s": 9.0, "b0": -0.5},
        {"name": "log_product", "reduction": "mean"},
        {"name": "yager", "p": 2.0},
    ),
    "nilpotent": ops_set("nilpotent_minimum", "nilpotent_maximum", "fodor", "yager", "bounded_sum"),
}


def random_interp(b: int, seed: int) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    interp = {
        "digit": torch.softmax(3 * torch.randn(b, 10, generator=g, dtype=DTYPE), -1),
        "same": 0.02 + 0.96 * torch.rand(b, b, generator=g, dtype=DTYPE),
        "sum9": 0.02 + 0.96 * torch.rand(b, b, generator=g, dtype=DTYPE),
    }
    return {k: v.requires_grad_() for k, v in interp.items()}


def _forall_pairs(ops: OperatorSet, b: int, instance) -> torch.Tensor:
    return ops.forall(torch.stack([instance(i, j) for i in range(b) for j in range(b)]), dim=0)


def _per_digit(ops: OperatorSet, b: int, instance, scope: str) -> torch.Tensor:
    """One aggregation per digit (scope "formula") or one over all digits and pairs ("family")."""
    if scope == "formula":
        return torch.stack(
            [_forall_pairs(ops, b, lambda i, j, k=k: instance(i, j, k)) for k in range(10)]
        )
    every = [instance(i, j, k) for k in range(10) for i in range(b) for j in range(b)]
    return ops.forall(torch.stack(every), dim=0).reshape(1)


def loop_valuations(interp: dict, ops: OperatorSet, scope: str) -> dict[str, torch.Tensor]:
    """Definition "val" by enumerating every grounding (Algorithm "real_logic"), no broadcasting."""
    p, s, s9 = interp["digit"], interp["same"], interp["sum9"]
    b = p.shape[0]
    T, I = ops.tnorm, ops.implication

    def disjunction(i: int, j: int) -> torch.Tensor:
        acc = T(p[i, 0], p[j, 9])
        for k in range(1, 10):
            acc = ops.tconorm(acc, T(p[i, k], p[j, 9 - k]))
        return acc

    exists = [ops.exists(torch.stack([s9[i, j] for j in range(b)]), dim=0) for i in range(b)]
    return {
        "same/1": _per_digit(ops, b, lambda i, j, k: I(T(p[i, k], p[j, k]), s[i, j]), scope),
        "same/2": _per_digit(ops, b, lambda i, j, k: I(T(p[i, k], s[i, j]), p[j, k]), scope),
        "same/3": _forall_pairs(ops, b, lambda i, j: I(s[i, j], s[j, i])).reshape(1),
        "sum9/1": ops.forall(torch.stack(exists), dim=0).reshape(1),
        "sum9/2": _forall_pairs(ops, b, lambda i, j: I(s9[i, j], disjunction(i, j))).reshape(1),
    }


def _grads(values: dict[str, torch.Tensor], interp: dict) -> list[torch.Tensor]:
    total = torch.stack([v.sum() for v in values.values()]).sum()
    return list(torch.autograd.grad(total, list(interp.values()), allow_unused=True))


@settings(max_examples=12, deadline=None)
@given(
    ops_name=st.sampled_from(sorted(OPS)),
    b=st.integers(1, 4),
    seed=st.integers(0, 2**16),
    kb_name=st.sampled_from(["same", "sum9", "both"]),
    scope=st.sampled_from(["family", "formula"]),
)
def test_kb_equals_loop_over_groundings(
    ops_name: str, b: int, seed: int, kb_name: str, scope: str
) -> None:
    ops, interp = OPS[ops_name], random_interp(b, seed)
    got = build_kb(kb_name, scope=scope)(interp, ops).formula_valuations
    want = {k: v for k, v in loop_valuations(interp, ops, scope).items() if k in got}
    assert got.keys() == want.keys()
    for name in got:
        torch.testing.assert_close(got[name], want[name], rtol=1e-9, atol=1e-9)
    for g_got, g_want in zip(_grads(got, interp), _grads(want, interp), strict=True):
        if g_want is None:
            assert g_got is None or not g_got.any()
        else:
            torch.testing.assert_close(g_got, g_want, rtol=1e-8, atol=1e-9)


def test_same_kb_on_a_crisp_world_is_true() -> None:
    labels = torch.tensor([3, 3, 6, 0, 9])
    interp = {
        "digit": torch.nn.functional.one_hot(labels, 10).to(DTYPE),
        "same": (labels[:, None] == labels[None]).to(DTYPE),
        "sum9": (labels[:, None] + labels[None] == 9).to(DTYPE),
    }
    result = build_kb("both")(interp, OPS["godel"])
    assert all(v.item() == 1.0 for v in result.mean_valuations.values())
    assert result.loss.item() == pytest.approx(-2.0)  # same's mean + sum9's mean


def test_user_family_with_constants_negation_and_and_over() -> None:
    """A user family needs no change to the evaluator: forall x not (all digits hold of x)."""
    fam = Family("none/1", Forall((x,), Not(AndOver(d, digit[d](x)))))
    three = Family("three/1", Forall((x,), Exists((y,), digit["three"](x) & digit[9 - d](y))), d)
    kb = KnowledgeBase([fam, three], scope="formula")
    ops, interp = OPS["product"], random_interp(3, 0)
    p = interp["digit"]
    got = kb({"digit": p}, ops).formula_valuations
    want_none = ops.forall(1 - p.prod(dim=1), dim=0)
    want_three = torch.stack(
        [ops.forall(ops.exists(p[:, 3:4] * p[None, :, 9 - k], dim=1), dim=0) for k in range(10)]
    )
    torch.testing.assert_close(got["none/1"], want_none.reshape(1))
    torch.testing.assert_close(got["three/1"], want_three)


@pytest.mark.parametrize(
    ("formula", "each", "message"),
    [
        (Forall((x,), digit[d](x) >> Forall((y,), digit[d](y))), d, "not prenex"),
        (Forall((x,), digit[d](x) >> digit[d](y)), d, "not quantified"),
        (Forall((x,), digit[d](x)), None, "not bound"),
        (Forall((x,), digit[d + 1](x)), d, "out of range"),
        (Forall((x,), Predicate("digit", 1)(x, x)), None, "takes 1 arguments"),
        (Forall((x, y), Predicate("same", 2)(x, x)), None, "repeated variable"),
        (Forall((x, x), Predicate("p", 1)(x)), None, "quantified twice"),
    ],
)
def test_invalid_formulas_raise(formula, each: Index | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        KnowledgeBase([Family("bad", formula, each)])


def test_groundings_count_formulas_times_b_to_the_variables() -> None:
    kb = build_kb("both")
    assert kb.groundings(64) == {
        "same/1": 10 * 64**2,
        "same/2": 10 * 64**2,
        "same/3": 64**2,
        "sum9/1": 64**2,
        "sum9/2": 64**2,
    }


@pytest.mark.parametrize(
    ("formulas", "expected"),
    [
        ([1, 2], ["same/1", "same/2"]),
        ([2, 3], ["same/2", "same/3"]),
        ([1, 3], ["same/1", "same/3"]),
        ([1], ["same/1"]),
        (["2"], ["same/2"]),
        (["same/3"], ["same/3"]),
        (None, ["same/1", "same/2", "same/3"]),
    ],
)
def test_ablation_selects_families(formulas, expected: list[str]) -> None:
    kb = build_kb("same", formulas)
    assert [f.name for f in kb.families] == expected
    result = kb(random_interp(3, 1), OPS["product"])
    assert list(result.mean_valuations) == expected


def test_both_selects_by_name() -> None:
    kb = build_kb("both", ["same/2", "sum9/1"])
    assert [f.name for f in kb.families] == ["same/2", "sum9/1"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "triple"}, "valid choices: \\['both', .*'same', .*'sum9'"),
        ({"name": "same", "formulas": [4]}, "valid choices: \\['same/1', 'same/2', 'same/3'\\]"),
        ({"name": "sum9", "formulas": ["same/1"]}, "valid choices"),
        ({"name": "both", "formulas": [1]}, "give names"),
        ({"name": "same", "formulas": []}, "at least one"),
        ({"name": "same", "weights": {5: 1.0}}, "valid choices"),
        ({"name": "same", "weights": {1: 2.0, "1": 3.0}}, "weighs same/1 twice: give it one"),
        ({"name": "same", "weights": {"same/2": 2.0, 2: 3.0}}, "weighs same/2 twice"),
        ({"name": "same", "scale": "median"}, "valid choices: \\['mean', 'sum'\\]"),
    ],
)
def test_bad_choices_raise(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_kb(**kwargs)


def test_missing_predicate_raises() -> None:
    interp = random_interp(3, 2)
    del interp["sum9"]
    with pytest.raises(ValueError, match="lacks \\['sum9'\\]"):
        build_kb("sum9")(interp, OPS["product"])


@settings(max_examples=10, deadline=None)
@given(
    w=st.lists(st.floats(0.0, 5.0), min_size=3, max_size=3),
    seed=st.integers(0, 2**16),
)
def test_weights_and_scales_follow_eq_lossrl(w: list[float], seed: int) -> None:
    interp, ops = random_interp(4, seed), OPS["product"]
    weights = {1: w[0], "2": w[1], "same/3": w[2]}
    vals = build_kb("same")(interp, ops).formula_valuations
    ws = dict(zip(["same/1", "same/2", "same/3"], w, strict=True))
    mean_loss = build_kb("same", weights=weights)(interp, ops).loss
    sum_loss = build_kb("same", weights=weights, scale="sum")(interp, ops).loss
    want_mean = -sum(ws[n] * v.mean() for n, v in vals.items()) / 3
    want_sum = -sum(ws[n] * v.sum() for n, v in vals.items())
    torch.testing.assert_close(mean_loss, want_mean)
    torch.testing.assert_close(sum_loss, want_sum)
    torch.testing.assert_close(dfl_loss(vals, ws, "sum"), want_sum)


@settings(max_examples=10, deadline=None)
@given(
    chosen=st.lists(st.sampled_from([1, 2, 3]), min_size=1, max_size=3, unique=True),
    factor=st.sampled_from([0.5, 2.0, 4.0]),
    normal=st.lists(st.sampled_from([1.0, 3.0]), min_size=3, max_size=3),
    seed=st.integers(0, 2**16),
)
def test_weights_with_a_factor_are_the_loss_scaled_and_refused_naming_their_one_spelling(
    chosen: list[int], factor: float, normal: list[float], seed: int
) -> None:
    """Weights c * w (w's smallest 1) are c times the loss of w: kb.w_dfl's factor, so only w,
    the weights whose smallest is 1 (a formula not named weighs 1), is their spelling."""
    interp, ops, formulas = random_interp(4, seed), OPS["product"], sorted(chosen)
    normal[formulas[0] - 1] = 1.0  # the smallest weight of the formulas read
    weights = {k: normal[k - 1] for k in formulas if normal[k - 1] != 1} or None
    scaled = {k: factor * normal[k - 1] for k in formulas}
    plain = build_kb("same", formulas, weights=weights)(interp, ops).loss
    torch.testing.assert_close(build_kb("same", formulas, weights=scaled)(interp, ops).loss,
                               factor * plain)  # fmt: skip
    given_formulas = None if len(formulas) == 3 else formulas
    shown = {k: int(w) for k, w in weights.items()} if weights else "null"
    spelling = f"kb.w_dfl={factor * 10:g} kb.weights={shown} spelled another way; write that"
    with pytest.raises(ValueError, match=re.escape(spelling) + "$"):
        check_one_spelling("same", given_formulas, scaled, FORMULAS["same"], 10.0)
    check_one_spelling("same", given_formulas, weights, FORMULAS["same"], 10.0)
    check_one_spelling("same", given_formulas, scaled, FORMULAS["same"], 0.0)  # no DFL loss


def test_weights_of_unselected_families_are_ignored() -> None:
    interp, ops = random_interp(3, 3), OPS["product"]
    alone = build_kb("same", [2])(interp, ops).loss
    weighted = build_kb("same", [2], weights={1: 7.0, 2: 3.0})(interp, ops).loss
    torch.testing.assert_close(weighted, 3 * alone)
    assert not math.isclose(alone.item(), 0.0)


def test_formula_subsets_keep_the_full_divisor() -> None:
    """A left-out formula weighs 0 (the paper's code: dds/dsd/ss = 0 in A_clause = sum / 3)."""
    interp, ops = random_interp(4, 5), OPS["yager"]
    vals = build_kb("same")(interp, ops).mean_valuations
    for subset in ([1], [2, 3], [1, 3]):
        want = -sum(vals[f"same/{k}"] for k in subset) / 3
        torch.testing.assert_close(build_kb("same", subset)(interp, ops).loss, want)


def test_both_adds_the_two_knowledge_bases() -> None:
    """`both` = the same KB's loss + the sum9 KB's loss, each a mean over its own families."""
    interp, ops = random_interp(4, 6), OPS["product"]
    both = build_kb("both")(interp, ops).loss
    parts = build_kb("same")(interp, ops).loss + build_kb("sum9")(interp, ops).loss
    torch.testing.assert_close(both, parts)
    vals = build_kb("both")(interp, ops).mean_valuations
    assert not torch.isclose(both, -sum(vals.values()) / 5)


def _scope_losses(ops: OperatorSet, seed: int) -> tuple[torch.Tensor, ...]:
    interp = random_interp(5, seed)
    losses = [build_kb("same", scope=scope)(interp, ops).loss for scope in ("family", "formula")]
    grads = [torch.autograd.grad(loss, interp["digit"])[0] for loss in losses]
    return (*losses, *grads)


@pytest.mark.parametrize("seed", [0, 1])
def test_scopes_agree_for_the_mean_of_logs(seed: int) -> None:
    """log-product with reduction mean: the mean over digits of means = the mean over all."""
    family, formula, g_family, g_formula = _scope_losses(OPS["yager"], seed)
    torch.testing.assert_close(family, formula)
    torch.testing.assert_close(g_family, g_formula)


@pytest.mark.parametrize(
    "forall",
    [
        "minimum",
        "lukasiewicz",
        "rmse",
        "nilpotent_minimum",
        "product",
        {"name": "yager", "p": 1.5},
        {"name": "generalized_mean_error", "p": 1.5},
        {"name": "log_product", "reduction": "sum"},
    ],
)
def test_scopes_differ_for_other_aggregators(forall: str | dict) -> None:
    """One aggregation over 10 b^2 instances is not the mean of ten over b^2 each (Section 9.2)."""
    ops = ops_set("yager", "yager", "reichenbach", forall, "generalized_mean")
    family, formula, g_family, g_formula = _scope_losses(ops, 3)
    assert not torch.allclose(family, formula) or not torch.allclose(g_family, g_formula)


def test_family_scope_needs_an_outer_universal_quantifier() -> None:
    fam = Family("e/1", Exists((x,), digit[d](x)), each=d)
    assert KnowledgeBase([fam], scope="formula").compiled[0].size == 10
    with pytest.raises(ValueError, match="use scope 'formula'"):
        KnowledgeBase([fam], scope="family")
    with pytest.raises(ValueError, match="valid choices: \\['family', 'formula'\\]"):
        build_kb("same", scope="digit")


def test_valuations_are_family_means_of_formula_valuations() -> None:
    result = build_kb("both")(random_interp(4, 4), OPS["lukasiewicz"])
    for name, v in result.formula_valuations.items():
        torch.testing.assert_close(result.mean_valuations[name], v.mean())
    assert result.metrics is None


@st.composite
def index_expressions(draw) -> tuple[IndexExpr, int]:
    """scale * d + offset over d < size whose columns all lie in [0, columns): drawn valid, so
    no example is rejected (a filter that rejects most draws trips hypothesis's health check)."""
    size, scale = draw(st.integers(1, 6)), draw(st.integers(-3, 3))
    lowest = max(0, -scale * (size - 1))  # the offset that puts the smallest column at 0
    expr = IndexExpr(Index("i", size), scale, draw(st.integers(lowest, lowest + 12)))
    return expr, max(expr.columns()) + 1 + draw(st.integers(0, 3))


@settings(max_examples=30, deadline=None)
@given(case=index_expressions())
def test_index_expressions_select_their_columns(case) -> None:
    """digit[scale * d + offset] reads the columns scale * i + offset, i < size (e.g. 9 - d)."""
    expr, columns = case
    cols = expr.columns()
    assert all(0 <= c < columns for c in cols)
    t = torch.arange(2.0 * columns).reshape(2, columns)
    assert torch.equal(_select_columns(t, expr), t[:, cols])


def test_sibling_folds_may_reuse_an_index() -> None:
    """forall x: OR_d d(x) | OR_d d(x), each fold a left fold of S over the ten digits."""
    fam = Family("twice", Forall((x,), OrOver(d, digit[d](x)) | OrOver(d, digit[d](x))))
    ops, p = OPS["product"], random_interp(3, 6)["digit"]
    acc = p[:, 0]
    for k in range(1, 10):
        acc = ops.tconorm(acc, p[:, k])
    want = ops.forall(ops.tconorm(acc, acc), dim=0)
    got = KnowledgeBase([fam])({"digit": p}, ops).formula_valuations["twice"]
    torch.testing.assert_close(got, want.reshape(1))


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"weights": [float("nan")]}, "kb.weights must map formulas to weights"),
        ({"weights": {1: float("nan")}}, "kb.weights: the weight of same/1 must be"),
        ({"weights": {1: True}}, "kb.weights: the weight of same/1 must be"),
        ({"weights": {1: -1.0}}, "kb.weights: the weight of same/1 must be"),
        ({"formulas": 5}, "kb.formulas must be a list of formulas"),
    ],
)
def test_a_knowledge_bases_options_of_another_shape_are_one_error_naming_the_key(options, said):
    """`kb.weights=[nan]` was an AttributeError traceback; a NaN weight trained a NaN loss."""
    with pytest.raises(ValueError, match=said):
        build_kb("same", **options)

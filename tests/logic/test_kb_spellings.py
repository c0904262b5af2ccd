"""One DFL loss, one spelling (kb_formulas): `kb.scale=sum` is `kb.scale=mean` at another
`kb.w_dfl` and `kb.weights` (check_scale), a formula weighed 0 is that formula left out
(check_no_zero), a `kb.w_dfl` that float32 rounds to 0 weighs no DFL loss, and one float32 rounds
as a shorter decimal is that decimal (check_w_dfl); each law checked on the losses
`logic.build_kb` computes."""

from __future__ import annotations

import ast
import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from dfl_bench.kb_formulas import (
    FLOAT32_ZERO,
    FORMULAS,
    SIZES,
    check_one_spelling,
    check_scale,
    check_w_dfl,
    float32_shortest,
    spelled,
)
from dfl_bench.logic import KBS, build_kb
from dfl_bench.operators import KINDS, OperatorSet
from dfl_bench.tasks.values import check_kb_options

OPS = [
    OperatorSet.from_config({k: {"name": n} for k, n in zip(KINDS, names, strict=True)})
    for names in (
        ("product", "product", "reichenbach", "log_product", "probabilistic_sum"),
        ("godel", "godel", "goguen", "minimum", "maximum"),
        ("lukasiewicz", "lukasiewicz", "lukasiewicz", "rmse", "bounded_sum"),
        ("nilpotent_minimum", "nilpotent_maximum", "fodor", "yager", "generalized_mean"),
    )
]


def interpretation(seed: int, extreme: bool = False) -> dict[str, torch.Tensor]:
    """Truth values of 5 images (with `extreme`, digits near 0 and 1 and crisp pairs)."""
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(5, 10, generator=g) * (40.0 if extreme else 3.0)
    interp = {
        "digit": torch.softmax(logits, -1),
        "same": torch.rand(5, 5, generator=g),
        "sum9": torch.rand(5, 5, generator=g),
    }
    if extreme:
        interp["same"][0, 1], interp["sum9"][1, 2] = 0.0, 1.0
    return {k: v.requires_grad_() for k, v in interp.items()}


def loss_and_gradients(kb: str, seed: int, ops: OperatorSet, extreme: bool = False, **options):
    """The DFL loss of `kb` with `options` and its gradient on each truth value."""
    interp = interpretation(seed, extreme)
    loss = build_kb(kb, **options)(interp, ops).loss
    return loss.detach(), torch.autograd.grad(loss, list(interp.values()), allow_unused=True)


def test_the_sizes_the_scale_check_reads_are_the_registered_knowledge_bases():
    for name, formulas in FORMULAS.items():
        spec = KBS[name]
        for family in spec.families:
            assert SIZES[family.name] == (family.size, spec.divisors[family.name])
        assert formulas == tuple(f.name for f in spec.families)


SUBSETS = {
    "same": [None, [1], [3], [1, 2], [2, 3]],
    "sum9": [None, [1]],
    "both": [None, ["same/1", "same/3"], ["sum9/1", "sum9/2"], ["same/2", "sum9/1"]],
}
SAID_AT_MEAN = re.compile(
    r"kb.scale=sum is kb.w_dfl=(\S+)(?: kb.weights=(\{.*?\}|null))? at kb.scale=mean "
    r"\(scope (family|formula): .*\); write that"
)


def at_mean(kb: str, sum_options: dict) -> dict:
    """The options at kb.scale=mean that check_scale's refusal of `sum_options` (at sum) names,
    each checked as a job and a record check it (tasks/values.check_kb_options)."""
    with pytest.raises(ValueError) as refused:
        check_scale(kb, {**sum_options, "scale": "sum"})
    found = SAID_AT_MEAN.fullmatch(str(refused.value))
    assert found, str(refused.value)
    weights = None if found.group(2) in (None, "null") else ast.literal_eval(found.group(2))
    named = {**sum_options, "scale": "mean", "w_dfl": float(found.group(1)), "weights": weights}
    check_kb_options({"name": kb, **named})
    return named


def assert_same_loss(kb: str, seed: int, ops: OperatorSet, sum_options: dict) -> None:
    """w_dfl times the loss at sum and its gradients are those at the spelling at mean that
    check_scale names (`at_mean`), to float rounding."""
    mean_options = at_mean(kb, sum_options)
    weighed = {}
    for options in ({**sum_options, "scale": "sum"}, mean_options):
        built = {k: v for k, v in options.items() if k != "w_dfl"}
        loss, grads = loss_and_gradients(kb, seed, ops, **built)
        weighed[options["scale"]] = (loss * options["w_dfl"], grads, options["w_dfl"])
    (loss_sum, grads_sum, w_sum), (loss_mean, grads_mean, w_mean) = weighed.values()
    torch.testing.assert_close(loss_sum, loss_mean, rtol=1e-5, atol=1e-5)
    for g_sum, g_mean in zip(grads_sum, grads_mean, strict=True):
        assert (g_sum is None) == (g_mean is None)
        if g_sum is not None:
            torch.testing.assert_close(g_sum * w_sum, g_mean * w_mean, rtol=1e-5, atol=1e-5)


def selected(kb: str, formulas: list | None) -> list[str]:
    """The names of the formulas of `kb` that `formulas` (numbers or names; None: all) selects."""
    if formulas is None:
        return list(FORMULAS[kb])
    return [key if isinstance(key, str) else f"{kb}/{key}" for key in formulas]


@pytest.mark.parametrize(
    ("kb", "formulas", "refused"),
    [("sum9", None, True), ("sum9", [1], True), ("same", [3], True),
     ("both", ["same/3", "sum9/1", "sum9/2"], True), ("same", None, False),
     ("same", [2, 3], False), ("both", ["same/1", "sum9/1"], False)],
)  # fmt: skip
def test_scope_formula_is_refused_where_each_selected_family_is_one_formula(kb, formulas, refused):
    """Each family of one formula is the same loss at either scope (SIZES)."""
    assert refused == all(SIZES[name][0] == 1 for name in selected(kb, formulas))
    options = {"name": kb, "formulas": formulas, "scope": "formula", "w_dfl": 10.0}
    if refused:
        with pytest.raises(ValueError, match=r"each at either scope\): write kb.scope=family$"):
            check_kb_options(options)
    else:
        check_kb_options(options)
    check_kb_options({**options, "scope": "family"})


@settings(max_examples=40, deadline=None)
@given(
    kb=st.sampled_from(sorted(SUBSETS)),
    pick=st.integers(0, 4),
    scope=st.sampled_from(["family", "formula"]),
    weight=st.sampled_from([None, 2.5, 7.0, 1.5]),
    w_dfl=st.sampled_from([10.0, 1.0, 0.1, 3.3]),
    seed=st.integers(0, 2**16),
    ops=st.sampled_from(range(len(OPS))),
)
def test_scale_sum_is_refused_naming_the_spelling_at_mean_it_equals(
    kb: str, pick: int, scope: str, weight: float | None, w_dfl: float, seed: int, ops: int
) -> None:
    """Every kb.scale=sum with a DFL loss is refused naming kb.w_dfl and kb.weights at mean,
    a spelling that is taken, whose loss and gradients are those at sum to float rounding."""
    formulas = SUBSETS[kb][pick % len(SUBSETS[kb])]
    chosen = formulas or [spelled(kb, name) for name in FORMULAS[kb]]
    weights = {chosen[-1]: weight} if weight and len(chosen) > 1 else None
    options = {"formulas": formulas, "scope": scope, "weights": weights, "w_dfl": w_dfl}
    if scope == "formula" and all(SIZES[name][0] == 1 for name in selected(kb, formulas)):
        with pytest.raises(ValueError, match=r"^kb.scope=formula is kb.scope=family for "):
            check_kb_options({"name": kb, **options, "scale": "mean"})
        options["scope"] = "family"  # the same loss (kb_formulas.check_scope)
    check_kb_options({"name": kb, **options, "scale": "mean"})  # a spelling at sum taken but for it
    assert_same_loss(kb, seed, OPS[ops], options)


@pytest.mark.parametrize(
    ("kb", "options", "said"),
    [
        ("both", {}, "kb.w_dfl=20 kb.weights={'same/1': 1.5, 'same/2': 1.5, 'same/3': 1.5} at "
         "kb.scale=mean (scope family: same/1, same/2, same/3: 3 families; sum9/1, sum9/2: 2 "
         "families)"),
        ("same", {"scope": "formula"}, "kb.w_dfl=30 kb.weights={1: 10, 2: 10} at kb.scale=mean "
         "(scope formula: same/1, same/2: 3 families of 10 formulas; same/3: 3 families)"),
        ("sum9", {"formulas": [1]}, "kb.w_dfl=20 at kb.scale=mean (scope family: 2 families)"),
        ("both", {"scope": "formula", "formulas": ["same/1", "same/3", "sum9/2"],
                  "weights": {"same/3": 7}},
         "kb.w_dfl=20 kb.weights={'same/1': 15, 'same/3': 10.5} at kb.scale=mean (scope formula: "
         "same/1: 3 families of 10 formulas; same/3: 3 families; sum9/2: 2 families)"),
        ("both", {"weights": {"sum9/1": 1.5, "sum9/2": 1.5}}, "kb.w_dfl=30 kb.weights=null at "
         "kb.scale=mean (scope family: same/1, same/2, same/3: 3 families; sum9/1, sum9/2: 2 "
         "families)"),
        ("same", {"weights": {1: 2.5}, "w_dfl": 0.1},
         "kb.w_dfl=0.3 kb.weights={1: 2.5} at kb.scale=mean (scope family: 3 families)"),
        ("same", {}, "kb.w_dfl=30 at kb.scale=mean (scope family: 3 families)"),
        ("same", {"scope": "formula", "formulas": [1, 2]},
         "kb.w_dfl=300 at kb.scale=mean (scope formula: 3 families of 10 formulas)"),
    ],
)  # fmt: skip
def test_scale_sum_names_the_weights_it_is_at_mean(kb, options, said):
    """The probe's cases (`both`, `same` at scope formula), a subset, user weights: the same
    loss and gradients at the spelling named, which is taken (`assert_same_loss`)."""
    options = {"w_dfl": 10.0, **options}
    with pytest.raises(ValueError) as refused:
        check_scale(kb, {"scale": "sum", **options})
    assert str(refused.value) == f"kb.scale=sum is {said}; write that"
    assert_same_loss(kb, 0, OPS[0], options)


def test_scale_sum_whose_spelling_at_mean_float32_loses_names_none():
    with pytest.raises(ValueError) as refused:
        check_scale("same", {"scale": "sum", "w_dfl": 2e38})
    assert str(refused.value) == (
        "kb.scale=sum is kb.w_dfl=6e+38 at kb.scale=mean, where float32 rounds 6e+38 to inf: "
        "write a smaller kb.w_dfl, or weights nearer each other"
    )
    check_w_dfl(2e38)  # taken at mean


@pytest.mark.parametrize("options", [{"scale": "mean"}, {"w_dfl": 0.0}])  # w_dfl 0: check_idle's
def test_scale_mean_or_no_dfl_loss_passes(options):
    check_scale("both", {"scale": "sum", "w_dfl": 10.0, **options})


@settings(max_examples=20, deadline=None)
@given(
    zero=st.lists(st.sampled_from([1, 2, 3]), min_size=1, max_size=2, unique=True),
    other=st.sampled_from([None, 2.5]),
    seed=st.integers(0, 2**16),
    ops=st.sampled_from(range(len(OPS))),
    extreme=st.booleans(),
)
def test_a_formula_weighed_0_is_that_formula_left_out(zero, other, seed, ops, extreme):
    """The same gradient, bit for bit (so the same network); the loss to float rounding (its
    sum has one term fewer); refused naming kb.formulas without it."""
    kept = [k for k in (1, 2, 3) if k not in zero]
    extra = {kept[-1]: other} if other else {}
    weights = {**dict.fromkeys(zero, 0), **extra}
    weighed = loss_and_gradients("same", seed, OPS[ops], extreme, weights=weights)
    left_out = loss_and_gradients("same", seed, OPS[ops], extreme, formulas=kept, weights=extra)
    torch.testing.assert_close(weighed[0], left_out[0], rtol=1e-6, atol=0)
    truths = interpretation(seed).values()
    for g_zero, g_left, x in zip(weighed[1], left_out[1], truths, strict=True):
        zeros = torch.zeros_like(x)  # a truth value no formula read reads
        assert torch.equal(zeros if g_zero is None else g_zero, zeros if g_left is None else g_left)
    shown = f" kb.weights={{{kept[-1]}: 2.5}}" if other and len(kept) > 1 else ""
    shown = " kb.w_dfl=25 kb.weights=null" if other and len(kept) == 1 else shown
    with pytest.raises(ValueError) as refused:
        check_one_spelling("same", None, weights, FORMULAS["same"], 10.0)
    assert str(refused.value) == f"kb.weights={weights} is kb.formulas={kept}{shown}; write that"


@pytest.mark.parametrize(
    ("kb", "formulas", "weights", "said"),
    [
        ("same", None, {1: 0}, "kb.weights={1: 0} is kb.formulas=[2, 3]; write that"),
        ("same", None, {1: 0, 2: 2, 3: 2},
         "kb.weights={1: 0, 2: 2, 3: 2} is kb.formulas=[2, 3] kb.w_dfl=20 kb.weights=null; "
         "write that"),
        ("same", [1, 3], {1: 0, 3: 3},
         "kb.weights={1: 0, 3: 3} is kb.formulas=[3] kb.w_dfl=30 kb.weights=null; write that"),
        ("both", None, {"sum9/1": 0},
         "kb.weights={'sum9/1': 0} is kb.formulas=['same/1', 'same/2', 'same/3', 'sum9/2']; "
         "write that"),
        # every weight 0 is kb.w_dfl=0: check_no_factor's line
        ("same", [2], {2: 0},
         "kb.weights={2: 0} is kb.w_dfl=0 kb.weights=null spelled another way; write that"),
    ],
)  # fmt: skip
def test_a_weight_of_0_names_the_spelling_to_write(kb, formulas, weights, said):
    with pytest.raises(ValueError) as refused:
        check_one_spelling(kb, formulas, weights, FORMULAS[kb], 10.0)
    assert str(refused.value) == said


def test_a_weight_of_0_without_a_dfl_loss_is_left_to_the_idle_check():
    check_one_spelling("same", None, {1: 0}, FORMULAS["same"], 0.0)  # composed.check_idle's


@settings(max_examples=200, deadline=None)
@given(
    w=st.one_of(
        st.floats(0.0, 1e-40),
        st.floats(FLOAT32_ZERO / 2, FLOAT32_ZERO * 2),
        st.sampled_from([FLOAT32_ZERO, 2.0**-149, 1e-50, 1e-320, 5e-324, 1e-45, 0.0, 10.0]),
    )
)
def test_a_dfl_weight_is_refused_exactly_where_float32_rounds_it_to_0(w: float) -> None:
    """A run weighs its float32 DFL term by w (tasks/mnist/dfl_run.py: w_dfl * dfl)."""
    dfl = torch.tensor(-3.0, requires_grad=True)
    weighed = w * dfl
    weighed.backward()
    nothing = w != 0 and weighed.item() == 0 and dfl.grad.item() == 0
    assert nothing == (w != 0 and torch.tensor(w, dtype=torch.float32).item() == 0)
    said = rf"^kb.w_dfl={re.escape(repr(w))} is 0 in float32: write kb.w_dfl=0 .* at least 1e-45$"
    if not nothing:
        check_w_dfl(float32_shortest(w))  # w itself may be another spelling of it
        return
    with pytest.raises(ValueError, match=said):
        check_w_dfl(w)
    check_w_dfl(1e-45)  # the least weight the refusal names


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.floats(3.4e38, 3.41e38), st.sampled_from([3.4028235e38, 3.4028236e38, 1e39])))
def test_a_dfl_weight_is_refused_exactly_where_float32_rounds_it_to_inf(w: float) -> None:
    """A run's float32 DFL term times w is inf where float32 rounds w to inf."""
    weighed = (w * torch.tensor(1.0)).item()
    if weighed != float("inf"):
        check_w_dfl(float32_shortest(w))  # w itself may be another spelling of it
        return
    with pytest.raises(ValueError, match=rf"^kb.w_dfl={re.escape(repr(w))} is inf in float32$"):
        check_w_dfl(w)


@settings(max_examples=300, deadline=None)
@given(
    w=st.one_of(
        st.floats(1e-45, 3.4e38),
        st.floats(0.01, 100.0),
        st.sampled_from([10.0000001, 10.000001, 0.1, 0.3, 1.5, 10, 16777217, 1 / 3, 2.0**-149]),
    ),
    seed=st.integers(0, 2**16),
)
def test_a_dfl_weight_is_refused_where_float32_rounds_it_as_a_shorter_one(w: float, seed: int):
    """A run weighs its float32 DFL term by w (tasks/mnist/dfl_run.py: w_dfl * dfl), that is
    by float32(w): two weights float32 rounds alike train one network, so only float32's
    shortest spelling (numpy's repr of the float32) is taken, and the refusal names it."""
    shortest = float32_shortest(w)
    assert shortest == float(str(np.float32(w)))
    dfl = torch.randn(7, generator=torch.Generator().manual_seed(seed))
    assert torch.equal(w * dfl, shortest * dfl)
    check_w_dfl(shortest)
    if shortest == w:
        check_w_dfl(w)
        return
    with pytest.raises(ValueError) as refused:
        check_w_dfl(w)
    assert str(refused.value) == (
        f"kb.w_dfl={w!r} is {shortest!r} in float32: write kb.w_dfl={shortest!r}"
    )


@pytest.mark.parametrize(
    ("key", "weight", "said"),
    [
        (1, 2.50000001, "kb.weights: same/1's weight 2.50000001 is 2.5 in float32: write 2.5"),
        (1, 7 / 3, "kb.weights: same/1's weight 2.3333333333333335 is 2.3333333 in float32: "
         "write 2.3333333"),
        (2, 1.00000001, "kb.weights: same/2's weight 1.00000001 is 1.0 in float32: leave it "
         "out (1 is every formula's)"),
    ],
)  # fmt: skip
def test_a_weight_is_refused_where_float32_rounds_it_as_a_shorter_one(key, weight, said):
    """Refused naming float32's shortest spelling of the weight, which is taken."""
    with pytest.raises(ValueError) as refused:
        check_one_spelling("same", None, {key: weight}, FORMULAS["same"], 10.0)
    assert str(refused.value) == said
    named = float32_shortest(weight)
    check_one_spelling("same", None, {key: named} if named != 1 else None, FORMULAS["same"], 10.0)


@pytest.mark.parametrize(
    ("weights", "w_dfl", "said"),
    [
        ({1: 3, 2: 3, 3: 7}, 10.0, "kb.weights={1: 3, 2: 3, 3: 7} is kb.w_dfl=30 kb.weights="
         "{3: 2.3333333} spelled another way; write that"),
        ({1: 3, 2: 3, 3: 3.5}, 0.1, "kb.weights={1: 3, 2: 3, 3: 3.5} is kb.w_dfl=0.3 kb.weights="
         "{3: 1.1666666} spelled another way; write that"),
        ({1: 0, 2: 3, 3: 7}, 0.1, "kb.weights={1: 0, 2: 3, 3: 7} is kb.formulas=[2, 3] "
         "kb.w_dfl=0.3 kb.weights={3: 2.3333333}; write that"),
    ],
)  # fmt: skip
def test_a_normal_form_is_named_as_float32_spells_it(weights, w_dfl, said):
    """The weights and w_dfl a refusal names are float32's shortest spellings (7 / 3 is
    2.3333333, 0.1 * 3 is 0.3), which are themselves taken."""
    with pytest.raises(ValueError) as refused:
        check_one_spelling("same", None, weights, FORMULAS["same"], w_dfl)
    assert str(refused.value) == said
    formulas, w_dfl, named = re.search(
        r" is (?:kb.formulas=(\[.*?\]) )?kb.w_dfl=(\S+) kb.weights=(\{.*?\})", said
    ).groups()
    check_w_dfl(float(w_dfl))
    formulas = ast.literal_eval(formulas) if formulas else None
    check_one_spelling("same", formulas, ast.literal_eval(named), FORMULAS["same"], float(w_dfl))


@pytest.mark.parametrize(
    ("weights", "w_dfl", "said"),
    [
        ({1: 1e-50}, 10.0, "kb.weights: same/1's weight 1e-50 (times kb.w_dfl=10.0) is 0 in "
         "float32: leave it out of kb.formulas"),
        ({1: 1e-5}, 1e-41, "kb.weights: same/1's weight 1e-05 (times kb.w_dfl=1e-41) is 0 in "
         "float32: leave it out of kb.formulas"),
        ({1: 1e30}, 1e10, "kb.weights: same/1's weight 1e+30 (times kb.w_dfl=10000000000.0) is "
         "inf in float32: weigh it less"),
        ({1: 1e-40}, 10.0, "kb.weights={1: 1e-40} is kb.w_dfl=1e-39 kb.weights={2: 1e+40, 3: "
         "1e+40}, where float32 rounds 1e+40 to inf: weigh the formulas within float32's range "
         "of each other"),
    ],
)  # fmt: skip
def test_a_weight_float32_loses_is_refused_naming_no_refused_spelling(weights, w_dfl, said):
    """A weight float32 loses is refused naming no spelling check_w_dfl refuses (kb.w_dfl=1e-49
    for {1: 1e-50})."""
    with pytest.raises(ValueError) as refused:
        check_one_spelling("same", None, weights, FORMULAS["same"], w_dfl)
    assert str(refused.value) == said
    check_one_spelling("same", [2, 3], None, FORMULAS["same"], w_dfl)

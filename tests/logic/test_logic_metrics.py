"""Section 9.1's gradient measures and the paper's worked example (Example "reallogic")."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dfl_bench.logic import Family, Forall, KnowledgeBase, Predicate, Var, build_kb
from dfl_bench.logic.compiler import compile_family
from dfl_bench.logic.kb_registry import KBS
from dfl_bench.logic.metrics import MAGNITUDES, RATIOS, data_truths
from dfl_bench.operators import OperatorSet

DTYPE = torch.float64
x, y = Var("x"), Var("y")
P, Q, R = Predicate("p", 1), Predicate("q", 1), Predicate("r", 2)
IMP = KnowledgeBase([Family("imp", Forall((x,), P(x) >> Q(x)))])


def ops_set(
    implication: dict | str, forall: dict | str = "log_product", tnorm: dict | str = "product"
):
    cfg = {"tnorm": tnorm, "implication": implication, "forall": forall}
    cfg = {k: v if isinstance(v, dict) else {"name": v} for k, v in cfg.items()}
    return OperatorSet.from_config(
        {**cfg, "tconorm": {"name": "product"}, "exists": {"name": "probabilistic_sum"}}
    )


def tensors(**values: list) -> dict[str, torch.Tensor]:
    return {k: torch.tensor(v, dtype=DTYPE, requires_grad=True) for k, v in values.items()}


def crisp(**values: list) -> dict[str, torch.Tensor]:
    return {k: torch.tensor(v, dtype=DTYPE) for k, v in values.items()}


A3, C3 = [0.9, 0.3, 0.6], [0.2, 0.8, 0.5]
LP3, LQ3 = [1.0, 0.0, 1.0], [0.0, 1.0, 1.0]


def expected(cons: list[float], ant: list[float], l_cons: list[float], l_not_ant: list[float]):
    """The measures from per-instance derivatives and data truths (Section 9.1 definitions)."""
    m = {
        "cons_magnitude": sum(cons),
        "ant_magnitude": sum(ant),
        "cu_cons_magnitude": sum(lc * g for lc, g in zip(l_cons, cons, strict=True)),
        "cu_ant_magnitude": sum(la * g for la, g in zip(l_not_ant, ant, strict=True)),
    }
    m["cons_ratio"] = m["cons_magnitude"] / (m["cons_magnitude"] + m["ant_magnitude"])
    m["cu_cons"] = m["cu_cons_magnitude"] / m["cons_magnitude"]
    m["cu_ant"] = m["cu_ant_magnitude"] / m["ant_magnitude"]
    return m


def assert_metrics(got: dict[str, float], want: dict[str, float]) -> None:
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-9, abs=1e-12), k


@pytest.mark.parametrize(("reduction", "n"), [("sum", 1), ("mean", 3)])
def test_reichenbach_log_product_hand_computed(reduction: str, n: int) -> None:
    """d/dc = a / I / n and d/d(1 - a) = (1 - c) / I / n, I = 1 - a + a c."""
    ops = ops_set("reichenbach", {"name": "log_product", "reduction": reduction})
    result = IMP(tensors(p=A3, q=C3), ops, labels=crisp(p=LP3, q=LQ3))
    imp = [1 - a + a * c for a, c in zip(A3, C3, strict=True)]
    cons = [a / i / n for a, i in zip(A3, imp, strict=True)]
    ant = [(1 - c) / i / n for c, i in zip(C3, imp, strict=True)]
    want = expected(cons, ant, LQ3, [1 - lp for lp in LP3])
    assert_metrics(result.metrics, want)
    assert_metrics(result.metrics, {f"imp/{k}": v for k, v in want.items()})


def test_compound_antecedent_and_broadcast_consequent_hand_computed() -> None:
    """forall x, y: p(x) & q(y) -> r(x, y) and forall x, y: r(x, y) -> q(y), on 3 objects."""
    kb = KnowledgeBase(
        [
            Family("pq_r", Forall((x, y), (P(x) & Q(y)) >> R(x, y))),
            Family("r_q", Forall((x, y), R(x, y) >> Q(y))),
        ]
    )
    r = [[0.7, 0.1, 0.4], [0.2, 0.9, 0.3], [0.5, 0.6, 0.05]]
    lr = [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]]
    ops = ops_set("reichenbach", {"name": "log_product", "reduction": "sum"})
    result = kb(tensors(p=A3, q=C3, r=r), ops, labels=crisp(p=LP3, q=LQ3, r=lr))
    pairs = [(i, j) for i in range(3) for j in range(3)]
    a1 = [A3[i] * C3[j] for i, j in pairs]
    c1 = [r[i][j] for i, j in pairs]
    a2, c2 = c1, [C3[j] for _, j in pairs]
    want = {}
    for name, a, c, l_c, l_na in [
        ("pq_r", a1, c1, [lr[i][j] for i, j in pairs], [1 - LP3[i] * LQ3[j] for i, j in pairs]),
        ("r_q", a2, c2, [LQ3[j] for _, j in pairs], [1 - lr[i][j] for i, j in pairs]),
    ]:
        imp = [1 - ai + ai * ci for ai, ci in zip(a, c, strict=True)]
        cons = [ai / ii for ai, ii in zip(a, imp, strict=True)]
        ant = [(1 - ci) / ii for ci, ii in zip(c, imp, strict=True)]
        want[name] = expected(cons, ant, l_c, l_na)
        assert_metrics(result.metrics, {f"{name}/{k}": v for k, v in want[name].items()})
    totals = {k: want["pq_r"][k] + want["r_q"][k] for k in MAGNITUDES}
    assert_metrics(result.metrics, totals)


def test_paper_worked_example_valuation_and_derivatives() -> None:
    """Example "reallogic": val = 0.612 and the printed derivatives, which are d val / d atom
    (the paper labels them d L_DFL / d atom = -d val / d atom: the signs are flipped there)."""
    chair, cushion, arm = (Predicate(k, 1) for k in ("chair", "cushion", "armRest"))
    part_of = Predicate("partOf", 2)
    formula = Forall((x, y), (chair(x) & part_of(y, x)) >> (cushion(y) | arm(y)))
    kb = KnowledgeBase([Family("chairs", formula)], scale="sum")
    interp = tensors(
        chair=[0.9, 0.4],
        cushion=[0.05, 0.5],
        armRest=[0.05, 0.1],
        partOf=[[0.001, 0.01], [0.95, 0.001]],
    )
    result = kb(interp, ops_set("reichenbach", "product"))
    assert result.formula_valuations["chairs"].item() == pytest.approx(0.612, abs=5e-4)
    grads = dict(zip(interp, torch.autograd.grad(-result.loss, list(interp.values())), strict=True))
    printed = {
        "chair": [-0.4261, -0.0058],
        "cushion": [0.0029, 0.7662],
        "armRest": [0.0029, 0.4257],
        "partOf": [[-0.4978, -0.2219], [-0.4031, -0.1103]],
    }
    for k, v in printed.items():
        torch.testing.assert_close(grads[k], torch.tensor(v, dtype=DTYPE), atol=5e-5, rtol=0)


def random_same(b: int, seed: int) -> tuple[dict, dict]:
    g = torch.Generator().manual_seed(seed)
    y_true = torch.randint(0, 10, (b,), generator=g)
    interp = {
        "digit": torch.softmax(2 * torch.randn(b, 10, generator=g, dtype=DTYPE), -1),
        "same": 0.02 + 0.96 * torch.rand(b, b, generator=g, dtype=DTYPE),
        "sum9": 0.02 + 0.96 * torch.rand(b, b, generator=g, dtype=DTYPE),
    }
    labels = {
        "digit": torch.nn.functional.one_hot(y_true, 10).to(DTYPE),
        "same": (y_true[:, None] == y_true[None]).to(DTYPE),
        "sum9": (y_true[:, None] + y_true[None] == 9).to(DTYPE),
    }
    return {k: v.requires_grad_() for k, v in interp.items()}, labels


FORALLS = [
    {"name": "log_product", "reduction": "sum"},
    {"name": "log_product", "reduction": "mean"},
    {"name": "rmse"},
    {"name": "generalized_mean_error", "p": 1.5},
    {"name": "product"},
]


@settings(max_examples=15, deadline=None)
@given(
    forall=st.sampled_from(FORALLS),
    tnorm=st.sampled_from(["product", "godel", "yager"]),
    b=st.integers(2, 5),
    seed=st.integers(0, 2**16),
)
def test_lukasiewicz_implication_has_cons_ratio_one_half(forall, tnorm, b, seed) -> None:
    interp, labels = random_same(b, seed)
    metrics = build_kb("both")(interp, ops_set("lukasiewicz", forall, tnorm), labels).metrics
    assert metrics["cons_magnitude"] > 0
    assert metrics["cons_ratio"] == pytest.approx(0.5, rel=1e-12)
    for fam in ("same/1", "same/2", "same/3", "sum9/2"):
        assert math.isnan(metrics[f"{fam}/cons_ratio"]) or metrics[
            f"{fam}/cons_ratio"
        ] == pytest.approx(0.5, rel=1e-12)


@settings(max_examples=10, deadline=None)
@given(forall=st.sampled_from(FORALLS), b=st.integers(2, 5), seed=st.integers(0, 2**16))
def test_godel_implication_never_updates_the_antecedent(forall, b, seed) -> None:
    interp, labels = random_same(b, seed)
    metrics = build_kb("both")(interp, ops_set("godel", forall), labels).metrics
    assert metrics["ant_magnitude"] == 0.0
    assert metrics["cu_ant_magnitude"] == 0.0
    assert metrics["cons_ratio"] == 1.0
    assert math.isnan(metrics["cu_ant"])


R_IMPLICATIONS = ["godel", "goguen", "lukasiewicz", "fodor", "yager_r", "weber"]


@settings(max_examples=20, deadline=None)
@given(
    implication=st.sampled_from(R_IMPLICATIONS),
    a=st.lists(st.floats(0.05, 0.95), min_size=2, max_size=8),
    c=st.lists(st.floats(0.05, 0.95), min_size=8, max_size=8),
    labels=st.lists(st.booleans(), min_size=16, max_size=16),
)
def test_r_implications_ignore_instances_with_a_at_most_c(implication, a, c, labels) -> None:
    """With log-product (sum) each instance's derivative is independent of the others, so the
    instances with a <= c can be dropped without changing any magnitude."""
    c = c[: len(a)]
    assume(all(ai != ci for ai, ci in zip(a, c, strict=True)))  # ties: see the test below
    lp, lq = [float(v) for v in labels[: len(a)]], [float(v) for v in labels[8 : 8 + len(a)]]
    ops = ops_set(implication, {"name": "log_product", "reduction": "sum"})
    full = IMP(tensors(p=a, q=c), ops, crisp(p=lp, q=lq)).metrics
    keep = [i for i in range(len(a)) if a[i] > c[i]]
    if not keep:
        assert full["cons_magnitude"] == full["ant_magnitude"] == 0.0
        assert math.isnan(full["cons_ratio"])
        return
    pick = lambda v: [v[i] for i in keep]  # noqa: E731
    part = IMP(tensors(p=pick(a), q=pick(c)), ops, crisp(p=pick(lp), q=pick(lq))).metrics
    for k in MAGNITUDES:
        assert full[k] == pytest.approx(part[k], rel=1e-9, abs=1e-12), k


@pytest.mark.parametrize(
    "implication",
    R_IMPLICATIONS,
)
def test_r_implications_ignore_ties_a_equal_c(implication: str) -> None:
    """same(x, x) -> same(x, x) (the diagonal of same/3) has a = c: no derivative there."""
    ops = ops_set(implication, {"name": "log_product", "reduction": "sum"})
    metrics = IMP(tensors(p=[0.3, 0.7], q=[0.3, 0.7]), ops, crisp(p=[1, 0], q=[1, 0])).metrics
    assert metrics["cons_magnitude"] == metrics["ant_magnitude"] == 0.0


def test_goguen_closed_form() -> None:
    """Goguen with log-product (sum): d/dc = (1/a) / (c/a) = 1/c, -d/da = (c/a^2) / (c/a) = 1/a."""
    a, c = [0.9, 0.3, 0.6, 0.5], [0.2, 0.8, 0.5, 0.5]
    lp, lq = [1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 1.0]
    ops = ops_set("goguen", {"name": "log_product", "reduction": "sum"})
    metrics = IMP(tensors(p=a, q=c), ops, crisp(p=lp, q=lq)).metrics
    fires = [ai > ci for ai, ci in zip(a, c, strict=True)]
    cons = [1 / ci if f else 0.0 for ci, f in zip(c, fires, strict=True)]
    ant = [1 / ai if f else 0.0 for ai, f in zip(a, fires, strict=True)]
    assert_metrics(metrics, expected(cons, ant, lq, [1 - v for v in lp]))


def test_data_truth_of_the_sum9_disjunction_is_classical() -> None:
    _, labels = random_same(6, 3)
    ((not_ant, cons),) = data_truths(compile_family(KBS["sum9"].families[1]), labels)
    torch.testing.assert_close(cons.reshape(6, 6), labels["sum9"])
    torch.testing.assert_close(not_ant.reshape(6, 6), 1 - labels["sum9"])


def test_metrics_do_not_need_every_predicate_to_carry_a_graph() -> None:
    """A constant `same` (no graph) next to a learned `digit` gives the same metrics."""
    interp, labels = random_same(4, 6)
    ops = ops_set("reichenbach")
    want = build_kb("same")(interp, ops, labels).metrics
    constant = {**interp, "same": interp["same"].detach()}
    got = build_kb("same")(constant, ops, labels).metrics
    assert got.keys() == want.keys()
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-12, nan_ok=True), k


def test_formulas_without_implication_do_not_enter() -> None:
    interp, labels = random_same(4, 5)
    metrics = build_kb("sum9")(interp, ops_set("reichenbach"), labels).metrics
    assert not any(k.startswith("sum9/1/") for k in metrics)
    for k in (*MAGNITUDES, *RATIOS):
        assert metrics[k] == metrics[f"sum9/2/{k}"] or math.isnan(metrics[k])


class _Tiny(torch.nn.Module):
    """A stand-in for the digit CNN and the same/sum9 heads."""

    def __init__(self) -> None:
        super().__init__()
        self.digit = torch.nn.Linear(6, 10, dtype=DTYPE)
        self.pair = torch.nn.Bilinear(6, 6, 2, dtype=DTYPE)

    def forward(self, inputs: torch.Tensor) -> dict[str, torch.Tensor]:
        b = inputs.shape[0]
        left = inputs[:, None].expand(b, b, -1)
        right = inputs[None].expand(b, b, -1)
        pair = torch.sigmoid(self.pair(left.reshape(b * b, -1), right.reshape(b * b, -1)))
        pair = pair.reshape(b, b, 2)
        return {
            "digit": torch.softmax(self.digit(inputs), -1),
            "same": pair[..., 0],
            "sum9": pair[..., 1],
        }


@pytest.mark.parametrize("implication", ["reichenbach", "godel", "goguen", "kleene_dienes"])
def test_metrics_leave_the_training_gradient_unchanged(implication: str) -> None:
    torch.manual_seed(0)
    model, inputs = _Tiny(), torch.randn(8, 6, dtype=DTYPE)
    _, labels = random_same(8, 7)
    ops, kb = ops_set(implication), build_kb("both")
    grads = []
    for with_labels in (False, True):
        model.zero_grad(set_to_none=True)
        result = kb(model(inputs), ops, labels if with_labels else None)
        assert (result.metrics is None) != with_labels
        assert all(p.grad is None for p in model.parameters())
        result.loss.backward()
        grads.append([p.grad.clone() for p in model.parameters()])
    for plain, with_metrics in zip(*grads, strict=True):
        assert torch.equal(plain, with_metrics)


def test_metrics_without_grad_mode_match_and_return_no_graph() -> None:
    interp, labels = random_same(5, 9)
    ops, kb = ops_set("reichenbach"), build_kb("same")
    live = kb(interp, ops, labels)
    with torch.no_grad():
        frozen = kb(interp, ops, labels)
    assert not frozen.loss.requires_grad
    assert frozen.loss.item() == live.loss.item()
    assert frozen.metrics == pytest.approx(live.metrics, rel=1e-12)


def _implication_instances(src: dict, tnorm, tconorm) -> dict[str, list[list[tuple]]]:
    """Each implication family of `both`: per formula, every grounding's (antecedent,
    consequent), each computed on its own from scalars (Section 9.2's formulas)."""
    p, s, s9 = src["digit"], src["same"], src["sum9"]
    b = p.shape[0]
    pairs = [(i, j) for i in range(b) for j in range(b)]

    def disjunction(i: int, j: int) -> torch.Tensor:
        acc = tnorm(p[i, 0], p[j, 9])
        for k in range(1, 10):
            acc = tconorm(acc, tnorm(p[i, k], p[j, 9 - k]))
        return acc

    digits = range(10)
    return {
        "same/1": [[(tnorm(p[i, k], p[j, k]), s[i, j]) for i, j in pairs] for k in digits],
        "same/2": [[(tnorm(p[i, k], s[i, j]), p[j, k]) for i, j in pairs] for k in digits],
        "same/3": [[(s[i, j], s[j, i]) for i, j in pairs]],
        "sum9/2": [[(s9[i, j], disjunction(i, j)) for i, j in pairs]],
    }


def loop_metrics(interp: dict, labels: dict, ops: OperatorSet, scope: str) -> dict[str, float]:
    """Section 9.1 by a loop over every grounding: each instance's antecedent and consequent
    become leaves, the formula's valuation is aggregated from them, and autograd gives
    d val / d leaf per instance; the labels' classical truths pick the correct updates."""
    detached = {k: v.detach() for k, v in interp.items()}
    fuzzy = _implication_instances(detached, ops.tnorm, ops.tconorm)
    crisp_ = _implication_instances(labels, torch.minimum, torch.maximum)
    out = {}
    for name, formulas in fuzzy.items():
        leaves = [
            [(a.clone().requires_grad_(), c.clone().requires_grad_()) for a, c in f]
            for f in formulas
        ]
        instances = [torch.stack([ops.implication(a, c) for a, c in f]) for f in leaves]
        if scope == "family":
            valuation = ops.forall(torch.cat(instances), dim=0)
        else:
            valuation = torch.stack([ops.forall(t, dim=0) for t in instances]).sum()
        flat = [t for f in leaves for pair in f for t in pair]
        grads = torch.autograd.grad(valuation, flat, allow_unused=True, materialize_grads=True)
        truths = torch.tensor([[a, c] for f in crisp_[name] for a, c in f], dtype=DTYPE)
        g_ant, g_cons = torch.stack(grads[::2]), torch.stack(grads[1::2])
        m = {
            "cons_magnitude": g_cons.sum().item(),
            "ant_magnitude": -g_ant.sum().item(),
            "cu_cons_magnitude": (truths[:, 1] * g_cons).sum().item(),
            "cu_ant_magnitude": -((1 - truths[:, 0]) * g_ant).sum().item(),
        }
        out.update({f"{name}/{k}": v for k, v in m.items()})
    for k in MAGNITUDES:
        out[k] = sum(out[f"{n}/{k}"] for n in fuzzy)
    return out


@settings(max_examples=8, deadline=None)
@given(
    ops_name=st.sampled_from(["reichenbach_mean", "sigmoidal_gme_yager", "lukasiewicz_rmse"]),
    scope=st.sampled_from(["family", "formula"]),
    b=st.integers(2, 4),
    seed=st.integers(0, 2**16),
)
def test_gradient_metrics_equal_loop_over_groundings(ops_name, scope, b, seed) -> None:
    ops = {
        "reichenbach_mean": ops_set("reichenbach", {"name": "log_product", "reduction": "mean"}),
        "sigmoidal_gme_yager": ops_set(
            {"name": "sigmoidal", "base": "reichenbach", "s": 9.0, "b0": -0.5},
            {"name": "generalized_mean_error", "p": 1.5},
            {"name": "yager", "p": 1.5},
        ),
        "lukasiewicz_rmse": ops_set("lukasiewicz", "rmse", "lukasiewicz"),
    }[ops_name]
    interp, labels = random_same(b, seed)
    got = build_kb("both", scope=scope)(interp, ops, labels).metrics
    want = loop_metrics(interp, labels, ops, scope)
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-9, abs=1e-12), k

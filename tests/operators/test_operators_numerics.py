"""Numerics: finite values and gradients at corners and singular points, dtype preservation,
float32 accuracy against the exact formulas (dfl_bench.operators.numerics)."""

from __future__ import annotations

import math

import pytest
import torch

from dfl_bench.operators import build, choices, spec
from dfl_bench.operators.implications import sigmoidal_rescale
from dfl_bench.operators.numerics import EPS, log_, pnorm2

# 1e-45 and 1e-40 are float32 subnormals: a float32 network output can be one, and its square is 0
CORNERS = [0.0, 1e-45, 1e-40, 1e-30, 1e-7, 0.5, 1 - 1e-7, 1.0]
P_VALUES = [0.5, 1.0, 2.0, 20.0, 200.0]


def variants(kind: str) -> list[tuple[str, dict]]:
    """Every operator of `kind` with its defaults, and with several p where it has one."""
    out = []
    for name in choices(kind):
        out.append((name, {}))
        if "p" in spec(kind, name).params and name not in ("mae", "rmse", "sigmoidal"):
            out += [(name, {"p": p}) for p in P_VALUES]
        if name.startswith("schweizer_sklar"):  # any real p: its negative half too
            out += [(name, {"p": p}) for p in (0.0, -0.5, -2.0, -20.0)]
    if kind == "implication":
        bases = ["reichenbach", "kleene_dienes", "goguen", "yager_r", "yager_s", "lukasiewicz"]
        out += [("sigmoidal", {"base": b, "s": s}) for b in bases for s in (0.01, 9.0, 100.0, 1e3)]
    if kind == "forall":
        out.append(("log_product", {"reduction": "mean"}))
    return out


ELEMENTWISE = [(k, n, kw) for k in ("tnorm", "tconorm", "implication") for n, kw in variants(k)]
AGGREGATORS = [(k, n, kw) for k in ("forall", "exists") for n, kw in variants(k)]


def name_of(case: tuple) -> str:
    return "-".join(str(part) for part in case)


def grads(out: torch.Tensor, *xs: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return torch.autograd.grad(out.sum(), xs, allow_unused=True, materialize_grads=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(("kind", "name", "kw"), ELEMENTWISE, ids=map(name_of, ELEMENTWISE))
def test_elementwise_finite_at_corners(kind: str, name: str, kw: dict, dtype) -> None:
    """Values in [0, 1] and finite gradients on a grid of corners, in the input dtype."""
    grid = torch.tensor(CORNERS, dtype=dtype)
    a, b = (g.clone().requires_grad_() for g in torch.meshgrid(grid, grid, indexing="ij"))
    out = build(kind, name, **kw)(a, b)
    assert out.dtype == dtype and out.shape == a.shape
    assert torch.isfinite(out).all() and (out >= 0).all() and (out <= 1 + 1e-6).all()
    assert all(torch.isfinite(g).all() for g in grads(out, a, b))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(("kind", "name", "kw"), AGGREGATORS, ids=map(name_of, AGGREGATORS))
def test_aggregators_finite_at_corners(kind: str, name: str, kw: dict, dtype) -> None:
    """Aggregators: finite values and gradients at all-equal corners, zeros, ones, tiny values."""
    rows = [[v] * 4 for v in CORNERS] + [
        [0.0, 1.0, 0.5, 1e-7],
        [1.0, 1.0, 1.0, 0.0],
        [0.0] * 3 + [1],
    ]
    x = torch.tensor(rows, dtype=dtype, requires_grad=True)
    out = build(kind, name, **kw)(x, dim=-1)
    assert out.dtype == dtype and out.shape == (len(rows),)
    assert torch.isfinite(out).all()
    assert torch.isfinite(grads(out, x)[0]).all()


def test_singular_gradients_are_the_documented_ones() -> None:
    """p-norms at the origin: the diagonal limit n^(1/p - 1); log at 0: 1/EPS; values exact."""
    one = torch.ones(2, requires_grad=True)
    out = build("tnorm", "yager", p=2.0)(one[0], one[1])
    assert out.item() == 1.0
    torch.testing.assert_close(torch.stack(grads(out, one)), torch.full((1, 2), 2**-0.5))
    zero = torch.zeros(3, requires_grad=True)
    out = build("exists", "generalized_mean", p=2.0)(zero)
    assert out.item() == 0.0
    torch.testing.assert_close(grads(out, zero)[0], torch.full((3,), 1 / 3))
    out = build("forall", "log_product")(zero)
    assert out.item() == pytest.approx(3 * math.log(EPS))
    torch.testing.assert_close(grads(out, zero)[0], torch.full((3,), 1 / EPS))


def test_log_product_of_a_false_implication_is_finite() -> None:
    """The model's probabilities saturate in float32: log A_TP(I_RC(1, 0)) stays finite."""
    a = torch.sigmoid(torch.tensor([40.0, 0.0], requires_grad=True))
    c = torch.sigmoid(torch.tensor([-120.0, 0.0], requires_grad=True))
    assert a[0].item() == 1.0 and c[0].item() == 0.0
    for name in ("reichenbach", "goguen", "kleene_dienes", "yager_r"):
        truth = build("implication", name)(a, c)
        for reduction in ("sum", "mean"):
            value = build("forall", "log_product", reduction=reduction)(truth)
            leaf_grads = torch.autograd.grad(value, [a, c], retain_graph=True)
            assert torch.isfinite(value) and all(torch.isfinite(g).all() for g in leaf_grads)


def test_yager_r_and_goguen_near_their_singularities() -> None:
    """Yager R as a -> c (root derivative at EPS) and Goguen as a -> 0: finite, still large."""
    c = torch.tensor([0.3, 0.0, 0.5], dtype=torch.float64, requires_grad=True)
    a = (c + torch.tensor([1e-12, 1e-40, 0.0], dtype=torch.float64)).detach().requires_grad_()
    for name, singular in (("yager_r", 0), ("goguen", 1)):
        out = build("implication", name)(a, c)
        da, dc = grads(out, a, c)
        assert torch.isfinite(da).all() and torch.isfinite(dc).all()
        assert dc[singular] > 1e3 and out[2].item() == 1.0


@pytest.mark.parametrize(("kind", "name"), [("tnorm", "yager"), ("tconorm", "yager")])
def test_yager_large_p_does_not_underflow(kind: str, name: str) -> None:
    """Max-scaled p-norms: with p = 200 float32 matches float64 (a naive u^p underflows)."""
    a = torch.tensor([0.3, 0.6, 0.9, 0.05])
    b = torch.tensor([0.35, 0.2, 0.95, 0.1])
    op = build(kind, name, p=200.0)
    exact = op(a.double(), b.double())
    torch.testing.assert_close(op(a, b).double(), exact, atol=1e-6, rtol=0)
    expect = torch.minimum(a, b) if kind == "tnorm" else torch.maximum(a, b)
    torch.testing.assert_close(op(a, b), expect, atol=1e-2, rtol=0)


def naive(kind: str, name: str, p: float):
    """The paper's formulas, unguarded (reference at interior points, run in float64)."""

    def pn(u, v):
        return (u**p + v**p) ** (1 / p)

    return {
        ("tnorm", "yager"): lambda a, b: (1 - pn(1 - a, 1 - b)).clamp_min(0),
        ("tconorm", "yager"): lambda a, b: pn(a, b).clamp_max(1),
        ("implication", "yager_s"): lambda a, c: pn(1 - a, c).clamp_max(1),
        ("implication", "yager_r"): lambda a, c: torch.where(
            a <= c, 1.0, 1 - ((1 - c) ** p - (1 - a) ** p).clamp_min(0) ** (1 / p)
        ),
        ("implication", "goguen"): lambda a, c: torch.where(a <= c, 1.0, c / a),
        ("forall", "yager"): lambda x: (1 - ((1 - x) ** p).sum(-1) ** (1 / p)).clamp_min(0),
        ("forall", "generalized_mean_error"): lambda x: 1 - ((1 - x) ** p).mean(-1) ** (1 / p),
        ("forall", "log_product"): lambda x: x.log().sum(-1),
        ("forall", "product"): lambda x: x.prod(-1),
        ("exists", "yager"): lambda x: ((x**p).sum(-1) ** (1 / p)).clamp_max(1),
        ("exists", "generalized_mean"): lambda x: (x**p).mean(-1) ** (1 / p),
        ("exists", "probabilistic_sum"): lambda x: 1 - (1 - x).prod(-1),
    }[(kind, name)]


ACCURACY = [
    (kind, name, p)
    for kind, name in [
        ("tnorm", "yager"),
        ("tconorm", "yager"),
        ("implication", "yager_s"),
        ("implication", "yager_r"),
        ("implication", "goguen"),
        ("forall", "yager"),
        ("forall", "generalized_mean_error"),
        ("forall", "log_product"),
        ("forall", "product"),
        ("exists", "yager"),
        ("exists", "generalized_mean"),
        ("exists", "probabilistic_sum"),
    ]
    for p in ([0.5, 1.5, 2.0, 20.0] if "p" in spec(kind, name).params else [None])
]


@pytest.mark.parametrize(("kind", "name", "p"), ACCURACY, ids=map(name_of, ACCURACY))
def test_float32_within_1e6_of_exact_formula(kind: str, name: str, p: float | None) -> None:
    """Away from singular points the guarded float32 value is within 1e-6 of the formula."""
    g = torch.Generator().manual_seed(1)
    kw = {} if p is None else {"p": p}
    op = build(kind, name, **kw)
    ref = naive(kind, name, 1.0 if p is None else p)
    if kind in ("forall", "exists"):
        x = 0.02 + 0.96 * torch.rand(64, 5, generator=g)
        got, want = op(x), ref(x.double())
    else:
        a, b = 0.02 + 0.96 * torch.rand(2, 4096, generator=g)
        got, want = op(a, b), ref(a.double(), b.double())
    assert got.dtype == torch.float32
    torch.testing.assert_close(got.double(), want, atol=1e-6, rtol=1e-6)


def sigmoid_definition(i: torch.Tensor, s: float, b0: float, sign: float = -1.0) -> torch.Tensor:
    """Definition "sigmoidal" as printed, with sig(x) = 1 / (1 + e^(sign * x))."""
    d = (1 + math.exp(-s * (1 + b0))) / (math.exp(-b0 * s) - math.exp(-s * (1 + b0)))
    h = 1 + math.exp(-b0 * s)
    return d * (h / (1 + torch.exp(sign * s * (i + b0))) - 1)


@pytest.mark.parametrize("s", [0.01, 1.0, 9.0, 20.0, 60.0])
@pytest.mark.parametrize("b0", [-0.5, -0.2, 0.3, -1.5])
def test_sigmoidal_equals_definition(s: float, b0: float) -> None:
    """The stable form equals Definition "sigmoidal" (standard sigmoid) in float64."""
    i = torch.linspace(0, 1, 257, dtype=torch.float64)
    torch.testing.assert_close(sigmoidal_rescale(i, s, b0), sigmoid_definition(i, s, b0))


@pytest.mark.parametrize("s", [0.01, 1.0, 9.0, 20.0])
def test_sigmoidal_simple_form_for_b0_minus_half(s: float) -> None:
    """b0 = -1/2: 1/(e^(s/2) - 1) ((1 + e^(s/2)) sig(s(I - 1/2)) - 1) (Section 8)."""
    i = torch.linspace(0, 1, 257, dtype=torch.float64)
    simple = ((1 + math.exp(s / 2)) * torch.sigmoid(s * (i - 0.5)) - 1) / math.expm1(s / 2)
    torch.testing.assert_close(sigmoidal_rescale(i, s, -0.5), simple)


def test_printed_sigmoid_sign_breaks_the_boundary_conditions() -> None:
    """Erratum: with sig(x) = 1/(1 + e^x) as printed, sigma_I(0) != 0 and sigma_I(1) != 1."""
    ends = torch.tensor([0.0, 1.0], dtype=torch.float64)
    printed = sigmoid_definition(ends, 9.0, -0.5, sign=+1.0)
    assert (printed - ends).abs().min() > 0.5
    torch.testing.assert_close(sigmoid_definition(ends, 9.0, -0.5), ends)


@pytest.mark.parametrize("s", [1.0, 2.5, 5.0, 7.5, 9.0, 12.5, 15.0, 20.0])
@pytest.mark.parametrize("b0", [-0.5, -0.2, -0.8])
def test_sigmoidal_stays_in_the_unit_interval_in_float32(s: float, b0: float) -> None:
    """No rounding step beyond 0 or 1: 1 - value feeds roots (e.g. the generalized mean error)."""
    i = torch.linspace(0, 1, 20001)
    out = sigmoidal_rescale(i, s, b0)
    assert out.min() >= 0 and out.max() <= 1


@pytest.mark.parametrize("s", [9.0, 100.0, 1000.0, 1e5])
@pytest.mark.parametrize("b0", [-0.5, -0.2, -0.9])
def test_sigmoidal_large_s_float32(s: float, b0: float) -> None:
    """Large s: boundary conditions within 1e-6, finite gradients, float32 preserved, monotone."""
    i = torch.cat([torch.tensor([0.0, 1.0]), torch.rand(2000, generator=torch.Generator())])
    i = i.sort().values.requires_grad_()
    out = sigmoidal_rescale(i, s, b0)
    assert out.dtype == torch.float32
    assert out[0].abs() < 1e-6 and (out[-1] - 1).abs() < 1e-6
    assert (out.diff() >= 0).all()
    assert torch.isfinite(grads(out, i)[0]).all()


ALL_OPS = ELEMENTWISE + AGGREGATORS


@pytest.mark.parametrize(("kind", "name", "kw"), ALL_OPS, ids=map(name_of, ALL_OPS))
def test_operators_need_no_host_sync(kind: str, name: str, kw: dict) -> None:
    """Operators run on data-less meta tensors: no .item(), no data-dependent Python branches."""
    op = build(kind, name, **kw)
    if kind in ("forall", "exists"):
        out = op(torch.empty(3, 5, 7, device="meta"), dim=(0, 2))
        assert out.shape == (5,)
    else:
        out = op(torch.empty(4, 1, device="meta"), torch.empty(1, 6, device="meta"))
        assert out.shape == (4, 6)
    assert out.dtype == torch.float32


@pytest.mark.parametrize("p", [0.5, 1.0, 1.5, 2.0, 20.0])
@pytest.mark.parametrize("cap", [None, 1.0])
def test_fused_pnorm2_equals_autograd_of_the_formula(p: float, cap: float | None) -> None:
    """The pnorm2 Function (value and hand-written gradient) against autograd of
    min((u^p + v^p)^(1/p), cap) in float64, away from the origin and the cap's kink."""
    g = torch.Generator().manual_seed(3)
    u, v = (0.05 + 0.9 * torch.rand(2, 500, generator=g, dtype=torch.float64)).unbind()
    v = torch.cat([v[:-3], u[-3:]])  # ties u = v
    keep = ((u**p + v**p) ** (1 / p) - (cap or 9.0)).abs() > 1e-6
    a, b = u.clone().requires_grad_(), v.clone().requires_grad_()
    ref = (a**p + b**p) ** (1 / p)
    ref = (ref if cap is None else ref.clamp_max(cap))[keep]
    x, y = u.clone().requires_grad_(), v.clone().requires_grad_()
    got = pnorm2(x, y, p, cap)[keep]
    torch.testing.assert_close(got, ref)
    torch.testing.assert_close(grads(got, x, y), grads(ref, a, b))


def test_floored_log_equals_log_of_the_floor_with_a_straight_through_gradient() -> None:
    x = torch.tensor([0.0, 1e-9, EPS, 0.3, 1.0], dtype=torch.float64, requires_grad=True)
    out = log_(x)
    torch.testing.assert_close(out, torch.log(x.detach().clamp_min(EPS)))
    torch.testing.assert_close(grads(out, x)[0], 1 / x.detach().clamp_min(EPS))

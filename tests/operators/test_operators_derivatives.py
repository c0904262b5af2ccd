"""Autograd equals the paper's closed-form derivatives (Sections 4, 6, 7, 8; appendix D)."""

from __future__ import annotations

import math

import pytest
import torch

from dfl_bench.operators import build
from dfl_bench.operators.implications import sigmoidal_rescale

DT = torch.float64


def rand(*shape: int, lo: float = 0.05, hi: float = 0.95, seed: int = 0) -> torch.Tensor:
    """Random interior points in (lo, hi), float64."""
    g = torch.Generator().manual_seed(seed)
    return lo + (hi - lo) * torch.rand(*shape, generator=g, dtype=DT)


def grad(f, *xs: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Gradients of f(*xs).sum() w.r.t. every input (zeros where an input is unused)."""
    leaves = [x.detach().clone().requires_grad_() for x in xs]
    return torch.autograd.grad(f(*leaves).sum(), leaves, allow_unused=True, materialize_grads=True)


def close(x: torch.Tensor, y: torch.Tensor, tol: float = 1e-9) -> None:
    assert x.shape == y.shape and torch.allclose(x, y, atol=tol, rtol=tol), (x, y)


# ---- Section 4, Example "reallogic": the chair example -----------------------------------------


def test_chair_example() -> None:
    """Example "reallogic": T_P, S_P, A_TP, I_RC give 0.612 and the ten printed derivatives.

    The printed numbers are the derivatives of the valuation (their signs are those of d val);
    the loss -val has the opposite signs (see results/ERRATA.md).
    """
    T, S = build("tnorm", "product"), build("tconorm", "product")
    I, A = build("implication", "reichenbach"), build("forall", "product")
    # Example "diffreason": objects o1, o2; part_of[y, x] = p(partOf(y, x)).
    chair = torch.tensor([0.9, 0.4], dtype=DT, requires_grad=True)
    cushion = torch.tensor([0.05, 0.5], dtype=DT, requires_grad=True)
    arm_rest = torch.tensor([0.05, 0.1], dtype=DT, requires_grad=True)
    part_of = torch.tensor([[0.001, 0.01], [0.95, 0.001]], dtype=DT, requires_grad=True)
    # valuation[x, y] of chair(x) and partOf(y, x) -> cushion(y) or armRest(y).
    body = I(T(chair[:, None], part_of.T), S(cushion, arm_rest)[None, :])
    valuation = A(body, dim=(0, 1))
    assert round(valuation.item(), 3) == 0.612
    loss = -valuation
    d = torch.autograd.grad(loss, [chair, cushion, arm_rest, part_of])
    d_val = [-g for g in d]
    printed = [
        [-0.4261, -0.0058],  # chair(o1), chair(o2)
        [0.0029, 0.7662],  # cushion(o1), cushion(o2)
        [0.0029, 0.4257],  # armRest(o1), armRest(o2)
        [[-0.4978, -0.2219], [-0.4031, -0.1103]],  # partOf(o1,o1) (o1,o2); (o2,o1) (o2,o2)
    ]
    for got, want in zip(d_val, printed, strict=True):
        assert torch.equal(got.round(decimals=4), torch.tensor(want, dtype=DT))
    assert d[1][1] < 0 and d[1][1].abs() == max(g.abs().max() for g in d)


# ---- Section 6: aggregators ----------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.5, 1.5, 2.0, 20.0])
def test_yager_aggregator_derivative(p: float) -> None:
    """Eq. "aggr_yager_deriv", exponent corrected: (sum (1-x_j)^p)^(1/p - 1) (1-x_i)^(p-1)."""
    x = rand(4, 6, lo=0.985, hi=0.999) if p < 1 else rand(4, 6, lo=0.75, hi=0.99)
    (g,) = grad(build("forall", "yager", p=p), x)
    total = (1 - x).pow(p).sum(-1, keepdim=True)
    assert (total < 1).all()
    close(g, total.pow(1 / p - 1) * (1 - x).pow(p - 1))
    if p != 1:
        printed = total.pow(1 - 1 / p) * (1 - x).pow(p - 1)
        assert not torch.allclose(g, printed)
    (vanished,) = grad(build("forall", "yager", p=p), rand(4, 6, lo=0.0, hi=0.02))
    assert (vanished == 0).all()


@pytest.mark.parametrize("p", [0.5, 1.0, 1.5, 2.0, 20.0])
def test_generalized_mean_error_derivative(p: float) -> None:
    """Eq. "deriv_apme": (1-x_i)^(p-1) (1/n)^(1/p) (sum_j (1-x_j)^p)^(1/p - 1)."""
    x = rand(3, 7)
    (g,) = grad(build("forall", "generalized_mean_error", p=p), x)
    total = (1 - x).pow(p).sum(-1, keepdim=True)
    close(g, (1 - x).pow(p - 1) * (1 / 7) ** (1 / p) * total.pow(1 / p - 1))


@pytest.mark.parametrize("p", [0.5, 1.0, 1.5, 2.0, 20.0])
def test_generalized_mean_derivative(p: float) -> None:
    """Section 6: dE_GM/dx_i = 1/n (1/n sum_j x_j^p)^(1/p - 1) x_i^(p-1); log E_GM gives
    x_i^(p-1) / sum_j x_j^p."""
    x = rand(3, 7)
    E = build("exists", "generalized_mean", p=p)
    (g,) = grad(E, x)
    close(g, (1 / 7) * x.pow(p).mean(-1, keepdim=True).pow(1 / p - 1) * x.pow(p - 1))
    (g_log,) = grad(lambda v: torch.log(E(v)), x)
    close(g_log, x.pow(p - 1) / x.pow(p).sum(-1, keepdim=True))


def test_product_and_log_product_derivatives() -> None:
    """Eq. "derivprod": prod_{j != i} x_j; log-product: 1/x_i (sum) and 1/(n x_i) (mean)."""
    x = rand(3, 5)
    (g,) = grad(build("forall", "product"), x)
    others = torch.stack([torch.cat([x[:, :i], x[:, i + 1 :]], 1).prod(1) for i in range(5)], 1)
    close(g, others)
    (g_log,) = grad(build("forall", "log_product", reduction="sum"), x)
    close(g_log, 1 / x)
    (g_mean,) = grad(build("forall", "log_product", reduction="mean"), x)
    close(g_mean, 1 / (5 * x))


def test_probabilistic_sum_derivative() -> None:
    """Section 6: dE_SP/dx_i = prod_{j != i} (1 - x_j)."""
    x = rand(3, 5)
    (g,) = grad(build("exists", "probabilistic_sum"), x)
    others = torch.stack([torch.cat([x[:, :i], x[:, i + 1 :]], 1) for i in range(5)], 1)
    close(g, (1 - others).prod(-1))


def test_nilpotent_aggregator_derivatives() -> None:
    """Eq. "derivnilp": 1 for the argmin if the two lowest sum to > 1, else 0 (and dually)."""
    x = torch.tensor([[0.7, 0.9, 0.6, 0.8], [0.3, 0.9, 0.6, 0.8]], dtype=DT)
    (g,) = grad(build("forall", "nilpotent_minimum"), x)
    close(g, torch.tensor([[0.0, 0, 1, 0], [0, 0, 0, 0]], dtype=DT))
    y = torch.tensor([[0.3, 0.1, 0.4, 0.2], [0.7, 0.1, 0.4, 0.2]], dtype=DT)
    (h,) = grad(build("exists", "nilpotent_maximum"), y)
    close(h, torch.tensor([[0.0, 0, 1, 0], [0, 0, 0, 0]], dtype=DT))


def test_lukasiewicz_bounded_sum_minimum_maximum_derivatives() -> None:
    """Section 6: Lukasiewicz 1 iff sum x > n-1; bounded sum 1 iff sum x < 1; min/max one-hot."""
    high = torch.tensor([[0.9, 0.95, 0.97], [0.3, 0.95, 0.7]], dtype=DT)
    (g,) = grad(build("forall", "lukasiewicz"), high)
    close(g, torch.tensor([[1.0, 1, 1], [0, 0, 0]], dtype=DT))
    low = torch.tensor([[0.1, 0.2, 0.3], [0.5, 0.2, 0.4]], dtype=DT)
    (h,) = grad(build("exists", "bounded_sum"), low)
    close(h, torch.tensor([[1.0, 1, 1], [0, 0, 0]], dtype=DT))
    (m,) = grad(build("forall", "minimum"), low)
    close(m, torch.tensor([[1.0, 0, 0], [0, 1, 0]], dtype=DT))
    (M,) = grad(build("exists", "maximum"), low)
    close(M, torch.tensor([[0.0, 0, 1], [1, 0, 0]], dtype=DT))


@pytest.mark.parametrize("p", [0.5, 2.0, 20.0])
def test_yager_exists_derivative(p: float) -> None:
    """Section 6: dE_SY/dx_i = (sum x_j^p)^(1/p - 1) x_i^(p-1) where sum x_j^p < 1, else 0."""
    x = rand(3, 4, lo=0.01, hi=0.05) if p < 1 else rand(3, 4, lo=0.05, hi=0.4)
    (g,) = grad(build("exists", "yager", p=p), x)
    total = x.pow(p).sum(-1, keepdim=True)
    assert (total < 1).all()
    close(g, total.pow(1 / p - 1) * x.pow(p - 1))
    (vanished,) = grad(build("exists", "yager", p=p), rand(3, 4, lo=0.98, hi=0.999))
    assert (vanished == 0).all()


# ---- Section 7: t-norms and t-conorms ------------------------------------------------------------


def test_godel_lukasiewicz_product_norm_derivatives() -> None:
    """Section 7: dT_G/da = [a < b], dS_G/da = [a > b], T_LK/S_LK indicators, T_P: b, S_P: 1 - b."""
    a, b = rand(50, seed=1), rand(50, seed=2)
    cases = {
        ("tnorm", "godel"): (a < b).to(DT),
        ("tconorm", "godel"): (a > b).to(DT),
        ("tnorm", "lukasiewicz"): (a + b > 1).to(DT),
        ("tconorm", "lukasiewicz"): (a + b < 1).to(DT),
        ("tnorm", "product"): b,
        ("tconorm", "product"): 1 - b,
    }
    for (kind, name), want in cases.items():
        da, _ = grad(build(kind, name), a, b)
        close(da, want)


@pytest.mark.parametrize("p", [0.5, 1.5, 2.0, 20.0])
def test_yager_norm_derivatives(p: float) -> None:
    """Section 7, Eq. "deriv_s_yager": the Yager t-norm and t-conorm derivatives."""
    a, b = rand(200, seed=3), rand(200, seed=4)
    u = (1 - a).pow(p) + (1 - b).pow(p)
    da, _ = grad(build("tnorm", "yager", p=p), a, b)
    close(da, torch.where(u < 1, u.pow(1 / p - 1) * (1 - a).pow(p - 1), 0.0))
    v = a.pow(p) + b.pow(p)
    ds, _ = grad(build("tconorm", "yager", p=p), a, b)
    close(ds, torch.where(v < 1, v.pow(1 / p - 1) * a.pow(p - 1), 0.0))


# ---- Section 8: implications (d/dc and the negated antecedent derivative -d/da) ---------------


def implication_grads(name: str, a: torch.Tensor, c: torch.Tensor, **kw) -> tuple:
    """(dI/dc, -dI/da) as in Section 8."""
    da, dc = grad(build("implication", name, **kw), a, c)
    return dc, -da


def test_godel_based_implication_derivatives() -> None:
    """Section 8: Kleene-Dienes and Eq. "god_imp_deriv" (Goedel: -dI/da = 0)."""
    a, c = rand(200, seed=5), rand(200, seed=6)
    dc, dna = implication_grads("kleene_dienes", a, c)
    close(dc, (1 - a < c).to(DT))
    close(dna, (1 - a > c).to(DT))
    dc, dna = implication_grads("godel", a, c)
    close(dc, (a > c).to(DT))
    close(dna, torch.zeros_like(a))


@pytest.mark.parametrize("p", [0.5, 1.5, 2.0, 20.0])
def test_lukasiewicz_and_yager_implication_derivatives(p: float) -> None:
    """Eq. "impl_deriv_luk" and the Yager S- and R-implication derivatives of Section 8."""
    a, c = rand(300, seed=7), rand(300, seed=8)
    dc, dna = implication_grads("lukasiewicz", a, c)
    close(dc, (a > c).to(DT))
    close(dna, (a > c).to(DT))
    s = (1 - a).pow(p) + c.pow(p)
    dc, dna = implication_grads("yager_s", a, c, p=p)
    close(dc, torch.where(s <= 1, s.pow(1 / p - 1) * c.pow(p - 1), 0.0))
    close(dna, torch.where(s <= 1, s.pow(1 / p - 1) * (1 - a).pow(p - 1), 0.0))
    r = ((1 - c).pow(p) - (1 - a).pow(p)).clamp_min(0)
    dc, dna = implication_grads("yager_r", a, c, p=p)
    close(dc, torch.where(a > c, r.pow(1 / p - 1) * (1 - c).pow(p - 1), 0.0), 1e-7)
    close(dna, torch.where(a > c, r.pow(1 / p - 1) * (1 - a).pow(p - 1), 0.0), 1e-7)
    if p != 2:  # appendix D prints the factors (1 - c) and (1 - a) without the power p - 1
        printed = torch.where(a > c, r.pow(1 / p - 1) * (1 - c), 0.0)
        assert not torch.allclose(dc, printed)


def test_product_based_implication_derivatives() -> None:
    """Section 8: Reichenbach dI/dc = a, -dI/da = 1 - c; Goguen 1/a and c/a^2 where a > c."""
    a, c = rand(200, seed=9), rand(200, seed=10)
    dc, dna = implication_grads("reichenbach", a, c)
    close(dc, a)
    close(dna, 1 - c)
    dc, dna = implication_grads("goguen", a, c)
    close(dc, torch.where(a > c, 1 / a, 0.0))
    close(dna, torch.where(a > c, c / a**2, 0.0))


def test_reichenbach_with_log_product_and_rmse() -> None:
    """Section 8: d(log A_TP(I_RC)) / d(1 - a_i) = (1 - c_i) / I_RC, and the RMSE version."""
    a, c = rand(6, seed=11), rand(6, seed=12)
    I = build("implication", "reichenbach")

    def valuation(aggregator):
        return lambda neg_a, cc: aggregator(I(1 - neg_a, cc))

    log_prod = build("forall", "log_product", reduction="sum")
    dna, _ = grad(valuation(log_prod), 1 - a, c)
    close(dna, (1 - c) / I(a, c))
    dna, _ = grad(valuation(build("forall", "rmse")), 1 - a, c)
    gap = a - a * c
    close(dna, (1 - c) * gap / torch.sqrt(6 * gap.pow(2).sum()))


def sigmoid_definition(i: torch.Tensor, s: float, b0: float) -> torch.Tensor:
    """Definition "sigmoidal" as printed, with the standard sigmoid 1 / (1 + e^-x)."""
    d = (1 + math.exp(-s * (1 + b0))) / (math.exp(-b0 * s) - math.exp(-s * (1 + b0)))
    h = 1 + math.exp(-b0 * s)
    return d * (h * torch.sigmoid(s * (i + b0)) - 1)


@pytest.mark.parametrize(("s", "b0"), [(0.01, -0.5), (1.0, -0.5), (9.0, -0.5), (9.0, -0.2)])
def test_sigmoidal_derivative(s: float, b0: float) -> None:
    """Eq. "deriv_sigm": d sigma_I / dI = d h s sig(s(I + b0)) (1 - sig(s(I + b0)))."""
    i = torch.linspace(0, 1, 101, dtype=DT)
    (g,) = grad(lambda v: sigmoidal_rescale(v, s, b0), i)
    d = (1 + math.exp(-s * (1 + b0))) / (math.exp(-s * b0) - math.exp(-s * (1 + b0)))
    h = 1 + math.exp(-s * b0)
    sig = torch.sigmoid(s * (i + b0))
    close(g, d * h * s * sig * (1 - sig))
    a, c = rand(100, seed=13), rand(100, seed=14)
    dc, dna = implication_grads("sigmoidal", a, c, base="reichenbach", s=s, b0=b0)
    sig = torch.sigmoid(s * (1 - a + a * c + b0))
    close(dc, d * h * s * sig * (1 - sig) * a)
    close(dna, d * h * s * sig * (1 - sig) * (1 - c))


@pytest.mark.parametrize(("kind", "name"), [("forall", "minimum"), ("exists", "maximum")])
def test_min_and_max_share_a_tie_without_noise(kind: str, name: str) -> None:
    """The authors' code adds N(0, 1e-3^2) (min) or N(0, 1e-4^2) (max) noise to pick one of tied
    inputs at random; ours is noise-free (docs/fidelity.md): exact value, the tie shares the
    derivative, the same input gives the same result."""
    x = torch.tensor([0.3, 0.3, 0.9] if kind == "forall" else [0.7, 0.7, 0.1], requires_grad=True)
    value = build(kind, name)(x)
    value.backward()
    assert value.item() == x[0].item()
    assert x.grad.tolist() == [0.5, 0.5, 0.0]

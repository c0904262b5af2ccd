"""The Yager operators' `eps`: the authors' code's `+ eps` inside the p-th root (docs/fidelity.md).

The reference formulas below are written out as the code computes them (dfl/operators/*.py of
HEmile/differentiable-fuzzy-logics), without its negligible eps on single inputs.
"""

from __future__ import annotations

import pytest
import torch

from dfl_bench.operators.registry import build

EPS = 1e-6  # the code's dfl/operators/util.eps
P = (1.5, 2.0, 20.0)


def grid(n: int = 400, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Truth values away from 0 and 1, in float64."""
    g = torch.Generator().manual_seed(seed)
    return (
        torch.rand(n, generator=g, dtype=torch.float64) * 0.98 + 0.01,
        torch.rand(n, generator=g, dtype=torch.float64) * 0.98 + 0.01,
    )


def codes(p: float) -> dict[tuple[str, str], object]:
    """The code's elementwise Yager operators at p with its eps."""
    root = 1.0 / p
    return {
        ("tnorm", "yager"): lambda a, b: (1 - ((1 - a) ** p + (1 - b) ** p + EPS) ** root).clamp(0),
        ("tconorm", "yager"): lambda a, b: ((a**p + b**p + EPS) ** root).clamp_max(1),
        ("implication", "yager_s"): lambda a, b: (((1 - a) ** p + b**p + EPS) ** root).clamp_max(1),
        ("implication", "yager_r"): lambda a, c: torch.where(
            a > c, 1 - ((1 - c) ** p - (1 - a) ** p + EPS).clamp_min(EPS) ** root, 1.0
        ),
    }


@pytest.mark.parametrize("p", P)
def test_the_elementwise_operators_are_the_codes(p: float) -> None:
    """Values and gradients (away from a = c, where I_RY's code has no derivative)."""
    for (kind, name), code in codes(p).items():
        a, b = (x.requires_grad_() for x in grid())
        want = code(a, b)
        want_grads = torch.autograd.grad(want.sum(), (a, b))
        got = build(kind, name, p=p, eps=EPS)(a, b)
        got_grads = torch.autograd.grad(got.sum(), (a, b))
        torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-12)
        for g, w in zip(got_grads, want_grads, strict=True):
            torch.testing.assert_close(g, w, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("p", P)
def test_the_aggregators_are_the_codes(p: float) -> None:
    a, _ = grid(n=64)
    x = a.reshape(8, 8)
    forall = (1 - ((1 - x) ** p).sum(-1).add(EPS) ** (1 / p)).clamp_min(0)
    exists = ((x**p).sum(-1).add(EPS) ** (1 / p)).clamp_max(1)
    torch.testing.assert_close(build("forall", "yager", p=p, eps=EPS)(x), forall)
    torch.testing.assert_close(build("exists", "yager", p=p, eps=EPS)(x), exists)


def test_at_p20_the_eps_floors_the_root_at_a_half() -> None:
    """eps^(1/20) = 0.501: T_Y(1, 1) and A_TY of all-true inputs are 0.499, I_Y >= 0.501 and
    I_RY of a failing pair <= 0.499, where the paper's operators give 1, >= 0 and -> 1."""
    floor = EPS**0.05
    one = torch.ones(4096, dtype=torch.float64)
    t = build("tnorm", "yager", p=20.0, eps=EPS)(one[:1], one[:1])
    torch.testing.assert_close(t, torch.tensor([1 - floor], dtype=torch.float64))
    assert build("tnorm", "yager", p=20.0)(one[:1], one[:1]).item() == 1.0
    all_true = build("forall", "yager", p=20.0, eps=EPS)(one)
    torch.testing.assert_close(all_true, torch.tensor(1 - floor, dtype=torch.float64))
    a, c = grid()
    assert build("implication", "yager_s", p=20.0, eps=EPS)(a, c).min() >= floor - 1e-12
    assert build("implication", "yager_s", p=20.0)(one, 0 * one).max() == 0.0
    just_above = torch.tensor([0.5 + 1e-4, 0.5 + 1e-8], dtype=torch.float64), torch.tensor(0.5)
    assert build("implication", "yager_r", p=20.0, eps=EPS)(*just_above).max() <= 1 - floor
    exact = build("implication", "yager_r", p=20.0)(*just_above)
    assert exact[0] > 0.6 and exact[1] > exact[0]  # -> 1 as a -> c


def test_confident_counterexamples_stop_the_gradient_only_without_eps() -> None:
    """A_TY over the I_Y of 4,096 pairs, two of them confidently wrong (I_Y = 0.001, so
    (1 - I_Y)^20 = 0.98 each): the exact operators clamp at 0 and pass no gradient; with the
    code's eps every I_Y >= 0.501, each (1 - I_Y)^20 is below eps, the aggregate stays above 0.2
    and the gradient flows (docs/fidelity.md)."""
    a = torch.full((4096,), 0.02, dtype=torch.float64)
    c = torch.full((4096,), 0.98, dtype=torch.float64)
    a[:2], c[:2] = 0.999, 0.0005
    grads = {}
    for eps in (0.0, EPS):
        ant = a.clone().requires_grad_()
        truth = build("implication", "yager_s", p=20.0, eps=eps)(ant, c)
        value = build("forall", "yager", p=20.0, eps=eps)(truth)
        value.backward()
        grads[eps] = (value.item(), ant.grad.abs().sum().item())
    assert grads[0.0] == (0.0, 0.0)
    assert grads[EPS][0] > 0.2 and grads[EPS][1] > 0.0


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("tnorm", "yager"),
        ("tconorm", "yager"),
        ("implication", "yager_s"),
        ("implication", "yager_r"),
        ("forall", "yager"),
        ("exists", "yager"),
    ],
)
def test_eps_zero_is_the_default_and_a_negative_eps_is_refused(kind: str, name: str) -> None:
    a, b = grid(n=32)
    op, zero = build(kind, name, p=20.0), build(kind, name, p=20.0, eps=0.0)
    args = (a.reshape(4, 8),) if kind in ("forall", "exists") else (a, b)
    assert torch.equal(op(*args), zero(*args))
    with pytest.raises(
        ValueError, match=r"eps=-1e-06 is out of range; eps must be a number in \[0"
    ):
        build(kind, name, eps=-EPS)

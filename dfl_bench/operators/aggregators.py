"""Aggregators A(x, dim) for the universal (forall) and existential (exists) quantifiers (Table
"aggregation", Section 6, appendix D). `dim` is an int or a tuple of dims, reduced together.

Singular points (log 0, Yager/generalized means at all-equal corners) follow
`dfl_bench.operators.numerics`.
"""

from __future__ import annotations

import torch
from torch import Tensor

from dfl_bench.operators.numerics import Dim, count, dims, flatten_dims, log_, pnorm, root_eps
from dfl_bench.operators.registry import ROOT_EPS, Param, alias, register


def _two_smallest(x: Tensor, dim: Dim) -> tuple[Tensor, Tensor]:
    """The lowest and second lowest values over `dim` (the second is 1 when n = 1)."""
    flat = flatten_dims(x, dim)
    if flat.shape[-1] == 1:
        lowest = flat[..., 0]
        return lowest, torch.ones_like(lowest)
    low = flat.topk(2, dim=-1, largest=False).values
    return low[..., 0], low[..., 1]


@register("forall", "minimum", folds="godel")
def minimum(x: Tensor, dim: Dim = -1) -> Tensor:
    """Minimum aggregator A_TG(x) = min_i x_i (Section 6)."""
    return x.amin(dim=dims(x, dim))


@register("forall", "product", folds="product")
def product(x: Tensor, dim: Dim = -1) -> Tensor:
    """Product aggregator A_TP(x) = prod_i x_i (Eq. "derivprod")."""
    return flatten_dims(x, dim).prod(dim=-1)


@register("forall", "log_product", reduction=Param("sum", choices=("sum", "mean")))
def log_product(x: Tensor, dim: Dim = -1, reduction: str = "sum") -> Tensor:
    """Log-product aggregator log A_TP(x) = sum_i log x_i (Section 6); "mean" divides by n."""
    logs = log_(x)
    ds = dims(x, dim)
    return logs.sum(dim=ds) if reduction == "sum" else logs.mean(dim=ds)


@register("forall", "lukasiewicz", folds="lukasiewicz")
def lukasiewicz(x: Tensor, dim: Dim = -1) -> Tensor:
    """Lukasiewicz aggregator A_TLK(x) = max(sum_i x_i - (n - 1), 0) (Section 6)."""
    return (1.0 + (x - 1.0).sum(dim=dims(x, dim))).clamp_min(0.0)


@register(
    "forall", "yager", folds="yager", p=Param(2.0, low=0.0, examples=(0.5, 2.0, 20.0)), eps=ROOT_EPS
)
def yager(x: Tensor, dim: Dim = -1, p: float = 2.0, eps: float = 0.0) -> Tensor:
    """Yager aggregator A_TY(x) = max(1 - (sum_i (1 - x_i)^p)^(1/p), 0) (Section 6).

    eps > 0 adds the authors' code's eps inside the root (docs/fidelity.md).
    """
    return (1.0 - root_eps(pnorm(1.0 - x, p, dim), p, eps)).clamp_min(0.0)


@register("forall", "generalized_mean_error", p=Param(1.5, low=0.0, examples=(0.5, 3.0)))
def generalized_mean_error(x: Tensor, dim: Dim = -1, p: float = 1.5) -> Tensor:
    """Generalized mean error A_GME(x) = 1 - (1/n sum_i (1 - x_i)^p)^(1/p) (Def. "p-mean-error")."""
    return 1.0 - pnorm(1.0 - x, p, dim) * count(x, dim) ** (-1.0 / p)


alias("forall", "mae", "generalized_mean_error", p=1.0)
alias("forall", "rmse", "generalized_mean_error", p=2.0)


@register("forall", "nilpotent_minimum", folds="nilpotent_minimum")
def nilpotent_minimum(x: Tensor, dim: Dim = -1) -> Tensor:
    """Nilpotent aggregator: min_i x_i if the two lowest sum to > 1, else 0 (Eq. "aggrnilpmin")."""
    lowest, second = _two_smallest(x, dim)
    return torch.where(lowest + second > 1.0, lowest, 0.0)


@register("exists", "maximum", folds="godel")
def maximum(x: Tensor, dim: Dim = -1) -> Tensor:
    """Maximum aggregator E_SG(x) = max_i x_i (Section 6)."""
    return x.amax(dim=dims(x, dim))


@register("exists", "probabilistic_sum", folds="product")
def probabilistic_sum(x: Tensor, dim: Dim = -1) -> Tensor:
    """Probabilistic sum E_SP(x) = 1 - prod_i (1 - x_i) (Section 6)."""
    return 1.0 - flatten_dims(1.0 - x, dim).prod(dim=-1)


@register("exists", "bounded_sum", folds="lukasiewicz")
def bounded_sum(x: Tensor, dim: Dim = -1) -> Tensor:
    """Bounded sum E_SLK(x) = min(sum_i x_i, 1) (Section 6)."""
    return x.sum(dim=dims(x, dim)).clamp_max(1.0)


@register(
    "exists", "yager", folds="yager", p=Param(2.0, low=0.0, examples=(0.5, 2.0, 20.0)), eps=ROOT_EPS
)
def yager_exists(x: Tensor, dim: Dim = -1, p: float = 2.0, eps: float = 0.0) -> Tensor:
    """Yager existential aggregator E_SY(x) = min((sum_i x_i^p)^(1/p), 1) (Section 6).

    eps > 0 adds the authors' code's eps inside the root (docs/fidelity.md).
    """
    return root_eps(pnorm(x, p, dim), p, eps, cap=1.0)


@register("exists", "generalized_mean", p=Param(1.5, low=0.0, examples=(0.5, 1.5, 20.0)))
def generalized_mean(x: Tensor, dim: Dim = -1, p: float = 1.5) -> Tensor:
    """Generalized mean E_GM(x) = (1/n sum_i x_i^p)^(1/p) (Def. "p-mean", Eq. "p-mean")."""
    return pnorm(x, p, dim) * count(x, dim) ** (-1.0 / p)


@register("exists", "nilpotent_maximum", folds="nilpotent_maximum")
def nilpotent_maximum(x: Tensor, dim: Dim = -1) -> Tensor:
    """Nilpotent existential aggregator: max_i x_i if the two largest sum to < 1, else 1."""
    low, second_low = _two_smallest(1.0 - x, dim)
    return torch.where(low + second_low > 1.0, 1.0 - low, 1.0)

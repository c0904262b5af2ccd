"""T-norms of Table "tnorms" (Section 3); their derivatives are discussed in Section 7."""

from __future__ import annotations

import torch
from torch import Tensor

from dfl_bench.operators.numerics import pnorm2_eps
from dfl_bench.operators.registry import ROOT_EPS, Param, register


@register("tnorm", "godel")
def godel(a: Tensor, b: Tensor) -> Tensor:
    """Goedel (minimum) t-norm T_G(a, b) = min(a, b)."""
    return torch.minimum(a, b)


@register("tnorm", "product")
def product(a: Tensor, b: Tensor) -> Tensor:
    """Product t-norm T_P(a, b) = a * b."""
    return a * b


@register("tnorm", "lukasiewicz")
def lukasiewicz(a: Tensor, b: Tensor) -> Tensor:
    """Lukasiewicz t-norm T_LK(a, b) = max(a + b - 1, 0)."""
    return (a + b - 1.0).clamp_min(0.0)


@register("tnorm", "drastic")
def drastic(a: Tensor, b: Tensor) -> Tensor:
    """Drastic product T_D(a, b) = min(a, b) if a = 1 or b = 1, else 0."""
    return torch.where(a == 1.0, b, torch.where(b == 1.0, a, 0.0))


@register("tnorm", "nilpotent_minimum")
def nilpotent_minimum(a: Tensor, b: Tensor) -> Tensor:
    """Nilpotent minimum T_nM(a, b) = min(a, b) if a + b > 1, else 0."""
    return torch.where(a + b > 1.0, torch.minimum(a, b), 0.0)


@register("tnorm", "yager", p=Param(2.0, low=0.0, examples=(0.5, 2.0, 20.0)), eps=ROOT_EPS)
def yager(a: Tensor, b: Tensor, p: float = 2.0, eps: float = 0.0) -> Tensor:
    """Yager t-norm T_Y(a, b) = max(1 - ((1-a)^p + (1-b)^p)^(1/p), 0), p > 0 (Section 7).

    eps > 0 adds the authors' code's eps inside the root (docs/fidelity.md).
    """
    return 1.0 - pnorm2_eps(1.0 - a, 1.0 - b, p, eps, cap=1.0)

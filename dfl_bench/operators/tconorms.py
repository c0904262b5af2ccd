"""T-conorms of Table "snorms" (Section 3), the N-duals S(a, b) = 1 - T(1-a, 1-b) of the t-norms."""

from __future__ import annotations

import torch
from torch import Tensor

from dfl_bench.operators.numerics import pnorm2_eps
from dfl_bench.operators.registry import ROOT_EPS, Param, register


@register("tconorm", "godel", dual="godel")
def godel(a: Tensor, b: Tensor) -> Tensor:
    """Goedel (maximum) t-conorm S_G(a, b) = max(a, b)."""
    return torch.maximum(a, b)


@register("tconorm", "product", dual="product")
def product(a: Tensor, b: Tensor) -> Tensor:
    """Probabilistic sum S_P(a, b) = a + b - a * b."""
    return a + b - a * b


@register("tconorm", "lukasiewicz", dual="lukasiewicz")
def lukasiewicz(a: Tensor, b: Tensor) -> Tensor:
    """Lukasiewicz (bounded sum) t-conorm S_LK(a, b) = min(a + b, 1)."""
    return (a + b).clamp_max(1.0)


@register("tconorm", "drastic", dual="drastic")
def drastic(a: Tensor, b: Tensor) -> Tensor:
    """Drastic sum S_D(a, b) = max(a, b) if a = 0 or b = 0, else 1."""
    return torch.where(a == 0.0, b, torch.where(b == 0.0, a, 1.0))


@register("tconorm", "nilpotent_maximum", dual="nilpotent_minimum")
def nilpotent_maximum(a: Tensor, b: Tensor) -> Tensor:
    """Nilpotent maximum S_nM(a, b) = 1 if a + b >= 1, else max(a, b)."""
    return torch.where(a + b >= 1.0, 1.0, torch.maximum(a, b))


@register(
    "tconorm", "yager", dual="yager", p=Param(2.0, low=0.0, examples=(0.5, 2.0, 20.0)), eps=ROOT_EPS
)
def yager(a: Tensor, b: Tensor, p: float = 2.0, eps: float = 0.0) -> Tensor:
    """Yager t-conorm S_Y(a, b) = min((a^p + b^p)^(1/p), 1), p > 0 (Eq. "deriv_s_yager").

    eps > 0 adds the authors' code's eps inside the root (docs/fidelity.md).
    """
    return pnorm2_eps(a, b, p, eps, cap=1.0)

"""T-norms of Table "tnorms" (Section 3); their derivatives are discussed in Section 6."""

from __future__ import annotations

import torch
from torch import Tensor

from dfl_bench.operators.registry import register


@register("tnorm", "godel")
def godel(a: Tensor, b: Tensor) -> Tensor:
    """Goedel (minimum) t-norm T_G(a, b) = min(a, b)."""
    return torch.minimum(a, b)


@register("tnorm", "product")
def product(a: Tensor, b: Tensor) -> Tensor:
    """Product t-norm T_P(a, b) = a * b."""
    return a * b

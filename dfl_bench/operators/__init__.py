"""Fuzzy operators of the paper (Sections 3, 5-8, appendices A and D) and five parametric t-norm
families beyond it (families.py), behind one registry.

>>> import torch
>>> from dfl_bench.operators import build
>>> T = build("tnorm", "yager", p=2.0)
>>> A = build("forall", "log_product")
>>> A(T(torch.full((2, 3), 0.9), torch.ones(3)), dim=(0, 1)).exp().item()  # 0.9 ** 6
0.5314...
"""

from dfl_bench.operators import (  # noqa: F401  (registers)
    aggregators,
    families,
    implications,
    tconorms,
    tnorms,
)
from dfl_bench.operators.operator_set import OperatorSet
from dfl_bench.operators.registry import (
    KINDS,
    Param,
    alias,
    build,
    choices,
    examples,
    register,
    spec,
)

__all__ = [
    "KINDS",
    "OperatorSet",
    "Param",
    "alias",
    "build",
    "choices",
    "examples",
    "register",
    "spec",
]

"""Fuzzy operators of the paper (Sections 3, 5-8, appendices A and D), behind one registry.

from dfl_bench.operators import build
T = build("tnorm", "yager", p=2.0)
A = build("forall", "log_product")
A(M, dim=1)
"""

from dfl_bench.operators import aggregators, implications, tconorms, tnorms  # noqa: F401  (registers)
from dfl_bench.operators.operator_set import OperatorSet
from dfl_bench.operators.registry import KINDS, Param, alias, build, choices, register, spec

__all__ = ["KINDS", "OperatorSet", "Param", "alias", "build", "choices", "register", "spec"]

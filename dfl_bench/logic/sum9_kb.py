"""The `sum9` problem's knowledge base (Section 9.2.2); the disjunction folds S over d."""

from __future__ import annotations

from dfl_bench.logic.formulas import Exists, Family, Forall, OrOver
from dfl_bench.logic.predicates import d, digit, sum9, x, y

FAMILIES = (
    Family("sum9/1", Forall((x,), Exists((y,), sum9(x, y)))),
    Family("sum9/2", Forall((x, y), sum9(x, y) >> OrOver(d, digit[d](x) & digit[9 - d](y)))),
)

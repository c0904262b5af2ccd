"""The `sum9` knowledge base (Section 9.2.2); the disjunction folds S over d."""

from __future__ import annotations

from torch import Tensor

from dfl_bench.logic.formulas import Exists, Family, Forall, OrOver
from dfl_bench.logic.kb_registry import knowledge_base
from dfl_bench.logic.predicates import d, digit, sum9, x, y


def sum_is_9(y_i: Tensor, y_j: Tensor) -> Tensor:
    """sum9(x_i, x_j) is true when the two digits add up to 9."""
    return y_i + y_j == 9


@knowledge_base("sum9", truths={sum9: sum_is_9})
def sum9_kb() -> tuple[Family, ...]:
    """sum9/1: every image has a partner; sum9/2: sum9 holds only of digit pairs adding to 9."""
    return (
        Family("sum9/1", Forall((x,), Exists((y,), sum9(x, y)))),
        Family("sum9/2", Forall((x, y), sum9(x, y) >> OrOver(d, digit[d](x) & digit[9 - d](y)))),
    )

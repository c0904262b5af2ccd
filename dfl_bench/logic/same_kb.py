"""The `same` knowledge base (Section 9.2.1); d ranges over the ten digits."""

from __future__ import annotations

from torch import Tensor

from dfl_bench.logic.formulas import Family, Forall
from dfl_bench.logic.kb_registry import knowledge_base
from dfl_bench.logic.predicates import d, digit, same, x, y


def same_digit(y_i: Tensor, y_j: Tensor) -> Tensor:
    """same(x_i, x_j) is true when both images show one digit."""
    return y_i == y_j


@knowledge_base("same", truths={same: same_digit})
def same_kb() -> tuple[Family, ...]:
    """same/1 and same/2 link `same` to the digits (one formula per digit); same/3: symmetry."""
    return (
        Family("same/1", Forall((x, y), (digit[d](x) & digit[d](y)) >> same(x, y)), each=d),
        Family("same/2", Forall((x, y), (digit[d](x) & same(x, y)) >> digit[d](y)), each=d),
        Family("same/3", Forall((x, y), same(x, y) >> same(y, x))),
    )

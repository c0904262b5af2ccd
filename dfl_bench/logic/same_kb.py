"""The `same` problem's knowledge base (Section 9.2.1); d ranges over the ten digits."""

from __future__ import annotations

from dfl_bench.logic.formulas import Family, Forall
from dfl_bench.logic.predicates import d, digit, same, x, y

FAMILIES = (
    Family("same/1", Forall((x, y), (digit[d](x) & digit[d](y)) >> same(x, y)), each=d),
    Family("same/2", Forall((x, y), (digit[d](x) & same(x, y)) >> digit[d](y)), each=d),
    Family("same/3", Forall((x, y), same(x, y) >> same(y, x))),
)

"""The predicates of the MNIST knowledge bases (Section 9.2) and their interpretation keys."""

from __future__ import annotations

from dfl_bench.logic.formulas import Index, Predicate, Var

DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")

digit = Predicate("digit", 1, columns=DIGITS)
same = Predicate("same", 2)
sum9 = Predicate("sum9", 2)

x, y = Var("x"), Var("y")
d = Index("d", len(DIGITS))

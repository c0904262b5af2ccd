"""Formulas, knowledge bases, the DFL loss and the gradient metrics (Sections 4 and 9).

from dfl_bench.logic import build_kb
kb = build_kb("same", formulas=[1, 2])
result = kb({"digit": p, "same": s}, ops, labels=None)   # KBResult
result.loss.backward()
"""

from dfl_bench.logic.formulas import (
    SCOPES,
    And,
    AndOver,
    Atom,
    Exists,
    Family,
    Forall,
    Implies,
    Index,
    Not,
    Or,
    OrOver,
    Predicate,
    Var,
)
from dfl_bench.logic.kb import KBS, SCALES, KBResult, KnowledgeBase, build_kb, dfl_loss, register_kb

__all__ = [
    "KBS",
    "SCALES",
    "SCOPES",
    "And",
    "AndOver",
    "Atom",
    "Exists",
    "Family",
    "Forall",
    "Implies",
    "Index",
    "KBResult",
    "KnowledgeBase",
    "Not",
    "Or",
    "OrOver",
    "Predicate",
    "Var",
    "build_kb",
    "dfl_loss",
    "register_kb",
]

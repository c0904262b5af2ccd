"""Formulas, knowledge bases, the DFL loss and the gradient metrics (Sections 4 and 9).

    kb = build_kb("same", formulas=[1, 2])
    result = kb({"digit": p, "same": s}, ops, labels=None)   # KBResult
    result.loss.backward()

Knowledge bases register in `registry` (`same_kb`, `sum9_kb`, `both_kb`).
"""

from dfl_bench.logic.both_kb import both_kb
from dfl_bench.logic.compiler import SCOPES
from dfl_bench.logic.formulas import (
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
from dfl_bench.logic.kb import SCALES, KBResult, KnowledgeBase, build_kb, dfl_loss
from dfl_bench.logic.kb_registry import KBS, KBSpec, from_target, knowledge_base, union
from dfl_bench.logic.same_kb import same_kb
from dfl_bench.logic.sum9_kb import sum9_kb

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
    "KBSpec",
    "KnowledgeBase",
    "Not",
    "Or",
    "OrOver",
    "Predicate",
    "Var",
    "build_kb",
    "dfl_loss",
    "from_target",
    "both_kb",
    "knowledge_base",
    "same_kb",
    "sum9_kb",
    "union",
]

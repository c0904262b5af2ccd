"""The one table of knowledge bases: `build_kb`, the model's heads and the labels all read it.

A knowledge base is registered where it is defined (`same_kb.py`, `sum9_kb.py`), with its binary
predicates and how their crisp truth follows from the digit labels of two images (Section 9.2):

>>> from dfl_bench.logic.formulas import Forall, Var
>>> x, y, before = Var("x"), Var("y"), Predicate("before", 2)
>>> @knowledge_base("ranking", truths={before: lambda y_i, y_j: y_i < y_j})
... def ranking_kb() -> tuple[Family, ...]:
...     return (Family("ranking/1", Forall((x, y), before(x, y) >> ~before(y, x))),)
>>> ranking_kb.predicates, "before" in pair_truths()
(('before',), True)
>>> del KBS["ranking"]  # this example's KB leaves the table again

so adding a knowledge base takes one decorated function and one `conf/kb` file
(DEVELOPERS.md); `union` registers knowledge bases together (`both`). A knowledge base in a
user's own folder is named by its file's `_target_` (module.function, `from_target`), like a
task: importing it registers it, no package edit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from torch import Tensor

from dfl_bench.checks import imported
from dfl_bench.logic.formulas import Family, Predicate, reads

PairTruth = Callable[[Tensor, Tensor], Tensor]
DIGIT = "digit"  # the unary predicate every knowledge base reads: the softmax over the ten digits


@dataclass(frozen=True)
class KBSpec:
    """A registered knowledge base: its families, its binary predicates' crisp truths (one NTN
    head each, in this order) and each family's divisor at scale "mean" (`kb.dfl_loss`)."""

    name: str
    families: tuple[Family, ...]
    truths: Mapping[str, PairTruth]
    divisors: Mapping[str, int]

    @property
    def predicates(self) -> tuple[str, ...]:
        """The binary predicates, in the order of the model's heads."""
        return tuple(self.truths)


KBS: dict[str, KBSpec] = {}


def _add(spec: KBSpec) -> KBSpec:
    if spec.name in KBS:
        raise ValueError(f"knowledge base {spec.name!r} exists; registered: {sorted(KBS)}")
    known = pair_truths()
    clash = [k for k, f in spec.truths.items() if known.get(k, f) is not f]
    if clash:
        raise ValueError(f"binary predicates {clash} already have another crisp truth")
    KBS[spec.name] = spec
    return spec


def knowledge_base(
    name: str, truths: Mapping[Predicate, PairTruth]
) -> Callable[[Callable[[], Iterable[Family]]], KBSpec]:
    """Register the families the decorated function returns as knowledge base `name` (the
    decorated name becomes its KBSpec); `truths` gives each binary predicate the KB reads its
    crisp truth from the digit labels (y_i, y_j), broadcast over pairs."""

    def register(define: Callable[[], Iterable[Family]]) -> KBSpec:
        families = tuple(define())
        read = set().union(*(reads(f.formula) for f in families)) - {DIGIT}
        given = {p.key for p in truths}
        if read != given or any(p.arity != 2 for p in truths):
            raise ValueError(
                f"knowledge base {name!r} reads the binary predicates {sorted(read)}; "
                f"give exactly their crisp truths (got {sorted(given)})"
            )
        divisors = dict.fromkeys((f.name for f in families), len(families))
        return _add(KBSpec(name, families, {p.key: t for p, t in truths.items()}, divisors))

    return register


def union(name: str, specs: Iterable[KBSpec]) -> KBSpec:
    """Register knowledge base `name` as the given ones together: its loss at scale "mean" is
    the sum of their losses, each averaged over its own families (the paper's code)."""
    specs = tuple(specs)
    return _add(
        KBSpec(
            name,
            tuple(f for s in specs for f in s.families),
            {k: t for s in specs for k, t in s.truths.items()},
            {k: v for s in specs for k, v in s.divisors.items()},
        )
    )


def from_target(target: str, name: str) -> KBSpec:
    """The knowledge base a `kb._target_` names (module.function, decorated with
    `knowledge_base`: importing its module registers it), checked to be knowledge base `name`;
    else a ValueError naming what is wrong."""
    found = imported(target, "kb._target_", f"registered: {sorted(KBS)}")
    if not isinstance(found, KBSpec):
        raise ValueError(
            f"kb._target_={target!r} is not a knowledge base (a function decorated with "
            f"dfl_bench.logic.knowledge_base)"
        )
    if found.name != name:
        raise ValueError(f"kb.name={name!r}, but its _target_ is knowledge base {found.name!r}")
    return found


def pair_truths() -> dict[str, PairTruth]:
    """Every registered binary predicate and its crisp truth."""
    return {k: t for spec in KBS.values() for k, t in spec.truths.items()}

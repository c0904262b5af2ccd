"""Knowledge bases and the DFL loss (Eq. "lossrl"), with the Section 9.1 metrics on request."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from dfl_bench.kb_formulas import check_weight
from dfl_bench.kb_formulas import chosen as choose
from dfl_bench.kinds import SCALES
from dfl_bench.logic.compiler import Compiled, Context, Operators, batch_size, compile_family
from dfl_bench.logic.formulas import Family, reads
from dfl_bench.logic.kb_registry import KBS
from dfl_bench.logic.metrics import Pair, data_truths, gradient_metrics


@dataclass(frozen=True)
class KBResult:
    """The outcome of evaluating a knowledge base on one batch.

    `loss`: Eq. "lossrl" at the KB's scale; `mean_valuations`: each family's mean valuation
    (detached, for logging); `formula_valuations`: each family's formulas, shape (family size,)
    at scope "formula" and (1,) at scope "family", with their graph; `metrics`: the Section 9.1
    measures (`metrics.gradient_metrics`), only given labels.
    """

    loss: Tensor
    mean_valuations: dict[str, Tensor]
    formula_valuations: dict[str, Tensor]
    metrics: dict[str, float] | None


def dfl_loss(
    valuations: Mapping[str, Tensor],
    weights: Mapping[str, float],
    scale: str = "mean",
    divisors: Mapping[str, int] | None = None,
) -> Tensor:
    """Eq. "lossrl" at a scale, from each family's formula valuations.

    scale="sum": -sum over all formulas of w * val (the paper's equation);
    scale="mean" (the paper's code): -sum over families of w * (mean of the family's formulas)
    / divisor, the divisor being the number of families of the family's knowledge base
    (default: len(valuations), a plain mean); a family left out keeps its place in the divisor.
    """
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; valid choices: {list(SCALES)}")
    n = divisors or dict.fromkeys(valuations, len(valuations))
    terms = [
        v.sum() * (weights[name] / (n[name] * v.numel()) if scale == "mean" else weights[name])
        for name, v in valuations.items()
    ]
    return -torch.stack(terms).sum()


def _lacks_graph(interp: Mapping[str, Tensor]) -> bool:
    """True when no autograd graph leads to `interp` (no_grad, or no tensor requires grad)."""
    return not torch.is_grad_enabled() or not any(t.requires_grad for t in interp.values())


class KnowledgeBase:
    """A weighted set of formula families; call it on a batch's interpretation (Eq. "lossrl").

    `scope` (formulas.SCOPES) is the quantifier scope of families with one formula per constant;
    `divisors` maps each family to the number of families of its knowledge base (`dfl_loss`).
    """

    def __init__(
        self,
        families: Sequence[Family],
        weights: Mapping[str, float] | None = None,
        scale: str = "mean",
        scope: str = "family",
        divisors: Mapping[str, int] | None = None,
    ) -> None:
        if scale not in SCALES:
            raise ValueError(f"unknown scale {scale!r}; valid choices: {list(SCALES)}")
        names = [f.name for f in families]
        if not families or len(set(names)) != len(names):
            raise ValueError(f"a knowledge base needs distinct, non-empty families, got {names}")
        weights = dict(weights or {})
        unknown = sorted(set(weights) - set(names))
        if unknown:
            raise ValueError(f"weights for unknown families {unknown}; valid choices: {names}")
        if divisors is not None and sorted(divisors) != sorted(names):
            raise ValueError(f"divisors must name exactly the families {names}, got {divisors}")
        self.families = tuple(families)
        for name, weight in weights.items():
            check_weight(name, weight)
        self.weights = {n: float(weights.get(n, 1.0)) for n in names}
        self.scale, self.scope = scale, scope
        self.divisors = dict(divisors or dict.fromkeys(names, len(names)))
        self.compiled: tuple[Compiled, ...] = tuple(compile_family(f, scope) for f in families)
        self.keys = set().union(*(reads(f.formula) for f in families))

    def groundings(self, b: int) -> dict[str, int]:
        """Instances per family on a batch of b objects: formulas * b ** variables (O(|K| b^d))."""
        return {f.name: f.size * f.groundings(b) for f in self.families}

    def _check(self, interp: Mapping[str, Tensor], what: str) -> None:
        missing = sorted(self.keys - set(interp))
        if missing:
            raise ValueError(f"{what} lacks {missing}; the KB reads {sorted(self.keys)}")

    def __call__(
        self,
        interp: Mapping[str, Tensor],
        ops: Operators,
        labels: Mapping[str, Tensor] | None = None,
    ) -> KBResult:
        """Loss and valuations; with crisp `labels`, also the Section 9.1 metrics."""
        self._check(interp, "interpretation")
        if labels is None:
            ctx, b = Context(interp, ops), batch_size(interp)
            vals = {c.family.name: c(ctx, b) for c in self.compiled}
            return self._result(vals, None)
        self._check(labels, "labels")
        if _lacks_graph(interp):
            with torch.enable_grad():
                leaves = {k: t.detach().requires_grad_() for k, t in interp.items()}
                result = self._with_metrics(leaves, ops, labels)
            return KBResult(
                result.loss.detach(),
                result.mean_valuations,
                {k: v.detach() for k, v in result.formula_valuations.items()},
                result.metrics,
            )
        return self._with_metrics(interp, ops, labels)

    def _with_metrics(
        self, interp: Mapping[str, Tensor], ops: Operators, labels: Mapping[str, Tensor]
    ) -> KBResult:
        records: dict[str, list[Pair]] = {c.family.name: [] for c in self.compiled}
        cache: dict = {}
        b = batch_size(interp)
        vals = {
            c.family.name: c(Context(interp, ops, records[c.family.name], cache), b)
            for c in self.compiled
        }
        truths = {c.family.name: data_truths(c, labels) for c in self.compiled}
        return self._result(vals, gradient_metrics(vals, records, truths))

    def _result(self, vals: dict[str, Tensor], metrics: dict[str, float] | None) -> KBResult:
        means = {n: v.detach().mean() for n, v in vals.items()}
        loss = dfl_loss(vals, self.weights, self.scale, self.divisors)
        return KBResult(loss, means, vals, metrics)


def build_kb(
    name: str,
    formulas: Sequence[int | str] | None = None,
    weights: Mapping[int | str, float] | None = None,
    scale: str = "mean",
    scope: str = "family",
) -> KnowledgeBase:
    """A registered KB (`registry.KBS`: `same`, `sum9`, `both`, Section 9.2), optionally an
    ablation subset of families (e.g. formulas=[1, 2]) with per-family weights (default 1); scale
    as in `dfl_loss` (a left-out family weighs 0 and keeps its place in the divisor); scope as in
    `compiler.SCOPES`."""
    if name not in KBS:
        raise ValueError(f"unknown knowledge base {name!r}; valid choices: {sorted(KBS)}")
    spec = KBS[name]
    families = spec.families
    chosen, w = choose(name, formulas, weights, [f.name for f in families])
    selected = [f for f in families if f.name in chosen]
    divisors = {n: v for n, v in spec.divisors.items() if n in chosen}
    return KnowledgeBase(
        selected, {n: v for n, v in w.items() if n in chosen}, scale, scope, divisors
    )

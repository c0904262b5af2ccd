"""The gradient measures of Section 9.1: consequent/antecedent magnitudes and their ratios.

Only implications phi -> psi enter: for each retained implication (every instance mu of its
formula) the derivatives d val(formula) / d val(mu, psi) and -d val(formula) / d val(mu, phi)
are taken of the whole formula's valuation, so the forall aggregator's factor is included.
Formulas without an implication (e.g. sum9/1, forall x exists y sum9(x, y)) do not enter.
Ratios whose denominator is 0 (e.g. cu_ant under the Goedel implication, whose antecedent
derivative is always 0) are NaN.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from dfl_bench.logic.compiler import Compiled, evaluate
from dfl_bench.schema import CONS_RATIO, CU_ANT, CU_CONS

Pair = tuple[Tensor, Tensor]
MAGNITUDES = ("cons_magnitude", "ant_magnitude", "cu_cons_magnitude", "cu_ant_magnitude")
RATIOS = (CONS_RATIO, CU_CONS, CU_ANT)  # the run record's spelling (dfl_bench/schema.py)


def _implication(a: Tensor, c: Tensor) -> Tensor:
    return torch.maximum(1.0 - a, c)


@dataclass(frozen=True)
class _Classical:
    """Boolean connectives on {0, 1}: every t-norm, t-conorm and implication agrees there."""

    tnorm = staticmethod(torch.minimum)
    tconorm = staticmethod(torch.maximum)
    implication = staticmethod(_implication)
    forall = staticmethod(torch.amin)
    exists = staticmethod(torch.amax)

    @staticmethod
    def negation(a: Tensor) -> Tensor:
        return 1.0 - a


CLASSICAL = _Classical()


def data_truths(compiled: Compiled, labels: Mapping[str, Tensor]) -> list[Pair]:
    """l(not phi, mu) and l(psi, mu) of every implication: its classical truth on the labels."""
    record: list[Pair] = []
    with torch.no_grad():
        evaluate(compiled, labels, CLASSICAL, record)
    return [(1.0 - a, c) for a, c in record]


def _family_magnitudes(grads: Sequence[Tensor], truths: Sequence[Pair]) -> Tensor:
    """|cons|, |ant|, cu_cons, cu_ant of one family, summed over its implications and instances."""
    pairs = zip(grads[::2], grads[1::2], strict=True)
    terms = [
        torch.stack([g_c.sum(), -g_a.sum(), (cons * g_c).sum(), -(not_ant * g_a).sum()])
        for (g_a, g_c), (not_ant, cons) in zip(pairs, truths, strict=True)
    ]
    return torch.stack(terms).sum(0)


def _ratio(num: float, den: float) -> float:
    return num / den if den != 0 else math.nan


def ratios(magnitudes: Mapping[str, float]) -> dict[str, float]:
    """cons% = |cons| / (|cons| + |ant|), cu_cons% = cu_cons / |cons|, cu_ant% = cu_ant / |ant|."""
    cons, ant = magnitudes["cons_magnitude"], magnitudes["ant_magnitude"]
    return {
        CONS_RATIO: _ratio(cons, cons + ant),
        CU_CONS: _ratio(magnitudes["cu_cons_magnitude"], cons),
        CU_ANT: _ratio(magnitudes["cu_ant_magnitude"], ant),
    }


def gradient_metrics(
    valuations: Mapping[str, Tensor],
    records: Mapping[str, Sequence[Pair]],
    truths: Mapping[str, Sequence[Pair]],
) -> dict[str, float]:
    """Section 9.1's measures, totals and per family ("<family>/<measure>").

    `records` holds each family's retained (antecedent, consequent) tensors from the forward pass
    that produced `valuations`; one `torch.autograd.grad(..., retain_graph=True)` call gives
    their derivatives without touching `.grad` or the graph the training loss backpropagates.
    """
    names = [n for n, pairs in records.items() if pairs]
    totals = torch.zeros(len(MAGNITUDES))
    per_family: dict[str, list[float]] = {}
    if names:
        inputs = [t for n in names for pair in records[n] for t in pair]
        grads = torch.autograd.grad(
            [valuations[n] for n in names],
            inputs,
            grad_outputs=[torch.ones_like(valuations[n]) for n in names],
            retain_graph=True,
            allow_unused=True,
            materialize_grads=True,
        )
        stacked, start = [], 0
        for n in names:
            stop = start + 2 * len(records[n])
            stacked.append(_family_magnitudes(grads[start:stop], truths[n]))
            start = stop
        table = torch.stack(stacked).detach().cpu().double()
        totals = table.sum(0)
        per_family = dict(zip(names, table.tolist(), strict=True))
    out = dict(zip(MAGNITUDES, totals.tolist(), strict=True))
    out.update(ratios(out))
    for n, values in per_family.items():
        family = dict(zip(MAGNITUDES, values, strict=True))
        out.update({f"{n}/{k}": v for k, v in {**family, **ratios(family)}.items()})
    return out

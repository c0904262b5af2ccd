"""Monte Carlo fraction of [0, 1]^n on which an operator's derivative is nonvanishing (Section 6).

A sample x ~ U(0, 1)^n counts as nonvanishing when the autograd gradient of the built operator
at x is not the zero vector (some partial derivative is nonzero). This is what the propositions
count: for the Lukasiewicz and Yager operators all partials are nonzero on the same region, while
the nilpotent aggregator is single-passing (one nonzero partial, Eq. derivnilp). The fraction of
samples with every partial nonzero is reported beside it. All partials of these operators are
piecewise analytic, so a partial that is zero on a set of positive measure is vanishing there
(Definition in Section 5) and a point sample estimates the measure of that set.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import torch
from torch import Tensor

from dfl_bench.operators import build
from dfl_bench.theory import closed_forms

AGGREGATORS = ("forall", "exists")
CHUNK = 2**17


@dataclass(frozen=True)
class FractionCase:
    """One operator (kind, name, params) evaluated on n inputs."""

    kind: str
    name: str
    n: int
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.name}"

    @property
    def p(self) -> float | None:
        return self.params.get("p")


def case_seed(seed: int, case: FractionCase) -> int:
    """A seed per case, so each estimate does not depend on which other cases run."""
    return (seed * 1_000_003 + zlib.crc32(repr((case.label, case.p, case.n)).encode())) % 2**62


def gradients(op: Callable, kind: str, x: Tensor) -> Tensor:
    """Rows of the gradient of `op` at each row of x: aggregators on x, binary ops on (x0, x1)."""
    x = x.detach().requires_grad_(True)
    if kind in AGGREGATORS:
        y = op(x, dim=-1)
    elif x.shape[-1] == 2:
        y = op(x[:, 0], x[:, 1])
    else:
        raise ValueError(f"a binary {kind} takes n=2 inputs, got n={x.shape[-1]}")
    (grad,) = torch.autograd.grad(y.sum(), x)
    return grad


def count_nonvanishing(
    op: Callable, kind: str, n: int, samples: int, generator: torch.Generator
) -> tuple[int, int]:
    """(#samples with some partial nonzero, #samples with all partials nonzero) over U(0,1)^n."""
    some, every = 0, 0
    for start in range(0, samples, CHUNK):
        size = min(CHUNK, samples - start)
        x = torch.rand(size, n, generator=generator, dtype=torch.float64)
        nonzero = gradients(op, kind, x) != 0
        some += int(nonzero.any(dim=-1).sum())
        every += int(nonzero.all(dim=-1).sum())
    return some, every


def closed_form(case: FractionCase) -> tuple[float | None, float | None]:
    """(the paper's printed closed form or None, the exact closed form or None) for a case."""
    n, p = case.n, case.p
    if case.name in ("lukasiewicz", "bounded_sum"):
        return closed_forms.lukasiewicz_paper(n), closed_forms.yager_exact(n, 1.0)
    if case.name in ("nilpotent_minimum", "nilpotent_maximum"):
        return closed_forms.nilpotent_paper(n), closed_forms.nilpotent_paper(n)
    if case.kind in AGGREGATORS and case.name == "yager":
        paper = closed_forms.yager_aggregator_paper(n) if p == 2 else None
        return paper, closed_forms.yager_exact(n, p)
    if case.name in ("yager", "yager_s") and n == 2:
        return closed_forms.yager_tnorm_paper(p), closed_forms.yager_exact(2, p)
    return None, None


def estimate(case: FractionCase, samples: int, seed: int) -> dict[str, Any]:
    """One CSV row: the MC fraction with its binomial standard error next to the closed forms."""
    generator = torch.Generator().manual_seed(case_seed(seed, case))
    op = build(case.kind, case.name, **case.params)
    some, every = count_nonvanishing(op, case.kind, case.n, samples, generator)
    measured = some / samples
    paper, exact = closed_form(case)
    return {
        "operator": case.label,
        "p": case.p,
        "n": case.n,
        "samples": samples,
        "hits": some,
        "measured": measured,
        "stderr": math.sqrt(measured * (1 - measured) / samples),
        "paper": paper,
        "exact": exact,
        "all_partials_nonzero": every / samples,
    }


def default_cases(
    ns: Iterable[int], aggregator_ps: Iterable[float], binary_ps: Iterable[float]
) -> list[FractionCase]:
    """The cases of Props. luk, vol_yager, nilpfrac, Fig. ratio_2_yager and Section 7.3."""
    ns, aggregator_ps, binary_ps = list(ns), list(aggregator_ps), list(binary_ps)
    cases = [
        FractionCase(kind, name, n)
        for kind, name in [
            ("forall", "lukasiewicz"),
            ("exists", "bounded_sum"),
            ("forall", "nilpotent_minimum"),
            ("exists", "nilpotent_maximum"),
        ]
        for n in ns
    ]
    cases += [
        FractionCase(kind, "yager", n, {"p": p})
        for kind in AGGREGATORS
        for p in aggregator_ps
        for n in ns
    ]
    cases += [
        FractionCase(kind, name, 2, {"p": p})
        for kind, name in [("tnorm", "yager"), ("tconorm", "yager"), ("implication", "yager_s")]
        for p in binary_ps
    ]
    return cases


def fraction_table(cases: Iterable[FractionCase], samples: int, seed: int) -> pd.DataFrame:
    """Estimate every case; one row per case (the CSV of results/theory/fractions.csv)."""
    return pd.DataFrame([estimate(case, samples, seed) for case in cases])

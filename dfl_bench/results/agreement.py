"""Agreement of one table, paper vs ours: Spearman rho per column, shares within tolerance."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dfl_bench.results.cells import Table
from dfl_bench.results.paper import COLUMNS
from dfl_bench.results.stats import MARGINS
from dfl_bench.schema import CU_CONS

ACCURACY_TOLERANCE = MARGINS["accuracy"]  # points of accuracy: the equivalence margin
RATIO_TOLERANCE = MARGINS[CU_CONS]  # cons, cu_cons, cu_ant
WITHIN = (f"acc within {ACCURACY_TOLERANCE:g}", f"ratios within {RATIO_TOLERANCE:g}")


@dataclass(frozen=True)
class Agreement:
    """Spearman rho and n per column; accuracy and ratio cells within the margins (WITHIN)."""

    spearman: dict[str, float | None]
    n_pairs: dict[str, int]
    accuracy_within: tuple[int, int]
    ratio_within: tuple[int, int]

    @staticmethod
    def share(hits: tuple[int, int]) -> str:
        """`k/n (p%)`, or `-` when nothing is comparable."""
        k, n = hits
        return f"{k}/{n} ({100 * k / n:.0f}%)" if n else "-"


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rho (Pearson correlation of average ranks); None for < 3 pairs or a constant."""
    if len(x) != len(y):
        raise ValueError(f"spearman needs equal lengths, got {len(x)} and {len(y)}")
    if len(x) < 3:
        return None
    return pearson(pd.Series(x).rank().tolist(), pd.Series(y).rank().tolist())


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson's r; None for < 3 pairs or a constant sequence."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(a) < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    r = float(np.corrcoef(a, b)[0, 1])
    return None if math.isnan(r) else r


def agreement(table: Table) -> Agreement:
    """Compare every distinct config row where both the paper and ours have a number."""
    rho: dict[str, float | None] = {}
    n_pairs: dict[str, int] = {}
    within = {"accuracy": [0, 0], "ratio": [0, 0]}
    for column in COLUMNS:
        pairs = [
            (paper.number(column), ours.number(column))
            for paper, ours in table.pairs().values()
            if ours is not None
        ]
        pairs = [(p, o) for p, o in pairs if p is not None and o is not None]
        n_pairs[column] = len(pairs)
        rho[column] = spearman([p for p, _ in pairs], [o for _, o in pairs])
        kind = "accuracy" if column == "accuracy" else "ratio"
        tolerance = ACCURACY_TOLERANCE if column == "accuracy" else RATIO_TOLERANCE
        within[kind][0] += sum(abs(o - p) <= tolerance + 1e-9 for p, o in pairs)
        within[kind][1] += len(pairs)
    return Agreement(
        spearman=rho,
        n_pairs=n_pairs,
        accuracy_within=(within["accuracy"][0], within["accuracy"][1]),
        ratio_within=(within["ratio"][0], within["ratio"][1]),
    )

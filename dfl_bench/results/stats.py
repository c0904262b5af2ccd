"""Comparisons by each cell's own noise: Welch's interval of a difference of two cells' means over
their seeds (Student's of one cell's mean and a stated number), ties where it holds 0, and a
permutation p-value for a rank correlation.

    >>> i = welch([97.0, 97.2, 97.1], [96.0, 96.1, 95.9])
    >>> round(i.delta, 2), i.outcome
    (1.1, 1)
    >>> welch([97.0, 97.2, 97.1], [97.05, 96.9, 97.3]).outcome   # within the noise: a tie
    0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

LEVEL = 0.95  # two-sided confidence of every interval
MIN_SEEDS = 3  # a cell with fewer seeds decides no comparison
MIN_CELLS = 8  # a correlation over fewer cells gives no verdict
PERMUTATIONS = 9999


@dataclass(frozen=True)
class Interval:
    """The difference a - b of two means and its LEVEL interval."""

    delta: float
    low: float
    high: float
    how: str

    @property
    def outcome(self) -> int:
        """+1: a above b beyond the noise; -1: below; 0: a tie (the interval holds 0)."""
        return 1 if self.low > 0 else -1 if self.high < 0 else 0

    def text(self) -> str:
        """`+0.42 [-0.10, +0.94]`."""
        return f"{self.delta:+.2f} [{self.low:+.2f}, {self.high:+.2f}]"


def welch(a: Sequence[float], b: Sequence[float]) -> Interval:
    """Welch's LEVEL interval of mean(a) - mean(b) from the two samples' own variances
    (Welch-Satterthwaite degrees of freedom); each needs two values or more."""
    na, nb = len(a), len(b)
    if na < 2 or nb < 2:
        raise ValueError(f"Welch's interval needs two values per side, got {na} and {nb}")
    va, vb = float(np.var(a, ddof=1)) / na, float(np.var(b, ddof=1)) / nb
    delta = float(np.mean(a)) - float(np.mean(b))
    se = math.sqrt(va + vb)
    if se == 0:
        return Interval(delta, delta, delta, f"Welch, n={na}/{nb}, no spread")
    df = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1))
    half = float(stats.t.ppf(0.5 + LEVEL / 2, df)) * se
    return Interval(delta, delta - half, delta + half, f"Welch, n={na}/{nb}, df={df:.1f}")


def one_sample(values: Sequence[float], reference: float) -> Interval:
    """Student's LEVEL interval of mean(values) - reference (a stated number, no noise of its
    own), from the values' own spread; two values or more.

    >>> one_sample([0.098, 0.082, 0.076], 0.05).outcome   # above 0.05 beyond the noise
    1
    """
    n = len(values)
    if n < 2:
        raise ValueError(f"a one-sample interval needs two values, got {n}")
    delta = float(np.mean(values)) - reference
    se = math.sqrt(float(np.var(values, ddof=1)) / n)
    if se == 0:
        return Interval(delta, delta, delta, f"t, n={n}, no spread")
    half = float(stats.t.ppf(0.5 + LEVEL / 2, n - 1)) * se
    return Interval(delta, delta - half, delta + half, f"t, n={n}, df={n - 1}")


def known_sigma(
    delta: float, sigma: float, n_a: int = 1, n_b: float = 1, source: str = ""
) -> Interval:
    """The LEVEL interval of a difference of two means of n_a and n_b runs whose seed std is
    `sigma` (the paper's view: its printed numbers are single runs, its stated baseline std the
    only noise it gives); n_b = inf for a stated number."""
    half = float(stats.norm.ppf(0.5 + LEVEL / 2)) * sigma * math.sqrt(1 / n_a + 1 / n_b)
    return Interval(delta, delta - half, delta + half, source or f"σ={sigma:g}")


def spearman_p(xs: Sequence[float], ys: Sequence[float], seed: int = 0) -> float:
    """Two-sided permutation p-value of Spearman's rho (PERMUTATIONS shuffles of ys, a fixed
    generator, so a rendering is reproducible)."""
    rx = stats.rankdata(xs)
    ry = stats.rankdata(ys)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    norm = math.sqrt(float((rx**2).sum() * (ry**2).sum()))
    if norm == 0:
        return 1.0
    observed = abs(float(rx @ ry)) / norm
    rng = np.random.default_rng(seed)
    shuffled = rng.permuted(np.tile(ry, (PERMUTATIONS, 1)), axis=1)  # row by row, as permutation
    extreme = int((np.abs(shuffled @ rx) / norm >= observed - 1e-12).sum())
    return (extreme + 1) / (PERMUTATIONS + 1)

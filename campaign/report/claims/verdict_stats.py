"""The statistics only the paper report's verdicts read: the paper's printed single runs against
its stated seed std (`known_sigma`), the bootstrap probability of being the top row, and a
permutation p-value for a rank correlation."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np
from scipy import stats

from dfl_bench.results.stats import LEVEL, Interval

PERMUTATIONS = 9999
BOOTSTRAP = 2000  # resamples of the bootstrap probability of being the top row


def top_probability(
    samples: dict[Hashable, Sequence[float]],
    row: Hashable,
    lowest: bool = False,
    sigma: float | None = None,
    seed: int = 0,
) -> float:
    """The bootstrap probability that `row` has the top mean (bottom: `lowest`): each cell's
    seeds resampled with replacement; single values (the paper's) drawn from N(value, sigma).
    A fixed generator over each cell's values in sorted order, so a rendering is reproducible
    whatever order the records were read in."""
    rng = np.random.default_rng(seed)
    names = list(samples)
    means = []
    for name in names:
        values = np.sort(np.asarray(samples[name], dtype=float))
        if len(values) == 1 and sigma is not None:
            means.append(values[0] + sigma * rng.standard_normal(BOOTSTRAP))
        else:
            picks = rng.integers(0, len(values), (BOOTSTRAP, len(values)))
            means.append(values[picks].mean(axis=1))
    stacked = np.stack(means) * (-1 if lowest else 1)
    return float((stacked.argmax(axis=0) == names.index(row)).mean())


def known_sigma(
    delta: float,
    sigma: float,
    n_a: int = 1,
    n_b: float = 1,
    source: str = "",
    margin: float | None = None,
) -> Interval:
    """The LEVEL interval of a difference of two means of n_a and n_b runs whose seed std is
    `sigma` (the paper's view: its printed numbers are single runs, its stated baseline std the
    only noise it gives); n_b = inf for a stated number."""
    se = sigma * math.sqrt(1 / n_a + 1 / n_b)
    half = float(stats.norm.ppf(0.5 + LEVEL / 2)) * se
    return Interval(
        delta, delta - half, delta + half, source or f"σ={sigma:g}", se, math.inf, margin
    )


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

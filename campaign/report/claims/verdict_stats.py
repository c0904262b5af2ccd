"""The statistics only the paper report's verdicts read: the paper's printed single runs against
its stated seed std (`known_sigma`), the bootstrap probability of being the top row, and a
permutation p-value for a rank correlation."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

import numpy as np
from scipy import stats

from dfl_bench.results.stats import LEVEL, Interval

PERMUTATIONS = 9999
BOOTSTRAP = 2000  # resamples of the bootstrap probability of being the top row
Z = float(stats.norm.ppf(0.5 + LEVEL / 2))  # the normal quantile of every LEVEL interval
T = TypeVar("T")
# Each test's result by the test and its arguments' repr (exact: 0.0 and -0.0, 1 and 1.0 are
# other keys), at most MEMO_SIZE of them at once.
_MEMO: dict[tuple[Callable, str], Any] = {}
MEMO_SIZE = 100_000


def memo(test: Callable[..., T], *args: Any) -> T:
    """`test(*args)` of a test that is a function of its arguments' values alone, computed once
    for each distinct arguments: the claims, their two runs each (`evaluate`) and the views and
    variations read one comparison of two cells many times."""
    key = (test, repr(args))
    if key not in _MEMO:
        if len(_MEMO) >= MEMO_SIZE:
            _MEMO.clear()
        _MEMO[key] = test(*args)
    return _MEMO[key]


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
    whatever order the records were read in (`memo`: one bootstrap for each distinct one)."""
    items = tuple((name, tuple(values)) for name, values in samples.items())
    return memo(_top_probability, items, row, lowest, sigma, seed)


def _top_probability(
    samples: tuple[tuple[Hashable, tuple[float, ...]], ...],
    row: Hashable,
    lowest: bool,
    sigma: float | None,
    seed: int,
) -> float:
    """`top_probability` of the cells and their values in `samples`."""
    rng = np.random.default_rng(seed)
    names = [name for name, _ in samples]
    means = []
    for _, cell in samples:
        values = np.sort(np.asarray(cell, dtype=float))
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
    half = Z * se
    return Interval(
        delta, delta - half, delta + half, source or f"σ={sigma:g}", se, math.inf, margin
    )


def spearman_p(xs: Sequence[float], ys: Sequence[float], seed: int = 0) -> float:
    """Two-sided permutation p-value of Spearman's rho (PERMUTATIONS shuffles of ys, a fixed
    generator, so a rendering is reproducible; `memo`: once for each distinct one)."""
    return memo(_spearman_p, tuple(xs), tuple(ys), seed)


def _spearman_p(xs: Sequence[float], ys: Sequence[float], seed: int) -> float:
    """`spearman_p`, computed."""
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

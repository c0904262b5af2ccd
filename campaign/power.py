"""The seeds a comparison needs (a seed plan's power calculation): Welch's test of a difference
or TOST within a margin, decided with chance `POWER` at the seed sds measured so far."""

from __future__ import annotations

import math

from scipy import stats

from dfl_bench.results.stats import ALPHA, welch_df

POWER = 0.8  # the chance a planned seed count decides a comparison (seed plan)
MAX_SEEDS = 10  # the most seeds a plan gives a cell


def difference_power(
    sd_a: float, sd_b: float, delta: float, n_a: int, n_b: int, alpha: float = ALPHA
) -> float:
    """The chance that Welch's two-sided test at `alpha` shows a difference whose true size is
    `delta`, with seed sds sd_a, sd_b and n_a, n_b seeds (noncentral t).

    >>> round(difference_power(0.3, 0.3, 0.6, 6, 6), 2)
    0.88
    """
    va, vb = sd_a**2 / n_a, sd_b**2 / n_b
    se = math.sqrt(va + vb)
    if se == 0:
        return 1.0
    df = welch_df(va, vb, n_a, n_b)
    crit = float(stats.t.ppf(1 - alpha / 2, df))
    return 1 - float(stats.nct.cdf(crit, df, abs(delta) / se))


def seeds_needed(
    sd_a: float,
    sd_b: float,
    delta: float,
    margin: float | None,
    equivalence: bool,
    alpha: float = ALPHA,
    most: int = MAX_SEEDS,
) -> int | None:
    """Seeds per cell (both cells alike) for a POWER chance to decide a comparison whose true
    difference is `delta` with seed sds sd_a, sd_b: Welch's test of a difference, or TOST within
    +-margin; None when no seed count up to `most` would (a difference of 0, or an
    equivalence whose difference reaches the margin); `alpha` each test's level (a family of m
    comparisons: ALPHA / m, Holm's first step).

    >>> seeds_needed(0.3, 0.3, 0.6, 0.5, equivalence=False)
    6
    >>> seeds_needed(0.3, 0.3, 0.0, 0.5, equivalence=True)
    7
    >>> seeds_needed(0.3, 0.3, 0.5, 0.5, equivalence=True) is None
    True
    """
    if (margin - abs(delta) if equivalence else abs(delta)) <= 0:
        return None
    for n in range(2, most + 1):
        se = math.sqrt((sd_a**2 + sd_b**2) / n)
        if se == 0:
            return n
        df = welch_df(sd_a**2 / n, sd_b**2 / n, n, n)
        if equivalence:  # both one-sided tests at ALPHA must reject: P(both) >= sum - 1
            crit = float(stats.t.ppf(1 - alpha, df))
            power = (
                sum(
                    1 - float(stats.nct.cdf(crit, df, (margin - side * delta) / se))
                    for side in (1, -1)
                )
                - 1
            )
        else:
            power = difference_power(sd_a, sd_b, delta, n, n, alpha)
        if power >= POWER:
            return n
    return None

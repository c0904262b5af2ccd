"""Comparisons by each cell's own noise, with three outcomes: a difference (the 95% interval of
a - b excludes 0: above or below), equivalence (two one-sided tests, TOST: the 90% interval
inside +-margin) or neither (inconclusive). Welch's interval of two cells' means over their
seeds, Student's of one cell's mean and a stated number; p-values for each test, Holm within a
family of comparisons, Benjamini-Hochberg across families and Fisher's exact test of two collapse
rates (the seeds a comparison needs: campaign/power.py; the paper report's own statistics:
campaign/report/claims/verdict_stats.py).

    >>> i = welch([97.0, 97.2, 97.1], [96.0, 96.1, 95.9])
    >>> round(i.delta, 2), i.outcome
    (1.1, 1)
    >>> welch([97.0, 97.2, 97.1], [97.05, 96.9, 97.3]).outcome   # no difference shown
    0
    >>> welch([97.0, 97.2, 97.1], [97.05, 96.9, 97.3], margin=0.5).equivalent   # TOST
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, cached_property

import numpy as np
from scipy import special, stats

from dfl_bench.schema import CU_ANT, CU_CONS

LEVEL = 0.95  # two-sided confidence of every interval
ALPHA = 1 - LEVEL  # each test's level (TOST: each one-sided test at ALPHA, the 90% interval)
MIN_SEEDS = 3  # a cell with fewer seeds decides no comparison
MIN_CELLS = 8  # a correlation over fewer cells gives no verdict
FDR = 0.05  # Benjamini-Hochberg's false discovery rate across claims
# Equivalence margins ("on par", "similar", "around") and the agreement's tolerances, declared
# once: accuracy points (about 2.5 of the paper's stated seed std 0.204) and ratio units.
MARGINS = {"accuracy": 0.5, "cons": 0.05, CU_CONS: 0.05, CU_ANT: 0.05}


@dataclass(frozen=True)
class Interval:
    """The difference a - b of two means, its LEVEL interval and, where it has one, its standard
    error and degrees of freedom (inf: normal); `margin` is the equivalence margin of its column;
    `adjusted` the multiplicity-adjusted p-values (difference, equivalence, beyond the margin)
    that decide it, else the raw ones do (`fixed` for a combined test, whose `direction` says
    which way it points). `seen` (not compared) is told each decided test's p."""

    delta: float
    low: float
    high: float
    how: str
    se: float | None = None
    df: float = math.inf
    margin: float | None = None
    adjusted: tuple[float, float, float] | None = None
    fixed: tuple[float, float, float] | None = None  # raw p-values of a combined test
    direction: int = 0  # a combined test's direction (0: the sign of delta)
    rates: str = ""  # a combined test's collapse rates, e.g. `collapsed 2 of 3 vs 0 of 10`
    correction: str = ""  # what adjusted the p-values (`Holm`, `Benjamini-Hochberg`)
    seen: Callable[[float], None] | None = field(default=None, compare=False, repr=False)

    def _cdf(self, x: float) -> float:
        """The normal or Student t CDF (the ufuncs scipy.stats' cdf calls, without its
        per-call checks: the same numbers, 100x faster)."""
        return float(special.ndtr(x) if math.isinf(self.df) else special.stdtr(self.df, x))

    def _one_sided_above(self, bound: float) -> float:
        """p of H0 delta <= bound against delta > bound."""
        if self.se is None:
            return 0.0 if self.low > bound else 1.0
        if self.se == 0:
            return 0.0 if self.delta > bound else 1.0
        return 1.0 - self._cdf((self.delta - bound) / self.se)

    def _one_sided_below(self, bound: float) -> float:
        """p of H0 delta >= bound against delta < bound."""
        if self.se is None:
            return 0.0 if self.high < bound else 1.0
        if self.se == 0:
            return 0.0 if self.delta < bound else 1.0
        return self._cdf((self.delta - bound) / self.se)

    @cached_property
    def raw(self) -> tuple[float, float, float]:
        """The unadjusted p-values: a difference (two-sided), equivalence within +-margin (TOST:
        the larger one-sided p), a difference beyond the margin (the one-sided p in the
        direction of the estimate); the last two are 1 without a margin."""
        if self.fixed is not None:
            return self.fixed
        if self.se is None:
            p_diff = 0.0 if self.low > 0 or self.high < 0 else 1.0
        else:
            p_diff = min(1.0, 2 * min(self._one_sided_above(0.0), self._one_sided_below(0.0)))
        m = self.margin
        if m is None:
            return p_diff, 1.0, 1.0
        p_equiv = max(self._one_sided_above(-m), self._one_sided_below(m))
        p_beyond = min(self._one_sided_above(m), self._one_sided_below(-m))
        return p_diff, p_equiv, p_beyond

    @property
    def p(self) -> tuple[float, float, float]:
        """The p-values that decide: the adjusted ones where given, else the raw ones."""
        return self.adjusted if self.adjusted is not None else self.raw

    def _decided(self, p: float) -> bool:
        decided = p < ALPHA
        if decided and self.seen is not None:
            self.seen(p)
        return decided

    @property
    def outcome(self) -> int:
        """+1: a above b beyond the noise; -1: below; 0: no difference shown."""
        if not self._decided(self.p[0]):
            return 0
        return self.direction or (1 if self.delta > 0 else -1)

    @property
    def equivalent(self) -> bool:
        """Equivalence within +-margin shown (TOST)."""
        return self._decided(self.p[1])

    @property
    def beyond(self) -> bool:
        """A difference larger than the margin shown (one-sided, the estimate's direction)."""
        return self._decided(self.p[2])

    @property
    def word(self) -> str:
        """The comparison's outcome: above or below (beyond the noise), equivalent (TOST within
        the margin) or inconclusive."""
        return {1: "above", -1: "below"}.get(self.outcome) or (
            "equivalent" if self.equivalent else "inconclusive"
        )

    def level_with(self) -> bool | None:
        """An "on par" claim: True when equivalence is shown, False when a difference beyond
        the margin is shown, else None (inconclusive)."""
        return True if self.equivalent else False if self.beyond else None

    def interval90(self) -> tuple[float, float]:
        """The 90% interval (TOST's): the estimate +- t(0.95) standard errors."""
        if self.se is None:
            return self.low, self.high
        q = float(
            stats.norm.ppf(1 - ALPHA) if math.isinf(self.df) else stats.t.ppf(1 - ALPHA, self.df)
        )
        return self.delta - q * self.se, self.delta + q * self.se

    def text(self) -> str:
        """`+0.42 [-0.10, +0.94]`; `+0.42 [no interval]` where the runs give none; `none [no
        interval]` where a side has no run to take a mean of (all of them collapsed).

        >>> compare_runs([20.0, 21.0], [True] * 2, [96.0, 20.0], [False, True]).text()
        'none [no interval]'
        """
        if math.isnan(self.delta):
            return "none [no interval]"
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            return f"{self.delta:+.2f} [no interval]"
        return f"{self.delta:+.2f} [{self.low:+.2f}, {self.high:+.2f}]{self._lost(0)}"

    def _lost(self, test: int) -> str:
        """` (not after Holm)` where the raw p of `test` decides and the adjusted one does not:
        the printed interval excludes 0 (or lies inside the margin) but the correction undoes
        it.

        >>> i = welch([97.0, 97.2, 97.1], [96.0, 96.1, 95.9])
        >>> i.adjusted_to((0.2, 1.0, 1.0), correction="Holm").text()
        '+1.10 [+0.87, +1.33] (not after Holm)'
        """
        if self.adjusted is None or not self.raw[test] < ALPHA <= self.adjusted[test]:
            return ""
        return f" (not after {self.correction or 'correction'})"

    def brief(self) -> str:
        """`text()`, with the collapse rates where they took part in the test.

        >>> compare_runs([97.2, 20.3, 19.1], [False, True, True], [97.1, 97.3, 97.2], []).brief()
        '+0.00 [no interval] (collapsed 2 of 3 vs 0 of 3)'
        """
        return self.text() + (f" ({self.rates})" if self.rates else "")

    def tost_text(self, digits: int = 2) -> str:
        """`90% [-0.42, +0.26] within +-0.5`: TOST's interval and the margin."""
        low, high = self.interval90()
        return f"90% [{low:+.{digits}f}, {high:+.{digits}f}] vs +-{self.margin:g}{self._lost(1)}"

    def adjusted_to(
        self, p: tuple[float, float, float], seen=None, correction: str = ""
    ) -> Interval:
        """This comparison decided by the adjusted p-values `p` (of `correction`)."""
        return replace(self, adjusted=p, seen=seen, correction=correction or self.correction)


BH = "Benjamini-Hochberg"


def adjust_block(intervals: Sequence[Interval | None]) -> list[Interval | None]:
    """The comparisons of one block (a list that states above / below / equivalent for more
    than one) decided after Benjamini-Hochberg within the block, each kind of test on its own;
    None (no comparison) stays None.

    >>> a = welch([97.0, 97.2, 97.1], [96.0, 96.1, 95.9])
    >>> b = welch([97.0, 97.2, 97.1], [97.05, 96.9, 97.3])
    >>> [i.outcome for i in adjust_block([a, b, None]) if i]
    [1, 0]
    """
    present = [i for i in intervals if i is not None]
    columns = [benjamini_hochberg([i.raw[k] for i in present]) for k in range(3)]
    adjusted = iter(zip(*columns, strict=True)) if present else iter(())
    return [None if i is None else i.adjusted_to(next(adjusted), correction=BH) for i in intervals]


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    """The exact (Clopper-Pearson) LEVEL interval of a proportion, k successes of n.

    >>> [round(x, 3) for x in clopper_pearson(7, 50)]
    [0.058, 0.267]
    """
    tail = ALPHA / 2
    low = float(stats.beta.ppf(tail, k, n - k + 1)) if k > 0 else 0.0
    high = float(stats.beta.ppf(1 - tail, k + 1, n - k)) if k < n else 1.0
    return low, high


def holm(ps: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error within one claim).

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    out, running = [0.0] * len(ps), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - rank) * ps[i]))
        out[i] = round(running, 15)
    return out


def benjamini_hochberg(ps: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg's adjusted p-values (q-values; false discovery rate across claims).

    >>> benjamini_hochberg([0.01, 0.04, 0.03])
    [0.03, 0.04, 0.04]
    """
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i], reverse=True)
    out, running = [0.0] * m, 1.0
    for rank, i in enumerate(order):
        running = min(running, ps[i] * m / (m - rank))
        out[i] = round(running, 15)
    return out


@cache
def fisher(k_a: int, n_a: int, k_b: int, n_b: int) -> float:
    """Fisher's exact two-sided p of two rates k_a / n_a and k_b / n_b (collapses per seed).

    >>> round(fisher(0, 10, 6, 10), 4)
    0.0108
    """
    return float(stats.fisher_exact([[k_a, n_a - k_a], [k_b, n_b - k_b]])[1])


def compare_runs(
    xa: Sequence[float],
    ca: Sequence[bool],
    xb: Sequence[float],
    cb: Sequence[bool],
    margin: float | None = None,
) -> Interval:
    """mean(a) - mean(b) over two cells' runs (`ca`, `cb`: which collapsed; empty: none):
    Welch's interval, unless a cell mixes collapsed and other runs (then the collapse-aware
    comparison: never Welch over a mixture). A cell whose every run collapsed is no mixture.

    >>> compare_runs([97.2, 97.0, 20.3], [False, False, True], [97.1, 97.3, 97.2], []).how[-43:]
    'not collapsed on a side: no Welch over them'
    >>> compare_runs([20.1, 11.3, 19.0], [True] * 3, [97.1, 97.3, 97.2], []).outcome
    -1
    """
    ca, cb = tuple(ca) or (False,) * len(xa), tuple(cb) or (False,) * len(xb)
    if (any(ca) and not all(ca)) or (any(cb) and not all(cb)):
        return _collapse_aware(xa, ca, xb, cb, margin)
    return welch(xa, xb, margin)


def kept_runs(values: Sequence[float], collapsed: Sequence[bool]) -> list[float]:
    """The runs a cell's own-noise estimate uses: all of them unless it mixes collapsed and
    other runs, then the others (`collapsed` empty: none collapsed)."""
    flags = tuple(collapsed) or (False,) * len(values)
    if any(flags) and not all(flags):
        return [x for x, c in zip(values, flags, strict=True) if not c]
    return list(values)


def _collapse_aware(
    xa: Sequence[float],
    ca: Sequence[bool],
    xb: Sequence[float],
    cb: Sequence[bool],
    margin: float | None,
) -> Interval:
    """a - b when runs collapsed: Fisher's exact test of the collapse rates and Welch over the
    runs that did not collapse, Bonferroni-combined (the smaller p decides, doubled, in its
    direction: fewer collapses is above); never equivalent. Where each test alone shows a
    difference (at half the level) and they point opposite ways, nothing is decided.

    >>> mixed = compare_runs([97.9, 98.0, 98.1] + [9.0] * 7, [False] * 3 + [True] * 7,
    ...                      [95.0, 95.1, 95.2, 95.1, 95.0] * 2, [])
    >>> mixed.outcome, mixed.how.split("; ")[-1]
    (0, 'opposite directions: no direction decided')
    """  # fmt: skip
    ka, kb = sum(ca), sum(cb)
    p_rate = fisher(ka, len(ca), kb, len(cb))
    kept_a = [x for x, c in zip(xa, ca, strict=True) if not c]
    kept_b = [x for x, c in zip(xb, cb, strict=True) if not c]
    counts = f"collapsed {ka} of {len(ca)} vs {kb} of {len(cb)}"
    rates = f"{counts} (Fisher p = {p_rate:.3f})"
    if len(kept_a) >= MIN_SEEDS and len(kept_b) >= MIN_SEEDS:  # no above/below from fewer
        rest = welch(kept_a, kept_b, margin)
        p_rest, p_beyond = rest.raw[0], rest.raw[2]
        how = f"{rates}; the others: {rest.how}"
    else:
        delta = (sum(kept_a) / len(kept_a) if kept_a else math.nan) - (
            sum(kept_b) / len(kept_b) if kept_b else math.nan
        )
        rest = Interval(delta, -math.inf, math.inf, "")
        p_rest, p_beyond = 1.0, 1.0
        how = f"{rates}; fewer than {MIN_SEEDS} runs not collapsed on a side: no Welch over them"
    by_rate = p_rate < p_rest
    rate_sign, rest_sign = (1 if ka < kb else -1), (1 if rest.delta > 0 else -1)
    sign = rate_sign if by_rate else rest_sign
    p = min(1.0, 2 * min(p_rate, p_rest))
    if max(p_rate, p_rest) < ALPHA / 2 and rate_sign != rest_sign:
        p, how = 1.0, f"{how}; opposite directions: no direction decided"
    return Interval(
        rest.delta, rest.low, rest.high, how, rest.se, rest.df, margin,
        fixed=(p, 1.0, min(1.0, 2 * p_beyond)), direction=sign, rates=counts,
    )  # fmt: skip


def welch_df(va: float, vb: float, na: int, nb: int) -> float:
    """Welch-Satterthwaite degrees of freedom of two squared standard errors va, vb."""
    if va + vb == 0:
        return math.inf
    return (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1))


def welch(a: Sequence[float], b: Sequence[float], margin: float | None = None) -> Interval:
    """Welch's LEVEL interval of mean(a) - mean(b) from the two samples' own variances
    (Welch-Satterthwaite degrees of freedom); each needs two values or more."""
    na, nb = len(a), len(b)
    if na < 2 or nb < 2:
        raise ValueError(f"Welch's interval needs two values per side, got {na} and {nb}")
    va, vb = float(np.var(a, ddof=1)) / na, float(np.var(b, ddof=1)) / nb
    delta = float(np.mean(a)) - float(np.mean(b))
    se = math.sqrt(va + vb)
    if se == 0:
        return Interval(
            delta, delta, delta, f"Welch, n={na}/{nb}, no spread", 0.0, math.inf, margin
        )
    df = welch_df(va, vb, na, nb)
    half = float(special.stdtrit(df, 0.5 + LEVEL / 2)) * se  # stats.t.ppf's ufunc: its numbers
    how = f"Welch, n={na}/{nb}, df={df:.1f}"
    return Interval(delta, delta - half, delta + half, how, se, df, margin)


def one_sample(values: Sequence[float], reference: float, margin: float | None = None) -> Interval:
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
        return Interval(delta, delta, delta, f"t, n={n}, no spread", 0.0, math.inf, margin)
    half = float(special.stdtrit(n - 1, 0.5 + LEVEL / 2)) * se
    return Interval(delta, delta - half, delta + half, f"t, n={n}, df={n - 1}", se, n - 1, margin)


def paired(
    a: Sequence[float], b: Sequence[float], margin: float | None = None, digits: int = 2
) -> Interval:
    """Student's LEVEL interval of mean(a - b) over pairs (two cells' runs of one seed each: a
    seed's effect, shared by the cells, drops out of each difference); `how` names the two
    means over the pairs, to `digits` decimals.

    >>> paired([97.0, 96.0, 95.5], [96.5, 95.4, 95.1]).outcome   # welch(...) shows none
    1
    """
    interval = one_sample([x - y for x, y in zip(a, b, strict=True)], 0.0, margin)
    means = f"{sum(a) / len(a):.{digits}f} vs {sum(b) / len(b):.{digits}f} over them"
    return replace(interval, how=f"paired by seed, {interval.how}, {means}")

"""What a claim's check reads and decides with (the claims' modules import these): a view's
numbers as text, the comparisons of its cells by the rules of `framework` (each cell's own
noise, Holm within the claim), "X is best", the rows above or below the baseline, tallies and
correlations."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from campaign.report.claims import verdict_stats
from campaign.report.claims.framework import (
    BASE,
    SIGNIFICANT,
    Cell,
    NotMeasurable,
    View,
)
from dfl_bench.results import stats
from dfl_bench.results.agreement import pearson, spearman


def printed(value: float) -> str:
    """A number as printed in the verdicts."""
    return f"{value:.2f}"


def cell_values(v: View, experiment: str, rows: Iterable[str], column: str = "accuracy") -> dict:
    """{row: value} for the given rows (NotMeasurable when there are none)."""
    values = {row: v.get(experiment, row, column) for row in rows}
    if not values:
        raise NotMeasurable(f"{experiment} has no rows")
    return values


def values_text(values: Mapping[str, float]) -> str:
    """`a 1.0, b 2.0`."""
    return ", ".join(f"{k} {printed(x)}" for k, x in values.items())


def tied_with_top(
    v: View, experiment: str, rows: Iterable[str], column: str = "accuracy", lowest: bool = False
) -> tuple[list[str], str]:
    """The rows not shown different from the top one (the bottom one when `lowest`): the top row
    first, then every row whose interval to it holds 0; and the detail. Descriptive: a claim
    that a row is best decides by `is_best`."""
    values = cell_values(v, experiment, rows, column)
    sign = -1 if lowest else 1
    top = max(values, key=lambda row: sign * values[row])
    tied = [top] + [
        row
        for row in values
        if row != top and v.interval((experiment, top), (experiment, row), column).outcome == 0
    ]
    word = "bottom" if lowest else "top"
    return (
        tied,
        f"{word} {column}: {', '.join(tied)} (tied within the noise); {values_text(values)}",
    )


def as_claimed(want: int, interval: stats.Interval) -> bool | None:
    """A claimed direction (+1 above, -1 below) against an interval: True decided that way,
    False decided the other way, None within the noise."""
    return None if interval.outcome == 0 else interval.outcome == want


def claimed_order(
    v: View, want: int, a: Cell, b: Cell, names: tuple[str, str]
) -> tuple[bool | None, str]:
    """Cell a claimed above (+1), below (-1) or level with (0) cell b, by the interval of a - b:
    `as_claimed` for a direction; level: equivalence shown (TOST) holds, a difference beyond the
    margin fails, else inconclusive. The text names the two."""
    interval = v.interval(a, b)
    verdict = interval.level_with() if want == 0 else as_claimed(want, interval)
    x, y = (v.baseline() if c == BASE else v.get(*c) for c in (a, b))
    text = f"{names[0]} {printed(x)} vs {names[1]} {printed(y)}: {difference_text(interval)}"
    return verdict, text + (f"; TOST {interval.tost_text()}" if want == 0 else "")


def is_best(
    v: View,
    experiment: str,
    rows: Sequence[str],
    row: str,
    column: str = "accuracy",
    lowest: bool = False,
) -> tuple[bool | None, str]:
    """ "`row` is best" (lowest: worst) among `rows`: it holds when the row is above (below)
    every other row beyond the noise, fails when some row is above (below) it, else is
    inconclusive; the detail gives the tie set of the top row and the bootstrap probability
    that `row` is the top row."""
    others = [r for r in rows if r != row]
    want = -1 if lowest else 1
    outcomes = {o: v.interval((experiment, row), (experiment, o), column).outcome for o in others}
    beaten = [o for o, x in outcomes.items() if x == -want]
    tied = [o for o, x in outcomes.items() if x == 0]
    verdict = False if beaten else True if not tied else None
    tie_set, _ = tied_with_top(v, experiment, rows, column, lowest)
    chance = v.top_probability(experiment, rows, row, column, lowest)
    word = "bottom" if lowest else "top"
    better = "below" if lowest else "above"
    wins = len(others) - len(tied) - len(beaten)
    return verdict, (
        f"{row} {better} every other row in {column}? {better} {wins}"
        f", not shown different from {len(tied)} ({', '.join(tied) or 'none'}), beaten by "
        f"{len(beaten)} ({', '.join(beaten) or 'none'}); {word} tie set: {', '.join(tie_set)}; "
        f"P({row} is the {word} row) = {chance:.2f} (bootstrap); "
        f"{values_text(cell_values(v, experiment, rows, column))}"
    )


def above_baseline(
    v: View, experiment: str, rows: Iterable[str]
) -> tuple[list[str], list[str], str]:
    """The rows above the baseline beyond the noise, those within it, and the detail."""
    above, within, parts = [], [], []
    for row in rows:
        interval = v.interval((experiment, row), BASE)
        if interval.outcome > 0:
            above.append(row)
        elif interval.outcome == 0:
            within.append(row)
        parts.append(f"{row} {interval.brief()}")
    return (
        above,
        within,
        f"baseline {printed(v.baseline())}; minus the baseline: {', '.join(parts)}",
    )


def only_above_baseline(
    v: View, experiment: str, rows: Iterable[str], want: Iterable[str]
) -> tuple[bool | None, str]:
    """'Of `rows`, only `want` are above the baseline' by the rule of `only`, and the detail."""
    intervals = {row: v.interval((experiment, row), BASE) for row in rows}
    holds, undecided = only(intervals, want)
    above = [row for row, i in intervals.items() if i.outcome > 0]
    parts = ", ".join(f"{row} {i.brief()}" for row, i in intervals.items())
    return holds, (
        f"above: {above}; {undecided}; baseline {printed(v.baseline())}; minus the baseline: "
        f"{parts}"
    )


def all_below_baseline(v: View, experiment: str, rows: list[str]) -> tuple[bool | None, str]:
    """Every row below the baseline beyond the noise (True), any above it (False), else None."""
    above, within, detail = above_baseline(v, experiment, rows)
    below = [row for row in rows if row not in above and row not in within]
    return (False if above else True if len(below) == len(rows) else None), detail


def enough_wins(wins: int, ties: int, need: float) -> bool | None:
    """Whether at least `need` comparisons are won beyond the noise: None while the ties could
    make or break it."""
    return True if wins >= need else False if wins + ties < need else None


def tally(intervals: Iterable[stats.Interval]) -> tuple[int, int, int]:
    """How many intervals lie above 0, hold it and lie below it (wins, ties, losses)."""
    outcomes = [interval.outcome for interval in intervals]
    return outcomes.count(1), outcomes.count(0), outcomes.count(-1)


def against_rows(
    v: View, experiment: str, row: str, others: Iterable[str], column: str = "accuracy"
) -> tuple[int, int, int]:
    """How many of `others` the row is above, tied with and below, by each pair's interval."""
    return tally(v.interval((experiment, row), (experiment, o), column) for o in others)


def all_hold(verdicts: Iterable[bool | None]) -> bool | None:
    """Every part holds (True), one fails (False), else within the noise (None)."""
    verdicts = list(verdicts)
    return False if False in verdicts else None if None in verdicts else True


def only(intervals: Mapping, want: Iterable, one_option: bool = False) -> tuple[bool | None, str]:
    """'Only `want` have the property' (each interval: a row minus its reference; the property:
    above it beyond the noise): holds when every wanted row is shown to have it and every other
    row is shown not to (below, or equivalent within the margin by TOST); fails when another
    row is shown to have it or a wanted row is shown not to; else inconclusive: a row left
    undecided is no evidence either way. `one_option`: the wanted rows are one option's cells
    (e.g. in two knowledge bases): it has the property when any of them is shown to, and is
    shown not to when all of them are.

    >>> a = stats.welch([2.0, 2.1, 1.9], [0.0, 0.1, -0.1])
    >>> none = stats.welch([0.3, -0.3], [0.0, 0.1])
    >>> only({"x": a, "y": a}, ["x"])[0], only({"x": a, "y": none}, ["x"])[0]
    (False, None)
    """
    want = set(want)
    has = {k for k, i in intervals.items() if i.outcome > 0}
    hasnt = {k for k, i in intervals.items() if i.outcome < 0 or (i.outcome == 0 and i.equivalent)}
    undecided = [k for k in intervals if k not in has and k not in hasnt]
    others = [k for k in undecided if k not in want]
    if one_option:
        shown, refuted = bool(want & has), want <= hasnt
    else:
        shown, refuted = want <= has, bool(want & hasnt)
    if has - want or refuted:
        verdict: bool | None = False
    elif shown and not others:
        verdict = True
    else:
        verdict = None
    return verdict, f"undecided (neither shown to nor shown not to): {_names(undecided) or 'none'}"


def _names(keys: Iterable) -> str:
    """Row keys (a row, or an (experiment, row) cell) as `a, b/c`."""
    return ", ".join(k if isinstance(k, str) else "/".join(map(str, k)) for k in keys)


def all_above(above: Iterable, within: Iterable, want: Iterable) -> bool | None:
    """Whether every row of `want` is above the baseline (`above` and `within` found over those
    rows): None while some stay within the noise, False when one is below or another row is
    above. A claim that *only* some rows are above is decided by `only`."""
    above, within, want = set(above), set(within), set(want)
    if above == want:
        return True
    return None if above <= want <= above | within else False


def correlation(
    v: View, tables: Iterable[str], x: str, y: str, kb: str | None = None
) -> tuple[float, float, float, str]:
    """Pearson r, Spearman rho and its permutation p-value of two columns over the cells of the
    given tables (optionally one knowledge base), each configuration once; NotMeasurable below
    stats.MIN_CELLS cells."""
    pairs, seen = [], set()
    for (exp, row, column), value in v.values.items():
        if exp not in tables or column != x:
            continue
        if kb is not None and v.kbs.get((exp, row)) != kb:
            continue
        configuration = v.configurations.get((exp, row), f"{exp}/{row}")
        other = v.values.get((exp, row, y))
        if other is None or math.isnan(value) or math.isnan(other) or configuration in seen:
            continue
        if not v.decides(exp, row):
            continue
        seen.add(configuration)
        pairs.append((value, other))
    where = f" ({kb})" if kb else ""
    if len(pairs) < stats.MIN_CELLS:
        raise NotMeasurable(
            f"too few cells: {len(pairs)} with {x} and {y}{where} (a correlation needs "
            f"{stats.MIN_CELLS})"
        )
    xs, ys = [a for a, _ in pairs], [b for _, b in pairs]
    r, rho = pearson(xs, ys), spearman(xs, ys)
    if r is None or rho is None:
        raise NotMeasurable(f"{len(pairs)} cells with {x} and {y}: constant")
    p = verdict_stats.spearman_p(xs, ys)
    if p < SIGNIFICANT:
        v.evidence(p)
    flip = " (r alone: the other sign)" if (r > 0) != (rho > 0) else ""
    return (
        r,
        rho,
        p,
        (
            f"rho({x}, {y}) = {rho:+.2f} (p = {p:.3f}), r = {r:+.2f}{flip} over {len(pairs)} "
            f"cells{where}"
        ),
    )


def claimed_sign(rho: float, p: float, want: int) -> bool | None:
    """A claimed sign of a correlation: decided when p < SIGNIFICANT, else None."""
    return None if p >= SIGNIFICANT else (rho > 0) == (want > 0)


def ratio_difference_text(interval: stats.Interval) -> str:
    """`difference +0.035 [+0.008, +0.063] (t, n=3, df=2)`: a ratio's, to three decimals."""
    i = interval
    return f"difference {i.delta:+.3f} [{i.low:+.3f}, {i.high:+.3f}] ({i.how})"


def difference_text(interval: stats.Interval) -> str:
    """`difference +0.42 [-0.10, +0.94] (Welch, n=3/3, df=3.9)`."""
    return f"difference {interval.text()} ({interval.how})"
